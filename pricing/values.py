"""Blank cells: catalog and option tables hold None or NaN where a figure is absent.

One reading of them for every module.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def missing(x: object) -> bool:
    """True for None and NaN (Python or numpy floats)."""
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


def opt_float(x: Any) -> float | None:
    """The number, or None when the cell is blank."""
    return None if missing(x) else float(x)


def float_or(x: Any, default: float = 0.0) -> float:
    """The number, or ``default`` when the cell is blank."""
    return default if missing(x) else float(x)
