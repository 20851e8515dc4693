"""Prediction noise vs data noise, for every model and every model pair (Wang 2025, Sec. 2-3).

A model answers N questions, K sampled predictions each. Its mean score varies because the N
questions are a sample (data noise, ``Var_x[E_eps[A]]``) and because each prediction is a draw
(prediction noise, ``E_x[Var_eps[A]]``); the two add up to the total noise (law of total
variance). Comparing two models on the same questions (paired), the data noise of the
difference shrinks by the covariance of their per-question accuracies, which is why paired
comparisons are several times more sensitive than unpaired ones.

The estimators are exact and unbiased in K (the small-K correction of Wang (2025) Sec. 3.3): the
naive per-question variance of a mean of K predictions overstates the data variance by
``E_x[Var_eps]/K``, a bias that does not shrink with N. Everything is computed for all pairs at
once from an N x M matrix of per-question means, so tens of models by hundreds of questions
take milliseconds. :meth:`PairedNoise.bayes` adds posterior intervals from a hierarchical
Beta-Binomial model of question difficulty (:mod:`bayes_tee.noise.bayes`).

>>> import bayes_tee as bt
>>> nz = bt.noise.paired(df, model="model", question="example_id", correct="correct",
...                      count="count")                           # doctest: +SKIP
>>> nz.pairs().head()                                            # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..plots import plot_paired_noise
from . import bayes
from .table import QuestionTable, question_table

__all__ = ["PairedNoise", "beta_theory_se", "paired"]


def _k_bias(q: QuestionTable) -> np.ndarray:
    """Per model: ``mean_i Var_eps / (K_i - 1)``, the small-K bias of the naive data variance.

    NaN for a model with a single sample on some question (data and prediction noise are then
    not separable; the total still is).
    """
    k = q.count
    with np.errstate(divide="ignore", invalid="ignore"):
        per_q = np.where(k > 1, q.within / (k - 1), np.nan)
    return per_q.mean(axis=0)


def beta_theory_se(accuracy: np.ndarray | float, n_questions: int) -> np.ndarray:
    """Paired total SE predicted by the Beta theory (Wang 2025 Sec. 4.2.1, Eq. 24).

    If each question's expected accuracy is ``u ~ Beta(p, 1 - p)`` and both models draw
    independent predictions from it, ``E_x[Var(A - B)] = E[2 u (1 - u)] = p (1 - p)``, so the
    paired SE of one prediction per question is ``sqrt(p (1 - p) / N)``.

    >>> float(beta_theory_se(0.5, 100))
    0.05
    """
    p = np.asarray(accuracy, dtype=float)
    return np.sqrt(p * (1 - p) / n_questions)


class PairedNoise:
    """Noise components of every model and every pair (see :func:`paired`)."""

    def __init__(self, table: QuestionTable, *, small_k_correction: bool = True) -> None:
        self.table = table
        self.small_k_correction = small_k_correction
        q = table
        n = q.n_questions
        self.accuracy = q.mean.mean(axis=0)
        centred = q.mean - self.accuracy
        self._cov = centred.T @ centred / n  # (M, M): Cov_x of per-question means
        self._pred = q.within.mean(axis=0)  # naive E_x[Var_eps]
        bias = _k_bias(q) if small_k_correction else np.zeros(len(q.models))
        self._bias = bias
        self._total = np.diag(self._cov) + self._pred  # Var_{x,eps}[A]

    @property
    def models_(self) -> list[str]:
        """The models, in data order."""
        return self.table.models

    @property
    def n_questions(self) -> int:
        """Questions every model answered."""
        return self.table.n_questions

    # -- per model -------------------------------------------------------------------------
    def variances(self) -> pd.DataFrame:
        """Per model: total, data and prediction variance of one prediction per question."""
        data = np.diag(self._cov) - self._bias
        pred = self._pred + self._bias
        return pd.DataFrame(
            {
                "model": self.models_,
                "total": self._total,
                "data": data,
                "pred": pred,
                "mean_count": self.table.count.mean(axis=0),
            }
        )

    def models(self) -> pd.DataFrame:
        """Per model: accuracy, SE (total), SE_data, SE_pred and the mean number of samples.

        SE is ``sqrt(variance / N)`` for one prediction per question (Wang 2025 Eq. 12-14). A
        negative unbiased data variance (possible when K is small) is truncated to SE_data 0,
        as the published tables do; the signed variance is in :meth:`variances`.

        >>> nz.models().sort_values("accuracy", ascending=False).head()  # doctest: +SKIP
        """
        v = self.variances()
        n = self.n_questions
        out = pd.DataFrame({"model": self.models_, "accuracy": self.accuracy})
        for name, col in (("SE", "total"), ("SE_data", "data"), ("SE_pred", "pred")):
            out[name] = _se(v[col].to_numpy(), n)
        out["K"] = v["mean_count"]
        return out.sort_values("accuracy", ascending=False, ignore_index=True)

    # -- pairs -----------------------------------------------------------------------------
    def pair_matrices(self) -> dict[str, np.ndarray]:
        """(M, M) matrices of the paired total, data and prediction variances (Table 2)."""
        cov = self._cov
        d = np.diag(cov)
        b = self._bias
        total = self._total[:, None] + self._total[None, :] - 2 * cov
        data = d[:, None] + d[None, :] - 2 * cov - b[:, None] - b[None, :]
        pred = (self._pred + b)[:, None] + (self._pred + b)[None, :]
        return {"total": total, "data": data, "pred": pred}

    def pairs(self, within: float | None = None) -> pd.DataFrame:
        """Every pair of models, the more accurate one as ``model_a``.

        Columns: ``model_a, model_b, acc_a, acc_b, diff`` (acc_a - acc_b), ``SE_total,
        SE_data, SE_pred`` (paired, Wang (2025) Table 2), ``SE_unpaired``, ``SE_signtest``
        (sqrt of the expected number of disagreements, / N), ``SE_beta`` (the Beta-theory
        prediction at the pair's mean accuracy), ``corr`` (of per-question accuracies),
        ``z = diff / SE_total`` and its two-sided normal ``p_value`` (equivalent to the sign
        test, Wang (2025) Sec. 3.5).

        Parameters
        ----------
        within : float, optional
            Keep only pairs whose accuracies differ by at most this much.

        >>> nz.pairs(within=0.2).sort_values("z").head()  # doctest: +SKIP
        """
        m = self.pair_matrices()
        acc = self.accuracy
        ia, ib = np.triu_indices(len(acc), k=1)
        swap = acc[ia] < acc[ib]
        ia, ib = np.where(swap, ib, ia), np.where(swap, ia, ib)
        n = self.n_questions
        p = self.table.mean
        disagree = (p[:, ia] * (1 - p[:, ib]) + p[:, ib] * (1 - p[:, ia])).sum(axis=0)
        sd = np.sqrt(np.diag(self._cov))
        with np.errstate(divide="ignore", invalid="ignore"):
            corr = self._cov[ia, ib] / (sd[ia] * sd[ib])
        diff = acc[ia] - acc[ib]
        se_total = _se(m["total"][ia, ib], n)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = diff / se_total
        out = pd.DataFrame(
            {
                "model_a": np.asarray(self.models_, dtype=object)[ia],
                "model_b": np.asarray(self.models_, dtype=object)[ib],
                "acc_a": acc[ia],
                "acc_b": acc[ib],
                "diff": diff,
                "SE_total": se_total,
                "SE_data": _se(m["data"][ia, ib], n),
                "SE_pred": _se(m["pred"][ia, ib], n),
                "SE_unpaired": np.sqrt((self._total[ia] + self._total[ib]) / n),
                "SE_signtest": np.sqrt(disagree) / n,
                "SE_beta": beta_theory_se((acc[ia] + acc[ib]) / 2, n),
                "corr": corr,
                "z": z,
                "p_value": 2 * stats.norm.sf(np.abs(z)),
            }
        )
        if within is not None:
            out = out[out["diff"] <= within]
        return out.sort_values(["acc_a", "acc_b"], ascending=False, ignore_index=True)

    def bayes(self, **kwargs):
        """Posterior intervals for every noise component (:func:`bayes_tee.noise.bayes.fit`).

        >>> nb = nz.bayes(random_seed=1)   # doctest: +SKIP
        >>> nb.models()                    # doctest: +SKIP
        """
        return bayes.fit(self, **kwargs)

    def plot(self, *, within: float | None = 0.2, ax=None, **kwargs):
        """Wang (2025) Fig. 1: paired SEs against accuracy, with the Beta-theory curve."""
        grid = np.linspace(0.005, 0.995, 200)
        k = self.table.count
        return plot_paired_noise(
            self.pairs(within=within),
            (grid, beta_theory_se(grid, self.n_questions)),
            n_questions=self.n_questions,
            k_range=(float(k.min()), float(k.max())),
            within=within,
            ax=ax,
            **kwargs,
        )

    def __repr__(self) -> str:
        k = self.table.count
        return (
            f"PairedNoise({len(self.models_)} models x {self.n_questions} questions, "
            f"K {k.min():.0f}-{k.max():.0f}, small_k_correction={self.small_k_correction})"
        )


def _se(variance: np.ndarray, n: int) -> np.ndarray:
    """``sqrt(variance / N)``, a negative (unbiased) variance estimate truncated at zero."""
    v = np.asarray(variance, dtype=float)
    return np.sqrt(np.clip(v, 0, None) / n)


def paired(
    df: pd.DataFrame,
    *,
    model: str = "model",
    question: str = "question",
    correct: str = "correct",
    count: str | None = None,
    small_k_correction: bool = True,
) -> PairedNoise:
    """All-pairs paired noise analysis of question-level results (Wang 2025).

    Parameters
    ----------
    df : DataFrame
        Either one row per (model, question) with ``correct`` successes out of ``count``
        samples, or (``count=None``) one row per sampled prediction with its metric in
        ``correct`` (0/1 or real-valued). K may differ between models and questions.
    model, question, correct, count : str
        Column names.
    small_k_correction : bool
        Remove the ``E_x[Var_eps]/(K-1)`` bias from the data variance (Wang 2025 Eq. 23). The
        published per-model table of all-the-noises omits it; the pair table includes it.

    Returns
    -------
    PairedNoise
        ``.models()``, ``.pairs()``, ``.variances()``, ``.bayes()``, ``.plot()``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.beta(0.5, 0.5, size=200)
    >>> df = pd.DataFrame({"model": np.repeat(["a", "b"], 200), "question": np.tile(range(200), 2),
    ...                    "correct": rng.binomial(10, np.tile(u, 2)), "count": 10})
    >>> nz = paired(df, count="count")
    >>> row = nz.pairs().iloc[0]
    >>> bool(row.SE_total < row.SE_unpaired)
    True
    """
    table = question_table(df, model=model, question=question, correct=correct, count=count)
    return PairedNoise(table, small_k_correction=small_k_correction)
