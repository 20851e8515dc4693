"""Tie groups of a leaderboard: the compact letter display of which systems are not separated.

Two systems *share a letter* exactly when the simultaneous interval of their difference (every
pair at once at the table's level, :func:`bayes_tee.posterior.leaderboard.pairs`) contains 0.
It is the display R users know from ``multcomp::cld`` and ``emmeans``: a reader sees at a glance
that "a", "ab" and "b" are one tie chain, that the first and the third are separated and the
second is separated from neither.

The letters come from Piepho's (2004) insert-absorb algorithm and its sweep:

1. start with one letter shared by every system;
2. for every separated pair (i, j), split each letter held by both into one without i and one
   without j; drop a letter whose systems are a subset of another letter's (absorb);
3. sweep: drop a system from a letter when every system it shares that letter with shares
   another letter with it too, then drop empty and absorbed letters.

Step 2 alone gives a valid display (every separated pair shares nothing, every unseparated pair
shares a letter); the sweep removes letters it does not need. Letters are named a, b, c, ... in
the order of their best-ranked system, so "a" holds the leader.

Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
comparisons. *Journal of Computational and Graphical Statistics* 13(2), 456-466.

>>> separated = np.array([[False, False, True], [False, False, False], [True, False, False]])
>>> letter_display(separated)
['a', 'ab', 'b']
"""

from __future__ import annotations

import string

import numpy as np

#: Letter names: lower then upper case; beyond 52 letters, numbered ("a2", ...) and joined by ".".
ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def _absorb(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Drop every column that is empty or a subset of another (the first of equal ones kept)."""
    kept: list[np.ndarray] = []
    for i, c in enumerate(columns):
        if not c.any():
            continue
        absorbed = any(
            (j != i) and not (c & ~d).any() and ((c != d).any() or j < i) for j, d in enumerate(columns)
        )
        if not absorbed:
            kept.append(c)
    return kept


def letter_columns(separated: np.ndarray) -> list[np.ndarray]:
    """The letters of the display as boolean membership columns, in letter order.

    Parameters
    ----------
    separated : numpy.ndarray
        Symmetric boolean ``(n, n)``: ``True`` where two systems are separated (their
        simultaneous interval excludes 0). Rows are in rank order, best first.

    Returns
    -------
    list of numpy.ndarray
        One boolean ``(n,)`` column per letter: which systems hold it.

    >>> [c.astype(int).tolist() for c in letter_columns(np.zeros((2, 2), bool))]
    [[1, 1]]
    """
    sep = np.asarray(separated, bool)
    n = sep.shape[0]
    if sep.shape != (n, n) or not (sep == sep.T).all():
        raise ValueError("separated must be a symmetric square boolean matrix.")
    columns = [np.ones(n, bool)] if n else []
    for i, j in zip(*np.nonzero(np.triu(sep, 1))):  # insert: split the letters i and j share
        split: list[np.ndarray] = []
        for c in columns:
            if c[i] and c[j]:
                without_i, without_j = c.copy(), c.copy()
                without_i[i], without_j[j] = False, False
                split += [without_i, without_j]
            else:
                split.append(c)
        columns = _absorb(split)
    columns = _sweep(columns)
    return sorted(columns, key=lambda c: tuple(np.nonzero(c)[0]))


def _sweep(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Drop the memberships the display does not need (Piepho's sweep)."""
    columns = [c.copy() for c in columns]
    for k, c in enumerate(columns):
        for i in np.nonzero(c)[0]:
            others = [d for m, d in enumerate(columns) if m != k and d[i]]
            mates = np.nonzero(c)[0]
            covered = all(j == i or any(d[j] for d in others) for j in mates)
            if others and covered:  # every system keeps one letter at least
                c[i] = False
    return _absorb(columns)


def letter_names(k: int) -> list[str]:
    """Names of ``k`` letters: a-z, A-Z, then a2, b2, ... (see :data:`ALPHABET`).

    >>> letter_names(3)
    ['a', 'b', 'c']
    """
    n = len(ALPHABET)
    return [ALPHABET[i % n] + ("" if i < n else str(i // n + 1)) for i in range(k)]


def letter_display(separated: np.ndarray) -> list[str]:
    """Each system's letters (``"a"``, ``"ab"``, ...) from the separated pairs, systems in rank
    order (see :func:`letter_columns`). With more than 52 letters each letter is a name like
    ``"a2"`` and a system's letters are joined by ``"."``.
    """
    columns = letter_columns(separated)
    names = letter_names(len(columns))
    glue = "" if len(columns) <= len(ALPHABET) else "."
    n = np.asarray(separated).shape[0]
    return [glue.join(name for name, c in zip(names, columns) if c[i]) for i in range(n)]


def groups_of(systems: list[str], separated: np.ndarray) -> list[list[str]]:
    """The tie groups: for every letter, in letter order, the systems that hold it (in rank
    order), ``systems`` in rank order and ``separated`` as in :func:`letter_columns`.

    >>> groups_of(["A", "B", "C"], np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], bool))
    [['A', 'B'], ['B', 'C']]
    """
    return [[s for s, held in zip(systems, c) if held] for c in letter_columns(separated)]
