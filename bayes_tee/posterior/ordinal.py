"""What an ordinal (Likert) fit says about how the judges use the scale: each threshold set's
cutpoints with intervals and the category probabilities at the latent mean
(:func:`cutpoints`), and how much of the judges' apparent variance is scale use
(:func:`scale_use`: a fit with common cutpoints against one with each judge's own).

>>> post.cutpoints()  # doctest: +SKIP
>>> bt.posterior.ordinal.scale_use(common_fit, judge_fit)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from .._core.intervals import check_level
from .._core.trees import group
from ..families import get_family
from . import predictive as pr

if TYPE_CHECKING:
    from .fit import Fit


def _require_ordinal(post: Fit) -> None:
    if post.design.outcome_levels is None:
        raise ArgumentError(
            f"cutpoints belong to an ordinal fit (family='ordinal'); this one is family={post.family!r}."
        )


def cutpoints(post: Fit, level: float = 0.9) -> pd.DataFrame:
    """Each threshold set's cutpoints on the latent scale (centred: they sum to zero per set,
    so a judge's location is its judge effect and its cutpoints are its scale use), with the
    central ``level`` interval, and the probability of each category at the latent mean.

    Returns
    -------
    pandas.DataFrame
        One row per set and cutpoint: ``set`` (``all``, or the judge), ``cutpoint`` (``k|k+1``
        between the scores), ``median, low, high``, ``spread`` (the set's last cutpoint minus
        its first: a judge with a narrow spread uses the middle of the scale less, a wide one
        avoids the ends) and ``spread_low``/``spread_high``.

    Examples
    --------
    >>> post.cutpoints()  # doctest: +SKIP
    """
    _require_ordinal(post)
    q = (1 - check_level(level)) / 2
    cut = group(post.idata, "posterior")["cutpoints"].transpose("chain", "draw", "threshold_set", "cutpoint")
    values = cut.values.reshape(-1, *cut.shape[2:])  # (draws, sets, K - 1)
    sets, names = cut["threshold_set"].values, cut["cutpoint"].values
    spread = values[:, :, -1] - values[:, :, 0]
    scores = np.asarray(post.design.outcome_levels)
    labels = [f"{scores[k]:g}|{scores[k + 1]:g}" for k in range(len(names))]
    rows = []
    for s, label_s in enumerate(sets):
        lo_s, med_s, hi_s = np.quantile(spread[:, s], [q, 0.5, 1 - q])
        for k in range(values.shape[2]):
            lo, med, hi = np.quantile(values[:, s, k], [q, 0.5, 1 - q])
            rows.append(
                {
                    "set": str(label_s),
                    "cutpoint": labels[k],
                    "median": med,
                    "low": lo,
                    "high": hi,
                    "spread": med_s,
                    "spread_low": lo_s,
                    "spread_high": hi_s,
                }
            )
    table = pd.DataFrame(rows)
    table.attrs["scale"] = get_family(post.family).scale
    table.attrs["note"] = (
        "Cutpoints are centred per set; a judge's location is its judge effect, its spacing its scale use."
    )
    return table


def category_probabilities(post: Fit, eta: float | None = None) -> pd.DataFrame:
    """Each set's probability of every score at latent value ``eta`` (default: the grand mean
    ``mu``), posterior medians: how each judge would score a typical item.

    >>> post.category_probabilities()  # doctest: +SKIP
    """
    _require_ordinal(post)
    P = group(post.idata, "posterior")
    cut = P["cutpoints"].transpose("chain", "draw", "threshold_set", "cutpoint")
    values = cut.values.reshape(-1, *cut.shape[2:])
    at = P["mu"].values.reshape(-1) if eta is None else np.full(values.shape[0], float(eta))
    link = get_family(post.family).link
    names = cut["threshold_set"].values.astype(str)
    spread = None
    if "judge_log_spread" in P:  # each judge at its own spread: per judge, not per set
        ls = P["judge_log_spread"].transpose("chain", "draw", "judge")
        spread = np.exp(ls.values.reshape(-1, ls.shape[-1]))
        values = np.broadcast_to(values, (values.shape[0], spread.shape[1], values.shape[2]))
        names = ls["judge"].values.astype(str)
    at, values = pr.on_spread(np.broadcast_to(at[:, None], values.shape[:2]), values, spread)
    probs = np.median(pr.category_probabilities(at, values, link), axis=0)  # (sets, K)
    scores = [f"{v:g}" for v in post.design.outcome_levels]
    return pd.DataFrame(probs, index=pd.Index(names, name="set"), columns=scores)


def judge_spreads(post: Fit, level: float = 0.9) -> pd.DataFrame:
    """Each judge's latent spread in a ``spread="judge"`` fit: ``s_j`` in
    ``P(y <= k) = F((c_k - eta) / s_j)``, relative to the panel's geometric mean (1). A judge
    with ``s > 1`` separates items less on the latent scale (compression, central tendency);
    ``s < 1``, more.

    Returns
    -------
    pandas.DataFrame
        One row per judge: ``median``, ``low``, ``high`` of its spread, and ``level``.

    Examples
    --------
    >>> post.judge_spreads()  # doctest: +SKIP
    """
    _require_ordinal(post)
    if post.design.spread != "judge":
        raise ArgumentError(
            "judge_spreads belongs to a fit with spread='judge' (each judge its own latent spread); "
            "refit with fit_posterior(..., family='ordinal', spread='judge')."
        )
    q = (1 - check_level(level)) / 2
    ls = group(post.idata, "posterior")["judge_log_spread"].transpose("chain", "draw", "judge")
    s = np.exp(ls.values.reshape(-1, ls.shape[-1]))
    lo, med, hi = np.quantile(s, [q, 0.5, 1 - q], axis=0)
    judges = ls["judge"].values.astype(str)
    return pd.DataFrame({"judge": judges, "median": med, "low": lo, "high": hi, "level": level})


def scale_use(common: Fit, judge: Fit, level: float = 0.9) -> pd.DataFrame:
    """How much of the judges' apparent variance is scale use: the judge component of a fit
    with one set of cutpoints (``thresholds="common"``, where a judge who avoids the ends looks
    like a judge who scores differently) against that of a fit of the same data with each
    judge's own cutpoints (``thresholds="judge"``, where it is location only).

    Returns
    -------
    pandas.DataFrame
        One row: ``judge_common``, ``judge_own`` (posterior medians of the judge component on
        the latent scale), ``scale_use_share`` = ``1 - judge_own / judge_common`` with its
        interval over the two posteriors' draws (paired by draw order), and ``level``.

    Examples
    --------
    >>> bt.posterior.ordinal.scale_use(post_common, post_judge)  # doctest: +SKIP
    """
    for post, want in ((common, "common"), (judge, "judge")):
        if "judge" not in post.design.facets:
            raise ArgumentError("scale_use needs fits with a judge facet (judge=, two or more judges).")
        _require_ordinal(post)
        if post.design.thresholds != want:
            raise ArgumentError(
                "scale_use takes a thresholds='common' fit and a thresholds='judge' fit, in that order."
            )
    if common.design.n_rows != judge.design.n_rows or common.family != judge.family:
        raise ArgumentError("scale_use compares two fits of the same data and family.")
    q = (1 - check_level(level)) / 2
    a = common.component_draws().sel(component="judge").values.ravel()
    b = judge.component_draws().sel(component="judge").values.ravel()
    n = min(len(a), len(b))
    share = 1.0 - b[:n] / a[:n]
    lo, med, hi = np.quantile(share, [q, 0.5, 1 - q])
    return pd.DataFrame(
        [
            {
                "judge_common": float(np.median(a)),
                "judge_own": float(np.median(b)),
                "scale_use_share": med,
                "scale_use_low": lo,
                "scale_use_high": hi,
                "level": level,
            }
        ]
    )
