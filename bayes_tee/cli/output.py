"""What the command line prints: the design, tables (or JSON), the rich summary and the
leaderboard.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

from .._core.exceptions import DiagnosticWarning


def _report(post, out: Path | None) -> None:
    print(post.summary())
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        png = out / "shares.png"
        post.plot_shares().savefig(png, dpi=120)
        print(f"\nShares plot written to {png}")


def _print_design(d) -> None:
    """What a dry run prints: the design, its summary table, rows used and dropped, its notes."""
    print(repr(d))
    print(d.summary().to_string(index=False))
    print(f"rows used {d.n_rows}, dropped {sum(d.dropped.values())}; balanced: {d.balanced}")
    for note in d.notes:
        print(f"note: {note}")


def _emit(args, table, title: str | None = None) -> None:
    if getattr(args, "json", False):
        print(table.to_json(orient="records", double_precision=6))
    else:
        import pandas as pd

        with pd.option_context("display.width", 140, "display.max_columns", 30):
            if title:
                print(title)
            print(table.to_string(index=False))


def _rich_summary(post) -> None:
    """The summary as rich tables (on a terminal)."""
    from rich.console import Console
    from rich.table import Table

    from .._core import diagnostics as diag

    if post.design.system is not None:  # a comparison: its summary is the leaderboard's
        print(post.summary())
        return
    console = Console()

    def show(df, title: str) -> None:
        t = Table(title=title, title_justify="left")
        for c in df.columns:
            t.add_column(str(c), justify="left" if df[c].dtype == object else "right")
        for row in df.itertuples(index=False):
            t.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
        console.print(t)

    console.print(repr(post))
    show(post.components(), f"Per-observation components ({post.scale} scale, 90% intervals)")
    show(post.shares().drop(columns="divisor"), "Shares of Var(theta_hat) at the observed design")
    show(post.theta(), "theta")
    msg = diag.message(post.diagnostics())
    console.print(f"[bold red]WARNING: {msg}[/]" if msg else "[green]All diagnostics passed.[/]")


def _board_text(table, n_pairs: int, n_unresolved: int) -> str:
    """The leaderboard as a reader wants it on one screen: rank, system, estimate, its new and
    panel intervals, rank range, P(best), tie group (and cost, P(on the front)).
    """
    import pandas as pd

    span = max(float(table[["new_low", "new_high"]].abs().max().max()), 1e-12)
    places = int(min(4, max(0, 3 - math.floor(math.log10(span)))))

    def num(x) -> str:
        return f"{x:.{places}f}"

    shown = pd.DataFrame(
        {
            "rank": range(1, len(table) + 1),
            "system": table["system"],
            "estimate": table["estimate"].map(num),
            "new interval": [
                f"[{num(lo)}, {num(hi)}]" for lo, hi in zip(table["new_low"], table["new_high"])
            ],
            "panel interval": [
                f"[{num(lo)}, {num(hi)}]" for lo, hi in zip(table["panel_low"], table["panel_high"])
            ],
            "ranks": [
                f"{lo}-{hi}" if lo != hi else f"{lo}" for lo, hi in zip(table["rank_low"], table["rank_high"])
            ],
            "P(best)": table["p_best"].map(lambda p: f"{p:.2f}"),
            "group": table["group"],
        }
    )
    if "p_pareto" in table:
        shown["cost"] = table["cost"].map(lambda c: f"{c:.4g}")
        shown["P(front)"] = table["p_pareto"].map(lambda p: f"{p:.2f}")
    a = table.attrs
    unit = "" if a["scale"] == "outcome" else f"{a['scale']}; "
    lines = [
        f"Leaderboard ({unit}{a['level']:.0%} intervals; ranks, P(best) and groups over {a['over']}):",
        shown.to_string(index=False),
        f"Reading: 'new' intervals generalise {a['note'].removeprefix('new: ')}"
        + (f"; {a['control']}." if a.get("control") else "."),
        f"Groups: systems sharing a letter are not separated by their simultaneous {a['level']:.0%} "
        f"interval ({n_pairs - n_unresolved} of {n_pairs} pairs resolved"
        + (f"; --pairs unresolved lists the other {n_unresolved})." if n_unresolved else ")."),
    ]
    if "p_pareto" in table:
        lines.append(
            "P(front): the probability that no system as cheap scores better; on the estimates' front: "
            + ", ".join(a.get("front", []))
            + "."
        )
    return "\n".join(lines)


def _print_leaderboard(args, post, cost=None) -> None:
    """The leaderboard with its tie groups and its reading; ``--pairs`` adds the pairs (all or
    the unresolved ones); ``--json`` prints the one document of
    :mod:`bayes_tee.posterior.leaderboard_json` instead.
    """
    import json

    import pandas as pd

    from .._core import diagnostics as diag
    from ..posterior.leaderboard_json import leaderboard_document, read_leaderboard_json

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # said once, after the tables
        doc = leaderboard_document(
            post, level=args.level, over=args.over, higher_is_better=not args.lower_is_better,
            pairs=args.pairs or ("all" if args.json else "none"), cost=cost, cost_column=args.cost_column,
            control=getattr(args, "control_values", None),
        )  # fmt: skip
    if args.json:
        print(json.dumps(doc))
        return
    tables = read_leaderboard_json(doc)
    print(_board_text(tables["leaderboard"], doc["n_pairs"], doc["n_unresolved"]))
    if args.pairs:
        what = "unresolved pairs" if args.pairs == "unresolved" else "pairwise differences"
        title = f"\n{len(tables['pairs'])} {what} a - b (simultaneous: all {doc['n_pairs']} pairs at once):"
        if len(tables["pairs"]):
            with pd.option_context("display.width", 160, "display.max_columns", 30):
                print(title)
                print(tables["pairs"].round(4).to_string(index=False))
        else:
            print(f"\nEvery pair is resolved at {args.level:.0%} (simultaneous).")
    msg = diag.message(post.diagnostics())
    if msg:
        print(f"WARNING: {msg}", file=sys.stderr)


def _print_next(args, post, read) -> None:
    """``next``: the objective's status (``--status``), or the chosen calls as CSV or JSON."""
    import json

    from .._core import diagnostics as diag

    systems = tuple(s.strip() for s in args.systems.split(",")) if args.systems else None
    kw = dict(systems=systems, over=args.over, level=args.level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # said once, below
        if args.status:
            d = post.decision(args.objective, target=args.target, **kw)
            if args.json:
                print(json.dumps({**d.to_dict(), "diagnostics": post.diagnostics()}, default=_plain))
            else:
                met = "no target given" if d["met"] is None else ("met" if d["met"] else "not met")
                print(f"{d['meaning']} ({d['about']}): {d['metric']:.4g}; target {d['target']}: {met}")
        else:
            chosen = post.next_calls(read(args.pool), args.n, args.objective, cost=args.cost, **kw)
            if args.json:
                print(chosen.to_json(orient="records"))
            elif args.out:
                chosen.to_csv(args.out, index=True)
                loss, after = chosen.attrs["loss"], chosen.attrs["loss_after"]
                print(f"{len(chosen)} calls written to {args.out} (expected loss {loss:.4g} -> {after:.4g})")
            else:
                print(chosen.to_csv(index=True), end="")
    msg = diag.message(post.diagnostics())
    if msg:
        print(f"WARNING: {msg}", file=sys.stderr)


def _plain(value):
    """JSON for NumPy scalars and other plain values."""
    return value.item() if hasattr(value, "item") else str(value)
