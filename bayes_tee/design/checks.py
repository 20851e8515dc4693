"""What a frame must be before any design is built from it: a pandas DataFrame with distinct
column names, and a numeric, finite outcome whose squares do not overflow. Every path in
(roles, formula, out of core) checks with these, so it refuses with the same words.

>>> import pandas as pd
>>> outcome_values(pd.DataFrame({"score": [True, False]}), "score").tolist()
[1.0, 0.0]
"""

from __future__ import annotations

import difflib

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError

#: The largest outcome magnitude a design takes: sums of squares of up to 1e8 rows stay finite.
MAX_OUTCOME = 1e100


def closest_column(name: str, columns: list[str]) -> str:
    """`` Did you mean 'x'?`` for the column nearest ``name``, or nothing.

    >>> closest_column("socre", ["item", "score"])
    " Did you mean 'score'?"
    """
    match = difflib.get_close_matches(name, columns, n=1)
    return f" Did you mean {match[0]!r}?" if match else ""


def check_frame(df: object) -> None:
    """A pandas DataFrame whose column names are distinct; the error names the fix.

    >>> check_frame(pd.DataFrame([[1, 2]], columns=["item", "item"]))
    Traceback (most recent call last):
    ...
    bayes_tee._core.exceptions.DesignError: Column name(s) ['item'] appear more than once ...
    """
    if not isinstance(df, pd.DataFrame):
        raise DesignError(f"Expected a pandas DataFrame, got {type(df).__name__}.")
    dup = df.columns[df.columns.duplicated()].unique().tolist()
    if dup:
        raise DesignError(
            f"Column name(s) {dup} appear more than once in the data, so a role cannot say which "
            "column it means. Rename or drop the copies, e.g. df = df.loc[:, ~df.columns.duplicated()]."
        )


def outcome_values(df: pd.DataFrame, col: str) -> pd.Series:
    """The outcome column as floats (booleans as 0/1); a text or infinite score is an error."""
    y = df[col]
    if pd.api.types.is_bool_dtype(y):
        return y.astype(float)
    if not pd.api.types.is_numeric_dtype(y):
        example = y.dropna().astype(str).unique()[:3].tolist()
        raise DesignError(
            f"Outcome column {col!r} is not numeric (values like {example}). Convert it to "
            f"numbers first, e.g. df[{col!r}] = (df[{col!r}] == {example[0]!r}).astype(int) for a "
            "binary verdict."
        )
    y = y.astype(float)
    if np.isinf(y).any():
        raise DesignError(
            f"Outcome column {col!r} has {int(np.isinf(y).sum())} infinite value(s). "
            "Replace them with NaN (they are then dropped and counted) or fix the scores."
        )
    largest = float(np.nanmax(np.abs(y.to_numpy()))) if y.notna().any() else 0.0
    if largest > MAX_OUTCOME:
        raise DesignError(
            f"Outcome column {col!r} holds values as large as {largest:.3g}: the model works with "
            f"squared scores, which overflow in floating point beyond {MAX_OUTCOME:.0e}. Rescale it "
            f"(e.g. df[{col!r}] / {10 ** np.floor(np.log10(largest)):.0e}) and scale the answers back."
        )
    return y


def scale_use_options(options: dict, ordinal: bool, family: str, facets: list[str]) -> tuple[str, str]:
    """An ordinal fit's ``thresholds`` and ``spread`` options, checked against the outcome and
    the facets: each is ``"common"`` or ``"judge"``; ``"judge"`` needs an ordinal outcome and a
    judge column, and a judge-specific spread needs a fixed judge panel.

    >>> scale_use_options({"thresholds": "judge"}, True, "ordinal", ["item", "judge"])
    ('judge', 'common')
    """
    chosen = {k: options.get(k, "common") for k in ("thresholds", "spread")}
    what = {"thresholds": "cutpoints", "spread": "latent spread"}
    for name, value in chosen.items():
        if value not in ("common", "judge"):
            raise DesignError(f"{name} must be 'common' or 'judge', got {value!r}.")
        if value == "common":
            continue
        if not ordinal:
            raise DesignError(
                f"{name}={value!r} sets an ordinal outcome's {what[name]} per judge; family={family!r} "
                f"has none: use family='ordinal', or drop {name}=."
            )
        if "judge" not in facets:
            raise DesignError(
                f"{name}='judge' gives each judge its own {what[name]}: name the judge column with "
                "judge= (two or more judges)."
            )
    if chosen["spread"] == "judge" and options.get("judge_effect") == "random":
        raise DesignError(
            "spread='judge' estimates each fitted judge's latent spread; a random judge facet also "
            "stands for new judges, whose spread the fit cannot say. Use judge_effect='fixed'."
        )
    return chosen["thresholds"], chosen["spread"]
