"""The adaptive loop: fit the calls scored so far, buy the calls worth most, refit, stop on a rule.

:func:`run_adaptive` fits the pilot, then repeats: choose a batch from the pool
(:func:`bayes_tee.posterior.next_calls.next_calls`), have ``oracle`` score it (in production it
runs the eval; in a replay it looks the scores up), refit on every call scored, and stop when the
objective's target is met (:func:`bayes_tee.posterior.decision.decision`), the call or cost
budget is spent, or no call of the pool can change the objective. Every step's fit is checked
like any fit: one that fails its diagnostics is refitted with twice the draws before its metric
is trusted, and a metric from a fit that still fails never stops the run. With ``checkpoint=``
the scored calls and the history are written after every step, so an interrupted run resumes
where it stopped with no call lost or bought twice.

>>> run = bt.run_adaptive(pilot, pool, oracle, objective="best", target=0.95, batch=200,
...                       outcome="score", item="item", judge="judge", system="model")  # doctest: +SKIP
>>> run.stopped, run.history.tail(1)  # doctest: +SKIP
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError, DesignError, DiagnosticWarning
from .._core.warm import SamplerState
from ..posterior.decision import OBJECTIVES, Objective, objective_for
from ..posterior.facade import Posterior
from ..posterior.next_calls import call_costs
from ..tee.fit import REFIT_TUNE, fit_posterior
from . import checkpoint as ckpt

#: How many times the draws of a step whose fit fails its diagnostics are multiplied on its refit.
REFIT_FACTOR = 2
#: What the history records per step.
HISTORY_COLUMNS = ("step", "calls", "cost", "metric", "met", "diagnostics_ok", "refitted", "seconds", "about")


@dataclass
class AdaptiveRun:
    """What :func:`run_adaptive` did.

    Attributes
    ----------
    posterior : Posterior
        The last fit.
    data : pandas.DataFrame
        Every scored call: the pilot's rows, then the pool's rows bought (their pool index kept
        in column ``pool_index``), in the order scored.
    history : pandas.DataFrame
        One row per step (step 0 is the pilot): ``step``, ``calls`` (cumulative scored calls,
        the pilot's included), ``cost`` (cumulative cost of the calls bought), ``metric``,
        ``met``, ``diagnostics_ok``, ``refitted`` (the step's fit was run again with more draws),
        ``seconds`` (the step's wall time), ``about`` (the leader, the weakest pair, ...).
    stopped : str
        ``"target"``, ``"max_calls"``, ``"max_cost"`` or ``"pool"`` (no call left that can
        change the objective).
    """

    posterior: Posterior
    data: pd.DataFrame
    history: pd.DataFrame
    stopped: str
    objective: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        last = self.history.iloc[-1]
        return (
            f"<AdaptiveRun {self.objective.get('objective')} | stopped: {self.stopped} | "
            f"{int(last['calls'])} calls, cost {last['cost']:g} | metric {last['metric']:.4g}>"
        )


def run_adaptive(
    data: pd.DataFrame,
    pool: pd.DataFrame,
    oracle: Callable[[pd.DataFrame], pd.DataFrame],
    objective: str = "best",
    target: float = 0.95,
    batch: int = 200,
    *,
    max_calls: int | None = None,
    max_cost: float | None = None,
    systems: tuple[str, ...] | list[str] | str | None = None,
    over: str = "new",
    level: float = 0.9,
    cost: str | Mapping[str, float] | None = None,
    checkpoint: str | Path | None = None,
    **fit_kwargs,
) -> AdaptiveRun:
    """Buy calls in batches until the objective's target is met.

    Parameters
    ----------
    data : pandas.DataFrame
        The pilot: calls already scored, with the outcome.
    pool : pandas.DataFrame
        Candidate calls (the fit's role columns; no outcome needed), a unique index.
    oracle : callable
        ``oracle(rows) -> rows`` with the outcome column filled in, for exactly the rows asked.
    objective : {"best", "rank", "separate", "theta"}
        What to resolve (:mod:`bayes_tee.posterior.decision`).
    target : float
        The metric's target: a probability for ``best``/``rank``/``separate``, a half-width for
        ``theta``.
    batch : int
        Calls bought per step.
    max_calls, max_cost : optional
        Most calls, or most cost, the run buys beyond the pilot.
    systems, over, level : optional
        The objective's (:func:`bayes_tee.posterior.decision.decision`).
    cost : str or mapping, optional
        Each pool call's cost: a column of ``pool`` or a cost per judge; default one per call.
    checkpoint : path, optional
        Written after every step; a run given a checkpoint that exists resumes from it.
    **fit_kwargs
        :func:`bayes_tee.fit_posterior`'s: roles (``outcome=``, ``item=``, ...), ``formula=``,
        ``family=``, ``system=``, ``judge_effect=``, ``random_seed=`` (step ``s`` fits with
        ``random_seed + s``), ``progressbar=``, ``draws=``...

    Returns
    -------
    AdaptiveRun

    Raises
    ------
    DesignError
        Bad arguments, a pool without the fit's roles or with a level the fit cannot value, an
        oracle that returns other rows or missing outcomes (what it scored is kept, in the
        checkpoint and in the error's ``run`` attribute).

    Examples
    --------
    >>> scores = full.set_index(keys)["score"]  # doctest: +SKIP
    >>> def oracle(rows):  # a replay: look the scores up  # doctest: +SKIP
    ...     return rows.assign(score=scores.loc[rows.set_index(keys).index].to_numpy())
    >>> run = run_adaptive(pilot, pool, oracle, target=0.95, outcome="score", item="item",
    ...                    system="model")  # doctest: +SKIP
    """
    _check_arguments(data, pool, oracle, batch, max_calls, max_cost)
    if objective not in OBJECTIVES:
        raise ArgumentError(f"objective must be one of {list(OBJECTIVES)}, got {objective!r}.")
    Objective(objective, None, over, level).check_target(target)  # before any fit or call
    seed = fit_kwargs.pop("random_seed", None)
    fit_kwargs.setdefault("progressbar", False)
    path = None if checkpoint is None else Path(checkpoint)
    saved = ckpt.read(path) if path is not None and path.exists() else None
    # the pilot's rows have no pool index; a bought row keeps its pool row's
    scored = data.assign(pool_index=pd.Series([None] * len(data), index=data.index, dtype=object))
    scored = scored if saved is None else saved.data
    history = [] if saved is None else saved.history.to_dict("records")
    remaining = pool if saved is None else pool.drop(index=saved.bought, errors="ignore")
    # the step the uninterrupted run would fit next (its seed too); a finished run's last one
    step = 0 if saved is None else int(saved.history["step"].max()) + (saved.stopped is None)
    already = [] if saved is None else saved.bought
    spent, bought = 0.0, len(already)
    costs = None
    obj = None
    last = None if saved is None else saved.state  # the last fit's state: the next step's warm start
    while True:
        t0 = time.perf_counter()
        post, refitted = _fit_step(scored, seed, step, fit_kwargs, last)
        last = post.sampler_state
        if obj is None:
            obj = objective_for(post, objective, systems, over, level)
            target = obj.check_target(target)
            outcome = post.design.roles.outcome
            costs = pd.Series(call_costs(post, pool, cost), index=pool.index)
            spent = float(costs.loc[already].sum())  # what a resumed run had spent
        d = post.decision(obj.name, systems=obj.systems, over=obj.over, level=obj.level, target=target)
        ok = bool(post.diagnostics()["ok"])
        if not history or history[-1]["step"] != step:
            history.append(
                dict(step=step, calls=len(scored), cost=spent, metric=float(d["metric"]), met=bool(d["met"]),
                     diagnostics_ok=ok, refitted=refitted, seconds=0.0, about=str(d["about"]))
            )  # fmt: skip
        stopped = _stop_reason(bool(d["met"]) and ok, bought, spent, max_calls, max_cost, remaining)
        n = _batch_size(batch, bought, max_calls)
        chosen = None
        if stopped is None:
            chosen = post.next_calls(
                remaining, n, obj.name, systems=obj.systems, over=obj.over, level=obj.level, cost=cost
            )
            chosen = _within_cost(chosen, costs, spent, max_cost)
            if chosen.empty:
                stopped = "max_cost" if max_cost is not None and len(remaining) else "pool"
        history[-1]["seconds"] = round(time.perf_counter() - t0, 3)
        if stopped is not None:
            ckpt.write(path, scored, history, stopped, last)
            return AdaptiveRun(
                post, scored, pd.DataFrame(history, columns=HISTORY_COLUMNS), stopped, d.to_dict()
            )
        asked = chosen.drop(columns=["gain", "cost"])
        answer = oracle(asked.copy())
        good, problem = _check_answer(asked, answer, outcome)
        rows = good.assign(pool_index=pd.Series(list(good.index), index=good.index, dtype=object))
        scored = pd.concat([scored, rows], ignore_index=True)
        bought += len(good)
        spent += float(costs.loc[good.index].sum())
        remaining = remaining.drop(index=good.index)
        step += 1
        if problem is not None:
            history.append(
                dict(step=step, calls=len(scored), cost=spent, metric=np.nan, met=False, diagnostics_ok=False,
                     refitted=False, seconds=round(time.perf_counter() - t0, 3), about="oracle error")
            )  # fmt: skip
            ckpt.write(path, scored, history, None, last)
            err = DesignError(problem)
            err.run = AdaptiveRun(
                post, scored, pd.DataFrame(history, columns=HISTORY_COLUMNS), "oracle", d.to_dict()
            )
            raise err
        ckpt.write(path, scored, history, None, last)


def _fit_step(
    scored: pd.DataFrame, seed: int | None, step: int, fit_kwargs: dict, last: SamplerState | None
) -> tuple[Posterior, bool]:
    """The step's fit, a refit of the last step's (``fit_posterior``'s ``warm_start``: its
    chains start at ``last``, where that fit's chains were, when the coordinates agree, else it
    warms up briefly); refitted with :data:`REFIT_FACTOR` times the draws when it fails its checks.
    """
    kw = dict(fit_kwargs, random_seed=None if seed is None else seed + step)
    if step > 0 and last is not None:
        kw.setdefault("warm_start", last)
    elif step > 0 and kw.get("tune") is None:  # nothing to start from: a refit's short warm-up
        kw["tune"] = REFIT_TUNE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)
        post = fit_posterior(scored.drop(columns="pool_index", errors="ignore"), **kw)
        if post.diagnostics()["ok"]:
            return post, False
        draws = int(post.info.get("draws_max") or post.info.get("draws") or 1000)
        tune = int(post.info.get("tune") or kw.get("tune") or 1000)
        kw.update(draws=REFIT_FACTOR * draws, tune=REFIT_FACTOR * tune)
        return fit_posterior(scored.drop(columns="pool_index", errors="ignore"), **kw), True


def _stop_reason(met, bought, spent, max_calls, max_cost, remaining) -> str | None:
    if met:
        return "target"
    if max_calls is not None and bought >= max_calls:
        return "max_calls"
    if max_cost is not None and spent >= max_cost:
        return "max_cost"
    if remaining.empty:
        return "pool"
    return None


def _batch_size(batch: int, bought: int, max_calls: int | None) -> int:
    return batch if max_calls is None else max(1, min(batch, max_calls - bought))


def _within_cost(
    chosen: pd.DataFrame, costs: pd.Series, spent: float, max_cost: float | None
) -> pd.DataFrame:
    """The chosen calls, in order, that the cost budget still pays for."""
    if max_cost is None or chosen.empty:
        return chosen
    total = spent + np.cumsum(costs.loc[chosen.index].to_numpy())
    return chosen[total <= max_cost + 1e-12]


def _check_answer(asked: pd.DataFrame, answer: object, outcome: str) -> tuple[pd.DataFrame, str | None]:
    """The oracle's rows that were asked for and hold an outcome, and what is wrong, if anything."""
    if not isinstance(answer, pd.DataFrame):
        return asked.iloc[
            :0
        ], f"The oracle returned {type(answer).__name__}, not a DataFrame of the rows asked for."
    if outcome not in answer.columns:
        return asked.iloc[:0], (
            f"The oracle's rows have no outcome column {outcome!r}: return the rows asked for with "
            f"{outcome!r} filled in."
        )
    extra = answer.index.difference(asked.index)
    known = answer[answer.index.isin(asked.index) & ~answer.index.duplicated()]
    good = known[known[outcome].notna()]
    good = asked.loc[good.index].assign(**{outcome: good[outcome]})
    problems = []
    if len(answer) != len(asked):
        problems.append(f"returned {len(answer)} rows for the {len(asked)} asked")
    if len(extra):
        problems.append(f"returned {len(extra)} rows not asked for (index {list(extra[:3])})")
    if known[outcome].isna().any():
        problems.append(f"left {int(known[outcome].isna().sum())} outcomes missing")
    if not problems:
        return good, None
    return good, (
        f"The oracle {'; '.join(problems)}. The {len(good)} calls it scored are kept (run.data, "
        "and the checkpoint); return exactly the rows asked for, same index, with the outcome filled in."
    )


def _check_arguments(data, pool, oracle, batch, max_calls, max_cost) -> None:
    if not isinstance(data, pd.DataFrame) or not isinstance(pool, pd.DataFrame):
        raise DesignError("run_adaptive takes the pilot and the pool as pandas DataFrames.")
    if not pool.index.is_unique:
        raise DesignError(
            "The pool's index has duplicates: a call is bought by its index, so give every candidate "
            "call its own (pool.reset_index(drop=True))."
        )
    if not callable(oracle):
        raise ArgumentError("oracle must be a function oracle(rows) -> rows with the outcome filled in.")
    if isinstance(batch, bool) or not isinstance(batch, int | np.integer) or batch < 1:
        raise ArgumentError(f"batch is the calls bought per step: a positive integer, got {batch!r}.")
    for name, value in (("max_calls", max_calls), ("max_cost", max_cost)):
        if value is not None and not (isinstance(value, int | float | np.number) and value > 0):
            raise ArgumentError(f"{name} must be positive, got {value!r}.")
