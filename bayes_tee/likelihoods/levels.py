"""Level indices, per-term centring and coordinates of a design: the NumPy side of the
building blocks every likelihood shares (:mod:`.parts` holds the PyMC side).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..design.design import Design
from ..design.terms import Term
from .anova import anova_estimates


def term_levels(design: Design, term: Term) -> tuple[np.ndarray, list[str]]:
    """Index of each observed cell into the term's observed levels, and the level labels."""
    cells = design.cells
    if term.label == "category":
        return design.item_category[cells["item"].to_numpy()], list(design.categories)
    if len(term.facets) == 1:
        f = term.facets[0]
        return cells[f].to_numpy(), list(design.levels[f])
    codes = cells[list(term.facets)]
    idx, uniques = pd.MultiIndex.from_frame(codes).factorize()
    labels = ["|".join(design.levels[f][c] for f, c in zip(term.facets, combo)) for combo in uniques]
    return np.asarray(idx), labels


def choose_centering(design: Design, ratio: float = 1.0) -> dict[str, bool]:
    """Centred (``True``) or non-centred parameterisation per random term.

    A level's effect is seen through the mean of its cells, whose noise is the variance of
    every term nested inside the level, divided by how many of its levels the mean averages
    (item effects inside a category, item:prompt effects inside a prompt, cell error and
    replicate noise inside anything). A term is centred when its variance exceeds
    ``ratio`` times that noise, i.e. the data pin each level down well; otherwise it is
    non-centred, which is what removes the funnel of a weakly identified SD. Variances are
    the moment estimates of :func:`bayes_tee.likelihoods.anova.anova_estimates` (missing cells filled).

    Examples
    --------
    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item", prompt="prompt")
    >>> bool(choose_centering(d)["item"])
    True
    """
    est = {k: max(v, 0.0) for k, v in anova_estimates(design, fill_missing=True).items()}
    L = {f: len(design.levels[f]) for f in design.facets}
    n_rep = float(design.cells["n"].mean())

    def nest(t: Term) -> set[str]:  # facets, with items counted inside their category
        return (
            {"category"}
            if t.label == "category"
            else set(t.facets) | ({"category"} if "item" in t.facets and design.categories else set())
        )

    out = {}
    for t in design.terms:
        if t.kind != "random":
            continue
        noise = 0.0
        for j in design.terms:
            if j is t or j.kind == "fixed" or not nest(j) > nest(t):
                continue
            inner = [f for f in j.facets if f != "replicate" and f not in t.facets]
            count = np.prod([L[f] for f in inner]) if inner else 1.0
            if t.label == "category" and "item" in inner:
                count = count / len(design.categories)
            noise += est.get(j.label, 0.0) / (count * (n_rep if j.kind == "residual" else 1.0))
        out[t.label] = est.get(t.label, 0.0) > ratio * max(noise, 1e-12)
    return out


def coords(design: Design) -> dict[str, list[str]]:
    """PyMC coordinates: the level labels of every facet (and the categories)."""
    coords = {f: list(design.levels[f]) for f in design.facets}
    if design.categories:
        coords["category"] = list(design.categories)
    return coords


#: The NUTS target of the ``balanced`` likelihood when an item-free random term has at most
#: :data:`FEWEST_LEVELS` levels (:func:`few_level_accept`). ``augmented`` keeps the family's
#: 0.9: its latent cells damp the grand mean's neck (45 of 45 small-facet fits without a
#: divergence at 0.9, 2.7x slower at 0.95). The grand mean is now sampled around its
#: conditional posterior (``StrataDensity.grand_mean``), which took its neck away (8.8 leapfrog
#: steps a draw at 0.9 instead of 9.9) but not the few-level SDs' own upper tails: 40 items x 2
#: prompts x 3 judges x 2 calls, 48 seeds, fits with a divergence at 0.9: 3 (2 before the map),
#: at 0.95: none. So 0.95 stays.
FEW_LEVEL_ACCEPT = 0.95
FEWEST_LEVELS = 4


