"""The log density and gradient of the ``collapsed`` likelihood as one numba kernel.

:class:`~bayes_tee.likelihoods.collapsed.density.CollapsedDensity` packs a design's grouped sums
once (:mod:`~bayes_tee.likelihoods.collapsed.layout`); the model, the formula and the notation are
in :mod:`bayes_tee.likelihoods.collapsed.density`. The arrays are flat (``A`` as ``(G, p^2)``,
``T`` as ``(K G^2, p^2)``, ...), so the argument types never depend on the design and numba
compiles the kernel once per machine.
"""

from __future__ import annotations

import numba
import numpy as np

from ..kernels import key_cache_on_sources
from ..kernels.dense import cholesky, inverse, solve
from ..kernels.prior import sd_prior

__all__ = ["collapsed_coefficients", "collapsed_logp_grad", "collapsed_system"]


@numba.njit(cache=True, nogil=True)
def collapsed_system(
    s2, i_item, i_cell, i_res, n_group, prec0, A, xy, yy, N, T, U, TT, m, items, Aw, xyw
):  # pragma: no cover
    """Given the variances ``s2``: the Cholesky factor of ``H`` (lower, in place of ``H``),
    ``r``, ``b = H^-1 r``, ``q``, ``log|V|``, the groups' precisions ``w`` and the items'
    ``lambda = 1 / sigma_a^2`` and ``kappa`` per pattern (``lambda <= 0``: no item term).
    ``Aw`` and ``xyw`` (the within-cell cross-products of covariates that vary within cells, in
    the coefficients) add ``(Aw beta - 2 xyw)' beta / sigma_rho^2`` to the quadratic form.
    """
    G, p = n_group.size, prec0.size
    w = np.empty(G)
    for g in range(G):
        v = s2[i_cell] + (s2[i_res] / n_group[g] if i_res >= 0 else 0.0)
        w[g] = 1.0 / v
    H = np.zeros((p, p))
    r = np.zeros(p)
    q = 0.0
    logdet_v = 0.0
    for g in range(G):
        wg = w[g]
        for a in range(p * p):
            H.flat[a] += wg * A[g, a]
        for a in range(p):
            r[a] += wg * xy[g, a]
        q += wg * yy[g]
        logdet_v -= N[g] * np.log(wg)
    if i_res >= 0:  # covariates varying within cells: the within-cell sum of squares' slopes
        wr = 1.0 / s2[i_res]
        for a in range(p * p):
            H.flat[a] += wr * Aw[a]
        for a in range(p):
            r[a] += wr * xyw[a]
    K = m.shape[0]
    kappa = np.zeros(K)
    lam = 0.0
    if i_item >= 0:
        lam = 1.0 / s2[i_item]
        for k in range(K):
            kap = lam
            for g in range(G):
                kap += m[k, g] * w[g]
            kappa[k] = kap
            logdet_v += items[k] * (np.log(kap) - np.log(lam))
            for g in range(G):
                for h in range(G):
                    c = w[g] * w[h] / kap
                    row = (k * G + g) * G + h
                    for a in range(p * p):
                        H.flat[a] -= c * T[row, a]
                    for a in range(p):
                        r[a] -= c * U[row, a]
                    q -= c * TT[k, g * G + h]
    for a in range(p):
        H[a, a] += prec0[a]
    logdet_h = cholesky(H, p)
    b = np.zeros(p)
    solve(H, p, r, b)
    return H, logdet_h, r, b, q, logdet_v, w, lam, kappa


