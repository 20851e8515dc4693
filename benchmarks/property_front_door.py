"""The front door's property run long: generated frames (random facets, dtypes, missing values,
repeated calls, constant or extreme scores, roles or formula, family) each give a design whose
cells and levels are the data's, or one package error (tests/design/test_properties.py runs
the same property on a small fixed budget in ``make test``).

    python benchmarks/property_front_door.py [--examples 3000] [--fits 100] [--seed 0]

``--fits`` also fits that many generated frames (short chains) and checks the answers are
finite or one package error.

Prints how the examples ended (a design, or which package error) and stops at the first
counterexample, which hypothesis shrinks and prints.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

TESTS = Path(__file__).resolve().parents[1] / "tests" / "design" / "test_properties.py"


def _properties():
    spec = importlib.util.spec_from_file_location("test_properties", TESTS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=3000)
    parser.add_argument("--fits", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # loading PyTensor on the first fit raises the recursion limit, which hypothesis notes
    warnings.filterwarnings("ignore", message="The recursion limit will not be reset")
    props = _properties()
    tally: Counter = Counter()

    @seed(args.seed)
    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(props.frames())
    def run(case):
        df, spec = case
        tally[props.check_front_door(df, spec)] += 1

    fits: Counter = Counter()

    @seed(args.seed)
    @settings(
        max_examples=max(args.fits, 1),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(props.frames())
    def fit(case):
        df, spec = case
        fits[props.check_fit(df, spec)] += 1

    for name, counter, call, n in (("designs", tally, run, args.examples), ("fits", fits, fit, args.fits)):
        if not n:
            continue
        start = time.perf_counter()
        call()
        total = sum(counter.values())
        print(f"{total} {name} (hypothesis seed {args.seed}) in {time.perf_counter() - start:.1f} s:")
        for outcome, k in counter.most_common():
            print(f"  {outcome:<20} {k:>6}  ({k / total:.0%})")
    print("no counterexample: every frame gave its design (and fit) or one package error")


if __name__ == "__main__":
    main()
