"""Each level's own effect in a GLMM fit (binomial or ordinal): which items are hard, which
prompts are lenient, on the latent scale, with intervals.

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
from ..likelihoods.binomial_density import GlmmDensity
from ..likelihoods.registry import LIKELIHOODS

if TYPE_CHECKING:
    from .facade import Posterior


def level_effects(post: Posterior, facet: str = "item", level: float = 0.9) -> pd.DataFrame:
    """Posterior of each level's effect of a random facet, on the latent scale.

    Parameters
    ----------
    post : Posterior
        A GLMM fit (``family="binomial"``, ``"ordinal"`` or ``"ordinal_probit"``).
    facet : str
        A random main-effect term: ``"item"``, ``"prompt"``, a random judge or temperature, a
        category.
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
        For a Gaussian fit (whose marginal likelihoods integrate the level effects out: rank
        items by their mean score there, which the linear model's estimates follow on a
        balanced design), a facet that is not a random main effect, or a fit loaded from a
        file saved without ``keep_effects=True``.

    Examples
    --------
    >>> tab = level_effects(post, "item")  # doctest: +SKIP
    >>> tab.sort_values("rank").head()  # doctest: +SKIP
    """
    check_level(level)
    lk = LIKELIHOODS[post.method]
    density = lk.density(post.design, post.priors) if lk.density is not None else None
    if not isinstance(density, GlmmDensity):
        raise ArgumentError(
            f"level_effects needs a GLMM fit (family='binomial' or 'ordinal'); this is a "
            f"{post.family!r} fit with likelihood {post.method!r}, whose level effects are "
            "integrated out. Rank levels by their mean score instead."
        )
    labels = {g.term.label for g in density.terms if len(g.term.facets) == 1}
    if facet not in labels:
        raise UnknownNameError(
            f"facet={facet!r} is not a random main effect of this fit; choose one of {sorted(labels)}."
        )
    draws = group(post.idata, "posterior")
    names = [name for name, _, _ in density.layout.parameters]
    missing = [n for n in names if n not in draws]
    if missing:
        raise ArgumentError(
            f"The posterior lacks {missing[:3]} (the random effects), so level effects cannot be "
            "computed; refit, or save the fit with keep_effects=True."
        )
    n_chain, n_draw = draws.sizes["chain"], draws.sizes["draw"]
    n = n_chain * n_draw
    x = density.layout.flatten({k: draws[k].values.reshape(n, -1) for k in names}, n)
    eff = density.level_effects(facet, x)
    tail = (1 - level) / 2
    low, high = np.quantile(eff, [tail, 1 - tail], axis=0)
    mean = eff.mean(axis=0)
    g = next(g for g in density.terms if g.term.label == facet)
    out = pd.DataFrame(
        {
            facet: g.labels,
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
