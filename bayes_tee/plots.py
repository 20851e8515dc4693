"""Matplotlib figures. Every function returns the Figure and never calls ``show()``.

>>> fig = plot_shares(post)          # doctest: +SKIP
>>> fig.savefig("shares.png")         # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import matplotlib.pyplot as plt
import numpy as np

from . import diagnostics as diag

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .posterior import Posterior


def _figure(ax, size: tuple[float, float]):
    """A new Figure and Axes of ``size``, or the given Axes and its Figure."""
    if ax is None:
        return plt.subplots(figsize=size)
    return ax.figure, ax


def _interval_bars(ax, table, prefix: str, scale: float = 1.0, color="#4C72B0") -> np.ndarray:
    """Horizontal bars at ``<prefix>median`` with ``<prefix>low``-``<prefix>high`` error bars."""
    y = np.arange(len(table))
    med, lo, hi = (table[f"{prefix}{k}"].to_numpy() * scale for k in ("median", "low", "high"))
    ax.barh(y, med, color=color, alpha=0.85, height=0.6)
    ax.errorbar(med, y, xerr=[med - lo, hi - med], fmt="none", ecolor="black", capsize=3, lw=1)
    return hi


def plot_shares(
    post: "Posterior",
    kind: Literal["vartheta", "observation"] = "vartheta",
    ax=None,
    **shares_kwargs,
) -> "Figure":
    """Horizontal bars of each component's share: posterior median with its 90% interval.

    Parameters
    ----------
    post : Posterior
    kind : {"vartheta", "observation"}
        Shares of Var(theta_hat) at the design (``shares_kwargs`` go to
        :meth:`Posterior.shares`) or of the per-call variance (:meth:`Posterior.components`).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import warnings

    from .exceptions import DiagnosticWarning

    with warnings.catch_warnings():  # the figure shows the warning itself
        warnings.simplefilter("ignore", DiagnosticWarning)
        table = post.shares(**shares_kwargs) if kind == "vartheta" else post.components()
    table = table.sort_values("share_median")
    fig, ax = _figure(ax, (7.0, 0.42 * len(table) + 1.6))
    hi = _interval_bars(ax, table, "share_", scale=100)
    ax.set_yticks(np.arange(len(table)), table["component"])
    ax.set_xlabel("share (%): posterior median, 90% interval")
    ax.set_xlim(0, min(100.0, float(hi.max()) * 1.1 + 1))
    counts = post.design_counts(
        **{k: v for k, v in shares_kwargs.items() if k in ("n_items", "n_prompts", "n_judges", "n_temperatures",
                                                          "n_replicates", "n_categories")}
    )
    if kind == "vartheta":
        dims = " ".join(
            f"{s}{counts[f]:.3g}"
            for s, f in (("N", "item"), ("V", "prompt"), ("H", "temperature"), ("M", "judge"), ("R", "replicate"))
            if counts[f] > 1 or f in post.design.facets
        )
        title = f"Shares of Var(θ̂) at {dims}"
    else:
        title = "Shares of the per-call variance"
    scale = "probability" if shares_kwargs.get("scale") == "probability" and kind == "vartheta" else post.scale
    ax.set_title(title + f"  [{post.method} model, {scale} scale]", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    _warn_footer(fig, diag.message(post.diagnostics()))
    return fig


def _warn_footer(fig, msg: str | None) -> None:
    """The diagnostics warning, in red under the axes (figures never hide a failed fit)."""
    if msg:
        fig.text(0.01, 0.005, "WARNING: " + msg, color="red", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.05 if msg else 0, 1, 1))


