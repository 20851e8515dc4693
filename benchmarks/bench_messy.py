"""Messy layouts against lme4: the wall time of a fresh process fitting each layout users have,
with the likelihood ``auto`` picks and its diagnostics, beside ``lme4::lmer`` (REML) on the same
data and formula in the same run.

Layouts (Messing 2026's Table 8 generator, Gaussian scores): balanced; 1%, 5% and 10% of calls lost
at random; 3% of cells empty; 10% lost plus 3% empty; unequal categories (4 categories, a tenth
of the items dropped at random). Sizes: ``pilot`` (60 items x 4 prompts x 3 judges x 2
temperatures x R, about 5k calls at R = 4), ``paper`` (141 x 5 x 3 x 3 x 8, about 50k calls) and
``large`` (1,410 items, about 500k calls; with ``--sizes large``).

Each fit runs in its own process, 4 chains x 1000 draws after 1000 tuning steps (the defaults).
``fit s`` is ``fit_posterior`` from call to return (validation, build, any compile, sampling);
``import s`` is ``import bayes_tee`` (PyMC, ArviZ, nutpie) in that process. lme4 runs when
``Rscript`` with lme4 is on the PATH (``--install-r`` installs Debian's ``r-base-core
r-cran-lme4``); its time is ``system.time(lmer(...))`` inside R, data already read, and the
figures the issue measured are printed when R is absent.

    python benchmarks/bench_messy.py [--sizes pilot paper] [--replicates 4 8] [--install-r]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time, warnings
t0 = time.perf_counter()
import numpy as np
import bayes_tee as bt
t_import = time.perf_counter() - t0
N, V, M, H, R, loss, empty, unequal, csv = json.loads(sys.argv[1])
df = bt.simulate.tee_dgp(n_items=N, n_prompts=V, n_judges=M, n_temperatures=H, n_replicates=R,
                         n_categories=4 if unequal else None, random_seed=1)
rng = np.random.default_rng(2)
df = df[rng.random(len(df)) > loss]
keys = ["item", "prompt", "judge", "temperature"]
if empty:
    gone = df[keys].drop_duplicates().sample(frac=empty, random_state=3).assign(_gone=1)
    df = df.merge(gone, how="left", on=keys)
    df = df[df["_gone"].isna()].drop(columns="_gone")
if unequal:
    items = df["item"].unique()
    df = df[~df["item"].isin(rng.choice(items, size=len(items) // 10, replace=False))]
roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
             replicate="replicate", category="category" if unequal else None)
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    post = bt.fit_posterior(df, **roles, random_seed=1, progressbar=False)
fit_s = time.perf_counter() - t
d = post.diagnostics()
terms = [(":".join(t.facets) if t.kind == "random" else t.label, t.kind) for t in post.design.terms]
if csv:
    df.to_csv(csv, index=False)
print(json.dumps(dict(calls=len(df), method=post.method, fit_s=round(fit_s, 1), import_s=round(t_import, 1),
                      n_par=post.info["n_free_parameters"], max_rhat=round(d["max_rhat"], 3),
                      min_ess=round(min(d["min_ess_bulk"], d["min_ess_tail"])), div=d["divergences"],
                      terms=terms)))
"""

LME4 = r"""
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
df <- read.csv(args[1])
for (f in c("item", "prompt", "judge", "temperature", "category"))
  if (f %in% names(df)) df[[f]] <- factor(df[[f]])
t <- system.time(fit <- lmer(as.formula(args[2]), data = df, REML = TRUE))[["elapsed"]]
cat(sprintf("%.2f %d\n", t, as.integer(isSingular(fit))))
"""

