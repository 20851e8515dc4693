"""Coverage studies: the posterior's intervals cover at small facets where the plug-in does not."""

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.studies.coverage import coverage_staircase

SMALL = dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=3, n_replicates=3)
CHEAP = ("naive", "anova_wald", "bootstrap")


@pytest.fixture(scope="module")
def small_facets():
    """Messing (2026)'s small-facet pilot (V=3, M=3, H=3; N=30, R=3), 60 simulated data sets,
    every method; the compiled model is reused across them.
    """
    return bt.simulate.coverage_study(
        bt.simulate.tee_dgp,
        [SMALL],
        n_sims=60,
        level=0.9,
        random_seed=5,
        n_workers=1,
        progressbar=False,
        n_boot=400,
        draws=300,
        tune=300,
    )


@pytest.mark.slow
def test_bayes_covers_at_small_facets(small_facets):
    t = small_facets.table().set_index(["method", "target"])
    for target in ("theta (panel)", "theta (TEE)"):
        row = t.loc[("bayes", target)]
        assert row["coverage"] >= 0.9 - 2 * row["mc_se"], target
        assert t.loc[("naive", target), "coverage"] < 0.4  # s/sqrt(n) ignores the facets
    for target in ("item", "cell"):  # the two largest true components
        assert t.loc[("bayes", target), "coverage"] >= 0.9 - 2 * t.loc[("bayes", target), "mc_se"]
    # the plug-in is singular in some pilots, and says so
    assert 0.05 < t.loc[("anova_wald", "theta (TEE)"), "singular_rate"] < 0.6
    assert t["n_sims"].eq(60).all()
    # widths: the posterior pays for the uncertainty in the facet variances
    assert t.loc[("bayes", "theta (TEE)"), "mean_width"] > t.loc[("anova_wald", "theta (TEE)"), "mean_width"]
    # compiled at most twice (the first fit through the disk cache, the second natively for the
    # refits; fewer when an earlier test in this process compiled the same layout), then every
    # refit only swaps the data
    assert small_facets.info["n_bayes_fits"] == 60
    assert small_facets.info["n_compiles"] <= 2
    assert len(small_facets.plot().axes) == 4


def test_intervals_match_their_truth_column(small_facets):
    r = small_facets.results
    assert ((r["low"] <= r["truth"]) & (r["truth"] <= r["high"])).eq(r["covered"]).all()
    theta = r[r["target"] == "theta (TEE)"]
    assert np.allclose(theta["truth"], 0.5)  # the population mean of tee_dgp
    panel = r[r["target"] == "theta (panel)"]
    assert panel["truth"].nunique() > 3  # a new judge/temperature panel per data set


@pytest.mark.slow
def test_parallel_dask_and_cache_give_the_same_study(tmp_path):
    from distributed import Client, LocalCluster

    kw = dict(
        designs=[dict(SMALL, n_items=12)],
        level=[0.9, 0.95],
        random_seed=3,
        methods=CHEAP,
        n_boot=200,
        progressbar=False,
    )
    ref = bt.simulate.coverage_study(bt.simulate.tee_dgp, n_sims=6, n_workers=1, **kw).results
    pool = bt.simulate.coverage_study(bt.simulate.tee_dgp, n_sims=6, n_workers=2, chunk_size=2, **kw).results
    pd.testing.assert_frame_equal(ref, pool)
    with (
        LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        via_dask = bt.simulate.coverage_study(
            bt.simulate.tee_dgp, n_sims=6, executor=client, chunk_size=3, **kw
        ).results
    pd.testing.assert_frame_equal(ref, via_dask)
    # resume: the first 4 data sets are cached; asking for 6 runs only the other 2
    first = bt.simulate.coverage_study(bt.simulate.tee_dgp, n_sims=4, n_workers=1, cache_dir=tmp_path, **kw)
    assert first.info["n_tasks"] == 4 and len(list(tmp_path.rglob("*.csv"))) == 4
    resumed = bt.simulate.coverage_study(bt.simulate.tee_dgp, n_sims=6, n_workers=1, cache_dir=tmp_path, **kw)
    assert resumed.info["n_tasks"] == 2 and len(list(tmp_path.rglob("*.csv"))) == 6
    pd.testing.assert_frame_equal(ref, resumed.results, check_dtype=False)


@pytest.mark.slow
def test_staircase_of_the_plugin():
    """Messing (2026) App. E.4 with the plug-in: the naive interval collapses as N grows, and each
    facet added to the design restores coverage of the population mean.
    """
    study = coverage_staircase(
        n_items=(20, 300),
        n_sims=100,
        level=0.95,
        random_seed=2,
        methods=("naive", "anova_wald"),
        n_workers=1,
        progressbar=False,
    )
    t = study.table().join(
        study.results.drop_duplicates("design").set_index("design")[["scenario", "n_items"]], on="design"
    )
    t = t[t["target"] == "theta (TEE)"]
    cov = {(r.scenario[0], r.method, r.n_items): r.coverage for r in t.itertuples()}
    assert cov[("A", "naive", 300)] < cov[("A", "naive", 20)] - 0.15
    assert cov[("A", "naive", 300)] < 0.3
    assert cov[("B", "anova_wald", 300)] < cov[("C", "anova_wald", 300)] < cov[("D", "anova_wald", 300)]
    assert cov[("D", "anova_wald", 300)] > 0.8
    assert len(study.plot_staircase(method="anova_wald").axes) == 1


def test_bad_method_is_refused():
    with pytest.raises(ValueError, match="Unknown method"):
        bt.simulate.coverage_study(bt.simulate.tee_dgp, [SMALL], n_sims=2, methods=["reml"])


SCRIPT = """
import bayes_tee as bt
print("TOP-LEVEL RAN")

def my_dgp(**kw):  # defined in the script: the workers get it by value
    return bt.simulate.tee_dgp(**kw)

study = bt.simulate.coverage_study(
    my_dgp, [dict(n_items=20, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2)],
    n_sims=4, methods=["naive"], n_workers=2, chunk_size=4, random_seed=1, progressbar=False)
print("ROWS", len(study.results))
"""  # one chunk: the pool starts one spawned worker (each imports bayes_tee), which is what is tested


@pytest.mark.slow
def test_coverage_study_runs_from_stdin_and_from_a_script_without_a_main_guard(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "study.py"
    path.write_text(SCRIPT)
    for cmd, stdin in (([sys.executable, "-"], SCRIPT), ([sys.executable, str(path)], None)):
        out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.count("TOP-LEVEL RAN") == 1, out.stdout  # not re-run in the workers
        assert "ROWS 8" in out.stdout
