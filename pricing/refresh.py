"""Current rent prices from gpuhunt, as a dated layer over the shipped catalog.

gpuhunt (dstack's GPU offer collector, MPL-2.0) publishes one offline catalog per
provider (AWS, Azure, GCP, Lambda, RunPod, OCI, Nebius, ...): a CSV of offers, one
row per instance, location and spot flag. :func:`fetch` reads them (from
``GPUHUNT_CATALOG_DIR`` when set, else from gpuhunt's published bucket),
:func:`to_layer` maps GPU names to catalog devices (unknown or ambiguous names are
listed, never guessed) and aggregates locations (median, with minimum, maximum and
count), and :func:`write_layer` stores the rows with their fetch date in the user's
data directory, where :func:`read_layer` finds them for every later plan.

Free tiers and buy prices have no such source and stay hand-curated.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import math
import os
import re
import shutil
import socket
import stat
import statistics
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .checks import KNOWN_FORM_FACTORS, _form_factor
from .errors import LayerWarning
from .ids import layer_dir

#: gpuhunt's offline providers and the catalog's provider names for them.
PROVIDERS = {"aws": "aws", "azure": "azure", "gcp": "gcp", "lambdalabs": "lambda", "runpod": "runpod",
             "oci": "oci", "nebius": "nebius", "verda": "verda", "cloudrift": "cloudrift", "vastai": "vast"}
#: Providers gpuhunt reads live (a marketplace's current listings), not from its published catalogs.
ONLINE = {"vastai"}
#: A marketplace listing is priced with this much disk (Vast adds its storage price per GB) [GB].
MARKET_DISK_GB = 50
#: A marketplace offer's range: the listings' low and high quantiles around their median.
MARKET_QUANTILES = (0.1, 0.9)

#: gpuhunt GPU name and memory (GB) -> device id, where the pair names one card.
GPU_DEVICES: Mapping[tuple[str, int], str] = {
    ("K80", 12): "k80", ("P100", 16): "p100", ("T4", 16): "t4", ("V100", 32): "v100-32gb",
    ("A10", 24): "a10", ("A10G", 24): "a10g", ("L4", 24): "l4", ("L40", 48): "l40", ("L40S", 48): "l40s",
    ("H200", 141): "h200", ("B200", 180): "b200", ("A4000", 16): "rtx-a4000", ("A5000", 24): "rtx-a5000",
    ("A6000", 48): "rtx-a6000", ("RTX6000", 24): "quadro-rtx-6000", ("RTX6000Ada", 48): "rtx-6000-ada",
    ("RTXPRO6000", 96): "rtx-pro-6000", ("RTX2080Ti", 11): "rtx-2080-ti", ("RTX3060", 12): "rtx-3060-12gb",
    ("RTX3070", 8): "rtx-3070", ("RTX3080", 10): "rtx-3080", ("RTX3090", 24): "rtx-3090",
    ("RTX3090Ti", 24): "rtx-3090-ti", ("RTX4060Ti", 16): "rtx-4060-ti-16gb", ("RTX4070", 12): "rtx-4070",
    ("RTX4070Ti", 12): "rtx-4070-ti", ("RTX4080", 16): "rtx-4080", ("RTX4080SUPER", 16): "rtx-4080-super",
    ("RTX4090", 24): "rtx-4090", ("RTX5060Ti", 16): "rtx-5060-ti-16gb", ("RTX5070", 12): "rtx-5070",
    ("RTX5070Ti", 16): "rtx-5070-ti", ("RTX5080", 16): "rtx-5080", ("RTX5090", 32): "rtx-5090",
    ("H100NVL", 94): "h100-nvl",
}

#: Names that come in two form factors: the device for each, chosen only when the instance says which.
VARIANTS: Mapping[tuple[str, int], Mapping[str, str]] = {
    ("V100", 16): {"sxm": "v100-16gb", "pcie": "v100-pcie-16gb"},
    ("A100", 40): {"sxm": "a100-40gb"},
    ("A100", 80): {"sxm": "a100-80gb", "pcie": "a100-pcie-80gb"},
    ("H100", 80): {"sxm": "h100-sxm", "pcie": "h100-pcie"},
}

#: GCP TPU slices (gpuhunt's instance names) -> device id.
TPU_SLICES = {"v2-8": "tpu-v2-8", "v3-8": "tpu-v3-8", "v4-8": "tpu-v4-8", "v5litepod-1": "tpu-v5e-1",
              "v5litepod-8": "tpu-v5e-8", "v6e-1": "tpu-v6e-1", "v6e-8": "tpu-v6e-8"}

#: Instance-name words that tell the form factor where the provider's name does.
#: RunPod: "NVIDIA H100 80GB HBM3" is its SXM product, "NVIDIA H100 PCIe" the PCIe one (runpod.io/pricing).
FORM_FACTOR_WORDS = (("hbm3", "sxm"), ("sxm", "sxm"), ("pcie", "pcie"))

#: RunPod offer ids in the shipped catalog that are not ``runpod:<device>``.
RUNPOD_SLUGS = {"a100-80gb": "a100-sxm-80gb"}

LAYER_COLUMNS = ["id", "provider", "instance", "region", "device", "count", "usd_per_hour", "spot", "as_of",
                 "source", "notes"]
#: A marketplace's rows carry its listings' range and how many are to be had (blank for the others).
MARKET_COLUMNS = ["usd_per_hour_low", "usd_per_hour_high", "supply"]

#: A server that accepts and never answers must not hang a refresh [s].
TIMEOUT_S = 30
#: Larger catalog files than this are not a provider's list (gpuhunt's largest, AWS, is a few MB;
#: a million rows would be 60-100 MB and a minute of work);
#: neither is a layer file larger than this [bytes].
MAX_FILE_BYTES = 32 * 2**20
#: An hourly price above this is not an instance price (an 8x B200 box is about 100 USD/h) [USD/h].
MAX_USD_PER_HOUR = 10_000.0
#: A local catalog directory holding this file is a test fixture: its prices are never stored as
#: a layer to plan with (PLANNER_FIXTURE_LAYER=1 lets tests do it in their own data directory).
FIXTURE_MARKER = "FIXTURE"


class RefreshError(Exception):
    """A refresh that could not fetch anything (no network, no catalog): the shipped catalog still works.
    ``input_error``: the cause is the user's own input (a local catalog, the data directory), which
    the CLI reports with exit status 2 like every input error; else 1 (the network, gpuhunt)."""

    def __init__(self, message: str, input_error: bool = False):
        super().__init__(message)
        self.input_error = input_error


@dataclass(frozen=True)
class Fetched:
    """Offers as gpuhunt lists them (one row per instance, location and spot flag), and catalog versions."""

    offers: pd.DataFrame  # provider, instance, location, price, gpu_name, gpu_memory, gpu_count, gpu_vendor, spot
    versions: Mapping[str, str]
    missing: Mapping[str, str]  # provider -> why it could not be read


@contextlib.contextmanager
def _quiet_and_bounded() -> Iterator[None]:
    """gpuhunt's and urllib's logging silenced (offline, they printed 587 lines of tracebacks)
    and every socket given a timeout (a server that accepts and never answers hung forever)."""
    loggers = [logging.getLogger(name) for name in ("gpuhunt", "urllib3", "requests")]
    saved = [(lg.level, lg.propagate, lg.disabled) for lg in loggers]
    old_timeout = socket.getdefaulttimeout()
    for lg in loggers:
        # a level above every record: the modules' own loggers (gpuhunt.providers.aws, ...) are
        # children that take their parent's level, while 'disabled' is not inherited
        lg.disabled = True
        lg.setLevel(logging.CRITICAL + 1)
    socket.setdefaulttimeout(TIMEOUT_S)
    try:
        yield
    finally:
        socket.setdefaulttimeout(old_timeout)
        for lg, (level, propagate, disabled) in zip(loggers, saved):
            lg.setLevel(level)
            lg.propagate, lg.disabled = propagate, disabled


def _readable(path: Path) -> str | None:
    """Why a local catalog file cannot be read as one (None when it can): a regular file of at
    most MAX_FILE_BYTES of UTF-8 text, never a directory, a FIFO or a device."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    if st.st_size > MAX_FILE_BYTES:
        return f"{path} holds {st.st_size:,} bytes, more than a provider's list ({MAX_FILE_BYTES:,})"
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return f"{path} is not UTF-8 text"
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None


