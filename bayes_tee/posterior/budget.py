"""Budget allocation: the design that minimises the posterior SE of theta_hat at a cost, with
the probability that it is the best and the cost-efficiency frontier (Messing 2026 Sec. 4.1-4.2,
Fig. 3b; App. L).

Cost model: every judge call costs its judge's price (one number, or one per judge: a design
with M' judges uses the M' cheapest, since the projection treats judges as exchangeable), plus
an optional per-item cost (generating the system's response). For each (V', M', H', R') the
variance falls and the cost rises with N', so at the budget only the largest affordable N' can
be best; the frontier is searched over a grid of N' per (V', M', H', R'). Every number is a
posterior summary over all draws.

>>> plan = allocate(post, budget=5000, max_items=200)   # doctest: +SKIP
>>> plan.best[["n_items", "n_prompts", "n_judges", "se_median", "p_best"]]   # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from ..gstudy import weights as gw
from ..plots import plot_frontier
from . import dstudy as ds
from . import leaderboard as board
from . import separation as sep

if TYPE_CHECKING:
    from .fit import Fit

DESIGN = ["n_items", "n_prompts", "n_judges", "n_temperatures", "n_replicates"]


@dataclass
class Plan:
    """Result of :func:`allocate`.

    Attributes
    ----------
    best : pandas.Series
        The chosen design: counts, ``calls``, ``cost``, ``se_median/low/high``, ``p_best``
        (probability of the smallest SE among designs at the budget) and ``p_near_best``
        (probability that its SE is within ``tolerance`` of that smallest SE).
    frontier : pandas.DataFrame
        Designs not beaten on both cost and median SE, by cost.
    candidates : pandas.DataFrame
        Every design evaluated (``at_budget`` marks the largest affordable N' per configuration).
    current : pandas.Series
        The observed design with its cost and SE.
    budget : float
    """

    best: pd.Series
    frontier: pd.DataFrame
    candidates: pd.DataFrame
    current: pd.Series
    budget: float
    baselines: pd.DataFrame = field(default_factory=pd.DataFrame)

    def plot_frontier(self, **kwargs):
        """Cost vs SE with the frontier, current and chosen design (returns the Figure)."""
        return plot_frontier(self, **kwargs)

    def __repr__(self) -> str:
        b = self.best
        design = " ".join(f"{k[2:]}={b[k]:g}" for k in DESIGN)
        return (
            f"Plan(budget={self.budget:g}: {design}, cost {b['cost']:.4g}, SE {b['se_median']:.4g} "
            f"[{b['se_low']:.4g}, {b['se_high']:.4g}], P(best)={b['p_best']:.2f}; "
            f"current SE {self.current['se_median']:.4g})"
        )


def _judge_costs(post: Fit, cost_per_call: float | Mapping[str, float]) -> np.ndarray:
    judges = list(post.design.levels.get("judge", ()))
    if isinstance(cost_per_call, Mapping):
        unknown = sorted(set(cost_per_call) - set(judges))
        if unknown:
            raise ArgumentError(f"cost_per_call names unknown judge(s) {unknown}; the judges are {judges}.")
        missing = sorted(set(judges) - set(cost_per_call))
        if missing:
            raise ArgumentError(
                f"cost_per_call has no price for judge(s) {missing}; give every judge a price."
            )
        costs = np.array([float(cost_per_call[j]) for j in judges])
    else:
        costs = np.full(max(len(judges), 1), float(cost_per_call))
    if np.any(costs < 0):
        raise ArgumentError("cost_per_call must not be negative.")
    return np.sort(costs)


def allocate(
    post: Fit,
    budget: float,
    *,
    cost_per_call: float | Mapping[str, float] = 1.0,
    cost_per_item: float = 0.0,
    max_items: int | None = None,
    max_prompts: int | None = None,
    max_judges: int | None = None,
    max_temperatures: int | None = None,
    max_replicates: int = 10,
    target_se: float | None = None,
    estimand: str = "domain",
    decision: str = "absolute",
    level: float = 0.9,
    n_grid: int = 25,
    tolerance: float = 0.01,
    objective: str | None = None,
    over: str = "new",
) -> Plan:
    """Search designs under a budget.

    Parameters
    ----------
    post : Fit
    budget : float
        Total spend allowed.
    cost_per_call : float or dict
        Price of one judge call, or a price per judge name.
    cost_per_item : float
        Fixed cost per item (e.g. generating the response that is judged).
    max_items, max_prompts, max_judges, max_temperatures, max_replicates : int, optional
        Pool sizes. Defaults: items unlimited (the budget bounds them), prompts, judges and
        temperatures as observed (the pools you have), replicates 10.
    target_se : float, optional
        Choose the cheapest design whose median SE is at most this, instead of the smallest SE
        at the budget.
    estimand, decision : str
        As in :meth:`bayes_tee.Posterior.dstudy`.
    level : float
        Credible level of the SE intervals.
    n_grid : int
        Item counts per configuration on the frontier grid (geometric).
    tolerance : float
        Designs whose median SE is within this fraction of the smallest at the budget count as
        tied; the cheapest of them is chosen (no spend on negligible gains).
    objective : {"theta", "separate", "rank"}, optional
        What the design should measure: ``theta`` (the benchmark score's SE, the default on a
        fit of one system); on a fit that compares systems (the default there: ``separate``)
        the SE of the difference between two systems, every system scored at the design (the
        cost is per system times the systems). ``rank`` chooses the same design (with every
        system at the same counts each difference's SE falls together) and reports
        ``p_adjacent_resolved``: the share of the leaderboard's adjacent gaps whose interval
        would exclude zero.
    over : {"new", "panel"}
        The reading of a difference (:mod:`bayes_tee.posterior.leaderboard`).

    Returns
    -------
    Plan
    """
    if not budget > 0:
        raise ArgumentError(f"budget must be positive, got {budget!r}.")
    systems = post.design.system
    objective = objective or ("separate" if systems else "theta")
    if objective not in ("theta", "separate", "rank"):
        raise ArgumentError(f"objective must be 'theta', 'separate' or 'rank', got {objective!r}.")
    if systems and objective == "theta":
        raise ArgumentError(
            "This fit compares systems: the grand mean over them is no benchmark score. Allocate "
            "for separating two systems (objective='separate') or ranking them all ('rank')."
        )
    if not systems and objective != "theta":
        board.require_systems(post)
    n_systems = len(post.design.levels[systems]) if systems else 1
    counts = post.design.counts
    jc = _judge_costs(post, cost_per_call)
    present = set(post.design.facets)
    maxes = {
        "n_prompts": max_prompts or int(counts.get("prompt", 1)),
        "n_judges": min(max_judges or len(jc), len(jc)) if "judge" in present else 1,
        "n_temperatures": max_temperatures or int(counts.get("temperature", 1)),
        "n_replicates": max_replicates if post.design.has_replicates else 1,
    }
    if "prompt" not in present:
        maxes["n_prompts"] = 1
    if "temperature" not in present:
        maxes["n_temperatures"] = 1
    rows = []

    def item_cost(V, M, H, R) -> float:  # every system is scored on each item
        return n_systems * (V * H * R * jc[: int(M)].sum() + cost_per_item)

    for V, M, H, R in itertools.product(*(range(1, maxes[k] + 1) for k in DESIGN[1:])):
        per_item = item_cost(V, M, H, R)
        n_max = int(np.floor(budget / per_item)) if per_item > 0 else int(max_items or 10**6)
        if max_items:
            n_max = min(n_max, int(max_items))
        grid = np.unique(np.geomspace(2, max(2 * n_max, 4), n_grid).round().astype(int))
        if max_items:
            grid = grid[grid <= max_items]
        for n in sorted(set(grid) | ({n_max} if n_max >= 2 else set())):
            rows.append((n, V, M, H, R, n * per_item, n == n_max))
    cand = pd.DataFrame(rows, columns=[*DESIGN, "cost", "at_budget"])
    if not cand["at_budget"].any():
        raise ArgumentError(f"budget {budget:g} cannot pay for two items under any configuration.")
    if systems:
        var = sep.difference_variance(post, cand[DESIGN], over)
        current = sep.difference_variance(post, pd.DataFrame([{}]), over)[:, 0]
    else:
        kw = dict(estimand=estimand, decision=decision)
        var = ds.variance_at(post, cand[DESIGN], **kw)
        current = ds.observed_variance(post, **kw)
    cand = pd.concat([cand, gw.summarize_designs(var, current, level=level)], axis=1)
    cand.insert(5, "calls", gw.calls(cand, counts) * n_systems)
    if objective == "rank":
        cand["p_adjacent_resolved"] = sep.adjacent_resolved(post, var, level=level, over=over)
    at = cand.index[cand["at_budget"]]
    winners = np.argmin(var[:, at], axis=1)
    cand["p_best"] = 0.0
    cand.loc[at, "p_best"] = np.bincount(winners, minlength=len(at)) / len(winners)
    # P(within the tie tolerance of the best SE at the budget), per draw: a cheaper design
    # chosen as tied carries its own evidence, not p_best = 0
    best_var = var[:, at].min(axis=1, keepdims=True)
    cand["p_near_best"] = (var <= best_var * (1 + tolerance) ** 2).mean(axis=0)
    if target_se is not None:
        ok = cand[cand["se_median"] <= target_se]
        best = (
            ok.sort_values(["cost", "se_median"]).iloc[0]
            if len(ok)
            else cand.loc[at].sort_values("se_median").iloc[0]
        )
    else:
        floor = cand.loc[at, "se_median"].min() * (1 + tolerance)
        tied = cand[(cand["cost"] <= budget) & (cand["se_median"] <= floor)]
        best = tied.sort_values(["cost", "se_median"]).iloc[0]
    by_cost = cand.sort_values(["cost", "se_median"])
    frontier = by_cost[by_cost["se_median"] < by_cost["se_median"].cummin().shift(fill_value=np.inf)]
    cur = pd.Series({k: counts.get(gw.FIELDS[k], 1.0) for k in DESIGN})
    cur["calls"] = float(gw.calls(pd.DataFrame([cur]), counts)[0]) * n_systems
    cur["cost"] = float(cur["n_items"] * item_cost(*cur[DESIGN[1:]]))
    se_cur = gw.summarize_designs(current[:, None], current, level=level).iloc[0]
    cur = pd.concat([cur, se_cur])
    plan = Plan(
        best=best,
        frontier=frontier.reset_index(drop=True),
        candidates=cand,
        current=cur,
        budget=float(budget),
    )
    plan.baselines = _baselines(cand)
    plan.candidates.attrs.update(estimand=estimand, decision=decision, level=level, objective=objective)
    return plan


def _baselines(cand: pd.DataFrame) -> pd.DataFrame:
    """Messing (2026) Sec. 4.2's allocations at the same budget: naive (one prompt, judge and
    temperature, 3 replications), standard (one of each, no replication: all budget to
    items) and TEE-guided (the best design).
    """
    at = cand[cand["at_budget"]]
    out = []
    for name, want in (
        ("naive (V=1, R=3)", dict(n_prompts=1, n_judges=1, n_temperatures=1, n_replicates=3)),
        ("standard (V=1, R=1)", dict(n_prompts=1, n_judges=1, n_temperatures=1, n_replicates=1)),
    ):
        m = at
        for k, v in want.items():
            m = m[m[k] == min(v, at[k].max())]
        if len(m):
            out.append(m.iloc[0].rename(name))
    out.append(at.sort_values("se_median").iloc[0].rename("TEE-guided"))
    return pd.DataFrame(out)
