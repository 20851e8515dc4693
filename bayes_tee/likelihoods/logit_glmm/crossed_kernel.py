"""The sampled coordinates of a crossed GLMM term and its main effects, mapped to the kernels'.

A few-level two-way term centred on its two main effects (``GlmmTerm.crossed``: prompt x judge
with a random prompt and fixed judges) holds the totals ``T = a[A] + b[B] + c`` of its levels,
and the main effects ``a, b`` reach the data only through them. The kernels
(:mod:`~bayes_tee.likelihoods.logit_glmm.kernel`) read the totals' zero-sum coordinates ``w``
and the main effects' own coordinates. Sampling those directly leaves NUTS a funnel: the data
pin the totals, and the main effects are then known only to within the interaction's SD ``s``
(``a | T`` has an SD of ``s / sqrt(L_B)`` where ``a``'s own prior is wide), which the few levels
barely fix (a judge effect's posterior SD went from 0.06 to 0.5 along ``sigma_prompt_judge``'s
range, at a bulk ESS of 127 in 4 x 1,000 draws on a 14-system Likert comparison with 2 prompts
and 3 judges).

Here the sampler's coordinates are instead:

- the totals in an orthonormal basis ``R`` split along the crossing's three subspaces (A's
  margins, B's margins, the interaction proper), where the main effects integrate out
  exactly: under the complete crossing the totals' coordinates ``v_k`` are independent
  ``N(0, lambda_k)`` with ``lambda = s^2 + L_B sd_A^2`` on A's margins, ``s^2 + L_A sd_B^2`` on
  B's and ``s^2`` on the interaction (a fixed facet's ``sd`` its prior scale); each is adapted to
  the data as :func:`~.layout.sweep_adaptation` adapts a swept term, ``v_k = kappa_k v_hat_k +
  sqrt(lambda_k / q_k) z_k``, ``q_k = 1 + lambda_k info``: centred on the data where they pin
  the totals, non-centred where the prior does, for every SD at once;
- each main effect given the totals, non-centred on its exact conditional: ``a = (sqrt(L_B)
  sd_A^2 / lambda_A) v_A + (sd_A s / sqrt(lambda_A)) zeta_A``, ``zeta_A`` a posteriori standard
  normal whatever ``s``.

A crossed term whose every level's data pin its total (``GlmmTerm.pinned``) is sampled in the
kernels' own coordinates, its totals centred and its main effects their own (coordinates version
3's layout, tuned on Messing (2026)'s safety GLMM: crossed here, its prompt x judge coordinates
mixed no faster and the fit took 296 s against 230 s).

The map is triangular (totals from ``z``; main effects from ``zeta`` and the totals), so the
log density in these coordinates is the kernels' at the mapped point plus the log Jacobian
:func:`crossed_forward` returns; :func:`crossed_backward` takes the kernels' gradient back
through it. The same model (Papaspiliopoulos, Roberts & Skold 2007's non-centring, applied to
the main effects given the totals).

Per crossed term, ``c_int`` holds :data:`N_INT` integers: the term's offset in ``x`` and its
levels, its SD's index, then for each main effect its coordinates' offset in ``x`` (its ``L -
1`` zero-sum or swept deviation coordinates), its levels, its SD's index (``-1``: a fixed facet)
and, last, where the term's floats start in ``c_flt``: the two fixed facets' prior scales, the
data precision ``info``, ``R`` (row-major) and the rough totals' coordinates ``v_hat``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..kernels import key_cache_on_sources
from ..kernels.dense import matvec, vecmat

#: Integers per crossed term in ``c_int`` (module docstring).
N_INT = 10


@numba.njit(cache=True, nogil=True, inline="always")
def _unpack(x, c_int, c_flt, c):  # pragma: no cover - compiled
    """Crossed term ``c``'s layout, data precision, basis and rough totals and, at ``x``, its
    SDs' logs and its margins' variances' logs.
    """
    i = c * N_INT
    o, L, jg, oa, La = c_int[i], c_int[i + 1], c_int[i + 2], c_int[i + 3], c_int[i + 4]
    ja, ob, Lb, jb, fo = c_int[i + 5], c_int[i + 6], c_int[i + 7], c_int[i + 8], c_int[i + 9]
    ls = x[jg]
    lsa = x[ja] if ja >= 0 else np.log(c_flt[fo])
    lsb = x[jb] if jb >= 0 else np.log(c_flt[fo + 1])
    # log lambda: s^2 + L_other sd^2 on a main effect's margins, s^2 on the interaction
    log_la = np.logaddexp(2.0 * ls, np.log(Lb) + 2.0 * lsa)
    log_lb = np.logaddexp(2.0 * ls, np.log(La) + 2.0 * lsb)
    n = L - 1
    R = c_flt[fo + 3 : fo + 3 + n * n].reshape((n, n))
    v_hat = c_flt[fo + 3 + n * n : fo + 3 + n * n + n]
    return o, L, jg, oa, La, ja, ob, Lb, jb, c_flt[fo + 2], R, v_hat, ls, lsa, lsb, log_la, log_lb


@numba.njit(cache=True, nogil=True, inline="always")
def _log_lambda(k, La, Lb, ls, log_la, log_lb):  # pragma: no cover - compiled
    """Coordinate ``k``'s log variance and which subspace it is in (0: A, 1: B, 2: interaction)."""
    if k < La - 1:
        return log_la, 0
    if k < La + Lb - 2:
        return log_lb, 1
    return 2.0 * ls, 2


