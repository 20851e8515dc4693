"""A latent family's comparison of systems on the outcome's scale: each system's success
probability (logit GLMM) or expected score (ordinal GLMM) with its intervals, and the
differences between systems in those units.

A fit with ``system=`` and ``family="binomial"`` or ``"ordinal"`` has each system's location
``m_s = mu + system_effect`` on the latent scale. What a reader wants is the system's score,
its mean outcome over the population of items (and prompts, and judges if they are random):

    S_d(m) = mean over the fixed panel's levels of E_u[ g(m + beta + u) ],  u ~ N(0, V_d),

``g`` the success probability or expected score at a latent value (each judge at its own
cutpoints), ``V_d`` the summed variance of every random term that involves a sampled facet, at
posterior draw ``d`` (Gauss-Hermite, :func:`bayes_tee.posterior.predictive.population_scores`).
The score's posterior is ``S_d(m_{s,d})`` over the draws: the location and the curve's shape
move together (a wider ``V`` flattens the curve and spreads the locations), so the draws,
not a plug-in of either, carry the uncertainty. Its spread is the *new* reading (the posterior
of ``m_s`` holds the item and prompt sampling error); the *panel* reading narrows each
system's deviations from the estimate by the ratio of the two readings' latent error SDs
(:func:`bayes_tee.posterior.leaderboard.error_variances`, their posterior median), and a
difference's the same way with the system-specific parts. The ranks, ``p_best`` and
P(a better) come from the same draws, so that they agree with the intervals. (On the latent
scale the two agree: on a 40-item binary comparison of four systems the posterior variance
of a latent difference was 0.198-0.217 against the D-study's 0.219, its mean over the draws.)

>>> post.leaderboard()  # a binomial fit: success probabilities  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._core.exceptions import ArgumentError
from .._core.intervals import check_level
from .._core.trees import group
from ..families import get_family
from . import predictive as pr
from .controls import adjustment
from .effects import glmm_points

if TYPE_CHECKING:
    from .controls import Adjustment
    from .fit import Fit

#: Gauss-Hermite nodes of the population score (smooth in the latent value: 24 agree with 40
#: to 1e-8).
NODES = 24
#: Latent step of the score's slope (a central difference).
STEP = 1e-3


def is_latent_comparison(post: Fit) -> bool:
    """Whether ``post`` compares systems on a latent scale (a binomial or ordinal GLMM).

    >>> is_latent_comparison(post)  # system="model", family="binomial"  # doctest: +SKIP
    True
    """
    return post.design.system is not None and get_family(post.family).latent


def system_locations(post: Fit) -> np.ndarray:
    """Fit draws ``(n_draws, n_systems)`` of every system's latent location for the
    fixed panel, ``mu + system_effect`` plus the mean over the panel's levels of its
    interaction with every fixed facet (system x judge with a fixed panel of judges), chains
    stacked.

    Those interactions are part of what a fixed panel measures (the *new* reading keeps these
    judges), and the data pin their sum with the system effect, not either alone: without
    them the posterior of a difference would carry the split between the two, about twice
    ``sigma^2(system x judge) / n_judges`` (on a binary comparison of four systems on 40 items,
    4 prompts and 3 judges, the posterior variance of a latent difference was 0.113-0.116
    without them and 0.070-0.072 with them; the latent D-study's, its mean over the draws,
    0.061). A fit saved without its effects (``keep_effects=False``) gives
    ``mu + system_effect``.

    >>> system_locations(post).shape  # 4 chains x 1,000 draws, 3 systems  # doctest: +SKIP
    (4000, 3)
    """
    P = group(post.idata, "posterior")
    system = post.design.system
    effect = P[f"{system}_effect"].transpose("chain", "draw", system)
    effect = effect.values.reshape(-1, effect.sizes[system])
    mu = P["mu"].values.reshape(-1, 1)
    fixed = {t.facets[0] for t in post.terms if t.kind == "fixed"} - {system}
    panel = [  # the system's interactions with the fixed facets only
        t
        for t in post.terms
        if t.kind == "random" and system in t.facets and {system} < set(t.facets) <= fixed | {system}
    ]
    if not panel:
        return mu + effect
    try:
        density, x = glmm_points(post, "the systems' locations for the fixed panel")
    except ArgumentError:  # saved without the effects
        return mu + effect
    codes = post.design.cells[system].to_numpy()
    for t in panel:
        g = next(g for g in density.terms if g.term.label == t.label)
        eff = density.level_effects(t.label, x)  # (draws, levels), less their mean
        of = np.zeros(len(g.labels), dtype=np.int64)
        of[g.cell_level] = codes
        share = np.eye(effect.shape[1])[of]  # (levels, systems): which system each level is
        mean = eff @ (share / share.sum(axis=0))
        # a term centred on its main effects holds their totals: the system effect is in them
        effect = mean if any(kind == "fixed" for kind, _, _ in g.crossed) else effect + mean
    return mu + effect


def score_at(post: Fit, latent: np.ndarray) -> np.ndarray:
    """Each draw's population score ``S_d`` (module docstring) at latent values ``latent``
    ``(n_draws, k)``: the fixed panel's levels averaged, every random term that involves a
    sampled facet integrated out, the system effect left to the latent value.

    >>> score_at(post, system_locations(post)).mean(axis=0)  # each system's score  # doctest: +SKIP
    array([0.52, 0.61, 0.68])
    """
    system = post.design.system
    new = system_error_terms(post)["new"]
    random = [t for t in post.terms if t.kind != "fixed"]
    sampled = {t.label for t, keep in zip(random, new) if keep and t.kind == "random"}
    terms = [t for t in post.terms if (t.kind == "fixed" and t.facets != (system,)) or t.label in sampled]
    P = group(post.idata, "posterior")
    index = np.arange(P.sizes["chain"] * P.sizes["draw"])
    draws = pr.draws_from(P, terms, index, post.family, post.design.outcome_levels)
    return pr.population_scores(draws, latent, NODES)


@dataclass(frozen=True)
class SystemScores:
    """The posterior draws of every system's score, and how much narrower the *panel*
    reading's latent error is than the *new* one's.

    Attributes
    ----------
    draws : numpy.ndarray
        ``(n_draws, n_systems)``: ``S_d(m_{s,d})``.
    var : dict
        The latent error variances per reading, ``(n_systems, n_mixture_draws)``
        (:func:`bayes_tee.posterior.leaderboard.error_variances`).
    """

    draws: np.ndarray
    var: dict[str, np.ndarray]
    latent: np.ndarray  # (n_systems,) the posterior mean of each system's latent location

    @property
    def estimate(self) -> np.ndarray:
        """Each system's score: its posterior mean."""
        return self.draws.mean(axis=0)

    def ratio(self, kind: str, systems) -> float:
        """SD of the ``kind`` reading's error over the *new* one's (``panel``/``new``, or their
        ``_own`` parts), summed over ``systems``: the posterior median of the latent ratio.
        """
        base = "new_own" if kind.endswith("_own") else "new"
        num = self.var[kind][systems].sum(axis=0)
        den = self.var[base][systems].sum(axis=0)
        return float(np.sqrt(np.median(num / den)))

    def ranked(self, over: str) -> np.ndarray:
        """Draws ``(n_draws, n_systems)`` of every system's score for its ranks under reading
        ``over``: the posterior's, with *panel* narrowing every deviation by one ratio (the
        system-specific errors' over all systems), so that a shift they share stays shared.
        """
        if over == "new":
            return self.draws
        every = slice(None)
        return self.estimate + (self.draws - self.estimate) * self.ratio("panel_own", every)

    def deviations(self, kind: str, systems) -> np.ndarray:
        """Draws of the chosen systems' scores less their estimates, under reading ``kind``."""
        base = self.draws[:, systems] - self.estimate[systems]
        return base * (1.0 if kind in ("new", "new_own") else self.ratio(kind, systems))


