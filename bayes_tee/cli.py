"""``bayes-tee`` command line over the same functions as the Python API.

    bayes-tee demo [--out DIR] [--save models/tee_demo.nc]
    bayes-tee fit pilot.csv --outcome score --item item_id --prompt variant_id --out pilot.nc
    bayes-tee fit pilot.csv --roles roles.toml --dry-run      # validate and describe only
    bayes-tee fit logs/ --from inspect --prompt wording --out pilot.nc   # Inspect AI logs
    bayes-tee fit pilot.csv --roles roles.toml --judge-effect random --priors half_normal --out p.nc
    bayes-tee fit results.json --from promptfoo --model gpt-4o --dry-run
    bayes-tee fit g.csv --formula "score ~ (1|item) + (1|evaluator) + (1|prompt)" --out g.nc
    bayes-tee leaderboard runs.csv --outcome score --item item --judge judge --system model [--json]
    bayes-tee summary pilot.nc [--json]
    bayes-tee dstudy pilot.nc --items 100,200 --prompts 1,3,5 --judges 1,3 [--json]
    bayes-tee dstudy g.nc --n evaluator=2,4,6 --n prompt=1,3
    bayes-tee reliability g.nc --n evaluator=2,4,6 --n prompt=1,3 [--object item] [--json]
    bayes-tee allocate pilot.nc --budget 5000 [--costs costs.toml] [--json]
    bayes-tee report pilot.nc --html report.html [--budget 5000] [--costs costs.toml]

Roles come from flags or a TOML file (``outcome = "score"``, ``item = "item_id"``, ...; flags
win), or from the log reader with ``--from inspect|promptfoo|lm-eval`` (:mod:`bayes_tee.io`;
``--prompt`` then names the prompt variant's task argument or metadata key, ``--model`` keeps
one model, ``--scorers`` some scorers). A costs TOML holds ``cost_per_call`` (a number, or a
table of price per judge) and optionally ``cost_per_item``. Exit codes: 0 ok, 1 user error
(one-line reason on stderr, no traceback), 2 diagnostics failed with ``--strict``, 3 an
unexpected error (a defect; ``BAYES_TEE_TRACEBACK=1`` shows its traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from ._core.exceptions import DesignError, DesignWarning, DiagnosticWarning, first_line

# Nothing heavy is imported above: each subcommand loads its machinery (pandas, the fit, ArviZ,
# matplotlib) when it runs, and the lists of prior presets, families and likelihoods are read
# from their registries only when a subcommand's help or its arguments need them, so
# `bayes-tee --help` loads neither NumPy nor SciPy.


class _Names(Sequence):
    """The names of a registry, read on first use (an ``argparse`` ``choices``)."""

    def __init__(self, load):
        self._load, self._names = load, None

    def _get(self) -> tuple[str, ...]:
        if self._names is None:
            self._names = tuple(self._load())
        return self._names

    def __getitem__(self, i):
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())


def _presets() -> tuple[str, ...]:
    from ._core.priors import PRESETS

    return tuple(PRESETS)


def _families() -> tuple[str, ...]:
    from .families import FAMILIES

    return tuple(FAMILIES)


def _methods() -> tuple[str, ...]:
    from .likelihoods import METHODS

    return METHODS


PRESETS, FAMILIES, METHODS = _Names(_presets), _Names(_families), _Names(_methods)

ROLE_FLAGS = ("outcome", "item", "prompt", "judge", "temperature", "replicate", "category", "position")
#: ``--from`` choice -> the :mod:`bayes_tee.io` reader.
READERS = {"inspect": "read_inspect", "promptfoo": "read_promptfoo", "lm-eval": "read_lm_eval"}


def _quiet_third_party() -> None:
    warnings.filterwarnings("ignore", message=".*ArviZ is undergoing a major refactor.*")
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS installation")


def _sampler_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--draws",
        type=int,
        default=None,
        help=(
            "draws per chain; by default the chains stop at the first checkpoint (1000 draws, then "
            "every 500) whose diagnostics pass, by 2000 (GLMM 4000, ordinal 2000-3000) when they "
            "pass there, else at most twice that"
        ),
    )
    p.add_argument("--tune", type=int, default=None, help="tuning steps per chain (1000; GLMM 500)")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quiet", action="store_true", help="no progress bar, less output")
    p.add_argument("--strict", action="store_true", help="exit 2 when diagnostics fail")


def _report(post, out: Path | None) -> None:
    print(post.summary())
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        png = out / "shares.png"
        post.plot_shares().savefig(png, dpi=120)
        print(f"\nShares plot written to {png}")


def _fit(args, df, roles):
    from .tee.fit import fit_posterior

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # the summary prints it
        return fit_posterior(
            df,
            **roles,
            chains=args.chains,
            tune=args.tune,
            draws=args.draws,
            random_seed=args.seed,
            progressbar=not args.quiet,
            family=getattr(args, "family", "gaussian"),
            swapped=getattr(args, "swapped", None),
            judge_effect=getattr(args, "judge_effect", "fixed"),
            priors=getattr(args, "priors", None),
            method=getattr(args, "method", "auto"),
            formula=getattr(args, "formula", None),
            system=getattr(args, "system", None),
            thresholds=getattr(args, "thresholds", "common"),
            spread=getattr(args, "spread", "common"),
        )


def _read(path: str):
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise DesignError(f"No file {path!r}.")
    if p.is_dir():  # a parquet dataset: reduced to per-cell statistics with dask, out of core
        return str(p)
    try:
        if p.suffix == ".parquet":
            return pd.read_parquet(p)
        if p.suffix in (".jsonl", ".ndjson"):
            return pd.read_json(p, lines=True)
        return pd.read_csv(p)
    except (ValueError, UnicodeDecodeError, ImportError, pd.errors.ParserError) as err:
        raise DesignError(f"Could not read {path!r} as {p.suffix.lstrip('.') or 'CSV'}: {err}") from None


def _read_logs(args) -> object:
    """The long frame from evaluation logs (``--from``), the reader's notes said on stderr."""
    fixed = [f"--{r}" for r in ROLE_FLAGS if r not in ("prompt", "category") and getattr(args, r) is not None]
    if fixed or args.roles:
        raise DesignError(
            f"--from {args.source} fills the roles from the logs; drop {', '.join(fixed) or '--roles'} "
            "(--prompt names the prompt variant's key, --model keeps one model)."
        )
    options: dict = {"model": args.model}
    if args.scorers:
        options["scorers"] = [s.strip() for s in args.scorers.split(",") if s.strip()]
    if args.prompt is not None:
        options["prompt"] = args.prompt
    if args.category is not None:
        if args.source != "inspect":
            raise DesignError("--category (a sample metadata key) is read from Inspect AI logs only.")
        options["category"] = args.category
    from . import io

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DesignWarning)
        df = getattr(io, READERS[args.source])(args.data, **options)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return df


