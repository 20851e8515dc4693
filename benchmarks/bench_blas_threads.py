"""Fits through a compiled PyMC model with OpenBLAS's own threads and with one BLAS thread a
chain (what :func:`bayes_tee._core.sampling.sample` holds every fit to), each in a fresh process:
wall and CPU seconds of the fit, and their ratios.

nutpie runs each chain in a thread; a PyMC model's matrix products (PyTensor's C code through
NumPy's OpenBLAS) otherwise start BLAS threads inside every chain's thread. The ``blocks`` row,
a numba kernel's C callback, is the control: its kernel calls no threaded BLAS.

    python benchmarks/bench_blas_threads.py [--repeats 2]

Its log is ``benchmarks/results/bench_blas_threads.log``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import contextlib, json, time, warnings
import numpy as np
import bayes_tee as bt
import bayes_tee._core.sampling as sampling
if {default}:  # OpenBLAS's own threads, as before the limit
    sampling.threadpool_limits = lambda **kw: contextlib.nullcontext()
roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
             replicate="replicate", progressbar=False)
df = bt.simulate.tee_dgp(n_items=20, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=3, random_seed=8)
df = df[np.random.default_rng(5).random(len(df)) >= 0.05]
kw = dict(cells=dict(method="cells", chains=2, draws=1000, tune=500),
          marginal=dict(method="marginal", chains=4, draws=500, tune=500),
          blocks=dict(chains=4, draws=1000, tune=500))["{layout}"]
warnings.simplefilter("ignore")
bt.fit_posterior(df, **roles, random_seed=1, **{{**kw, "draws": 10, "tune": 10}})  # the compiled model loaded
t, c = time.perf_counter(), time.process_time()
post = bt.fit_posterior(df, **roles, random_seed=2, **kw)
print(json.dumps(dict(wall=time.perf_counter() - t, cpu=time.process_time() - c, method=post.method)))
"""


def _run(layout: str, default: bool) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(layout=layout, default=default)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--layouts", nargs="+", default=["cells", "marginal", "blocks"])
    args = ap.parse_args()
    head = ("layout", "default wall", "cpu", "one thread wall", "cpu", "wall ratio")
    print(f"{head[0]:10} {head[1]:>12} {head[2]:>6} {head[3]:>15} {head[4]:>6} {head[5]:>10}")
    for layout in args.layouts:
        for _ in range(args.repeats):
            a, b = _run(layout, True), _run(layout, False)
            print(
                f"{layout:10} {a['wall']:12.1f} {a['cpu']:6.1f} {b['wall']:15.1f} {b['cpu']:6.1f} "
                f"{a['wall'] / b['wall']:10.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
