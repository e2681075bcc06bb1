"""Catalog views for people: listings, one row in full, integrity and staleness.

Pure functions over a :class:`~pricing.loader.Catalog`; the CLI prints them.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from .errors import InputError, Problem, did_you_mean
from .memo import Kept
from .values import missing

if TYPE_CHECKING:
    from .loader import Catalog

#: Columns shown per listing, with their table headers (units in brackets).
LISTINGS: dict[str, dict[str, str]] = {
    "devices": {
        "id": "Device", "kind": "Kind", "architecture": "Arch", "vram_gb": "VRAM [GB]",
        "memory_bandwidth_gb_per_s": "Bandwidth [GB/s]", "fp32_tflops": "FP32 [TFLOPS]",
        "fp16_tensor_tflops": "FP16 tensor [TFLOPS]", "board_power_w": "Power [W]", "release_date": "Released",
        "as_of": "As of",
    },
    "buy": {
        "id": "Offer", "device": "Device", "condition": "Condition", "count": "Cards", "vram_gb": "VRAM [GB]",
        "price_usd": "Price [USD]", "as_of": "As of",
    },
    "rent": {
        "id": "Offer", "provider": "Provider", "device": "Device", "count": "GPUs", "vram_gb": "VRAM [GB]",
        "usd_per_hour": "Price [USD/h]", "spot": "Spot", "billing_s": "Billing [s]", "region": "Region",
        "as_of": "As of", "layer": "From",
    },
    "free": {
        "id": "Tier", "device": "Device", "count": "GPUs", "vram_gb": "VRAM [GB]", "usd_per_month": "Fee [USD/month]",
        "usd_per_hour": "Price [USD/h]", "units_per_pack": "Pack [units]", "session_limit_h": "Session [h]",
        "quota_h_per_week": "Quota [h/week]",
        "needs_person": "Needs person", "persistent_storage": "Files kept", "as_of": "As of",
    },
    "models": {
        "id": "Model", "family": "Family", "params": "Parameters", "layers": "Layers", "hidden_size": "Width",
        "sequence_length": "Tokens a sample", "image_size": "Image [px]", "forward_gflops": "Forward [GFLOPs]",
        "as_of": "Released",
    },
    "grid": {
        "id": "Zone", "kind": "Kind", "g_co2e_per_kwh": "Intensity [g/kWh]", "low": "Low", "high": "High",
        "year": "Year", "as_of": "As of",
    },
    "electricity": {
        "region": "Region", "price": "Price a kWh", "currency": "Currency", "default": "Default", "as_of": "As of",
    },
    "trends": {
        "id": "Trend", "match": "Devices", "trend_per_year": "Rent a year", "low_per_year": "Low",
        "high_per_year": "High", "since": "Measured from", "until": "to", "as_of": "As of",
    },
}
STALE_AFTER_DAYS = 180
#: Listings of rows that are not devices or offers: the device filters do not apply to them.
NO_DEVICE = ("trends", "models", "grid", "electricity")


_FREE_ROWS = Kept()


def free_rows(catalog: Catalog) -> pd.DataFrame:
    """Free tiers, one row per (tier, device): subscriptions priced by compute units
    become one row per GPU type with the derived USD per hour and monthly cap.
    Computed once per free table in a process (pricing.memo); do not modify the frame returned."""
    return _FREE_ROWS.get((catalog.free,), (), lambda: _free_rows(catalog.free))


#: Per-device mappings of a free tier that each (tier, device) row takes its own value of.
PER_DEVICE = ("unavailable_share", "unavailable_low", "unavailable_high")


def _free_rows(free: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, r in free.iterrows():
        burn = r["units_per_hour"]
        base = r.to_dict()
        if isinstance(burn, dict) and burn:
            for device, units in burn.items():
                cap = r["units_per_month"] / units if not missing(r["units_per_month"]) else math.nan
                rows.append({**base, "id": f"{r['id']}:{device}", "tier": r["id"], "device": device,
                             "units_per_hour": units, "usd_per_hour": r["usd_per_unit"] * units,
                             "cap_h_per_month": cap, **_per_device(base, device)})
        else:
            rows.append({**base, "tier": r["id"], "usd_per_hour": 0.0, "cap_h_per_month": math.nan,
                         "units_per_hour": math.nan, **_per_device(base, r["device"])})
    return pd.DataFrame(rows)


def _per_device(row: dict, device: str) -> dict:
    """A tier's per-device mappings (PER_DEVICE) read for one device; NaN where not given."""
    return {c: (row[c].get(device, math.nan) if isinstance(row.get(c), dict) else math.nan) for c in PER_DEVICE}


