"""Bayesian noise components: question difficulty as a hierarchical Beta-Binomial.

Model ``m`` answers question ``i`` correctly ``c_im`` times out of ``K_im``. Its expected
accuracy on that question, ``u_im``, is drawn from a Beta distribution (Wang 2025 Sec. 4.2.1 finds
``Beta(p, 1 - p)`` fits real evals); ``c_im ~ Binomial(K_im, u_im)``. The noise components of
Wang (2025) are then functions of the ``u``: data variance ``Var_i(u_im)``, prediction variance
``mean_i u_im (1 - u_im)``, paired data variance ``Var_i(u_im - u_in)``, all over the N questions
at hand (the quantities the exact estimator estimates). Their posteriors are never negative and
stay honest when K is small, where the unbiased estimator can go below zero.

``classes=1`` gives each model its own Beta (mean ``mu_m``, concentration ``kappa_m``). With
``classes=J > 1`` the questions fall into J latent difficulty classes shared by every model
(easy questions are easy for all), each model with its own Beta per class; this carries the
cross-model correlation that pairing relies on, so paired data variances at small K are not
inflated by treating the two models' question accuracies as independent. The Beta is conjugate
to the binomial, so only the hyperparameters are sampled (NUTS on the Beta-Binomial marginal
likelihood, classes summed out); the ``u`` and class labels are drawn afterwards from their
exact conditionals, vectorized over draws.

>>> nb = bt.noise.paired(df, count="count").bayes(classes=3, random_seed=1)  # doctest: +SKIP
>>> nb.pairs(within=0.2)                                                      # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import special

from .._core import diagnostics as diag
from .._core.exceptions import ArgumentError, DesignError, DesignWarning
from .._core.intervals import add_interval
from .._core.sampling import sample
from .table import QuestionTable


class PairedNoise(Protocol):
    """What the Bayesian model reads of the exact analysis (:class:`bayes_tee.noise.exact.PairedNoise`):
    its question table, models and estimates.
    """

    table: QuestionTable
    models_: list

    def models(self) -> pd.DataFrame: ...  # noqa: D102

    def pairs(self) -> pd.DataFrame: ...  # noqa: D102


__all__ = ["NoisePosterior", "fit"]

_COMPONENTS = ("accuracy", "total", "data", "pred")


def build_model(
    table: QuestionTable, classes: int = 1, kappa_prior: tuple[float, float] = (0.0, 1.5)
) -> pm.Model:
    """The Beta-Binomial model of :mod:`bayes_tee.noise.bayes` as a PyMC model.

    ``log kappa ~ Normal(*kappa_prior)``: the default centres the concentration on 1, the
    ``Beta(p, 1 - p)`` of Wang (2025), with 95% prior mass between 0.05 and 19.
    """
    c = table.correct
    k = table.count
    n_m = c.shape[1]
    coords = {"model": table.models, "cls": np.arange(classes)}
    with pm.Model(coords=coords) as model:
        if classes == 1:
            mu = pm.Beta("mu", 1.0, 1.0, dims="model")
            log_kappa = pm.Normal("log_kappa", *kappa_prior, dims="model")
            kappa = pt.exp(log_kappa)
            # each model's distinct (correct, count) pairs once, weighted by their questions:
            # the same likelihood, in 3 terms a model instead of N at K = 2
            model_of, cu, ku, weight = _distinct_outcomes(c, k)
            a, b = (mu * kappa)[model_of], ((1 - mu) * kappa)[model_of]
            loglik = (weight * _log_beta_binomial(cu, ku, a, b, kappa[model_of])).sum()
            pm.Potential("loglik", loglik + _log_binomial_coefficients(c, k))
            pm.Deterministic("mean_accuracy", mu, dims="model")
            pm.Deterministic("spread", mu * (1 - mu) / (kappa + 1), dims="model")
        else:
            w = pm.Dirichlet("w", np.ones(classes), dims="cls")
            level = pm.Normal(
                "level",
                0.0,
                3.0,
                dims="cls",
                transform=pm.distributions.transforms.ordered,
                initval=np.linspace(-2, 2, classes),
            )
            ability = pm.ZeroSumNormal("ability", sigma=2.0, dims="model")
            tau = pm.HalfNormal("tau", 1.0)
            z = pm.Normal("z", 0.0, 1.0, dims=("model", "cls"))
            mu = pm.Deterministic(
                "mu", pm.math.sigmoid(level[None, :] + ability[:, None] + tau * z), dims=("model", "cls")
            )
            log_kappa = pm.Normal("log_kappa", *kappa_prior, dims=("model", "cls"))
            kappa = pt.exp(log_kappa)
            a, b = mu * kappa, (1 - mu) * kappa  # (model, class)
            # questions with the same outcomes under every model enter once, weighted
            rows, weight = np.unique(np.hstack([c, k]), axis=0, return_counts=True)
            cc, kk = rows[:, :n_m, None], rows[:, n_m:, None]
            per_class = _log_beta_binomial(cc, kk, a, b, kappa).sum(axis=1)  # (question, class)
            loglik = (weight * pm.math.logsumexp(per_class + pt.log(w)[None, :], axis=1)).sum()
            pm.Potential("loglik", loglik + _log_binomial_coefficients(c, k))
            mean = (w * mu).sum(axis=1)
            second = (w * (mu * (1 - mu) / (kappa + 1) + mu**2)).sum(axis=1)
            pm.Deterministic("mean_accuracy", mean, dims="model")
            pm.Deterministic("spread", second - mean**2, dims="model")
    return model


def _distinct_outcomes(c: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each model's distinct (correct, count) pairs: model index, correct, count, questions."""
    n_m = c.shape[1]
    rows = np.column_stack([np.tile(np.arange(n_m), c.shape[0]), c.ravel(), k.ravel()])
    rows, weight = np.unique(rows, axis=0, return_counts=True)
    return rows[:, 0].astype(int), rows[:, 1], rows[:, 2], weight


