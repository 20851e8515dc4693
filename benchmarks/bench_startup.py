"""Start-up as a user meets it: each figure is the wall time of a fresh process, in the
environment as it is (``PYTHONDONTWRITEBYTECODE`` as set; the venv's bytecode compiled by
``make``), the median of ``--repeats`` runs, against the issue's targets.

    python benchmarks/bench_startup.py [--repeats 3]

Figures: ``bayes-tee --help``, ``bayes-tee fit --help``, ``python -c "import bayes_tee"``,
``python -c "import pandas"`` (the floor of any command that reads a table), and the demo fit
(``bayes-tee demo``, import included) in a second fresh process, once numba's kernel cache is
warm. It prints the ratio of each figure to its target.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
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
