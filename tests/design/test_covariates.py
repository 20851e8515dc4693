"""Numeric covariates in a formula: which columns are slopes, their per-cell statistics, the
exact within-cell algebra, the bias helper, and every bad input refused with its fix.
"""

import re

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.design.covariates import MAX_FACTOR_FLOATS
from bayes_tee.design.design import Design
from bayes_tee.design.from_formula import validate_formula
from bayes_tee.likelihoods.registry import choose_method, get_likelihood
from bayes_tee.tee.fit import standardize


def frame(seed=0, n_items=12, reps=2, within=True):
    """Items x 3 systems x 2 judges, ``reps`` calls per cell; ``length`` varies within cells
    unless ``within=False`` (one value per item x system).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for s in range(3):
            base = rng.normal(500, 100)
            for j in range(2):
                for r in range(reps):
                    x = base + (rng.normal(0, 30) if within else 0.0)
                    rows.append(
                        {"item": f"q{i}", "model": f"m{s}", "judge": f"j{j}", "length": x,
                         "score": 0.01 * x + s + rng.normal()}
                    )  # fmt: skip
    return pd.DataFrame(rows)


def test_a_numeric_fixed_column_is_a_slope_and_c_keeps_a_factor():
    df = frame()
    d = validate_formula(df, "score ~ model + length + (1|item)", system="model")
    assert d.covariates is not None and d.covariates.names == ("length",)
    assert [s.label for s in d.covariates.slopes] == ["length"]
    assert "length" not in d.facets and d.covariates.within
    assert np.isclose(d.covariates.center[0], df["length"].mean())
    assert np.isclose(d.covariates.scale[0], df["length"].std())
    # the cells' means of the standardised covariate average back to 0 over the calls
    assert abs(np.average(d.cells["x:length"], weights=d.cells["n"])) < 1e-12
    df["temp"] = np.tile([0.0, 0.7], len(df) // 2)
    f = validate_formula(df, "score ~ C(temp) + (1|item)", warn=False)
    assert f.covariates is None and "temp" in f.facets
    g = validate_formula(df, "score ~ temp + (1|item)", warn=False)
    assert g.covariates.names == ("temp",)


def test_per_level_and_random_slopes_are_read_with_their_facets():
    df = frame()
    d = validate_formula(
        df,
        "score ~ model + length + length:model + (1|item) + (1|judge) + (0 + length|judge)",
        system="model",
    )
    assert [(s.label, s.by, s.kind) for s in d.covariates.slopes] == [
        ("length", None, "fixed"),
        ("length:system", "system", "fixed"),
        ("length|judge", "judge", "random"),
    ]
    assert [s.var_name for s in d.covariates.slopes] == [
        "beta_length",
        "beta_length_system",
        "sigma_slope_length_judge",
    ]
    # (x||g) is (1|g) + (0 + x|g)
    e = validate_formula(df, "score ~ model + (length||judge) + (1|item)", system="model")
    assert [s.label for s in e.covariates.slopes] == ["length", "length|judge"]
    assert any(t.label == "judge" for t in e.terms)


def test_within_cell_statistics_give_the_exact_sum_of_squares():
    df = frame(seed=3)
    d = validate_formula(df, "score ~ model + judge + length + (1|item)", system="model")
    z = (df["length"] - d.covariates.center[0]) / d.covariates.scale[0]
    for b in (0.0, 0.37, -1.2):
        r = df["score"] - b * z
        brute = r.groupby([df["item"], df["model"], df["judge"]]).transform(lambda v: v - v.mean()) ** 2
        ss = (
            d.cells["ss"].sum()
            - 2 * b * d.cells["sxy:length"].sum()
            + b**2 * d.cells["sxx:length:length"].sum()
        )
        assert np.isclose(ss, brute.sum(), rtol=1e-10)


def test_the_gaussian_model_with_a_slope_is_the_per_call_likelihood():
    """The model's within-cell term with a covariate that varies within cells is the per-call
    Gaussian's: the residuals ``y - b z`` about their cell means, at any slope.
    """
    df = frame(seed=4, n_items=6)
    d = validate_formula(df, "score ~ model + judge + length + (1|item)", system="model")
    std, loc, scale = standardize(d)
    m = bt.likelihoods.build_model(std, bt.priors.get_prior(), method="marginal")
    outs = m.replace_rvs_by_values([m["replicate_loglik"], m["sigma_residual"]])
    fn = m.compile_fn(outs, inputs=m.value_vars, point_fn=True, on_unused_input="ignore")
    z = (df["length"] - d.covariates.center[0]) / d.covariates.scale[0]
    cell = [df["item"], df["model"], df["judge"]]
    for b, log_rep in ((0.4, -0.3), (-1.1, 0.2)):
        point = m.initial_point() | {"beta_length": np.array(b), "sigma_residual_log__": np.array(log_rep)}
        y = (df["score"] - loc) / scale - b * z
        dev = y - y.groupby(cell).transform("mean")
        value, rep = fn(point)
        expected = -(len(df) - std.n_cells) * np.log(rep) - (dev**2).sum() / (2 * rep**2)
        assert np.isclose(value, expected, rtol=1e-10)


def test_covariates_choose_a_likelihood_with_slopes_and_refuse_the_others():
    d = validate_formula(frame(), "score ~ model + length + (1|item)", system="model")
    # the items' and the cells' random effects alone: every linear effect integrated out
    assert choose_method(d) == "collapsed"
    crossed = validate_formula(frame(), "score ~ model + length + (1|item) + (1|judge)", system="model")
    assert choose_method(crossed) in ("marginal", "cells")
    with pytest.raises(bt.ArgumentError, match="does not take covariates"):
        get_likelihood("balanced", d)
    with pytest.raises(bt.ArgumentError, match="does not take covariates"):
        get_likelihood("blocks", d)


def test_save_and_load_keep_the_covariates():
    d = validate_formula(frame(), "score ~ model + length + length:judge + judge + (1|item)", system="model")
    back = Design.from_dict(d.to_dict(), d.cells)
    assert back.covariates == d.covariates
    assert back.cells.columns.tolist() == d.cells.columns.tolist()


def test_missing_covariate_values_are_counted_and_dropped():
    df = frame()
    df.loc[[0, 5, 9], "length"] = np.nan
    with pytest.warns(bt.DesignWarning, match="3 row"):
        d = validate_formula(df, "score ~ model + length + (1|item)", system="model")
    assert d.dropped == {"covariate length is missing": 3}
    assert d.n_rows == len(df) - 3


@pytest.mark.parametrize(
    "formula, change, words",
    [
        ("score ~ model + length + (1|item)", {"length": 7.0}, "is constant over the rows used"),
        ("score ~ model + length + (1|item)", {"length": np.inf}, "infinite value"),
        ("score ~ model + (1|item) + (1|judge) + (0 + label|judge)", None, "is not numeric"),
        ("score ~ model + judge + (1|item) + (0 + length|judge)", None, "has as a fixed factor"),
        ("score ~ model + (1|item) + (0 + length|judge)", None, "has no random intercept"),
        ("score ~ model + length:prompt + (1|item)", None, "must be a facet of the model"),
        ("score ~ model + judge + judge:model + (1|item)", None, "(1|judge:model)"),
        ("score ~ model + length + (1|item) + (1|item:length)", None, "write C(length)"),
        ("score ~ model + (1|item) + (1|judge) + (0 + judge|judge)", None, "names a column twice"),
        ("score ~ model + lentext + (1|item)", None, "C(lentext)"),
    ],
)  # fmt: skip
def test_bad_covariates_are_refused_with_the_fix(formula, change, words):
    df = frame()
    df["label"] = "x"
    df["prompt"] = "p"
    df["lentext"] = (df["length"] + 0.5).round(3).astype(str)  # numbers stored as text
    assert df["lentext"].nunique() > MAX_FACTOR_FLOATS
    if change:
        for col, value in change.items():
            df[col] = df[col].astype(float)
            df.loc[:, col] = value if not np.isinf(value) else df[col]
            if np.isinf(value):
                df.loc[2, col] = value
    with pytest.raises(bt.DesignError, match=re.escape(words)):
        validate_formula(df, formula, system="model", warn=False)


def test_a_glmm_covariate_must_be_constant_within_a_cell():
    df = frame(within=True)
    df["win"] = (df["score"] > df["score"].median()).astype(float)
    with pytest.raises(bt.DesignError, match="constant within a cell"):
        validate_formula(df, "win ~ model + length + (1|item)", system="model", family="binomial")
    ok = frame(within=False)
    ok["win"] = (ok["score"] > ok["score"].median()).astype(float)
    d = validate_formula(ok, "win ~ model + length + (1|item)", system="model", family="binomial")
    assert d.covariates is not None and not d.covariates.within


def test_bias_covariates_build_length_position_and_self_preference():
    df = pd.DataFrame(
        {
            "own": [100, 400, 250, 250],
            "ref": [200, 200, 250, 100],
            "slot": ["a", "b", "a", "b"],
            "judge": ["gpt-4o", "gpt-4o", "claude", "claude"],
            "model": ["gpt-4o-mini", "llama", "claude-haiku", "gpt-4o-mini"],
        }
    )
    fam = {"gpt-4o": "openai", "gpt-4o-mini": "openai", "claude": "anthropic", "claude-haiku": "anthropic"}
    out = bt.bias_covariates(df, length="own", reference_length="ref", position="slot", judge="judge",
                             system="model", families=fam)  # fmt: skip
    diff = np.array([-100, 200, 0, 150.0])
    assert np.allclose(out["length"], np.tanh(diff / diff.std(ddof=1)))
    assert out["position"].tolist() == [0.5, -0.5, 0.5, -0.5]
    assert out["self_preference"].tolist() == [1.0, 0.0, 1.0, 0.0]
    logs = bt.bias_covariates(df, length="own")["length"]
    assert np.isclose(logs.mean(), 0.0) and np.isclose(logs[1] - logs[0], np.log(4))
    assert "length" not in df.columns  # a copy
    with pytest.raises(bt.DesignError, match="must hold numbers"):
        bt.bias_covariates(df, length="slot")
    with pytest.raises(bt.DesignError, match="first="):
        bt.bias_covariates(df.assign(slot=["x", "y", "x", "y"]), position="slot")
    with pytest.raises(bt.DesignError, match="judge= and system="):
        bt.bias_covariates(df, families=fam)


def test_a_level_whose_covariate_never_varies_is_said():
    df = frame(within=False)
    df.loc[df["model"] == "m0", "length"] = 500.0  # the reference system, at its own length
    with pytest.warns(bt.DesignWarning, match=r"length:system: covariate 'length' takes one value .*'m0'"):
        validate_formula(df, "score ~ model + length + length:model + (1|item)", system="model")
