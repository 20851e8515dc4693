"""What the command line prints: the design, tables (or JSON), the rich summary and the
leaderboard.
"""

from __future__ import annotations

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


def _print_leaderboard(args, post) -> None:
    """The leaderboard and every pair (``--json``: both and the diagnostics as one object)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # said once, after the tables
        table = post.leaderboard(args.level, over=args.over, higher_is_better=not args.lower_is_better)
        pairs = post.pairs(args.level, over=args.over)
    if args.json:
        import json

        print(
            json.dumps(
                {
                    "leaderboard": table.to_dict("records"),
                    "pairs": pairs.to_dict("records"),
                    "note": table.attrs["note"],
                    "scale": table.attrs["scale"],
                    "diagnostics": post.diagnostics(),
                },
                default=float,
            )
        )
        return
    unit = "" if table.attrs["scale"] == "outcome" else f"{table.attrs['scale']}; "
    _emit(args, table, f"Leaderboard ({unit}{args.level:.0%} intervals; {table.attrs['note']}):")
    _emit(args, pairs, f"\nPairwise differences a - b (simultaneous: all {len(pairs)} pairs at once):")
    from .._core import diagnostics as diag

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
