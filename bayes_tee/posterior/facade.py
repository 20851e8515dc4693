"""The :class:`Posterior` of a TEE fit: a facade over the topic modules.

A Posterior holds the draws (an ArviZ ``DataTree``), the validated design, the priors and how
the fit was made. Each method is a thin call into the module that does the work
(:mod:`~bayes_tee.posterior.components`, :mod:`~bayes_tee.posterior.theta`,
:mod:`~bayes_tee.posterior.shares`, :mod:`~bayes_tee.posterior.simulate`, :mod:`~bayes_tee.posterior.dstudy`,
:mod:`~bayes_tee.posterior.budget`, :mod:`~bayes_tee.posterior.gaming`,
:mod:`~bayes_tee.posterior.power_scaling`, :mod:`~bayes_tee.posterior.link_comparison`,
:mod:`~bayes_tee.posterior.reports.single`, :mod:`~bayes_tee.plots`), and every table it returns
carries the fit's diagnostics verdict. Saving writes netCDF (:mod:`~bayes_tee.posterior.netcdf`);
:func:`load` reads it back.

>>> import bayes_tee as bt
>>> post = bt.fit_posterior(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                         prompt="prompt", judge="judge", random_seed=1)  # doctest: +SKIP
>>> post.save("models/tee_demo.nc"); post2 = bt.load("models/tee_demo.nc")  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import xarray as xr

from .. import plots
from .._core import diagnostics as diag
from .._core.exceptions import ArgumentError, DesignError
from .._core.priors import PriorSpec
from ..design.design import Design
from ..gstudy import weights as gw
from ..gstudy.divisors import Estimand
from . import coefficients as coefs
from . import components as comp
from . import dstudy, effects, gaming, netcdf, ordinal, reliability, reports, shares, simulate, theta
from . import leaderboard as board
from . import link_comparison as links
from . import power_scaling as psens
from . import separation as sep
from .budget import Plan
from .budget import allocate as allocate_budget
from .decision import decision as decide
from .fit import Fit, describe
from .next_calls import next_calls as choose_calls

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Categories = Literal["fixed", "random"]


class Posterior(Fit):
    """Posterior of the TEE model: the object users hold.

    A :class:`~bayes_tee.posterior.fit.Fit` (draws, design, priors, how it was made) with one
    method per question; each hands the fit to the function that answers it and stamps the table
    with the fit's diagnostics verdict. A fit that compares systems (``system=``) is a
    :class:`SystemsPosterior`, chosen by :func:`posterior_for` at fit and at :func:`load`. Its
    parameters are :class:`~bayes_tee.posterior.fit.Fit`'s (``idata, design, priors, method, info``).
    """

    # -- what was fitted ---------------------------------------------------------------------
    def _fixed_residual(self, t) -> bool:  # the old private name of Fit.is_fixed_residual
        return self.is_fixed_residual(t)

    # -- components, shares, theta -----------------------------------------------------------
    def components(self, level: float = 0.9) -> pd.DataFrame:
        """Variance components and their shares of the per-call variance, with intervals."""
        return self._stamp(comp.components_table(self.component_draws(), level))

    def design_counts(
        self, n_items=None, n_prompts=None, n_judges=None, n_temperatures=None, n_replicates=None,
        n_categories=None, n_positions=None,
    ) -> dict[str, float]:  # fmt: skip
        """Observed level counts, any of them replaced (:func:`~bayes_tee.gstudy.weights.counts_with`)."""
        return gw.counts_with(self.design, **_arguments(locals()))

    def shares(
        self,
        n_items=None,
        n_prompts=None,
        n_judges=None,
        n_temperatures=None,
        n_replicates=None,
        *,
        n_categories=None,
        n_positions=None,
        estimand: Estimand = "domain",
        categories: Categories = "fixed",
        level: float = 0.9,
        scale: Literal["model", "probability"] = "model",
        n_draws: int = 200,
        sims_per_draw: int = 100,
        random_seed: int | None = None,
    ) -> pd.DataFrame:
        """Each component's contribution to Var(theta_hat) at a design, and its share.

        ``n_*`` are design counts (``None`` keeps the observed one); ``estimand="finite"`` drops
        the item terms; ``scale="probability"`` gives the GLMM's shares of the variance of the
        mean success rate by simulation. Every parameter: :func:`bayes_tee.posterior.shares.shares`.

        Returns ``component, divisor, contribution_median/low/high, share_median/low/high``;
        ``attrs["var_theta"]``, ``attrs["scale"]``.

        >>> post.shares(n_items=200)  # doctest: +SKIP
        """
        return self._stamp(shares.shares(self, **_arguments(locals())))

    def theta(
        self, level: float = 0.95, *, n_draws: int = 400, sims_per_draw: int = 50, random_seed: int | None = 0
    ) -> pd.DataFrame:
        """The grand mean with its panel, TEE and naive intervals side by side.

        ``panel``: this exact judge/temperature panel. ``tee`` adds their sensitivity: what
        another equally good pipeline would have reported (Messing 2026 Sec. 3.3). ``naive``:
        ``s / sqrt(n)`` over the rows. The GLMM answers on the probability scale by simulation
        (``n_draws`` x ``sims_per_draw``); details: :func:`bayes_tee.posterior.theta.theta`.

        >>> post.theta()  # doctest: +SKIP
        """
        return self._stamp(theta.theta(self, **_arguments(locals())))

    # -- D-study -------------------------------------------------------------------------------
    def variance_at(
        self,
        designs: pd.DataFrame,
        *,
        estimand: Estimand = "domain",
        decision: gw.Decision = "absolute",
        categories: Categories = "fixed",
        judges: gw.JudgeMode = "new",
    ) -> np.ndarray:
        """Var(theta_hat) per draw at each design row (:func:`bayes_tee.posterior.dstudy.variance_at`)."""
        return dstudy.variance_at(self, **_arguments(locals()))

    def observed_variance(self, **kwargs) -> np.ndarray:
        """Var(theta_hat) per posterior draw at the observed design (``variance_at`` keywords)."""
        return dstudy.observed_variance(self, **kwargs)

    def dstudy(
        self,
        n_items=None,
        n_prompts=None,
        n_judges=None,
        n_temperatures=None,
        n_replicates=None,
        *,
        n_categories=None,
        n_positions=None,
        estimand: Estimand = "domain",
        decision: gw.Decision = "absolute",
        categories: Categories = "fixed",
        judges: gw.JudgeMode = "new",
        target_se: float | None = None,
        level: float = 0.9,
        n: dict | None = None,
        object: str | None = None,
        gap: float | None = None,
        over: str = "new",
    ) -> pd.DataFrame:
        """Projected SE for every combination of the given design counts (``n_*`` or ``n={facet:
        counts}``): of theta_hat (:func:`bayes_tee.posterior.dstudy.dstudy`), or, on a fit that
        compares systems (``object="system"``, its default there), of the difference between two
        systems, with ``p_resolved`` for a ``gap`` (:func:`bayes_tee.posterior.separation.separation`).

        >>> post.dstudy(n_items=[50, 100, 200], n_prompts=[1, 3, 5])  # doctest: +SKIP
        """
        args = _arguments(locals())
        if sep.asks_for_systems(*(args.pop(k) for k in ("object", "gap", "over"))):
            board.require_systems(self)
        return self._stamp(dstudy.dstudy(self, **args))

    # -- comparing systems: a SystemsPosterior's; this fit compares none ------------------------
    def leaderboard(self, level: float = 0.9, *, over: str = "new", higher_is_better: bool = True,
                    cost=None, cost_column: str | None = None, control: dict | None = None):  # fmt: skip
        """One row per system, best first: a fit with ``system=`` (:class:`SystemsPosterior`)."""
        return board.require_systems(self)

    def tie_groups(self, level: float = 0.9, *, over: str = "new", higher_is_better: bool = True,
                   control: dict | None = None):  # fmt: skip
        """The systems no interval separates, per letter: a fit with ``system=``."""
        return board.require_systems(self)

    def pairs(self, level: float = 0.9, *, over: str = "new", systems: list | None = None,
              control: dict | None = None):  # fmt: skip
        """Every pair's difference and intervals: a fit with ``system=`` (:class:`SystemsPosterior`)."""
        return board.require_systems(self)

    def compare(self, a: Posterior | str, b: str | None = None, **kwargs):
        """Two systems, ``post.compare("A", "B")``: a fit with ``system=`` (:class:`SystemsPosterior`).
        ``post_lpm.compare(post_glmm)`` is the deprecated name of :meth:`link_comparison`.
        """
        if isinstance(a, Fit):
            return self._deprecated_link_comparison(a, **kwargs)
        return board.require_systems(self)

    def plot_leaderboard(self, **kwargs) -> Figure:
        """Forest plot of :meth:`leaderboard`: a fit with ``system=``."""
        return board.require_systems(self)

    def plot_pairs(self, over: str = "new") -> Figure:
        """Heat map of P(row system scores higher than column system): a fit with ``system=``."""
        return board.require_systems(self)

    def plot_ranks(self, over: str = "new") -> Figure:
        """Each system's rank distribution: a fit with ``system=``."""
        return board.require_systems(self)

    def reliability(self, object: str = "item", n: dict | None = None, level: float = 0.9) -> pd.DataFrame:
        """E rho^2 and Phi of the object of measurement at the observed design or at every
        combination of the counts in ``n`` (:mod:`bayes_tee.posterior.reliability`).

        >>> post.reliability(n={"judge": [1, 3, 5], "prompt": [1, 3]})  # doctest: +SKIP
        """
        return self._stamp(reliability.reliability(self, object=object, n=n, level=level))

    def cutpoints(self, level: float = 0.9) -> pd.DataFrame:
        """Each judge's (or the panel's) latent cutpoints (:mod:`bayes_tee.posterior.ordinal`)."""
        return self._stamp(ordinal.cutpoints(self, level=level))

    def category_probabilities(self, eta: float | None = None) -> pd.DataFrame:
        """Each set's probability of every score at latent ``eta`` (default the grand mean)."""
        return self._stamp(ordinal.category_probabilities(self, eta=eta))

    def judge_spreads(self, level: float = 0.9) -> pd.DataFrame:
        """Each judge's latent spread (:func:`bayes_tee.posterior.ordinal.judge_spreads`)."""
        return self._stamp(ordinal.judge_spreads(self, level=level))

    def level_effects(self, facet: str = "item", level: float = 0.9) -> pd.DataFrame:
        """Each level's effect and rank (:func:`bayes_tee.posterior.effects.level_effects`)."""
        return self._stamp(effects.level_effects(self, facet=facet, level=level))

    def coefficients(self, level: float = 0.9) -> pd.DataFrame:
        """Every covariate's slope (per level, and each random slope's SD) with intervals, per
        unit of the column (:func:`bayes_tee.posterior.coefficients.coefficients`).
        """
        return self._stamp(coefs.coefficients(self, level=level))

    def covariate_variance(self, level: float = 0.9) -> pd.DataFrame:
        """The per-call variance each slope term explains, beside the components
        (:func:`bayes_tee.posterior.coefficients.covariate_variance`).
        """
        return self._stamp(coefs.covariate_variance(self, level=level))

    def simulate_design(
        self,
        n_items=None,
        n_prompts=None,
        n_judges=None,
        n_temperatures=None,
        n_replicates=None,
        *,
        n_categories=None,
        strategy: Literal["crossed", "cyclic", "random"] = "crossed",
        cells: pd.DataFrame | Literal["observed"] | None = None,
        judges: gw.JudgeMode = "new",
        estimand: Estimand = "domain",
        categories: Categories = "fixed",
        n_draws: int = 200,
        sims_per_draw: int = 200,
        level: float = 0.9,
        random_seed: int | None = None,
    ) -> pd.DataFrame:
        """Posterior-predictive simulation of proposed designs, under a judge ``strategy`` or
        for a table of ``cells`` (:func:`bayes_tee.posterior.simulate.simulate_design`).

        >>> post.simulate_design(n_items=100, n_judges=3, strategy="cyclic")  # doctest: +SKIP
        """
        return self._stamp(simulate.simulate_design(self, **_arguments(locals())))

    def interventions(
        self,
        *,
        estimand: Estimand = "domain",
        decision: gw.Decision = "absolute",
        level: float = 0.9,
    ) -> pd.DataFrame:
        """Percent change in Var(theta_hat) for single design changes (Messing 2026 Fig. 13-14;
        :func:`bayes_tee.posterior.dstudy.interventions`).
        """
        return self._stamp(dstudy.interventions(self, **_arguments(locals())))

    def allocate(self, budget: float, **kwargs) -> Plan:
        """Best design under a budget and the cost-efficiency frontier
        (:func:`bayes_tee.posterior.budget.allocate`).

        >>> plan = post.allocate(budget=5000, max_items=200)  # doctest: +SKIP
        """
        plan = allocate_budget(self, budget, **kwargs)
        self._stamp(plan.candidates)  # the diagnostics warning travels with the plan
        return plan

    # -- while the evaluation runs: what to score next, and whether to stop ----------------------
    def next_calls(self, pool: pd.DataFrame, n: int, objective: str = "best", **kwargs) -> pd.DataFrame:
        """The ``n`` rows of ``pool`` (candidate calls) worth scoring next for ``objective``, with
        their ``gain`` (:func:`bayes_tee.posterior.next_calls.next_calls`).

        >>> post.next_calls(pool, 200, objective="best")  # doctest: +SKIP
        """
        return self._stamp(choose_calls(self, pool, n, objective, **kwargs))

    def decision(self, objective: str = "best", **kwargs) -> pd.Series:
        """The objective's metric now and whether ``target=`` is met
        (:func:`bayes_tee.posterior.decision.decision`).

        >>> post.decision("best", target=0.95)["met"]  # doctest: +SKIP
        """
        return self._stamp(decide(self, objective, **kwargs))

    def gaming_surface(self, k: int = 27, design=None, **kwargs) -> pd.DataFrame:
        """Expected best-of-``k`` inflation at designs, in score units and Elo (Messing 2026 Sec. 4.4;
        :func:`bayes_tee.posterior.gaming.gaming_surface`).

        >>> post.gaming_surface(k=27, design=[{"n_prompts": 1, "n_judges": 1}])  # doctest: +SKIP
        """
        return self._stamp(gaming.gaming_surface(self, k, design, **kwargs))

    # -- checks of the fit ---------------------------------------------------------------------
    def sensitivity(self, **kwargs) -> pd.DataFrame:
        """Power-scaling prior and likelihood sensitivity per component
        (:func:`bayes_tee.posterior.power_scaling.power_scaling`; ArviZ ``psense``).

        >>> post.sensitivity()  # doctest: +SKIP
        """
        return psens.power_scaling(self, **kwargs)

    def link_comparison(self, other: Posterior, **kwargs):
        """The LPM (this fit) against ``other``, a logit GLMM of the same data: their shares side by
        side (:func:`bayes_tee.posterior.link_comparison.link_comparison`).

        >>> post_lpm.link_comparison(post_glmm).table  # doctest: +SKIP
        """
        return links.link_comparison(self, other, **kwargs)

    def _deprecated_link_comparison(self, other: Posterior, **kwargs):
        warnings.warn(
            "post.compare(other_fit) is now post.link_comparison(other_fit); compare() compares two "
            "systems of one fit (the old spelling is removed in 0.4).",
            DeprecationWarning,
            stacklevel=3,
        )
        return self.link_comparison(other, **kwargs)

    # -- text, report, figures -----------------------------------------------------------------
    def summary(self) -> str:
        """Plain-text summary: design, components, shares, theta and diagnostics
        (:func:`bayes_tee.posterior.reports.single.summary`; a failed fit ends with a ``WARNING:`` line).
        """
        return reports.single.summary(self)

    def writeup(self, **kwargs) -> str:
        """The paragraph for the paper (:func:`bayes_tee.posterior.reports.single.writeup`).

        >>> print(post.writeup())  # doctest: +SKIP
        """
        return reports.single.writeup(self, **kwargs)

    def report(self, path: str | Path, **kwargs) -> Path:
        """Write the self-contained HTML report (:func:`bayes_tee.posterior.reports.single.report`).

        >>> post.report("report.html", budget=5000)  # doctest: +SKIP
        """
        return reports.single.report(self, path, **kwargs)

    def plot_shares(self, kind: Literal["vartheta", "observation"] = "vartheta", **kwargs) -> Figure:
        """Horizontal bars: posterior median share and 90% interval per component, of
        Var(theta_hat) at the design (``**kwargs`` go to :meth:`shares`) or of the per-call
        variance (:func:`bayes_tee.posterior.shares.shares_figure`).
        """
        with diag.quiet():  # the figure prints a failed fit's warning itself
            table = self.shares(**kwargs) if kind == "vartheta" else self.components()
        return shares.shares_figure(self, table, kind, **kwargs)

    def plot_dstudy(self, table: pd.DataFrame | None = None, **kwargs) -> Figure:
        """SE against items for each prompt/judge count, median line with the interval band
        (``table`` from :meth:`dstudy`; default :func:`bayes_tee.posterior.dstudy.default_grid`).
        """
        return plots.plot_dstudy(dstudy.default_grid(self) if table is None else table, **kwargs)

    def plot_interventions(self, table: pd.DataFrame | None = None, **kwargs) -> Figure:
        """Horizontal bars of the percent change in Var(theta_hat) per intervention."""
        return plots.plot_interventions(self.interventions() if table is None else table, **kwargs)

    def __repr__(self) -> str:
        return describe(self)

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: str | Path, *, keep_effects: bool = False) -> Path:
        """Write the posterior to netCDF (:func:`bayes_tee.posterior.netcdf.save`): the SDs, grand mean,
        fixed effects, sampler statistics and per-cell statistics; effects with ``keep_effects``.
        """
        return netcdf.save(self, path, keep_effects=keep_effects)


