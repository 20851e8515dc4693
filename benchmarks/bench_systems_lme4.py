"""Comparing systems against lme4: the same joint model fitted by ``fit_posterior(...,
system=)`` and by ``lme4::lmer`` (REML) on the same data in the same run; the system effects and
variance components side by side, and the wall times.

Designs (``bt.simulate.systems_dgp``): ``dozen`` (12 systems x 100 items x 3 judges, one call:
3,600 scores), ``four facets`` (12 systems x 100 items x 3 judges x 5 prompts: 18,000 scores,
11 terms), ``random judges`` (14 systems x 100 items x 3 random judges: 4,200 scores) and
``scattered`` (14 systems x 100 items x 3 random judges x 2 prompts, 59% of the calls kept at
random: about 4,970 scores, an adaptive run's data; the ``blocks`` likelihood). Each bayes_tee
fit runs in a fresh process (``fit s``: call to return at the defaults,
4 x 1000 draws; ``import s``: ``import bayes_tee``); lme4's time is ``system.time(lmer(...))``
inside R with the data read, and its effects are sum-to-zero contrasts, like ours. It prints, per
design, the largest difference between the two fits' system effects (in outcome SDs) and each
variance component's posterior median beside its REML estimate. R is needed
(``--install-r`` installs Debian's ``r-base-core r-cran-lme4``).

    python benchmarks/bench_systems_lme4.py [--designs dozen "four facets"] [--install-r]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time, warnings
t0 = time.perf_counter()
import bayes_tee as bt
t_import = time.perf_counter() - t0
S, N, M, V, judge_effect, keep, csv = json.loads(sys.argv[1])
df = bt.simulate.systems_dgp(n_systems=S, n_items=N, n_judges=M, n_prompts=V, random_seed=1)
if keep < 1:  # an adaptive run's data: calls scattered over the full cross
    import numpy as np
    df = df[np.random.default_rng(0).random(len(df)) < keep]
df.to_csv(csv, index=False)
roles = dict(outcome="score", item="item", judge="judge", prompt="prompt" if V > 1 else None, system="model")
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bt.DesignWarning)
    post = bt.fit_posterior(df, **roles, judge_effect=judge_effect, random_seed=1, progressbar=False)
fit_s = time.perf_counter() - t
t = time.perf_counter()
post.leaderboard(); post.pairs(); post.dstudy(n_items=[100, 200, 400])
summaries_s = time.perf_counter() - t
P = post.idata["posterior"]
effects = P["system_effect"].mean(("chain", "draw")).values.tolist()
comp = post.components().set_index("component")["median"].to_dict()
d = post.diagnostics()
print(json.dumps(dict(scores=len(df), formula=post.formula, fit_s=fit_s, import_s=t_import,
                      summaries_s=summaries_s, effects=effects, levels=list(post.design.levels["system"]),
                      components=comp, y_sd=float(df["score"].std()), ok=d["ok"], method=post.method)))
"""

#: R's start for every comparison benchmark: sum-to-zero contrasts, the CSV of ``args[1]`` read,
#: its facets made factors.
R_DATA = r"""
options(contrasts = c("contr.sum", "contr.poly"))
args <- commandArgs(trailingOnly = TRUE)
df <- read.csv(args[1])
for (f in c("model", "item", "judge", "prompt")) if (f %in% names(df)) df[[f]] <- factor(df[[f]])
"""

LME4 = (
    r"""
suppressMessages(library(lme4))
"""
    + R_DATA
    + r"""
t <- system.time(fit <- lmer(as.formula(args[2]), data = df, REML = TRUE))[["elapsed"]]
b <- fixef(fit)
eff <- b[grepl("^model", names(b))]
eff <- c(eff, -sum(eff))
vc <- as.data.frame(VarCorr(fit))
cat(sprintf("%.3f\n", t))
cat(paste(levels(df$model), collapse = ","), "\n")
cat(paste(sprintf("%.8f", eff), collapse = ","), "\n")
for (i in seq_len(nrow(vc))) cat(sprintf("%s=%.8f\n", vc$grp[i], vc$vcov[i]))
"""
)

