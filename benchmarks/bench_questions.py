"""How fast a fitted posterior answers: the convergence checks every fit makes, the budget
search's design summaries, ``allocate`` and ``simulate_design``, each against the plain
formulation it replaced, in the same process and on the same numbers (asserted equal).

* checks: :func:`bayes_tee._core.diagnostics.check` on the conformance fits' layouts and the
  demo posterior, against arviz-stats' Dataset functions variable by variable and
  :func:`arviz_stats.diagnose` for the sampler's counts (what it called before);
* design summaries: :func:`bayes_tee.gstudy.weights.summarize_designs` on a 4,000 draws x
  7,000 designs table (a budget search's), in blocks, against the whole table at once;
* projected variances: :func:`bayes_tee.gstudy.weights.projected_variance` on 4,000 draws x 12
  components x 10,135 designs (the propaganda pilot's budget search), one product against
  products over chunks of 2,048 designs joined after;
* ``allocate`` and ``simulate_design`` on the embedded demo posterior, and ``allocate`` on the
  propaganda pilot (the D-study notebook's calls), in seconds.

Each figure is the best of ``--repeat`` runs.

    python benchmarks/bench_questions.py [--repeat 3]

Its log is ``benchmarks/results/bench_questions.log``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from arviz_stats import diagnose, ess, rhat

import bayes_tee as bt
from bayes_tee._core import diagnostics
from bayes_tee._core.intervals import summarize_samples
from bayes_tee.gstudy.weights import projected_variance, summarize_designs

MODELS = Path(__file__).resolve().parents[1] / "models"
DEMO, PROPAGANDA = MODELS / "tee_demo.nc", MODELS / "propaganda_pilot.nc"


def best(fn, repeat: int) -> tuple[float, object]:
    """The least seconds of ``repeat`` calls of ``fn``, and its last result."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def plain_check(tree: xr.DataTree, names: list[str]) -> tuple[float, float, float, int]:
    """R-hat, bulk and tail ESS through arviz-stats' Dataset functions, divergences through
    ``diagnose``: the formulation :func:`diagnostics.check` replaced.
    """
    post = tree["posterior"].to_dataset()[names]

    def every(ds, fn):
        return float(fn(np.concatenate([np.ravel(ds[v].values) for v in names])))

    stats = tree["sample_stats"].to_dataset()
    stats = stats.rename({k: v for k, v in diagnostics.SAMPLE_STAT_NAMES.items() if k in stats})
    coords = {d: np.arange(post.sizes[d]) for d in ("chain", "draw")}
    view = xr.DataTree.from_dict(
        {"posterior": post[[names[0]]].assign_coords(coords), "sample_stats": stats.assign_coords(coords)}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, found = diagnose(view, var_names=[names[0]], show_diagnostics=False, return_diagnostics=True)
    return (
        every(rhat(post), np.nanmax),
        every(ess(post, method="bulk"), np.nanmin),
        every(ess(post, method="tail"), np.nanmin),
        int(found["divergent"]["n_divergent"]),
    )


def plain_summaries(var: np.ndarray, current: np.ndarray) -> pd.DataFrame:
    """The design summaries with the SE and ratio tables made whole (before blocks)."""
    se, ratio = np.sqrt(var), var / current[:, None]
    return summarize_samples(se, 0.9, "se_").join(summarize_samples(ratio, 0.9, "var_ratio_"))


def chunked_variance(draws: np.ndarray, weights: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """The projected variances in chunks of designs, joined after (before one product)."""
    return np.concatenate(
        [draws @ weights[i : i + chunk].T for i in range(0, max(len(weights), 1), chunk)], axis=1
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    demo = bt.load(DEMO)

    # the convergence checks, on fits of every family
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", system="model")
    roles |= dict(progressbar=False, random_seed=1)
    fits = {"demo (balanced, 4 x 1000)": demo}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = bt.simulate.systems_dgp(n_systems=6, n_items=30, n_replicates=2, random_seed=2)
        fits["6 systems (blocks)"] = bt.fit_posterior(df.iloc[::2], **roles)
        for outcome, family in (("logit", "binomial"), ("ordinal", "ordinal")):
            d = bt.simulate.systems_dgp(n_systems=4, n_items=20, outcome=outcome, random_seed=3)
            fits[f"4 systems ({family})"] = bt.fit_posterior(d, **roles, family=family)
    for name, post in fits.items():
        names = post._convergence_vars()
        t_new, new = best(lambda p=post, n=names: diagnostics.check(p.idata, n), args.repeat)
        t_old, old = best(lambda p=post, n=names: plain_check(p.idata, n), args.repeat)
        ours = (new["max_rhat"], new["min_ess_bulk"], new["min_ess_tail"], new["divergences"])
        assert ours == old, (name, ours, old)
        print(f"check, {name}: {1000 * t_new:.0f} ms against {1000 * t_old:.0f} ms ({t_new / t_old:.2f}x)")

    # a budget search's design summaries
    rng = np.random.default_rng(0)
    var, current = rng.gamma(2.0, size=(4000, 7000)), rng.gamma(2.0, size=4000)
    t_new, new = best(lambda: summarize_designs(var, current), args.repeat)
    t_old, old = best(lambda: plain_summaries(var, current), args.repeat)
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    print(f"design summaries, 4,000 x 7,000: {t_new:.2f} s against {t_old:.2f} s ({t_new / t_old:.2f}x)")

    # a budget search's projected variances (a posterior's component draws read along a column)
    draws = np.asfortranarray(rng.gamma(2.0, size=(4000, 12)))
    weights = rng.random((10135, 12))
    t_new, new = best(lambda: projected_variance(draws, weights), args.repeat)
    t_old, old = best(lambda: chunked_variance(draws, weights), args.repeat)
    np.testing.assert_allclose(new, old, rtol=1e-12)
    ratio = t_new / t_old
    print(f"projected variances, 4,000 x 12 x 10,135: {t_new:.2f} s against {t_old:.2f} s ({ratio:.2f}x)")

    # the D-study notebook's calls on the demo posterior
    costs = {"judge1": 2.5, "judge2": 1.0, "judge3": 0.25}
    t, _ = best(lambda: demo.allocate(budget=2000, cost_per_call=costs, max_prompts=5), args.repeat)
    print(f"allocate(budget=2000, 3 judge prices, max_prompts=5): {t:.2f} s")
    prop = bt.load(PROPAGANDA)
    costs = {"openai/gpt-4o": 2.5, "google/gemini-2.0-flash-001": 0.1, "anthropic/claude-haiku-4.5": 1.0}
    kw = dict(budget=20000, cost_per_call=costs, max_items=400, max_prompts=5)
    t, _ = best(lambda: prop.allocate(**kw), args.repeat)
    print(f"allocate on the propaganda pilot (budget=20000, max_items=400, max_prompts=5): {t:.2f} s")
    sim = dict(n_draws=100, sims_per_draw=60, random_seed=1)
    t, _ = best(lambda: demo.simulate_design(n_items=[40, 200], n_prompts=[1, 5], **sim), args.repeat)
    print(f"simulate_design(n_items=[40, 200], n_prompts=[1, 5], 100 draws x 60 studies): {t:.2f} s")


if __name__ == "__main__":
    main()