def catalog_date(version: str) -> dt.date | None:
    """The date a gpuhunt catalog version names (``20261120``, ``v-2026-11-20``), or None."""
    m = re.search(r"(20\d\d)-?(\d\d)-?(\d\d)", version or "")
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def fetch(providers: Iterable[str] = tuple(PROVIDERS)) -> Fetched:
    """Read gpuhunt's offline catalogs (network unless ``GPUHUNT_CATALOG_DIR`` names a local copy)."""
    try:
        import gpuhunt
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise RefreshError(f"gpuhunt is not installed ({exc}); pip install gpuhunt") from None
    local = os.environ.get("GPUHUNT_CATALOG_DIR")
    versions: dict[str, str] = {}
    missing: dict[str, str] = {}
    wanted = [p for p in providers if p in PROVIDERS]
    rows = []
    with _quiet_and_bounded():
        catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
        if local:
            base = Path(local)
            if not base.is_dir():
                raise RefreshError(f"GPUHUNT_CATALOG_DIR={local} is not a directory", input_error=True)
            version_file = base / "version"
            version = "local"
            if version_file.exists():
                why = _readable(version_file)
                if why or version_file.stat().st_size > 1000:
                    raise RefreshError(why or f"{version_file} is not a catalog version (over 1,000 bytes)", input_error=True)
                version = version_file.read_text(encoding="utf-8").strip()
            versions = {p: f"{version} ({local})" for p in wanted}
            for p in list(wanted):
                f = base / f"{p}.csv"
                if p in ONLINE and not (f.exists() or f.is_symlink()):
                    missing[p] = f"no {p}.csv in {local}"
                    versions.pop(p, None)
                elif f.exists() or f.is_symlink():
                    why = _readable(f)
                    if why:
                        missing[p] = why
                        versions.pop(p, None)
                    elif p in ONLINE:  # a saved copy of live listings, read as gpuhunt's CSVs are
                        try:
                            saved = pd.read_csv(f)
                        except Exception as exc:
                            missing[p] = f"cannot read {f} ({type(exc).__name__})"
                            versions.pop(p, None)
                            continue
                        rows += [dict(provider=p, instance=str(r["instance_name"]), location=r["location"],
                                      price=r["price"], gpu_name=r["gpu_name"], gpu_memory=r["gpu_memory"],
                                      gpu_count=r["gpu_count"], gpu_vendor=r["gpu_vendor"], spot=bool(r["spot"]))
                                 for r in saved.to_dict("records")]
        else:
            try:
                catalog.load()
            except Exception as exc:  # gpuhunt raises GPUHuntError or urllib's errors
                raise RefreshError(f"cannot fetch gpuhunt's catalogs ({type(exc).__name__}: {str(exc)[:200]}); "
                                   "the shipped catalog and any earlier refresh still work") from None
            versions = {p: c.version for p, c in catalog.catalog.items() if p in wanted}
            if "vastai" in wanted:  # live listings: gpuhunt's Vast provider reads Vast's public offers
                from gpuhunt.providers.vastai import VastAIProvider

                catalog.add_provider(VastAIProvider())
                versions["vastai"] = "live listings"
        for provider in wanted:
            if provider in missing or (local and provider in ONLINE):
                continue
            if not local and provider not in catalog.catalog and provider not in ONLINE:
                missing[provider] = "not in gpuhunt's published catalogs"
                continue
            try:
                items = catalog.query(provider=provider, min_gpu_count=1,
                                      **({"min_disk_size": MARKET_DISK_GB} if provider in ONLINE else {}))
            except FileNotFoundError:
                missing[provider] = f"no {provider}.csv in {local}"
                versions.pop(provider, None)
                continue
            except Exception as exc:  # a malformed file or no answer: one line, the provider left out
                what = "fetch its listings" if provider in ONLINE else "read its catalog"
                missing[provider] = f"cannot {what} ({type(exc).__name__}: {str(exc)[:120]})"
                versions.pop(provider, None)
                continue
            for it in items:
                rows.append(dict(provider=provider, instance=it.instance_name, location=it.location, price=it.price,
                                 gpu_name=it.gpu_name, gpu_memory=it.gpu_memory, gpu_count=it.gpu_count,
                                 gpu_vendor=getattr(it.gpu_vendor, "value", it.gpu_vendor), spot=bool(it.spot)))
    if not rows and missing:
        raise RefreshError("gpuhunt gave no offers: " + "; ".join(f"{p}: {why}" for p, why in missing.items()),
                           input_error=bool(local))
    cols = ["provider", "instance", "location", "price", "gpu_name", "gpu_memory", "gpu_count", "gpu_vendor", "spot"]
    return Fetched(pd.DataFrame(rows, columns=cols), versions, missing)


