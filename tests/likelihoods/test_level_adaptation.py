"""Every non-centred level of a GLMM term that is not swept gets coordinates adapted to its own
data (glmm_layout.level_adaptation): its rough effect and precision come from its calls, a level
bounded on one side only stays plainly non-centred (for a Likert score: all of its calls in an
end category), the density is the same model (the Jacobian is exact), and an ordinal fit
samples as many draws as its cell effect needs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.families.ordinal import CELL_DRAWS, ORDINAL
from bayes_tee.likelihoods.logit_glmm import layout as glmm_layout
from bayes_tee.likelihoods.logit_glmm.density import FORWARD_ARGUMENTS
from bayes_tee.likelihoods.logit_glmm.kernel import latent_forward
from bayes_tee.likelihoods.logit_glmm.layout import glmm_terms
from bayes_tee.likelihoods.ordinal.density import ordinal_density
from bayes_tee.likelihoods.ordinal.layout import binary_view
from bayes_tee.likelihoods.registry import GLMM_COORDINATES, LIKELIHOODS
from bayes_tee.tee.fit import sampler_settings


def _likert(n_items: int, n_prompts: int, reps: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Five-point scores: items SD 1.2, item x prompt SD 0.6, three judges; one call per cell
    unless ``reps``; returns the frame and the true item x prompt effects ``(items, prompts)``.
    """
    rng = np.random.default_rng(seed)
    item = rng.normal(0, 1.2, n_items)
    ip = rng.normal(0, 0.6, (n_items, n_prompts))
    i, p, j, r = np.meshgrid(
        np.arange(n_items), np.arange(n_prompts), np.arange(3), np.arange(reps), indexing="ij"
    )
    latent = item[i] + ip[i, p] + np.array([-0.3, 0.0, 0.3])[j] + rng.logistic(size=i.shape)
    y = 1 + (latent[..., None] > np.array([-2.5, -1.0, 0.5, 2.0])).sum(-1)
    df = pd.DataFrame(
        {"item": i.ravel(), "prompt": p.ravel(), "judge": j.ravel(), "rep": r.ravel(), "y": y.ravel()}
    )
    return df.astype({"item": str, "prompt": str, "judge": str}), ip


def _design(df: pd.DataFrame, **kw):
    return bt.build_design(
        df, outcome="y", item="item", prompt="prompt", judge="judge", family="ordinal", warn=False, **kw
    )


def test_levels_find_their_effects_and_end_categories_keep_them_plainly_non_centred():
    df, ip = _likert(150, 4, 1, seed=2)
    terms = {g.term.label: g for g in glmm_terms(binary_view(_design(df)))}
    g = terms["item:prompt"]
    assert not g.swept and g.v_hat.shape == g.level_info.shape == (len(g.labels),)
    # three calls a level, read above or below the median category: the rough effects follow
    # the true ones through their calls' noise (correlation 0.39 here, about 0.4 expected from
    # an SD of 0.52 against a binary logit's 1.3 over three calls); without the data, zero
    true = ip - ip.mean(1, keepdims=True) - ip.mean(0) + ip.mean()
    i, p = np.array([lab.split("|") for lab in g.labels]).astype(int).T
    assert np.corrcoef(g.v_hat, true[i, p])[0, 1] > 0.25
    assert np.all(g.level_info[g.centred] == 0.0)
    # a level with every call in the top category is bounded on one side only; all of them in
    # the second-highest category, or spread over both, pins it on both sides
    cells = df.groupby(["item", "prompt"])["y"]
    top = cells.transform("min") == 5
    below = (cells.transform("max") == 4) & (cells.transform("min") == 4)
    assert top.any() and below.any()
    at = {lab: k for k, lab in enumerate(g.labels)}
    level = (df["item"] + "|" + df["prompt"]).map(at)
    assert np.all(g.level_info[level[top].unique()] == 0.0)
    pinned = level[below].unique()
    pinned = pinned[~g.centred[pinned]]
    assert len(pinned) and np.all(g.level_info[pinned] > 0.0)


def test_binary_levels_with_every_call_one_outcome_stay_plainly_non_centred():
    df, _ = _likert(60, 3, 2, seed=4)
    df["y"] = (df["y"] >= 4).astype(int)
    first = df["item"].iloc[0]
    df.loc[df["item"] == first, "y"] = 1
    d = bt.build_design(
        df, outcome="y", item="item", prompt="prompt", judge="judge", family="binomial", warn=False
    )
    g = next(g for g in glmm_terms(d) if g.term.label == "item:prompt")
    one_sided = np.array([lab.split("|")[0] == first for lab in g.labels])
    assert one_sided.sum() == 3 and np.all(g.level_info[one_sided] == 0.0)
    assert (g.level_info[~one_sided & ~g.centred] > 0).mean() > 0.5


