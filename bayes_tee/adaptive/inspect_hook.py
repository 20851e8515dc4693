"""An Inspect AI early-stopping manager that stops a task's epochs once the posterior says so.

:class:`TEEEarlyStopping` implements ``inspect_ai.util.EarlyStopping`` (``start_task``,
``schedule_sample``, ``complete_sample``, ``complete_task``). While the task runs it collects
every scored (sample, epoch) (samples are the items, epochs the replicates), refits the TEE
model every ``every`` scores in a worker thread, and once the benchmark score's interval
half-width at ``level`` is at most ``target`` (:func:`bayes_tee.posterior.decision.decision`,
objective ``"theta"``) it skips every epoch not yet started, and with ``skip="samples"`` every
sample not yet started too (valid when the task runs its samples in a random order). With
``replicate_share=`` it also stops the further epochs once replications no longer pay: the
replicate noise's posterior median share of Var(theta_hat) at the design run so far is below
that share (another epoch of every sample could then shrink the interval by at most about
half of it). Each skip is an ``EarlyStop`` with the reason and the metric, and
``complete_task`` returns the decision and the posterior's theta for the log's
``results.early_stopping.metadata``.

Needs ``bayes_tee[inspect]``.

>>> from inspect_ai import eval, Task  # doctest: +SKIP
>>> hook = TEEEarlyStopping(target=0.03)  # doctest: +SKIP
>>> eval(Task(dataset=..., solver=..., scorer=..., epochs=10, early_stopping=hook))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError, DesignError, DesignWarning, DiagnosticWarning
from ..posterior.decision import Objective
from ..tee.fit import fit_posterior

try:  # the optional reader extra: Inspect's own types
    from inspect_ai.scorer import value_to_float
    from inspect_ai.util import EarlyStop
except ImportError:  # pragma: no cover - without inspect-ai the class says so when made
    EarlyStop = None
    value_to_float = None

#: The manager's name in the log.
NAME = "bayes_tee"


class TEEEarlyStopping:
    """Skip the epochs (and optionally samples) a running Inspect task no longer needs.

    Parameters
    ----------
    target : float
        The benchmark score's interval half-width at which to stop, in the score's units.
    level : float
        Level of the interval.
    scorer : str, optional
        The scorer whose values are the scores; default the first of each sample's scores.
    family : {"gaussian", "binomial"}
        The model of the scores (``binomial`` for 0/1 verdicts: the logit GLMM).
    min_scores : int
        Scores collected before the first fit.
    every : int
        Scores between refits.
    skip : {"epochs", "samples"}
        What a met target skips: the epochs not yet started, or every call not yet started.
    replicate_share : float, optional
        Also stop further epochs when the replicate noise's share of Var(theta_hat) is below this.
    **fit_kwargs
        :func:`bayes_tee.fit_posterior`'s sampler keywords (``draws=``, ``random_seed=``...).
    """

    def __init__(
        self,
        target: float,
        *,
        level: float = 0.9,
        scorer: str | None = None,
        family: str = "gaussian",
        min_scores: int = 30,
        every: int = 20,
        skip: str = "epochs",
        replicate_share: float | None = None,
        **fit_kwargs: Any,
    ) -> None:
        if EarlyStop is None:
            raise DesignError("TEEEarlyStopping needs inspect-ai: pip install 'bayes_tee[inspect]'.")
        self.objective = Objective("theta", None, "new", float(level))
        self.target = self.objective.check_target(target)
        if skip not in ("epochs", "samples"):
            raise ArgumentError(f"skip must be 'epochs' or 'samples', got {skip!r}.")
        if replicate_share is not None and not 0 < replicate_share < 1:
            raise ArgumentError(f"replicate_share must be between 0 and 1, got {replicate_share!r}.")
        for name, value in (("min_scores", min_scores), ("every", every)):
            if not isinstance(value, int) or value < 1:
                raise ArgumentError(f"{name} must be a positive integer, got {value!r}.")
        self.scorer, self.family, self.skip = scorer, family, skip
        self.min_scores, self.every, self.replicate_share = min_scores, every, replicate_share
        self.fit_kwargs = {"progressbar": False, **fit_kwargs}
        self._reset()

    def _reset(self) -> None:
        self.scores: dict[tuple[str, int], float] = {}
        self.started_samples: set[str] = set()  # samples with an epoch scheduled
        self.stopped: str | None = None  # why the remaining calls are skipped
        self.epochs_stopped: str | None = None  # why further epochs are skipped
        self.last: dict[str, Any] = {}
        self.skipped = 0
        self._since = 0
        self._fitting = False

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        """Register the task: its samples and epochs. Returns the manager's name."""
        self._reset()
        self.n_samples, self.epochs = len(samples), int(epochs)
        return NAME

    async def schedule_sample(self, id: str | int, epoch: int) -> Any:
        """An ``EarlyStop`` for a call the decision made unnecessary, else ``None``."""
        key = (str(id), int(epoch))
        seen = key[0] in self.started_samples
        reason = None
        if self.stopped and (self.skip == "samples" or seen):
            reason = self.stopped
        elif self.epochs_stopped and seen:
            reason = self.epochs_stopped
        if reason is None:
            self.started_samples.add(key[0])
            return None
        self.skipped += 1
        return EarlyStop(
            id=id, epoch=epoch, reason=reason, metadata={k: _plain(v) for k, v in self.last.items()}
        )

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, Any]) -> None:
        """Record the call's score; refit every ``every`` scores and decide."""
        value = self._value(scores)
        if value is None:
            return
        self.scores[(str(id), int(epoch))] = value
        self._since += 1
        due = len(self.scores) >= self.min_scores and self._since >= self.every
        if due and not self.stopped and not self._fitting:  # one fit at a time, on the scores so far
            self._since, self._fitting = 0, True
            try:
                await asyncio.to_thread(self.decide)
            finally:
                self._fitting = False

    async def complete_task(self) -> dict[str, Any]:
        """The decision, the posterior's theta and what was skipped, for the log."""
        if not self.last and len(self.scores) >= 2:
            await asyncio.to_thread(self.decide)
        return {
            "objective": "theta",
            "target": self.target,
            "level": self.objective.level,
            "scores": len(self.scores),
            "skipped": self.skipped,
            "stopped": self.stopped,
            "epochs_stopped": self.epochs_stopped,
            **{k: _plain(v) for k, v in self.last.items()},
        }

    def frame(self) -> pd.DataFrame:
        """The scores so far: one row per (sample, epoch)."""
        keys = list(self.scores)
        return pd.DataFrame(
            {
                "item": [k[0] for k in keys],
                "replicate": [k[1] for k in keys],
                "score": list(self.scores.values()),
            }
        )

    def decide(self) -> dict[str, Any]:
        """Fit the scores so far and decide (run in a worker thread while the task goes on)."""
        df = self.frame()
        if df["item"].nunique() < 2 or df["score"].nunique() < 2:
            return self.last
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DiagnosticWarning)
            warnings.simplefilter("ignore", DesignWarning)
            post = fit_posterior(df, outcome="score", item="item", replicate="replicate", family=self.family,
                                 **self.fit_kwargs)  # fmt: skip
            d = post.decision("theta", level=self.objective.level, target=self.target)
            th = post.theta(level=self.objective.level).iloc[0]
        ok = bool(post.diagnostics()["ok"])
        self.last = {
            "metric": float(d["metric"]), "met": bool(d["met"]), "diagnostics_ok": ok, "calls": len(df),
            "theta": float(th["estimate"]), "theta_low": float(th["tee_low"]),
            "theta_high": float(th["tee_high"]),
        }  # fmt: skip
        if d["met"] and ok:
            self.stopped = (
                f"interval half-width {d['metric']:.4g} <= target {self.target:g} after {len(df)} scores"
            )
        share = _replicate_share(post)
        self.last["replicate_share"] = share
        if self.replicate_share is not None and ok and share is not None and share < self.replicate_share:
            self.epochs_stopped = (
                f"replications no longer pay: replicate noise is {share:.1%} of Var(theta_hat) "
                f"(< {self.replicate_share:.0%})"
            )
        return self.last

    def _value(self, scores: dict[str, Any]) -> float | None:
        if not scores:
            return None
        name = self.scorer if self.scorer is not None else next(iter(scores))
        if name not in scores:
            raise DesignError(f"scorer={self.scorer!r} is not among the task's scorers {list(scores)}.")
        value = value_to_float()(scores[name].score.value)
        return float(value) if np.isfinite(value) else None


def _replicate_share(post) -> float | None:
    """The replicate noise's posterior median share of Var(theta_hat) at the design so far."""
    table = post.shares()
    rows = table[table["component"].isin(["replicate", "residual"])]
    if rows.empty or "share_median" not in table.columns:
        return None
    return float(rows["share_median"].iloc[0])


def _plain(value: Any) -> Any:
    """A JSON value for the log."""
    if isinstance(value, np.generic):
        return value.item()
    return value
