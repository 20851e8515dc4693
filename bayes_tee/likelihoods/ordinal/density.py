"""The ordinal GLMM as a NumPy/numba density: nothing to compile per layout.

The same model, parameter names and transforms as
:func:`~bayes_tee.likelihoods.ordinal.model.ordinal_model`: the logit GLMM's latent predictor
(:class:`~bayes_tee.likelihoods.logit_glmm.density.GlmmDensity`) with per-cell category counts and
the cutpoint gaps of each threshold set, evaluated by
:func:`~bayes_tee.likelihoods.ordinal.kernel.ordinal_logp_grad`. The tests hold its log
density and gradient equal to the PyMC model's.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo").assign(y=lambda d: pd.qcut(d.score, 5, labels=False) + 1)
>>> d = bt.validate_design(df, outcome="y", item="item", prompt="prompt", judge="judge",
...                        family="ordinal")
>>> dens = OrdinalDensity(d, bt.priors.get_prior())
>>> value, grad = dens.logp_grad(dens.initial_point(np.random.default_rng(1)))
>>> grad.shape == (dens.layout.ndim,)
True
>>> dens.derive(dens.initial_point(np.random.default_rng(1)))["cutpoints"].shape
(1, 4)
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd  # noqa: F401 - the module example's

from ..._core.density import zerosum_basis
from ..._core.exceptions import ArgumentError
from ..._core.priors import PriorSpec
from ...design.design import Design
from ...families import get_family
from ..kernels.callbacks import ORDINAL_KINDS, callback, pack
from ..logit_glmm.density import GlmmDensity
from ..logit_glmm.layout import glmm_terms
from .kernel import cell_category_probabilities, cutpoints, derived_draws, ordinal_logp_grad
from .layout import binary_view, ordinal_data

#: The kernel's arguments after ``x``, in order.
KERNEL_ARGUMENTS = tuple(inspect.signature(ordinal_logp_grad.py_func).parameters)[1:]
#: :func:`cell_category_probabilities`' arguments after ``x`` and ``n_var``.
PROBABILITY_ARGUMENTS = tuple(inspect.signature(cell_category_probabilities.py_func).parameters)[2:]
#: Kernel codes of the links.
LINKS = {"logit": 0, "probit": 1}
#: The cutpoint gaps' coordinate and the cutpoints' (dims of the draws).
GAP_DIMS, CUT_DIMS = ("threshold_set", "gap"), ("threshold_set", "cutpoint")


class OrdinalDensity(GlmmDensity):
    """Log density of the cumulative-link GLMM (cell effect sampled).

    Parameters
    ----------
    design : Design
        Validated with ``family="ordinal"`` or ``"ordinal_probit"``.
    priors : PriorSpec
        As for the PyMC model (SD scales in units of the latent scale).
    """

    def __init__(self, design: Design, priors: PriorSpec) -> None:
        if design.outcome_levels is None:
            raise ArgumentError("OrdinalDensity needs a design validated with family='ordinal'.")
        self.link = get_family(design.family).link
        self.data = data = ordinal_data(design, self.link)
        super().__init__(design, priors, glmm_terms(binary_view(design)), data["mu0"])
        K = data["K"]
        self.coords["threshold_set"] = data["set_labels"]
        self.coords["gap"] = [f"{k + 1}-{k + 2}" for k in range(K - 2)]
        self.coords["cutpoint"] = [f"{k}|{k + 1}" for k in range(1, K)]
        self.dims["cutpoint_gaps"] = GAP_DIMS
        if data["spread"]:
            self.dims["judge_log_spread"] = ("judge",)
        a = self._pack | {
            "counts": data["counts"],
            "cell_set": data["cell_set"],
            "gap_off": self.layout.slices["cutpoint_gaps"].start,
            "n_sets": data["n_sets"],
            "gap_mu": data["gap_mu"],
            "gap_sd": data["gap_sd"],
            "link": LINKS[self.link],
            "n_var": len(self.var_terms),
            "K": K,
            "spread_off": self.layout.slices["judge_log_spread"].start if data["spread"] else -1,
            "spread_basis": zerosum_basis(data["n_judges"]) if data["spread"] else np.zeros((1, 0)),
            "cell_judge": data["cell_judge"],
            "spread_sd": data["spread_sd"],
        }
        self._args = tuple(a[name] for name in KERNEL_ARGUMENTS)
        self._prob_args = tuple(a[name] for name in PROBABILITY_ARGUMENTS)
        n = design.cells["n"].to_numpy().astype(np.float64)
        self._weights = n / n.sum()
        self._values = np.asarray(design.outcome_levels, float)
        self.dims["cutpoints"] = CUT_DIMS
        self.derived = [("mu", ()), ("score_panel", ()), ("cutpoints", (data["n_sets"], K - 1))]

    def extra_params(self) -> list[tuple[str, str, tuple[int, ...]]]:
        """The cutpoint gaps' logs, ``K - 2`` per threshold set; each judge's log spread (zero-sum)
        with ``spread="judge"``.
        """
        d = self.data
        gaps = [("cutpoint_gaps", "real", (d["n_sets"], d["K"] - 2))]
        return gaps + ([("judge_log_spread", "zerosum", (d["n_judges"],))] if d["spread"] else [])

    def logp_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Log density and gradient at unconstrained ``x``."""
        return self._mapped(ordinal_logp_grad, x, self._args)

    def callback(self) -> tuple:
        """The kernel as nutpie's C callbacks (:mod:`.kernels.callbacks`): log density, expand,
        the argument table and the arrays it points into.
        """
        return (callback("ordinal"), callback("copy"), *pack(self._args + self._crossed, ORDINAL_KINDS))

    def derive(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """The grand mean ``mu``, the cutpoints and ``score_panel``: the panel's expected score
        over the observed calls.
        """
        x = np.ascontiguousarray(x, dtype=np.float64)
        p, mu = cell_category_probabilities(x, self._n_var, *self._prob_args)
        d = self.data
        cut = cutpoints(x, self.layout.slices["cutpoint_gaps"].start, d["n_sets"], d["K"], 0.0, 1.0)[0]
        score = float(self._weights @ (p @ self._values))
        return {"mu": np.asarray(mu), "score_panel": np.asarray(score), "cutpoints": cut}

    def derive_draws(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """:meth:`derive` for every row of ``X`` (draws by ``ndim``) at once."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        gap_off = self.layout.slices["cutpoint_gaps"].start
        mu, score, cut = derived_draws(
            X, self._n_var, self._prob_args, self._weights, self._values, gap_off, self.data["n_sets"]
        )
        return {"mu": mu, "score_panel": score, "cutpoints": cut}

    def initial_point(self, rng: np.random.Generator) -> np.ndarray:
        """The GLMM's start, the gaps at their prior's centre (jittered as nutpie does)."""
        x = super().initial_point(rng)
        x[self.layout.slices["cutpoint_gaps"]] += self.data["gap_mu"]
        return x


def ordinal_density(design: Design, priors: PriorSpec) -> OrdinalDensity:
    """The ``ordinal`` likelihood as a NumPy density."""
    return OrdinalDensity(design, priors)
