"""Adaptive evaluation on a replay of complete data: the calls adaptive batches, uniform random
batches and the static plan need to reach the same target, each decision beside the full data's.

Cases (``--cases``; each a real complete data set and an objective its full data resolves):

- ``alpaca-best``: AlpacaEval 2 (``../shared/external/alpaca_eval2``, weighted gpt-4-turbo
  judge, one preference per model and instruction; the two models appended twice are
  de-duplicated by the design), the 14 strongest models apart from the reference itself (a
  constant 0.5) and the NullModel (a constant answer built to game the judge, far ahead):
  objective ``best``, 11,270 calls over 805 instructions.
- ``alpaca-rank``: the same data, 6 models taken from the top whose win rates differ by at least
  0.06 from the one above: objective ``rank`` (every adjacent pair resolved).
- ``safety-separate``: the AILuminate safety study (``../shared/external/tee_replication``), one
  call per response, judge and prompt wording (temperature 0, the first replication): 4 systems
  x 35 prompts x 3 judges x 5 wordings, binary verdicts; objective ``separate`` for dsv31 vs
  grok41 (its two leaders are not separable even by the full data: P(best) 0.50); a pilot of 3
  prompts (about 175 calls), batches of 50, target 0.9 (the full data's metric is 0.98: a target
  near it is met only once nearly every call of the pair is in, or by a lucky draw).
- ``simulated``: 14 systems x 100 items x 3 judges (``bt.simulate.systems_dgp``), ``best``.

Each repeat draws its own pilot (``--pilot-items`` random items, 10 unless the case says so;
every system and call of them) and its own random order; the rest of the data is the pool and
the oracle looks each score up. Every strategy buys ``--batch`` calls per step (100 unless the
case says so) and refits: adaptive through ``bt.run_adaptive``; uniform random takes the pool in
the repeat's random order; the static plan buys whole items (every system, judge and wording of
an item) in a random order, as a fixed design does. A strategy stops when the target is met by
a fit whose diagnostics pass, or at ``--max-calls`` (counted as that many, and marked); its
decision (the leader, the whole order, or which of the pair is ahead) is checked against the
full data's. The printed ratio is the adaptive calls over
the uniform calls summed over repeats (the goal: at most 0.6 for ``best`` and ``rank``).

    python benchmarks/adaptive_replay.py [--cases alpaca-best alpaca-rank safety-separate]
        [--repeats 5] [--target 0.95] [--batch N] [--pilot-items N] [--max-calls 3000]
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import bayes_tee as bt

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "external"


@dataclass
class Case:
    """A complete data set, its roles and the keys that name a call, and the objective."""

    df: pd.DataFrame
    roles: dict
    keys: list[str]
    objective: str
    systems: tuple[str, ...] | None = None
    pilot_items: int = 10
    batch: int = 100
    target: float | None = None  # the case's own, where the full data's metric is near --target


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


def alpaca(which: str) -> tuple[pd.DataFrame, dict, list[str]]:
    """AlpacaEval 2's preferences (win = preference - 1) for the models of ``which``: ``"best"``
    the 14 strongest apart from the reference and the NullModel; ``"rank"`` 6 from the top with
    win rates at least 0.06 apart.
    """
    path = SHARED / "alpaca_eval2" / "alpaca_eval2_weighted_gpt4turbo_preferences_slim.csv"
    df = pd.read_csv(path).drop_duplicates()
    df = df.assign(win=df["preference"] - 1)[["model", "instruction_idx", "win"]]
    rates = df.groupby("model")["win"].mean().drop(["gpt4_1106_preview", "NullModel"]).sort_values()[::-1]
    if which == "best":
        models = list(rates.index[:14])
    else:
        models = [rates.index[0]]
        for name, rate in rates.items():
            if len(models) < 6 and rates[models[-1]] - rate >= 0.06:
                models.append(name)
    df = df[df["model"].isin(models)].reset_index(drop=True)
    return df, dict(outcome="win", item="instruction_idx", system="model"), ["model", "instruction_idx"]


def simulated(
    n_systems: int = 14, n_items: int = 100, sd: float = 0.5
) -> tuple[pd.DataFrame, dict, list[str]]:
    df = bt.simulate.systems_dgp(
        n_systems=n_systems, n_items=n_items, n_judges=3, n_prompts=1, system_sd=sd, random_seed=5
    )
    df = df.drop(columns="prompt")
    return df, dict(outcome="score", item="item", judge="judge", system="model"), ["model", "item", "judge"]


def case(name: str) -> Case:
    if name == "alpaca-best":
        return Case(*alpaca("best"), "best")
    if name == "alpaca-rank":
        return Case(*alpaca("rank"), "rank")
    if name == "safety-separate":
        return Case(*safety(), "separate", ("dsv31", "grok41"), pilot_items=3, batch=50, target=0.9)
    if name == "simulated":
        return Case(*simulated(), "best")
    raise SystemExit(f"unknown case {name!r}")


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


def verdict(post, c: Case) -> str:
    """What a fit decides: the leader (``best``), the whole order (``rank``), or which of the
    pair is ahead (``separate``).
    """
    order = post.leaderboard()["system"].astype(str).tolist()
    if c.objective == "best":
        return order[0]
    if c.objective == "rank":
        return " > ".join(order)
    return " > ".join(s for s in order if s in c.systems)


def fixed_order_run(pilot, pool, oracle, c: Case, target, batch, max_calls, seed):
    """Buy ``pool`` in its order, ``batch`` at a time, refitting, until the target is met."""
    data, bought, step, post = pilot.copy(), 0, 0, None
    outcome = c.roles["outcome"]
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # a refit of the last step's fit, as the adaptive loop's steps
            post = bt.fit_posterior(
                data, **c.roles, progressbar=False, random_seed=seed + step, warm_start=post
            )
            d = post.decision(c.objective, systems=c.systems, target=target)
        if (d["met"] and post.diagnostics()["ok"]) or bought >= max_calls or bought >= len(pool):
            return data, d, verdict(post, c)
        rows = pool.iloc[bought : bought + batch]
        data = pd.concat([data, oracle(rows.drop(columns=[outcome], errors="ignore"))], ignore_index=True)
        bought += len(rows)
        step += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=["alpaca-best", "alpaca-rank", "safety-separate"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--target",
        type=float,
        default=None,
        dest="target_given",
        help="the target of every case (default: 0.95, or the case's own)",
    )
    ap.add_argument("--batch", type=int, default=None, help="calls per step (default: the case's)")
    ap.add_argument("--pilot-items", type=int, default=None, help="pilot items (default: the case's)")
    ap.add_argument("--max-calls", type=int, default=3000)
    args = ap.parse_args()
    args.target = 0.95 if args.target_given is None else args.target_given
    if not SHARED.exists():
        raise SystemExit("../shared/external is absent: the replays need its real data sets.")
    for name in args.cases:
        c = case(name)
        c.batch, c.pilot_items = args.batch or c.batch, args.pilot_items or c.pilot_items
        target = c.target if c.target is not None and args.target_given is None else args.target
        item, outcome = c.roles["item"], c.roles["outcome"]
        oracle = replay(c.df, c.keys, outcome)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = bt.fit_posterior(c.df, **c.roles, progressbar=False, random_seed=1)
            truth = full.decision(c.objective, systems=c.systems)
        decision = verdict(full, c)
        print(f"\n{name}: {len(c.df)} calls, {c.df[c.roles['system']].nunique()} systems; full data: "
              f"{c.objective} -> {decision} (metric {truth['metric']:.3f}); target {target}, "
              f"batch {c.batch}, pilot {c.pilot_items} items")  # fmt: skip
        totals = {"adaptive": 0, "uniform": 0, "static": 0}
        for rep in range(args.repeats):
            rng = np.random.default_rng(100 + rep)
            items = rng.permutation(c.df[item].unique())
            pilot = c.df[c.df[item].isin(items[: c.pilot_items])]
            pool = c.df.drop(index=pilot.index).drop(columns=outcome)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run = bt.run_adaptive(
                    pilot, pool, oracle, objective=c.objective, systems=c.systems, target=target,
                    batch=c.batch, max_calls=args.max_calls, random_seed=rep, **c.roles,
                )  # fmt: skip
            seconds = time.perf_counter() - t
            calls = {"adaptive": len(run.data) - len(pilot)}
            decided = {"adaptive": (run.stopped == "target", verdict(run.posterior, c))}
            line = [f"  repeat {rep}: pilot {len(pilot)} calls, metric {run.history['metric'].iloc[0]:.3f}"]
            line.append(
                f"adaptive {calls['adaptive']} ({len(run.history) - 1} steps, "
                f"{seconds:.0f} s, {seconds / len(run.history):.1f} s per step)"
            )
            for order in ("uniform", "static"):
                t = time.perf_counter()
                ordered = ordered_pool(pool, order, rep, item)
                data, d, decided_by = fixed_order_run(
                    pilot, ordered, oracle, c, target, c.batch, args.max_calls, rep
                )
                calls[order] = len(data) - len(pilot)
                decided[order] = (bool(d["met"]), decided_by)
                line.append(f"{order} {calls[order]} ({time.perf_counter() - t:.0f} s)")
            for k in totals:
                totals[k] += calls[k]
            flags = [k for k, (met, _) in decided.items() if not met]
            wrong = [k for k, (_, about) in decided.items() if about != decision]
            line += [f"NOT met: {flags}"] if flags else []
            line += [f"decision differs from the full data's: {wrong}"] if wrong else []
            print("; ".join(line), flush=True)
        ratio = totals["adaptive"] / max(totals["uniform"], 1)
        static = totals["adaptive"] / max(totals["static"], 1)
        print(f"  calls summed over {args.repeats} repeats: adaptive {totals['adaptive']}, uniform "
              f"{totals['uniform']}, static {totals['static']}; adaptive / uniform {ratio:.2f} "
              f"(goal <= 0.6), adaptive / static {static:.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