def _device(offer: Mapping, offer_id: str, shipped: Mapping[str, str]) -> tuple[str | None, str]:
    """(device id, '') or (None, why not): never a guess between two variants."""
    if offer["gpu_vendor"] == "google":
        device = TPU_SLICES.get(str(offer["instance"]))
        return (device, "") if device else (None, f"TPU slice {offer['instance']} has no catalog device")
    if offer["gpu_vendor"] not in (None, "nvidia") and offer["gpu_vendor"] == offer["gpu_vendor"]:
        return None, f"{offer['gpu_vendor']} accelerators are not in the catalog"
    key = (str(offer["gpu_name"]), round(float(offer["gpu_memory"] or 0)))
    if key in GPU_DEVICES:
        return GPU_DEVICES[key], ""
    if key in VARIANTS:
        if offer_id in shipped:
            return shipped[offer_id], ""
        said = next((ff for pattern, ff in KNOWN_FORM_FACTORS if pattern.match(offer_id)), None)
        text = str(offer["instance"]).lower()
        said = said or next((ff for word, ff in FORM_FACTOR_WORDS if word in text), None) or _form_factor(text)
        device = VARIANTS[key].get(said) if said else None
        if device:
            return device, ""
        return None, f"{key[0]} {key[1]} GB comes as {' or '.join(sorted(VARIANTS[key]))}; the instance does not say which"
    return None, f"unknown GPU {key[0]} {key[1]} GB"


