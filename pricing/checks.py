"""Lint rules for catalog rows: mistakes that load fine but would mislead a plan.

The loader (:mod:`pricing.loader`) rejects rows it cannot read (types, references,
duplicates). These rules find rows that read fine and are wrong all the same, each
one found in the catalog audit of 2026-11 (rows checked against dated provider lists):

- a spot price at or above its instance's on-demand price (a zone without spot
  capacity copied as spot, or a placeholder equal to the on-demand price);
- an offer whose instance name names another GPU or another form factor (an
  Azure T4 VM mapped to a V100; an "A100 PCIe" instance mapped to the SXM card);
- a date after the day of the check;
- a device without a spec the speed model reads (the RTX 5090's blank tensor rate made it
  slower than an RTX 4090);
- a price far off the provider's own list, where a refreshed layer knows the list.

Each finding is a :class:`Finding` located at file:line:column, so a catalog
maintainer goes straight to the cell.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from .errors import Problem

if TYPE_CHECKING:
    from .loader import Catalog

#: GPU architectures with tensor cores: mixed precision runs on them, so the speed model reads
#: their FP16 tensor rate (NVIDIA's architecture whitepapers, Volta 2017 to Blackwell 2025).
TENSOR_ARCHITECTURES = frozenset({"volta", "turing", "ampere", "ada", "hopper", "blackwell"})

#: A price this many times off the provider's list (either way) is an error.
OFF_LIST_FACTOR = 1.25

#: GPU model words that, when an instance name contains them, must appear in the device id.
#: Longest first, so that "l40s" is read before "l4" and "a100" before "a10".
GPU_WORDS = ("rtx6000", "a6000", "a100", "h100", "h200", "b200", "v100", "p100", "l40s", "a10g", "t4", "l4", "a10",
             "k80")

#: Form factors read from a device's name and from instance names.
FORM_FACTORS = {"pcie": "PCIe", "sxm": "SXM", "nvl": "NVL"}

#: Instances whose form factor the name does not say, from the providers' own pages.
KNOWN_FORM_FACTORS = (
    # learn.microsoft.com: NC A100 v4 "NVIDIA A100 PCIe GPUs"; NCv3 "NVIDIA Tesla V100 GPUs" (PCIe, 250 W)
    (re.compile(r"^azure:standard_nc\d+ads_a100_v4"), "pcie"),
    (re.compile(r"^azure:standard_nc\d+s_v3"), "pcie"),
    # learn.microsoft.com: NC H100 v5 "NVIDIA H100 NVL"
    (re.compile(r"^azure:standard_nc\d+ad[a-z]*_h100_v5"), "nvl"),
    # aws.amazon.com/ec2/instance-types/p4 and /p5: SXM modules on an NVSwitch board
    (re.compile(r"^aws:p4d"), "sxm"),
    (re.compile(r"^aws:p5"), "sxm"),
    # cloud.google.com/compute/docs/gpus: A2 (A100) and A3 (H100) machines carry SXM modules (HGX boards)
    (re.compile(r"^gcp:a2-"), "sxm"),
    (re.compile(r"^gcp:a3-"), "sxm"),
)


@dataclass(frozen=True, order=True)
class Finding(Problem):
    """One suspect cell: a located problem with a ``severity``, ``error`` (the check fails) or
    ``warning``."""

    severity: str = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return f"{where}: {self.severity}: {self.path}: {self.message}"


def _locate(catalog: Catalog, table: str, row: pd.Series, column: str) -> tuple[str, int, int]:
    line = row.get("_line")
    line = int(line) if isinstance(line, (int, float)) and line == line else 0
    file = row.get("layer") if isinstance(row.get("layer"), str) and row.get("layer") != "shipped" else None
    return (file or catalog.files.get(table, table), line, catalog.column_number(table, column) if line else 0)


def _finding(catalog: Catalog, table: str, row: pd.Series, column: str, message: str,
             severity: str = "error") -> Finding:
    file, line, col = _locate(catalog, table, row, column)
    return Finding(file, line, col, f"{table}.{row['id']}.{column}", message, severity)


def spot_not_cheaper(catalog: Catalog) -> list[Finding]:
    """Spot rows priced at or above their instance's on-demand price."""
    rent = catalog.rent
    spot = rent["spot"].astype(bool)
    od = rent[~spot].drop_duplicates(["provider", "instance", "region"]).set_index(
        ["provider", "instance", "region"])["usd_per_hour"]
    out = []
    for _, r in rent[spot].iterrows():
        key = (r["provider"], r["instance"], r["region"])
        if key not in od.index or r["usd_per_hour"] < od.loc[key]:
            continue
        what = "equals" if r["usd_per_hour"] == od.loc[key] else "is above"
        out.append(_finding(catalog, "rent", r, "usd_per_hour",
                            f"spot price {r['usd_per_hour']:g} USD/h {what} the on-demand {od.loc[key]:g} USD/h of "
                            f"{r['instance']}: a zone without spot capacity or a placeholder, not a spot price "
                            "(take the median of zones that list spot)"))
    return out


