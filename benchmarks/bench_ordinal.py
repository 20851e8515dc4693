"""Likert scores: bayes_tee's cumulative-logit GLMM against R's ``ordinal::clmm`` (Laplace) on
the same data and model, in the same run.

Data: the cumulative-logit model with crossed items, prompts, judges (fixed, three judges with
their own location), item x prompt, item x judge and prompt x judge (five random terms), one
call per cell, 5-point scores piled towards the top (cutpoints below the latent mean), about
4,000 scores at the default size. Each bayes_tee fit runs in a fresh process at the default
settings (4 chains of at most 2,000 draws after 600 tuning steps, target 0.9, stopping at the first
checkpoint from 1,000 draws where the diagnostics pass with margin); ``wall s`` includes ``import
bayes_tee``. clmm (``ordinal`` package, Debian ``r-cran-ordinal``; ``--install-r`` installs it)
fits ``factor(y) ~ judge + (1|item) + (1|prompt) + (1|item:prompt) + (1|item:judge) +
(1|prompt:judge)``; its time is ``system.time(clmm(...))`` inside R, data already read.

Printed per size: both times and their ratio, the diagnostics, and each variance component and
the judge effects: clmm's estimate, the posterior median and 90% interval, and whether clmm's
estimate is inside it.

``--lost 0 0.1`` (the default) runs the balanced layout and one with 10% of the calls lost at
random (unbalanced: cells empty).

numba compiles the ordinal kernel and its C callback once per machine and caches them on disk
(R's ``ordinal`` arrives compiled). So that no timed fit pays it, the benchmark first fits a
20-item design in its own fresh process and prints that process's time ("first fit on this
machine" when the cache was cold, a few seconds when it was warm).

    python benchmarks/bench_ordinal.py [--items 170] [--prompts 8] [--lost 0 0.1] [--install-r]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

#: The random terms both fits estimate (clmm's names on the right).
TERMS = {
    "item": "item",
    "prompt": "prompt",
    "item:prompt": "item:prompt",
    "item:judge": "item:judge",
    "prompt:judge": "prompt:judge",
}
TRUTH = {"item": 1.0, "prompt": 0.15, "item:prompt": 0.3, "item:judge": 0.4, "prompt:judge": 0.05}
JUDGES = np.array([-0.4, 0.1, 0.3])
CUTS = np.array([-3.5, -2.2, -0.9, 0.6])

CHILD = """
import json, sys, time, warnings
t0 = time.perf_counter()
import bayes_tee as bt
import pandas as pd
t1 = time.perf_counter()
df = pd.read_csv(sys.argv[1])
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    post = bt.fit_posterior(df, outcome="y", item="item", prompt="prompt", judge="judge",
                            family="ordinal", random_seed=1, progressbar=False)
t2 = time.perf_counter()
comp = post.components().set_index("component")
cut = post.cutpoints()
out = {"import_s": t1 - t0, "fit_s": t2 - t1, "method": post.method, "diag": post.diagnostics(),
       "draws": post.info["draws"],
       "components": {k: comp.loc[k, ["median", "low", "high"]].tolist() for k in comp.index},
       "cutpoints": cut[["median", "low", "high"]].to_numpy().tolist()}
print(json.dumps(out, default=float))
"""

CLMM = r"""
suppressMessages(library(ordinal))
args <- commandArgs(trailingOnly = TRUE)
df <- read.csv(args[1])
for (f in c("item", "prompt", "judge")) df[[f]] <- factor(df[[f]])
df$y <- factor(df$y, ordered = TRUE)
t <- system.time(m <- clmm(y ~ judge + (1|item) + (1|prompt) + (1|item:prompt) + (1|item:judge) +
                           (1|prompt:judge), data = df, link = "logit"))
vc <- sapply(VarCorr(m), function(v) as.numeric(v))
cat(jsonlite::toJSON(list(time = unname(t["elapsed"]), var = as.list(vc), theta = unname(m$Theta),
    beta = unname(m$beta)), auto_unbox = TRUE, digits = 8))
