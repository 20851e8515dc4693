"""Closed-form judge-correction baselines: naive, Rogan-Gladen and PPI++ (the LLM-as-a-Judge bias paper
(2026), Sec. 3).

Each estimator is asymptotically linear, ``theta_hat - theta ~ sum_u phi_u`` over sampling
units (test items and calibration items), so one function per estimator returns the estimate
and its per-unit influence values. Standard errors are ``sqrt(sum phi^2)``; a comparison of two
systems subtracts the influence values unit by unit, which pairs test items shared by the two
systems and cancels a calibration set they share (LLM-as-a-Judge bias paper 2026 App. B) without a
separate formula
for each design.

* naive: the judge's positive rate ``p`` (estimates ``Se*pi + (1-Sp)*(1-pi)``, not ``pi``);
* Rogan-Gladen: ``(p + Sp - 1) / J`` with ``J = Se + Sp - 1`` (Youden's J) from the
  calibration items; its delta-method variance carries the ``1/J^2`` amplification;
* PPI++ for a mean, power-tuned: ``lambda * mean f_test + mean(y - lambda f)_cal`` with
  ``lambda = Cov(y, f) / ((1 + n/N) Var(f))`` clipped to [0, 1] (model-specific calibration).

>>> import numpy as np
>>> est = rogan_gladen(np.array([1, 1, 0, 1]), np.array([1, 1, 0, 0]), np.array([1, 1, 0, 0]))
>>> round(est.estimate, 3)
0.75
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats


@dataclass
class Linear:
    """An estimate with its influence values keyed by sampling unit.

    Attributes
    ----------
    estimate : float
        Point estimate (NaN when undefined, e.g. Rogan-Gladen with ``J <= 0``).
    influence : dict
        Unit key -> influence value; ``sqrt(sum of squares)`` is the standard error.
    note : str
        Why the estimate is undefined or clipped ('' otherwise).
    """

    estimate: float
    influence: dict = field(default_factory=dict)
    note: str = ""

    @property
    def se(self) -> float:
        """Standard error ``sqrt(sum phi^2)`` over the influence values (NaN when undefined)."""
        if not np.isfinite(self.estimate):
            return np.nan
        return float(np.sqrt(sum(v * v for v in self.influence.values())))

    def interval(
        self, level: float = 0.9, bounds: tuple[float, float] | None = (0.0, 1.0)
    ) -> tuple[float, float]:
        """Normal interval, clipped to ``bounds``; ``(lo, hi)`` of the bounds when undefined."""
        if not np.isfinite(self.estimate):
            return (np.nan, np.nan) if bounds is None else bounds
        z = stats.norm.ppf((1 + level) / 2)
        lo, hi = self.estimate - z * self.se, self.estimate + z * self.se
        return (lo, hi) if bounds is None else (max(lo, bounds[0]), min(hi, bounds[1]))

    def minus(self, other: "Linear") -> "Linear":
        """``self - other`` with influence values subtracted unit by unit (pairing)."""
        keys = set(self.influence) | set(other.influence)
        infl = {k: self.influence.get(k, 0.0) - other.influence.get(k, 0.0) for k in keys}
        note = "; ".join(n for n in (self.note, other.note) if n)
        return Linear(self.estimate - other.estimate, infl, note)


def _keys(keys, n: int, prefix: str):
    return [(prefix, i) for i in range(n)] if keys is None else [(prefix, k) for k in keys]


def naive(f_test: np.ndarray, test_keys=None) -> Linear:
    """The judge's positive rate on the test items.

    >>> round(naive(np.array([1, 0, 1, 1])).estimate, 2)
    0.75
    """
    f = np.asarray(f_test, float)
    p = f.mean()
    return Linear(float(p), dict(zip(_keys(test_keys, len(f), "test"), (f - p) / len(f))))


def rogan_gladen(
    f_test: np.ndarray,
    y_cal: np.ndarray,
    f_cal: np.ndarray,
    test_keys=None,
    cal_keys=None,
    clip: bool = True,
) -> Linear:
    """Rogan-Gladen corrected accuracy with its delta-method influence values.

    Parameters
    ----------
    f_test : array of 0/1
        Judge verdicts on the test items.
    y_cal, f_cal : arrays of 0/1
        Human labels and judge verdicts on the calibration items.
    test_keys, cal_keys : optional
        Unit keys (item ids) for pairing in comparisons.
    clip : bool
        Clip the estimate to [0, 1] (the influence values are those of the unclipped estimate).
    """
    f = np.asarray(f_test, float)
    y, fc = np.asarray(y_cal, float), np.asarray(f_cal, float)
    pos, neg = y == 1, y == 0
    if pos.sum() == 0 or neg.sum() == 0:
        return Linear(np.nan, {}, "calibration set lacks positive or negative labels")
    p = f.mean()
    se, sp = fc[pos].mean(), 1.0 - fc[neg].mean()
    J = se + sp - 1.0
    if J <= 0:
        return Linear(np.nan, {}, f"Youden J = {J:.3f} <= 0: Rogan-Gladen undefined")
    theta = (p + sp - 1.0) / J
    infl = dict(zip(_keys(test_keys, len(f), "test"), (f - p) / (len(f) * J)))
    ck = _keys(cal_keys, len(y), "cal")
    n1, n0 = pos.sum(), neg.sum()
    for k, yk, fk in zip(ck, y, fc):
        if yk == 1:
            infl[k] = -theta / J * (fk - se) / n1
        else:
            infl[k] = (1 - theta) / J * ((1 - fk) - sp) / n0
    note = ""
    if clip and not 0.0 <= theta <= 1.0:
        note = f"clipped from {theta:.3f}"
        theta = min(max(theta, 0.0), 1.0)
    return Linear(float(theta), infl, note)


def ppi_mean(
    f_test: np.ndarray,
    y_cal: np.ndarray,
    f_cal: np.ndarray,
    test_keys=None,
    cal_keys=None,
) -> Linear:
    """PPI++ estimate of a mean with the power-tuned ``lambda`` (Angelopoulos et al. 2024).

    The calibration items must be a random sample of the same system's outputs.

    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 200); f = np.where(rng.random(200) < 0.8, y, 1 - y)
    >>> 0 < ppi_mean(f, y, f).estimate < 1
    True
    """
    f = np.asarray(f_test, float)
    y, fc = np.asarray(y_cal, float), np.asarray(f_cal, float)
    n, N = len(y), len(f)
    if n < 2:
        return Linear(np.nan, {}, "fewer than 2 calibration items")
    var_f = np.var(np.concatenate([f, fc]), ddof=1)
    cov = np.cov(y, fc, ddof=1)[0, 1]
    lam = 0.0 if var_f == 0 else float(np.clip(cov / ((1 + n / N) * var_f), 0.0, 1.0))
    resid = y - lam * fc
    theta = lam * f.mean() + resid.mean()
    infl = dict(zip(_keys(test_keys, N, "test"), lam * (f - f.mean()) / N))
    infl.update(zip(_keys(cal_keys, n, "cal"), (resid - resid.mean()) / n))
    return Linear(float(theta), infl, f"lambda = {lam:.2f}")