def _offer_id(provider: str, offer: Mapping, device: str | None) -> str:
    """The catalog id the offer would have: provider:instance[-spot], RunPod by device and cloud."""
    name = PROVIDERS[provider]
    spot = "-spot" if offer["spot"] else ""
    if provider == "runpod":
        secure = "-secure" if len(str(offer["location"])) > 2 else ""  # gpuhunt: country code = Community Cloud
        return f"runpod:{RUNPOD_SLUGS.get(device or '', device or offer['instance'])}{secure}{spot}"
    instance = f"tpu-{offer['instance']}" if offer["gpu_vendor"] == "google" else str(offer["instance"])
    return f"{name}:{instance.lower()}{spot}"


def to_layer(fetched: Fetched, shipped_devices: Mapping[str, str], fetched_on: dt.date,
             gpuhunt_version: str = "", shipped_regions: Mapping[str, str] | None = None
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(layer rows in the rent table's columns, unmapped offers with the reason).

    ``shipped_devices`` maps the shipped catalog's rent ids to their devices, so a known
    instance keeps the device the catalog gives it. A known offer is priced in the shipped
    row's region where the provider lists it there (``shipped_regions``: prices stay
    comparable, one region against one region); otherwise locations are aggregated per offer
    id: the median price, with minimum, maximum and count in the notes. A spot location priced
    at or above the on-demand median is no spot capacity and is left out; a price that is not
    a finite number between 0 and MAX_USD_PER_HOUR is no price. ``as_of`` is the date of the
    provider's catalog version (its own date, not the day of the fetch) where it names one.
    """
    shipped_regions = shipped_regions or {}
    offers = fetched.offers
    if offers.empty:
        return pd.DataFrame(columns=LAYER_COLUMNS), pd.DataFrame(columns=["provider", "instance", "why"])
    groups: dict[str, dict] = {}
    unmapped = {}
    market = offers[offers["provider"].isin(ONLINE)]
    offers = offers[~offers["provider"].isin(ONLINE)]
    market_rows, market_unmapped = _market_rows(market, fetched, fetched_on, gpuhunt_version, shipped_devices)
    unmapped.update(market_unmapped)
    for offer in offers.to_dict("records"):
        provisional = _offer_id(offer["provider"], offer, None)
        device, why = _device(offer, provisional.removesuffix("-spot"), shipped_devices)
        if device is None:
            unmapped[(offer["provider"], offer["instance"])] = why
            continue
        offer_id = _offer_id(offer["provider"], offer, device)
        count = 1 if offer["provider"] == "runpod" or offer["gpu_vendor"] == "google" else int(offer["gpu_count"])
        if offer["provider"] == "runpod" and int(offer["gpu_count"]) != 1:
            continue  # RunPod prices per GPU; the one-GPU pod is the offer
        instance = f"tpu-{offer['instance']}" if offer["gpu_vendor"] == "google" else str(offer["instance"])
        g = groups.setdefault(offer_id, dict(provider=offer["provider"], instance=instance,
                                             device=device, count=count, spot=offer["spot"], prices=[]))
        try:
            price = float(offer["price"])
        except (TypeError, ValueError):
            continue
        if math.isfinite(price) and 0 < price <= MAX_USD_PER_HOUR:
            g["prices"].append((price, str(offer["location"])))
    on_demand = {i: statistics.median(p for p, _ in g["prices"]) for i, g in groups.items()
                 if not g["spot"] and g["prices"]}
    rows: list[dict] = []
    for offer_id, g in sorted(groups.items()):
        prices = [(p, loc) for p, loc in g["prices"] if p > 0]
        if g["spot"]:
            ceiling = on_demand.get(offer_id.removesuffix("-spot"))
            prices = [(p, loc) for p, loc in prices if ceiling is None or p < ceiling]
        if not prices:
            continue
        values = [p for p, _ in prices]
        region = shipped_regions.get(offer_id)
        in_region = [p for p, loc in prices if region and loc == region]
        if in_region:
            price, where = round(statistics.median(in_region), 5), region
        else:
            price, where = round(statistics.median(values), 5), f"median of {len(values)} location(s)"
        provider = PROVIDERS[g["provider"]]
        dated = catalog_date(fetched.versions.get(g["provider"], ""))
        rows.append(dict(
            id=offer_id, provider=provider, instance=g["instance"],
            region=where, device=g["device"], count=g["count"],
            usd_per_hour=price, spot=g["spot"], as_of=dated or fetched_on,
            source=f"gpuhunt{' ' + gpuhunt_version if gpuhunt_version else ''} {g['provider']} catalog "
                   f"{fetched.versions.get(g['provider'], '?')} (planner pricing refresh {fetched_on})",
            notes=(f"{where} (as the shipped row); " if in_region else "")
                  + f"median of {len(values)} location(s): min {min(values):g}, max {max(values):g} USD/h"
                  + ("; spot locations at or above on-demand left out" if g["spot"] else "")
                  + ("" if dated else f"; the catalog names no date: as of the fetch ({fetched_on})")))
    gone = pd.DataFrame([dict(provider=p, instance=i, why=w) for (p, i), w in sorted(unmapped.items())],
                        columns=["provider", "instance", "why"])
    columns = LAYER_COLUMNS + (MARKET_COLUMNS if market_rows else [])
    every: list[dict] = sorted(rows + market_rows, key=lambda r: str(r["id"]))
    return pd.DataFrame(every, columns=columns), gone


def _market_rows(listings: pd.DataFrame, fetched: Fetched, fetched_on: dt.date, gpuhunt_version: str,
                 shipped_devices: Mapping[str, str] | None = None) -> tuple[list[dict], dict]:
    """A marketplace's one-GPU listings as offers, one per device and kind (on-demand, and
    interruptible: ``vast:rtx-4090``, ``vast:rtx-4090-interruptible``): what a user typically
    pays, the median, with the listings' 10th and 90th percentiles as the offer's range (the
    uncertainty analysis draws within it) and, as its supply, how many listings are at or below
    the median (instances to be had at that price at once). Interruptible listings at or above
    the on-demand median are no bargain and are left out. A GPU name that comes in two form
    factors (an A100 80GB) takes the device of the marketplace's one shipped offer of either,
    never a guess. ``as_of`` is the day of the fetch for live listings, which have no other date,
    and the date a saved copy's catalog version names when it is read from a local directory."""
    shipped = shipped_devices or {}
    groups: dict[tuple[str, bool], list[float]] = {}
    unmapped: dict[tuple[str, str], str] = {}
    for offer in listings.to_dict("records"):
        device, why = _device(offer, "", {})
        key = (str(offer["gpu_name"]), round(float(offer["gpu_memory"] or 0)))
        if device is None and key in VARIANTS:
            known = [d for d in VARIANTS[key].values() if f"{PROVIDERS[offer['provider']]}:{d}" in shipped]
            device = known[0] if len(known) == 1 else None
        if device is None:
            unmapped[(offer["provider"], str(offer["gpu_name"]))] = why
            continue
        if int(offer["gpu_count"]) != 1:
            continue  # one-GPU listings: a machine of several is priced by its own listings
        try:
            price = float(offer["price"])
        except (TypeError, ValueError):
            continue
        if math.isfinite(price) and 0 < price <= MAX_USD_PER_HOUR:
            groups.setdefault((device, bool(offer["spot"])), []).append(price)
    on_demand = {d: statistics.median(p) for (d, spot), p in groups.items() if not spot}
    rows = []
    for (device, spot), prices in sorted(groups.items()):
        if spot and device in on_demand:
            prices = [p for p in prices if p < on_demand[device]]
        if not prices:
            continue
        median = statistics.median(prices)
        low, high = (float(q) for q in np.quantile(prices, MARKET_QUANTILES))
        provider = next(iter(ONLINE))
        rows.append(dict(
            id=f"{PROVIDERS[provider]}:{device}{'-interruptible' if spot else ''}", provider=PROVIDERS[provider],
            instance=f"{device} (one GPU, {'interruptible' if spot else 'on-demand'})", region="marketplace",
            device=device, count=1, usd_per_hour=round(median, 5), spot=spot,
            as_of=catalog_date(fetched.versions.get(provider, "")) or fetched_on,
            usd_per_hour_low=round(low, 5), usd_per_hour_high=round(high, 5),
            supply=sum(p <= median for p in prices),
            source=f"gpuhunt{' ' + gpuhunt_version if gpuhunt_version else ''} {provider} "
                   f"{fetched.versions.get(provider, '?')} (planner pricing refresh {fetched_on})",
            notes=f"median of {len(prices)} one-GPU listing(s) with {MARKET_DISK_GB} GB of disk: min {min(prices):g}, "
                  f"{MARKET_QUANTILES[0]:.0%}-{MARKET_QUANTILES[1]:.0%} {low:.4g}-{high:.4g}, max {max(prices):g} USD/h; "
                  "supply: listings at or below the median"
                  + ("; listings at or above the on-demand median left out" if spot else "")))
    return rows, unmapped


