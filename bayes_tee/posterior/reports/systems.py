"""Text and HTML of a fit that compares systems: the summary, the paragraph for the paper and
the report, around the leaderboard (:mod:`bayes_tee.posterior.leaderboard`) instead of one
benchmark score. The :class:`bayes_tee.Posterior` methods ``summary``, ``writeup`` and ``report`` call
these when the fit has ``system=``.

>>> print(writeup(post))  # doctest: +SKIP
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from ..._core import diagnostics as diag
from ..._core.files import writable_file
from ...families import get_family
from ...plots import plot_cost_front, plot_dstudy, plot_frontier, plot_leaderboard, plot_p_better, plot_ranks
from .. import leaderboard as board
from .. import separation as rel
from ..cost_front import Cost
from ..tie_groups import letter_names
from .parts import budget_plan, framed_summary, page_head, pct, png, prob, report_grid, table_html

if TYPE_CHECKING:
    from ..fit import Fit

#: Pairs shown in the text and the report: the closest ones, where a ranking is decided.
N_PAIRS = 12


def summary(post: Fit) -> str:
    """Plain-text summary of a comparison: design, components, leaderboard, the closest
    pairs, what sets the SE of a difference, and diagnostics.
    """

    def middle() -> list[str]:
        table = board.leaderboard(post)
        pairs = board.pairs(post)
        pairs = pairs.reindex(pairs["difference"].abs().sort_values().index).head(N_PAIRS)
        return [
            "\nLeaderboard (90% intervals; " + table.attrs["note"] + "):",
            table.round(4).to_string(index=False),
            "\nClosest pairs (difference a - b, 90% and simultaneous intervals):",
            pairs.round(4).to_string(index=False),
            "\nShares of the variance of a difference between two systems:",
            rel.difference_shares(post).drop(columns="divisor").round(4).to_string(index=False),
        ]

    return framed_summary(post, middle)


def writeup(post: Fit, level: float = 0.9, n_top: int = 2) -> str:
    """A paragraph for the paper: the leaderboard's top, how sure its order is, what sets the
    SE of a difference, and the design that would separate close systems.

    Parameters
    ----------
    post : Fit
        A fit with ``system=``.
    level : float
        Level of the intervals.
    n_top : int
        Components named among the sources of a difference's error.
    """
    d = post.design
    system = board.require_systems(post)
    table = board.leaderboard(post, level=level)
    pairs = board.pairs(post, level=level)
    shares = rel.difference_shares(post, level=level).sort_values("share_median", ascending=False)
    S = len(d.levels[system])
    dims = ", ".join(f"{len(d.levels[f])} {f}s" for f in d.facets if f not in ("item", system))
    best, second = table.iloc[0], table.iloc[1]
    top = pairs[(pairs["system_a"] == best["system"]) & (pairs["system_b"] == second["system"])].iloc[0]
    resolved = (pairs["low"] > 0) | (pairs["high"] < 0)
    sim_resolved = (pairs["simultaneous_low"] > 0) | (pairs["simultaneous_high"] < 0)
    named = "; ".join(
        f"{r.component} {pct(r.share_median)} ({pct(r.share_low)}-{pct(r.share_high)})"
        for r in shares.head(n_top).itertuples()
    )
    gap = float(np.median(np.abs(np.diff(table["estimate"].to_numpy()))))
    sep = rel.separation(post, n_items=sorted({int(d.counts["item"]), int(2 * d.counts["item"]),
                                              int(4 * d.counts["item"])}), gap=gap, level=level)  # fmt: skip
    text = [
        f"We compared {S} systems on {len(d.levels['item'])} items ({dims}; {d.n_rows:,} scored calls) "
        f"in one Bayesian crossed random-effects model ({post.method} likelihood, {post.priors.name} "
        f"priors), the systems a fixed factor and their interactions with every random facet variance "
        f"components.",
        *_scale_sentence(post),
        f"{best['system']} ranks first ({best['estimate']:.3g}; {level:.0%} interval over new "
        f"{'items and prompts' if 'prompt' in d.facets else 'items'} [{best['new_low']:.3g}, "
        f"{best['new_high']:.3g}], for these judges and prompts [{best['panel_low']:.3g}, "
        f"{best['panel_high']:.3g}]) with probability {prob(best['p_best'])} of being best; it leads "
        f"{second['system']} by {top['difference']:.3g} [{top['low']:.3g}, {top['high']:.3g}], "
        f"P(ahead) {prob(top['p_a_better'])}.",
        f"{int(resolved.sum())} of {len(pairs)} pairwise differences exclude zero at {level:.0%} "
        f"({int(sim_resolved.sum())} with simultaneous intervals over all pairs).",
        _groups_sentence(table),
        f"The error of a difference between two systems comes mostly from {named}: shared effects "
        "(an item's difficulty, a judge's leniency) cancel in a comparison.",
        f"A typical gap between adjacent systems ({gap:.3g}) is resolved with probability "
        f"{prob(sep['p_resolved'].iloc[0])} at {int(sep['n_items'].iloc[0])} items and "
        f"{prob(sep['p_resolved'].iloc[-1])} at {int(sep['n_items'].iloc[-1])}.",
    ]
    msg = diag.message(post.diagnostics())
    text.append(
        f"Warning: the fit failed its convergence diagnostics ({msg}); treat these numbers as provisional."
        if msg
        else "All convergence diagnostics passed."
    )
    return " ".join(text)


def _groups_sentence(table: pd.DataFrame) -> str:
    """How many tie groups, and who is tied with the leader."""
    groups, leader = table.attrs["groups"], table["system"].iloc[0]
    tied = [s for s in table["system"] if s != leader and any(leader in g and s in g for g in groups)]
    with_lead = (
        f"{leader} is not separated from {', '.join(tied)}"
        if tied
        else f"{leader} is separated from every other system"
    )
    return (
        f"The simultaneous intervals form {len(groups)} tie group{'s' if len(groups) != 1 else ''} "
        f"(a compact letter display); {with_lead}."
    )


def _scale_sentence(post: Fit) -> list[str]:
    """For a binomial or ordinal comparison: in what units its scores are, and on what scale
    its variance components are.
    """
    scale = board.score_scale(post)
    if scale == "outcome":
        return []
    return [
        f"Scores are each system's {scale} over the population of items (and prompts); the variance "
        f"components and the shares of a difference are on the latent ({get_family(post.family).link}) "
        "scale."
    ]


def _front(table: pd.DataFrame) -> list[str]:
    """The report's cost front: what ``p_pareto`` means, and the figure."""
    return [
        "<h3>Cost front</h3>",
        "<p><b>p_pareto</b>: the posterior probability that no system as cheap or cheaper scores "
        f"better. On the estimates' front: {html.escape(', '.join(table.attrs['front']))}.</p>",
        png(plot_cost_front(table)),
    ]