def system_scores(post: Fit, var: dict[str, np.ndarray], adjust: Adjustment | None = None) -> SystemScores:
    """:class:`SystemScores` of a latent comparison, with ``var`` the latent error variances
    (:func:`bayes_tee.posterior.leaderboard.error_variances`) and ``adjust`` the covariates'
    part of each system's location (:mod:`.controls`: at its own calls' values or at a
    control's), drawn with the rest.

    >>> system_scores(post, leaderboard.error_variances(post)).estimate  # doctest: +SKIP
    array([0.52, 0.61, 0.68])
    """
    locations = system_locations(post)
    if adjust is None and post.design.covariates is not None:  # uncontrolled unless told
        adjust = adjustment(post, None)
    if adjust is not None:
        locations = locations + adjust.part
    return SystemScores(score_at(post, locations), var, locations.mean(axis=0))


def interval(scores: SystemScores, kind: str, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Each system's central ``level`` interval of its score under reading ``kind``.

    >>> low, high = interval(scores, "new", 0.9)  # doctest: +SKIP
    """
    a = (1 - check_level(level)) / 2
    S = scores.draws.shape[1]
    # each system's deviations at its own panel/new ratio, all systems in one quantile call
    dev = np.column_stack([scores.deviations(kind, [s])[:, 0] for s in range(S)])
    lo, hi = np.quantile(dev, [a, 1 - a], axis=0)
    return scores.estimate + lo, scores.estimate + hi


def difference(scores: SystemScores, i: int, j: int, kind: str, levels: tuple[float, float]) -> dict:
    """System ``i`` minus system ``j`` in score units under reading ``kind`` (``new_own`` or
    ``panel_own``): the difference of the estimates, its ``levels[0]`` interval and
    ``levels[1]`` (simultaneous) interval, its posterior SD and P(``i`` scores higher).

    >>> difference(scores, 0, 1, "new_own", (0.9, 0.97))["p_a_better"]  # doctest: +SKIP
    0.12
    """
    est = scores.estimate
    diff = scores.draws[:, i] - scores.draws[:, j] - (est[i] - est[j])
    diff = diff * (1.0 if kind == "new_own" else scores.ratio(kind, [i, j]))
    tails = [(1 - check_level(lv)) / 2 for lv in levels]
    (lo, hi), (slo, shi) = (np.quantile(diff, [t, 1 - t]) for t in tails)
    d = float(est[i] - est[j])
    return {
        "difference": d,
        "low": d + lo,
        "high": d + hi,
        "simultaneous_low": d + slo,
        "simultaneous_high": d + shi,
        "se_median": float(diff.std()),
        "p_a_better": float(np.mean(d + diff > 0)),
    }


def score_slope(post: Fit) -> float:
    """Score units per latent unit where the systems are: ``dS_d/dm`` at each system's
    location, averaged over the systems, its posterior median. It carries a latent SE to the
    leaderboard's scale.

    >>> score_slope(post)  # near p (1 - p) at a success rate p  # doctest: +SKIP
    0.19
    """
    m = system_locations(post)
    up, down = score_at(post, m + STEP), score_at(post, m - STEP)
    return float(np.median(((up - down) / (2 * STEP)).mean(axis=1)))


def system_error_terms(post: Fit) -> dict[str, np.ndarray]:
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
