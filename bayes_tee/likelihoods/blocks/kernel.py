"""The log density and gradient of the ``blocks`` likelihood as one numba kernel.

:class:`~bayes_tee.likelihoods.blocks.density.BlocksDensity` packs a design once; the model
and the notation are in :mod:`bayes_tee.likelihoods.blocks.density`. Types of the kernel's
arguments do not depend on the design, so numba compiles it once per machine and caches it.
"""

from __future__ import annotations

import numba
import numpy as np

from ..kernels import key_cache_on_sources
from ..kernels.dense import FAST, dot, factor, matvec, vecmat
from ..kernels.prior import finish_gradient, fixed_prior, grand_mean, grand_mean_slope, sd_prior
from .nested_kernel import nested_item

__all__ = ["blocks_logp_grad"]

LOG_2PI = np.log(2.0 * np.pi)


@numba.njit(cache=True, nogil=True)
def _shrunk(e, u, info, var):  # pragma: no cover - compiled
    """``x = w e + u / sqrt(pi)`` with ``pi = info + 1/var`` and ``w = info / pi``, the
    conditional posterior of an effect with prior variance ``var`` and data precision ``info``
    (``info = n / v``); returns ``x``, ``w``, ``pi`` and ``sqrt(pi)``.
    """
    pi = info + 1.0 / var
    w = info / pi
    root = np.sqrt(pi)
    x = w * e + u / root
    return x, w, pi, root


@numba.njit(cache=True, nogil=True)
def _shrunk_slopes(G, x, u, e, pi, root, info, v, var):  # pragma: no cover - compiled
    """Slopes in ``v`` and ``var`` of the log density through :func:`_shrunk`'s
    ``x = w e + u / sqrt(pi)`` (``G`` its slope in ``x``), its Jacobian ``-log(pi) / 2`` and its
    prior ``N(0, var)``.
    """
    dpi_dv = -info / v
    dpi_dvar = -1.0 / (var * var)
    dw_dv = dpi_dv / var / (pi * pi)
    dw_dvar = info / (var * var) / (pi * pi)
    half = 0.5 * u / (pi * root)
    g_v = G * (e * dw_dv - half * dpi_dv) - 0.5 * dpi_dv / pi
    g_var = G * (e * dw_dvar - half * dpi_dvar) - 0.5 * dpi_dvar / pi
    return g_v, g_var - 0.5 / var + 0.5 * x * x / (var * var)


