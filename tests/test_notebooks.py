"""Execute every notebook top to bottom with few draws (BAYES_TEE_FAST=1)."""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SHARED = ROOT.parent / "shared" / "external"
OWN_WARNINGS = re.compile(r"(Diagnostic|Design|Calibration)Warning")


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("BAYES_TEE_FAST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    if nb.metadata.get("bayes_tee", {}).get("needs_shared") and not SHARED.is_dir():
        pytest.skip(f"{path.name} reads ../shared/external, which is not beside the repo")
    # IPC sockets in a private folder: no TCP ports, and no "running over TCP" warning
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(tmp_path / "kernel")
    NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        config=config,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors
    # no library noise for users: the only warnings a notebook may show are bayes_tee's own
    # (a failed diagnostic, a design note), which are part of the answer
    stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    noise = [line for line in stderr.splitlines() if "Warning" in line and not OWN_WARNINGS.search(line)]
    assert not noise, noise
