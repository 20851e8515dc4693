"""Parquet paths and dask DataFrames give the design pandas gives, without the rows in memory."""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.design.out_of_core import is_out_of_core, validate_dask
from bayes_tee.likelihoods import LIKELIHOODS
from bayes_tee.tee.fit import standardize

dd = pytest.importorskip("dask.dataframe")

ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
    category="category",
)


def messy(seed=0):
    """Calls lost at random, an empty cell, NaN scores, a missing judge label, unequal categories."""
    df = bt.simulate.tee_dgp(
        n_items=14,
        n_prompts=3,
        n_judges=2,
        n_temperatures=2,
        n_replicates=3,
        n_categories=3,
        random_seed=seed,
    )
    rng = np.random.default_rng(seed)
    df = df.drop(index=rng.choice(df.index, size=len(df) // 10, replace=False))
    df = df[~((df["item"] == df["item"].iloc[0]) & (df["prompt"] == df["prompt"].iloc[0]))]
    df = df[df["item"] != df["item"].unique()[-1]].reset_index(drop=True)
    df["score"] = 50 + 10 * df["score"]
    df.loc[df.index[::37], "score"] = np.nan
    df["judge"] = df["judge"].astype(object)
    df.loc[df.index[5], "judge"] = None
    return df


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return fn(*args, **kw)


def assert_same_design(a, b):
    assert a.facets == b.facets and a.levels == b.levels and a.terms == b.terms
    assert a.categories == b.categories
    np.testing.assert_array_equal(a.item_category, b.item_category)
    assert a.dropped == b.dropped and a.n_rows == b.n_rows and a.balanced == b.balanced
    pd.testing.assert_frame_equal(
        a.cells[list(a.facets) + ["n"]], b.cells[list(b.facets) + ["n"]], check_dtype=False
    )
    np.testing.assert_allclose(a.cells["mean"], b.cells["mean"], rtol=1e-12)
    np.testing.assert_allclose(a.cells["ss"], b.cells["ss"], rtol=1e-9, atol=1e-9)
    assert a.y_mean == pytest.approx(b.y_mean, rel=1e-12)
    assert a.y_sd == pytest.approx(b.y_sd, rel=1e-12)


def test_parquet_dataset_and_dask_frame_give_the_pandas_design(tmp_path):
    df = messy()
    expected = quiet(bt.validate_design, df, **ROLES)
    (tmp_path / "calls").mkdir()
    for j, part in enumerate(np.array_split(np.arange(len(df)), 3)):  # a dataset of three files
        df.iloc[part].to_parquet(tmp_path / "calls" / f"part.{j}.parquet")
    from_path = quiet(validate_dask, tmp_path / "calls", **ROLES)
    from_frame = quiet(validate_dask, dd.from_pandas(df, npartitions=4), **ROLES)
    assert_same_design(from_path, expected)
    assert_same_design(from_frame, expected)
    assert from_path.row_cell is None and expected.dropped  # rows were dropped and counted
    assert set(expected.dropped) == {"score is NaN", "judge (judge) is missing"}


def test_single_parquet_file_and_binary_outcome(tmp_path):
    df = messy(1)
    df["score"] = (df["score"] > 50).astype(float).where(df["score"].notna())
    df.to_parquet(tmp_path / "calls.parquet")
    kw = dict(ROLES, family="binomial")
    assert_same_design(
        quiet(validate_dask, str(tmp_path / "calls.parquet"), **kw), quiet(bt.validate_design, df, **kw)
    )


def test_duplicated_replicate_labels_are_named(tmp_path):
    df = messy()
    df = pd.concat([df, df.iloc[1:4]])  # rows 0 and 5 are dropped (NaN score, no judge)
    with pytest.raises(bt.DesignError, match="3 row\\(s\\) repeat a \\(cell, 'replicate'\\)"):
        quiet(validate_dask, dd.from_pandas(df, npartitions=2), **ROLES)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(prompt="prompts"), "Column\\(s\\) not in the data: prompt='prompts'"),
        (dict(outcome="verdict"), "Outcome column 'verdict' is not numeric"),
    ],
)
def test_bad_input_errors_name_the_column(change, message):
    df = messy().assign(verdict="A")
    with pytest.raises(bt.DesignError, match=message):
        validate_dask(dd.from_pandas(df, npartitions=2), **{**ROLES, **change})


