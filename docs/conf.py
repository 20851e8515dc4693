"""Sphinx configuration: PyData theme, numpydoc docstrings, notebooks rendered by myst-nb.

``make docs`` first executes the notebooks in their fast mode into ``docs/gallery/``
(``scripts/build_gallery.py``), then builds with warnings as errors; myst-nb only renders the
executed notebooks (``nb_execution_mode = "off"``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

import bayes_tee  # noqa: E402

project = "bayes_tee"
author = "bayes_tee developers"
copyright = "2026, bayes_tee developers"
release = bayes_tee.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    "sphinx_copybutton",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "gallery/data", "gallery/*.nc"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # executed beforehand by scripts/build_gallery.py
nb_merge_streams = True

autosummary_generate = True
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# Broken references to bayes_tee's own objects fail the build (warnings are errors); names of
# other libraries (numpy, pandas, xarray, matplotlib, the standard library) are not resolved,
# since their inventories would need the network.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"^(?!bayes_tee\b).*")]
suppress_warnings = ["myst.header"]
templates_path = ["_templates"]

html_theme = "pydata_sphinx_theme"
html_title = f"bayes_tee {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"references": []}
html_show_sourcelink = False
