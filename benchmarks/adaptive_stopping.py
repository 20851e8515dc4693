"""Is the adaptive stopping rule honest? Simulated studies with known truth (several systems;
item, judge, system x item and system x judge variance): run ``bt.run_adaptive`` with objective
``"best"`` to target ``t`` and count, among the studies that stopped on target, how often the
declared leader is the true best system; beside it, uniform random batches stopped by the same
rule. A Bayesian rule under optional stopping is calibrated only if the model is: the share
right should be about ``t`` or more, reported with its Monte Carlo error.

Each study: 5 systems (effects spread evenly, SD 0.25) x 60 items x 2 judges (a fixed panel), a
pilot of 6 items (60 calls), batches of 60, at most 600 calls (the whole study); every fit keeps
``--draws`` draws per chain after the loop's short warm-up.

    python benchmarks/adaptive_stopping.py [--studies 100] [--target 0.9] [--systems 5] [--draws 500]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import bayes_tee as bt


def study(seed: int, n_systems: int, target: float, batch: int, max_calls: int, uniform: bool, draws: int):
    df = bt.simulate.systems_dgp(
        n_systems=n_systems, n_items=60, n_judges=2, n_prompts=1, system_sd=0.25, random_seed=seed
    ).drop(columns="prompt")
    # The truth the data identify: with one prompt (its column dropped) that prompt's system x
    # prompt effect is part of every system's score, so the best system over new items for these
    # judges and this prompt is the "panel" truth (``new`` also averages over unseen prompts, an SD
    # of sqrt(0.02) = 0.14 per system against gaps of 0.18 no call here can inform).
    truth = max(df.attrs["truth"]["panel"], key=df.attrs["truth"]["panel"].get)
    items = df["item"].unique()
    pilot = df[df["item"].isin(items[:6])]
    pool = df.drop(index=pilot.index).drop(columns="score")
    if uniform:
        pool = pool.iloc[np.random.default_rng(seed).permutation(len(pool))]
    scores = df.set_index(["model", "item", "judge"])["score"]

    def oracle(rows):
        return rows.assign(
            score=scores.loc[
                list(rows[["model", "item", "judge"]].itertuples(index=False, name=None))
            ].to_numpy()
        )

    roles = dict(outcome="score", item="item", judge="judge", system="model")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not uniform:
            run = bt.run_adaptive(pilot, pool, oracle, objective="best", target=target, batch=batch,
                                  max_calls=max_calls, random_seed=seed, draws=draws, **roles)  # fmt: skip
            return run.stopped == "target", run.history["about"].iloc[-1] == truth, len(run.data)
        data, bought, post = pilot, 0, None
        while True:
            post = bt.fit_posterior(data, **roles, progressbar=False, random_seed=seed + bought, draws=draws,
                                    warm_start=post)  # fmt: skip  # a refit of the last, as the loop's steps
            d = post.decision("best", target=target)
            if (d["met"] and post.diagnostics()["ok"]) or bought >= max_calls:
                return bool(d["met"]), d["about"] == truth, len(data)
            rows = pool.iloc[bought : bought + batch]
            data = pd.concat([data, oracle(rows)], ignore_index=True)
            bought += batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", type=int, default=100)
    ap.add_argument("--target", type=float, default=0.9)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--batch", type=int, default=60)
    ap.add_argument("--max-calls", type=int, default=600)
    ap.add_argument(
        "--strategies", nargs="+", default=["adaptive", "uniform"], choices=("adaptive", "uniform")
    )
    ap.add_argument("--draws", type=int, default=500, help="draws per chain of every fit (4 chains)")
    args = ap.parse_args()
    for uniform in [name == "uniform" for name in args.strategies]:
        t, rows = time.perf_counter(), []
        for seed in range(args.studies):
            rows.append(
                study(seed, args.systems, args.target, args.batch, args.max_calls, uniform, args.draws)
            )
            if (seed + 1) % 10 == 0:
                done = np.array(rows)
                name = "uniform" if uniform else "adaptive"
                print(f"  {name} {seed + 1} studies: stopped {int(done[:, 0].sum())}, right at stop "
                      f"{int((done[:, 0] & done[:, 1]).sum())}", flush=True)  # fmt: skip
        stopped = np.array([r[0] for r in rows])
        right = np.array([r[1] for r in rows])
        calls = np.array([r[2] for r in rows])
        k = int(stopped.sum())
        share = right[stopped].mean() if k else float("nan")
        mcse = np.sqrt(share * (1 - share) / k) if k else float("nan")
        print(f"{'uniform' if uniform else 'adaptive'}: {k} of {len(rows)} stopped on target; right at stop "
              f"{share:.3f} +- {mcse:.3f} (target {args.target}); mean calls {calls.mean():.0f} "
              f"({time.perf_counter() - t:.0f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
