"""D-study weights: design fields and grids, each component's weight at a design, calls.

For a proposed design (N', V', M', H', R', C'), every component's contribution to
Var(theta_hat) is its variance divided by the number of levels it is averaged over
(:func:`bayes_tee.gstudy.divisors.divisors`). That is linear in the component variances, so for
many designs at once it is one matrix product, ``draws @ weights.T``: each design gets a
posterior of its SE when the variances are posterior draws, not a plug-in number.

Decisions (Messing 2026 App. D): ``absolute`` (threshold decisions, the Phi-coefficient error)
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

from .._core.exceptions import ArgumentError
from .._core.intervals import interval
from .divisors import averaged_facets, kept_terms

Decision = Literal["absolute", "relative"]


#: Judges of a projection: like these (``new``) or a subset of the fitted panel (``panel``).
JudgeMode = Literal["panel", "new"]


#: The reading of a comparison of systems: over new levels of the random facets, or this panel.
Over = Literal["new", "panel"]


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


def fields_for(design) -> dict[str, str]:
    """:data:`FIELDS` plus ``n_<facet>`` for every facet of a formula fit without a role name.

    >>> import bayes_tee as bt
    >>> from bayes_tee.design.from_formula import validate_formula
    >>> df = bt.simulate.gstudy_dgp({"item": 5, "evaluator": 2}, {"item": 1.0}, random_seed=0)
    >>> d = validate_formula(df, "score ~ (1|item) + (1|evaluator)")
    >>> fields_for(d)["n_evaluator"]
    'evaluator'
    """
    return {**FIELDS, **{f"n_{f}": f for f in design.facets if f not in FIELDS.values()}}


def fields_from_n(design, n: dict) -> dict[str, object]:
    """A ``n={facet: counts}`` dict (facet names or their columns) as design fields."""
    field_of = {facet: field for field, facet in fields_for(design).items()}
    known = [*design.facets, *(["replicate"] if design.has_replicates else [])]
    out = {}
    for key, val in n.items():
        facet = key if key in field_of else design.facet_of(key)
        if facet not in known and facet != "category":
            raise ArgumentError(f"n={{{key!r}: ...}}: not a facet of this design; use one of {known}.")
        out[field_of[facet]] = val
    return out


def merge_counts(design, counts: dict, n: dict | None) -> dict[str, object]:
    """The design fields of ``n_*`` keywords and an ``n={facet: counts}`` dict together; a field
    given both ways, or a count for a facet the fit does not have, is refused (never dropped).
    """
    given = {k: v for k, v in counts.items() if v is not None}
    from_n = fields_from_n(design, n or {})
    both = sorted(set(given) & set(from_n))
    if both:
        raise ArgumentError(f"{both[0]} is given twice (as a keyword and in n=): give it once.")
    out = {**given, **from_n}
    for field, value in out.items():  # an empty or bad request is refused here, before any stage
        check_counts(field, value)
    for field, facet in FIELDS.items():
        if facet in ("item", "replicate", "category") or facet in design.facets or field not in out:
            continue
        if any(float(v) != 1 for v in np.atleast_1d(out[field])):
            raise ArgumentError(
                f"{field}={out[field]!r}: this fit has no {facet} facet (one {facet}, or none given), "
                f"so its count cannot be projected; fit with {facet}= to project it."
            )
    return out


def check_counts(field: str, value: object) -> list:
    """``value`` (a count or counts) as a non-empty list of numbers of at least 1, or one error
    naming ``field``: every spelling of an empty request (``[]``, ``()``, an empty array) included.

    >>> check_counts("n_judges", 3)
    [3]
    """
    vals = list(np.ravel(value)) if np.ndim(value) else [value]
    if not vals:
        raise ArgumentError(f"{field} has no counts: give one or more, e.g. {field}=[1, 3].")
    if any(isinstance(x, str | bool) or not isinstance(x, int | float | np.number) for x in vals):
        raise ArgumentError(f"{field} takes numbers (counts), got {vals}.")
    if any(not (float(x) >= 1) for x in vals):
        raise ArgumentError(f"{field} must be at least 1, got {vals}.")
    return vals


def design_grid(fields: dict[str, str] | None = None, **counts: float | list[float] | None) -> pd.DataFrame:
    """Every combination of the given counts (a scalar is a one-value list), one row per design.

    ``fields``: the design fields allowed (default :data:`FIELDS`; :func:`fields_for` a fit's).

    >>> design_grid(n_items=[50, 100], n_prompts=3)
       n_items  n_prompts
    0       50          3
    1      100          3
    """
    fields = FIELDS if fields is None else fields
    unknown = set(counts) - set(fields)
    if unknown:
        raise ArgumentError(f"unknown design field(s) {sorted(unknown)}; use {list(fields)}.")
    given = {k: check_counts(k, v) for k, v in counts.items() if v is not None}
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
    fields: dict[str, str] | None = None,
) -> np.ndarray:
    """``(n_designs, n_components)`` weights: Var(theta_hat) per draw is ``draws @ weights.T``.

    Counts missing from ``designs`` (absent columns or NaN) come from ``base`` (the observed
    design), else 1. Vectorized over designs: a divisor is the product of the level counts of
    the facets the component averages over.
    """
    keep = kept_terms(labels, facets, estimand=estimand, decision=decision)
    fields = FIELDS if fields is None else fields
    names = list(fields.values())
    incidence = np.array(
        [[f in fs for f in names] for fs in averaged_facets(labels, facets, categories=categories)]
    )
    base = dict(base or {})
    counts = np.column_stack(
        [
            (designs[field].astype(float) if field in designs else pd.Series(np.nan, index=designs.index))
            .fillna(float(base.get(facet, 1.0)))
            .to_numpy()
            for field, facet in fields.items()
        ]
    )
    div = np.prod(np.where(incidence[None], counts[:, None, :], 1.0), axis=2)  # (designs, components)
    return np.where(keep, 1.0 / div, 0.0)


def projected_variance(draws: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Var(theta_hat) per draw and design, ``(n_draws, n_designs)``: ``draws @ weights.T``.

    One product, its operands contiguous: BLAS writes the table once. A budget search's
    4,000 draws x 12 components x 10,135 designs took 0.05 s so, against 0.17 s in chunks of
    2,048 designs joined after (each chunk's transposed slice of ``weights`` strided, then the
    table copied whole); the propaganda pilot's ``allocate`` 2.40-2.62 s against 3.53-3.64 s
    (``benchmarks/bench_questions.py``).

    >>> projected_variance(np.array([[1.0, 2.0]]), np.array([[1.0, 0.5], [0.25, 0.0]]))
    array([[2.  , 0.25]])
    """
    return np.ascontiguousarray(draws) @ np.ascontiguousarray(weights).T


def calls(designs: pd.DataFrame, base: dict[str, float], fields: dict[str, str] | None = None) -> np.ndarray:
    """Judge calls a design makes: N' V' M' H' R' (times P' presentation orders, and the
    levels of any other facet of a formula fit).
    """
    out = np.ones(len(designs))
    for field, facet in (FIELDS if fields is None else fields).items():
        if field == "n_categories":
            continue
        out *= designs[field].to_numpy(float) if field in designs else base.get(facet, 1.0)
    return out


#: Designs per block in :func:`summarize_designs` (4,000 draws x 256 x 8 bytes: 8 MB a table).
DESIGN_BLOCK = 256


def summarize_designs(
    var: np.ndarray,
    var_current: np.ndarray,
    *,
    level: float = 0.9,
    target_se: float | None = None,
) -> pd.DataFrame:
    """SE median and interval, variance ratio against the current design, P(SE < target).

    The designs go in blocks of :data:`DESIGN_BLOCK` columns, so that the SE and ratio tables
    are never made whole: on a budget search's 4,000 draws x 7,000 designs, 1.5 s against 2.1 s
    made whole, 4.5 s in a new process (the same values; benchmarks/bench_questions.py).
    """
    if target_se is not None and not target_se > 0:
        raise ArgumentError(f"target_se must be positive, got {target_se!r}.")
    blocks = []
    for i in range(0, max(var.shape[1], 1), DESIGN_BLOCK):
        # transposed contiguous: the quantiles partition each design's draws in cache
        v = np.ascontiguousarray(var[:, i : i + DESIGN_BLOCK].T)
        se = np.sqrt(v)
        columns = {}
        for name, x in (("se_", se), ("var_ratio_", v / var_current[None, :])):
            lo, med, hi = interval(x, level, axis=1)
            columns |= {f"{name}median": med, f"{name}low": lo, f"{name}high": hi}
        if target_se is not None:
            columns["p_below_target"] = (se < target_se).mean(axis=1)
        blocks.append(pd.DataFrame(columns))
    return pd.concat(blocks, ignore_index=True)


# -- projections of a fitted posterior (the Posterior methods call these) ---------------------
def counts_with(design, **n: float | None) -> dict[str, float]:
    """Level counts of the observed design with any of them replaced (``n_items=...``); a
    count for a facet the fit does not have is refused (:func:`merge_counts`), never ignored.

    >>> import bayes_tee as bt
    >>> d = bt.build_design(bt.datasets.load("tee_demo"), outcome="score", item="item", prompt="prompt")
    >>> counts_with(d, n_items=60, n_prompts=None)["item"]
    60.0
    >>> counts_with(d, n_judges=3)
    Traceback (most recent call last):
    ...
    bayes_tee._core.exceptions.ArgumentError: n_judges=3: this fit has no judge facet ...
    """
    merge_counts(design, n, None)
    counts = dict(design.counts)
    for field, val in n.items():
        if val is not None:
            if not val >= 1:
                raise ArgumentError(f"{field} must be at least 1, got {val!r}.")
            counts[FIELDS[field]] = float(val)
    return counts
