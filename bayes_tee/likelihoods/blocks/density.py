"""``blocks``: calls lost and cells empty, each item's short cells integrated out exactly.

Given the effects that do not involve the items (the item-free random effects ``a`` and the
category effects ``g``), the items are independent: item ``i``'s cell means are
``y_i ~ N(m + a + g_c(i), V + diag(delta_i))`` over its observed cells, where ``V`` is the
within-item covariance of a complete item (``sum_t v_t Pi_t`` over the types ``t`` of the
non-item facets, :mod:`bayes_tee.likelihoods.anova`'s strata inside one item) and
``delta_c = sigma_rho^2 (1/n_c - 1/R)`` the extra noise of a cell short of the ``R`` calls
(infinite for an empty cell). With ``s_i`` short or empty cells in item ``i``, the matrix
determinant lemma and Woodbury's identity give its log density from the complete item's
(a sum over strata, from statistics computed once) and one ``s_i x s_i`` matrix
``M_i = diag(1 / delta) + [V^-1]_short``, whose entries depend only on which facets two cells
share (a table of ``2^F`` values per evaluation). Nothing is approximated: the density of the
observed data is exact at every parameter value.

The effects shared by all items (``a``, a few dozen at most, and ``g``, one per category) are
sampled, reparameterised around their conditional posterior in the complete design
(``a_r = w_r e_r + u_r / sqrt(pi_r)``, a per-stratum shrinkage of the item-averaged data), so
their coordinates ``u`` are close to independent standard normals at any variance: no funnel,
and NUTS takes about the steps of the balanced likelihood.

An item holding fewer observed cells ``o_i`` than latent ones (an adaptive run's data, where
most items hold a few of their cells) is factored directly instead: its observed cell means are
``N(m + a + g_c(i), V_OO + diag(sigma_rho^2 (1/n_c - 1/R)))``, whose entries come from the same
``2^F`` table, and it leaves the complete-item sums (14 systems x 3 judges, 1,420 scattered
calls: 0.17 ms per evaluation instead of 1.25 ms, a warm fit 5.7 s instead of 36.6 s).

The same covariance is also ``U L U' + D``: ``U`` the indicators of the item-nested random
effects its observed cells touch (the item, item x prompt, system x item, ...: ``p_i`` columns),
``L`` their variances and ``D`` the cells' diagonal (the full-cell term and the calls' noise
``sigma_rho^2 / n_c``). One Woodbury step over the ``p_i`` effects (``K = L^-1 + U' D^-1 U``)
gives the density and, through ``K^-1``, its slopes in every variance and cell mean. The widest
term's block of ``K`` is diagonal (a cell is in one of its levels): it is eliminated first and
only the Schur complement of the other terms is factored
(:mod:`~bayes_tee.likelihoods.blocks.nested_kernel`). A comparison's item holding about
half of its 84 cells (14 systems x 3 judges x 2 prompts) has 20 such effects (6 after the 14
system x item levels) against 34 empty and 50 observed cells: 0.24-0.25 ms an evaluation
instead of 1.5 ms at 4,975 calls (an adaptive step's fit 13 s instead of 49 s, measured at
0.29 ms). Each item takes the cheapest of the three forms
(:func:`~bayes_tee.likelihoods.blocks.layout.block_sizes`), so the cost is
``min(s_i, o_i, p_i)`` cubed plus the nested form's per-cell updates.

Cost model of one evaluation: ``O(sum_i (k_i^3 / 2 + 4 k_i^2) + short cells x 2^F + M^2)``
with ``k_i = min(s_i, o_i)`` and ``M`` cells per item: linear in the items at a given share of
short cells, nothing per call, and no latent value per short cell (the ``augmented``
likelihood carries one each, so its NUTS trajectories lengthen with their number).

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> d = bt.validate_design(df.iloc[1:], outcome="score", item="item", prompt="prompt",
...                        judge="judge", temperature="temperature", replicate="replicate")
>>> dens = blocks_density(d, bt.priors.get_prior())
>>> value, grad = dens.logp_grad(dens.initial_point(np.random.default_rng(1)))
>>> int(dens.short_cells), grad.shape == (dens.layout.ndim,)
(1, True)
"""

from __future__ import annotations

import inspect

import numpy as np

