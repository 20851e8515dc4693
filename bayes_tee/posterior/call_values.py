"""What one more call is worth: the error of the systems' means as calls are added, in closed form.

Given the variance components, a system's score is the mean of its observed cells (a cell: one
combination of item, prompt, judge, temperature, ...; its calls averaged). Each random term
``t`` then adds ``sigma_t^2 * sum_l w_l^2`` to that mean's error variance, ``w_l`` the share of the
system's cells at level ``l`` of the term; the per-call residual adds
``sigma^2 * sum_c (1 / n_c) / C^2`` (``C`` cells, ``n_c`` calls in cell ``c``). A difference of two
systems keeps the terms that involve the system, each system's own part (item x system,
prompt x system, the cell, the calls): the model adjusts both for the items, prompts and judges
they share, as the leaderboard's P(a > b) does. On a balanced design these are the D-study's
divisors (Messing 2026 Eq. 3, 8-10); on an unbalanced one the D-study formulas with the actual
counts.

The plain mean of the cells is one estimator; the model's is better. A system holding many
cells at some items and few at others weighs the first more in its plain mean, while the model
weighs them by what it knows of them: a term's part of the error is at most ``1 / L`` of its
variance once the system has seen ``L`` of its levels (the mean of the level means), so each
term's coefficient is the smaller of the two. And the model is never less sure for a call more,
while a new cell at a level already crowded raises the plain mean's share of that level: so
each coefficient is held at the least it has been (a floor). A call at a level already seen then
lowers the residual's part of the error (and the cell's), never raises another's. Without these
every call of a system that had seen all the items would look worthless, and a run would stop
with the pool unspent.

:class:`CallState` keeps the sufficient sums (cells per system ``C``, the sums of squared level
counts ``SS`` and the replicate sums ``R``), so the error after one more call is an O(1) update
per term; :func:`pair_error` turns a current and a post-call variance per posterior draw into the
expected probability that a pair ends the wrong way round once the calls are scored (a
preposterior average: the pair's mean moves by ``N(0, V - V')``, then
``P(wrong) = Phi(-|delta'| / sqrt(V'))``), in closed form.

>>> import numpy as np
>>> s = CallState.from_cells(np.array([0, 0, 1, 1]), np.array([[0, 0], [1, 1], [0, 0], [1, 1]]),
...                          np.array([1, 1, 1, 1]), n_units=2, shared=np.array([True, False]))
>>> s.pair_coefficients(0, 1)  # the shared item term drops; item x system and residual 1/2 + 1/2
array([0., 1., 1.])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special


@dataclass
class CallState:
    """The sufficient sums of every unit's (system's) observed cells.

    Attributes
    ----------
    C : numpy.ndarray
        ``(U,)`` cells per unit.
    SS : numpy.ndarray
        ``(U, T)`` per unit and term, the sum over the term's levels of the squared cell count.
    R : numpy.ndarray
        ``(U,)`` per unit, the sum over its cells of ``1 / n_c``.
    shared : numpy.ndarray
        ``(T,)`` the term does not involve the system (its levels are shared by the units).
    """

    C: np.ndarray
    SS: np.ndarray
    R: np.ndarray
    shared: np.ndarray
    L: np.ndarray | None = None
    floor: np.ndarray | None = None
    panel: np.ndarray | None = None

    @classmethod
    def from_cells(
        cls, unit: np.ndarray, keys: np.ndarray, n: np.ndarray, *, n_units: int, shared: np.ndarray
    ) -> CallState:
        """The sums of observed cells: each cell's ``unit``, its level key per term ``keys``
        ``(cells, T)`` and its calls ``n``.
        """
        C = np.bincount(unit, minlength=n_units).astype(float)
        R = np.bincount(unit, weights=1.0 / n, minlength=n_units)
        SS = np.zeros((n_units, keys.shape[1]))
        L = np.zeros((n_units, keys.shape[1]))
        for t in range(keys.shape[1]):  # each unit's cells per level of the term, squared, summed
            levels, per = np.unique(np.column_stack([unit, keys[:, t]]), axis=0, return_counts=True)
            SS[:, t] = np.bincount(levels[:, 0], weights=per.astype(float) ** 2, minlength=n_units)
            L[:, t] = np.bincount(levels[:, 0], minlength=n_units)
        return cls(C, SS, R, np.asarray(shared, bool), L).set_panel(None)

    def _coefficients(self, u, SS, R, C, L) -> np.ndarray:
        """Coefficients from sums (the last axis: terms, then the residual): the plain mean's,
        each term's at most ``1 / L``, held at unit ``u``'s floor.
        """
        C = np.asarray(C, float)
        plain = np.concatenate([np.asarray(SS, float), np.asarray(R, float)[..., None]], axis=-1)
        plain = plain / (C**2)[..., None]
        if self.L is not None:
            levels = np.where(np.asarray(L) > 0, 1.0 / np.maximum(L, 1.0), np.inf)
            if self.panel is not None:  # a panel's mean weighs its levels evenly already
                levels = np.where(self.panel > 0, np.inf, levels)
            plain[..., :-1] = np.minimum(plain[..., :-1], levels)
        return plain if self.floor is None else np.minimum(plain, self.floor[u])

    def unit_coefficients(self, u: int) -> np.ndarray:
        """Each term's coefficient (and the residual's, last) in the error variance of unit
        ``u``'s mean: the plain cell mean's, held at its floor (the module's docstring).
        """
        L = None if self.L is None else self.L[u]
        return self._panel(self._coefficients(u, self.SS[u], self.R[u], self.C[u], L))

    def set_panel(self, panel: np.ndarray | None) -> CallState:
        """Read the terms with ``panel > 0`` as a fixed panel's (``1/P``; see :meth:`_panel`),
        their floors taken afresh; returns the state.
        """
        self.panel = None if panel is None else np.asarray(panel, float)
        self.floor = None
        floor = np.stack(
            [self._coefficients(u, self.SS[u], self.R[u], self.C[u], self.L[u]) for u in range(len(self.C))]
        )
        floor[self.C == 0] = np.inf  # a system with no call yet: nothing known to keep
        self.floor = floor
        return self

    def _panel(self, coef: np.ndarray) -> np.ndarray:
        """A term whose levels are a fixed panel (system x judge with a fixed panel of judges)
        is part of what is estimated, the mean over *all* the panel's ``P`` levels: its error is
        ``sum_l (w_l - 1/P)^2 = sum_l w_l^2 - 1/P``, the calls' spread off the panel's even one
        (``panel`` holds ``1/P`` for those terms, 0 for the others).
        """
        if self.panel is None:
            return coef
        out = coef.copy()
        out[..., :-1] = np.maximum(out[..., :-1] - self.panel, 0.0)
        return out

    def pair_coefficients(self, u: int, v: int) -> np.ndarray:
        """Each term's coefficient (residual last) in the error variance of ``u - v``: the
        system-specific terms of both, the shared ones adjusted for (zero).
        """
        return np.where(
            np.append(self.shared, False), 0.0, self.unit_coefficients(u) + self.unit_coefficients(v)
        )

    def after(self, u: int, counts: np.ndarray, n: np.ndarray, partners: list[int]) -> np.ndarray:
        """Coefficients ``(K, len(partners), T + 1)`` after one more call of unit ``u`` in each of
        ``K`` cells: ``counts`` ``(K, T)`` are the unit's cells at the call's level of each term,
        ``n`` ``(K,)`` the calls its cell holds (0: a new cell). A partner ``-1`` is the unit alone.
        """
        new = n == 0
        C = self.C[u] + new
        SS = self.SS[u] + new[:, None] * (2.0 * counts + 1.0)
        safe = np.where(new, 1.0, n)
        R = self.R[u] + np.where(new, 1.0, 1.0 / (safe + 1.0) - 1.0 / safe)
        L = None if self.L is None else self.L[u] + new[:, None] * (counts == 0)
        own = self._panel(self._coefficients(u, SS, R, C, L))
        keep = ~np.append(self.shared, False)
        out = np.empty((len(n), len(partners), own.shape[1]))
        for p, v in enumerate(partners):
            out[:, p] = own if v < 0 else np.where(keep, own + self.unit_coefficients(v), 0.0)
        return out

    def add(self, u: int, counts: np.ndarray, n: int) -> None:
        """Score one call of unit ``u`` in a cell with ``n`` calls (0: new) whose level counts per
        term (the unit's cells, before the call) are ``counts`` ``(T,)``.
        """
        if n == 0:
            self.C[u] += 1.0
            self.R[u] += 1.0
            self.SS[u] += 2.0 * counts + 1.0
            if self.L is not None:
                self.L[u] += np.asarray(counts) == 0
        else:
            self.R[u] += 1.0 / (n + 1.0) - 1.0 / n
        if self.floor is not None:
            L = None if self.L is None else self.L[u]
            self.floor[u] = self._coefficients(u, self.SS[u], self.R[u], self.C[u], L)


def pair_error(delta: np.ndarray, now: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Expected P(the pair ends the wrong way round) once the calls are scored, averaged over
    posterior draws: ``delta`` the pair's current mean difference (broadcast to ``after``'s
    leading axes), ``now`` and ``after`` its error variance per draw (last axis) before and after.

    In closed form: with the mean moving by ``N(0, V - V')``, ``h = |delta| / sqrt(V)``,
    ``k = |delta| / sqrt(V - V')`` and ``rho = sqrt((V - V') / V)``,
    ``E Phi(-|delta'| / sqrt(V')) = Phi(-h) + Phi(-k) - 2 Phi_2(-h, -k; rho)``, the bivariate
    normal by Owen's T function.

    >>> float(pair_error(np.array(0.0), np.ones(4), np.ones(4)))  # a coin flip stays one
    0.5
    >>> round(float(pair_error(np.array(0.0), np.ones(1), np.full(1, 0.5))), 4)  # 1/2 - asin(rho)/pi
    0.25
    """
    a = np.maximum(np.abs(np.asarray(delta, float))[..., None], 1e-300)
    now, after = np.broadcast_arrays(now, after)
    move = np.clip(now - after, 0.0, None)
    sure = after <= 1e-14 * now  # the calls settle the pair
    same = move <= 1e-14 * now  # they change nothing
    V, b = np.sqrt(now), np.sqrt(np.where(same, now, move))
    c = np.sqrt(np.where(sure, now, after))
    h, k, rho, s = a / V, a / b, b / V, c / V
    both = (
        0.5 * special.ndtr(-h) + 0.5 * special.ndtr(-k)
        - special.owens_t(h, (k - rho * h) / (h * s)) - special.owens_t(k, (h - rho * k) / (k * s))
    )  # fmt: skip
    out = special.ndtr(-h) + special.ndtr(-k) - 2.0 * both
    out = np.where(same, special.ndtr(-h), np.where(sure, 0.0, out))
    return np.clip(out, 0.0, 0.5).mean(axis=-1)


def wrong_now(delta: np.ndarray, now: np.ndarray) -> np.ndarray:
    """P(each pair is the wrong way round) now, averaged over posterior draws: :func:`pair_error`
    when no call is added (``Phi(-|delta| / sqrt(V))``), without its bivariate terms.

    >>> float(wrong_now(np.array([0.0]), np.ones((1, 3)))[0])
    0.5
    """
    a = np.maximum(np.abs(np.asarray(delta, float))[..., None], 1e-300)  # as pair_error's
    return special.ndtr(-a / np.sqrt(now)).mean(axis=-1)