#: systems, items, judges, prompts, the judges' effect, the share of the full cross's calls kept
DESIGNS = {
    "dozen": (12, 100, 3, 1, "fixed", 1.0),
    "four facets": (12, 100, 3, 5, "fixed", 1.0),
    # issue 58: the random-judges comparison (complete), and an adaptive step's scattered calls
    "random judges": (14, 100, 3, 1, "random", 1.0),
    "scattered": (14, 100, 3, 2, "random", 0.59),
}


def facets(label: str) -> frozenset[str]:
    """A component by its facets, whatever the order and whether the systems are 'model' or 'system'."""
    return frozenset("system" if f == "model" else f for f in label.split(":"))


def fitted(doc: str, child: str, designs: dict, r_package: str):
    """Each design the command line names (``--designs``; R and ``r_package`` installed first
    with ``--install-r``) fitted by the script ``child`` in a fresh process, its data written to
    a CSV: ``(name, the child's last line's JSON, the CSV's path)``; a failed fit is said and
    skipped.
    """
    names = parse_designs(doc, designs, r_package)
    with tempfile.TemporaryDirectory() as tmp:
        csv = str(Path(tmp) / "data.csv")
        for name in names:
            out = subprocess.run(
                [sys.executable, "-c", child, json.dumps([*designs[name], csv])],
                capture_output=True,
                text=True,
            )
            if out.returncode:
                print(f"{name}: bayes_tee failed: {out.stderr.strip().splitlines()[-1]}")
                continue
            yield name, json.loads(out.stdout.strip().splitlines()[-1]), csv


def parse_designs(doc: str, designs: dict, r_package: str) -> list[str]:
    """The designs the command line names (``--designs``), R and ``r_package`` installed first
    with ``--install-r``.
    """
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--designs", nargs="+", default=list(designs), choices=list(designs))
    ap.add_argument("--install-r", action="store_true", help=f"apt-get install r-base-core {r_package}")
    args = ap.parse_args()
    if args.install_r:
        subprocess.run(["apt-get", "install", "-y", "-q", "r-base-core", r_package], check=True)
    return args.designs


def main() -> None:
    for name, ours, csv in fitted(__doc__, CHILD, DESIGNS, "r-cran-lme4"):
        r = subprocess.run(["Rscript", "-e", LME4, csv, ours["formula"]], capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: lme4 failed: {r.stderr.strip()[-300:]}")
            continue
        lines = r.stdout.strip().splitlines()
        lme4_s = float(lines[0])
        r_levels = lines[1].strip().split(",")
        r_eff = dict(zip(r_levels, map(float, lines[2].strip().split(","))))
        r_vc = {facets(k): float(v) for k, v in (x.split("=") for x in lines[3:])}
        gap = max(abs(e - r_eff[lev]) for lev, e in zip(ours["levels"], ours["effects"])) / ours["y_sd"]
        print(f"\n{name}: {ours['scores']:,} scores; {ours['formula']}")
        print(
            f"  bayes_tee fit {ours['fit_s']:.1f} s (+ import {ours['import_s']:.1f} s; diagnostics "
            f"{'ok' if ours['ok'] else 'FAILED'}; {ours['method']}); leaderboard + pairs + relative "
            f"D-study {ours['summaries_s']:.2f} s; lme4 {lme4_s:.1f} s; ours / lme4 "
            f"{ours['fit_s'] / lme4_s:.2f}"
        )
        print(f"  system effects: largest difference {gap:.4f} outcome SDs")
        print(f"  {'component':34} {'posterior median':>16} {'REML':>10}")
        for label, med in ours["components"].items():
            reml = r_vc.get(facets("residual" if label == "residual" else label))
            if reml is None and label == "residual":
                reml = r_vc.get(frozenset({"Residual"}))
            print(f"  {label:34} {med:16.4f} {reml if reml is not None else float('nan'):10.4f}")


if __name__ == "__main__":
    main()
