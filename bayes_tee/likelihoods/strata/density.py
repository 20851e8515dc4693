"""The ``balanced`` and ``augmented`` likelihoods in NumPy, with their gradients: nothing to compile.

The same model as :func:`~bayes_tee.likelihoods.strata.balanced.balanced_model` and
:func:`~bayes_tee.likelihoods.strata.augmented.augmented_model` (priors, transforms and
potentials), written as a :class:`~bayes_tee._core.density.Density` that nutpie samples
through Python callbacks. Compiling the PyTensor graph of these likelihoods through numba cost
10-30 s in every new process (nutpie's C callback) on 5k-50k call pilots, more than sampling;
here the first fit of a layout costs what the hundredth does.

Cost model of one evaluation:

- ``balanced``: ``O(strata x variance terms)``, independent of the number of calls.
- ``augmented``: ``O(completed cells x levels of the non-item facets)``: the latent values are
  scattered into the completed cell-mean array, whose every axis but the items is rotated by
  its small Helmert matrix (:func:`~bayes_tee.likelihoods.anova.strata_statistics`); the gradient runs
  the same products backwards. Each latent cell adds one well-conditioned coordinate to NUTS.

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                        prompt="prompt", judge="judge")
>>> dens = StrataDensity(d, bt.priors.get_prior())
>>> x = dens.initial_point(np.random.default_rng(1))
>>> value, grad = dens.logp_grad(x)
>>> grad.shape == x.shape
True
"""

from __future__ import annotations

import inspect

import numpy as np

from ..._core.density import GrandMeanMap, Layout
from ..._core.exceptions import ArgumentError
from ..._core.priors import PriorSpec
from ...design.design import Design
from ..anova import strata, stratum_blocks
from ..kernels.callbacks import BALANCED_KINDS, STRATA_KINDS, callback, pack
from ..kernels.prior import grand_mean
from ..levels import coords
from .augment import augment_layout
from .kernel import FAMILIES, strata_logp_grad

#: Name of the latent vector of the augmented likelihood (as in its PyMC model).
LATENT = "missing_cell_means__"

#: Rotate the non-item axes with their Kronecker product while ``P <= KRON_MAX_RATIO x levels``
#: (``P`` cells per item, ``levels`` summed over those axes), axis by axis beyond.
KRON_MAX_RATIO = 8

#: The kernel's arguments after ``x``, in order.
KERNEL_ARGUMENTS = tuple(inspect.signature(strata_logp_grad.py_func).parameters)[1:]

_E, _EI, _E2 = np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros((0, 0))
#: The augmented arguments of a balanced call: empty, never read.
_NO_COMPLETION = {
    "augmented": None,  # the kernel's completion code pruned (kernels.callbacks.BALANCED_KINDS)
    "lat_off": 0,
    "observed_sum": _E,
    "latent_index": _EI,
    "scatter": _E,
    "centre": _E,
    "y_sd": 1.0,
    "shift": 0.0,
    "n_items": 1,
    "dims": _EI,
    "helmerts": _E,
    "h_off": _EI,
    "kron": _E2,
    "kron_t": _E2,
    "mask_item": _E2,
    "mask_rest": _E2,
    "replicates": 1.0,
    "pool": _E2,
    "item_part": -1,
    "cat_weights": _E2,
    "fix_axis_stride": _EI,
    "rep_index": -1,
    "partial": _EI,
    "latent_mean": _E,
    "contrast_weight": _E,
    "rep_dof": 0.0,
    "within_ss": 0.0,
}


