"""Prior sensitivity: power-scaling diagnostics and refits under other priors."""

import numpy as np
import pytest

import bayes_tee as bt
from bayes_tee._core.priors import PriorSpec, SDPrior
from bayes_tee.posterior import power_scaling
from bayes_tee.posterior.facade import posterior_for
from bayes_tee.posterior.power_scaling import log_densities

ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
)
#: Every SD crushed towards zero: 0.5% of the outcome SD. The data cannot overrule it.
OVERWHELMING = PriorSpec("overwhelming", SDPrior("half_normal", 0.005))


@pytest.fixture(scope="module")
def sens():
    df = bt.simulate.tee_dgp(
        n_items=30, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=3, random_seed=11
    )
    return bt.prior_sensitivity(
        df, **ROLES, priors=["default", OVERWHELMING], draws=500, tune=500, random_seed=2, progressbar=False
    )


def test_log_density_is_the_model_logp(demo_post):
    """Prior + likelihood per draw equals the model's joint log density (no Jacobian)."""
    from pymc.model.transform.conditioning import remove_value_transforms

    from bayes_tee.likelihoods import build_model

    prior, lik = log_densities(demo_post)
    model = remove_value_transforms(build_model(demo_post.design, demo_post.priors, method=demo_post.method))
    fn = model.compile_logp(jacobian=False)
    P = demo_post.idata.posterior
    for c, d in ((0, 0), (2, 17)):
        point = {model.rvs_to_values[rv].name: P[rv.name].values[c, d] for rv in model.free_RVs}
        total = sum(float(prior[v].values[c, d]) for v in prior.data_vars) + float(lik.values[c, d])
        assert total == pytest.approx(float(fn(point)), rel=1e-8)


def test_log_densities_are_computed_once_per_set_of_draws(demo_post):
    """``sensitivity()`` and the report read the same log densities: a second call returns the
    first's arrays; other draws (a subset) get their own.
    """
    first = log_densities(demo_post)
    assert log_densities(demo_post)[1] is first[1]
    few = posterior_for(
        demo_post.idata.isel(draw=slice(0, 25)), demo_post.design, demo_post.priors, demo_post.method
    )
    prior, lik = log_densities(few)
    assert lik is not first[1] and lik.sizes["draw"] == 25
    np.testing.assert_allclose(lik.values, first[1].values[:, :25])


def test_log_densities_in_chunks_of_bounded_memory_are_the_same(demo_post, monkeypatch):
    """The draws go through in chunks sized by the first chunk's peak memory: with a budget of
    one byte every draw past the probe is its own chunk, and the log densities are those of one
    evaluation over all draws.
    """
    whole = log_densities(demo_post)
    calls = []
    real = power_scaling.by_chunks

    def counted(fn, arrays, limit=None):
        calls.append(len(arrays[0]))
        return real(lambda *a: calls.append(len(a[0])) or fn(*a), arrays, limit=1)

    monkeypatch.setattr(power_scaling, "by_chunks", counted)
    few = posterior_for(
        demo_post.idata.isel(draw=slice(0, 30)), demo_post.design, demo_post.priors, demo_post.method
    )
    prior, lik = log_densities(few)
    n = calls[0]
    assert calls[1:] == [power_scaling.PROBE_DRAWS] + [1] * (n - power_scaling.PROBE_DRAWS)
    np.testing.assert_allclose(lik.values, whole[1].values[:, :30], rtol=1e-12)
    for v in prior.data_vars:
        np.testing.assert_allclose(prior[v].values, whole[0][v].values[:, :30], rtol=1e-12)


@pytest.mark.slow
def test_an_overwhelming_prior_is_flagged(sens):
    """The power-scaling diagnostic flags the crushed SDs; under the default prior the
    well-identified components (item, cell, replicate) are not prior-sensitive.
    """
    default = sens.posteriors["default"].sensitivity().set_index("component")
    crushed = sens.posteriors["overwhelming"].sensitivity().set_index("component")
    for c in ("item", "cell", "replicate"):
        assert default.loc[c, "prior"] < 0.05, c
        assert default.loc[c, "diagnosis"] == "-"
        assert crushed.loc[c, "prior"] > 0.05, c
        assert crushed.loc[c, "diagnosis"] != "-"


def test_prior_sensitivity_table_flags_the_changed_shares(sens):
    t = sens.table()
    assert set(t["prior"]) == {"default", "overwhelming"}
    assert set(t["quantity"]) >= {"item", "judge", "theta"}
    assert (t.loc[t["prior"] == "default", "flag"] == "").all()  # the reference against itself
    flagged = sens.flagged()
    assert len(flagged) >= 3 and (flagged["prior"] == "overwhelming").all()
    # the crushed prior shrinks the theta TEE interval; the table must say so
    th = t[t["quantity"] == "theta"].set_index("prior")
    assert (
        th.loc["overwhelming", "high"] - th.loc["overwhelming", "low"]
        < th.loc["default", "high"] - th.loc["default", "low"]
    )
    fig = sens.plot()
    assert len(fig.axes) == 2
    again = bt.sensitivity.PriorSensitivity.from_table(sens.results)
    assert again.table()["flag"].tolist() == t["flag"].tolist()


def test_unknown_preset_and_duplicate_names():
    df = bt.simulate.tee_dgp(
        n_items=6, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2, random_seed=1
    )
    with pytest.raises(ValueError, match="Unknown prior preset"):
        bt.prior_sensitivity(df, "score", "item", prompt="prompt", priors=["default", "flat"])
    with pytest.raises(ValueError, match="distinct"):
        bt.prior_sensitivity(df, "score", "item", prompt="prompt", priors=["default", "default"])
