"""Numeric covariates of a design: judge biases as model terms (length, position, self-preference).

A numeric column on a formula's fixed side is a *slope*, not a factor: ``score ~ model + length
+ (1|item)``. ``length:judge`` adds a slope per level of a facet (each judge its own bias, zero-sum
deviations around the common slope); ``(0 + length | judge)`` a random slope over a random facet
(a new judge's bias is predicted with its uncertainty, SD ``sigma_slope_length_judge``). Every
covariate is standardised over the rows used (mean 0, SD 1): the slopes' priors are on that scale
(``PriorSpec.slope_scale`` outcome SDs, or logit units for the GLMMs per
covariate SD) and :mod:`bayes_tee.posterior.coefficients` reports them per unit of the column too.

A covariate enters the cell-level likelihoods exactly through its per-cell statistics, which
live in the design's ``cells`` table beside the scores' (so a saved fit keeps them):

- ``x:<name>``: the cell's mean of the standardised covariate (its linear predictor's part is
  ``slope(cell) * mean``);
- Gaussian outcomes whose covariate varies within a cell: ``sxx:<a>:<b>`` and ``sxy:<a>``, the
  within-cell centred cross-products, so the within-cell sum of squares of ``y - slope * x`` is
  ``ss - 2 slope sxy + slope' sxx slope`` (no approximation).

A GLMM (binomial, ordinal) needs each covariate constant within a cell (one value per item,
judge, prompt, system...), where successes out of trials stay exact; otherwise one error says so.

>>> slope = Slope("length", "judge", "random")
>>> slope.label, slope.var_name
('length|judge', 'sigma_slope_length_judge')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError

#: A float or numbers-as-text column taken as a factor with more distinct values than this (and
#: more than half the rows distinct) is refused: it is almost surely meant as a covariate.
MAX_FACTOR_FLOATS = 50

#: Relative within-cell spread below which a covariate counts as constant within its cells.
WITHIN_TOLERANCE = 1e-10


def _safe(name: str) -> str:
    return name.replace(".", "_")


@dataclass(frozen=True)
class Slope:
    """One slope term of a covariate.

    Parameters
    ----------
    covariate : str
        The covariate's column.
    by : str or None
        ``None``: the common slope; else the facet whose levels get their own slope (``kind``
        ``"fixed"``: zero-sum deviations around the common slope; ``"random"``: normal deviations
        with an SD).
    kind : {"fixed", "random"}
    """

    covariate: str
    by: str | None = None
    kind: Literal["fixed", "random"] = "fixed"

    @property
    def label(self) -> str:
        """``length``, ``length:judge`` (a fixed slope per judge) or ``length|judge`` (random)."""
        if self.by is None:
            return self.covariate
        return f"{self.covariate}{'|' if self.kind == 'random' else ':'}{self.by}"

    @property
    def var_name(self) -> str:
        """The model variable of the slope: ``beta_<x>``, ``beta_<x>_<facet>`` (the deviations) or
        ``sigma_slope_<x>_<facet>`` (a random slope's SD).
        """
        x = _safe(self.covariate)
        if self.by is None:
            return f"beta_{x}"
        return f"sigma_slope_{x}_{self.by}" if self.kind == "random" else f"beta_{x}_{self.by}"

    @property
    def level_name(self) -> str | None:
        """A random slope's non-centred level coordinates (``z_slope_<x>_<facet>``)."""
        return f"z_slope_{_safe(self.covariate)}_{self.by}" if self.kind == "random" else None


@dataclass(frozen=True)
class Covariates:
    """The covariates of a design: names, standardisation and slope terms.

    Attributes
    ----------
    names : tuple of str
        Covariate columns, in the order written.
    center, scale : tuple of float
        Each column's mean and SD over the rows used (the standardisation).
    slopes : tuple of Slope
        Every slope term; each covariate has its common slope first.
    within : bool
        Some covariate varies within a cell (Gaussian only: the cells carry ``sxx``/``sxy``).
    """

    names: tuple[str, ...]
    center: tuple[float, ...]
    scale: tuple[float, ...]
    slopes: tuple[Slope, ...]
    within: bool = False

    @property
    def mean_columns(self) -> list[str]:
        """The ``cells`` columns of the covariates' cell means (standardised)."""
        return [f"x:{n}" for n in self.names]

    @property
    def within_columns(self) -> list[str]:
        """The ``cells`` columns of the within-cell cross-products (empty unless ``within``)."""
        if not self.within:
            return []
        k = len(self.names)
        return [f"sxy:{n}" for n in self.names] + [
            f"sxx:{self.names[i]}:{self.names[j]}" for i in range(k) for j in range(i, k)
        ]

    @property
    def columns(self) -> list[str]:
        """Every ``cells`` column the covariates add."""
        return self.mean_columns + self.within_columns

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The index pairs ``(i, j)``, ``i <= j``, of the within-cell cross-products ``sxx``."""
        k = len(self.names)
        return [(i, j) for i in range(k) for j in range(i, k)]

    @property
    def structure(self) -> dict:
        """What the compiled model depends on (names, slopes, ``within``), not the values: two
        designs with equal structures share a compiled model through :func:`covariate_data`.
        """
        return {k: v for k, v in self.to_dict().items() if k not in ("center", "scale")}

    def of(self, name: str) -> int:
        """The index of covariate ``name``."""
        return self.names.index(name)

    def to_dict(self) -> dict:
        """Plain dict, for the saved design."""
        return {
            "names": list(self.names),
            "center": list(self.center),
            "scale": list(self.scale),
            "slopes": [[s.covariate, s.by, s.kind] for s in self.slopes],
            "within": self.within,
        }

    @classmethod
    def from_dict(cls, d: dict | None) -> Covariates | None:
        """Inverse of :meth:`to_dict` (``None`` stays ``None``)."""
        if not d:
            return None
        return cls(
            names=tuple(d["names"]),
            center=tuple(float(v) for v in d["center"]),
            scale=tuple(float(v) for v in d["scale"]),
            slopes=tuple(Slope(c, b, k) for c, b, k in d["slopes"]),
            within=bool(d.get("within", False)),
        )


def check_covariate(values: pd.Series, column: str) -> np.ndarray:
    """A covariate column's values as floats, refused with the fix when not numeric or infinite.

    >>> check_covariate(pd.Series([1, 2, 3]), "length").tolist()
    [1.0, 2.0, 3.0]
    """
    if pd.api.types.is_bool_dtype(values):
        return values.astype(float).to_numpy()
    if not pd.api.types.is_numeric_dtype(values):
        raise DesignError(
            f"Covariate {column!r} is not numeric (dtype {values.dtype}): a slope needs numbers. Convert "
            f"it, e.g. df[{column!r}] = pd.to_numeric(df[{column!r}]), or make it a factor term."
        )
    x = values.to_numpy(dtype=float)
    bad = ~np.isfinite(x) & ~np.isnan(x)
    if bad.any():
        raise DesignError(
            f"Covariate {column!r} has {int(bad.sum())} infinite value(s); replace them (or set them to "
            "NaN to drop those rows)."
        )
    return x


def refuse_float_factor(values: pd.Series, column: str) -> None:
    """Refuse a column of many distinct non-integer numbers (floats, or numbers stored as text)
    taken as a factor: it is a covariate, or must be said to be a factor with ``C(column)``.

    >>> refuse_float_factor(pd.Series(["a", "b"]), "judge")  # text labels are fine
    """
    x = pd.to_numeric(values, errors="coerce") if not pd.api.types.is_numeric_dtype(values) else values
    if pd.api.types.is_bool_dtype(x) or x.isna().any() or len(x) == 0:
        return
    x = x.to_numpy(dtype=float)
    distinct = np.unique(x[np.isfinite(x)])
    if (
        len(distinct) > MAX_FACTOR_FLOATS
        and len(distinct) > 0.5 * len(x)
        and np.any(distinct != np.round(distinct))
    ):
        how = "numbers stored as text" if not pd.api.types.is_numeric_dtype(values) else "floats"
        raise DesignError(
            f"Column {column!r} holds {how} with {len(distinct):,} distinct values; as a factor it would "
            f"have {len(distinct):,} levels. For a slope write it on the fixed side as a number "
            f"(df[{column!r}] = pd.to_numeric(df[{column!r}]); score ~ ... + {column}); to keep it a "
            f"factor, write C({column})."
        )


def covariate_cells(
    x: np.ndarray, y: np.ndarray, row_cell: np.ndarray, n_cells: int, names: tuple[str, ...], gaussian: bool
) -> tuple[pd.DataFrame, tuple[float, ...], tuple[float, ...], bool]:
    """The covariates' per-cell statistics (module docstring) from their rows ``x`` ``(n_rows,
    k)``, standardised over the rows; with the centres, scales and whether any varies within
    a cell. A constant covariate is refused; a GLMM's covariate that varies within a cell too.

    >>> x = np.array([[1.0], [3.0], [2.0], [2.0]])
    >>> cols, c, s, w = covariate_cells(x, np.zeros(4), np.array([0, 0, 1, 1]), 2, ("len",), True)
    >>> cols["x:len"].round(3).tolist(), w
    ([0.0, 0.0], True)
    """
    k = len(names)
    center = x.mean(axis=0)
    scale = x.std(axis=0, ddof=1) if len(x) > 1 else np.zeros(k)
    for j, name in enumerate(names):
        if not (scale[j] > 1e-12 * max(abs(center[j]), 1.0)):
            raise DesignError(
                f"Covariate {name!r} is constant over the rows used ({center[j]:g}): its slope cannot be "
                "estimated. Drop it from the formula."
            )
    z = (x - center) / scale
    n = np.bincount(row_cell, minlength=n_cells).astype(float)
    means = np.stack([np.bincount(row_cell, z[:, j], minlength=n_cells) / n for j in range(k)], axis=1)
    dev = z - means[row_cell]
    out = {f"x:{name}": means[:, j] for j, name in enumerate(names)}
    spread = np.stack([np.bincount(row_cell, dev[:, j] ** 2, minlength=n_cells) for j in range(k)], axis=1)
    within = bool(np.any(spread > WITHIN_TOLERANCE * np.maximum(n, 1.0)[:, None]))
    if within and not gaussian:
        varies = int(np.sum(np.any(spread > WITHIN_TOLERANCE * n[:, None], axis=1)))
        which = [names[j] for j in range(k) if np.any(spread[:, j] > WITHIN_TOLERANCE * n)]
        raise DesignError(
            f"Covariate(s) {which} vary within {varies} cell(s) (calls of the same item, judge, prompt, "
            "system...): a binomial or ordinal fit aggregates each cell's calls, so a covariate must be "
            "constant within a cell. Average it per cell, or add the column that tells those calls apart "
            "to the formula as a facet."
        )
    if within:
        ym = np.bincount(row_cell, y, minlength=n_cells) / n
        ydev = y - ym[row_cell]
        for j, name in enumerate(names):
            out[f"sxy:{name}"] = np.bincount(row_cell, dev[:, j] * ydev, minlength=n_cells)
        for i in range(k):
            for j in range(i, k):
                out[f"sxx:{names[i]}:{names[j]}"] = np.bincount(
                    row_cell, dev[:, i] * dev[:, j], minlength=n_cells
                )
    return pd.DataFrame(out), tuple(float(v) for v in center), tuple(float(v) for v in scale), within


def covariate_data(cov: Covariates | None, cells: pd.DataFrame) -> dict[str, np.ndarray]:
    """The covariates' per-cell statistics as the compiled model's data containers (none without
    covariates): ``covariate_means`` ``(n_cells, k)`` and, when ``within``, ``covariate_sxy``
    ``(n_cells, k)`` and ``covariate_sxx`` ``(n_cells, len(cov.pairs))``, so a refit of another
    data set of the same layout and :attr:`Covariates.structure` swaps them in without recompiling.

    >>> cov = Covariates(("len",), (0.0,), (1.0,), (Slope("len"),))
    >>> covariate_data(cov, pd.DataFrame({"x:len": [0.5, -0.5]}))["covariate_means"].shape
    (2, 1)
    """
    if cov is None:
        return {}
    out = {"covariate_means": cells[cov.mean_columns].to_numpy(dtype=float)}
    if cov.within:
        out["covariate_sxy"] = cells[[f"sxy:{n}" for n in cov.names]].to_numpy(dtype=float)
        out["covariate_sxx"] = np.stack(
            [cells[f"sxx:{cov.names[i]}:{cov.names[j]}"].to_numpy(dtype=float) for i, j in cov.pairs], axis=1
        )
    return out


def flat_levels(cov: Covariates, x: np.ndarray, codes: dict[str, np.ndarray], levels: dict) -> list[str]:
    """Notes on the levels of a fixed per-level slope (``x:facet``) whose calls all share one
    covariate value: the data say nothing of their own slope, which is then its prior's (a
    reference system scored against itself at equal length).

    >>> cov = Covariates(("len",), (0.0,), (1.0,), (Slope("len"), Slope("len", "judge")))
    >>> flat_levels(cov, np.array([[1.0], [1.0], [0.0], [2.0]]), {"judge": np.array([0, 0, 1, 1])},
    ...             {"judge": ("a", "b")})[0][:40]
    "len:judge: covariate 'len' takes one val"
    """
    out = []
    for s in cov.slopes:
        if s.by is None or s.kind != "fixed":
            continue
        col = x[:, cov.of(s.covariate)]
        code = codes[s.by]
        n = np.bincount(code, minlength=len(levels[s.by])).astype(float)
        mean = np.bincount(code, col, minlength=len(n)) / np.maximum(n, 1)
        spread = np.bincount(code, (col - mean[code]) ** 2, minlength=len(n))
        flat = [
            levels[s.by][k]
            for k in np.flatnonzero(
                spread <= WITHIN_TOLERANCE * np.maximum(n, 1) * cov.scale[cov.of(s.covariate)] ** 2
            )
        ]
        if flat:
            out.append(
                f"{s.label}: covariate {s.covariate!r} takes one value in every call of {s.by} level(s) "
                f"{flat[:5]}{' ...' if len(flat) > 5 else ''}, so their own slopes are their prior's (the "
                "data cannot tell them); drop those levels, or use the common slope only."
            )
    return out
