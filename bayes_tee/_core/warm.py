"""Warm starts: a refit of the same model on more data starts where the last fit's chains were.

A fit sampled through a kernel's C callback (:func:`~bayes_tee._core.compile.compile_callback`)
keeps a :class:`SamplerState`: draws of its unconstrained vector, the parameters they hold
(:func:`signature`) and the step size its chains settled on. A later fit of the same Gaussian
likelihood with the same variance components (:func:`usable`) starts each chain at one of those draws and
its step-size adaptation at that step, so its warm-up has little to find
(:func:`bayes_tee.fit_posterior`'s ``warm_start``; the adaptive loop's steps). A parameter
whose shape changed (a sampled term with new levels) keeps the draws of the levels both fits
hold, by their labels, and its new levels start where the density starts them
(:func:`start_points`); the share of coordinates started from the earlier draws is
:func:`carried`.

Only the Gaussian kernels' densities start warm (``warm_starts``). The GLMMs' were measured
worse: their hundreds of effect coordinates need the full warm-up for nutpie's mass matrix, and
with 100 warm-up steps a binary refit (3 systems x 20 items, 98% of its coordinates started
warm) kept 2,000 draws against a cold refit's 1,000, and an ordinal one failed R-hat at 4,000.
Starting points change where the chains begin, never what they converge to: the warm fit's
draws are diagnosed like any other.

nutpie takes no mass matrix to start from: its diagonal is adapted afresh from the first
gradients, which at a start inside the posterior settle within the short warm-up.

>>> state = state_of(idata, density)  # doctest: +SKIP
>>> start = start_points(state, density)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from .density import Density, Layout

#: The least share of a fit's coordinates a state must hold to start it: below, the new
#: coordinates would need the full warm-up anyway.
MIN_CARRIED = 0.5
#: Draws of the last fit a state keeps (spread over its chains and draws): one is drawn per
#: chain of the next fit.
KEPT_POINTS = 64


@dataclass(frozen=True)
class SamplerState:
    """Where a fit's chains were: what the next fit of the same coordinates starts from.

    Attributes
    ----------
    signature : tuple
        The likelihood's density and the parameters the coordinates hold (:func:`signature`).
    points : numpy.ndarray
        ``(k, ndim)`` draws of the unconstrained vector.
    step_size : float
        The step size the chains' adaptation ended on (their median).
    labels : dict
        The level labels of each parameter that is one term's effects, by name (:func:`labels`).
    """

    signature: tuple
    points: np.ndarray
    step_size: float
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)


def signature(density: Density) -> tuple:
    """The density's class and the parameters its coordinates hold, ``(name, kind, shape)`` in
    order (its :class:`~bayes_tee._core.density.Layout`).

    >>> signature(density)  # doctest: +SKIP
    ('BlocksDensity', (('log_sigma_item', 'log', ()), ...))
    """
    params = tuple((str(n), str(k), tuple(int(d) for d in s)) for n, k, s in density.layout.parameters)
    return type(density).__name__, params


def labels(density: Density) -> dict[str, tuple[str, ...]]:
    """The level labels of each real one-axis parameter whose axis names levels (the density's
    ``dims`` and ``coords``; rotated coordinates, axes ending ``_rotated``, name none).
    """
    dims, coords = getattr(density, "dims", {}) or {}, getattr(density, "coords", {}) or {}
    out = {}
    for name, kind, shape in density.layout.parameters:
        axis = dims.get(name) or ()
        if kind != "real" or len(shape) != 1 or len(axis) != 1 or str(axis[0]).endswith("_rotated"):
            continue
        levels = coords.get(axis[0])
        if levels is not None and len(levels) == shape[0]:
            out[str(name)] = tuple(str(v) for v in levels)
    return out


def state_of(raw: xr.DataTree, density: Density, seed: int = 0) -> SamplerState | None:
    """The state of a run whose posterior holds the unconstrained vector ``x`` (a C callback's
    draws, before :func:`~bayes_tee._core.compile.expand_draws`); ``None`` when it has no
    finite draw or no step size.
    """
    post = raw["posterior"]
    if "x" not in post or "sample_stats" not in raw or "step_size" not in raw["sample_stats"]:
        return None
    x = np.asarray(post["x"].transpose("chain", "draw", ...).to_numpy(), dtype=np.float64)
    x = x.reshape(-1, x.shape[-1])
    x = x[np.isfinite(x).all(axis=1)]
    step = np.asarray(raw["sample_stats"]["step_size"].to_numpy(), dtype=np.float64).ravel()
    step = step[np.isfinite(step) & (step > 0)]
    if not len(x) or not len(step):
        return None
    rows = np.random.default_rng(seed).choice(len(x), size=min(KEPT_POINTS, len(x)), replace=False)
    points = np.ascontiguousarray(x[np.sort(rows)])
    return SamplerState(signature(density), points, float(np.median(step)), labels(density))


def _shared(state: SamplerState, density: Density) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``density``'s coordinates and in ``state``'s points of what both hold: every
    parameter held alike (name, kind and shape), and of a term's effects whose levels changed
    the levels both hold (by label).
    """
    old = Layout(list(state.signature[1]))
    kinds = {n: k for n, k, _ in state.signature[1]}
    held = {(n, k, tuple(s)): old.slices[n] for n, k, s in state.signature[1]}
    new, now = density.layout, labels(density)
    to, fro = [], []
    for name, kind, shape in new.parameters:
        at = new.slices[name]
        alike = held.get((name, kind, tuple(int(d) for d in shape)))
        if alike is not None:
            to.append(np.arange(at.start, at.stop))
            fro.append(np.arange(alike.start, alike.stop))
        elif name in now and name in state.labels and kinds.get(name) == kind:
            where = {lab: i for i, lab in enumerate(state.labels[name])}
            both = [(i, where[lab]) for i, lab in enumerate(now[name]) if lab in where]
            if both:
                a, b = np.array(both).T
                to.append(at.start + a)
                fro.append(old.slices[name].start + b)
    if not to:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(to), np.concatenate(fro)


