"""Execute every notebook that needs nothing beside the repository, top to bottom with few
draws (BAYES_TEE_FAST=1); those reading ``../shared`` are in ``test_notebooks_shared.py`` (two
files, so the two workers of ``make test`` share them).
"""

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [
    p
    for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not nbformat.read(p, as_version=4).metadata.get("bayes_tee", {}).get("needs_shared")
]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, run_notebook):
    run_notebook(path)
