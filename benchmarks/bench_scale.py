"""Messy layouts at scale: the wall time of a fresh process fitting items in categories of
unequal size, complete and with calls lost at random, as the items grow, beside the same shape
without categories; ratios in one run.

Layouts (Messing 2026's Table 8 generator, Gaussian scores, 5 prompts x 3 judges x 3
temperatures x 8 replicates): ``items`` 141, 1,410 and 4,230 (about 48k, 480k and 1.4M calls)
in 12 categories whose sizes follow one fixed unequal profile (22:20:17:15:13:12:10:9:8:6:5:4);
``complete`` (every call), ``5% lost`` (calls dropped at random) and ``no categories`` (the
complete layout without the category role, the balanced reference). Each fit runs in its own
process with the defaults (4 chains x 1000 draws after 1000 tuning steps); ``fit s`` is
``fit_posterior`` from call to return, ``import s`` the package's import in that process.

Targets (issue 41): complete with unequal categories within 2x of no categories; 5% lost within
3x of complete; the 480k lossy layout under 60 s on a 2-core machine; R-hat <= 1.01, ESS >= 400
and no divergence on every row. ``--lme4`` adds ``lme4::lmer`` (REML) on the 10%-lost paper-size
layout when ``Rscript`` with lme4 is on the PATH.

    python benchmarks/bench_scale.py [--items 141 1410 4230] [--lme4]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_messy import LME4, lme4_formula  # the same lmer call and formula (benchmarks/ is on the path)

CHILD = r"""
import json, sys, time, warnings
t0 = time.perf_counter()
import numpy as np
import pandas as pd
import bayes_tee as bt
t_import = time.perf_counter() - t0
n_items, loss, categories, csv = json.loads(sys.argv[1])
profile = np.array([22, 20, 17, 15, 13, 12, 10, 9, 8, 6, 5, 4], float)
sizes = np.floor(profile / profile.sum() * n_items).astype(int)
sizes[0] += n_items - sizes.sum()
full = bt.simulate.tee_dgp(n_items=12 * sizes.max(), n_prompts=5, n_judges=3, n_temperatures=3,
                           n_replicates=8, n_categories=12, random_seed=1)
first = full[["item", "category"]].drop_duplicates().groupby("category", sort=True)["item"]
keep = np.concatenate([g.to_numpy()[: sizes[k]] for k, (_, g) in enumerate(first)])
df = full[full["item"].isin(keep)]
rng = np.random.default_rng(2)
df = df[rng.random(len(df)) > loss]
roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
             replicate="replicate", category="category" if categories else None)
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    post = bt.fit_posterior(df, **roles, random_seed=1, progressbar=False)
fit_s = time.perf_counter() - t
d = post.diagnostics()
if csv:
    df.to_csv(csv, index=False)
terms = [(":".join(t.facets) if t.kind == "random" else t.label, t.kind) for t in post.design.terms]
ess = round(min(d["min_ess_bulk"], d["min_ess_tail"]))
print(json.dumps(dict(calls=len(df), method=post.method, fit_s=round(fit_s, 1), import_s=round(t_import, 1),
                      max_rhat=round(d["max_rhat"], 3), min_ess=ess, div=d["divergences"], terms=terms)))
"""

LAYOUTS = [("no categories", 0.0, False), ("complete", 0.0, True), ("5% lost", 0.05, True)]


def run(n_items: int, loss: float, categories: bool, csv: str = "") -> dict | None:
    spec = json.dumps([n_items, loss, categories, csv])
    out = subprocess.run([sys.executable, "-c", CHILD, spec], capture_output=True, text=True)
    if out.returncode:
        print(f"  failed: {out.stderr.strip().splitlines()[-1]}", flush=True)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", nargs="+", type=int, default=[141, 1410, 4230])
    ap.add_argument("--lme4", action="store_true", help="lme4 on the 10%%-lost paper-size layout")
    args = ap.parse_args()
    print(
        f"{'items':>5} {'layout':14} {'calls':>9} {'method':9} {'fit s':>7} {'import':>6} "
        f"{'rhat':>6} {'ess':>5} {'div':>4}"
    )
    for n in args.items:
        rows = {}
        for name, loss, categories in LAYOUTS:
            r = run(n, loss, categories)
            if r is None:
                continue
            rows[name] = r
            print(
                f"{n:5d} {name:14} {r['calls']:9,d} {r['method']:9} {r['fit_s']:7.1f} {r['import_s']:6.1f} "
                f"{r['max_rhat']:6.3f} {r['min_ess']:5d} {r['div']:4d}",
                flush=True,
            )
        if {"no categories", "complete", "5% lost"} <= set(rows):
            cat = rows["complete"]["fit_s"] / rows["no categories"]["fit_s"]
            lost = rows["5% lost"]["fit_s"] / rows["complete"]["fit_s"]
            print(f"{n:5d} ratios: categories/none {cat:.2f} (<= 2), lost/complete {lost:.2f} (<= 3)")
    if args.lme4:
        if shutil.which("Rscript") is None:
            print("lme4: Rscript absent")
            return
        with tempfile.TemporaryDirectory() as tmp:
            csv = str(Path(tmp) / "data.csv")
            r = run(141, 0.10, True, csv)
            if r is not None:
                res = subprocess.run(
                    ["Rscript", "-e", LME4, csv, lme4_formula(r["terms"])], capture_output=True, text=True
                )
                lme4_s = float(res.stdout.split()[0]) if res.returncode == 0 else float("nan")
                print(
                    f"  141 10% lost {r['calls']:9,d} {r['method']:9} {r['fit_s']:7.1f} s, "
                    f"lme4 {lme4_s:.1f} s: ratio {r['fit_s'] / lme4_s:.2f} (<= 1); "
                    f"R-hat {r['max_rhat']:.3f}, ESS {r['min_ess']}"
                )


if __name__ == "__main__":
    main()
