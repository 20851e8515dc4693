"""The ordinal (cumulative-link) GLMM's log density and gradient as one numba kernel.

The random and fixed effects are laid out exactly as the logit GLMM's
(:mod:`bayes_tee.likelihoods.logit_glmm.kernel`: SD priors, intercept, zero-sum fixed effects,
partially centred and swept random terms, the cell effect sampled); only the likelihood per
cell differs. A cell holds
``counts[c, k]`` calls in category ``k`` of ``K``; with its linear predictor ``eta`` and its
threshold set's cutpoints ``c_0 < ... < c_{K-2}``,

    P(y = k) = F(c_k - eta) - F(c_{k-1} - eta),   c_{-1} = -inf, c_{K-1} = +inf,

with ``F`` the logistic (``link = 0``) or standard normal (``link = 1``) CDF. Each threshold
set's cutpoints are centred (they sum to zero, so the intercept and the fixed effects keep the
location) and spaced by positive gaps ``exp(g)``: ``K - 2`` free coordinates per set in ``x``
from ``gap_off``, each ``g ~ N(gap_mu, gap_sd)``. A set is the whole panel
(``thresholds="common"``) or one judge (``"judge"``): each cell names its set in ``cell_set``.

With a judge-specific latent spread (``spread="judge"``, ``spread_off >= 0``) judge ``j`` sees
``P(y <= k) = F((c_k - eta) / s_j)``: ``log s`` is a zero-sum vector over the judges (their
geometric-mean spread is the link's), ``J - 1`` coordinates from ``spread_off`` mapped by
``spread_basis``, with a zero-sum Normal(0, ``spread_sd``) prior; each cell names its judge in
``cell_judge``. A judge with ``s_j > 1`` separates items less on the latent scale: compression.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..kernels import key_cache_on_sources
from ..kernels.dense import dot, matvec, vecmat
from ..kernels.prior import finish_gradient, fixed_prior
from ..logit_glmm.kernel import _effects, _linear_predictor, _side_by_side, backward, latent_forward

_HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)
_SQRT2 = math.sqrt(2.0)
#: Probabilities below this are floored, so a category the model puts far out of reach costs a
#: large finite penalty instead of -inf.
_TINY = 1e-300


@numba.njit(cache=True, nogil=True, inline="always")
def _cdf_pdf(t, link):  # pragma: no cover - compiled
    """``(F(t), 1 - F(t), f(t))`` of the link, each computed where it is accurate."""
    if link == 0:
        if t >= 0:
            e = math.exp(-t)
            up = 1.0 / (1.0 + e)
            return up, e / (1.0 + e), up * (e / (1.0 + e))
        e = math.exp(t)
        low = e / (1.0 + e)
        return low, 1.0 / (1.0 + e), low * (1.0 / (1.0 + e))
    return (
        0.5 * math.erfc(-t / _SQRT2),
        0.5 * math.erfc(t / _SQRT2),
        math.exp(-0.5 * t * t - _HALF_LOG_2PI),
    )


@numba.njit(cache=True, nogil=True)
def cutpoints(x, gap_off, n_sets, K, gap_mu, gap_sd):  # pragma: no cover - compiled
    """The centred cutpoints ``(n_sets, K - 1)``, the gaps' log prior and the gaps ``exp(g)``."""
    cut = np.zeros((n_sets, K - 1))
    gaps = np.zeros((n_sets, K - 2))
    logp = 0.0
    for s in range(n_sets):
        acc = 0.0
        for k in range(K - 2):
            g = x[gap_off + s * (K - 2) + k]
            z = (g - gap_mu) / gap_sd
            logp += -0.5 * z * z - math.log(gap_sd) - _HALF_LOG_2PI
            gaps[s, k] = math.exp(g)
            acc += gaps[s, k]
            cut[s, k + 1] = acc
        mean = 0.0
        for k in range(K - 1):
            mean += cut[s, k]
        mean /= K - 1
        for k in range(K - 1):
            cut[s, k] -= mean
    return cut, logp, gaps


