"""The cost front of a leaderboard: which systems are worth what they cost.

A system is on the front (Pareto-optimal) when no other system is at least as cheap and
better. Costs are known numbers; the scores are uncertain, so each system's ``p_pareto`` is the
posterior probability that it scores higher (lower, for error rates) than every other system
no dearer than it:

    p_pareto(s) = P( score_s > score_t for every t != s with cost_t <= cost_s ),

from the same joint draws as the leaderboard's ranks and ``p_best`` (so a system that is both
dearer and worse than another in every draw has ``p_pareto`` 0, and the cheapest system has 1
unless another costs the same). It is the probability of being best among the systems no
dearer, which is what a reader choosing under a budget asks.

Costs are given per system (a mapping, a Series, or a table with the system column and a cost
column, one row per system), or per call: a table with many rows per system (the scored calls
with their price) gives each system its mean cost per call.

>>> costs = system_costs({"A": 1.0, "B": 2.0}, ["A", "B"])
>>> draws = np.array([[0.5, 0.7], [0.6, 0.4]])  # two draws of (A, B)
>>> p_pareto(draws, costs).tolist()
[1.0, 0.5]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError

#: What ``cost=`` accepts.
Cost = Mapping[str, float] | pd.Series | pd.DataFrame


def _numbers(values: pd.Series, what: str) -> np.ndarray:
    """The cost values as floats, or one error naming the bad ones."""
    numeric = pd.to_numeric(values, errors="coerce")
    bad = values[numeric.isna()]
    if len(bad):
        shown = ", ".join(f"{k!r}: {v!r}" for k, v in list(bad.items())[:5])
        raise ArgumentError(f"cost must be a number for every system; {what} has {shown}.")
    out = numeric.to_numpy(float)
    if (out < 0).any() or not np.isfinite(out).all():
        shown = ", ".join(f"{k!r}: {v:g}" for k, v in numeric[(out < 0) | ~np.isfinite(out)].items())
        raise ArgumentError(f"cost must be finite and not negative; {what} has {shown}.")
    return out


def _from_table(table: pd.DataFrame, system: str, column: str | None) -> pd.Series:
    """Per-system costs from a table (one row per system, or per call: averaged)."""
    key = system if system in table.columns else "system" if "system" in table.columns else None
    if key is None:
        named = f"{system!r} (or 'system')" if system != "system" else "'system'"
        raise ArgumentError(f"cost table needs the system column {named}; it has {list(table.columns)}.")
    if column is None:
        others = [c for c in table.columns if c != key]
        column = "cost" if "cost" in others else others[0] if len(others) == 1 else None
        if column is None:
            raise ArgumentError(
                f"cost table: name its cost column with cost_column= (one of {others}), or call it 'cost'."
            )
    if column not in table.columns:
        raise ArgumentError(
            f"cost_column {column!r} is not a column of the cost table: {list(table.columns)}."
        )
    values = pd.Series(_numbers(table[column].reset_index(drop=True), f"column {column!r}"))
    return values.groupby(table[key].astype(str).to_numpy()).mean()


def system_costs(
    cost: Cost, systems: list[str], *, system: str = "system", cost_column: str | None = None
) -> np.ndarray:
    """Each system's cost, in the order of ``systems``, checked.

    Parameters
    ----------
    cost : mapping, pandas.Series or pandas.DataFrame
        Per-system costs (``{"sys": 0.12, ...}`` or a Series indexed by system), or a table
        holding the system column (``system``, or ``"system"``) and a cost column: one row per
        system, or one per call (each system's mean).
    systems : list of str
        The fit's systems.
    system : str
        The fit's system column, looked for in a table.
    cost_column : str, optional
        The table's cost column (default ``"cost"``, or its only other column).

    Returns
    -------
    numpy.ndarray
        ``(n_systems,)`` costs.

    Raises
    ------
    ArgumentError
        Costs for unknown systems or missing for some, negative or non-numeric costs.

    >>> system_costs(pd.Series({"B": 2, "A": 1}), ["A", "B"]).tolist()
    [1.0, 2.0]
    """
    if isinstance(cost, pd.DataFrame):
        per = _from_table(cost, system, cost_column)
    elif isinstance(cost, pd.Series | Mapping):
        series = pd.Series(cost, dtype=object) if isinstance(cost, Mapping) else cost
        series.index = series.index.astype(str)
        if series.index.has_duplicates:
            raise ArgumentError(
                f"cost names a system twice: {sorted(series.index[series.index.duplicated()])}."
            )
        per = pd.Series(_numbers(series, "cost"), index=series.index)
    else:
        raise ArgumentError(
            f"cost must be a mapping of system to cost, a Series or a table, got {type(cost).__name__}."
        )
    unknown = sorted(set(per.index) - set(systems))
    missing = [s for s in systems if s not in per.index]
    if unknown or missing:
        parts = [
            f"unknown system(s) {unknown}" if unknown else "",
            f"no cost for {missing}" if missing else "",
        ]
        raise ArgumentError(
            f"cost: {'; '.join(p for p in parts if p)}. "
            f"Give one cost for each of the fit's systems: {systems}."
        )
    return per.loc[systems].to_numpy(float)


def p_pareto(draws: np.ndarray, costs: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Each system's probability of being on the cost front (module docstring).

    Parameters
    ----------
    draws : numpy.ndarray
        Joint score draws ``(n_draws, n_systems)`` (a shift shared by the systems is harmless).
    costs : numpy.ndarray
        ``(n_systems,)``.
    higher_is_better : bool
        ``False``: the lower score is better.

    Returns
    -------
    numpy.ndarray
        ``(n_systems,)`` probabilities.
    """
    x = np.asarray(draws, float) * (1.0 if higher_is_better else -1.0)
    costs = np.asarray(costs, float)
    out = np.empty(x.shape[1])
    for s in range(x.shape[1]):
        rivals = (costs <= costs[s]) & (np.arange(len(costs)) != s)
        out[s] = 1.0 if not rivals.any() else float(np.mean((x[:, [s]] > x[:, rivals]).all(axis=1)))
    return out


def front(estimate: np.ndarray, costs: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Which systems the point estimates put on the front (no rival as cheap and better).

    >>> front(np.array([0.5, 0.7, 0.6]), np.array([1.0, 2.0, 3.0])).tolist()
    [True, True, False]
    """
    x = np.asarray(estimate, float) * (1.0 if higher_is_better else -1.0)
    costs = np.asarray(costs, float)
    beaten = (costs[None, :] <= costs[:, None]) & (x[None, :] > x[:, None])
    return ~beaten.any(axis=1)
