"""The :class:`Posterior` of a TEE fit: ArviZ draws + the design + how it was made.

Methods are thin calls into :mod:`bayes_tee.components` and :mod:`bayes_tee.plots`. Saving
writes netCDF (no pickle) with the design, priors, method and package version in the
attributes; :func:`load` refuses a file it cannot interpret.

>>> import bayes_tee as bt
>>> post = bt.fit_posterior(bt.datasets.load("tee_demo"), outcome="score", item="item",
...                         prompt="prompt", judge="judge", random_seed=1)  # doctest: +SKIP
>>> post.save("models/tee_demo.nc"); post2 = bt.load("models/tee_demo.nc")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from . import components as comp
from . import diagnostics as diag
from . import dstudy as ds
from .design import Design, Roles
from .exceptions import DiagnosticWarning
from .priors import PriorSpec
from .terms import model_terms
from .trees import draws_tree, group

FORMAT = "bayes_tee-posterior-1"


class Posterior:
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
        Likelihood form (``balanced``, ``marginal``, ``cells``, ``rows``).
    info : dict, optional
        Sampler, timings and settings.
    """

    def __init__(
        self,
        idata: xr.DataTree,
        design: Design,
        priors: PriorSpec,
        method: str,
        info: dict | None = None,
    ) -> None:
        self.idata = idata
        self.design = design
        self.priors = priors
        self.method = method
        self.info = dict(info or {})
        self._diag: dict | None = None

    # -- draws -----------------------------------------------------------------------------
    @property
    def _draws(self) -> xr.Dataset:
        """The ``posterior`` group of :attr:`idata` as a Dataset."""
        return group(self.idata, "posterior")

    @property
    def terms(self) -> list:
        """The model's terms (components), in display order."""
        return list(self.design.terms)

    def component_draws(self) -> xr.DataArray:
        """Variance of every component per draw, dims ``(chain, draw, component)``.

        Random and residual terms: ``sigma^2``. Fixed judge/temperature: the population
        variance (divide by L) of the level effects, per draw (seed 000 Eq. 7).
        """
        post = self._draws
        arrays = []
        for t in self.terms:
            x = post[t.var_name]
            if t.kind == "fixed":
                dim = t.facets[0]
                arrays.append(((x - x.mean(dim)) ** 2).mean(dim))
            else:
                arrays.append(x**2)
        da = xr.concat(arrays, dim="component", coords="minimal", compat="override")
        return da.assign_coords(component=[t.label for t in self.terms]).transpose("chain", "draw", "component")

    @property
    def family(self) -> str:
        """``gaussian`` (linear model) or ``binomial`` (logit GLMM)."""
        return self.design.family

    @property
    def scale(self) -> str:
        """Scale of the variance components: ``outcome`` or ``latent (logit)``."""
        return "latent (logit)" if self.family == "binomial" else "outcome"

    def _fixed_residual(self, t) -> bool:
        return self.family == "binomial" and t.kind == "residual"

    # -- summaries -------------------------------------------------------------------------
    def diagnostics(self) -> dict:
        """R-hat, bulk/tail ESS and divergences over the SDs, grand mean and fixed effects.

        Returns
        -------
        dict
            ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences``, ``n_draws``,
            ``ok``, ``problems``.
        """
        if self._diag is None:
            names = [t.var_name for t in self.terms if not self._fixed_residual(t)] + ["mu"]
            self._diag = diag.check(self.idata, names)
        return dict(self._diag)

    def _stamp(self, table: pd.DataFrame) -> pd.DataFrame:
        return diag.stamp(table, self.diagnostics(), stacklevel=4)

    def components(self, level: float = 0.9) -> pd.DataFrame:
        """Per-observation variance components and their shares of the per-call variance.

        Parameters
        ----------
        level : float
            Credible level of the intervals (default 90%).

        Returns
        -------
        pandas.DataFrame
            ``component, mean, median, low, high, share_median, share_low, share_high``.

        Examples
        --------
        >>> post.components()  # doctest: +SKIP
        """
        return self._stamp(comp.components_table(self.component_draws(), level))

    def design_counts(
        self,
        n_items: float | None = None,
        n_prompts: float | None = None,
        n_judges: float | None = None,
        n_temperatures: float | None = None,
        n_replicates: float | None = None,
        n_categories: float | None = None,
        n_positions: float | None = None,
    ) -> dict[str, float]:
        """Level counts of the observed design with any of them replaced."""
        counts = self.design.counts
        for key, val in (
            ("item", n_items),
            ("prompt", n_prompts),
            ("judge", n_judges),
            ("temperature", n_temperatures),
            ("replicate", n_replicates),
            ("category", n_categories),
            ("position", n_positions),
        ):
            if val is not None:
                if not val >= 1:
                    raise ValueError(f"n_{key}s must be at least 1, got {val!r}.")
                counts[key] = float(val)
        return counts

    def shares(
        self,
        n_items: float | None = None,
        n_prompts: float | None = None,
        n_judges: float | None = None,
        n_temperatures: float | None = None,
        n_replicates: float | None = None,
        *,
        n_categories: float | None = None,
        n_positions: float | None = None,
        estimand: comp.Estimand = "domain",
        categories: Literal["fixed", "random"] = "fixed",
        level: float = 0.9,
        scale: Literal["model", "probability"] = "model",
        n_draws: int = 200,
        sims_per_draw: int = 100,
        random_seed: int | None = None,
    ) -> pd.DataFrame:
        """Each component's contribution to Var(theta_hat) at a design, and its share.

        Parameters
        ----------
        n_items, n_prompts, n_judges, n_temperatures, n_replicates : float, optional
            Design counts; ``None`` keeps the observed count. Judges and temperatures are
            fixed panels: more of them means averaging over a panel of that size with the
            same sensitivity.
        n_categories : float, optional
            Categories in the design (used with ``categories="random"``).
        n_positions : float, optional
            Presentation orders averaged over (pairwise fits with ``position=``): 2 for
            counterbalanced A/B and B/A, 1 for a single order.
        estimand : {"domain", "finite"}
            ``finite`` (this exact item set) drops the item and category terms.
        categories : {"fixed", "random"}
            Fixed categories (the paper's default) enter with the items, ``/ N``.
        level : float
            Credible level.
        scale : {"model", "probability"}
            ``model``: the scale the model is fitted on (the outcome for the linear model, the
            logit scale for the GLMM, closed form). ``probability`` (GLMM): contributions to
            the variance of the mean success rate, by posterior-predictive simulation
            (:func:`bayes_tee.predictive.probability_contributions`; ``n_draws``,
            ``sims_per_draw``, ``random_seed`` control it). For the linear model the two agree.

        Returns
        -------
        pandas.DataFrame
            ``component, divisor, contribution_median, contribution_low, contribution_high,
            share_median, share_low, share_high``; ``attrs["var_theta"]``, ``attrs["scale"]``.

        Examples
        --------
        >>> post.shares(n_items=200)  # doctest: +SKIP
        """
        if scale not in ("model", "probability"):
            raise ValueError(f"scale must be 'model' or 'probability', got {scale!r}.")
        if scale == "probability" and self.family == "binomial":
            if n_positions is not None:
                raise ValueError("probability-scale shares take the observed presentation orders; drop n_positions.")
            return self._probability_shares(
                dict(n_items=n_items, n_prompts=n_prompts, n_judges=n_judges, n_temperatures=n_temperatures,
                     n_replicates=n_replicates, n_categories=n_categories),
                estimand=estimand, categories=categories, level=level, n_draws=n_draws,
                sims_per_draw=sims_per_draw, random_seed=random_seed,
            )
        counts = self.design_counts(n_items, n_prompts, n_judges, n_temperatures, n_replicates, n_categories,
                                    n_positions)
        table = comp.shares_table(
            self.component_draws(), self.terms, counts, estimand=estimand, categories=categories, level=level
        )
        table.attrs["design"] = counts
        table.attrs["estimand"] = estimand
        table.attrs["scale"] = self.scale
        return self._stamp(table)

    def _draw_index(self, n_draws: int, rng: np.random.Generator) -> np.ndarray:
        total = self._draws.sizes["chain"] * self._draws.sizes["draw"]
        return np.sort(rng.choice(total, size=min(n_draws, total), replace=False))

    def _layout(self, design: dict | None = None, strategy: str = "crossed"):
        """The observed cells (``design=None``) or a crossed design with counts as given."""
        from . import predictive as pr

        if design is None:
            return pr.table_layout(self.design.cells[[*self.design.facets, "n"]], self.design.item_category)
        c = self.design.counts
        d = {f: (design.get(f) if design.get(f) is not None else c.get(facet, 1.0)) for f, facet in ds.FIELDS.items()}
        return pr.crossed_layout(d["n_items"], d["n_prompts"], d["n_temperatures"], d["n_judges"],
                                 round(d["n_replicates"]), d["n_categories"], strategy=strategy)

    def _probability_shares(self, design: dict, *, estimand, categories, level, n_draws, sims_per_draw, random_seed):
        from . import predictive as pr

        if estimand != "domain":
            raise ValueError("probability-scale shares of the GLMM are for estimand='domain'.")
        rng = np.random.default_rng(random_seed)
        draws = pr.draws_from(self._draws, self.terms, self._draw_index(n_draws, rng), self.family)
        observed = all(v is None for v in design.values())
        lay = self._layout(None if observed else design)
        labels, contrib, total = pr.probability_contributions(
            draws, self.terms, lay, sims_per_draw=sims_per_draw, categories=categories, rng=rng
        )
        shares = contrib / contrib.sum(axis=1, keepdims=True)
        out = pd.DataFrame({"component": labels})
        out = pd.concat([out, comp.summarize_samples(contrib, level, "contribution_"),
                         comp.summarize_samples(shares, level, "share_")], axis=1)
        q = (1 - level) / 2
        out.attrs.update(
            var_theta={"median": float(np.median(total)), "low": float(np.quantile(total, q)),
                       "high": float(np.quantile(total, 1 - q))},
            scale="probability", estimand=estimand, n_draws=len(total), sims_per_draw=sims_per_draw,
        )
        return self._stamp(out)

    # -- D-study -------------------------------------------------------------------------
    def _draw_matrix(self) -> np.ndarray:
        da = self.component_draws()
        return da.values.reshape(-1, da.sizes["component"])

    def _facets(self) -> dict[str, tuple[str, ...]]:
        return {t.label: t.facets for t in self.terms}

    def _check_judges(self, judges: Literal["panel", "new"], n_judges) -> None:
        if judges not in ("panel", "new"):
            raise ValueError(f"judges must be 'panel' or 'new', got {judges!r}.")
        fixed = any(t.label == "judge" and t.kind == "fixed" for t in self.terms)
        M = self.design.counts.get("judge", 1)
        more = n_judges is not None and np.max(np.atleast_1d(n_judges)) > M
        if judges == "panel" and more:
            raise ValueError(
                f"judges='panel' projects a subset of the fitted panel of {M:g} judges; "
                f"n_judges={n_judges} is larger. Use judges='new' for judges beyond the panel."
            )
        if fixed and more:
            warnings.warn(
                f"Judges were fitted as a fixed panel of {M:g}; projecting to new judges uses the "
                "panel's sensitivity index as if it were the variance of a judge population (it "
                "understates that variance by (M-1)/M and ignores that the next judges may differ). "
                "Refit with judge_effect='random' for a superpopulation judge variance.",
                UserWarning,
                stacklevel=3,
            )

    def variance_at(
        self,
        designs: pd.DataFrame,
        *,
        estimand: comp.Estimand = "domain",
        decision: ds.Decision = "absolute",
        categories: Literal["fixed", "random"] = "fixed",
        judges: Literal["panel", "new"] = "new",
    ) -> np.ndarray:
        """Var(theta_hat) per posterior draw at each design row, ``(n_draws, n_designs)``.

        ``judges="new"`` (default, seed 000): the M' judges are like a fresh draw of judges
        like these, so the judge sensitivity enters as ``sigma_J^2 / M'``. ``judges="panel"``
        (seed 002 Eq. 2): the target is the mean over the fitted panel of M judges and M' of
        them are used, so it enters with the finite-population factor
        ``sigma_J^2 / M' * (M - M') / (M - 1)``, zero when the whole panel is used.

        >>> post.variance_at(ds.design_grid(n_items=[50, 100])).shape  # doctest: +SKIP
        (4000, 2)
        """
        labels = [t.label for t in self.terms]
        w = ds.design_weights(labels, self._facets(), designs, base=self.design.counts,
                              estimand=estimand, decision=decision, categories=categories)
        M = self.design.counts.get("judge", 1)
        fixed_judge = [j for j, t in enumerate(self.terms) if t.label == "judge" and t.kind == "fixed"]
        if judges == "panel" and fixed_judge and M > 1:
            Mp = designs["n_judges"].to_numpy(float) if "n_judges" in designs else np.full(len(designs), M)
            Mp = np.where(np.isnan(Mp), M, Mp)
            if np.any(Mp > M):
                raise ValueError(f"judges='panel' needs n_judges <= {M:g}, the fitted panel.")
            w[:, fixed_judge[0]] *= (M - Mp) / (M - 1)
        return ds.projected_variance(self._draw_matrix(), w)

    def _grid(self, *, fill_categories: bool = False, **given) -> pd.DataFrame:
        """Every combination of the given design counts; fields not given take the observed
        count (categories too with ``fill_categories``), in :data:`bayes_tee.dstudy.FIELDS` order."""
        grid = ds.design_grid(**given)
        return self._fill(grid if not grid.empty else pd.DataFrame([{}]), fill_categories=fill_categories)

    def _fill(self, grid: pd.DataFrame, *, fill_categories: bool = False) -> pd.DataFrame:
        """Design rows with absent or NaN counts set to the observed ones, in FIELDS order;
        ``n_categories`` only with ``fill_categories``, ``n_positions`` only for pairwise fits."""
        grid = grid.copy()
        for field, facet in ds.FIELDS.items():
            optional = field in ds.OPTIONAL_FIELDS and not (
                (field == "n_categories" and fill_categories) or (field == "n_positions" and facet in self.design.facets)
            )
            observed = self.design.counts.get(facet, 1.0)
            if field in grid:
                grid[field] = grid[field].fillna(observed)
            elif not optional:
                grid[field] = observed
        return grid[[f for f in ds.FIELDS if f in grid]]

    def _check_positions(self, n_positions) -> None:
        if n_positions is not None and "position" not in self.design.facets:
            raise ValueError("n_positions needs a pairwise fit with a presentation-order column: "
                             "fit_posterior(..., position='order').")

    def observed_variance(self, **kwargs) -> np.ndarray:
        """Var(theta_hat) per posterior draw at the observed design (``variance_at`` keywords)."""
        return self.variance_at(pd.DataFrame([{}]), **kwargs)[:, 0]

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
        decision: ds.Decision = "absolute",
        categories: Literal["fixed", "random"] = "fixed",
        judges: Literal["panel", "new"] = "new",
        target_se: float | None = None,
        level: float = 0.9,
    ) -> pd.DataFrame:
        """Projected SE of theta_hat for every combination of the given design counts.

        Parameters
        ----------
        n_items, n_prompts, n_judges, n_temperatures, n_replicates, n_categories : int or list
            Counts to project; ``None`` keeps the observed count.
        n_positions : int or list
            Pairwise fits: presentation orders per comparison (1 or 2).
        estimand : {"domain", "finite"}
            ``finite`` drops the item terms (this exact item set is the target).
        decision : {"absolute", "relative"}
            ``relative`` keeps only terms that involve items (systems compared under shared
            prompts, judges and temperatures).
        categories : {"fixed", "random"}
            How the category term averages (see :func:`bayes_tee.components.divisors`).
        judges : {"new", "panel"}
            ``new`` (default): judges like these, sensitivity over ``M'`` (seed 000; warns when
            ``M'`` exceeds a fixed panel). ``panel``: a subset of the fitted panel with its
            mean as the target (finite-population factor, seed 002); see :meth:`variance_at`.
        target_se : float, optional
            Adds ``p_below_target``, the posterior probability that the SE is below it.
        level : float
            Credible level of the intervals.

        Returns
        -------
        pandas.DataFrame
            One row per design: the design counts, ``calls``, ``se_median``, ``se_low``,
            ``se_high``, ``var_ratio_median/low/high`` (against the observed design),
            ``p_below_target``.

        Examples
        --------
        >>> post.dstudy(n_items=[50, 100, 200], n_prompts=[1, 3, 5])  # doctest: +SKIP
        """
        self._check_judges(judges, n_judges)
        counts = self.design.counts
        self._check_positions(n_positions)
        grid = self._grid(n_items=n_items, n_prompts=n_prompts, n_judges=n_judges, n_temperatures=n_temperatures,
                          n_replicates=n_replicates, n_categories=n_categories, n_positions=n_positions)
        kw = dict(estimand=estimand, decision=decision, categories=categories)
        var = self.variance_at(grid, judges=judges, **kw)
        current = self.observed_variance(judges=judges, **kw)
        out = grid.copy()
        out["calls"] = ds.calls(grid, counts)
        out = pd.concat([out.reset_index(drop=True), ds.summarize_designs(var, current, level=level, target_se=target_se)], axis=1)
        out.attrs.update(estimand=estimand, decision=decision, level=level, judges=judges)
        return self._stamp(out)

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
        judges: Literal["panel", "new"] = "new",
        estimand: comp.Estimand = "domain",
        categories: Literal["fixed", "random"] = "fixed",
        n_draws: int = 200,
        sims_per_draw: int = 200,
        level: float = 0.9,
        random_seed: int | None = None,
    ) -> pd.DataFrame:
        """Posterior-predictive simulation of proposed designs (see :mod:`bayes_tee.predictive`).

        For ``n_draws`` posterior draws, simulates ``sims_per_draw`` studies of each design
        with new, independent effects for every new level, and records ``theta_hat - theta``
        and the interval the study would report itself.

        Parameters
        ----------
        n_items, n_prompts, n_judges, n_temperatures, n_replicates, n_categories : int or list
            Design counts (``None``: as observed); lists give one row per combination.
        strategy : {"crossed", "cyclic", "random"}
            Judge assignment (seed 002 Sec. 3): every judge scores every call; CyclicJudge
            round-robin, one judge per call; a uniformly random judge per call.
        cells : DataFrame or "observed", optional
            Simulate this exact layout instead (columns among ``item, prompt, temperature,
            judge`` and ``n``); ``"observed"`` re-simulates the fitted design, missing cells
            and unequal replicates included.
        judges : {"new", "panel"}
            Fixed judge effects drawn with replacement from the fitted ones (judges like these)
            or as a subset of this panel whose mean is the target.
        estimand : {"domain", "finite"}
            ``finite`` targets the mean over this item set.
        n_draws, sims_per_draw : int
            Posterior draws used and studies simulated per draw.
        level : float
            Level of the intervals and of the coverage checks.
        random_seed : int, optional
            Seed.

        Returns
        -------
        pandas.DataFrame
            One row per design: design counts, ``strategy``, ``calls``, ``se_median/low/high``
            (per-draw simulated SD), ``closed_form_se_median/low/high`` (exact Gaussian SE of
            the layout), ``rmse``, ``bias`` (with Monte Carlo SEs), ``sd_ratio``,
            ``naive_se_median``, ``coverage_naive``, ``coverage_tee``, ``n_draws``,
            ``sims_per_draw``.

        Examples
        --------
        >>> post.simulate_design(n_items=100, n_judges=3, strategy="cyclic")  # doctest: +SKIP
        """
        if "position" in self.design.facets:
            raise ValueError("simulate_design does not simulate presentation orders; use the closed-form "
                             "dstudy(n_positions=...) for pairwise fits.")
        from . import predictive as pr

        self._check_judges(judges, n_judges)
        rng = np.random.default_rng(random_seed)
        draws = pr.draws_from(self._draws, self.terms, self._draw_index(n_draws, rng), self.family)
        kw = dict(sims_per_draw=sims_per_draw, judges=judges, estimand=estimand, categories=categories, rng=rng)
        if cells is not None:
            if isinstance(cells, str):
                if cells != "observed":
                    raise ValueError(f"cells must be a DataFrame or 'observed', got {cells!r}.")
                lay, name = self._layout(), "observed"
            else:
                lay, name = pr.table_layout(cells), "table"
            row = {"strategy": name, "calls": lay.calls_per_study}
            row.update(pr.summarize_simulation(pr.simulate_studies(draws, self.terms, lay, **kw), level=level))
            return self._stamp(pd.DataFrame([row]))
        if strategy != "crossed" and self.design.counts.get("judge", 1) < 2:
            raise ValueError("judge strategies need a fitted judge facet with two or more judges.")
        grid = self._grid(n_items=n_items, n_prompts=n_prompts, n_judges=n_judges, n_temperatures=n_temperatures,
                          n_replicates=n_replicates, n_categories=n_categories, fill_categories=True)
        rows = []
        for d in grid.to_dict("records"):
            lay = self._layout(d, strategy)
            sim = pr.simulate_studies(draws, self.terms, lay, **kw)
            rows.append({**d, "strategy": strategy, "calls": lay.calls_per_study,
                         **pr.summarize_simulation(sim, level=level)})
        out = pd.DataFrame(rows)
        out.attrs.update(estimand=estimand, judges=judges, level=level)
        return self._stamp(out)

    def interventions(
        self,
        *,
        estimand: comp.Estimand = "domain",
        decision: ds.Decision = "absolute",
        level: float = 0.9,
    ) -> pd.DataFrame:
        """Percent change in Var(theta_hat) for single design changes (seed 000 Fig. 13-14).

        Returns
        -------
        pandas.DataFrame
            ``intervention``, the changed field and its new value, ``calls_ratio``,
            ``change_median``, ``change_low``, ``change_high`` (percent), ``p_reduces``.

        Examples
        --------
        >>> post.interventions()  # doctest: +SKIP
        """
        c = self.design.counts
        N, V, M, H, R = (c.get(f, 1.0) for f in ("item", "prompt", "judge", "temperature", "replicate"))
        present = set(self.design.facets) | ({"replicate"} if self.design.has_replicates else set())
        options = [
            ("items x2", "n_items", 2 * N, "item"),
            ("items x1/2", "n_items", max(1.0, np.floor(N / 2)), "item"),
            ("+2 prompts", "n_prompts", V + 2, "prompt"),
            ("single prompt", "n_prompts", 1.0, "prompt"),
            ("+5 replications", "n_replicates", R + 5, "replicate"),
            ("single replication", "n_replicates", 1.0, "replicate"),
            ("single judge", "n_judges", 1.0, "judge"),
            ("single temperature", "n_temperatures", 1.0, "temperature"),
            ("single presentation order", "n_positions", 1.0, "position"),
        ]
        rows = [(n, f, v) for n, f, v, facet in options if facet in present and v != c.get(facet, 1.0)]
        grid = pd.DataFrame([{f: v} for _, f, v in rows])
        kw = dict(estimand=estimand, decision=decision)
        var = self.variance_at(grid, **kw) if rows else np.zeros((1, 0))
        current = self.observed_variance(**kw)
        change = 100.0 * (var / current[:, None] - 1.0)
        out = pd.DataFrame({
            "intervention": [r[0] for r in rows],
            "field": [r[1] for r in rows],
            "value": [r[2] for r in rows],
            "calls_ratio": [r[2] / c.get(ds.FIELDS[r[1]], 1.0) for r in rows],
        })
        out = pd.concat([out, comp.summarize_samples(change, level, "change_")], axis=1)
        out["p_reduces"] = (change < 0).mean(axis=0)
        out.attrs.update(estimand=estimand, decision=decision, level=level)
        return self._stamp(out)

    def allocate(self, budget: float, **kwargs):
        """Best design under a budget and the cost-efficiency frontier; see :func:`bayes_tee.budget.allocate`.

        >>> plan = post.allocate(budget=5000, max_items=200)  # doctest: +SKIP
        >>> plan.best  # doctest: +SKIP
        """
        from .budget import allocate

        return allocate(self, budget, **kwargs)

    def plot_dstudy(self, table: pd.DataFrame | None = None, **kwargs):
        """SE against items for each prompt/judge count, median line with the interval band.

        ``table`` from :meth:`dstudy` (default: items 10-4x observed, prompts 1/observed, judges
        1/observed).
        """
        from .plots import plot_dstudy

        if table is None:
            c = self.design.counts
            n = np.unique(np.geomspace(10, 4 * c["item"], 12).round())
            table = self.dstudy(n_items=n, n_prompts=sorted({1, c.get("prompt", 1)}),
                                n_judges=sorted({1, c.get("judge", 1)}))
        return plot_dstudy(table, **kwargs)

    def plot_interventions(self, table: pd.DataFrame | None = None, **kwargs):
        """Horizontal bars of the percent change in Var(theta_hat) per intervention."""
        from .plots import plot_interventions

        return plot_interventions(self.interventions() if table is None else table, **kwargs)

    def theta(
        self, level: float = 0.95, *, n_draws: int = 400, sims_per_draw: int = 50, random_seed: int | None = 0
    ) -> pd.DataFrame:
        """The grand mean with its panel, TEE and naive intervals side by side.

        ``panel`` is the posterior of the mean for this exact judge/temperature panel.
        ``tee`` adds the judge/temperature sensitivity: it answers what another equally good
        pipeline would have reported (seed 000 Sec. 3.3). Its SE is ``sqrt(E[Var(theta_hat)])``
        over the posterior, and its interval is the quantile of the predictive error mixed over
        the posterior of Var(theta_hat) (heavier-tailed than a plug-in Normal when the
        components are uncertain). ``naive`` is ``s / sqrt(n)`` over the rows.

        Returns
        -------
        pandas.DataFrame
            One row: ``estimate, panel_low, panel_high, tee_se, tee_low, tee_high,
            naive_estimate, naive_se, naive_low, naive_high, se_ratio, level``.

        For the logit GLMM everything is on the probability scale: ``estimate`` and ``panel``
        are the posterior of the panel's mean success probability (the average of
        inverse-logits over the observed calls, not the inverse-logit of the mean), and the
        TEE SE and interval come from simulating the observed design afresh per posterior draw
        (``n_draws`` x ``sims_per_draw`` studies) against the population mean probability.

        Examples
        --------
        >>> post.theta()  # doctest: +SKIP
        """
        a = (1 - level) / 2
        z = float(stats.norm.ppf(1 - a))
        d = self.design
        naive_se = d.y_sd / np.sqrt(d.n_rows)
        if self.family == "binomial":
            from . import predictive as pr

            mu = self._draws["p_panel"].values.ravel()
            est = float(np.median(mu))
            rng = np.random.default_rng(random_seed)
            draws = pr.draws_from(self._draws, self.terms, self._draw_index(n_draws, rng), self.family)
            err = pr.simulate_studies(draws, self.terms, self._layout(), sims_per_draw=sims_per_draw, rng=rng)["error"]
            tee_se = float(np.sqrt(np.mean(err**2)))
            half = float(np.quantile(np.abs(err), 1 - 2 * a))
        else:
            mu = self._draws["mu"].values.ravel()
            est = float(np.median(mu))
            contrib = comp.contributions(self.component_draws(), self.terms, self.design.counts)
            v = contrib.sum("component").values.ravel()
            half = comp.normal_mixture_quantile(1 - a, np.sqrt(v))
            tee_se = float(np.sqrt(np.mean(v)))
        row = {
            "estimate": est,
            "panel_low": float(np.quantile(mu, a)),
            "panel_high": float(np.quantile(mu, 1 - a)),
            "tee_se": tee_se,
            "tee_low": est - half,
            "tee_high": est + half,
            "naive_estimate": d.y_mean,
            "naive_se": naive_se,
            "naive_low": d.y_mean - z * naive_se,
            "naive_high": d.y_mean + z * naive_se,
            "se_ratio": tee_se / naive_se,
            "level": level,
        }
        return self._stamp(pd.DataFrame([row]))

    def summary(self) -> str:
        """Plain-text summary: design, components, shares, theta and diagnostics.

        A failed fit is reported in the text (a final ``WARNING:`` line) rather than as a
        Python warning per table.
        """
        with pd.option_context("display.width", 120, "display.max_columns", 20), warnings.catch_warnings():
            warnings.simplefilter("ignore", DiagnosticWarning)
            parts = [
                repr(self),
                "\nPer-observation components (variance scale, 90% intervals):",
                self.components().round(5).to_string(index=False),
                "\nShares of Var(theta_hat) at the observed design:",
                self.shares().drop(columns="divisor").round(4).to_string(index=False),
                "\ntheta:",
                self.theta().round(4).T.to_string(header=False),
                "\nDiagnostics: " + ", ".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in self.diagnostics().items()
                    if k != "problems"
                ),
            ]
        msg = diag.message(self.diagnostics())
        if msg:
            parts.append("WARNING: " + msg)
        return "\n".join(parts)

    def writeup(self, **kwargs) -> str:
        """The paragraph for the paper (:func:`bayes_tee.report.writeup`).

        >>> print(post.writeup())  # doctest: +SKIP
        """
        from .report import writeup

        return writeup(self, **kwargs)

    def report(self, path: str | Path, **kwargs) -> Path:
        """Write the self-contained HTML report (:func:`bayes_tee.report.report`).

        >>> post.report("report.html", budget=5000)  # doctest: +SKIP
        """
        from .report import report

        return report(self, path, **kwargs)

    def gaming_surface(self, k: int = 27, design=None, **kwargs) -> pd.DataFrame:
        """Expected best-of-``k`` inflation at designs, as a posterior, in score units and Elo
        (seed 000 Sec. 4.4; :func:`bayes_tee.gaming.gaming_surface`).

        >>> post.gaming_surface(k=27, design=[{"n_prompts": 1, "n_judges": 1},
        ...                                   {"n_prompts": 5, "n_judges": 3}])  # doctest: +SKIP
        """
        from .gaming import gaming_surface

        return self._stamp(gaming_surface(self, k, design, **kwargs))

    def sensitivity(self, **kwargs) -> pd.DataFrame:
        """Power-scaling prior and likelihood sensitivity per component
        (:func:`bayes_tee.sensitivity.power_scaling`; ArviZ ``psens``).

        >>> post.sensitivity()  # doctest: +SKIP
        """
        from .sensitivity import power_scaling

        return power_scaling(self, **kwargs)

    def compare(self, other: "Posterior", **kwargs):
        """LPM vs GLMM shares of the same data (:func:`bayes_tee.links.link_comparison`).

        >>> post_lpm.compare(post_glmm).table  # doctest: +SKIP
        """
        from .links import link_comparison

        return link_comparison(self, other, **kwargs)

    def plot_shares(self, kind: Literal["vartheta", "observation"] = "vartheta", **kwargs):
        """Horizontal bars: posterior median share and 90% interval per component.

        Parameters
        ----------
        kind : {"vartheta", "observation"}
            Shares of Var(theta_hat) at the design (``**kwargs`` go to :meth:`shares`) or of
            the per-call variance.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from .plots import plot_shares

        return plot_shares(self, kind=kind, **kwargs)

    def __repr__(self) -> str:
        d = self.diagnostics()
        n = f"{d['n_draws']} draws"
        status = "diagnostics ok" if d["ok"] else "DIAGNOSTICS FAILED: " + "; ".join(d["problems"])
        return f"<Posterior {self.method} | {self.design!r} | {n} | {status}>"

    # -- persistence -----------------------------------------------------------------------
    def save(self, path: str | Path, *, keep_effects: bool = False) -> Path:
        """Write the posterior to netCDF.

        Keeps the SDs, grand mean, fixed effects, sampler statistics and the per-cell
        sufficient statistics; random-effect vectors only with ``keep_effects``.

        Returns
        -------
        pathlib.Path
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        names = [t.var_name for t in self.terms] + ["mu"]
        names += [v for v in ("p_panel",) if v in self._draws]  # the GLMM's panel mean
        post = self._draws if keep_effects else self._draws[names]
        meta = {
            "format": FORMAT,
            "version": _version(),
            "design": self.design.to_dict(),
            "priors": self.priors.to_dict(),
            "method": self.method,
            "info": self.info,
        }
        post = post.assign_attrs(bayes_tee=json.dumps(meta))
        cells = xr.Dataset({c: ("cell", self.design.cells[c].to_numpy()) for c in self.design.cells.columns})
        tree = draws_tree(post, self.idata, constant_data=cells)
        # compressed, as ArviZ 0.x wrote them: draws of SDs compress about twofold
        encoding = {f"/{name}": {v: {"zlib": True, "complevel": 4} for v in node.data_vars}
                    for name, node in tree.children.items()}
        tree.to_netcdf(str(path), engine="h5netcdf", encoding=encoding)
        return path