from ..._core.density import GrandMeanMap, Layout
from ..._core.exceptions import ArgumentError
from ..._core.priors import PriorSpec
from ...design.design import Design
from ..kernels.callbacks import BLOCKS_KINDS, callback, pack
from ..kernels.prior import FAMILIES, grand_mean
from ..levels import coords
from .kernel import blocks_logp_grad
from .layout import blocks_limitation, cell_types, item_blocks, type_coefficients, var_terms

#: Names of the sampled shared effects' coordinates (not reported).
SHARED = "item_free_effects__"
CATEGORIES = "category_effects__"

#: The kernel's arguments after ``x``, in order.
KERNEL_ARGUMENTS = tuple(inspect.signature(blocks_logp_grad.py_func).parameters)[1:]


class BlocksDensity(GrandMeanMap):
    """The ``blocks`` likelihood (see the module docstring) as a NumPy/numba density.

    Parameters
    ----------
    design : Design
        A Gaussian design with the items as a facet.
    priors : PriorSpec
        As for the PyMC models.
    forms : numpy.ndarray, optional
        Each item's form (:func:`~bayes_tee.likelihoods.blocks.layout.block_sizes`) instead of
        the cheapest; every form gives the same density.
    """

    #: A refit may start at an earlier fit's draws (:mod:`bayes_tee._core.warm`): measured to
    #: halve an adaptive step's fit with clean diagnostics.
    warm_starts = True
    #: A warm start's least target acceptance (``Settings.refit``; the other kernels' 0.95): with
    #: the grand mean sampled around its conditional posterior (:meth:`grand_mean`) its neck is
    #: gone. 30 items x 2 prompts x 3 judges, refits on 80% of the calls started at a fit of 70%,
    #: 48 seeds: at 0.9 none diverged, at 0.85 two did (0.95 before, when 0.9 diverged in 2 of
    #: 12); 14 systems x 100 items x 3 random judges x 2 prompts, 4,975 calls: 5.2-5.7 s a step
    #: against 6.0-10.0 s before.
    warm_accept = 0.9

    def __init__(self, design: Design, priors: PriorSpec, forms: np.ndarray | None = None) -> None:
        self.design, self.priors = design, priors
        self.blocks = item_blocks(design, forms)
        self.var_terms = var_terms(design)
        fixed = [t for t in design.terms if t.kind == "fixed"]
        why = blocks_limitation(design)
        if why:
            raise ArgumentError(f"method='blocks' does not fit this design: {why}. Use method='auto'.")
        self.fixed = fixed
        a = self.blocks.arrays
        self.v_coef, self.g_coef = type_coefficients(design, self.var_terms, self.blocks.replicates)
        self.alpha_r = np.flatnonzero(self.g_coef.any(axis=1)[a["rtype"]]).astype(np.int64)
        n_cat = 0 if design.categories is None else len(design.categories)
        params = [(t.var_name, "log", ()) for t in self.var_terms] + [("mu", "real", ())]
        params += [(t.var_name, "zerosum", (len(design.levels[t.facets[0]]),)) for t in fixed]
        params += [(SHARED, "flat", (self.alpha_r.size,))] if self.alpha_r.size else []
        params += [(CATEGORIES, "flat", (n_cat,))] if n_cat else []
        self.layout = Layout(params)
        self.coords = coords(design)
        self.dims = {t.var_name: (t.facets[0],) for t in fixed}
        self.sd_priors = [priors.for_component(t.label) for t in self.var_terms]
        self.short_cells = self.blocks.short_cells
        self._args = self._pack()

    def _pack(self) -> tuple:
        d, lay, b = self.design, self.layout, self.blocks
        f64, i64 = np.float64, np.int64
        sds = self.sd_priors
        names = [t.var_name for t in self.fixed]
        bases = [lay.bases[n].ravel() for n in names]
        inner, levels, _ = cell_types(d)
        grid = np.indices(levels).reshape(len(levels), -1) if inner else np.zeros((0, 1), int)
        fix_level = np.zeros((len(self.fixed), grid.shape[1]), dtype=i64)
        for k, t in enumerate(self.fixed):
            fix_level[k] = grid[inner.index(t.facets[0])]
        labels = [t.label for t in self.var_terms]
        a = {
            "fam": np.array([FAMILIES[p.family] for p in sds], dtype=i64),
            "pscale": np.array([p.scale * d.y_sd for p in sds], dtype=f64),
            "pnu": np.array([p.nu for p in sds], dtype=f64),
            "pconst": np.array([p.log_normaliser(d.y_sd) for p in sds], dtype=f64),
            "mu0": float(d.y_mean - d.y_mean),
            "mu_scale": float(self.priors.intercept_scale * d.y_sd),
            "fix_off": np.array([lay.slices[n].start for n in names], dtype=i64),
            "fix_len": np.array([len(d.levels[t.facets[0]]) for t in self.fixed], dtype=i64),
            "bases": np.concatenate(bases) if bases else np.zeros(0),
            "base_off": np.cumsum([0] + [x.size for x in bases])[:-1].astype(i64),
            "fixed_scale": np.array(
                [self.priors.fixed_scale_of(t.label, d.system) * d.y_sd for t in self.fixed]
            ),
            "fix_level": fix_level,
            "v_coef": self.v_coef,
            "g_coef": self.g_coef,
            "alpha_r": self.alpha_r,
            "a_off": lay.slices[SHARED].start if SHARED in lay.slices else 0,
            "g_off": lay.slices[CATEGORIES].start if CATEGORIES in lay.slices else 0,
            "has_cat": CATEGORIES in lay.slices,
            "cat_index": labels.index("category") if "category" in labels else -1,
            "rep_index": next((j for j, t in enumerate(self.var_terms) if t.kind == "residual"), -1),
        }
        a.update(b.arrays)
        return tuple(a[name] for name in KERNEL_ARGUMENTS)

    def logp_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Log density and gradient at unconstrained ``x`` (the grand mean's coordinate is
        :meth:`grand_mean`'s ``z``).
        """
        return blocks_logp_grad(np.ascontiguousarray(x, dtype=np.float64), *self._args)

    def grand_mean(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The grand mean on the outcome's scale at the unconstrained points ``x`` (rows, or one),
        and the log Jacobian of its map.

        Its coordinate ``z`` is sampled around the conditional posterior of ``mu`` given the
        variances in the complete design: ``mu = m + z / sqrt(prec)``, where the items' mean
        varies about ``mu`` by the items' variance over the items, the item-free effects' over
        their levels and the categories' (``kernels.prior.grand_mean``). Sampled as it stands,
        ``mu``'s scale follows a few-level SD (``sigma_prompt**2 / 2`` at two prompts), a neck
        that NUTS crossed only at a high target acceptance, with twice the leapfrog steps.
        """
        X = np.atleast_2d(np.asarray(x, dtype=np.float64))
        a = dict(zip(KERNEL_ARGUMENTS, self._args, strict=True))
        n_var, M, a_n = len(self.var_terms), float(a["n_cells"]), a["a_n"]
        s2 = np.exp(2.0 * X[:, :n_var])
        var = (s2 @ self.v_coef[0] / a_n + s2 @ self.g_coef[0]) / M
        if a["has_cat"]:
            share = a["c_n"] / a["c_n"].sum()
            var = var + s2[:, a["cat_index"]] * float(share @ share)
        ybar = a["a_zsum"][0] / a_n / np.sqrt(M)
        mu, _, prec = grand_mean.py_func(X[:, n_var], ybar, var, a["mu0"], a["mu_scale"])  # the kernel's map
        shape = np.shape(x)[:-1]
        return (self.design.y_mean + mu).reshape(shape), (-0.5 * np.log(prec)).reshape(shape)

    def callback(self) -> tuple:
        """The kernel as nutpie's C callbacks (:mod:`bayes_tee.likelihoods.kernels.callbacks`): log
        density, expand, the argument table and the arrays it points into; nothing compiled per
        layout.
        """
        return (callback("blocks"), callback("copy"), *pack(self._args, BLOCKS_KINDS))

    def initial_point(self, rng: np.random.Generator) -> np.ndarray:
        """Prior-scale SDs, zero effects and coordinates (the grand mean at its conditional
        posterior's centre), jittered by ``Uniform(-1, 1)`` on the unconstrained scale as nutpie does.
        """
        x = rng.uniform(-1.0, 1.0, size=self.layout.ndim)
        for t, prior in zip(self.var_terms, self.sd_priors):
            x[self.layout.slices[t.var_name]] += np.log(prior.support_point(self.design.y_sd))
        return x


def blocks_density(design: Design, priors: PriorSpec) -> BlocksDensity:
    """The ``blocks`` likelihood as a NumPy density."""
    return BlocksDensity(design, priors)
