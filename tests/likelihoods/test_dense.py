"""The kernels' shared dense loops against NumPy, and the rule that keeps the kernels quick to
compile (no slice assignment from an array: each one makes numba compile its shape-error
message formatting, 2-4 s on a new machine's first fit; ``benchmarks/results/bench_startup_cold.log``).
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

from bayes_tee.likelihoods.kernels import KERNEL_SOURCES
from bayes_tee.likelihoods.kernels.dense import cholesky, dot, factor, inverse, matvec, solve, vecmat


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 2)])
def test_products_equal_numpys(shape):
    rng = np.random.default_rng(sum(shape))
    A, v, u = rng.normal(size=shape), rng.normal(size=shape[1]), rng.normal(size=shape[0])
    np.testing.assert_allclose(matvec(A, v), A @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(vecmat(u, A), u @ A, rtol=1e-12, atol=1e-12)
    assert dot(u, u) == pytest.approx(u @ u, rel=1e-12)


@pytest.mark.parametrize("s", [1, 2, 6])
def test_factorisations_on_the_leading_block_equal_numpys(s):
    rng = np.random.default_rng(s)
    M = rng.normal(size=(s, s))
    S = M @ M.T + s * np.eye(s)
    g = rng.normal(size=s)
    A = np.zeros((s + 2, s + 2))  # workspace larger than the block, as the kernels keep it
    A[:s, :s] = np.tril(S)
    L = A.copy()
    logdet = cholesky(L, s)
    np.testing.assert_allclose(np.tril(L[:s, :s]), np.linalg.cholesky(S), rtol=1e-10)
    assert logdet == pytest.approx(np.linalg.slogdet(S)[1], rel=1e-10)
    out = np.zeros(s + 2)
    solve(L, s, g, out)
    np.testing.assert_allclose(out[:s], np.linalg.solve(S, g), rtol=1e-10)
    inv = np.zeros((s + 2, s + 2))
    inverse(L, s, np.zeros((s + 2, s + 2)), inv)
    np.testing.assert_allclose(np.tril(inv[:s, :s]), np.tril(np.linalg.inv(S)), rtol=1e-10, atol=1e-12)
    b, Ainv = np.zeros(s + 2), np.zeros((s + 2, s + 2))
    logdet2, quad = factor(A.copy(), s, g, b, np.zeros((s + 2, s + 2)), Ainv)
    assert logdet2 == pytest.approx(logdet) and quad == pytest.approx(g @ np.linalg.solve(S, g), rel=1e-10)


#: Functions of the kernel modules that run in Python, not compiled.
PYTHON_FUNCTIONS = {"pack", "callback", "key_cache_on_sources"}


def _slice_assignments(path) -> list[str]:
    """``file:line: statement`` of every assignment to a slice in a compiled function of ``path``."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, ast.FunctionDef) or fn.name in PYTHON_FUNCTIONS:
            continue
        for node in ast.walk(fn):
            targets = [node.target] if isinstance(node, ast.AugAssign) else getattr(node, "targets", [])
            for t in targets:
                if isinstance(t, ast.Subscript):
                    index = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
                    if any(isinstance(i, ast.Slice) for i in index):
                        found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return sorted(set(found))


def test_no_kernel_assigns_to_a_slice():
    found = [hit for p in KERNEL_SOURCES for hit in _slice_assignments(p)]
    assert not found, "assign element by element in a loop instead:\n" + "\n".join(found)
