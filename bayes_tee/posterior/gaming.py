"""The best-of-K gaming surface (Messing 2026 Sec. 4.4).

A developer who evaluates K variants of the same system (or reruns one pipeline under K
configurations) and reports only the best gains, in expectation, ``E[max(Z_1..Z_K)] *
sigma_pipeline``: the expected maximum of K standard normals times the SD of the pipeline's
estimate. ``sigma_pipeline`` at a design is ``sqrt(Var(theta_hat))`` from the D-study
(:meth:`bayes_tee.Posterior.variance_at`), so the surface is a posterior like every other
projection, and averaging over prompts and judges shrinks it.

For pairwise data the surface is also reported in Elo: the boost of the win probability from
``theta`` to ``theta + surface``, mapped through ``gamma * logit`` (RAEE paper 2025's reporting map;
``gamma = 400 / ln 10``), per draw. For the logit GLMM the surface is already on the logit
scale and the Elo surface is ``gamma`` times it.

>>> from bayes_tee.pairwise import expected_max_normal
>>> round(expected_max_normal(27), 3)
1.998
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from .._core.intervals import summarize_samples
from ..families import get_family
from ..gstudy.weights import FIELDS
from ..pairwise.verdicts import ELO_SCALE, expected_max_normal, to_elo
from . import dstudy as ds

#: Why a fit that compares systems has no gaming surface.
ON_SYSTEMS = (
    "gaming_surface is the best-of-k inflation of one system's score; fit the system you "
    "study on its own (its rows, without system=) to project it."
)

if TYPE_CHECKING:
    from .fit import Fit

#: The default comparison: the observed (averaged) design against one prompt and one judge.
SINGLE_CONFIGURATION: dict[str, float] = {"n_prompts": 1, "n_judges": 1}


def _designs(post: Fit, design) -> pd.DataFrame:
    if design is None:
        rows = [{}, dict(SINGLE_CONFIGURATION)]
    elif isinstance(design, pd.DataFrame):
        rows = design.to_dict("records")
    elif isinstance(design, dict):
        rows = [design]
    else:
        rows = list(design)
    unknown = {k for r in rows for k in r} - set(FIELDS)
    if unknown:
        raise ArgumentError(f"unknown design field(s) {sorted(unknown)}; use {list(FIELDS)}.")
    if any("n_positions" in r for r in rows):
        ds.check_positions(post, 1)
    return ds.fill_design(post, pd.DataFrame(rows, index=range(len(rows))))


def gaming_surface(
    post: Fit,
    k: int = 27,
    design=None,
    *,
    elo: bool | None = None,
    estimand: str = "domain",
    decision: str = "absolute",
    level: float = 0.9,
) -> pd.DataFrame:
    """Expected best-of-``k`` inflation at one or more designs, as a posterior.

    Parameters
    ----------
    post : Fit
        A fitted TEE posterior.
    k : int
        Number of variants or configurations tried (27 in Messing (2026) Sec. 4.4).
    design : dict, list of dict or DataFrame, optional
        Design counts (``n_items``, ``n_prompts``, ``n_judges``, ...; missing ones take the
        observed counts). Default: the observed design and the single configuration
        (``n_prompts=1, n_judges=1``).
    elo : bool, optional
        Also report the surface in Elo; default on for pairwise fits (``position=`` given).
    estimand, decision : str
        As in :meth:`bayes_tee.Posterior.dstudy`.
    level : float
        Credible level of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per design: its counts, ``k``, ``e_max_z``, ``sd_median/low/high`` (the
        pipeline SD), ``surface_median/low/high`` (score units) and, with ``elo``,
        ``elo_median/low/high``; ``ratio_median/low/high`` against the first design (per
        draw), and ``p_smaller`` (posterior probability the surface is below the first
        design's).

    Examples
    --------
    >>> post.gaming_surface(k=27, design=[{"n_prompts": 1, "n_judges": 1},
    ...                                   {"n_prompts": 5, "n_judges": 3}])  # doctest: +SKIP
    """
    grid = _designs(post, design)
    emax = expected_max_normal(int(k))
    sd = np.sqrt(ds.variance_at(post, grid, estimand=estimand, decision=decision))  # (draws, designs)
    surface = emax * sd
    if elo is None:
        elo = post.design.roles.position is not None
    out = grid.reset_index(drop=True).copy()
    out["k"] = int(k)
    out["e_max_z"] = emax
    parts = [summarize_samples(sd, level, "sd_"), summarize_samples(surface, level, "surface_")]
    if elo:
        if get_family(post.family).latent:  # the logit scale is Elo's own
            elo_draws = ELO_SCALE * surface
        else:
            theta = post.idata.posterior["mu"].values.ravel()[:, None]
            top = np.clip(theta + surface, 1e-6, 1 - 1e-6)
            elo_draws = to_elo(top) - to_elo(np.clip(theta, 1e-6, 1 - 1e-6))
        parts.append(summarize_samples(elo_draws, level, "elo_"))
    ratio = surface / surface[:, :1]
    parts.append(summarize_samples(ratio, level, "ratio_"))
    out = pd.concat([out, *parts], axis=1)
    out["p_smaller"] = (surface < surface[:, :1]).mean(axis=0)
    out.attrs.update(k=int(k), level=level, estimand=estimand, decision=decision, elo=bool(elo))
    return out
