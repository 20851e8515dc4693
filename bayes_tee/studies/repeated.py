"""Repeated-sampling checks of the methods on data from a known DGP.

:func:`projection_coverage` answers "does the D-study's interval for the SE at a larger design
contain the SE a study of that design really has?": it simulates many pilots from
:func:`bayes_tee.studies.dgp.tee_dgp`, fits each, projects the SE at the target design with its
posterior interval, and compares with the true SE of theta_hat at the target, both the closed
form at the true components and the empirical SD over simulated studies of the target design.

Refits reuse the compiled model (balanced pilots differ only in their data containers), so a
repetition costs well under a second after the first.

>>> study = projection_coverage(dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=2,
...                                  n_replicates=3), dict(n_items=120, n_prompts=5),
...                             n_reps=40, random_seed=1)  # doctest: +SKIP
>>> study.attrs["coverage"]  # doctest: +SKIP
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._core.exceptions import DiagnosticWarning
from ..design.terms import FACETS, model_terms
from ..gstudy.divisors import divisors
from ..gstudy.weights import FIELDS
from ..tee.fit import fit_posterior
from .dgp import TABLE8_SENSITIVITY, spread_levels, tee_dgp

_ROLE_OF = {"n_items": "item", "n_prompts": "prompt", "n_temperatures": "temperature", "n_judges": "judge"}


def _counts(design: dict) -> dict[str, float]:
    return {FIELDS[k]: float(v) for k, v in design.items() if k in FIELDS}


def true_se(pilot: dict, target: dict, truth: dict[str, float]) -> float:
    """SE of theta_hat at ``target`` (design counts, missing ones as in ``pilot``) from the true
    components, with judge and temperature sensitivity over ``M'`` and ``H'`` (Messing 2026 Eq. 3).

    >>> round(true_se(dict(n_items=10), dict(n_items=40), {"item": 0.04}), 4)
    0.0316
    """
    full = {**pilot, **target}
    counts = _counts(full)
    present = tuple(f for f in FACETS if counts.get(f, 1) > 1)
    terms = model_terms(
        present, replicates=counts.get("replicate", 1) > 1, category=counts.get("category", 1) > 1
    )
    facets = {t.label: t.facets for t in terms}
    labels = [lab for lab in truth if lab in facets]
    div = divisors(labels, counts, facets=facets)
    return float(np.sqrt(sum(truth[lab] / d for lab, d in zip(labels, div))))


def empirical_se(
    pilot: dict,
    target: dict,
    *,
    components: dict[str, float] | None = None,
    n_studies: int = 1000,
    random_seed: int | None = None,
) -> float:
    """SD of ``theta_hat - mu`` over studies of the target design simulated from the DGP.

    Every study draws new items, prompts and interactions; its judges and temperatures are
    drawn with replacement from the pilot's panel of level effects ("judges like these"), the
    convention the projection uses.
    """
    rng = np.random.default_rng(random_seed)
    full = {**pilot, **target}
    lam = spread_levels(int(pilot.get("n_judges", 3)), TABLE8_SENSITIVITY["judge"])
    tau = spread_levels(int(pilot.get("n_temperatures", 3)), TABLE8_SENSITIVITY["temperature"])
    M, H = int(full.get("n_judges", 3)), int(full.get("n_temperatures", 3))
    err = np.empty(n_studies)
    for k in range(n_studies):
        df = tee_dgp(
            **full,
            components=components,
            judge_effects=rng.choice(lam, M),
            temperature_effects=rng.choice(tau, H),
            mu=0.0,
            random_seed=rng,
        )
        err[k] = df["score"].mean()
    return float(np.sqrt(np.mean(err**2)))


def projection_coverage(
    pilot: dict,
    target: dict,
    *,
    components: dict[str, float] | None = None,
    n_reps: int = 40,
    n_studies: int = 1000,
    level: float = 0.9,
    draws: int = 1000,
    tune: int = 1000,
    random_seed: int | None = None,
) -> pd.DataFrame:
    """Coverage of the D-study's SE interval at ``target`` over pilots simulated from the DGP.

    Parameters
    ----------
    pilot : dict
        :func:`bayes_tee.studies.dgp.tee_dgp` design of each simulated pilot.
    target : dict
        Design counts to project to (``n_items``, ``n_prompts``, ...).
    components : dict, optional
        True components (default: Messing (2026) Table 8).
    n_reps : int
        Simulated pilots (each one fit).
    n_studies : int
        Simulated studies of the target design for the empirical SD (0 skips it).
    level : float
        Level of the projection interval.
    draws, tune : int
        Sampler settings per fit (4 chains).
    random_seed : int, optional
        Seed.

    Returns
    -------
    pandas.DataFrame
        One row per pilot: ``rep``, ``se_median``, ``se_low``, ``se_high``, ``covered``,
        ``diagnostics_ok``; ``attrs`` holds ``true_se`` (closed form at the true components),
        ``empirical_se``, ``coverage`` (of the empirical SD when simulated, else the true SE)
        and ``median_ratio`` (projected median over the true SE).
    """
    rng = np.random.default_rng(random_seed)
    roles = {role: role for field, role in _ROLE_OF.items() if pilot.get(field, 3) > 1}
    if pilot.get("n_replicates", 5) > 1:
        roles["replicate"] = "replicate"
    if pilot.get("n_categories") and pilot["n_categories"] > 1:
        roles["category"] = "category"
    roles.pop("item", None)
    rows = []
    truth = None
    for rep in range(n_reps):
        df = tee_dgp(**pilot, components=components, random_seed=rng)
        truth = df.attrs["truth"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DiagnosticWarning)
            post = fit_posterior(
                df,
                outcome="score",
                item="item",
                **roles,
                draws=draws,
                tune=tune,
                random_seed=int(rng.integers(2**31)),
                progressbar=False,
            )
            d = post.dstudy(**target, level=level)
        rows.append(
            {
                "rep": rep,
                "se_median": d["se_median"].iloc[0],
                "se_low": d["se_low"].iloc[0],
                "se_high": d["se_high"].iloc[0],
                "diagnostics_ok": post.diagnostics()["ok"],
            }
        )
    out = pd.DataFrame(rows)
    se_true = true_se(pilot, target, truth)
    se_emp = (
        empirical_se(
            pilot, target, components=components, n_studies=n_studies, random_seed=int(rng.integers(2**31))
        )
        if n_studies
        else float("nan")
    )
    ref = se_emp if n_studies else se_true
    out["covered"] = (out["se_low"] <= ref) & (ref <= out["se_high"])
    out.attrs.update(
        true_se=se_true,
        empirical_se=se_emp,
        coverage=float(out["covered"].mean()),
        median_ratio=float(np.median(out["se_median"]) / se_true),
        level=level,
        pilot=dict(pilot),
        target=dict(target),
    )
    return out