def _log_binomial_coefficients(c: np.ndarray, k: np.ndarray) -> float:
    """``sum log C(K, c)``: the constant that makes the log density the Beta-Binomial's own."""
    return float((special.gammaln(k + 1) - special.gammaln(c + 1) - special.gammaln(k - c + 1)).sum())


def _log_beta_binomial(c, k, a, b, kappa):
    """Beta-Binomial log-likelihood up to the binomial coefficient (:func:`_log_binomial_coefficients`):
    ``log B(c + a, K - c + b) - log B(a, b)`` as gammaln terms, with ``kappa = a + b``.
    """
    return (
        pt.gammaln(c + a)
        + pt.gammaln(k - c + b)
        - pt.gammaln(k + kappa)
        - pt.gammaln(a)
        - pt.gammaln(b)
        + pt.gammaln(kappa)
    )


def _flat(idata, name: str) -> np.ndarray:
    x = idata.posterior[name]
    return x.stack(sample=("chain", "draw")).transpose("sample", ...).to_numpy()


def draw_question_accuracies(
    idata, table: QuestionTable, classes: int, n_draws: int, rng: np.random.Generator, chunk: int = 25
) -> np.ndarray:
    """Posterior draws of ``u`` (draws, questions, models) from their exact conditionals."""
    mu = _flat(idata, "mu")
    kappa = np.exp(_flat(idata, "log_kappa"))
    if classes == 1:
        mu, kappa = mu[:, :, None], kappa[:, :, None]
        w = np.ones((mu.shape[0], 1))
    else:
        w = _flat(idata, "w")
    total = mu.shape[0]
    pick = np.linspace(0, total - 1, min(n_draws, total)).round().astype(int)
    c, k = table.correct, table.count
    out = np.empty((len(pick), c.shape[0], c.shape[1]))
    for start in range(0, len(pick), chunk):
        idx = pick[start : start + chunk]
        a = (mu[idx] * kappa[idx])[:, None]  # (s, 1, model, cls)
        b = ((1 - mu[idx]) * kappa[idx])[:, None]
        cc, kk = c[None, :, :, None], k[None, :, :, None]
        if classes == 1:
            z = np.zeros((len(idx), c.shape[0]), dtype=int)
        else:
            loglik = (special.betaln(cc + a, kk - cc + b) - special.betaln(a, b)).sum(axis=2)
            logr = loglik + np.log(w[idx])[:, None, :]  # (s, question, cls)
            prob = np.exp(logr - logr.max(axis=2, keepdims=True))
            cdf = np.cumsum(prob / prob.sum(axis=2, keepdims=True), axis=2)
            z = (rng.random(cdf.shape[:2])[:, :, None] > cdf).sum(axis=2)
            z = np.minimum(z, classes - 1)
        # each question's class parameters, (s, question, model)
        a_z = np.take_along_axis(a, z[:, :, None, None], axis=3)[..., 0]
        b_z = np.take_along_axis(b, z[:, :, None, None], axis=3)[..., 0]
        out[start : start + len(idx)] = rng.beta(a_z + c, b_z + k - c)
    return out


