"""The priors every numba density shares: SD priors on the log scale and zero-sum fixed effects.

The strata, blocks, GLMM and ordinal kernels (:mod:`~bayes_tee.likelihoods.strata.kernel`, ...)
start from the same unconstrained vector head (the collapsed kernel's is the log SDs alone):
``x[0:n_var]`` the log SDs, ``x[n_var]`` the grand mean, then the zero-sum coordinates of each
fixed facet. These functions evaluate their log prior (with the log transform's Jacobian) and
turn gradients on the SDs and level effects back into gradients on ``x``. Prior family codes:
0 half-t, 1 half-normal, 2 half-Cauchy, 3 exponential, 4 gamma (:data:`FAMILIES`); their
normalising constants come from :meth:`~bayes_tee._core.priors.SDPrior.log_normaliser`.

They are written as loops over scalars, not NumPy array expressions or slice assignments: numba
compiles a loop in a fraction of the time (``fixed_prior`` took 3.5 s to compile as array
expressions, 0.25 s as loops), and every kernel's first fit on a new machine pays that compile.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from . import key_cache_on_sources

#: Kernel codes of the SD prior families.
FAMILIES = {"half_t": 0, "half_normal": 1, "half_cauchy": 2, "exponential": 3, "gamma": 4}


@numba.njit(cache=True, nogil=True)
def sd_prior(x, fam, pscale, pnu, pconst):  # pragma: no cover - compiled
    """Log prior of the SDs ``exp(x[:n_var])`` with the Jacobian, and its gradient in the SDs
    (without the Jacobian's, which :func:`finish_gradient` adds).
    """
    n_var = fam.size
    sd = np.empty(n_var)
    logp = 0.0
    g_sd = np.empty(n_var)
    for j in range(n_var):
        v = x[j]
        s = math.exp(v)
        sd[j] = s
        logp += v + pconst[j]
        if fam[j] == 0:
            nu, sc2 = pnu[j], pscale[j] * pscale[j]
            logp -= (nu + 1.0) / 2.0 * math.log1p(s * s / (nu * sc2))
            g_sd[j] = -(nu + 1.0) * s / (nu * sc2 + s * s)
        elif fam[j] == 1:
            sc2 = pscale[j] * pscale[j]
            logp -= s * s / (2.0 * sc2)
            g_sd[j] = -s / sc2
        elif fam[j] == 2:
            sc2 = pscale[j] * pscale[j]
            logp -= math.log1p(s * s / sc2)
            g_sd[j] = -2.0 * s / (sc2 + s * s)
        elif fam[j] == 3:
            logp -= s / pscale[j]
            g_sd[j] = -1.0 / pscale[j]
        else:  # gamma, shape pnu (the density's s**(nu - 1))
            logp += (pnu[j] - 1.0) * v - s / pscale[j]
            g_sd[j] = (pnu[j] - 1.0) / s - 1.0 / pscale[j]
    return sd, logp, g_sd


@numba.njit(cache=True, nogil=True)
def fixed_prior(x, fix_off, fix_len, bases, base_off, fixed_scale):  # pragma: no cover - compiled
    """Level effects of every fixed facet (concatenated), their zero-sum Normal log prior (SD
    ``fixed_scale[f]`` for facet ``f``), its gradient in the effects and the offsets of each
    facet in the concatenation. Facet ``f``'s effects are its basis (``L x (L - 1)``, C order,
    at ``bases[base_off[f]:]``) times its coordinates ``x[fix_off[f]:]``.
    """
    n_fix = fix_off.size
    b_off = np.zeros(n_fix + 1, dtype=np.int64)
    for f in range(n_fix):
        b_off[f + 1] = b_off[f] + fix_len[f]
    betas = np.zeros(b_off[n_fix])
    g_betas = np.zeros(b_off[n_fix])
    logp = 0.0
    for f in range(n_fix):
        L, scale = fix_len[f], fixed_scale[f]
        inv_var = 1.0 / (scale * scale)
        quad = 0.0
        for i in range(L):
            row, acc = base_off[f] + i * (L - 1), 0.0
            for j in range(L - 1):
                acc += bases[row + j] * x[fix_off[f] + j]
            betas[b_off[f] + i] = acc
            g_betas[b_off[f] + i] = -acc * inv_var
            quad += acc * acc
        logp += -0.5 * quad * inv_var - (L - 1) * (0.5 * math.log(2 * math.pi) + math.log(scale))
    return betas, logp, g_betas, b_off


@numba.njit(cache=True, nogil=True)
def grand_mean(z, ybar, var, mu0, mu_scale):  # pragma: no cover - compiled
    """The grand mean at its sampled coordinate ``z``: ``mu = m + z / sqrt(prec)``, around its
    conditional posterior given the variances when the data's mean ``ybar`` has variance ``var``
    about ``mu`` (``prec = 1 / mu_scale**2 + 1 / var``, ``m`` the precision-weighted mean of
    ``ybar`` and the prior's ``mu0``). The log density gains the Jacobian ``-log(prec) / 2``.
    Sampled as it stands, ``mu``'s scale follows a few-level SD (``sigma_prompt**2 / 2`` at two
    prompts): a neck where that SD is small, which NUTS crosses only with short steps.
    Returns ``mu``, ``m`` and ``prec``.
    """
    inv_prior = 1.0 / (mu_scale * mu_scale)
    prec = inv_prior + 1.0 / var
    m = (mu0 * inv_prior + ybar / var) / prec
    return m + z / np.sqrt(prec), m, prec


@numba.njit(cache=True, nogil=True)
def grand_mean_slope(g_mu, mu, m, prec, ybar, var):  # pragma: no cover - compiled
    """The slope in ``var`` of the log density through :func:`grand_mean`'s map and its
    Jacobian, ``g_mu`` its slope in ``mu`` (the slope in ``z`` is ``g_mu / sqrt(prec)``).
    """
    return (g_mu * (m - ybar + 0.5 * (mu - m)) + 0.5) / (prec * var * var)


@numba.njit(cache=True, nogil=True)
def finish_gradient(
    grad, sd, g_sd, g_mu, g_betas, b_off, fix_off, fix_len, bases, base_off
):  # pragma: no cover
    """Write the gradients of the log SDs (Jacobian included), the grand mean and the zero-sum
    coordinates into ``grad`` (in place).
    """
    n_var = sd.size
    for j in range(n_var):
        grad[j] = g_sd[j] * sd[j] + 1.0
    grad[n_var] = g_mu
    for f in range(fix_off.size):
        L = fix_len[f]
        for j in range(L - 1):
            acc = 0.0
            for i in range(L):
                acc += g_betas[b_off[f] + i] * bases[base_off[f] + i * (L - 1) + j]
            grad[fix_off[f] + j] = acc


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
