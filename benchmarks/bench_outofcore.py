"""Past one machine's memory: fit a 10M-call parquet dataset from its path (dask reduces it to
per-cell statistics) against reading it into pandas first, each in a fresh process: peak
resident memory and wall time (validation + fit, 4 chains x 1000 draws), same data, same run.

The data are Messing (2026)'s Table 8 generator at the paper's facet counts (5 prompts x 3 judges x
3 temperatures x 8 replicates): one block of 1,410 items repeated under new item labels with
fresh replicate noise up to ``--items`` items (28,200: 10.15M calls, 1.27M cells), written as a
parquet dataset of one file per block; ``--lost`` drops that share of the
calls at random (the fit then takes ``blocks``, whose cost grows with the items). ``--modes
cluster`` fits the path through a local ``dask.distributed`` cluster (2 worker processes started
here) with ``client=``: the measured process only receives per-cell statistics and samples.

    python benchmarks/bench_outofcore.py [--items 28200] [--lost 0.0] [--keep DIR]
        [--modes parquet pandas cluster] [--draws N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

WRITE = r"""
import sys, numpy as np, bayes_tee as bt
out, items, lost = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
block = 1410
# one simulated block of 1,410 items, repeated with new item labels and fresh replicate noise
# (the generator takes minutes per block at this size; layout and memory are what is measured)
base = bt.simulate.tee_dgp(n_items=block, n_prompts=5, n_judges=3, n_temperatures=3, n_replicates=8,
                           random_seed=0)
rng = np.random.default_rng(1)
for b, start in enumerate(range(0, items, block)):
    df = base[base["item"].isin(base["item"].unique()[: min(block, items - start)])].copy()
    df["item"] = f"b{b:03d}" + df["item"].astype(str)
    df["score"] = df["score"] + rng.normal(0.0, 0.14, len(df))
    if lost:
        df = df[rng.random(len(df)) > lost]
    df.to_parquet(f"{out}/part.{b:04d}.parquet", index=False)
"""

FIT = r"""
import json, resource, sys, time, warnings
import bayes_tee as bt
import pandas as pd
path, mode, draws, address = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
             replicate="replicate")
client = None
if mode == "cluster":  # the scheduler and workers are other processes: only this one is measured
    from distributed import Client
    client = Client(address)
t = time.perf_counter()
data = pd.read_parquet(path) if mode == "pandas" else path
kw = dict(draws=draws, tune=draws) if draws else {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    post = bt.fit_posterior(data, **roles, random_seed=1, progressbar=False, client=client, **kw)
wall = time.perf_counter() - t
d = post.diagnostics()
print(json.dumps(dict(mode=mode, calls=post.design.n_rows, cells=len(post.design.cells), method=post.method,
                      wall_s=round(wall, 1), sample_s=post.info["sample_s"],
                      peak_gb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
                      max_rhat=round(d["max_rhat"], 3), divergences=d["divergences"])))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=28200)
    ap.add_argument("--lost", type=float, default=0.0)
    ap.add_argument("--keep", help="write (or reuse) the dataset here instead of a temporary directory")
    ap.add_argument(
        "--modes", nargs="+", default=["parquet", "pandas"], choices=["parquet", "pandas", "cluster"]
    )
    ap.add_argument("--draws", type=int, default=0, help="draws and tuning steps per chain (0: the defaults)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep or tmp)
        path.mkdir(parents=True, exist_ok=True)
        if not any(path.glob("*.parquet")):
            cmd = [sys.executable, "-c", WRITE, str(path), str(args.items), str(args.lost)]
            subprocess.run(cmd, check=True)
        size = sum(p.stat().st_size for p in path.glob("*.parquet")) / 2**20
        print(f"dataset: {path} ({size:.0f} MB parquet)")
        rows, cluster = {}, None
        if "cluster" in args.modes:  # a local dask.distributed cluster in this (parent) process
            from distributed import LocalCluster

            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        for mode in args.modes:
            address = cluster.scheduler_address if mode == "cluster" else ""
            cmd = [sys.executable, "-c", FIT, str(path), mode, str(args.draws), address]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode:
                print(f"{mode}: failed: {out.stderr.strip().splitlines()[-1]}")
                continue
            rows[mode] = r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{mode:8} {r['calls']:>10,} calls {r['cells']:>9,} cells {r['method']:9} "
                f"wall {r['wall_s']:6.1f} s (sampling {r['sample_s']:5.1f}) peak {r['peak_gb']:5.2f} GB "
                f"R-hat {r['max_rhat']:.3f} div {r['divergences']}",
                flush=True,
            )
        if cluster is not None:
            cluster.close()
        if {"parquet", "pandas"} <= set(rows):
            p, q = rows["parquet"], rows["pandas"]
            print(
                f"parquet path / pandas: memory {p['peak_gb'] / q['peak_gb']:.2f}x, "
                f"time {p['wall_s'] / q['wall_s']:.2f}x"
            )


if __name__ == "__main__":
    main()