@numba.njit(cache=True, nogil=True)
def collapsed_logp_grad(
    x,
    # SD priors, one per variance term (x[0:n_var] are the log SDs)
    fam,
    pscale,
    pnu,
    pconst,
    # which variance term is the items' intercept, the cell term and the replicate residual (-1: none)
    i_item,
    i_cell,
    i_res,
    # calls per cell of each group; the coefficients' prior precisions
    n_group,
    prec0,
    # per group: A (G, p^2), xy (G, p), yy, N; per pattern and pair of groups: T, U, TT; m, items
    A,
    xy,
    yy,
    N,
    T,
    U,
    TT,
    m,
    items,
    # within-cell cross-products of covariates varying within cells, in the coefficients (p^2, p)
    Aw,
    xyw,
    # the within-cell sum of squares and its degrees of freedom; the constant of the log density
    within_dof,
    within_ss,
    const,
):  # pragma: no cover - compiled
    """Log density of the SDs and its gradient at unconstrained ``x`` (the log SDs)."""
    n_var = fam.size
    p = prec0.size
    G = n_group.size
    K = m.shape[0]
    sd, logp, g_sd = sd_prior(x, fam, pscale, pnu, pconst)
    s2 = sd * sd
    L, logdet_h, r, b, q, logdet_v, w, lam, kappa = collapsed_system(
        s2, i_item, i_cell, i_res, n_group, prec0, A, xy, yy, N, T, U, TT, m, items, Aw, xyw
    )
    rb = 0.0
    for a in range(p):
        rb += r[a] * b[a]
    logp += const - 0.5 * (logdet_v + q + logdet_h - rb)
    # adjoints: d logp = tr(P dQ) + b' dr - dq / 2 - d log|V| / 2, P = -(H^-1 + b b') / 2
    P = np.zeros((p, p))
    work = np.zeros((p, p))
    inverse(L, p, work, P)  # its lower triangle
    for a in range(p):
        for c in range(a):
            P[c, a] = P[a, c]
    for a in range(p):
        for c in range(p):
            P[a, c] = -0.5 * (P[a, c] + b[a] * b[c])
    dw = np.zeros(G)
    for g in range(G):
        acc = -0.5 * yy[g] + 0.5 * N[g] / w[g]
        for a in range(p * p):
            acc += A[g, a] * P.flat[a]
        for a in range(p):
            acc += xy[g, a] * b[a]
        dw[g] = acc
    g_s2 = np.zeros(n_var)
    if i_item >= 0:
        d_lam = 0.0
        phi = np.zeros((G, G))
        for k in range(K):
            for g in range(G):
                for h in range(G):
                    row = (k * G + g) * G + h
                    acc = -0.5 * TT[k, g * G + h]
                    for a in range(p * p):
                        acc += T[row, a] * P.flat[a]
                    for a in range(p):
                        acc += U[row, a] * b[a]
                    phi[g, h] = acc
            inv = 1.0 / kappa[k]
            omega = 0.0
            for g in range(G):
                for h in range(G):
                    omega += w[g] * phi[g, h] * w[h]
                    dw[g] -= inv * (phi[g, h] + phi[h, g]) * w[h]
            d_kappa = omega * inv * inv - 0.5 * items[k] * inv
            for g in range(G):
                dw[g] += m[k, g] * d_kappa
            d_lam += d_kappa + 0.5 * items[k] / lam
        g_s2[i_item] = -d_lam * lam * lam
    for g in range(G):
        ww = dw[g] * w[g] * w[g]
        g_s2[i_cell] -= ww
        if i_res >= 0:
            g_s2[i_res] -= ww / n_group[g]
    if i_res >= 0:
        r2 = s2[i_res]
        dwr = 0.0
        for a in range(p * p):
            dwr += Aw[a] * P.flat[a]
        for a in range(p):
            dwr += xyw[a] * b[a]
        g_s2[i_res] -= dwr / (r2 * r2)
        logp += -0.5 * within_dof * (np.log(r2) + np.log(2.0 * np.pi)) - 0.5 * within_ss / r2
        g_s2[i_res] += -0.5 * within_dof / r2 + 0.5 * within_ss / (r2 * r2)
    grad = np.empty_like(x)
    for j in range(n_var):
        grad[j] = (g_sd[j] + 2.0 * sd[j] * g_s2[j]) * sd[j] + 1.0
    return logp, grad


@numba.njit(cache=True, nogil=True)
def collapsed_coefficients(
    X, Z, prior_mean, i_item, i_cell, i_res, n_group, prec0, A, xy, yy, N, T, U, TT, m, items, Aw, xyw
):  # pragma: no cover
    """Per row of ``X`` (draws of the log SDs) and of ``Z`` (standard normal vectors ``zeta``): the
    fixed coefficients ``m_0 + H^-1 r + L^-T zeta``, a draw from their conditional posterior.
    """
    p = prec0.size
    out = np.empty((X.shape[0], p))
    for i in range(X.shape[0]):
        s2 = np.exp(2.0 * X[i])
        system = collapsed_system(
            s2, i_item, i_cell, i_res, n_group, prec0, A, xy, yy, N, T, U, TT, m, items, Aw, xyw
        )
        L, b = system[0], system[3]
        # L^-T zeta: back-substitution with the transpose of the lower factor
        v = np.empty(p)
        for a in range(p - 1, -1, -1):
            acc = Z[i, a]
            for c in range(a + 1, p):
                acc -= L[c, a] * v[c]
            v[a] = acc / L[a, a]
        for a in range(p):
            out[i, a] = prior_mean[a] + b[a] + v[a]
    return out


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
