"""Regenerate the stored simulation studies in ``models/`` that notebook 05 loads.

    python scripts/make_studies.py [small_facets] [staircase] [prior_sensitivity] [binary_pilot]

(no argument: all of them). Each writes a CSV with its long results table:

* ``models/coverage_small_facets.csv.gz``: Messing (2026)'s small-facet pilot (N=30, V=3, M=3, H=3,
  R=3), 200 simulated data sets, every method, 90% and 95% intervals (about 2-3 min on 2 cores).
* ``models/coverage_staircase.csv.gz``: the App. E.4 staircase, scenarios A-D at
  N in {20, 50, 200, 500, 2000}, 100 data sets each, 95% intervals (about 15 min on 2 cores).
* ``models/binary94_lpm.nc`` and ``models/binary94_glmm.nc``: notebook 02's simulated 94%-safe
  pilot under both links (``bt.compare_links``, 4 x 1000 draws; about 2 min).
* ``models/prior_sensitivity_demo.csv`` and ``models/prior_sensitivity_pilot.csv``: every prior
  preset on the embedded demo and on one simulated small-facet pilot (about 5 min each).
"""

from __future__ import annotations

import sys
from pathlib import Path

import bayes_tee as bt
from bayes_tee.studies.coverage import coverage_staircase

OUT = Path(__file__).resolve().parents[1] / "models"
SMALL = dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=3, n_replicates=3)
ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
)


def small_facets() -> None:
    study = bt.simulate.coverage_study(
        bt.simulate.tee_dgp, [SMALL], n_sims=200, level=[0.9, 0.95], random_seed=1, draws=1000, tune=1000
    )
    study.results.to_csv(OUT / "coverage_small_facets.csv.gz", index=False)
    print(study.info)
    print(study.table().to_string())


def staircase() -> None:
    study = coverage_staircase(
        n_items=(20, 50, 200, 500, 2000),
        n_sims=100,
        level=0.95,
        random_seed=1,
        cache_dir=OUT.parent / ".cache" / "staircase",
    )
    study.results.to_csv(OUT / "coverage_staircase.csv.gz", index=False)
    print(study.info)
    print(study.table().to_string())


def prior_sensitivity() -> None:
    kw = dict(random_seed=1, progressbar=False)
    demo = bt.prior_sensitivity(bt.datasets.load("tee_demo"), **ROLES, category="category", **kw)
    demo.results.to_csv(OUT / "prior_sensitivity_demo.csv", index=False)
    print(demo.flagged().to_string())
    pilot = bt.simulate.tee_dgp(**SMALL, random_seed=7)
    small = bt.prior_sensitivity(pilot, **ROLES, **kw)
    small.results.to_csv(OUT / "prior_sensitivity_pilot.csv", index=False)
    print(small.flagged().to_string())


def binary_pilot() -> None:
    """Notebook 02's simulated safety-style pilot (the same call as its data cell)."""
    import numpy as np

    truth = {
        "item": 1.5,
        "category": 0.3,
        "prompt": 0.05,
        "item:prompt": 0.1,
        "item:temperature": 0.02,
        "prompt:temperature": 0.01,
        "item:judge": 0.5,
        "prompt:judge": 0.05,
        "cell": 0.1,
    }
    df = bt.simulate.tee_dgp(
        n_items=60,
        n_categories=6,
        n_prompts=3,
        n_judges=3,
        n_temperatures=2,
        n_replicates=4,
        components=truth,
        judge_effects=[-0.8, 0.0, 0.8],
        temperature_effects=[-0.1, 0.1],
        mu=float(np.log(0.94 / 0.06)) + 0.3,
        outcome="logit",
        random_seed=11,
    )
    df = df.rename(columns={"score": "safe"})
    cmp = bt.compare_links(
        df,
        outcome="safe",
        item="item",
        prompt="prompt",
        judge="judge",
        temperature="temperature",
        replicate="replicate",
        category="category",
        random_seed=1,
        progressbar=False,
    )
    cmp.lpm.save(OUT / "binary94_lpm.nc")
    cmp.glmm.save(OUT / "binary94_glmm.nc")
    print(cmp.table.to_string())


if __name__ == "__main__":
    jobs = {
        "small_facets": small_facets,
        "staircase": staircase,
        "prior_sensitivity": prior_sensitivity,
        "binary_pilot": binary_pilot,
    }
    for name in sys.argv[1:] or list(jobs):
        jobs[name]()
