"""Each level's own effect: which items are hard, which prompts are lenient (GLMM fits, on the
latent scale), which judges are strict or which systems lead (any fit's fixed facets), with
intervals and ranks.

A level's effect is its deviation from the average level of its term, per posterior draw
(the grand mean, and for items nested in categories nothing else, taken out), so a ranking of
items by it is the model's ranking: for Likert scores, after each judge's scale use and
compression has been modelled, which a ranking by mean score is not.

>>> post = bt.fit_posterior(df, outcome="y", item="item", judge="judge", family="ordinal")  # doctest: +SKIP
>>> post.level_effects("item").nlargest(3, "mean")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError, UnknownNameError
from .._core.intervals import check_level
from .._core.trees import group
from ..likelihoods.logit_glmm.density import GlmmDensity
from ..likelihoods.registry import GLMM_COORDINATES, LIKELIHOODS

if TYPE_CHECKING:
    from .fit import Fit


def level_effects(post: Fit, facet: str = "item", level: float = 0.9) -> pd.DataFrame:
    """Posterior of each level's effect of a random facet, on the latent scale.

    Parameters
    ----------
    post : Fit
        Any fit for a fixed facet (judges, temperatures, the systems of a formula fit such as
        ``y ~ model + (1|item) + (1|item:model)``); a GLMM fit (``family="binomial"``,
        ``"ordinal"`` or ``"ordinal_probit"``) for a random one.
    facet : str
        A main-effect term: ``"item"``, ``"prompt"``, a judge or temperature facet, a category,
        a fixed factor.
    level : float
        Central interval.

    Returns
    -------
    pandas.DataFrame
        One row per level of ``facet`` in the design's order: ``mean``, ``sd``, ``low``,
        ``high`` of its effect relative to the average level (logit or probit units) and
        ``rank`` (1 = the largest posterior mean). ``attrs["scale"]`` names the scale.

    Raises
    ------
    ArgumentError
        For a random facet of a Gaussian fit (whose marginal likelihoods integrate the level
        effects out: rank items by their mean score there, which the linear model's estimates
        follow on a balanced design), or a fit loaded from a file saved without
        ``keep_effects=True``.
    UnknownNameError
        For a facet that is not a main effect of the fit.

    Examples
    --------
    >>> tab = level_effects(post, "item")  # doctest: +SKIP
    >>> tab.sort_values("rank").head()  # doctest: +SKIP
    """
    check_level(level)
    draws = group(post.idata, "posterior")
    fixed = {t.label: t for t in post.terms if t.kind == "fixed"}
    if facet in fixed:  # a fixed facet (judges, temperatures, systems): its effects are drawn
        arr = draws[fixed[facet].var_name].transpose("chain", "draw", facet)
        values = arr.values.reshape(-1, arr.shape[-1])
        return _table(post, facet, list(post.design.levels[facet]), values, level)
    random = {t.label for t in post.terms if t.kind == "random" and len(t.facets) == 1}
    if facet not in random:
        raise UnknownNameError(
            f"facet={facet!r} is not a main effect of this fit; choose one of {sorted(random | set(fixed))}."
        )
    density, x = glmm_points(post, f"level_effects of a random facet ({facet!r})")
    g = next(g for g in density.terms if g.term.label == facet)
    return _table(post, facet, g.labels, density.level_effects(facet, x), level)


def glmm_points(post: Fit, what: str) -> tuple[GlmmDensity, np.ndarray]:
    """A GLMM fit's density and its posterior draws as the density's unconstrained points
    (rows, chains stacked), for the effects its kernel's forward pass gives.

    Raises
    ------
    ArgumentError
        A fit that is not a GLMM (its random effects are integrated out), one loaded from a
        file saved without ``keep_effects=True``, or one whose effects were sampled in another
        version's coordinates; ``what`` names what needed them.

    Examples
    --------
    >>> density, x = glmm_points(post, "level effects")  # doctest: +SKIP
    """
    lk = LIKELIHOODS[post.method]
    density = lk.density(post.design, post.priors) if lk.density is not None else None
    if not isinstance(density, GlmmDensity):
        raise ArgumentError(
            f"{what} needs a GLMM fit (family='binomial' or 'ordinal'); this is a {post.family!r} fit "
            f"with likelihood {post.method!r}, whose random level effects are integrated out. Rank "
            "levels by their mean score instead."
        )
    draws = group(post.idata, "posterior")
    names = [name for name, _, _ in density.layout.parameters]
    missing = [n for n in names if n not in draws]
    if missing:
        raise ArgumentError(
            f"The posterior lacks {missing[:3]} (the random effects), so {what} cannot be computed; "
            "refit, or save the fit with keep_effects=True."
        )
    version = post.info.get("glmm_coordinates", 1)
    if version != GLMM_COORDINATES:
        raise ArgumentError(
            f"This fit's random effects were sampled in the GLMM coordinates of an earlier bayes_tee "
            f"(version {version}; this one reads version {GLMM_COORDINATES}), so {what} cannot be read "
            "from them: refit with this version."
        )
    n = draws.sizes["chain"] * draws.sizes["draw"]
    return density, density.layout.flatten({k: draws[k].values.reshape(n, -1) for k in names}, n)


def _table(post: Fit, facet: str, labels: list, eff: np.ndarray, level: float) -> pd.DataFrame:
    """The level-effects table of draws ``eff`` ``(n_draws, L)``, centred per draw."""
    eff = eff - eff.mean(axis=1, keepdims=True)
    tail = (1 - level) / 2
    low, high = np.quantile(eff, [tail, 1 - tail], axis=0)
    mean = eff.mean(axis=0)
    out = pd.DataFrame(
        {
            facet: labels,
            "mean": mean,
            "sd": eff.std(axis=0, ddof=1),
            "low": low,
            "high": high,
            "rank": (-mean).argsort().argsort() + 1,
        }
    )
    out.attrs["scale"] = post.scale
    out.attrs["level"] = level
    return out
