"""Validated judge-calibration data: test verdicts, calibration verdicts with human labels.

:func:`prepare` checks the two long tables (one row per system x item x judge), drops rows with a
missing verdict (counted and reported), and reduces them to the sufficient statistics of the
calibration model:

* per judge x system: true/false positives and negatives on the calibration items;
* per system: calibration items and how many are labelled positive;
* per system: counts of each test verdict pattern over the judges (1, 0 or missing per judge),
  over every possible pattern, so the arrays keep their shape from one data set to the next.

>>> d = prepare(test, calib, system="model", judge="judge", verdict="v", label="y")  # doctest: +SKIP
>>> d.tp.shape                                                                   # doctest: +SKIP
(2, 3)
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError, DesignWarning

#: One judge's verdict codes in a test pattern.
MISSING = -1


@dataclass(frozen=True)
class CalibrationData:
    """Calibration and test data in wide form and as sufficient statistics.

    ``test`` and ``calib`` are wide: index (system, item), one column per judge holding
    the 0/1 verdict (NaN when that judge did not rate the item); ``calib`` also holds ``label``.
    Count arrays are ``(judge, system)``; ``patterns`` is ``(n_patterns, judge)`` with 1, 0 or
    ``MISSING``; ``pattern_counts`` is ``(system, n_patterns)``.
    """

    systems: list[str]
    judges: list[str]
    test: pd.DataFrame
    calib: pd.DataFrame
    tp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray
    fp: np.ndarray
    label_n: np.ndarray
    label_pos: np.ndarray
    patterns: np.ndarray
    pattern_counts: np.ndarray
    dropped: dict

    @property
    def n_calibrated(self) -> np.ndarray:
        """Calibration verdicts per judge x system."""
        return self.tp + self.fn + self.tn + self.fp

    @property
    def n_test(self) -> np.ndarray:
        """Test items per system and judge."""
        return self.pattern_counts.sum(axis=1)

    def verdicts(self, which: str, system: str, judge: str) -> pd.DataFrame:
        """Rows of ``test`` or ``calib`` for one system with that judge's verdict present."""
        table = self.test if which == "test" else self.calib
        if system not in table.index.get_level_values(0):
            return table.iloc[:0]
        sub = table.loc[system]
        return sub[sub[judge].notna()]


def _binary(df: pd.DataFrame, col: str, role: str) -> pd.Series:
    s = df[col]
    if s.dtype == bool:
        return s.astype(float)
    if isinstance(s.dtype, pd.CategoricalDtype) or s.dtype == object or pd.api.types.is_string_dtype(s):
        raise DesignError(
            f"Column {col!r} ({role}) must hold 0/1 (or True/False); it holds text such as "
            f"{s.dropna().iloc[0]!r}. Map it first, e.g. df[{col!r}] = (df[{col!r}] == 'yes').astype(int)."
        )
    bad = s.dropna()[~s.dropna().isin([0, 1])]
    if len(bad):
        raise DesignError(
            f"Column {col!r} ({role}) must be binary 0/1; found {bad.nunique()} other value(s), "
            f"e.g. {bad.iloc[0]!r}. Threshold or recode it before calibrating."
        )
    return s.astype(float)


def _check_columns(df: pd.DataFrame, name: str, cols: dict[str, str | None]) -> None:
    missing = {role: c for role, c in cols.items() if c is not None and c not in df.columns}
    if missing:
        listed = ", ".join(f"{role}={c!r}" for role, c in missing.items())
        raise DesignError(
            f"{name}: column(s) not found: {listed}. Pass your column names, e.g. "
            f"system='model', verdict='judge_says_correct'. Columns present: {list(df.columns)}."
        )


def _long(df: pd.DataFrame, name: str, system, item, judge, verdict, label=None) -> tuple[pd.DataFrame, int]:
    cols = {"system": system, "item": item, "judge": judge, "verdict": verdict, "label": label}
    _check_columns(df, name, cols)
    out = pd.DataFrame(
        {
            "system": df[system].astype(str) if system else "all",
            "item": df[item].astype(str),
            "judge": df[judge].astype(str) if judge else "judge",
        }
    )
    out["verdict"] = _binary(df, verdict, "judge verdict").to_numpy()
    if label is not None:
        lab = df[label]
        if lab.isna().any():
            raise DesignError(
                f"{name}: column {label!r} (human label) has {int(lab.isna().sum())} missing value(s). "
                "Calibration items need a label: drop those rows or move them to the test set."
            )
        out["label"] = _binary(df, label, "human label").to_numpy()
    n_missing = int(out["verdict"].isna().sum())
    out = out[out["verdict"].notna()]
    dup = out.duplicated(["system", "item", "judge"])
    if dup.any():
        first = out[dup].iloc[0]
        raise DesignError(
            f"{name}: {int(dup.sum())} repeated verdict(s) for one system x item x judge (e.g. "
            f"system={first['system']!r}, item={first['item']!r}, judge={first['judge']!r}). The model "
            "treats verdicts as independent given the truth, which repeated calls of one judge are "
            "not: aggregate them first (e.g. the majority verdict per item and judge)."
        )
    return out, n_missing


