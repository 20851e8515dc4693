"""Exact Gaussian marginal likelihoods of cell means with random effects integrated out.

The cell means of the crossed model are jointly Gaussian, ``r ~ N(0, Sigma)`` with ``r`` the
cell means minus the fixed part of the predictor and

    Sigma = diag(D) + Z_a diag(s_a^2) Z_a' + Z_b diag(s_b^2) Z_b'

where ``D`` is the per-cell error (cell-level variance plus replicate variance over the
replicate count), ``Z_a`` holds the terms nested in items (item, item:prompt, ...; block
diagonal over items) and ``Z_b`` the few-level crossed terms (prompt, prompt:judge, category,
...). Two identities make ``log N(r; 0, Sigma)`` cheap and exact:

* items are blocks: ``B = diag(D) + Z_a S_a^2 Z_a'`` is block diagonal, one ``P x P`` block per
  item (``P`` = cells per item), inverted by Woodbury through a ``K_a x K_a`` factor
  (``K_a`` = item-nested levels per item); items that share a pattern of replicate counts
  share that factor;
* Woodbury and the determinant lemma move the crossed terms into a ``K x K`` system
  (``K`` = crossed levels): ``log|Sigma| = log|B| + log|I + S Z'B^-1 Z S|`` and
  ``r'Sigma^-1 r = r'B^-1 r - b'(I + S Z'B^-1 Z S)^-1 b`` with ``b = S Z'B^-1 r``.

Both stay stable as any SD goes to zero, which is where funnels live in sampled
random-effect models.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytensor.tensor as pt


def woodbury_correction(A, zr, scale) -> tuple[pt.TensorVariable, pt.TensorVariable]:
    """``(log|I + S A S|, b'(I + S A S)^-1 b)`` with ``S = diag(scale)``, ``b = S zr``."""
    M = pt.eye(A.shape[-1]) + scale[:, None] * A * scale[None, :]
    chol = pt.linalg.cholesky(M)
    w = pt.linalg.solve_triangular(chol, scale * zr, lower=True, b_ndim=1)
    return 2.0 * pt.sum(pt.log(pt.diag(chol))), pt.sum(w**2)


def woodbury_loglik(resid, var, n: np.ndarray, cols: np.ndarray, K: int, scale) -> pt.TensorVariable:
    """Log density of ``resid ~ N(0, diag(var) + Z diag(scale^2) Z')`` up to a constant.

    ``Z`` is the 0/1 indicator matrix of the integrated-out levels, given as ``cols``: one row
    per term, holding each cell's column. ``D`` depends on a cell only through its replicate
    count ``n``, so ``Z' D^-1 Z = sum_g d_g Z_g' Z_g`` over the few distinct counts with
    constant ``Z_g' Z_g``; ``Z' D^-1 r`` is a scatter-add.
    """
    dinv = 1.0 / var
    groups, first, group_of = np.unique(n, return_index=True, return_inverse=True)
    ztz = np.zeros((len(groups), K, K))
    for t in range(cols.shape[0]):
        for u in range(cols.shape[0]):
            np.add.at(ztz, (group_of, cols[t], cols[u]), 1.0)
    A = pt.tensordot(dinv[first], pt.as_tensor(ztz), axes=1)
    zr = pt.inc_subtensor(pt.zeros(K)[cols.ravel()], pt.tile(dinv * resid, cols.shape[0]))
    logdet, quad = woodbury_correction(A, zr, scale)
    return -0.5 * (pt.sum(pt.log(var)) + logdet + pt.sum(dinv * resid**2) - quad)


@dataclass(frozen=True)
class ItemBlocks:
    """Cells arranged as items x positions (``P`` = product of the other facets' levels).

    Attributes
    ----------
    position : ndarray
        Position of each observed cell inside its item's block.
    item : ndarray
        Item of each observed cell.
    pattern : ndarray
        Per item, the index of its replicate-count pattern (items sharing one share a block).
    pattern_n : ndarray
        ``(n_patterns, P)`` replicate counts, 0 where a cell is absent.
    pattern_count : ndarray
        Items per pattern.
    """

    position: np.ndarray
    item: np.ndarray
    pattern: np.ndarray
    pattern_n: np.ndarray
    pattern_count: np.ndarray

    @classmethod
    def build(
        cls, item: np.ndarray, position: np.ndarray, n: np.ndarray, n_items: int, P: int
    ) -> "ItemBlocks":
        """Group the cells of each item into blocks by their pattern of positions and call counts."""
        counts = np.zeros((n_items, P))
        counts[item, position] = n
        pattern_n, pattern, pattern_count = np.unique(counts, axis=0, return_inverse=True, return_counts=True)
        return cls(position, item, pattern.ravel(), pattern_n, pattern_count)

    @property
    def n_items(self) -> int:
        """Items (blocks)."""
        return len(self.pattern)

    @property
    def P(self) -> int:
        """Positions per item block (cells of the non-item facets)."""
        return self.pattern_n.shape[1]

    def flops(self, Ka: int, K: int) -> float:
        """Rough floating-point work of one log-density evaluation (for choosing a method),
        with ``Ka`` item-nested and ``K`` crossed levels.
        """
        P, npat = self.P, len(self.pattern_n)
        per_pattern = Ka**3 / 3 + Ka**2 * K + P * Ka * K + P * K**2
        per_item = P * (Ka + K) + (Ka**2 + Ka * K) * (npat if npat <= 8 else 1)
        return npat * per_pattern + self.n_items * per_item + K**3 / 3


def _per_item(M, V, pattern: np.ndarray, op) -> pt.TensorVariable:
    """``op(M[pattern[i]], V[i])`` for every item: one batched call per pattern when patterns
    are few (no gather of matrices, whose gradient is a costly scatter), a gather otherwise.
    """
    n = len(pattern)
    n_pat = int(pattern.max()) + 1
    if n_pat <= 8:
        out = op(M, pt.broadcast_to(V.T[None], (n_pat, V.shape[1], n)))  # (n_pat, ., n)
        return out[pattern, :, np.arange(n)]
    return op(M[pattern], V[:, :, None])[:, :, 0]


def item_block_loglik(
    blocks: ItemBlocks,
    resid,
    var_cell,
    var_replicate,
    za: np.ndarray,
    scale_a,
    zb: np.ndarray,
    scale_b,
    item_group: np.ndarray | None = None,
    scale_group=None,
) -> pt.TensorVariable:
    """Exact log density (up to a constant) of the cell means with every random effect integrated out.

    Inside an item block ``B = D + Z_a S_a^2 Z_a'`` is itself handled by Woodbury, so the only
    factorisations are ``K_a x K_a`` per replicate-count pattern (``K_a`` = levels of the
    item-nested terms per item) and one ``K x K`` for the crossed terms; absent cells have
    ``D^-1 = 0`` and drop out exactly.

    Parameters
    ----------
    blocks : ItemBlocks
    resid : tensor, shape (n_cells,)
        Observed cell means minus the fixed part of the predictor.
    var_cell, var_replicate : tensor scalars
        Cell-level and replicate variance (a cell's error variance is
        ``var_cell + var_replicate / n``).
    za : ndarray, shape (P, K_a)
        Indicators of the item-nested terms' levels at each position, with ``scale_a`` their SDs
        per column.
    zb : ndarray, shape (P, K_b)
        Indicators of the crossed terms' levels at each position, with ``scale_b`` their SDs.
    item_group, scale_group : optional
        Items nested in groups (categories): the group of each item and the group SD.
    """
    P = blocks.P
    present = blocks.pattern_n > 0
    n_safe = np.where(present, blocks.pattern_n, 1.0)
    var = var_cell + var_replicate / n_safe  # (n_pat, P)
    dinv = pt.where(present, 1.0 / var, 0.0)
    logdet = pt.sum(pt.where(present, pt.log(var), 0.0), axis=1)  # (n_pat,)

    R = pt.set_subtensor(pt.zeros((blocks.n_items, P))[blocks.item, blocks.position], resid)
    DR = dinv[blocks.pattern] * R  # (N, P): D^-1 r per item
    rr = pt.sum(DR * R)
    grouped = item_group is not None
    X = np.concatenate([zb] + ([np.ones((P, 1))] if grouped else []), axis=1)  # (P, Kx)
    Kb = zb.shape[1]
    G = pt.matmul(pt.as_tensor(X.T)[None] * dinv[:, None, :], X)  # (n_pat, Kx, Kx): X'D^-1 X
    zr_item = pt.dot(DR, X)  # (N, Kx): X'D^-1 r

    if za.shape[1]:
        # B^-1 = D^-1 - D^-1 Z_a S_a M_a^-1 S_a Z_a' D^-1, M_a = I + S_a Z_a' D^-1 Z_a S_a.
        Ka = za.shape[1]
        U = pt.matmul(pt.as_tensor(za.T)[None] * dinv[:, None, :], za)  # (n_pat, Ka, Ka)
        Ma = pt.eye(Ka)[None] + scale_a[None, :, None] * U * scale_a[None, None, :]
        La = pt.linalg.cholesky(Ma)
        logdet = logdet + 2.0 * pt.sum(pt.log(pt.diagonal(La, axis1=1, axis2=2)), axis=1)
        solve = lambda A, b: pt.linalg.solve_triangular(A, b, lower=True, b_ndim=2)  # noqa: E731
        q = _per_item(La, scale_a * pt.dot(DR, za), blocks.pattern, solve)  # (N, Ka)
        rr = rr - pt.sum(q**2)
        if X.shape[1]:
            W = solve(La, scale_a[None, :, None] * pt.matmul(pt.as_tensor(za.T)[None] * dinv[:, None, :], X))
            G = G - pt.matmul(W.transpose(0, 2, 1), W)  # (n_pat, Kx, Kx): X'B^-1 X
            zr_item = zr_item - _per_item(
                W.transpose(0, 2, 1), q, blocks.pattern, lambda A, b: pt.matmul(A, b)
            )
    logdet_B = pt.sum(blocks.pattern_count * logdet)
    if X.shape[1] == 0:
        return -0.5 * (logdet_B + rr)
    if grouped:
        n_groups = int(item_group.max()) + 1
        onehot = np.zeros((blocks.n_items, n_groups))
        onehot[np.arange(blocks.n_items), item_group] = 1.0
        Wg = np.zeros((len(blocks.pattern_n), n_groups))
        np.add.at(Wg, (blocks.pattern, item_group), 1.0)
        Abb = pt.tensordot(blocks.pattern_count.astype(float), G[:, :Kb, :Kb], axes=1)
        Abg = pt.tensordot(G[:, :Kb, Kb], pt.as_tensor(Wg), axes=[[0], [0]])  # (Kb, n_groups)
        Agg = pt.diag(pt.tensordot(G[:, Kb, Kb], pt.as_tensor(Wg), axes=1))
        A = pt.concatenate([pt.concatenate([Abb, Abg], axis=1), pt.concatenate([Abg.T, Agg], axis=1)], axis=0)
        zr = pt.concatenate([pt.sum(zr_item[:, :Kb], axis=0), pt.dot(zr_item[:, Kb], onehot)])
        scale = pt.concatenate([scale_b, pt.repeat(scale_group, n_groups)])
    else:
        A = pt.tensordot(blocks.pattern_count.astype(float), G, axes=1)
        zr = pt.sum(zr_item, axis=0)
        scale = scale_b
    logdet_M, quad = woodbury_correction(A, zr, scale)
    return -0.5 * (logdet_B + logdet_M + rr - quad)
