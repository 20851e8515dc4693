"""Judge-bias designs with known truth: systems scored by a panel of judges whose scores rise with a
covariate (an answer's length), each judge at its own slope.

``eta = a_i + alpha_s + (slope + u_j) * x_sic``, ``x`` the call's covariate: each system's
answers have their own mean (``longer``: a verbose system), one value per item x system (or,
with ``within_sd``, a spread across a cell's calls); ``a_i ~ N(0, item_sd^2)``. The outcome is
``eta + N(0, residual^2)`` (Gaussian), a 0/1 verdict with logistic noise (``binomial``), or a 1-5
score ``1 + #{k: eta + logistic > cutpoints[k]}`` (``ordinal``). ``attrs["truth"]`` holds the
common slope, each judge's slope and each system's effect (all per unit of the covariate, on
the latent scale for the GLMMs).

>>> df = bias_dgp(n_items=4, random_seed=1)
>>> df.shape, sorted(df.attrs["truth"])
((48, 5), ['effects', 'judge_slopes', 'slope'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd


def bias_dgp(
    family: Literal["gaussian", "binomial", "ordinal"] = "gaussian",
    n_items: int = 40,
    *,
    slope: float = 0.5,
    judge_slopes: Sequence[float] = (-0.2, 0.0, 0.1, 0.2),
    effects: Sequence[float] = (0.0, 0.2, 0.2),
    longer: Sequence[float] = (0.0, 0.0, 1.0),
    n_replicates: int = 1,
    within_sd: float = 0.0,
    item_sd: float = 0.8,
    residual: float = 0.5,
    cutpoints: Sequence[float] = (-1.5, -0.4, 0.6, 1.8),
    random_seed: int | None = None,
) -> pd.DataFrame:
    """Systems x items x judges (x replicates) with a length bias per judge (module docstring).

    Parameters
    ----------
    family : {"gaussian", "binomial", "ordinal"}
        The outcome.
    n_items : int
        Items.
    slope : float
        The mean slope over the judges.
    judge_slopes : sequence of float
        Each judge's deviation from ``slope`` (their number is the judges').
    effects, longer : sequence of float
        Each system's effect and its answers' mean covariate (their number is the systems').
    n_replicates : int
        Calls per item x system x judge cell.
    within_sd : float
        SD of the covariate across a cell's calls (0: one value per item x system).
    item_sd, residual : float
        SDs of the item effects and (Gaussian) of the per-call noise.
    cutpoints : sequence of float
        The ordinal outcome's latent cutpoints.
    random_seed : int, optional

    Returns
    -------
    pandas.DataFrame
        ``item, model, judge, length, score``; ``attrs["truth"]``: ``slope``, ``judge_slopes``
        (judge -> its slope), ``effects`` (system -> its effect).

    Examples
    --------
    >>> df = bias_dgp("binomial", n_items=10, random_seed=2)
    >>> set(df["score"]) <= {0.0, 1.0}, df.attrs["truth"]["judge_slopes"]["j0"]
    (True, 0.3)
    """
    rng = np.random.default_rng(random_seed)
    u = np.asarray(judge_slopes, float)
    S, J, R = len(effects), len(u), int(n_replicates)
    item = rng.normal(0.0, item_sd, n_items)
    # one covariate per item x system, spread across a cell's calls by within_sd
    base = np.asarray(longer, float)[None, :] + rng.standard_normal((n_items, S))
    shape = (n_items, S, J, R)
    x = base[:, :, None, None] + within_sd * rng.standard_normal(shape)
    eta = item[:, None, None, None] + np.asarray(effects, float)[None, :, None, None]
    eta = eta + (slope + u)[None, None, :, None] * x
    if family == "gaussian":
        y = eta + rng.normal(0.0, residual, shape)
    elif family == "binomial":
        y = (rng.random(shape) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
    else:
        y = 1.0 + np.searchsorted(np.asarray(cutpoints, float), eta + rng.logistic(size=shape)).astype(float)
    i, s, j, _ = np.indices(shape).reshape(4, -1)
    df = pd.DataFrame(
        {
            "item": [f"q{k}" for k in i],
            "model": [f"m{k}" for k in s],
            "judge": [f"j{k}" for k in j],
            "length": x.ravel(),
            "score": y.ravel(),
        }
    )
    df.attrs["truth"] = {
        "slope": float(slope),
        "judge_slopes": {f"j{k}": round(float(slope + u[k]), 12) for k in range(J)},
        "effects": {f"m{k}": float(e) for k, e in enumerate(effects)},
    }
    return df
