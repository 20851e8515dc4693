"""D-study projections with full posterior uncertainty (Messing 2026 Sec. 3.3, App. C.8, App. D).

For a proposed design (N', V', M', H', R', C'), every component's contribution to
Var(theta_hat) is its variance divided by the number of levels it is averaged over
(:func:`bayes_tee.posterior.components.divisors`). That is linear in the component variances, so for many
designs at once it is one matrix product, ``draws @ weights.T``, over all posterior draws: each
design gets a posterior of its SE, not a plug-in number.

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
import warnings
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from .._core.intervals import summarize_samples
from .components import Estimand, averaged_facets, kept_terms

if TYPE_CHECKING:
    from .facade import Posterior

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
    for field, facet in FIELDS.items():
        if facet in ("item", "replicate", "category") or facet in design.facets or field not in out:
            continue
        if any(float(v) != 1 for v in np.atleast_1d(out[field])):
            raise ArgumentError(
                f"{field}={out[field]!r}: this fit has no {facet} facet (one {facet}, or none given), "
                f"so its count cannot be projected; fit with {facet}= to project it."
            )
    return out


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
    given = {k: (list(v) if np.ndim(v) else [v]) for k, v in counts.items() if v is not None}
    for k, vals in given.items():
        if not vals:
            raise ArgumentError(f"{k} has no counts: give one or more, e.g. {k}=[1, 3].")
        if any(isinstance(x, str | bool) or not isinstance(x, int | float | np.number) for x in vals):
            raise ArgumentError(f"{k} takes numbers (counts), got {vals}.")
        if any(not (float(x) >= 1) for x in vals):
            raise ArgumentError(f"{k} must be at least 1, got {vals}.")
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


def projected_variance(draws: np.ndarray, weights: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """Var(theta_hat) per draw and design, ``(n_draws, n_designs)``, computed in design chunks."""
    return np.concatenate(
        [draws @ weights[i : i + chunk].T for i in range(0, max(len(weights), 1), chunk)], axis=1
    )


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
        if not target_se > 0:
            raise ArgumentError(f"target_se must be positive, got {target_se!r}.")
        out["p_below_target"] = (se < target_se).mean(axis=0)
    return out


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


def check_judges(post: Posterior, judges: JudgeMode, n_judges, stacklevel: int = 4) -> None:
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


def check_positions(post: Posterior, n_positions) -> None:
    """``n_positions`` needs a pairwise fit with a presentation-order facet."""
    if n_positions is not None and "position" not in post.design.facets:
        raise ArgumentError(
            "n_positions needs a pairwise fit with a presentation-order column: "
            "fit_posterior(..., position='order')."
        )


def fill_design(post: Posterior, grid: pd.DataFrame, *, fill_categories: bool = False) -> pd.DataFrame:
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


def grid_for(post: Posterior, *, fill_categories: bool = False, **given) -> pd.DataFrame:
    """Every combination of the given design counts; fields not given take the observed count."""
    grid = design_grid(fields_for(post.design), **given)
    return fill_design(post, grid if not grid.empty else pd.DataFrame([{}]), fill_categories=fill_categories)


def variance_at(
    post: Posterior,
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


def observed_variance(post: Posterior, **kwargs) -> np.ndarray:
    """Var(theta_hat) per posterior draw at the observed design (:func:`variance_at` keywords)."""
    return variance_at(post, pd.DataFrame([{}]), **kwargs)[:, 0]


def dstudy(
    post: Posterior,
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
        How the category term averages (:func:`bayes_tee.posterior.components.divisors`).
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


# -- comparing systems: the error of a difference (leaderboard and budget use these) -------
def system_error_terms(post: Posterior) -> dict[str, np.ndarray]:
    """On a fit that compares systems, which of its random terms (``kind != "fixed"``, in
    order) enter each error: ``new`` and ``panel`` of one system's mean, and ``new_own``,
    ``panel_own``, their system-specific part (what a difference keeps); see
    :mod:`bayes_tee.posterior.leaderboard`.
    """
    system = post.design.system
    terms = [t for t in post.terms if t.kind != "fixed"]
    # a term is error when it involves a facet whose levels are a sample: the items (and their
    # categories and the calls) for the panel; every random facet for new levels. A term of fixed
    # facets only (system x judge with a fixed panel of judges) is part of what is estimated.
    panel = {"item", "replicate", "category"}
    new = panel | {t.facets[0] for t in terms if len(t.facets) == 1}
    facets = [set(t.facets) for t in terms]
    own = np.array([system in fs for fs in facets])
    in_new = np.array([bool(fs & new) for fs in facets])
    in_panel = np.array([bool(fs & panel) for fs in facets])
    return {"new": in_new, "panel": in_panel, "new_own": own & in_new, "panel_own": own & in_panel}


def difference_weights(
    post: Posterior, designs: pd.DataFrame, over: Over = "new"
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


def difference_variance(post: Posterior, designs: pd.DataFrame, over: Over = "new") -> np.ndarray:
    """Var of the difference between two systems per posterior draw at each design row,
    ``(n_draws, n_designs)`` (:func:`difference_weights`).
    """
    _, draws, w = difference_weights(post, designs, over)
    return draws @ w.T


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


def interventions(
    post: Posterior, *, estimand: Estimand = "domain", decision: Decision = "absolute", level: float = 0.9
) -> pd.DataFrame:
    """Percent change in Var(theta_hat) for single design changes (Messing 2026 Fig. 13-14); see
    :meth:`Posterior.interventions`.
    """
    c = post.design.counts
    observed = [c.get(f, 1.0) for f in ("item", "prompt", "judge", "temperature", "replicate")]
    present = set(post.design.facets) | ({"replicate"} if post.design.has_replicates else set())
    rows = [
        (name, field, value(*observed))
        for name, field, value, facet in INTERVENTIONS
        if facet in present and value(*observed) != c.get(facet, 1.0)
    ]
    grid = pd.DataFrame([{f: v} for _, f, v in rows])
    if post.design.system is not None:  # a comparison: the change in Var of a difference
        var = difference_variance(post, grid) if rows else np.zeros((1, 0))
        current = difference_variance(post, pd.DataFrame([{}]))[:, 0]
    else:
        kw = dict(estimand=estimand, decision=decision)
        var = variance_at(post, grid, **kw) if rows else np.zeros((1, 0))
        current = observed_variance(post, **kw)
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
    out.attrs.update(estimand=estimand, decision=decision, level=level)
    if post.design.system is not None:
        out.attrs["object"] = "system"
    return out


def default_grid(post: Posterior) -> pd.DataFrame:
    """The D-study :meth:`Posterior.plot_dstudy` draws by default: items from 10 to 4x the
    observed count, prompts and judges at 1 and as observed.
    """
    c = post.design.counts
    n = np.unique(np.geomspace(10, 4 * c["item"], 12).round())
    return dstudy(
        post, n_items=n, n_prompts=sorted({1, c.get("prompt", 1)}), n_judges=sorted({1, c.get("judge", 1)})
    )
