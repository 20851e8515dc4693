"""The ``bayes-tee`` command line over the same functions as the Python API: :func:`main` runs a
subcommand; its arguments are :mod:`~.parser` (whose text is the ``--help`` page), what it reads
is :mod:`~.inputs` and what it prints :mod:`~.output`. Nothing heavy is imported until a
subcommand runs.

>>> main(["--help"])  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

from .._core.exceptions import DesignError, DiagnosticWarning, first_line
from .inputs import _costs, _counts, _design, _ints, _read, _read_logs, _roles, _system_costs
from .output import _emit, _print_design, _print_leaderboard, _print_next, _report, _rich_summary
from .parser import ROLE_FLAGS, _parser

# Nothing heavy is imported above: each subcommand loads its machinery (pandas, the fit, ArviZ,
# matplotlib) when it runs, and the lists of prior presets, families and likelihoods are read
# from their registries only when a subcommand's help or its arguments need them, so
# `bayes-tee --help` loads neither NumPy nor SciPy.


def _quiet_third_party() -> None:
    warnings.filterwarnings("ignore", message=".*ArviZ is undergoing a major refactor.*")
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS installation")


def _fit(args, df, roles):
    from ..tee.fit import fit_posterior

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


def _run(args) -> object:
    from .._core import diagnostics as diag
    from ..posterior.facade import load

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
    if args.command == "warmup":
        from .warmup import warm_up

        t = time.perf_counter()
        table = warm_up(args.layouts, jobs=args.jobs, ship=args.ship)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
        where = "for the generic CPU into the package" if args.ship else "and cached"
        print(f"kernels compiled {where} in {time.perf_counter() - t:.0f} s")
        return None
    if args.command == "demo":
        from ..datasets import load as load_data

        df, cost = load_data("tee_demo"), None
        roles = {r: r for r in ROLE_FLAGS if r not in ("outcome", "position")} | {"outcome": "score"}
        save = args.save
    elif args.source is not None:
        from ..io import describe

        cost = _check_leaderboard(args)
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
    elif args.command in ("leaderboard", "next") and args.data.endswith(".nc"):
        _check_next(args)
        cost = _check_leaderboard(args, saved=True)
        post = load(args.data)
        _print_leaderboard(args, post, cost) if args.command == "leaderboard" else _print_next(
            args, post, _read
        )
        return post
    else:
        _check_next(args)
        cost = _check_leaderboard(args)
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
    if args.command == "leaderboard" and cost is not None and hasattr(df, "columns") and args.system in df:
        from ..posterior.cost_front import system_costs

        try:  # the costs' systems against the data's, before the fit
            system_costs(cost, sorted(map(str, df[args.system].dropna().unique())), system=args.system,
                         cost_column=args.cost_column)  # fmt: skip
        except DesignError as err:
            raise DesignError(f"--cost {args.cost}: {err}") from None
    post = _fit(args, df, roles)
    if args.command == "leaderboard":
        _print_leaderboard(args, post, cost)
    elif args.command == "next":
        _print_next(args, post, _read)
    else:
        _report(post, Path(args.out) if args.command == "demo" else None)
    if save:
        print(f"Posterior saved to {post.save(save)}")
    return post


def _check_leaderboard(args, saved: bool = False):
    """``leaderboard``'s arguments, checked before any data is read; returns the ``--cost``
    table (or mapping), read and checked, or ``None``.
    """
    if args.command != "leaderboard":
        return None
    if not 0 < args.level < 1:
        raise DesignError(f"--level is a credible level between 0 and 1 (e.g. 0.9), got {args.level:g}.")
    if not saved and not args.system and not args.formula:
        raise DesignError(
            "leaderboard compares systems: name their column with --system (e.g. --system model)."
        )
    if not saved and args.source is None:
        if not args.formula and not args.roles:
            for r in ("outcome", "item"):
                if not getattr(args, r):
                    raise DesignError(f'--{r} is required (or set {r} = "..." in a --roles TOML file).')
    if args.cost_column and not args.cost:
        raise DesignError("--cost-column names a column of --cost FILE: give --cost too.")
    args.control_values = _controls(args.control)
    return _system_costs(args.cost)


def _controls(items: list[str] | None) -> dict[str, float] | None:
    """``--control COLUMN=VALUE`` flags as a mapping, each value a number."""
    if not items:
        return None
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = None
        if not eq or not name.strip() or number is None:
            raise DesignError(
                f"--control {item!r}: write COLUMN=VALUE with a number, e.g. --control length=0."
            )
        out[name.strip()] = number
    return out


def _check_next(args) -> None:
    """``next``'s arguments, checked before any data is read."""
    if args.command != "next":
        return
    if not args.status and not args.pool:
        raise DesignError("next needs --pool FILE (the candidate calls), or --status to check the objective.")
    if args.pool and not Path(args.pool).exists():
        raise DesignError(f"--pool {args.pool}: no such file.")
    if args.n < 1:
        raise DesignError(f"--n is the number of calls to choose: a positive integer, got {args.n}.")
    if args.objective in ("separate", "theta") and args.system and not args.systems:
        raise DesignError(
            f"--objective {args.objective} on systems needs --systems (the pair, or the system)."
        )


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
