import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayes_tee as bt


def test_save_load_roundtrip(demo_post, tmp_path):
    path = demo_post.save(tmp_path / "demo.nc")
    again = bt.load(path)
    pd.testing.assert_frame_equal(again.components(), demo_post.components())
    pd.testing.assert_frame_equal(again.theta(), demo_post.theta())
    pd.testing.assert_frame_equal(again.shares(n_items=200), demo_post.shares(n_items=200))
    assert again.priors == demo_post.priors and again.method == demo_post.method
    assert again.design.counts == demo_post.design.counts


def test_load_refuses_foreign_files(tmp_path):
    path = tmp_path / "other.nc"
    xr.Dataset({"x": ("a", np.arange(3.0))}).to_netcdf(path)
    with pytest.raises(bt.FileError, match="not a bayes_tee posterior"):
        bt.load(path)
    with pytest.raises(FileNotFoundError):  # also a bt.FileError
        bt.load(tmp_path / "missing.nc")
    with pytest.raises(bt.MissingFileError):
        bt.load(tmp_path / "missing.nc")


def test_damaged_posteriors_get_one_file_error(demo_post, tmp_path):
    good = demo_post.save(tmp_path / "good.nc")
    (tmp_path / "junk.nc").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "empty.nc").write_bytes(b"")
    for name in ("junk.nc", "empty.nc"):
        with pytest.raises(bt.FileError, match=f"{name}' is not a bayes_tee posterior"):
            bt.load(tmp_path / name)
    tree = xr.open_datatree(good, engine="h5netcdf").load()
    meta = json.loads(tree["posterior"].attrs["bayes_tee"])
    damaged = {
        "text.nc": "{not json",
        "lacks.nc": json.dumps({k: v for k, v in meta.items() if k != "design"}),
    }
    for name, raw in damaged.items():
        copy = tree.copy()
        copy["posterior"].attrs["bayes_tee"] = raw
        copy.to_netcdf(tmp_path / name, engine="h5netcdf")
        with pytest.raises(bt.FileError, match="damaged bayes_tee posterior"):
            bt.load(tmp_path / name)


@pytest.mark.slow
def test_failed_diagnostics_are_visible_everywhere():
    df = bt.simulate.tee_dgp(
        n_items=10, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2, random_seed=5
    )
    with pytest.warns(bt.DiagnosticWarning, match="ESS"):
        post = bt.fit_posterior(
            df,
            outcome="score",
            item="item",
            prompt="prompt",
            judge="judge",
            chains=2,
            tune=30,
            draws=20,
            random_seed=1,
            progressbar=False,
        )
    for call in (post.components, post.shares, post.theta):
        with pytest.warns(bt.DiagnosticWarning):
            table = call()
        assert "warning" in table.attrs and not table.attrs["diagnostics_ok"]
    assert "DIAGNOSTICS FAILED" in repr(post)
    assert "WARNING" in post.summary()
    assert "failed its convergence diagnostics" in post.writeup()


def test_shares_at_other_designs(demo_post):
    base = demo_post.shares()
    more = demo_post.shares(n_items=4000, n_prompts=300, n_replicates=100)
    vb, vm = base.attrs["var_theta"]["median"], more.attrs["var_theta"]["median"]
    assert vm < vb
    s = more.set_index("component")["share_median"]
    assert s[["judge", "temperature"]].sum() > 0.8
    with pytest.raises(ValueError, match="at least 1"):
        demo_post.shares(n_items=0)


def test_plot_shares_returns_a_figure(demo_post, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    fig = demo_post.plot_shares()
    fig.savefig(tmp_path / "s.png")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert set(labels) == {t.label for t in demo_post.terms}
    fig2 = demo_post.plot_shares(kind="observation")
    assert "per-call" in fig2.axes[0].get_title()


def test_reference_posterior_in_models_loads():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "models" / "tee_demo.nc"
    post = bt.load(path)
    assert post.diagnostics()["ok"]
    comp = post.components().set_index("component")
    truth = bt.datasets.truth("tee_demo")
    inside = sum(comp.loc[k, "low"] <= v <= comp.loc[k, "high"] for k, v in truth.items())
    assert inside >= 10


DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_file_written_by_version_0_1_loads_as_a_datatree(tmp_path):
    """tests/data/tee_demo_v0_1.nc was written by bayes_tee 0.1.0 (PyMC 5, ArviZ 0.x InferenceData)."""
    old = bt.load(DATA / "tee_demo_v0_1.nc")
    assert isinstance(old.idata, xr.DataTree)
    assert json.loads(old.idata["posterior"].attrs["bayes_tee"])["version"] == "0.1.0"
    assert old.diagnostics()["ok"] and old.method == "balanced"
    again = bt.load(old.save(tmp_path / "resaved.nc"))
    pd.testing.assert_frame_equal(again.components(), old.components())
    assert json.loads(again.idata["posterior"].attrs["bayes_tee"])["version"] == bt.__version__


def test_an_unknown_format_is_refused_naming_the_version_and_the_fix(tmp_path):
    tree = xr.open_datatree(DATA / "tee_demo_v0_1.nc", engine="h5netcdf").load()
    meta = json.loads(tree["posterior"].attrs["bayes_tee"])
    tree["posterior"].attrs["bayes_tee"] = json.dumps(
        {**meta, "format": "bayes_tee-posterior-9", "version": "9.0"}
    )
    tree.to_netcdf(tmp_path / "future.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match=r"bayes_tee 9\.0 .*bayes-tee fit"):
        bt.load(tmp_path / "future.nc")


def test_saving_onto_a_folder_or_an_unwritable_place_says_so(tmp_path):
    post = bt.load(Path(__file__).resolve().parents[2] / "models" / "tee_demo.nc")
    with pytest.raises(bt.DesignError, match="is a folder"):
        post.save(tmp_path)
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(bt.DesignError, match="Cannot write"):
        post.save(blocker / "sub" / "p.nc")
    with pytest.raises(ValueError, match="level"):
        post.reliability(level=1.5)
