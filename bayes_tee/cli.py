"""``bayes-tee`` command line over the same functions as the Python API.

    bayes-tee demo [--out DIR] [--save models/tee_demo.nc]
    bayes-tee fit pilot.csv --outcome score --item item_id --prompt variant_id --out pilot.nc
    bayes-tee summary pilot.nc

Exit codes: 0 ok, 1 user error (one-line reason on stderr), 2 diagnostics failed with --strict.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from .exceptions import DesignError, DiagnosticWarning

ROLE_FLAGS = ("outcome", "item", "prompt", "judge", "temperature", "replicate", "category")


def _quiet_third_party() -> None:
    warnings.filterwarnings("ignore", message=".*ArviZ is undergoing a major refactor.*")
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS installation")


def _sampler_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quiet", action="store_true", help="no progress bar, less output")
    p.add_argument("--strict", action="store_true", help="exit 2 when diagnostics fail")


def _report(post, out: Path | None) -> None:
    print(post.summary())
    if out is not None:
        from .plots import plot_shares

        out.mkdir(parents=True, exist_ok=True)
        png = out / "shares.png"
        plot_shares(post).savefig(png, dpi=120)
        print(f"\nShares plot written to {png}")


def _fit(args, df, roles):
    from .fit import fit_posterior

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # the summary prints it
        return fit_posterior(
            df,
            **roles,
            chains=args.chains,
            tune=args.tune,
            draws=args.draws,
            random_seed=args.seed,
            progress_bar=not args.quiet,
            family=getattr(args, "family", "gaussian"),
        )


def _read(path: str):
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise DesignError(f"No file {path!r}.")
    if p.suffix == ".parquet":
        return pd.read_parquet(p)
    if p.suffix in (".jsonl", ".ndjson"):
        return pd.read_json(p, lines=True)
    return pd.read_csv(p)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayes-tee`` console script."""
    _quiet_third_party()
    parser = argparse.ArgumentParser(prog="bayes-tee", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="fit the embedded demo pilot and print the decomposition")
    demo.add_argument("--out", default="out", help="folder for the shares plot")
    demo.add_argument("--save", default=None, help="also save the posterior (netCDF)")
    _sampler_args(demo)

    fit = sub.add_parser("fit", help="fit a CSV/parquet/JSON-lines file")
    fit.add_argument("data")
    for role in ROLE_FLAGS:
        fit.add_argument(f"--{role}", required=role in ("outcome", "item"))
    fit.add_argument("--out", required=True, help="where to save the posterior (.nc)")
    fit.add_argument("--family", choices=("gaussian", "binomial"), default="gaussian",
                     help="gaussian: linear (probability) model; binomial: logit GLMM for 0/1 outcomes")
    _sampler_args(fit)

    summ = sub.add_parser("summary", help="print the summary of a saved posterior")
    summ.add_argument("posterior")
    summ.add_argument("--strict", action="store_true")

    args = parser.parse_args(argv)
    try:
        if args.command == "summary":
            from .posterior import load

            post = load(args.posterior)
            print(post.summary())
        else:
            if args.command == "demo":
                from .datasets import load as load_data

                df = load_data("tee_demo")
                roles = {r: r for r in ROLE_FLAGS if r != "outcome"} | {"outcome": "score"}
                save = args.save
            else:
                df = _read(args.data)
                roles = {r: getattr(args, r) for r in ROLE_FLAGS}
                save = args.out
            post = _fit(args, df, roles)
            _report(post, Path(args.out) if args.command == "demo" else None)
            if save:
                print(f"Posterior saved to {post.save(save)}")
    except (DesignError, FileNotFoundError, ValueError, KeyError) as err:
        print(f"bayes-tee: error: {err}", file=sys.stderr)
        return 1
    if args.strict and not post.diagnostics()["ok"]:
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
