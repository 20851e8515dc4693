"""The per-question table both noise analyses read: each model's correct predictions and
predictions per question (:func:`question_table`), checked once.

>>> import bayes_tee as bt
>>> q = bt.noise.question_table(df, model="model", question="example_id", correct="correct")  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError, DesignWarning


@dataclass(frozen=True)
class QuestionTable:
    """Per-question summaries, questions x models: count K, mean, within-question variance."""

    models: list[str]
    questions: np.ndarray
    count: np.ndarray  # (N, M) samples per question
    mean: np.ndarray  # (N, M) mean score per question
    within: np.ndarray  # (N, M) within-question variance, divide by K
    correct: np.ndarray | None  # (N, M) successes when the metric is binary, else None

    @property
    def n_questions(self) -> int:
        """Questions every model answered."""
        return self.mean.shape[0]


def _require(df: pd.DataFrame, cols: dict[str, str | None]) -> None:
    missing = {role: c for role, c in cols.items() if c is not None and c not in df.columns}
    if missing:
        listed = ", ".join(f"{role}={c!r}" for role, c in missing.items())
        raise DesignError(
            f"Column(s) not in the data: {listed}. Pass the names of your columns, e.g. "
            f"model='model', question='example_id', correct='correct'. Columns present: "
            f"{list(df.columns)}."
        )


def question_table(
    df: pd.DataFrame, *, model: str, question: str, correct: str, count: str | None = None
) -> QuestionTable:
    """Aggregate ``df`` to per-(question, model) count, mean and within-question variance.

    With ``count``: each row holds ``correct`` successes out of ``count`` samples (binary
    metric). Without: each row is one sampled prediction with its metric in ``correct``
    (0/1 or any real number). Questions not scored by every model are dropped with a
    :class:`~bayes_tee.DesignWarning` that says how many and for which models.
    """
    _require(df, {"model": model, "question": question, "correct": correct, "count": count})
    cols = [model, question, correct] + ([count] if count else [])
    d = df[cols]
    bad = d[correct].isna() | (d[count].isna() if count else False)
    if bad.any():
        raise DesignError(
            f"{int(bad.sum())} row(s) have a missing {correct!r}"
            + (f" or {count!r}" if count else "")
            + ". Drop or fill them before the analysis (a missing score is not a wrong answer)."
        )
    if count:
        k = d[count].to_numpy(float)
        c = d[correct].to_numpy(float)
        if (k < 1).any() or (c < 0).any() or (c > k).any() or (np.round(k) != k).any():
            raise DesignError(
                f"{count!r} must be a positive whole number of samples and {correct!r} a number "
                f"of successes between 0 and {count!r}; check the rows where that fails."
            )
        g = d.assign(_k=k, _c=c).groupby([question, model], sort=True, observed=True)[["_k", "_c"]].sum()
        mean = g["_c"] / g["_k"]
        within = mean * (1 - mean)
        agg = pd.DataFrame({"k": g["_k"], "mean": mean, "within": within, "c": g["_c"]})
    else:
        x = pd.to_numeric(d[correct], errors="coerce")
        if x.isna().any():
            raise DesignError(f"{correct!r} must be numeric (a 0/1 outcome or a real-valued metric).")
        g = d.assign(_x=x).groupby([question, model], sort=True, observed=True)["_x"]
        agg = pd.DataFrame({"k": g.size().astype(float), "mean": g.mean(), "within": g.var(ddof=0)})
        binary = bool(x.isin([0, 1]).all())
        agg["c"] = agg["k"] * agg["mean"] if binary else np.nan
    wide = agg.unstack(model)
    models = list(wide["mean"].columns)
    if len(models) < 1:
        raise DesignError("No models in the data.")
    complete = wide["mean"].notna().all(axis=1)
    if not complete.all():
        lacking = wide["mean"].columns[wide["mean"].isna().any(axis=0)]
        warnings.warn(
            f"{int((~complete).sum())} of {len(complete)} question(s) are not scored by every "
            f"model (missing for: {', '.join(map(str, lacking[:5]))}"
            f"{' ...' if len(lacking) > 5 else ''}); they are dropped so that every pair is "
            "compared on the same questions.",
            DesignWarning,
            stacklevel=3,
        )
        wide = wide[complete]
    if len(wide) < 2:
        raise DesignError(f"Need at least 2 questions scored by every model, got {len(wide)}.")
    c = wide["c"].to_numpy(float)
    return QuestionTable(
        models=[str(m) for m in models],
        questions=wide.index.to_numpy(),
        count=wide["k"].to_numpy(float),
        mean=wide["mean"].to_numpy(float),
        within=wide["within"].to_numpy(float),
        correct=None if np.isnan(c).any() else c,
    )
