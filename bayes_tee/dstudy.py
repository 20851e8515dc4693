"""D-study projections with full posterior uncertainty (seed 000 Sec. 3.3, App. C.8, App. D).

For a proposed design (N', V', M', H', R', C'), every component's contribution to
Var(theta_hat) is its variance divided by the number of levels it is averaged over
(:func:`bayes_tee.components.divisors`). That is linear in the component variances, so for many
designs at once it is one matrix product, ``draws @ weights.T``, over all posterior draws: each
design gets a posterior of its SE, not a plug-in number.

Decisions (seed 000 App. D): ``absolute`` (threshold decisions, the Phi-coefficient error)
keeps every term; ``relative`` (comparing systems scored under the same prompts, judges and
temperatures) drops the terms that do not involve the items, since shared main effects shift
both systems equally and cancel, and keeps the item interactions.

>>> import numpy as np
>>> designs = design_grid(n_items=[10, 40])
>>> w = design_weights(["item", "replicate"], {"item": ("item",), "replicate": ("item", "replicate")},
...                    designs.assign(n_replicates=2))
>>> w
array([[0.1   , 0.05  ],
       [0.025 , 0.0125]])
"""

from __future__ import annotations

import itertools
from typing import Literal

import numpy as np
import pandas as pd

from .components import averaged_facets, kept_terms, summarize_samples

Decision = Literal["absolute", "relative"]

#: Design fields, in display order, and the facet each counts.
FIELDS: dict[str, str] = {
    "n_items": "item",
    "n_prompts": "prompt",
    "n_judges": "judge",
    "n_temperatures": "temperature",
    "n_replicates": "replicate",
    "n_categories": "category",
    "n_positions": "position",
}

#: Fields a grid carries only when the fit has that facet (categories, presentation orders).
OPTIONAL_FIELDS: tuple[str, ...] = ("n_categories", "n_positions")


def design_grid(**counts: float | list[float] | None) -> pd.DataFrame:
    """Every combination of the given counts (a scalar is a one-value list), one row per design.

    >>> design_grid(n_items=[50, 100], n_prompts=3)
       n_items  n_prompts
    0       50          3
    1      100          3
    """
    unknown = set(counts) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown design field(s) {sorted(unknown)}; use {list(FIELDS)}.")
    given = {k: (list(v) if np.ndim(v) else [v]) for k, v in counts.items() if v is not None}
    for k, vals in given.items():
        if any(not (float(x) >= 1) for x in vals):
            raise ValueError(f"{k} must be at least 1, got {vals}.")
    rows = list(itertools.product(*given.values()))
    return pd.DataFrame(rows, columns=list(given))


def design_weights(
    labels: list[str],
    facets: dict[str, tuple[str, ...]],
    designs: pd.DataFrame,
    *,
    base: dict[str, float] | None = None,
    estimand: Literal["domain", "finite"] = "domain",
    decision: Decision = "absolute",
    categories: Literal["fixed", "random"] = "fixed",
) -> np.ndarray:
    """``(n_designs, n_components)`` weights: Var(theta_hat) per draw is ``draws @ weights.T``.

    Counts missing from ``designs`` (absent columns or NaN) come from ``base`` (the observed
    design), else 1. Vectorized over designs: a divisor is the product of the level counts of
    the facets the component averages over.
    """
    keep = kept_terms(labels, facets, estimand=estimand, decision=decision)
    names = list(FIELDS.values())
    incidence = np.array([[f in fs for f in names] for fs in averaged_facets(labels, facets, categories=categories)])
    base = dict(base or {})
    counts = np.column_stack([
        (designs[field].astype(float) if field in designs else pd.Series(np.nan, index=designs.index))
        .fillna(float(base.get(facet, 1.0))).to_numpy()
        for field, facet in FIELDS.items()
    ])
    div = np.prod(np.where(incidence[None], counts[:, None, :], 1.0), axis=2)  # (designs, components)
    return np.where(keep, 1.0 / div, 0.0)


def projected_variance(draws: np.ndarray, weights: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """Var(theta_hat) per draw and design, ``(n_draws, n_designs)``, computed in design chunks."""
    return np.concatenate(
        [draws @ weights[i : i + chunk].T for i in range(0, max(len(weights), 1), chunk)], axis=1
    )


def calls(designs: pd.DataFrame, base: dict[str, float]) -> np.ndarray:
    """Judge calls a design makes: N' V' M' H' R' (times P' presentation orders)."""
    out = np.ones(len(designs))
    for field in ("n_items", "n_prompts", "n_judges", "n_temperatures", "n_replicates", "n_positions"):
        facet = FIELDS[field]
        out *= designs[field].to_numpy(float) if field in designs else base.get(facet, 1.0)
    return out


def summarize_designs(
    var: np.ndarray,
    var_current: np.ndarray,
    *,
    level: float = 0.9,
    target_se: float | None = None,
) -> pd.DataFrame:
    """SE median and interval, variance ratio against the current design, P(SE < target)."""
    se = np.sqrt(var)
    ratio = var / var_current[:, None]
    out = summarize_samples(se, level, "se_").join(summarize_samples(ratio, level, "var_ratio_"))
    if target_se is not None:
        out["p_below_target"] = (se < target_se).mean(axis=0)
    return out
