"""Few-level GLMM terms: the swept terms' data-adapted coordinates (glmm_layout.sweep_adaptation)
find the data's level effects, fall back to plain non-centring where the data bound a level on
one side only, and leave default fits of small binary designs without a divergence.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee._core.density import zerosum_basis
from bayes_tee.families.binomial import BINOMIAL
from bayes_tee.likelihoods.logit_glmm.density import crossing_basis
from bayes_tee.likelihoods.logit_glmm.layout import _interaction_part, glmm_terms
from bayes_tee.likelihoods.registry import LIKELIHOODS
from bayes_tee.tee.fit import sampler_settings

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate")
COMPONENTS = {
    "item": 1.0,
    "category": 0.0,
    "item:prompt": 0.09,
    "item:temperature": 0.0,
    "prompt:temperature": 0.0,
    "item:judge": 0.09,
    "prompt:judge": 0.0225,
    "cell": 0.04,
}


def _binary(n_items: int, n_prompts: int, prompt_sd: float, seed: int, base: float = 0.86):
    return bt.simulate.tee_dgp(
        n_items=n_items,
        n_prompts=n_prompts,
        n_judges=3,
        n_temperatures=1,
        n_replicates=5,
        components=COMPONENTS | {"prompt": prompt_sd**2},
        judge_effects=np.array([-0.3, 0.0, 0.3]),
        mu=float(np.log(base / (1 - base))),
        outcome="logit",
        random_seed=seed,
    )


def _terms(df, roles=ROLES):
    d = bt.validate_design(df, **roles, family="binomial")
    return {g.term.label: g for g in glmm_terms(d)}


#: Without the judges: the prompts are a swept main effect no interaction is crossed on (with
#: them, prompt x judge is, and the prompts' coordinates are crossed_kernel's).
NO_JUDGES = {k: v for k, v in ROLES.items() if k not in ("judge", "replicate")}


def _known_prompts(n_items: int, prompts: np.ndarray, seed: int) -> pd.DataFrame:
    """Binary calls with known prompt effects (items SD 1, item x prompt and item x judge 0.3)."""
    rng = np.random.default_rng(seed)
    P, J, R = len(prompts), 3, 5
    i, p, j, _ = np.meshgrid(np.arange(n_items), np.arange(P), np.arange(J), np.arange(R), indexing="ij")
    eta = (
        1.8
        + rng.normal(0, 1.0, n_items)[i]
        + prompts[p]
        + np.array([-0.3, 0.0, 0.3])[j]
        + rng.normal(0, 0.3, (n_items, P))[i, p]
        + rng.normal(0, 0.3, (n_items, J))[i, j]
    )
    y = (rng.random(eta.shape) < 1 / (1 + np.exp(-eta))).astype(int)
    return pd.DataFrame(
        {
            "item": i.ravel(),
            "prompt": p.ravel(),
            "judge": j.ravel(),
            "replicate": _.ravel(),
            "score": y.ravel(),
        }
    ).astype({"item": str, "prompt": str, "judge": str})


def test_adapted_coordinates_find_the_prompt_effects_and_strip_interactions_of_their_margins():
    prompts = np.array([-1.0, -0.2, 0.4, 0.8])
    df = _known_prompts(400, prompts, seed=3)
    g = _terms(df, NO_JUDGES)["prompt"]
    assert g.swept and not g.centred[0] and g.info > 20  # 6,000 calls a prompt
    # the data's coordinates, mapped back to levels, are the prompt effects (attenuation undone)
    levels = zerosum_basis(4) @ g.v_hat
    np.testing.assert_allclose(levels, prompts - prompts.mean(), atol=0.15)
    # with the judges, prompt x judge is crossed on both: its coordinates are the levels' totals,
    # whose prompt margins are the prompt effects and whose interaction part is only noise here
    terms = _terms(df)
    pj = terms["prompt:judge"]
    assert pj.crossed and terms["prompt"].info == 0.0
    R = crossing_basis(pj, tuple(len(terms[f].labels) if f in terms else 3 for f in pj.term.facets))
    rotated = R.T @ pj.v_hat
    first = pj.term.facets.index("prompt") * 2  # the prompt margins' columns: 3 first, or after the judges' 2
    margins = zerosum_basis(4) @ rotated[first : first + 3] / np.sqrt(3)
    np.testing.assert_allclose(margins, prompts - prompts.mean(), atol=0.15)
    assert np.abs(rotated[5:]).max() < 0.3
    # an additive 2 x 2 table has no interaction part; a pure interaction keeps all of it
    additive = np.add.outer(np.arange(4.0), np.arange(3.0)).ravel()
    codes = {"prompt": np.repeat(np.arange(4), 3), "judge": np.tile(np.arange(3), 4)}
    fake = pj.__class__(**{**pj.__dict__, "cell_level": np.arange(12)})
    np.testing.assert_allclose(_interaction_part(additive, fake, codes), 0.0, atol=1e-12)
    pure = np.outer([1.0, -1.0, 1.0, -1.0], [1.0, 0.0, -1.0]).ravel()
    np.testing.assert_allclose(_interaction_part(pure, fake, codes), pure, atol=1e-12)


def test_levels_seen_one_sided_leave_the_mean_precision_and_a_majority_turns_it_off():
    df = _binary(60, 3, 0.3, seed=4)
    both = _terms(df, NO_JUDGES)["prompt"].info
    first, second = df["prompt"].unique()[:2]
    df.loc[df["prompt"] == first, "score"] = 1  # every call of one prompt a success
    g = _terms(df, NO_JUDGES)["prompt"]
    assert g.swept and 0 < g.info and g.info != both  # the two other prompts' precision
    df.loc[df["prompt"] == second, "score"] = 0  # and every call of another a failure
    assert _terms(df, NO_JUDGES)["prompt"].info == 0.0  # two of three one-sided: plain non-centring


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_prompts", "prompt_sd", "seed", "before"),
    [(4, 0.15, 1, "issue 40's design: 1 divergence")],
)
def test_small_binary_designs_fit_without_divergences_at_the_defaults(n_prompts, prompt_sd, seed, before):
    """Issue 40's design (80 items x 4 prompts x 3 judges x 5 calls, base rate 0.86, prompt SD
    0.15): a default fit that diverged before the adapted coordinates (``before``) is clean;
    the other designs are in ``benchmarks/small_facets.py``.
    """
    df = _binary(80, n_prompts, prompt_sd, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        post = bt.fit_posterior(df, **ROLES, family="binomial", random_seed=seed, progressbar=False)
    d = post.diagnostics()
    assert d["divergences"] == 0, before
    assert d["max_rhat"] <= 1.01 and d["min_ess_bulk"] >= 400, d


def test_the_adapted_density_survives_an_sd_that_underflows_to_zero():
    """Warm-up can propose log SDs far below any data's scale; the adapted coordinates must not
    divide by the SD there (a ZeroDivisionError in the kernel stops every chain).
    """
    from bayes_tee.likelihoods.logit_glmm.density import BinomialDensity

    df = _binary(30, 3, 0.5, seed=5)
    dens = BinomialDensity(bt.validate_design(df, **ROLES, family="binomial"), bt.priors.get_prior())
    x = dens.initial_point(np.random.default_rng(0))
    x[dens.layout.slices["sigma_prompt"]] = -800.0  # exp(-800) == 0.0
    value, grad = dens.logp_grad(x)
    assert np.isfinite(value) and np.isfinite(grad).all()


def test_the_glmm_samples_at_0_9_unless_its_few_level_terms_need_0_95():
    """``likelihoods.levels.glmm_accept``: 0.95 with a two-level shared term, or a term of at most
    four levels whose calls' empirical logits spread with an SD of at least 1; else the family's 0.9.
    """
    binomial, quadrature = LIKELIHOODS["binomial"], LIKELIHOODS["binomial_quadrature"]

    def target(df, lk=binomial, **kw):
        d = bt.validate_design(df, **ROLES, family="binomial")
        return sampler_settings(BINOMIAL, likelihood_accept=lk.accept(d, "nutpie"), **kw).target_accept

    close, spread, two = _binary(40, 4, 0.1, seed=2), _binary(40, 4, 3.0, seed=2), _binary(40, 2, 0.1, seed=2)

    def rough_sd(df):  # the SD of the prompts' empirical logits
        k = df.groupby("prompt")["score"].agg(["sum", "count"])
        return float(np.log((k["sum"] + 0.5) / (k["count"] - k["sum"] + 0.5)).std())

    assert rough_sd(spread) >= 1.0 > rough_sd(close)
    assert target(close) == 0.9 and target(spread) == 0.95 and target(two) == 0.95
    assert target(close, quadrature) == 0.95  # the quadrature likelihood keeps 0.95
    assert target(spread, target_accept=0.8) == 0.8  # the caller's own wins
    # five prompts (Messing 2026's designs) are beyond the rule's four levels
    assert target(_binary(40, 5, 3.0, seed=2)) == 0.9
