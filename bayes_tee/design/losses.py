"""Rows a design cannot use: which are dropped, and the note that says so.

>>> import pandas as pd
>>> df = pd.DataFrame({"score": [1.0, None, 0.0], "item": ["a", "b", None]})
>>> keep, dropped = drop_missing(df, df["score"], "score", {"item": "item"})
>>> keep.tolist(), dropped
([True, False, False], {'score is NaN': 1, 'item is missing': 1})
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError

#: ``DataFrame.attrs`` key under which the log readers (:mod:`bayes_tee.io`) store the roles of
#: the columns they write, so ``fit_posterior(bt.read_inspect(...))`` needs no role arguments.
ROLES_ATTR = "bayes_tee_roles"


def drop_missing(
    df: pd.DataFrame, y: pd.Series, outcome: str, columns: dict[str, str]
) -> tuple[np.ndarray, dict[str, int]]:
    """Rows to keep (outcome present and every column in ``columns`` present) and the rows
    dropped, by reason; ``columns`` maps each column to how the reason names it.
    """
    keep = ~y.isna().to_numpy()
    dropped: dict[str, int] = {}
    if (~keep).any():
        dropped[f"{outcome} is NaN"] = int((~keep).sum())
    for col, name in columns.items():
        miss = df[col].isna().to_numpy() & keep
        if miss.any():
            dropped[f"{name} is missing"] = int(miss.sum())
            keep &= ~miss
    if not keep.any():
        raise DesignError(f"No rows left after dropping {dropped}. Check that {outcome!r} holds the scores.")
    return keep, dropped


def dropped_notes(dropped: dict[str, int], used: int, total: int) -> list[str]:
    """The design's notes, starting with the rows dropped and why (none when nothing was)."""
    if not dropped:
        return []
    reasons = ", ".join(f"{v} row(s) where {k}" for k, v in dropped.items())
    return [f"Dropped {reasons}; {used} of {total} rows used."]


def log_losses(df: pd.DataFrame) -> dict[str, int]:
    """The scores a log reader could not use (``df.attrs["dropped_by_model"]``), for the models
    still in ``df``: reason -> count.
    """
    by_model = df.attrs.get("dropped_by_model") if ROLES_ATTR in df.attrs else None
    if not by_model:
        return {}
    present = set(df["model"].astype(str)) if "model" in df.columns else set(by_model)
    total: dict[str, int] = {}
    for name, reasons in by_model.items():
        if name in present:
            for reason, n in reasons.items():
                total[reason] = total.get(reason, 0) + int(n)
    return total
