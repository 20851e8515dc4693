"""Leave-one-judge-out: an odd judge carries the judge sensitivity, and dropping it shows so."""

import warnings

import numpy as np
import pytest

import bayes_tee as bt

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")


@pytest.fixture(scope="module")
def odd_judge():
    df = bt.simulate.tee_dgp(
        n_items=30,
        n_prompts=3,
        n_judges=3,
        n_temperatures=1,
        n_replicates=2,
        judge_effects=[-0.5, 0.0, 0.02],
        random_seed=3,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bt.DiagnosticWarning)
        loo = bt.leave_one_out(
            df,
            "judge",
            **ROLES,
            shares_at=dict(n_judges=3),
            random_seed=1,
            draws=400,
            tune=400,
            progressbar=False,
        )
    # short chains may fail a check; the result says which fits, never silently
    failed = set(loo.theta.loc[~loo.theta["diagnostics_ok"], "fit"])
    assert bool(failed) == any("Fits failing diagnostics" in str(w.message) for w in caught)
    return df, loo


@pytest.mark.slow
def test_dropping_the_odd_judge_removes_the_judge_share(odd_judge):
    df, loo = odd_judge
    s = loo.shares.set_index(["fit", "component"])
    assert set(loo.shares["fit"]) == {"all", "without judge1", "without judge2", "without judge3"}
    full = s.loc[("all", "judge"), "share_median"]
    assert full > 0.3  # judge1 sits 0.5 below the others: the judge term is the largest
    assert full == s.xs("all")["share_median"].max()
    assert s.loc[("without judge1", "judge"), "share_median"] < 0.2 * full
    for keep in ("without judge2", "without judge3"):
        assert s.loc[(keep, "judge"), "share_median"] > 0.6 * full
    # the refits really dropped the level, and the theta table moves with it
    assert loo.posteriors["without judge1"].design.levels["judge"] == ("judge2", "judge3")
    th = loo.theta.set_index("fit")["theta"]
    assert th["without judge1"] > th["all"] > th["without judge2"] - 0.05
    assert np.isclose(th["without judge1"], df[df["judge"] != "judge1"]["score"].mean(), atol=0.05)
    wide = loo.table(["judge", "item"])
    assert list(wide.index) == ["judge", "item"] and wide.columns[0] == "all" and wide.shape[1] == 4


def test_leave_one_out_errors_name_the_fix():
    df = bt.simulate.tee_dgp(
        n_items=10, n_prompts=2, n_judges=3, n_temperatures=1, n_replicates=2, random_seed=1
    )
    with pytest.raises(ValueError, match="at least 3"):
        bt.leave_one_out(df, "prompt", **ROLES)
    with pytest.raises(ValueError, match="'prompt', 'judge' or 'temperature'"):
        bt.leave_one_out(df, "judges", **ROLES)
    with pytest.raises(ValueError, match="pass temperature="):
        bt.leave_one_out(df, "temperature", **ROLES)
    with pytest.raises(ValueError, match="shares_at takes"):
        bt.leave_one_out(df, "judge", **ROLES, shares_at=dict(n_judge=3))
