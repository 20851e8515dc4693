"""The validated evaluation design: what was measured (:class:`Roles`, :class:`Design`).

A :class:`Design` is what :func:`bayes_tee.design.build.build_design` returns and every later
stage reads: the facets and their levels, the observed cells with their sufficient statistics,
the model's terms, the outcome family and what validation dropped. It creates no PyMC object and
reads no file.

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                        prompt="prompt", judge="judge")
>>> d.counts["item"], d.balanced
(40, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from .covariates import Covariates
from .terms import FACETS, Term, model_terms

ROLE_NAMES: tuple[str, ...] = (
    "outcome",
    "item",
    "prompt",
    "judge",
    "temperature",
    "replicate",
    "category",
    "position",
)


@dataclass(frozen=True)
class Roles:
    """Which column of the data plays which role (``None``: the role is absent)."""

    outcome: str
    item: str
    prompt: str | None = None
    judge: str | None = None
    temperature: str | None = None
    replicate: str | None = None
    category: str | None = None
    position: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """Roles as a plain dict, for saving."""
        return {name: getattr(self, name) for name in ROLE_NAMES}


@dataclass(frozen=True)
class Design:
    """A validated evaluation design.

    Attributes
    ----------
    roles : Roles
        Column roles as given.
    facets : tuple of str
        Crossed facets with two or more levels, in :data:`bayes_tee.design.terms.FACETS` order.
    levels : dict
        Facet -> level labels (strings), for every role given (also single-level ones).
    categories : tuple of str or None
        Category labels when items are nested in categories with two or more levels.
    item_category : numpy.ndarray or None
        Category code of each item.
    cells : pandas.DataFrame
        One row per observed cell: integer codes per facet, ``n``, ``mean``, ``ss``.
    n_rows : int
        Rows used.
    dropped : dict
        Reason -> number of rows dropped for it.
    notes : tuple of str
        Plain-language notes on what validation changed.
    balanced : bool
        Every cell of the full cross is present with the same replicate count (and, with
        categories, every category has the same number of items).
    y_mean, y_sd : float
        Mean and SD of the outcome over the rows used.
    binary : bool
        The outcome takes only the values 0 and 1.
    system : str or None
        The facet whose levels are the compared systems (a fixed factor with its interactions
        random), when the design compares systems.
    outcome_levels : tuple of float or None
        An ordinal outcome's categories (the scores used, in order); ``cells`` then holds each
        cell's calls per category in columns ``y0 .. y{K-1}``.
    thresholds : {"common", "judge"}
        An ordinal outcome's cutpoints: the whole panel's, or each judge's own.
    spread : {"common", "judge"}
        An ordinal outcome's latent spread: the link's for every judge, or each judge's own.
    covariates : Covariates or None
        Numeric covariates and their slopes (:mod:`bayes_tee.design.covariates`); their per-cell
        statistics are columns of ``cells``.
    """

    roles: Roles
    facets: tuple[str, ...]
    levels: dict[str, tuple[str, ...]]
    categories: tuple[str, ...] | None
    item_category: np.ndarray | None
    cells: pd.DataFrame
    n_rows: int
    dropped: dict[str, int]
    notes: tuple[str, ...]
    balanced: bool
    y_mean: float
    y_sd: float
    binary: bool
    judge_effect: Literal["fixed", "random"] = "fixed"
    family: str = "gaussian"
    overdispersion: bool = True
    terms: tuple[Term, ...] = field(default=())
    row_cell: np.ndarray | None = field(default=None, repr=False)
    row_y: np.ndarray | None = field(default=None, repr=False)
    formula: str | None = None
    facet_columns: dict[str, str] = field(default_factory=dict)
    system: str | None = None
    outcome_levels: tuple[float, ...] | None = None
    thresholds: Literal["common", "judge"] = "common"
    spread: Literal["common", "judge"] = "common"
    covariates: Covariates | None = None

    @property
    def count_columns(self) -> list[str]:
        """The per-category count columns of ``cells`` (ordinal outcomes), in category order."""
        return [f"y{k}" for k in range(len(self.outcome_levels or ()))]

    @property
    def columns(self) -> dict[str, str]:
        """Facet (and ``category``) -> the data column it was read from."""
        out = {f: c for f, c in self.roles.as_dict().items() if c is not None and f != "outcome"}
        return out | self.facet_columns

    def facet_of(self, name: str) -> str:
        """The facet a name refers to: a facet's own name, or the column it was read from."""
        if name in self.facets or name in ("replicate", "category"):
            return name
        return {c: f for f, c in self.columns.items()}.get(name, name)

    @property
    def counts(self) -> dict[str, float]:
        """Level counts of the observed design: one per facet, ``category``, ``replicate``.

        ``replicate`` is the mean number of calls per observed cell; facets that were not
        given or have a single level count 1.
        """
        out: dict[str, float] = {f: 1 for f in FACETS}
        out.update({f: len(self.levels[f]) for f in self.facets})
        out["category"] = len(self.categories) if self.categories else 1
        out["replicate"] = float(self.cells["n"].mean())
        return out

    @property
    def has_replicates(self) -> bool:
        """Whether some cell holds two or more calls."""
        return bool((self.cells["n"] > 1).any())

    @property
    def n_cells(self) -> int:
        """Number of observed cells."""
        return len(self.cells)

    @property
    def complete(self) -> bool:
        """Every cell of the full cross present with the same number of calls; categories may
        differ in size (the strata likelihood is exact then, :mod:`bayes_tee.likelihoods.anova`).
        """
        return self.n_cells == self.n_full_cells and self.cells["n"].nunique() == 1

    @property
    def n_full_cells(self) -> int:
        """Number of cells in the full cross of the facets."""
        return int(np.prod([len(self.levels[f]) for f in self.facets]))

    def summary(self) -> pd.DataFrame:
        """Levels, cells and rows, as a table.

        Examples
        --------
        >>> d.summary()  # doctest: +SKIP
        """
        cols = self.columns
        rows = [
            {"what": f"{f} levels", "value": len(self.levels[f]), "column": cols.get(f)}
            for f in (*FACETS, *(f for f in self.levels if f not in FACETS))
            if f in self.levels
        ]
        if self.categories:
            rows.append(
                {"what": "category levels", "value": len(self.categories), "column": self.roles.category}
            )
        rows += [
            {"what": "cells observed", "value": self.n_cells, "column": None},
            {"what": "cells in full cross", "value": self.n_full_cells, "column": None},
            {"what": "replicates per cell (min)", "value": int(self.cells["n"].min()), "column": None},
            {"what": "replicates per cell (max)", "value": int(self.cells["n"].max()), "column": None},
            {"what": "rows used", "value": self.n_rows, "column": self.roles.outcome},
            {"what": "rows dropped", "value": sum(self.dropped.values()), "column": None},
            {"what": "balanced", "value": self.balanced, "column": None},
        ]
        rows += [{"what": f"dropped: {k}", "value": v, "column": None} for k, v in self.dropped.items()]
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        dims = ", ".join(f"{f}={len(self.levels[f])}" for f in self.facets)
        cat = f", category={len(self.categories)}" if self.categories else ""
        if self.covariates is not None:
            cat += "; covariates " + ", ".join(self.covariates.names)
        return (
            f"Design({dims}{cat}; {self.n_cells} cells of {self.n_full_cells}, "
            f"{self.n_rows} rows used, {sum(self.dropped.values())} dropped, "
            f"{'balanced' if self.balanced else 'unbalanced'})"
        )

    def to_dict(self) -> dict:
        """JSON-serialisable description (no data) for the saved posterior's attributes."""
        return {
            "roles": self.roles.as_dict(),
            "facets": list(self.facets),
            "levels": {k: list(v) for k, v in self.levels.items()},
            "categories": list(self.categories) if self.categories else None,
            "item_category": None if self.item_category is None else self.item_category.tolist(),
            "n_rows": self.n_rows,
            "dropped": self.dropped,
            "notes": list(self.notes),
            "balanced": self.balanced,
            "y_mean": self.y_mean,
            "y_sd": self.y_sd,
            "binary": self.binary,
            "judge_effect": self.judge_effect,
            "family": self.family,
            "overdispersion": self.overdispersion,
            "formula": self.formula,
            "facet_columns": self.facet_columns,
            "system": self.system,
            "terms": [[t.label, list(t.facets), t.kind] for t in self.terms] if self.formula else None,
            "outcome_levels": None if self.outcome_levels is None else list(self.outcome_levels),
            "thresholds": self.thresholds,
            "spread": self.spread,
            "covariates": None if self.covariates is None else self.covariates.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict, cells: pd.DataFrame) -> Design:
        """The design :meth:`to_dict` described, with its per-cell statistics ``cells``."""
        facets = tuple(d["facets"])
        levels_y = d.get("outcome_levels")
        covariates = Covariates.from_dict(d.get("covariates"))
        extra = covariates.columns if covariates is not None else []
        cells = cells[[*facets, "n", "mean", "ss", *[f"y{k}" for k in range(len(levels_y or ()))], *extra]]
        family = d.get("family", "gaussian")
        overdispersion = d.get("overdispersion", True)
        if d.get("terms"):
            terms = [Term(label, tuple(fs), kind) for label, fs, kind in d["terms"]]
        else:
            terms = model_terms(
                facets,
                replicates=bool((cells["n"] > 1).any()),
                category=d["categories"] is not None,
                judge_effect=d["judge_effect"],
                family=family,
                overdispersion=overdispersion,
            )
        return cls(
            roles=Roles(**d["roles"]),
            facets=facets,
            levels={k: tuple(v) for k, v in d["levels"].items()},
            categories=tuple(d["categories"]) if d["categories"] else None,
            item_category=None if d["item_category"] is None else np.asarray(d["item_category"]),
            cells=cells,
            n_rows=d["n_rows"],
            dropped=d["dropped"],
            notes=tuple(d["notes"]),
            balanced=d["balanced"],
            y_mean=d["y_mean"],
            y_sd=d["y_sd"],
            binary=d["binary"],
            judge_effect=d["judge_effect"],
            family=family,
            overdispersion=overdispersion,
            terms=tuple(terms),
            formula=d.get("formula"),
            facet_columns=dict(d.get("facet_columns") or {}),
            system=d.get("system"),
            outcome_levels=None if levels_y is None else tuple(levels_y),
            thresholds=d.get("thresholds", "common"),
            spread=d.get("spread", "common"),
            covariates=covariates,
        )