class NoisePosterior(diag.FitResult):
    """Posterior of the Wang (2025) noise components (see :func:`fit`)."""

    def __init__(self, idata, u: np.ndarray, exact: PairedNoise, classes: int, info: dict) -> None:
        self.idata = idata
        self.exact = exact
        self.classes = classes
        self.info = info
        self.n_questions = u.shape[1]
        acc = u.mean(axis=1)  # (s, M)
        centred = u - acc[:, None, :]
        self._cov = np.einsum("sim,sin->smn", centred, centred) / self.n_questions
        self._pred = (u * (1 - u)).mean(axis=1)
        self._acc = acc

    @property
    def models_(self) -> list[str]:
        """The models, in the exact analysis' order."""
        return self.exact.models_

    def diagnostics(self) -> dict:
        """R-hat, bulk/tail ESS and divergences over each model's mean accuracy and spread.

        Those two summaries do not depend on how the latent classes are labelled, so they are
        the right quantities to check when ``classes > 1``.
        """
        return self.convergence()

    def _convergence_vars(self) -> list[str]:
        return ["mean_accuracy", "spread"]

    def draws(self) -> xr.DataArray:
        """Per-model component draws, dims ``(draw, model, component)``: accuracy, total, data,
        pred (variances of one prediction per question).
        """
        data = np.einsum("smm->sm", self._cov)
        arr = np.stack([self._acc, data + self._pred, data, self._pred], axis=-1)
        return xr.DataArray(
            arr,
            dims=("draw", "model", "component"),
            coords={"model": self.models_, "component": list(_COMPONENTS)},
        )

    def models(self, level: float = 0.9) -> pd.DataFrame:
        """Per model: posterior median and ``level`` interval of SE, SE_data and SE_pred, with
        the exact (small-K corrected) estimate beside each.

        >>> nb.models()  # doctest: +SKIP
        """
        d = self.draws()
        ex = self.exact.models().set_index("model").loc[self.models_]
        n = self.n_questions
        out = pd.DataFrame({"model": self.models_, "accuracy": ex["accuracy"].to_numpy()})
        for name, comp in (("SE", "total"), ("SE_data", "data"), ("SE_pred", "pred")):
            se = np.sqrt(d.sel(component=comp).to_numpy() / n)
            add_interval(out, name, se, level)
            out[f"{name}_exact"] = ex[name].to_numpy()
        out["K"] = ex["K"].to_numpy()
        return self._stamp(out.sort_values("accuracy", ascending=False, ignore_index=True))

    def pairs(self, within: float | None = None, level: float = 0.9) -> pd.DataFrame:
        """Every pair (the more accurate as ``model_a``): posterior median and interval of the
        paired SE_total, SE_data and SE_pred, the exact estimates beside them.

        With ``classes=1`` each model's question accuracies are independent a priori, so the
        posterior of a pair's data variance carries both models' per-question uncertainty:
        with few samples per question (K < 20) it overstates the paired data SE (on MATH500
        subsampled to K=3 its 90% interval held the full-K value for 10% of pairs). A
        :class:`~bayes_tee.DesignWarning` says so; shared difficulty classes
        (``classes >= 3``) or the exact estimator are the better tools for pairs at small K.
        """
        if self.classes == 1 and self.exact.table.count.min() < 20:
            warnings.warn(
                "Paired data SEs from independent per-model Beta-Binomials (classes=1) are "
                "overstated when K is small: the model ignores that the two models share "
                "question difficulty. Refit with classes=3 or more, or read the exact columns.",
                DesignWarning,
                stacklevel=2,
            )
        ex = self.exact.pairs(within=within)
        idx = {m: i for i, m in enumerate(self.models_)}
        ia = ex["model_a"].map(idx).to_numpy()
        ib = ex["model_b"].map(idx).to_numpy()
        cov = self._cov
        data = cov[:, ia, ia] + cov[:, ib, ib] - 2 * cov[:, ia, ib]
        pred = self._pred[:, ia] + self._pred[:, ib]
        n = self.n_questions
        out = ex[["model_a", "model_b", "acc_a", "acc_b", "diff"]].copy()
        for name, v in (("SE_total", data + pred), ("SE_data", data), ("SE_pred", pred)):
            add_interval(out, name, np.sqrt(v / n), level)
            out[f"{name}_exact"] = ex[name].to_numpy()
        return self._stamp(out)

    def __repr__(self) -> str:
        d = self.diagnostics()
        return (
            f"NoisePosterior({len(self.models_)} models x {self.n_questions} questions, "
            f"classes={self.classes}, {self._acc.shape[0]} draws; "
            f"{'diagnostics ok' if d['ok'] else diag.message(d)})"
        )


