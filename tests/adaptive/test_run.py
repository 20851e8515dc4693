"""The adaptive loop on a replay: it stops for the reason it says, buys only pool rows and never
twice, resumes from a checkpoint as if never stopped, and keeps what a bad oracle scored.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.adaptive import checkpoint as ckpt

ROLES = dict(outcome="score", item="item", system="model", replicate="replicate")
KEYS = ["model", "item", "replicate"]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def full():
    df = bt.simulate.systems_dgp(
        n_systems=4, n_items=40, n_judges=1, n_prompts=1, n_replicates=2, system_sd=0.5, random_seed=7
    )
    return df.drop(columns=["judge", "prompt"])


@pytest.fixture(scope="module")
def pilot(full):
    return full[full["item"].isin(full["item"].unique()[:8])]


@pytest.fixture(scope="module")
def pool(full, pilot):
    return full.drop(index=pilot.index).drop(columns="score")


def replay(full):
    scores = full.set_index(KEYS)["score"]

    def oracle(rows):
        return rows.assign(score=scores.loc[list(rows[KEYS].itertuples(index=False, name=None))].to_numpy())

    return oracle


def run(pilot, pool, oracle, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        # by default a target the pilot does not meet, so the run buys
        return bt.run_adaptive(
            pilot, pool, oracle, **{**ROLES, "random_seed": 11, "objective": "rank", "target": 0.9999, **kw}
        )


def test_the_run_buys_pool_rows_once_and_stops_where_it_says(full, pilot, pool):
    r = run(pilot, pool, replay(full), objective="rank", target=0.95, batch=30, max_calls=150)
    assert r.stopped in ("target", "max_calls")
    bought = r.data["pool_index"].dropna()
    assert bought.is_unique and set(bought) <= set(pool.index)
    assert len(r.data) == len(pilot) + len(bought) and 0 < len(bought) <= 150
    h = r.history
    assert list(h.columns[:5]) == ["step", "calls", "cost", "metric", "met"]
    assert h["calls"].is_monotonic_increasing and h["calls"].iloc[-1] == len(r.data)
    assert h["cost"].iloc[-1] == len(bought)  # one per call
    last = r.posterior.decision("rank", target=0.95)
    assert h["metric"].iloc[-1] == pytest.approx(last["metric"])
    if r.stopped == "target":
        assert last["met"] and h["diagnostics_ok"].iloc[-1]
    # every step after the pilot's is a refit that starts at the last step's draws
    assert len(h) > 1 and r.posterior.info["warm_start"] == 1.0
    # scored calls match the replay exactly
    merged = r.data.merge(full, on=KEYS, suffixes=("", "_true"))
    np.testing.assert_allclose(merged["score"], merged["score_true"])


def test_budgets_and_an_exhausted_pool_stop_the_run(full, pilot, pool):
    capped = run(pilot, pool, replay(full), objective="rank", target=0.9999, batch=25, max_calls=40)
    assert capped.stopped == "max_calls" and capped.data["pool_index"].notna().sum() == 40
    small = pool.iloc[:12]
    ended = run(pilot, small, replay(full), objective="rank", target=0.9999, batch=10)
    assert ended.stopped == "pool" and ended.data["pool_index"].notna().sum() == 12
    priced = pool.assign(price=np.where(pool["model"] == "s0", 5.0, 1.0))
    paid = run(
        pilot, priced, replay(full), objective="rank", target=0.9999, batch=20, max_cost=30, cost="price"
    )
    assert paid.stopped == "max_cost" and paid.history["cost"].iloc[-1] <= 30


def test_a_resumed_run_equals_an_uninterrupted_one(full, pilot, pool, tmp_path):
    whole = run(pilot, pool, replay(full), objective="rank", target=0.99, batch=20, max_calls=60)
    path = tmp_path / "run.pkl"
    calls = {"n": 0}
    good = replay(full)

    def flaky(rows):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # the eval was stopped mid-run
        return good(rows)

    with pytest.raises(KeyboardInterrupt):
        run(pilot, pool, flaky, objective="rank", target=0.99, batch=20, max_calls=60, checkpoint=path)
    saved = ckpt.read(path)
    assert len(saved.bought) == 20 and saved.stopped is None
    resumed = run(pilot, pool, good, objective="rank", target=0.99, batch=20, max_calls=60, checkpoint=path)
    pd.testing.assert_frame_equal(resumed.data, whole.data)
    cols = ["step", "calls", "cost", "metric", "about"]
    pd.testing.assert_frame_equal(resumed.history[cols], whole.history[cols])
    assert resumed.stopped == whole.stopped == "max_calls"


def test_a_bad_oracle_is_refused_and_what_it_scored_is_kept(full, pilot, pool, tmp_path):
    good = replay(full)

    def short(rows):
        return good(rows).iloc[:-3]

    path = tmp_path / "bad.pkl"
    with pytest.raises(bt.DesignError, match="returned 17 rows for the 20 asked") as err:
        run(pilot, pool, short, batch=20, checkpoint=path)
    assert err.value.run.data["pool_index"].notna().sum() == 17
    assert len(ckpt.read(path).bought) == 17

    def holes(rows):
        out = good(rows)
        out.loc[out.index[:2], "score"] = np.nan
        return out

    with pytest.raises(bt.DesignError, match="2 outcomes missing") as err:
        run(pilot, pool, holes, batch=10)
    assert err.value.run.data["pool_index"].notna().sum() == 8

    def stranger(rows):
        return pd.concat([good(rows), good(pool.iloc[[-1]])])

    with pytest.raises(bt.DesignError, match="not asked for"):
        run(pilot, pool, stranger, batch=5)


def test_bad_arguments_are_refused_before_any_call(full, pilot, pool):
    never = lambda rows: pytest.fail("the oracle was called")  # noqa: E731
    with pytest.raises(bt.DesignError, match="index has duplicates"):
        run(pilot, pd.concat([pool, pool.iloc[:3]]), never)
    with pytest.raises(bt.DesignError, match="positive integer"):
        run(pilot, pool, never, batch=0)
    with pytest.raises(bt.DesignError, match="between 0 and 1"):
        run(pilot, pool, never, target=1.5)
    with pytest.raises(bt.DesignError, match="no column"):
        run(pilot, pool.drop(columns="item"), never)