def _form_factor(text: str) -> str | None:
    """The form factor a name says, or None when it says none or more than one (an instance
    named both 'sxm' and 'pcie' is left out, never guessed)."""
    words = re.split(r"[^a-z0-9]+", text.lower())
    said = {token for word in words for token in FORM_FACTORS if word.startswith(token)}
    return said.pop() if len(said) == 1 else None


def wrong_device(catalog: Catalog) -> list[Finding]:
    """Rent rows whose instance names a different GPU or form factor than their device."""
    names = dict(zip(catalog.devices["id"], catalog.devices["name"]))
    out = []
    for _, r in catalog.rent.iterrows():
        instance = f"{r['id']} {r['instance']}".lower()
        device = str(r["device"])
        squashed = re.sub(r"[^a-z0-9]", "", device)
        named = next((w for w in GPU_WORDS if re.search(rf"(?<![a-z0-9]){w}(?![a-z0-9])", instance)), None)
        if named and named not in squashed:
            out.append(_finding(catalog, "rent", r, "device",
                                f"the instance {r['instance']!r} names the {named.upper()} but the row maps it to "
                                f"{device!r} ({names.get(device, '?')})"))
            continue
        said = next((ff for pattern, ff in KNOWN_FORM_FACTORS if pattern.match(str(r["id"]))), None) \
            or _form_factor(str(r["instance"]))
        has = _form_factor(names.get(device, ""))
        if said and has and said != has:
            out.append(_finding(catalog, "rent", r, "device",
                                f"{r['instance']!r} is a {FORM_FACTORS[said]} card but {device!r} is "
                                f"{names.get(device)} ({FORM_FACTORS[has]}): map it to the {FORM_FACTORS[said]} device"))
    return out


def future_dates(catalog: Catalog, today: dt.date) -> list[Finding]:
    """Rows dated after ``today``: a typo, or a price nobody can have seen yet."""
    out = []
    for table, df in catalog.tables.items():
        if "as_of" not in df.columns:
            continue
        key = "id" if "id" in df.columns else df.columns[0]
        for _, r in df.iterrows():
            d = r["as_of"]
            if isinstance(d, dt.date) and d > today:
                file, line, col = _locate(catalog, table, r, "as_of")
                out.append(Finding(file, line, col, f"{table}.{r[key]}.as_of",
                                   f"dated {d}, after today ({today}): a price cannot be known before it is seen"))
    return out


def off_list(catalog: Catalog, listed: pd.DataFrame) -> list[Finding]:
    """Rent rows priced more than OFF_LIST_FACTOR from the provider's list price: warnings, for
    the catalog's keepers to look at (a plan uses the list's price where a refreshed layer gives
    it, so the shipped row decides nothing until the layer is cleared).

    ``listed`` holds the list (id, usd_per_hour, as_of, source), e.g. the rows of a
    refreshed layer; ids it does not hold are not judged.
    """
    prices = listed.drop_duplicates("id").set_index("id")
    out = []
    for _, r in catalog.rent.iterrows():
        if r["id"] not in prices.index:
            continue
        ref = prices.loc[r["id"]]
        ratio = r["usd_per_hour"] / ref["usd_per_hour"] if ref["usd_per_hour"] else float("inf")
        if ratio > OFF_LIST_FACTOR or ratio < 1 / OFF_LIST_FACTOR:
            out.append(_finding(catalog, "rent", r, "usd_per_hour",
                                f"{r['usd_per_hour']:g} USD/h is {ratio:.2f}x the provider's list "
                                f"{ref['usd_per_hour']:g} USD/h ({ref['source']}, {ref['as_of']}); plans use the list's",
                                severity="warning"))
    return out


def missing_specs(catalog: Catalog) -> list[Finding]:
    """Devices without a figure the speed model reads: memory bandwidth and FP32 rate for every
    GPU, the FP16 tensor rate for tensor-core GPUs and TPUs. A blank is no estimate: with the
    tensor rate blank the RTX 5090 came out slower than an RTX 4090."""
    out = []
    for _, r in catalog.devices.iterrows():
        needed = ["memory_bandwidth_gb_per_s"]
        needed += ["fp16_tensor_tflops"] if r["kind"] == "tpu" else ["fp32_tflops"]
        if r["kind"] != "tpu" and r["architecture"] in TENSOR_ARCHITECTURES:
            needed.append("fp16_tensor_tflops")
        for column in needed:
            value = r[column]
            if value is None or (isinstance(value, float) and value != value):
                out.append(_finding(catalog, "devices", r, column,
                                    "blank, but the speed model reads it for every device without measured "
                                    "throughput: fill it from the datasheet, with its source"))
    return out


def lint(catalog: Catalog, today: dt.date, shipped: Catalog | None = None,
         listed: pd.DataFrame | None = None) -> list[Finding]:
    """Every rule above, in file order; ``shipped`` rows are judged against the ``listed`` prices."""
    found = spot_not_cheaper(catalog) + wrong_device(catalog) + future_dates(catalog, today) + missing_specs(catalog)
    if shipped is not None and listed is not None and not listed.empty:
        found += off_list(shipped, listed)
    return sorted(set(found), key=lambda f: (f.file, f.line, f.column, f.path))