def fit(
    exact: PairedNoise,
    *,
    classes: int = 1,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    target_accept: float = 0.9,
    n_draws: int = 1000,
    random_seed: int | None = None,
    progressbar: bool = False,
) -> NoisePosterior:
    """Fit the Beta-Binomial noise model and draw the question accuracies.

    Parameters
    ----------
    exact : PairedNoise
        The exact analysis (:func:`bayes_tee.noise.exact.paired`, binary metric required): its
        question table is fitted and its estimates (with its ``small_k_correction``) are shown
        beside the posterior (``*_exact`` columns). ``nz.bayes(...)`` calls this.
    classes : int
        Latent question-difficulty classes shared across models (1 = independent models).
    draws, tune, chains, target_accept : sampler settings (nutpie).
    n_draws : int
        Posterior draws of the question accuracies used for the components (thinned evenly).
    random_seed : int, optional

    Examples
    --------
    >>> nb = fit(nz, classes=3, random_seed=1)  # doctest: +SKIP
    """
    table = exact.table
    if table.correct is None:
        raise DesignError(
            "The Bayesian noise model needs a binary metric (correct out of count); the "
            "column holds real values. Use the exact estimator (PairedNoise) for them."
        )
    if classes < 1 or int(classes) != classes:
        raise ArgumentError(f"classes must be a positive integer, got {classes!r}.")
    model = build_model(table, int(classes))
    idata, timing = sample(model, "nutpie", chains, tune, draws, target_accept, random_seed, progressbar)
    rng = np.random.default_rng(random_seed)
    u = draw_question_accuracies(idata, table, int(classes), n_draws, rng)
    info = {"classes": int(classes), "chains": chains, "draws": draws, "tune": tune, **timing["durations"]}
    post = NoisePosterior(idata, u, exact, int(classes), info)
    diag.warn_if_failed(post.diagnostics(), stacklevel=2)
    return post