def few_level_accept(design: Design) -> float | None:
    """:data:`FEW_LEVEL_ACCEPT` when some item-free random term has at most
    :data:`FEWEST_LEVELS` levels, else ``None`` (the family's default).

    The balanced likelihood integrates every random effect out, but the grand mean's conditional
    variance grows with the SD of a few-level term (``sigma_prompt**2 / 2`` at two prompts),
    whose upper tail is its prior's: a narrow neck where that SD is small. At the family's
    0.9 a default fit of 40 items x 2 prompts x 3 judges x 2 calls diverged once in 4,000
    draws, with sigma_prompt at its 97.6% quantile; at 0.95 it has none, for about 0.2 s more.

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
    ...                        prompt="prompt")
    >>> few_level_accept(d)  # 3 prompts
    0.95
    """
    fewest = fewest_shared_levels(design)
    return FEW_LEVEL_ACCEPT if fewest is not None and fewest <= FEWEST_LEVELS else None


#: The logit GLMM's rule (:func:`glmm_accept`): its family's target is 0.9, and 0.95 where an
#: item-free random term has 2 levels, or at most :data:`FEWEST_LEVELS` whose rough SD (of their
#: calls' empirical logits) is at least :data:`GLMM_ROUGH_SD`. Issue 40's small facets (80 items x
#: 2-4 prompts x 3 judges x 5 calls; 2026-12-07): at 0.9 the step is larger at the same tree
#: depth, so a draw moves further: 3-4 prompts at prompt SDs 0.05 and 0.5 (24 fits) all clean at
#: 0.9, in a median 0.49 of the time at 0.95 (3 prompts, seeds 1-3, run one after another); but
#: at SD 3 (rough SDs 0.24-3.73) a 2-prompt fit diverged twice and a 4-prompt fit (rough SD 3.73)
#: 80 times, where at 0.95 neither did. The rough SDs at prompt SDs 0.05 and 0.5 were 0.01-0.58
#: (2-4 prompts, seeds 1-7).
GLMM_FEWEST_LEVELS = 2
GLMM_ROUGH_SD = 1.0


def glmm_accept(design: Design) -> float | None:
    """:data:`FEW_LEVEL_ACCEPT` where the logit GLMM's few-level terms need it (the rule at
    :data:`GLMM_FEWEST_LEVELS`), else ``None`` (the family's default, 0.9).

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.simulate.tee_dgp(n_items=30, n_prompts=3, outcome="bernoulli",
    ...                        random_seed=1), outcome="score", item="item", prompt="prompt",
    ...                        family="binomial")
    >>> glmm_accept(d) is None  # 3 prompts, close together
    True
    """
    cells = design.cells
    calls = cells["n"].to_numpy(dtype=float)
    wins = calls * cells["mean"].to_numpy(dtype=float)  # 0/1 outcomes: a cell's successes
    for t in _shared_terms(design):
        idx, labels = term_levels(design, t)
        if len(labels) <= GLMM_FEWEST_LEVELS:
            return FEW_LEVEL_ACCEPT
        if len(labels) <= FEWEST_LEVELS:
            k, n = np.bincount(idx, wins, len(labels)), np.bincount(idx, calls, len(labels))
            rough = np.log((k + 0.5) / (n - k + 0.5))  # each level's empirical logit
            if rough.std(ddof=1) >= GLMM_ROUGH_SD:
                return FEW_LEVEL_ACCEPT
    return None


def fewest_shared_levels(design: Design) -> int | None:
    """The fewest levels of any item-free random term (levels of a crossing multiplied, a
    category term counting the categories); ``None`` when there is none.

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
    ...                        prompt="prompt")
    >>> fewest_shared_levels(d)  # 3 prompts
    3
    """
    levels = {f: len(v) for f, v in design.levels.items()}
    if design.categories is not None:
        levels["category"] = len(design.categories)
    return min(
        (int(np.prod([levels.get(f, 1) for f in t.facets])) for t in _shared_terms(design)), default=None
    )


def _shared_terms(design: Design) -> list[Term]:
    """The item-free random terms: those whose levels every item shares."""
    return [t for t in design.terms if t.kind == "random" and "item" not in t.facets]
