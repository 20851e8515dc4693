"""All-pairs paired noise: vectorized estimator vs a per-pair loop (Wang 2025 Table 2 code);
with ``--bayes``, the Bayesian Beta-Binomial fit against the same model with one likelihood term
per question.

    python benchmarks/bench_noise.py [--bayes]

Baseline, run in the same process: for every pair, the numpy-style formulas of Wang (2025)
Table 2 applied to that pair's two columns (what a script looping over pairs does). Both give
the same numbers (checked); the ratio is the speed-up of computing all pairs from one
covariance matrix. Uses the all-the-noises MATH500 table when ../shared is present, else a
simulated table of the same shape (48 models x 500 questions).

``--bayes``: ``nz.bayes()`` (classes=1, 4 x 600 draws after 600 warm-up steps, as the test
suite's check) enters each model's distinct (correct, count) pairs once, weighted by their
questions; the baseline is the same model written as PyMC's ``BetaBinomial`` observed at every
question, sampled by the same sampler with the same seed. Two tables of the questions with
K >= 100: every 8th model (a few hundred distinct outcomes a model), and every 2nd model's
counts subsampled to K = 2 (at most 3 distinct outcomes a model). It prints both log densities
at a point (equal: the weighted one adds the binomial coefficients) and the sampling seconds
(the second of two runs) and their ratio.
"""

from __future__ import annotations

import argparse
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

import bayes_tee as bt
from bayes_tee._core.sampling import sample
from bayes_tee.noise import bayes as noise_bayes

DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "external"
    / "all_the_noises_highk_temp0.7"
    / "input_table_math500_cot.csv"
)


def table() -> pd.DataFrame:
    if DATA.is_file():
        return pd.read_csv(DATA, index_col=0).rename(columns={"example_id": "question"})
    rng = np.random.default_rng(0)
    u = rng.beta(0.6, 0.4, 500)
    rows = [
        pd.DataFrame(
            {
                "model": f"m{m}",
                "question": np.arange(500),
                "count": 100,
                "correct": rng.binomial(100, np.clip(u + 0.01 * m, 0, 1)),
            }
        )
        for m in range(48)
    ]
    return pd.concat(rows, ignore_index=True)


def loop_pairs(df: pd.DataFrame) -> dict:
    p = df.pivot(index="question", columns="model", values="correct") / df.pivot(
        index="question", columns="model", values="count"
    )
    k = df.pivot(index="question", columns="model", values="count")
    out = {}
    for a, b in combinations(p.columns, 2):
        pa, pb = p[a].to_numpy(), p[b].to_numpy()
        va, vb = pa * (1 - pa), pb * (1 - pb)
        bias = np.mean(va / (k[a].to_numpy() - 1)) + np.mean(vb / (k[b].to_numpy() - 1))
        cov = np.mean((pa - pa.mean()) * (pb - pb.mean()))
        total = np.var(pa) + va.mean() + np.var(pb) + vb.mean() - 2 * cov
        data = np.var(pa - pb) - bias
        pred = va.mean() + vb.mean() + bias
        out[(a, b)] = (total, data, pred)
    return out


def main() -> None:
    df = table()
    t0 = time.perf_counter()
    base = loop_pairs(df)
    t_loop = time.perf_counter() - t0
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        nz = bt.noise.paired(df, question="question", count="count")
        m = nz.pair_matrices()
    t_vec = (time.perf_counter() - t0) / reps
    idx = {name: i for i, name in enumerate(nz.models_)}
    worst = max(
        abs(m[c][idx[a], idx[b]] - v[j])
        for (a, b), v in base.items()
        for j, c in enumerate(("total", "data", "pred"))
    )
    n_models = len(nz.models_)
    print(f"{n_models} models x {nz.n_questions} questions, {len(base)} pairs")
    print(f"per-pair loop (baseline): {t_loop * 1000:8.1f} ms")
    print(f"bt.noise.paired (all):    {t_vec * 1000:8.1f} ms  (from the long table, incl. aggregation)")
    print(f"speed-up: {t_loop / t_vec:.1f}x; max abs difference {worst:.2e}")


def per_question_model(table, kappa_prior=(0.0, 1.5)) -> pm.Model:
    """The classes=1 model with one likelihood term per question (the baseline)."""
    with pm.Model(coords={"model": table.models}) as model:
        mu = pm.Beta("mu", 1.0, 1.0, dims="model")
        kappa = pt.exp(pm.Normal("log_kappa", *kappa_prior, dims="model"))
        pm.BetaBinomial("c", n=table.count, alpha=mu * kappa, beta=(1 - mu) * kappa, observed=table.correct)
    return model


def bayes() -> None:
    df = (
        pd.read_csv(DATA, index_col=0)
        if DATA.is_file()
        else table().rename(columns={"question": "example_id"})
    )
    df = df[df["count"] >= 100]
    models = sorted(df["model"].unique())
    rng = np.random.default_rng(2)
    small = df[df["model"].isin(models[::2])]
    small = small.assign(
        correct=rng.hypergeometric(small["correct"], small["count"] - small["correct"], 2), count=2
    )
    for name, d in (
        ("K >= 100, every 8th model", df[df["model"].isin(models[::8])]),
        ("K = 2, every 2nd model", small),
    ):
        nz = bt.noise.paired(d, model="model", question="example_id", correct="correct", count="count")
        ours, base = noise_bayes.build_model(nz.table, 1), per_question_model(nz.table)
        point = ours.initial_point()
        lp = (float(ours.compile_logp()(point)), float(base.compile_logp()(point)))
        distinct = len(noise_bayes._distinct_outcomes(nz.table.correct, nz.table.count)[0])
        seconds = []
        for model in (ours, base):
            sample(model, "nutpie", 4, 600, 600, 0.9, 1, False)  # compiled and run once first
            t0 = time.perf_counter()
            sample(model, "nutpie", 4, 600, 600, 0.9, 1, False)
            seconds.append(time.perf_counter() - t0)
        print(f"{name}: {len(nz.models_)} models x {nz.n_questions} questions, {distinct} distinct outcomes")
        print(f"  log density at a point: weighted {lp[0]:.6f}, per question {lp[1]:.6f}")
        ratio = seconds[1] / seconds[0]
        print(f"  sampling: weighted {seconds[0]:.2f} s, per question {seconds[1]:.2f} s, {ratio:.1f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bayes", action="store_true", help="time the Bayesian fit instead")
    bayes() if ap.parse_args().bayes else main()
