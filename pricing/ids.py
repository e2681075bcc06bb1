"""What a scenario's checker needs of the catalog, read without pandas.

``planner validate`` checks a scenario against the catalog's ids, aliases and
currency rates only; reading just those columns with the standard library keeps
the command quick (pandas alone takes longer to import than the whole check).
The full loader (:mod:`pricing.loader`) builds the same :class:`CatalogIds` from
its validated tables, and a test checks that both agree.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from . import DATA_DIR


def provider_of(offer: str) -> str:
    """The provider of a rent offer: its id up to the colon ('aws:p5.48xlarge' -> 'aws'), what a
    credit's ``providers`` name; an id without one is its own."""
    return offer.split(":", 1)[0]


def _number(v: object) -> float | None:
    """A catalog cell as a number; blank (an empty string, None or NaN) as None."""
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    x = float(v)  # type: ignore[arg-type]
    return None if x != x else x


@dataclass(frozen=True)
class ModelCard:
    """A named model's shape (``models.csv``): what a job described by its model needs."""

    id: str
    name: str
    family: str
    params: float
    layers: int | None
    hidden_size: int | None
    sequence_length: int | None  # where the model fixes it (GPT-2, BERT, ViT)
    image_size: int | None
    forward_gflops: float | None  # per sample at image_size (vision CNNs)
    source: str

    @classmethod
    def of(cls, r: Mapping) -> ModelCard:
        def whole(k: str) -> int | None:
            x = _number(r.get(k))
            return None if x is None else int(x)
        return cls(str(r["id"]), str(r["name"]), str(r["family"]), float(r["params"]), whole("layers"),
                   whole("hidden_size"), whole("sequence_length"), whole("image_size"), _number(r.get("forward_gflops")),
                   str(r["source"]))


@dataclass(frozen=True)
class DeviceSpec:
    """The figures of a device a job's hours are figured from (``devices.csv``)."""

    kind: str
    architecture: str
    fp32_tflops: float | None
    fp16_tensor_tflops: float | None

    @classmethod
    def of(cls, r: Mapping) -> DeviceSpec:
        return cls(str(r["kind"]), str(r["architecture"]), _number(r.get("fp32_tflops")),
                   _number(r.get("fp16_tensor_tflops")))


@dataclass(frozen=True)
class Utilisation:
    """Model FLOPs utilisation of a kind of device on models of a size (``utilisation.csv``)."""

    device_class: str
    methods: str  # train (full, pretrain) | adapters (lora, qlora)
    params_from: float
    params_to: float
    mfu_low: float
    mfu: float
    mfu_high: float
    source: str
    notes: str
    family: str | None = None  # measured on this workload family; None: every family without rows of its own

    @classmethod
    def of(cls, r: Mapping) -> Utilisation:
        notes, family = r.get("notes"), r.get("family")
        return cls(str(r["device_class"]), str(r["methods"]), float(r["params_from"]), float(r["params_to"]), float(r["mfu_low"]),
                   float(r["mfu"]), float(r["mfu_high"]), str(r["source"]),
                   "" if notes is None or notes != notes else str(notes),
                   None if family is None or family != family or family == "" else str(family))


class JobFacts(NamedTuple):
    """What a job described by its model and data needs of the catalog: its named models, the
    devices' peaks and the utilisation table (a part of :class:`CatalogIds`)."""

    models: Mapping[str, ModelCard]
    device_specs: Mapping[str, DeviceSpec]
    utilisation: tuple[Utilisation, ...]


#: A device's speed over another's on large work of a family at a precision (device, other,
#: family, precision), by the planner's speed model over the catalog's devices and measured
#: throughput (planner.model.job.speed_ratio_of), and whether both were measured; None where
#: either is unknown.
SpeedRatio = Callable[[str, str, str, str], "tuple[float, bool] | None"]


