"""Cold and warm compile, sampling and whole-fit time per layout, on this stack and (with
``--old``) on the pre-port stack (Python 3.11, PyMC 5, ArviZ 0.x, the last 0.1 commit), in the
same run. Every measurement is a fresh process; "cold" starts from empty PyTensor/numba caches,
"warm" is a second process on the same layout reusing the caches the first one wrote.

    python benchmarks/bench_compile.py [--layouts demo,balanced,propaganda,safety] [--old]

Layouts: ``demo`` (embedded pilot, balanced), ``balanced`` (Messing 2026's 50,760-call design,
simulated), ``propaganda`` and ``safety`` (Messing 2026's real data from ``../shared``; skipped when
absent). Prints one line per (stack, layout, cache) and the old/new ratios. Import time is
excluded from every number (``fit_s`` = build + compile + sample).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "external" / "tee_replication"
OLD_COMMIT = "7ded506"  # the last commit on PyMC 5 / ArviZ 0.x
OLD_PINS = [
    "pymc>=5.16,<6",
    "arviz>=0.20,<1",
    "nutpie>=0.15,<0.16",
    "numpy<2.4",
    "pandas<3",
    "xarray<2025.10",
    "scipy",
    "matplotlib",
    "h5netcdf[h5py]",
]

#: The worker: fits one layout with few draws, prints JSON timings. Runs on either stack.
WORKER = r"""
import inspect, json, sys, time, warnings
t0 = time.perf_counter()
import numpy as np, pandas as pd
import bayes_tee as bt
t_import = time.perf_counter() - t0
layout, shared, draws = sys.argv[1], sys.argv[2], int(sys.argv[3])
if layout == "demo":
    df = bt.datasets.load("tee_demo")
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
                 replicate="replicate", category="category")
elif layout == "balanced":
    df = bt.simulate.tee_dgp(n_items=141, n_prompts=5, n_judges=3, n_temperatures=3, n_replicates=8,
                             random_seed=7)
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
                 replicate="replicate")
elif layout == "propaganda":
    df = pd.read_csv(f"{shared}/propaganda_pilot_clean.csv")
    roles = dict(outcome="cn_more_favorable", item="question_ID", prompt="variant_id", judge="judge_model",
                 temperature="temperature", replicate="replication", category="question_focus")
elif layout == "safety":
    df = pd.read_csv(f"{shared}/safety_clean.csv")
    roles = dict(outcome="outcome", item="item_id", prompt="variant_id", judge="judge_short",
                 temperature="temperature", replicate="replication", category="category")
bar = "progressbar" if "progressbar" in inspect.signature(bt.fit_posterior).parameters else "progress_bar"
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t1 = time.perf_counter()
    post = bt.fit_posterior(df, **roles, draws=draws, tune=draws, random_seed=1, **{bar: False})
    fit_s = time.perf_counter() - t1
info = post.info
print(json.dumps({"method": post.method, "import_s": t_import, "build_s": info["build_s"],
                  "compile_s": info["compile_s"], "sample_s": info["sample_s"], "fit_s": fit_s}))
"""


def measure(python: str, root: Path, layout: str, cache: Path, draws: int) -> dict:
    env = dict(
        os.environ,
        PYTHONPATH=str(root),
        NUMBA_CACHE_DIR=str(cache / "numba"),
        PYTENSOR_FLAGS=f"base_compiledir={cache / 'pytensor'}",
        BAYES_TEE_CACHE_DIR=str(cache / "bt"),
    )
    out = subprocess.run(
        [python, "-c", WORKER, layout, str(SHARED), str(draws)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise RuntimeError(f"{layout} on {python}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def old_stack(tmp: Path) -> tuple[str, Path]:
    """A Python 3.11 venv with the PyMC 5 / ArviZ 0.x stack and the last 0.1 source tree."""
    src = tmp / "old_src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", OLD_COMMIT], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
    py311 = shutil.which("python3.11") or str(Path.home() / ".pyenv/versions/3.11.7/bin/python3.11")
    venv = tmp / "old_venv"
    subprocess.run([py311, "-m", "venv", str(venv)], check=True)
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv"
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin/python"), *OLD_PINS], check=True
    )
    return str(venv / "bin/python"), src


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layouts", default="demo,balanced,propaganda,safety")
    ap.add_argument("--draws", type=int, default=200, help="draws and tune per chain (timing, not inference)")
    ap.add_argument("--old", action="store_true", help="also measure the pre-port stack (PyMC 5, ArviZ 0.x)")
    a = ap.parse_args()
    layouts = [x for x in a.layouts.split(",") if x in ("demo", "balanced") or SHARED.is_dir()]
    tmp = Path(tempfile.mkdtemp(prefix="bench_compile_"))
    stacks = {"new": (sys.executable, ROOT)}
    if a.old:
        stacks["old"] = old_stack(tmp)
    res: dict = {}
    try:
        for name, (python, root) in stacks.items():
            for layout in layouts:
                cache = tmp / f"cache_{name}_{layout}"
                for run in ("cold", "warm"):
                    r = measure(python, root, layout, cache, a.draws)
                    res[name, layout, run] = r
                    print(
                        f"{name:3s} {layout:10s} {run:4s} {r['method']:9s} import {r['import_s']:5.1f}s  "
                        f"build {r['build_s']:5.1f}s  compile {r['compile_s']:6.1f}s  "
                        f"sample {r['sample_s']:6.1f}s  fit {r['fit_s']:6.1f}s",
                        flush=True,
                    )
        if a.old:
            print("\nold / new (same run; > 1 means the new stack is faster)")
            for layout in layouts:
                for run in ("cold", "warm"):
                    o, n = res["old", layout, run], res["new", layout, run]
                    print(
                        f"{layout:10s} {run:4s} compile {o['compile_s'] / n['compile_s']:5.2f}x  "
                        f"sample {o['sample_s'] / n['sample_s']:5.2f}x  fit {o['fit_s'] / n['fit_s']:5.2f}x"
                    )
        print("\nwarm (second process) vs cold, new stack")
        for layout in layouts:
            c, w = res["new", layout, "cold"], res["new", layout, "warm"]
            print(
                f"{layout:10s} fit {c['fit_s']:6.1f}s -> {w['fit_s']:6.1f}s  "
                f"(compile {c['compile_s']:5.1f}s -> {w['compile_s']:5.1f}s)"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
