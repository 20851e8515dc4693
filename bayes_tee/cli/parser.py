"""``bayes-tee`` command line over the same functions as the Python API.

    bayes-tee demo [--out DIR] [--save models/tee_demo.nc]
    bayes-tee fit pilot.csv --outcome score --item item_id --prompt variant_id --out pilot.nc
    bayes-tee fit pilot.csv --roles roles.toml --dry-run      # validate and describe only
    bayes-tee fit logs/ --from inspect --prompt wording --out pilot.nc   # Inspect AI logs
    bayes-tee fit pilot.csv --roles roles.toml --judge-effect random --priors half_normal --out p.nc
    bayes-tee fit results.json --from promptfoo --model gpt-4o --dry-run
    bayes-tee fit g.csv --formula "score ~ (1|item) + (1|evaluator) + (1|prompt)" --out g.nc
    bayes-tee leaderboard runs.csv --outcome score --item item --judge judge --system model
        [--pairs [unresolved]] [--cost costs.csv] [--control length=0] [--json]
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
import sys
from collections.abc import Sequence

ROLE_FLAGS = ("outcome", "item", "prompt", "judge", "temperature", "replicate", "category", "position")
#: ``--from`` choice -> the :mod:`bayes_tee.io` reader.
READERS = {"inspect": "read_inspect", "promptfoo": "read_promptfoo", "lm-eval": "read_lm_eval"}


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
    from .._core.priors import PRESETS

    return tuple(PRESETS)


def _families() -> tuple[str, ...]:
    from ..families import FAMILIES

    return tuple(FAMILIES)


def _methods() -> tuple[str, ...]:
    from ..likelihoods import METHODS

    return METHODS


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


class _Parser(argparse.ArgumentParser):
    """argparse with user errors (bad flag, missing argument) on exit code 1, like every other
    user error, instead of argparse's 2 (which means failed diagnostics here).
    """

    def error(self, message: str):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(1)


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

    warm = sub.add_parser(
        "warmup", help="compile the likelihood kernels into the on-disk cache once (after installing)"
    )
    warm.add_argument("--jobs", type=int, default=2, help="processes compiling in parallel")
    warm.add_argument(
        "--layouts", nargs="+", metavar="NAME", default=None,
        help="only these layouts (names as printed, e.g. marginal cells); default every one",
    )  # fmt: skip
    warm.add_argument(
        "--ship", action="store_true",
        help="compile the kernels for numba's generic CPU into the package (for a wheel that ships them)",
    )  # fmt: skip

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
    board.add_argument(
        "--pairs", nargs="?", const="all", choices=("all", "unresolved"),
        help="also print the pairwise differences (all, or only the unresolved ones)",
    )  # fmt: skip
    board.add_argument(
        "--cost", metavar="FILE",
        help="what each system costs: CSV/parquet/JSON-lines with the system column and a cost column "
        "(one row per system, or per call: averaged), or TOML 'system = cost'; adds p_pareto",
    )  # fmt: skip
    board.add_argument(
        "--cost-column", help="the cost column of --cost FILE (default 'cost' or its only other)"
    )
    board.add_argument(
        "--control", action="append", metavar="COLUMN=VALUE",
        help="set a covariate of the formula to a reference value (repeatable), e.g. --control length=0: "
        "the length-controlled leaderboard",
    )  # fmt: skip
    board.add_argument(
        "--json", action="store_true",
        help="one JSON document (bayes_tee.leaderboard/1): leaderboard, groups, pairs, diagnostics, notes",
    )  # fmt: skip
    _sampler_args(board)

    nxt = sub.add_parser(
        "next", help="while an eval runs: the calls worth scoring next, or whether to stop (--status)"
    )
    _data_args(nxt, saved=True)
    nxt.add_argument("--pool", help="CSV/parquet/JSON-lines of candidate calls (the role columns)")
    nxt.add_argument("--n", type=int, default=100, help="calls to choose (100)")
    nxt.add_argument(
        "--objective", choices=("best", "rank", "separate", "theta"), default="best",
        help="what the calls should resolve (best: the leader's P(best))",
    )  # fmt: skip
    nxt.add_argument("--systems", help="comma-separated: the pair (separate) or the system (theta)")
    nxt.add_argument("--over", choices=("new", "panel"), default="new", help="the reading of the error")
    nxt.add_argument("--level", type=float, default=0.9, help="level of a theta interval (0.9)")
    nxt.add_argument("--target", type=float, help="with --status: the metric's target")
    nxt.add_argument("--cost", help="the pool's column with each call's cost")
    nxt.add_argument("--status", action="store_true", help="print the metric and whether --target is met")
    nxt.add_argument("--out", help="write the chosen calls here (CSV); default: print them")
    nxt.add_argument("--json", action="store_true", help="the chosen calls, or the status, as JSON")
    _sampler_args(nxt)

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


PRESETS, FAMILIES, METHODS = _Names(_presets), _Names(_families), _Names(_methods)