def test_missing_path_and_rows_method_say_what_to_do(tmp_path):
    with pytest.raises(bt.DesignError, match="No parquet file or dataset"):
        validate_dask(tmp_path / "nowhere", **ROLES)
    messy().to_parquet(tmp_path / "c.parquet")
    with pytest.raises(ValueError, match="method='rows'.*pandas DataFrame"):
        quiet(bt.fit_posterior, tmp_path / "c.parquet", **ROLES, method="rows", progressbar=False)
    assert is_out_of_core(tmp_path) and not is_out_of_core(messy())


def test_fit_posterior_on_parquet_matches_pandas(tmp_path):
    df = messy()
    df.to_parquet(tmp_path / "c.parquet")
    kw = dict(ROLES, chains=2, tune=300, draws=300, random_seed=4, progressbar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        a = bt.fit_posterior(tmp_path / "c.parquet", **kw)
        b = bt.fit_posterior(df, **kw)
        ca, cb = a.components(), b.components()
    assert a.method == b.method == "blocks" and a.design.n_rows == b.design.n_rows
    # the same posterior (the designs are equal to 1e-12; draws differ by Monte Carlo error)
    assert ((ca["median"] >= cb["low"]) & (ca["median"] <= cb["high"])).all()
    dens = [LIKELIHOODS["blocks"].density(standardize(p.design)[0], p.priors) for p in (a, b)]
    x = dens[1].initial_point(np.random.default_rng(0))
    np.testing.assert_allclose(dens[0].logp_grad(x)[1], dens[1].logp_grad(x)[1], rtol=1e-8, atol=1e-10)


def test_a_distributed_client_computes_the_cells_on_its_cluster(tmp_path):
    """With client=, both passes run as tasks on the cluster's workers (the task stream sees
    them) and the design is the pandas one; a fit through it samples here.
    """
    distributed = pytest.importorskip("distributed")
    df = messy(2)
    (tmp_path / "calls").mkdir()
    for j, part in enumerate(np.array_split(np.arange(len(df)), 4)):
        df.iloc[part].to_parquet(tmp_path / "calls" / f"part.{j}.parquet")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        with distributed.get_task_stream(client) as stream:
            design = quiet(validate_dask, tmp_path / "calls", **ROLES, client=client)
        assert_same_design(design, quiet(bt.validate_design, df, **ROLES))
        workers = {t["worker"] for t in stream.data}
        assert len(stream.data) > 0 and workers <= set(client.scheduler_info()["workers"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DiagnosticWarning)  # 100 draws: a smoke fit
            post = quiet(
                bt.fit_posterior, tmp_path / "calls", **ROLES, client=client, draws=100, tune=100,
                chains=2, random_seed=1, progressbar=False,
            )  # fmt: skip
        assert post.design.n_rows == design.n_rows
    with pytest.raises(bt.DesignError, match="dask.distributed Client"):
        validate_dask(tmp_path / "calls", **ROLES, client="tcp://localhost:8786")
    with pytest.raises(bt.DesignError, match="client= computes out-of-core data"):
        bt.fit_posterior(df, **ROLES, client=client)


def test_what_is_not_parquet_gets_one_file_error(tmp_path):
    pytest.importorskip("pyarrow")
    df = bt.simulate.gstudy_dgp({"item": 10, "prompt": 3}, {"item": 1.0}, random_seed=0)
    roles = dict(outcome="score", item="item", prompt="prompt")
    (tmp_path / "scores.csv").write_text(df.to_csv(index=False))
    (tmp_path / "junk.parquet").write_bytes(bytes(range(256)) * 3)
    (tmp_path / "empty").mkdir()
    parts = tmp_path / "parts"
    parts.mkdir()
    df.iloc[:15].to_parquet(parts / "a.parquet")
    df.iloc[15:].drop(columns="prompt").to_parquet(parts / "b.parquet")
    cases = {
        "scores.csv": r"scores.csv' is not a parquet file .*pandas.read_csv",
        "junk.parquet": r"junk.parquet' is not a parquet file",
        "empty": r"No parquet files in the folder",
        "parts": r"b.parquet' of the parquet dataset .* has no column\(s\) \['prompt'\]",
        "missing": r"No parquet file or dataset",
    }
    for name, words in cases.items():
        with pytest.raises(bt.FileError, match=words):
            bt.build_design(str(tmp_path / name), **roles)
    huge = tmp_path / "huge.parquet"
    df.assign(score=df["score"] * 1e200).to_parquet(huge)
    with pytest.raises(bt.DesignError, match=r"values as large as .*e\+200.*Rescale"):
        bt.build_design(str(huge), **roles)
