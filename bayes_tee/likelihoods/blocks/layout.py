"""The NumPy half of the ``blocks`` likelihood (:mod:`bayes_tee.likelihoods.blocks.density`):
each item's short and empty cells, the patterns of facets they share, the rotated statistics of
the data, and the cost model. Nothing here depends on the parameters or imports numba.

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo").iloc[1:], outcome="score", item="item",
...                        prompt="prompt", judge="judge", temperature="temperature",
...                        replicate="replicate")
>>> b = item_blocks(d)
>>> b.short_cells, b.empty_cells
(1, 0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._core.exceptions import ArgumentError
from ...design.design import Design
from ..anova import _helmert
from ..levels import fewest_shared_levels


@dataclass(frozen=True)
class ItemBlocks:
    """The per-item layout of the short and empty cells, and the statistics of the data.

    Attributes
    ----------
    replicates : int
        ``R``, the calls of a complete cell.
    short_cells, empty_cells : int
        Cells with ``0 < n < R`` and ``n = 0`` calls in the full cross.
    offsets : numpy.ndarray
        Item ``i``'s cells in the per-cell arrays are ``offsets[i]:offsets[i + 1]``: its short
        or empty cells (the Woodbury form), or its observed cells when it is direct.
    direct : numpy.ndarray
        Per item, whether it is factored on its observed cells (the direct or the nested form of
        :func:`block_sizes`) instead of one Woodbury step over its latent cells.
    """

    replicates: int
    short_cells: int
    empty_cells: int
    offsets: np.ndarray
    direct: np.ndarray
    arrays: dict


#: An item's form (:func:`block_sizes`): one Woodbury step off the complete item over its
#: short and empty cells.
WOODBURY = 0
#: An item's form: its observed cells' own covariance, factored as it stands.
DIRECT = 1
#: An item's form: one Woodbury step over its item-nested random effects, with its observed
#: cells' diagonal.
NESTED = 2


def blocks_cost(design: Design) -> float:
    """Floating-point operations per evaluation of the ``blocks`` likelihood: per item the
    Cholesky factor and inverse of its ``k_i x k_i`` matrix, ``k_i^3 / 2 + 4 k_i^2``, plus for
    the nested form the per-cell updates (:func:`block_sizes`).

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item")
    >>> blocks_cost(d)
    0.0
    """
    return float(_form_costs(design)[0].min(axis=0).sum())


def block_sizes(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the size of the matrix the likelihood factors and its form.

    Each item takes whichever of three forms costs least (:func:`blocks_cost`'s model):

    - :data:`WOODBURY`: its latent (short or empty) cells ``s_i``, one Woodbury step off the
      complete item;
    - :data:`DIRECT`: its observed cells ``o_i``, their own covariance;
    - :data:`NESTED`: the levels ``p_i`` of its item-nested random effects that its observed
      cells touch (item, item x prompt, system x item, ...), one Woodbury step over them with
      the observed cells' diagonal (the full-cell term and the calls' noise); ``o_i`` per-cell
      updates of ``(number of nested terms)^2`` each.

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo").iloc[1:], outcome="score", item="item",
    ...                        prompt="prompt", judge="judge", temperature="temperature",
    ...                        replicate="replicate")
    >>> size, form = block_sizes(d)
    >>> int(size.max()), bool((form == WOODBURY).all())
    (1, True)
    """
    costs, sizes = _form_costs(design)
    form = costs.argmin(axis=0)
    return sizes[form, np.arange(form.size)], form