# --------------------------------------------------------------------------- the layer on disk


def layer_problem(rows: pd.DataFrame) -> str | None:
    """Why ``rows`` are no layer to plan with (None when they are): the rent columns, ids,
    devices, finite prices above zero and at most MAX_USD_PER_HOUR, dates."""
    missing = [c for c in LAYER_COLUMNS if c not in rows.columns]
    if missing:
        return f"columns missing: {', '.join(missing)}"
    if rows.empty:
        return "no rows"
    price = pd.to_numeric(rows["usd_per_hour"], errors="coerce")
    bad = rows["id"][~(price.notna() & (price > 0) & (price <= MAX_USD_PER_HOUR) & price.map(math.isfinite))]
    if len(bad):
        return f"{len(bad)} row(s) without a price between 0 and {MAX_USD_PER_HOUR:,.0f} USD/h (first: {bad.iloc[0]})"
    if rows["id"].isna().any() or rows["device"].isna().any():
        return "a row without an id or a device"
    return None


def write_layer(rows: pd.DataFrame, meta: Mapping, directory: Path | None = None) -> Path:
    """Write rent.csv and layer.json as one directory that replaces the previous layer whole: the
    new one is written beside it, then swapped in by renames (a kill at any moment leaves the
    old layer or the new one, never a mix; :func:`read_layer` finishes an interrupted swap).
    Rows that are no layer (:func:`layer_problem`) are refused before anything is written."""
    directory = directory or layer_dir()
    why = layer_problem(rows)
    if why:
        raise RefreshError(f"the refreshed rows are no layer to plan with ({why}); the earlier layer stays",
                           input_error=bool(os.environ.get("GPUHUNT_CATALOG_DIR")))
    parent = directory.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.new-", dir=parent))
        rows.to_csv(tmp / "rent.csv", index=False)
        (tmp / "layer.json").write_text(json.dumps(dict(meta), indent=2, default=str) + "\n", encoding="utf-8")
        old = parent / f".{directory.name}.old"
        if old.exists():
            shutil.rmtree(old)
        if directory.exists():
            os.replace(directory, old)
        os.replace(tmp, directory)
        if old.exists():
            shutil.rmtree(old)
    except OSError as exc:
        with contextlib.suppress(Exception):
            shutil.rmtree(tmp)
        raise RefreshError(f"cannot write the refreshed layer in {parent} ({exc.strerror or exc}); "
                           "the earlier layer stays", input_error=True) from None
    return directory


