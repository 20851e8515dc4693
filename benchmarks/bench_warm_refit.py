"""An adaptive step's refit, cold and warm: the same fit of a few more calls started as any fit
(300 warm-up steps, the loop's steps before warm starts) and started at the last fit's draws
(``fit_posterior(warm_start=)``: 100 warm-up steps, checkpoints from 250 draws).

Designs (``bt.simulate.systems_dgp``, 14 systems x 100 items x 3 judges x 2 prompts, calls kept
at random as an adaptive run scatters them): ``gaussian`` (random judges, the ``blocks``
likelihood; the pilot keeps 57% of the calls, 4,785, the step 59%, 4,975) and ``binary`` (0/1
verdicts, the logit GLMM, the same calls: its refits start cold whatever, as
``bayes_tee._core.warm`` says; about 70 s a fit). Each step is fitted with seeds 2, 3 and 4 in this
process, after the pilot's fit (the kernels loaded). It prints each fit's seconds, the
share of coordinates started from the pilot's draws, the warm-up and draws kept, and the
diagnostics.

    python benchmarks/bench_warm_refit.py [--designs gaussian binary] [--seeds 2 3 4]

Its log is ``benchmarks/results/bench_warm_refit.log``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayes_tee as bt

DESIGNS = {
    "gaussian": dict(outcome="gaussian", roles=dict(judge_effect="random")),
    "binary": dict(outcome="logit", roles=dict(family="binomial")),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--designs", nargs="+", default=["gaussian"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[2, 3, 4])
    args = ap.parse_args()
    for name in args.designs:
        spec = DESIGNS[name]
        full = bt.simulate.systems_dgp(
            n_systems=14, n_items=100, n_judges=3, n_prompts=2, outcome=spec["outcome"], random_seed=1
        )
        u = np.random.default_rng(0).random(len(full))
        roles = dict(outcome="score", item="item", judge="judge", prompt="prompt", system="model")
        roles |= spec["roles"]
        pilot, step = full[u < 0.57], full[u < 0.59]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            first = bt.fit_posterior(pilot, **roles, random_seed=1, progressbar=False)
            print(f"{name}: pilot {len(pilot):,} calls {time.perf_counter() - t:.1f} s ({first.method}); "
                  f"step {len(step):,} calls")  # fmt: skip
            for seed in args.seeds:
                cold, warm = dict(tune=bt.tee.fit.REFIT_TUNE), dict(warm_start=first)
                for label, kw in (("cold", cold), ("warm", warm)):
                    t = time.perf_counter()
                    post = bt.fit_posterior(step, **roles, random_seed=seed, progressbar=False, **kw)
                    s = time.perf_counter() - t
                    d = post.diagnostics()
                    print(f"  seed {seed} {label}: {s:5.1f} s  started {post.info['warm_start']:.2f}  "
                          f"tune {post.info['tune']}  draws {post.info['draws']}  R-hat {d['max_rhat']:.3f}  "
                          f"ESS {d['min_ess_bulk']:.0f}/{d['min_ess_tail']:.0f}  div {d['divergences']}  "
                          f"ok {d['ok']}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