def _form_costs(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """Per form (rows :data:`WOODBURY`, :data:`DIRECT`, :data:`NESTED`) and item, the cost of
    one evaluation and the matrix size.
    """
    cells = design.cells
    n_items = len(design.levels["item"])
    per_item = design.n_full_cells // max(n_items, 1)
    item = cells["item"].to_numpy()
    full = np.bincount(item[cells["n"].to_numpy() == cells["n"].max()], minlength=n_items)
    observed = np.bincount(item, minlength=n_items)
    latent = per_item - full
    terms = nested_terms(design)
    per_term = np.zeros((len(terms) or 1, n_items), dtype=np.int64)
    for k, (_, facets) in enumerate(terms):
        key = _column_key([cells[f].to_numpy() for f in facets], len(cells))
        per_term[k] = _item_columns(item, key, n_items)[1]
    cols = per_term.sum(axis=0)
    first = per_term[0].astype(float)  # the first term's columns, eliminated as a diagonal block
    sizes = np.stack([latent, observed, cols]).astype(np.int64)
    k = sizes.astype(float)
    costs = k**3 / 2 + 4 * k**2
    rest = cols - first  # the Schur complement's size
    costs[NESTED] = rest**3 / 2 + 4 * rest**2 + 3 * first * rest**2 + 4 * first
    nt = len(terms)
    # its per-cell updates read and write through each cell's columns: measured at about twice
    # a factor's flop (1,410 items x 45 cells, 4 nested terms: 4.0 ms an evaluation nested, 3.1
    # ms Woodbury over 15 short cells)
    costs[NESTED] += observed * 2 * (nt * (nt + 1) + 2 * nt + 4)
    costs[:, latent == 0] = 0.0  # a complete item takes the closed form, whatever its label
    return costs, sizes


def var_terms(design: Design) -> list:
    """The variance terms in the order of the SDs the kernel reads (every non-fixed term)."""
    return [t for t in design.terms if t.kind != "fixed"]


def nested_terms(design: Design) -> list[tuple[int, list[str]]]:
    """The item-nested random effects the :data:`NESTED` form integrates over: each term's
    index in :func:`var_terms` and its non-item facets, for every term with the items but not
    every facet (the full-cell term is the cells' diagonal, as is the calls' noise), the one
    with the most levels first.
    """
    every = set(design.facets)
    terms = [
        (j, [f for f in t.facets if f != "item"])
        for j, t in enumerate(var_terms(design))
        if t.kind == "random" and "item" in t.facets and set(t.facets) != every and t.label != "category"
    ]
    # the term with the most levels first: its block of K is diagonal (a cell is in one of its
    # levels), so the kernel eliminates it before factoring the rest
    width = [int(np.prod([len(design.levels[f]) for f in facets])) for _, facets in terms]
    return [terms[k] for k in sorted(range(len(terms)), key=lambda k: -width[k])]


def _column_key(levels: list[np.ndarray], n: int) -> np.ndarray:
    """Each of ``n`` rows' levels of some facets (one array per facet) as one integer (0 with
    none): a nested term's level within its item.
    """
    if not levels or not n:
        return np.zeros(n, dtype=np.int64)
    dims = [int(v.max()) + 1 for v in levels]
    return np.ravel_multi_index(tuple(levels), dims).astype(np.int64)


def _item_columns(item: np.ndarray, key: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's column among its item's (the rank of its ``key`` there) and each item's number
    of columns (its distinct keys).
    """
    if not item.size:
        return np.zeros(0, dtype=np.int64), np.zeros(n_items, dtype=np.int64)
    pairs, local = np.unique(np.stack([item, key]), axis=1, return_inverse=True)
    rank = np.arange(pairs.shape[1]) - np.searchsorted(pairs[0], pairs[0])
    return rank[local.ravel()], np.bincount(pairs[0], minlength=n_items)


#: NUTS acceptance target of the ``blocks`` likelihood when every sampled (item-free) random
#: effect has at least :data:`FEW_LEVELS` levels: its posterior is then close to Gaussian and the
#: longer steps halve the gradients per draw (paper layout, 141 items in 12 categories, 5% lost:
#: 7 leapfrog steps instead of 11, 11.5 s instead of 27.1 s, bulk ESS 2,279, no divergence).
LONG_STEP_ACCEPT = 0.8
#: The target with fewer levels (2 prompts, 3 random judges). The grand mean is sampled around
#: its conditional posterior given the variances (``BlocksDensity.grand_mean``), so a few-level
#: SD no longer narrows its scale; what is left is the few-level SDs' own tails. 30 items x 2
#: prompts x 3 judges with 10% of the calls lost: 0.8 diverged in 2 fits of 12, 0.85 in 1 of 48
#: (0.9: 1 of 12); 14 systems x 100 items x 3 random judges x 2 prompts, 4,975 calls, 4 seeds:
#: 8-9 leapfrog steps a draw at 0.85 against 13-15 at 0.9 (the tree's depth 3 instead of 4),
#: a fit of 300 warm-up and 1,000 draws 5.9-7.0 s instead of 11.4-14.8 s.
FEW_LEVEL_ACCEPT = 0.85
FEW_LEVELS = 4


def blocks_kernel_accept(design: Design) -> float:
    """The target when nutpie samples the kernel: :data:`LONG_STEP_ACCEPT` when every item-free
    random term has at least :data:`FEW_LEVELS` levels, else :data:`FEW_LEVEL_ACCEPT`.

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
    ...                        prompt="prompt")
    >>> blocks_kernel_accept(d)  # 3 prompts
    0.85
    """
    return LONG_STEP_ACCEPT if _many_shared_levels(design) else FEW_LEVEL_ACCEPT


def blocks_target_accept(design: Design) -> float | None:
    """The target of the same posterior as a PyMC graph (``sampler="pymc"``), whose grand mean is
    sampled as it stands: :data:`LONG_STEP_ACCEPT` with many levels, else ``None`` (the family's
    0.9; at 0.85, 1 of 6 fits of 30 items x 2 prompts x 3 judges diverged).

    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
    ...                        prompt="prompt")
    >>> blocks_target_accept(d) is None  # 3 prompts
    True
    """
    return LONG_STEP_ACCEPT if _many_shared_levels(design) else None


def _many_shared_levels(design: Design) -> bool:
    """Whether every item-free random term has at least :data:`FEW_LEVELS` levels."""
    fewest = fewest_shared_levels(design)
    return fewest is None or fewest >= FEW_LEVELS


#: Warm-up draws per chain of the ``blocks`` likelihood when every item-free random term has at
#: least :data:`FEW_LEVELS` levels: the shared effects are sampled around their conditional
#: posterior and the SDs of many-level terms are close to Gaussian, so the mass matrix settles
#: early (paper layout, 1,410 items in 12 categories, 5% of 507,600 calls lost: 300 warm-up
#: draws gave bulk ESS 3,179 and tail ESS 2,123 of 4,000, R-hat 1.003, 7 leapfrog steps a draw,
#: 85 s; 1,000 gave 2,665 and 2,022, 123 s). A few-level SD keeps the family's default.
SHORT_TUNE = 300


def blocks_tune(design: Design) -> int | None:
    """:data:`SHORT_TUNE` when every item-free random term has at least :data:`FEW_LEVELS`
    levels, else ``None`` (the family's default).

    >>> import bayes_tee as bt
    >>> blocks_tune(bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item"))
    300
    """
    return SHORT_TUNE if _many_shared_levels(design) else None


def cell_types(design: Design) -> tuple[list[str], list[int], np.ndarray]:
    """Non-item facets, their levels, and the type (bitmask of facets where the rotated index is
    a contrast) of every rotated coordinate of one item's cells (C order).
    """
    inner = list(design.facets[1:])
    levels = [len(design.levels[f]) for f in inner]
    grid = np.indices(levels).reshape(len(levels), -1) if inner else np.zeros((0, 1), int)
    rtype = np.zeros(grid.shape[1], dtype=np.int64)
    for k in range(len(inner)):
        rtype |= (grid[k] > 0).astype(np.int64) << k
    return inner, levels, rtype


def item_blocks(design: Design, forms: np.ndarray | None = None) -> ItemBlocks:
    """Everything :func:`blocks_logp_grad` needs that does not depend on the parameters;
    ``forms`` sets each item's form instead of :func:`block_sizes` (for tests: every form is
    exact, and a complete item always takes the closed form).
    """
    if design.facets[0] != "item":
        raise ArgumentError("method='blocks' needs the items as a facet.")
    inner, levels, rtype = cell_types(design)
    F, M = len(inner), int(np.prod(levels)) if inner else 1
    n_items = len(design.levels["item"])
    cells = design.cells
    R = int(cells["n"].max())
    q = (
        np.ravel_multi_index(tuple(cells[f].to_numpy() for f in inner), levels)
        if inner
        else np.zeros(len(cells), int)
    )
    i = cells["item"].to_numpy()
    n_full = np.zeros((n_items, M), dtype=np.int64)
    n_full[i, q] = cells["n"].to_numpy()
    shift = float(design.y_mean)
    y = np.zeros((n_items, M))  # empty cells at the outcome mean; Woodbury removes them exactly
    y[i, q] = cells["mean"].to_numpy() - shift
    H = np.ones((1, 1))
    for n in levels:
        H = np.kron(H, _helmert(n))
    Z = y @ H.T  # rotated coordinates of every item
    cat = np.zeros(n_items, dtype=np.int64) if design.categories is None else np.asarray(design.item_category)
    n_cat = int(cat.max()) + 1
    form = block_sizes(design)[1] if forms is None else np.asarray(forms)
    direct = form != WOODBURY  # factored on its observed cells (the direct or nested form)
    woodbury = ~direct
    # per item its latent (short or empty) cells, or its observed cells when it is direct
    slot = np.where(direct[:, None], n_full > 0, n_full < R)
    li, lq = np.nonzero(slot)
    offsets = np.searchsorted(li, np.arange(n_items + 1)).astype(np.int64)
    n_lat = n_full[li, lq]
    on_direct = direct[li]
    T = 1 << F
    proj = np.zeros((li.size, T))  # [Pi_t y_i]_q of each latent cell
    for r in range(M):
        proj[:, rtype[r]] += H[r, lq] * Z[li, r]
    proj[on_direct] = 0.0
    grid = np.indices(levels).reshape(F, -1) if inner else np.zeros((0, 1), int)
    pats = []
    for k in range(n_items):
        qs = lq[offsets[k] : offsets[k + 1]]
        if form[k] == NESTED:  # reads the nested effects' columns instead
            pats.append(np.zeros(0, np.uint8))
            continue
        agree = np.zeros((qs.size, qs.size), dtype=np.int64)
        for f in range(F):
            agree |= (grid[f][qs][:, None] == grid[f][qs][None, :]).astype(np.int64) << f
        pats.append(agree.ravel().astype(np.uint8))
    pat_off = np.cumsum([0] + [p.size for p in pats]).astype(np.int64)
    # Pi_t's entry for two cells agreeing on the facets in `pat`
    pi_pat = np.ones((T, T))
    for t in range(T):
        for pat in range(T):
            for f in range(F):
                inv = 1.0 / levels[f]
                pi_pat[t, pat] *= ((1.0 if pat >> f & 1 else 0.0) - inv) if t >> f & 1 else inv
    df_t = np.array([np.prod([levels[f] - 1 for f in range(F) if t >> f & 1]) for t in range(T)], float)
    observed = cells["n"].to_numpy()
    short = (n_lat > 0) & ~on_direct
    # the shared effects' reparameterisation weighs each item by its share of observed cells
    share = (n_full > 0).sum(axis=1) / M
    Zw = Z[woodbury]
    cw = cat[woodbury]
    arrays = {
        "n_items": int(woodbury.sum()),
        "n_cells": M,
        "H": np.ascontiguousarray(H),
        "rtype": rtype,
        "ssq": (Zw**2).sum(axis=0),
        "zsum": Zw.sum(axis=0),
        "n_cat_items": np.bincount(cw, minlength=n_cat).astype(float),
        "z0_cat": np.bincount(cw, weights=Zw[:, 0], minlength=n_cat).astype(float),
        "s0_cat": np.bincount(cw, weights=Zw[:, 0] ** 2, minlength=n_cat).astype(float),
        "item_cat": cat,
        "offsets": offsets,
        "lat_q": lq.astype(np.int64),
        # 1 / delta_c = lat_d0 / sigma_rho^2 (0 for an empty cell)
        "lat_d0": np.where(short, n_lat * R / np.maximum(R - n_lat, 1), 0.0),
        "proj": np.ascontiguousarray(proj),
        "pats": np.concatenate(pats) if pats else np.zeros(0, np.uint8),
        "pat_off": pat_off,
        "pi_pat": pi_pat,
        "df_t": df_t,
        "n_short": float(short.sum()),
        "within_dof": float((observed - 1).sum()),
        "within_ss": float(cells["ss"].sum()),
        "direct": form.astype(np.int64),
        # a direct item's observed cell means and their extra noise 1/n - 1/R (per sigma_rho^2)
        "cell_y": np.where(on_direct, y[li, lq], 0.0),
        "cell_dr": np.where(on_direct, 1.0 / np.maximum(n_lat, 1) - 1.0 / R, 0.0),
        "a_zsum": Z.sum(axis=0),
        "a_n": float(share.sum()),
        "c_z0": np.bincount(cat, weights=Z[:, 0], minlength=n_cat).astype(float),
        "c_n": np.bincount(cat, weights=share, minlength=n_cat).astype(float),
        **_nested_columns(design, form, li, lq, n_lat, grid, inner, R),
    }
    n_short_all = int(((n_full > 0) & (n_full < R)).sum())
    n_empty = int((n_full == 0).sum())
    return ItemBlocks(R, n_short_all, n_empty, offsets, direct, arrays)


def _nested_columns(design, form, li, lq, n_lat, grid, inner, R) -> dict:
    """The nested form's arrays: per slotted cell its column in each nested term
    (``col_of``, numbered within its item), per item the range of its columns (``col_off``) and
    how many of them are the first term's (``col_nb``), each column's variance term
    (``col_var``), and the cells' diagonal per unit of each variance (``diag_coef``: 1 for the
    full-cell term, ``1/R`` for the calls' noise, whose short-cell rest is ``cell_dr``). The
    kernel takes per evaluation what the cells share: each cell's class (``cell_cls``: its count
    of calls, one diagonal per class), each class's ``1/n - 1/R`` (``cls_dr``) and cells
    (``cls_n``), and the columns of each variance term over the items (``col_n``).
    """
    terms = nested_terms(design)
    vt = var_terms(design)
    n_items, nt = form.size, len(terms)
    sel = np.flatnonzero(form[li] == NESTED)
    col_of = np.zeros((li.size, nt), dtype=np.int64)
    counts = np.zeros((n_items, nt), dtype=np.int64)  # per item, each term's columns
    for k, (_, facets) in enumerate(terms):
        key = _column_key([grid[inner.index(f)][lq[sel]] for f in facets], sel.size)
        rank, counts[:, k] = _item_columns(li[sel], key, n_items)
        col_of[sel, k] = counts[:, :k].sum(axis=1)[li[sel]] + rank  # after the earlier terms'
    col_off = np.concatenate([[0], np.cumsum(counts.sum(axis=1))]).astype(np.int64)
    col_nb = counts[:, 0].copy() if nt else np.zeros(n_items, dtype=np.int64)
    # each column's variance term: per item, each term's index as many times as its columns
    col_var = np.repeat(np.tile(np.array([j for j, _ in terms], dtype=np.int64), n_items), counts.ravel())
    diag = np.zeros(len(vt))
    every = set(design.facets)
    for j, t in enumerate(vt):
        if t.kind == "residual":
            diag[j] = 1.0 / R
        elif set(t.facets) == every:
            diag[j] = 1.0
    cls_dr, cls = np.unique(1.0 / np.maximum(n_lat[sel], 1) - 1.0 / R, return_inverse=True)
    cell_cls = np.zeros(li.size, dtype=np.int64)
    cell_cls[sel] = cls.ravel()
    return {
        "col_of": col_of,
        "col_off": col_off,
        "col_nb": col_nb,
        "col_var": col_var,
        "diag_coef": diag,
        "cell_cls": cell_cls,
        "cls_dr": cls_dr.astype(np.float64),
        "cls_n": np.bincount(cls.ravel(), minlength=cls_dr.size).astype(np.float64),
        "col_n": np.bincount(col_var, minlength=len(vt)).astype(np.float64),
    }


def type_coefficients(design: Design, var_terms: list, replicates: int) -> tuple[np.ndarray, np.ndarray]:
    """Per type ``t`` (bitmask of the non-item facets) and variance term: ``v_t = v[t] @ sigma2``,
    a complete item's eigenvalue on its type-``t`` contrasts, and ``gamma_t = g[t] @ sigma2``,
    the item-free effects' variance there (a term's variance times the levels it is constant
    over, on every type its facets cover).
    """
    inner, levels, _ = cell_types(design)
    T = 1 << len(inner)
    v, g = np.zeros((T, len(var_terms))), np.zeros((T, len(var_terms)))
    for j, term in enumerate(var_terms):
        if term.kind == "residual":
            v[:, j] = 1.0 / replicates
            continue
        if term.label == "category":
            continue
        own = {inner.index(f) for f in term.facets if f in inner}
        rest = float(np.prod([levels[f] for f in range(len(inner)) if f not in own]))
        for t in range(T):
            if all(f in own for f in range(len(inner)) if t >> f & 1):
                (v if "item" in term.facets else g)[t, j] = rest
    return v, g


def blocks_limitation(design: Design) -> str | None:
    """Why the ``blocks`` likelihood cannot fit ``design``, or ``None`` when it can.

    >>> import bayes_tee as bt
    >>> blocks_limitation(bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item"))
    """
    if design.family != "gaussian":
        return f"it is a Gaussian likelihood and the family is {design.family!r}"
    if not design.facets or design.facets[0] != "item":
        return "the items must be a facet"
    fixed = [t for t in design.terms if t.kind == "fixed"]
    if any(len(t.facets) != 1 or t.facets[0] not in design.facets[1:] for t in fixed):
        return "fixed effects must be main effects of facets other than the items"
    var_terms = [t for t in design.terms if t.kind != "fixed"]
    v, _ = type_coefficients(design, var_terms, int(design.cells["n"].max()))
    if not (v > 0).any(axis=1).all():
        return "some contrast within an item has no variance term (no residual or cell term)"
    if design.cells["n"].nunique() > 1 and not any(t.kind == "residual" for t in var_terms):
        return "cells hold unequal calls and there is no residual term"
    return None
