"""The relative D-study of a fit that compares systems: the error of a difference between two
systems at a design, what sets it, and what a design would resolve.

In a difference the terms two systems share cancel (an item's difficulty, a prompt's, a judge's
leniency); the terms that involve the system stay (item x system, prompt x system, judge x
system when judges are random, the cell), each over its levels at the design (Messing 2026,
the D-study's relative decision). Every answer is per posterior draw of the components, so
each design gets a posterior of its SE.

>>> separation(fit, n_items=[100, 200], gap=0.05)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import special

from .._core.exceptions import ArgumentError
from .._core.intervals import check_level, summarize_samples
from ..gstudy.weights import Over, calls, design_weights, fields_for, merge_counts, summarize_designs
from . import system_scores as ss
from .dstudy import grid_for, intervention_grid, intervention_table
from .leaderboard import _check, require_systems, score_scale, system_estimates
from .system_scores import system_error_terms

if TYPE_CHECKING:
    from .fit import Fit


def difference_weights(
    post: Fit, designs: pd.DataFrame, over: Over = "new"
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The random terms' labels, their variance draws ``(n_draws, n_terms)`` and the weights
    ``(n_designs, n_terms)`` that make the variance of the difference between two systems:
    twice one system's own error, each term over its levels at the design (counts missing from
    ``designs`` are the observed ones; the systems count once).
    """
    system = post.design.system
    fields = fields_for(post.design)
    designs = designs.assign(**{f"n_{system}": 1.0})
    base = {**post.design.counts, system: 1.0}
    mask = system_error_terms(post)[f"{over}_own"]
    terms = [t for t in post.terms if t.kind != "fixed"]
    labels = [t.label for t in terms]
    w = design_weights(labels, {t.label: t.facets for t in terms}, designs, base=base, fields=fields)
    w = 2.0 * np.where(mask[None, :], w, 0.0)
    da = post.component_draws().sel(component=labels)
    return labels, da.values.reshape(-1, da.sizes["component"]), w


def difference_variance(post: Fit, designs: pd.DataFrame, over: Over = "new") -> np.ndarray:
    """Var of the difference between two systems per posterior draw at each design row,
    ``(n_draws, n_designs)`` (:func:`difference_weights`).
    """
    _, draws, w = difference_weights(post, designs, over)
    return draws @ w.T


