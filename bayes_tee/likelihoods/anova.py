"""Balanced-design ANOVA: stratum sums of squares and expected mean squares.

In a balanced crossed design the data space splits into orthogonal strata, one per subset of
the facets (main effects and interactions) plus the within-cell stratum. The covariance of the
data is constant on each stratum: its eigenvalue, the expected mean square (EMS, Messing (2026)
Table 6 extended to every term), is ``sigma_rho^2 + sum_k c_k sigma_k^2`` over the terms ``k``
whose facets contain the stratum's, with ``c_k`` the number of calls per level of term ``k``.
So the stratum sums of squares are sufficient for the variance components and the likelihood
factorises into one scaled chi-square term per stratum, plus Gaussian terms for the grand mean
and the fixed-factor contrasts. :func:`strata` computes all of it; :func:`anova_estimates`
solves the EMS equations (the classical method-of-moments / balanced-REML-before-truncation
estimates).

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                        prompt="prompt", judge="judge", temperature="temperature",
...                        category="category")
>>> est = anova_estimates(d)
>>> sorted(est)[:3]
['category', 'cell', 'item']
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from ..design.design import Design


@dataclass(frozen=True)
class FixedStratum:
    """A stratum carrying a fixed factor's contrasts: level deviations ``d`` with weight ``w``."""

    term: str
    deviations: np.ndarray
    weight: float
    df: int
    coef: np.ndarray


@dataclass(frozen=True)
class CategoryMeans:
    """The items' category means, the exact term that replaces the category stratum and the
    grand mean when items are nested in categories (of any sizes).

    With every item complete, an item's mean over its cells is ``mu + shared + c_g + e_i``:
    ``shared`` the item-free effects averaged over their levels (the same for every item,
    variance ``kappa``), ``c_g`` its category's effect (``sigma_category^2``) and ``e_i`` the item's
    own effects and errors averaged over its cells (``item``). The within-category contrasts of
    the item means are the ``item`` stratum; the category means ``u`` are independent of every
    stratum and ``u ~ N(mu 1, diag(sigma_category^2 + item / n_g) + kappa 1 1')``, a diagonal
    plus rank-one covariance whose log density costs ``O(categories)`` (matrix determinant lemma
    and Sherman-Morrison). Equal sizes give back the classical category stratum and grand mean.

    Attributes
    ----------
    means : numpy.ndarray
        ``u``, one per category.
    sizes : numpy.ndarray
        Items per category, ``n_g``.
    cat_coef, item_coef, kappa_coef : numpy.ndarray
        Per variance term (``Strata.var_terms``): ``sigma_category^2 = cat_coef @ sigma2``,
        ``item = item_coef @ sigma2``, ``kappa = kappa_coef @ sigma2``.
    """

    means: np.ndarray
    sizes: np.ndarray
    cat_coef: np.ndarray
    item_coef: np.ndarray
    kappa_coef: np.ndarray


def category_means_loglik(r: np.ndarray, a: np.ndarray, kappa: float) -> float:
    """``log N(r; 0, diag(a) + kappa 1 1')`` without its ``2 pi`` constant, in ``O(len(r))``.

    >>> r, a = np.array([0.3, -0.1, 0.5]), np.array([0.2, 0.4, 0.1])
    >>> V = np.diag(a) + 0.3
    >>> exact = -0.5 * (np.linalg.slogdet(V)[1] + r @ np.linalg.solve(V, r))
    >>> bool(np.isclose(category_means_loglik(r, a, 0.3), exact))
    True
    """
    s1, sr = np.sum(1.0 / a), np.sum(r / a)
    den = 1.0 + kappa * s1
    return float(-0.5 * (np.sum(np.log(a)) + np.log(den) + np.sum(r * r / a) - kappa * sr * sr / den))


