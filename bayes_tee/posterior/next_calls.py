"""Which calls to buy next: the candidate calls that most improve an objective per unit cost.

:func:`next_calls` values every row of a pool of candidate calls (the fit's role columns, no
outcome) by the expected improvement of the objective's loss if that call were scored, averaged
over the posterior draws of the variance components: a preposterior computation, with the
system means' error in closed form (:mod:`~bayes_tee.posterior.call_values`) at the actual
counts, so a call in a new item, prompt or judge (random facets) and a repeat of a cell already
scored are valued alike. The loss is the objective's (:mod:`~bayes_tee.posterior.decision`):

- ``"best"``: the sum over the other systems of the expected probability that the leader and
  that system end the wrong way round (a bound on ``1 - p_best``);
- ``"rank"``: the same sum over the adjacent pairs of the posterior ranking;
- ``"separate"``: that probability for the one pair;
- ``"theta"``: the expected half-width of the system's interval at ``level``.

A batch is chosen greedily: after each pick the sums are updated and the gains of every call it
changes are computed again, so a cell repeated pays less each time and a second call on an item
already picked is valued as such. When no call shows a gain (every level of the pair's systems
seen, the rest of their error the item sample's), the batch is filled with the least-sampled
calls of the unresolved systems, which teach the posterior the components themselves. Binomial
and ordinal fits are valued on their latent scale (each call's latent residual pi^2/3, or 1 for
the probit).

>>> pool = df_remaining.drop(columns="score")  # doctest: +SKIP
>>> post.next_calls(pool, 200, objective="best")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from .._core.exceptions import ArgumentError, DesignError
from . import leaderboard as board
from .call_values import CallState, pair_error, wrong_now
from .decision import Objective, ObjectiveName, objective_for
from .system_scores import system_error_terms

if TYPE_CHECKING:
    from .fit import Fit

#: Posterior draws of the variance components the gains average over (thinned evenly).
GAIN_DRAWS = 40
#: Candidates valued at once (bounds the memory of one pass: candidates x pairs x draws).
CHUNK = 4096
#: Most calls a candidate's look-ahead counts (:meth:`Problem.losses`): the batch, up to this.
HORIZON = 500
#: A system whose pairs' summed P(wrong way round) is below this gets no call that shows no gain.
FILL_LOSS = 1e-4


def next_calls(
    fit: Fit,
    pool: pd.DataFrame,
    n: int,
    objective: ObjectiveName = "best",
    *,
    systems: tuple[str, ...] | list[str] | str | None = None,
    over: str = "new",
    cost: str | Mapping[str, float] | None = None,
    level: float = 0.9,
) -> pd.DataFrame:
    """The ``n`` rows of ``pool`` worth scoring next, in the order chosen, with their ``gain``.

    Parameters
    ----------
    fit : Fit
        The fit of the calls scored so far.
    pool : pandas.DataFrame
        Candidate calls: one row per call, with the fit's role columns (item, prompt, judge,
        temperature, system, ...; no outcome needed). New levels of random facets (new items;
        prompts; judges when ``judge_effect="random"``) and repeats of scored cells are allowed.
    n : int
        Calls to choose.
    objective : {"best", "rank", "separate", "theta"}
        What the calls should resolve (:mod:`bayes_tee.posterior.decision`).
    systems : tuple of str, optional
        ``"separate"``: the pair; ``"theta"`` on a comparison: the system.
    over : {"new", "panel"}
        The reading of the systems' error.
    cost : str or mapping, optional
        A column of ``pool`` with each call's cost, or a cost per judge (``{"gpt-4o": 5, ...}``);
        default one per call.
    level : float
        ``"theta"``: the interval's level.

    Returns
    -------
    pandas.DataFrame
        The chosen rows of ``pool`` (its index kept), best first, with ``gain`` (the expected
        reduction of the loss when the call is scored after the ones above it) and ``cost``;
        ``attrs``: ``objective``, ``loss`` (now) and ``loss_after`` (expected after the batch).
        Once no call shows a gain, the batch is filled with the least-sampled calls of the
        systems whose pairs are unresolved (gain 0; the gains hold the variance components
        fixed, the posterior learns them too); fewer than ``n`` rows only when no call of such a
        system is left.

    Raises
    ------
    DesignError
        A pool without a role column, with a new level of a fixed facet (a new system, new
        judges of a fixed panel), missing values, or a bad cost.

    Examples
    --------
    >>> chosen = post.next_calls(pool, 100, objective="rank")  # doctest: +SKIP
    >>> chosen["gain"].is_monotonic_decreasing  # doctest: +SKIP
    True
    """
    if fit.design.covariates is not None:
        raise DesignError(
            f"next_calls does not value calls on a fit with covariates "
            f"({', '.join(fit.design.covariates.names)}) "
            "yet: what a call teaches depends on its covariate value. Choose calls from a fit without them "
            "(the same formula less the slopes), and fit the covariates on the data bought."
        )
    obj = objective_for(fit, objective, systems, over, level)
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ArgumentError(f"n is the number of calls to choose: a positive integer, got {n!r}.")
    if not isinstance(pool, pd.DataFrame):
        raise DesignError(f"pool must be a pandas DataFrame of candidate calls, got {type(pool).__name__}.")
    costs = call_costs(fit, pool, cost)
    if pool.empty:
        return _chosen(pool, [], [], costs, obj, 0.0, 0.0)
    cand = Candidates.of(fit, pool)
    problem = Problem.of(fit, obj)
    order, gains, loss_after = problem.greedy(cand, costs, n)
    return _chosen(pool, order, gains, costs, obj, problem.loss_now, loss_after)


def call_costs(fit: Fit, pool: pd.DataFrame, cost: str | Mapping[str, float] | None) -> np.ndarray:
    """Each pool row's cost (positive, finite), from a column or a mapping per judge."""
    if cost is None:
        return np.ones(len(pool))
    if isinstance(cost, str):
        if cost not in pool.columns:
            raise DesignError(
                f"cost={cost!r} is not a column of the pool; its columns: {list(pool.columns)}."
            )
        values = pd.to_numeric(pool[cost], errors="coerce").to_numpy(float)
        what = f"column {cost!r}"
    elif isinstance(cost, Mapping):
        column = fit.design.columns.get("judge")
        if column is None or column not in pool.columns:
            raise DesignError(
                "cost= as a mapping gives a cost per judge; this fit or pool has no judge column."
            )
        labels = pool[column].astype(str)
        missing = sorted(set(labels) - {str(k) for k in cost})
        if missing:
            raise DesignError(
                f"cost= has no cost for judge(s) {missing[:5]}: give every judge of the pool one."
            )
        values = labels.map({str(k): v for k, v in cost.items()}).to_numpy(float)
        what = "cost= per judge"
    else:
        raise ArgumentError(
            f"cost takes a column name or a mapping judge -> cost, got {type(cost).__name__}."
        )
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        raise DesignError(f"{what}: {int(bad.sum())} calls have no positive, finite cost; fix or drop them.")
    return values