def listing(catalog: Catalog, table: str, device: str | None = None, min_vram_gb: float | None = None,
            provider: str | None = None, sort: str | None = None) -> pd.DataFrame:
    """Rows of one table with the listing's columns plus as_of and source."""
    df = (free_rows(catalog) if table == "free" else catalog.tables[table]).copy()
    vram = catalog.devices.set_index("id")["vram_gb"]
    if table in NO_DEVICE and (device is not None or min_vram_gb is not None):
        raise InputError([Problem("--device", 0, 0, "", "--device and --min-vram apply to devices and offers, "
                                  f"not to --{table}")])
    if table not in ("devices", *NO_DEVICE):
        df["vram_gb"] = df["device"].map(vram)
    if device is not None:
        dev = resolve_device(catalog, device)
        df = df[(df["id"] if table == "devices" else df["device"]) == dev]
    if min_vram_gb is not None:
        df = df[df["vram_gb"] >= min_vram_gb]
    if provider is not None:
        if table != "rent":
            raise InputError([Problem("--provider", 0, 0, "", "--provider applies to --rent listings only")])
        known = sorted(catalog.rent["provider"].unique())
        if provider not in known:
            raise InputError([Problem("--provider", 0, 0, "", f"unknown provider {provider!r}"
                                      f"{did_you_mean(provider, known)} (providers: {', '.join(known)})")])
        df = df[df["provider"] == provider]
    columns = list(LISTINGS[table]) + ["source"]
    if sort is not None:
        if sort not in columns:
            raise InputError([Problem("--sort", 0, 0, "", f"unknown column {sort!r}{did_you_mean(sort, columns)} "
                                      f"(columns: {', '.join(columns)})")])
        df = df.sort_values(sort, kind="stable", na_position="last")
    return df[columns].reset_index(drop=True)


def resolve_device(catalog: Catalog, name: str) -> str:
    ids = set(catalog.devices["id"])
    aliases = catalog.aliases()
    key = name.strip().lower()
    if key in ids:
        return key
    if key in aliases:
        return aliases[key]
    raise InputError([Problem("--device", 0, 0, "", f"unknown device {name!r}"
                              f"{did_you_mean(key, sorted(ids | set(aliases)))}")])


#: Tables whose rows have no id of their own (several rows per device, or per kind of device).
NOT_BY_ID = ("throughput", "utilisation")


def tables_with(catalog: Catalog, key: str) -> list[str]:
    """The tables that have a row for an id, currency or region, in the catalog's order (de is a
    grid zone and an electricity region)."""
    return [table for table, df in catalog.tables.items() if table not in NOT_BY_ID
            and (df[{"rates": "currency", "electricity": "region"}.get(table, "id")] == key).any()]


def find(catalog: Catalog, key: str, table: str | None = None) -> tuple[str, pd.Series]:
    """(table, row) for an id, currency or region anywhere in the catalog (the first table that
    has it), or in ``table``."""
    for name, df in catalog.tables.items():
        if name in NOT_BY_ID or table not in (None, name):
            continue
        col = {"rates": "currency", "electricity": "region"}.get(name, "id")
        hit = df[df[col] == key]
        if not hit.empty:
            return name, hit.iloc[0]
    if table is not None:
        raise InputError([Problem("pricing show", 0, 0, "", f"no row {key!r} in the {table} table"
                                  + (f"; it is in {', '.join(tables_with(catalog, key))}"
                                     if tables_with(catalog, key) else "") + "; `planner pricing list` lists them")])
    aliases = catalog.aliases()
    if key.lower() in aliases:
        return "devices", catalog.row("devices", aliases[key.lower()])
    every = [str(v) for t, df in catalog.tables.items() if t not in NOT_BY_ID
             for v in df[{"rates": "currency", "electricity": "region"}.get(t, "id")]]
    raise InputError([Problem("pricing show", 0, 0, "", f"no catalog row with id {key!r}{did_you_mean(key, every)}; "
                              "`planner pricing list` lists them")])


