"""``collapsed``: the Gaussian likelihood with every linear effect integrated out, the SDs alone
sampled and the fixed coefficients drawn from their exact conditional posterior.

Model (the marginal model's, ``bayes_tee.likelihoods.marginal.model``): cell ``c`` of item
``i`` holds ``n_c`` calls with mean ``y_c = x_c' beta + a_i + e_c + rho_c``, ``a_i ~ N(0,
sigma_a^2)`` the item's intercept, ``e_c ~ N(0, sigma_e^2)`` the cell term and ``rho_c`` the mean
of its calls' replicate noise, ``N(0, sigma_rho^2 / n_c)``; the within-cell sum of squares is
``sigma_rho^2`` chi-square. ``beta ~ N(m_0, S_0)`` holds the grand mean, the fixed facets' and the
covariates' coefficients (:mod:`bayes_tee.likelihoods.collapsed.layout`). Given the SDs ``theta``,
``y`` is Gaussian with covariance ``V`` block-diagonal by item (``D_i + sigma_a^2 1 1'``, ``D_i``
the cell variances ``sigma_e^2 + sigma_rho^2 / n_c``), so with ``Q = X' V^-1 X``, ``r = X' V^-1 y``,
``q = y' V^-1 y`` (``y`` centred on ``X m_0``) and ``H = S_0^-1 + Q``,

    log p(y | theta) = -(log|V| + q + log|S_0| + log|H| - r' H^-1 r) / 2 + const,

and ``beta | theta, y ~ N(m_0 + H^-1 r, H^-1)``. By Woodbury's identity each item contributes
through ``kappa_i = 1 / sigma_a^2 + sum_c 1 / (sigma_e^2 + sigma_rho^2 / n_c)`` alone, so ``Q``,
``r`` and ``q`` are the layout's grouped sums weighted by functions of ``theta``: nothing per
call or cell is touched in an evaluation. A covariate that varies within cells adds its
within-cell cross-products to ``Q`` and ``r`` with weight ``1 / sigma_rho^2`` (the within-cell sum
of squares of ``y - slope' x``, :mod:`bayes_tee.design.covariates`). Nothing is approximated.

NUTS samples the log SDs alone, from ``p(theta | y)``: a few coordinates, no ridge between
the coefficients and their scales, nothing compiled per layout. Each draw's coefficients are
then drawn from their exact conditional, ``beta = m_0 + H^-1 r + L^-T zeta`` (``H = L L'``,
``zeta ~ N(0, I_p)``), so ``(theta, beta)`` are draws of the marginal model's joint posterior,
reported in the PyMC model's names and dims (``mu``, the fixed effects, the slopes).

Cost of one evaluation: ``4 K G^2 p^2 + p^3 / 3`` floating-point operations (``K`` item
patterns, ``G`` replicate counts, ``p`` coefficients:
:func:`bayes_tee.likelihoods.collapsed.layout.collapsed_cost`).

>>> import bayes_tee as bt
>>> from bayes_tee.design.build import build_design
>>> df = bt.simulate.bias_dgp(n_items=10, random_seed=1)
>>> d = build_design(df, formula="score ~ judge + length + (1|item)", warn=False)
>>> dens = CollapsedDensity(d, bt.priors.get_prior())
>>> value, grad = dens.logp_grad(dens.initial_point(np.random.default_rng(1)))
>>> grad.shape == (dens.layout.ndim,), sorted(dens.derive(np.zeros(dens.layout.ndim)))
(True, ['beta_length', 'judge_effect', 'mu'])
"""

from __future__ import annotations

import hashlib
import inspect

import numpy as np

from ..._core.density import Layout
from ..._core.exceptions import ArgumentError
from ..._core.priors import PriorSpec
from ...design.design import Design
from ..kernels.callbacks import COLLAPSED_KINDS, callback, pack
from ..kernels.prior import FAMILIES
from ..levels import coords
from .kernel import collapsed_coefficients, collapsed_logp_grad
from .layout import collapsed_layout, collapsed_limitation

_LOG_2PI = float(np.log(2.0 * np.pi))
#: The kernel's arguments after ``x``, in order.
KERNEL_ARGUMENTS = tuple(inspect.signature(collapsed_logp_grad.py_func).parameters)[1:]
#: :func:`collapsed_coefficients`' arguments after ``X``, ``Z`` and ``prior_mean``.
COEFFICIENT_ARGUMENTS = tuple(inspect.signature(collapsed_coefficients.py_func).parameters)[3:]


