"""The covariates' answers: every slope with its interval, and the variance each slope term explains.

The model's slopes are per SD of the standardised covariate (:mod:`bayes_tee.design.covariates`);
:func:`coefficients` reports them per unit of the column as the user wrote it (and per SD beside
them). On a GLMM the slopes are on the latent scale; the common slopes are also given on the
outcome's scale, as the population-average change of the mean outcome (success probability or
expected score, every random facet integrated out, the fixed levels averaged) per unit of the
covariate at the grand mean: ``(S(mu + b h) - S(mu - b h)) / 2h`` per draw.

:func:`covariate_variance` gives each slope term's share of the per-call variance beside the
variance components (which it is not part of): a common slope's ``beta^2 Var(x)``, a per-level
slope's mean square of ``dev_l x`` over the calls, a random slope's ``sigma^2 E[x^2]``.

>>> post.coefficients()  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError
from .._core.intervals import check_level
from .._core.trees import group
from ..families import get_family
from . import predictive as pr

if TYPE_CHECKING:
    from .fit import Fit

#: Gauss-Hermite nodes of the outcome-scale slopes.
NODES = 24
#: Latent step (in covariate SDs) of the outcome-scale slope's central difference.
STEP = 1e-3


def require_covariates(post: Fit):
    """The fit's covariates, or one error that says how to fit some."""
    if post.design.covariates is None:
        raise DesignError(
            "This fit has no covariates: write a numeric column on the formula's fixed side for a "
            "slope, e.g. formula='score ~ model + length + (1|item)' (see bayes_tee.bias_covariates)."
        )
    return post.design.covariates


def _flat(P, name: str, dim: str | None = None) -> np.ndarray:
    x = P[name]
    if dim is None:
        return x.values.reshape(-1)
    x = x.transpose("chain", "draw", dim).values
    return x.reshape(-1, x.shape[-1])


def slope_draws(post: Fit) -> list[tuple[str, str, str | None, np.ndarray]]:
    """Every reported slope's draws per SD of its covariate: ``(term, kind, level, draws)`` with
    kind ``slope`` (the common slope), ``level slope`` (a level's own: the common slope plus its
    deviation, fixed or random) or ``slope SD`` (a random slope's SD).
    """
    cov = require_covariates(post)
    P = group(post.idata, "posterior")
    out = []
    common = {s.covariate: _flat(P, s.var_name) for s in cov.slopes if s.by is None}
    for s in cov.slopes:
        if s.by is None:
            out.append((s.label, "slope", None, common[s.covariate]))
            continue
        if s.kind == "fixed":
            dev = _flat(P, s.var_name, s.by)
        else:
            out.append((s.label, "slope SD", None, _flat(P, s.var_name)))
            dev = _flat(P, s.level_name, s.by) * _flat(P, s.var_name)[:, None]
        for j, lab in enumerate(post.design.levels[s.by]):
            out.append((s.label, "level slope", lab, common[s.covariate] + dev[:, j]))
    return out


def _outcome_slopes(post: Fit, draws: np.ndarray) -> np.ndarray:
    """Per draw, the population-average change of a GLMM's mean outcome per covariate SD at the
    grand mean (module docstring), for a common slope's latent ``draws``.
    """
    P = group(post.idata, "posterior")
    index = np.arange(P.sizes["chain"] * P.sizes["draw"])
    terms = [t for t in post.terms if t.kind != "residual"]
    d = pr.draws_from(P, terms, index, post.family, post.design.outcome_levels)
    at = d.mu[:, None] + np.outer(draws, [STEP, -STEP])
    up_down = pr.population_scores(d, at, NODES)
    return (up_down[:, 0] - up_down[:, 1]) / (2 * STEP)