def plot_dstudy(table, x: str = "n_items", ax=None) -> "Figure":
    """Projected SE against ``x`` with one line (median) and band (interval) per combination of
    the other design fields that vary in ``table`` (from :meth:`Posterior.dstudy`)."""
    fig, ax = _figure(ax, (7.0, 4.5))
    others = [c for c in ("n_prompts", "n_judges", "n_temperatures", "n_replicates", "n_categories")
              if c in table and c != x and table[c].nunique() > 1]
    groups = table.groupby(others) if others else [((), table)]
    short = {"n_prompts": "V", "n_judges": "M", "n_temperatures": "H", "n_replicates": "R", "n_categories": "C"}
    for key, g in groups:
        g = g.sort_values(x)
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{short[c]}={v:g}" for c, v in zip(others, key)) or "projection"
        line, = ax.plot(g[x], g["se_median"], marker="o", ms=3, label=label)
        ax.fill_between(g[x], g["se_low"], g["se_high"], color=line.get_color(), alpha=0.15)
    ax.set_xlabel({"n_items": "items N'"}.get(x, x))
    ax.set_ylabel(f"SE of θ̂ (median, {table.attrs.get('level', 0.9):.0%} band)")
    ax.set_title(f"D-study: {table.attrs.get('decision', 'absolute')} error, "
                 f"{table.attrs.get('estimand', 'domain')} estimand", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _warn_footer(fig, table.attrs.get("warning"))
    return fig


def plot_interventions(table, ax=None) -> "Figure":
    """Percent change in Var(theta_hat) per intervention: median bar with its interval."""
    table = table.sort_values("change_median")
    fig, ax = _figure(ax, (7.0, 0.45 * len(table) + 1.6))
    _interval_bars(ax, table, "change_", color=np.where(table["change_median"] < 0, "#55A868", "#C44E52"))
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(np.arange(len(table)), table["intervention"])
    ax.set_xlabel(f"change in Var(θ̂) (%): median, {table.attrs.get('level', 0.9):.0%} interval")
    ax.set_title("What each design change does to Var(θ̂)", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    _warn_footer(fig, table.attrs.get("warning"))
    return fig


def plot_frontier(plan, ax=None) -> "Figure":
    """Cost against projected SE for every candidate design, the efficiency frontier, the
    current design and the chosen one (seed 000 Fig. 3b)."""
    fig, ax = _figure(ax, (7.0, 4.5))
    allc, front = plan.candidates, plan.frontier
    ax.scatter(allc["cost"], allc["se_median"], s=6, color="0.7", label="candidate designs")
    ax.plot(front["cost"], front["se_median"], color="#4C72B0", lw=1.5, label="frontier (median SE)")
    ax.fill_between(front["cost"], front["se_low"], front["se_high"], color="#4C72B0", alpha=0.15,
                    step=None)
    for row, style, name in ((plan.current, dict(marker="s", color="black"), "current design"),
                             (plan.best, dict(marker="*", color="#C44E52", ms=14), "chosen design")):
        ax.errorbar(row["cost"], row["se_median"], yerr=[[row["se_median"] - row["se_low"]],
                    [row["se_high"] - row["se_median"]]], ls="none", capsize=3, **style, label=name)
    ax.axvline(plan.budget, color="0.4", ls="--", lw=0.8, label="budget")
    ax.set_xscale("log")
    ax.set_xlabel("cost")
    ax.set_ylabel("SE of θ̂ (median, interval)")
    b = plan.best
    ax.set_title(f"Best at budget: N={b['n_items']:g} V={b['n_prompts']:g} M={b['n_judges']:g} "
                 f"H={b['n_temperatures']:g} R={b['n_replicates']:g}, SE {b['se_median']:.3g}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _warn_footer(fig, plan.candidates.attrs.get("warning"))
    return fig


def plot_link_comparison(cmp, ax=None) -> "Figure":
    """Paired bars: each component's share of Var(theta_hat) under the LPM and the GLMM
    (posterior median, 90% interval), with the Spearman rank correlation in the title."""
    table = cmp.table.iloc[::-1]
    fig, ax = _figure(ax, (7.5, 0.5 * len(table) + 1.8))
    y = np.arange(len(table))
    for off, prefix, color, name in ((0.2, "lpm_share_", "#4C72B0", "LPM (probability scale)"),
                                     (-0.2, "glmm_share_", "#DD8452", "GLMM (logit scale)")):
        med, lo, hi = (table[f"{prefix}{k}"].to_numpy() * 100 for k in ("median", "low", "high"))
        ax.barh(y + off, med, height=0.38, color=color, alpha=0.85, label=name)
        ax.errorbar(med, y + off, xerr=[med - lo, hi - med], fmt="none", ecolor="black", capsize=2, lw=0.8)
    ax.set_yticks(y, table["component"])
    ax.set_xlabel("share of Var(θ̂) (%): posterior median, 90% interval")
    r = cmp.spearman
    ax.set_title(f"LPM vs GLMM shares; Spearman ρ {r['median']:.2f} [{r['low']:.2f}, {r['high']:.2f}]", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    msgs = [m for m in (diag.message(cmp.lpm.diagnostics()), diag.message(cmp.glmm.diagnostics())) if m]
    _warn_footer(fig, "; ".join(msgs) or None)
    return fig


def plot_prior_sensitivity(sens, ax=None) -> "Figure":
    """Forest plot: each component's share of Var(theta_hat) (and the theta TEE interval, own
    axis) under every prior; a flagged prior/component is drawn in red."""
    table = sens.table()
    priors = list(dict.fromkeys(table["prior"]))
    comps = [q for q in dict.fromkeys(table["quantity"]) if q != "theta"]
    fig, (ax_s, ax_t) = plt.subplots(1, 2, figsize=(10.0, 0.5 * len(comps) + 2.2),
                                     gridspec_kw=dict(width_ratios=(3, 1.2)))
    step = 0.8 / max(len(priors), 1)
    for k, prior in enumerate(priors):
        sub = table[table["prior"] == prior].set_index("quantity")
        off = 0.4 - step * (k + 0.5)
        for axis, qs, scale in ((ax_s, comps, 100.0), (ax_t, ["theta"], 1.0)):
            for j, q in enumerate(qs):
                r = sub.loc[q]
                y = len(qs) - 1 - j + off
                axis.errorbar(r["median"] * scale, y,
                              xerr=[[(r["median"] - r["low"]) * scale], [(r["high"] - r["median"]) * scale]],
                              fmt="o", ms=3, color=f"C{k % 10}", capsize=2, lw=1,
                              label=prior if (axis is ax_s and j == 0) else None)
                if r["flag"]:  # flagged against the reference prior: a red marker on the median
                    axis.plot(r["median"] * scale, y, marker="D", ms=6, mfc="none", mec="#C44E52", mew=1.5)
    ax_s.set_yticks(np.arange(len(comps))[::-1], comps)
    ax_s.set_xlabel(f"share of Var(θ̂) (%): median, {table.attrs.get('level', 0.9):.0%} interval")
    ax_s.set_title(f"Shares under each prior (red diamond: flagged against {sens.reference!r})", fontsize=10)
    ax_s.grid(axis="x", alpha=0.3)
    ax_s.legend(fontsize=7, loc="lower right")
    ax_t.set_yticks([0], ["θ (TEE)"])
    ax_t.set_ylim(-0.6, 0.6)
    ax_t.set_title("θ and its TEE interval", fontsize=10)
    ax_t.grid(axis="x", alpha=0.3)
    bad = sorted(set(table.loc[~table["diagnostics_ok"].astype(bool), "prior"]))
    _warn_footer(fig, f"fits under {', '.join(bad)} failed their diagnostics" if bad else None)
    return fig


def plot_coverage(study, target: str | None = None, level: float | None = None) -> "Figure":
    """Coverage per method (points, Monte Carlo 95% error bars) for each design, one panel per
    target, against the nominal level (dashed) (from :func:`bayes_tee.simulate.coverage_study`)."""
    table = study.table()
    level = float(table["level"].iloc[0]) if level is None else level
    table = table[np.isclose(table["level"], level)]
    targets = [target] if target else list(dict.fromkeys(table["target"]))
    designs = list(dict.fromkeys(table["design"]))
    methods = [m for m in ("naive", "anova_wald", "bootstrap", "bayes") if m in set(table["method"])]
    fig, axes = plt.subplots(1, len(targets), figsize=(3.2 * len(targets) + 1.5, 0.45 * len(designs) * len(methods) + 1.8),
                             sharey=True, squeeze=False)
    step = 0.8 / len(methods)
    for ax, tgt in zip(axes[0], targets):
        sub = table[table["target"] == tgt]
        for k, m in enumerate(methods):
            rows = sub[sub["method"] == m].set_index("design").reindex(designs)
            y = np.arange(len(designs))[::-1] + 0.4 - step * (k + 0.5)
            ax.errorbar(rows["coverage"] * 100, y, xerr=1.96 * rows["mc_se"] * 100, fmt="o", ms=4, capsize=2,
                        color=f"C{k}", label=m if tgt == targets[0] else None)
        ax.axvline(level * 100, color="black", ls="--", lw=0.8)
        ax.set_xlim(0, 102)
        ax.set_title(tgt, fontsize=10)
        ax.set_xlabel("coverage (%)")
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_yticks(np.arange(len(designs))[::-1], designs)
    fig.legend(loc="lower center", ncol=len(methods), fontsize=8, frameon=False)
    n = int(table["n_sims"].max()) if len(table) else 0
    fig.suptitle(f"Coverage of nominal {level:.0%} intervals ({n} simulated data sets per design)", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def plot_staircase(study, level: float = 0.95, target: str = "theta (TEE)", method: str = "bayes") -> "Figure":
    """Coverage against the number of items per scenario (seed 000 App. E.4, Fig. 11b): the
    naive interval of scenario A and ``method``'s interval (the posterior's TEE interval by
    default) in scenarios B-D."""
    table = study.table()
    table = table[np.isclose(table["level"], level) & (table["target"] == target)]
    scen = study.results.drop_duplicates("design").set_index("design")[["scenario", "n_items"]]
    table = table.join(scen, on="design")
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for k, (name, g) in enumerate(table.groupby("scenario", sort=True)):
        m = "naive" if name.startswith("A") else method
        g = g[g["method"] == m].sort_values("n_items")
        ax.errorbar(g["n_items"], g["coverage"] * 100, yerr=1.96 * g["mc_se"] * 100, marker="o", ms=4,
                    capsize=2, color=f"C{k}", label=f"{name} ({m})")
    ax.axhline(level * 100, color="black", ls="--", lw=0.8, label=f"nominal {level:.0%}")
    ax.set_xscale("log")
    ax.set_ylim(0, 102)
    ax.set_xlabel("items N")
    ax.set_ylabel(f"coverage of {target} (%)")
    ax.set_title("Coverage staircase: each modelled facet restores one step", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def plot_paired_noise(nz, within: float | None = 0.2, ax=None, show_unpaired: bool = False) -> "Figure":
    """Seed 001 Fig. 1: the paired SEs of every close pair against the accuracy of the better
    model, with the Beta-theory curve ``sqrt(p (1 - p) / N)`` for the total.

    Total (dots), data (triangles) and prediction (crosses) SEs, one point per pair; the
    unpaired SE for contrast when ``show_unpaired``.
    """
    from .noise import beta_theory_se

    fig, ax = _figure(ax, (6.4, 4.2))
    pairs = nz.pairs(within=within)
    n = nz.n_questions
    x = pairs["acc_a"].to_numpy()
    ax.scatter(x, pairs["SE_total"] * 100, s=12, color="C0", label="total (paired)", alpha=0.8)
    ax.scatter(x, pairs["SE_data"] * 100, s=12, marker="^", color="C1", label="data", alpha=0.6)
    ax.scatter(x, pairs["SE_pred"] * 100, s=14, marker="x", color="C2", label="prediction", alpha=0.6)
    if show_unpaired:
        ax.scatter(x, pairs["SE_unpaired"] * 100, s=10, marker=".", color="0.6", label="total (unpaired)")
    grid = np.linspace(0.005, 0.995, 200)
    ax.plot(grid, beta_theory_se(grid, n) * 100, color="black", lw=1.2, label="Beta theory sqrt(p(1-p)/N)")
    ax.set_xlabel("accuracy of the better model of the pair")
    ax.set_ylabel("standard error of A - B (percentage points)")
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    k = nz.table.count
    sub = f"{len(pairs)} pairs" + (f" within {within:.0%} accuracy" if within is not None else "")
    ax.set_title(f"Paired noise, N={n} questions, K={k.min():.0f}-{k.max():.0f} ({sub})", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="lower center", ncol=2)
    fig.tight_layout()
    return fig


def plot_allocation(cmp, ax=None) -> "Figure":
    """Var of the benchmark mean against the budget per item, per allocation strategy
    (posterior median, band = the comparison's credible level), as seed 002 Fig. 2."""
    fig, ax = _figure(ax, (6.2, 4.0))
    table = cmp.table()
    for k, (name, sub) in enumerate(table.groupby("strategy", sort=False)):
        sub = sub.sort_values("budget_per_item")
        ax.plot(sub["budget_per_item"], sub["variance"], "o-", color=f"C{k}", label=name, ms=4)
        ax.fill_between(sub["budget_per_item"], sub["variance_low"], sub["variance_high"], color=f"C{k}", alpha=0.15)
    ax.set_xlabel("judge calls per item")
    ax.set_ylabel("Var(benchmark mean)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.set_title(f"Judge allocation: {cmp.n_items} items, pool of {cmp.pool} judges "
                 f"({cmp.level:.0%} intervals)", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def plot_calibration(cal, level: float = 0.9, axes=None) -> "Figure":
    """Judge calibration at a glance (see :meth:`bayes_tee.calibration.JudgeCalibration.plot`).

    Left: the fitted Se, Sp and Youden J per judge x system (posterior median and ``level``
    interval; the dashed line is J = 0.2, below which corrections are unstable). Right: each
    system's accuracy by estimator, naive and the closed-form corrections per judge beside the
    Bayesian posterior, so a correction that moves the answer (or widens it) is visible.
    """
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 0.9 + 0.5 * max(len(cal.systems) * len(cal.judges), 4)))
    fig = axes[0].figure
    ax = axes[0]
    labels = []
    for name, color, dy in (("se", "C0", -0.2), ("sp", "C1", 0.0), ("youden", "C3", 0.2)):
        x = cal.draws(name).values  # (sample, J, S)
        lo, med, hi = np.quantile(x, [(1 - level) / 2, 0.5, (1 + level) / 2], axis=0)
        for (ji, j) in enumerate(cal.judges):
            for (si, s) in enumerate(cal.systems):
                y = ji * len(cal.systems) + si
                ax.errorbar(med[ji, si], y + dy, xerr=[[med[ji, si] - lo[ji, si]], [hi[ji, si] - med[ji, si]]],
                            fmt="o", color=color, ms=4, capsize=2, label={"se": "Se", "sp": "Sp", "youden": "J"}[name]
                            if (ji, si) == (0, 0) else None)
                if name == "se":
                    labels.append(f"{s}\n({j})")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.axvline(0.2, color="0.5", ls="--", lw=0.8)
    ax.axvline(0, color="0.2", lw=0.6)
    ax.set_xlim(-0.5, 1.02)
    ax.invert_yaxis()
    ax.set_xlabel(f"posterior median, {level:.0%} interval")
    ax.set_title(f"Judge quality ({cal.mode} calibration)", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(0, -0.14), ncol=3)

    ax = axes[1]
    est = cal.estimates(level)
    kinds = list(dict.fromkeys(zip(est["estimator"], est["judge"])))
    width = 0.8 / len(kinds)
    for (i, (name, judge)) in enumerate(kinds):
        sub = est[(est["estimator"] == name) & (est["judge"] == judge)].set_index("system").reindex(cal.systems)
        y = np.arange(len(cal.systems)) - 0.4 + (i + 0.5) * width
        color = "k" if name.startswith("bayes") else f"C{list(dict.fromkeys(est['estimator'])).index(name)}"
        marker = "o" if judge in (cal.judges[0], "all") else "s"
        ax.errorbar(sub["estimate"], y, xerr=[sub["estimate"] - sub["low"], sub["high"] - sub["estimate"]],
                    fmt=marker, color=color, ms=4, capsize=2, lw=2.0 if judge == "all" else 1.0,
                    label=name if judge == "all" else f"{name} ({judge})")
    ax.set_yticks(range(len(cal.systems)), cal.systems, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"accuracy (estimate and {level:.0%} interval)")
    ax.set_title("Naive and corrected accuracy", fontsize=10)
    ax.legend(fontsize=7, frameon=False, bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    _warn_footer(fig, est.attrs.get("warning"))
    return fig


def plot_raee(r, ax=None) -> "Figure":
    """Reference-anchored Elo gaps: one row per system, interval bars, the reference at 0."""
    tab = r.table().iloc[::-1].reset_index(drop=True)
    systems = list(dict.fromkeys(tab["system"]))
    fig, ax = _figure(ax, (7.5, 0.45 * len(systems) + 1.6))
    judges = list(dict.fromkeys(tab["judge"])) if "judge" in tab else [None]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    step = 0.6 / max(len(judges), 1)
    for j, name in enumerate(judges):
        part = tab if name is None else tab[tab["judge"] == name]
        y = np.array([systems.index(s) for s in part["system"]]) + (j - (len(judges) - 1) / 2) * step
        elo, lo, hi = (part[c].to_numpy() for c in ("elo", "elo_low", "elo_high"))
        ax.errorbar(elo, y, xerr=[elo - lo, hi - elo], fmt="o", ms=4, capsize=2, lw=1,
                    color=colors[j % len(colors)], label=None if name is None else str(name))
    ax.axvline(0.0, color="grey", lw=1, ls="--")
    ax.set_yticks(np.arange(len(systems)), systems)
    ref = tab.attrs.get("reference")
    ax.set_xlabel(f"Elo gap vs {ref}" if ref else "Elo gap vs the reference")
    mode = "hierarchical Beta-Binomial" if tab.attrs.get("hierarchical") else "Jeffreys-Beta"
    ax.set_title(f"Reference-anchored Elo, {mode} {100 * tab.attrs.get('level', 0.95):.0f}% intervals", fontsize=10)
    if judges != [None]:
        ax.legend(title="judge", fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
