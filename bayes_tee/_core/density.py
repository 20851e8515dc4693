"""Log densities written in NumPy with their gradients, for nutpie to sample without compiling.

A likelihood that is a few dozen array operations on sufficient statistics (the balanced and
augmented strata likelihoods) costs microseconds to evaluate, yet compiling its PyTensor graph
through numba costs 10-30 s in every new process, more than sampling it (measured on 5k-50k
call pilots, benchmarks/bench_messy.py). Such a likelihood also implements :class:`Density`:
the same model, parameterised as PyMC parameterises it (log SDs, zero-sum effects), with the
log density and its gradient in NumPy. :func:`bayes_tee._core.compile.compile_density` hands it
to nutpie through Python callbacks; tests hold each one equal to its PyMC model's compiled
log density and gradient.

This module holds the shared pieces: the :class:`Density` protocol, the unconstrained
parameter layout (:class:`Layout`) and the zero-sum basis of PyMC's ``ZeroSumNormal``.

>>> lay = Layout([("sigma_item", "log", ()), ("mu", "real", ()), ("judge_effect", "zerosum", (3,))])
>>> lay.ndim, lay.slices["judge_effect"]
(4, slice(2, 4, None))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

Kind = Literal["log", "real", "zerosum", "flat"]


class Density(Protocol):
    """A log density over an unconstrained vector, with what nutpie needs to report draws."""

    layout: Layout
    dims: dict[str, tuple[str, ...]]
    coords: dict[str, list[str]]

    def logp_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Log density (Jacobians of the transforms included) and its gradient at ``x``."""

    def initial_point(self, rng: np.random.Generator) -> np.ndarray:
        """A jittered starting point, as nutpie starts a PyMC model."""


class DerivedDensity(Density, Protocol):
    """A density that also reports quantities derived from a draw (PyMC's deterministics)."""

    derived: list[tuple[str, tuple[int, ...]]]

    def derive(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """The derived quantities at unconstrained ``x``, by name."""


@dataclass
class Layout:
    """Where each parameter sits in the unconstrained vector, and how it maps back.

    Parameters
    ----------
    parameters : list of (name, kind, shape)
        ``kind``: ``log`` (positive, sampled as its log), ``real``, ``zerosum`` (PyMC's
        ``ZeroSumNormal`` along its one axis: ``n - 1`` free coordinates) or ``flat`` (a
        latent vector that is sampled but not reported).
    """

    parameters: list[tuple[str, Kind, tuple[int, ...]]]
    slices: dict[str, slice] = field(init=False)
    bases: dict[str, np.ndarray] = field(init=False)
    ndim: int = field(init=False)

    def __post_init__(self) -> None:
        self.slices, self.bases, start = {}, {}, 0
        for name, kind, shape in self.parameters:
            size = int(np.prod(shape)) if shape else 1
            if kind == "zerosum":
                self.bases[name] = zerosum_basis(size)
                size -= 1
            self.slices[name] = slice(start, start + size)
            start += size
        self.ndim = start

    @property
    def reported(self) -> list[tuple[str, tuple[int, ...]]]:
        """Names and shapes of the parameters reported in the draws (all but ``flat``)."""
        return [(n, s) for n, k, s in self.parameters if k != "flat"]

    def expand(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """The reported parameters on their own scale at unconstrained ``x``: one vector, or
        many along the leading axes (``(..., ndim)`` gives ``(..., *shape)``).
        """
        out = {}
        lead = x.shape[:-1]
        for name, kind, shape in self.parameters:
            v = x[..., self.slices[name]]
            if kind == "flat":
                continue
            if kind == "log":
                v = np.exp(v)
            elif kind == "zerosum":
                v = v @ self.bases[name].T
            out[name] = np.ascontiguousarray(v, dtype=np.float64).reshape(lead + tuple(shape))
        return out

    def flatten(self, values: dict[str, np.ndarray], n: int) -> np.ndarray:
        """The unconstrained vectors ``(n, ndim)`` of ``n`` points whose reported parameters are
        ``values[name]`` (shape ``(n, *shape)``): the inverse of :meth:`expand`, row by row.

        Raises
        ------
        KeyError
            When a parameter is missing from ``values`` (or is ``flat``: not reported).
        """
        x = np.empty((n, self.ndim))
        for name, kind, shape in self.parameters:
            v = np.asarray(values[name], dtype=np.float64).reshape(n, -1)
            if kind == "log":
                v = np.log(v)
            elif kind == "zerosum":
                v = v @ self.bases[name]
            x[:, self.slices[name]] = v
        return x


class GrandMeanMap:
    """For a density that samples its grand mean's coordinate through a map
    (``grand_mean(x) -> (mu, log_jacobian)``, the Gaussian kernels'): :meth:`report`.
    """

    layout: Layout

    def report(self, x: np.ndarray) -> np.ndarray:
        """The points ``x`` (rows, or one) with the grand mean's coordinate replaced by the grand
        mean it stands for: the coordinates the draws are reported in.
        """
        out = np.array(x, dtype=np.float64)
        out[..., self.layout.slices["mu"]] = self.grand_mean(out)[0][..., None]
        return out


def zerosum_basis(n: int) -> np.ndarray:
    """``(n, n - 1)`` matrix mapping PyMC's zero-sum coordinates to the ``n`` level effects
    (``ZeroSumTransform.backward``, an isometry onto the sum-zero plane).

    >>> b = zerosum_basis(4)
    >>> bool(np.allclose(b.sum(axis=0), 0)), bool(np.allclose(b.T @ b, np.eye(3)))
    (True, True)
    """
    root = np.sqrt(n)
    norm = 1.0 / (root + n)
    return np.vstack([np.eye(n - 1), np.full((1, n - 1), norm - 1.0 / root)]) - norm