"""


def simulate(n_items: int, n_prompts: int, seed: int = 0) -> pd.DataFrame:
    """One call per (item, prompt, judge) cell of the cumulative-logit model above."""
    rng = np.random.default_rng(seed)
    J = len(JUDGES)
    eff = {
        "item": rng.normal(0, np.sqrt(TRUTH["item"]), n_items),
        "prompt": rng.normal(0, np.sqrt(TRUTH["prompt"]), n_prompts),
        "item:prompt": rng.normal(0, np.sqrt(TRUTH["item:prompt"]), (n_items, n_prompts)),
        "item:judge": rng.normal(0, np.sqrt(TRUTH["item:judge"]), (n_items, J)),
        "prompt:judge": rng.normal(0, np.sqrt(TRUTH["prompt:judge"]), (n_prompts, J)),
    }
    i, v, j = np.meshgrid(np.arange(n_items), np.arange(n_prompts), np.arange(J), indexing="ij")
    i, v, j = i.ravel(), v.ravel(), j.ravel()
    eta = (
        eff["item"][i] + eff["prompt"][v] + eff["item:prompt"][i, v] + eff["item:judge"][i, j]
        + eff["prompt:judge"][v, j] + JUDGES[j]
    )  # fmt: skip
    latent = eta + rng.logistic(size=eta.size)
    y = 1 + (latent[:, None] > CUTS[None, :]).sum(axis=1)
    return pd.DataFrame({"item": [f"i{k:03d}" for k in i], "prompt": [f"p{k}" for k in v],
                         "judge": [f"j{k}" for k in j], "y": y})  # fmt: skip


def have_clmm() -> bool:
    if shutil.which("Rscript") is None:
        return False
    ok = subprocess.run(["Rscript", "-e", "library(ordinal); library(jsonlite)"], capture_output=True)
    return ok.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[170])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--lost", type=float, nargs="+", default=[0.0, 0.1])
    parser.add_argument("--install-r", action="store_true")
    args = parser.parse_args()
    if args.install_r and not have_clmm():
        subprocess.run(["apt-get", "install", "-y", "-q", "r-base-core", "r-cran-ordinal", "r-cran-jsonlite"])
    r_ok = have_clmm()
    with tempfile.TemporaryDirectory() as tmp:
        csv = str(Path(tmp) / "warm.csv")
        simulate(20, 3, seed=1).to_csv(csv, index=False)
        child = subprocess.run([sys.executable, "-c", CHILD, csv], capture_output=True, text=True)
        if child.returncode != 0:
            sys.exit(child.stderr)
        warm = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"warm-up (20 items, its own process; numba's one-time compile when the cache is cold): "
          f"{warm['import_s'] + warm['fit_s']:.1f} s")  # fmt: skip
    runs = [(n, lost) for n in args.items for lost in args.lost]
    for n_items, lost in runs:
        df = simulate(n_items, args.prompts)
        df = df[np.random.default_rng(1).random(len(df)) >= lost].reset_index(drop=True)
        with tempfile.TemporaryDirectory() as tmp:
            csv = str(Path(tmp) / "likert.csv")
            df.to_csv(csv, index=False)
            child = subprocess.run([sys.executable, "-c", CHILD, csv], capture_output=True, text=True)
            if child.returncode != 0:
                sys.exit(child.stderr)
            ours = json.loads(child.stdout.strip().splitlines()[-1])
            theirs = None
            if r_ok:
                res = subprocess.run(["Rscript", "-e", CLMM, csv], capture_output=True, text=True)
                theirs = json.loads(res.stdout) if res.returncode == 0 else None
        counts = df["y"].value_counts().sort_index().to_dict()
        wall = ours["import_s"] + ours["fit_s"]
        layout = f"{n_items} items x {args.prompts} prompts x 3 judges, {lost:.0%} of calls lost"
        print(f"\n{len(df)} scores ({layout}), categories {counts}")
        d = ours["diag"]
        print(
            f"bayes_tee {ours['method']}: wall {wall:.1f} s (import {ours['import_s']:.1f}, fit "
            f"{ours['fit_s']:.1f}, 4 x {ours['draws']} draws); R-hat {d['max_rhat']:.3f}, "
            f"bulk ESS {d['min_ess_bulk']:.0f}, tail ESS {d['min_ess_tail']:.0f}, "
            f"divergences {d['divergences']}"
        )
        if theirs is None:
            print("clmm: not run (install R's ordinal and jsonlite, or pass --install-r)")
            continue
        print(f"clmm (Laplace): {theirs['time']:.1f} s; clmm / bayes_tee = {theirs['time'] / wall:.2f}")
        print(f"{'component':<14}{'truth':>8}{'clmm':>9}{'median':>9}{'90% low':>9}{'90% high':>9}  inside")
        for ours_name, r_name in TERMS.items():
            med, lo, hi = ours["components"][ours_name]
            est = float(theirs["var"][r_name])
            inside = "yes" if lo <= est <= hi else "no"
            print(
                f"{ours_name:<14}{TRUTH[ours_name]:>8.3f}{est:>9.3f}{med:>9.3f}{lo:>9.3f}{hi:>9.3f}  {inside}"
            )
        # clmm's thresholds sit at the judge baseline (its first level); ours are centred
        theta = np.asarray(theirs["theta"], float)
        print("cutpoint spacings (clmm, ours):", np.round(np.diff(theta), 3).tolist(),
              np.round(np.diff([c[0] for c in ours["cutpoints"]]), 3).tolist())  # fmt: skip


if __name__ == "__main__":
    main()
