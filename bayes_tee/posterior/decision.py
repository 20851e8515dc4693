"""What a running evaluation decides, and whether it can stop: one metric per objective.

Each objective is defined once, here, and both the stopping rule (:func:`decision`) and the
choice of the next calls (:mod:`~bayes_tee.posterior.next_calls`) read it:

- ``"best"``: the leader's ``p_best`` in :func:`~bayes_tee.posterior.leaderboard.leaderboard`
  (reading ``over``); met when at least the target.
- ``"rank"``: every adjacent pair of the posterior ranking resolved: the smallest
  ``max(P(a > b), P(b > a))`` over adjacent pairs of the leaderboard's order
  (:func:`~bayes_tee.posterior.leaderboard.pairs`); met when at least the target.
- ``"separate"``: one pair, ``systems=("A", "B")``: its ``max(P(A > B), P(B > A))``.
- ``"theta"``: the half-width of a benchmark score's central ``level`` interval: a
  single-system fit's TEE interval (:func:`~bayes_tee.posterior.theta.theta`), or one system's
  *new* or *panel* interval in a comparison (``systems=("A",)``); met when at most the target,
  in the score's units.

A Bayesian stopping rule is as honest as the model it reads: its error rate at stop is measured
by simulation with known truth (``benchmarks/adaptive_stopping.py``), not assumed.

>>> d = decision(post, "best", target=0.95)  # doctest: +SKIP
>>> d["metric"], d["met"]  # doctest: +SKIP
(0.973, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pandas as pd

from .._core.exceptions import ArgumentError, DesignError
from .._core.intervals import check_level
from . import leaderboard as board
from .theta import theta

if TYPE_CHECKING:
    from .fit import Fit

ObjectiveName = Literal["best", "rank", "separate", "theta"]
#: The objectives, each with what its metric is.
OBJECTIVES: dict[str, str] = {
    "best": "the leader's P(best)",
    "rank": "the least resolved adjacent pair's max(P(a > b), P(b > a))",
    "separate": "max(P(A > B), P(B > A)) of one pair",
    "theta": "the half-width of the score's interval",
}
#: Objectives whose metric is a probability (a target in (0, 1), met from above).
PROBABILITIES = ("best", "rank", "separate")


@dataclass(frozen=True)
class Objective:
    """An objective checked against a fit: its name, the systems it is about, the reading of
    the systems' error (``over``) and the level of a ``theta`` interval.
    """

    name: str
    systems: tuple[str, ...] | None
    over: str
    level: float

    @property
    def is_probability(self) -> bool:
        """The metric is a probability, met when it reaches the target from below."""
        return self.name in PROBABILITIES

    def met(self, metric: float, target: float | None) -> bool | None:
        """Whether ``metric`` meets ``target`` (``None`` without a target)."""
        if target is None:
            return None
        return bool(metric >= target) if self.is_probability else bool(metric <= target)

    def check_target(self, target: float | None) -> float | None:
        """``target`` as a float, refused when it cannot be met by this objective's metric."""
        if target is None:
            return None
        if isinstance(target, bool) or not isinstance(target, int | float):
            raise ArgumentError(f"target takes a number, got {target!r}.")
        if self.is_probability and not 0 < target < 1:
            raise ArgumentError(
                f"target={target!r}: objective {self.name!r} is a probability; give a target between "
                "0 and 1, e.g. target=0.95."
            )
        if not self.is_probability and not target > 0:
            raise ArgumentError(
                f"target={target!r}: objective 'theta' is an interval half-width in the score's units; "
                "give a positive number, e.g. target=0.02."
            )
        return float(target)


