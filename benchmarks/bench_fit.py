"""Time fit_posterior on a 50,760-row design (N=141, V=5, M=3, H=3, R=8, as in Messing (2026)'s
safety study) with the replicate collapse (balanced sufficient statistics; the marginal model
that integrates every random effect out, which is what unbalanced data get) against the same
data without it (one likelihood term per call, explicit cell effects), in one process. Then the
same design with 1% of calls missing at random (unbalanced, like the safety data's NA rows),
where ``auto`` picks the augmented model (the balanced likelihood with the missing calls as
latent values), against the marginal model on the same data. Prints compile and sampling time
separately and the ratios; ``--cells`` adds the sampled-random-effects cell model.

    python benchmarks/bench_fit.py [--draws 1000] [--rows-draws 150] [--cells]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayes_tee as bt

ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
)


def run(df, method, draws, tune, seed=1, **kw):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        post = bt.fit_posterior(
            df, **ROLES, method=method, draws=draws, tune=tune, random_seed=seed, progressbar=False, **kw
        )
    total = time.perf_counter() - t0
    d = post.diagnostics()
    per_1k = post.info["sample_s"] / (post.info["chains"] * (draws + tune)) * 1000
    print(
        f"{post.method:9s} compile {post.info['compile_s']:7.1f}s  sample {post.info['sample_s']:7.1f}s "
        f"({per_1k:.2f}s per 1000 iterations)  total {total:7.1f}s  "
        f"params {post.info['n_free_parameters']:6d}  "
        f"div {d['divergences']:4d}  max R-hat {d['max_rhat']:.3f}  min ESS {d['min_ess_bulk']:.0f}"
    )
    return post, per_1k, total


def glmm(a) -> None:
    """The logit GLMM: successes/trials per cell against one Bernoulli term per call."""

    def binary(**design):
        return bt.simulate.tee_dgp(
            **design,
            mu=2.0,
            outcome="logit",
            random_seed=7,
            components={"item": 1.0, "item:judge": 0.3, "cell": 0.1},
        )

    big = binary(n_items=141, n_prompts=5, n_judges=3, n_temperatures=3, n_replicates=8)
    print(
        f"GLMM: {len(big)} rows, {big.groupby(['item', 'prompt', 'temperature', 'judge']).ngroups} cells, "
        f"rate {big['score'].mean():.3f}"
    )
    _, big_rate, _ = run(big, "binomial", a.draws, a.draws, family="binomial")
    small = binary(n_items=40, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=8)
    print(f"GLMM, smaller design: {len(small)} rows")
    _, agg_rate, _ = run(small, "binomial", a.draws, a.draws, family="binomial")
    _, row_rate, _ = run(small, "rows", a.rows_draws, a.rows_draws, family="binomial")
    print(f"sampling time per iteration, Bernoulli rows / binomial cells: {row_rate / agg_rate:8.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--rows-draws", type=int, default=150, help="draws (and tune) for the slow baseline")
    ap.add_argument("--cells", action="store_true", help="also time the sampled-random-effects cell model")
    ap.add_argument(
        "--glmm", action="store_true", help="time the logit GLMM instead (binomial vs Bernoulli rows)"
    )
    a = ap.parse_args()
    if a.glmm:
        glmm(a)
        return
    df = bt.simulate.tee_dgp(
        n_items=141, n_prompts=5, n_judges=3, n_temperatures=3, n_replicates=8, random_seed=7
    )
    print(f"{len(df)} rows, {df.groupby(['item', 'prompt', 'temperature', 'judge']).ngroups} cells")
    _, bal_rate, bal_total = run(df, "balanced", a.draws, a.draws)
    _, marg_rate, marg_total = run(df, "marginal", a.draws, a.draws)
    if a.cells:
        _, cell_rate, _ = run(df, "cells", a.draws, a.draws)
    _, row_rate, _ = run(df, "rows", a.rows_draws, a.rows_draws)
    print(f"sampling time per iteration, rows / balanced: {row_rate / bal_rate:8.1f}x")
    print(f"sampling time per iteration, rows / marginal: {row_rate / marg_rate:8.1f}x")
    if a.cells:
        print(f"sampling time per iteration, rows / cells:    {row_rate / cell_rate:8.1f}x")
    rng = np.random.default_rng(0)
    holes = df.drop(index=rng.choice(df.index, size=len(df) // 100, replace=False))
    print(f"unbalanced: {len(holes)} rows")
    _, aug_rate, aug_total = run(holes, "auto", a.draws, a.draws)
    _, hole_marg_rate, _ = run(holes, "marginal", a.rows_draws, a.rows_draws)
    print(
        f"total fit time, marginal / balanced on the balanced data: {marg_total / bal_total:.1f}x; "
        f"unbalanced (auto): {aug_total:.0f}s"
    )
    print(
        f"sampling time per iteration on the unbalanced data, marginal / augmented: "
        f"{hole_marg_rate / aug_rate:8.1f}x"
    )


if __name__ == "__main__":
    main()
