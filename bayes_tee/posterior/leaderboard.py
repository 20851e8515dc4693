"""Compare systems: a leaderboard, paired differences and ranks from one joint fit.

A fit with ``system=`` (:func:`bayes_tee.fit_posterior`) has the systems as a fixed factor and
their interactions with every random facet as variance components. Each system's score is
estimated by the posterior mean of ``mu + system_effect``; its error has two readings (Messing
2026, the D-study's absolute and relative decisions; Brennan 2001, Ch. 4):

- **panel**: the system's mean over the item population *for these judges, prompts and
  temperatures*. Its error is what the item sample leaves: every random term that involves
  items (item, item x prompt, item x system, the cell and residual), each over the number of its
  levels the system's mean averages.
- **new**: over new levels of every facet declared random as well (new prompts; new judges
  only with ``judge_effect="random"``: a fixed panel of judges stays fixed, and the table says
  so). Every random term that involves a random facet enters; a term of fixed facets only
  (judge x system with a fixed panel) is part of the estimand.

In a difference between two systems the terms they share cancel (the items' own difficulty, a
prompt's, a judge's leniency); the terms that involve the system stay: item x system,
prompt x system, judge x system and the cell. Those set the intervals of :func:`pairs`, the
ranks and P(best). Every interval mixes the normal error over the posterior draws of the
variance components (:func:`~bayes_tee.gstudy.divisors.normal_mixture_quantile`), as
``theta()`` does for one system, so the uncertainty in the components is carried, not plugged
in. Counts are each system's own (a system scored on fewer items has a wider interval).

A binomial or ordinal fit estimates the systems on the latent scale; its leaderboard, pairs
and ranks answer from the posterior of each system's success probability or expected score
over the population of items (:mod:`bayes_tee.posterior.system_scores`), with the latent
values beside them.

>>> post.leaderboard()  # doctest: +SKIP
>>> post.pairs(over="panel")  # doctest: +SKIP
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import special

from .._core.exceptions import ArgumentError, DesignError
from .._core.intervals import check_level
from .._core.moved import moved_names
from .._core.trees import group
from ..gstudy.divisors import normal_mixture_quantile
from ..gstudy.weights import Over
from . import system_scores as ss
from .controls import Adjustment, Control, adjustment, reading
from .cost_front import Cost, front, p_pareto, system_costs
from .tie_groups import groups_of, letter_display

if TYPE_CHECKING:
    from .fit import Fit

#: Posterior draws of the variance components the intervals mix over (thinned evenly).
MIXTURE_DRAWS = 1000
#: Simulated score draws per posterior draw for the ranks and P(best).
RANK_SIMS = 4


def require_systems(post: Fit) -> str:
    """The design's system facet, or one error that says how to fit a comparison."""
    if post.design.system is None:
        raise DesignError(
            "This fit compares no systems: fit all systems jointly with system=<column> "
            "(e.g. bt.fit_posterior(df, ..., system='model')), or write the systems into a formula "
            "as a fixed factor and pass system=<that column>."
        )
    return post.design.system


def system_counts(post: Fit) -> dict[str, dict[str, float]]:
    """Each system's own level counts: the levels of every facet among its cells, and its
    mean calls per cell (``replicate``).
    """
    d, system = post.design, require_systems(post)
    out = {}
    for code, label in enumerate(d.levels[system]):
        cells = d.cells[d.cells[system] == code]
        counts = {f: float(cells[f].nunique()) for f in d.facets if f != system}
        counts["replicate"] = float(cells["n"].mean()) if len(cells) else 1.0
        counts["category"] = float(len(d.categories)) if d.categories else 1.0
        out[label] = counts
    return out


def error_variances(post: Fit) -> dict[str, np.ndarray]:
    """Per system and posterior draw, the error variance of its mean under each reading.

    Returns
    -------
    dict
        ``new``, ``panel`` (of one system's mean) and ``new_own``, ``panel_own`` (its
        system-specific part, which a difference keeps), each an array
        ``(n_systems, n_draws)``.
    """
    system = require_systems(post)
    terms = [t for t in post.terms if t.kind != "fixed"]
    draws = post.component_draws().sel(component=[t.label for t in terms])
    var = draws.stack(sample=("chain", "draw")).transpose("component", "sample").values
    keep = np.linspace(0, var.shape[1] - 1, min(MIXTURE_DRAWS, var.shape[1])).round().astype(int)
    var = var[:, keep]
    masks = ss.system_error_terms(post)
    out = {k: [] for k in masks}
    for counts in system_counts(post).values():
        div = np.array(
            [
                np.prod(
                    [
                        counts.get(f, 1.0)
                        for f in (("item",) if t.label == "category" else t.facets)
                        if f != system
                    ]
                )
                for t in terms
            ]
        )
        contrib = var / div[:, None]
        for k, m in masks.items():
            out[k].append(contrib[m].sum(axis=0))
    return {k: np.array(v) for k, v in out.items()}