class SystemsPosterior(Posterior):
    """Posterior of a fit that compares systems (``system=``): the questions of several systems.

    Its leaderboard, pairs, ranks and ``compare`` answer from one joint fit
    (:mod:`bayes_tee.posterior.leaderboard`); ``shares``, ``dstudy``, ``interventions`` and
    ``allocate`` are those of a difference between two systems
    (:mod:`bayes_tee.posterior.separation`); the summary, write-up and report are built around the
    leaderboard (:mod:`bayes_tee.posterior.reports.systems`). One benchmark score (``theta``) and
    the single-system simulations are refused with what to ask instead.
    """

    def leaderboard(self, level: float = 0.9, *, over: str = "new", higher_is_better: bool = True,
                    cost=None, cost_column: str | None = None, control: dict | None = None):  # fmt: skip
        """One row per system, best first, with its tie group and (``cost``: per system, or a
        table of calls and their cost) ``p_pareto``; ``control={"length": 0}`` sets covariates to
        reference values (:func:`bayes_tee.posterior.leaderboard.leaderboard`).

        >>> post.leaderboard(cost={"A": 0.12, "B": 0.03, "C": 0.5})  # doctest: +SKIP
        """
        return self._stamp(board.leaderboard(self, **_arguments(locals())))

    def tie_groups(self, level: float = 0.9, *, over: str = "new", higher_is_better: bool = True,
                   control: dict | None = None):  # fmt: skip
        """For each letter of the leaderboard's ``group`` column, the systems holding it, best first
        (:func:`bayes_tee.posterior.leaderboard.tie_groups`): systems in a group together are not
        separated by the simultaneous interval of their difference.

        >>> post.tie_groups()  # doctest: +SKIP
        [['A', 'B'], ['B', 'C']]
        """
        return self._stamp(board.leaderboard(self, **_arguments(locals()))).attrs["groups"]

    def pairs(self, level: float = 0.9, *, over: str = "new", systems: list | None = None,
              control: dict | None = None):  # fmt: skip
        """Every pair's difference and intervals (:func:`bayes_tee.posterior.leaderboard.pairs`)."""
        return self._stamp(board.pairs(self, **_arguments(locals())))

    def compare(self, a: Posterior | str, b: str | None = None, **kwargs):
        """Two systems, ``post.compare("A", "B")``: ``A - B`` with its interval and P(A scores
        higher) (:func:`bayes_tee.posterior.leaderboard.compare`).
        """
        if isinstance(a, Fit):
            return self._deprecated_link_comparison(a, **kwargs)
        row = board.compare(self, a, b, **kwargs)
        self._stamp(pd.DataFrame([row]))
        return row

    def shares(self, n_items=None, n_prompts=None, n_judges=None, n_temperatures=None, n_replicates=None,
               *, n_categories=None, n_positions=None, estimand: Estimand = "domain", level: float = 0.9,
               scale: str = "model", **kwargs) -> pd.DataFrame:  # fmt: skip
        """Each component's share of the variance of a difference between two systems at a design
        (:func:`bayes_tee.posterior.separation.difference_shares`).
        """
        if scale not in ("model", "probability"):
            raise ArgumentError(f"scale must be 'model' or 'probability', got {scale!r}.")
        if estimand != "domain" or scale != "model":
            raise ArgumentError(shares.ON_SYSTEMS)
        n = {k: v for k, v in _arguments(locals()).items() if k.startswith("n_")}
        return self._stamp(sep.difference_shares(self, n, level=level))

    def theta(self, level: float = 0.95, **kwargs) -> pd.DataFrame:
        """Refused: a comparison scores each system (:meth:`leaderboard`), not one benchmark."""
        raise DesignError(theta.ON_SYSTEMS)

    def dstudy(self, n_items=None, n_prompts=None, n_judges=None, n_temperatures=None, n_replicates=None,
               *, n_categories=None, n_positions=None, object: str | None = None, gap: float | None = None,
               over: str = "new", **kwargs) -> pd.DataFrame:  # fmt: skip
        """The relative D-study: the SE of the difference between two systems at every combination
        of the counts, with ``p_resolved`` for a ``gap`` (:func:`bayes_tee.posterior.separation.separation`).

        >>> post.dstudy(n_items=[100, 200], gap=0.05)  # doctest: +SKIP
        """
        sep.asks_for_systems(object, gap, over)
        args = {k: v for k, v in _arguments(locals()).items() if k != "kwargs"} | kwargs
        return self._stamp(sep.separation(self, **args))

    def interventions(self, *, estimand: Estimand = "domain", decision: str = "absolute", level: float = 0.9):
        """Percent change in the variance of a difference for single design changes
        (:func:`bayes_tee.posterior.separation.difference_interventions`).
        """
        return self._stamp(sep.difference_interventions(self, **_arguments(locals())))

    def simulate_design(self, *args, **kwargs) -> pd.DataFrame:
        """Refused: the relative D-study (:meth:`dstudy`) projects a comparison in closed form."""
        raise DesignError(simulate.ON_SYSTEMS)

    def gaming_surface(self, *args, **kwargs) -> pd.DataFrame:
        """Refused: the best-of-k inflation is one system's (fit it on its own)."""
        raise DesignError(gaming.ON_SYSTEMS)

    def summary(self) -> str:
        """Plain-text summary around the leaderboard (:func:`bayes_tee.posterior.reports.systems.summary`)."""
        return reports.systems.summary(self)

    def writeup(self, **kwargs) -> str:
        """The paragraph for the paper (:func:`bayes_tee.posterior.reports.systems.writeup`)."""
        return reports.systems.writeup(self, **kwargs)

    def report(self, path: str | Path, **kwargs) -> Path:
        """Write the comparison's HTML report (:func:`bayes_tee.posterior.reports.systems.report`)."""
        return reports.systems.report(self, path, **kwargs)

    def plot_leaderboard(self, *, cost=None, **kwargs) -> Figure:
        """Forest plot of :meth:`leaderboard` (panel and new intervals, P(best), tie groups); with
        ``cost``, the score against the cost with the front marked
        (:func:`bayes_tee.plots.systems.plot_cost_front`).
        """
        table = self.leaderboard(cost=cost, **kwargs)
        return plots.plot_leaderboard(table) if cost is None else plots.plot_cost_front(table)

    def plot_pairs(self, over: str = "new") -> Figure:
        """Heat map of P(row system scores higher than column system)."""
        return plots.plot_p_better(self._stamp(board.p_better_matrix(self, over=over)))

    def plot_ranks(self, over: str = "new") -> Figure:
        """Each system's rank distribution (:func:`bayes_tee.posterior.leaderboard.rank_probabilities`)."""
        return plots.plot_ranks(self._stamp(board.rank_probabilities(self, over=over)))


def posterior_for(
    idata: xr.DataTree, design: Design, priors: PriorSpec, method: str, info: dict | None = None
) -> Posterior:
    """The posterior users hold for a fit: a :class:`SystemsPosterior` when the design compares
    systems, else a :class:`Posterior` (used at fit and at :func:`load`).

    >>> post = posterior_for(idata, design, priors, "balanced")  # doctest: +SKIP
    """
    kind = SystemsPosterior if design.system is not None else Posterior
    return kind(idata, design, priors, method, info)


def _arguments(names: dict) -> dict:
    """A facade method's arguments (its ``locals()`` on entry) as keywords, ``self`` dropped."""
    return {k: v for k, v in names.items() if k != "self"}


def load(path: str | Path) -> Posterior:
    """Load a posterior written by :meth:`Posterior.save`.

    Raises
    ------
    ValueError
        When the file is not a bayes_tee posterior or is in a format this version does not read.

    Examples
    --------
    >>> post = load("models/tee_demo.nc")  # doctest: +SKIP
    """
    idata, meta, cells = netcdf.read(path)
    design = Design.from_dict(meta["design"], cells)
    return posterior_for(idata, design, PriorSpec.from_dict(meta["priors"]), meta["method"], meta.get("info"))
