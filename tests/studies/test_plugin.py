"""The classical plug-in baselines against closed forms and repeated sampling."""

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee.studies.plugin import plugin_fit

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")
PILOT = dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=1, n_replicates=3)


def fits(n: int, seed: int, **dgp):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        df = bt.simulate.tee_dgp(**{**PILOT, **dgp}, random_seed=rng)
        out.append((df, plugin_fit(bt.validate_design(df, **ROLES))))
    return out


def test_panel_variance_is_the_grand_mean_stratum():
    """Two routes to Var(theta_hat) for the panel: D-study divisors and the grand-mean EMS."""
    ((df, fit),) = fits(1, 0)
    st = fit.st
    by_ems = float(st.grand_coef @ np.array([fit.estimates[k] for k in st.var_terms])) / st.n_total
    assert fit.var_theta()["panel"] == pytest.approx(by_ems, rel=1e-12)
    assert fit.var_theta()["tee"] > fit.var_theta()["panel"]


def test_wald_se_of_a_component_matches_its_sampling_sd():
    """Var(MS) = 2 EMS^2 / df: the delta-method SE of the item component agrees with the SD of
    the untruncated estimate over 300 simulated pilots (within 15%).
    """
    runs = fits(300, 1)
    raw = np.array([f.raw["item"] for _, f in runs])
    z = 1.6448536269514722
    se = np.array([(f.wald_component("item", 0.9)[1] - f.estimates["item"]) / z for _, f in runs])
    assert np.median(se) == pytest.approx(raw.std(), rel=0.15)
    assert raw.mean() == pytest.approx(runs[0][0].attrs["truth"]["item"], rel=0.1)  # unbiased


def test_plugin_is_often_singular_at_three_prompts_and_the_bootstrap_t_covers():
    """V=3, M=3: the truncated plug-in hits zero for some component in a good share of pilots;
    its bootstrap-t interval for the panel mean covers better than its Wald interval.
    """
    runs = fits(300, 2, components={"prompt": 0.004, "prompt:judge": 0.003})
    singular = np.mean([f.singular for _, f in runs])
    assert singular > 0.3
    rng = np.random.default_rng(0)
    wald, boot = [], []
    for df, f in runs:
        truth = df.attrs["theta_panel"]
        lo, hi = f.wald_theta(0.9)["panel"]
        wald.append(lo <= truth <= hi)
        lo, hi = f.bootstrap_intervals(0.9, [], f.bootstrap(400, rng))["panel"]
        boot.append(lo <= truth <= hi)
    assert np.mean(boot) > np.mean(wald)
    assert np.mean(boot) > 0.85


def test_bootstrap_rejects_unbalanced_data():
    df = bt.simulate.tee_dgp(**PILOT, random_seed=3).iloc[1:]
    with pytest.raises(ValueError, match="balanced"):
        plugin_fit(bt.validate_design(df, **ROLES))