def test_the_adapted_density_is_the_non_centred_model_with_its_jacobian(monkeypatch):
    """At the same effects, the adapted log density is the plainly non-centred one less
    ``log(q) / 2`` per adapted level, and its gradient is the finite-difference gradient.
    """
    df, _ = _likert(30, 3, 1, seed=5)
    d = _design(df)
    adapted = ordinal_density(d, bt.priors.get_prior())
    monkeypatch.setattr(glmm_layout, "level_adaptation", lambda design, terms, *a: terms)
    plain = ordinal_density(d, bt.priors.get_prior())
    rng = np.random.default_rng(3)
    x = adapted.initial_point(rng) + rng.normal(0, 0.3, adapted.layout.ndim)
    # the plain coordinates of the same effects: an adapted level sits around its data's rough
    # total v_hat, relative to its mean (zero, the intercept or its parent's effect)
    args = tuple(adapted._pack[name] for name in FORWARD_ARGUMENTS)
    eff, e_off = latent_forward(x, *args)[7:9]
    y, jac = x.copy(), 0.0
    for t, g in enumerate(adapted.terms):
        if g.level_info is None:
            continue
        s = float(np.exp(x[adapted.var_terms.index(g.term)]))
        sl = adapted.layout.slices[g.name]
        p = g.parent
        mean = {-1: 0.0, -2: x[adapted.layout.slices["intercept"]][0]}.get(p)
        mean = eff[e_off[p] : e_off[p + 1]][g.parent_index] if mean is None else mean
        q = 1.0 + s**2 * g.level_info
        y[sl] = (s * g.level_info / q) * (g.v_hat - mean) + x[sl] / np.sqrt(q)
        assert np.allclose(eff[e_off[t] : e_off[t + 1]], mean + s * y[sl])
        jac += -0.5 * np.log(q).sum()
    assert jac < -1.0  # the adaptation is not idle here
    assert adapted.logp_grad(x)[0] == pytest.approx(plain.logp_grad(y)[0] + jac, rel=1e-10, abs=1e-8)
    grad = adapted.logp_grad(x)[1]
    step = np.eye(len(x)) * 1e-6
    numeric = np.array([(adapted.logp_grad(x + h)[0] - adapted.logp_grad(x - h)[0]) / 2e-6 for h in step])
    np.testing.assert_allclose(grad, numeric, atol=2e-5)


def test_ordinal_fits_draw_more_when_a_cell_effect_is_sampled():
    once, _ = _likert(20, 2, 1, seed=6)
    twice, _ = _likert(20, 2, 2, seed=6)
    hook = LIKELIHOODS["ordinal"].draws
    assert hook(_design(once)) is None and hook(_design(twice, replicate="rep")) == CELL_DRAWS
    assert LIKELIHOODS["ordinal_probit"].draws(_design(twice, replicate="rep")) == CELL_DRAWS
    settings = sampler_settings(ORDINAL, likelihood_draws=CELL_DRAWS, random_seed=1)
    assert settings.settled == CELL_DRAWS > ORDINAL.draws
    assert sampler_settings(ORDINAL, draws=50, likelihood_draws=CELL_DRAWS).draws == 50


@pytest.mark.filterwarnings("ignore::bayes_tee.DiagnosticWarning")  # a few draws
def test_effects_sampled_in_an_earlier_versions_coordinates_are_refused(tmp_path):
    df, _ = _likert(20, 2, 1, seed=7)
    post = bt.fit_posterior(
        df, outcome="y", item="item", prompt="prompt", judge="judge", family="ordinal",
        draws=30, tune=30, chains=1, random_seed=1, progressbar=False,
    )  # fmt: skip
    assert post.info["glmm_coordinates"] == GLMM_COORDINATES
    kept = bt.load(post.save(tmp_path / "kept.nc", keep_effects=True))
    assert len(kept.level_effects("item")) == 20  # the version travels with the file
    kept.info["glmm_coordinates"] = 1  # as a file saved before the levels were adapted
    with pytest.raises(bt.ArgumentError, match="earlier bayes_tee"):
        kept.level_effects("item")
