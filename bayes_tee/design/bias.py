"""The judge-bias covariates users have, built from a long frame: length, position, self-preference.

- **length**: with a reference output's length beside each output's (a pairwise or
  reference-anchored verdict, AlpacaEval), AlpacaEval 2's transform ``tanh((len - len_ref) /
  SD(len - len_ref))`` (Dubois et al. 2024, length-controlled AlpacaEval: bounded, so a few very
  long outputs do not carry the slope; 0 is equal length, so ``control={"length": 0}`` is their
  length-controlled score); without a reference, ``log(len)`` centred (the slope is then per
  doubling-ish of the length, a ratio scale).
- **position**: ``+0.5`` when the system's output was shown first, ``-0.5`` when second (a
  pairwise judge's order bias; the slope is the first position's advantage, 0 its average).
- **self_preference**: ``1.0`` when the judge belongs to the system's family (a mapping of
  judge -> family and system -> family, or one mapping for both), else ``0.0``.

>>> import pandas as pd
>>> df = pd.DataFrame({"len": [100, 300, 200, 200], "ref": [200, 200, 200, 100]})
>>> bias_covariates(df, length="len", reference_length="ref")["length"].round(3).tolist()
[-0.78, 0.78, 0.0, 0.78]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError


def _column(df: pd.DataFrame, name: str, what: str) -> pd.Series:
    if name not in df.columns:
        raise DesignError(
            f"{what}={name!r} is not a column of the data; columns: {list(map(str, df.columns))}."
        )
    return df[name]


def _numbers(df: pd.DataFrame, name: str, what: str) -> np.ndarray:
    values = _column(df, name, what)
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        raise DesignError(
            f"{what}={name!r} must hold numbers (lengths in characters or tokens), got dtype {values.dtype}; "
            f"e.g. df[{name!r}] = df['output'].str.len()."
        )
    return values.to_numpy(dtype=float)


def bias_covariates(
    df: pd.DataFrame,
    *,
    length: str | None = None,
    reference_length: str | None = None,
    position: str | None = None,
    first: object = None,
    judge: str | None = None,
    system: str | None = None,
    families: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """A copy of ``df`` with the standard judge-bias covariates added as columns (module docstring).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per scored call.
    length : str, optional
        The column of each output's length; adds ``length``.
    reference_length : str, optional
        The column of the reference (or other) output's length: ``length`` is AlpacaEval's
        ``tanh`` of the standardised difference; without it, the centred log length.
    position : str, optional
        The column saying where the system's output was shown; adds ``position`` (``+0.5``
        first, ``-0.5`` otherwise).
    first : object, optional
        The ``position`` value that means "shown first" (default: ``1``, ``"first"``, ``"a"``,
        ``"A"`` or ``True``, whichever the column holds).
    judge, system : str, optional
        The judge's and the system's columns, for ``self_preference``.
    families : mapping, optional
        Judge or system label -> its model family (``{"gpt-4o": "openai", "gpt-4o-mini":
        "openai", "claude-3": "anthropic"}``); adds ``self_preference``: 1.0 when the row's judge
        and system are of one family. Labels it does not name are of no family (0.0).

    Returns
    -------
    pandas.DataFrame
        ``df`` with the columns asked for; rows with a missing length stay, with NaN (a fit
        drops and counts them). Write them in a formula: ``score ~ model + length + (1|item)``.

    Raises
    ------
    DesignError
        A column that is missing or not numeric, or nothing asked for.

    Examples
    --------
    >>> df = pd.DataFrame({"judge": ["gpt-4o", "claude"], "model": ["gpt-4o-mini", "gpt-4o-mini"]})
    >>> fam = {"gpt-4o": "openai", "gpt-4o-mini": "openai", "claude": "anthropic"}
    >>> bias_covariates(df, judge="judge", system="model", families=fam)["self_preference"].tolist()
    [1.0, 0.0]
    """
    if not isinstance(df, pd.DataFrame):
        raise DesignError(f"bias_covariates needs a pandas DataFrame, got {type(df).__name__}.")
    if length is None and position is None and families is None:
        raise DesignError("bias_covariates: name length=, position= or families= (with judge= and system=).")
    out = df.copy()
    if length is not None:
        own = _numbers(df, length, "length")
        if reference_length is not None:
            diff = own - _numbers(df, reference_length, "reference_length")
            sd = np.nanstd(diff, ddof=1)
            if not np.isfinite(sd) or sd == 0:
                raise DesignError(
                    "length and reference_length differ by a constant: no length covariate to build."
                )
            out["length"] = np.tanh(diff / sd)
        else:
            if np.nanmin(own) <= 0:
                raise DesignError(f"length={length!r} has values <= 0; a log length needs positive lengths.")
            logs = np.log(own)
            out["length"] = logs - np.nanmean(logs)
    if position is not None:
        values = _column(df, position, "position")
        if first is None:
            seen = set(values.dropna().unique().tolist())
            first = next((v for v in (1, "first", "a", "A", True) if v in seen), None)
            if first is None:
                raise DesignError(
                    f"position={position!r} holds {sorted(map(str, seen))[:4]}: say which value means shown "
                    "first with first=."
                )
        out["position"] = np.where(values.isna(), np.nan, np.where(values == first, 0.5, -0.5))
    if families is not None:
        if judge is None or system is None:
            raise DesignError("self_preference needs judge= and system= (the columns) beside families=.")
        fam = dict(families)
        j = _column(df, judge, "judge").astype(str).map(fam)
        s = _column(df, system, "system").astype(str).map(fam)
        out["self_preference"] = (j.notna() & (j == s)).astype(float)
    return out
