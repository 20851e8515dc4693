"""The logit GLMM's log density and gradient as one numba kernel.

The same model as :func:`~bayes_tee.likelihoods.logit_glmm.model.binomial_model`: SD priors, the
intercept and the grand mean's prior, zero-sum fixed effects, the random-effect vectors (adapted
to their data per level, items drawn around their category, swept few-level terms), and per cell the
binomial log likelihood of its successes, or (``cell_sd >= 0``) its log marginal likelihood
with the cell effect integrated out (:func:`cell_quadrature`: the adaptive Gauss-Hermite rule
of :mod:`.quadrature`, one cell at a time, its gradient through the moving nodes). Like
:mod:`.strata_kernel`, its argument types do not depend on the design, so numba compiles it once
per machine and caches it on disk.

Random terms are described by flat arrays (packed by
:class:`~bayes_tee.likelihoods.logit_glmm.density.BinomialDensity`), in an order where every
term's parent comes first:

- ``r_off, r_len``: where its coordinates sit in ``x`` and how many levels it has;
- ``r_sd``: which SD scales it; ``r_centred`` (per level, concatenated over terms): centred
  (a swept two-way term centred on its main effects) or not;
- ``r_parent``: the mean its effects are drawn around: ``-1`` zero, ``-2`` the grand mean,
  ``p >= 0`` term ``p``'s effect at level ``r_pidx[r_pidx_off[t] + level]`` (an item's category, an item x
  judge effect's item);
- ``r_xn, r_xoff, r_xpos``: for a swept two-way term centred on its main effects
  (``GlmmTerm.crossed`` in ``bayes_tee.likelihoods.logit_glmm.model``), per level, where those
  ``r_xn[t]`` effects sit in ``[fixed level effects, random effects]``; its coordinates ``w[1:]``
  are drawn around the zero-sum part of their sum, and its gradient flows back to them;
- ``r_bases, r_base_off``: per swept term, from ``r_base_off[t]``, its ``(L, L - 1)`` zero-sum
  basis, then the data's rough coordinates of its deviations and their precision
  (:func:`~bayes_tee.likelihoods.logit_glmm.layout.sweep_adaptation`): a non-centred swept term's
  coordinates ``z`` give its deviations' coordinates ``v = a(sd) + b(sd) z``, centred on the
  data where they pin the deviations, non-centred where the prior does; for a term that is not
  swept, from ``r_base_off[t]`` (when its block there holds ``2 L`` values) each level's rough
  effect ``v_hat`` then its precision ``info``
  (:func:`~bayes_tee.likelihoods.logit_glmm.layout.level_adaptation`): a level with ``info > 0`` is
  ``mean + sd u``, ``u = (sd info / q) (v_hat - mean) + z / sqrt(q)``, ``q = 1 + sd^2 info``,
  any other ``mean + sd z``;
- ``cell_at``: per cell, where each fixed and random effect of its linear predictor sits in
  ``[fixed level effects, random effects]`` (a category's effect reaches cells through its
  items, an item's through its item x judge effects, a crossed term's main effects through
  it, so they have no column); ``mu_in_eta`` says whether the grand mean enters directly. The
  cell loops gather and scatter through one row (1.3x faster on Messing (2026)'s safety layout
  than looking each term up).
"""

from __future__ import annotations

import numba
import numpy as np

from ..kernels import key_cache_on_sources
from ..kernels.dense import dot, matvec, vecmat
from ..kernels.prior import finish_gradient, fixed_prior, sd_prior
from .quadrature_kernel import _sigmoid, cell_quadrature

_HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)


@numba.njit(cache=True, nogil=True)
def _crossed_mean(t, L, betas, eff, r_xoff, r_xn, r_xpos):  # pragma: no cover - compiled
    """Per level of crossed term ``t``, the sum of the main effects it is centred on (positions
    in ``[betas, eff]``).
    """
    nb = betas.size
    m = np.zeros(L)
    for lev in range(L):
        for q in range(r_xn[t]):
            pos = r_xpos[r_xoff[t] + lev * r_xn[t] + q]
            m[lev] += betas[pos] if pos < nb else eff[pos - nb]
    return m


