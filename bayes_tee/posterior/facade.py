"""The :class:`Posterior` of a TEE fit: a facade over the topic modules.

A Posterior holds the draws (an ArviZ ``DataTree``), the validated design, the priors and how
the fit was made. Each method is a thin call into the module that does the work
(:mod:`~bayes_tee.posterior.components`, :mod:`~bayes_tee.posterior.theta`,
:mod:`~bayes_tee.posterior.shares`, :mod:`~bayes_tee.posterior.simulate`, :mod:`~bayes_tee.posterior.dstudy`,
:mod:`~bayes_tee.posterior.budget`, :mod:`~bayes_tee.posterior.gaming`,
:mod:`~bayes_tee.posterior.power_scaling`, :mod:`~bayes_tee.posterior.link_comparison`,
:mod:`~bayes_tee.posterior.report`, :mod:`~bayes_tee.plots`), and every table it returns
carries the fit's diagnostics verdict. Saving writes netCDF (:mod:`~bayes_tee.posterior.netcdf`);
:func:`load` reads it back.

>>> import bayes_tee as bt
>>> post = bt.fit_posterior(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                         prompt="prompt", judge="judge", random_seed=1)  # doctest: +SKIP
>>> post.save("models/tee_demo.nc"); post2 = bt.load("models/tee_demo.nc")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import xarray as xr

from .. import plots
from .._core import diagnostics as diag
from .._core.priors import PriorSpec
from .._core.trees import group
from ..design.formula import write_formula
from ..design.roles import Design
from ..families import get_family
from . import comparison, dstudy, effects, gaming, ordinal, reliability, report, shares, simulate, theta
from . import components as comp
from . import leaderboard as board
from . import link_comparison as links
from . import netcdf as io
from . import power_scaling as psens
from .budget import Plan
from .budget import allocate as allocate_budget

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Categories = Literal["fixed", "random"]


class Posterior(diag.FitResult):
    """Posterior of the TEE model.

    Parameters
    ----------
    idata : xarray.DataTree
        Draws (ArviZ 1); its ``posterior`` group holds ``sigma_<term>``, ``mu`` and ``<facet>_effect``.
    design : Design
        The validated design the model was fitted to.
    priors : PriorSpec
        Priors used.
    method : str
        Likelihood (a name in :data:`bayes_tee.likelihoods.registry.LIKELIHOODS`).
    info : dict, optional
        Sampler, timings and settings.
    """

    def __init__(
        self, idata: xr.DataTree, design: Design, priors: PriorSpec, method: str, info: dict | None = None
    ) -> None:
        self.idata, self.design, self.priors, self.method = idata, design, priors, method
        self.info = dict(info or {})

    # -- what was fitted ---------------------------------------------------------------------
    @property
    def _draws(self) -> xr.Dataset:
        return group(self.idata, "posterior")

    @property
    def terms(self) -> list:
        """The model's terms (components), in display order."""
        return list(self.design.terms)

    @property
    def formula(self) -> str:
        """The lme4-style formula given, or the one the roles wrote (``write_formula``): refittable."""
        if self.design.formula:
            return self.design.formula
        return write_formula(self.design.roles.outcome, self.terms, self.design.columns)

    @property
    def family(self) -> str:
        """The outcome family's name (:data:`bayes_tee.families.FAMILIES`)."""
        return self.design.family

    @property
    def scale(self) -> str:
        """Scale of the variance components: ``outcome`` or ``latent (logit)``."""
        return get_family(self.family).scale

    def _fixed_residual(self, t) -> bool:  # the GLMM's logistic residual: a constant
        return _is_fixed_residual(t, self.family)

    def _convergence_vars(self) -> list[str]:
        return convergence_vars(self.terms, self.family)

    def diagnostics(self) -> dict:
        """R-hat, ESS, divergences, tree depth and E-BFMI (:func:`bayes_tee._core.diagnostics.check`)."""
        return self.convergence()

    def component_draws(self) -> xr.DataArray:
        """Variance of every component per draw (:func:`bayes_tee.posterior.components.component_draws`)."""
        return comp.component_draws(self._draws, self.terms)

    # -- components, shares, theta -----------------------------------------------------------
    def components(self, level: float = 0.9) -> pd.DataFrame:
        """Variance components and their shares of the per-call variance, with intervals."""
        return self._stamp(comp.components_table(self.component_draws(), level))

    def design_counts(
        self, n_items=None, n_prompts=None, n_judges=None, n_temperatures=None, n_replicates=None,
        n_categories=None, n_positions=None,
    ) -> dict[str, float]:  # fmt: skip
        """Observed level counts, any of them replaced (:func:`~bayes_tee.posterior.dstudy.counts_with`)."""
        return dstudy.counts_with(self.design, **_arguments(locals()))

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
        estimand: comp.Estimand = "domain",
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
        estimand: comp.Estimand = "domain",
        decision: dstudy.Decision = "absolute",
        categories: Categories = "fixed",
        judges: dstudy.JudgeMode = "new",
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
        estimand: comp.Estimand = "domain",
        decision: dstudy.Decision = "absolute",
        categories: Categories = "fixed",
        judges: dstudy.JudgeMode = "new",
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
        systems, with ``p_resolved`` for a ``gap`` (:func:`bayes_tee.posterior.leaderboard.separation`).

        >>> post.dstudy(n_items=[50, 100, 200], n_prompts=[1, 3, 5])  # doctest: +SKIP
        """
        args = _arguments(locals())
        system = {k: args.pop(k) for k in ("object", "gap", "over")}
        if board.compares_systems(self, **system):
            return self._stamp(board.separation(self, **system, **args))
        return self._stamp(dstudy.dstudy(self, **args))

    # -- comparing systems (a fit with system=) ------------------------------------------------
    def leaderboard(self, level: float = 0.9, *, over: str = "new", higher_is_better: bool = True):
        """One row per system, best first (:func:`bayes_tee.posterior.leaderboard.leaderboard`)."""
        return self._stamp(board.leaderboard(self, **_arguments(locals())))

    def pairs(self, level: float = 0.9, *, over: str = "new", systems: list | None = None):
        """Every pair's difference and intervals (:func:`bayes_tee.posterior.leaderboard.pairs`)."""
        return self._stamp(board.pairs(self, **_arguments(locals())))

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
        judges: dstudy.JudgeMode = "new",
        estimand: comp.Estimand = "domain",
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
        estimand: comp.Estimand = "domain",
        decision: dstudy.Decision = "absolute",
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

    def compare(self, other: Posterior | str, b: str | None = None, **kwargs):
        """Two systems, ``post.compare("A", "B")``: ``A - B`` with its interval and P(A scores
        higher) (:func:`bayes_tee.posterior.leaderboard.compare`). Another fit of the same data,
        ``post_lpm.compare(post_glmm)``: LPM vs GLMM shares
        (:func:`bayes_tee.posterior.link_comparison.link_comparison`).
        """
        if isinstance(other, Posterior):
            return links.link_comparison(self, other, **kwargs)
        row = board.compare(self, other, b, **kwargs)
        self._stamp(pd.DataFrame([row]))
        return row

    # -- text, report, figures -----------------------------------------------------------------
    def summary(self) -> str:
        """Plain-text summary: design, components, shares, theta and diagnostics
        (:func:`bayes_tee.posterior.report.summary`; a failed fit ends with a ``WARNING:`` line).
        """
        return (comparison if self.design.system else report).summary(self)

    def writeup(self, **kwargs) -> str:
        """The paragraph for the paper (:func:`bayes_tee.posterior.report.writeup`).

        >>> print(post.writeup())  # doctest: +SKIP
        """
        return (comparison if self.design.system else report).writeup(self, **kwargs)

    def report(self, path: str | Path, **kwargs) -> Path:
        """Write the self-contained HTML report (:func:`bayes_tee.posterior.report.report`).

        >>> post.report("report.html", budget=5000)  # doctest: +SKIP
        """
        return (comparison if self.design.system else report).report(self, path, **kwargs)

    def plot_shares(self, kind: Literal["vartheta", "observation"] = "vartheta", **kwargs) -> Figure:
        """Horizontal bars: posterior median share and 90% interval per component, of
        Var(theta_hat) at the design (``**kwargs`` go to :meth:`shares`) or of the per-call
        variance (:func:`bayes_tee.posterior.shares.shares_figure`).
        """
        return shares.shares_figure(self, kind, **kwargs)

    def plot_dstudy(self, table: pd.DataFrame | None = None, **kwargs) -> Figure:
        """SE against items for each prompt/judge count, median line with the interval band
        (``table`` from :meth:`dstudy`; default :func:`bayes_tee.posterior.dstudy.default_grid`).
        """
        return plots.plot_dstudy(dstudy.default_grid(self) if table is None else table, **kwargs)

    def plot_leaderboard(self, **kwargs) -> Figure:
        """Forest plot of :meth:`leaderboard` (panel and new intervals, P(best))."""
        return plots.plot_leaderboard(self.leaderboard(**kwargs))

    def plot_pairs(self, over: str = "new") -> Figure:
        """Heat map of P(row system scores higher than column system)."""
        return plots.plot_p_better(self._stamp(board.p_better_matrix(self, over=over)))

    def plot_ranks(self, over: str = "new") -> Figure:
        """Each system's rank distribution (:func:`bayes_tee.posterior.leaderboard.rank_probabilities`)."""
        return plots.plot_ranks(self._stamp(board.rank_probabilities(self, over=over)))

    def plot_interventions(self, table: pd.DataFrame | None = None, **kwargs) -> Figure:
        """Horizontal bars of the percent change in Var(theta_hat) per intervention."""
        return plots.plot_interventions(self.interventions() if table is None else table, **kwargs)

    def __repr__(self) -> str:
        d = self.diagnostics()
        status = "diagnostics ok" if d["ok"] else "DIAGNOSTICS FAILED: " + "; ".join(d["problems"])
        return f"<Posterior {self.method} | {self.design!r} | {d['n_draws']} draws | {status}>"

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: str | Path, *, keep_effects: bool = False) -> Path:
        """Write the posterior to netCDF (:func:`bayes_tee.posterior.netcdf.save`): the SDs, grand mean,
        fixed effects, sampler statistics and per-cell statistics; effects with ``keep_effects``.
        """
        return io.save(self, path, keep_effects=keep_effects)


def convergence_vars(terms: list, family: str) -> list[str]:
    """The draws a TEE fit is diagnosed on (its checkpoints and :meth:`bayes_tee.Posterior.diagnostics`):
    every term's SD or fixed effects, a family's fixed residual aside, and the grand mean.

    >>> convergence_vars(design.terms, "binomial")  # doctest: +SKIP
    ['sigma_item', 'judge_effect', ..., 'mu']
    """
    return [t.var_name for t in terms if not _is_fixed_residual(t, family)] + ["mu"]


def _is_fixed_residual(t, family: str) -> bool:
    """Whether term ``t`` is ``family``'s fixed residual (the GLMM's logistic pi^2/3): a constant."""
    return get_family(family).fixed_residual and t.kind == "residual"


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
    idata, meta, cells = io.read(path)
    design = Design.from_dict(meta["design"], cells)
    return Posterior(idata, design, PriorSpec.from_dict(meta["priors"]), meta["method"], meta.get("info"))