@numba.njit(cache=True, nogil=True, inline="always")
def cell_loglik(counts, c, cuts, s, eta, link, g_cut):  # pragma: no cover - compiled
    """Cell ``c``'s likelihood and its derivative in ``eta`` at threshold set ``s``'s
    cutpoints ``cuts[s]``; adds the cutpoints' gradient into ``g_cut[s]``. Only the cutpoints
    that bound a category the cell's calls fell in are evaluated, each once (a cell of one call
    costs two CDFs, not ``K - 1``). Indexed, not sliced: no array view is made per cell.

    The likelihood comes as ``(factor, ll)``: the log likelihood is ``log(factor) + ll``. A
    category's probability enters ``factor`` (``>= 1e-60`` by construction) when it is one
    call and not tiny, else ``ll`` as its log: the kernel multiplies the cells' factors and
    takes one log per few hundred cells, where a log per cell was a
    quarter of the kernel's time.
    """
    K = counts.shape[1]
    factor, ll, ge = 1.0, 0.0, 0.0
    at = -2  # the cutpoint whose CDF is held in (cF, cS, cf)
    cF, cS, cf = 0.0, 1.0, 0.0
    for k in range(K):
        n_k = counts[c, k]
        if n_k == 0:
            continue
        # lower bound: cut k - 1 (-inf for the first category)
        if k == 0:
            Fa, Sa, fa = 0.0, 1.0, 0.0
        elif at == k - 1:
            Fa, Sa, fa = cF, cS, cf
        else:
            Fa, Sa, fa = _cdf_pdf(cuts[s, k - 1] - eta, link)
        # upper bound: cut k (+inf for the last category)
        if k == K - 1:
            Fb, Sb, fb = 1.0, 0.0, 0.0
        else:
            Fb, Sb, fb = _cdf_pdf(cuts[s, k] - eta, link)
            at, cF, cS, cf = k, Fb, Sb, fb
        # the difference from the side where it does not cancel
        p = max(Fb - Fa if Fb < 0.5 else Sa - Sb, _TINY)
        if n_k == 1.0 and p > 1e-20 and factor > 1e-40:
            factor *= p
        else:
            ll += n_k * math.log(p)
        # d log p / d eta = (f_low - f_up) / p; d / d cut_k = f_up / p; d / d cut_{k-1} = -f_low / p
        ge += n_k * (fa - fb) / p
        if k < K - 1:
            g_cut[s, k] += n_k * fb / p
        if k > 0:
            g_cut[s, k - 1] -= n_k * fa / p
    return factor, ll, ge


@numba.njit(cache=True, nogil=True)
def _log_spread(x, spread_off, spread_basis, spread_sd):  # pragma: no cover - compiled
    """Each judge's log spread (zeros without one) and their zero-sum Normal log prior."""
    J = spread_basis.shape[0]
    if spread_off < 0:
        return np.zeros(J), 0.0
    log_s = matvec(spread_basis, x[spread_off : spread_off + J - 1])
    lp = -0.5 * dot(log_s, log_s) / spread_sd**2 - (J - 1) * (_HALF_LOG_2PI + math.log(spread_sd))
    return log_s, lp


