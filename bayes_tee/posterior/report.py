"""The write-up paragraph, the reporting checklist and a self-contained HTML report.

Messing (2026) App. A step 5 and App. L: after a pilot the evaluator needs the paragraph for the
paper (dominant components with intervals, the corrected interval for theta next to the naive
one, the recommended design and what it buys, any diagnostic warning), the figures, and the
three-tier reporting checklist (Table 15) filled from what the data contain.

>>> text = writeup(post)                       # doctest: +SKIP
>>> report(post, "report.html", budget=5000)   # doctest: +SKIP
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from .._core import diagnostics as diag
from .._core.exceptions import DiagnosticWarning
from .._core.files import writable_file
from .._core.version import __version__
from ..families import get_family
from ..plots import plot_dstudy, plot_frontier, plot_interventions

if TYPE_CHECKING:
    from .facade import Posterior

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


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # reported once, in the text
        return fn(*args, **kwargs)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if x >= 0.01 else f"{100 * x:.1f}%"


def _prob(p: float) -> str:
    return "> 99%" if p > 0.99 else "< 1%" if p < 0.01 else f"{p:.0%}"


def summary(post: Posterior) -> str:
    """Plain-text summary: design, components, shares, theta and diagnostics.

    A failed fit is reported in the text (a final ``WARNING:`` line) rather than as a Python
    warning per table.
    """
    return framed_summary(
        post,
        lambda: [
            "\nShares of Var(theta_hat) at the observed design:",
            post.shares().drop(columns="divisor").round(4).to_string(index=False),
            "\ntheta:",
            post.theta().round(4).T.to_string(header=False),
            *_scale_use_lines(post),
        ],
    )


def _scale_use_lines(post: Posterior) -> list[str]:
    """An ordinal fit's cutpoints per set (and each judge's latent spread): how the scale is used."""
    if post.design.outcome_levels is None:
        return []
    cut = post.cutpoints().pivot(index="set", columns="cutpoint", values="median")
    lines = ["\nCutpoints (latent scale, posterior medians; centred per set):", cut.round(3).to_string()]
    if post.design.spread == "judge":
        spread = post.judge_spreads().drop(columns="level").round(3)
        title = "\nJudge latent spreads (1 = the panel's geometric mean; > 1 compresses):"
        lines += [title, spread.to_string(index=False)]
    return lines


def framed_summary(post: Posterior, middle) -> str:
    """A plain-text summary: the fit's line, model, likelihood and components, then the lines
    ``middle()`` returns (called with the diagnostics warning silenced), then the diagnostics
    and, for a failed fit, a final ``WARNING:`` line.
    """
    with pd.option_context("display.width", 120, "display.max_columns", 20), warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)
        parts = [
            repr(post),
            f"Model: {post.formula}",
            *([f"Likelihood: {post.info['method_note']}"] if post.info.get("method_note") else []),
            "\nPer-observation components (variance scale, 90% intervals):",
            post.components().round(5).to_string(index=False),
            *middle(),
            "\nDiagnostics: "
            + ", ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in post.diagnostics().items()
                if k != "problems"
            ),
        ]
    msg = diag.message(post.diagnostics())
    if msg:
        parts.append("WARNING: " + msg)
    return "\n".join(parts)


def recommendation(post: "Posterior", level: float = 0.9) -> pd.Series:
    """The single design change that most reduces Var(theta_hat) per extra call
    (from :meth:`Posterior.interventions`), among those that reduce it with probability > 0.5.

    Returns
    -------
    pandas.Series
        The chosen row of the interventions table (``intervention``, ``change_median``, ...),
        or an empty Series when no single change helps.
    """
    t = _quiet(post.interventions, level=level)
    t = t[(t["change_median"] < 0) & (t["p_reduces"] > 0.5)]
    if t.empty:
        return pd.Series(dtype=object)
    extra = (t["calls_ratio"] - 1).clip(lower=1e-9)
    return t.loc[(-t["change_median"] / extra).idxmax()]


def writeup(post: "Posterior", level: float = 0.95, n_top: int = 3) -> str:
    """A paragraph for the paper: dominant components with intervals, the TEE interval of theta
    against the naive one, the recommended design change and its expected effect, and any
    diagnostic warning.

    Parameters
    ----------
    post : Posterior
    level : float
        Level of the theta intervals (the share intervals are 90%).
    n_top : int
        Components named.

    Examples
    --------
    >>> print(writeup(post))  # doctest: +SKIP
    """
    d = post.design
    shares = _quiet(post.shares).sort_values("share_median", ascending=False)
    th = _quiet(post.theta, level=level).iloc[0]
    dims = ", ".join(f"{len(d.levels[f])} {f}s" for f in d.facets if f != "item")
    reps = f", {d.counts.get('replicate', 1):g} replicates per cell" if d.has_replicates else ""
    top = shares.head(n_top)
    named = "; ".join(
        f"{r.component} {_pct(r.share_median)} (90% interval {_pct(r.share_low)}-{_pct(r.share_high)})"
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
            f"{rec['change_high']:.0f}%; probability {_prob(rec['p_reduces'])} that it helps), an expected "
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


def checklist(post: "Posterior", metadata: Mapping[str, str] | None = None) -> pd.DataFrame:
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
    shares = _quiet(post.shares).sort_values("share_median", ascending=False)
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
            f"{_pct(float(shares.set_index('component').loc['prompt', 'share_median']))}"
        )
        if "prompt" in set(shares["component"])
        else None,
        "Variance decomposition": f"{len(shares)} components; largest {dom['component']} "
        f"({_pct(dom['share_median'])} of Var(theta_hat))",
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


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


PLURALS = {"temperature": "temperatures", "category": "categories", "position": "positions"}


def design_line(post: "Posterior") -> str:
    """One line on the design and the fit, for the report's header.

    >>> design_line(post)  # doctest: +SKIP
    '40 items × 3 prompts × 3 judges × 2 temperatures, 3 replicates per cell; 2,160 calls; ...'
    """
    d = post.design
    facets = " × ".join(f"{d.counts[f]} {PLURALS.get(f, f + 's')}" for f in d.facets)
    n = d.cells["n"]
    reps = f"{int(n.min())}" if n.min() == n.max() else f"{int(n.min())}-{int(n.max())}"
    dropped = sum(d.dropped.values())
    calls = f"{d.n_rows:,} calls" + (f" ({dropped:,} dropped)" if dropped else "")
    layout = "balanced" if d.balanced else f"unbalanced ({d.n_cells:,} of {d.n_full_cells:,} cells)"
    dg = post.diagnostics()
    status = "diagnostics passed" if dg["ok"] else "DIAGNOSTICS FAILED"
    return (
        f"{facets}, {reps} replicate(s) per cell; {calls}; {layout}; {post.family} family, "
        f"{post.method} likelihood, {dg['n_draws']:,} draws; {status}"
    )


def _decimals(values: np.ndarray) -> int:
    """Decimals that give the column's largest magnitude three significant digits."""
    finite = np.abs(values[np.isfinite(values)])
    top = finite.max() if finite.size and finite.max() > 0 else 1.0
    return int(np.clip(2 - np.floor(np.log10(top)), 0, 6))