def _version() -> str:
    from . import __version__

    return __version__


def load(path: str | Path) -> Posterior:
    """Load a posterior written by :meth:`Posterior.save`.

    Raises
    ------
    ValueError
        When the file is not a bayes_tee posterior.

    Examples
    --------
    >>> post = load("models/tee_demo.nc")  # doctest: +SKIP
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No file {str(path)!r}.")
    try:
        with xr.open_datatree(str(path), engine="h5netcdf") as opened:
            idata = opened.load()
    except (OSError, ValueError) as err:
        raise ValueError(
            f"{str(path)!r} is not a bayes_tee posterior (cannot read it as netCDF: {err}); "
            "write one with Posterior.save() or `bayes-tee fit`."
        ) from None
    raw = idata["posterior"].attrs.get("bayes_tee") if "posterior" in idata.children else None
    if raw is None:
        raise ValueError(
            f"{str(path)!r} is not a bayes_tee posterior (no 'bayes_tee' attribute); "
            "write it with Posterior.save()."
        )
    meta = json.loads(raw)
    if meta.get("format") != FORMAT:
        raise ValueError(
            f"{str(path)!r} was written by bayes_tee {meta.get('version', '?')} in format "
            f"{meta.get('format')!r}; bayes_tee {_version()} reads {FORMAT!r}. Load it with the version "
            "that wrote it, or refit the data and save again with this one "
            "(`bayes-tee fit data.csv ... --out file.nc`, or Posterior.save)."
        )
    cells = group(idata, "constant_data").to_dataframe().reset_index(drop=True)
    design = _design_from_dict(meta["design"], cells)
    return Posterior(idata, design, PriorSpec.from_dict(meta["priors"]), meta["method"], meta.get("info"))


def _design_from_dict(d: dict, cells: pd.DataFrame) -> Design:
    facets = tuple(d["facets"])
    cells = cells[[*facets, "n", "mean", "ss"]]
    terms = model_terms(
        facets,
        replicates=bool((cells["n"] > 1).any()),
        category=d["categories"] is not None,
        judge_effect=d["judge_effect"],
        family=d.get("family", "gaussian"),
        overdispersion=d.get("overdispersion", True),
    )
    return Design(
        roles=Roles(**d["roles"]),
        facets=facets,
        levels={k: tuple(v) for k, v in d["levels"].items()},
        categories=tuple(d["categories"]) if d["categories"] else None,
        item_category=None if d["item_category"] is None else np.asarray(d["item_category"]),
        cells=cells,
        n_rows=d["n_rows"],
        dropped=d["dropped"],
        notes=tuple(d["notes"]),
        balanced=d["balanced"],
        y_mean=d["y_mean"],
        y_sd=d["y_sd"],
        binary=d["binary"],
        judge_effect=d["judge_effect"],
        family=d.get("family", "gaussian"),
        overdispersion=d.get("overdispersion", True),
        terms=tuple(terms),
    )