def details(catalog: Catalog, key: str, table: str | None = None
            ) -> tuple[str, list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(table, [(field, value), ...], [(derived figure, value), ...]) for one row (of ``table``,
    or the first table that has it; the others that have it are named).

    Derived here: what follows from the catalog alone (a subscription's USD per hour, a
    device's measured rows); a buy offer's resale is the planner's model and added by it."""
    table, row = find(catalog, key, table)
    fields = [(str(c), v) for c, v in row.items() if not str(c).startswith("_")]
    derived: list[tuple[str, Any]] = [(f"also in {other}", f"planner pricing show {key} --table {other}")
                                      for other in tables_with(catalog, key) if other != table]
    device = catalog.aliases().get(key.lower())
    if device is not None and table != "devices":  # 'a100': a trend's id, and the A100 40GB's alias
        derived.append(("also a device's alias", f"planner pricing show {device}"))
    if table == "free" and isinstance(row["units_per_hour"], dict):
        for device, units in row["units_per_hour"].items():
            usd = row["usd_per_unit"] * units
            cap = row["units_per_month"] / units if not missing(row["units_per_month"]) else None
            pack = row.get("units_per_pack")
            hours = pack / units if pack is not None and not missing(pack) else None
            derived.append((f"{device}", f"{units:g} units/h (published) -> {usd:.3f} USD/h (derived)"
                            + (f", at most {cap:.1f} h/month" if cap else "")
                            + (f", {hours:.1f} h a pack" if hours else "")))
        pack = row.get("units_per_pack")
        if pack is not None and not missing(pack):
            days = row.get("pack_days")
            derived.append(("pack", f"{pack:g} units for {row['usd_per_unit'] * pack:.2f} USD, paid whole"
                            + (f", lasting {days:g} days" if days is not None and not missing(days) else "")))
    if table == "devices":
        n = int((catalog.throughput["device"] == row["id"]).sum())
        derived.append(("measured throughput rows", n))
        offers = catalog.buy[catalog.buy["device"] == row["id"]].sort_values(["as_of", "id"], ascending=[False, True])
        for _, o in offers.iterrows():  # what the card costs to buy, newest first
            spread = ("" if missing(o.get("price_low_usd")) else
                      f" (market {o['price_low_usd']:,.0f}-{o['price_high_usd']:,.0f})")
            derived.append((f"buy {o['id']}", f"{o['condition']}, {o['count']} card(s): {o['price_usd']:,.0f} USD"
                            f"{spread}, as of {o['as_of']}"))
    return table, fields, derived


def stale(catalog: Catalog, today: dt.date, days: int = STALE_AFTER_DAYS) -> pd.DataFrame:
    """Price rows (buy, rent, free, rates, electricity) older than ``days`` on ``today``."""
    out = []
    for table in ("buy", "rent", "free", "rates", "electricity"):
        df = catalog.tables[table]
        key = {"rates": "currency", "electricity": "region"}.get(table, "id")
        for _, r in df.iterrows():
            if isinstance(r["as_of"], dt.date) and (today - r["as_of"]).days > days:
                out.append(dict(table=table, id=r[key], as_of=r["as_of"], age_days=(today - r["as_of"]).days))
    return pd.DataFrame(out, columns=["table", "id", "as_of", "age_days"])


#: A price row dated this recently counts as fresh in ``pricing check``'s summary (a catalog
#: release should have most rent rows and every free tier this fresh).
FRESH_DAYS = 120


def fresh_shares(catalog: Catalog, today: dt.date, days: int = FRESH_DAYS) -> list[tuple[str, int, int]]:
    """(table, rows dated within ``days`` of ``today``, rows) for the priced tables."""
    out = []
    for table in ("rent", "free", "buy"):
        dates = catalog.tables[table]["as_of"]
        fresh = sum(1 for d in dates if isinstance(d, dt.date) and 0 <= (today - d).days <= days)
        if len(dates):
            out.append((table, fresh, len(dates)))
    return out


#: A card's price older than this, new or used, is a launch price or a past market, not what the
#: card costs now: by default a scenario is not offered it (a scenario dated near it still is).
#: Used prices move as much as new ones (a used RTX 3090 lost 11-18 % a year, 2020-2026), so a
#: 2020 used price is no offer in 2027 either.
OFFER_MAX_AGE_DAYS = 365


def old_offers(buy: pd.DataFrame, on: dt.date, days: int = OFFER_MAX_AGE_DAYS) -> pd.Series:
    """Mask of buy offers, new or used, whose price is more than ``days`` older than ``on``."""
    age = buy["as_of"].map(lambda d: (on - d).days if isinstance(d, dt.date) else 0)
    return age > days