class Candidates:
    """The pool's calls as the fit's codes: each call's unit (system), its level key per term,
    its cell and the calls that cell holds.
    """

    def __init__(self, unit, keys, cell, fit_cells, fit_n, fit_unit, fit_keys, shared, n_units):
        self.unit, self.keys, self.cell = unit, keys, cell
        self.fit_cells, self.fit_n, self.fit_unit, self.fit_keys = fit_cells, fit_n, fit_unit, fit_keys
        self.shared, self.n_units = shared, n_units

    @classmethod
    def of(cls, fit: Fit, pool: pd.DataFrame) -> Candidates:
        """The pool's calls coded against the fit's design (:func:`pool_codes`)."""
        d = fit.design
        system = d.system
        codes = pool_codes(fit, pool)
        fit_codes = {f: d.cells[f].to_numpy(np.int64) for f in d.facets}
        radix = {f: int(max(fit_codes[f].max(), codes[f].max())) + 1 for f in d.facets}
        terms = [t for t in fit.terms if t.kind == "random"]
        n_units = len(d.levels[system]) if system else 1

        def key(c: dict[str, np.ndarray], facets) -> np.ndarray:
            """One integer per row for its levels of ``facets`` (mixed radix; the system left out)."""
            out = np.zeros(len(c["item"]), np.int64)
            for f in facets:
                if f != system:
                    out = out * (len(d.categories) + 1 if f == "category" else radix[f]) + c[f]
            return out

        def term_keys(c: dict[str, np.ndarray]) -> np.ndarray:
            cols = [key(c, ("category",) if t.label == "category" else t.facets) for t in terms]
            return np.column_stack(cols) if cols else np.zeros((len(c["item"]), 0), np.int64)

        def cell_key(c: dict[str, np.ndarray]) -> np.ndarray:
            return key(c, [f for f in d.facets if f != system])

        if d.categories:
            codes["category"] = _categories(fit, pool, codes["item"])
            fit_codes["category"] = d.item_category[fit_codes["item"]]
        unit = codes[system] if system else np.zeros(len(pool), np.int64)
        fit_unit = fit_codes[system] if system else np.zeros(len(d.cells), np.int64)
        shared = np.array([system not in t.facets for t in terms], bool)
        return cls(
            unit, term_keys(codes), cell_key(codes), cell_key(fit_codes), d.cells["n"].to_numpy(float),
            fit_unit, term_keys(fit_codes), shared, n_units,
        )  # fmt: skip

    def state(self) -> CallState:
        """The sums of the fit's scored cells (:class:`~.call_values.CallState`)."""
        return CallState.from_cells(
            self.fit_unit, self.fit_keys, self.fit_n, n_units=self.n_units, shared=self.shared
        )

    def counts(self) -> np.ndarray:
        """``(K, T)``: the candidate's own unit's scored cells at its level of each term."""
        K, T = self.keys.shape
        out = np.zeros((K, T))
        for t in range(T):
            scored = self.fit_keys[:, t] * self.n_units + self.fit_unit
            levels, per = np.unique(scored, return_counts=True)
            mine = self.keys[:, t] * self.n_units + self.unit
            pos = np.clip(np.searchsorted(levels, mine), 0, len(levels) - 1)
            out[:, t] = np.where(levels[pos] == mine, per[pos], 0)
        return out

    def calls_in_cell(self) -> np.ndarray:
        """``(K,)``: the calls already scored in each candidate's cell (0: a new cell)."""
        full = self.fit_cells * self.n_units + self.fit_unit
        mine = self.cell * self.n_units + self.unit
        order = np.argsort(full)
        pos = np.clip(np.searchsorted(full[order], mine), 0, len(full) - 1)
        hit = full[order][pos] == mine
        return np.where(hit, self.fit_n[order][pos], 0.0)