@numba.njit(cache=True, nogil=True, inline="always")
def _sweep(bases, off, L):  # pragma: no cover - compiled
    """A swept term's packed constants from ``bases[off:]``: its ``(L, L - 1)`` zero-sum basis,
    the data's rough coordinates ``v_hat`` of its deviations and their precision ``info``.
    """
    n = L * (L - 1)
    B = np.ascontiguousarray(bases[off : off + n]).reshape((L, L - 1))
    return B, np.ascontiguousarray(bases[off + n : off + n + L - 1]), bases[off + n + L - 1]


@numba.njit(cache=True, nogil=True)
def _effects(
    x,
    sd,
    intercept,
    betas,
    r_off,
    r_len,
    r_sd,
    r_centred,
    r_parent,
    r_pidx,
    r_pidx_off,
    r_swept,
    bases,
    r_base_off,
    r_xoff,
    r_xn,
    r_xpos,
):  # pragma: no cover - compiled
    """Each random term's effects (concatenated, offsets ``e_off``), their log prior, and the
    swept terms' mean directions ``shift`` (the grand mean is ``intercept - shift``).
    """
    n_r = r_off.size
    e_off = np.zeros(n_r + 1, dtype=np.int64)
    for t in range(n_r):
        e_off[t + 1] = e_off[t] + r_len[t]
    eff = np.zeros(e_off[n_r])
    logp, shift = 0.0, 0.0
    for t in range(n_r):
        s = sd[r_sd[t]]
        par = r_parent[t]
        L = r_len[t]
        if r_swept[t]:
            # sd * (w0 / sqrt(L), plus the zero-sum basis times the rest): the mean direction
            # moves into the intercept
            # (loops over scalars, not array expressions: numba compiles those one by one)
            w0 = x[r_off[t]]
            B, v_hat, info = _sweep(bases, r_base_off[t], L)
            rest = np.empty(L - 1)
            for k in range(L - 1):
                rest[k] = x[r_off[t] + 1 + k]
            m = 0.0 if par == -1 else intercept
            shift += s * w0 / np.sqrt(L)
            logp += -0.5 * w0 * w0 - L * _HALF_LOG_2PI
            if r_centred[e_off[t]]:
                dev = matvec(B, rest)
                for lev in range(L):
                    eff[e_off[t] + lev] = m + dev[lev]
                if r_xn[t] > 0:  # around the zero-sum part of its main effects' sum
                    centre = vecmat(_crossed_mean(t, L, betas, eff, r_xoff, r_xn, r_xpos), B)
                    for k in range(L - 1):
                        rest[k] -= centre[k]
                logp += -0.5 * dot(rest, rest) / (s * s) - (L - 1) * np.log(s)
            else:  # the data-adapted coordinates (glmm_layout.sweep_adaptation)
                # u = v / s, written without dividing by s (which may underflow to zero)
                q = 1.0 + s * s * info
                root, su, uu = np.sqrt(q), np.empty(L - 1), 0.0
                for k in range(L - 1):
                    u_k = (s * info / q) * v_hat[k] + rest[k] / root
                    su[k] = s * u_k
                    uu += u_k * u_k
                dev = matvec(B, su)
                for lev in range(L):
                    eff[e_off[t] + lev] = m + dev[lev]
                logp += -0.5 * uu - 0.5 * (L - 1) * np.log(q)
            continue
        a_off = _level_adaptation(t, r_base_off, bases.size, L)
        q_product = 1.0  # the adapted levels' q not yet in logp: one log per many levels
        for lev in range(L):
            m = (
                0.0
                if par == -1
                else (intercept if par == -2 else eff[e_off[par] + r_pidx[r_pidx_off[t] + lev]])
            )
            v = x[r_off[t] + lev]
            if a_off >= 0 and bases[a_off + L + lev] > 0.0:  # the level's adapted coordinate
                # around the data's rough total, relative to the sampled mean
                info = bases[a_off + L + lev]
                q = 1.0 + s * s * info
                u = (s * info / q) * (bases[a_off + lev] - m) + v / np.sqrt(q)
                eff[e_off[t] + lev] = m + s * u
                logp += -0.5 * u * u - _HALF_LOG_2PI
                if q < 1e100:
                    q_product *= q
                    if q_product > 1e200:  # < 1e300: take its log and start again
                        logp -= 0.5 * np.log(q_product)
                        q_product = 1.0
                else:
                    logp -= 0.5 * np.log(q)
            else:
                eff[e_off[t] + lev] = m + s * v
                logp += -0.5 * v * v - _HALF_LOG_2PI
        logp -= 0.5 * np.log(q_product)
    return eff, e_off, logp, shift