@numba.njit(cache=True, nogil=True)
def ordinal_logp_grad(
    x,
    # SD priors, one per random term (x[0:n_var] are the log SDs)
    fam,
    pscale,
    pnu,
    pconst,
    # mu = x[n_var]
    mu0,
    mu_scale,
    mu_in_eta,
    # fixed effects: zero-sum coordinates at fix_off[f]
    fix_off,
    fix_len,
    bases,
    base_off,
    fixed_scale,
    # random terms, as the binomial kernel's
    r_off,
    r_len,
    r_sd,
    r_centred,
    r_parent,
    r_pidx,
    r_pidx_off,
    r_swept,
    r_bases,
    r_base_off,
    r_xoff,
    r_xn,
    r_xpos,
    cell_at,
    # data per cell: calls per category, and the threshold set the cell uses
    counts,
    cell_set,
    # cutpoint gaps: K - 2 coordinates per set from gap_off, each N(gap_mu, gap_sd)
    gap_off,
    n_sets,
    gap_mu,
    gap_sd,
    link,
    # judge-specific spread (module docstring); spread_off = -1: none
    spread_off,
    spread_basis,
    cell_judge,
    spread_sd,
):  # pragma: no cover - compiled
    """Log density and its gradient at unconstrained ``x``; the arguments are packed by
    :class:`~bayes_tee.likelihoods.ordinal.density.OrdinalDensity`.
    """
    K = counts.shape[1]
    grad = np.zeros_like(x)
    sd, g_sd, logp, mu, betas, g_betas, b_off, eff, e_off, g_prior_mu = latent_forward(
        x, fam, pscale, pnu, pconst, mu0, mu_scale, fix_off, fix_len, bases, base_off, fixed_scale,
        r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off, r_swept, r_bases, r_base_off,
        r_xoff, r_xn, r_xpos,
    )  # fmt: skip
    g_mu = g_prior_mu
    cut, lp_gap, gaps = cutpoints(x, gap_off, n_sets, K, gap_mu, gap_sd)
    logp += lp_gap
    g_cut = np.zeros((n_sets, K - 1))
    J = spread_basis.shape[0]
    log_s, lp_s = _log_spread(x, spread_off, spread_basis, spread_sd)
    logp += lp_s
    inv_s = np.exp(-log_s)
    g_ls = np.zeros(J)
    # each (set, judge)'s cutpoints over the judge's spread, and their gradient
    cut_sc = np.empty((n_sets, J, K - 1))
    g_sc = np.zeros((n_sets, J, K - 1))
    for a in range(n_sets):
        for j in range(J):
            for k in range(K - 1):
                cut_sc[a, j, k] = cut[a, k] * inv_s[j]
    flat_cut, flat_g = cut_sc.reshape((n_sets * J, K - 1)), g_sc.reshape((n_sets * J, K - 1))

    n_cells = counts.shape[0]
    n_b = betas.size
    vals = _side_by_side(betas, eff)
    g_vals = np.zeros(vals.size)
    m = cell_at.shape[1]
    eta0 = mu if mu_in_eta else 0.0
    product = 1.0  # the cells' likelihood factors not yet in logp (cell_loglik)
    for c in range(n_cells):
        eta = _linear_predictor(c, eta0, vals, cell_at)
        s = cell_set[c]
        if spread_off >= 0:
            j = cell_judge[c]
            e = eta * inv_s[j]
            factor, ll, ge_s = cell_loglik(counts, c, flat_cut, s * J + j, e, link, flat_g)
            ge = ge_s * inv_s[j]
            g_ls[j] -= ge_s * e  # d t / d log s = -t, t = (c - eta) / s
        else:
            factor, ll, ge = cell_loglik(counts, c, cut, s, eta, link, g_cut)
        logp += ll
        product *= factor
        if product < 1e-200:  # >= 1e-260 with a factor >= 1e-60: take its log and start again
            logp += math.log(product)
            product = 1.0
        if mu_in_eta:
            g_mu += ge
        for j in range(m):
            g_vals[cell_at[c, j]] += ge
    logp += math.log(product)
    g_betas += g_vals[:n_b]
    g_eff = g_vals[n_b:]
    g_mu = backward(
        x, grad, sd, g_sd, g_eff, g_betas, g_mu, g_prior_mu, mu, betas, eff, e_off,
        r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off, r_swept, r_bases, r_base_off,
        r_xoff, r_xn, r_xpos,
    )  # fmt: skip
    finish_gradient(grad, sd, g_sd, g_mu, g_betas, b_off, fix_off, fix_len, bases, base_off)
    if spread_off >= 0:
        for a in range(n_sets):
            for j in range(J):
                for k in range(K - 1):
                    g_cut[a, k] += g_sc[a, j, k] * inv_s[j]
                    g_ls[j] -= g_sc[a, j, k] * cut_sc[a, j, k]
        g_ls -= log_s / (spread_sd * spread_sd)
        g_coords = vecmat(g_ls, spread_basis)
        for m in range(J - 1):
            grad[spread_off + m] = g_coords[m]
    # the gaps: cut_j = (sum of gaps below j) - mean over j, so d cut_j / d g_k =
    # gap_k * (1[j > k] - (K - 2 - k) / (K - 1)); plus the gaps' own prior
    for s in range(n_sets):
        total = 0.0
        for j in range(K - 1):
            total += g_cut[s, j]
        above = 0.0  # sum of g_cut over j > k, built from the top
        for k in range(K - 3, -1, -1):
            above += g_cut[s, k + 1]
            i = gap_off + s * (K - 2) + k
            share = (K - 2 - k) / (K - 1)
            grad[i] = gaps[s, k] * (above - share * total) - (x[i] - gap_mu) / (gap_sd * gap_sd)
    return logp, grad


