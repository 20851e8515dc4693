"""The logit GLMM's layout, in NumPy: which random effects it has and how each level is
parametrised (partial centring per level, items centred on their category and the intercept,
few-level terms swept into the intercept), its prior units, its score-dependent data and the
fixed logistic residual. The PyMC reference (:mod:`bayes_tee.likelihoods.logit_glmm.model`) and the
numba density (:mod:`bayes_tee.likelihoods.logit_glmm.density`) both lay the model out from here,
so neither imports the other's machinery.

Near separation (most items SAFE in every call) the geometry is what makes or breaks the fit;
:func:`glmm_terms` lays out the random effects for it. Priors are on the logit scale: SDs in
units of :data:`LOGIT_UNIT`, the intercept in units of :data:`INTERCEPT_UNIT`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import xarray as xr

from ..._core.density import zerosum_basis
from ...design.covariates import covariate_data
from ...design.design import Design
from ...design.terms import Term
from ..anova import anova_estimates
from ..levels import term_levels

#: Quadrature nodes per cell (lme4's nAGQ) of ``binomial_quadrature``. 9 keeps the log
#: likelihood's error below 1e-7 for cell SDs up to 3 logits except in the extreme corners named
#: in :mod:`.quadrature`'s docstring.
NODES = 9

#: Latent residual variance of the logistic link (Nakagawa & Schielzeth 2010), the GLMM's
#: call-level ``replicate`` component.
LOGISTIC_VARIANCE = float(np.pi**2 / 3)

#: Unit of the GLMM's prior scales (SDs on the logit scale): a half-t(3) with scale 1 puts
#: half its mass below an SD of 0.77, i.e. odds ratios within about 2x between typical levels.
LOGIT_UNIT = 1.0

#: Unit of the GLMM intercept's prior SD: ``priors.intercept_scale`` of them, 5 logits by
#: default. The intercept is the logit of the median configuration, not of the mean rate; with
#: latent SDs of several logits the two differ by several logits (on Messing (2026)'s safety data, 94%
#: SAFE on average, the median configuration's logit is near 14), and a prior SD of 2 logits
#: around the mean rate's logit fought the data there (the old default: min ESS 62 against 113
#: at 5 logits; at 10 logits the intercept drifts further out under separation, no faster).
INTERCEPT_UNIT = 2.5

#: GLMM terms with at most this many levels are non-centred throughout and swept into the
#: intercept (:func:`glmm_terms`).
FEW_LEVELS = 30


#: A crossed term's totals are sampled centred, with its main effects in their own coordinates
#: (the kernels', not :mod:`.crossed_kernel`'s), only when every level's data are this many times
#: more precise than the effects' rough spread: its SD is estimated from few levels and may be 3x
#: smaller than the rough estimate, which divides the ratio by 9 (the 94%-safe pilot of notebook
#: 02, ratio 1.1, then diverged 59 times in 8,000 draws with them centred; the safety data's
#: prompt x judge has 22).
CROSSED_PRECISION = 10.0

#: Cell columns a family adds to count each cell's calls in its outcome's lowest and highest
#: category (:func:`~.ordinal_layout.binary_view`); without them, the 0/1 outcome's failures
#: and successes. A level whose calls all sit in one end category bounds its effect on one
#: side only (:func:`sweep_adaptation`, :func:`level_adaptation`).
END_COLUMNS = ("calls_bottom", "calls_top")


@dataclass(frozen=True)
class GlmmTerm:
    """One random-effect vector of the GLMM, as the PyMC model and the numba density share it.

    Attributes
    ----------
    term : Term
        The design term (its SD is ``sigma_<label>``).
    name : str
        The draws' name, ``u_<key>``.
    dim : str
        The coordinate of its levels.
    labels : list of str
        The levels.
    cell_level : ndarray
        Level of each observed cell.
    parent : int
        Mean of the effects: ``-1`` zero, ``-2`` the grand mean, ``p >= 0`` the effect of term
        ``p`` (earlier in the list) at ``parent_index[level]``.
    parent_index : ndarray or None
    in_eta : bool
        Whether the effect enters the linear predictor (a category's reaches it through its items).
    centred : ndarray of bool
        Per level: centred (the coordinate is the effect). Only a swept two-way term centred on
        its main effects is (all of its levels, ``crossed``); every other level is ``mean + sd *
        u``, with ``u`` its adapted coordinate or, bounded on one side only, plainly ``z``.
    swept : bool
        Non-centred with its mean direction swept into the intercept: the coordinates ``w`` give
        the effects ``mean + sd * B w[1:]`` (``B`` the zero-sum basis) and move the grand mean to
        ``intercept - sd * w[0] / sqrt(L)`` (:func:`glmm_terms`).
    crossed : tuple of (str, int, ndarray)
        The main effects a swept, centred two-way term is centred on, ``("fixed", f, index)``
        for the ``f``-th fixed facet and ``("random", p, index)`` for term ``p``, each at
        ``index[level]``. Its coordinates ``w[1:]`` are then the zero-sum part of its levels'
        totals, drawn around those main effects, and the main effects reach the linear predictor
        only through it (:func:`glmm_terms`).
    v_hat, info : ndarray, float
        A non-centred swept term's data-adapted coordinates (:func:`sweep_adaptation`): the
        data's rough coordinates of its deviations and their precision. For a term that is not
        swept, ``v_hat`` holds each level's rough total effect, the mean it is drawn around
        included (:func:`level_adaptation`).
    level_info : ndarray or None
        A term that is not swept: each level's data precision for its adapted coordinate
        (:func:`level_adaptation`; zero where the level is plainly non-centred).
    pinned : bool
        A crossed term whose every level's data pin its total (:data:`CROSSED_PRECISION`): its
        totals are sampled centred and its main effects in their own coordinates, not in
        :mod:`.crossed_kernel`'s.
    """

    term: Term
    name: str
    dim: str
    labels: list[str]
    cell_level: np.ndarray
    parent: int
    parent_index: np.ndarray | None
    in_eta: bool
    centred: np.ndarray
    swept: bool = False
    crossed: tuple[tuple[str, int, np.ndarray], ...] = ()
    v_hat: np.ndarray | None = None
    info: float = 0.0
    level_info: np.ndarray | None = None
    pinned: bool = False


def glmm_terms(design: Design, *, sample_cell: bool = True) -> list[GlmmTerm]:
    """The GLMM's random-effect vectors in parent-first order; the cell (observation-level)
    effect is one of them, non-centred, unless ``sample_cell=False`` (it is then integrated out
    by quadrature, :mod:`.quadrature`).

    Items are drawn around their category's effect, categories around the grand mean
    (hierarchical centring, Gelfand, Sahu & Carlin 1995), so the grand mean enters the linear
    predictor through the items. Every other term is drawn around zero.

    No level of a term with more than :data:`FEW_LEVELS` levels is centred outright: each level's
    coordinate is adapted to its own data (:func:`level_adaptation`), centred on the data's rough
    estimate where the SD is large against the data's noise and non-centred where it is small,
    continuously in the SD (partial non-centring, Papaspiliopoulos, Roberts & Skold 2007). A level
    whose calls are all successes (or all failures) only bounds its effect on one side, its
    posterior is its prior's tail, and it is plainly non-centred; so is the cell effect at every
    level. Centring outright the levels whose data pinned them (at four times the precision of the
    effects' rough spread, the layout before GLMM coordinates version 3) left a funnel wherever the
    SD's posterior reaches below the rough value: under near-separation (2 prompts at 96.8% and
    99.7% successes, most items all successes) ``sigma_item_prompt`` traded its variance with
    ``sigma_item`` down to 0.15 logits, and the 25 centred item x prompt levels diverged 68-255
    times in 4,000 draws; adapted, none diverged, and the safety GLMM ran in 204 s against 224 s.
    Terms with at most :data:`FEW_LEVELS` levels are non-centred throughout (their SD is weakly
    identified whatever the data per level) and swept: the mean of their L effects is confounded
    with the grand mean (only their sum reaches the data), which under a wide SD leaves NUTS a long
    ridge between the two. The sampled intercept is the sum, and the effects' mean direction (``sd *
    w[0] / sqrt(L)``, prior ``w[0] ~ N(0, 1)``) moves only the grand mean ``mu = intercept - sum of
    the mean directions``, whose prior is unchanged. It is the same model, rotated and sheared (unit
    Jacobian). Their deviations (``w[1:]``) are adapted to the data as a whole
    (:func:`sweep_adaptation`).
    Two more hierarchical centrings remove the ridges that the Hessian of Messing (2026)'s
    safety posterior shows as its stiffest directions (the Hessian whitened by the posterior
    SDs, as a diagonal mass matrix sees it: eigenvalues 600-1,200, and 110-130 at most once
    both are in place):

    - **Items through their widest nested interaction.** For an item whose calls under one judge
      include both outcomes while the other judges' are all SAFE, the data pin the sum of the
      item effect and that item x judge effect, not either alone. The item-nested two-way term
      with the largest rough SD (item x judge there) is drawn around its item's effect, and its
      adapted coordinates sit around each level's rough total (item plus interaction), relative
      to the item's sampled effect, so where the SD is large a level's coordinate is that sum.
      The item reaches the linear predictor only through it; its own adaptation counts its
      children's rough variance besides its calls' noise (:func:`level_adaptation`), so an item
      is near-centred only where its calls and its children's SD pin it. (Centring outright the
      items whose calls include both outcomes funnelled on the safety data where the posterior
      moves item variance into item x judge: a divergence at sigma_item 0.44, its 0.1%
      quantile.)
    - **Few-level two-way terms around their main effects.** A swept two-way term (prompt x
      judge) that completely crosses two free main effects (a fixed facet's zero-sum effects,
      or a swept random term's deviations) is centred on them: its coordinates are its levels'
      totals, and the main effects reach the linear predictor only through it instead of
      trading off against its margins. Sampling the totals and main effects directly funnels
      wherever the interaction's SD ranges widely (the data pin the totals, the main effects are
      then known to within that SD); :mod:`.crossed_kernel` samples them instead in
      coordinates where the main effects integrate out of the totals, each adapted to its
      data, and the main effects non-centred on their conditional given the totals; where
      every level's data pin its total (:data:`CROSSED_PRECISION`) the totals are sampled
      centred and the main effects as they are (coordinates version 3's layout). Centring
      only the terms whose levels the data pinned (coordinates version 3) left that funnel in
      every other: on a 14-system Likert comparison with 2 prompts and 3 fixed judges,
      judge_effect's bulk ESS was 152 and sigma_prompt_judge's 127 in 4 x 1,000 draws (2,846
      and 2,327 crossed).

    Examples
    --------
    >>> [g.name for g in glmm_terms(d)][:2]  # doctest: +SKIP
    ['u_category', 'u_item']
    """
    cells = design.cells
    k = np.round(cells["mean"].to_numpy() * cells["n"].to_numpy())
    n = cells["n"].to_numpy().astype(float)
    random = {t.label: t for t in design.terms if t.kind == "random" and (sample_cell or t.label != "cell")}
    # each term's SD on the logit scale, roughly: the moment estimate on the 0/1 scale over the
    # squared slope of the logistic at the mean rate
    p_bar = float(np.clip(design.y_mean, 0.01, 0.99))
    est = anova_estimates(design, fill_missing=True)
    sd_hat = {label: np.sqrt(max(est.get(label, 0.0), 0.0)) / (p_bar * (1 - p_bar)) for label in random}

    out: list[GlmmTerm] = []
    if "category" in random and "item" in random:
        idx, labels = term_levels(design, random["category"])
        out.append(
            GlmmTerm(
                random["category"],
                "u_category",
                "category",
                labels,
                idx,
                -2,
                None,
                False,
                np.zeros(len(labels), dtype=bool),
                len(labels) <= FEW_LEVELS,
            )
        )
    for label, t in random.items():
        if label == "category" and out:
            continue
        idx, labels = term_levels(design, t)
        dim = t.facets[0] if len(t.facets) == 1 else t.key
        if label == "item":
            parent, pidx = (0, np.asarray(design.item_category)) if out else (-2, None)
        else:
            parent, pidx = -1, None
        swept = len(labels) <= FEW_LEVELS and parent in (-1, -2)
        none = np.zeros(len(labels), dtype=bool)  # no level centred (see above)
        out.append(GlmmTerm(t, f"u_{t.key}", dim, labels, idx, parent, pidx, True, none, swept))
    _items_through_interaction(out, sd_hat)
    fixed = [t for t in design.terms if t.kind == "fixed"]
    for j in sorted(range(len(out)), key=lambda j: -sd_hat[out[j].term.label]):
        if out[j].swept and len(out[j].term.facets) == 2:
            _centre_on_main_effects(out, j, design, fixed)
            g = out[j]
            # both outcomes seen at every level, each more precise than the effects' spread
            pins = (
                _precision(k, n, g.cell_level, len(g.labels)) * sd_hat[g.term.label] ** 2 > CROSSED_PRECISION
            )
            out[j] = replace(g, pinned=bool(g.crossed) and bool(pins.all()))
    out = sweep_adaptation(design, out, sd_hat, k, n)  # parents first: a category precedes its items
    return level_adaptation(design, out, sd_hat, k, n)


#: The logistic-normal attenuation: a logit-scale effect averaged over latent noise of variance
#: ``v`` shows in the marginal rates divided by about ``sqrt(1 + ATTENUATION * v)``
#: (``(16 sqrt(3) / (15 pi))**2``, Zeger, Liang & Albert 1988).
ATTENUATION = (16 * np.sqrt(3) / (15 * np.pi)) ** 2


def sweep_adaptation(
    design: Design, terms: list[GlmmTerm], sd_hat: dict[str, float], k: np.ndarray, n: np.ndarray
) -> list[GlmmTerm]:
    """Adapt every non-centred swept term's coordinates to its data: its deviations'
    coordinates ``v`` (zero-sum basis) are ``a(s) + b(s) z`` with ``z`` sampled, where, for
    data that put ``v`` near ``v_hat`` with precision ``info`` and the prior ``v ~ N(0, s)``,
    ``a(s) = kappa v_hat`` and ``b(s) = s / sqrt(q)`` are the conditional posterior mean and
    SD (``q = 1 + s^2 info``, ``kappa = s^2 info / q``).

    A term with two to four levels has an SD the data barely fix, so its posterior spans
    values where its data pin the deviations (centring suits them) and values where the prior
    does (non-centring suits them); either fixed choice leaves NUTS a funnel at the other end
    (at two prompts, 27-37 divergences in 16,000 draws at a prompt SD of 0.05 logits, 8-37 at
    0.5-1.5). The adapted coordinates are non-centred as ``s`` goes to zero and centred on the
    data as it grows, for every ``s`` at once: the same model (``z``'s prior is the prior of
    ``v`` times the Jacobian ``b(s)^(L-1)``), with ``z`` near independent of ``s`` when the
    rough ``v_hat`` and ``info`` are near the truth (Papaspiliopoulos, Roberts & Skold 2007's
    partial non-centring with its weight a function of the SD; Gorinova, Moore & Hoffman 2020).

    ``v_hat``: each level's logit of its calls' rate (shrunk by half a call), less their mean
    and, for an interaction, less its facets' margins (``_interaction_part``), undone
    from the logistic-normal attenuation (:data:`ATTENUATION`) of the other terms' rough
    variance, in the basis's coordinates. ``info``: the inverse of the levels' mean variance,
    each level's the inverse of its calls' logit precision plus, for every other random term
    nested in it (an interaction that includes its facets, the items of a category), that
    term's rough variance over its levels there; a level whose calls are all one outcome (its
    data bound it on one side only) is left out of the mean, and ``info`` is zero (plain
    non-centring) when more than half of them are (at 4 prompts of SD 3 logits, one prompt
    without a failure in 1,200 calls: 13 divergences with ``info`` zero, none with it left out).

    Examples
    --------
    >>> g = next(g for g in glmm_terms(d) if g.term.label == "prompt")  # doctest: +SKIP
    >>> g.swept, g.v_hat.shape, g.info > 0  # 3 prompts: 2 coordinates  # doctest: +SKIP
    (True, (2,), True)
    """
    facet_codes = _facet_codes(design, terms)
    # crossed_kernel's terms and their random main effects are sampled in its coordinates; a
    # pinned crossed term's totals are centred (and its main effects adapted as any other)
    mains = {p for g in terms if not g.pinned for kind, p, _ in g.crossed if kind == "random"}
    out = []
    for j, g in enumerate(terms):
        L = len(g.labels)
        if not g.swept or L < 2 or j in mains or g.pinned:
            out.append(g)
            continue
        logit, var, nested, one_sided = _rough_levels(design, g, terms, sd_hat, k, n)
        var = var + nested
        info = 0.0 if one_sided.mean() > 0.5 else float(1.0 / var[~one_sided].mean())
        # a crossed term's coordinates are its levels' totals, any other's its own part
        part = logit - logit.mean() if g.crossed else _interaction_part(logit, g, facet_codes)
        out.append(replace(g, v_hat=zerosum_basis(L).T @ part, info=info))
    return out


def level_adaptation(
    design: Design, terms: list[GlmmTerm], sd_hat: dict[str, float], k: np.ndarray, n: np.ndarray
) -> list[GlmmTerm]:
    """Adapt every level of each term that is not swept (the cell effect aside) to its own data,
    as :func:`sweep_adaptation` adapts a swept term's coordinates: the level's effect is
    ``mean + s u`` with ``u = (s info / q) (v_hat - mean) + z / sqrt(q)``, ``q = 1 + s^2 info``,
    and ``z`` sampled under the prior of ``u`` times the Jacobian ``q^(-1/2)``. ``mean`` is what
    the level is drawn around, as sampled (zero, the intercept, its parent's effect); ``v_hat``
    is the level's rough total (its calls' logit less the other facets' margins, with the rough
    mean it is drawn around), so the effect is ``(1 - kappa) mean + kappa v_hat + (s / sqrt(q))
    z``, ``kappa = s^2 info / q``: centred on the data where ``s^2 info`` is large, whatever its
    parent does, and non-centred as ``s`` shrinks. ``info`` is its data's precision: the logit
    precision of its calls plus every nested term's rough variance over its levels there, as for
    the swept terms (an item drawn through its item x judge effects counts their rough variance,
    so it is near-centred only where its judges' data and the SD pin it).

    A plainly non-centred effect ``mean + s z`` ties ``z`` to ``s`` wherever its level's data say
    anything: they pin ``s z``, so a move of ``s`` needs every ``z`` to move the other way, and
    over many weakly informed levels that ridge is the slowest direction of the posterior (item
    x prompt at one call per judge on the Likert benchmark: ``sigma_item_prompt`` at a bulk ESS
    of 0.11 a draw, the other SDs 0.22-0.45). The adapted ``z`` is near independent of ``s`` at
    every ``s`` (0.29 a draw there). The cell effect is left plainly non-centred: adapted, its
    SD mixed faster on the small-facet Likert designs (0.05 to 0.08 ESS a draw at two calls per
    cell) but the safety GLMM took 271 s against 239 s, with no more ESS. A level whose calls all sit
    in one end category (all failures, all successes, all 1s or all 5s of a Likert scale) stays
    plainly non-centred: its data bound its effect on one side only, where its posterior is its
    prior's tail.

    Examples
    --------
    >>> g = next(g for g in glmm_terms(d) if g.term.label == "item:prompt")  # doctest: +SKIP
    >>> g.v_hat.shape == g.level_info.shape == (len(g.labels),)  # doctest: +SKIP
    True
    """
    facet_codes = _facet_codes(design, terms)
    out = []
    for g in terms:
        L = len(g.labels)
        if g.swept or L < 2 or g.term.label == "cell":
            out.append(g)
            continue
        logit, var, nested, one_sided = _rough_levels(design, g, terms, sd_hat, k, n)
        v_hat = _interaction_part(logit, g, facet_codes)
        if g.parent >= 0:  # a deviation from the parent's effect, plus the parent's rough total
            group = g.parent_index
            size = np.maximum(np.bincount(group), 1)
            v_hat = v_hat + ((np.bincount(group, logit) - np.bincount(group, v_hat)) / size)[group]
        elif g.parent == -2:  # around the grand mean: the level's rough total
            v_hat = v_hat + logit.mean()
        info = np.where(one_sided, 0.0, 1.0 / (var + nested))
        out.append(replace(g, v_hat=v_hat, level_info=info))
    return out


def _facet_codes(design: Design, terms: list[GlmmTerm]) -> dict[str, np.ndarray]:
    """Each interaction's facets per cell (a main term, a category, needs none)."""
    return {f: design.cells[f].to_numpy() for g in terms if len(g.term.facets) > 1 for f in g.term.facets}


def _rough_levels(
    design: Design,
    g: GlmmTerm,
    terms: list[GlmmTerm],
    sd_hat: dict[str, float],
    k: np.ndarray,
    n: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per level of ``g``: its calls' logit (shrunk by half a call, undone from the other terms'
    attenuation), that logit's variance from its cells' calls, the variance the terms nested in
    ``g`` add to it, and whether its calls all sit in one end category (:data:`END_COLUMNS`).
    """
    L = len(g.labels)
    p_cell = (k + 0.5) / (n + 1.0)
    n_l = np.bincount(g.cell_level, n, minlength=L)
    k_l = np.bincount(g.cell_level, k, minlength=L)
    cells = design.cells
    bottom, top = (
        (cells[END_COLUMNS[0]].to_numpy(), cells[END_COLUMNS[1]].to_numpy())
        if END_COLUMNS[0] in cells
        else (n - k, k)
    )
    ends = (np.bincount(g.cell_level, bottom, minlength=L), np.bincount(g.cell_level, top, minlength=L))
    one_sided = (ends[0] == n_l) | (ends[1] == n_l)
    var = 1.0 / np.maximum(np.bincount(g.cell_level, n * p_cell * (1 - p_cell), minlength=L), 1e-12)
    nested, other = np.zeros(L), 0.0
    for h in terms:
        if h is g:
            continue
        sd2 = sd_hat[h.term.label] ** 2
        other += sd2
        pairs = np.unique(np.column_stack([h.cell_level, g.cell_level]), axis=0)
        if len(np.unique(pairs[:, 0])) == len(pairs):  # each level of h inside one of g's
            nested = nested + sd2 / np.maximum(np.bincount(pairs[:, 1], minlength=L), 1)
    rate = (k_l + 0.5) / (n_l + 1.0)
    logit = np.log(rate / (1 - rate)) * np.sqrt(1.0 + ATTENUATION * other)
    return logit, var, nested, one_sided


def _interaction_part(values: np.ndarray, g: GlmmTerm, facet_codes: dict[str, np.ndarray]) -> np.ndarray:
    """``values`` per level of ``g`` less their mean and, for an interaction, less the margins
    of every proper subset of its facets (three backfitting passes: exact in one for a complete
    crossing): the part only the interaction explains, as its effects are defined.

    >>> _interaction_part(np.array([1.0, 2.0, 3.0, 4.0]), g, codes)  # 2 x 2, additive  # doctest: +SKIP
    array([0., 0., 0., 0.])
    """
    r = values - values.mean()
    facets = g.term.facets
    if len(facets) < 2:
        return r
    first = np.unique(g.cell_level, return_index=True)[1]  # a cell of each level
    codes = np.column_stack([facet_codes[f][first] for f in facets])
    subsets = [[j for j in range(len(facets)) if mask >> j & 1] for mask in range(1, 2 ** len(facets) - 1)]
    for _ in range(3):
        for cols in subsets:
            _, group = np.unique(codes[:, cols], axis=0, return_inverse=True)
            group = group.ravel()
            r = r - (np.bincount(group, r) / np.bincount(group))[group]
    return r


def _precision(k: np.ndarray, n: np.ndarray, idx: np.ndarray, n_levels: int) -> np.ndarray:
    """Per level, the logit-scale precision ``n p (1 - p)`` of its calls (``k`` successes of ``n``
    per cell, cells at levels ``idx``); zero where the calls are all one outcome, which only
    bounds the effect on one side.
    """
    k_l = np.bincount(idx, k, minlength=n_levels)
    n_l = np.bincount(idx, n, minlength=n_levels)
    p_l = (k_l + 0.5) / (n_l + 1.0)
    return np.where((k_l > 0) & (k_l < n_l), n_l * p_l * (1 - p_l), 0.0)


def _items_through_interaction(out: list[GlmmTerm], sd_hat: dict[str, float]) -> None:
    """Draw the widest item-nested two-way term around its item's effect (:func:`glmm_terms`):
    the item then reaches the data only through those children.
    """
    at = {g.term.label: j for j, g in enumerate(out)}
    nested = [
        j
        for j, g in enumerate(out)
        if len(g.term.facets) == 2 and "item" in g.term.facets and g.parent == -1 and not g.swept
    ]
    if "item" not in at or not nested:
        return
    j, i = max(nested, key=lambda j: sd_hat[out[j].term.label]), at["item"]
    index = np.zeros(len(out[j].labels), dtype=np.int64)
    index[out[j].cell_level] = out[i].cell_level
    out[j] = replace(out[j], parent=i, parent_index=index)
    out[i] = replace(out[i], in_eta=False)


def _centre_on_main_effects(out: list[GlmmTerm], j: int, design: Design, fixed: list[Term]) -> None:
    """Centre the swept two-way term ``out[j]`` on its two main effects when both are free: a
    fixed facet not yet reached through another term, or a swept random main term still in the
    linear predictor; the crossing must be complete (:func:`glmm_terms`).
    """
    g = out[j]
    a, b = g.term.facets
    if len(g.labels) != len(design.levels[a]) * len(design.levels[b]):
        return
    taken = {(kind, p) for h in out for kind, p, _ in h.crossed}
    crossed = []
    for f in (a, b):
        index = np.zeros(len(g.labels), dtype=np.int64)
        index[g.cell_level] = design.cells[f].to_numpy()
        fix = [m for m, t in enumerate(fixed) if t.facets == (f,)]
        main = [
            p for p, h in enumerate(out) if h.term.facets == (f,) and h.swept and h.in_eta and h.parent == -1
        ]
        if fix and ("fixed", fix[0]) not in taken:
            crossed.append(("fixed", fix[0], index))
        elif main:
            crossed.append(("random", main[0], index))
    if len(crossed) < 2:
        return
    out[j] = replace(g, centred=np.ones(len(g.labels), dtype=bool), crossed=tuple(crossed))
    for kind, p, _ in crossed:
        if kind == "random":
            out[p] = replace(out[p], in_eta=False)


def fixed_through_terms(terms: list[GlmmTerm]) -> set[int]:
    """Fixed facets (by position among the design's fixed terms) that reach the linear predictor
    only through a crossed term (:attr:`GlmmTerm.crossed`).
    """
    return {p for g in terms for kind, p, _ in g.crossed if kind == "fixed"}


def swept_name(g: GlmmTerm) -> str:
    """The draws' name of a swept term's coordinates."""
    return f"w_{g.term.key}"


def swept_dim(g: GlmmTerm) -> str:
    """The coordinate of a swept term's rotated coordinates (mean direction first)."""
    return f"{g.dim}_rotated"


def swept_labels(g: GlmmTerm) -> list[str]:
    """``mean`` then the zero-sum directions ``1 .. L-1``."""
    return ["mean"] + [str(j) for j in range(1, len(g.labels))]


def glmm_key(design: Design) -> tuple:
    """What besides the layout changes the compiled GLMM: its per-level centring and the
    data-adapted coordinates of its swept terms and of its other terms' levels.
    """
    return tuple(
        (g.name, np.flatnonzero(g.centred).tolist(), np.round(g.v_hat, 9).tolist(), g.info)
        + (() if g.level_info is None else (np.round(g.level_info, 9).tolist(),))
        if g.v_hat is not None
        else (g.name, np.flatnonzero(g.centred).tolist())
        for g in glmm_terms(design)
    )


def binomial_data(design: Design) -> dict[str, np.ndarray]:
    """The score-dependent inputs of the GLMM (successes per cell, the prior's centre), by
    data-container name, for refits without recompiling.
    """
    n = design.cells["n"].to_numpy()
    p_bar = float(np.clip(design.y_mean, 0.01, 0.99))
    return {
        "successes": np.round(design.cells["mean"].to_numpy() * n).astype(np.int64),
        "logit_rate": np.asarray(np.log(p_bar / (1 - p_bar)), float),
        **covariate_data(design.covariates, design.cells),
    }


def add_logistic_residual(posterior: xr.Dataset) -> xr.Dataset:
    """The GLMM's call-level ``sigma_replicate``: the logistic residual, a constant "draw"."""
    return posterior.assign(sigma_replicate=xr.full_like(posterior["mu"], np.sqrt(LOGISTIC_VARIANCE)))


def add_probit_residual(posterior: xr.Dataset) -> xr.Dataset:
    """The cumulative-probit GLMM's call-level ``sigma_replicate``: the standard normal's 1."""
    return posterior.assign(sigma_replicate=xr.full_like(posterior["mu"], 1.0))
