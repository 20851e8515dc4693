"""The long frame every log reader returns: one row per score, the roles filled, losses counted.

Columns, in order: ``item, prompt, judge, replicate, model, temperature, score`` and then any
reader-specific columns (``label``, ``category``, ``log``...). The frame's ``attrs`` hold the
roles (:data:`bayes_tee.design.losses.ROLES_ATTR`, read by ``fit_posterior``), the scores that
could not be used (``attrs["dropped"]``, reason -> count, and ``attrs["dropped_by_model"]``;
said once as a :class:`~bayes_tee.DesignWarning` and carried into the design's dropped rows)
and the notes the reader made (``attrs["notes"]``).

>>> score_value("C"), score_value("P"), score_value(True), score_value("0.25")
(1.0, 0.5, 1.0, 0.25)
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from .._core.exceptions import ArgumentError, DesignError, DesignWarning, FileError, MissingFileError
from ..design.roles import ROLES_ATTR

#: Inspect AI's letter grades (``inspect_ai.scorer``: CORRECT, INCORRECT, PARTIAL, NOANSWER).
LETTER_GRADES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
COLUMNS = ("item", "prompt", "judge", "replicate", "model", "temperature", "score")
#: Facet columns that become roles when they have more than one level and no missing value.
FACET_ROLES = ("prompt", "judge", "replicate", "temperature", "category")


class Unscorable(ValueError):
    """A score value that is not a number (its reason is the message)."""


def score_value(value: object) -> float:
    """A score as a number: letter grades C/I/P/N as 1/0/0.5/0, booleans as 1/0, numbers and
    numeric strings as they are.

    Raises
    ------
    Unscorable
        For NaN, None, lists, mappings and other text, with the reason.

    Examples
    --------
    >>> score_value("I"), score_value(3)
    (0.0, 3.0)
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        if math.isnan(value):
            raise Unscorable("the score is unscored (NaN)")
        return float(value)
    if value is None:
        raise Unscorable("the score is empty (None)")
    if isinstance(value, str):
        text = value.strip()
        if text.upper() in LETTER_GRADES:
            return LETTER_GRADES[text.upper()]
        try:
            number = float(text)
        except ValueError:
            raise Unscorable("the score is text, not a number or grade") from None
        if math.isnan(number):
            raise Unscorable("the score is unscored (NaN)")
        return number
    raise Unscorable(f"the score is a {type(value).__name__}, not a number")


def log_files(
    source: str | Path | Sequence[str | Path],
    suffixes: tuple[str, ...],
    what: str,
    said: list[str] | None = None,
) -> list[Path]:
    """The files a reader reads: a file, a folder (searched recursively for ``suffixes``) or a
    list of either. A file given twice, or a byte-for-byte copy of another (the same log in two
    folders), is read once; each copy left out is appended to ``said``.

    Raises
    ------
    DesignError
        For a path that does not exist, or when no file is found.
    """
    if not isinstance(source, str | Path | list | tuple):
        raise ArgumentError(
            f"Expected a file, a folder or a list of them for the {what}, got {type(source).__name__}."
        )
    items = [source] if isinstance(source, str | Path) else list(source)
    files: list[Path] = []
    for entry in items:
        path = Path(entry)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(suffixes)))
        elif path.exists():
            files.append(path)
        else:
            raise MissingFileError(f"No file or folder {str(path)!r}.")
    if not files:
        raise FileError(f"No {what} found in {source!r} (looked for {', '.join(suffixes)} files).")
    return _distinct(files, said if said is not None else [])


def _distinct(files: list[Path], said: list[str]) -> list[Path]:
    """``files`` without repeats and byte-for-byte copies (only files of equal size are hashed)."""
    first: dict[object, Path] = {}
    out = []
    sizes = Counter(p.stat().st_size for p in files)
    for path in files:
        key: object = path.resolve()
        if key not in first and sizes[path.stat().st_size] > 1:
            with open(path, "rb") as handle:
                key = hashlib.file_digest(handle, "sha256").hexdigest()
        if key in first:
            said.append(f"{path} is a copy of {first[key]}: read once.")
            continue
        first[key] = path
        out.append(path)
    return out


def check_calls(df: pd.DataFrame, source: str) -> None:
    """No two rows of a reader's frame are the same call (model, task, prompt, item, judge,
    replicate): a log read twice in another form would otherwise pass for replicates.

    Raises
    ------
    DesignError
        Naming a repeated call and the files that hold it.
    """
    key = [c for c in ("model", "task", "prompt", "temperature", "item", "judge", "replicate") if c in df]
    dup = df.duplicated(key, keep=False)
    if dup.any():
        first = df.loc[dup, key].iloc[0]
        files = sorted(set(df.loc[dup, "log"].astype(str)))[:4] if "log" in df else []
        raise DesignError(
            f"{int(df.duplicated(key).sum())} score(s) in {source} repeat a call already read, e.g. "
            f"{first.to_dict()}{' in ' + ', '.join(files) if files else ''}: the same results read "
            "twice (two copies, or one run saved in two formats). Read each run once."
        )


