"""The log density and gradient of the strata likelihoods as one numba kernel.

:class:`~bayes_tee.likelihoods.strata.density.StrataDensity` packs a design into flat
arrays once; :func:`strata_logp_grad` evaluates the priors, the strata potentials and (for the
augmented likelihood) the completed cell-mean array's statistics and their gradient in one
call. The kernel's types do not depend on the design (flat arrays, offsets and sizes), so numba
compiles it once per machine and caches it on disk (``cache=True``); every later process and
every layout loads it in well under a second. It releases the GIL, so nutpie's chains evaluate
it in parallel.

Prior family codes: 0 half-t, 1 half-normal, 2 half-Cauchy, 3 exponential (:data:`FAMILIES`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..kernels import key_cache_on_sources
from ..kernels.dense import dot, matvec, vecmat
from ..kernels.prior import FAMILIES, finish_gradient, fixed_prior, grand_mean, grand_mean_slope, sd_prior

__all__ = ["FAMILIES", "strata_logp_grad"]


@numba.njit(cache=True, nogil=True)
def _rotate(x, pre, n, post, H, transpose):  # pragma: no cover - compiled
    """Multiply the middle axis of ``x`` (flat, C order, shape ``(pre, n, post)``) by ``H``
    (``H.T`` when ``transpose``).
    """
    out = np.zeros_like(x)
    M = np.ascontiguousarray(H.T) if transpose else H
    for p in range(pre):
        base = p * n * post
        for k in range(n):
            ok = base + k * post
            for m in range(n):
                h = M[k, m]
                if h != 0.0:
                    om = base + m * post
                    for q in range(post):
                        out[ok + q] += h * x[om + q]
    return out


@numba.njit(cache=True, nogil=True)
def _axis_sums(w, stride, length):  # pragma: no cover - compiled
    """Sums of ``w`` (flat) per level of the axis with the given stride and length."""
    out = np.zeros(length)
    block = stride * length
    for o in range(0, w.size, block):
        for m in range(length):
            base = o + m * stride
            acc = 0.0
            for q in range(stride):
                acc += w[base + q]
            out[m] += acc
    return out


@numba.njit(cache=True, nogil=True)
def _axis_add(g, v, stride, scale):  # pragma: no cover - compiled
    """``g[c] += scale * v[level of c]`` along the axis with the given stride (in place)."""
    length = v.size
    block = stride * length
    for o in range(0, g.size, block):
        for m in range(length):
            add = scale * v[m]
            base = o + m * stride
            for q in range(stride):
                g[base + q] += add


@numba.njit(cache=True, nogil=True)
def _column_sums(X):  # pragma: no cover - compiled
    """Column sums and column sums of squares of a C-ordered matrix."""
    n, p = X.shape
    col, sq = np.zeros(p), np.zeros(p)
    for i in range(n):
        for j in range(p):
            v = X[i, j]
            col[j] += v
            sq[j] += v * v
    return col, sq


@numba.njit(cache=True, nogil=True)
def _helmert(helmerts, h_off, a, n):  # pragma: no cover - compiled
    """The ``a``-th axis's Helmert matrix out of the flat concatenation."""
    return np.ascontiguousarray(helmerts[h_off[a] : h_off[a] + n * n]).reshape((n, n))


