"""The logit GLMM on Messing (2026)'s safety data against lme4::glmer: wall time of a fresh process,
diagnostics, and the paper's comparisons (judge share, LPM-GLMM Spearman).

Data: ``../shared/external/tee_replication/safety_clean.csv`` (50,760 SAFE/UNSAFE calls, 550 NA
dropped; not redistributable, so not bundled). Formula, the same in both:

    outcome ~ judge + temperature + (1|item) + (1|category) + (1|prompt) + (1|item:prompt)
              + (1|item:temperature) + (1|prompt:temperature) + (1|item:judge)
              + (1|prompt:judge) + (1|item:prompt:temperature:judge)

Each bayes_tee fit runs in its own process at the GLMM's defaults (4 chains x 4000 draws after
500 tuning steps), ``fit s`` from call to return. The LPM-GLMM Spearman compares with the stored
``models/safety_lpm.nc`` (a fresh LPM fit when it is absent). ``--methods`` picks the likelihoods
(``binomial``: every effect sampled, the default; ``binomial_quadrature``: the cell effect
integrated out) and ``--priors`` the SD prior presets (the sensitivity of the answer to the
prior; ``gamma`` is the boundary-avoiding gamma(2) of Chung et al. 2013 with mode 1 logit).
glmer (Laplace, bobyqa) runs when ``Rscript`` with lme4 is on the PATH and ``--glmer`` is given; otherwise its
time measured on this machine (435 s; max|grad| 0.42, "nearly unidentifiable") is printed.

    python benchmarks/bench_glmm.py [--methods binomial binomial_quadrature]
                                    [--priors default half_t_wide half_normal gamma] [--seeds 1 2]
                                    [--save models/safety_glmm.nc] [--glmer]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "external" / "tee_replication" / "safety_clean.csv"
LPM = Path(__file__).resolve().parents[1] / "models" / "safety_lpm.nc"
GLMER_STORED_S = 435.0
PAPER = {"judge_share": 70.7, "spearman": 0.91}

CHILD = r"""
import json, sys, time, warnings
t0 = time.perf_counter()
import pandas as pd
import bayes_tee as bt
t_import = time.perf_counter() - t0
path, method, priors, lpm_path, seed, save = json.loads(sys.argv[1])
df = pd.read_csv(path)
if priors == "gamma":  # the boundary-avoiding gamma(2) of Chung et al. (2013), mode 1 logit
    priors = bt.priors.PriorSpec("gamma", bt.priors.SDPrior("gamma", 1.0, nu=2.0))
roles = dict(outcome="outcome", item="item_id", prompt="variant_id", judge="judge_short",
             temperature="temperature", replicate="replication", category="category")
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    post = bt.fit_posterior(df, **roles, family="binomial", method=method, priors=priors,
                            random_seed=seed, progressbar=False)
fit_s = time.perf_counter() - t
if save:
    post.save(save)
out = {"method": method, "import_s": t_import, "fit_s": fit_s, "draws": post.info["draws"],
       "diagnostics": post.diagnostics(), "n_free": post.info["n_free_parameters"]}
sd = post.idata["posterior"]
out["sd_item_judge"] = [float(sd["sigma_item_judge"].median()), float(sd["sigma_item"].median())]
sh = post.shares().set_index("component")
out["judge_share"] = [float(sh.loc["judge", c]) * 100 for c in ("share_median", "share_low", "share_high")]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    # the stored LPM (models/safety_lpm.nc, `make paper`) where it exists, else a fit
    lpm = bt.load(lpm_path) if lpm_path else bt.fit_posterior(df, **roles, random_seed=1, progressbar=False)
    cmp = lpm.compare(post)
out["spearman"] = {k: float(cmp.spearman[k]) for k in ("at_medians", "median", "low", "high")}
print("RESULT " + json.dumps(out, default=float))
"""

GLMER = r"""
suppressMessages(library(lme4))
d <- read.csv(commandArgs(TRUE)[1])
d <- d[!is.na(d$outcome), ]
for (v in c("item_id", "variant_id", "judge_short", "temperature", "category")) d[[v]] <- factor(d[[v]])
t <- system.time(m <- glmer(outcome ~ judge_short + temperature + (1|item_id) + (1|category) +
  (1|variant_id) + (1|item_id:variant_id) + (1|item_id:temperature) + (1|variant_id:temperature) +
  (1|item_id:judge_short) + (1|variant_id:judge_short) + (1|item_id:variant_id:temperature:judge_short),
  data = d, family = binomial, control = glmerControl(optimizer = "bobyqa")))
g <- max(abs(m@optinfo$derivs$gradient))
cat(sprintf("GLMER %.1f %.3f\n", t[["elapsed"]], g))
print(VarCorr(m), comp = "Variance")
"""


def run_fit(method: str, priors: str, seed: int = 1, save: str = "") -> dict:
    arg = json.dumps([str(DATA), method, priors, str(LPM) if LPM.exists() else "", seed, save])
    res = subprocess.run([sys.executable, "-c", CHILD, arg], capture_output=True, text=True, check=True)
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def run_glmer() -> tuple[float, str]:
    res = subprocess.run(["Rscript", "-e", GLMER, str(DATA)], capture_output=True, text=True, check=True)
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("GLMER "))
    return float(line.split()[1]), res.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=["binomial"])
    ap.add_argument("--priors", nargs="+", default=["default"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1], help="random seeds of the fits")
    ap.add_argument("--save", default="", help="save the default-prior fit of the first seed here")
    ap.add_argument("--glmer", action="store_true", help="run lme4::glmer (about 7 minutes)")
    args = ap.parse_args()
    if not DATA.exists():
        sys.exit(f"needs {DATA} (Messing 2026's safety data, not bundled)")
    glmer_s, note = GLMER_STORED_S, "stored"
    if args.glmer and shutil.which("Rscript"):
        glmer_s, text = run_glmer()
        note = "this run"
        print(text)
    print(f"lme4::glmer (Laplace, bobyqa): {glmer_s:.0f} s ({note})")
    print(
        f"{'method':<22}{'priors':<13}{'seed':>5}{'draws':>6}{'fit s':>7}{'/glmer':>8}{'R-hat':>8}"
        f"{'bulk':>7}{'tail':>7}{'div':>5}  judge share % (paper {PAPER['judge_share']})"
        f"   Spearman (paper {PAPER['spearman']})"
        "   SD item:judge, item"
    )
    runs = [(m, p, s) for m in args.methods for p in args.priors for s in args.seeds]
    for method, priors, seed in runs:
        save = args.save if (priors, seed) == ("default", args.seeds[0]) else ""
        r = run_fit(method, priors, seed, save)
        d = r["diagnostics"]
        js = r["judge_share"]
        sp = r["spearman"]
        sp_text = f"{sp['at_medians']:.2f} ({sp['low']:.2f} to {sp['high']:.2f})"
        sds = ", ".join(f"{v:.1f}" for v in r["sd_item_judge"])
        print(
            f"{method:<22}{priors:<13}{seed:>5}{r['draws']:>6}{r['fit_s']:>7.0f}{r['fit_s'] / glmer_s:>8.2f}"
            f"{d['max_rhat']:>8.3f}{d['min_ess_bulk']:>7.0f}{d['min_ess_tail']:>7.0f}{d['divergences']:>5}"
            f"  {js[0]:.1f} ({js[1]:.1f} to {js[2]:.1f}){'':<14}{sp_text}{'':<8}{sds}",
            flush=True,
        )


if __name__ == "__main__":
    main()
