"""Sphinx configuration of the polarzoo documentation site.

Build (warnings are errors; internal links are checked by MyST as part of the build):

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Sphinx + MyST + furo: the env docstrings (the spec of each env) and every page are Markdown, which
MyST reads as is; the API reference comes from the code's own docstrings (autodoc), and the env
and CLI pages are written from the code when the build starts (``_ext/polarzoo_pages.py``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))
os.environ.setdefault("MUJOCO_GL", "egl")  # Thin Ice's module imports mujoco; no window is opened

project = "polarzoo"
author = "the polarzoo developers"
copyright = "2026, the polarzoo developers"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "polarzoo_pages"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "results", "examples", "replays"]  # results/ and examples/: included or linked, not pages
myst_enable_extensions = ["colon_fence", "html_image"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "polarzoo"
html_static_path = ["_static"]  # with _static/polarzoo, which the build writes (the replay viewer)
html_favicon = "_static/favicon.png"

napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
