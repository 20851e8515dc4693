"""The pieces every report shares: number formats, tables and figures as HTML, the page head,
the framed plain-text summary, the D-study grid and the budget plan a report draws.

>>> format_table(pd.DataFrame({"share_median": [0.9]}))
  share_median
0        90.0%
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from ..._core import diagnostics as diag
from ..._core.exceptions import DiagnosticWarning
from ..._core.version import __version__
from ..budget import Plan, allocate
from ..coefficients import coefficients, covariate_variance
from ..components import components_table
from ..fit import describe

if TYPE_CHECKING:
    from ..fit import Fit


def pct(x: float) -> str:
    """A share as a percentage, one decimal below 1%."""
    return f"{100 * x:.0f}%" if x >= 0.01 else f"{100 * x:.1f}%"


def prob(p: float) -> str:
    """A probability as a percentage, ``> 99%`` and ``< 1%`` at the ends."""
    return "> 99%" if p > 0.99 else "< 1%" if p < 0.01 else f"{p:.0%}"


def framed_summary(post: Fit, middle) -> str:
    """A plain-text summary: the fit's line, model, likelihood and components, then the lines
    ``middle()`` returns (called with the diagnostics warning silenced), then the diagnostics
    and, for a failed fit, a final ``WARNING:`` line.
    """
    with pd.option_context("display.width", 120, "display.max_columns", 20), warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)
        parts = [
            describe(post),
            f"Model: {post.formula}",
            *([f"Likelihood: {post.info['method_note']}"] if post.info.get("method_note") else []),
            "\nPer-observation components (variance scale, 90% intervals):",
            components_table(post.component_draws()).round(5).to_string(index=False),
            *covariate_lines(post),
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


def covariate_lines(post: Fit) -> list[str]:
    """The summary's lines on a fit's covariates: every slope per unit of its column and the
    variance each slope term explains (none without covariates).
    """
    if post.design.covariates is None:
        return []
    cols = ["term", "kind", "level", "estimate", "low", "high", "per_sd"]
    table = coefficients(post)
    return [
        "\nCovariates (slopes per unit of each column, 90% intervals; leaderboards take control=):",
        table[[c for c in [*cols, "outcome_estimate"] if c in table]].round(5).to_string(index=False),
        "Variance each slope term explains (beside the components):",
        covariate_variance(post).round(5).to_string(index=False),
    ]


def png(fig) -> str:
    """A figure as an embedded PNG ``<img>`` (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


PLURALS = {"temperature": "temperatures", "category": "categories", "position": "positions"}


def design_line(post: Fit) -> str:
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
        if key.startswith(("share", "p_", "prob")) or key.endswith(("share", "prob")):
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


def table_html(df: pd.DataFrame) -> str:
    """A table as HTML in the report's number formats (:func:`format_table`), scrolling when wide."""
    body = format_table(df).to_html(index=False, border=0, classes="t")
    return f"<div class='tw'>{body}</div>"


CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1000px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}h1{font-size:1.6em}h2{font-size:1.2em;
border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}table.t{border-collapse:collapse;
font-size:.85em;margin:.5em 0}table.t th,table.t td{padding:.2em .6em;border-bottom:1px solid #eee;
text-align:right}table.t th{background:#f6f6f6}table.t td:first-child,table.t th:first-child{text-align:left}
.warn{background:#fde8e8;border-left:4px solid #c44e52;padding:.6em 1em}.ok{background:#e8f5e9;
border-left:4px solid #55a868;padding:.6em 1em}.para{background:#f7f7fb;padding:.8em 1em}
img{max-width:100%}.missing{color:#c44e52;font-weight:600}.tw{overflow-x:auto;max-width:100%}
.sub{color:#555;margin-top:-.6em}.stamp{color:#888;font-size:.8em}"""


def report_grid(post: Fit) -> dict[str, list[int]]:
    """The D-study grid a report draws: items from a quarter to 8x the observed count, prompts
    1, as observed and 5 (when the design has prompts to project).
    """
    c = post.design.counts
    items = sorted({int(x) for x in np.geomspace(max(5, c["item"] / 4), c["item"] * 8, 10).round()})
    if "prompt" not in post.design.facets:
        return {"n_items": items}
    return {"n_items": items, "n_prompts": sorted({1, int(c.get("prompt", 1)), 5})}


def budget_plan(
    post: Fit, budget: float | None, cost_per_call: float | Mapping[str, float]
) -> tuple[float, Plan]:
    """The report's budget (default: four times what the pilot's calls cost) and the plan
    :meth:`bayes_tee.Posterior.allocate` makes at it, with up to 8x the observed items.
    """
    price = (
        float(np.mean(list(cost_per_call.values())))
        if isinstance(cost_per_call, Mapping)
        else float(cost_per_call)
    )
    budget = float(budget) if budget is not None else 4 * float(post.design.n_rows) * price
    items = int(post.design.counts["item"] * 8)
    return budget, allocate(post, budget, cost_per_call=cost_per_call, max_items=items)


def page_head(post: Fit, title: str, paragraph: str) -> list[str]:
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
        table_html(pd.DataFrame([{k: v for k, v in dg.items() if k != "problems"}])),
        "<h2>Design</h2>",
        table_html(d.summary().fillna("")),
    ]
