"""Lab-meeting tools: compare scenarios, sweep an input, the sensitivity of the answer to each
input (``tables``), and the explore page of pre-planned sliders (``explore``).

May import: ``planner.api`` (the door: plans and catalogs), ``planner.report``, ``planner.decide``,
``planner.model``, ``pricing`` and this wing. ``planner.whatif.X`` is ``planner.whatif.tables.X``.
"""

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    """The tables module's names, loaded on first use."""
    return getattr(importlib.import_module(f"{__name__}.tables"), name)