class Problem:
    """An objective as pairs of units (or one unit alone), their current mean differences and
    the terms of their error, with the variance components per draw.
    """

    def __init__(self, obj: Objective, pairs, delta, var, const, z, panel=None) -> None:
        self.obj, self.pairs, self.delta, self.var, self.const, self.z = obj, pairs, delta, var, const, z
        self.panel = panel  # per random term: 1/P for a term of the system and a fixed panel, else 0
        self.loss_now = 0.0

    @classmethod
    def of(cls, fit: Fit, obj: Objective) -> Problem:
        """The pairs (or the unit) of ``obj`` on ``fit``, with its component draws."""
        d = fit.design
        random = [t for t in fit.terms if t.kind == "random"]
        residual = [t for t in fit.terms if t.kind == "residual"]
        draws = fit.component_draws().stack(sample=("chain", "draw")).transpose("component", "sample")
        keep = np.linspace(0, draws.sizes["sample"] - 1, min(GAIN_DRAWS, draws.sizes["sample"])).round()
        draws = draws.isel(sample=keep.astype(int))
        labels = [t.label for t in random]
        var = np.vstack(
            [draws.sel(component=labels).values if labels else np.zeros((0, draws.sizes["sample"])),
             draws.sel(component=[t.label for t in residual]).values.sum(axis=0, keepdims=True)
             if residual else np.zeros((1, draws.sizes["sample"]))]
        )  # fmt: skip
        const = np.zeros(var.shape[1])
        z = float(stats.norm.ppf(0.5 + obj.level / 2))
        if d.system is None:  # theta: the fixed facets' sensitivity is a constant of the design
            fixed = [t for t in fit.terms if t.kind == "fixed"]
            for t in fixed:
                const += draws.sel(component=t.label).values / np.prod([d.counts[f] for f in t.facets])
            return cls(obj, [(0, -1)], np.zeros(1), var, const, z)
        # one system's mean keeps every term of the reading; a difference, as the leaderboard's
        # P(a > b) that the stopping rule reads, keeps the system-specific ones (the model adjusts
        # both systems for the items, prompts and judges they share)
        reading = obj.over if obj.name == "theta" else f"{obj.over}_own"
        mask = system_error_terms(fit)[reading]  # over the non-fixed terms, in order
        nonfixed = [t for t in fit.terms if t.kind != "fixed"]
        keep_random = np.array([m for t, m in zip(nonfixed, mask) if t.kind == "random"], bool)
        # a term of the system and facets read as a fixed panel (system x judge with fixed
        # judges; system x prompt on the panel reading) is part of the estimand, the mean over
        # the panel's levels: calls off the panel's even spread leave its effects unknown
        panel = np.zeros(len(random))
        for k, t in enumerate(random):
            others = [f for f in t.facets if f != d.system]
            if d.system in t.facets and others and not keep_random[k]:
                panel[k] = 1.0 / float(np.prod([len(d.levels[f]) for f in others]))
        keep_random = keep_random | (panel > 0)
        keep_resid = any(m for t, m in zip(nonfixed, mask) if t.kind == "residual")
        var = var * np.append(keep_random, keep_resid)[:, None]
        est = board.system_estimates(fit).to_numpy()
        names = list(d.levels[d.system])
        if obj.name == "theta":
            return cls(obj, [(names.index(obj.systems[0]), -1)], np.zeros(1), var, const, z, panel)
        if obj.name == "separate":
            pairs = [(names.index(obj.systems[0]), names.index(obj.systems[1]))]
        else:
            order = list(np.argsort(-est))
            if obj.name == "best":
                pairs = [(order[0], j) for j in order[1:]]
            else:
                pairs = list(zip(order, order[1:]))
        delta = np.array([est[a] - est[b] for a, b in pairs])
        return cls(obj, pairs, delta, var, const, z, panel)

    def losses(self, coef: np.ndarray, p_idx: np.ndarray, now: np.ndarray, m: int) -> np.ndarray:
        """Loss ``(K, P)`` of each candidate's pairs ``p_idx`` after ``m`` calls like it, from its
        coefficients after one ``(K, P, T + 1)``; ``now`` ``(P, D)`` the pairs' variances now.

        One call's value alone is second order (a posterior probability is a martingale: only the
        chance that a pair crosses over lowers its expected error), so calls are compared by what
        ``m`` of their kind would buy, their precisions adding (``1/V_m = 1/V + m (1/V_1 - 1/V)``),
        per call: the look-ahead of the knowledge gradient for batches (KG*, Frazier & Powell).
        """
        V1 = coef @ self.var + self.const
        base = now[p_idx]
        gain = np.clip(1.0 / np.maximum(V1, 1e-300) - 1.0 / base, 0.0, None)
        return self.loss(p_idx, base, 1.0 / (1.0 / base + m * gain))

    def loss(self, p_idx: np.ndarray, now: np.ndarray, after: np.ndarray | None = None) -> np.ndarray:
        """The objective's loss of pairs ``p_idx`` whose variances per draw go from ``now`` to
        ``after`` (``None``: stay at ``now``, no call added): the expected half-width
        (``theta``), else the expected P(wrong way round).
        """
        if self.obj.name == "theta":
            return self.z * np.sqrt(now if after is None else after).mean(axis=-1)
        if after is None:
            return wrong_now(self.delta[p_idx], now)
        return pair_error(self.delta[p_idx], now, after)

    def greedy(self, cand: Candidates, costs: np.ndarray, n: int) -> tuple[list[int], list[float], float]:
        """Choose up to ``n`` candidates one at a time by gain per cost, the sums updated after
        each pick; the gains are computed once per distinct candidate (its unit, its cell's
        calls and its unit's counts at its levels), for the units whose pairs the pick changed.
        """
        state, counts, calls = cand.state().set_panel(self.panel), cand.counts(), cand.calls_in_cell()
        by_unit = [np.flatnonzero(cand.unit == u) for u in range(cand.n_units)]
        partners = {u: [(p, b if a == u else a) for p, (a, b) in enumerate(self.pairs) if u in (a, b)]
                    for u in range(cand.n_units)}  # fmt: skip
        horizon = min(n, HORIZON)
        gains = np.zeros(len(costs))
        taken = np.zeros(len(costs), bool)

        def now_var() -> np.ndarray:
            coef = [
                state.unit_coefficients(a) if b < 0 else state.pair_coefficients(a, b) for a, b in self.pairs
            ]
            return np.array(coef) @ self.var + self.const

        every = np.arange(len(self.pairs))

        # each unit's candidates' loss reduction per pair of theirs (columns: partners[u])
        parts = [np.zeros((len(by_unit[u]), len(partners[u]))) for u in range(cand.n_units)]
        sigs: list[tuple[np.ndarray, np.ndarray] | None] = [None] * cand.n_units

        def value(u: int, which: list[int] | None = None) -> None:
            """Recompute unit ``u``'s candidates' gains on its pairs ``which`` (default all)."""
            which = list(range(len(partners[u]))) if which is None else which
            ks = by_unit[u]
            if not len(ks) or not which:
                return
            p_idx = np.array([partners[u][w][0] for w in which])
            vs = [partners[u][w][1] for w in which]
            if sigs[u] is None:  # the unit's distinct candidates, until one of them is picked
                rows = np.column_stack([calls[ks], counts[ks]])
                _, first, inv = np.unique(_row_hash(rows), return_index=True, return_inverse=True)
                sigs[u] = (rows[first], inv.ravel())
            sig, inv = sigs[u]
            after = self.losses(state.after(u, sig[:, 1:], sig[:, 0], vs), p_idx, V_now, horizon)
            parts[u][:, which] = (loss[p_idx] - after)[inv]
            gains[ks] = parts[u].sum(axis=1) / horizon

        V_now = now_var()
        loss = self.loss(every, V_now)
        self.loss_now = float(loss.sum())
        for u in range(cand.n_units):
            value(u)
        order, picked = [], []
        while len(order) < n:
            score = np.where(taken, -np.inf, gains / costs)
            k = int(np.argmax(score))
            if not score[k] > 0:
                break
            order.append(k)
            picked.append(float(gains[k]))
            taken[k] = True
            u = int(cand.unit[k])
            state.add(u, counts[k], int(calls[k]))
            mine = by_unit[u]
            if calls[k] == 0:  # a new cell: the unit's counts at its levels grow
                counts[mine] += cand.keys[mine] == cand.keys[k]
            calls[mine[cand.cell[mine] == cand.cell[k]]] += 1.0
            sigs[u] = None
            V_now = now_var()
            loss = self.loss(every, V_now)
            value(u)  # every pair of the unit picked, and the one pair each partner shares with it
            for p, v in partners[u]:
                if v >= 0:
                    value(v, [w for w, (q, _) in enumerate(partners[v]) if q == p])
        if len(order) < n:
            order, picked = self._fill(cand, counts, calls, taken, loss, order, picked, n)
        return order, picked, float(loss.sum())

    def _fill(self, cand, counts, calls, taken, loss, order, picked, n):
        """The rest of a batch once no call shows a gain: the least-sampled calls of the systems
        whose pairs are still unresolved, the most unresolved first, each with gain 0.

        The gains hold the variance components fixed; the posterior also learns them (how much
        of a system x item spread is call noise), which more calls at the levels already seen
        teach, so a batch is not cut short while an objective's pair can still end either way.
        """
        unit_loss = np.zeros(cand.n_units)
        for p, (a, b) in enumerate(self.pairs):
            unit_loss[a] += loss[p]
            if b >= 0:
                unit_loss[b] += loss[p]
        open_ = ~taken & (unit_loss[cand.unit] > FILL_LOSS)
        ks = np.flatnonzero(open_)
        rank = np.lexsort((counts[ks].sum(axis=1), calls[ks], -unit_loss[cand.unit[ks]]))
        more = ks[rank[: n - len(order)]].tolist()
        return order + more, picked + [0.0] * len(more)


