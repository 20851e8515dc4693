"""Warm starts' pieces: a state's draws and step size, which densities it can start, and the
start points it gives (seeded, parameters held alike copied, the rest the density's own).
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from bayes_tee._core.density import Layout
from bayes_tee._core.warm import (
    KEPT_POINTS,
    MIN_CARRIED,
    SamplerState,
    carried,
    labels,
    start_points,
    state_of,
    usable,
)


class _Density:
    """The least a warm start reads of a density: its layout and initial point."""

    warm_starts = True

    def __init__(self, parameters):
        self.layout = Layout(parameters)

    def initial_point(self, rng):
        return rng.uniform(-1.0, 1.0, size=self.layout.ndim) + 100.0  # far from any draw below


PARAMS = [("sigma_item", "log", ()), ("mu", "real", ()), ("u_item", "real", (6,))]


def _state(params=PARAMS, k=5, step=0.4):
    d = _Density(params)
    points = np.arange(k * d.layout.ndim, dtype=float).reshape(k, d.layout.ndim)
    return SamplerState(("_Density", tuple((n, kd, tuple(s)) for n, kd, s in params)), points, step)


def _tree(x, step):
    return xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset({"x": (("chain", "draw", "unconstrained"), x)}),
            "sample_stats": xr.Dataset({"step_size": (("chain", "draw"), step)}),
        }
    )


def test_a_state_keeps_finite_draws_and_the_median_step():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 50, 8))
    x[0, 3, 2] = np.nan
    steps = np.repeat(np.array([0.2, 0.3, 0.5, 0.7])[:, None], 50, axis=1)
    state = state_of(_tree(x, steps), _Density([("a", "real", (8,))]))
    assert state.points.shape == (KEPT_POINTS, 8) and np.isfinite(state.points).all()
    flat = x.reshape(-1, 8)
    assert all((flat == p).all(axis=1).any() for p in state.points)  # every point is a draw
    assert state.step_size == pytest.approx(0.4)
    assert state.signature == ("_Density", (("a", "real", (8,)),))
    assert state_of(_tree(x[:, :0], steps[:, :0]), _Density([("a", "real", (8,))])) is None


def test_start_points_copy_what_is_held_alike_and_are_seeded():
    state = _state()
    grown = _Density([("sigma_item", "log", ()), ("mu", "real", ()), ("u_item", "real", (7,))])
    f = start_points(state, grown)
    x = f(3)
    assert x.shape == (9,)
    row = x[0]  # sigma_item: one of the state's draws, and mu beside it from the same draw
    assert row in state.points[:, 0] and x[1] == state.points[state.points[:, 0] == row][0, 1]
    assert (x[2:] > 98).all()  # u_item gained a level: the density's own start
    np.testing.assert_array_equal(f(3), x)
    assert any(not np.array_equal(f(s), x) for s in range(4, 12))  # chains start apart
    same = start_points(state, _Density(PARAMS))(1)
    assert any((same == p).all() for p in state.points)


def test_a_state_starts_only_the_same_likelihood_with_the_same_variances_and_most_coordinates():
    state = _state()
    assert usable(state, _Density(PARAMS)) and carried(state, _Density(PARAMS)) == 1.0
    assert not usable(None, _Density(PARAMS)) and not usable(state, None)
    other_sd = _Density([("sigma_judge", "log", ()), ("mu", "real", ()), ("u_item", "real", (6,))])
    assert not usable(state, other_sd)
    grown = _Density([("sigma_item", "log", ()), ("mu", "real", ()), ("u_item", "real", (60,))])
    assert carried(state, grown) == pytest.approx(2 / 62) and carried(state, grown) < MIN_CARRIED
    assert not usable(state, grown)
    renamed = SamplerState(("Other", state.signature[1]), state.points, 0.4)
    assert not usable(renamed, _Density(PARAMS))
    cold = _Density(PARAMS)
    cold.warm_starts = False  # a density that starts cold whatever (the GLMMs')
    assert not usable(state, cold)


def test_a_term_that_gained_levels_keeps_the_draws_of_the_levels_both_hold():
    old = _Density([("sigma_cell", "log", ()), ("u_cell", "real", (3,))])
    old.dims, old.coords = {"u_cell": ("cell",)}, {"cell": ["a", "c", "d"]}
    points = np.array([[0.5, 1.0, 3.0, 4.0]])
    state = SamplerState(("_Density", tuple(old.layout.parameters)), points, 0.3, labels(old))
    assert state.labels == {"u_cell": ("a", "c", "d")}
    new = _Density([("sigma_cell", "log", ()), ("u_cell", "real", (4,))])
    new.dims, new.coords = {"u_cell": ("cell",)}, {"cell": ["a", "b", "c", "d"]}
    x = start_points(state, new)(0)
    np.testing.assert_array_equal(x[[0, 1, 3, 4]], [0.5, 1.0, 3.0, 4.0])  # by label, not position
    assert x[2] > 98  # level "b" is new: the density's own start
    assert carried(state, new) == pytest.approx(4 / 5) and usable(state, new)
    rotated = _Density([("w_item", "real", (3,))])
    rotated.dims, rotated.coords = {"w_item": ("item_rotated",)}, {"item_rotated": ["mean", "1", "2"]}
    assert labels(rotated) == {}  # rotated coordinates name no levels
