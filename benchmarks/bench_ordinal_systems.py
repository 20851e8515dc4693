"""Comparing systems on Likert scores against R's ``ordinal::clmm``: the same cumulative-logit
model fitted by ``fit_posterior(..., family="ordinal", system=)`` at its defaults and by
``clmm`` (Laplace) on the same data in the same run; the wall times, bayes_tee's diagnostics at
the defaults (no ``draws=``: the checkpoints decide), the slowest-mixing parameter and each
variance component beside clmm's estimate.

Designs (``bt.simulate.systems_dgp(outcome="ordinal")``, 1-5 scores, fixed judges):
``one prompt`` (14 systems x 100 items x 3 judges: 4,200 scores, issue 58's layout) and ``three
prompts`` (the same x 3 prompts: 12,600 scores; prompt, prompt x judge and system x prompt join
the model). clmm needs more than two levels in every grouping factor, so no design has two
prompts. Each bayes_tee fit runs in a fresh process, its kernels already compiled (``fit s``:
call to return; ``import s``: ``import bayes_tee``); clmm's time is ``system.time(clmm(...))``
inside R with the data read. R is needed (``--install-r`` installs Debian's ``r-base-core
r-cran-ordinal``).

    python benchmarks/bench_ordinal_systems.py [--designs "one prompt" "three prompts"] [--install-r]
"""

from __future__ import annotations

import subprocess

from bench_systems_lme4 import R_DATA, facets, fitted  # run as a script: benchmarks/ is on sys.path

CHILD = r"""
import json, sys, time, warnings
t0 = time.perf_counter()
import bayes_tee as bt
t_import = time.perf_counter() - t0
import arviz as az
S, N, M, V, csv = json.loads(sys.argv[1])
df = bt.simulate.systems_dgp(n_systems=S, n_items=N, n_judges=M, n_prompts=V, outcome="ordinal",
                             random_seed=1)
df.to_csv(csv, index=False)
roles = dict(outcome="score", item="item", judge="judge", prompt="prompt" if V > 1 else None, system="model")
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bt.DesignWarning)
    post = bt.fit_posterior(df, **roles, family="ordinal", random_seed=1, progressbar=False)
fit_s = time.perf_counter() - t
d = post.diagnostics()
P = post.idata["posterior"].ds
ess = az.ess(P)
slowest = min(((float(ess[v].min()), v) for v in ess.data_vars if not v.startswith(("u_", "w_"))))
stats = post.idata["sample_stats"].ds
comp = post.components().set_index("component")["median"].to_dict()
print(json.dumps(dict(scores=len(df), formula=post.formula, fit_s=fit_s, import_s=t_import, ok=d["ok"],
                      rhat=d["max_rhat"], ess_bulk=d["min_ess_bulk"], ess_tail=d["min_ess_tail"],
                      divergences=d["divergences"], draws=d["n_draws"], slowest=slowest,
                      steps=float(stats["n_steps"].mean()), components=comp)))
"""

CLMM = (
    r"""
suppressMessages(library(ordinal))
"""
    + R_DATA
    + r"""
df$score <- factor(df$score, ordered = TRUE)
t <- system.time(fit <- clmm(as.formula(args[2]), data = df))[["elapsed"]]
cat(sprintf("%.3f\n", t))
vc <- VarCorr(fit)
for (g in names(vc)) cat(sprintf("%s=%.8f\n", g, vc[[g]][1, 1]))
"""
)

#: systems, items, judges, prompts
DESIGNS = {"one prompt": (14, 100, 3, 1), "three prompts": (14, 100, 3, 3)}


def main() -> None:
    for name, ours, csv in fitted(__doc__, CHILD, DESIGNS, "r-cran-ordinal"):
        print(f"\n{name}: {ours['scores']:,} scores; {ours['formula']}")
        print(
            f"  bayes_tee fit {ours['fit_s']:.1f} s (+ import {ours['import_s']:.1f} s) at the defaults: "
            f"diagnostics {'ok' if ours['ok'] else 'FAILED'} (R-hat {ours['rhat']:.3f}, bulk ESS "
            f"{ours['ess_bulk']:.0f}, tail ESS {ours['ess_tail']:.0f}, {ours['divergences']} diverging, "
            f"{ours['draws']} draws kept, {ours['steps']:.0f} leapfrog steps a draw); slowest "
            f"{ours['slowest'][1]} (bulk ESS {ours['slowest'][0]:.0f})"
        )
        formula = ours["formula"].replace("C(", "(")
        r = subprocess.run(["Rscript", "-e", CLMM, csv, formula], capture_output=True, text=True)
        if r.returncode:
            print(f"  clmm: failed or not installed ({r.stderr.strip()[-200:]})")
            continue
        lines = r.stdout.strip().splitlines()
        clmm_s = float(lines[0])
        theirs = {facets(k): float(v) for k, v in (x.split("=") for x in lines[1:])}
        print(f"  clmm (Laplace) {clmm_s:.1f} s; ours / clmm {ours['fit_s'] / clmm_s:.2f} (target <= 0.5)")
        print(f"  {'component':24} {'posterior median':>16} {'clmm':>10}")
        for label, med in ours["components"].items():
            est = theirs.get(facets(label))
            print(f"  {label:24} {med:16.4f} {est if est is not None else float('nan'):10.4f}")


if __name__ == "__main__":
    main()