def usable(state: SamplerState | None, density: Density | None) -> bool:
    """Whether ``state`` can start a fit of ``density``: the same likelihood's density, one that
    starts warm (its class's ``warm_starts``: the Gaussian kernels'), whose every variance
    parameter (kind ``log``) ``state`` holds alike, and at least :data:`MIN_CARRIED` of whose
    coordinates it holds.
    """
    if state is None or density is None or state.signature[0] != type(density).__name__:
        return False
    if not getattr(density, "warm_starts", False):
        return False
    held = set(state.signature[1])
    same_sds = all(
        (n, k, tuple(int(d) for d in s)) in held for n, k, s in density.layout.parameters if k == "log"
    )
    return same_sds and carried(state, density) >= MIN_CARRIED


def carried(state: SamplerState, density: Density) -> float:
    """The share of ``density``'s coordinates a warm start from ``state`` takes from its draws."""
    return len(_shared(state, density)[0]) / max(density.layout.ndim, 1)


def start_points(state: SamplerState, density: Density) -> Callable[[int], np.ndarray]:
    """The initial-point function nutpie calls for a warm start: for a chain's seed, the
    density's own initial point with what ``state`` holds too (:func:`_shared`) taken from one of
    its draws (a seeded choice, so a seeded fit starts the same way every time).

    >>> f = start_points(state, density)  # doctest: +SKIP
    >>> f(1).shape == (density.layout.ndim,)  # doctest: +SKIP
    True
    """
    points, (to, fro) = state.points, _shared(state, density)

    def initial_point(seed) -> np.ndarray:
        rng = np.random.default_rng(seed)
        row = points[rng.integers(len(points))]
        x = np.asarray(density.initial_point(rng), dtype=np.float64).copy()
        x[to] = row[fro]
        return x

    return initial_point
