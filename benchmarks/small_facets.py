"""Small facets: divergences, R-hat, ESS and time of default fits on designs where one facet has
two to four levels and its SD runs from nearly zero to large (issue 40's table).

For each likelihood, each number of prompts, each prompt SD and each data seed, one data set is
simulated with :func:`bayes_tee.simulate.tee_dgp` and fitted at the package's defaults
(``bt.fit_posterior(df, ..., random_seed=seed)``, nothing tuned). Components on the latent scale
(logits for the binary and ordinal families, score units for the Gaussian ones): item 1,
item x prompt 0.09, item x judge 0.09, prompt x judge 0.0225, cell 0.04 (Gaussian: residual 0.25),
three fixed judges at -0.3 / 0 / 0.3, the prompt SD as given.

Designs:

- ``binomial`` (the logit GLMM, cell effect sampled) and ``binomial_quadrature``: 80 items x
  prompts x 3 judges x 5 calls, base rate 0.86 (issue 40's design);
- ``ordinal``: 40 items x prompts x 3 judges x 2 calls, 5-point scale, 10% of calls lost;
- ``balanced``: 40 items x prompts x 3 judges x 2 calls, Gaussian, complete;
- ``augmented`` and ``blocks``: the same with 10% of calls lost at random;
- ``cells`` and ``marginal``: the same, complete (they compile their model per fit).

``draws`` is what the fit kept per chain (at the defaults the chains stop at the first checkpoint
whose diagnostics pass with margin). ``fit s`` is the fit's wall time in this process
(validation, any compile, sampling), ``target_accept`` the NUTS target it sampled at (empty for
rows run before the column existed); rows run one after another. The table and a summary per
likelihood are printed, and the rows written to ``benchmarks/results/small_facets.csv`` (a run
of some designs replaces their rows and keeps the others).

    python benchmarks/small_facets.py [--methods binomial ordinal balanced ...]
                                      [--prompts 2 3 4] [--sds 0.05 0.5 3] [--seeds 1 2 3 4 5]
    python benchmarks/small_facets.py --rows binomial:4:3:1 ordinal:2:3:5   # only these designs
    python benchmarks/small_facets.py --report     # the docs' table from the CSV
    python benchmarks/small_facets.py --methods binomial --target-accept 0.95 --out /tmp/at95.csv
                                                   # another NUTS target than the default
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayes_tee as bt
from bayes_tee._core.diagnostics import MAX_RHAT, MIN_ESS

ROOT = Path(__file__).resolve().parents[1]
COMPONENTS = {
    "item": 1.0,
    "category": 0.0,
    "item:prompt": 0.09,
    "item:temperature": 0.0,
    "prompt:temperature": 0.0,
    "item:judge": 0.09,
    "prompt:judge": 0.0225,
    "cell": 0.04,
}
#: per likelihood: outcome, family, items, calls per cell, share of calls lost, grand mean
DESIGNS = {
    "binomial": ("logit", "binomial", 80, 5, 0.0, float(np.log(0.86 / 0.14))),
    "binomial_quadrature": ("logit", "binomial", 80, 5, 0.0, float(np.log(0.86 / 0.14))),
    "ordinal": ("ordinal", "ordinal", 40, 2, 0.1, 0.0),
    "balanced": ("gaussian", "gaussian", 40, 2, 0.0, 0.0),
    "augmented": ("gaussian", "gaussian", 40, 2, 0.1, 0.0),
    "blocks": ("gaussian", "gaussian", 40, 2, 0.1, 0.0),
    "cells": ("gaussian", "gaussian", 40, 2, 0.0, 0.0),
    "marginal": ("gaussian", "gaussian", 40, 2, 0.0, 0.0),
}


def simulate(method: str, n_prompts: int, sd: float, seed: int) -> pd.DataFrame:
    """One data set of ``method``'s design with ``n_prompts`` prompts of SD ``sd``."""
    outcome, _, n_items, calls, lost, mu = DESIGNS[method]
    comp = COMPONENTS | {"prompt": sd**2, "replicate": 0.25}
    df = bt.simulate.tee_dgp(
        n_items=n_items,
        n_prompts=n_prompts,
        n_judges=3,
        n_temperatures=1,
        n_replicates=calls,
        components=comp,
        judge_effects=np.array([-0.3, 0.0, 0.3]),
        mu=mu,
        outcome=outcome,
        random_seed=seed,
    )
    rng = np.random.default_rng(1000 + seed)
    return df[rng.random(len(df)) >= lost].reset_index(drop=True)


def fit_one(method: str, n_prompts: int, sd: float, seed: int, target_accept: float | None = None) -> dict:
    """Fit one data set at the defaults (or at ``target_accept``); its diagnostics and wall time."""
    df = simulate(method, n_prompts, sd, seed)
    family = DESIGNS[method][1]
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = bt.fit_posterior(
            df,
            outcome="score",
            item="item",
            prompt="prompt",
            judge="judge",
            replicate="replicate",
            family=family,
            method=method,
            random_seed=seed,
            progressbar=False,
            target_accept=target_accept,
        )
    d = post.diagnostics()
    return {
        "method": method,
        "prompts": n_prompts,
        "prompt_sd": sd,
        "seed": seed,
        "calls": len(df),
        "draws": int(post.info["draws"]),
        "divergences": int(d["divergences"]),
        "max_rhat": round(float(d["max_rhat"]), 4),
        "min_ess_bulk": round(float(d["min_ess_bulk"])),
        "min_ess_tail": round(float(d["min_ess_tail"])),
        "fit_s": round(time.perf_counter() - t, 1),
        "target_accept": float(post.info["target_accept"]),
    }