#: layer.json's fields and their types, as :func:`refresh` writes them (versions: provider -> its
#: catalog's version); what reads a layer relies on each.
META_FIELDS: dict[str, type] = {"fetched_on": str, "gpuhunt": str, "versions": dict, "rows": int}


def meta_problem(info: object) -> str | None:
    """Why a layer's metadata cannot be used (None: it can): not a mapping, a field of the wrong
    type, a date that is not one, a version that is not text. A damaged cache must never stop a
    plan: the reader warns and plans without it."""
    if not isinstance(info, dict):
        return "not a mapping"
    for key, kind in META_FIELDS.items():
        if key in info and not isinstance(info[key], kind):
            return f"'{key}' is {type(info[key]).__name__}, expected {kind.__name__}"
    try:
        dt.date.fromisoformat(str(info.get("fetched_on", "2000-01-01")))
    except ValueError:
        return f"'fetched_on' is not a date: {str(info['fetched_on'])[:40]!r}"
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in info.get("versions", {}).items()):
        return "'versions' holds something other than provider: version text"
    return None


def read_layer(directory: Path | None = None) -> tuple[pd.DataFrame, dict] | None:
    """The refreshed rows and their metadata, or None when no refresh was made. A layer that
    cannot be read (edited by hand, cut short, too large) is skipped with a LayerWarning that
    names the file and how to remove it: plans go on with the shipped catalog."""
    directory = directory or layer_dir()
    old = directory.parent / f".{directory.name}.old"
    if not directory.exists() and old.is_dir():  # a swap cut short between its two renames
        with contextlib.suppress(OSError):
            os.replace(old, directory)
    csv, meta = directory / "rent.csv", directory / "layer.json"
    if not (csv.exists() or meta.exists()):
        return None
    try:
        for f in (csv, meta):
            why = _readable(f)
            if why:
                raise ValueError(why)
        rows = pd.read_csv(csv, dtype={"id": str, "instance": str, "region": str})
        why = layer_problem(rows)
        if why:
            raise ValueError(f"{csv}: {why}")
        rows["as_of"] = rows["as_of"].map(lambda d: dt.date.fromisoformat(str(d)))
        rows["spot"] = rows["spot"].map(lambda v: str(v).strip().lower() == "true")
        info = json.loads(meta.read_text(encoding="utf-8"))
        why = meta_problem(info)
        if why:
            raise ValueError(f"{meta}: {why}")
    except (ValueError, OSError, pd.errors.ParserError, UnicodeDecodeError, RecursionError) as exc:
        warnings.warn(LayerWarning(f"the refreshed prices in {directory} cannot be read ({str(exc)[:200]}); "
                                   "plans use the shipped catalog: 'planner pricing refresh --clear' removes the "
                                   "layer, 'planner pricing refresh' makes a new one"), stacklevel=2)
        return None
    return rows, info


