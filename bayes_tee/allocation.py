"""Judge allocation: which judge scores which generation (Zhu et al. 2026, CyclicJudge).

A benchmark scores ``n`` items (scenarios), each with generations (sampled responses) scored by
judges from a pool of ``K`` (``K_tot``). With a per-item budget of ``B`` judge calls the
classical choices are: every judge on every generation (``all``: ``B/K`` generations), one
random judge per generation (``random``: ``B`` generations, judge bias becomes noise), a fixed
panel or a single judge (judge bias never averages out), or the round-robin ``cyclic`` schedule
(``B`` generations, judges in turn, so their biases cancel exactly). With the Zhu et al. (2026) model
``X = mu + alpha_i + beta_ij + gamma_l + eps_ijl`` the variance of the benchmark mean is, per
strategy (Zhu et al. 2026 Eq. 2-5, Prop. 1 with the finite-population correction):

=========  ==================================================================================
all        ``s_a/n + (K s_b + s_e) / (n B)`` with ``B/K`` generations
random     ``s_a/n + (s_b + s_g + s_e) / (n B)``
cyclic     ``s_a/n + (s_b + s_e) / (n B)`` (+ ``r (K - r) s_g / ((n B)^2 (K - 1))`` when
           ``r = n B mod K`` judges get one extra call)
panel:k    ``s_a/n + s_b/(n m) + s_e/(n m k) + s_g/k * (K - k)/(K - 1)``, ``m = B // k``
single     ``panel:1``: ``s_a/n + (s_b + s_e)/(n B) + s_g``
=========  ==================================================================================

:func:`strategy_variances` evaluates these per posterior draw of a fitted decomposition, so the answer is
a posterior (how likely cyclic beats the others, and by how much). :func:`schedule` writes the
call plan; :func:`simulate` checks the formulas against repeated simulated evaluations.

>>> import bayes_tee as bt
>>> plan = bt.allocation.schedule(items=4, judges=["a", "b", "c"], generations=3, strategy="cyclic",
...                               random_seed=1)
>>> plan.groupby("item")["judge"].nunique().tolist()
[3, 3, 3, 3]
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._core.exceptions import DesignError, DesignWarning
from .families import get_family
from .plots import plot_allocation
from .posterior.facade import Posterior

__all__ = [
    "STRATEGIES",
    "AllocationComparison",
    "compare",
    "components_from",
    "schedule",
    "simulate",
    "strategy_variances",
]

STRATEGIES = ("all", "random", "cyclic", "single")
_SCHEDULES = ("all", "random", "cyclic")


# -- the call plan --------------------------------------------------------------------------
def _levels(x: int | Sequence, what: str) -> np.ndarray:
    if isinstance(x, (int, np.integer)):
        if x < 1:
            raise DesignError(f"{what} must be at least 1, got {x}.")
        return np.arange(int(x))
    arr = np.asarray(list(x), dtype=object)
    if len(arr) == 0:
        raise DesignError(f"{what} is empty.")
    if len(set(arr.tolist())) != len(arr):
        raise DesignError(f"{what} has repeated labels; each must be unique.")
    return arr


def _judge_plan(n: int, m: int, k: int, strategy: str, rng: np.random.Generator) -> np.ndarray:
    """Judge index per (item, generation, call-within-generation): shape (n, m, calls)."""
    if strategy == "all":
        return np.broadcast_to(np.arange(k), (n, m, k))
    if strategy == "random":
        return rng.integers(0, k, size=(n, m, 1))
    if strategy == "cyclic":
        # one round robin over all (item, generation) slots, item by item: every item sees
        # the judges in turn (exact per-item cancellation when m is a multiple of k) and the
        # benchmark-level judge counts differ by at most one; judge labels are permuted at
        # random so that no judge is tied to the first slots
        perm = rng.permutation(k)
        return perm[np.arange(n * m) % k].reshape(n, m, 1)
    raise DesignError(f"strategy must be one of {_SCHEDULES}, got {strategy!r}.")


def schedule(
    items: int | Sequence,
    judges: int | Sequence,
    generations: int,
    strategy: str = "cyclic",
    random_seed: int | None = None,
) -> pd.DataFrame:
    """The call plan: which judge scores which generation of which item.

    Parameters
    ----------
    items, judges : int or sequence
        Labels (or how many; labels are then 0..n-1).
    generations : int
        Generations (sampled responses) per item.
    strategy : {"cyclic", "all", "random"}
        ``all``: every judge scores every generation (``generations x K`` calls per item).
        ``random``: one uniformly drawn judge per generation. ``cyclic``: one judge per
        generation in round-robin order.
    random_seed : int, optional

    Returns
    -------
    DataFrame
        ``call`` (execution order), ``item``, ``generation``, ``judge``; rows in execution
        order, which is shuffled so that neither judge nor item order is confounded with time
        (API drift, rate limits). Items are cycled in a random order and judge labels are
        permuted at random.

    Notes
    -----
    Divisibility rule for ``cyclic``: judges cycle over the item x generation slots item by
    item. When ``generations`` is a multiple of K, each item sees every judge equally often
    (biases cancel within every item); otherwise each item's judge counts differ by at most
    one, and so do the benchmark-level counts. If ``items x generations`` is not a multiple
    of K, ``r`` judges get one extra call and the bias cancels only up to
    ``r (K - r) sigma_g^2 / ((n m)^2 (K - 1))`` of variance; a DesignWarning names the
    nearest budgets that cancel exactly.

    Examples
    --------
    >>> plan = schedule(6, ["j1", "j2", "j3"], generations=1, random_seed=0)
    >>> sorted(plan["judge"].value_counts().tolist())
    [2, 2, 2]
    """
    item_ids = _levels(items, "items")
    judge_ids = _levels(judges, "judges")
    if int(generations) != generations or generations < 1:
        raise DesignError(f"generations must be a positive integer, got {generations!r}.")
    m = int(generations)
    n, k = len(item_ids), len(judge_ids)
    rng = np.random.default_rng(random_seed)
    order = rng.permutation(n)  # items cycled in random order
    plan = _judge_plan(n, m, k, strategy, rng)
    calls = plan.shape[2]
    item_idx = np.broadcast_to(order[:, None, None], plan.shape)
    gen_idx = np.broadcast_to(np.arange(m)[None, :, None], plan.shape)
    df = pd.DataFrame(
        {
            "item": item_ids[item_idx.ravel()],
            "generation": gen_idx.ravel(),
            "judge": judge_ids[plan.ravel()],
        }
    )
    df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    df.insert(0, "call", np.arange(len(df)))
    if strategy == "cyclic" and (n * m) % k:
        r = (n * m) % k
        lo, hi = (n * m) // k * k, ((n * m) // k + 1) * k
        warnings.warn(
            f"{n} items x {generations} generations = {n * m} calls is not a multiple of {k} "
            f"judges: {r} judge(s) get one extra call, so their biases cancel only approximately. "
            f"{lo} or {hi} calls in total would cancel them exactly.",
            DesignWarning,
            stacklevel=2,
        )
    df.attrs.update(strategy=strategy, n_items=n, generations=m, n_judges=k, calls_per_generation=calls)
    return df


# -- variance of each strategy --------------------------------------------------------------
def _parse(strategy: str) -> tuple[str, int | None]:
    if strategy in ("all", "random", "cyclic"):
        return strategy, None
    if strategy == "single":
        return "panel", 1
    m = re.fullmatch(r"panel:(\d+)", strategy)
    if m:
        return "panel", int(m.group(1))
    raise DesignError(f"Unknown strategy {strategy!r}; use 'all', 'random', 'cyclic', 'single' or 'panel:k'.")


def strategy_variance(
    comp: dict[str, np.ndarray], strategy: str, budget: int, n_items: int, pool: int
) -> tuple[np.ndarray, int, int]:
    """Var of the benchmark mean under ``strategy`` (per draw), generations and calls used."""
    s_a, s_b, s_g, s_e = comp["scenario"], comp["generation"], comp["judge"], comp["residual"]
    n, k, b = n_items, pool, int(budget)
    kind, size = _parse(strategy)
    if kind == "all":
        size = k
    if kind in ("random", "cyclic"):
        m, calls = b, b
        v = s_a / n + (s_b + s_e) / (n * b)
        if kind == "random":
            v = v + s_g / (n * b)
        else:
            r = (n * b) % k
            v = v + (r * (k - r) / ((n * b) ** 2 * (k - 1)) if k > 1 else 0.0) * s_g
        return v, m, calls
    if size > k:
        raise DesignError(f"A panel of {size} judges is larger than the pool of {k}.")
    m = b // size
    if m < 1:
        raise DesignError(f"A budget of {b} calls per item cannot give {size} judges one generation each.")
    fpc = (k - size) / (k - 1) if k > 1 else 0.0
    v = s_a / n + s_b / (n * m) + s_e / (n * m * size) + s_g / size * fpc
    return v, m, m * size


def components_from(
    source: Any,
    *,
    scenario: Sequence[str] | str | None = None,
    generation: Sequence[str] | str | None = ("replicate",),
    judge: str = "judge",
    pool: int | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """Zhu et al. (2026) components (scenario, generation, judge, residual) per draw, and the pool size.

    From a :class:`~bayes_tee.Posterior` (outcome-scale LPM): items (and categories) are the
    scenarios, the ``generation`` terms (default: replicate noise, i.e. a replicate is a new
    generation) are the generations, the judge term is the judge bias, and every other
    per-observation component is folded into the residual (Zhu et al. 2026 App. F). The judge bias
    is the population variance of the pool's effects: for fixed judges the fitted sensitivity
    (divide by M), rescaled by ``M/(M-1) (K-1)/K`` when the pool ``K`` is larger than the M
    fitted judges; for random judges ``sigma_J^2 (K-1)/K``.

    From a mapping or DataFrame with keys ``scenario, generation, judge, residual`` (scalars
    or draws): used as given (``judge`` is the pool's population variance); ``pool`` required.
    """
    if isinstance(source, Posterior):
        if get_family(source.family).latent:
            raise DesignError(
                "Allocation needs outcome-scale components: fit the linear probability model "
                "(family='gaussian'), not the logit GLMM."
            )
        draws = source.component_draws().stack(sample=("chain", "draw")).transpose("sample", "component")
        labels = list(draws["component"].values)
        kinds = {t.label: t.kind for t in source.terms}
        if judge not in labels:
            raise DesignError(f"No {judge!r} component in this fit; components: {labels}.")
        scen = (
            [scenario]
            if isinstance(scenario, str)
            else list(scenario or [t for t in ("item", "category") if t in labels])
        )
        gen = [generation] if isinstance(generation, str) else list(generation or [])
        for t in scen + gen:
            if t not in labels:
                raise DesignError(f"No {t!r} component in this fit; components: {labels}.")
        if set(scen) & set(gen) or judge in scen + gen:
            raise DesignError("scenario, generation and judge terms must not overlap.")
        x = {lab: draws.sel(component=lab).to_numpy() for lab in labels}
        n_fit = len(source.design.levels["judge"])
        k = int(pool) if pool is not None else n_fit
        if k < 2:
            raise DesignError(f"The judge pool must hold at least 2 judges, got {k}.")
        if kinds[judge] == "fixed":
            s_g = x[judge] * n_fit / (n_fit - 1) * (k - 1) / k
        else:
            s_g = x[judge] * (k - 1) / k
        rest = [lab for lab in labels if lab not in scen + gen + [judge]]
        comp = {
            "scenario": sum((x[t] for t in scen), np.zeros_like(s_g)),
            "generation": sum((x[t] for t in gen), np.zeros_like(s_g)),
            "judge": s_g,
            "residual": sum((x[t] for t in rest), np.zeros_like(s_g)),
        }
        return comp, k
    if isinstance(source, pd.DataFrame):
        source = {c: source[c].to_numpy() for c in source.columns}
    if not isinstance(source, dict):
        raise DesignError(
            "Pass a Posterior, or a mapping/DataFrame of scenario, generation, judge, residual."
        )
    missing = [c for c in ("scenario", "generation", "judge", "residual") if c not in source]
    if missing:
        raise DesignError(f"Components missing: {missing}; need scenario, generation, judge, residual.")
    if pool is None:
        raise DesignError("Give pool= (the number of judges available) with explicit components.")
    arrays = np.broadcast_arrays(
        *(
            np.atleast_1d(np.asarray(source[c], float))
            for c in ("scenario", "generation", "judge", "residual")
        )
    )
    return dict(zip(("scenario", "generation", "judge", "residual"), arrays)), int(pool)


class AllocationComparison:
    """Variance of the benchmark mean under each strategy, per posterior draw."""

    def __init__(self, draws: dict, meta: pd.DataFrame, n_items: int, pool: int, level: float) -> None:
        self._draws = draws  # (budget, strategy) -> variance draws
        self.meta = meta
        self.n_items = n_items
        self.pool = pool
        self.level = level

    def table(self) -> pd.DataFrame:
        """Per budget and strategy: generations, calls used, Var(mean) median and interval,
        SE median, and the variance relative to cyclic (median of the per-draw ratio).
        """
        q = [(1 - self.level) / 2, 0.5, (1 + self.level) / 2]
        rows = []
        for (budget, strategy), v in self._draws.items():
            lo, med, hi = np.quantile(v, q)
            ratio = (
                np.median(v / self._draws[(budget, "cyclic")])
                if (budget, "cyclic") in self._draws
                else np.nan
            )
            meta = self.meta.loc[(budget, strategy)]
            rows.append(
                dict(
                    budget_per_item=budget,
                    strategy=strategy,
                    generations=meta["generations"],
                    calls_per_item=meta["calls"],
                    variance=med,
                    variance_low=lo,
                    variance_high=hi,
                    se=np.sqrt(med),
                    ratio_to_cyclic=ratio,
                )
            )
        return pd.DataFrame(rows)

    def probabilities(self) -> pd.DataFrame:
        """Per budget and pair of strategies: P(first has lower variance) and the median
        relative reduction ``1 - V_first / V_second``.

        >>> cmp.probabilities().query("better == 'cyclic'")  # doctest: +SKIP
        """
        rows = []
        budgets = sorted({b for b, _ in self._draws})
        names = list(dict.fromkeys(s for _, s in self._draws))
        for b in budgets:
            for s1 in names:
                for s2 in names:
                    if s1 == s2:
                        continue
                    v1, v2 = self._draws[(b, s1)], self._draws[(b, s2)]
                    rows.append(
                        dict(
                            budget_per_item=b,
                            better=s1,
                            than=s2,
                            probability=float(np.mean(v1 < v2)),
                            reduction=float(np.median(1 - v1 / v2)),
                        )
                    )
        return pd.DataFrame(rows)

    def plot(self, ax=None, **kwargs):
        """Var(mean) against the budget per item, one band per strategy (Zhu et al. 2026 Fig. 2)."""
        return plot_allocation(
            self.table(), n_items=self.n_items, pool=self.pool, level=self.level, ax=ax, **kwargs
        )

    def __repr__(self) -> str:
        return f"AllocationComparison(n_items={self.n_items}, pool={self.pool}, {len(self._draws)} cells)"


def strategy_variances(
    source: Any,
    *,
    budget_per_item: int | Sequence[int],
    n_items: int,
    pool: int | None = None,
    strategies: Sequence[str] = ("all", "random", "cyclic", "single"),
    scenario: Sequence[str] | str | None = None,
    generation: Sequence[str] | str | None = ("replicate",),
    judge: str = "judge",
    include_scenario: bool = True,
    level: float = 0.9,
) -> AllocationComparison:
    """Compare judge-allocation strategies per posterior draw (Zhu et al. 2026 Eq. 2-5).

    Parameters
    ----------
    source : Posterior or mapping
        A fitted LPM, or components (see :func:`components_from`).
    budget_per_item : int or sequence of int
        Judge calls per item. ``all`` uses ``B // K`` generations (the remainder is unused),
        ``panel:k`` uses ``B // k``; ``random`` and ``cyclic`` use all ``B``.
    n_items : int
        Items in the benchmark.
    pool : int, optional
        Judges available (``K_tot``); default: the fitted judges.
    strategies : sequence of str
        Any of ``all``, ``random``, ``cyclic``, ``single``, ``panel:k``.
    scenario, generation, judge : component names when ``source`` is a Posterior.
    include_scenario : bool
        Keep the item term ``s_a / n`` (the variance of the benchmark mean over item sets).
        ``False`` treats the items as fixed, as Zhu et al. (2026) Sec. 4.4 does; the differences
        between strategies are the same either way, their ratios are not.
    level : float
        Credible level of the intervals.

    Examples
    --------
    >>> cmp = strategy_variances({"scenario": 1.5, "generation": 0.27, "judge": 0.95, "residual": 1.49},
    ...               budget_per_item=5, n_items=80, pool=5)
    >>> t = cmp.table().set_index("strategy")
    >>> bool(t.loc["cyclic", "variance"] < min(t.loc["all", "variance"], t.loc["random", "variance"]))
    True
    """
    comp, k = components_from(source, scenario=scenario, generation=generation, judge=judge, pool=pool)
    if not include_scenario:
        comp = {**comp, "scenario": np.zeros_like(comp["scenario"])}
    budgets = [int(budget_per_item)] if np.isscalar(budget_per_item) else [int(b) for b in budget_per_item]
    if any(b < 1 for b in budgets) or n_items < 1:
        raise DesignError("budget_per_item and n_items must be positive.")
    draws, meta = {}, []
    for b in budgets:
        for s in strategies:
            try:
                v, m, calls = strategy_variance(comp, s, b, n_items, k)
            except DesignError:
                if s == "all" and b < k:
                    continue  # fewer calls than judges: all-judges is not possible at this budget
                raise
            draws[(b, s)] = np.asarray(v, float)
            meta.append(dict(budget=b, strategy=s, generations=m, calls=calls))
    meta_df = pd.DataFrame(meta).set_index(["budget", "strategy"])
    return AllocationComparison(draws, meta_df, n_items, k, level)


# -- simulation check -----------------------------------------------------------------------
def pool_biases(pool: int, variance: float) -> np.ndarray:
    """``pool`` centred judge biases with population variance exactly ``variance``."""
    g = np.linspace(-1, 1, pool) if pool > 1 else np.zeros(1)
    sd = g.std()
    return g * (np.sqrt(variance) / sd) if sd > 0 else g


def simulate(
    components: dict[str, float],
    *,
    budget_per_item: int,
    n_items: int,
    pool: int,
    strategies: Sequence[str] = ("all", "random", "cyclic", "single"),
    n_sims: int = 2000,
    random_seed: int | None = None,
) -> pd.DataFrame:
    """Empirical variance of the benchmark mean over repeated simulated evaluations, with the
    formula beside it (the check of Zhu et al. (2026) Fig. 2).

    Each evaluation draws new items, generations and residuals from the Zhu et al. (2026) model with a
    fixed pool of judge biases (population variance ``components['judge']``), plans its calls
    with the planner behind :func:`schedule` (new seed each time; a fixed panel draws its
    judges from the pool anew), and averages the scores.

    Returns
    -------
    DataFrame
        ``strategy, formula, empirical, ratio, mc_se`` (relative Monte Carlo SE of the
        empirical variance, ``sqrt(2 / (n_sims - 1))`` under normality).

    Examples
    --------
    >>> t = simulate({"scenario": 1.0, "generation": 0.3, "judge": 0.9, "residual": 1.0},
    ...              budget_per_item=5, n_items=20, pool=5, n_sims=400, random_seed=1)
    >>> bool((abs(t["ratio"] - 1) < 5 * t["mc_se"]).all())
    True
    """
    rng = np.random.default_rng(random_seed)
    comp = {
        key: np.atleast_1d(float(components[key])) for key in ("scenario", "generation", "judge", "residual")
    }
    gamma = pool_biases(pool, float(components["judge"]))
    sd = {key: np.sqrt(float(components[key])) for key in ("scenario", "generation", "residual")}
    rows = []
    for s in strategies:
        formula, m, calls = strategy_variance(comp, s, budget_per_item, n_items, pool)
        kind, size = _parse(s)
        means = np.empty(n_sims)
        for r in range(n_sims):
            seed = int(rng.integers(2**63))
            if kind == "panel":
                chosen = np.random.default_rng(seed).choice(pool, size=size, replace=False)
                plan = np.broadcast_to(chosen, (n_items, m, size))
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DesignWarning)
                    plan = _judge_plan(n_items, m, pool, kind, np.random.default_rng(seed))
            alpha = rng.normal(0, sd["scenario"], n_items)[:, None, None]
            beta = rng.normal(0, sd["generation"], (n_items, m))[:, :, None]
            eps = rng.normal(0, sd["residual"], plan.shape)
            means[r] = (alpha + beta + gamma[plan] + eps).mean()
        emp = means.var(ddof=1)
        rows.append(
            dict(
                strategy=s,
                generations=m,
                calls_per_item=calls,
                formula=float(formula[0]),
                empirical=emp,
                ratio=emp / float(formula[0]),
                mc_se=np.sqrt(2 / (n_sims - 1)),
            )
        )
    return pd.DataFrame(rows)


def compare(*args, **kwargs) -> AllocationComparison:
    """The old name of :func:`strategy_variances` (``compare`` means two systems of one fit now),
    with a :class:`DeprecationWarning`; removed in 0.4.
    """
    warnings.warn(
        "bt.allocation.compare is now bt.allocation.strategy_variances (the old name is removed in 0.4).",
        DeprecationWarning,
        stacklevel=2,
    )
    return strategy_variances(*args, **kwargs)
