"""One cell's binomial log marginal likelihood with its cell effect integrated out, as a numba
kernel: the adaptive Gauss-Hermite rule of :mod:`.quadrature` (Newton to the cell's mode, the
nodes scaled to its curvature), with the gradient through the moving nodes. The GLMM's kernel
(:mod:`.kernel`) calls it per cell when ``cell_sd >= 0``.

The nodes are the Gauss-Hermite rule's ``sqrt(2) x`` with log weights ``log w + x^2`` (the
weight function's density taken out); the result leaves out the binomial coefficient.

>>> import numpy as np
>>> x, w = np.polynomial.hermite.hermgauss(9)
>>> ll, *_ = cell_quadrature(3.0, 10.0, 0.0, 1e-6, np.sqrt(2) * x, np.log(w) + x**2)
>>> bool(np.isclose(ll, -10 * np.log(2)))  # a vanishing cell SD: the plain binomial at eta 0
True
"""

from __future__ import annotations

import numba
import numpy as np

from ..kernels import key_cache_on_sources

#: Newton's iterations for each cell's mode stop below this step (logits), or after
#: ``MAX_NEWTON`` (the monotone iteration of :mod:`.quadrature` needs 3-6 from its start).
NEWTON_TOL = 1e-10


MAX_NEWTON = 50


#: The least cell SD :func:`cell_quadrature` computes with (its cube is a normal float).
SD_FLOOR = 1e-100


_HALF_LOG_PI = 0.5 * np.log(np.pi)


@numba.njit(cache=True, nogil=True, inline="always")
def _sigmoid(t):  # pragma: no cover - compiled
    if t >= 0:
        return 1.0 / (1.0 + np.exp(-t))
    e = np.exp(t)
    return e / (1.0 + e)


@numba.njit(cache=True, nogil=True, inline="always")
def _score(t, k, n, eta, prec):  # pragma: no cover - compiled
    return k - n * _sigmoid(t) - (t - eta) * prec


@numba.njit(cache=True, nogil=True)
def cell_quadrature(k, n, eta, sd, nodes_x, nodes_lw):  # pragma: no cover - compiled
    """One cell's log marginal likelihood (without the binomial coefficient), its derivatives
    in ``eta`` and ``sd`` at fixed nodes, and the posterior mean success probability. Below
    :data:`SD_FLOOR` the cell effect has no weight left (the likelihood is the binomial one at
    ``eta`` to within ``n sd^2``) and is taken at the floor, where ``sd**3`` still exists.
    """
    floored = sd < SD_FLOOR
    sd = max(sd, SD_FLOOR)
    prec = 1.0 / (sd * sd)
    # start between 0 and the mode, as close to it as the candidates allow (quadrature._start)
    emp = np.log((k + 0.5) / (n - k + 0.5))
    pe = (k + 0.5) / (n + 1.0)
    w = n * pe * (1.0 - pe)
    up = k - 0.5 * n + eta * prec > 0  # the mode is above 0
    t = 0.0
    mix = (w * emp + eta * prec) / (w + prec)
    for j in range(3):
        c = eta if j == 0 else (emp if j == 1 else mix)
        if (c > 0) == up and c != 0.0 and abs(c) > abs(t):
            sc = _score(c, k, n, eta, prec)
            if (sc >= 0) == up or sc == 0.0:
                t = c
    # Newton to convergence, so that the nodes (and the log likelihood) move smoothly with eta;
    # on the mode's offset u = t - eta, so that a node's offset from eta keeps its precision
    # when sd is tiny (at sd 1e-19, t - eta computed from t is rounding noise of 1e-16, and
    # prec * d^2 was 1e6 of noise: a chain stuck at a step size of 1e-5)
    u = t - eta
    for _ in range(MAX_NEWTON):
        p = _sigmoid(eta + u)
        step = (k - n * p - u * prec) / (n * p * (1.0 - p) + prec)
        u += step
        if abs(step) < NEWTON_TOL:
            break
    t = eta + u
    p = _sigmoid(t)
    s = 1.0 / np.sqrt(n * p * (1.0 - p) + prec)
    # one pass over the nodes, rescaling the running sums when the largest term grows
    top, total, g_eta, g_sd2, p_mean, g_k, g_s = -np.inf, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for j in range(nodes_x.size):
        d = u + s * nodes_x[j]
        tj = eta + d
        e = np.exp(-abs(tj))
        a = k * tj - n * (np.log1p(e) + max(tj, 0.0)) - 0.5 * prec * d * d + nodes_lw[j]
        if a > top:
            r = np.exp(top - a)
            total, g_eta, g_sd2, p_mean, g_k, g_s = (
                total * r,
                g_eta * r,
                g_sd2 * r,
                p_mean * r,
                g_k * r,
                g_s * r,
            )
            top = a
        wj = np.exp(a - top)
        pj = 1.0 / (1.0 + e) if tj >= 0 else e / (1.0 + e)
        rj = wj * (k - n * pj - prec * d)
        total += wj
        g_eta += wj * d
        g_sd2 += wj * d * d
        p_mean += wj * pj
        g_k += wj * (k - n * pj)
        g_s += rj * nodes_x[j]
    loglik = top + np.log(total) + np.log(s) - np.log(sd) - _HALF_LOG_PI
    # derivatives at fixed nodes, then through the mode and scale (implicit function theorem:
    # the mode solves score(t) = 0), so the gradient is exactly that of the value computed
    sd3 = sd * sd * sd
    d_sd = g_sd2 / total / sd3 - 1.0 / sd
    d_t, d_s = g_k / total - prec * g_eta / total, g_s / total + 1.0 / s
    s2 = s * s
    w_c = n * p * (1.0 - p)
    dt_dsd = 2.0 * u / sd3 * s2
    ds_dt = -0.5 * s2 * s * w_c * (1.0 - 2.0 * p)
    # d/deta = prec E[d] + (d_t + d_s ds_dt) dt/deta with dt/deta = prec s^2 = 1 - w_c s^2,
    # gathered so that prec E[d], large and rounded at a tiny sd, is multiplied by w_c s^2
    d_eta = prec * s2 * (w_c * g_eta / total + g_k / total + d_s * ds_dt)
    d_sd += d_t * dt_dsd + d_s * (s2 * s / sd3 + ds_dt * dt_dsd)
    return loglik, d_eta, 0.0 if floored else d_sd, p_mean / total


key_cache_on_sources(globals())
