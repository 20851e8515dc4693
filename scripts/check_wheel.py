"""Build the wheel, install it into a clean venv (Python 3.13 when this machine has it) with the
locked dependencies, and fit the embedded demo there, from a folder outside the repository; read
the Inspect AI logs of notebook 08 there too (the wheel installs no inspect-ai).

    python scripts/check_wheel.py [--python /path/to/python3.13] [--keep]

Exits non-zero on any failure; prints the interpreter, the wheel and the fitted components.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"

SMOKE = """
import warnings
warnings.simplefilter("error")
import bayes_tee as bt
assert "site-packages" in bt.__file__, bt.__file__
df = bt.datasets.load("tee_demo")
post = bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", judge="judge",
                        temperature="temperature", replicate="replicate", category="category",
                        draws=300, tune=300, random_seed=1, progressbar=False)
print(post)
print(post.components().round(4).to_string())
assert post.diagnostics()["divergences"] == 0
# Inspect AI logs without inspect-ai: the .eval archives' Zstandard members read directly
import importlib.util, sys
assert importlib.util.find_spec("inspect_ai") is None
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bt.DesignWarning)  # the logs' errored sample, said on purpose
    logs = bt.read_inspect(sys.argv[1])
assert len(logs) == 342 and logs.attrs["dropped"], logs.attrs
print(bt.io.describe(logs))
"""


def newest_python() -> str:
    """Python 3.13 if this machine has it (PATH or pyenv), else the running interpreter."""
    found = shutil.which("python3.13")
    if found and subprocess.run([found, "--version"], capture_output=True).returncode == 0:
        return found
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python3.13")))
    return pyenv[-1] if pyenv else sys.executable


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=None, help="interpreter of the clean venv (default: 3.13 if present)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = ap.parse_args()
    python = a.python or newest_python()
    tmp = Path(tempfile.mkdtemp(prefix="bayes_tee_wheel_"))
    try:
        run(
            [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp / "dist"), str(ROOT)],
            stdout=subprocess.DEVNULL,
        )
        wheel = next((tmp / "dist").glob("bayes_tee-*.whl"))
        run([python, "-m", "venv", str(tmp / "venv")])
        vpy = tmp / "venv" / "bin" / "python"
        uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv"
        run(
            [
                uv,
                "pip",
                "install",
                "--quiet",
                "--compile-bytecode",
                "--python",
                str(vpy),
                "-c",
                str(LOCK),
                str(wheel),
            ]
        )
        run([str(vpy), "-c", SMOKE, str(ROOT / "notebooks" / "data" / "inspect_logs")], cwd=tmp)
        run([str(tmp / "venv" / "bin" / "bayes-tee"), "--help"], cwd=tmp, stdout=subprocess.DEVNULL)
        print(
            f"wheel {wheel.name} fits the demo on "
            f"{subprocess.check_output([str(vpy), '--version'], text=True).strip()}"
        )
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
