"""theta_hat of a fitted posterior: its estimate with panel, TEE and naive intervals, the shares
of its variance at a design, and posterior-predictive simulation of proposed designs.

The closed forms (:mod:`bayes_tee.posterior.components`, :mod:`bayes_tee.posterior.dstudy`) answer on the
model's scale; the logit GLMM's probability-scale answers and any layout the closed form does
not cover go through simulation (:mod:`bayes_tee.posterior.predictive`). The :class:`Posterior`
methods ``theta``, ``shares`` and ``simulate_design`` call these functions.

>>> theta(post)  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .. import plots
from .._core.exceptions import DiagnosticWarning
from .._core.intervals import summarize_samples
from .._core.trees import group
from ..families import get_family
from . import components as comp
from . import predictive as pr
from .dstudy import FIELDS, JudgeMode, check_judges, counts_with, grid_for

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .facade import Posterior


def posterior_draws(post: Posterior, n_draws: int, rng: np.random.Generator):
    """``n_draws`` posterior draws (without replacement, in order) as a simulation needs them."""
    P = group(post.idata, "posterior")
    total = P.sizes["chain"] * P.sizes["draw"]
    index = np.sort(rng.choice(total, size=min(n_draws, total), replace=False))
    return pr.draws_from(P, post.terms, index, post.family)


def layout(post: Posterior, design: dict | None = None, strategy: pr.Strategy = "crossed") -> pr.Layout:
    """The observed cells (``design=None``) or a crossed design with counts as given."""
    if design is None:
        return pr.table_layout(post.design.cells[[*post.design.facets, "n"]], post.design.item_category)
    c = post.design.counts
    d = {
        f: (design.get(f) if design.get(f) is not None else c.get(facet, 1.0)) for f, facet in FIELDS.items()
    }
    return pr.crossed_layout(
        d["n_items"],
        d["n_prompts"],
        d["n_temperatures"],
        d["n_judges"],
        round(d["n_replicates"]),
        d["n_categories"],
        strategy=strategy,
    )


def shares(
    post: Posterior,
    *,
    estimand: comp.Estimand = "domain",
    categories: Literal["fixed", "random"] = "fixed",
    level: float = 0.9,
    scale: Literal["model", "probability"] = "model",
    n_draws: int = 200,
    sims_per_draw: int = 100,
    random_seed: int | None = None,
    **n: float | None,
) -> pd.DataFrame:
    """Each component's contribution to Var(theta_hat) at a design (``n_items=...``), and its share.

    Parameters
    ----------
    n_items, n_prompts, n_judges, n_temperatures, n_replicates, n_categories : float, optional
        Design counts; ``None`` keeps the observed count. Judges and temperatures are
        fixed panels: more of them means averaging over a panel of that size.
    n_positions : float, optional
        Pairwise fits: presentation orders averaged over (2 counterbalanced, 1 single).
    estimand : {"domain", "finite"}
        ``finite`` (this exact item set) drops the item and category terms.
    categories : {"fixed", "random"}
        Fixed categories (the paper's default) enter with the items, ``/ N``.
    level : float
        Credible level.
    scale : {"model", "probability"}
        ``model``: the fitted scale, closed form. ``probability`` (GLMM): contributions to
        the variance of the mean success rate by simulation (``n_draws``,
        ``sims_per_draw``, ``random_seed``); for the linear model the two agree.

    Returns
    -------
    pandas.DataFrame
        ``component, divisor, contribution_median/low/high, share_median/low/high``;
        ``attrs["var_theta"]``, ``attrs["scale"]``.

    >>> post.shares(n_items=200)  # doctest: +SKIP
    """
    if scale not in ("model", "probability"):
        raise ValueError(f"scale must be 'model' or 'probability', got {scale!r}.")
    if scale == "probability" and get_family(post.family).latent:
        if n.get("n_positions") is not None:
            raise ValueError(
                "probability-scale shares take the observed presentation orders; drop n_positions."
            )
        n = {k: v for k, v in n.items() if k != "n_positions"}
        return probability_shares(
            post,
            n,
            estimand=estimand,
            categories=categories,
            level=level,
            n_draws=n_draws,
            sims_per_draw=sims_per_draw,
            random_seed=random_seed,
        )
    counts = counts_with(post.design.counts, **n)
    table = comp.shares_table(
        post.component_draws(), post.terms, counts, estimand=estimand, categories=categories, level=level
    )
    table.attrs.update(design=counts, estimand=estimand, scale=post.scale)
    return table


def probability_shares(
    post: Posterior,
    design: dict,
    *,
    estimand: comp.Estimand,
    categories: str,
    level: float,
    n_draws: int,
    sims_per_draw: int,
    random_seed: int | None,
) -> pd.DataFrame:
    """The GLMM's contributions to the variance of the mean success rate, by simulation
    (:func:`bayes_tee.posterior.predictive.probability_contributions`).
    """
    if estimand != "domain":
        raise ValueError("probability-scale shares of the GLMM are for estimand='domain'.")
    rng = np.random.default_rng(random_seed)
    draws = posterior_draws(post, n_draws, rng)
    observed = all(v is None for v in design.values())
    lay = layout(post, None if observed else design)
    labels, contrib, total = pr.probability_contributions(
        draws, post.terms, lay, sims_per_draw=sims_per_draw, categories=categories, rng=rng
    )
    share = contrib / contrib.sum(axis=1, keepdims=True)
    out = pd.concat(
        [
            pd.DataFrame({"component": labels}),
            summarize_samples(contrib, level, "contribution_"),
            summarize_samples(share, level, "share_"),
        ],
        axis=1,
    )
    total_summary = summarize_samples(total[:, None], level).iloc[0]
    out.attrs.update(
        var_theta={k: float(total_summary[k]) for k in ("median", "low", "high")},
        scale="probability",
        estimand=estimand,
        n_draws=len(total),
        sims_per_draw=sims_per_draw,
    )
    return out


def theta(
    post: Posterior,
    level: float = 0.95,
    *,
    n_draws: int = 400,
    sims_per_draw: int = 50,
    random_seed: int | None = 0,
) -> pd.DataFrame:
    """The grand mean with its panel, TEE and naive intervals side by side.

    ``panel``: the mean for this exact judge/temperature panel. ``tee`` adds the
    judge/temperature sensitivity, what another equally good pipeline would have reported
    (Messing 2026 Sec. 3.3): SE ``sqrt(E[Var(theta_hat)])``, interval from the predictive error
    mixed over the posterior of Var(theta_hat). ``naive``: ``s / sqrt(n)`` over the rows.
    For the GLMM everything is on the probability scale (the TEE error by simulating the
    design afresh per draw, ``n_draws`` x ``sims_per_draw``).

    Returns one row: ``estimate, panel_low, panel_high, tee_se, tee_low, tee_high,
    naive_estimate, naive_se, naive_low, naive_high, se_ratio, level``.

    >>> post.theta()  # doctest: +SKIP
    """
    a = (1 - level) / 2
    z = float(stats.norm.ppf(1 - a))
    d = post.design
    naive_se = d.y_sd / np.sqrt(d.n_rows)
    P = group(post.idata, "posterior")
    fam = get_family(post.family)
    mu = P[fam.theta_variable].values.ravel()
    if fam.latent:  # components on a latent scale: theta's error by simulation
        rng = np.random.default_rng(random_seed)
        draws = posterior_draws(post, n_draws, rng)
        err = pr.simulate_studies(draws, post.terms, layout(post), sims_per_draw=sims_per_draw, rng=rng)[
            "error"
        ]
        tee_se = float(np.sqrt(np.mean(err**2)))
        half = float(np.quantile(np.abs(err), 1 - 2 * a))
    else:  # components on the outcome's scale: the closed form
        contrib = comp.contributions(post.component_draws(), post.terms, d.counts)
        v = contrib.sum("component").values.ravel()
        half = comp.normal_mixture_quantile(1 - a, np.sqrt(v))
        tee_se = float(np.sqrt(np.mean(v)))
    est = float(np.median(mu))
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
    return pd.DataFrame([row])


def simulate_design(
    post: Posterior,
    *,
    strategy: pr.Strategy = "crossed",
    cells: pd.DataFrame | Literal["observed"] | None = None,
    judges: JudgeMode = "new",
    estimand: comp.Estimand = "domain",
    categories: Literal["fixed", "random"] = "fixed",
    n_draws: int = 200,
    sims_per_draw: int = 200,
    level: float = 0.9,
    random_seed: int | None = None,
    **n,
) -> pd.DataFrame:
    """Posterior-predictive simulation of proposed designs (:mod:`bayes_tee.posterior.predictive`).

    For ``n_draws`` posterior draws, simulates ``sims_per_draw`` studies of each design with
    new, independent effects for every new level, and records ``theta_hat - theta`` and the
    interval the study would report itself. ``strategy``: every judge on every call,
    CyclicJudge round-robin, or a random judge per call (Zhu et al. 2026 Sec. 3). ``cells``: a table
    of cells (``item, prompt, temperature, judge, n``) or ``"observed"`` (the fitted layout,
    missing cells and unequal replicates included). ``judges``: fixed effects drawn from the
    fitted ones (``new``) or a subset of this panel (``panel``).

    Returns one row per design: the counts, ``strategy``, ``calls``, ``se_median/low/high``,
    ``closed_form_se_median/low/high``, ``rmse``, ``bias`` (with Monte Carlo SEs),
    ``sd_ratio``, ``naive_se_median``, ``coverage_naive``, ``coverage_tee``, ``n_draws``,
    ``sims_per_draw``.

    >>> post.simulate_design(n_items=100, n_judges=3, strategy="cyclic")  # doctest: +SKIP
    """
    if "position" in post.design.facets:
        raise ValueError(
            "simulate_design does not simulate presentation orders; use the closed-form "
            "dstudy(n_positions=...) for pairwise fits."
        )
    check_judges(post, judges, n.get("n_judges"))
    rng = np.random.default_rng(random_seed)
    draws = posterior_draws(post, n_draws, rng)
    kw = dict(sims_per_draw=sims_per_draw, judges=judges, estimand=estimand, categories=categories, rng=rng)
    if cells is not None:
        if isinstance(cells, str):
            if cells != "observed":
                raise ValueError(f"cells must be a DataFrame or 'observed', got {cells!r}.")
            lay, name = layout(post), "observed"
        else:
            lay, name = pr.table_layout(cells), "table"
        row = {"strategy": name, "calls": lay.calls_per_study}
        row.update(pr.summarize_simulation(pr.simulate_studies(draws, post.terms, lay, **kw), level=level))
        return pd.DataFrame([row])
    if strategy != "crossed" and post.design.counts.get("judge", 1) < 2:
        raise ValueError("judge strategies need a fitted judge facet with two or more judges.")
    rows = []
    for d in grid_for(post, fill_categories=True, **n).to_dict("records"):
        lay = layout(post, d, strategy)
        sim = pr.simulate_studies(draws, post.terms, lay, **kw)
        rows.append(
            {
                **d,
                "strategy": strategy,
                "calls": lay.calls_per_study,
                **pr.summarize_simulation(sim, level=level),
            }
        )
    out = pd.DataFrame(rows)
    out.attrs.update(estimand=estimand, judges=judges, level=level)
    return out


def shares_figure(post: Posterior, kind: Literal["vartheta", "observation"] = "vartheta", **kwargs) -> Figure:
    """The shares bar chart of :meth:`Posterior.plot_shares`: shares of Var(theta_hat) at the
    design (``**kwargs`` go to :func:`shares`) or of the per-call variance.
    """
    with warnings.catch_warnings():  # the figure prints a failed fit's warning itself
        warnings.simplefilter("ignore", DiagnosticWarning)
        table = post.shares(**kwargs) if kind == "vartheta" else post.components()
    n = {k: v for k, v in kwargs.items() if k.startswith("n_") and k != "n_draws"}
    scale = "probability" if kwargs.get("scale") == "probability" and kind == "vartheta" else post.scale
    return plots.plot_shares(
        table,
        kind,
        counts=post.design_counts(**n),
        facets=post.design.facets,
        method=post.method,
        scale=scale,
    )
