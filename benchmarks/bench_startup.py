"""Start-up as a user meets it: each figure is the wall time of a fresh process, in the
environment as it is (``PYTHONDONTWRITEBYTECODE`` as set; the venv's bytecode compiled by
``make``), the median of ``--repeats`` runs, against the issue's targets.

    python benchmarks/bench_startup.py [--repeats 3]

Figures: ``bayes-tee --help``, ``bayes-tee fit --help``, ``python -c "import bayes_tee"``,
``python -c "import pandas"`` (the floor of any command that reads a table), and the demo fit
(``bayes-tee demo``, import included) in a second fresh process, once numba's kernel cache is
warm. It prints the ratio of each figure to its target.

    python benchmarks/bench_startup.py --cold

``--cold``: per kernel family (balanced, blocks, collapsed, binomial, ordinal), the first fit of a tiny design
(``bayes_tee.cli.warmup.LAYOUTS``) in a fresh process with numba's and PyTensor's caches at new
empty folders: as a user of the package meets it (the kernels shipped compiled in the package,
``bayes-tee warmup --ship``; ``shipped`` is ``-`` where the package holds none of these sources),
and with the shipped set turned off (``BAYES_TEE_PRECOMPILED=0``: the kernels compile); then the
same fit in a fresh process with the caches the compiling run filled (warm), and the time of
``bayes-tee warmup`` itself from empty caches.

    python benchmarks/bench_startup.py --cold --against /path/to/other/checkout [--repeats 2]

``--against``: the same cold and warm first fits, alternating between this checkout and another
checkout of bayes_tee (say ``git worktree add /tmp/old <commit>``), run with this venv, so that
a change to the kernels is measured against the code before it on the machine as it is now.

    python benchmarks/bench_startup.py --native

``--native``: the compile of the PyMC models a kernel does not cover (``marginal``, ``cells``),
each in a fresh process: ours with empty numba and PyTensor caches (a graph new to the
machine), ours again (the same graph: the C callbacks load from disk,
``bayes_tee._core.native``), and nutpie's own ``compile_pymc_model`` with the same warm caches
(what every new process paid before).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
CLI = str(BIN / "bayes-tee")


def wall(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


FIT = "import sys; from bayes_tee.cli.warmup import _warm; print(_warm(sys.argv[1])[1])"


def _empty_caches(folder: str) -> dict[str, str]:
    """The environment of a process whose numba and PyTensor caches (PyTensor's numba cache
    included: it lives under ``base_compiledir``) are at new folders under ``folder``.
    """
    return {**os.environ, "NUMBA_CACHE_DIR": f"{folder}/nb", "PYTENSOR_FLAGS": f"base_compiledir={folder}/pt"}


#: A fit run from the source tree at ``$SRC`` (not the editable install's) for ``--against``.
FIT_FROM = (
    "import os, sys\n"
    "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(type(f)).lower()]\n"
    "sys.path.insert(0, os.environ['SRC'])\n"
    "import bayes_tee\n"
    "assert bayes_tee.__file__.startswith(os.environ['SRC']), bayes_tee.__file__\n" + FIT
)
LAYOUTS = ("balanced", "blocks", "collapsed", "binomial", "ordinal")


def cold_then_warm(name: str, fit: str = FIT, **env: str) -> tuple[float, float]:
    """Seconds of layout ``name``'s first fit in a fresh process with empty caches, then of the
    same fit in a second fresh process (the caches the first one filled).
    """
    with tempfile.TemporaryDirectory() as cache:
        run, environ = [sys.executable, "-c", fit, name], {**_empty_caches(cache), **env}
        t0 = time.perf_counter()
        subprocess.run(run, check=True, env=environ, capture_output=True)
        t1 = time.perf_counter()
        subprocess.run(run, check=True, env=environ, capture_output=True)
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def against(other: str, repeats: int) -> None:
    """Cold and warm first fits of this checkout and ``other``, alternated, ``repeats`` times."""
    trees = {"this": str(Path(__file__).resolve().parents[1]), "other": str(Path(other).resolve())}
    print(f"this: {trees['this']}; other: {trees['other']}")
    print(f"{'layout':<12}{'tree':<7}{'cold s':>8}{'warm s':>8}")
    for r in range(repeats):
        for name in LAYOUTS:
            order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
            for tag, src in order:
                first, again = cold_then_warm(name, FIT_FROM, SRC=src)
                print(f"{name:<12}{tag:<7}{first:>8.1f}{again:>8.1f}", flush=True)


def cold() -> None:
    shipped = (Path(__file__).resolve().parents[1] / "bayes_tee/likelihoods/kernels/compiled").is_dir()
    print(f"{'layout':<12}{'shipped s':>10}{'compiled s':>11}{'warm s':>8}{'shipped/warm':>14}")
    for name in LAYOUTS:
        first, _ = cold_then_warm(name) if shipped else (float("nan"), None)
        compiled, again = cold_then_warm(name, BAYES_TEE_PRECOMPILED="0")
        print(f"{name:<12}{first:>10.1f}{compiled:>11.1f}{again:>8.1f}{first / again:>14.1f}", flush=True)
    with tempfile.TemporaryDirectory() as cache:
        env = {**_empty_caches(cache), "BAYES_TEE_PRECOMPILED": "0"}
        t0 = time.perf_counter()
        subprocess.run([CLI, "warmup"], check=True, env=env, capture_output=True)
        t1 = time.perf_counter()
        subprocess.run([sys.executable, "-c", FIT, "ordinal"], check=True, env=env, capture_output=True)
        t2 = time.perf_counter()
    print(f"bayes-tee warmup from empty caches: {t1 - t0:.1f} s; then a first ordinal fit: {t2 - t1:.1f} s")


NATIVE = """
import sys, time
import nutpie
from bayes_tee._core.native import compile_cached
from bayes_tee._core.priors import get_prior
from bayes_tee.cli.warmup import _pilot, ROLES
from bayes_tee import validate_design
from bayes_tee.likelihoods import build_model
design = validate_design(_pilot(0.05), **ROLES)
model = build_model(design, get_prior(), method=sys.argv[1])
t = time.perf_counter()
compile_cached(model) if sys.argv[2] == "ours" else nutpie.compile_pymc_model(model)
print(time.perf_counter() - t)
"""


def native() -> None:
    print(f"{'model':<10}{'new graph s':>12}{'cached s':>10}{'nutpie s':>10}{'nutpie/cached':>15}")
    for method in ("marginal", "cells"):
        with tempfile.TemporaryDirectory() as cache:
            env = _empty_caches(cache)

            def compile_s(which: str) -> float:
                run = [sys.executable, "-c", NATIVE, method, which]
                out = subprocess.run(run, check=True, env=env, capture_output=True, text=True)
                return float(out.stdout.strip().splitlines()[-1])

            new, cached, theirs = compile_s("ours"), compile_s("ours"), compile_s("nutpie")
        print(f"{method:<10}{new:>12.1f}{cached:>10.1f}{theirs:>10.1f}{theirs / cached:>15.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="cold against warm first fits per kernel family")
    ap.add_argument("--native", action="store_true", help="cached against nutpie's compile of PyMC models")
    ap.add_argument("--against", metavar="CHECKOUT", help="with --cold: alternate with another checkout")
    args = ap.parse_args()
    if args.cold and args.against:
        against(args.against, args.repeats)
        return
    if args.native:
        native()
        return
    if args.cold:
        cold()
        return
    out = tempfile.mkdtemp()
    demo = [CLI, "demo", "--out", out, "--quiet"]
    subprocess.run(
        demo, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )  # warm numba's cache
    rows = [
        ("bayes-tee --help", [CLI, "--help"], 1.0),
        ("bayes-tee fit --help", [CLI, "fit", "--help"], 1.0),
        ("import bayes_tee", [sys.executable, "-c", "import bayes_tee"], 3.0),
        ("import pandas (floor)", [sys.executable, "-c", "import pandas"], None),
        ("demo fit, import included", demo, 8.0),
    ]
    print(f"{'command':<28}{'wall s':>8}{'target s':>10}{'ratio':>8}")
    for name, cmd, target in rows:
        t = wall(cmd, args.repeats)
        ratio = f"{t / target:.2f}" if target else "-"
        print(f"{name:<28}{t:>8.2f}{(target or float('nan')):>10.1f}{ratio:>8}")


if __name__ == "__main__":
    main()
