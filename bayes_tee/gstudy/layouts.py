"""The layout of a study to simulate: which cells it scores and how many calls each gets.

A fully crossed design, one judge per call under a judge strategy (Zhu et al. 2026 Sec. 3), or
any table of cells and call counts (the observed cells, an unbalanced plan). The simulation of
such a study per posterior draw is :mod:`bayes_tee.posterior.predictive`.

>>> lay = crossed_layout(n_items=4, n_prompts=2, n_replicates=3)
>>> lay.n_cells, int(lay.calls_per_study)
(8, 24)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from ..design.terms import FACETS

Strategy = Literal["crossed", "cyclic", "random"]


@dataclass(frozen=True)
class Layout:
    """Which cells a study scores and how many calls each gets.

    Attributes
    ----------
    codes : dict
        Facet (``item, prompt, temperature, judge``) -> level code of every cell.
    levels : dict
        Level count per facet and ``category``.
    item_category : numpy.ndarray
        Category code of every item.
    n : numpy.ndarray or None
        Calls per cell; ``None`` when the judge of each call is drawn per study (``random``).
    strategy : str
        How judges were assigned.
    calls_per_group : int
        For ``random``: calls per item x prompt x temperature, each to a uniformly random judge.
    """

    codes: dict[str, np.ndarray]
    levels: dict[str, int]
    item_category: np.ndarray
    n: np.ndarray | None
    strategy: str = "crossed"
    calls_per_group: int = 0

    @property
    def n_cells(self) -> int:
        """Number of cells (including cells a study may leave empty)."""
        return len(self.codes["item"])

    @property
    def calls_per_study(self) -> float:
        """Judge calls one study makes."""
        if self.n is None:
            return float(self.n_cells // self.levels["judge"] * self.calls_per_group)
        return float(self.n.sum())

    def counts(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Calls per cell for ``size`` studies, ``(size, n_cells)``."""
        if self.n is not None:
            return np.broadcast_to(self.n.astype(float), (size, self.n_cells))
        M = self.levels["judge"]
        groups = self.n_cells // M
        return (
            rng.multinomial(self.calls_per_group, np.full(M, 1.0 / M), size=(size, groups))
            .reshape(size, -1)
            .astype(float)
        )


def _grid_codes(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    idx = np.indices(shape).reshape(len(shape), -1)
    return dict(zip(FACETS, idx))


def crossed_layout(
    n_items: int,
    n_prompts: int = 1,
    n_temperatures: int = 1,
    n_judges: int = 1,
    n_replicates: int = 1,
    n_categories: int = 1,
    *,
    strategy: Strategy = "crossed",
) -> Layout:
    """A fully crossed design, or one judge per call under a judge strategy (Zhu et al. 2026 Sec. 3).

    ``crossed``: every judge scores every call (``N V H M R`` calls). ``cyclic``: each of the
    ``N V H R`` calls goes to one judge, round-robin over calls taken item by item, so every judge
    scores an equal share. ``random``: each call goes to a uniformly random judge, drawn per study.

    >>> lay = crossed_layout(6, n_judges=3, strategy="cyclic")
    >>> lay.n.reshape(6, 3).sum(axis=0).tolist()
    [2.0, 2.0, 2.0]
    """
    N, V, H, M, R, C = (
        int(x) for x in (n_items, n_prompts, n_temperatures, n_judges, n_replicates, n_categories)
    )
    if min(N, V, H, M, R, C) < 1:
        raise ArgumentError("every design count must be at least 1.")
    codes = _grid_codes((N, V, H, M))
    levels = {"item": N, "prompt": V, "temperature": H, "judge": M, "category": C}
    cats = np.arange(N) % C
    if strategy == "crossed":
        return Layout(codes, levels, cats, np.full(N * V * H * M, float(R)), "crossed")
    if strategy == "cyclic":
        k = np.arange(N * V * H * R).reshape(N * V * H, R)
        judge = k % M
        cell = np.arange(N * V * H)[:, None] * M + judge
        n = np.bincount(cell.ravel(), minlength=N * V * H * M).astype(float)
        return Layout(codes, levels, cats, n, "cyclic")
    if strategy == "random":
        return Layout(codes, levels, cats, None, "random", calls_per_group=R)
    raise ArgumentError(f"strategy must be 'crossed', 'cyclic' or 'random', got {strategy!r}.")


def table_layout(cells: pd.DataFrame, item_category: np.ndarray | None = None) -> Layout:
    """A layout from a table of cells: integer or label columns among ``item, prompt,
    temperature, judge`` and ``n`` (calls in the cell). Missing facets have one level.

    >>> table_layout(pd.DataFrame({"item": ["a", "a", "b"], "judge": ["x", "y", "x"], "n": [2, 1, 3]})).levels
    {'item': 2, 'prompt': 1, 'temperature': 1, 'judge': 2, 'position': 1, 'category': 1}
    """
    if "item" not in cells or "n" not in cells:
        raise ArgumentError("a cell table needs an 'item' column and an 'n' column (calls per cell).")
    n = cells["n"].to_numpy(float)
    if np.any(n < 0) or not np.all(np.isfinite(n)) or n.sum() < 2:
        raise ArgumentError("column 'n' must hold non-negative call counts adding to at least 2.")
    codes, levels = {}, {}
    for f in FACETS:
        if f in cells:
            c, u = pd.factorize(cells[f], sort=True)
            codes[f], levels[f] = c.astype(int), len(u)
        else:
            codes[f], levels[f] = np.zeros(len(cells), int), 1
    cats = np.zeros(levels["item"], int) if item_category is None else np.asarray(item_category, int)
    levels["category"] = int(cats.max()) + 1
    return Layout(codes, levels, cats, n, "table")
