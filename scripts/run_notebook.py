"""Execute a notebook top to bottom and write the executed copy (nbclient; no nbconvert needed).

    python scripts/run_notebook.py notebooks/00_safety_paper.ipynb out/00_safety_paper.ipynb

Environment variables (BAYES_TEE_FAST, BAYES_TEE_REFIT) pass through to the kernel. Prints the
wall time; exits non-zero when a cell fails.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config


def ipc_config(folder: Path) -> Config:
    """Kernel over IPC sockets in ``folder``: no TCP ports, no "running over TCP" warning; the
    client still owns (and shuts down) the kernel it starts.
    """
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(folder / "kernel")
    return config


def main(src: str, dst: str) -> None:
    path = Path(src).resolve()
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        # IPC sockets in a private folder: no TCP ports, and no "running over TCP" warning
        NotebookClient(
            nb,
            timeout=None,
            kernel_name="python3",
            config=ipc_config(Path(tmp)),
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dst)
    print(f"{path.name}: executed in {time.perf_counter() - t0:.0f} s -> {dst}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
