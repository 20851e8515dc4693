"""Beta priors for probabilities (judge sensitivity, specificity, accuracy) from expert statements.

An expert says "this judge's sensitivity is most likely 0.9, and I am 95% sure it is above 0.8".
:func:`beta_from_mode` turns that into ``Beta(a, b)`` with mode 0.9 and ``P(X > 0.8) = 0.95``,
using the mode-concentration form ``a = 1 + k m``, ``b = 1 + k (1 - m)`` and solving for ``k``.

>>> a, b = beta_from_mode(mode=0.9, lower=0.8, confidence=0.95)
>>> round(float(stats.beta(a, b).sf(0.8)), 3)
0.95
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats

from .exceptions import ArgumentError

__all__ = ["beta_from_mode", "logit_moments"]


def beta_from_mode(
    mode: float,
    lower: float | None = None,
    upper: float | None = None,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Beta(a, b) with the given mode and ``P(X > lower) = confidence`` (or ``P(X < upper)``).

    Parameters
    ----------
    mode : float
        Most likely value, in (0, 1).
    lower, upper : float
        Exactly one: a bound the expert is ``confidence`` sure the value exceeds (``lower``,
        below the mode) or stays under (``upper``, above the mode).
    confidence : float
        Probability mass beyond the bound, in (0.5, 1).

    Returns
    -------
    (a, b) : tuple of float

    Examples
    --------
    >>> a, b = beta_from_mode(0.2, upper=0.4, confidence=0.9)
    >>> round((a - 1) / (a + b - 2), 3)
    0.2
    """
    if not 0 < mode < 1:
        raise ArgumentError(f"mode must be in (0, 1), got {mode}.")
    if (lower is None) == (upper is None):
        raise ArgumentError("Give exactly one of lower= (a bound below the mode) or upper= (above it).")
    if not 0.5 < confidence < 1:
        raise ArgumentError(f"confidence must be in (0.5, 1), got {confidence}.")
    bound = lower if lower is not None else upper
    if lower is not None and not 0 <= lower < mode:
        raise ArgumentError(f"lower={lower} must lie in [0, mode={mode}).")
    if upper is not None and not mode < upper <= 1:
        raise ArgumentError(f"upper={upper} must lie in (mode={mode}, 1].")

    def mass(k: float) -> float:
        d = stats.beta(1 + k * mode, 1 + k * (1 - mode))
        return (d.sf(bound) if lower is not None else d.cdf(bound)) - confidence

    if mass(0.0) >= 0:  # the uniform already puts that much mass beyond the bound
        return 1.0, 1.0
    hi = 1.0
    while mass(hi) < 0:
        hi *= 2
        if hi > 1e7:
            raise ArgumentError("No Beta prior reaches that confidence; move the bound away from the mode.")
    k = optimize.brentq(mass, 0.0, hi, xtol=1e-10)
    return float(1 + k * mode), float(1 + k * (1 - mode))


def logit_moments(a: float, b: float) -> tuple[float, float]:
    """Mean and SD of ``logit(X)`` for ``X ~ Beta(a, b)`` (digamma / trigamma).

    Used to centre a logit-scale hierarchical prior on a Beta prior.

    >>> [round(v, 3) for v in logit_moments(1, 1)]
    [0.0, 1.814]
    """
    mean = special.digamma(a) - special.digamma(b)
    sd = np.sqrt(special.polygamma(1, a) + special.polygamma(1, b))
    return float(mean), float(sd)
