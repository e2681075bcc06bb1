"""What a scenario's checker needs of the catalog, read without pandas.

``planner validate`` checks a scenario against the catalog's ids, aliases and
currency rates only; reading just those columns with the standard library keeps
the command quick (pandas alone takes longer to import than the whole check).
The full loader (:mod:`pricing.loader`) builds the same :class:`CatalogIds` from
its validated tables, and a test checks that both agree.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from . import DATA_DIR


@dataclass(frozen=True)
class CatalogIds:
    """What a scenario's checker needs to know of the catalog: its ids, aliases and rates."""

    devices: frozenset[str]
    aliases: Mapping[str, str]  # alias -> device id
    buy: frozenset[str]
    rent: frozenset[str]
    free: frozenset[str]
    usd_per_unit: Mapping[str, float]  # currency code -> USD
    electricity_default_usd_per_kwh: float

    def with_entries(self, entries: Mapping[str, Sequence[Mapping]]) -> CatalogIds:
        """The ids once ``entries`` (a catalog file's or layer's rows, by kind) are layered on."""
        return replace(self, **{kind: getattr(self, kind) | {str(r["id"]) for r in entries.get(kind, ()) if "id" in r}
                                for kind in ("buy", "rent", "free")})


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_ids(data_dir: Path | str = DATA_DIR) -> CatalogIds:
    """The :class:`CatalogIds` of a catalog directory, from its id, alias and rate columns."""
    import yaml

    d = Path(data_dir)
    devices = _rows(d / "devices.csv")
    aliases = {a.strip(): r["id"] for r in devices for a in (r.get("aliases") or "").split(";") if a.strip()}
    per_eur = {r["currency"]: float(r["units_per_eur"]) for r in _rows(d / "rates.csv")}
    usd_per_unit = {code: per_eur["USD"] / rate for code, rate in per_eur.items()}
    default = next(r for r in _rows(d / "electricity.csv") if r["default"].strip().lower() == "true")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    free = yaml.load((d / "free.yaml").read_text(encoding="utf-8"), Loader=loader) or []
    return CatalogIds(
        devices=frozenset(r["id"] for r in devices),
        aliases=aliases,
        buy=frozenset(r["id"] for r in _rows(d / "buy.csv")),
        rent=frozenset(r["id"] for r in _rows(d / "rent.csv")),
        free=frozenset(str(r["id"]) for r in free),
        usd_per_unit=usd_per_unit,
        electricity_default_usd_per_kwh=float(default["price"]) * usd_per_unit[default["currency"].strip()],
    )


def layer_dir() -> Path:
    """Where the refreshed layer lives: the user's data directory (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-planner", appauthor=False)) / "refreshed"


def layer_rent_ids(directory: Path | None = None) -> frozenset[str]:
    """The offer ids of the refreshed layer (``planner pricing refresh``), or none."""
    directory = directory or layer_dir()
    path = directory / "rent.csv"
    if not (path.is_file() and (directory / "layer.json").is_file()):
        return frozenset()
    try:
        return frozenset(str(r["id"]) for r in _rows(path) if r.get("id"))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, csv.Error):  # a damaged layer: plans skip it, and say so
        return frozenset()
