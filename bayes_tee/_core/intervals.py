"""The one interval convention of every table: the posterior median and the central credible
interval at ``level``, in columns ``<quantity>_median`` (or ``<quantity>`` where the table names
the quantity itself), ``<quantity>_low`` and ``<quantity>_high``.

>>> import numpy as np
>>> summarize_samples(np.arange(101.0)[:, None], 0.9, "se_")
   se_median  se_low  se_high
0       50.0     5.0     95.0
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .exceptions import ArgumentError


def check_level(level: object, name: str = "level") -> float:
    """``level`` as a float strictly between 0 and 1, else an ArgumentError naming it.

    >>> check_level(0.9)
    0.9
    """
    ok = isinstance(level, int | float | np.floating) and not isinstance(level, bool) and 0 < level < 1
    if not ok:
        raise ArgumentError(f"{name} must be a number between 0 and 1 (e.g. 0.9), got {level!r}.")
    return float(level)


def interval(x: np.ndarray, level: float, axis: int | None = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(low, median, high)`` of draws along ``axis``: the central ``level`` interval.

    >>> [round(float(v), 9) for v in interval(np.arange(11.0), 0.8)]
    [1.0, 5.0, 9.0]
    """
    check_level(level)
    q = (1 - level) / 2
    lo, med, hi = np.quantile(x, [q, 0.5, 1 - q], axis=axis)
    return lo, med, hi


def summarize_samples(x: np.ndarray, level: float, prefix: str = "") -> pd.DataFrame:
    """Median and central interval of each column of ``(n_samples, n)`` draws: columns
    ``{prefix}median``, ``{prefix}low``, ``{prefix}high``.
    """
    lo, med, hi = interval(x, level, axis=0)
    return pd.DataFrame({f"{prefix}median": med, f"{prefix}low": lo, f"{prefix}high": hi})


def summarize(da: xr.DataArray, level: float, prefix: str = "") -> pd.DataFrame:
    """Median and central interval over (chain, draw), one row per ``component``."""
    stacked = da.stack(sample=("chain", "draw")).transpose("sample", "component").values
    out = summarize_samples(stacked, level, prefix)
    out.index = pd.Index(da["component"].values, name="component")
    return out


def add_interval(table: pd.DataFrame, name: str, x: np.ndarray, level: float) -> pd.DataFrame:
    """Add columns ``name`` (median), ``name_low`` and ``name_high`` of ``(n_samples, n)`` draws
    to ``table`` in place (tables that name the quantity itself, e.g. ``SE``), and return it.
    """
    lo, med, hi = interval(x, level, axis=0)
    table[name], table[f"{name}_low"], table[f"{name}_high"] = med, lo, hi
    return table