@numba.njit(cache=True, nogil=True)
def cell_category_probabilities(
    x, n_var, mu_in_eta, fix_off, fix_len, bases, base_off, r_off, r_len, r_sd, r_centred,
    r_parent, r_pidx, r_pidx_off, r_swept, r_bases, r_base_off, r_xoff, r_xn, r_xpos, cell_at,
    cell_set, gap_off, n_sets, K, link, spread_off, spread_basis, cell_judge,
):  # fmt: skip  # pragma: no cover - compiled
    """Each cell's category probabilities ``(n_cells, K)`` at ``x``, and the grand mean."""
    sd = np.exp(x[:n_var])
    intercept = x[n_var]
    betas = fixed_prior(x, fix_off, fix_len, bases, base_off, np.ones(fix_off.size))[0]
    eff, e_off, _, shift = _effects(
        x, sd, intercept, betas, r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off,
        r_swept, r_bases, r_base_off, r_xoff, r_xn, r_xpos,
    )  # fmt: skip
    cut, _, _ = cutpoints(x, gap_off, n_sets, K, 0.0, 1.0)
    inv_s = np.exp(-_log_spread(x, spread_off, spread_basis, 1.0)[0])
    vals = _side_by_side(betas, eff)
    eta0 = intercept if mu_in_eta else 0.0
    out = np.zeros((cell_at.shape[0], K))
    for c in range(cell_at.shape[0]):
        eta = _linear_predictor(c, eta0, vals, cell_at)
        cs = cut[cell_set[c]]
        scale = inv_s[cell_judge[c]] if spread_off >= 0 else 1.0
        below = 0.0
        for k in range(K - 1):
            F, _, _ = _cdf_pdf((cs[k] - eta) * scale, link)
            out[c, k] = F - below
            below = F
        out[c, K - 1] = 1.0 - below
    return out, intercept - shift


@numba.njit(cache=True, nogil=True)
def derived_draws(X, n_var, prob_args, weights, values, gap_off, n_sets):  # pragma: no cover - compiled
    """Per row of ``X`` (draws of ``x``): the grand mean, the panel's expected score (cells
    weighted by ``weights``, categories scored by ``values``) and the cutpoints, as
    :meth:`~bayes_tee.likelihoods.ordinal.density.OrdinalDensity.derive` gives them for one.
    """
    n, K = X.shape[0], values.size
    mu, score = np.empty(n), np.empty(n)
    cuts = np.empty((n, n_sets, K - 1))
    for i in range(n):
        # one tuple: a call of more than 30 arguments is compiled through a list numba cannot type
        p, mu[i] = cell_category_probabilities(*((X[i], n_var) + prob_args))
        score[i] = dot(weights, matvec(p, values))
        cut = cutpoints(X[i], gap_off, n_sets, K, 0.0, 1.0)[0]
        for a in range(n_sets):
            for k in range(K - 1):
                cuts[i, a, k] = cut[a, k]
    return mu, score, cuts


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
