"""Execute every notebook that reads ``../shared/external`` (the seed papers' real data), top to
bottom with few draws (BAYES_TEE_FAST=1); skipped with the reason when it is not beside the repo.
"""

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "external"
NOTEBOOKS = [
    p
    for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
    if nbformat.read(p, as_version=4).metadata.get("bayes_tee", {}).get("needs_shared")
]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, run_notebook):
    if not SHARED.is_dir():
        pytest.skip(f"{path.name} reads ../shared/external, which is not beside the repo")
    run_notebook(path)
