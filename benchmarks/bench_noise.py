"""All-pairs paired noise: vectorized estimator vs a per-pair loop (Wang 2025 Table 2 code).

    python benchmarks/bench_noise.py

Baseline, run in the same process: for every pair, the numpy-style formulas of Wang (2025)
Table 2 applied to that pair's two columns (what a script looping over pairs does). Both give
the same numbers (checked); the ratio is the speed-up of computing all pairs from one
covariance matrix. Uses the all-the-noises MATH500 table when ../shared is present, else a
simulated table of the same shape (48 models x 500 questions).
"""

from __future__ import annotations

import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

import bayes_tee as bt

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


if __name__ == "__main__":
    main()
