"""Plug-in (ANOVA/EMS) against posterior E rho^2 and Phi on a balanced 40 x 6 x 3 main-effects
G-study, at a 4 x 4 grid of evaluators x prompts (issue 23's check).

    python scripts/gstudy_compare.py [--seed 1]
"""

from __future__ import annotations

import argparse
import warnings

import pandas as pd

import bayes_tee as bt

DESIGN = dict(
    levels={"item": 40, "evaluator": 6, "prompt": 3},
    variances={"item": 0.5, "evaluator": 0.1, "prompt": 0.05},
    residual=0.8,
)
GRID = {"evaluator": [1, 2, 4, 8], "prompt": [1, 2, 3, 6]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    df = bt.simulate.gstudy_dgp(**DESIGN, random_seed=args.seed)
    formula = df.attrs["formula"]
    plug = bt.plugin.fit(df, formula=formula)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        post = bt.fit_posterior(df, formula=formula, random_seed=args.seed, progressbar=False)
    diag = post.diagnostics()
    truth = pd.Series(df.attrs["truth"], name="truth")
    comp = post.components().set_index("component")[["median", "low", "high"]]
    comp.insert(0, "plug-in", plug.components().set_index("component")["estimate"])
    print(f"formula: {formula}; {len(df)} calls; method {post.method}")
    print(
        f"diagnostics: R-hat {diag['max_rhat']:.3f}, ESS bulk {diag['min_ess_bulk']:.0f}, "
        f"tail {diag['min_ess_tail']:.0f}, divergences {diag['divergences']}\n"
    )
    print(comp.join(truth).round(4).to_string(), "\n")
    p = plug.reliability(n=GRID)
    b = post.reliability(n=GRID)
    out = p[["n_evaluator", "n_prompt", "erho2", "phi"]].rename(
        columns={"erho2": "erho2_plugin", "phi": "phi_plugin"}
    )
    for k in ("erho2", "phi"):
        out[f"{k}_post"] = b[f"{k}_median"]
        out[f"{k}_90%"] = [f"{lo:.3f}-{hi:.3f}" for lo, hi in zip(b[f"{k}_low"], b[f"{k}_high"])]
        out[f"{k}_width"] = b[f"{k}_high"] - b[f"{k}_low"]
    with pd.option_context("display.width", 160):
        print(out.round(3).to_string(index=False))
    inside = ((b["erho2_low"] <= p["erho2"]) & (p["erho2"] <= b["erho2_high"])).mean()
    inside_phi = ((b["phi_low"] <= p["phi"]) & (p["phi"] <= b["phi_high"])).mean()
    print(f"\nplug-in inside the posterior 90% interval: E rho^2 {inside:.0%}, Phi {inside_phi:.0%}")


if __name__ == "__main__":
    main()