class StrataDensity(GrandMeanMap):
    """Log density of the balanced (``augmented=False``) or augmented strata likelihood.

    Parameters
    ----------
    design : Design
        Complete (every cell with the same calls) for ``augmented=False``; any Gaussian
        design otherwise.
    priors : PriorSpec
        As for the PyMC model.
    augmented : bool
        Complete the design with latent values (:mod:`bayes_tee.likelihoods.strata.augment`).
    """

    #: A refit may start at an earlier fit's draws (:mod:`bayes_tee._core.warm`): measured to
    #: halve an adaptive step's fit with clean diagnostics.
    warm_starts = True

    def __init__(self, design: Design, priors: PriorSpec, augmented: bool = False) -> None:
        if not augmented and not design.complete:
            raise ArgumentError(
                "method='balanced' needs every cell present with the same number of replicates; "
                "use method='auto' for this design."
            )
        self.design, self.priors, self.augmented = design, priors, augmented
        self.var_terms = [t for t in design.terms if t.kind != "fixed"]
        fixed = {t.label: t for t in design.terms if t.kind == "fixed"}
        if augmented:
            self.aug = augment_layout(design)
            self.st = strata(self.aug.design, within=False)
        else:
            self.st = strata(design)
        self.fixed_names = [fixed[fs.term].var_name for fs in self.st.fixed]
        params = [(t.var_name, "log", ()) for t in self.var_terms] + [("mu", "real", ())]
        params += [(n, "zerosum", (fs.deviations.size,)) for n, fs in zip(self.fixed_names, self.st.fixed)]
        if augmented:
            params.append((LATENT, "flat", (self.aug.n_latent,)))
        self.layout = Layout(params)
        self.coords = coords(design)
        self.dims = {n: (fixed[fs.term].facets[0],) for n, fs in zip(self.fixed_names, self.st.fixed)}
        self.sd_priors = [priors.for_component(t.label) for t in self.var_terms]
        self._args = self._pack()

    def _pack(self) -> tuple:
        """The design as the flat arrays :func:`strata_logp_grad` takes, in its argument order."""
        d, st, lay = self.design, self.st, self.layout
        f64, i64 = np.float64, np.int64
        sds, fixed = self.sd_priors, st.fixed
        bases = [lay.bases[n].ravel() for n in self.fixed_names]
        fix_len = np.array([fs.deviations.size for fs in fixed], dtype=i64)
        a = {
            "fam": np.array([FAMILIES[p.family] for p in sds], dtype=i64),
            "pscale": np.array([p.scale * d.y_sd for p in sds], dtype=f64),
            "pnu": np.array([p.nu for p in sds], dtype=f64),
            "pconst": np.array([p.log_normaliser(d.y_sd) for p in sds], dtype=f64),
            "mu0": float(d.y_mean),
            "mu_scale": float(self.priors.intercept_scale * d.y_sd),
            "fix_off": np.array([lay.slices[n].start for n in self.fixed_names], dtype=i64),
            "fix_len": fix_len,
            "bases": np.concatenate(bases) if bases else np.zeros(0),
            "base_off": np.cumsum([0] + [b.size for b in bases])[:-1].astype(i64),
            "fixed_scale": np.array(
                [self.priors.fixed_scale_of(fs.term, d.system) * d.y_sd for fs in fixed], dtype=f64
            ),
            "fix_weight": np.array([fs.weight for fs in fixed], dtype=f64),
            "fix_df": np.array([fs.df for fs in fixed], dtype=f64),
            "fix_coef": np.array([fs.coef for fs in fixed], dtype=f64).reshape(len(fixed), len(sds)),
            "coef": np.ascontiguousarray(st.coef[st.rows], dtype=f64),
            "df": np.asarray(st.df[st.rows], dtype=f64),
            "grand_coef": np.asarray(st.grand_coef, dtype=f64),
            "n_total": float(st.n_total),
        }
        cm = st.categories
        a["cat_sizes"] = np.zeros(0) if cm is None else np.asarray(cm.sizes, dtype=f64)
        for name in ("cat_coef", "item_coef", "kappa_coef"):
            a[name] = np.zeros(len(sds)) if cm is None else np.asarray(getattr(cm, name), dtype=f64)
        a["cat_data"] = np.zeros(0) if cm is None else np.asarray(cm.means, dtype=f64)
        if self.augmented:
            a.update(self._completion())
        else:
            a.update(_NO_COMPLETION)
            a["ss_data"] = np.asarray(st.ss[st.rows], dtype=f64)
            a["grand_data"] = float(st.grand_mean)
            a["dev_data"] = np.concatenate([fs.deviations for fs in fixed]) if fixed else np.zeros(0)
        return tuple(a[name] for name in KERNEL_ARGUMENTS)

    def _completion(self) -> dict:
        """The augmented kernel's arguments: the completed array and the within-cell potential."""
        d, aug, f64, i64 = self.design, self.aug, np.float64, np.int64
        b = stratum_blocks(aug.design)
        F = len(aug.shape)
        strides = np.cumprod((aug.shape[1:] + (1,))[::-1])[::-1]  # C-order stride of each axis
        labels = [label for label, _ in b.strata]
        partial = aug.latent_n > 0
        n, k = aug.latent_n[partial], aug.latent_k[partial]
        # rotate all non-item axes with one dense product (their Kronecker product) when that
        # is cheaper than axis by axis: BLAS does I x P^2 in about the time the loops take
        # for I x P x 8 sum(levels) (measured: 303 -> 116 us per evaluation at 141 x 45 cells)
        P, levels = int(np.prod(aug.shape[1:])), int(sum(aug.shape[1:]))
        kron = np.zeros((0, 0))
        if F > 1 and P <= KRON_MAX_RATIO * levels:
            kron = b.helmert[1]
            for h in b.helmert[2:]:
                kron = np.kron(kron, h)
        return {
            "ss_data": np.zeros(len(b.likelihood_pooled)),
            "grand_data": 0.0,
            "dev_data": np.zeros(sum(fs.deviations.size for fs in self.st.fixed)),
            "augmented": True,
            "lat_off": self.layout.slices[LATENT].start,
            "observed_sum": np.asarray(aug.observed_sum, dtype=f64),
            "latent_index": aug.latent_index.astype(i64),
            "scatter": (aug.latent_k / aug.replicates).astype(f64),
            "centre": np.where(partial, aug.latent_mean, d.y_mean).astype(f64),
            "y_sd": float(d.y_sd),
            "shift": float(d.y_mean),
            "n_items": int(aug.shape[0]),
            "dims": np.array(aug.shape[1:], dtype=i64),
            "helmerts": np.concatenate([h.ravel() for h in b.helmert[1:]]) if F > 1 else np.zeros(0),
            "h_off": np.cumsum([0] + [h.size for h in b.helmert[1:]])[:-1].astype(i64),
            "kron": kron,
            "kron_t": np.ascontiguousarray(kron.T),
            "mask_item": np.ascontiguousarray(b.mask_item, dtype=f64),
            "mask_rest": np.ascontiguousarray(b.mask_rest, dtype=f64),
            "replicates": float(aug.replicates),
            "pool": np.array([[1.0 if p in g else 0.0 for p in labels] for g in b.likelihood_pooled]),
            "item_part": labels.index("item") if "item" in labels else -1,
            "cat_weights": (
                np.zeros((aug.shape[0], 0))
                if b.category_weights is None
                else np.asarray(b.category_weights, dtype=f64)
            ),
            "fix_axis_stride": np.array([strides[aug.design.facets.index(f)] for f in b.fixed], dtype=i64),
            "rep_index": next((j for j, t in enumerate(self.var_terms) if t.kind == "residual"), -1),
            "partial": np.flatnonzero(partial).astype(i64),
            "latent_mean": np.asarray(aug.latent_mean, dtype=f64),
            "contrast_weight": (n * k / (n + k)).astype(f64),
            "rep_dof": float(aug.within_df + partial.sum()),
            "within_ss": float(aug.within_ss),
        }

    def logp_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Log density and gradient at unconstrained ``x`` (see the module docstring)."""
        return strata_logp_grad(np.ascontiguousarray(x, dtype=np.float64), *self._args)

    @property
    def mapped(self) -> bool:
        """Whether the grand mean's coordinate is :meth:`grand_mean`'s ``z`` (no categories) or
        the grand mean itself.
        """
        return self._args[KERNEL_ARGUMENTS.index("cat_sizes")].size == 0  # as the kernel decides

    def grand_mean(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The grand mean at the unconstrained points ``x`` (rows, or one) and the log Jacobian
        of its map.

        Without categories its coordinate ``z`` is sampled around the conditional posterior of
        ``mu`` given the variances: ``mu = m + z / sqrt(prec)``, the grand mean's stratum varying
        about ``mu`` by its expected mean square over the calls (``kernels.prior.grand_mean``).
        Sampled as it stands, ``mu``'s scale follows a few-level SD (``sigma_prompt**2 / 2`` at
        two prompts), a neck that NUTS crossed only at a target acceptance of 0.95. With
        categories ``x``'s own coordinate is the grand mean (Jacobian 0).
        """
        X = np.atleast_2d(np.asarray(x, dtype=np.float64))
        n_var, shape = len(self.var_terms), np.shape(x)[:-1]
        if not self.mapped:
            return X[:, n_var].reshape(shape), np.zeros(shape)
        a = dict(zip(KERNEL_ARGUMENTS, self._args, strict=True))
        var = np.exp(2.0 * X[:, :n_var]) @ a["grand_coef"] / a["n_total"]
        ybar = a["shift"] if a["augmented"] else a["grand_data"]
        mu, _, prec = grand_mean.py_func(X[:, n_var], ybar, var, a["mu0"], a["mu_scale"])  # the kernel's map
        return mu.reshape(shape), (-0.5 * np.log(prec)).reshape(shape)

    def callback(self) -> tuple:
        """The kernel as nutpie's C callbacks (:mod:`bayes_tee.likelihoods.kernels.callbacks`): log
        density, expand, the argument table and the arrays it points into; nothing compiled per
        layout.
        """
        name, kinds = ("strata", STRATA_KINDS) if self.augmented else ("balanced", BALANCED_KINDS)
        return (callback(name), callback("copy"), *pack(self._args, kinds))

    def initial_point(self, rng: np.random.Generator) -> np.ndarray:
        """PyMC's support point (prior scales, the outcome mean, zero effects and latent
        offsets; the grand mean at its conditional posterior's centre where it is mapped),
        jittered by ``Uniform(-1, 1)`` on the unconstrained scale as nutpie does.
        """
        x = rng.uniform(-1.0, 1.0, size=self.layout.ndim)
        for t, prior in zip(self.var_terms, self.sd_priors):
            x[self.layout.slices[t.var_name]] += np.log(prior.support_point(self.design.y_sd))
        if not self.mapped:
            x[self.layout.slices["mu"]] += self.design.y_mean
        return x


def balanced_density(design: Design, priors: PriorSpec) -> StrataDensity:
    """The ``balanced`` likelihood as a NumPy density."""
    return StrataDensity(design, priors, augmented=False)


def augmented_density(design: Design, priors: PriorSpec) -> StrataDensity:
    """The ``augmented`` likelihood as a NumPy density."""
    return StrataDensity(design, priors, augmented=True)
