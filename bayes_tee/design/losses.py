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


#: The reason under which :func:`drop_copies` counts the rows it drops.
COPY_REASON = "the row is an exact copy of another (every column equal, a non-integer score)"


def drop_copies(df: pd.DataFrame, outcome: str | None) -> tuple[pd.DataFrame, int]:
    """``df`` without the rows that repeat another row in every column, when the outcome is a
    continuous score, and how many were dropped.

    A repeated call of an eval framework carries its own epoch, sample or call id, and a
    continuous score (a preference, a probability) repeated to the last digit in every column is
    a copy of one call (a file appended twice), not a replicate: kept, it would tell the model
    that repeated calls never vary, pinning the residual at zero. 0/1 verdicts and integer
    scores repeat legitimately and are never dropped.

    >>> df = pd.DataFrame({"score": [0.25, 0.25, 0.5], "item": ["a", "a", "b"]})
    >>> drop_copies(df, "score")[1]
    1
    >>> drop_copies(df.assign(score=[1, 1, 0]), "score")[1]
    0
    """
    if outcome is None or outcome not in df.columns or not pd.api.types.is_float_dtype(df[outcome]):
        return df, 0
    y = df[outcome].to_numpy(dtype=float)
    finite = y[np.isfinite(y)]
    if not len(finite) or np.all(finite == np.round(finite)):
        return df, 0
    try:
        copy = df.duplicated().to_numpy()
    except TypeError:  # unhashable cells (lists, dicts): nothing to compare
        return df, 0
    return (df.loc[~copy], int(copy.sum())) if copy.any() else (df, 0)
