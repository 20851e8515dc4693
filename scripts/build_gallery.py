"""Execute every notebook in its fast mode into docs/gallery/ for the documentation site.

    python scripts/build_gallery.py [--jobs 2]

Each notebook runs top to bottom with ``BAYES_TEE_FAST=1`` (fewer draws and simulations) in its
own folder (so ``../models`` and ``data/`` resolve) and the executed copy, outputs and figures
included, is written to ``docs/gallery/``. A notebook that needs ``../shared`` (its metadata says
so) is copied unexecuted, with a first cell saying why, when ``../shared`` is absent. Prints the
time of each; exits non-zero when a cell fails.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "external"
OUT = ROOT / "docs" / "gallery"
sys.path.insert(0, str(ROOT / "scripts"))
from run_notebook import main as run_notebook  # noqa: E402


def build(path: Path) -> str:
    dst = OUT / path.name
    nb = nbformat.read(path, as_version=4)
    if nb.metadata.get("bayes_tee", {}).get("needs_shared") and not SHARED.is_dir():
        note = nbformat.v4.new_markdown_cell(
            "```{note}\nThis notebook reads the paper's data from `../shared/external`, which was not "
            "beside the repository when these pages were built: it is shown unexecuted.\n```"
        )
        nb.cells.insert(1, note)
        nbformat.write(nb, dst)
        return f"{path.name}: copied unexecuted (no ../shared)"
    t0 = time.perf_counter()
    run_notebook(str(path), str(dst))
    return f"{path.name}: {time.perf_counter() - t0:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    os.environ["BAYES_TEE_FAST"] = "1"
    os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend: figures become outputs
    OUT.mkdir(parents=True, exist_ok=True)
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for line in pool.map(build, notebooks):
            print(line, flush=True)
    print(f"gallery: {len(notebooks)} notebooks in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