SIZES = {"pilot": (60, 4, 3, 2), "paper": (141, 5, 3, 3), "large": (1410, 5, 3, 3)}
LAYOUTS = [  # name, share of calls lost, share of cells emptied, unequal categories
    ("balanced", 0.0, 0.0, False),
    ("1% lost", 0.01, 0.0, False),
    ("5% lost", 0.05, 0.0, False),
    ("10% lost", 0.10, 0.0, False),
    ("3% empty cells", 0.0, 0.03, False),
    ("10% lost + 3% empty", 0.10, 0.03, False),
    ("unequal categories", 0.0, 0.0, True),
]
#: lme4 times the issue measured (same data generator), used when R is absent.
STORED_LME4 = {("pilot", 4, "5% lost"): 1.5, ("pilot", 8, "5% lost"): 2.3, ("paper", 8, "5% lost"): 17.4}


def lme4_formula(terms: list[tuple[str, str]]) -> str:
    """The lmer formula of the design's terms (random ones named by their facets, e.g. the cell
    term ``item:prompt:temperature:judge``): fixed main effects, random intercepts.
    """
    fixed = [label for label, kind in terms if kind == "fixed"]
    random = [f"(1 | {label})" for label, kind in terms if kind == "random"]
    return "score ~ " + " + ".join(fixed + random if fixed else ["1", *random])


def have_lme4() -> bool:
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(lme4)"], capture_output=True).returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["pilot", "paper"], choices=list(SIZES))
    ap.add_argument("--replicates", nargs="+", type=int, default=[4, 8], help="pilot replicate counts")
    ap.add_argument("--layouts", nargs="+", default=[name for name, *_ in LAYOUTS])
    ap.add_argument("--install-r", action="store_true", help="apt-get install r-base-core r-cran-lme4")
    args = ap.parse_args()
    if args.install_r and not have_lme4():
        subprocess.run(["apt-get", "install", "-y", "-q", "r-base-core", "r-cran-lme4"], check=True)
    r_ok = have_lme4()
    print(f"lme4: {'measured in this run' if r_ok else 'R absent, stored figures where the issue has them'}")
    print(
        f"{'size':6} {'R':>2} {'layout':20} {'calls':>7} {'method':10} {'params':>6} {'fit s':>6} "
        f"{'import':>6} {'rhat':>6} {'ess':>5} {'div':>4} {'lme4 s':>7} {'ratio':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        csv = str(Path(tmp) / "data.csv")
        for size in args.sizes:
            for R in args.replicates if size == "pilot" else [8]:
                for name, loss, empty, unequal in LAYOUTS:
                    if name not in args.layouts:
                        continue
                    spec = json.dumps([*SIZES[size], R, loss, empty, unequal, csv if r_ok else ""])
                    out = subprocess.run([sys.executable, "-c", CHILD, spec], capture_output=True, text=True)
                    if out.returncode:
                        print(f"{size:6} {R:2d} {name:20} failed: {out.stderr.strip().splitlines()[-1]}")
                        continue
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    lme4_s, mark = STORED_LME4.get((size, R, name)), "*"
                    if r_ok:
                        cmd = ["Rscript", "-e", LME4, csv, lme4_formula(r["terms"])]
                        res = subprocess.run(cmd, capture_output=True, text=True)
                        lme4_s = float(res.stdout.split()[0]) if res.returncode == 0 else None
                        mark = " singular" if res.returncode == 0 and res.stdout.split()[1] == "1" else ""
                    lme4_txt = f"{lme4_s:7.2f}" if lme4_s else f"{'-':>7}"
                    ratio = f"{r['fit_s'] / max(lme4_s, 20.0):6.2f}" if lme4_s else f"{'-':>6}"
                    print(
                        f"{size:6} {R:2d} {name:20} {r['calls']:7d} {r['method']:10} {r['n_par']:6d} "
                        f"{r['fit_s']:6.1f} {r['import_s']:6.1f} {r['max_rhat']:6.3f} {r['min_ess']:5d} "
                        f"{r['div']:4d} {lme4_txt} {ratio}{mark if lme4_s else ''}",
                        flush=True,
                    )
    print("ratio = fit s / max(20 s, lme4 s): the issue's target is <= 1 (* = stored lme4 figure)")


if __name__ == "__main__":
    main()
