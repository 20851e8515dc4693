import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee import DesignError, DesignWarning


def small(**kw):
    return bt.simulate.tee_dgp(
        n_items=6, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2, random_seed=0, **kw
    )


def test_missing_column_names_it_and_suggests():
    df = small()
    with pytest.raises(DesignError, match=r"prompt='promt'.*Did you mean 'prompt'"):
        bt.validate_design(df, outcome="score", item="item", prompt="promt")


def test_nan_outcome_rows_are_dropped_and_counted():
    df = small()
    df.loc[[0, 5, 7], "score"] = np.nan
    with pytest.warns(DesignWarning, match="Dropped 3 row"):
        d = bt.validate_design(df, outcome="score", item="item", prompt="prompt", judge="judge")
    assert d.dropped == {"score is NaN": 3}
    assert d.n_rows == len(df) - 3
    assert not d.balanced
    assert int(d.cells["n"].sum()) == d.n_rows


def test_missing_role_value_is_dropped_and_counted():
    df = small()
    df["judge"] = df["judge"].astype(object)
    df.loc[2, "judge"] = None
    with pytest.warns(DesignWarning):
        d = bt.validate_design(df, outcome="score", item="item", judge="judge")
    assert d.dropped == {"judge (judge) is missing": 1}


def test_non_numeric_outcome_is_an_error_with_a_fix():
    df = small()
    df["score"] = np.where(df["score"] > 0.5, "yes", "no")
    with pytest.raises(DesignError, match=r"not numeric.*astype\(int\)"):
        bt.validate_design(df, outcome="score", item="item")


def test_boolean_outcome_is_accepted():
    df = small()
    df["score"] = df["score"] > 0.5
    d = bt.validate_design(df, outcome="score", item="item", prompt="prompt")
    assert d.binary


def test_single_level_facet_is_dropped_once_with_a_note():
    df = small()
    df["temperature"] = 0.7
    with pytest.warns(DesignWarning, match="temperature column 'temperature' has a single level"):
        d = bt.validate_design(df, outcome="score", item="item", prompt="prompt", temperature="temperature")
    assert "temperature" not in d.facets
    assert all("temperature" not in t.label for t in d.terms)


def test_single_item_is_an_error():
    df = small()
    df["item"] = "same"
    with pytest.raises(DesignError, match="single level"):
        bt.validate_design(df, outcome="score", item="item")


def test_duplicate_role_and_unknown_role_type():
    df = small()
    with pytest.raises(DesignError, match="two roles"):
        bt.validate_design(df, outcome="score", item="item", prompt="item")
    with pytest.raises(DesignError, match="column name"):
        bt.validate_design(df, outcome="score", item=3)


def test_nothing_left_and_constant_outcome():
    df = small()
    df["score"] = np.nan
    with pytest.raises(DesignError, match="No rows left"):
        bt.validate_design(df, outcome="score", item="item")
    df["score"] = 1.0
    with pytest.raises(DesignError, match="constant"):
        bt.validate_design(df, outcome="score", item="item")


def test_item_in_two_categories_is_an_error():
    df = small(n_categories=2)
    df.loc[0, "category"] = "c1" if df.loc[0, "category"] == "c0" else "c0"
    with pytest.raises(DesignError, match="one category"):
        bt.validate_design(df, outcome="score", item="item", category="category")


def test_duplicate_replicate_label_is_an_error():
    df = small()
    df.loc[1, "replicate"] = df.loc[0, "replicate"]
    with pytest.raises(DesignError, match="repeat a"):
        bt.validate_design(
            df, outcome="score", item="item", prompt="prompt", judge="judge", replicate="replicate"
        )


def test_cell_statistics_match_pandas(demo_df):
    d = bt.validate_design(
        demo_df, outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature"
    )
    assert d.balanced and d.n_cells == 40 * 3 * 3 * 2 == d.n_full_cells
    g = demo_df.groupby(["item", "prompt", "temperature", "judge"])["score"]
    np.testing.assert_allclose(np.sort(d.cells["mean"]), np.sort(g.mean()), rtol=1e-12)
    np.testing.assert_allclose(d.cells["ss"].sum(), (g.var(ddof=0) * g.size()).sum(), rtol=1e-10)
    assert d.counts == {
        "item": 40,
        "prompt": 3,
        "temperature": 2,
        "judge": 3,
        "category": 1,
        "position": 1,
        "replicate": 3.0,
    }


def test_zero_spread_cells_are_exact():
    df = small()
    df["score"] = df.groupby(["item", "prompt", "judge"])["score"].transform("mean").round(3)
    d = bt.validate_design(df, outcome="score", item="item", prompt="prompt", judge="judge")
    assert np.all(d.cells["ss"] < 1e-20)


def test_summary_lists_dropped_rows():
    df = small()
    df.loc[0, "score"] = np.nan
    with pytest.warns(DesignWarning):
        d = bt.validate_design(df, outcome="score", item="item")
    s = d.summary()
    assert s.loc[s["what"] == "rows dropped", "value"].item() == 1
    assert isinstance(d.summary(), pd.DataFrame)


@pytest.mark.parametrize("path", ["roles", "formula", "parquet"])
def test_unused_categories_are_no_levels(path, tmp_path):
    """A categorical facet keeps the categories pandas leaves after filtering; they are no levels
    (a phantom judge made the design unbalanced and invented 24 latent cells).
    """
    df = bt.datasets.load("tee_demo")
    df["judge"] = pd.Categorical(df["judge"], categories=[*sorted(df["judge"].unique()), "ghost"])
    roles = dict(outcome="score", item="item", prompt="prompt", judge="judge")
    if path == "formula":
        d = bt.build_design(df, formula="score ~ judge + (1|item) + (1|prompt)")
    elif path == "parquet":
        df.to_parquet(tmp_path / "d.parquet")
        d = bt.build_design(
            str(tmp_path / "d.parquet"), **roles, temperature="temperature", replicate="replicate"
        )
    else:
        d = bt.build_design(df, **roles)
    assert d.levels["judge"] == ("judge1", "judge2", "judge3") and d.balanced


def test_values_that_print_the_same_are_refused_not_merged():
    df = bt.datasets.load("tee_demo")
    df["judge"] = df["judge"].astype(object)
    df.loc[df.index[:5], "judge"] = 1
    df.loc[df.index[5:10], "judge"] = "1"
    with pytest.raises(DesignError, match=r"'judge'.*print the same.*astype\(str\)"):
        bt.validate_design(df, outcome="score", item="item", judge="judge")


@pytest.mark.parametrize("formula", [None, "score ~ (1|item) + (1|judge)"])
def test_a_constant_outcome_is_refused_even_with_rounding(formula):
    """All scores 0.7: the SD is 1e-16 in floating point, not 0; it was fitted (R-hat 1e16)."""
    df = bt.datasets.load("tee_demo").assign(score=0.7)
    with pytest.raises(DesignError, match="constant"):
        bt.build_design(df, formula=formula, **({} if formula else {"outcome": "score", "item": "item"}))


def test_a_formula_on_a_reader_frame_of_several_models_is_refused_not_pooled():
    """The roles path refused this frame; the formula path pooled the models as replicates."""
    df = bt.simulate.systems_dgp(n_systems=2, n_items=10, random_seed=0)
    df.attrs["bayes_tee_roles"] = {"outcome": "score", "item": "item", "judge": "judge"}
    with pytest.raises(DesignError, match="several models"):
        bt.build_design(df, formula="score ~ (1|item) + (1|judge)")
    d = bt.build_design(df, formula="score ~ model + (1|item) + (1|judge) + (1|model:item)", system="model")
    assert d.system == "system"