@numba.njit(cache=True, nogil=True)
def strata_logp_grad(
    x,
    # SD priors, one per variance term (x[0:n_var] are the log SDs)
    fam,
    pscale,
    pnu,
    pconst,
    # the grand mean's prior (x[n_var] its coordinate: prior.grand_mean without categories)
    mu0,
    mu_scale,
    # fixed effects: zero-sum coordinates at fix_off[f], levels fix_len[f], basis at base_off[f]
    fix_off,
    fix_len,
    bases,
    base_off,
    fixed_scale,
    fix_weight,
    fix_df,
    fix_coef,
    # strata: EMS = coef @ sigma^2
    coef,
    df,
    grand_coef,
    n_total,
    # categories (anova.CategoryMeans; none when cat_sizes is empty)
    cat_sizes,
    cat_coef,
    item_coef,
    kappa_coef,
    # balanced: the statistics; augmented: computed from the completed array
    ss_data,
    grand_data,
    dev_data,
    cat_data,
    # True for the augmented likelihood; None for the balanced one, whose specialization leaves
    # the completed array's code out (numba prunes the branches on an argument that is None)
    augmented,
    # augmented: completed array (flat, items first), latent values at x[lat_off:]
    lat_off,
    observed_sum,
    latent_index,
    scatter,
    centre,
    y_sd,
    shift,
    n_items,
    dims,
    helmerts,
    h_off,
    kron,
    kron_t,
    mask_item,
    mask_rest,
    replicates,
    pool,
    item_part,
    cat_weights,
    fix_axis_stride,
    # within-cell potential of the augmented likelihood (rep_index < 0: none)
    rep_index,
    partial,
    latent_mean,
    contrast_weight,
    rep_dof,
    within_ss,
):  # pragma: no cover - compiled
    """Log density and its gradient at unconstrained ``x``; the arguments are packed by
    :meth:`StrataDensity._pack <bayes_tee.likelihoods.strata.density.StrataDensity>`.
    """
    n_var = fam.size
    grad = np.zeros_like(x)
    sd, logp, g_sd = sd_prior(x, fam, pscale, pnu, pconst)
    # loops over scalars: numba compiles each NumPy array expression as a function of its own
    s2 = np.empty(n_var)
    for j in range(n_var):
        s2[j] = sd[j] * sd[j]
    ems0 = dot(grand_coef, s2)  # the grand mean's stratum
    # without categories, the grand mean around its conditional posterior given the variances
    # (variance ems0 / n_total about mu; augmented, about the outcome mean), else as it stands
    n_cat = cat_sizes.size
    mapped = n_cat == 0
    ybar, var_mu, m_hat, prec = (shift if augmented is not None else grand_data), ems0 / n_total, 0.0, 1.0
    if mapped:
        mu, m_hat, prec = grand_mean(x[n_var], ybar, var_mu, mu0, mu_scale)
        logp -= 0.5 * math.log(prec)
    else:
        mu = x[n_var]
    zmu = (mu - mu0) / mu_scale
    logp += -0.5 * math.log(2 * math.pi) - math.log(mu_scale) - 0.5 * zmu * zmu
    g_mu = -zmu / mu_scale
    n_fix = fix_off.size
    betas, lp_fix, g_betas, b_off = fixed_prior(x, fix_off, fix_len, bases, base_off, fixed_scale)
    logp += lp_fix

    # -- statistics ----------------------------------------------------------------------
    n_cells = observed_sum.size
    P = n_cells // n_items if augmented is not None else 1
    X, col, z = np.zeros((0, 0)), np.zeros(0), np.zeros(0)
    cat_u, cat_eff = cat_data, np.zeros(0)
    if augmented is not None:
        z = np.empty(latent_index.size)
        w = observed_sum.copy()
        for j in range(latent_index.size):
            z[j] = centre[j] + y_sd * x[lat_off + j]
            w[latent_index[j]] += scatter[j] * z[j]
        r = np.empty(n_cells)
        grand = 0.0
        for c in range(n_cells):
            r[c] = w[c] - shift
            grand += w[c]
        grand /= n_cells
        pre, post = n_items, P
        if kron.size > 0:  # every non-item axis at once: one matrix product
            r = (r.reshape((n_items, P)) @ kron_t).reshape(-1)
        for a in range(dims.size if kron.size == 0 else 0):
            n = dims[a]
            post //= n
            r = _rotate(
                r,
                pre,
                n,
                post,
                _helmert(helmerts, h_off, a, n),
                False,
            )
            pre *= n
        X = r.reshape((n_items, P))
        col, total = _column_sums(X)
        mean_sq, resid = np.empty(P), np.empty(P)
        for k in range(P):
            mean_sq[k] = col[k] * col[k] / n_items
            resid[k] = total[k] - mean_sq[k]
        parts = np.zeros(pool.shape[1])
        n_strata = mask_item.shape[0]
        within_items, across = matvec(mask_item, resid), matvec(mask_rest, mean_sq)
        for m in range(n_strata):
            parts[m] = replicates * (within_items[m] + across[m])
        dev = np.zeros(betas.size)
        for f in range(n_fix):
            L = fix_len[f]
            sums = _axis_sums(w, fix_axis_stride[f], L)
            for m in range(L):
                dev[b_off[f] + m] = sums[m] * (L / n_cells) - grand
        if n_cat > 0:  # the item stratum within categories; their means are a term of their own
            item_means = _axis_sums(w, P, n_items)
            for i in range(n_items):
                item_means[i] /= P
            cat_u = vecmat(item_means, cat_weights)
            cat_eff = np.empty(n_cat)
            between = 0.0
            for c in range(n_cat):
                cat_eff[c] = cat_u[c] - grand
                between += cat_sizes[c] * cat_eff[c] * cat_eff[c]
            parts[item_part] -= replicates * P * between
        ss = matvec(pool, parts)
    else:
        ss, grand, dev = ss_data, grand_data, dev_data

    # -- strata potentials (balanced.strata_potentials) ----------------------------------
    ems = matvec(coef, s2)
    n_st = ems.size
    g_e = np.empty(n_st)
    g_ss = np.empty(n_st)
    for k in range(n_st):
        e_k = ems[k]
        logp -= 0.5 * (df[k] * math.log(e_k) + ss[k] / e_k)
        g_e[k] = -0.5 * (df[k] / e_k - ss[k] / (e_k * e_k))
        g_ss[k] = -0.5 / e_k
    g_s2 = vecmat(g_e, coef)
    g_grand, g_u = 0.0, np.zeros(n_cat)
    if n_cat == 0:
        rg = grand - mu
        logp += -0.5 * (math.log(ems0) + n_total * rg * rg / ems0)
        w0 = -0.5 * (1.0 / ems0 - n_total * rg * rg / (ems0 * ems0))
        for j in range(n_var):
            g_s2[j] += grand_coef[j] * w0
        g_grand = -n_total * rg / ems0
        g_mu -= g_grand
    else:  # u ~ N(mu, diag(a) + kappa 1 1'): determinant lemma and Sherman-Morrison
        a_cat, a_item = dot(cat_coef, s2), dot(item_coef, s2)
        kappa = dot(kappa_coef, s2)
        s1, sr, log_a, quad = 0.0, 0.0, 0.0, 0.0
        for c in range(n_cat):
            a_c = a_cat + a_item / cat_sizes[c]
            r_c = cat_u[c] - mu
            s1 += 1.0 / a_c
            sr += r_c / a_c
            log_a += math.log(a_c)
            quad += r_c * r_c / a_c
        den = 1.0 + kappa * s1
        logp += -0.5 * (log_a + math.log(den) + quad - kappa * sr * sr / den)
        sum_ga, sum_ga_n = 0.0, 0.0
        for c in range(n_cat):
            inv_a = 1.0 / (a_cat + a_item / cat_sizes[c])
            e = (cat_u[c] - mu - kappa * sr / den) * inv_a  # V^-1 r
            g_a = -0.5 * (inv_a - kappa * inv_a * inv_a / den - e * e)
            sum_ga += g_a
            sum_ga_n += g_a / cat_sizes[c]
            g_u[c] = -e
            g_mu += e
        w_k = -0.5 * (s1 / den - sr * sr / (den * den))
        for j in range(n_var):
            g_s2[j] += cat_coef[j] * sum_ga + item_coef[j] * sum_ga_n + kappa_coef[j] * w_k
    g_dev = np.zeros(betas.size)
    for f in range(n_fix):
        lo, hi = b_off[f], b_off[f + 1]
        emsf = dot(fix_coef[f], s2)
        q = 0.0
        for m in range(hi - lo):
            diff = dev[lo + m] - betas[lo + m]
            q += diff * diff
            g_dev[lo + m] = -fix_weight[f] * diff / emsf
            g_betas[lo + m] += fix_weight[f] * diff / emsf
        q *= fix_weight[f]
        logp += -0.5 * (fix_df[f] * math.log(emsf) + q / emsf)
        wf = -0.5 * (fix_df[f] / emsf - q / (emsf * emsf))
        for j in range(n_var):
            g_s2[j] += fix_coef[f, j] * wf

    # -- backward through the completed array ------------------------------------------------
    if augmented is not None:
        g_parts = vecmat(g_ss, pool)
        n_strata = mask_item.shape[0]
        g_raw = np.ascontiguousarray(g_parts[:n_strata])
        ga, gc = vecmat(g_raw, mask_item), vecmat(g_raw, mask_rest)
        G = np.empty((n_items, P))
        for k in range(P):
            ga_k, gc_k = replicates * ga[k], replicates * gc[k]
            shared = (2.0 * col[k] / n_items) * (gc_k - ga_k)
            for i in range(n_items):
                G[i, k] = 2.0 * X[i, k] * ga_k + shared
        g = G.reshape(-1).copy()
        post = 1
        if kron.size > 0:
            g = (G @ kron).reshape(-1)
        for a in range(dims.size - 1 if kron.size == 0 else -1, -1, -1):
            n = dims[a]
            pre = n_cells // (n * post)
            g = _rotate(
                g,
                pre,
                n,
                post,
                _helmert(helmerts, h_off, a, n),
                True,
            )
            post *= n
        g_total = g_grand
        for f in range(n_fix):
            lo, hi = b_off[f], b_off[f + 1]
            L = fix_len[f]
            for m in range(lo, hi):
                g_total -= g_dev[m]
            _axis_add(g, g_dev[lo:hi], fix_axis_stride[f], L / n_cells)
        if n_cat > 0:
            # through u: the category term and the within-category item stratum (whose
            # derivative in the grand mean, sum(n_g (u_g - grand)), is zero)
            for c in range(n_cat):
                g_u[c] -= g_parts[item_part] * 2.0 * replicates * P * cat_sizes[c] * cat_eff[c]
            _axis_add(g, matvec(cat_weights, g_u), P, 1.0 / P)
        for c in range(n_cells):
            g[c] += g_total / n_cells
        g_z = np.zeros(latent_index.size)
        for j in range(latent_index.size):
            g_z[j] = scatter[j] * g[latent_index[j]]
        if rep_index >= 0:
            rep = sd[rep_index]
            contrast = 0.0
            for m in range(partial.size):
                j = partial[m]
                diff_c = latent_mean[j] - z[j]
                contrast += diff_c * diff_c * contrast_weight[m]
                g_z[j] += diff_c * contrast_weight[m] / (rep * rep)
            within = within_ss + contrast
            logp += -rep_dof * math.log(rep) - within / (2.0 * rep * rep)
            g_sd[rep_index] += -rep_dof / rep + within / (rep * rep * rep)
        for j in range(g_z.size):
            grad[lat_off + j] = y_sd * g_z[j]

    if mapped:  # back through the grand mean's map: its variance, then its sampled coordinate
        g_var = grand_mean_slope(g_mu, mu, m_hat, prec, ybar, var_mu) / n_total
        for j in range(n_var):
            g_s2[j] += grand_coef[j] * g_var
        g_mu /= math.sqrt(prec)
    for j in range(n_var):
        g_sd[j] += 2.0 * sd[j] * g_s2[j]
    finish_gradient(grad, sd, g_sd, g_mu, g_betas, b_off, fix_off, fix_len, bases, base_off)
    return logp, grad


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
