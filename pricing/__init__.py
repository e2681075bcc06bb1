"""The catalog: dated, sourced devices, offers, free tiers and rates.

Data lives in ``pricing/data`` as CSV (tables) and YAML (nested tier
policies); ``columns.csv`` describes every column (type, unit, default) and
is used to validate the tables on load. See :func:`load_catalog`.
"""

import csv
import functools
from pathlib import Path
from typing import Any

#: The shipped catalog's directory.
DATA_DIR = Path(__file__).resolve().parent / "data"

__all__ = ["DATA_DIR", "Catalog", "CatalogIds", "column_types", "load_catalog"]


@functools.cache
def column_types() -> dict[tuple[str, str], tuple[str, str]]:
    """(table, column) -> (type, unit), read once from the shipped ``columns.csv`` without pandas
    (a scenario reads its catalog entries by them before any table is loaded)."""
    with (DATA_DIR / "columns.csv").open(newline="", encoding="utf-8") as f:
        return {(r["table"], r["column"]): (r["type"], r["unit"]) for r in csv.DictReader(f)}


def __getattr__(name: str) -> Any:
    """The loader (and pandas) load on first use: ``pricing.errors`` alone stays light."""
    if name in ("Catalog", "load_catalog"):
        from . import loader

        return getattr(loader, name)
    if name == "CatalogIds":
        from .ids import CatalogIds

        return CatalogIds
    raise AttributeError(f"module 'pricing' has no attribute {name!r}")
