"""Warm starts: a refit of the same model on more data starts where the last fit's chains were.

A fit sampled through a kernel's C callback (:func:`~bayes_tee._core.compile.compile_callback`)
keeps a :class:`SamplerState`: draws of its unconstrained vector, the parameters they hold
(:func:`signature`) and the step size its chains settled on. A later fit of the same likelihood
with the same variance components (:func:`usable`) starts each chain at one of those draws and
its step-size adaptation at that step, so its warm-up has little to find
(:func:`bayes_tee.fit_posterior`'s ``warm_start``; the adaptive loop's steps). A parameter
whose shape changed (a sampled term with new levels: the GLMMs' item or cell effects after calls
on new items or cells) starts where the density starts it (:func:`start_points`); the share of
coordinates started from the earlier draws is :func:`carried`. Starting points change where the
chains begin, never what they converge to: the warm fit's draws are diagnosed like any other.

nutpie takes no mass matrix to start from: its diagonal is adapted afresh from the first
gradients, which at a start inside the posterior settle within the short warm-up.

>>> state = state_of(idata, density)  # doctest: +SKIP
>>> start = start_points(state, density)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr

from .density import Density, Layout

#: The least share of a fit's coordinates a state must hold to start it: below, the new
#: coordinates (GLMM cell effects of calls on new cells, item effects of new items) would need
#: the full warm-up anyway. A binary 3-system x 20-item refit holding 38% of the coordinates
#: (new cells) or 6% (new items) gained nothing from its short warm-up.
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
    """

    signature: tuple
    points: np.ndarray
    step_size: float


def signature(density: Density) -> tuple:
    """The density's class and the parameters its coordinates hold, ``(name, kind, shape)`` in
    order (its :class:`~bayes_tee._core.density.Layout`).

    >>> signature(density)  # doctest: +SKIP
    ('BlocksDensity', (('log_sigma_item', 'log', ()), ...))
    """
    params = tuple((str(n), str(k), tuple(int(d) for d in s)) for n, k, s in density.layout.parameters)
    return type(density).__name__, params


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
    return SamplerState(signature(density), np.ascontiguousarray(x[np.sort(rows)]), float(np.median(step)))


def _shared(state: SamplerState, density: Density) -> list[tuple[slice, slice]]:
    """``(new, old)`` slices of the parameters ``state`` and ``density`` hold alike (name, kind
    and shape).
    """
    old = Layout([(n, k, s) for n, k, s in state.signature[1]])
    held = {p: old.slices[p[0]] for p in state.signature[1]}
    new = density.layout
    return [
        (new.slices[n], held[(n, k, tuple(int(d) for d in s))])
        for n, k, s in new.parameters
        if (n, k, tuple(int(d) for d in s)) in held
    ]


def usable(state: SamplerState | None, density: Density | None) -> bool:
    """Whether ``state`` can start a fit of ``density``: the same likelihood's density, whose
    every variance parameter (kind ``log``) ``state`` holds alike, and at least
    :data:`MIN_CARRIED` of whose coordinates it holds.
    """
    if state is None or density is None or state.signature[0] != type(density).__name__:
        return False
    held = set(state.signature[1])
    same_sds = all(
        (n, k, tuple(int(d) for d in s)) in held for n, k, s in density.layout.parameters if k == "log"
    )
    return same_sds and carried(state, density) >= MIN_CARRIED


def carried(state: SamplerState, density: Density) -> float:
    """The share of ``density``'s coordinates a warm start from ``state`` takes from its draws."""
    taken = sum(new.stop - new.start for new, _ in _shared(state, density))
    return taken / max(density.layout.ndim, 1)


def start_points(state: SamplerState, density: Density) -> Callable[[int], np.ndarray]:
    """The initial-point function nutpie calls for a warm start: for a chain's seed, the
    density's own initial point with every parameter ``state`` holds alike taken from one of its
    draws (a seeded choice, so a seeded fit starts the same way every time).

    >>> f = start_points(state, density)  # doctest: +SKIP
    >>> f(1).shape == (density.layout.ndim,)  # doctest: +SKIP
    True
    """
    points, pairs = state.points, _shared(state, density)

    def initial_point(seed) -> np.ndarray:
        rng = np.random.default_rng(seed)
        row = points[rng.integers(len(points))]
        x = np.asarray(density.initial_point(rng), dtype=np.float64).copy()
        for new, old in pairs:
            x[new] = row[old]
        return x

    return initial_point