def refresh(providers: Iterable[str], today: dt.date, shipped_rent: pd.DataFrame, gpuhunt_version: str,
            directory: Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame, dict, Fetched]:
    """Fetch, map and store a refreshed layer: (its rows, the unmapped offers, its metadata, what
    was fetched). Refreshing some providers keeps the earlier layer's rows of the others. A
    fixture catalog (FIXTURE_MARKER) is never stored as prices to plan with."""
    providers = tuple(providers) or tuple(PROVIDERS)
    local = os.environ.get("GPUHUNT_CATALOG_DIR")
    if local and (Path(local) / FIXTURE_MARKER).exists() and os.environ.get("PLANNER_FIXTURE_LAYER") != "1":
        raise RefreshError(f"{local} is a test fixture ({FIXTURE_MARKER}): its prices are test inputs, never "
                           "prices to plan with; unset GPUHUNT_CATALOG_DIR to fetch gpuhunt's catalogs", input_error=True)
    fetched = fetch(providers)
    rows, unmapped = to_layer(fetched, dict(zip(shipped_rent["id"], shipped_rent["device"])), today,
                              gpuhunt_version, dict(zip(shipped_rent["id"], shipped_rent["region"].fillna(""))))
    directory = directory or layer_dir()
    earlier = read_layer(directory)
    versions = dict(fetched.versions)
    if earlier is not None and set(providers) != set(PROVIDERS):
        kept_names = {PROVIDERS[p] for p in PROVIDERS if p not in providers}
        old_rows, old_info = earlier
        rows = pd.concat([old_rows[old_rows["provider"].isin(kept_names)], rows], ignore_index=True)
        versions = {**{p: v for p, v in old_info.get("versions", {}).items() if p not in providers}, **versions}
    meta = dict(fetched_on=today.isoformat(), gpuhunt=gpuhunt_version, versions=versions, rows=len(rows),
                unmapped=len(unmapped), missing=dict(fetched.missing))
    write_layer(rows, meta, directory)
    return rows, unmapped, meta, fetched


