"""The write-up paragraph, the reporting checklist and a self-contained HTML report.

Messing (2026) App. A step 5 and App. L: after a pilot the evaluator needs the paragraph for the
paper (dominant components with intervals, the corrected interval for theta next to the naive
one, the recommended design and what it buys, any diagnostic warning), the figures, and the
three-tier reporting checklist (Table 15) filled from what the data contain.

>>> text = writeup(post)                       # doctest: +SKIP
>>> report(post, "report.html", budget=5000)   # doctest: +SKIP
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
from ...plots import plot_dstudy, plot_frontier, plot_interventions
from .. import dstudy, ordinal, theta
from .. import shares as sh
from ..components import components_table
from ..power_scaling import power_scaling
from .parts import budget_plan, framed_summary, page_head, pct, png, prob, report_grid, table_html

if TYPE_CHECKING:
    from ..fit import Fit

#: Messing (2026) Table 15: tier, item, what to report.
CHECKLIST: tuple[tuple[str, str, str], ...] = (
    ("Minimum", "Prompt text", "Exact text of all prompt variants, including the system prompt"),
    ("Minimum", "Model identity", "Model name, version, API provider, date"),
    ("Minimum", "Temperature", "Temperature setting, top-p/top-k if applicable"),
    ("Minimum", "Replications", "Number per cell (R), scoring/extraction logic"),
    ("Standard", "Prompt variants", "Number (V >= 2), how generated, whether the original is included"),
    ("Standard", "Sensitivity flag", "Whether prompt sensitivity was assessed, qualitative result"),
    ("Standard", "Infrastructure", "Quantization, serving framework, batch size"),
    ("Comprehensive", "Variance decomposition", "Estimated variance components from a factorial study"),
    ("Comprehensive", "D-study projection", "Expected variance, which component dominates"),
    ("Comprehensive", "Design rationale", "Why the chosen N, V, R are adequate"),
)


def summary(post: Fit) -> str:
    """Plain-text summary: design, components, shares, theta and diagnostics.

    A failed fit is reported in the text (a final ``WARNING:`` line) rather than as a Python
    warning per table.
    """
    return framed_summary(
        post,
        lambda: [
            "\nShares of Var(theta_hat) at the observed design:",
            sh.shares(post).drop(columns="divisor").round(4).to_string(index=False),
            "\ntheta:",
            theta.theta(post).round(4).T.to_string(header=False),
            *_scale_use_lines(post),
        ],
    )


def _scale_use_lines(post: Fit) -> list[str]:
    """An ordinal fit's cutpoints per set (and each judge's latent spread): how the scale is used."""
    if post.design.outcome_levels is None:
        return []
    cut = ordinal.cutpoints(post).pivot(index="set", columns="cutpoint", values="median")
    lines = ["\nCutpoints (latent scale, posterior medians; centred per set):", cut.round(3).to_string()]
    if post.design.spread == "judge":
        spread = ordinal.judge_spreads(post).drop(columns="level").round(3)
        title = "\nJudge latent spreads (1 = the panel's geometric mean; > 1 compresses):"
        lines += [title, spread.to_string(index=False)]
    return lines


def recommendation(post: Fit, level: float = 0.9) -> pd.Series:
    """The single design change that most reduces Var(theta_hat) per extra call
    (from :meth:`bayes_tee.Posterior.interventions`), among those that reduce it with probability > 0.5.

    Returns
    -------
    pandas.Series
        The chosen row of the interventions table (``intervention``, ``change_median``, ...),
        or an empty Series when no single change helps.
    """
    t = dstudy.interventions(post, level=level)
    t = t[(t["change_median"] < 0) & (t["p_reduces"] > 0.5)]
    if t.empty:
        return pd.Series(dtype=object)
    extra = (t["calls_ratio"] - 1).clip(lower=1e-9)
    return t.loc[(-t["change_median"] / extra).idxmax()]


def writeup(post: Fit, level: float = 0.95, n_top: int = 3) -> str:
    """A paragraph for the paper: dominant components with intervals, the TEE interval of theta
    against the naive one, the recommended design change and its expected effect, and any
    diagnostic warning.

    Parameters
    ----------
    post : Fit
    level : float
        Level of the theta intervals (the share intervals are 90%).
    n_top : int
        Components named.

    Examples
    --------
    >>> print(writeup(post))  # doctest: +SKIP
    """
    return _writeup(post, theta.theta(post, level=level).iloc[0], level, n_top)


def _writeup(post: Fit, th: pd.Series, level: float, n_top: int = 3) -> str:
    """:func:`writeup` given theta's row at ``level`` (the report computes it once for both)."""
    d = post.design
    shares = sh.shares(post).sort_values("share_median", ascending=False)
    dims = ", ".join(f"{len(d.levels[f])} {f}s" for f in d.facets if f != "item")
    reps = f", {d.counts.get('replicate', 1):g} replicates per cell" if d.has_replicates else ""
    top = shares.head(n_top)
    named = "; ".join(
        f"{r.component} {pct(r.share_median)} (90% interval {pct(r.share_low)}-{pct(r.share_high)})"
        for r in top.itertuples()
    )
    fam = get_family(post.family)
    scale = fam.scale_note
    text = [
        f"We decomposed the variance of {d.n_rows:,} scored calls ({len(d.levels['item'])} items"
        f"{', ' + dims if dims else ''}{reps}) with a Bayesian crossed random-effects model "
        f"({fam.model_label}, {post.method} likelihood, "
        f"{post.priors.name} priors). The largest contributions to the variance of the benchmark score"
        f"{scale} were {named}.",
        f"The mean score is {th['estimate']:.3g}; its {level:.0%} interval accounting for every "
        f"identified source of pipeline variance is [{th['tee_low']:.3g}, {th['tee_high']:.3g}], "
        f"{th['se_ratio']:.1f} times wider in SE than the naive interval [{th['naive_low']:.3g}, "
        f"{th['naive_high']:.3g}] that treats the calls as independent.",
    ]
    rec = recommendation(post)
    if len(rec):
        se_change = 100 * (np.sqrt(1 + rec["change_median"] / 100) - 1)
        text.append(
            f"The D-study recommends '{rec['intervention']}' ({rec['calls_ratio']:.2g} times the calls): it "
            f"changes Var(theta_hat) by {rec['change_median']:.0f}% "
            f"(90% interval {rec['change_low']:.0f}% to "
            f"{rec['change_high']:.0f}%; probability {prob(rec['p_reduces'])} that it helps), an expected "
            f"{-se_change:.0f}% reduction of the SE."
        )
    else:
        text.append("No single design change reduces Var(theta_hat) with posterior probability above 0.5.")
    msg = diag.message(post.diagnostics())
    text.append(
        f"Warning: the fit failed its convergence diagnostics ({msg}); treat these numbers as provisional."
        if msg
        else "All convergence diagnostics passed (R-hat <= 1.01, bulk and tail ESS >= 400, no divergences, "
        "no transition at the maximum tree depth, E-BFMI >= 0.3)."
    )
    return " ".join(text)


