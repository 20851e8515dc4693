"""How fast the next calls are chosen: ``post.next_calls`` on a pool of 50,000 candidate calls of
14 systems (the goal: under 2 s), for each objective and batch size, after one fit of a
30-item pilot (14 systems x 3 judges x 2 prompts x 2 replicates).

    python benchmarks/bench_next_calls.py [--pool 50000] [--n 100 200]
"""

from __future__ import annotations

import argparse
import time
import warnings

import bayes_tee as bt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pool", type=int, default=50_000)
    ap.add_argument("--n", type=int, nargs="+", default=[100, 200])
    args = ap.parse_args()
    df = bt.simulate.systems_dgp(n_systems=14, n_items=400, n_replicates=2, random_seed=4)
    items = df["item"].unique()
    pilot = df[df["item"].isin(items[:30])]
    pool = df.drop(index=pilot.index).drop(columns="score").sample(args.pool, random_state=0)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = bt.fit_posterior(
            pilot, outcome="score", item="item", prompt="prompt", judge="judge", system="model",
            progressbar=False, random_seed=1,
        )  # fmt: skip
    print(f"pilot fit: {len(pilot)} calls, {time.perf_counter() - t:.1f} s ({post.method})")
    lb = post.leaderboard()
    pair = tuple(lb["system"].iloc[1:3])
    for n in args.n:
        for objective, kw in (("best", {}), ("rank", {}), ("separate", {"systems": pair}),
                              ("theta", {"systems": (lb["system"].iloc[0],)})):  # fmt: skip
            t = time.perf_counter()
            chosen = post.next_calls(pool, n, objective, **kw)
            s = time.perf_counter() - t
            print(f"next_calls(pool of {len(pool)}, n={n}, {objective}): {s:.2f} s "
                  f"({s / 2:.2f}x the 2 s goal); {chosen['model'].nunique()} systems bought")  # fmt: skip


if __name__ == "__main__":
    main()
