"""Column values -> integer codes and level labels, and rows -> per-cell statistics: the
coding every design path shares (roles, formula, out of core), so a level is the same level
everywhere and no path invents one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError


def level_codes(values: pd.Series) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes and string labels of the levels present, in natural (numeric if possible)
    order. A categorical column's unused categories (what pandas leaves after filtering) are no
    levels; two values that print the same (``1`` and ``"1"``) are refused, never merged.

    >>> level_codes(pd.Series(pd.Categorical(["b", "a"], categories=["a", "b", "c"])))[1]
    ('a', 'b')
    """
    try:
        cat = pd.Categorical(values).remove_unused_categories()
    except TypeError:  # lists, dicts, sets: values pandas cannot hash
        kinds = sorted({type(v).__name__ for v in values if not pd.api.types.is_hashable(v)})
        raise DesignError(
            f"Column {values.name!r} holds {', '.join(kinds)} values, which cannot label levels. "
            f"Make them text first, e.g. df[{values.name!r}] = df[{values.name!r}].astype(str)."
        ) from None
    labels = tuple(str(c) for c in cat.categories)
    if len(set(labels)) < len(labels):
        same = [c for c in cat.categories if labels.count(str(c)) > 1]
        raise DesignError(
            f"Column {values.name!r} holds different values that print the same "
            f"({', '.join(f'{c!r} ({type(c).__name__})' for c in same)}): one level or two? Make the "
            f"column one type, e.g. df[{values.name!r}] = df[{values.name!r}].astype(str)."
        )
    return np.asarray(cat.codes, dtype=np.int64), labels


def is_constant(y_sd: float, y_mean: float) -> bool:
    """Whether an outcome with this SD and mean is constant: SD zero, or within what floating
    point leaves of a constant (all scores 0.7 give an SD of 1e-16, not 0): 64 machine epsilons
    of the mean. Scores that vary in their 13th significant digit still count as varying.

    >>> is_constant(1.1e-16, 0.7), is_constant(1e-11, 1e-10), is_constant(5e-10, 5e3)
    (True, False, False)
    """
    return not y_sd > 64 * np.finfo(float).eps * max(abs(y_mean), np.finfo(float).tiny)


def cell_stats(cell_codes: np.ndarray, y: np.ndarray, facets: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Per-cell count, mean and within-cell sum of squares (centred, so exact at zero spread),
    and each row's cell index. Cells are in the facets' lexicographic order.

    The rows are grouped by one integer key per cell (the codes in mixed radix) rather than by
    the facet columns: the same groups and sums, several times faster on a large design.

    >>> codes, y = np.array([[1, 0], [0, 1], [1, 0]]), np.array([1.0, 2.0, 3.0])
    >>> cells, row_cell = cell_stats(codes, y, ["a", "b"])
    >>> cells.to_dict("list"), row_cell.tolist()
    ({'a': [0, 1], 'b': [1, 0], 'n': [1, 2], 'mean': [2.0, 2.0], 'ss': [0.0, 2.0]}, [1, 0, 1])
    """
    codes = np.asarray(cell_codes, dtype=np.int64).reshape(len(y), len(facets))
    radix = codes.max(axis=0) + 1 if len(codes) else np.ones(len(facets), dtype=np.int64)
    if np.prod(radix.astype(float)) < 2.0**62:
        key = np.ravel_multi_index(tuple(codes.T), tuple(radix)) if len(facets) else np.zeros(len(y), int)
        cell_keys, row_cell = np.unique(key, return_inverse=True)
        cell_codes_out = np.stack(np.unravel_index(cell_keys, tuple(radix)), axis=1).reshape(-1, len(facets))
    else:  # more cells than a 64-bit key can number: unique rows (slower, the same order)
        cell_codes_out, row_cell = np.unique(codes, axis=0, return_inverse=True)
    row_cell = row_cell.reshape(-1)
    grouped = pd.Series(y).groupby(row_cell, sort=True)
    mean = grouped.mean().to_numpy()
    ss = pd.Series((y - mean[row_cell]) ** 2).groupby(row_cell, sort=True).sum().to_numpy()
    out = pd.DataFrame(cell_codes_out.astype(np.int64), columns=facets)
    out["n"] = grouped.size().to_numpy()
    out["mean"], out["ss"] = mean, ss
    return out, row_cell.astype(np.int64)