def checklist(post: Fit, metadata: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Messing (2026)'s three-tier reporting checklist (Table 15) filled from the data.

    Items the data answer (replications, prompt variants, the decomposition, the D-study) are
    filled in; items only the evaluator knows (prompt texts, model versions, infrastructure)
    come from ``metadata`` (keyed by item name) or are marked missing.

    Returns
    -------
    pandas.DataFrame
        ``tier, item, report, status, value`` with ``status`` one of ``from data``,
        ``from metadata``, ``missing``.
    """
    metadata = dict(metadata or {})
    d = post.design
    lv = d.levels
    shares = sh.shares(post).sort_values("share_median", ascending=False)
    dom = shares.iloc[0]
    rec = recommendation(post)
    V = len(lv.get("prompt", ())) or 1
    known = {
        "Model identity": f"judges in the data: {', '.join(map(str, lv['judge']))}"
        if "judge" in lv
        else None,
        "Temperature": f"temperatures in the data: {', '.join(map(str, lv['temperature']))}"
        if "temperature" in lv
        else None,
        "Replications": f"R = {d.counts.get('replicate', 1):g} per cell"
        + ("" if d.balanced else " (mean; unbalanced)"),
        "Prompt variants": f"V = {V}" if V >= 2 else None,
        "Sensitivity flag": (
            f"assessed: prompt share of Var(theta_hat) "
            f"{pct(float(shares.set_index('component').loc['prompt', 'share_median']))}"
        )
        if "prompt" in set(shares["component"])
        else None,
        "Variance decomposition": f"{len(shares)} components; largest {dom['component']} "
        f"({pct(dom['share_median'])} of Var(theta_hat))",
        "D-study projection": f"Var(theta_hat) median {shares.attrs['var_theta']['median']:.3g}; "
        f"dominant component {dom['component']}",
        "Design rationale": f"recommended next change: {rec['intervention']} "
        f"({rec['change_median']:.0f}% Var(theta_hat))"
        if len(rec)
        else None,
    }
    rows = []
    for tier, item, what in CHECKLIST:
        if item in metadata:
            status, value = "from metadata", metadata[item]
        elif known.get(item):
            status, value = "from data", known[item]
        else:
            status, value = "missing", ""
        rows.append({"tier": tier, "item": item, "report": what, "status": status, "value": value})
    return pd.DataFrame(rows)


def _theta_table(th: pd.DataFrame) -> str:
    """Theta as three rows (TEE, panel, naive) of estimate, SE and interval: fits the page."""
    r = th.iloc[0]
    rows = [
        {"interval": "TEE (all sources of noise)", "estimate": r["estimate"], "se": r["tee_se"],
         "low": r["tee_low"], "high": r["tee_high"]},
        {"interval": "panel (these prompts, judges, temperatures)", "estimate": r["estimate"],
         "se": np.nan, "low": r["panel_low"], "high": r["panel_high"]},
        {"interval": "naive (calls as independent)", "estimate": r["naive_estimate"], "se": r["naive_se"],
         "low": r["naive_low"], "high": r["naive_high"]},
    ]  # fmt: skip
    note = f"<p>{r['level']:.0%} intervals; the TEE SE is {r['se_ratio']:.1f}x the naive SE.</p>"
    return table_html(pd.DataFrame(rows)) + note


def report(
    post: Fit,
    path: str | Path,
    *,
    budget: float | None = None,
    cost_per_call: float | Mapping[str, float] = 1.0,
    metadata: Mapping[str, str] | None = None,
    title: str = "Total evaluation error report",
    level: float = 0.95,
) -> Path:
    """Write a self-contained HTML report (figures embedded as PNG, no external resources).

    Sections: write-up, diagnostics, design, components and shares (table and figure), theta,
    D-study curves, interventions, budget frontier, prior sensitivity (power-scaling), and the
    reporting checklist.

    Parameters
    ----------
    post : Fit
    path : str or Path
        Output ``.html`` file.
    budget : float, optional
        Budget of the allocation section; default four times the cost of the pilot.
    cost_per_call : float or dict
        Price per call (or per judge), as in :meth:`bayes_tee.Posterior.allocate`.
    metadata : dict, optional
        Checklist entries only the evaluator knows (``"Prompt text"``, ``"Model identity"``...).
    title : str
    level : float
        Level of the theta intervals.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> report(post, "report.html", budget=5000)  # doctest: +SKIP
    """
    path = writable_file(path, "report.html")
    d = post.design
    dst = dstudy.dstudy(post, **report_grid(post))
    inter = dstudy.interventions(post)
    budget, plan = budget_plan(post, budget, cost_per_call)
    try:
        sens = power_scaling(post)
    except ValueError as err:  # a cell/GLMM posterior saved without its effects
        sens = None
        sens_note = str(err)
    th = theta.theta(post, level=level)
    parts = [
        *page_head(post, title, _writeup(post, th.iloc[0], level)),
        f"<p>{d.n_rows:,} calls used; {sum(d.dropped.values())} rows dropped (missing score or role).</p>",
        "<h2>Variance components and shares</h2>",
        f"<p>Components on the {post.scale} scale, 90% intervals.</p>",
        table_html(components_table(post.component_draws())),
        table_html(sh.shares(post).drop(columns="divisor")),
        png(sh.shares_figure(post, diag.record(sh.shares(post), post.diagnostics()))),
        "<h2>theta: corrected and naive intervals</h2>",
        _theta_table(th),
        "<h2>D-study</h2>",
        png(plot_dstudy(dst)),
        table_html(dst.sort_values("se_median").head(12).drop(columns=["var_ratio_low", "var_ratio_high"])),
        "<h2>Single design changes</h2>",
        png(plot_interventions(inter)),
        table_html(inter),
        f"<h2>Budget allocation (budget {budget:,.0f})</h2>",
        png(plot_frontier(plan)),
        table_html(pd.DataFrame([plan.best])),
        "<h2>Prior sensitivity (power-scaling)</h2>",
        table_html(sens) if sens is not None else f"<p>Not available: {html.escape(sens_note)}</p>",
        "<p>Prior above 0.05: the prior is informative for that component; with the likelihood also above "
        "0.05 prior and data conflict, below it the data say little. Refit under other priors with "
        "<code>bt.prior_sensitivity</code>.</p>",
        "<h2>Reporting checklist (Messing 2026 Table 15)</h2>",
        _checklist_html(checklist(post, metadata)),
        "</body></html>",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _checklist_html(t: pd.DataFrame) -> str:
    rows = "".join(
        f"<tr><td>{r.tier}</td><td>{html.escape(r.item)}</td><td>{html.escape(r.report)}</td>"
        f"<td class='{'missing' if r.status == 'missing' else ''}'>{r.status}</td>"
        f"<td>{html.escape(str(r.value))}</td></tr>"
        for r in t.itertuples()
    )
    return (
        "<table class='t'><tr><th>tier</th><th>item</th><th>report</th><th>status</th><th>value</th></tr>"
        f"{rows}</table>"
    )