@numba.njit(cache=True, nogil=True, inline="always")
def _through_lambda(log_d, log_lam, q, info, v_hat, z, g_v):  # pragma: no cover - compiled
    """An SD's share of the gradient through one coordinate's variance ``lambda`` (``d lambda``
    ``= exp(log_d)``): through ``v = kappa v_hat + b z`` and the log Jacobian's ``log b``.
    """
    dv = (info / (q * q)) * v_hat * np.exp(log_d) + z * np.exp(log_d - 0.5 * log_lam) * np.sqrt(q) / (
        2.0 * q * q
    )
    return g_v * dv + 0.5 * np.exp(log_d - log_lam) / q


@numba.njit(cache=True, nogil=True, inline="always")
def _totals(x, o, n, La, Lb, ls, log_la, log_lb, info, v_hat):  # pragma: no cover - compiled
    """The totals' subspace coordinates ``v`` at the sampled ``z = x[o + 1 : o + 1 + n]``, each
    one's scale ``b`` and their log Jacobian.
    """
    v, b = np.empty(n), np.empty(n)
    log_jac = 0.0
    for k in range(n):
        log_lam = _log_lambda(k, La, Lb, ls, log_la, log_lb)[0]
        lam = np.exp(log_lam)
        q = 1.0 + lam * info
        b[k] = np.exp(0.5 * (log_lam - np.log(q)))
        v[k] = (lam * info / q) * v_hat[k] + b[k] * x[o + 1 + k]
        log_jac += 0.5 * (log_lam - np.log(q))
    return v, b, log_jac


@numba.njit(cache=True, nogil=True, inline="always")
def _main(side, oa, La, ja, lsa, log_la, ob, Lb, jb, lsb, log_lb, ls):  # pragma: no cover - compiled
    """A main effect's coordinates' offset, levels and SD index, where its margins start among
    the totals' coordinates, ``log sd`` and ``log lambda``, and its map's ``log scale`` (zero for a
    swept random main effect, whose coordinates are its deviations over its SD), ``alpha`` and
    ``beta`` (``coordinate = alpha v + beta zeta``).
    """
    if side == 0:
        off, Lm, j, lsm, log_lm, first, other = oa, La, ja, lsa, log_la, 0, Lb
    else:
        off, Lm, j, lsm, log_lm, first, other = ob, Lb, jb, lsb, log_lb, La - 1, La
    scale = 0.0 if j >= 0 else lsm
    alpha = np.sqrt(other) * np.exp(lsm + scale - log_lm)
    beta = np.exp(scale + ls - 0.5 * log_lm)
    return off, Lm, j, lsm, log_lm, first, scale, alpha, beta


@numba.njit(cache=True, nogil=True)
def crossed_forward(x, c_int, c_flt):  # pragma: no cover - compiled
    """The kernels' coordinates at the sampled ``x`` and the log Jacobian of the map (module
    docstring); ``x`` itself when no term is crossed.
    """
    n_c = c_int.size // N_INT
    if n_c == 0:
        return x, 0.0
    out = x.copy()
    log_jac = 0.0
    for c in range(n_c):
        o, L, jg, oa, La, ja, ob, Lb, jb, info, R, v_hat, ls, lsa, lsb, log_la, log_lb = _unpack(
            x, c_int, c_flt, c
        )
        n = L - 1
        v, _, lj = _totals(x, o, n, La, Lb, ls, log_la, log_lb, info, v_hat)
        log_jac += lj
        totals = matvec(R, v)
        for m in range(n):
            out[o + 1 + m] = totals[m]
        for side in range(2):
            off, Lm, j, lsm, log_lm, first, scale, alpha, beta = _main(
                side, oa, La, ja, lsa, log_la, ob, Lb, jb, lsb, log_lb, ls
            )
            for k in range(Lm - 1):
                out[off + k] = alpha * v[first + k] + beta * x[off + k]
            log_jac += (Lm - 1) * (scale + ls - 0.5 * log_lm)
    return out, log_jac


