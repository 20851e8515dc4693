"""Small-K check of the noise estimators on real data (issue 7).

Subsample K = 2, 3, 5 predictions per question (without replacement) from the all-the-noises
MATH500 counts (up to 1,100 samples each), for a fixed set of models, and compare the exact
small-K-corrected estimator and the Bayesian Beta-Binomial posterior with the full-K values.

    python scripts/noise_small_k.py [--classes 1] [--out models/noise_small_k.csv]

Needs ../shared/external/all_the_noises_highk_temp0.7 (not bundled: no licence file).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayes_tee as bt

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "external" / "all_the_noises_highk_temp0.7" / "input_table_math500_cot.csv"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", type=int, nargs="+", default=[2, 3, 5])
    ap.add_argument("--classes", type=int, default=1)
    ap.add_argument("--every", type=int, default=3, help="use every n-th model (with K >= 100)")
    ap.add_argument("--out", default=str(ROOT / "models" / "noise_small_k.csv"))
    args = ap.parse_args()
    d = pd.read_csv(DATA, index_col=0)
    d = d[d["count"] >= 100]
    d = d[d["model"].isin(sorted(d["model"].unique())[:: args.every])]
    roles = dict(model="model", question="example_id", correct="correct", count="count")
    full = bt.noise.paired(d, **roles)
    fm = full.models().set_index("model")
    fp = full.pairs().set_index(["model_a", "model_b"])
    rows = []
    for k in args.ks:
        rng = np.random.default_rng(k)
        sub = d.assign(correct=rng.hypergeometric(d["correct"], d["count"] - d["correct"], k), count=k)
        nz = bt.noise.paired(sub, **roles)
        t0 = time.perf_counter()
        nb = nz.bayes(classes=args.classes, random_seed=k, draws=500, tune=500, n_draws=500)
        secs = time.perf_counter() - t0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DesignWarning)  # the classes=1 caveat, measured here
            bp = nb.pairs()
        bm = nb.models().set_index("model").loc[fm.index]
        key = [(a, b) if (a, b) in fp.index else (b, a) for a, b in zip(bp.model_a, bp.model_b)]
        for level, truth_tab, est, names in (
            ("model", fm, bm, ("SE", "SE_data", "SE_pred")),
            ("pair", fp.loc[key].reset_index(drop=True), bp, ("SE_total", "SE_data", "SE_pred")),
        ):
            for name in names:
                truth = truth_tab[name].to_numpy()
                exact_var = est[f"{name}_exact"].to_numpy()
                rows.append(
                    dict(
                        K=k,
                        level=level,
                        component=name,
                        classes=args.classes,
                        n=len(truth),
                        full_k_mean=truth.mean(),
                        exact_rmse=np.sqrt(np.mean((exact_var - truth) ** 2)),
                        exact_zero=np.mean(exact_var == 0),
                        bayes_rmse=np.sqrt(np.mean((est[name].to_numpy() - truth) ** 2)),
                        bayes_cover90=np.mean(
                            (est[f"{name}_low"].to_numpy() <= truth)
                            & (truth <= est[f"{name}_high"].to_numpy())
                        ),
                        bayes_min_low=est[f"{name}_low"].min(),
                        fit_s=secs,
                        diagnostics_ok=nb.diagnostics()["ok"],
                    )
                )
        print(f"K={k}: fit {secs:.1f} s, diagnostics ok: {nb.diagnostics()['ok']}", flush=True)
    out = pd.DataFrame(rows)
    out.to_csv(args.out, index=False, float_format="%.6g")
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(out.round(5).to_string(index=False))


if __name__ == "__main__":
    main()