class CollapsedDensity:
    """The ``collapsed`` likelihood (see the module docstring) as a NumPy/numba density.

    Parameters
    ----------
    design : Design
        A Gaussian design whose random terms are the items' intercept and the cell term.
    priors : PriorSpec
        As for the PyMC models.
    """

    #: A refit may start at an earlier fit's draws (:mod:`bayes_tee._core.warm`): measured to
    #: halve an adaptive step's fit with clean diagnostics.
    warm_starts = True

    def __init__(self, design: Design, priors: PriorSpec) -> None:
        why = collapsed_limitation(design)
        if why:
            raise ArgumentError(f"method='collapsed' does not fit this design: {why}. Use method='auto'.")
        self.design, self.priors = design, priors
        self.lay = lay = collapsed_layout(design, priors)
        self.var_terms = [t for t in design.terms if t.kind != "fixed"]
        labels = [t.label for t in self.var_terms]
        self.sd_priors = sds = [priors.for_component(t.label) for t in self.var_terms]
        self.layout = Layout([(t.var_name, "log", ()) for t in self.var_terms])
        self.coords = coords(design)
        self.dims = lay.dims
        self.derived = [
            (name, () if basis is None else (basis.shape[0],)) for name, _, _, basis in lay.blocks
        ]
        st, f64, i64 = lay.stats, np.float64, np.int64
        p, G, K = lay.p, lay.n_group.size, len(lay.stats["m"])
        s0 = lay.prior_sd
        a = {
            "fam": np.array([FAMILIES[q.family] for q in sds], dtype=i64),
            "pscale": np.array([q.scale * design.y_sd for q in sds], dtype=f64),
            "pnu": np.array([q.nu for q in sds], dtype=f64),
            "pconst": np.array([q.log_normaliser(design.y_sd) for q in sds], dtype=f64),
            "i_item": labels.index(lay.item.label) if lay.item is not None else -1,
            "i_cell": labels.index(lay.cell.label),
            "i_res": labels.index(lay.residual.label) if lay.residual is not None else -1,
            "n_group": lay.n_group.astype(f64),
            "prec0": 1.0 / s0**2,
            "A": np.ascontiguousarray(st["A"].reshape(G, p * p)),
            "xy": np.ascontiguousarray(st["xy"]),
            "yy": np.asarray(st["yy"], dtype=f64),
            "N": np.asarray(st["N"], dtype=f64),
            "T": np.ascontiguousarray(st["T"].reshape(K * G * G, p * p)),
            "U": np.ascontiguousarray(st["U"].reshape(K * G * G, p)),
            "TT": np.ascontiguousarray(st["TT"].reshape(K, G * G)),
            "m": np.ascontiguousarray(st["m"], dtype=f64),
            "items": np.asarray(st["items"], dtype=f64),
            "Aw": np.ascontiguousarray(st["within_A"].ravel(), dtype=f64),
            "xyw": np.ascontiguousarray(st["within_xy"], dtype=f64),
            "within_dof": float(st["within_dof"]),
            "within_ss": float(st["within_ss"]),
            "const": float(-0.5 * (2.0 * np.log(s0).sum() + st["n_cells"] * _LOG_2PI)),
        }
        self._args = tuple(a[name] for name in KERNEL_ARGUMENTS)
        self._coef_args = tuple(a[name] for name in COEFFICIENT_ARGUMENTS)

    def logp_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Log density and gradient at unconstrained ``x``."""
        return collapsed_logp_grad(np.ascontiguousarray(x, dtype=np.float64), *self._args)

    def callback(self) -> tuple:
        """The kernel as nutpie's C callbacks (:mod:`bayes_tee.likelihoods.kernels.callbacks`): log
        density, expand, the argument table and the arrays it points into; nothing compiled per
        layout.
        """
        return (callback("collapsed"), callback("copy"), *pack(self._args, COLLAPSED_KINDS))

    def derive_draws(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """The fixed coefficients of every row of ``X`` (draws by ``ndim``): ``m_0 + H^-1 r +
        L^-T zeta``, a draw from their conditional posterior given the SDs, as the reported
        ``mu``, level effects and slopes. ``zeta`` is standard normal, from a generator seeded by
        the draws of ``X`` themselves: the same SD draws (a seeded fit) give the same coefficients.
        """
        X = np.ascontiguousarray(np.atleast_2d(X), dtype=np.float64)
        seed = int.from_bytes(hashlib.sha256(X.tobytes()).digest()[:8], "little")
        Z = np.random.default_rng(seed).standard_normal((X.shape[0], self.lay.p))
        beta = collapsed_coefficients(X, Z, self.lay.prior_mean, *self._coef_args)
        out = {}
        for name, start, size, basis in self.lay.blocks:
            v = beta[:, start : start + size]
            out[name] = v @ basis.T if basis is not None else v[:, 0]
        return out

    def derive(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """:meth:`derive_draws` at one point."""
        return {name: v[0] for name, v in self.derive_draws(np.asarray(x)[None]).items()}

    def initial_point(self, rng: np.random.Generator) -> np.ndarray:
        """Prior-scale SDs, jittered by ``Uniform(-1, 1)`` on the log scale as nutpie does."""
        x = rng.uniform(-1.0, 1.0, size=self.layout.ndim)
        for t, prior in zip(self.var_terms, self.sd_priors):
            x[self.layout.slices[t.var_name]] += np.log(prior.support_point(self.design.y_sd))
        return x


def collapsed_density(design: Design, priors: PriorSpec) -> CollapsedDensity:
    """The ``collapsed`` likelihood as a NumPy density."""
    return CollapsedDensity(design, priors)
