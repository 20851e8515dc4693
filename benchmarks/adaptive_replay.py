"""Adaptive evaluation on a replay of complete data: the calls adaptive batches, uniform random
batches and the static ``allocate`` plan need to reach the same target, each decision beside the
full data's.

Data sets: ``safety`` (``../shared/external/tee_replication/safety_clean.csv``: the judges'
verdicts on the responses of the four systems under test; the system is the response, the item
its prompt) and ``simulated`` (14 systems x 100 items x 3 judges from ``bt.simulate.systems_dgp``,
with known truth). From a pilot of ``--pilot-items`` items per system the rest is the pool and
the oracle looks each score up. Every strategy buys ``--batch`` calls per step and refits
(``bt.run_adaptive``); uniform random takes the pool in a seeded random order; the static plan
buys items in the order of ``post.allocate`` (whole items, every system) from the pilot's fit.
The printed ratio is adaptive calls over uniform calls (the goal: at most 0.6).

    python benchmarks/adaptive_replay.py [--data safety simulated] [--objective best] [--target 0.95]
        [--systems 14 --items 100 --system-sd 0.15] [--batch 200] [--pilot-items 10]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayes_tee as bt

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "external"


def safety() -> tuple[pd.DataFrame, dict, list[str]]:
    """One call per response, judge and prompt wording (temperature 0, the first replication):
    the four systems' responses to 35 prompts, 3 judges x 5 wordings, binary verdicts.
    """
    df = pd.read_csv(SHARED / "tee_replication" / "safety_clean.csv").dropna(subset=["outcome"])
    df = df[(df["temperature"] == df["temperature"].min()) & (df["replication"] == df["replication"].min())]
    # the item id is prompt x response; the response's system is its suffix
    parts = df["item_id"].astype(str).str.rsplit("_", n=1, expand=True)
    df = df.assign(prompt_item=parts[0], model=parts[1] if parts.shape[1] > 1 else "s")
    df = df.drop_duplicates(["model", "prompt_item", "judge_model", "variant_id"])
    roles = dict(
        outcome="outcome", item="prompt_item", judge="judge_model", prompt="variant_id", system="model"
    )
    return df, roles, ["model", "prompt_item", "judge_model", "variant_id"]


def simulated(
    n_systems: int = 14, n_items: int = 100, sd: float = 0.15
) -> tuple[pd.DataFrame, dict, list[str]]:
    df = bt.simulate.systems_dgp(
        n_systems=n_systems, n_items=n_items, n_judges=3, n_prompts=1, system_sd=sd, random_seed=5
    )
    df = df.drop(columns="prompt")
    return df, dict(outcome="score", item="item", judge="judge", system="model"), ["model", "item", "judge"]


def replay(df: pd.DataFrame, keys: list[str], outcome: str):
    scores = df.set_index(keys)[outcome]

    def oracle(rows: pd.DataFrame) -> pd.DataFrame:
        found = scores.loc[list(rows[keys].itertuples(index=False, name=None))]
        return rows.assign(**{outcome: found.to_numpy()})

    return oracle


def ordered_pool(pool: pd.DataFrame, order: str, seed: int, items_first=None) -> pd.DataFrame:
    """A pool whose every row costs the same but whose order is fixed: uniform random, or the
    static plan's items first (whole items, in a seeded order).
    """
    rng = np.random.default_rng(seed)
    if order == "uniform":
        return pool.iloc[rng.permutation(len(pool))]
    item = items_first
    ranks = {k: i for i, k in enumerate(rng.permutation(pool[item].unique()))}
    return pool.iloc[np.argsort(pool[item].map(ranks).to_numpy(), kind="stable")]


def fixed_order_run(pilot, pool, oracle, roles, objective, target, batch, max_calls, seed):
    """Buy ``pool`` in its order, ``batch`` at a time, refitting, until the target is met."""
    data, bought, history = pilot.copy(), 0, []
    outcome = roles["outcome"]
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bt.fit_posterior(data, **roles, progressbar=False, random_seed=seed)
            d = post.decision(objective, target=target)
        history.append((len(data), float(d["metric"])))
        if (d["met"] and post.diagnostics()["ok"]) or bought >= max_calls or bought >= len(pool):
            return post, data, history, d
        rows = pool.iloc[bought : bought + batch]
        data = pd.concat([data, oracle(rows.drop(columns=[outcome], errors="ignore"))], ignore_index=True)
        bought += len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", default=["simulated", "safety"])
    ap.add_argument("--objective", default="best")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--pilot-items", type=int, default=10)
    ap.add_argument("--max-calls", type=int, default=4000)
    ap.add_argument("--systems", type=int, default=14, help="simulated: systems (14)")
    ap.add_argument("--items", type=int, default=100, help="simulated: items (100)")
    ap.add_argument("--system-sd", type=float, default=0.15, help="simulated: spread of the systems")
    args = ap.parse_args()
    for name in args.data:
        if name == "safety" and not SHARED.exists():
            print("safety: ../shared/external is absent; skipped")
            continue
        df, roles, keys = (
            safety() if name == "safety" else simulated(args.systems, args.items, args.system_sd)
        )
        items = df[roles["item"]].unique()
        pilot = df[df[roles["item"]].isin(items[: args.pilot_items])]
        pool = df.drop(index=pilot.index).drop(columns=roles["outcome"])
        oracle = replay(df, keys, roles["outcome"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            truth = bt.fit_posterior(df, **roles, progressbar=False, random_seed=1).decision(args.objective)
        print(f"\n{name}: {len(df)} calls, pilot {len(pilot)}; full data: {args.objective} -> "
              f"{truth['about']} (metric {truth['metric']:.3f})")  # fmt: skip
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = bt.run_adaptive(
                pilot, pool, oracle, objective=args.objective, target=args.target, batch=args.batch,
                max_calls=args.max_calls, random_seed=1, **roles,
            )  # fmt: skip
        adaptive_s = time.perf_counter() - t
        a_calls = len(run.data) - len(pilot)
        print(f"  adaptive: {a_calls} calls, stopped {run.stopped}, decision "
              f"{run.history['about'].iloc[-1]} ({adaptive_s:.0f} s, "
              f"{adaptive_s / len(run.history):.1f} s per step)")  # fmt: skip
        results = {"adaptive": a_calls}
        for order in ("uniform", "static"):
            t = time.perf_counter()
            ordered = ordered_pool(pool, order, 1, roles["item"])
            post, data, hist, d = fixed_order_run(pilot, ordered, oracle, roles, args.objective, args.target,
                                                  args.batch, args.max_calls, 1)  # fmt: skip
            calls = len(data) - len(pilot)
            results[order] = calls
            print(f"  {order}: {calls} calls, met {bool(d['met'])}, decision {d['about']} "
                  f"({time.perf_counter() - t:.0f} s)")  # fmt: skip
        ratio = results["adaptive"] / max(results["uniform"], 1)
        static = results["adaptive"] / max(results["static"], 1)
        print(f"  ratio adaptive / uniform calls: {ratio:.2f} (goal <= 0.6); adaptive / static: {static:.2f}")


if __name__ == "__main__":
    main()