#: What "clean" means in the tables: the package's own checks (``diagnostics.check``).
CLEAN = f"0 divergences, R-hat <= {MAX_RHAT}, bulk and tail ESS >= {MIN_ESS}"


def clean(rows: pd.DataFrame) -> pd.Series:
    """Per row, whether the fit passed every check of :func:`bayes_tee._core.diagnostics.check`:
    no divergence, R-hat and bulk and tail ESS within its thresholds.
    """
    ess = rows[["min_ess_bulk", "min_ess_tail"]].min(axis=1)
    return (rows["divergences"] == 0) & (rows["max_rhat"] <= MAX_RHAT) & (ess >= MIN_ESS)


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per likelihood: fits, fits with a divergence, all divergences, worst R-hat and ESS, time."""
    return (
        rows.assign(clean=clean(rows), diverged=rows["divergences"] > 0)
        .groupby("method", sort=False)
        .agg(
            fits=("seed", "size"),
            clean=("clean", "sum"),
            fits_diverging=("diverged", "sum"),
            divergences=("divergences", "sum"),
            max_rhat=("max_rhat", "max"),
            min_ess_bulk=("min_ess_bulk", "min"),
            median_fit_s=("fit_s", "median"),
        )
    )


def markdown(rows: pd.DataFrame) -> str:
    """The docs' table: per likelihood, prompts and prompt SD, over the seeds: clean fits,
    divergences, worst R-hat and bulk ESS, median fit time.
    """
    order = {m: j for j, m in enumerate(DESIGNS)}
    rows = rows.sort_values(["prompts", "prompt_sd", "seed"]).sort_values(
        "method", key=lambda m: m.map(order), kind="stable"
    )
    g = rows.assign(clean=clean(rows)).groupby(["method", "prompts", "prompt_sd"], sort=False)
    t = g.agg(
        fits=("seed", "size"),
        clean=("clean", "sum"),
        divergences=("divergences", "sum"),
        max_rhat=("max_rhat", "max"),
        min_ess=("min_ess_bulk", "min"),
        fit_s=("fit_s", "median"),
    ).reset_index()
    lines = [
        "| likelihood | prompts | prompt SD | clean fits | divergences | max R-hat | min bulk ESS "
        "| median s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in t.itertuples():
        lines.append(
            f"| {r.method} | {r.prompts} | {r.prompt_sd:g} | {r.clean} of {r.fits} | {r.divergences} "
            f"| {r.max_rhat:.3f} | {r.min_ess:,} | {r.fit_s:.1f} |"
        )
    return "\n".join(lines)


def merge(rows: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``rows`` with the rows of other designs kept from an earlier run's CSV at ``path``."""
    if not path.exists():
        return rows
    old = pd.read_csv(path)
    key = ["method", "prompts", "prompt_sd", "seed"]
    kept = old.merge(rows[key], on=key, how="left", indicator=True)
    kept = kept[kept["_merge"] == "left_only"].drop(columns="_merge")
    return pd.concat([kept, rows], ignore_index=True).sort_values(key, kind="stable")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    parser.add_argument("--prompts", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--sds", nargs="+", type=float, default=[0.05, 0.5, 3.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "small_facets.csv")
    parser.add_argument("--report", action="store_true", help="print the docs' table of --out and stop")
    parser.add_argument(
        "--rows", nargs="+", default=None, metavar="METHOD:PROMPTS:SD:SEED",
        help="fit only these designs (e.g. binomial:4:3:1), instead of the grid of the options above",
    )  # fmt: skip
    parser.add_argument(
        "--target-accept", type=float, default=None,
        help="NUTS target instead of the package's default (to compare; write to another --out)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.report:
        rows = pd.read_csv(args.out)
        print(markdown(rows[rows["method"].isin(args.methods)]))
        return
    print(f"bayes_tee {bt.__version__}; every fit at the defaults, one after another")
    grid = [
        (m, p, sd, seed) for m in args.methods for p in args.prompts for sd in args.sds for seed in args.seeds
    ]
    if args.rows:
        grid = [(m, int(p), float(sd), int(seed)) for m, p, sd, seed in (r.split(":") for r in args.rows)]
    rows = []
    for method, p, sd, seed in grid:
        rows.append(fit_one(method, p, sd, seed, args.target_accept))
        print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
        # after each fit, so that a stopped run keeps its rows
        table = merge(pd.DataFrame(rows), args.out)
        table.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(f"\nclean: {CLEAN}")
        print(summary(table).to_string())


if __name__ == "__main__":
    main()