def coefficients(post: Fit, level: float = 0.9) -> pd.DataFrame:
    """Every slope of the model with its posterior mean, SD and central interval.

    Parameters
    ----------
    post : Fit
        A fit whose formula has covariates.
    level : float
        Credible level of the intervals.

    Returns
    -------
    pandas.DataFrame
        ``term, kind, level, estimate, sd, low, high`` per unit of the covariate's column, and
        ``per_sd`` (the estimate per SD of the column) and ``covariate_sd``; ``kind`` is
        ``slope``, ``level slope`` (one level's own slope, the common slope included) or
        ``slope SD`` (a random slope's SD over the levels). A GLMM adds ``outcome_estimate``,
        ``outcome_low``, ``outcome_high`` on the common slopes (the mean outcome's change per
        unit, module docstring). ``attrs``: ``level``, ``scale`` (the slopes' scale).

    Examples
    --------
    >>> post.coefficients().loc[0, ["term", "estimate", "low", "high"]]  # doctest: +SKIP
    """
    cov = require_covariates(post)
    a = (1 - check_level(level)) / 2
    latent = get_family(post.family).latent
    rows = []
    for term, kind, lab, draws in slope_draws(post):
        name = term.split(":")[0].split("|")[0]
        sd_x = cov.scale[cov.of(name)]
        unit = draws / sd_x
        row = {
            "term": term,
            "kind": kind,
            "level": lab,
            "estimate": float(unit.mean()),
            "sd": float(unit.std()),
            "low": float(np.quantile(unit, a)),
            "high": float(np.quantile(unit, 1 - a)),
            "per_sd": float(draws.mean()),
            "covariate_sd": sd_x,
        }
        if latent:
            row |= {"outcome_estimate": np.nan, "outcome_low": np.nan, "outcome_high": np.nan}
            if kind == "slope":
                out = _outcome_slopes(post, draws) / sd_x
                row |= {
                    "outcome_estimate": float(out.mean()),
                    "outcome_low": float(np.quantile(out, a)),
                    "outcome_high": float(np.quantile(out, 1 - a)),
                }
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs.update(level=level, scale=post.scale)
    return table


def covariate_variance(post: Fit, level: float = 0.9) -> pd.DataFrame:
    """The per-call variance each slope term explains, with its interval and its share of the
    per-call total (the variance components plus these).

    Returns
    -------
    pandas.DataFrame
        ``term, variance, low, high, share`` (module docstring); ``attrs``: ``level``, ``scale``.

    Examples
    --------
    >>> post.covariate_variance()  # doctest: +SKIP
    """
    cov = require_covariates(post)
    a = (1 - check_level(level)) / 2
    P = group(post.idata, "posterior")
    cells = post.design.cells
    n = cells["n"].to_numpy(dtype=float)
    N = n.sum()
    within = {
        name: (cells[f"sxx:{name}:{name}"].to_numpy(dtype=float) if cov.within else np.zeros(len(cells)))
        for name in cov.names
    }
    mean_sq = {  # E[x^2] over the calls of each standardised covariate
        name: float((n * cells[f"x:{name}"].to_numpy(dtype=float) ** 2 + within[name]).sum() / N)
        for name in cov.names
    }
    explained = {}
    for s in cov.slopes:
        if s.by is None:
            explained[s.label] = _flat(P, s.var_name) ** 2 * mean_sq[s.covariate]
        elif s.kind == "random":
            explained[s.label] = _flat(P, s.var_name) ** 2 * mean_sq[s.covariate]
        else:
            dev = _flat(P, s.var_name, s.by)[:, cells[s.by].to_numpy()]  # (draws, cells)
            x = cells[f"x:{s.covariate}"].to_numpy(dtype=float)
            explained[s.label] = (dev**2 * (n * x**2 + within[s.covariate])).sum(axis=1) / N
    comps = post.component_draws().stack(sample=("chain", "draw")).sum("component").values
    total = comps + sum(explained.values())
    rows = [
        {
            "term": label,
            "variance": float(v.mean()),
            "low": float(np.quantile(v, a)),
            "high": float(np.quantile(v, 1 - a)),
            "share": float((v / total).mean()),
        }
        for label, v in explained.items()
    ]
    out = pd.DataFrame(rows)
    out.attrs.update(level=level, scale=post.scale)
    return out