@dataclass(frozen=True)
class CatalogIds:
    """What a scenario's checker needs to know of the catalog: its ids, aliases and rates, and
    what a job described by its model and data needs (models, device peaks, utilisation)."""

    devices: frozenset[str]
    aliases: Mapping[str, str]  # alias -> device id
    buy: frozenset[str]
    rent: frozenset[str]
    free: frozenset[str]
    usd_per_unit: Mapping[str, float]  # currency code -> USD
    electricity_default_usd_per_kwh: float
    models: Mapping[str, ModelCard] = field(default_factory=dict)
    device_specs: Mapping[str, DeviceSpec] = field(default_factory=dict)
    utilisation: tuple[Utilisation, ...] = ()
    grid_zones: frozenset[str] = frozenset()  # grid.csv: the zones you.grid may name
    #: the free tiers priced in compute units (a unit price and burn rates), and of those the ones
    #: with a monthly fee (the units it buys): what a scenario's own fee or unit price may set
    free_in_units: frozenset[str] = frozenset()
    free_by_the_month: frozenset[str] = frozenset()
    #: electricity.csv: each region's price [USD/kWh], the default where you.grid names the region
    electricity_usd_per_kwh_by_region: Mapping[str, float] = field(default_factory=dict)
    #: what a job's estimate needs of the speed model (planner.api.scenario_ids adds it; a
    #: function, so not compared: both readers' ids give it the same tables)
    speed_ratio: SpeedRatio | None = field(default=None, compare=False, repr=False)

    def with_entries(self, entries: Mapping[str, Sequence[Mapping]]) -> CatalogIds:
        """The ids once ``entries`` (a catalog file's or layer's rows, by kind) are layered on."""
        return replace(self, **{kind: getattr(self, kind) | {str(r["id"]) for r in entries.get(kind, ()) if "id" in r}
                                for kind in ("buy", "rent", "free")})


def usd_per_kwh_by_region(rows: Iterable[tuple[Any, Any, Any]], usd_per_unit: Mapping[str, float]) -> dict[str, float]:
    """Each region's electricity price in USD/kWh, from (region, price, currency) rows of
    electricity.csv: what you.grid's region costs where a scenario gives no price."""
    return {str(region).strip(): float(price) * usd_per_unit[str(currency).strip()] for region, price, currency in rows}


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def tiers_in_units(rows: Iterable[Mapping[str, Any]]) -> tuple[frozenset[str], frozenset[str]]:
    """(the free tiers priced in compute units: a unit price and burn rates; of those, the ones
    with a monthly fee, the units it buys) of the free table's ``rows`` (blank cells None or NaN):
    what a scenario's own fee or unit price may set (CatalogIds.free_in_units, free_by_the_month)."""
    def given(v: Any) -> bool:
        return v is not None and not (isinstance(v, float) and v != v)

    units = [r for r in rows if isinstance(r.get("units_per_hour"), dict) and given(r.get("usd_per_unit"))]
    monthly = [r for r in units if given(r.get("units_per_month")) and given(r.get("usd_per_month"))
               and float(r["usd_per_month"]) > 0]
    return frozenset(str(r["id"]) for r in units), frozenset(str(r["id"]) for r in monthly)


def read_ids(data_dir: Path | str = DATA_DIR) -> CatalogIds:
    """The :class:`CatalogIds` of a catalog directory, from its id, alias and rate columns."""
    import yaml

    d = Path(data_dir)
    devices = _rows(d / "devices.csv")
    aliases = {a.strip(): r["id"] for r in devices for a in (r.get("aliases") or "").split(";") if a.strip()}
    per_eur = {r["currency"]: float(r["units_per_eur"]) for r in _rows(d / "rates.csv")}
    usd_per_unit = {code: per_eur["USD"] / rate for code, rate in per_eur.items()}
    power = _rows(d / "electricity.csv")
    default = next(r for r in power if r["default"].strip().lower() == "true")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    free = yaml.load((d / "free.yaml").read_text(encoding="utf-8"), Loader=loader) or []
    in_units, by_the_month = tiers_in_units(free)
    return CatalogIds(
        devices=frozenset(r["id"] for r in devices),
        aliases=aliases,
        buy=frozenset(r["id"] for r in _rows(d / "buy.csv")),
        rent=frozenset(r["id"] for r in _rows(d / "rent.csv")),
        free=frozenset(str(r["id"]) for r in free),
        free_in_units=in_units,
        free_by_the_month=by_the_month,
        usd_per_unit=usd_per_unit,
        electricity_default_usd_per_kwh=float(default["price"]) * usd_per_unit[default["currency"].strip()],
        models={r["id"]: ModelCard.of(r) for r in _optional_rows(d / "models.csv")},
        device_specs={r["id"]: DeviceSpec.of(r) for r in devices},
        utilisation=tuple(Utilisation.of(r) for r in _optional_rows(d / "utilisation.csv")),
        grid_zones=frozenset(r["id"] for r in _optional_rows(d / "grid.csv")),
        electricity_usd_per_kwh_by_region=usd_per_kwh_by_region(((r["region"], r["price"], r["currency"]) for r in power),
                                                                usd_per_unit),
    )


def _optional_rows(path: Path) -> list[dict[str, str]]:
    """A table's rows, none when the catalog has no such file (a catalog from before it)."""
    return _rows(path) if path.is_file() else []


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
