"""The built documentation site looked at as a person would: pages open in headless Chromium,
render something (not a blank page), show their figures, and log no console errors.

Runs after ``make docs`` (which calls it); skipped with a reason when the site is not built or
Chromium is absent. Screenshots are kept in ``docs/_build/screenshots/`` to look at.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

import bayes_tee as bt

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"
SHOTS = ROOT / "docs" / "_build" / "screenshots"
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]
#: page -> text it must show and whether it must show a figure
PAGES = {
    "index.html": ("total evaluation error", False),
    "guide/getting_started.html": ("Two commands", False),
    "gallery/03_dstudy.html": ("D-study", True),
    "gallery/08_eval_logs.html": ("read_inspect", True),
    "api/generated/bayes_tee.fit_posterior.html": ("fit_posterior", False),
    "api/posterior.html": ("dstudy", False),
}

pytestmark = [
    pytest.mark.skipif(not (SITE / "index.html").exists(), reason="docs not built: run `make docs`"),
    pytest.mark.skipif(BROWSER is None, reason="Chromium not installed (Debian package 'chromium')"),
]


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BROWSER, *FLAGS, *args], capture_output=True, text=True, timeout=120)


def _console_errors(stderr: str) -> list[str]:
    lines = [ln for ln in stderr.splitlines() if "CONSOLE" in ln or "Failed to load resource" in ln]
    return [ln for ln in lines if re.search(r"Uncaught|Error|Failed to load", ln)]


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_without_console_errors(page, tmp_path):
    url = (SITE / page).as_uri()
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / (page.replace("/", "_").removesuffix(".html") + ".png")
    done = _chromium(f"--screenshot={shot}", "--window-size=1200,1500", "--virtual-time-budget=4000", url)
    assert shot.exists(), done.stderr[-2000:]
    assert not _console_errors(done.stderr), _console_errors(done.stderr)
    pixels = mpimg.imread(shot)[..., :3]
    inked = np.mean(pixels.max(axis=-1) - pixels.min(axis=-1) > 0.05) + np.mean(pixels.mean(axis=-1) < 0.8)
    assert inked > 0.01, f"{page} looks blank"
    dom = _chromium("--dump-dom", "--virtual-time-budget=4000", url).stdout
    text, figure = PAGES[page]
    assert text in dom
    if figure:
        assert re.search(r'<img[^>]+src="[^"]+\.png"', dom), f"{page} shows no figure"


def test_gallery_pages_show_their_figures():
    pages = sorted((SITE / "gallery").glob("*.html"))
    with_figures = [p.name for p in pages if re.search(r'<img[^>]+src="[^"]+\.png"', p.read_text())]
    assert len(pages) >= 8 and len(with_figures) >= 6, with_figures


def test_api_reference_covers_every_public_name():
    inventory_file = pytest.importorskip(
        "sphinx.util.inventory", reason="Sphinx (the docs extra)"
    ).InventoryFile
    with open(SITE / "objects.inv", "rb") as f:
        inventory = inventory_file.load(f, "", lambda base, uri: uri)
    documented = {name for objects in inventory.values() for name in objects}
    last = {name.rsplit(".", 1)[-1] for name in documented}
    # names that are other modules under another name: documented as the module
    aliases = {
        "judge_baselines": "bayes_tee.calibration.baselines",
        "simulate": "bayes_tee.studies",
        "plugin": "bayes_tee.studies.plugin",
    }
    missing = [
        n
        for n in bt.__all__
        if n != "__version__" and f"bayes_tee.{n}" not in documented and n not in last
        if aliases.get(n) not in documented
    ]
    assert not missing, missing
    methods = [m for m in dir(bt.Posterior) if not m.startswith("_")]
    assert not [m for m in methods if f"bayes_tee.Posterior.{m}" not in documented]
