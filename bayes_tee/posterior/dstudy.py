"""D-study projections with full posterior uncertainty (Messing 2026 Sec. 3.3, App. C.8, App. D).

For a proposed design (N', V', M', H', R', C'), every component's contribution to
Var(theta_hat) is its variance divided by the number of levels it is averaged over
(:func:`bayes_tee.gstudy.divisors.divisors`). That is linear in the component variances, so for many
designs at once it is one matrix product, ``draws @ weights.T``, over all posterior draws: each
design gets a posterior of its SE, not a plug-in number.

Decisions (Messing 2026 App. D): ``absolute`` (threshold decisions, the Phi-coefficient error)
keeps every term; ``relative`` (comparing systems scored under the same prompts, judges and
temperatures) drops the terms that do not involve the items, since shared main effects shift
both systems equally and cancel, and keeps the item interactions.

The weights themselves are :mod:`bayes_tee.gstudy.weights`.

>>> post.dstudy(n_items=[50, 100, 200], n_prompts=[1, 3, 5])  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from .._core.intervals import summarize_samples
from .._core.moved import moved_names
from ..gstudy.divisors import Estimand
from ..gstudy.weights import (
    FIELDS,
    OPTIONAL_FIELDS,
    Decision,
    JudgeMode,
    calls,
    design_grid,
    design_weights,
    fields_for,
    merge_counts,
    projected_variance,
    summarize_designs,
)

if TYPE_CHECKING:
    from .fit import Fit


def check_judges(post: Fit, judges: JudgeMode, n_judges, stacklevel: int = 4) -> None:
    """Refuse ``judges="panel"`` beyond the fitted panel; warn when a fixed panel is projected
    to more judges than it has (``stacklevel`` points the warning at the user's call).
    """
    if judges not in ("panel", "new"):
        raise ArgumentError(f"judges must be 'panel' or 'new', got {judges!r}.")
    fixed = any(t.label == "judge" and t.kind == "fixed" for t in post.terms)
    M = post.design.counts.get("judge", 1)
    more = n_judges is not None and np.max(np.atleast_1d(n_judges)) > M
    if judges == "panel" and more:
        raise ArgumentError(
            f"judges='panel' projects a subset of the fitted panel of {M:g} judges; "
            f"n_judges={n_judges} is larger. Use judges='new' for judges beyond the panel."
        )
    if fixed and more:
        warnings.warn(
            f"Judges were fitted as a fixed panel of {M:g}; projecting to new judges uses the "
            "panel's sensitivity index as if it were the variance of a judge population (it "
            "understates that variance by (M-1)/M and ignores that the next judges may differ). "
            "Refit with judge_effect='random' for a superpopulation judge variance.",
            UserWarning,
            stacklevel=stacklevel,
        )


def check_positions(post: Fit, n_positions) -> None:
    """``n_positions`` needs a pairwise fit with a presentation-order facet."""
    if n_positions is not None and "position" not in post.design.facets:
        raise ArgumentError(
            "n_positions needs a pairwise fit with a presentation-order column: "
            "fit_posterior(..., position='order')."
        )


def fill_design(post: Fit, grid: pd.DataFrame, *, fill_categories: bool = False) -> pd.DataFrame:
    """Design rows with absent or NaN counts set to the observed ones, in :data:`FIELDS` order;
    ``n_categories`` only with ``fill_categories``, ``n_positions`` only for pairwise fits.
    """
    grid = grid.copy()
    fields = fields_for(post.design)
    for field, facet in fields.items():
        optional = field in OPTIONAL_FIELDS and not (
            (field == "n_categories" and fill_categories)
            or (field == "n_positions" and facet in post.design.facets)
        )
        observed = post.design.counts.get(facet, 1.0)
        if field in grid:
            grid[field] = grid[field].fillna(observed)
        elif not optional:
            grid[field] = observed
    return grid[[f for f in fields if f in grid]]


def grid_for(post: Fit, *, fill_categories: bool = False, **given) -> pd.DataFrame:
    """Every combination of the given design counts; fields not given take the observed count."""
    grid = design_grid(fields_for(post.design), **given)
    return fill_design(post, grid if not grid.empty else pd.DataFrame([{}]), fill_categories=fill_categories)


def variance_at(
    post: Fit,
    designs: pd.DataFrame,
    *,
    estimand: Estimand = "domain",
    decision: Decision = "absolute",
    categories: Literal["fixed", "random"] = "fixed",
    judges: JudgeMode = "new",
) -> np.ndarray:
    """Var(theta_hat) per posterior draw at each design row, ``(n_draws, n_designs)``.

    ``judges="new"`` (default, Messing (2026)): the M' judges are like a fresh draw of judges
    like these, so the judge sensitivity enters as ``sigma_J^2 / M'``. ``judges="panel"``
    (Zhu et al. 2026 Eq. 2): the target is the mean over the fitted panel of M judges and M' of
    them are used, so it enters with the finite-population factor
    ``sigma_J^2 / M' * (M - M') / (M - 1)``, zero when the whole panel is used.

    >>> variance_at(post, design_grid(n_items=[50, 100])).shape  # doctest: +SKIP
    (4000, 2)
    """
    if judges not in ("panel", "new"):
        raise ArgumentError(f"judges must be 'panel' or 'new', got {judges!r}.")
    terms = post.terms
    w = design_weights(
        [t.label for t in terms],
        {t.label: t.facets for t in terms},
        designs,
        base=post.design.counts,
        estimand=estimand,
        decision=decision,
        categories=categories,
        fields=fields_for(post.design),
    )
    M = post.design.counts.get("judge", 1)
    fixed_judge = [j for j, t in enumerate(terms) if t.label == "judge" and t.kind == "fixed"]
    if judges == "panel" and fixed_judge and M > 1:
        Mp = designs["n_judges"].to_numpy(float) if "n_judges" in designs else np.full(len(designs), M)
        Mp = np.where(np.isnan(Mp), M, Mp)
        if np.any(Mp > M):
            raise ArgumentError(f"judges='panel' needs n_judges <= {M:g}, the fitted panel.")
        w[:, fixed_judge[0]] *= (M - Mp) / (M - 1)
    da = post.component_draws()
    return projected_variance(da.values.reshape(-1, da.sizes["component"]), w)


def observed_variance(post: Fit, **kwargs) -> np.ndarray:
    """Var(theta_hat) per posterior draw at the observed design (:func:`variance_at` keywords)."""
    return variance_at(post, pd.DataFrame([{}]), **kwargs)[:, 0]


def dstudy(
    post: Fit,
    *,
    estimand: Estimand = "domain",
    decision: Decision = "absolute",
    categories: Literal["fixed", "random"] = "fixed",
    judges: JudgeMode = "new",
    target_se: float | None = None,
    level: float = 0.9,
    n: dict | None = None,
    **counts,
) -> pd.DataFrame:
    """Projected SE of theta_hat for every combination of the given design counts.

    Parameters
    ----------
    n : dict, optional
        Counts of any facet by name (or by its column): ``n={"evaluator": [2, 4, 6],
        "prompt": [1, 3]}``; a facet with a role name gives that role's field (``n_prompts``),
        any other facet an ``n_<facet>`` column. Each component is divided by the counts of its
        facets, so a facet nested in others (runs in evaluator x prompt) divides by all of them.
    n_items, n_prompts, n_judges, n_temperatures, n_replicates, n_categories : int or list
        Counts to project; ``None`` keeps the observed count.
    n_positions : int or list
        Pairwise fits: presentation orders per comparison (1 or 2).
    estimand : {"domain", "finite"}
        ``finite`` drops the item terms (this exact item set is the target).
    decision : {"absolute", "relative"}
        ``relative`` keeps only terms that involve items (systems compared under shared
        prompts, judges and temperatures).
    categories : {"fixed", "random"}
        How the category term averages (:func:`bayes_tee.gstudy.divisors.divisors`).
    judges : {"new", "panel"}
        ``new``: judges like these, sensitivity over ``M'`` (warns beyond a fixed panel).
        ``panel``: a subset of the fitted panel, its mean the target (Zhu et al. 2026).
    target_se : float, optional
        Adds ``p_below_target``, the posterior probability that the SE is below it.
    level : float
        Credible level of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per design: the counts, ``calls``, ``se_median/low/high``,
        ``var_ratio_median/low/high`` (against the observed design), ``p_below_target``.

    >>> post.dstudy(n_items=[50, 100, 200], n_prompts=[1, 3, 5])  # doctest: +SKIP
    """
    n = merge_counts(post.design, counts, n)
    check_judges(post, judges, n.get("n_judges"))
    check_positions(post, n.get("n_positions"))
    grid = grid_for(post, **n)
    kw = dict(estimand=estimand, decision=decision, categories=categories, judges=judges)
    var = variance_at(post, grid, **kw)
    current = observed_variance(post, **kw)
    out = grid.copy()
    out["calls"] = calls(grid, post.design.counts, fields_for(post.design))
    summary = summarize_designs(var, current, level=level, target_se=target_se)
    out = pd.concat([out.reset_index(drop=True), summary], axis=1)
    out.attrs.update(estimand=estimand, decision=decision, level=level, judges=judges)
    return out


#: Single design changes :func:`interventions` tries: name, field, new value from the observed
#: counts (N, V, M, H, R), and the facet that must be in the design.
INTERVENTIONS = (
    ("items x2", "n_items", lambda N, V, M, H, R: 2 * N, "item"),
    ("items x1/2", "n_items", lambda N, V, M, H, R: max(1.0, np.floor(N / 2)), "item"),
    ("+2 prompts", "n_prompts", lambda N, V, M, H, R: V + 2, "prompt"),
    ("single prompt", "n_prompts", lambda *c: 1.0, "prompt"),
    ("+5 replications", "n_replicates", lambda N, V, M, H, R: R + 5, "replicate"),
    ("single replication", "n_replicates", lambda *c: 1.0, "replicate"),
    ("single judge", "n_judges", lambda *c: 1.0, "judge"),
    ("single temperature", "n_temperatures", lambda *c: 1.0, "temperature"),
    ("single presentation order", "n_positions", lambda *c: 1.0, "position"),
)


def intervention_grid(post: Fit) -> tuple[list[tuple], pd.DataFrame]:
    """The single design changes :data:`INTERVENTIONS` a fit can try: ``(name, field, value)``
    rows and the one-row-per-change design grid.
    """
    c = post.design.counts
    observed = [c.get(f, 1.0) for f in ("item", "prompt", "judge", "temperature", "replicate")]
    present = set(post.design.facets) | ({"replicate"} if post.design.has_replicates else set())
    rows = [
        (name, field, value(*observed))
        for name, field, value, facet in INTERVENTIONS
        if facet in present and value(*observed) != c.get(facet, 1.0)
    ]
    return rows, pd.DataFrame([{f: v} for _, f, v in rows])


def intervention_table(
    post: Fit, rows: list[tuple], var: np.ndarray, current: np.ndarray, level: float
) -> pd.DataFrame:
    """The interventions table from the variance at each change ``(n_draws, n_changes)`` and at
    the observed design ``(n_draws,)``: percent change with its interval, ``p_reduces``.
    """
    c = post.design.counts
    change = 100.0 * (var / current[:, None] - 1.0)
    out = pd.DataFrame(
        {
            "intervention": [r[0] for r in rows],
            "field": [r[1] for r in rows],
            "value": [r[2] for r in rows],
            "calls_ratio": [r[2] / c.get(FIELDS[r[1]], 1.0) for r in rows],
        }
    )
    out = pd.concat([out, summarize_samples(change, level, "change_")], axis=1)
    out["p_reduces"] = (change < 0).mean(axis=0)
    out.attrs["level"] = level
    return out


def interventions(
    post: Fit, *, estimand: Estimand = "domain", decision: Decision = "absolute", level: float = 0.9
) -> pd.DataFrame:
    """Percent change in Var(theta_hat) for single design changes (Messing 2026 Fig. 13-14); see
    :meth:`bayes_tee.Posterior.interventions`.
    """
    rows, grid = intervention_grid(post)
    kw = dict(estimand=estimand, decision=decision)
    var = variance_at(post, grid, **kw) if rows else np.zeros((1, 0))
    out = intervention_table(post, rows, var, observed_variance(post, **kw), level)
    out.attrs.update(estimand=estimand, decision=decision)
    return out


def default_grid(post: Fit) -> pd.DataFrame:
    """The D-study :meth:`bayes_tee.Posterior.plot_dstudy` draws by default: items from 10 to 4x the
    observed count, prompts and judges at 1 and as observed.
    """
    c = post.design.counts
    n = np.unique(np.geomspace(10, 4 * c["item"], 12).round())
    return dstudy(
        post, n_items=n, n_prompts=sorted({1, c.get("prompt", 1)}), n_judges=sorted({1, c.get("judge", 1)})
    )


#: Names that moved (old imports still work, with a DeprecationWarning).
__getattr__ = moved_names(
    __name__,
    {
        "Over": "bayes_tee.gstudy.weights",
        "fields_from_n": "bayes_tee.gstudy.weights",
        "counts_with": "bayes_tee.gstudy.weights",
        "difference_variance": "bayes_tee.posterior.separation",
        "difference_weights": "bayes_tee.posterior.separation",
        "system_error_terms": "bayes_tee.posterior.system_scores",
    },
)