@numba.njit(cache=True, nogil=True, inline="always")
def _level_adaptation(t, r_base_off, n_bases, L):  # pragma: no cover - compiled
    """Where a non-swept term's per-level adaptation sits in ``bases`` (its ``L`` rough
    effects, then their ``L`` precisions), or ``-1`` when it has none.
    """
    end = r_base_off[t + 1] if t + 1 < r_base_off.size else n_bases
    return r_base_off[t] if end - r_base_off[t] == 2 * L else -1


@numba.njit(cache=True, nogil=True, inline="always")
def _side_by_side(betas, eff):  # pragma: no cover - compiled
    """The fixed level effects and the random effects in one vector, as ``cell_at`` indexes them."""
    vals = np.empty(betas.size + eff.size)
    for j in range(betas.size):
        vals[j] = betas[j]
    for j in range(eff.size):
        vals[betas.size + j] = eff[j]
    return vals


@numba.njit(cache=True, nogil=True, inline="always")
def _linear_predictor(c, eta0, vals, cell_at):  # pragma: no cover - compiled
    """Cell ``c``'s linear predictor: ``eta0`` (the grand mean, when it enters directly) plus
    its fixed and random effects.
    """
    eta = eta0
    for j in range(cell_at.shape[1]):
        eta += vals[cell_at[c, j]]
    return eta


@numba.njit(cache=True, nogil=True)
def backward(
    x, grad, sd, g_sd, g_eff, g_betas, g_mu, g_prior_mu, mu, betas, eff, e_off,
    r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off, r_swept, r_bases, r_base_off,
    r_xoff, r_xn, r_xpos,
):  # fmt: skip  # pragma: no cover - compiled
    """Backward through the random effects, children before parents: the gradient of every
    effect's coordinates and SDs from ``g_eff`` (the log density's gradient with respect to the
    effects) and the effects' own priors; returns the grand mean's gradient with theirs added.
    Shared by every GLMM kernel (:func:`binomial_logp_grad`, the ordinal kernel).
    """
    n_r = r_off.size
    n_b = betas.size
    for t in range(n_r - 1, -1, -1):
        j = r_sd[t]
        s = sd[j]
        par = r_parent[t]
        L = r_len[t]
        if r_swept[t]:
            o = r_off[t]
            B, v_hat, info = _sweep(r_bases, r_base_off[t], L)
            w_rest = np.empty(L - 1)
            for k in range(L - 1):
                w_rest[k] = x[o + 1 + k]
            ge = np.ascontiguousarray(g_eff[e_off[t] : e_off[t] + L])
            gb = vecmat(ge, B)
            grad[o] = -x[o] - g_prior_mu * s / np.sqrt(L)
            g_sd[j] -= g_prior_mu * x[o] / np.sqrt(L)
            if r_centred[e_off[t]]:
                if r_xn[t] > 0:  # the prior's pull on the main effects it is centred on
                    centre = vecmat(_crossed_mean(t, L, betas, eff, r_xoff, r_xn, r_xpos), B)
                    for k in range(L - 1):
                        w_rest[k] -= centre[k]
                    g_main = matvec(B, w_rest)
                    for lev in range(L):
                        g_main[lev] /= s * s
                    for lev in range(L):
                        for q in range(r_xn[t]):
                            pos = r_xpos[r_xoff[t] + lev * r_xn[t] + q]
                            if pos < n_b:
                                g_betas[pos] += g_main[lev]
                            else:
                                g_eff[pos - n_b] += g_main[lev]
                for m in range(L - 1):
                    grad[o + 1 + m] = gb[m] - w_rest[m] / (s * s)
                g_sd[j] += dot(w_rest, w_rest) / (s * s * s) - (L - 1) / s
            else:  # v = s u = a(s) + b(s) z, its prior N(0, s) and the Jacobian b(s)^(L-1)
                q = 1.0 + s * s * info
                root = np.sqrt(q)
                # d/ds of -u.u/2 - (L-1) log(q)/2 at fixed z (g_prior), with no division by s
                g_prior, g_dv = 0.0, 0.0
                for m in range(L - 1):
                    u_m = (s * info / q) * v_hat[m] + w_rest[m] / root
                    grad[o + 1 + m] = (s / root) * gb[m] - u_m / root
                    dv_ds = (2.0 * s * info / (q * q)) * v_hat[m] + w_rest[m] / (q * root)
                    g_prior += -2.0 * info / (q * q) * u_m * v_hat[m]
                    g_prior += u_m * ((info / q) * v_hat[m] + (s * info / (q * root)) * w_rest[m])
                    g_dv += gb[m] * dv_ds
                g_sd[j] += g_dv + g_prior - (L - 1) * s * info / q
            if par == -2:
                for lev in range(L):
                    g_mu += ge[lev]
            continue
        a_off = _level_adaptation(t, r_base_off, r_bases.size, L)
        for lev in range(r_len[t]):
            i = e_off[t] + lev
            v = x[r_off[t] + lev]
            if a_off >= 0 and r_bases[a_off + L + lev] > 0.0:
                # e = m + s u, u = (s info / q) (y - m) + v / sqrt(q): as the swept terms'
                # backward at v_hat = y - m, and through m, de/dm = 1 / q, du/dm = -s info / q
                m = 0.0 if par == -1 else (mu if par == -2 else eff[e_off[par] + r_pidx[r_pidx_off[t] + lev]])
                info, vh = r_bases[a_off + L + lev], r_bases[a_off + lev] - m
                q = 1.0 + s * s * info
                root = np.sqrt(q)
                u = (s * info / q) * vh + v / root
                grad[r_off[t] + lev] = (g_eff[i] * s - u) / root
                de_ds = (2.0 * s * info / (q * q)) * vh + v / (q * root)
                du_ds = info * vh * (1.0 - s * s * info) / (q * q) - v * s * info / (q * root)
                g_sd[j] += g_eff[i] * de_ds - u * du_ds - s * info / q
                g_m = (g_eff[i] + u * s * info) / q
            else:
                grad[r_off[t] + lev] = g_eff[i] * s - v
                g_sd[j] += g_eff[i] * v
                g_m = g_eff[i]
            if par == -2:
                g_mu += g_m
            elif par >= 0:
                g_eff[e_off[par] + r_pidx[r_pidx_off[t] + lev]] += g_m
    return g_mu


