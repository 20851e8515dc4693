"""Tie groups (the compact letter display) and the cost front, on hand-built draws (no
sampling): the letters agree with the simultaneous pair intervals, the front's probabilities
with their definition, bad costs are refused, and the leaderboard's JSON document round-trips.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.posterior import leaderboard as board
from bayes_tee.posterior.cost_front import p_pareto, system_costs
from bayes_tee.posterior.leaderboard_json import SCHEMA, leaderboard_document, read_leaderboard_json
from bayes_tee.posterior.tie_groups import groups_of, letter_columns, letter_display

#: Effects in three clusters: a tie chain at the top, a pair in the middle, one alone below.
EFFECTS = np.array([0.60, 0.52, 0.44, 0.10, 0.05, -0.50])


@pytest.fixture(scope="module")
def post(hand_built_comparison):
    return hand_built_comparison(EFFECTS)


def test_insert_absorb_letters_are_exactly_the_unseparated_pairs():
    """300 random separation patterns (interval-like and arbitrary): two systems share a letter
    iff they are not separated, every system holds one, and no letter is a subset of another.
    """
    rng = np.random.default_rng(1)
    for trial in range(300):
        n = int(rng.integers(2, 16))
        if trial % 2:
            est, width = np.sort(rng.normal(size=n))[::-1], rng.uniform(0.1, 1.5, n)
            sep = np.abs(est[:, None] - est[None, :]) > (width[:, None] + width[None, :]) / 2
        else:
            sep = np.triu(rng.random((n, n)) < 0.4, 1)
            sep = sep | sep.T
        held = np.array(letter_columns(sep)).T.astype(int)
        share = (held @ held.T) > 0
        off = ~np.eye(n, dtype=bool)
        assert (share[off] == ~sep[off]).all(), trial
        assert held.any(axis=1).all()
        cols = held.T.astype(bool)
        assert not any(i != j and (c <= d).all() for i, c in enumerate(cols) for j, d in enumerate(cols))
    assert letter_display(np.zeros((3, 3), bool)) == ["a", "a", "a"]
    everyone = ~np.eye(3, dtype=bool)
    assert letter_display(everyone) == ["a", "b", "c"]
    assert groups_of(["x", "y"], np.zeros((2, 2), bool)) == [["x", "y"]]


def test_letters_follow_the_simultaneous_intervals(post, letters_match_pairs):
    table = letters_match_pairs(post)
    assert table["group"].iloc[0].startswith("a")  # letters ordered by rank
    # the clusters of the effects: a tie at the top, the last system alone
    assert 2 <= len(post.tie_groups()) < 6 and post.tie_groups()[-1] == [table["system"].iloc[-1]]
    assert len(post.tie_groups()) >= 2
    # a wider level ties more: the groups of 0.99 are no finer than those of 0.5
    tied = {lv: sum(len(g) for g in post.tie_groups(level=lv)) for lv in (0.5, 0.99)}
    n_groups = {lv: len(post.tie_groups(level=lv)) for lv in (0.5, 0.99)}
    assert n_groups[0.99] <= n_groups[0.5] or tied[0.99] >= tied[0.5]
    for over in ("panel", "new"):
        letters_match_pairs(post, over=over)
    worst_first = post.leaderboard(higher_is_better=False)
    assert worst_first["group"].iloc[0].startswith("a")


def test_a_system_dearer_and_worse_in_every_draw_is_off_the_front(post):
    names = post.leaderboard()["system"].tolist()  # best first
    cost = dict(zip(names, [3.0, 1.0, 2.0, 0.5, 0.6, 5.0]))
    table = post.leaderboard(cost=cost).set_index("system")
    assert table.loc[names[-1], "p_pareto"] == 0.0  # dearest and clearly worst
    assert table.loc[names[3], "p_pareto"] == 1.0  # the cheapest
    # p_pareto is P(best among the systems no dearer), from the leaderboard's own draws
    draws = board.score_draws(post, "new", est=board.system_estimates(post).to_numpy())
    order = list(board.system_estimates(post).index)
    costs = np.array([cost[s] for s in order])
    for s in order:
        rivals = [i for i, t in enumerate(order) if costs[i] <= cost[s]]
        best = draws[:, rivals].argmax(axis=1) == rivals.index(order.index(s))
        assert table.loc[s, "p_pareto"] == pytest.approx(best.mean())
    front = post.leaderboard(cost=cost).attrs["front"]
    assert names[-1] not in front and names[3] in front and names[0] in front  # the best is on it
    fig = post.plot_leaderboard(cost=cost)
    assert fig.axes[0].get_xlabel() == "cost"


def test_costs_from_a_table_of_calls_are_each_systems_mean(post):
    names = sorted(post.leaderboard()["system"])
    calls = pd.DataFrame({"model": names * 2, "usd": [1.0] * len(names) + [3.0] * len(names)})
    assert (post.leaderboard(cost=calls)["cost"] == 2.0).all()
    assert system_costs(calls.assign(x=1), names, system="model", cost_column="usd").tolist() == [2.0] * 6
    assert p_pareto(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 1.0])).tolist() == [0.5, 0.5]


@pytest.mark.parametrize(
    "cost, message",
    [
        ({"s0": 1.0}, "no cost for"),
        ({f"s{i}": 1.0 for i in range(7)}, "unknown system"),
        ({**{f"s{i}": 1.0 for i in range(6)}, "s2": -1.0}, "not negative"),
        ({**{f"s{i}": 1.0 for i in range(6)}, "s2": "cheap"}, "a number"),
        (pd.DataFrame({"name": ["s0"], "cost": [1.0]}), "system column 'model'"),
        (pd.DataFrame({"model": ["s0"], "a": [1.0], "b": [2.0]}), "cost_column="),
        ([1.0, 2.0], "mapping"),
    ],
)
def test_bad_costs_and_levels_name_the_fix(post, cost, message):
    with pytest.raises(bt.DesignError, match=message):
        post.leaderboard(cost=cost)


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1])
def test_a_level_outside_zero_one_is_refused(post, level):
    with pytest.raises(bt.DesignError, match="level"):
        post.leaderboard(level)
    with pytest.raises(bt.DesignError, match="level"):
        post.tie_groups(level)


def test_the_json_document_round_trips(post):
    cost = {f"s{i}": float(i + 1) for i in range(6)}
    doc = leaderboard_document(post, pairs="unresolved", cost=cost)
    back = read_leaderboard_json(json.dumps(doc))
    table = post.leaderboard(cost=cost)
    pd.testing.assert_frame_equal(back["leaderboard"], table, check_dtype=False)
    assert back["groups"] == table.attrs["groups"] and back["front"] == table.attrs["front"]
    assert doc["schema"] == SCHEMA and doc["n_pairs"] == 15
    assert len(back["pairs"]) == doc["n_unresolved"] and not back["pairs"]["resolved"].any()
    assert doc["diagnostics"]["ok"] and {"max_rhat", "divergences"} <= set(doc["diagnostics"])
    everything = read_leaderboard_json(leaderboard_document(post))
    assert len(everything["pairs"]) == 15
    with pytest.raises(bt.DesignError, match="schema"):
        read_leaderboard_json('{"schema": "other"}')


def test_a_single_system_fit_refuses_tie_groups(demo_post):
    with pytest.raises(bt.DesignError, match="system="):
        demo_post.tie_groups()
