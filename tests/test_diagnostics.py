"""The convergence checks every fit reports: R-hat and ESS on its parameters, and the sampler's
divergences, tree-depth hits and E-BFMI read from nutpie's and PyMC's sample-stat names.
"""

import numpy as np
import pytest
import xarray as xr
from arviz_stats import bfmi, diagnose, ess, rhat

from bayes_tee._core import diagnostics as diag

DIMS = ("chain", "draw")


def _tree(stats: dict, seed: int = 0) -> xr.DataTree:
    rng = np.random.default_rng(seed)
    post = xr.Dataset({"mu": (DIMS, rng.normal(size=(4, 500)))})
    return xr.DataTree.from_dict({"posterior": post, "sample_stats": xr.Dataset(stats)})


def _healthy(rng, depth_name="maxdepth_reached") -> dict:
    return {
        "diverging": (DIMS, np.zeros((4, 500), bool)),
        depth_name: (DIMS, np.zeros((4, 500), bool)),
        "energy": (DIMS, rng.normal(size=(4, 500))),
    }


def test_a_healthy_sampler_passes_every_check():
    d = diag.check(_tree(_healthy(np.random.default_rng(1))), ["mu"])
    assert d["ok"], d["problems"]
    assert d["divergences"] == 0 and d["treedepth_hits"] == 0
    assert d["min_bfmi"] > 1.5  # independent energies: E-BFMI near 2


@pytest.mark.parametrize("name", ["maxdepth_reached", "reached_max_treedepth"])  # nutpie, PyMC
def test_transitions_at_the_maximum_tree_depth_fail_the_fit(name):
    stats = _healthy(np.random.default_rng(2), depth_name=name)
    hit = np.zeros((4, 500), bool)
    hit[1, [3, 40, 41]] = True
    stats[name] = (DIMS, hit)
    d = diag.check(_tree(stats), ["mu"])
    assert d["treedepth_hits"] == 3 and not d["ok"]
    assert any("maximum tree depth" in p for p in d["problems"])
    assert "maximum tree depth" in diag.message(d)


def test_a_chain_with_low_e_bfmi_fails_the_fit():
    rng = np.random.default_rng(3)
    stats = _healthy(rng)
    energy = rng.normal(size=(4, 500))
    energy[2] = np.cumsum(rng.normal(size=500))  # a random walk: E-BFMI far below 0.3
    stats["energy"] = (DIMS, energy)
    d = diag.check(_tree(stats), ["mu"])
    assert d["min_bfmi"] < diag.MIN_BFMI and not d["ok"]
    assert any("E-BFMI" in p for p in d["problems"])


def test_divergences_are_counted():
    stats = _healthy(np.random.default_rng(4))
    div = np.zeros((4, 500), bool)
    div[0, :5] = True
    stats["diverging"] = (DIMS, div)
    d = diag.check(_tree(stats), ["mu"])
    assert d["divergences"] == 5 and not d["ok"]


def test_without_sampler_statistics_only_r_hat_and_ess_are_checked():
    rng = np.random.default_rng(5)
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"mu": (DIMS, rng.normal(size=(4, 500)))})})
    d = diag.check(tree, ["mu"])
    assert d["ok"] and d["min_bfmi"] is None and d["treedepth_hits"] == 0


def test_the_numbers_are_arviz_stats_own():
    """The checks stack every checked value into one array for arviz-stats' array functions:
    R-hat, bulk and tail ESS are what its Dataset functions give variable by variable (vectors
    and matrices included, a variable stored draw-first too), and the sampler's counts and
    E-BFMI what :func:`arviz_stats.diagnose` reports.
    """
    rng = np.random.default_rng(6)
    walk = np.cumsum(rng.normal(size=(4, 300, 3)), axis=1) * 0.05 + rng.normal(size=(4, 300, 3))
    post = xr.Dataset(
        {
            "mu": (DIMS, rng.normal(size=(4, 300))),
            "effect": (("chain", "draw", "level"), walk),
            "table": (("draw", "chain", "row", "col"), rng.standard_t(3, size=(300, 4, 2, 2))),
        }
    )
    hit = rng.random((4, 300)) < 0.01
    stats = {
        "diverging": (DIMS, rng.random((4, 300)) < 0.02),
        "reached_max_treedepth": (DIMS, hit),
        "energy": (DIMS, np.cumsum(rng.normal(size=(4, 300)), axis=1) * 0.3 + rng.normal(size=(4, 300))),
    }
    coords = {"chain": np.arange(4), "draw": np.arange(300)}  # diagnose names chains by them
    post = post.assign_coords(coords)
    tree = xr.DataTree.from_dict({"posterior": post, "sample_stats": xr.Dataset(stats, coords=coords)})
    names = ["mu", "effect", "table"]
    d = diag.check(tree, names)

    def every(ds):
        return np.concatenate([np.ravel(ds[v].values) for v in names])

    assert d["max_rhat"] == every(rhat(post)).max()
    assert d["min_ess_bulk"] == every(ess(post, method="bulk")).min()
    assert d["min_ess_tail"] == every(ess(post, method="tail")).min()
    _, found = diagnose(tree, var_names=["mu"], show_diagnostics=False, return_diagnostics=True)
    assert d["divergences"] == found["divergent"]["n_divergent"] > 0
    assert d["treedepth_hits"] == found["treedepth"]["n_max"] == int(hit.sum()) > 0
    assert (
        d["min_bfmi"]
        == float(np.min(bfmi(tree)["energy"].values))
        == float(np.min(found["bfmi"]["bfmi_values"]))
    )
    assert d["n_draws"] == 1200