def adjacent_resolved(post: Fit, var: np.ndarray, *, level: float = 0.9, over: Over = "new") -> np.ndarray:
    """Per design, the expected share of the leaderboard's adjacent gaps (between systems next
    to each other in the estimated order) that a study at the design would resolve: its
    ``level`` interval of the difference excludes zero. ``var``: difference variances
    ``(n_draws, n_designs)``.
    """
    est = np.sort(system_estimates(post).to_numpy())
    gaps = np.diff(est)  # (n_systems - 1,)
    z = special.ndtri(1 - (1 - check_level(level)) / 2)
    inv_se = 1.0 / np.sqrt(var)
    out = np.empty(var.shape[1])
    # a few designs at a time: (draws, designs, gaps) temporaries that stay in cache (2.6x faster
    # than the whole array at once at 2,000 draws x 8,000 designs)
    step = max(1, 2**18 // max(var.shape[0] * len(gaps), 1))
    for a in range(0, var.shape[1], step):
        x = inv_se[:, a : a + step, None] * gaps
        p = special.ndtr(x - z)
        p += special.ndtr(-x - z)
        out[a : a + step] = p.mean(axis=(0, 2))
    return out


def separation(
    post: Fit,
    *,
    object: str | None = None,
    gap: float | None = None,
    over: Over = "new",
    level: float = 0.9,
    n: dict | None = None,
    target_se: float | None = None,
    estimand: str = "domain",
    decision: str = "absolute",
    categories: str = "fixed",
    judges: str = "new",
    **counts,
) -> pd.DataFrame:
    """The relative D-study: the SE of the difference between two systems at every
    combination of the given design counts, and the probability that a true ``gap`` is
    resolved (its ``level`` interval excludes zero).

    Only the terms that involve the systems enter (item x system, prompt x system, judge x
    system when judges are random, the cell), each over its levels at the design; the shared
    main effects cancel (Messing 2026, the D-study's relative decision). Projected from the
    observed design's counts, per posterior draw.

    Parameters
    ----------
    post : Fit
        A fit with ``system=``.
    gap : float, optional
        A true difference between two systems: adds ``p_resolved``, the posterior-predictive
        probability that a study at the design separates them (averaged over the draws:
        ``Phi(gap/se - z) + Phi(-gap/se - z)``, ``z`` the ``level`` quantile). In the
        leaderboard's units: for a binomial or ordinal fit a difference of success
        probabilities or expected scores, carried to the latent scale by
        :func:`bayes_tee.posterior.system_scores.score_slope`.
    over : {"new", "panel"}
        The reading of the difference (see the module docstring).
    level : float
        Credible level of the SE intervals, and of the interval that must exclude zero.
    n : dict, optional
        Counts of any facet by name, as in ``dstudy``; ``n_items``... as keywords.
    target_se : float, optional
        Adds ``p_below_target``.

    Returns
    -------
    pandas.DataFrame
        The counts, ``calls_per_system``, ``se_median/low/high``, ``var_ratio_median/low/high``
        (against the observed design), ``p_resolved`` and ``p_below_target`` when asked. A
        binomial or ordinal fit's SEs are on the latent scale; ``score_se_median`` is the
        median in the leaderboard's units (``attrs["slope"]`` per latent unit).
    """
    system = require_systems(post)
    _check(level, over)
    for name, value, default in (
        ("estimand", estimand, "domain"), ("decision", decision, "absolute"),
        ("categories", categories, "fixed"), ("judges", judges, "new"),
    ):  # fmt: skip
        if value != default:
            raise ArgumentError(
                f"{name}= is a setting of theta_hat's D-study; the difference between two systems is "
                f"projected with over='new' or 'panel' (got {name}={value!r})."
            )
    given = merge_counts(post.design, counts, n)
    if f"n_{system}" in given:
        raise ArgumentError(
            "The number of systems does not change the SE of a difference between two of them."
        )
    fields = fields_for(post.design)
    grid = grid_for(post, **given)
    var = difference_variance(post, grid, over)
    current = difference_variance(post, pd.DataFrame([{}]), over)[:, 0]
    out = grid.drop(columns=[f"n_{system}"], errors="ignore").reset_index(drop=True)
    out["calls_per_system"] = calls(grid.assign(**{f"n_{system}": 1.0}), post.design.counts, fields)
    out = pd.concat([out, summarize_designs(var, current, level=level, target_se=target_se)], axis=1)
    slope = 1.0
    if ss.is_latent_comparison(post):  # the SE and the gap in score units, through the curve
        slope = ss.score_slope(post)
        out["score_se_median"] = out["se_median"] * slope
    if gap is not None:
        z = special.ndtri(1 - (1 - check_level(level)) / 2)
        se = np.sqrt(var) * slope
        out["p_resolved"] = (special.ndtr(abs(gap) / se - z) + special.ndtr(-abs(gap) / se - z)).mean(axis=0)
    out.attrs.update(object="system", over=over, level=level, gap=gap, scale=score_scale(post), slope=slope)
    return out


def difference_shares(
    post: Fit, design: dict | None = None, *, level: float = 0.9, over: Over = "new"
) -> pd.DataFrame:
    """Which components set the SE of a difference between two systems: each one's
    contribution to its variance at a design (observed counts, or ``design``'s ``n_*``), and
    its share (the ``shares()`` of a fit that compares systems).

    Returns
    -------
    pandas.DataFrame
        ``component, divisor, contribution_median/low/high, share_median/low/high`` for the
        terms a difference keeps; ``attrs["var_difference"]`` (median, low, high).
    """
    require_systems(post)
    _check(level, over)
    grid = pd.DataFrame([{k: v for k, v in (design or {}).items() if v is not None}])
    labels, draws, w = difference_weights(post, grid, over)
    keep = w[0] > 0
    contrib = draws[:, keep] * w[0, keep]  # (draws, kept terms)
    total = contrib.sum(axis=1)
    out = pd.DataFrame({"component": np.array(labels)[keep], "divisor": 2.0 / w[0, keep]})
    out = pd.concat(
        [
            out,
            summarize_samples(contrib, level, "contribution_"),
            summarize_samples(contrib / total[:, None], level, "share_"),
        ],
        axis=1,
    )
    lo, med, hi = np.quantile(total, [(1 - check_level(level)) / 2, 0.5, 1 - (1 - check_level(level)) / 2])
    out.attrs.update(
        var_difference={"median": float(med), "low": float(lo), "high": float(hi)},
        over=over,
        scale=post.scale,
    )
    return out


def difference_interventions(
    post: Fit, *, estimand: str = "domain", decision: str = "absolute", level: float = 0.9
) -> pd.DataFrame:
    """Percent change in the variance of a difference between two systems for single design
    changes (the ``interventions()`` of a fit that compares systems; ``estimand`` and
    ``decision`` are recorded, a difference has one reading of each).
    """
    rows, grid = intervention_grid(post)
    var = difference_variance(post, grid) if rows else np.zeros((1, 0))
    current = difference_variance(post, pd.DataFrame([{}]))[:, 0]
    out = intervention_table(post, rows, var, current, level)
    out.attrs.update(estimand=estimand, decision=decision, object="system")
    return out


def asks_for_systems(object: str | None = None, gap=None, over: str = "new") -> bool:
    """Whether a D-study's arguments ask for the difference between two systems: ``object="system"``,
    a ``gap`` or an ``over`` reading (refused on a fit of one system).
    """
    if object not in (None, "system"):
        raise ArgumentError(
            f"dstudy(object=...) takes 'system' (the difference between two systems) or None, got "
            f"{object!r}; G and Phi coefficients of another object: post.reliability(object=...)."
        )
    return object == "system" or gap is not None or over != "new"
