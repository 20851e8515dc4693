"""Comparing systems: coverage of the leaderboard's difference intervals on simulated studies
with known truth, against the item-paired t interval, and the time a comparison takes.

    python benchmarks/bench_systems.py [--studies 100] [--systems 6] [--items 60] [--draws 500]

Each study is ``bt.simulate.systems_dgp`` (item x system, prompt x system and judge x system
variance present; 3 judges as a fixed panel, 2 prompts), fitted with ``system="model"``. For
every pair of systems it checks whether the 90% interval of ``pairs(over=...)`` holds the true
difference (``level_*``: whether each system's leaderboard interval holds its true score):
``new`` against the difference over the population of items and prompts (for this
judge panel), ``panel`` against the difference for these prompts. The item-paired t interval
(the per-item mean difference, t over items) is scored against both truths. It prints each
coverage with its Monte Carlo SE, and the median fit and leaderboard+pairs times.

``--outcome logit`` (0/1 verdicts, ``family="binomial"``) or ``ordinal`` (1-5 scores,
``family="ordinal"``) simulates the latent model instead and scores the leaderboard's *new*
intervals of success probabilities or expected scores, and of their differences, against the
systems' true scores over the population of items and prompts (``truth["new_score"]``); the
*panel* truth has no closed form there and is not scored. Those fits run at the family's
default draws unless ``--draws`` is given.

    python benchmarks/bench_systems.py --outcome logit --studies 40 --systems 4 --items 40
"""

from __future__ import annotations

import argparse
import time
import warnings
from itertools import combinations

import numpy as np
from scipy import stats

import bayes_tee as bt


def item_paired_t(df, a: str, b: str, level: float) -> tuple[float, float]:
    per = df.groupby(["model", "item"])["score"].mean().unstack("model")
    d = (per[a] - per[b]).to_numpy()
    half = stats.t.ppf(1 - (1 - level) / 2, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return d.mean() - half, d.mean() + half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", type=int, default=100)
    ap.add_argument("--systems", type=int, default=6)
    ap.add_argument("--items", type=int, default=60)
    ap.add_argument("--prompts", type=int, default=2)
    ap.add_argument("--draws", type=int, default=None, help="default 500 (gaussian), the family's otherwise")
    ap.add_argument("--outcome", choices=("gaussian", "logit", "ordinal"), default="gaussian")
    ap.add_argument("--level", type=float, default=0.9)
    args = ap.parse_args()
    latent = args.outcome != "gaussian"
    family = {"gaussian": "gaussian", "logit": "binomial", "ordinal": "ordinal"}[args.outcome]
    draws = args.draws or (None if latent else 500)
    sampler = {} if draws is None else {"draws": draws, "tune": draws}
    readings = ("new",) if latent else ("new", "panel")
    hits = (
        {k: [] for k in ("new", "t_vs_new", "level_new")}
        if latent
        else {k: [] for k in ("new", "panel", "t_vs_new", "t_vs_panel", "level_new", "level_panel")}
    )
    fit_s, summary_s = [], []
    for seed in range(args.studies):
        df = bt.simulate.systems_dgp(
            n_systems=args.systems, n_items=args.items, n_prompts=args.prompts, outcome=args.outcome,
            mu=0.8 if latent else 0.0, random_seed=seed,
        )  # fmt: skip
        truth = df.attrs["truth"]
        if latent:  # the truth of the new reading on the score's scale
            truth = {"new": truth["new_score"]}
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bt.fit_posterior(
                df, outcome="score", item="item", prompt="prompt", judge="judge", system="model",
                family=family, random_seed=seed, progressbar=False, **sampler,
            )  # fmt: skip
            t1 = time.perf_counter()
            tables = {over: post.pairs(level=args.level, over=over) for over in readings}
            board = post.leaderboard(level=args.level)
        fit_s.append(t1 - t0)
        summary_s.append(time.perf_counter() - t1)
        for over, table in tables.items():
            for r in table.itertuples():
                true = truth[over][r.system_a] - truth[over][r.system_b]
                hits[over].append(r.low <= true <= r.high)
        for over in readings:
            true = board["system"].map(truth[over])
            hits[f"level_{over}"] += list((board[f"{over}_low"] <= true) & (true <= board[f"{over}_high"]))
        for a, b in combinations(sorted(truth["new"]), 2):
            lo, hi = item_paired_t(df, a, b, args.level)
            hits["t_vs_new"].append(lo <= truth["new"][a] - truth["new"][b] <= hi)
            if not latent:
                hits["t_vs_panel"].append(lo <= truth["panel"][a] - truth["panel"][b] <= hi)
        if (seed + 1) % 10 == 0:
            done = ", ".join(f"{o} {np.mean(hits[o]):.3f}" for o in readings)
            print(f"{seed + 1} studies: {done}", flush=True)
    pairs_per = args.systems * (args.systems - 1) // 2
    print(
        f"\n{args.outcome}: {args.studies} studies x {pairs_per} pairs, {args.level:.0%} intervals of "
        f"differences ({args.systems} systems, {args.items} items, {args.prompts} prompts)"
    )
    for k, v in hits.items():
        # pairs within a study share the fit: the SE uses studies as the independent unit
        per_study = np.array(v).reshape(args.studies, -1).mean(axis=1)
        se = per_study.std(ddof=1) / np.sqrt(args.studies)
        print(f"  coverage {k:<11} {np.mean(v):.3f} (MC SE {se:.3f})")
    print(f"  fit time median {np.median(fit_s):.2f} s; leaderboard + pairs {np.median(summary_s):.2f} s")


if __name__ == "__main__":
    main()