@numba.njit(cache=True, nogil=True)
def latent_forward(
    x, fam, pscale, pnu, pconst, mu0, mu_scale, fix_off, fix_len, bases, base_off, fixed_scale,
    r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off, r_swept, r_bases, r_base_off,
    r_xoff, r_xn, r_xpos,
):  # fmt: skip  # pragma: no cover - compiled
    """The latent predictor's parameters at ``x``: the SDs (and their prior's gradient), the
    log prior of SDs, fixed and random effects and the grand mean, the intercept, the fixed
    level effects (and their prior's gradient), the random effects and the grand mean prior's
    gradient. Every GLMM kernel starts here and ends in :func:`backward`.
    """
    n_var = fam.size
    sd, logp, g_sd = sd_prior(x, fam, pscale, pnu, pconst)
    intercept = x[n_var]
    betas, lp_fix, g_betas, b_off = fixed_prior(x, fix_off, fix_len, bases, base_off, fixed_scale)
    logp += lp_fix
    eff, e_off, lp_eff, shift = _effects(
        x, sd, intercept, betas, r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off,
        r_swept, r_bases, r_base_off, r_xoff, r_xn, r_xpos,
    )  # fmt: skip
    logp += lp_eff
    # the grand mean's prior, at mu = intercept - shift
    zmu = (intercept - shift - mu0) / mu_scale
    logp += -_HALF_LOG_2PI - np.log(mu_scale) - 0.5 * zmu * zmu
    return sd, g_sd, logp, intercept, betas, g_betas, b_off, eff, e_off, -zmu / mu_scale