STATS = ("median", "mean", "low", "high", "sd", "se")


def _group(name: str) -> str:
    """Columns summarising one quantity (``x_median, x_low, x_high``; ``mean, median, low,
    high``) share one format.
    """
    stem, _, stat = name.rpartition("_")
    if stat in STATS:
        return stem
    return "" if name in STATS else name


def format_table(df: pd.DataFrame) -> pd.DataFrame:
    """Numbers as a reader expects them: shares and probabilities as percentages, counts with
    thousands separators, and the columns of one quantity (median, interval) in one fixed
    format with three significant digits on its largest value (a value that would print as
    zero shows as ``<0.001``), never scientific notation beside plain decimals.

    >>> format_table(pd.DataFrame({"component": ["a", "b"], "median": [0.05684, 9.455e-05],
    ...                            "high": [0.2, 0.01], "share_median": [0.9, 0.001]}))
      component  median   high share_median
    0         a   0.057  0.200        90.0%
    1         b  <0.001  0.010         0.1%
    """
    out = df.copy()
    numeric = [c for c in out.columns if pd.api.types.is_numeric_dtype(out[c]) and out[c].dtype != bool]
    groups: dict[str, list] = {}
    for col in numeric:
        groups.setdefault(_group(str(col)), []).append(col)
    for key, cols in groups.items():
        values = out[cols].to_numpy(dtype=float)
        if key.startswith(("share", "p_", "prob")) or key.endswith(("share", "_prob")):
            for col in cols:
                out[col] = [
                    f"{100 * a:.1f}%" if np.isfinite(a) else "" for a in out[col].to_numpy(dtype=float)
                ]
            continue
        finite = values[np.isfinite(values)]
        if (
            finite.size
            and np.all(finite == np.round(finite))
            and (
                np.abs(finite).max() >= 10
                or key.startswith("n_")
                or all(out[c].dtype.kind in "iu" for c in cols)
            )
        ):
            for col in cols:
                out[col] = [f"{int(a):,}" if np.isfinite(a) else "" for a in out[col].to_numpy(dtype=float)]
            continue
        k = _decimals(values.ravel())
        floor = 10.0**-k
        for col in cols:
            out[col] = [
                "" if not np.isfinite(a) else (f"<{floor:.{k}f}" if 0 < abs(a) < floor / 2 else f"{a:,.{k}f}")
                for a in out[col].to_numpy(dtype=float)
            ]
    return out


def _table(df: pd.DataFrame) -> str:
    body = format_table(df).to_html(index=False, border=0, classes="t")
    return f"<div class='tw'>{body}</div>"


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
    return _table(pd.DataFrame(rows)) + note


CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1000px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}h1{font-size:1.6em}h2{font-size:1.2em;
border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}table.t{border-collapse:collapse;
font-size:.85em;margin:.5em 0}table.t th,table.t td{padding:.2em .6em;border-bottom:1px solid #eee;
text-align:right}table.t th{background:#f6f6f6}table.t td:first-child,table.t th:first-child{text-align:left}
.warn{background:#fde8e8;border-left:4px solid #c44e52;padding:.6em 1em}.ok{background:#e8f5e9;
border-left:4px solid #55a868;padding:.6em 1em}.para{background:#f7f7fb;padding:.8em 1em}
img{max-width:100%}.missing{color:#c44e52;font-weight:600}.tw{overflow-x:auto;max-width:100%}
.sub{color:#555;margin-top:-.6em}.stamp{color:#888;font-size:.8em}"""


def report_grid(post: "Posterior") -> dict[str, list[int]]:
    """The D-study grid a report draws: items from a quarter to 8x the observed count, prompts
    1, as observed and 5.
    """
    c = post.design.counts
    items = sorted({int(x) for x in np.geomspace(max(5, c["item"] / 4), c["item"] * 8, 10).round()})
    return {"n_items": items, "n_prompts": sorted({1, int(c.get("prompt", 1)), 5})}


def budget_plan(
    post: "Posterior", budget: float | None, cost_per_call: float | Mapping[str, float]
) -> tuple[float, object]:
    """The report's budget (default: four times what the pilot's calls cost) and the plan
    :meth:`Posterior.allocate` makes at it, with up to 8x the observed items.
    """
    price = (
        float(np.mean(list(cost_per_call.values())))
        if isinstance(cost_per_call, Mapping)
        else float(cost_per_call)
    )
    budget = float(budget) if budget is not None else 4 * float(post.design.n_rows) * price
    items = int(post.design.counts["item"] * 8)
    return budget, _quiet(post.allocate, budget, cost_per_call=cost_per_call, max_items=items)


def page_head(post: "Posterior", title: str, paragraph: str) -> list[str]:
    """The HTML every report opens with: title, design line, stamp, the write-up ``paragraph``,
    the diagnostics (a failed fit in red) and the design table.
    """
    d, dg = post.design, post.diagnostics()
    msg = diag.message(dg)
    return [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>",
        f"<p class='sub'>{html.escape(design_line(post))}</p>",
        f"<p class='stamp'>bayes_tee {__version__}; outcome column {html.escape(str(d.roles.outcome))!s}, "
        f"{post.scale} scale</p>",
        "<h2>Write-up</h2>",
        f"<p class='para'>{html.escape(paragraph)}</p>",
        "<h2>Diagnostics</h2>",
        f"<div class='warn'>WARNING: {html.escape(msg)}</div>"
        if msg
        else "<div class='ok'>All diagnostics passed.</div>",
        _table(pd.DataFrame([{k: v for k, v in dg.items() if k != "problems"}])),
        "<h2>Design</h2>",
        _table(d.summary().fillna("")),
    ]


def report(
    post: "Posterior",
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
    post : Posterior
    path : str or Path
        Output ``.html`` file.
    budget : float, optional
        Budget of the allocation section; default four times the cost of the pilot.
    cost_per_call : float or dict
        Price per call (or per judge), as in :meth:`Posterior.allocate`.
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
    dst = _quiet(post.dstudy, **report_grid(post))
    inter = _quiet(post.interventions)
    budget, plan = budget_plan(post, budget, cost_per_call)
    try:
        sens = post.sensitivity()
    except ValueError as err:  # a cell/GLMM posterior saved without its effects
        sens = None
        sens_note = str(err)
    th = _quiet(post.theta, level=level)
    parts = [
        *page_head(post, title, writeup(post, level=level)),
        f"<p>{d.n_rows:,} calls used; {sum(d.dropped.values())} rows dropped (missing score or role).</p>",
        "<h2>Variance components and shares</h2>",
        f"<p>Components on the {post.scale} scale, 90% intervals.</p>",
        _table(_quiet(post.components)),
        _table(_quiet(post.shares).drop(columns="divisor")),
        _png(post.plot_shares()),
        "<h2>theta: corrected and naive intervals</h2>",
        _theta_table(th),
        "<h2>D-study</h2>",
        _png(plot_dstudy(dst)),
        _table(dst.sort_values("se_median").head(12).drop(columns=["var_ratio_low", "var_ratio_high"])),
        "<h2>Single design changes</h2>",
        _png(plot_interventions(inter)),
        _table(inter),
        f"<h2>Budget allocation (budget {budget:,.0f})</h2>",
        _png(plot_frontier(plan)),
        _table(pd.DataFrame([plan.best])),
        "<h2>Prior sensitivity (power-scaling)</h2>",
        _table(sens) if sens is not None else f"<p>Not available: {html.escape(sens_note)}</p>",
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
