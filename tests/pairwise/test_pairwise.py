"""Pairwise judging: verdict scoring, true_order recoding, order bias, the position facet, RAEE
and the gaming surface.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayes_tee as bt
from bayes_tee.pairwise.verdicts import ELO_SCALE, expected_max_normal, from_elo, to_elo
from bayes_tee.studies.verdicts_dgp import PAIRWISE_ROLES

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "external"


# --- verdicts, recoding, order bias --------------------------------------------------------


def test_verdict_labels_and_errors():
    s = bt.pairwise.verdict_scores(pd.Series(["A>B", "B>A", "A=B", "tie", "b", None, "win", "loss"]))
    assert s.tolist()[:5] == [1.0, 0.0, 0.5, 0.5, 0.0]
    assert np.isnan(s.iloc[5]) and s.tolist()[6:] == [1.0, 0.0]
    with pytest.raises(bt.DesignError, match="'v'.*not A/B/tie"):
        bt.pairwise.verdict_scores(pd.Series(["A", "maybe"]), "v")
    with pytest.raises(bt.DesignError, match="preference - 1"):
        bt.pairwise.verdict_scores(pd.Series([1.2, 1.9]), "preference")


def test_recode_flips_only_swapped_rows_and_keeps_ties():
    df = pd.DataFrame({"order": ["AB", "BA", "BA", "AB"], "v": ["A", "A", "tie", "B"]})
    out = bt.pairwise.recode(df, verdict="v", order="order", swapped="BA")
    assert out["first_system_wins"].tolist() == [1.0, 0.0, 0.5, 0.0]
    with pytest.raises(bt.DesignError, match="not a level of the order column"):
        bt.pairwise.recode(df, verdict="v", order="order", swapped="swapped")


def test_order_bias_recovers_a_known_slot_preference():
    """A judge with 0.45 logits of slot-A preference: the 400-item interval excludes 0 and
    covers the DGP's first-slot advantage (from 40,000 items); a slot-blind judge's covers 0.
    """
    kw = dict(n_prompts=1, n_judges=1, order_bias=0.45, tie_rate=0.0)
    big = bt.simulate.pairwise_battles(n_items=40_000, random_seed=9, **kw)
    truth = bt.pairwise.order_bias(
        big, item="item", verdict="slot_winner", order="order", swapped="BA", n_draws=10
    ).loc[0, "order_bias"]
    df = bt.simulate.pairwise_battles(n_items=400, random_seed=3, **kw)
    ob = bt.pairwise.order_bias(df, item="item", verdict="slot_winner", order="order", swapped="BA")
    assert 0 < ob.loc[0, "order_bias_low"] < truth < ob.loc[0, "order_bias_high"]
    assert ob.loc[0, "p_primacy"] > 0.99
    blind = bt.simulate.pairwise_battles(n_items=400, n_prompts=1, n_judges=1, order_bias=0.0, random_seed=4)
    ob0 = bt.pairwise.order_bias(blind, item="item", verdict="slot_winner", order="order", swapped="BA")
    assert ob0.loc[0, "order_bias_low"] < 0 < ob0.loc[0, "order_bias_high"]


def test_expected_max_normal_matches_simulation_and_closed_form():
    assert expected_max_normal(1) == 0.0
    assert expected_max_normal(2) == pytest.approx(1 / np.sqrt(np.pi), abs=1e-9)
    z = np.random.default_rng(0).standard_normal((200_000, 27)).max(axis=1)
    assert expected_max_normal(27) == pytest.approx(z.mean(), abs=4 * z.std() / np.sqrt(len(z)))
    assert float(from_elo(to_elo(0.73))) == pytest.approx(0.73)
    assert float(to_elo(0.5 + 1e-9)) == pytest.approx(0.0, abs=1e-5)


def test_position_facet_design_errors():
    df = bt.simulate.pairwise_battles(n_items=10, n_prompts=1, n_judges=1, random_seed=0)
    with pytest.raises(bt.DesignError, match="position="):
        bt.validate_design(df, outcome="slot_winner", item="item", swapped="BA")
    with pytest.raises(bt.DesignError, match="not a level"):
        bt.validate_design(df, outcome="slot_winner", item="item", position="order", swapped="ba")
    d = bt.validate_design(df, outcome="slot_winner", item="item", position="order", swapped="BA")
    assert d.facets == ("item", "position")
    assert [t.label for t in d.terms] == ["item", "position", "cell"]  # cell = item x order
    assert np.allclose(np.sort(d.row_y), np.sort(df["first_system_wins"].to_numpy()))


# --- the position facet in the TEE model ---------------------------------------------------


@pytest.fixture(scope="module")
def arena_post():
    """Arena-like pairwise data: 150 battles x 5 prompts x 3 judges x 2 orders, slot-frame
    verdicts recoded in fit_posterior.
    """
    df = bt.simulate.pairwise_battles(n_items=150, n_prompts=5, n_judges=3, order_bias=0.4, random_seed=3)
    post = bt.fit_posterior(df, **PAIRWISE_ROLES, random_seed=1, progressbar=False)
    return df, post


@pytest.mark.slow
def test_reliability_of_a_pairwise_fit_counts_presentation_orders(arena_post):
    _, post = arena_post
    with warnings.catch_warnings():  # E rho^2's dependence on the judges' status is near its
        warnings.simplefilter("ignore", bt.DesignWarning)  # tolerance here: a note, not the point
        rel = post.reliability(n={"position": [1, 2]})
    assert list(rel["n_position"]) == [1, 2] and rel["phi_median"].is_monotonic_increasing


@pytest.mark.slow
def test_position_effect_matches_order_bias(arena_post):
    df, post = arena_post
    assert post.method == "balanced"
    eff = post.idata.posterior["position_effect"].sel(position="AB").values.ravel()
    ob = bt.pairwise.order_bias(df, item="item", verdict="slot_winner", order="order", swapped="BA")
    assert eff.mean() == pytest.approx(ob.loc[0, "order_bias"], abs=0.003)
    lo, hi = np.quantile(eff, [0.025, 0.975])
    assert lo > 0.05  # 0.4 logits of slot preference is ~0.09 on the probability scale
    comps = post.components().set_index("component")
    assert comps.loc["position", "median"] == pytest.approx(np.mean(eff) ** 2, rel=0.25)
    shares = post.shares().set_index("component")
    assert shares.loc["position", "divisor"] == 2.0
    one = post.shares(n_positions=1).set_index("component")
    assert one.loc["position", "contribution_median"] == pytest.approx(
        2 * shares.loc["position", "contribution_median"]
    )
    dst = post.dstudy(n_positions=[1, 2])
    assert list(dst["n_positions"]) == [1.0, 2.0]
    assert dst.loc[0, "se_median"] > dst.loc[1, "se_median"]
    assert dst.loc[0, "calls"] * 2 == dst.loc[1, "calls"]
    iv = post.interventions().set_index("intervention")
    assert iv.loc["single presentation order", "change_low"] > 0


def test_gaming_surface_smaller_when_averaging(arena_post):
    _, post = arena_post
    g = post.gaming_surface(k=27, design=[{"n_prompts": 1, "n_judges": 1}, {"n_prompts": 5, "n_judges": 3}])
    assert g.loc[0, "e_max_z"] == pytest.approx(expected_max_normal(27))
    assert g.loc[1, "p_smaller"] > 0.95
    assert g.loc[1, "ratio_high"] < 0.9
    assert g.loc[1, "surface_median"] < g.loc[0, "surface_median"]
    assert g.loc[1, "elo_median"] < g.loc[0, "elo_median"]
    # the surface is E[max Z] times the D-study SE, draw by draw
    var = post.variance_at(pd.DataFrame([{"n_prompts": 1, "n_judges": 1}]))[:, 0]
    assert g.loc[0, "surface_median"] == pytest.approx(
        expected_max_normal(27) * np.sqrt(np.median(var)), rel=1e-6
    )
    # Elo: the boost from theta to theta + surface through gamma * logit
    mu = float(np.median(post.idata.posterior["mu"]))
    assert g.loc[0, "elo_median"] == pytest.approx(
        float(to_elo(mu + g.loc[0, "surface_median"]) - to_elo(mu)), rel=0.1
    )
    with pytest.raises(ValueError, match="unknown design field"):
        post.gaming_surface(design={"n_judge": 1})


def test_non_pairwise_fit_refuses_positions():
    post = bt.load(Path(__file__).resolve().parents[2] / "models" / "tee_demo.nc")  # no fit needed
    with pytest.raises(ValueError, match="position="):
        post.dstudy(n_positions=[1, 2])
    assert "n_positions" not in post.dstudy(n_items=[10]).columns
    g = post.gaming_surface(design=[{"n_judges": 1}, {"n_judges": 3}])
    assert "elo_median" not in g and g.attrs["elo"] is False


# --- RAEE ----------------------------------------------------------------------------------


def test_raee_jeffreys_closed_form_and_fpc():
    df = pd.DataFrame({"m": ["x"] * 10, "q": range(10), "y": [1, 1, 1, 0.5, 0, 1, 1, 0, 1, 0.5]})
    tab = bt.raee.score(df, system="m", prompt="q", outcome="y", level=0.9).table()
    W, T, L = 6, 2, 2
    a, b = W + T / 2 + 0.5, L + T / 2 + 0.5
    assert (tab.loc[0, "wins"], tab.loc[0, "ties"], tab.loc[0, "losses"]) == (W, T, L)
    assert tab.loc[0, "win_rate"] == pytest.approx(a / (a + b))
    assert tab.loc[0, "low"] == pytest.approx(stats.beta.ppf(0.05, a, b))
    assert tab.loc[0, "elo_high"] == pytest.approx(ELO_SCALE * special_logit(stats.beta.ppf(0.95, a, b)))
    se = ELO_SCALE * np.sqrt(stats.beta.var(a, b)) / (a / (a + b) * b / (a + b))
    assert tab.loc[0, "elo_se"] == pytest.approx(se)
    fpc = bt.raee.score(df, system="m", prompt="q", outcome="y", pool_size=20).table()
    full = bt.raee.score(df, system="m", prompt="q", outcome="y").table()
    w_full, w_fpc = full.loc[0, "high"] - full.loc[0, "low"], fpc.loc[0, "high"] - fpc.loc[0, "low"]
    assert w_fpc / w_full == pytest.approx(np.sqrt((20 - 10) / 19), rel=0.06)
    whole = bt.raee.score(df, system="m", prompt="q", outcome="y", pool_size=10).table()
    assert whole.loc[0, "low"] == whole.loc[0, "high"] == pytest.approx(a / (a + b))
    with pytest.raises(bt.DesignError, match="pool_size"):
        bt.raee.score(df, system="m", prompt="q", outcome="y", pool_size=5)
    with pytest.raises(bt.DesignError, match="'prompt_id'"):
        bt.raee.score(df, system="m", prompt="prompt_id", outcome="y")


def special_logit(p):
    return np.log(p) - np.log1p(-p)


def test_raee_interval_coverage_on_binomial_data():
    """Jeffreys-Beta intervals of win probability: ~95% coverage over 400 simulated systems."""
    rng = np.random.default_rng(5)
    p = rng.uniform(0.1, 0.9, 400)
    y = rng.random((400, 60)) < p[:, None]
    df = pd.DataFrame(
        {"m": np.repeat(np.arange(400), 60), "q": np.tile(np.arange(60), 400), "y": y.ravel() * 1.0}
    )
    tab = bt.raee.score(df, system="m", prompt="q", outcome="y").table().set_index("system").sort_index()
    cover = ((tab["low"] < p) & (p < tab["high"])).mean()
    assert 0.92 <= cover <= 0.98


def test_hierarchical_widens_for_correlated_repeats():
    """Prompts with 4 correlated runs each: counting the 4 runs as independent prompts is too
    narrow; the Beta-Binomial interval is wider, covers the truth, and finds rho > 0.
    """
    rng = np.random.default_rng(2)
    n_q, k = 150, 4
    p_q = rng.beta(0.6 * 2, 0.4 * 2, n_q)  # strong prompt heterogeneity, mean 0.6, rho = 1/3
    y = (rng.random((n_q, k)) < p_q[:, None]).astype(float)
    df = pd.DataFrame(
        {"m": "x", "q": np.repeat(np.arange(n_q), k), "run": np.tile(np.arange(k), n_q), "y": y.ravel()}
    )
    indep = bt.raee.score(df.assign(q=df["q"] * 10 + df["run"]), system="m", prompt="q", outcome="y").table()
    hier = bt.raee.score(df, system="m", prompt="q", outcome="y", hierarchical=True).table()
    w_indep = indep.loc[0, "high"] - indep.loc[0, "low"]
    w_hier = hier.loc[0, "high"] - hier.loc[0, "low"]
    rho = hier.loc[0, "rho"]
    assert 0.15 < rho < 0.55  # truth 1/3
    assert w_hier > 1.2 * w_indep
    # the widening is the design effect of k correlated runs, sqrt(1 + (k - 1) rho)
    assert w_hier / w_indep == pytest.approx(np.sqrt(1 + (k - 1) * rho), rel=0.1)
    assert hier.loc[0, "low"] < 0.6 < hier.loc[0, "high"]
    # no heterogeneity: rho near 0 and the same width as the independent count
    y0 = (rng.random((n_q, k)) < 0.6).astype(float)
    flat = df.assign(y=y0.ravel())
    h0 = bt.raee.score(flat, system="m", prompt="q", outcome="y", hierarchical=True).table()
    i0 = bt.raee.score(
        flat.assign(q=flat["q"] * 10 + flat["run"]), system="m", prompt="q", outcome="y"
    ).table()
    assert h0.loc[0, "rho"] < 0.05
    assert (h0.loc[0, "high"] - h0.loc[0, "low"]) == pytest.approx(
        i0.loc[0, "high"] - i0.loc[0, "low"], rel=0.15
    )


def test_judges_icc_and_pooled_variance():
    """Two judges x 3 runs: a reliable and a noisy one. ICC(3,k) matches the ANOVA formula,
    the screen keeps the reliable judge, and pooling uses Prop. 2's variance.
    """
    rng = np.random.default_rng(0)
    n_q = 200
    p_q = rng.beta(2, 1, n_q)
    rows = []
    for judge, noise in (("good", 0.05), ("noisy", 0.6)):
        for r in range(3):
            flip = rng.random(n_q) < noise / 2
            y = np.where(flip, rng.random(n_q) < 0.5, rng.random(n_q) < p_q).astype(float)
            rows.append(pd.DataFrame({"m": "x", "q": np.arange(n_q), "judge": judge, "run": r, "y": y}))
    df = pd.concat(rows)
    r = bt.raee.score(df, system="m", prompt="q", outcome="y", judge="judge", run="run")
    jt = r.judges(threshold=0.5).set_index("judge")
    x = df[df.judge == "good"].pivot(index="q", columns="run", values="y").to_numpy()
    n, k = x.shape
    ms_r = k * x.mean(1).var(ddof=1)
    resid = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    ms_e = (resid**2).sum() / ((n - 1) * (k - 1))
    assert jt.loc["good", "icc_k"] == pytest.approx((ms_r - ms_e) / ms_r)
    assert jt.loc["good", "icc_k"] > jt.loc["noisy", "icc_k"]
    both = r.pooled(judges=["good", "noisy"])
    tab = r.table()
    rho = jt["icc_k"].mean()
    s2 = (tab["elo_se"] ** 2).mean()
    assert both.loc[0, "elo_se"] == pytest.approx(np.sqrt(s2 * (rho + (1 - rho) / 2)))
    assert both.loc[0, "elo"] == pytest.approx(tab["elo"].mean())
    with pytest.raises(ValueError, match="run="):
        bt.raee.score(df, system="m", prompt="q", outcome="y", judge="judge").judges()


def test_alpaca_bundle_reproduces_leaderboard():
    prefs = bt.datasets.load("alpaca_eval_reference")
    board = bt.datasets.load("alpaca_eval_leaderboard").set_index("model")
    assert prefs.attrs["licence"] == "Apache-2.0"
    r = bt.raee.score(
        prefs.assign(p=prefs["preference"] - 1),
        system="model",
        prompt="instruction_idx",
        outcome="p",
        reference="gpt4_1106_preview",
    )
    tab = r.table().set_index("system")
    assert len(tab) == len(board) == 15
    assert np.allclose(100 * tab["win_rate_raw"], board.loc[tab.index, "win_rate"], rtol=0, atol=1e-9)
    assert 100 * tab.loc["FuseChat-Gemma-2-9B-Instruct", "win_rate_raw"] == pytest.approx(70.497135, abs=1e-6)
    assert (tab["n"] == board.loc[tab.index, "n_total"]).all()
    # Jeffreys-Beta counts a fractional preference as a Bernoulli trial (variance p(1 - p));
    # the leaderboard SE uses the preferences' own spread, which is smaller. So the interval is
    # wider than +-1.96 SE by sqrt(p(1 - p)) / sd(preference), and never narrower.
    mid = tab[(tab["win_rate"] > 0.1) & (tab.index != "gpt4_1106_preview")]
    half = 100 * (mid["high"] - mid["low"]) / 2
    ratio = half / (1.96 * board.loc[mid.index, "standard_error"])
    sd = prefs[prefs["model"].isin(mid.index)].groupby("model")["preference"].std().loc[mid.index]
    p = mid["win_rate_raw"]
    assert (ratio > 0.98).all()
    assert np.allclose(ratio, np.sqrt(p * (1 - p)) / sd, rtol=0.05)


def test_arena_hard_bundle_ranking():
    h = bt.datasets.load("arena_hard_battles")
    assert len(h) == 960 and set(h["game"]) == {1, 2}
    assert h.groupby(["model", "question_id"]).size().eq(2).all()
    r = bt.raee.score(
        h, system="model", prompt="question_id", outcome="outcome", reference="claude-3-haiku-20240307"
    )
    rk = r.ranking()
    assert list(rk["system"]) == [
        "claude-3-5-sonnet-20240620",
        "gpt-4o",
        "gpt-4o-mini",
        "claude-3-opus-20240229",
    ]
    tab = r.table()
    assert (tab["elo_low"] > 0).all()  # every model beats the baseline
    gap = r.gap("claude-3-5-sonnet-20240620", "claude-3-opus-20240229")
    assert gap.loc[0, "elo_gap_low"] > 0


@pytest.mark.skipif(
    not (SHARED / "judgebench").is_dir(), reason="needs ../shared/external/judgebench (not bundlable)"
)
def test_judgebench_order_bias_per_judge():
    """LLM judges prefer the first slot; reward models score each response alone, so they are
    order-consistent and show no bias.
    """
    d = pd.read_csv(SHARED / "judgebench" / "judgebench_judge_decisions_slim.csv")
    d["judge"] = d["judge_name"] + "/" + d["judge_model"]
    long = pd.concat(
        [
            d.assign(order="AB", verdict=d["decision_AB_order"]),
            d.assign(order="BA", verdict=d["decision_BA_order"]),
        ]
    )
    ob = bt.pairwise.order_bias(
        long, item="pair_id", verdict="verdict", order="order", swapped="BA", judge="judge"
    ).set_index("judge")
    assert len(ob) == 7
    llm = ob[ob.index.str.startswith("arena_hard/")]
    rm = ob[ob.index.str.startswith("reward_model/")]
    assert (llm["order_bias_low"] > 0).all()
    assert (rm["order_bias"].abs() < 0.01).all() and (rm["consistency"] > 0.98).all()
    # recoding: the swapped-order verdicts agree with the label as often as the listed ones
    rec = bt.pairwise.recode(long, verdict="verdict", order="order", swapped="BA")
    hit = rec["first_system_wins"] == (rec["label"] == "A>B").astype(float)
    acc = hit.groupby([rec["judge"], rec["order"]]).mean().unstack()
    assert (acc.loc[rm.index, "AB"] - acc.loc[rm.index, "BA"]).abs().max() < 0.02


def test_simulate_design_refuses_position_fits(arena_post):
    _, post = arena_post
    with pytest.raises(ValueError, match="dstudy\\(n_positions"):
        post.simulate_design(n_items=[50])
