"""Posterior-predictive simulation of proposed designs (the :class:`Fit` method
``simulate_design``), and the draws and layouts every simulation of a fit starts from: the
answers no closed form gives (the logit GLMM's probability scale, judge strategies, any table
of cells) go through :mod:`bayes_tee.posterior.predictive`.

>>> simulate_design(post, n_items=100, n_judges=3, strategy="cyclic")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError, DesignError
from .._core.trees import group
from ..design.terms import FACETS
from ..gstudy.divisors import Estimand
from ..gstudy.layouts import Layout, Strategy, crossed_layout, table_layout
from ..gstudy.weights import FIELDS, JudgeMode
from . import predictive as pr
from .dstudy import check_judges, grid_for

#: Why a fit that compares systems is not simulated.
ON_SYSTEMS = (
    "simulate_design simulates one system's study; for a comparison of systems the closed-form "
    "relative D-study is post.dstudy(n_items=..., gap=...)."
)

if TYPE_CHECKING:
    from .fit import Fit


def posterior_draws(post: Fit, n_draws: int, rng: np.random.Generator):
    """``n_draws`` posterior draws (without replacement, in order) as a simulation needs them."""
    P = group(post.idata, "posterior")
    total = P.sizes["chain"] * P.sizes["draw"]
    index = np.sort(rng.choice(total, size=min(n_draws, total), replace=False))
    return pr.draws_from(P, post.terms, index, post.family, post.design.outcome_levels)


def layout(post: Fit, design: dict | None = None, strategy: Strategy = "crossed") -> Layout:
    """The observed cells (``design=None``) or a crossed design with counts as given."""
    if design is None:
        return table_layout(post.design.cells[[*post.design.facets, "n"]], post.design.item_category)
    c = post.design.counts
    d = {
        f: (design.get(f) if design.get(f) is not None else c.get(facet, 1.0)) for f, facet in FIELDS.items()
    }
    return crossed_layout(
        d["n_items"],
        d["n_prompts"],
        d["n_temperatures"],
        d["n_judges"],
        round(d["n_replicates"]),
        d["n_categories"],
        strategy=strategy,
    )


def simulate_design(
    post: Fit,
    *,
    strategy: Strategy = "crossed",
    cells: pd.DataFrame | Literal["observed"] | None = None,
    judges: JudgeMode = "new",
    estimand: Estimand = "domain",
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
    other = [f for f in post.design.facets if f not in FACETS]
    if other:
        raise DesignError(
            f"simulate_design simulates studies over the roles' facets ({', '.join(FACETS)}); this "
            f"fit also has {', '.join(repr(f) for f in other)}. Project it in closed form with "
            f"post.dstudy(n={{{other[0]!r}: [...]}})."
        )
    if "position" in post.design.facets:
        raise ArgumentError(
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
                raise ArgumentError(f"cells must be a DataFrame or 'observed', got {cells!r}.")
            lay, name = layout(post), "observed"
        else:
            lay, name = table_layout(cells), "table"
        row = {"strategy": name, "calls": lay.calls_per_study}
        row.update(pr.summarize_simulation(pr.simulate_studies(draws, post.terms, lay, **kw), level=level))
        return pd.DataFrame([row])
    if strategy != "crossed" and post.design.counts.get("judge", 1) < 2:
        raise ArgumentError("judge strategies need a fitted judge facet with two or more judges.")
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
