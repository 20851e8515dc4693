"""Figures of a TEE fit: shares, D-study, interventions, budget frontier, links, prior sensitivity."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ._base import figure, interval_bars, warn_footer

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_shares(
    table: pd.DataFrame,
    kind: Literal["vartheta", "observation"] = "vartheta",
    *,
    counts: dict[str, float] | None = None,
    facets: tuple[str, ...] = (),
    method: str | None = None,
    scale: str | None = None,
    ax=None,
) -> Figure:
    """Horizontal bars of each component's share: posterior median with its 90% interval.

    Parameters
    ----------
    table : DataFrame
        :meth:`Posterior.shares` (``kind="vartheta"``) or :meth:`Posterior.components`
        (``kind="observation"``): ``component, share_median, share_low, share_high``.
    counts, facets : optional
        The design the shares are at (counts by facet) and the fitted facets, for the title.
    method, scale : str, optional
        Likelihood and scale, for the title.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    table = table.sort_values("share_median")
    fig, ax = figure(ax, (7.0, 0.42 * len(table) + 1.6))
    hi = interval_bars(ax, table, "share_", scale=100)
    ax.set_yticks(np.arange(len(table)), table["component"])
    ax.set_xlabel("share (%): posterior median, 90% interval")
    ax.set_xlim(0, min(100.0, float(hi.max()) * 1.1 + 1))
    if kind == "vartheta":
        counts = counts or {}
        dims = " ".join(
            f"{s}{counts.get(f, 1.0):.3g}"
            for s, f in (
                ("N", "item"),
                ("V", "prompt"),
                ("H", "temperature"),
                ("M", "judge"),
                ("R", "replicate"),
            )
            if counts.get(f, 1.0) > 1 or f in facets
        )
        quantity = "a system difference" if "var_difference" in table.attrs else "θ̂"
        title = f"Shares of Var({quantity})" if quantity != "θ̂" else f"Shares of Var(θ̂) at {dims}"
    else:
        title = "Shares of the per-call variance"
    if method or scale:
        title += f"  [{method} model, {scale} scale]"
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    warn_footer(fig, table.attrs.get("warning"))
    return fig


def plot_dstudy(table, x: str = "n_items", ax=None) -> "Figure":
    """Projected SE against ``x`` with one line (median) and band (interval) per combination of
    the other design fields that vary in ``table`` (from :meth:`Posterior.dstudy`).
    """
    fig, ax = figure(ax, (8.0, 4.5))
    others = [
        c
        for c in ("n_prompts", "n_judges", "n_temperatures", "n_replicates", "n_categories")
        if c in table and c != x and table[c].nunique() > 1
    ]
    groups = table.groupby(others) if others else [((), table)]
    short = {
        "n_prompts": "V",
        "n_judges": "M",
        "n_temperatures": "H",
        "n_replicates": "R",
        "n_categories": "C",
    }
    for key, g in groups:
        g = g.sort_values(x)
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{short[c]}={v:g}" for c, v in zip(others, key)) or "projection"
        (line,) = ax.plot(g[x], g["se_median"], marker="o", ms=3, label=label)
        ax.fill_between(g[x], g["se_low"], g["se_high"], color=line.get_color(), alpha=0.15)
    ax.set_xlabel({"n_items": "items N'"}.get(x, x))
    systems = table.attrs.get("object") == "system"
    quantity = "a difference between two systems" if systems else "θ̂"
    ax.set_ylabel(f"SE of {quantity} (median, {table.attrs.get('level', 0.9):.0%} band)")
    ax.set_title(
        f"Relative D-study: the {table.attrs.get('over', 'new')} reading"
        if systems
        else f"D-study: {table.attrs.get('decision', 'absolute')} error, "
        f"{table.attrs.get('estimand', 'domain')} estimand",
        fontsize=10,
    )
    ax.grid(alpha=0.3)
    # beside the axes, never on the curves (a D-study grid has up to a dozen of them)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    warn_footer(fig, table.attrs.get("warning"))
    return fig


