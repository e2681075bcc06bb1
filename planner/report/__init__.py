"""What people read: the report page as text, Markdown and HTML (``page``, laid out by ``view``),
its charts (``charts``, matplotlib) and the report directory (``writer``: CSV, JSON, PNG, SVG).

May import: ``planner.decide``, ``planner.model``, ``pricing`` and this wing.
``planner.report.X`` is ``planner.report.page.X`` (the page's functions: render_text, whatif_page, ...).
"""

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    """The page module's names, loaded on first use."""
    return getattr(importlib.import_module(f"{__name__}.page"), name)
