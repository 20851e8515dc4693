"""The NumPy half of the ``collapsed`` likelihood (:mod:`bayes_tee.likelihoods.collapsed.density`):
the fixed effects' design matrix in the coordinates the PyMC model samples them in, their Normal
priors, and the statistics of the cell means that the likelihood needs, summed once.

The fixed coefficients ``beta`` (length ``p``) are the grand mean, the zero-sum coordinates of
each fixed facet's level effects (PyMC's ``ZeroSumNormal`` basis), each common covariate slope
and the zero-sum coordinates of each fixed per-level slope; cell ``c``'s mean has predictor
``x_c' beta``. Cells are grouped by their calls ``n`` (group ``g``: every cell holding ``n_g``
calls has the same variance), and items by their *pattern*, how many cells of each group they
hold. Everything the likelihood reads of the data is then a handful of sums: per group
``A_g = sum x_c x_c'``, ``xy_g = sum x_c y_c`` and ``yy_g = sum y_c^2``; per pattern and pair of
groups ``T = sum_i u_ig u_ih'``, ``U = sum_i u_ig t_ih`` and ``TT = sum_i t_ig t_ih``, where
``u_ig`` and ``t_ig`` sum item ``i``'s cells of group ``g`` (their ``x_c`` and ``y_c``).

>>> import bayes_tee as bt
>>> from bayes_tee.design.build import build_design
>>> df = bt.simulate.bias_dgp(n_items=10, random_seed=1)
>>> d = build_design(df, formula="score ~ model + length + (1|item)", system="model", warn=False)
>>> lay = collapsed_layout(d)
>>> lay.names, lay.p == 2 + len(d.levels["system"]) - 1
(['mu', 'system_effect', 'beta_length'], True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._core.density import zerosum_basis
from ..._core.priors import PriorSpec
from ...design.design import Design
from ...design.terms import Term, cell_term

#: Warm-up steps per chain: NUTS samples two or three log SDs, near Gaussian, and nutpie's
#: adaptation settles well within them (AlpacaEval 2, 58 systems x 805 instructions: 300 steps
#: gave the same step size, 3.2-3.4 leapfrog steps a draw and bulk ESS 3,590-3,640 of 4,000, R-hat
#: <= 1.005, as the Gaussian family's 1,000, in 0.9 s of sampling instead of 1.2-1.3 s).
COLLAPSED_TUNE = 300


def collapsed_tune(design: Design) -> int:
    """:data:`COLLAPSED_TUNE` (the ``collapsed`` likelihood samples the SDs alone).

    >>> collapsed_tune(None)
    300
    """
    return COLLAPSED_TUNE


@dataclass(frozen=True)
class CollapsedLayout:
    """Everything the ``collapsed`` density needs that does not depend on the parameters.

    Attributes
    ----------
    blocks : list of (name, start, size, basis or None)
        Where each reported coefficient sits in ``beta`` and the zero-sum basis mapping its
        coordinates to the level effects (``None``: a scalar).
    p : int
        Coefficients in ``beta``.
    prior_mean, prior_sd : numpy.ndarray
        The Normal prior of each coordinate of ``beta`` (PyMC's: a ``ZeroSumNormal``'s
        coordinates are independent with its sigma).
    item, cell, residual : Term or None
        The item's random intercept, the cell term and the replicate residual.
    n_group : numpy.ndarray
        Calls per cell of each group.
    stats : dict
        The sums of the module docstring (``A``, ``xy``, ``yy``, ``N`` per group; ``T``, ``U``,
        ``TT``, ``m`` and ``items`` per pattern, none without an item term), the within-cell sum
        of squares ``within_ss`` and its degrees of freedom ``within_dof``, the within-cell
        cross-products of covariates that vary within cells in the coefficients (``within_A``,
        ``within_xy``: the sum of squares of ``y - slope' x`` is ``within_ss - 2 beta' within_xy +
        beta' within_A beta``), and the cells ``n_cells``.
    dims : dict
        The facet of each reported coefficient that is a vector of level effects.
    """

    blocks: list[tuple[str, int, int, np.ndarray | None]]
    p: int
    prior_mean: np.ndarray
    prior_sd: np.ndarray
    item: Term | None
    cell: Term
    residual: Term | None
    n_group: np.ndarray
    stats: dict
    dims: dict[str, tuple[str, ...]]

    @property
    def names(self) -> list[str]:
        """The reported fixed coefficients, in order: ``mu``, each fixed facet's effect, each slope."""
        return [b[0] for b in self.blocks]


def collapsed_limitation(design: Design) -> str | None:
    """Why ``collapsed`` cannot fit ``design``, or ``None`` when it can.

    >>> import bayes_tee as bt
    >>> collapsed_limitation(bt.validate_design(bt.datasets.load("tee_demo"), outcome="score",
    ...                                         item="item", prompt="prompt"))[:32]
    'the random term prompt is neithe'
    """
    if design.family != "gaussian":
        return f"it is a Gaussian likelihood and the family is {design.family!r}"
    if design.categories:
        return "item categories add a category effect shared by their items"
    terms = list(design.terms)
    ct = cell_term(terms)
    if ct.kind != "random":
        return "the cell-level error must be a random term"
    for t in terms:
        if t.kind == "fixed" and len(t.facets) != 1:
            return f"the fixed term {t.label} is an interaction (main effects only)"
        if t.kind == "random" and t.label != ct.label and t.facets != ("item",):
            return (
                f"the random term {t.label} is neither the items' intercept nor the cell term "
                "(crossed or nested random effects need the marginal form)"
            )
    cov = design.covariates
    if cov is not None:
        if any(s.kind == "random" for s in cov.slopes):
            return "a random slope is a random effect crossed with the items"
    return None


def collapsed_cost(design: Design) -> float:
    """Floating-point operations per evaluation, or infinity when the design is not one
    ``collapsed`` fits: the pattern sums contracted twice, ``4 K G^2 p^2`` with ``K`` item
    patterns, ``G`` replicate counts and ``p`` fixed coefficients, plus the ``p^3 / 3`` of the
    coefficients' Cholesky factor.

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")
    >>> collapsed_cost(d) > 0
    True
    """
    if collapsed_limitation(design) is not None:
        return float("inf")
    p = _n_coefficients(design)
    n_group, group = _groups(design)
    G = n_group.size
    K = len(_patterns(design, group, G)[0]) if _random_terms(design)[1] is not None else 0
    return float(4 * K * G * G * p * p + p**3 / 3)


def _n_coefficients(design: Design) -> int:
    """``p`` without building the design matrix (the cost is read before any fit)."""
    p = 1 + sum(len(design.levels[t.facets[0]]) - 1 for t in design.terms if t.kind == "fixed")
    cov = design.covariates
    if cov is not None:
        p += sum(1 if s.by is None else len(design.levels[s.by]) - 1 for s in cov.slopes)
    return p


def _random_terms(design: Design) -> tuple[Term, Term | None, Term | None]:
    """The cell term, the items' own intercept (``None`` when the items are the cells) and the
    replicate residual.
    """
    terms = list(design.terms)
    ct = cell_term(terms)
    item = next(
        (t for t in terms if t.kind == "random" and t.facets == ("item",) and t.label != ct.label), None
    )
    return ct, item, next((t for t in terms if t.kind == "residual"), None)


def _groups(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """The calls per cell of each group, and each cell's group."""
    return np.unique(design.cells["n"].to_numpy(), return_inverse=True)


def _patterns(design: Design, group: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct item patterns (cells held per group), the pattern of each item that holds a
    cell, and those items' codes.
    """
    m = np.zeros((len(design.levels["item"]), G), dtype=np.int64)
    np.add.at(m, (design.cells["item"].to_numpy(), group), 1)
    held = np.flatnonzero(m.sum(axis=1) > 0)
    patterns, which = np.unique(m[held], axis=0, return_inverse=True)
    return patterns, which, held


def design_matrix(design: Design, priors: PriorSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, list]:
    """Each cell's row of the fixed coefficients ``(n_cells, p)``, their prior means and SDs, where
    each reported coefficient sits (``(name, start, size, basis)``) and the dims of those that are
    level effects. Scales as the PyMC model's (``bayes_tee.likelihoods.parts.fixed_predictor``).
    """
    X, m0, s0, blocks, dims, _ = _design_and_slopes(design, priors)
    return X, m0, s0, blocks, dims


def _design_and_slopes(design: Design, priors: PriorSpec) -> tuple:
    """:func:`design_matrix`, and each cell's slope of each covariate as a row of the
    coefficients, ``(n_cells, k, p)`` (``None`` without covariates).
    """
    cells = design.cells
    n_cells = len(cells)
    cols, means, sds, blocks, dims = [np.ones((n_cells, 1))], [design.y_mean], [], [], []
    sds.append(priors.intercept_scale * design.y_sd)
    blocks.append(("mu", 0, 1, None))
    start = 1

    def add(name: str, block: np.ndarray, sd: float, basis: np.ndarray | None, dim: str | None) -> None:
        nonlocal start
        cols.append(block)
        means.extend([0.0] * block.shape[1])
        sds.extend([sd] * block.shape[1])
        blocks.append((name, start, block.shape[1], basis))
        if dim is not None:
            dims.append((name, dim))
        start += block.shape[1]

    for t in design.terms:
        if t.kind != "fixed":
            continue
        f = t.facets[0]
        basis = zerosum_basis(len(design.levels[f]))
        scale = priors.fixed_scale_of(t.label, design.system) * design.y_sd
        add(t.var_name, basis[cells[f].to_numpy()], scale, basis, f)
    cov = design.covariates
    slope_rows = []  # (covariate index, start, per-cell rows of the slope's coordinates)
    if cov is not None:
        xbar = cells[cov.mean_columns].to_numpy(dtype=float)
        for s in cov.slopes:
            j = cov.of(s.covariate)
            scale = priors.slope_scale * design.y_sd
            basis = None if s.by is None else zerosum_basis(len(design.levels[s.by]))
            rows = np.ones((n_cells, 1)) if basis is None else basis[cells[s.by].to_numpy()]
            slope_rows.append((j, start, rows))
            add(s.var_name, rows * xbar[:, j : j + 1], scale, basis, s.by)
    X = np.ascontiguousarray(np.concatenate(cols, axis=1))
    B = None
    if cov is not None:
        B = np.zeros((n_cells, len(cov.names), X.shape[1]))
        for j, at, rows in slope_rows:
            B[:, j, at : at + rows.shape[1]] = rows
    return X, np.asarray(means, float), np.asarray(sds, float), blocks, dims, B


def collapsed_layout(design: Design, priors: PriorSpec | None = None) -> CollapsedLayout:
    """The fixed effects' design and priors and the grouped sums of the module docstring."""
    priors = PriorSpec() if priors is None else priors
    ct, item, residual = _random_terms(design)
    X, m0, s0, blocks, dims, B = _design_and_slopes(design, priors)
    cells = design.cells
    y = cells["mean"].to_numpy(dtype=float) - X @ m0  # centred on the prior mean: beta - m0 ~ N(0, s0)
    n_group, group = _groups(design)
    G, p = n_group.size, X.shape[1]
    A = np.zeros((G, p, p))
    xy = np.zeros((G, p))
    for g in range(G):
        Xg, yg = X[group == g], y[group == g]
        A[g] = Xg.T @ Xg
        xy[g] = Xg.T @ yg
    yy = np.bincount(group, y * y, minlength=G)
    N = np.bincount(group, minlength=G).astype(float)
    no_items = (np.zeros((0, G), dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    patterns, which, held = _patterns(design, group, G) if item is not None else no_items
    K = len(patterns)
    T, U, TT = np.zeros((K, G, G, p, p)), np.zeros((K, G, G, p)), np.zeros((K, G, G))
    if K:
        code = cells["item"].to_numpy()
        u = np.zeros((len(design.levels["item"]), G, p))
        t = np.zeros((len(design.levels["item"]), G))
        np.add.at(u, (code, group), X)
        np.add.at(t, (code, group), y)
        u, t = u[held], t[held]
        for k in range(K):
            uk, tk = u[which == k], t[which == k]
            T[k] = np.einsum("igp,ihq->ghpq", uk, uk)
            U[k] = np.einsum("igp,ih->ghp", uk, tk)
            TT[k] = np.einsum("ig,ih->gh", tk, tk)
    stats = {
        "A": A, "xy": xy, "yy": yy, "N": N, "n_cells": len(cells),
        "T": T, "U": U, "TT": TT, "m": patterns.astype(float),
        "items": np.bincount(which, minlength=K).astype(float),
    }  # fmt: skip
    # a covariate varying within cells: the within-cell sum of squares of y - slope' x is
    # ss - 2 beta' Sxy + beta' Sxx beta, in the coefficients (:mod:`bayes_tee.design.covariates`)
    Sxx, Sxy = np.zeros((p, p)), np.zeros(p)
    cov = design.covariates
    if cov is not None and cov.within:
        k = len(cov.names)
        sxx = np.zeros((len(cells), k, k))
        for i, j in cov.pairs:
            sxx[:, i, j] = sxx[:, j, i] = cells[f"sxx:{cov.names[i]}:{cov.names[j]}"].to_numpy(dtype=float)
        sxy = cells[[f"sxy:{n}" for n in cov.names]].to_numpy(dtype=float)
        Sxx = np.einsum("cip,cij,cjq->pq", B, sxx, B)
        Sxy = np.einsum("cip,ci->p", B, sxy)
    # centred on the prior mean as y is: beta = m0 + (beta - m0)
    stats["within_A"] = Sxx
    stats["within_xy"] = Sxy - Sxx @ m0
    stats["within_ss"] = float(cells["ss"].sum() - 2.0 * m0 @ Sxy + m0 @ Sxx @ m0)
    stats["within_dof"] = float((cells["n"] - 1).sum())
    level_dims = {name: (dim,) for name, dim in dims}
    return CollapsedLayout(blocks, p, m0, s0, item, ct, residual, n_group.astype(float), stats, level_dims)
