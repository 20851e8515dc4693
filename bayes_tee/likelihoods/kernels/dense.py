"""Small dense factorisations the kernels share, in place on the leading ``s x s`` block of
a workspace: Cholesky factor and log determinant, solve, inverse (its lower triangle), and the
factor, inverse and ``A^-1 g`` at once; and the small matrix-vector products. Loops run along
rows; compiled once per machine and cached like every kernel.

>>> A = np.array([[4.0, 0.0], [2.0, 3.0]])  # the lower triangle of [[4, 2], [2, 3]]
>>> b, Ainv = np.zeros(2), np.zeros((2, 2))
>>> logdet, quad = factor(A, 2, np.array([1.0, 1.0]), b, np.zeros((2, 2)), Ainv)
>>> round(float(np.exp(logdet)), 6), round(float(quad), 6), b.round(3).tolist()
(8.0, 0.375, [0.125, 0.25])

The small products the kernels take, as loops (:func:`matvec`):

>>> M = np.array([[1.0, 2.0], [3.0, 4.0]])
>>> matvec(M, np.ones(2)).tolist(), vecmat(np.ones(2), M).tolist(), dot(np.ones(2), np.ones(2))
([3.0, 7.0], [4.0, 6.0], 2.0)
"""

from __future__ import annotations

import numba
import numpy as np

from . import key_cache_on_sources

__all__ = ["FAST", "cholesky", "dot", "factor", "inverse", "matvec", "solve", "vecmat"]

#: Floating-point licences for the small dense loops: reassociation lets LLVM vectorise their
#: reductions; no assumption that values are finite (a failed factorisation stays NaN).
FAST = {"reassoc", "contract", "arcp", "nsz"}


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def cholesky(A, s):  # pragma: no cover - compiled
    """Lower Cholesky factor of the leading ``s x s`` block of ``A`` (in place) and its log
    determinant (the pivots' product, its log taken when it leaves ``[1e-150, 1e150]``: one
    logarithm per item instead of one per pivot).
    """
    logdet = 0.0
    prod = 1.0
    for j in range(s):
        acc = A[j, j]
        for k in range(j):
            acc -= A[j, k] * A[j, k]
        root = np.sqrt(acc)
        A[j, j] = root
        prod *= acc
        if not 1e-150 < prod < 1e150:  # also a non-positive or NaN pivot: its log says so
            logdet += np.log(prod)
            prod = 1.0
        inv = 1.0 / root
        for r in range(j + 1, s):
            acc = A[r, j]
            for k in range(j):
                acc -= A[r, k] * A[j, k]
            A[r, j] = acc * inv
    return logdet + np.log(prod)


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def solve(L, s, g, out):  # pragma: no cover - compiled
    """``out = (L L')^-1 g`` for the lower factor in the leading block of ``L``."""
    for r in range(s):
        acc = g[r]
        for k in range(r):
            acc -= L[r, k] * out[k]
        out[r] = acc / L[r, r]
    for r in range(s - 1, -1, -1):
        acc = out[r]
        for k in range(r + 1, s):
            acc -= L[k, r] * out[k]
        out[r] = acc / L[r, r]


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def inverse(L, s, X, out):  # pragma: no cover - compiled
    """``out = (L L')^-1 = X' X`` with ``X = L^-1`` (leading ``s x s`` blocks; ``X`` is
    workspace), row by row so that every inner loop runs along a row; its lower triangle only
    (every reader reads ``out[a, b]`` with ``a >= b``).
    """
    for r in range(s):
        for c in range(s):
            X[r, c] = 0.0
        for k in range(r):
            f = L[r, k]
            for c in range(k + 1):
                X[r, c] -= f * X[k, c]
        inv = 1.0 / L[r, r]
        for c in range(r):
            X[r, c] *= inv
        X[r, r] = inv
    for a in range(s):
        for b in range(a + 1):
            out[a, b] = 0.0
    for k in range(s):
        for a in range(k + 1):
            f = X[k, a]
            for b in range(a + 1):
                out[a, b] += f * X[k, b]


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def factor(A, s, g, b, work, Ainv):  # pragma: no cover - compiled
    """Factor the leading ``s x s`` block of ``A`` in place: ``b = A^-1 g``, ``Ainv = A^-1``;
    returns ``log det A`` and ``g' A^-1 g``. ``b`` is taken from the inverse, which is needed
    anyway, rather than by two triangular solves: their divisions made a 15 x 15 factor about
    10% slower (the ``blocks`` likelihood's items at 482k calls, 5% lost).
    """
    logdet = cholesky(A, s)
    inverse(A, s, work, Ainv)
    # b = A^-1 g from the inverse's lower triangle: no divisions, unlike two triangular solves
    for a in range(s):
        b[a] = 0.0
    quad = 0.0
    for a in range(s):
        ga = g[a]
        acc = Ainv[a, a] * ga
        for c in range(a):
            acc += Ainv[a, c] * g[c]
            b[c] += Ainv[a, c] * ga
        b[a] += acc
    for a in range(s):
        quad += g[a] * b[a]
    return logdet, quad


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def matvec(A, v):  # pragma: no cover - compiled
    """``A @ v`` as a loop. The kernels' products are small; numba compiles NumPy's ``@``
    through BLAS at 0.3-0.5 s per combination of argument types, a loop in a tenth of that.
    """
    n, p = A.shape
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for j in range(p):
            acc += A[i, j] * v[j]
        out[i] = acc
    return out


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def vecmat(v, A):  # pragma: no cover - compiled
    """``v @ A`` (that is ``A.T @ v``) as a loop along ``A``'s rows (as :func:`matvec`)."""
    n, p = A.shape
    out = np.zeros(p)
    for i in range(n):
        f = v[i]
        for j in range(p):
            out[j] += f * A[i, j]
    return out


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def dot(u, v):  # pragma: no cover - compiled
    """``u @ v`` of two vectors as a loop (as :func:`matvec`)."""
    acc = 0.0
    for i in range(u.size):
        acc += u[i] * v[i]
    return acc


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