@numba.njit(cache=True, nogil=True, fastmath=FAST)
def blocks_logp_grad(
    x,
    # SD priors, one per variance term (x[0:n_var] are the log SDs)
    fam,
    pscale,
    pnu,
    pconst,
    # the grand mean's prior, relative to the outcome mean (x[n_var] its coordinate, grand_mean)
    mu0,
    mu_scale,
    # fixed main effects: zero-sum coordinates at fix_off[f]; level of each cell in fix_level[f]
    fix_off,
    fix_len,
    bases,
    base_off,
    fixed_scale,
    fix_level,
    # per type t: v_t = v_coef[t] @ s2, gamma_t = g_coef[t] @ s2
    v_coef,
    g_coef,
    # the shared effects: rotated coordinates alpha_r at x[a_off:], categories at x[g_off:]
    alpha_r,
    a_off,
    g_off,
    has_cat,
    cat_index,
    rep_index,
    # the data (blocks_density.item_blocks)
    n_items,
    n_cells,
    H,
    rtype,
    ssq,
    zsum,
    n_cat_items,
    z0_cat,
    s0_cat,
    item_cat,
    offsets,
    lat_q,
    lat_d0,
    proj,
    pats,
    pat_off,
    pi_pat,
    df_t,
    n_short,
    within_dof,
    within_ss,
    # items factored directly on their observed cells, and the shared effects' weights
    direct,
    cell_y,
    cell_dr,
    a_zsum,
    a_n,
    c_z0,
    c_n,
    # items integrated over their item-nested effects: each cell's column per nested term, each
    # item's columns and how many are the first term's, their variance terms, and the cells'
    # diagonal per unit of each variance
    col_of,
    col_off,
    col_nb,
    col_var,
    diag_coef,
    # the nested items' cells by count of calls: each cell's class, each class's 1/n - 1/R and
    # its cells; and the nested columns per variance term
    cell_cls,
    cls_dr,
    cls_n,
    col_n,
):  # pragma: no cover - compiled
    """Log density and its gradient at unconstrained ``x``; the model and notation are in
    :mod:`bayes_tee.likelihoods.blocks.density`.
    """
    n_var = fam.size
    M, T = n_cells, df_t.size
    grad = np.zeros_like(x)
    sd, logp, g_sd = sd_prior(x, fam, pscale, pnu, pconst)
    s2 = sd * sd
    g_s2 = np.zeros(n_var)
    v = matvec(v_coef, s2)
    inv_v = 1.0 / v
    gam = matvec(g_coef, s2)
    n_cat = n_cat_items.size
    var_cat = s2[cat_index] if has_cat else 1.0
    # the grand mean around its conditional posterior given the variances: the items' mean
    # (rotated coordinate 0 over sqrt(M)) varies about mu by the items' own variance, the item-free
    # effects' and the categories' (weighted by their items)
    w2 = 0.0
    if has_cat:
        c_tot = c_n.sum()
        for c in range(n_cat):
            w2 += (c_n[c] / c_tot) ** 2
    ybar = a_zsum[0] / a_n / np.sqrt(float(M))
    var_mu = (v[0] / a_n + gam[0]) / M + var_cat * w2
    mu, m_hat, prec = grand_mean(x[n_var], ybar, var_mu, mu0, mu_scale)
    zmu = (mu - mu0) / mu_scale
    logp += -0.5 * LOG_2PI - np.log(mu_scale) - 0.5 * zmu * zmu - 0.5 * np.log(prec)
    g_mu = -zmu / mu_scale
    n_fix = fix_off.size
    betas, lp_fix, g_betas, b_off = fixed_prior(x, fix_off, fix_len, bases, base_off, fixed_scale)
    logp += lp_fix
    g_v = np.zeros(T)
    g_gam = np.zeros(T)
    n_i = float(n_items)

    # -- the mean of every cell of an item, rotated ----------------------------------------
    m = np.full(M, mu)
    for f in range(n_fix):
        for q in range(M):
            m[q] += betas[b_off[f] + fix_level[f, q]]
    mrot = matvec(H, m)
    crot = mrot.copy()
    # item-free effects around their complete-design conditional posterior
    n_alpha = alpha_r.size
    alpha_w = np.zeros(n_alpha)
    alpha_pi = np.zeros(n_alpha)
    alpha_root = np.zeros(n_alpha)
    alpha_e = np.zeros(n_alpha)
    alpha = np.zeros(n_alpha)
    for k in range(n_alpha):
        r = alpha_r[k]
        t = rtype[r]
        e = a_zsum[r] / a_n - mrot[r]
        a, w, pi, root = _shrunk(e, x[a_off + k], a_n / v[t], gam[t])
        alpha[k], alpha_w[k], alpha_pi[k], alpha_root[k], alpha_e[k] = a, w, pi, root, e
        crot[r] += a
        logp += -0.5 * (LOG_2PI + np.log(gam[t]) + a * a / gam[t]) - 0.5 * np.log(pi)
    # category effects around theirs
    gcat = np.zeros(n_cat)
    cat_w = np.zeros(n_cat)
    cat_pi = np.zeros(n_cat)
    cat_root = np.zeros(n_cat)
    cat_e = np.zeros(n_cat)
    sqm = np.sqrt(float(M))
    if has_cat:
        for c in range(n_cat):
            e = (c_z0[c] / max(c_n[c], 1e-12) - crot[0]) / sqm
            gc, w, pi, root = _shrunk(e, x[g_off + c], c_n[c] * M / v[0], var_cat)
            gcat[c], cat_w[c], cat_pi[c], cat_root[c], cat_e[c] = gc, w, pi, root, e
            logp += -0.5 * (LOG_2PI + np.log(var_cat) + gc * gc / var_cat) - 0.5 * np.log(pi)

    # -- complete items: every rotated coordinate independent, variance v_type ---------------
    g_crot = np.zeros(M)
    g_g = np.zeros(n_cat)
    quad_t = np.zeros(T)
    for r in range(1, M):
        t = rtype[r]
        quad_t[t] += ssq[r] - 2.0 * crot[r] * zsum[r] + n_i * crot[r] * crot[r]
        g_crot[r] += -(n_i * crot[r] - zsum[r]) / v[t]
    for c in range(n_cat):
        c0 = crot[0] + sqm * gcat[c]
        quad_t[0] += s0_cat[c] - 2.0 * c0 * z0_cat[c] + n_cat_items[c] * c0 * c0
        d0 = -(n_cat_items[c] * c0 - z0_cat[c]) / v[0]
        g_crot[0] += d0
        g_g[c] += sqm * d0
    for t in range(T):
        logp += -0.5 * (n_i * df_t[t] * np.log(v[t]) + quad_t[t] / v[t])
        g_v[t] += -0.5 * (n_i * df_t[t] / v[t] - quad_t[t] / (v[t] * v[t]))

    # -- short and empty cells: one Woodbury step per item -------------------------------------
    pc = np.zeros((T, M))  # [Pi_t c]_q, c the rotated mean crot mapped back per type
    for r in range(M):
        t = rtype[r]
        for q in range(M):
            pc[t, q] += H[r, q] * crot[r]
    table = np.zeros(T)  # [V^-1]_{q q'} by the facets q and q' share
    vtab = np.zeros(T)  # V_{q q'} the same way
    for t in range(T):
        for pat in range(T):
            table[pat] += pi_pat[t, pat] / v[t]
            vtab[pat] += pi_pat[t, pat] * v[t]
    inv_rep2 = 1.0 / s2[rep_index] if rep_index >= 0 else 0.0
    rep2 = s2[rep_index] if rep_index >= 0 else 0.0
    logp += -0.5 * n_short * (np.log(s2[rep_index]) if rep_index >= 0 else 0.0)
    s_max = 0
    for i in range(item_cat.size):
        s_max = max(s_max, offsets[i + 1] - offsets[i], col_off[i + 1] - col_off[i])
    A = np.zeros((s_max, s_max))
    Ainv = np.zeros((s_max, s_max))
    work = np.zeros((s_max, s_max))
    gvec = np.zeros(s_max)
    bvec = np.zeros(s_max)
    spat = np.zeros(T)
    bq = np.zeros(M)
    bpy = np.zeros(T)
    bcat = np.zeros(n_cat)
    gd = 0.0
    # direct items: slopes in V's table, sigma_rho^2 and the cells' means
    svt = np.zeros(T)
    bqd = np.zeros(M)
    bcatd = np.zeros(n_cat)
    gdr = 0.0
    # nested items (nested_kernel): workspace; each class's diagonal d_c and its inverse; the
    # logarithms of the cells' diagonal and of the columns' variances, summed per class and term
    dB = np.zeros(s_max)
    wB = np.zeros(s_max)
    bB = np.zeros(s_max)
    kbb = np.zeros(s_max)
    rbuf = np.zeros(s_max)
    Ct = np.zeros((s_max, s_max))
    Mm = np.zeros((s_max, s_max))
    dsum = dot(diag_coef, s2)
    is2 = np.zeros(n_var)
    for j in range(n_var):
        is2[j] = 1.0 / s2[j]
    n_cls = cls_dr.size
    itab = np.zeros(n_cls)
    acc_cls = np.zeros(n_cls)
    cls_seen = np.zeros(n_cls, dtype=np.int64)  # the classes of one item's cells, and their counts
    cls_cnt = np.zeros(n_cls, dtype=np.int64)
    ld_nested = 0.0
    for k in range(n_cls):
        dk = dsum + cls_dr[k] * rep2
        itab[k] = 1.0 / dk
        ld_nested += cls_n[k] * np.log(dk)
    for j in range(n_var):
        ld_nested += col_n[j] * np.log(s2[j])
        g_s2[j] += -0.5 * col_n[j] * is2[j]
    logp += -0.5 * ld_nested
    cmean = np.zeros(M)  # every cell's mean, item effects aside
    for q in range(M):
        for t in range(T):
            cmean[q] += pc[t, q]
    for i in range(item_cat.size):
        lo = offsets[i]
        s = offsets[i + 1] - lo
        if s == 0:
            continue
        gi = gcat[item_cat[i]] if has_cat else 0.0
        po = pat_off[i]
        if direct[i] == 2:  # one Woodbury step over its item-nested effects (nested_kernel)
            c0 = col_off[i]
            lp_i, sb = nested_item(
                lo, s, c0, col_off[i + 1] - c0, col_nb[i], gi, cell_y, cmean, lat_q, cell_cls, itab,
                col_of, col_var, is2, A, Ainv, work, gvec, bvec, dB, wB, bB, kbb, rbuf, Ct, Mm, cls_seen,
                cls_cnt, g_s2, bqd, acc_cls,
            )  # fmt: skip
            logp += lp_i
            if has_cat:
                bcatd[item_cat[i]] += sb
            continue
        if direct[i] == 1:
            # y_O ~ N(mean_O, V_OO + diag(sigma_rho^2 (1/n - 1/R))), factored as it stands
            for a in range(s):
                c = lo + a
                gvec[a] = cell_y[c] - cmean[lat_q[c]] - gi
                for b in range(a + 1):
                    A[a, b] = vtab[pats[po + a * s + b]]
                A[a, a] += cell_dr[c] * rep2
            logdet, quad = factor(A, s, gvec, bvec, work, Ainv)
            logp += -0.5 * (logdet + quad)
            # d/dS = -(S^-1 - b b') / 2, by the pattern of each entry; d/d mean = b
            sb = 0.0
            for a in range(s):
                c = lo + a
                row = po + a * s
                for b in range(a):
                    svt[pats[row + b]] += -(Ainv[a, b] - bvec[a] * bvec[b])
                diag = -0.5 * (Ainv[a, a] - bvec[a] * bvec[a])
                svt[pats[row + a]] += diag
                gdr += diag * cell_dr[c]
                bqd[lat_q[c]] += bvec[a]
                sb += bvec[a]
            if has_cat:
                bcatd[item_cat[i]] += sb
            continue
        for a in range(s):
            c = lo + a
            q = lat_q[c]
            acc = 0.0
            for t in range(T):
                acc += (proj[c, t] - pc[t, q]) * inv_v[t]
            gvec[a] = acc - gi * inv_v[0]
            for b in range(a + 1):
                A[a, b] = table[pats[po + a * s + b]]
            A[a, a] += lat_d0[c] * inv_rep2
        logdet, quad = factor(A, s, gvec, bvec, work, Ainv)
        logp += -0.5 * (logdet - quad)
        # d/dM = -(M^-1 + b b') / 2, by the pattern of each entry; d/d g = b
        sb = 0.0
        for a in range(s):
            c = lo + a
            row = po + a * s
            for b in range(a):  # both triangles at once: M is symmetric
                spat[pats[row + b]] += -(Ainv[a, b] + bvec[a] * bvec[b])
            diag = -0.5 * (Ainv[a, a] + bvec[a] * bvec[a])
            spat[pats[row + a]] += diag
            gd += diag * lat_d0[c]
            bq[lat_q[c]] += bvec[a]
            for t in range(T):
                bpy[t] += bvec[a] * proj[c, t]
            sb += bvec[a]
        if has_cat:
            bcat[item_cat[i]] += sb
    # collect: M's table and diagonal, then g's dependence on v, crot and the categories
    for t in range(T):
        acc = 0.0
        dacc = 0.0
        for pat in range(T):
            acc += spat[pat] * pi_pat[t, pat]
            dacc += svt[pat] * pi_pat[t, pat]
        g_v[t] += -acc / (v[t] * v[t]) + dacc
        pcb = 0.0
        for q in range(M):
            pcb += bq[q] * pc[t, q]
        extra = 0.0
        if t == 0 and has_cat:
            for c in range(n_cat):
                extra += bcat[c] * gcat[c]
        g_v[t] += -(bpy[t] - pcb - extra) / (v[t] * v[t])
    # the nested items' cells, by class: d/d d_c = -(1/d_c - (u_c' K^-1 u_c + e^2) / d_c^2) / 2
    gnd = 0.0
    gndr = 0.0
    for k in range(n_cls):
        g_k = -0.5 * cls_n[k] * itab[k] + 0.5 * acc_cls[k] * itab[k] * itab[k]
        gnd += g_k
        gndr += g_k * cls_dr[k]
    if rep_index >= 0:
        g_s2[rep_index] += -gd * inv_rep2 * inv_rep2 - 0.5 * n_short * inv_rep2 + gdr + gndr
    g_s2 += gnd * diag_coef
    for r in range(M):
        t = rtype[r]
        acc = 0.0
        dacc = 0.0
        for q in range(M):
            acc += H[r, q] * bq[q]
            dacc += H[r, q] * bqd[q]
        g_crot[r] += -acc / v[t] + dacc
    for c in range(n_cat):
        g_g[c] += -bcat[c] / v[0] + bcatd[c]

    # -- within cells -------------------------------------------------------------------
    if rep_index >= 0:
        logp += -0.5 * within_dof * np.log(s2[rep_index]) - 0.5 * within_ss * inv_rep2
        g_s2[rep_index] += -0.5 * within_dof * inv_rep2 + 0.5 * within_ss * inv_rep2 * inv_rep2

    # -- back through the reparameterised shared effects ---------------------------------------
    if has_cat:
        for c in range(n_cat):
            gc = gcat[c]
            G = g_g[c] - gc / var_cat  # prior's slope
            grad[g_off + c] = G / cat_root[c]
            info = c_n[c] * M / v[0]
            dv, dvar = _shrunk_slopes(
                G, gc, x[g_off + c], cat_e[c], cat_pi[c], cat_root[c], info, v[0], var_cat
            )
            g_v[0] += dv
            g_s2[cat_index] += dvar
            w = cat_w[c]
            g_crot[0] += -G * w / sqm
    g_mrot = g_crot.copy()
    for k in range(n_alpha):
        r = alpha_r[k]
        t = rtype[r]
        a = alpha[k]
        G = g_crot[r] - a / gam[t]
        grad[a_off + k] = G / alpha_root[k]
        info = a_n / v[t]
        dv, dgam = _shrunk_slopes(
            G, a, x[a_off + k], alpha_e[k], alpha_pi[k], alpha_root[k], info, v[t], gam[t]
        )
        g_v[t] += dv
        g_gam[t] += dgam
        w = alpha_w[k]
        g_mrot[r] += -G * w
    g_m = vecmat(g_mrot, H)
    g_mu += g_m.sum()
    # back through the grand mean's map: its variance, then its sampled coordinate
    g_var = grand_mean_slope(g_mu, mu, m_hat, prec, ybar, var_mu)
    g_v[0] += g_var / (a_n * M)
    g_gam[0] += g_var / M
    if has_cat:
        g_s2[cat_index] += g_var * w2
    g_mu /= np.sqrt(prec)
    for f in range(n_fix):
        for q in range(M):
            g_betas[b_off[f] + fix_level[f, q]] += g_m[q]
    g_s2 += vecmat(g_v, v_coef) + vecmat(g_gam, g_coef)
    g_sd += 2.0 * sd * g_s2
    finish_gradient(grad, sd, g_sd, g_mu, g_betas, b_off, fix_off, fix_len, bases, base_off)
    return logp, grad


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