def prepare(
    test_df: pd.DataFrame,
    calib_df: pd.DataFrame,
    *,
    system: str | None,
    item: str,
    judge: str | None,
    verdict: str,
    label: str,
) -> CalibrationData:
    """Validate the test and calibration tables and compute sufficient statistics.

    Parameters
    ----------
    test_df : DataFrame
        One row per system x item x judge on the unlabelled test items.
    calib_df : DataFrame
        The same for the labelled calibration items, with the human ``label`` column.
    system, judge : str or None
        Column names (None: one system / one judge).
    item, verdict, label : str
        Column names of the item id, the judge's 0/1 verdict and the human 0/1 label.
    """
    test, miss_t = _long(test_df, "test_df", system, item, judge, verdict)
    cal, miss_c = _long(calib_df, "calib_df", system, item, judge, verdict, label)
    if len(test) == 0:
        raise DesignError("test_df has no rows with a verdict: nothing to correct.")
    if len(cal) == 0:
        raise DesignError("calib_df has no rows with a verdict: the judge cannot be calibrated.")
    conflict = cal.groupby(["system", "item"])["label"].nunique()
    if (conflict > 1).any():
        bad = conflict[conflict > 1].index[0]
        raise DesignError(
            f"calib_df: column {label!r} differs between judges for system={bad[0]!r}, item={bad[1]!r}; "
            "the human label belongs to the item, not to the judge."
        )
    systems = sorted(test["system"].unique())
    unknown = sorted(set(cal["system"]) - set(systems))
    if unknown:
        raise DesignError(
            f"calib_df: system(s) {unknown} in column {system!r} have no test rows. Calibration of "
            "a system without test items has nothing to correct; drop them or add their test rows."
        )
    judges = sorted(set(test["judge"]) | set(cal["judge"]))
    missing_judges = sorted(set(test["judge"]) - set(cal["judge"]))
    if missing_judges:
        raise DesignError(
            f"Judge(s) {missing_judges} (column {judge!r}) have test verdicts but no calibration "
            "verdicts; their sensitivity and specificity cannot be estimated. Add calibration rows "
            "for them or drop their test rows."
        )
    dropped = {"test_missing_verdict": miss_t, "calib_missing_verdict": miss_c}
    if miss_t or miss_c:
        warnings.warn(
            f"Dropped {miss_t} test and {miss_c} calibration row(s) with a missing verdict "
            f"(column {verdict!r}); they are counted in .dropped.",
            DesignWarning,
            stacklevel=3,
        )
    wide_t = test.pivot(index=["system", "item"], columns="judge", values="verdict").reindex(columns=judges)
    wide_c = cal.pivot(index=["system", "item"], columns="judge", values="verdict").reindex(columns=judges)
    wide_c["label"] = cal.groupby(["system", "item"])["label"].first()

    S, J = len(systems), len(judges)
    counts = {k: np.zeros((J, S)) for k in ("tp", "fn", "tn", "fp")}
    cal = cal.assign(
        j=cal["judge"].map({j: i for i, j in enumerate(judges)}),
        s=cal["system"].map({s: i for i, s in enumerate(systems)}),
    )
    for key, (lab, ver) in {"tp": (1, 1), "fn": (1, 0), "tn": (0, 0), "fp": (0, 1)}.items():
        sel = cal[(cal["label"] == lab) & (cal["verdict"] == ver)]
        np.add.at(counts[key], (sel["j"].to_numpy(), sel["s"].to_numpy()), 1.0)
    per_item = wide_c["label"].groupby(level=0)
    label_n = per_item.size().reindex(systems, fill_value=0).to_numpy(float)
    label_pos = per_item.sum().reindex(systems, fill_value=0).to_numpy(float)

    patterns = np.array(
        [p for p in itertools.product((1, 0, MISSING), repeat=J) if any(v != MISSING for v in p)]
    )
    codes = wide_t.fillna(MISSING).to_numpy(int)
    base = 3 ** np.arange(J)
    index_of = {int(((p + 1) * base).sum()): i for i, p in enumerate(patterns)}
    pid = np.array([index_of[int(k)] for k in ((codes + 1) * base).sum(axis=1)])
    sid = pd.Index(systems).get_indexer(wide_t.index.get_level_values(0))
    pattern_counts = np.zeros((S, len(patterns)))
    np.add.at(pattern_counts, (sid, pid), 1.0)
    return CalibrationData(
        systems,
        judges,
        wide_t,
        wide_c,
        counts["tp"],
        counts["fn"],
        counts["tn"],
        counts["fp"],
        label_n,
        label_pos,
        patterns,
        pattern_counts,
        dropped,
    )