def delisted(shipped_rent: pd.DataFrame, layer_rows: pd.DataFrame, info: Mapping) -> list[str]:
    """Shipped offer ids of the providers the layer refreshed that their current lists no longer
    carry (GCP's on-demand a3-highgpu-1g, sold only as spot or flex-start): worth a second look."""
    refreshed = {PROVIDERS[p] for p in info.get("versions", {}) if p in PROVIDERS}
    listed = set(layer_rows["id"])
    return sorted(i for i, p in zip(shipped_rent["id"], shipped_rent["provider"]) if p in refreshed and i not in listed)


def newer_rows(layer: pd.DataFrame, rent: pd.DataFrame) -> pd.DataFrame:
    """Layer rows to apply: new offers, and known offers the layer saw later than the shipped row's date."""
    shipped = dict(zip(rent["id"], rent["as_of"]))
    keep = [not isinstance(shipped.get(i), dt.date) or d >= shipped[i] for i, d in zip(layer["id"], layer["as_of"])]
    return layer[keep]


def name_of(info: Mapping) -> str:
    return f"refreshed {info.get('fetched_on', '?')}"


def describe(info: Mapping) -> str:
    versions = ", ".join(f"{p} {v}" for p, v in sorted(info.get("versions", {}).items()))
    return f"gpuhunt {info.get('gpuhunt', '?')}: {versions}"

