"""The catalog: dated, sourced devices, offers, free tiers and rates.

Data lives in ``pricing/data`` as CSV (tables) and YAML (nested tier
policies); ``columns.csv`` describes every column (type, unit, default) and
is used to validate the tables on load. See :func:`load_catalog`.
"""

from .loader import Catalog, load_catalog, DATA_DIR

__all__ = ["Catalog", "load_catalog", "DATA_DIR"]
