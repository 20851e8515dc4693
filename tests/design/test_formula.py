"""Formulas: parsing, the designs they describe, identifiability errors, and the roles API as
the TEE shortcut that writes its formula.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.design.formula import parse_formula
from bayes_tee.design.from_formula import validate_formula
from bayes_tee.likelihoods.anova import strata

NESTED = dict(
    levels={"item": 24, "evaluator": 4, "prompt": 3, "run": 3},
    variances={"item": 1.0, "evaluator": 0.3, "prompt": 0.2, "evaluator:prompt:run": 0.25},
    nested={"run": ("evaluator", "prompt")},
    residual=0.5,
)


def test_parse_expands_nesting_and_keeps_fixed_factors():
    f = parse_formula("y ~ 1 + judge + temperature + (1|item) + (1 | a/b/c) + (1|item:judge)")
    assert f.outcome == "y"
    assert f.fixed == ("judge", "temperature")
    assert f.random == (("item",), ("a",), ("a", "b"), ("a", "b", "c"), ("item", "judge"))
    assert f.columns == ("judge", "temperature", "item", "a", "b", "c")


@pytest.mark.parametrize(
    "text, words",
    [
        ("score (1|item)", "outcome ~ terms"),
        ("score ~ judge", "no random term"),
        ("score ~ (x|item)", "(1|item) + (0 + x|item)"),
        ("score ~ (1 + x|item)", "Correlated random intercepts and slopes"),
        ("score ~ a*b + (1|item)", "a + b + a:b"),
        ("score ~ a:b:c + (1|item)", "a covariate and one facet"),
        ("score ~ (0 + x|a:b) + (1|item)", "over one facet"),
        ("score ~ x + C(x) + (1|item)", "appears twice"),
        ("score ~ (1|item) + (1|item)", "appears twice"),
        ("score ~ (1|item) + (1|replicate)", "reserved"),
        ("score ~ (1|item) + (1|my col)", "not a column name"),
        ("score ~ (1|item", "Unbalanced parentheses"),
        ("score ~ (1|item)) + (1|prompt)", "Unbalanced parentheses"),
        ("score ~ (1|item) + (1|score)", "is the formula's outcome and also one of its terms"),
        ("score ~ score + (1|item)", "is the formula's outcome and also one of its terms"),
    ],
)
def test_parse_errors_name_the_fix(text, words):
    with pytest.raises(bt.DesignError, match=re.escape(words)):
        parse_formula(text)


def test_main_effects_design_has_no_interactions():
    df = bt.simulate.gstudy_dgp(
        {"item": 12, "evaluator": 3, "prompt": 2},
        {"item": 1.0, "evaluator": 0.2, "prompt": 0.1},
        random_seed=1,
    )
    d = validate_formula(df, "score ~ (1|item) + (1|evaluator) + (1|prompt)")
    assert [t.label for t in d.terms] == ["item", "evaluator", "prompt", "residual"]
    assert d.balanced and d.facets == ("item", "evaluator", "prompt")
    # one call per cell: the residual is the cell-level error, indexed by every facet
    assert d.terms[-1].facets == ("item", "evaluator", "prompt")


def test_nested_facet_is_recoded_within_its_nest_and_said():
    df = bt.simulate.gstudy_dgp(**NESTED, random_seed=2)
    assert df["run"].nunique() == 4 * 3 * 3  # labels unique within evaluator x prompt
    with pytest.warns(bt.DesignWarning, match=r"\(1\|run\) is fitted as \(1\|evaluator:prompt:run\)"):
        d = validate_formula(df, "score ~ (1|item) + (1|evaluator) + (1|prompt) + (1|run)")
    assert len(d.levels["run"]) == 3 and d.balanced
    assert [t.facets for t in d.terms][3] == ("evaluator", "prompt", "run")
    # the strata of a balanced nested design: the run term reaches its own and its nest's strata
    st = strata(d)
    j = list(st.var_terms).index("evaluator:prompt:run")
    reached = [n for n, c in zip(st.names, st.coef[:, j]) if c > 0]
    assert any("evaluator:prompt" in n for n in reached) and all("item" not in n for n in reached)


def test_confounded_terms_get_one_error_naming_both():
    df = bt.simulate.gstudy_dgp({"item": 10, "evaluator": 3}, {"item": 1.0}, random_seed=0)
    df["rater"] = df["evaluator"].map({"e0": "r0", "e1": "r1", "e2": "r2"})  # a relabelled copy
    with pytest.raises(bt.DesignError, match="'evaluator' and 'rater' group the calls identically"):
        validate_formula(df, "score ~ (1|item) + (1|evaluator) + (1|rater)")
    with pytest.raises(bt.DesignError, match="confounded with the residual"):
        validate_formula(df, "score ~ (1|item) + (1|evaluator) + (1|item:evaluator)")


def test_missing_column_names_the_closest_and_rows_are_counted():
    df = bt.simulate.gstudy_dgp({"item": 10, "evaluator": 3}, {"item": 1.0}, random_seed=0)
    with pytest.raises(bt.DesignError, match="Did you mean 'evaluator'"):
        validate_formula(df, "score ~ (1|item) + (1|evaluater)")
    df.loc[[0, 5], "score"] = np.nan
    df.loc[7, "evaluator"] = None
    with pytest.warns(bt.DesignWarning, match="Dropped 2 row"):
        d = validate_formula(df, "score ~ (1|item) + (1|evaluator)")
    assert d.dropped == {"score is NaN": 2, "evaluator is missing": 1} and d.n_rows == 27


def test_object_column_is_the_item_facet_and_roles_rename_columns():
    df = bt.simulate.gstudy_dgp({"essay": 10, "rater": 3}, {"essay": 1.0, "rater": 0.1}, random_seed=0)
    with pytest.warns(bt.DesignWarning, match="'essay' is the object of measurement"):
        d = validate_formula(df, "score ~ (1|essay) + (1|rater)")
    assert [t.label for t in d.terms] == ["item", "rater", "residual"]
    d2 = validate_formula(df, "score ~ (1|essay) + (1|rater)", item="essay", judge="rater")
    assert [t.label for t in d2.terms] == ["item", "judge", "residual"] and d2.judge_effect == "random"
    assert d2.columns["judge"] == "rater"


def test_items_category_is_found_and_a_binomial_formula_checks_its_outcome():
    df = bt.datasets.load("tee_demo")
    d = validate_formula(df, "score ~ judge + (1|item) + (1|category) + (1|prompt)")
    assert d.categories is not None and [t.label for t in d.terms][:2] == ["item", "category"]
    with pytest.raises(bt.DesignError, match="its interactions are not supported"):
        validate_formula(df, "score ~ (1|item) + (1|category) + (1|category:judge)")
    with pytest.raises(bt.DesignError, match="family='binomial' needs a 0/1 outcome"):
        validate_formula(df, "score ~ (1|item)", family="binomial")


def test_fixed_factor_nested_is_refused():
    df = bt.simulate.gstudy_dgp(**NESTED, random_seed=2)
    with pytest.raises(bt.DesignError, match="a nested facet must be random"):
        validate_formula(df, "score ~ run + (1|item) + (1|evaluator)")


def test_roles_formula_describes_the_same_model(demo_df):
    """The roles API writes its formula; that formula gives the same terms and sufficient
    statistics (the residual renamed), so the same likelihood.
    """
    from tests.conftest import DEMO_ROLES

    d = bt.validate_design(demo_df, **DEMO_ROLES, warn=False)
    post = bt.Posterior(None, d, bt.priors.get_prior(), "balanced")
    assert post.formula == (
        "score ~ judge + temperature + (1|item) + (1|category) + (1|prompt) + (1|item:prompt) + "
        "(1|item:temperature) + (1|prompt:temperature) + (1|item:judge) + (1|prompt:judge) + "
        "(1|item:prompt:temperature:judge)"
    )
    roles = {k: v for k, v in DEMO_ROLES.items() if k not in ("outcome", "replicate")}
    d2 = validate_formula(demo_df, post.formula, **roles, warn=False)
    rename = {"cell": "item:prompt:temperature:judge", "replicate": "residual"}
    assert sorted(rename.get(t.label, t.label) for t in d.terms) == sorted(t.label for t in d2.terms)
    s1, s2 = strata(d), strata(d2)
    assert np.allclose(np.sort(s1.ss), np.sort(s2.ss)) and np.allclose(np.sort(s1.df), np.sort(s2.df))


@pytest.mark.slow
def test_roles_fit_equals_its_formula_fit(demo_df, demo_post):
    from tests.conftest import DEMO_ROLES

    roles = {k: v for k, v in DEMO_ROLES.items() if k not in ("outcome", "replicate")}
    post = bt.fit_posterior(demo_df, formula=demo_post.formula, **roles, random_seed=1, progressbar=False)
    assert post.method == demo_post.method == "balanced"
    a, b = demo_post.component_draws(), post.component_draws()
    rename = {"cell": "item:prompt:temperature:judge", "replicate": "residual"}
    for k in a["component"].values:
        xa, xb = a.sel(component=k).values.ravel(), b.sel(component=rename.get(k, k)).values.ravel()
        assert abs(np.median(xa) - np.median(xb)) < 0.1 * xa.std(), k


def test_an_unknown_outcome_is_named_as_the_outcome():
    df = bt.simulate.gstudy_dgp({"item": 10, "evaluator": 3}, {"item": 1.0}, random_seed=0)
    with pytest.raises(bt.DesignError, match=r"outcome 'scor' Did you mean 'score'") as err:
        validate_formula(df, "scor ~ (1|item) + (1|evaluatr)")
    assert "term column 'evaluatr' Did you mean 'evaluator'" in str(err.value)
    assert "two roles" not in str(err.value)


@pytest.mark.parametrize("how", ["written", "left after missing values"])
def test_a_one_level_facet_is_refused_not_invented(how):
    df = bt.simulate.gstudy_dgp({"item": 12, "judge": 3, "prompt": 2}, {"item": 1.0}, random_seed=0)
    if how == "written":
        df = df[df["judge"] == df["judge"].iloc[0]]
    else:
        df.loc[df["judge"] != df["judge"].iloc[0], "judge"] = None
    with pytest.raises(bt.DesignError, match="Column 'judge' has a single level") as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DesignWarning)
            validate_formula(df, "score ~ (1|item) + (1|prompt) + (1|judge)")
    assert ("dropped with missing values" in str(err.value)) == (how != "written")


def test_the_readers_losses_reach_the_formula_design():
    df = bt.simulate.gstudy_dgp({"item": 10, "prompt": 3}, {"item": 1.0}, random_seed=0)
    df = df.assign(model="m")
    df.attrs[bt.design.roles.ROLES_ATTR] = {"outcome": "score", "item": "item", "prompt": "prompt"}
    df.attrs["dropped_by_model"] = {"m": {"the sample errored": 4}}
    with pytest.warns(bt.DesignWarning, match="4 row"):
        d = bt.build_design(df, formula="score ~ (1|item) + (1|prompt)")
    assert d.dropped == {"the sample errored (in the logs)": 4}
    with pytest.warns(bt.DesignWarning, match="4 row"):
        roles = bt.build_design(df)
    assert roles.dropped == d.dropped


@pytest.mark.parametrize("formula", [None, "score ~ (1|item) + (1|prompt)"])
def test_duplicate_column_names_and_huge_scores_are_refused(formula):
    df = bt.simulate.gstudy_dgp({"item": 10, "prompt": 3}, {"item": 1.0}, random_seed=0)
    roles = {} if formula else {"outcome": "score", "item": "item", "prompt": "prompt"}
    twice = pd.concat([df, df[["prompt"]]], axis=1)
    with pytest.raises(bt.DesignError, match=r"Column name\(s\) \['prompt'\] appear more than once"):
        bt.build_design(twice, formula=formula, **roles)
    with pytest.raises(bt.DesignError, match=r"values as large as \d\.?\d*e\+250.*Rescale"):
        bt.build_design(df.assign(score=df["score"] * 1e250), formula=formula, **roles)