@numba.njit(cache=True, nogil=True)
def crossed_backward(x, grad, c_int, c_flt):  # pragma: no cover - compiled
    """The gradient at the sampled ``x`` from ``grad``, the kernels' gradient at the mapped
    point (:func:`crossed_forward`), the log Jacobian's included; ``grad`` itself when no term
    is crossed.
    """
    n_c = c_int.size // N_INT
    if n_c == 0:
        return grad
    out = grad.copy()
    for c in range(n_c):
        o, L, jg, oa, La, ja, ob, Lb, jb, info, R, v_hat, ls, lsa, lsb, log_la, log_lb = _unpack(
            x, c_int, c_flt, c
        )
        n = L - 1
        # the totals' subspace coordinates again, and the gradient in them
        v, b, _ = _totals(x, o, n, La, Lb, ls, log_la, log_lb, info, v_hat)
        g_v = vecmat(grad[o + 1 : o + L], R)
        g_ls, g_lsm = 0.0, np.zeros(2)  # gradients in log s and in the main effects' log SDs
        for side in range(2):
            off, Lm, j, lsm, log_lm, first, scale, alpha, beta = _main(
                side, oa, La, ja, lsa, log_la, ob, Lb, jb, lsb, log_lb, ls
            )
            s_share = np.exp(2.0 * ls - log_lm)  # s^2 / lambda
            m_share = 1.0 - s_share  # L_other sd^2 / lambda
            for k in range(Lm - 1):
                g = grad[off + k]
                g_v[first + k] += alpha * g
                out[off + k] = beta * g
                # alpha and beta move with the SDs at fixed v and zeta
                g_ls += g * (-2.0 * s_share * alpha * v[first + k] + (1.0 - s_share) * beta * x[off + k])
                if j >= 0:  # alpha = sqrt(L_o) sd / lambda, beta = s / sqrt(lambda)
                    g_lsm[side] += g * (
                        (1.0 - 2.0 * m_share) * alpha * v[first + k] - m_share * beta * x[off + k]
                    )
            g_ls += (Lm - 1) * m_share  # the log Jacobian's (L - 1)(log s - log(lambda) / 2)
            if j >= 0:
                g_lsm[side] -= (Lm - 1) * m_share
        for k in range(n):
            out[o + 1 + k] = b[k] * g_v[k]
            log_lam, sub = _log_lambda(k, La, Lb, ls, log_la, log_lb)
            q = 1.0 + np.exp(log_lam) * info
            # d/d(log sd) of v_k and of log b_k at fixed z, through lambda_k, with d lambda /
            # d(log sd) as a log so that no SD's underflow divides zero by zero: s moves every
            # subspace, a random main effect's SD its own margins
            g_ls += _through_lambda(np.log(2.0) + 2.0 * ls, log_lam, q, info, v_hat[k], x[o + 1 + k], g_v[k])
            if sub < 2 and (ja if sub == 0 else jb) >= 0:
                Lo, lsm = (Lb, lsa) if sub == 0 else (La, lsb)
                log_d = np.log(2.0 * Lo) + 2.0 * lsm
                g_lsm[sub] += _through_lambda(log_d, log_lam, q, info, v_hat[k], x[o + 1 + k], g_v[k])
        out[jg] += g_ls
        if ja >= 0:
            out[ja] += g_lsm[0]
        if jb >= 0:
            out[jb] += g_lsm[1]
    return out


@numba.njit(cache=True, nogil=True)
def crossed_forward_draws(X, c_int, c_flt):  # pragma: no cover - compiled
    """:func:`crossed_forward`'s points for every row of ``X`` (draws by dimension)."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        row = crossed_forward(np.ascontiguousarray(X[i]), c_int, c_flt)[0]
        for j in range(row.size):
            out[i, j] = row[j]
    return out


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