def system_estimates(post: Fit, adjust: Adjustment | None = None) -> pd.Series:
    """Each system's estimated score: the posterior mean of ``mu + system_effect``, plus with
    covariates the posterior mean of its covariate part (``adjust``, :mod:`.controls`: at its
    own calls' values, or at the control's).
    """
    system = require_systems(post)
    P = group(post.idata, "posterior")
    eff = P[f"{system}_effect"]
    score = (P["mu"] + eff).mean(("chain", "draw")).values
    if adjust is None and post.design.covariates is not None:  # uncontrolled unless told
        adjust = adjustment(post, None)
    if adjust is not None:
        score = score + adjust.part.mean(axis=0)
    return pd.Series(score, index=list(post.design.levels[system]), name="estimate")


def _controlled(post: Fit, control: Control | None, var: dict[str, np.ndarray]) -> Adjustment | None:
    """The control's :class:`~.controls.Adjustment`, its posterior variance added to ``var``'s
    per-system readings in place (a difference's is added per pair, :func:`_pairs_table`).
    """
    adjust = adjustment(post, control)
    if adjust is not None and adjust.control and not ss.is_latent_comparison(post):
        for kind in ("new", "panel"):
            var[kind] = var[kind] + adjust.variance(kind)[:, None]
    return adjust


def _shifted(draws: np.ndarray, adjust: Adjustment | None, sims: int = RANK_SIMS) -> np.ndarray:
    """Rank draws with the control's own posterior draws added (jointly over the systems, so a
    shift they share stays shared), matched to the mixture draws of :func:`score_draws`.
    """
    if adjust is None or not adjust.control:
        return draws
    shift = adjust.shift - adjust.shift.mean(axis=0)
    n_mix = draws.shape[0] // sims
    keep = np.linspace(0, len(shift) - 1, n_mix).round().astype(int)
    return draws + np.repeat(shift[keep], sims, axis=0)


def _check(level: float, over: str) -> None:
    if not 0 < level < 1:
        raise ArgumentError(f"level must be between 0 and 1, got {level!r}.")
    if over not in ("new", "panel"):
        raise ArgumentError(f"over must be 'new' or 'panel', got {over!r}.")


def _half(level: float, var: np.ndarray) -> float:
    """Half-width of the central ``level`` interval of the normal mixture with variances ``var``."""
    return normal_mixture_quantile(1 - (1 - check_level(level)) / 2, np.sqrt(var))


def score_draws(
    post: Fit,
    over: Over = "new",
    sims: int = RANK_SIMS,
    random_seed: int | None = 0,
    *,
    est: np.ndarray | None = None,
    var: np.ndarray | None = None,
) -> np.ndarray:
    """Draws of every system's score, up to a shift they all share: the estimate plus its
    system-specific error (``(n_draws * sims, n_systems)``), for ranks and P(best). ``est``
    and ``var`` (the estimates and the ``{over}_own`` error variances) when already at hand.
    """
    est = system_estimates(post).to_numpy() if est is None else est
    var = error_variances(post)[f"{over}_own"] if var is None else var  # (systems, draws)
    rng = np.random.default_rng(random_seed)
    z = rng.standard_normal((var.shape[1], sims, var.shape[0]))
    return (est + z * np.sqrt(var.T)[:, None, :]).reshape(-1, var.shape[0])