@numba.njit(cache=True, nogil=True)
def binomial_logp_grad(
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
    # random terms (module docstring)
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
    # crossed terms: per level, r_xn[t] positions in [fixed level effects, random effects] of
    # the main effects it is centred on, from r_xpos[r_xoff[t]]
    r_xoff,
    r_xn,
    r_xpos,
    # per cell, where each fixed and random effect of its linear predictor sits in the
    # kernel's vector [fixed level effects, random effects] (the latter in term order)
    cell_at,
    # data per cell; cell_sd: the cell effect's SD index (-1: no cell effect)
    successes,
    trials,
    log_binom,
    cell_sd,
    nodes_x,
    nodes_lw,
):  # pragma: no cover - compiled
    """Log density and its gradient at unconstrained ``x``; the arguments are packed by
    :class:`~bayes_tee.likelihoods.logit_glmm.density.BinomialDensity`.
    """
    grad = np.zeros_like(x)
    sd, g_sd, logp, mu, betas, g_betas, b_off, eff, e_off, g_prior_mu = latent_forward(
        x, fam, pscale, pnu, pconst, mu0, mu_scale, fix_off, fix_len, bases, base_off, fixed_scale,
        r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off, r_swept, r_bases, r_base_off,
        r_xoff, r_xn, r_xpos,
    )  # fmt: skip
    g_mu = g_prior_mu

    # -- likelihood per cell, and its gradient scattered to the effects --------------------
    # the fixed and random effects side by side, so that each cell gathers its linear predictor
    # (and scatters its gradient) through one row of precomputed positions
    n_cells = successes.size
    n_b = betas.size
    vals = _side_by_side(betas, eff)
    g_vals = np.zeros(vals.size)
    m = cell_at.shape[1]
    eta0 = mu if mu_in_eta else 0.0
    for c in range(n_cells):
        eta = _linear_predictor(c, eta0, vals, cell_at)
        k, n = successes[c], trials[c]
        if cell_sd >= 0:
            ll, ge, gs, _ = cell_quadrature(k, n, eta, sd[cell_sd], nodes_x, nodes_lw)
            g_sd[cell_sd] += gs
        else:  # one exponential for the log likelihood and its derivative
            e = np.exp(-abs(eta))
            ll = k * eta - n * (np.log1p(e) + max(eta, 0.0))
            ge = k - n * (1.0 / (1.0 + e) if eta >= 0 else e / (1.0 + e))
        logp += ll + log_binom[c]
        if mu_in_eta:
            g_mu += ge
        for j in range(m):
            g_vals[cell_at[c, j]] += ge
    g_betas += g_vals[:n_b]
    g_eff = g_vals[n_b:]

    g_mu = backward(
        x, grad, sd, g_sd, g_eff, g_betas, g_mu, g_prior_mu, mu, betas, eff, e_off,
        r_off, r_len, r_sd, r_centred, r_parent, r_pidx, r_pidx_off, r_swept, r_bases, r_base_off,
        r_xoff, r_xn, r_xpos,
    )  # fmt: skip
    finish_gradient(grad, sd, g_sd, g_mu, g_betas, b_off, fix_off, fix_len, bases, base_off)
    return logp, grad


@numba.njit(cache=True, nogil=True)
def cell_probabilities(
    x,
    n_var,
    mu_in_eta,
    fix_off,
    fix_len,
    bases,
    base_off,
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
    successes,
    trials,
    cell_sd,
    nodes_x,
    nodes_lw,
):  # pragma: no cover - compiled
    """Each cell's success probability given its data (posterior mean over the cell effect;
    ``invlogit(eta)`` without one), for the panel's mean ``p_panel``, and the grand mean.
    """
    sd = np.exp(x[:n_var])
    mu = x[n_var]
    betas = fixed_prior(x, fix_off, fix_len, bases, base_off, np.ones(fix_off.size))[0]
    eff, _, _, shift = _effects(
        x,
        sd,
        mu,
        betas,
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
    )
    vals = _side_by_side(betas, eff)
    eta0 = mu if mu_in_eta else 0.0
    out = np.zeros(successes.size)
    for c in range(successes.size):
        eta = _linear_predictor(c, eta0, vals, cell_at)
        if cell_sd >= 0:
            out[c] = cell_quadrature(successes[c], trials[c], eta, sd[cell_sd], nodes_x, nodes_lw)[3]
        else:
            out[c] = _sigmoid(eta)
    return out, mu - shift


@numba.njit(cache=True, nogil=True)
def derived_draws(X, n_var, prob_args, weights):  # pragma: no cover - compiled
    """Per row of ``X`` (draws of ``x``): the grand mean and the panel's mean success
    probability (cells weighted by ``weights``), as
    :meth:`~bayes_tee.likelihoods.logit_glmm.density.BinomialDensity.derive` gives them for one.
    """
    n = X.shape[0]
    mu, p_panel = np.empty(n), np.empty(n)
    for i in range(n):
        p, mu[i] = cell_probabilities(*((X[i], n_var) + prob_args))
        p_panel[i] = dot(p, weights)
    return mu, p_panel


# every njit above: its cache is keyed on every kernel's source too (:data:`SOURCE_DIGEST`)
key_cache_on_sources(globals())