_MIX = np.random.default_rng(20261202).integers(1, 2**62, size=64, dtype=np.int64) | 1


def _row_hash(rows: np.ndarray) -> np.ndarray:
    """One 64-bit key per row of small non-negative integers (wrapping products: distinct rows
    collide with probability about ``K^2 / 2^64``), so distinct rows are found by a 1-D sort.
    """
    r = rows.astype(np.int64)
    with np.errstate(over="ignore"):
        return (r * _MIX[: r.shape[1]]).sum(axis=1) ^ (r[:, 0] << 40)


def pool_codes(fit: Fit, pool: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each pool row's code per facet of the fit; a new level of a random facet gets a new code,
    one of a fixed facet (or of a role the fit saw with one level) is refused.
    """
    d = fit.design
    cols = d.columns
    missing = [cols.get(f, f) for f in d.facets if cols.get(f, f) not in pool.columns]
    if missing:
        raise DesignError(
            f"The pool has no column {missing} (the fit's roles: "
            f"{ {f: cols.get(f, f) for f in d.facets} }); give every candidate call its "
            f"{', '.join(missing)}."
        )
    fixed = {t.facets[0] for t in fit.terms if t.kind == "fixed" and len(t.facets) == 1}
    out = {}
    for f in d.facets:
        col = cols.get(f, f)
        values = pool[col]
        if values.isna().any():
            raise DesignError(
                f"Pool column {col!r} has {int(values.isna().sum())} missing values: every candidate "
                "call needs its level; fill or drop those rows."
            )
        labels = [str(lab) for lab in d.levels[f]]
        inverse, uniques = pd.factorize(values.astype(str), sort=False)  # each distinct text once
        uniques = np.asarray(uniques, dtype=object)
        seen = pd.Index(labels).get_indexer(uniques)
        new = sorted(uniques[seen < 0].tolist())
        if new and (f in fixed or f == d.system):
            raise DesignError(_new_fixed(fit, f, col, new))
        seen[seen < 0] = len(labels) + pd.Index(new).get_indexer(uniques[seen < 0])
        out[f] = seen[inverse].astype(np.int64)
    for f, lab in d.levels.items():  # roles seen with one level are not facets of the model
        col = cols.get(f)
        if f in d.facets or col is None or col not in pool.columns or f == "category":
            continue
        other = sorted(set(pool[col].astype(str)) - set(lab))
        if other:
            raise DesignError(
                f"Pool column {col!r} holds {other[:3]}, but the fit saw one {f} ({lab[0]!r}), so the "
                f"model has no {f} term to value them: score a few such calls and refit first."
            )
    return out


def _new_fixed(fit: Fit, facet: str, col: str, new: list[str]) -> str:
    head = f"Pool column {col!r} holds {len(new)} level(s) the fit has not seen ({new[:3]})"
    if facet == fit.design.system:
        return (
            f"{head}, but the systems are a fixed factor: a new system has no estimate to improve. "
            "Score a pilot of its calls and refit, or drop those rows."
        )
    if facet == "judge":
        return (
            f"{head}, but the judges are a fixed panel: a new judge's effect is unknown. Refit with "
            "judge_effect='random' to value new judges, or drop those rows."
        )
    return f"{head}, but {facet!r} is a fixed factor of the model: drop those rows or refit with them."


def _categories(fit: Fit, pool: pd.DataFrame, items: np.ndarray) -> np.ndarray:
    """Each pool call's item category: the fit's for its items, the pool's column for new items."""
    d = fit.design
    known = items < len(d.levels["item"])
    out = np.zeros(len(items), np.int64)
    out[known] = d.item_category[items[known]]
    if known.all():
        return out
    col = d.roles.category
    if col is None or col not in pool.columns:
        raise DesignError(
            f"The pool has new items and no category column {col!r}: the fit nests items in "
            "categories, so a new item needs its category."
        )
    code = {lab: i for i, lab in enumerate(d.categories)}
    text = pool[col].astype(str).to_numpy()[~known]
    unknown = sorted(set(text) - set(code))
    if unknown:
        raise DesignError(f"Pool column {col!r} holds categories the fit has not seen: {unknown[:3]}.")
    out[~known] = [code[c] for c in text]
    return out


def _chosen(pool, order, gains, costs, obj: Objective, loss: float, loss_after: float) -> pd.DataFrame:
    out = pool.iloc[order].copy()
    out["gain"] = np.asarray(gains, float)
    out["cost"] = costs[order] if len(order) else np.zeros(0)
    out.attrs.update(
        objective=obj.name, systems=obj.systems, over=obj.over, loss=loss, loss_after=loss_after,
        gain=("expected reduction of the summed probability that the objective's pairs end the wrong way"
              if obj.is_probability else "expected reduction of the interval's half-width (latent scale "
              "for a binomial or ordinal fit)"),
    )  # fmt: skip
    return out
