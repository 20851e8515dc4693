"""The wheel installs into a clean venv (Python 3.13 when present) and fits the demo there,
package data included (scripts/check_wheel.py does the work).
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_fits_the_demo_in_a_clean_venv():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_wheel.py")],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "fits the demo on Python 3." in out.stdout
    assert "replicate" in out.stdout  # the components table was printed
