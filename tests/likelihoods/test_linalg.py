"""The marginal likelihood equals the dense multivariate normal of the cell means, exactly."""

import warnings

import numpy as np
import pytest
from scipy import stats

import bayes_tee as bt
from bayes_tee.design.terms import cell_term
from bayes_tee.likelihoods import build_model, marginal_layout, term_levels


def dense_logpdf(design, value):
    """Log N(cell means; mu + fixed, Sigma) with Sigma built term by term from indicator matrices."""
    cells = design.cells
    n = cells["n"].to_numpy(float)
    sd = {t.label: float(value[t.var_name]) for t in design.terms if t.kind != "fixed"}
    ct = cell_term(list(design.terms))
    cov = np.diag(sd[ct.label] ** 2 + sd.get("replicate", 0.0) ** 2 / n)
    for t in design.terms:
        if t.kind == "random" and t.label != ct.label:
            idx, labels = term_levels(design, t)
            Z = np.eye(len(labels))[idx]
            cov += sd[t.label] ** 2 * Z @ Z.T
    mean = np.full(len(cells), float(value["mu"]))
    for t in design.terms:
        if t.kind == "fixed":
            eff = np.asarray(value[t.var_name])
            assert abs(eff.sum()) < 1e-9  # zero-sum level effects
            mean += eff[cells[t.facets[0]].to_numpy()]
    return stats.multivariate_normal(mean, cov).logpdf(cells["mean"].to_numpy())


def design_for(case):
    kw = dict(n_items=14, n_prompts=3, n_judges=2, n_temperatures=2, n_replicates=3, random_seed=5)
    roles = dict(
        outcome="score",
        item="item",
        prompt="prompt",
        judge="judge",
        temperature="temperature",
        replicate="replicate",
    )
    extra = {}
    if case == "categories":
        kw["n_categories"] = 3
        roles["category"] = "category"
    if case == "item_prompt":
        kw.update(n_judges=1, n_temperatures=1, n_replicates=1)
    if case == "random_judge":
        extra["judge_effect"] = "random"
    df = bt.simulate.tee_dgp(**kw)
    rng = np.random.default_rng(0)
    frac = {"few_patterns": 0.002, "item_prompt": 0.1}.get(case, 0.25)
    df = df.drop(index=rng.choice(df.index, size=max(1, int(len(df) * frac)), replace=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.validate_design(df, **{k: v for k, v in roles.items() if v in df}, **extra)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["categories", "few_patterns", "item_prompt", "random_judge"])
def test_marginal_loglik_is_the_dense_gaussian(case):
    design = design_for(case)
    blocks, nested, crossed = marginal_layout(design)
    n_patterns = len(blocks.pattern_n)
    if case in ("categories", "few_patterns"):  # both code paths of the per-item solves
        assert (n_patterns <= 8) == (case == "few_patterns"), n_patterns
    model = build_model(design, bt.priors.get_prior(), method="marginal")
    terms = model.replace_rvs_by_values([model.potentials[0]])
    loglik = model.compile_fn(terms[0], inputs=model.value_vars, point_fn=True, on_unused_input="ignore")
    names = ["mu"] + [t.var_name for t in design.terms]
    values = model.compile_fn(
        model.replace_rvs_by_values([model[k] for k in names]),
        inputs=model.value_vars,
        point_fn=True,
        on_unused_input="ignore",
    )
    rng = np.random.default_rng(1)
    const = -0.5 * design.n_cells * np.log(2 * np.pi)
    start = model.initial_point()  # compiles a function: once
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.7, np.shape(v)) for k, v in start.items()}
        value = dict(zip(names, values(point)))
        assert loglik(point) + const == pytest.approx(dense_logpdf(design, value), rel=1e-9, abs=1e-8)


def test_marginal_layout_separates_nested_and_crossed_terms():
    design = design_for("categories")
    blocks, nested, crossed = marginal_layout(design)
    assert blocks.P == 3 * 2 * 2
    assert {t.label for t in nested} == {"item", "item:prompt", "item:temperature", "item:judge"}
    assert {t.label for t in crossed} == {"prompt", "prompt:temperature", "prompt:judge"}