def _print_design(d) -> None:
    """What a dry run prints: the design, its summary table, rows used and dropped, its notes."""
    print(repr(d))
    print(d.summary().to_string(index=False))
    print(f"rows used {d.n_rows}, dropped {sum(d.dropped.values())}; balanced: {d.balanced}")
    for note in d.notes:
        print(f"note: {note}")


def _toml(path: str | None) -> dict:
    if path is None:
        return {}
    import tomllib

    p = Path(path)
    if not p.exists():
        raise DesignError(f"No file {path!r}.")
    try:
        return tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as err:
        raise DesignError(f"{path!r} is not valid TOML: {err}") from None


def _roles(args) -> dict:
    table = _toml(args.roles)
    roles = {k: v for k, v in table.items() if k in ROLE_FLAGS}
    unknown = set(table) - set(ROLE_FLAGS)
    if unknown:
        raise DesignError(
            f"Unknown role(s) {sorted(unknown)} in {args.roles!r}; roles are {', '.join(ROLE_FLAGS)}."
        )
    roles.update({r: getattr(args, r) for r in ROLE_FLAGS if getattr(args, r) is not None})
    if getattr(args, "formula", None):  # build_design refuses the roles a formula does not take
        return roles
    for r in ("outcome", "item"):
        if not roles.get(r):
            raise DesignError(f'--{r} is required (or set {r} = "..." in a --roles TOML file).')
    return roles


def _costs(path: str | None) -> dict:
    t = _toml(path)
    unknown = set(t) - {"cost_per_call", "cost_per_item"}
    if unknown:
        raise DesignError(
            f"Unknown key(s) {sorted(unknown)} in {path!r}; use cost_per_call and cost_per_item."
        )
    return t


