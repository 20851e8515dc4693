"""The command line's inputs: data files and logs read, roles and costs from TOML, and count
lists.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from .._core.exceptions import DesignError, DesignWarning
from .parser import READERS, ROLE_FLAGS


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
    from .. import io

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DesignWarning)
        df = getattr(io, READERS[args.source])(args.data, **options)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return df


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


def _system_costs(path: str | None):
    """``--cost FILE``: a table (CSV, parquet, JSON lines) of systems and costs, or a TOML
    ``system = cost`` mapping; read and checked before the data (its systems are checked
    against the fit's by the leaderboard).
    """
    if path is None:
        return None
    p = Path(path)
    if not p.is_file():
        raise DesignError(f"--cost {path}: no such file (a table of system and cost, or TOML system = cost).")
    if p.suffix == ".toml":
        table = _toml(path)
        nested = [k for k, v in table.items() if isinstance(v, dict)]
        if nested:
            raise DesignError(
                f"--cost {path}: write one 'system = cost' line per system, not tables {nested}."
            )
        return table
    table = _read(path)
    if len(table) == 0:
        raise DesignError(f"--cost {path} holds no rows.")
    return table


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


def _design(args, df, roles: dict):
    """The design a dry run describes: the one fit_posterior would build from these flags."""
    from ..design.build import build_design

    return build_design(
        df, formula=args.formula, **roles, swapped=getattr(args, "swapped", None), family=args.family,
        judge_effect=args.judge_effect, system=args.system, thresholds=args.thresholds, spread=args.spread,
        warn=False,
    )  # fmt: skip
