"""Reading Inspect AI logs: bt.read_inspect's direct archive reader against inspect-ai's own
readers, on logs Inspect writes here on its mock provider (scripts/make_inspect_logs.py).

    python benchmarks/bench_readers.py [--items 400] [--epochs 5]

Times, each the best of three after a warm-up read (imports excluded):
``archive``: ``bt.read_inspect(engine="archive")`` (Zstandard members decoded directly);
``inspect``: ``bt.read_inspect(engine="inspect")`` (inspect-ai's ``read_eval_log_samples``,
pydantic-validated, transcripts excluded); ``samples_df``: inspect-ai's own
``inspect_ai.analysis.samples_df`` (one wide row per sample, no per-score rows: the yardstick a
user would otherwise reach for). Prints the seconds and the ratios to ``archive``.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
import warnings
from pathlib import Path

import bayes_tee as bt

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_inspect_logs.py"


def _best(fn, repeats: int = 3) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("make_inspect_logs", SCRIPT)
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    from inspect_ai.analysis import samples_df

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        make.make_logs(tmp, n_items=args.items, epochs=args.epochs, edits=False)
        made = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in Path(tmp).glob("*.eval")) / 1e6
        df = bt.read_inspect(tmp, engine="archive")
        print(
            f"2 logs, {args.items} items x {args.epochs} epochs x 2 wordings = "
            f"{2 * args.items * args.epochs} "
            f"samples, {len(df)} scores, {size:.1f} MB (Inspect wrote them in {made:.1f} s)"
        )
        timings = {
            "archive": _best(lambda: bt.read_inspect(tmp, engine="archive")),
            "inspect": _best(lambda: bt.read_inspect(tmp, engine="inspect")),
            "samples_df": _best(lambda: samples_df(tmp, quiet=True)),
        }
    for name, seconds in timings.items():
        print(f"{name:>10}: {seconds:7.3f} s   ratio to archive {seconds / timings['archive']:6.1f}x")


if __name__ == "__main__":
    main()