@dataclass(frozen=True)
class Strata:
    """Sufficient statistics of a balanced design.

    Attributes
    ----------
    var_terms : tuple of str
        Labels of the variance terms (random and residual), the columns of ``coef``.
    names, df, ss, coef
        Pure-random strata (pooled where their EMS coincide): label, degrees of freedom, sum of
        squares and EMS coefficients (``EMS = coef @ sigma2``).
    grand_mean, n_total, grand_coef
        The grand-mean stratum: ``ybar ~ N(mu, grand_coef @ sigma2 / n_total)``.
    fixed : tuple of FixedStratum
        One per fixed factor.
    categories : CategoryMeans or None
        With items nested in categories, the exact term that the likelihood uses in place of
        the ``category`` stratum and the grand mean (those stay in the table, with the
        classical unequal-size coefficient ``n0``, for the moment estimates).
    """

    var_terms: tuple[str, ...]
    names: tuple[str, ...]
    df: np.ndarray
    ss: np.ndarray
    coef: np.ndarray
    grand_mean: float
    n_total: int
    grand_coef: np.ndarray
    fixed: tuple[FixedStratum, ...]
    categories: CategoryMeans | None = None

    @property
    def rows(self) -> np.ndarray:
        """The strata that enter the likelihood as scaled chi-square terms: all but the
        ``category`` stratum when :attr:`categories` carries it.
        """
        return np.array(
            [i for i, n in enumerate(self.names) if not (self.categories and n == "category")], int
        )

    def table(self) -> pd.DataFrame:
        """The ANOVA table: stratum, df, SS, MS and the EMS coefficients."""
        out = pd.DataFrame({"stratum": self.names, "df": self.df, "ss": self.ss})
        out["ms"] = out["ss"] / out["df"]
        for j, t in enumerate(self.var_terms):
            out[f"c[{t}]"] = self.coef[:, j]
        return out


def cell_mean_array(design: Design) -> np.ndarray:
    """Cell means as an array with one axis per crossed facet (NaN where a cell is missing)."""
    shape = [len(design.levels[f]) for f in design.facets]
    arr = np.full(shape, np.nan)
    idx = tuple(design.cells[f].to_numpy() for f in design.facets)
    arr[idx] = design.cells["mean"].to_numpy()
    return arr