def pick(names: Iterable[str], wanted: Sequence[str] | str | None, kind: str) -> list[str]:
    """``wanted`` (or all of ``names``), checked against the names present."""
    present = list(dict.fromkeys(names))
    if wanted is None:
        return present
    wanted = [wanted] if isinstance(wanted, str) else list(wanted)
    unknown = [w for w in wanted if w not in present]
    if unknown:
        raise DesignError(f"No {kind} {unknown} in the logs; the logs have {present}.")
    return wanted


#: The answers' lengths a reader may add (characters and output tokens): judge-bias covariates
#: (:func:`bayes_tee.bias_covariates`); a column no row knows is left out.
LENGTH_COLUMNS = ("output_length", "output_tokens")


def long_frame(
    rows: list[dict],
    lost: Counter,
    notes: list[str],
    source: str,
    model: str | None = None,
    stacklevel: int = 3,
    said: Sequence[str] = (),
) -> pd.DataFrame:
    """Assemble the reader's rows into the long frame with its roles, losses and notes.

    ``lost`` counts the scores that could not be used by (model, reason). ``model`` keeps one
    model's rows and losses (the other models were not asked for). Losses, and ``said`` (what
    the reader merged, skipped or renumbered), are said once as a
    :class:`~bayes_tee.DesignWarning`; both stay in ``attrs["notes"]``.
    """
    notes = [*said, *notes]
    by_model: dict[str, dict[str, int]] = {}
    for (name, reason), n in lost.items():
        if model is None or name == model:
            by_model.setdefault(str(name), {})[reason] = n
    dropped: Counter = Counter()
    for reasons in by_model.values():
        dropped.update(reasons)
    df = pd.DataFrame(rows)
    if df.empty:
        why = f" ({', '.join(f'{n} where {r}' for r, n in dropped.items())})" if dropped else ""
        raise DesignError(f"No scored rows in {source}{why}.")
    check_calls(df, source)
    if model is not None:
        models = sorted(df["model"].astype(str).unique())
        if model not in models:
            raise DesignError(f"No model {model!r} in {source}; the logs hold {models}.")
        df = df[df["model"] == model].reset_index(drop=True)
    first = [c for c in COLUMNS if c in df.columns]
    df = df[first + [c for c in df.columns if c not in first]]
    df["score"] = df["score"].astype(float)
    for column in LENGTH_COLUMNS:  # answers' lengths, where the reader knows them (covariates)
        if column in df.columns:
            if df[column].isna().all():
                df = df.drop(columns=column)
            else:
                df[column] = pd.to_numeric(df[column], errors="coerce")
    if "temperature" in df.columns:
        df["temperature"] = pd.to_numeric(df["temperature"], errors="coerce")
    roles: dict[str, str] = {"outcome": "score", "item": "item"}
    for role in (r for r in FACET_ROLES if r in df.columns):  # each reader names a column by its role
        levels = df[role].nunique(dropna=True)
        if levels > 1 and df[role].notna().all():
            roles[role] = role
        elif levels > 1:
            notes.append(
                f"{role!r} is not used as the {role} facet: {int(df[role].isna().sum())} row(s) do not "
                "record it (fill them, then pass it as a role)."
            )
    df.attrs[ROLES_ATTR] = roles
    df.attrs["dropped"] = dict(dropped)
    df.attrs["dropped_by_model"] = by_model
    df.attrs["notes"] = list(notes)
    df.attrs["source"] = source
    for line in said:
        warnings.warn(line, DesignWarning, stacklevel=stacklevel)
    if dropped:
        why = ", ".join(f"{n} where {reason}" for reason, n in dropped.most_common())
        warnings.warn(
            f"{sum(dropped.values())} score(s) in {source} could not be used: {why} "
            "(counted in df.attrs['dropped'] and in the fit's dropped rows).",
            DesignWarning,
            stacklevel=stacklevel,
        )
    return df


def describe(df: pd.DataFrame) -> str:
    """A few lines on a reader's frame: rows, levels per role, losses, notes.

    >>> import pandas as pd
    >>> print(describe(pd.DataFrame({"item": ["a"], "score": [1.0]})))
    1 scores; roles: outcome=score, item=item (1)
    """
    roles = df.attrs.get(ROLES_ATTR, {"outcome": "score", "item": "item"})
    levels = ", ".join(
        f"{role}={col}" + ("" if role == "outcome" else f" ({df[col].nunique()})")
        for role, col in roles.items()
    )
    lines = [f"{len(df)} scores; roles: {levels}"]
    if "model" in df.columns and df["model"].nunique() > 1:
        lines.append(f"models: {', '.join(map(str, sorted(df['model'].unique())))} (fit one at a time)")
    if df.attrs.get("dropped"):
        lines.append("dropped: " + ", ".join(f"{n} where {why}" for why, n in df.attrs["dropped"].items()))
    lines.extend(f"note: {n}" for n in df.attrs.get("notes", []))
    return "\n".join(lines)