def _ints(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise DesignError(f"Expected comma-separated integers, got {text!r}.") from None


def _counts(pairs: list[str] | None) -> dict[str, list[int]]:
    """``--n facet=2,4,6`` flags as ``{facet: [2, 4, 6]}``."""
    out: dict[str, list[int]] = {}
    for pair in pairs or []:
        facet, sep, values = pair.partition("=")
        if not sep or not facet.strip():
            raise DesignError(f"--n takes FACET=COUNTS, e.g. --n evaluator=2,4,6; got {pair!r}.")
        out[facet.strip()] = _ints(values) or []
    return out


def _emit(args, table, title: str | None = None) -> None:
    if getattr(args, "json", False):
        print(table.to_json(orient="records", double_precision=6))
    else:
        import pandas as pd

        with pd.option_context("display.width", 140, "display.max_columns", 30):
            if title:
                print(title)
            print(table.to_string(index=False))


class _Parser(argparse.ArgumentParser):
    """argparse with user errors (bad flag, missing argument) on exit code 1, like every other
    user error, instead of argparse's 2 (which means failed diagnostics here).
    """

    def error(self, message: str):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(1)


def _rich_summary(post) -> None:
    """The summary as rich tables (on a terminal)."""
    from rich.console import Console
    from rich.table import Table

    from ._core import diagnostics as diag

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


def _data_args(p: argparse.ArgumentParser, saved: bool = False) -> None:
    """The data and model flags ``fit`` and ``leaderboard`` share."""
    p.add_argument(
        "data",
        help="CSV, parquet or JSON-lines file, or a parquet dataset directory (read out of core)"
        + ("; or a saved posterior (.nc) of a fit with --system" if saved else ""),
    )
    for role in ROLE_FLAGS:
        p.add_argument(f"--{role}")
    p.add_argument(
        "--system",
        help="the column of the compared systems (models): one joint fit; with --from, 'model'",
    )
    p.add_argument(
        "--swapped", help="pairwise: the --position level whose verdicts are in the swapped slot frame"
    )
    p.add_argument(
        "--from",
        dest="source",
        choices=tuple(READERS),
        help="read evaluation logs (a file or folder) instead of a table; the roles come from the logs",
    )
    p.add_argument("--model", help="with --from: keep this model's rows (logs of several models)")
    p.add_argument("--scorers", help="with --from: comma-separated scorers (judges) to keep")
    p.add_argument("--roles", help="TOML file with the column roles")
    p.add_argument(
        "--family",
        choices=FAMILIES,
        metavar="FAMILY",  # an explicit metavar: argparse reads the choices only to print help
        default="gaussian",
        help="%(choices)s; gaussian: linear (probability) model; binomial: logit GLMM for 0/1 outcomes",
    )
    for flag, what in (("thresholds", "cutpoints"), ("spread", "latent spread")):
        p.add_argument(
            f"--{flag}",
            choices=("common", "judge"),
            default="common",
            help=f"ordinal family: one {what} for the panel (the default) or each judge its own",
        )
    p.add_argument(
        "--judge-effect",
        choices=("fixed", "random"),
        default="fixed",
        help="judges as a fixed panel (sensitivity index, the default) or a random facet",
    )
    p.add_argument(
        "--priors", choices=PRESETS, metavar="PRESET", help="%(choices)s (default: half-t(3) on every SD)"
    )
    p.add_argument(
        "--method",
        choices=METHODS,
        metavar="METHOD",
        default="auto",
        help="%(choices)s (default auto: the fastest exact form for the layout)",
    )
    p.add_argument(
        "--formula",
        help="any design as an lme4-style formula, e.g. 'score ~ judge + (1|item) + (1|prompt)' "
        "(role flags then only name the item/prompt/judge/temperature/category columns)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bayes-tee", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="fit the embedded demo pilot and print the decomposition")
    demo.add_argument("--out", default="out", help="folder for the shares plot")
    demo.add_argument("--save", default=None, help="also save the posterior (netCDF)")
    _sampler_args(demo)

    fit = sub.add_parser("fit", help="fit a CSV/parquet/JSON-lines file")
    _data_args(fit)
    fit.add_argument("--out", help="where to save the posterior (.nc); required unless --dry-run")
    fit.add_argument("--dry-run", action="store_true", help="validate and describe the design; do not fit")
    _sampler_args(fit)

    board = sub.add_parser(
        "leaderboard", help="compare systems: one joint fit, leaderboard, paired differences and ranks"
    )
    _data_args(board, saved=True)
    board.add_argument("--out", help="also save the posterior (.nc)")
    board.add_argument("--level", type=float, default=0.9, help="credible level (0.9)")
    board.add_argument(
        "--over", choices=("new", "panel"), default="new", help="the reading of the ranks and pairs"
    )
    board.add_argument("--lower-is-better", action="store_true", help="rank 1 is the lowest score")
    board.add_argument("--json", action="store_true", help="leaderboard, pairs and diagnostics as JSON")
    _sampler_args(board)

    summ = sub.add_parser("summary", help="print the summary of a saved posterior")
    summ.add_argument("posterior")
    summ.add_argument("--json", action="store_true", help="components, shares, theta, diagnostics as JSON")
    summ.add_argument("--strict", action="store_true")

    dst = sub.add_parser("dstudy", help="projected SE of theta_hat over a grid of designs")
    dst.add_argument("posterior")
    for flag in ("items", "prompts", "judges", "temperatures", "replicates"):
        dst.add_argument(f"--{flag}", help="comma-separated counts (default: as observed)")
    dst.add_argument(
        "--n", action="append", metavar="FACET=COUNTS", help="counts of any facet, e.g. --n evaluator=2,4,6"
    )
    dst.add_argument("--target-se", type=float)
    dst.add_argument("--json", action="store_true")
    dst.add_argument("--strict", action="store_true")

    rel = sub.add_parser(
        "reliability", help="generalizability (E rho^2) and dependability (Phi) coefficients"
    )
    rel.add_argument("posterior")
    rel.add_argument(
        "--n", action="append", metavar="FACET=COUNTS", help="counts of a facet, e.g. --n evaluator=2,4,6"
    )
    rel.add_argument("--object", default="item", help="object of measurement (default: item)")
    rel.add_argument("--json", action="store_true")
    rel.add_argument("--strict", action="store_true")

    alloc = sub.add_parser("allocate", help="best design under a budget, with the cost frontier")
    alloc.add_argument("posterior")
    alloc.add_argument("--budget", type=float, required=True)
    alloc.add_argument("--costs", help="TOML: cost_per_call (number or per-judge table), cost_per_item")
    alloc.add_argument("--max-items", type=int)
    alloc.add_argument("--json", action="store_true")
    alloc.add_argument("--strict", action="store_true")

    rep = sub.add_parser("report", help="self-contained HTML report")
    rep.add_argument("posterior")
    rep.add_argument("--html", required=True, help="output .html file")
    rep.add_argument("--budget", type=float)
    rep.add_argument("--costs")
    rep.add_argument("--strict", action="store_true")
    return parser


def _design(args, df, roles: dict):
    """The design a dry run describes: the one fit_posterior would build from these flags."""
    from .design.build import build_design

    return build_design(
        df, formula=args.formula, **roles, swapped=getattr(args, "swapped", None), family=args.family,
        judge_effect=args.judge_effect, system=args.system, thresholds=args.thresholds, spread=args.spread,
        warn=False,
    )  # fmt: skip


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
    from ._core import diagnostics as diag

    msg = diag.message(post.diagnostics())
    if msg:
        print(f"WARNING: {msg}", file=sys.stderr)


def _run(args) -> object:
    from ._core import diagnostics as diag
    from .posterior.facade import load

    if args.command in ("summary", "dstudy", "reliability", "allocate", "report"):
        post = load(args.posterior)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DiagnosticWarning)  # printed once below
            if args.command == "summary":
                if args.json:
                    import json

                    print(
                        json.dumps(
                            {
                                "components": post.components().to_dict("records"),
                                "shares": post.shares().to_dict("records"),
                                **(
                                    {"leaderboard": post.leaderboard().to_dict("records")}
                                    if post.design.system
                                    else {"theta": post.theta().to_dict("records")[0]}
                                ),
                                "diagnostics": post.diagnostics(),
                            },
                            default=float,
                        )
                    )
                elif sys.stdout.isatty():
                    _rich_summary(post)
                else:
                    print(post.summary())
            elif args.command == "dstudy":
                grid = {
                    k: _ints(getattr(args, f))
                    for k, f in (
                        ("n_items", "items"),
                        ("n_prompts", "prompts"),
                        ("n_judges", "judges"),
                        ("n_temperatures", "temperatures"),
                        ("n_replicates", "replicates"),
                    )
                }
                table = post.dstudy(
                    **{k: v for k, v in grid.items() if v is not None},
                    n=_counts(args.n),
                    target_se=args.target_se,
                )
                what = "a difference between two systems" if post.design.system else "theta_hat"
                _emit(args, table, f"Projected SE of {what} (posterior median and 90% interval):")
            elif args.command == "reliability":
                table = post.reliability(object=args.object, n=_counts(args.n))
                _emit(
                    args, table, "E rho^2 (relative) and Phi (absolute), posterior median and 90% interval:"
                )
            elif args.command == "allocate":
                plan = post.allocate(args.budget, **_costs(args.costs), max_items=args.max_items)
                _emit(args, plan.best.to_frame().T, f"Best design at budget {args.budget:g}:")
                if not args.json:
                    _emit(args, plan.frontier, "\nFrontier:")
            else:
                costs = _costs(args.costs)
                path = post.report(
                    args.html, budget=args.budget, cost_per_call=costs.get("cost_per_call", 1.0)
                )
                print(f"Report written to {path}")
        msg = diag.message(post.diagnostics())
        if msg and not getattr(args, "json", False) and args.command != "summary":
            print(f"WARNING: {msg}", file=sys.stderr)
        return post
    if args.command == "demo":
        from .datasets import load as load_data

        df = load_data("tee_demo")
        roles = {r: r for r in ROLE_FLAGS if r not in ("outcome", "position")} | {"outcome": "score"}
        save = args.save
    elif args.source is not None:
        from .io import describe

        df = _read_logs(args)
        print(describe(df))
        if "model" in df.columns and df["model"].nunique() > 1 and args.system != "model":
            models = ", ".join(map(str, sorted(df["model"].unique())))
            if args.dry_run:
                print(
                    f"Several models: add --model NAME (one of {models}) to validate and fit one, or "
                    "--system model to compare them in one fit."
                )
                return None
            raise DesignError(
                f"The logs hold several models ({models}): compare them with --system model, or fit one "
                "at a time with --model NAME."
            )
        roles = {}
        if getattr(args, "dry_run", False):
            _print_design(_design(args, df, roles))
            return None
        if not args.out and args.command == "fit":
            raise DesignError("--out is required (where to save the posterior), unless --dry-run.")
        save = args.out
    elif args.command == "leaderboard" and args.data.endswith(".nc"):
        post = load(args.data)
        _print_leaderboard(args, post)
        return post
    else:
        df = _read(args.data)
        if args.model or args.scorers:
            raise DesignError(
                "--model and --scorers select from evaluation logs: add --from inspect|promptfoo|lm-eval."
            )
        roles = _roles(args)
        if getattr(args, "dry_run", False):
            _print_design(_design(args, df, roles))
            return None
        if not args.out and args.command == "fit":
            raise DesignError("--out is required (where to save the posterior), unless --dry-run.")
        save = args.out
    if args.command == "leaderboard" and not args.system and not args.formula:
        raise DesignError(
            "leaderboard compares systems: name their column with --system (e.g. --system model)."
        )
    post = _fit(args, df, roles)
    if args.command == "leaderboard":
        _print_leaderboard(args, post)
    else:
        _report(post, Path(args.out) if args.command == "demo" else None)
    if save:
        print(f"Posterior saved to {post.save(save)}")
    return post


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayes-tee`` console script."""
    _quiet_third_party()
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # --help (0) or a usage error (1)
        return int(stop.code or 0)
    try:
        post = _run(args)
    except (DesignError, FileNotFoundError, ValueError, KeyError, OSError) as err:
        print(f"bayes-tee: error: {err}", file=sys.stderr)
        return 1
    except RuntimeError as err:  # a sampler or library failure: one line, not a traceback
        first = first_line(err)
        print(f"bayes-tee: error: the fit failed: {first}", file=sys.stderr)
        return 1
    except Exception as err:  # a defect of ours: one line and how to see it whole
        if os.environ.get("BAYES_TEE_TRACEBACK"):
            raise
        first = first_line(err)
        print(
            f"bayes-tee: error: unexpected {type(err).__name__}: {first} (a defect: please report it "
            "with the command; BAYES_TEE_TRACEBACK=1 shows the traceback).",
            file=sys.stderr,
        )
        return 3
    if post is not None and getattr(args, "strict", False) and not post.diagnostics()["ok"]:
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