def objective_for(
    fit: Fit,
    objective: str = "best",
    systems: tuple[str, ...] | list[str] | str | None = None,
    over: str = "new",
    level: float = 0.9,
) -> Objective:
    """The :class:`Objective` ``objective`` on ``fit``, checked: one error naming the fix for an
    unknown name, an objective that needs systems on a single-system fit, or systems the fit does
    not compare.

    >>> objective_for(post, "separate", systems=("s0", "s1")).systems  # doctest: +SKIP
    ('s0', 's1')
    """
    if objective not in OBJECTIVES:
        raise ArgumentError(f"objective must be one of {list(OBJECTIVES)}, got {objective!r}.")
    if over not in ("new", "panel"):
        raise ArgumentError(f"over must be 'new' or 'panel', got {over!r}.")
    check_level(level)
    chosen = (systems,) if isinstance(systems, str) else (None if systems is None else tuple(systems))
    compares = fit.design.system is not None
    if objective in PROBABILITIES and not compares:
        raise DesignError(
            f"objective={objective!r} is about several systems, and this fit has one: use "
            "objective='theta' (its score's interval), or fit the systems jointly with "
            "system=<column>."
        )
    names = list(fit.design.levels[fit.design.system]) if compares else []
    unknown = [s for s in chosen or () if s not in names]
    if compares and unknown:
        raise ArgumentError(f"systems={list(chosen)}: {unknown} not among the fit's systems {names}.")
    if objective == "separate" and (chosen is None or len(chosen) != 2 or chosen[0] == chosen[1]):
        raise ArgumentError(
            "objective='separate' is about one pair: give two different systems of the fit, "
            f"systems=(a, b), from {names}."
        )
    if objective in ("best", "rank") and chosen is not None:
        raise ArgumentError(f"objective={objective!r} is about every system; drop systems=.")
    if objective == "theta" and compares and (chosen is None or len(chosen) != 1):
        raise ArgumentError(
            f"objective='theta' on a comparison is one system's score: give systems=(name,), from {names}."
        )
    if objective == "theta" and not compares and chosen is not None:
        raise ArgumentError("This fit scores one system: objective='theta' takes no systems=.")
    return Objective(objective, chosen, over, float(level))


def decision(
    fit: Fit,
    objective: ObjectiveName = "best",
    *,
    systems: tuple[str, ...] | list[str] | str | None = None,
    over: str = "new",
    level: float = 0.9,
    target: float | None = None,
) -> pd.Series:
    """The objective's metric now and whether ``target`` is met (module docstring).

    Parameters
    ----------
    fit : Fit
        Any fit (``"best"``, ``"rank"`` and ``"separate"`` need one that compares systems).
    objective : {"best", "rank", "separate", "theta"}
        What is decided.
    systems : tuple of str, optional
        ``"separate"``: the pair; ``"theta"`` on a comparison: the one system.
    over : {"new", "panel"}
        The reading of the systems' error (:mod:`bayes_tee.posterior.leaderboard`).
    level : float
        Level of the ``theta`` interval.
    target : float, optional
        A probability in (0, 1), or a positive half-width for ``"theta"``.

    Returns
    -------
    pandas.Series
        ``objective, metric, target, met, over, level, about`` (the leader, the least
        resolved adjacent pair, the pair, or the system) and ``meaning``.

    Examples
    --------
    >>> decision(post, "separate", systems=("s0", "s1"), target=0.9)["met"]  # doctest: +SKIP
    True
    """
    obj = objective_for(fit, objective, systems, over, level)
    target = obj.check_target(target)
    metric, about = metric_of(fit, obj)
    return pd.Series(
        {
            "objective": obj.name,
            "metric": metric,
            "target": target,
            "met": obj.met(metric, target),
            "over": obj.over,
            "level": obj.level,
            "about": about,
            "meaning": OBJECTIVES[obj.name],
        },
        name="decision",
    )


def metric_of(fit: Fit, obj: Objective) -> tuple[float, str]:
    """The metric of ``obj`` on ``fit`` and what it is about (a system or a pair ``a > b``)."""
    if obj.name == "theta" and obj.systems is None:
        row = theta(fit, obj.level).iloc[0]
        return float(row["tee_high"] - row["tee_low"]) / 2, "theta"
    if obj.name == "theta":
        lb = board.leaderboard(fit, level=obj.level, over=obj.over).set_index("system")
        row = lb.loc[obj.systems[0]]
        return float(row[f"{obj.over}_high"] - row[f"{obj.over}_low"]) / 2, obj.systems[0]
    if obj.name == "best":
        lb = board.leaderboard(fit, over=obj.over)
        return float(lb["p_best"].iloc[0]), str(lb["system"].iloc[0])
    if obj.name == "separate":
        row = board.pairs(fit, over=obj.over, systems=list(obj.systems)).iloc[0]
        return _resolved(row)
    order = list(board.leaderboard(fit, over=obj.over)["system"])
    table = board.pairs(fit, over=obj.over, systems=order)
    adjacent = {(a, b) for a, b in zip(order, order[1:])}
    rows = [r for _, r in table.iterrows() if (r["system_a"], r["system_b"]) in adjacent]
    return min((_resolved(r) for r in rows), key=lambda m: m[0])


def _resolved(row: pd.Series) -> tuple[float, str]:
    """A pair's max(P(a > b), P(b > a)) and which way it leans."""
    p = float(row["p_a_better"])
    a, b = row["system_a"], row["system_b"]
    return (p, f"{a} > {b}") if p >= 0.5 else (1 - p, f"{b} > {a}")
