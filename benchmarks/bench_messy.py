"""Messy layouts: the wall time of a fresh process fitting each layout users have, with the
likelihood ``auto`` picks, its diagnostics, and (``--method``) any other likelihood for contrast.

Layouts (seed 000's Table 8 generator, Gaussian scores): balanced; 1%, 5% and 10% of calls lost
at random; 10% lost plus 3% of cells empty; at pilot size (60 items x 4 prompts x 3 judges x 2
temperatures x R replicates, about 5k-11k calls) and paper size (141 x 5 x 3 x 3 x 8, about
50k calls). Each fit runs in its own process (compile included), 4 chains x 1000 draws.

    python benchmarks/bench_messy.py [--sizes pilot paper] [--method auto marginal]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, sys, time, warnings
import numpy as np
import bayes_tee as bt
from bayes_tee.tee.augment import augment_layout
N, V, M, H, R, loss, empty, method = json.loads(sys.argv[1])
df = bt.simulate.tee_dgp(n_items=N, n_prompts=V, n_judges=M, n_temperatures=H, n_replicates=R, random_seed=1)
rng = np.random.default_rng(2)
df = df[rng.random(len(df)) > loss]
if empty:
    keys = ["item", "prompt", "judge", "temperature"]
    gone = df[keys].drop_duplicates().sample(frac=empty, random_state=3).assign(_gone=1)
    df = df.merge(gone, how="left", on=keys)
    df = df[df["_gone"].isna()].drop(columns="_gone")
roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
             replicate="replicate")
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    post = bt.fit_posterior(df, **roles, method=method, random_seed=1, progressbar=False)
d = post.diagnostics()
aug = augment_layout(post.design)
print(json.dumps(dict(calls=len(df), method=post.method, wall_s=round(time.perf_counter() - t, 1),
                      compile_s=post.info["compile_s"], sample_s=post.info["sample_s"],
                      latent_share=round(aug.latent_share, 2), max_rhat=round(d["max_rhat"], 3),
                      min_ess_bulk=round(d["min_ess_bulk"]), divergences=d["divergences"])))
"""

SIZES = {"pilot": (60, 4, 3, 2), "paper": (141, 5, 3, 3)}
LAYOUTS = [
    ("balanced", 0.0, 0.0),
    ("1% lost", 0.01, 0.0),
    ("5% lost", 0.05, 0.0),
    ("10% lost", 0.10, 0.0),
    ("10% lost + 3% empty", 0.10, 0.03),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["pilot", "paper"], choices=list(SIZES))
    ap.add_argument("--replicates", nargs="+", type=int, default=[4, 8])
    ap.add_argument("--method", nargs="+", default=["auto"])
    args = ap.parse_args()
    print(
        f"{'size':6} {'R':>2} {'layout':22} {'calls':>6} {'method':10} {'latent':>6} {'wall s':>7} "
        f"{'compile':>7} {'sample':>7} {'rhat':>6} {'ess':>5} {'div':>4}"
    )
    for size in args.sizes:
        for R in args.replicates if size == "pilot" else [8]:
            for name, loss, empty in LAYOUTS:
                for method in args.method:
                    spec = json.dumps([*SIZES[size], R, loss, empty, method])
                    out = subprocess.run([sys.executable, "-c", CHILD, spec], capture_output=True, text=True)
                    if out.returncode:
                        print(f"{size:6} {R:2d} {name:22} failed: {out.stderr.strip().splitlines()[-1]}")
                        continue
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    print(
                        f"{size:6} {R:2d} {name:22} {r['calls']:6d} {r['method']:10} "
                        f"{r['latent_share']:6.2f} "
                        f"{r['wall_s']:7.1f} {r['compile_s']:7.1f} {r['sample_s']:7.1f} {r['max_rhat']:6.3f} "
                        f"{r['min_ess_bulk']:5d} {r['divergences']:4d}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