def ranks_of(draws: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Each system's rank (1 = best) in every row of score ``draws``, ``(n_draws, n_systems)``."""
    sign = -1.0 if higher_is_better else 1.0
    return np.argsort(np.argsort(sign * draws, axis=1), axis=1) + 1


def leaderboard(
    post: Fit,
    *,
    level: float = 0.9,
    over: Over = "new",
    higher_is_better: bool = True,
    random_seed: int | None = 0,
    cost: Cost | None = None,
    cost_column: str | None = None,
    control: Control | None = None,
) -> pd.DataFrame:
    """One row per system, best first: its estimate, panel and new intervals, its rank
    interval, the probability that it is the best and its tie group; with ``cost``, its cost
    and the probability that it is on the cost front.

    Parameters
    ----------
    post : Fit
        A fit with ``system=``.
    level : float
        Credible level of the intervals (and of the simultaneous pair intervals that set the
        tie groups).
    over : {"new", "panel"}
        The error the ranks, P(best), the groups and the front carry (module docstring).
    higher_is_better : bool
        Rank 1 is the highest score (``False``: the lowest, for error rates).
    random_seed : int, optional
        Seed of the rank simulation.
    cost : mapping, pandas.Series or pandas.DataFrame, optional
        What each system costs (:func:`bayes_tee.posterior.cost_front.system_costs`): per
        system, or a table of calls with their cost (each system's mean).
    cost_column : str, optional
        The cost column of a ``cost`` table (default ``"cost"``, or its only other column).
    control : mapping, optional
        Covariates set to reference values, e.g. ``{"length": 0}`` (:mod:`.controls`): every
        system's score at those values, the slopes' uncertainty carried into the intervals, the
        ranks and the groups. Default: uncontrolled (each system at its own calls' values).

    Returns
    -------
    pandas.DataFrame
        ``system, estimate, panel_low, panel_high, new_low, new_high, rank_median, rank_low,
        rank_high, p_best, group`` (with ``cost``: ``cost, p_pareto``; and ``latent``, the
        latent location, for a binomial or ordinal fit, whose estimates and intervals are
        success probabilities or expected scores). ``group`` is the compact letter display
        (:mod:`bayes_tee.posterior.tie_groups`): two systems share a letter exactly when the
        simultaneous interval of their difference (:func:`pairs`) contains 0. ``attrs``:
        ``level``, ``over``, ``judges`` (fixed or random), ``note`` (what *new* generalises
        over), ``scale`` (the estimates' units), ``groups`` (the systems of each letter),
        ``simultaneous_level``, ``higher_is_better`` and, with ``cost``, ``front`` (the
        systems the estimates put on the cost front), ``control`` (the reading: uncontrolled, or
        controlled at the values given; only on fits with covariates).

    Examples
    --------
    >>> post.leaderboard(cost={"gpt": 2.5, "llama": 0.2, "mistral": 0.4})  # doctest: +SKIP
    """
    _check(level, over)
    var = error_variances(post)
    adjust = _controlled(post, control, var)
    est = system_estimates(post, adjust)
    names = list(est.index)
    costs = (
        None
        if cost is None
        else system_costs(
            cost,
            names,
            system=post.design.facet_columns.get(post.design.system, "system"),
            cost_column=cost_column,
        )
    )
    a = (1 - check_level(level)) / 2
    scores = None
    if ss.is_latent_comparison(post):  # the score's scale (system_scores)
        scores = ss.system_scores(post, var, adjust)
        draws = scores.ranked(over)
        out = pd.DataFrame({"system": names, "estimate": scores.estimate})
        for kind in ("panel", "new"):
            out[f"{kind}_low"], out[f"{kind}_high"] = ss.interval(scores, kind, level)
    else:
        draws = score_draws(post, over, random_seed=random_seed, est=est.to_numpy(), var=var[f"{over}_own"])
        draws = _shifted(draws, adjust)
        out = pd.DataFrame({"system": names, "estimate": est.to_numpy()})
        for kind in ("panel", "new"):
            half = np.array([_half(level, v) for v in var[kind]])
            out[f"{kind}_low"], out[f"{kind}_high"] = out["estimate"] - half, out["estimate"] + half
    ranks = ranks_of(draws, higher_is_better)
    out["rank_median"] = np.median(ranks, axis=0)
    out["rank_low"] = np.quantile(ranks, a, axis=0, method="lower").astype(int)
    out["rank_high"] = np.quantile(ranks, 1 - a, axis=0, method="higher").astype(int)
    out["p_best"] = (ranks == 1).mean(axis=0)
    if costs is not None:
        out["cost"] = costs
        out["p_pareto"] = p_pareto(draws, costs, higher_is_better)
    if scores is not None:
        out["latent"] = scores.latent
    out = out.sort_values("estimate", ascending=not higher_is_better, ignore_index=True)
    table = _pairs_table(post, level, over, names, est, var[f"{over}_own"], scores, adjust)
    order = out["system"].tolist()
    separated = separated_matrix(table, order)
    out.insert(out.columns.get_loc("p_best") + 1, "group", letter_display(separated))
    judges = post.design.judge_effect if "judge" in post.design.facets else None
    random = [t.label for t in post.terms if t.kind != "fixed" and len(t.facets) == 1]
    note = "new: over new " + ", ".join(f"{f}s" for f in random if f != "category")
    if judges == "fixed":
        note += "; the judges are a fixed panel (fit judge_effect='random' to generalise over new judges)"
    out.attrs.update(
        level=level, over=over, judges=judges, note=note, scale=score_scale(post),
        groups=groups_of(order, separated), simultaneous_level=table.attrs["simultaneous_level"],
        higher_is_better=higher_is_better,
    )  # fmt: skip
    if costs is not None:
        on = front(out["estimate"].to_numpy(), out["cost"].to_numpy(), higher_is_better)
        out.attrs["front"] = out["system"][on].tolist()
    if adjust is not None:
        out.attrs["control"] = reading(control)
    return out


def separated_matrix(table: pd.DataFrame, systems: list[str]) -> np.ndarray:
    """``(n, n)`` booleans, systems in the order given: whether the simultaneous interval of
    their difference in a :func:`pairs` ``table`` excludes 0.
    """
    index = {s: i for i, s in enumerate(systems)}
    out = np.zeros((len(systems), len(systems)), bool)
    split = ((table["simultaneous_low"] > 0) | (table["simultaneous_high"] < 0)).to_numpy()
    for a_name, b_name, sep_ in zip(table["system_a"], table["system_b"], split):
        out[index[a_name], index[b_name]] = out[index[b_name], index[a_name]] = bool(sep_)
    return out


def tie_groups(
    post: Fit,
    *,
    level: float = 0.9,
    over: Over = "new",
    higher_is_better: bool = True,
    control: Control | None = None,
) -> list[list[str]]:
    """The leaderboard's tie groups: for each letter of its ``group`` column ("a", "b", ...),
    the systems that hold it, best first. Two systems are in a group together exactly when
    the simultaneous interval of their difference contains 0 (:mod:`bayes_tee.posterior.tie_groups`).

    >>> post.tie_groups()  # doctest: +SKIP
    [['gpt', 'claude'], ['claude', 'llama'], ['mistral']]
    """
    board = leaderboard(post, level=level, over=over, higher_is_better=higher_is_better, control=control)
    return board.attrs["groups"]


def score_scale(post: Fit) -> str:
    """The units of a leaderboard's estimates and differences."""
    if not ss.is_latent_comparison(post):
        return "outcome"
    return "expected score" if post.design.outcome_levels is not None else "success probability"


def pairs(
    post: Fit,
    *,
    level: float = 0.9,
    over: Over = "new",
    systems: list[str] | None = None,
    control: Control | None = None,
) -> pd.DataFrame:
    """Every pair of systems: the difference of their scores with its interval, a
    simultaneous interval over all the pairs (Sidak), and P(a scores higher than b).

    Parameters
    ----------
    post : Fit
        A fit with ``system=``.
    level : float
        Credible level.
    over : {"new", "panel"}
        ``new``: the difference on new levels of every random facet (prompt x system and,
        with random judges, judge x system enter); ``panel``: for these judges and prompts
        (item x system and the cell only).
    systems : list of str, optional
        Compare only these (in this order); default every system, best first.
    control : mapping, optional
        Covariates set to reference values (:func:`leaderboard`); the differences carry the
        slopes' uncertainty.

    Returns
    -------
    pandas.DataFrame
        ``system_a, system_b, difference, low, high, simultaneous_low, simultaneous_high,
        se_median, p_a_better`` (a binomial or ordinal fit: differences of success
        probabilities or expected scores, ``se_median`` their posterior SD, and
        ``latent_difference``); ``attrs``: ``level``, ``simultaneous_level``, ``over``, ``scale``
        (and ``control`` on fits with covariates).
    """
    _check(level, over)
    var = error_variances(post)
    adjust = _controlled(post, control, var)
    est = system_estimates(post, adjust)
    scores = ss.system_scores(post, var, adjust) if ss.is_latent_comparison(post) else None
    if systems is None:
        systems = list(est.sort_values(ascending=False).index)
    table = _pairs_table(post, level, over, systems, est, var[f"{over}_own"], scores, adjust)
    if adjust is not None:
        table.attrs["control"] = reading(control)
    return table


def _pairs_table(
    post: Fit,
    level: float,
    over: Over,
    systems: list[str],
    est: pd.Series,
    own: np.ndarray,
    scores: ss.SystemScores | None,
    adjust: Adjustment | None = None,
) -> pd.DataFrame:
    """:func:`pairs` from the estimates, the ``{over}_own`` error variances and (a latent
    fit) the score draws already at hand.
    """
    index = {s: i for i, s in enumerate(est.index)}
    unknown = [s for s in systems if s not in index]
    if unknown:
        raise DesignError(f"Unknown system(s) {unknown}; the fit compares {list(est.index)}.")
    combos = list(combinations(systems, 2))
    if not combos:
        raise DesignError("pairs() needs two or more systems.")
    sim_level = level ** (1.0 / len(combos))  # Sidak: every interval holds at once with `level`
    rows = []
    for a_name, b_name in combos:
        i, j = index[a_name], index[b_name]
        diff = float(est.iloc[i] - est.iloc[j])
        var = own[i] + own[j]
        if adjust is not None and adjust.control and scores is None:  # the control's own uncertainty
            var = var + adjust.pair_variance(i, j, over)
        half, sim_half = _half(level, var), _half(sim_level, var)
        row = {
            "system_a": a_name,
            "system_b": b_name,
            "difference": diff,
            "low": diff - half,
            "high": diff + half,
            "simultaneous_low": diff - sim_half,
            "simultaneous_high": diff + sim_half,
            "se_median": float(np.median(np.sqrt(var))),
            "p_a_better": float(np.mean(special.ndtr(diff / np.sqrt(var)))),
        }
        if scores is not None:  # differences of scores; P(a better) is the latent one
            row |= ss.difference(scores, i, j, f"{over}_own", (level, sim_level))
            row["latent_difference"] = float(scores.latent[i] - scores.latent[j])
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update(level=level, simultaneous_level=sim_level, over=over, scale=score_scale(post))
    return out


def compare(
    post: Fit, a: str, b: str, *, level: float = 0.9, over: Over = "new", control: Control | None = None
) -> pd.Series:
    """The difference ``a - b`` with its interval and P(a scores higher): one row of
    :func:`pairs` (its simultaneous interval is the plain one: one comparison).
    """
    if a == b:
        raise DesignError(f"compare() needs two different systems, got {a!r} twice.")
    return pairs(post, level=level, over=over, systems=[a, b], control=control).iloc[0]


def p_better_matrix(post: Fit, over: Over = "new", *, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """P(row system scores higher than column system), systems best first (from ``table``, a
    :func:`pairs` table of ``post`` already at hand, else computed).
    """
    table = pairs(post, over=over) if table is None else table
    names = list(dict.fromkeys([*table["system_a"], *table["system_b"]]))
    m = pd.DataFrame(np.nan, index=names, columns=names)
    for r in table.itertuples():
        m.loc[r.system_a, r.system_b] = r.p_a_better
        m.loc[r.system_b, r.system_a] = 1 - r.p_a_better
    return m


def rank_probabilities(
    post: Fit,
    *,
    over: Over = "new",
    higher_is_better: bool = True,
    random_seed: int | None = 0,
    control: Control | None = None,
) -> pd.DataFrame:
    """P(rank = r) for every system (rows, best first) and rank (columns 1..S), from the same
    draws as the leaderboard's ranks (``control``: at the covariates' reference values).
    """
    var = error_variances(post)
    adjust = _controlled(post, control, var)
    est = system_estimates(post, adjust)
    if ss.is_latent_comparison(post):
        draws = ss.system_scores(post, var, adjust).ranked(over)
    else:
        draws = score_draws(post, over, random_seed=random_seed, est=est.to_numpy(), var=var[f"{over}_own"])
        draws = _shifted(draws, adjust)
    ranks = ranks_of(draws, higher_is_better)
    S = ranks.shape[1]
    # one vectorised count: probs[s, r-1] = P(system s has rank r)
    probs = (ranks[:, :, None] == np.arange(1, S + 1)).mean(axis=0)
    out = pd.DataFrame(probs, index=pd.Index(list(est.index), name="system"), columns=range(1, S + 1))
    return out.iloc[np.argsort((-1.0 if higher_is_better else 1.0) * est.to_numpy())]


#: Names that moved (old imports still work, with a DeprecationWarning).
__getattr__ = moved_names(
    __name__,
    {
        "adjacent_resolved": "bayes_tee.posterior.separation",
        "separation": "bayes_tee.posterior.separation",
        "difference_shares": "bayes_tee.posterior.separation",
        "difference_variance": "bayes_tee.posterior.separation",
        "difference_weights": "bayes_tee.posterior.separation",
        "system_error_terms": "bayes_tee.posterior.system_scores",
    },
)
