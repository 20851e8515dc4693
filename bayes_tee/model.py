"""Design + priors -> PyMC model of the crossed random-effects LPM (seed 000, Eq. 1).

Four likelihoods of the same model, all with the same variance parameters (``sigma_<term>``),
grand mean ``mu`` and zero-sum fixed level effects (``<facet>_effect``), so every summary works
on any of them:

``balanced``  Exact for balanced designs: the stratum sums of squares are sufficient
              (:mod:`bayes_tee.anova`), one scaled chi-square term per stratum plus Gaussian
              terms for the grand mean and the fixed contrasts. No random-effect vectors, so no
              funnels; cost is independent of the number of calls.
``marginal``  Any design (missing cells, unequal replicates): the cell means are jointly
              Gaussian with every random effect integrated out exactly
              (:func:`bayes_tee.linalg.item_block_loglik`), plus the replicate-SS potential
              below. The same few parameters as ``balanced``; cost grows with items and
              replicate-count patterns, not calls.
``cells``     Any design, for when ``marginal`` would be costly: random effects per level; each
              cell mean is ``Normal(predictor, sigma_cell^2 + sigma_replicate^2 / n)`` with the
              cell error integrated out, and the within-cell sums of squares enter as the
              potential ``-(n-1) log sigma_rho - SS / (2 sigma_rho^2)``.
``rows``      One likelihood term per call with explicit cell effects: the textbook form, kept
              as the benchmark baseline.
``augmented`` Nearly balanced designs (a few calls, cells or items missing): the balanced
              likelihood of the completed design, with one latent value per incomplete cell
              (:mod:`bayes_tee.augment`); exact, and as cheap as ``balanced`` plus a few
              hundred well-conditioned Gaussian coordinates.
``binomial``  The logit GLMM (``family="binomial"``): calls aggregate exactly to successes out
              of trials per cell; random effects per level (non-centred), the cell-level
              effect as the observation-level random effect; the logistic residual pi^2/3 is
              the fixed ``replicate`` component.

Random effects are centred or non-centred per term (:func:`choose_centering`): centred where
each level has much data relative to its spread, non-centred where the data say little.

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                        prompt="prompt", judge="judge")
>>> m = build_model(d, bt.priors.get_prior(), method="balanced")
>>> sorted(m.named_vars)[:3]
['judge_effect', 'mu', 'sigma_cell']
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from .anova import anova_estimates, strata, strata_statistics
from .augment import augment_layout
from .design import Design
from .linalg import ItemBlocks, item_block_loglik, woodbury_loglik
from .priors import PriorSpec
from .terms import Term, cell_term

Method = Literal["balanced", "augmented", "marginal", "cells", "rows", "binomial"]

#: Latent residual variance of the logistic link (Nakagawa & Schielzeth 2010), the GLMM's
#: call-level ``replicate`` component.
LOGISTIC_VARIANCE = float(np.pi**2 / 3)
#: Unit of the GLMM's prior scales (SDs on the logit scale): a half-t(3) with scale 1 puts
#: half its mass below an SD of 0.77, i.e. odds ratios within about 2x between typical levels.
LOGIT_UNIT = 1.0
#: GLMM terms with at most this many levels are always non-centred.
FEW_LEVELS = 12

#: Random terms with at most this many levels are integrated out of the cell model exactly.
MAX_MARGINAL_LEVELS = 40
#: ... as long as they add up to at most this many columns.
MAX_MARGINAL_COLUMNS = 120


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
    labels = [
        "|".join(design.levels[f][c] for f, c in zip(term.facets, combo)) for combo in uniques
    ]
    return np.asarray(idx), labels


def choose_centering(design: Design, ratio: float = 1.0) -> dict[str, bool]:
    """Centred (``True``) or non-centred parameterisation per random term.

    A level's effect is seen through the mean of its cells, whose noise is the variance of
    every term nested inside the level, divided by how many of its levels the mean averages
    (item effects inside a category, item:prompt effects inside a prompt, cell error and
    replicate noise inside anything). A term is centred when its variance exceeds
    ``ratio`` times that noise, i.e. the data pin each level down well; otherwise it is
    non-centred, which is what removes the funnel of a weakly identified SD. Variances are
    the moment estimates of :func:`bayes_tee.anova.anova_estimates` (missing cells filled).

    Examples
    --------
    >>> choose_centering(d)["item"]
    True
    """
    est = {k: max(v, 0.0) for k, v in anova_estimates(design, fill_missing=True).items()}
    L = {f: len(design.levels[f]) for f in design.facets}
    n_rep = float(design.cells["n"].mean())

    def nest(t: Term) -> set[str]:  # facets, with items counted inside their category
        return {"category"} if t.label == "category" else set(t.facets) | (
            {"category"} if "item" in t.facets and design.categories else set()
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


def _coords(design: Design) -> dict[str, list[str]]:
    coords = {f: list(design.levels[f]) for f in design.facets}
    if design.categories:
        coords["category"] = list(design.categories)
    return coords


def build_model(
    design: Design,
    priors: PriorSpec,
    *,
    method: Method = "balanced",
    centering: dict[str, bool] | None = None,
) -> pm.Model:
    """Build the PyMC model.

    Parameters
    ----------
    design : Design
        From :func:`bayes_tee.validate_design`.
    priors : PriorSpec
        From :func:`bayes_tee.priors.get_prior`.
    method : {"balanced", "augmented", "marginal", "cells", "rows"}
        Likelihood form (see the module docstring); ``balanced`` needs a balanced design.
    centering : dict, optional
        Per random term, centred (``True``) or not; default :func:`choose_centering`.

    Returns
    -------
    pymc.Model
    """
    if design.family == "binomial" or method == "binomial":
        if design.family != "binomial":
            raise ValueError("method='binomial' needs a design validated with family='binomial'.")
        return _binomial_model(design, priors, rows=method == "rows")
    if method == "balanced":
        return _balanced_model(design, priors)
    if method == "marginal":
        return _marginal_model(design, priors)
    if method == "augmented":
        return _augmented_model(design, priors)
    if method not in ("cells", "rows"):
        raise ValueError(f"method must be 'balanced', 'augmented', 'marginal', 'cells' or 'rows', got {method!r}.")
    return _cell_model(design, priors, centering or choose_centering(design), rows=method == "rows")


def _sd_priors(design: Design, priors: PriorSpec, y_sd=None) -> dict[str, pt.TensorVariable]:
    y_sd = design.y_sd if y_sd is None else y_sd
    return {
        t.label: priors.for_component(t.label).build(t.var_name, y_sd)
        for t in design.terms
        if t.kind != "fixed"
    }


def _fixed_effect(design: Design, priors: PriorSpec, term: Term, y_sd=None) -> pt.TensorVariable:
    y_sd = design.y_sd if y_sd is None else y_sd
    return pm.ZeroSumNormal(term.var_name, sigma=priors.fixed_scale * y_sd, dims=term.facets[0])


def _intercept(design: Design, priors: PriorSpec, y_mean=None, y_sd=None) -> pt.TensorVariable:
    y_mean = design.y_mean if y_mean is None else y_mean
    y_sd = design.y_sd if y_sd is None else y_sd
    return pm.Normal("mu", mu=y_mean, sigma=priors.intercept_scale * y_sd)


def _fixed_predictor(design: Design, priors: PriorSpec) -> pt.TensorVariable:
    """Grand mean plus the fixed level effects at every observed cell."""
    pred = _intercept(design, priors)
    for t in design.terms:
        if t.kind == "fixed":
            pred = pred + _fixed_effect(design, priors, t)[design.cells[t.facets[0]].to_numpy()]
    return pred


def _replicate_potential(design: Design, rep: pt.TensorVariable) -> None:
    """Within-cell sums of squares: ``-(n-1) log sigma_rho - SS / (2 sigma_rho^2)`` summed over cells."""
    dof = float((design.cells["n"] - 1).sum())
    ss = float(design.cells["ss"].sum())
    pm.Potential("replicate_loglik", -dof * pt.log(rep) - ss / (2.0 * rep**2))


def _balanced_model(design: Design, priors: PriorSpec) -> pm.Model:
    if not design.balanced:
        raise ValueError(
            "method='balanced' needs every cell present with the same number of replicates; "
            "use method='cells' (or 'auto') for this design."
        )
    st = strata(design)
    with pm.Model(coords=_coords(design)) as model:
        # Everything that depends on the scores is a data container, so a compiled model can be
        # refitted to new scores of the same design without recompiling (balanced_data).
        data = balanced_data(design, st)
        y_sd = pm.Data("y_sd", data["y_sd"])
        sig = _sd_priors(design, priors, y_sd)
        _strata_potentials(
            design, priors, st, sig,
            ss=pm.Data("strata_ss", data["strata_ss"]),
            grand_mean=pm.Data("grand_mean", data["grand_mean"]),
            deviations={fs.term: pm.Data(f"{fs.term}_deviations", data[f"{fs.term}_deviations"]) for fs in st.fixed},
            y_mean=pm.Data("y_mean", data["y_mean"]), y_sd=y_sd,
        )
    return model


def _strata_potentials(design: Design, priors: PriorSpec, st, sig, *, ss, grand_mean, deviations,
                       y_mean=None, y_sd=None) -> None:
    """The balanced likelihood from stratum sums of squares, grand mean and fixed-level deviations
    (data containers for ``balanced``, tensors of the completed array for ``augmented``)."""
    s2 = pt.stack([sig[label] ** 2 for label in st.var_terms])
    ems = pt.dot(pt.as_tensor(st.coef), s2)
    pm.Potential("strata_loglik", -0.5 * pt.sum(st.df * pt.log(ems) + ss / ems))
    mu = _intercept(design, priors, y_mean, y_sd)
    ems0 = pt.dot(pt.as_tensor(st.grand_coef), s2)
    pm.Potential("grand_mean_loglik", -0.5 * (pt.log(ems0) + st.n_total * (grand_mean - mu) ** 2 / ems0))
    fixed_terms = {t.label: t for t in design.terms if t.kind == "fixed"}
    for fs in st.fixed:
        beta = _fixed_effect(design, priors, fixed_terms[fs.term], y_sd)
        emsf = pt.dot(pt.as_tensor(fs.coef), s2)
        q = fs.weight * pt.sum((deviations[fs.term] - beta) ** 2)
        pm.Potential(f"{fs.term}_loglik", -0.5 * (fs.df * pt.log(emsf) + q / emsf))


def _augmented_model(design: Design, priors: PriorSpec) -> pm.Model:
    aug = augment_layout(design)
    st = strata(aug.design, within=False)
    R = aug.replicates
    with pm.Model(coords=_coords(design)) as model:
        sig = _sd_priors(design, priors)
        # the latent means of the missing calls, on the outcome's scale around a neutral start
        centre = np.where(aug.latent_n > 0, aug.latent_mean, design.y_mean)
        u = pm.Flat("missing_cell_means__", shape=aug.n_latent, initval=np.zeros(aug.n_latent))
        z = centre + design.y_sd * u
        w = pt.inc_subtensor(pt.as_tensor(aug.observed_sum)[aug.latent_index], aug.latent_k / R * z)
        stats = strata_statistics(w.reshape(aug.shape), aug.design, R)
        _strata_potentials(design, priors, st, sig, ss=pt.stack(stats["ss"]), grand_mean=stats["grand_mean"],
                           deviations=stats["deviations"])
        rep = sig.get("replicate")
        if rep is not None:
            partial = aug.latent_n > 0
            n, k = aug.latent_n[partial], aug.latent_k[partial]
            contrast = pt.sum((aug.latent_mean[partial] - z[np.flatnonzero(partial)]) ** 2 * (n * k / (n + k)))
            dof = aug.within_df + float(partial.sum())
            pm.Potential("replicate_loglik", -dof * pt.log(rep) - (aug.within_ss + contrast) / (2.0 * rep**2))
    return model


def balanced_data(design: Design, st=None) -> dict[str, np.ndarray]:
    """The score-dependent inputs of the balanced model, by data-container name.

    Two balanced designs with the same layout differ only in these, so a compiled model is
    refitted to new scores with ``compiled.with_data(**balanced_data(design))``.
    """
    st = strata(design) if st is None else st
    out = {
        "y_sd": np.asarray(design.y_sd, float),
        "y_mean": np.asarray(design.y_mean, float),
        "strata_ss": np.asarray(st.ss, float),
        "grand_mean": np.asarray(st.grand_mean, float),
    }
    for fs in st.fixed:
        out[f"{fs.term}_deviations"] = np.asarray(fs.deviations, float)
    return out


def _cell_model(design: Design, priors: PriorSpec, centering: dict[str, bool], *, rows: bool) -> pm.Model:
    cells = design.cells
    ct = cell_term(list(design.terms))
    coords = _coords(design)
    random = [t for t in design.terms if t.kind == "random" and t.label != ct.label]
    levels = {t.label: term_levels(design, t) for t in random}
    # Few-level terms (prompt, category, prompt:x, random judge) are integrated out exactly:
    # their SDs are the weakly identified ones whose funnels no parameterisation removes.
    marginal = [] if rows else [t for t in random if len(levels[t.label][1]) <= MAX_MARGINAL_LEVELS]
    if sum(len(levels[t.label][1]) for t in marginal) > MAX_MARGINAL_COLUMNS:
        marginal = []
    with pm.Model(coords=coords) as model:
        sig = _sd_priors(design, priors)
        pred = _fixed_predictor(design, priors)
        for t in random:
            if t in marginal:
                continue
            idx, labels = levels[t.label]
            pred = pred + _random_effect(model, t, labels, sig[t.label], centering.get(t.label, False) and not rows)[idx]
        rep = sig.get("replicate")
        n = cells["n"].to_numpy().astype(float)
        if rows:
            if rep is None:
                raise ValueError("method='rows' needs replicates (some cell with two or more calls).")
            model.add_coord("cell", np.arange(len(cells)))
            z = pm.Normal("z_cell", 0.0, 1.0, dims="cell")
            pm.Normal("y", (pred + z * sig[ct.label])[design.row_cell], rep, observed=design.row_y)
            return model
        var = sig[ct.label] ** 2 + (rep**2 / n if rep is not None else 0.0)
        resid = cells["mean"].to_numpy() - pred
        if marginal:
            widths = [len(levels[t.label][1]) for t in marginal]
            offsets = np.cumsum([0, *widths[:-1]])
            cols = np.stack([levels[t.label][0] + o for t, o in zip(marginal, offsets)])
            scale = pt.concatenate([pt.repeat(sig[t.label], w) for t, w in zip(marginal, widths)])
            pm.Potential(
                "cell_mean_loglik", woodbury_loglik(resid, var, n, cols, int(sum(widths)), scale)
            )
        else:
            pm.Potential("cell_mean_loglik", -0.5 * pt.sum(pt.log(var) + resid**2 / var))
        if rep is not None:
            _replicate_potential(design, rep)
    return model


def _random_effect(model: pm.Model, t: Term, labels: list[str], sd, centred: bool) -> pt.TensorVariable:
    """One level effect per label of term ``t``: centred ``Normal(0, sd)`` or non-centred ``z * sd``."""
    dim = t.facets[0] if len(t.facets) == 1 else t.key
    if dim not in model.coords:
        model.add_coord(dim, labels)
    if centred:
        return pm.Normal(f"re_{t.key}", 0.0, sd, dims=dim)
    return pm.Normal(f"z_{t.key}", 0.0, 1.0, dims=dim) * sd


def _indicators(design: Design, terms: list[Term]) -> tuple[np.ndarray, list[int]]:
    """``(P, K)`` 0/1 matrix: at each position of an item block, which level of each term (its
    facets other than the item) it is; and the number of columns per term."""
    others = [f for f in design.facets if f != "item"]
    shape = [len(design.levels[f]) for f in others]
    grid = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), dtype=int)
    mats = []
    for t in terms:
        sub = [others.index(f) for f in t.facets if f != "item"]
        col = np.ravel_multi_index(grid[sub], [shape[j] for j in sub]) if sub else np.zeros(grid.shape[1], int)
        mats.append(np.eye(int(np.prod([shape[j] for j in sub])))[col])
    Z = np.concatenate(mats, axis=1) if mats else np.zeros((grid.shape[1], 0))
    return Z, [m.shape[1] for m in mats]


def marginal_layout(design: Design) -> tuple[ItemBlocks, list[Term], list[Term]]:
    """Item blocks and the item-nested / crossed random terms of the marginal model."""
    others = [f for f in design.facets if f != "item"]
    cells = design.cells
    shape = [len(design.levels[f]) for f in others]
    position = (
        np.ravel_multi_index([cells[f].to_numpy() for f in others], shape)
        if others
        else np.zeros(len(cells), int)
    )
    blocks = ItemBlocks.build(
        cells["item"].to_numpy(), position, cells["n"].to_numpy().astype(float),
        len(design.levels["item"]), int(np.prod(shape)) if shape else 1,
    )
    ct = cell_term(list(design.terms))
    random = [t for t in design.terms if t.kind == "random" and t.label not in (ct.label, "category")]
    nested = [t for t in random if "item" in t.facets]
    crossed = [t for t in random if "item" not in t.facets]
    return blocks, nested, crossed


def marginal_cost(design: Design) -> float:
    """Floating-point work of one marginal log-density evaluation (see :func:`build_model`)."""
    blocks, nested, crossed = marginal_layout(design)
    Ka = _indicators(design, nested)[0].shape[1]
    Kb = _indicators(design, crossed)[0].shape[1]
    return blocks.flops(Ka, Kb + len(design.categories or ()))


def _marginal_model(design: Design, priors: PriorSpec) -> pm.Model:
    blocks, nested, crossed = marginal_layout(design)
    ct = cell_term(list(design.terms))
    cells = design.cells

    def scales(terms, widths):
        if not terms:
            return pt.zeros(0)
        return pt.concatenate([pt.repeat(sig[t.label], w) for t, w in zip(terms, widths)])

    za, wa = _indicators(design, nested)
    zb, wb = _indicators(design, crossed)
    with pm.Model(coords=_coords(design)) as model:
        sig = _sd_priors(design, priors)
        pred = _fixed_predictor(design, priors)
        rep = sig.get("replicate")
        grouped = bool(design.categories)
        pm.Potential(
            "cell_mean_loglik",
            item_block_loglik(
                blocks,
                cells["mean"].to_numpy() - pred,
                sig[ct.label] ** 2,
                rep**2 if rep is not None else pt.as_tensor(0.0),
                za, scales(nested, wa), zb, scales(crossed, wb),
                item_group=design.item_category if grouped else None,
                scale_group=sig["category"] if grouped else None,
            ),
        )
        if rep is not None:
            _replicate_potential(design, rep)
    return model


def _binomial_model(design: Design, priors: PriorSpec, *, rows: bool = False) -> pm.Model:
    """Logit GLMM on per-cell successes/trials (or per call with ``rows``, the benchmark
    baseline). Centring per term by :func:`choose_centering` on the 0/1 data: its rule (a
    level's variance against the noise of its mean) is the same on the logit scale to first
    order, both sides scaling by p(1-p). Items seen in hundreds of calls are centred; sparse
    interactions and the cell-level effect are not."""
    cells = design.cells
    n = cells["n"].to_numpy()
    data = binomial_data(design)
    coords = _coords(design)
    random = [t for t in design.terms if t.kind == "random"]
    centering = binomial_centering(design)
    with pm.Model(coords=coords) as model:
        sig = {
            t.label: priors.for_component(t.label).build(t.var_name, LOGIT_UNIT)
            for t in random
        }
        mu = pm.Normal("mu", mu=pm.Data("logit_rate", data["logit_rate"]), sigma=priors.intercept_scale * LOGIT_UNIT)
        # Hierarchical centring (Gelfand, Sahu & Carlin 1995): when the item effects are
        # centred they are centred on mu (and their category's effect), not on zero; centred
        # effects around zero next to a free intercept trade off with it and mix slowly.
        nested = {"item"} | ({"category"} if design.categories else set())
        hier = centering.get("item", False) and not rows
        item_mean = mu
        if hier and "category" in nested:
            dim = "category"
            if centering.get("category", False):
                kappa = pm.Normal("re_category", mu, sig["category"], dims=dim)
            else:
                kappa = mu + pm.Normal("z_category", 0.0, 1.0, dims=dim) * sig["category"]
            item_mean = kappa[design.item_category]
        if hier:
            eta = pm.Normal("re_item", item_mean, sig["item"], dims="item")[cells["item"].to_numpy()]
        else:
            eta = mu
        for t in design.terms:
            if t.kind == "fixed":
                eta = eta + _fixed_effect(design, priors, t, LOGIT_UNIT)[cells[t.facets[0]].to_numpy()]
        for t in random:
            if hier and t.label in nested:
                continue
            idx, labels = term_levels(design, t)
            eta = eta + _random_effect(model, t, labels, sig[t.label], centering.get(t.label, False) and not rows)[idx]
        # the panel's mean success probability over the observed calls (probability scale)
        pm.Deterministic("p_panel", pt.sum(n * pm.math.invlogit(eta)) / n.sum())
        if rows:
            pm.Bernoulli("y", logit_p=eta[design.row_cell], observed=design.row_y.astype(np.int64))
        else:
            pm.Binomial("y", n=n, logit_p=eta, observed=pm.Data("successes", data["successes"]))
    return model


def binomial_centering(design: Design) -> dict[str, bool]:
    """The GLMM's per-term centring: :func:`choose_centering` with a stricter bar (the level's
    variance three times the noise of its mean: binary calls near 0 or 1 carry less
    information than the linear approximation credits), and never for few-level terms."""
    centering = choose_centering(design, ratio=3.0)
    for t in design.terms:  # few levels: the SD is weakly identified whatever the data per level
        if t.kind == "random" and len(term_levels(design, t)[1]) <= FEW_LEVELS:
            centering[t.label] = False
    return {k: bool(v) for k, v in centering.items()}


def binomial_data(design: Design) -> dict[str, np.ndarray]:
    """The score-dependent inputs of the GLMM (successes per cell, the prior's centre), by
    data-container name, for refits without recompiling."""
    n = design.cells["n"].to_numpy()
    p_bar = float(np.clip(design.y_mean, 0.01, 0.99))
    return {
        "successes": np.round(design.cells["mean"].to_numpy() * n).astype(np.int64),
        "logit_rate": np.asarray(np.log(p_bar / (1 - p_bar)), float),
    }