def _effect(arr: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Average out the axes not in ``axes``; centre along the ones in it (interaction effect)."""
    other = tuple(a for a in range(arr.ndim) if a not in axes)
    out = arr.mean(axis=other, keepdims=True) if other else arr
    for a in axes:
        out = out - out.mean(axis=a, keepdims=True)
    return out


def strata(design: Design, *, fill_missing: bool = False, within: bool = True) -> Strata:
    """Stratum sums of squares and EMS coefficients of a balanced design.

    Parameters
    ----------
    design : Design
        Must be balanced unless ``fill_missing`` is set.
    fill_missing : bool
        Fill missing cells with the grand mean and use the mean replicate count: an
        approximation for unbalanced data, good enough for starting values and heuristics,
        never for the likelihood.
    within : bool
        Include the within-cell stratum (the augmented model supplies its own).

    Returns
    -------
    Strata
    """
    if not design.complete and not fill_missing:
        raise ArgumentError(
            "strata() needs every cell present with the same number of calls; use the cell-level "
            "model instead."
        )
    arr = cell_mean_array(design)
    if np.isnan(arr).any():
        arr = np.where(np.isnan(arr), np.nanmean(arr), arr)
    parts = _strata_parts(arr, design, float(design.cells["n"].mean()))
    n_total, terms = parts["n_total"], parts["terms"]
    entries = parts["entries"]
    if within and design.has_replicates:
        entries.append(
            (
                "within",
                int(design.cells["n"].sum() - len(design.cells)),
                float(design.cells["ss"].sum()),
                np.array([1.0 if t.kind == "residual" else 0.0 for t in terms]),
            )
        )
    groups = _pooled_groups([e[3] for e in entries])
    return Strata(
        var_terms=tuple(t.label for t in terms),
        names=tuple("+".join(entries[i][0] for i in g) for g in groups),
        df=np.array([sum(entries[i][1] for i in g) for g in groups], dtype=float),
        ss=np.array([sum(float(entries[i][2]) for i in g) for g in groups], dtype=float),
        coef=np.array([entries[g[0]][3] for g in groups]),
        grand_mean=float(parts["grand_mean"]),
        n_total=int(round(n_total)),
        grand_coef=parts["grand_coef"],
        fixed=tuple(
            FixedStratum(f, np.asarray(dev, float).ravel(), w, df, c) for f, dev, w, df, c in parts["fixed"]
        ),
        categories=category_means(arr, design, terms),
    )


def category_means(arr: np.ndarray, design: Design, terms) -> CategoryMeans | None:
    """The items' category means of a full cell-mean array and their covariance coefficients."""
    if design.categories is None:
        return None
    L = {f: len(design.levels[f]) for f in design.facets}
    sizes = np.bincount(design.item_category, minlength=len(design.categories)).astype(float)
    per_item = float(np.prod([L[f] for f in design.facets if f != "item"])) * float(design.cells["n"].mean())
    cat, item, kappa = (np.zeros(len(terms)) for _ in range(3))
    for j, t in enumerate(terms):
        levels = float(np.prod([L[f] for f in t.facets if f in L]))
        if t.kind == "residual":
            item[j] = 1.0 / per_item
        elif t.label == "category":
            cat[j] = 1.0
        elif "item" in t.facets:
            item[j] = L["item"] / levels
        else:
            kappa[j] = 1.0 / levels
    item_means = arr.reshape(arr.shape[0], -1).mean(axis=1)
    means = np.bincount(design.item_category, weights=item_means, minlength=sizes.size) / sizes
    return CategoryMeans(means, sizes, cat, item, kappa)


def strata_statistics(arr, design: Design, replicates: float, shift: float = 0.0) -> dict:
    """The data-dependent parts of :func:`strata` (``within=False``) for any array type.

    ``arr`` is the full cell-mean array (one axis per facet), as numpy or as a PyTensor
    tensor: the augmented model computes the stratum sums of squares of a partly latent array
    inside the graph. Cost model: every axis but the items is rotated by its orthonormal
    Helmert matrix (coordinate 0 the axis mean, the others contrasts; ``O(cells x levels)``
    with a few levels); in the rotated array each stratum is a block of coordinates, and along
    the items a block's sum of squares is the total minus the mean's. Every stratum's sum of
    squares is then two products with constant 0/1 block matrices: linear in the number of
    cells (items never meet an items x items matrix), and a graph of dense products that
    compiles in seconds, where the inclusion-exclusion means of :func:`strata` (80 reductions
    at four facets) compiled for a minute and loops (cumulative sums) for two.
    ``shift`` (a constant, e.g. the outcome mean) is subtracted first so that scores far
    from zero keep their digits; the sums of squares do not depend on it.

    Returns
    -------
    dict
        ``ss`` (list: the likelihood's strata, :attr:`Strata.rows`, pooled in :func:`strata`'s
        order), ``grand_mean``, ``deviations`` (fixed term -> level deviations) and
        ``category_means`` (:class:`CategoryMeans`' ``means``; ``None`` without categories).
    """
    if isinstance(arr, np.ndarray):
        xp = np
    else:  # a PyMC model's tensor: PyTensor is imported only where a graph is built
        import pytensor.tensor as xp
    blocks = stratum_blocks(design)
    F = len(design.facets)
    x = arr - shift
    # rotate every axis but the first (items) with its small dense Helmert matrix; each
    # tensordot contracts the axis after the items and appends the rotated one
    for helmert in blocks.helmert[1:]:
        x = xp.tensordot(x, helmert, axes=([1], [1]))
    x = x.reshape((blocks.levels[0], -1))
    # along the items, the contrast block's sum of squares is the total minus the mean's
    total = (x**2).sum(axis=0)
    mean = x.sum(axis=0) ** 2 / blocks.levels[0]
    raw = replicates * (xp.dot(blocks.mask_item, total - mean) + xp.dot(blocks.mask_rest, mean))
    grand = arr.mean()
    parts = {label: raw[i] for i, (label, _) in enumerate(blocks.strata)}
    deviations = {}
    for f in blocks.fixed:
        others = tuple(a for a in range(F) if a != design.facets.index(f))
        deviations[f] = (arr.mean(axis=others) - grand).flatten() if others else arr - grand
    out = {"grand_mean": grand, "deviations": deviations, "category_means": None}
    if design.categories is not None:
        # the item stratum within categories; the category means are a term of their own
        others = tuple(range(1, F))
        item_means = (arr.mean(axis=others) if others else arr).flatten()
        cat_eff = xp.dot(item_means - grand, blocks.category_weights)
        per_item = float(np.prod(blocks.levels[1:])) * replicates
        parts["item"] = parts["item"] - per_item * (blocks.category_sizes * cat_eff**2).sum()
        out["category_means"] = xp.dot(item_means, blocks.category_weights)
    out["ss"] = [sum((parts[label] for label in g[1:]), parts[g[0]]) for g in blocks.likelihood_pooled]
    return out


def _helmert(n: int) -> np.ndarray:
    """Orthonormal ``n x n`` matrix whose first row is the mean direction ``1/sqrt(n)``."""
    h = np.zeros((n, n))
    h[0] = 1.0 / np.sqrt(n)
    for k in range(1, n):
        h[k, :k] = 1.0
        h[k, k] = -k
        h[k] /= np.sqrt(k * (k + 1))
    return h


@dataclass(frozen=True)
class StratumBlocks:
    """Where each stratum sits in the Helmert-rotated cell-mean array of a balanced design."""

    levels: tuple[int, ...]
    helmert: tuple[np.ndarray, ...]  # per axis
    strata: tuple[tuple[str, tuple[int, ...]], ...]  # random strata: label, axes
    fixed: tuple[str, ...]
    # (n_strata, cells of the other axes) 0/1: the stratum's block of rotated coordinates, for
    # strata with the item axis (its contrasts) and without it (its mean)
    mask_item: np.ndarray
    mask_rest: np.ndarray
    pooled: tuple[tuple[str, ...], ...]  # stratum labels pooled as in strata(), in its order
    category_weights: np.ndarray | None  # (items, categories): 1 / n_g where item is in g
    category_sizes: np.ndarray | None

    @property
    def likelihood_pooled(self) -> tuple[tuple[str, ...], ...]:
        """The pooled strata of the chi-square terms (:attr:`Strata.rows`): the category
        stratum (never pooled, its EMS alone has the category's variance) is left out.
        """
        return tuple(g for g in self.pooled if g != ("category",))


def stratum_blocks(design: Design) -> StratumBlocks:
    """Where each stratum sits in the Helmert-rotated cell-mean array of the (balanced) ``design``."""
    facets = design.facets
    L = tuple(len(design.levels[f]) for f in facets)
    fixed_terms = {t.label for t in design.terms if t.kind == "fixed"}
    contrast = [np.arange(n) > 0 for n in L]  # rotated index >= 1: a contrast, not the mean
    strata_list, rows_item, rows_rest, fixed = [], [], [], []
    for size in range(1, len(facets) + 1):
        for axes in combinations(range(len(facets)), size):
            label = ":".join(facets[a] for a in axes)
            if size == 1 and label in fixed_terms:
                fixed.append(label)
                continue
            mask = np.ones(())
            for a in range(1, len(facets)):
                mask = np.multiply.outer(mask, contrast[a] if a in axes else ~contrast[a])
            mask = np.asarray(mask, float).reshape(-1)
            strata_list.append((label, axes))
            rows_item.append(mask if 0 in axes else 0 * mask)
            rows_rest.append(0 * mask if 0 in axes else mask)
    weights = sizes = None
    if design.categories is not None:
        weights = np.eye(len(design.categories))[design.item_category]
        sizes = weights.sum(axis=0)
        weights = weights / sizes
    # the pooling of strata(): labels in its entry order (category before item), grouped by EMS
    entries = _strata_parts(np.zeros(L), design, 1.0)["entries"]
    pooled = tuple(tuple(entries[i][0] for i in g) for g in _pooled_groups([e[3] for e in entries]))
    return StratumBlocks(
        L,
        tuple(_helmert(n) for n in L),
        tuple(strata_list),
        tuple(fixed),
        np.asarray(rows_item),
        np.asarray(rows_rest),
        pooled,
        weights,
        sizes,
    )


def _strata_parts(arr, design: Design, replicates: float) -> dict:
    """Per-stratum (label, df, SS, EMS coefficients) of a full cell-mean array; generic over
    numpy and PyTensor (only ``mean``, arithmetic and ``sum`` on ``arr``).
    """
    facets = design.facets
    L = np.array([len(design.levels[f]) for f in facets])
    n_total = float(np.prod(L) * replicates)
    terms = [t for t in design.terms if t.kind != "fixed"]
    sizes = (
        None
        if design.categories is None
        else np.bincount(design.item_category, minlength=len(design.categories))
    )

    def coef_for(stratum: frozenset[str], *, category_stratum: bool = False) -> np.ndarray:
        row = np.zeros(len(terms))
        for j, t in enumerate(terms):
            if t.kind == "residual":
                row[j] = 1.0
            elif t.label == "category":
                # the classical unequal-size coefficients: n0 items per category in the
                # category stratum, sum(n_g^2) / I^2 in the grand mean (n / C for equal sizes)
                n_items = float(sizes.sum())
                if category_stratum:
                    n0 = (n_items - float(sizes @ sizes) / n_items) / (sizes.size - 1)
                    row[j] = n_total / n_items * n0
                elif not stratum:
                    row[j] = n_total * float(sizes @ sizes) / n_items**2
            elif stratum <= set(t.facets):
                row[j] = n_total / np.prod([L[facets.index(f)] for f in t.facets])
        return row

    entries, fixed = [], []
    fixed_terms = {t.label for t in design.terms if t.kind == "fixed"}
    for size in range(1, len(facets) + 1):
        for axes in combinations(range(len(facets)), size):
            s = frozenset(facets[a] for a in axes)
            eff = _effect(arr, axes)
            reps = n_total / int(np.prod([L[a] for a in axes]))
            df = int(np.prod([L[a] - 1 for a in axes]))
            ss = reps * (eff**2).sum()
            label = ":".join(facets[a] for a in axes)
            if size == 1 and label in fixed_terms:
                fixed.append((label, eff.flatten(), reps, df, coef_for(s)))
                continue
            if label == "item" and design.categories is not None:
                C = len(design.categories)
                weights = np.eye(C)[design.item_category]
                weights = weights / weights.sum(axis=0)
                cat_eff = (eff.flatten()[:, None] * weights).sum(axis=0)
                ss_cat = reps * (sizes * cat_eff**2).sum()
                entries.append(("category", C - 1, ss_cat, coef_for(s, category_stratum=True)))
                df, ss = df - (C - 1), ss - ss_cat
            entries.append((label, df, ss, coef_for(s)))
    return {
        "entries": entries,
        "fixed": fixed,
        "n_total": n_total,
        "terms": terms,
        "grand_mean": arr.mean(),
        "grand_coef": coef_for(frozenset()),
    }


def _pooled_groups(coefs: list[np.ndarray]) -> list[list[int]]:
    """Strata whose EMS coincide (e.g. all high-order interactions that only the cell error
    reaches) share one eigenvalue, so pooling their sums of squares is exact.
    """
    pooled: dict[tuple, list[int]] = {}
    for i, row in enumerate(coefs):
        pooled.setdefault(tuple(np.round(row, 9)), []).append(i)
    return list(pooled.values())


def anova_estimates(design: Design, *, fill_missing: bool = False) -> dict[str, float]:
    """Method-of-moments (ANOVA/EMS) estimates of the variance components.

    Solves ``MS = coef @ sigma2`` over the pooled random strata; estimates can be negative
    (REML truncates those at zero, which is what a singular fit reports). Fixed factors get
    their observed sensitivity index, the population variance of the level deviations minus
    its expected noise.

    Parameters
    ----------
    design : Design
        A balanced design (or any design with ``fill_missing=True``, approximately).
    fill_missing : bool
        See :func:`strata`.

    Returns
    -------
    dict
        Component label -> estimate (variance scale).

    Examples
    --------
    >>> import bayes_tee as bt
    >>> d = bt.validate_design(bt.datasets.load("tee_demo"), outcome="score", item="item", prompt="prompt")
    >>> est = anova_estimates(d)
    >>> est["replicate"] > 0
    True
    """
    st = strata(design, fill_missing=fill_missing)
    ms = st.ss / np.maximum(st.df, 1)
    keep = st.df > 0
    sol, *_ = np.linalg.lstsq(st.coef[keep], ms[keep], rcond=None)
    out = dict(zip(st.var_terms, sol.tolist()))
    for fs in st.fixed:
        ems = float(fs.coef @ sol)
        L = fs.deviations.size
        # E[pop_var(d)] = pop_var(beta) + (L-1)/L * EMS / weight
        out[fs.term] = float(np.mean(fs.deviations**2) - (L - 1) / L * ems / fs.weight)
    return out


def balanced_data(design: Design, st=None) -> dict[str, np.ndarray]:
    """The score-dependent inputs of the balanced model, by data-container name.

    Two balanced designs with the same layout differ only in these, so a compiled model is
    refitted to new scores with ``compiled.with_data(**balanced_data(design))``.
    """
    st = strata(design) if st is None else st
    out = {
        "y_sd": np.asarray(design.y_sd, float),
        "y_mean": np.asarray(design.y_mean, float),
        "strata_ss": np.asarray(st.ss[st.rows], float),
        "grand_mean": np.asarray(st.grand_mean, float),
    }
    if st.categories is not None:
        out["category_means"] = np.asarray(st.categories.means, float)
    for fs in st.fixed:
        out[f"{fs.term}_deviations"] = np.asarray(fs.deviations, float)
    return out