def report(
    post: Fit,
    path: str | Path,
    *,
    budget: float | None = None,
    cost_per_call: float | Mapping[str, float] = 1.0,
    metadata: Mapping[str, str] | None = None,
    title: str = "Comparison of systems",
    level: float = 0.9,
    cost: Cost | None = None,
    cost_column: str | None = None,
) -> Path:
    """Write the self-contained HTML report of a comparison: write-up, diagnostics, design,
    leaderboard (table and forest plot), rank distributions, pairwise differences and
    P(row beats column), what sets the SE of a difference, the relative D-study and the budget
    that separates two systems. The leaderboard shows each system's tie group; with ``cost``
    (per system, or a table of calls and their cost:
    :func:`bayes_tee.posterior.cost_front.system_costs`) its ``p_pareto`` and the cost front.
    ``metadata`` is accepted for the single-system report's signature and not used here.
    """
    path = writable_file(path, "report.html")
    table = board.leaderboard(post, level=level, cost=cost, cost_column=cost_column)
    pairs = board.pairs(post, level=level)
    closest = pairs.reindex(pairs["difference"].abs().sort_values().index).head(N_PAIRS)
    dst = rel.separation(post, **report_grid(post))
    budget, plan = budget_plan(post, budget, cost_per_call)
    parts = [
        *page_head(post, title, writeup(post, level=level)),
        "<h2>Leaderboard</h2>",
        f"<p>{level:.0%} intervals. <b>panel</b>: for these judges and prompts, over the item "
        f"population; <b>new</b>: {html.escape(table.attrs['note'].removeprefix('new: '))}.</p>",
        f"<p><b>group</b>: systems sharing a letter are not separated: the simultaneous {level:.0%} "
        f"interval of their difference (all {len(pairs)} pairs at once) contains 0. Groups: "
        + "; ".join(
            f"<b>{k}</b> {html.escape(', '.join(g))}"
            for k, g in zip(letter_names(len(table.attrs["groups"])), table.attrs["groups"])
        )
        + ".</p>",
        table_html(table),
        png(plot_leaderboard(table)),
        *(_front(table) if cost is not None else []),
        png(plot_ranks(board.rank_probabilities(post))),
        "<h2>Pairwise differences</h2>",
        f"<p>The {len(closest)} closest pairs of {len(pairs)}; simultaneous intervals hold for all "
        f"pairs at once (Sidak, {pairs.attrs['simultaneous_level']:.4f} each).</p>",
        table_html(closest),
        png(plot_p_better(board.p_better_matrix(post, table=pairs))),
        "<h2>What sets the error of a difference</h2>",
        table_html(rel.difference_shares(post).drop(columns="divisor")),
        "<h2>Relative D-study: the SE of a difference</h2>",
        png(plot_dstudy(dst)),
        table_html(dst.sort_values("se_median").head(12).drop(columns=["var_ratio_low", "var_ratio_high"])),
        f"<h2>Budget to separate two systems (budget {budget:,.0f}, every system scored)</h2>",
        png(plot_frontier(plan)),
        table_html(pd.DataFrame([plan.best])),
        "</body></html>",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