def plot_interventions(table, ax=None) -> "Figure":
    """Percent change in Var(theta_hat) per intervention: median bar with its interval."""
    table = table.sort_values("change_median")
    fig, ax = figure(ax, (7.0, 0.45 * len(table) + 1.6))
    interval_bars(ax, table, "change_", color=np.where(table["change_median"] < 0, "#55A868", "#C44E52"))
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(np.arange(len(table)), table["intervention"])
    quantity = "a difference" if table.attrs.get("object") == "system" else "θ̂"
    ax.set_xlabel(f"change in Var({quantity}) (%): median, {table.attrs.get('level', 0.9):.0%} interval")
    ax.set_title(f"What each design change does to Var({quantity})", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    warn_footer(fig, table.attrs.get("warning"))
    return fig


def plot_frontier(plan, ax=None) -> "Figure":
    """Cost against projected SE for every candidate design, the efficiency frontier, the
    current design and the chosen one (Messing 2026 Fig. 3b).
    """
    fig, ax = figure(ax, (8.0, 4.5))
    allc, front = plan.candidates, plan.frontier
    ax.scatter(allc["cost"], allc["se_median"], s=6, color="0.7", label="candidate designs")
    ax.plot(front["cost"], front["se_median"], color="#4C72B0", lw=1.5, label="frontier (median SE)")
    ax.fill_between(front["cost"], front["se_low"], front["se_high"], color="#4C72B0", alpha=0.15, step=None)
    for row, style, name in (
        (plan.current, dict(marker="s", color="black"), "current design"),
        (plan.best, dict(marker="*", color="#C44E52", ms=14), "chosen design"),
    ):
        ax.errorbar(
            row["cost"],
            row["se_median"],
            yerr=[[row["se_median"] - row["se_low"]], [row["se_high"] - row["se_median"]]],
            ls="none",
            capsize=3,
            **style,
            label=name,
        )
    ax.axvline(plan.budget, color="0.4", ls="--", lw=0.8, label="budget")
    ax.set_xscale("log")
    ax.set_xlabel("cost")
    systems = plan.candidates.attrs.get("objective") in ("separate", "rank")
    ax.set_ylabel(f"SE of {'a difference between two systems' if systems else 'θ̂'} (median, interval)")
    b = plan.best
    ax.set_title(
        f"Best at budget: N={b['n_items']:g} V={b['n_prompts']:g} M={b['n_judges']:g} "
        f"H={b['n_temperatures']:g} R={b['n_replicates']:g}, SE {b['se_median']:.3g}",
        fontsize=10,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    warn_footer(fig, plan.candidates.attrs.get("warning"))
    return fig


def plot_link_comparison(cmp, ax=None) -> "Figure":
    """Paired bars: each component's share of Var(theta_hat) under the LPM and the GLMM
    (posterior median, 90% interval), with the Spearman rank correlation in the title.
    """
    table = cmp.table.iloc[::-1]
    fig, ax = figure(ax, (7.5, 0.5 * len(table) + 1.8))
    y = np.arange(len(table))
    for off, prefix, color, name in (
        (0.2, "lpm_share_", "#4C72B0", "LPM (probability scale)"),
        (-0.2, "glmm_share_", "#DD8452", "GLMM (logit scale)"),
    ):
        med, lo, hi = (table[f"{prefix}{k}"].to_numpy() * 100 for k in ("median", "low", "high"))
        ax.barh(y + off, med, height=0.38, color=color, alpha=0.85, label=name)
        ax.errorbar(med, y + off, xerr=[med - lo, hi - med], fmt="none", ecolor="black", capsize=2, lw=0.8)
    ax.set_yticks(y, table["component"])
    ax.set_xlabel("share of Var(θ̂) (%): posterior median, 90% interval")
    r = cmp.spearman
    ax.set_title(
        f"LPM vs GLMM shares; Spearman ρ {r['median']:.2f} [{r['low']:.2f}, {r['high']:.2f}]", fontsize=10
    )
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    warn_footer(fig, cmp.warning)
    return fig


def plot_prior_sensitivity(table: pd.DataFrame, reference: str, ax=None) -> Figure:
    """Forest plot: each component's share of Var(theta_hat) (and the theta TEE interval, own
    axis) under every prior; a flagged prior/component is drawn in red (``table`` from
    :meth:`bayes_tee.tee.prior_refits.PriorSensitivity.table`, flagged against ``reference``).
    """
    priors = list(dict.fromkeys(table["prior"]))
    comps = [q for q in dict.fromkeys(table["quantity"]) if q != "theta"]
    fig, (ax_s, ax_t) = plt.subplots(
        1, 2, figsize=(10.0, 0.5 * len(comps) + 2.2), gridspec_kw=dict(width_ratios=(3, 1.2))
    )
    step = 0.8 / max(len(priors), 1)
    for k, prior in enumerate(priors):
        sub = table[table["prior"] == prior].set_index("quantity")
        off = 0.4 - step * (k + 0.5)
        for axis, qs, scale in ((ax_s, comps, 100.0), (ax_t, ["theta"], 1.0)):
            for j, q in enumerate(qs):
                r = sub.loc[q]
                y = len(qs) - 1 - j + off
                axis.errorbar(
                    r["median"] * scale,
                    y,
                    xerr=[[(r["median"] - r["low"]) * scale], [(r["high"] - r["median"]) * scale]],
                    fmt="o",
                    ms=3,
                    color=f"C{k % 10}",
                    capsize=2,
                    lw=1,
                    label=prior if (axis is ax_s and j == 0) else None,
                )
                if r["flag"]:  # flagged against the reference prior: a red marker on the median
                    axis.plot(r["median"] * scale, y, marker="D", ms=6, mfc="none", mec="#C44E52", mew=1.5)
    ax_s.set_yticks(np.arange(len(comps))[::-1], comps)
    ax_s.set_xlabel(f"share of Var(θ̂) (%): median, {table.attrs.get('level', 0.9):.0%} interval")
    ax_s.set_title(f"Shares under each prior (red diamond: flagged against {reference!r})", fontsize=10)
    ax_s.grid(axis="x", alpha=0.3)
    ax_s.legend(fontsize=7, loc="lower right")
    ax_t.set_yticks([0], ["θ (TEE)"])
    ax_t.set_ylim(-0.6, 0.6)
    ax_t.set_title("θ and its TEE interval", fontsize=10)
    ax_t.grid(axis="x", alpha=0.3)
    bad = sorted(set(table.loc[~table["diagnostics_ok"].astype(bool), "prior"]))
    warn_footer(fig, f"fits under {', '.join(bad)} failed their diagnostics" if bad else None)
    return fig
