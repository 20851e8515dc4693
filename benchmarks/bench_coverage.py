"""What compiled-model reuse buys a coverage study: fit the small-facet pilot (N=30, V=3, M=3,
H=3, R=3; Messing (2026)) to a series of simulated data sets, once recompiling the model for every
data set (the baseline: what a loop over ``fit_posterior`` costs without the cache) and once
reusing the compiled model (what :func:`bayes_tee.simulate.coverage_study` does in each worker),
in one process. Prints seconds per fit and the ratio, and the projected time of a 200-fit study.

    python benchmarks/bench_coverage.py [--fits 40] [--baseline-fits 4] [--draws 500]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayes_tee as bt
from bayes_tee._core import sampling

PILOT = dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=3, n_replicates=3)
ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
)


def fits(n: int, draws: int, seed: int, *, reuse: bool) -> list[float]:
    rng = np.random.default_rng(seed)
    times = []
    for _ in range(n):
        df = bt.simulate.tee_dgp(**PILOT, panel="resample", random_seed=rng)
        if not reuse:
            sampling.clear_cache()
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DiagnosticWarning)
            bt.fit_posterior(
                df, **ROLES, draws=draws, tune=draws, random_seed=int(rng.integers(2**31)), progressbar=False
            )
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fits", type=int, default=40)
    ap.add_argument("--baseline-fits", type=int, default=4)
    ap.add_argument("--draws", type=int, default=500)
    a = ap.parse_args()
    fresh = fits(a.baseline_fits, a.draws, 1, reuse=False)
    sampling.clear_cache()  # the reuse series pays its own first compile
    reused = fits(a.fits + 1, a.draws, 2, reuse=True)
    first, rest = reused[0], np.array(reused[1:])
    print(f"recompile every fit: {np.mean(fresh):6.2f} s per fit (n={len(fresh)})")
    print(
        f"reuse compiled model: first fit {first:6.2f} s, then {rest.mean():6.2f} s per fit "
        f"(median {np.median(rest):.2f}, n={rest.size})"
    )
    print(f"per-fit ratio, recompile / reuse: {np.mean(fresh) / rest.mean():6.1f}x")
    print(
        f"projected 200-fit study on one core: {200 * np.mean(fresh) / 60:5.1f} min recompiling, "
        f"{(first + 199 * rest.mean()) / 60:5.1f} min reusing"
    )


if __name__ == "__main__":
    main()
