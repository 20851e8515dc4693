"""The leaderboard beside evalstats (PyPI), on the AILuminate safety study's four systems under
test (seed 000's data in ``../shared``): the same point estimates, our panel intervals near its
item-paired ones, our new intervals wider where prompt x system matters, and what one judge
configuration alone would have said.

    uv pip install evalstats        # in a scratch venv with bayes_tee; never a dependency
    python benchmarks/bench_evalstats.py [--draws 1000]

evalstats compares systems by item-paired differences with simultaneous (Sidak) intervals, on
an items x systems matrix and no judge or prompt facet. It is run twice: on each item's mean over
all 45 judge configurations x 8 calls (the closest it can come to the whole study), and on each
configuration alone (the first call), as a leaderboard of one configuration would be. It prints
each pair's difference and simultaneous 90% interval from both tools, the systems each single
configuration ranks first, and the wall times.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayes_tee as bt

SAFETY = Path(__file__).resolve().parents[2] / "shared" / "external" / "tee_replication" / "safety_clean.csv"


def load() -> pd.DataFrame:
    cols = ["item_id", "variant_id", "judge_short", "temperature", "replication", "outcome"]
    df = pd.read_csv(SAFETY, usecols=cols)
    parts = df["item_id"].str.rsplit("_", n=1)
    df["hazard_prompt"], df["sut"] = parts.str[0], parts.str[1]
    return df


def evalstats_pairs(matrix: pd.DataFrame, level: float) -> pd.DataFrame:
    import evalstats

    complete = matrix.dropna()
    res = evalstats.all_pairwise(
        complete.to_numpy().T, list(complete.columns), method="auto", ci=level, simultaneous_ci=True
    )
    return pd.DataFrame(
        [
            {"system_a": a, "system_b": b, "difference": r.point_diff, "low": r.ci_low, "high": r.ci_high}
            for (a, b), r in res.results.items()
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--level", type=float, default=0.9)
    args = ap.parse_args()
    df = load()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        post = bt.fit_posterior(
            df, outcome="outcome", item="hazard_prompt", prompt="variant_id", judge="judge_short",
            temperature="temperature", replicate="replication", system="sut", draws=args.draws,
            random_seed=1, progressbar=False,
        )  # fmt: skip
    ours = {over: post.pairs(level=args.level, over=over) for over in ("new", "panel")}
    t_ours = time.perf_counter() - t0
    print(post)
    t0 = time.perf_counter()
    means = df.pivot_table(index="hazard_prompt", columns="sut", values="outcome")
    theirs = evalstats_pairs(means, args.level)
    t_theirs = time.perf_counter() - t0
    rows = []
    for r in theirs.itertuples():
        key = (r.system_a, r.system_b)
        row = {
            "pair": f"{r.system_a} - {r.system_b}",
            "evalstats": r.difference,
            "ev_low": r.low,
            "ev_high": r.high,
        }
        for over, t in ours.items():
            m = t[(t["system_a"] == key[0]) & (t["system_b"] == key[1])]
            sign = 1.0
            if m.empty:
                m, sign = t[(t["system_a"] == key[1]) & (t["system_b"] == key[0])], -1.0
            m = m.iloc[0]
            lo, hi = sorted((sign * m["simultaneous_low"], sign * m["simultaneous_high"]))
            row |= {f"{over}": sign * m["difference"], f"{over}_low": lo, f"{over}_high": hi}
        rows.append(row)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.precision", 4):
        print(
            f"\nSimultaneous {args.level:.0%} intervals of every difference "
            "(evalstats on item means over all calls)"
        )
        print(table.to_string(index=False))
        width = {
            "evalstats": (table["ev_high"] - table["ev_low"]).mean(),
            "ours, panel": (table["panel_high"] - table["panel_low"]).mean(),
            "ours, new": (table["new_high"] - table["new_low"]).mean(),
        }
        print("mean width:", {k: round(v, 4) for k, v in width.items()})
    first = df[df["replication"] == 0]
    tops, excl = [], []
    for _, cfg in first.groupby(["judge_short", "variant_id", "temperature"]):
        m = cfg.pivot_table(index="hazard_prompt", columns="sut", values="outcome")
        tops.append(m.mean().idxmax())
        p = evalstats_pairs(m, args.level)
        lead = p[(p["system_a"].isin(["gpt51", "opus45"])) & (p["system_b"].isin(["gpt51", "opus45"]))].iloc[
            0
        ]
        excl.append(lead["low"] > 0 or lead["high"] < 0)
    print(
        f"\nOne configuration at a time ({len(tops)}): ranked first "
        f"{pd.Series(tops).value_counts().to_dict()}; "
        f"gpt51 vs opus45 'resolved' in {int(np.sum(excl))} of {len(excl)}"
    )
    print(f"\nwall time: bayes_tee fit + pairs {t_ours:.1f} s; evalstats on the item means {t_theirs:.1f} s")


if __name__ == "__main__":
    main()
