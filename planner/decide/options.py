"""Every concrete way to compute: own a card, buy one, rent one, use a free tier.

:func:`build_options` turns a Scenario and a Catalog into one row per option
with the facts the cost and session models need (prices, power, limits,
quotas), each row carrying its ``as_of`` and ``source``. Pure: no I/O.
"""

from __future__ import annotations

import collections
import datetime as dt
import fnmatch
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pricing.memo import Kept, per_table
from pricing.values import missing
from pricing.views import STALE_AFTER_DAYS, free_rows, old_offers  # one staleness rule, the catalog's

from ..model import carbon, workload
from ..model.records import HOME_KINDS, NOTEBOOK_KINDS
from ..model.scenario import Consider, Scenario

if TYPE_CHECKING:
    import pricing

OPTION_COLUMNS = [
    "option", "kind", "offer", "device", "count", "usd_per_hour", "usd_per_month", "purchase_usd",
    "resale_usd", "resale_fraction", "resale_model_factor", "condition", "power_w", "session_limit_h", "idle_timeout_min",
    "quota_h_per_week", "quota_h_total", "cap_h_per_month", "units_per_hour", "units_per_pack", "pack_days",
    "needs_person", "setup_min", "transfer_gb_per_h", "persistent_storage", "frameworks", "spot", "billing_s", "startup_min",
    "interruptions_per_h", "storage_usd_per_gb_month", "egress_usd_per_gb", "quota_group", "as_of", "source",
    "interruption_mode", "resume_wait_h", "interruptions_low_per_h", "interruptions_high_per_h",
    "interruptions_default", "disk_gb", "dataset_mount", "price_source", "quota_reset", "supply", "term_days", "notes",
    "sign_up", "long_runs",
    "usd_per_hour_low", "usd_per_hour_high", "unavailable_share", "unavailable_low", "unavailable_high",
    "unavailable_estimate",
    "rent_trend_per_year", "rent_trend_low_per_year", "rent_trend_high_per_year", "rent_trend_default",
    "quota_low_h_per_week", "quota_high_h_per_week", "quota_estimate_h_per_week",
    "purchase_low_usd", "purchase_high_usd",
    # where it runs, for its energy and emissions (with_footprints)
    "operator", "grid_zone", "board_w", "g_co2e_per_kwh", "g_co2e_low", "g_co2e_high", "pue", "pue_low", "pue_high",
    "embodied_kg", "embodied_low_kg", "embodied_high_kg", "embodied_source", "co2_kg_per_wall_h", "board_w_estimate",
    # whether its device and the reference GPU train in FP8 (workload.FP8_ARCHITECTURES)
    "fp8", "reference_fp8",
    # its GPUs' class, for a machine of several's data-parallel efficiency (workload.gpu_class)
    "gpu_class",
]


def _matches(ids: pd.Series, patterns: tuple[str, ...] | None) -> pd.Series:
    if patterns is None:
        return pd.Series(True, index=ids.index)
    return ids.map(lambda i: any(fnmatch.fnmatchcase(i, p) for p in patterns))


@per_table
def commitments_of(opts: pd.DataFrame) -> frozenset[str]:
    """The rent offers with a term (``term_days``): commitments, paid for the whole term."""
    if "term_days" not in opts:
        return frozenset()
    return frozenset(opts["option"].to_numpy()[opts["term_days"].notna().to_numpy()])


@per_table
def packs_of(opts: pd.DataFrame) -> dict[str, tuple[str, float, float, float]]:
    """The options of tiers whose compute units are bought as you go in packs: {option: (tier,
    a pack's price [USD], its units, the days they last)}. A pack is paid whole whether its units
    are used or not (Colab sells 100 units for 9.99 USD, and they expire after 90 days), so the
    hours on the tier carry no price of their own: four hours of an A100 cost the pack, not 2.16
    USD. Units that never expire last the plan's whole calendar."""
    tier = opts["kind"].to_numpy() == "subscription"
    if "units_per_pack" not in opts or not tier.any():
        return {}
    pack, days, usd_h, burn = (_numbers(opts[c]) for c in ("units_per_pack", "pack_days", "usd_per_hour", "units_per_hour"))
    keep = tier & np.isfinite(pack) & (pack > 0) & np.isfinite(usd_h) & np.isfinite(burn) & (burn > 0)
    return {str(o): (str(t), float(u / b * n), float(n), float(d) if d == d else math.inf) for o, t, u, b, n, d in
            zip(opts["option"].to_numpy()[keep], opts["offer"].to_numpy()[keep], usd_h[keep], burn[keep], pack[keep],
                days[keep])}


@per_table
def subscriptions_of(opts: pd.DataFrame) -> dict[str, tuple[str, float, float]]:
    """The options of tiers paid by the month: {option: (tier, fee [USD a month], compute units a
    month)}. The fee buys the month's units whether used or not; an hour on the tier burns its
    device's units an hour (``units_per_hour``), so its hours carry no price of their own."""
    tier = opts["kind"].to_numpy() == "subscription"
    if "usd_per_month" not in opts or not tier.any():
        return {}
    fee, hours, burn = (_numbers(opts[c]) for c in ("usd_per_month", "cap_h_per_month", "units_per_hour"))
    keep = tier & np.isfinite(fee) & np.isfinite(hours) & np.isfinite(burn)
    return {str(o): (str(t), float(f), float(h * b)) for o, t, f, h, b in
            zip(opts["option"].to_numpy()[keep], opts["offer"].to_numpy()[keep], fee[keep], hours[keep], burn[keep])}


def _numbers(column: pd.Series) -> np.ndarray:
    """A column as numbers, NaN where a cell is none (a column of numbers as it is: what
    ``pd.to_numeric(errors="coerce")`` gives it, without its cost in every program built)."""
    if column.dtype.kind == "f":
        return column.to_numpy()
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)


def current_buy_offers(buy: pd.DataFrame, on: dt.date) -> pd.DataFrame:
    """The newest offer per (device, condition, count) dated on or before ``on``.

    Historical offers (launch prices, 2022's used market) stay in the catalog
    so that a scenario starting then is priced as of then; a scenario starting
    today sees today's offers. An offer, new or used, priced more than a year before ``on`` is
    left out (the card is no longer sold at that price). User-added rows (no date) always count.
    """
    dated = buy["as_of"].map(lambda d: d if isinstance(d, dt.date) else on)
    eligible = buy[dated <= on].assign(_date=dated)
    eligible = eligible.sort_values(["_date", "id"])
    latest = eligible.groupby(["device", "condition", "count"], sort=False).tail(1)
    latest = latest[~old_offers(latest, on)]  # a 2020 launch or used price is no offer in 2027
    return buy.loc[buy.index.isin(latest.index)]


_OPTIONS = Kept()


def closed_to_new(free: pd.DataFrame, on: dt.date) -> pd.Series:
    """Mask of free tiers that stopped taking new users before ``on``: offered only to a scenario
    whose consider.free names the tier itself (you have an account), never by a pattern."""
    if "closed_to_new" not in free:
        return pd.Series(False, index=free.index)
    return free["closed_to_new"].map(lambda d: isinstance(d, dt.date) and d <= on)


@dataclass(frozen=True)
class OptionInputs:
    """Everything the options read of their scenario, whole and frozen: the key they are kept
    under in a process (pricing.memo). They are built from this record alone, so a scenario
    field they would read and this record leaves out is an AttributeError, never another
    scenario's options in a sweep."""

    consider: Consider
    own: tuple[str, ...]  # you.own
    grid: str | float | None  # you.grid
    host_power_w: float  # you.host_power
    start: dt.date
    phase_confidence: float
    reference_gpu: str  # workload.reference_gpu: whether the reference trains in FP8

    @classmethod
    def of(cls, s: Scenario) -> OptionInputs:
        """Only what the options read: a what-if that moves your budget, time or attention, or
        the workload's size, finds the options it had (the thesis's sensitivity built them 77
        times, now 64)."""
        return cls(s.consider, s.you.own, s.you.grid, s.you.host_power_w, s.start, s.phase_confidence,
                   s.workload.reference_gpu)


def build_options(s: Scenario, catalog: pricing.Catalog) -> pd.DataFrame:
    """One row per option the scenario may use, in OPTION_COLUMNS; once per (catalog tables,
    :class:`OptionInputs`) in a process (pricing.memo)."""
    # every table _build_options reads: one left out here hands a what-if another catalog's rows
    tables = (catalog.devices, catalog.buy, catalog.rent, catalog.free, catalog.interruptions, catalog.trends,
              catalog.tables["grid"], catalog.tables["pue"], catalog.tables["embodied"])
    inputs = OptionInputs.of(s)

    def make() -> pd.DataFrame:
        for old_tables, old in _OPTIONS.alike((inputs,)):  # an edited price: set its cells
            patched = _patched(catalog, tables, old_tables, old)
            if patched is not None:
                return patched
        return _build_options(inputs, catalog)

    return _OPTIONS.get(tables, (inputs,), make)


#: Option columns that are a buy or rent row's cell as it is (catalog column: option column): an
#: edit of these cells alone (a what-if's price) changes the option's own cells alone.
COPIED = {
    "buy": {"price_usd": "purchase_usd", "resale_usd": "resale_usd", "resale_fraction": "resale_fraction",
            "resale_model_factor": "resale_model_factor",
            "price_low_usd": "purchase_low_usd", "price_high_usd": "purchase_high_usd", "source": "source",
            "layer": "price_source"},
    "rent": {"usd_per_hour": "usd_per_hour", "usd_per_hour_low": "usd_per_hour_low",
             "usd_per_hour_high": "usd_per_hour_high", "billing_s": "billing_s", "startup_min": "startup_min",
             "session_limit_h": "session_limit_h", "setup_min": "setup_min", "transfer_gb_per_h": "transfer_gb_per_h",
             "storage_usd_per_gb_month": "storage_usd_per_gb_month", "egress_usd_per_gb": "egress_usd_per_gb",
             "supply": "supply", "term_days": "term_days", "source": "source", "layer": "price_source",
             "sign_up": "sign_up", "long_runs": "long_runs"},
}
#: A rent row's interruption rate, which its option takes through :func:`with_interruption_defaults`.
_RATE = "interruptions_per_h"


def _patched(catalog: pricing.Catalog, tables: tuple, old_tables: tuple, old: pd.DataFrame) -> pd.DataFrame | None:
    """The options of ``catalog`` made from ``old``, those of ``old_tables`` for the same
    scenario, where the two catalogs differ only in buy and rent cells that an option copies
    (:data:`COPIED`: a price, a rate of billing) or in a rent row's interruption rate: those
    options' cells are set, as :func:`_build_options` would make them; None where the catalogs
    differ otherwise (another table, a row added, a device, a date), or a cell changes its type:
    the caller builds every option.

    A sensitivity run or explore plans one scenario with one price edited, hundreds of times,
    and building the options takes a fifth of a plan: pandas costs the same for one row as for
    all of them, so an edited option is set cell by cell (tests/test_whatif.py checks the
    result against a whole build)."""
    if any(a is not b and _edited_cells(b, a) != {} for k, (a, b) in enumerate(zip(tables, old_tables))
           if k not in (1, 2)):  # a scenario's own free tier is a new table of the same rows
        return None
    at = {o: i for i, o in enumerate(old["option"])}
    cells: dict[str, dict[int, Any]] = {}
    for k, table in ((1, "buy"), (2, "rent")):
        edited = _edited_cells(old_tables[k], tables[k])
        if edited is None:
            return None
        allowed = {*COPIED[table], "_line"} | ({_RATE} if table == "rent" else set())
        if any(not changed <= allowed for changed in edited.values()):
            return None
        ids = tables[k]["id"].to_numpy()
        for row, changed in edited.items():
            option = ids[row]
            if option not in at or changed == {"_line"}:  # not an option, or no cell of it changed
                continue
            i = at[option]
            for c in changed & set(COPIED[table]):
                cells.setdefault(COPIED[table][c], {})[i] = tables[k][c].iat[row]
            if _RATE in changed:  # its row gives no range or text: those come from a default, or not at all
                fields = _interruption_fields(str(old["kind"].iat[i]), old["spot"].iat[i], option, tables[k][_RATE].iat[row],
                                              (math.nan, math.nan, math.nan), catalog.interruptions.to_dict("records"))
                for c, v in zip(_INTERRUPTION_COLUMNS, fields):
                    cells.setdefault(c, {})[i] = v
    if not cells:
        return old
    out = old.copy(deep=False)  # its columns set below are new ones (copy-on-write: old is never changed)
    for c in old.columns:
        if c not in cells:
            continue
        values = old[c].to_numpy(dtype=object if old[c].dtype == object else None, copy=True)
        for i, v in cells[c].items():
            # a column of numbers stays one, and with_interruption_defaults sets its columns' types;
            # elsewhere a cell of another kind might give the whole column another type: build it all
            if not (_same_kind(values[i], v) or c in _INTERRUPTION_COLUMNS
                    or (values.dtype.kind == "f" and isinstance(v, float))):
                return None
            values[i] = v
        out[c] = pd.Series(values, index=old.index, dtype=old[c].dtype, name=c)
    return out


def _edited_cells(old: pd.DataFrame, new: pd.DataFrame) -> dict[int, set[str]] | None:
    """{row position: the columns whose cells differ} between two versions of a catalog table;
    None where they differ in shape, columns or index. A cell of another type differs (a
    column's type may change with one cell: a rent row overlaid without a line of its own
    makes the table's ``_line`` numbers float, 12 becoming 12.0)."""
    if old is new:
        return {}
    if old.shape != new.shape or not old.columns.equals(new.columns) or not old.index.equals(new.index):
        return None
    out: dict[int, set[str]] = {}
    for c in old.columns:
        if old[c].equals(new[c]):
            continue
        a, b = old[c].to_numpy(), new[c].to_numpy()
        for i in np.flatnonzero([not (x is y or (_same_kind(x, y) and (x == y or (x != x and y != y))))
                                 for x, y in zip(a, b)]):
            out.setdefault(int(i), set()).add(c)
    return out


def _same_kind(x: Any, y: Any) -> bool:
    """Two cells of one type, blanks (None, NaN) alike."""
    blank = (x is None or (isinstance(x, float) and math.isnan(x)), y is None or (isinstance(y, float) and math.isnan(y)))
    return blank[0] == blank[1] and (blank[0] or type(x) is type(y))


def _build_options(s: OptionInputs, catalog: pricing.Catalog) -> pd.DataFrame:
    owned: list[dict] = []
    devices = catalog.devices.set_index("id")
    # a card listed n times is n cards: one machine of n, which runs a job data-parallel as a
    # bought box of several does (count), drawing n cards' power
    for device, n in collections.Counter(s.own).items():
        d = devices.loc[device]
        owned.append(dict(option=f"own:{device}", kind="own", offer=device, device=device, count=n,
                         purchase_usd=0.0, power_w=d["board_power_w"] * n, as_of=d["as_of"],
                         source="you.own (no purchase; specs: " + d["source"] + ")"))

    buy = catalog.buy
    if s.consider.buy is None:
        buy = current_buy_offers(buy, s.start)
    else:  # an id named is taken as named; a pattern ('rtx-4090*') means the offers current then
        named = buy["id"].isin(s.consider.buy)
        matched = buy[_matches(buy["id"], s.consider.buy) & ~named]
        buy = buy[named | buy.index.isin(current_buy_offers(matched, s.start).index)]
    # buy and rent rows column by column (a whole catalog has hundreds; no row loop)
    power = buy["power_w"].where(buy["power_w"].notna(), buy["device"].map(devices["board_power_w"]) * buy["count"])
    frames = [pd.DataFrame(owned, columns=OPTION_COLUMNS), pd.DataFrame(dict(
        option=buy["id"], kind="buy", offer=buy["id"], device=buy["device"], count=buy["count"].astype(int),
        **{o: buy[c] if c in buy else np.nan for c, o in COPIED["buy"].items()},
        condition=buy["condition"], power_w=power, as_of=buy["as_of"]))]

    rent = catalog.rent[_matches(catalog.rent["id"], s.consider.rent)]
    if not s.consider.spot:
        rent = rent[~rent["spot"].astype(bool)]
    frames.append(pd.DataFrame(dict(option=rent["id"], kind="rent", offer=rent["id"], **{c: rent[c] for c in (
        "device", "count", "spot", "interruptions_per_h", "frameworks", "as_of")},
        **{o: rent[c] for c, o in COPIED["rent"].items()},
        persistent_storage=False, needs_person=False, operator=rent["provider"],
        grid_zone=[f"{p}:{r}" if isinstance(r, str) and r else p for p, r in zip(rent["provider"], rent["region"])])))

    tiers: list[dict] = []
    free = free_rows(catalog)
    free = free[_matches(free["tier"], s.consider.free)]
    free = free[~closed_to_new(free, s.start) | free["tier"].isin(s.consider.free or ())]
    for _, r in free.iterrows():
        paid = not missing(r["units_per_hour"])  # priced in compute units: a subscription or units as you go
        tiers.append(dict(option=r["id"], kind="subscription" if paid else "free", offer=r["tier"], **{c: r[c] for c in (
            "device", "count", "usd_per_hour", "usd_per_month", "cap_h_per_month", "units_per_hour",
            "session_limit_h", "idle_timeout_min", "quota_h_per_week", "quota_h_total", "needs_person", "setup_min",
            "transfer_gb_per_h", "persistent_storage", "interruptions_per_h", "frameworks", "as_of", "source",
            "unavailable_share", "unavailable_low", "unavailable_high")},
            **{c: r.get(c) for c in ("quota_low_h_per_week", "quota_high_h_per_week", "units_per_pack", "pack_days")},
            quota_group=r["quota_group"] if isinstance(r["quota_group"], str) else r["tier"],
            disk_gb=r.get("disk_gb"), dataset_mount=bool(r.get("dataset_mount", False)), price_source=r["layer"],
            operator=r.get("operator") if isinstance(r.get("operator"), str) else None,
            grid_zone=r.get("grid") if isinstance(r.get("grid"), str) else None,
            quota_reset=r.get("quota_reset") if isinstance(r.get("quota_reset"), str) else None,
            notes=r.get("notes") if isinstance(r.get("notes"), str) else None,
            sign_up=r.get("sign_up") if isinstance(r.get("sign_up"), str) else None))
    frames.append(pd.DataFrame(tiers, columns=OPTION_COLUMNS))
    opts = pd.concat([f.reindex(columns=OPTION_COLUMNS) for f in frames if len(f)] or frames[:1], ignore_index=True)
    opts = with_availability_at_confidence(with_quota_at_confidence(opts, s.phase_confidence), s.phase_confidence)
    opts = with_footprints(opts, catalog, s)
    arch = catalog.devices.set_index("id")["architecture"]
    opts["fp8"] = opts["device"].map(arch).isin(workload.FP8_ARCHITECTURES).to_numpy()
    opts["reference_fp8"] = bool(arch.get(s.reference_gpu) in workload.FP8_ARCHITECTURES)
    names = catalog.devices.set_index("id")["name"]
    opts["gpu_class"] = [workload.gpu_class(names.get(d, "")) for d in opts["device"]]
    return with_price_trends(with_interruption_defaults(opts, catalog.interruptions), catalog.trends)


def with_footprints(opts: pd.DataFrame, catalog: pricing.Catalog, s: OptionInputs) -> pd.DataFrame:
    """Where each option runs, for its energy and emissions (planner.model.carbon): board power
    (the device's, times its count; a buy offer's own figure where it gives one); the grid: yours
    (``you.grid``, else the world average) for cards you own or buy, a rent offer's
    provider:region, else its provider, a tier's zone, else the world average; the PUE: 1.0 at
    home, the operator's, else the industry average; the making of its devices (the first
    embodied.csv row matching the device, times the count; a rented or free machine adds its
    share of a server). ``co2_kg_per_wall_h`` is an hour's central figure."""
    opts = opts.copy()
    board_of, estimated = board_powers(catalog.devices)
    grid = {r["id"]: (float(r["g_co2e_per_kwh"]), float(r["low"]), float(r["high"]))
            for r in catalog.tables["grid"].to_dict("records")}
    pue = {r["id"]: (float(r["pue"]), float(r["low"]), float(r["high"])) for r in catalog.tables["pue"].to_dict("records")}
    embodied = catalog.tables["embodied"].to_dict("records")
    made_of: dict[str, dict] = {}  # the first embodied row matching each device
    yours = s.grid if s.grid is not None else "world"
    rows = []
    for kind, device, n, power, zone_given, operator in zip(opts["kind"], opts["device"], opts["count"], opts["power_w"],
                                                           opts["grid_zone"], opts["operator"]):
        count = int(n) if n == n and n is not None else 1
        at_home = kind in HOME_KINDS
        board = float(power) if at_home and power == power and power is not None else board_of[device] * count
        zone = yours if at_home else (zone_given if isinstance(zone_given, str) else "world")
        if isinstance(zone, float):
            g, zone_name = (zone, zone, zone), f"{zone:g} g/kWh"
        else:
            if zone not in grid:
                zone = str(operator) if str(operator) in grid else "world"
            g, zone_name = grid[zone], zone
        op = operator if isinstance(operator, str) and operator in pue else "other"
        p = (1.0, 1.0, 1.0) if at_home else pue[op]
        if device not in made_of:
            made_of[device] = next(r for r in embodied if fnmatch.fnmatchcase(str(device), r["match"]))
        e = made_of[device]
        made = [0.0, 0.0, 0.0] if kind == "own" else [float(e[c]) * count for c in ("kg_co2e", "low", "high")]
        if not at_home:  # a machine's share of its server, beside its boards
            made = [m + share * count for m, share in zip(made, (carbon.SERVER_SHARE_KG, carbon.SERVER_SHARE_LOW_KG,
                                                                 carbon.SERVER_SHARE_HIGH_KG))]
        per_h = carbon.kg_per_wall_hour(board, s.host_power_w if at_home else 0.0, p[0], g[0],
                                        0.0 if at_home else carbon.embodied_per_hour_kg(made[0]))
        rows.append((zone_name, board, *g, *p, *made, e["id"], per_h))
    columns = ("grid_zone", "board_w", "g_co2e_per_kwh", "g_co2e_low", "g_co2e_high", "pue", "pue_low", "pue_high",
               "embodied_kg", "embodied_low_kg", "embodied_high_kg", "embodied_source", "co2_kg_per_wall_h")
    for k, c in enumerate(columns):
        opts[c] = [r[k] for r in rows]
    # a board power the catalog lacks, estimated (board_powers): said up front where the plan uses it
    own_power = opts["kind"].isin(HOME_KINDS).to_numpy() & pd.notna(opts["power_w"]).to_numpy()  # a card's figure
    opts["board_w_estimate"] = [None if given else estimated.get(d) for d, given in zip(opts["device"], own_power)]
    return opts


def board_powers(devices: pd.DataFrame) -> tuple[dict[str, float], dict[str, str]]:
    """Each device's board power [W], and for a device the catalog gives none (Google publishes
    no TPU v5p power) an estimate, with what it says: its peak tensor TFLOPS at the watts a
    TFLOPS of the device of its kind released nearest before it with a figure (else nearest after
    it), as blank is never zero: a missing power counted an hour on the TPU as 0 kWh and 0 kg,
    and under a carbon price made it look free of emissions."""
    power = dict(zip(devices["id"], devices["board_power_w"].astype(float)))
    known = devices[devices["board_power_w"].notna() & (devices["fp16_tensor_tflops"].astype(float) > 0)]
    estimated: dict[str, str] = {}
    blank = devices[devices["board_power_w"].isna()]
    for device, kind, release, peak in zip(blank["id"].astype(str), blank["kind"].astype(str),
                                           blank["release_date"], blank["fp16_tensor_tflops"].astype(float)):
        kin = known[known["kind"] == kind]
        if not peak > 0 or kin.empty:  # (NaN is not above 0)
            continue
        released = pd.to_datetime(kin["release_date"])
        at = pd.Timestamp(release)
        before = released <= at
        near = (kin[before].iloc[int(released[before].argmax())] if before.any()
                else kin.iloc[int((released - at).abs().argmin())])
        when = "before" if pd.Timestamp(near["release_date"]) <= at else "after"
        w_per_tflops = float(near["board_power_w"]) / float(near["fp16_tensor_tflops"])
        power[device] = peak * w_per_tflops
        estimated[device] = (f"{device}: no board power in the catalog (none published): counted at "
                             f"{power[device]:,.0f} W, its {peak:,.0f} peak TFLOPS at the {w_per_tflops:.3g} W a "
                             f"TFLOPS of {near['id']}, the {kind} released nearest {when} it (an estimate) in its "
                             "energy and emissions")
    return power, estimated


def with_quota_at_confidence(opts: pd.DataFrame, chance: float) -> pd.DataFrame:
    """A weekly quota the catalog estimates with a range (``quota_low_h_per_week`` to
    ``quota_high_h_per_week``; Colab's free tier: 15-30 h) is planned at the hours the tier gives
    in ``chance`` of weeks, the quota uniform over its range: low + (high - low) x (1 - chance)
    (16.5 h at 90 %); ``quota_estimate_h_per_week`` keeps the estimate. A quota a scenario gives
    is its own and is planned as given."""
    opts = opts.copy()
    low = pd.to_numeric(opts["quota_low_h_per_week"], errors="coerce").to_numpy(dtype=float)
    high = pd.to_numeric(opts["quota_high_h_per_week"], errors="coerce").to_numpy(dtype=float)
    quota = pd.to_numeric(opts["quota_h_per_week"], errors="coerce").to_numpy(dtype=float)
    ranged = (np.isfinite(low) & np.isfinite(high) & np.isfinite(quota) & (high > low)
              & (opts["price_source"].to_numpy() != "scenario"))
    opts["quota_estimate_h_per_week"] = np.where(ranged, quota, np.nan)
    opts["quota_h_per_week"] = np.where(ranged, low + (high - low) * (1.0 - chance), opts["quota_h_per_week"])
    opts.loc[~ranged, ["quota_low_h_per_week", "quota_high_h_per_week"]] = np.nan
    return opts


def triangular_quantile(p: float, low: np.ndarray, mode: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The ``p`` quantile of triangular distributions over [low, high] peaking at mode (closed
    form: Johnson, Kotz and Balakrishnan 1995, *Continuous Univariate Distributions* 2, ch. 26)."""
    width = high - low
    at_mode = np.divide(mode - low, width, out=np.ones_like(width), where=width > 0)
    rising = low + np.sqrt(np.maximum(p * width * (mode - low), 0.0))
    falling = high - np.sqrt(np.maximum((1.0 - p) * width * (high - mode), 0.0))
    return np.where(p <= at_mode, rising, falling)


def with_availability_at_confidence(opts: pd.DataFrame, chance: float) -> pd.DataFrame:
    """A tier's device that is often taken, its share estimated with a range (Colab's G4: taken
    at 15 % of session starts, 5-50 %, from users' reports), is planned at the share it is taken
    in no more than ``chance`` of outcomes, the share triangular over its range about the estimate,
    as the uncertainty analysis draws it (37.5 % at 90 % for 5-15-50 %), so the capacity the plan
    counts on holds at your confidence, as an estimated quota's does (:func:`with_quota_at_confidence`).
    ``unavailable_estimate`` keeps the estimate (the catalog's figure: a scenario gives none)."""
    opts = opts.copy()
    share = pd.to_numeric(opts["unavailable_share"], errors="coerce").to_numpy(dtype=float)
    low = pd.to_numeric(opts["unavailable_low"], errors="coerce").to_numpy(dtype=float)
    high = pd.to_numeric(opts["unavailable_high"], errors="coerce").to_numpy(dtype=float)
    ranged = np.isfinite(share) & np.isfinite(low) & np.isfinite(high) & (low <= share) & (share <= high) & (high > low)
    at_chance = triangular_quantile(chance, np.where(ranged, low, 0.0), np.where(ranged, share, 0.0),
                                    np.where(ranged, high, 1.0))
    opts["unavailable_estimate"] = np.where(ranged, share, np.nan)
    opts["unavailable_share"] = np.where(ranged, at_chance, opts["unavailable_share"])
    return opts


def with_price_trends(opts: pd.DataFrame, trends: pd.DataFrame) -> pd.DataFrame:
    """Where a catalog rent price goes from its date: the first trends.csv row whose pattern
    matches the offer's device (a '*' row ends the table: blank is never zero), its central
    yearly change and range, and the row's id (``rent_trend_default``). A dated price moves from
    its date, a catalog row's and a row a scenario changes alike (a what-if that moves a price
    keeps its path); an offer of your own without a date is your quote and does not move (NaN),
    nor do other kinds of options."""
    opts = opts.copy()
    table = trends.to_dict("records")
    n = len(opts)
    central, low, high = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    named: list[str | None] = [None] * n
    for i, (kind, device, dated) in enumerate(zip(opts["kind"], opts["device"], opts["as_of"])):
        if kind != "rent" or not isinstance(dated, dt.date):
            continue
        d = next((d for d in table if fnmatch.fnmatchcase(str(device), d["match"])), None)
        if d is None:  # the catalog's check (pricing.loader.check_trends) keeps this from happening
            raise ValueError(f"{device}: no rent trend matches it; trends.csv needs a row matching '*'")
        central[i], low[i], high[i], named[i] = d["trend_per_year"], d["low_per_year"], d["high_per_year"], d["id"]
    opts["rent_trend_per_year"], opts["rent_trend_low_per_year"], opts["rent_trend_high_per_year"] = central, low, high
    opts["rent_trend_default"] = pd.Series(named, index=opts.index, dtype=object)
    return opts


def with_interruption_defaults(opts: pd.DataFrame, defaults: pd.DataFrame) -> pd.DataFrame:
    """Blank is never zero: a spot offer or free tier without an interruption rate takes the
    first matching sourced default (interruptions.csv), with its range; ``interruptions_default``
    names the default used (None where the row had its own rate). Every interruptible option
    also takes its default's mode (kill or pause) and, for pauses, the mean wait to resume.
    On-demand rent and your own cards are not interrupted."""
    opts = opts.copy()
    table = defaults.to_dict("records")
    rows = [_interruption_fields(kind, spot, option, own_rate, (low, high, named), table)
            for kind, spot, option, own_rate, low, high, named
            in zip(opts["kind"], opts["spot"], opts["option"], opts["interruptions_per_h"],
                   opts["interruptions_low_per_h"], opts["interruptions_high_per_h"],
                   opts["interruptions_default"].astype(object))]
    mode, wait, rate, low, high, named = (list(c) for c in zip(*rows)) if rows else ([], [], [], [], [], [])
    opts["interruption_mode"], opts["resume_wait_h"] = pd.Series(mode, index=opts.index, dtype=object), wait
    for col, values in (("interruptions_per_h", rate), ("interruptions_low_per_h", low),
                        ("interruptions_high_per_h", high)):
        opts[col] = pd.to_numeric(pd.Series(values, index=opts.index), errors="coerce")
    opts["interruptions_default"] = pd.Series(named, index=opts.index, dtype=object)
    return opts


#: The option columns :func:`_interruption_fields` gives, in its order.
_INTERRUPTION_COLUMNS = ("interruption_mode", "resume_wait_h", "interruptions_per_h", "interruptions_low_per_h",
                         "interruptions_high_per_h", "interruptions_default")


def _interruption_fields(kind: str, spot: Any, option: str, own_rate: Any, given: tuple[Any, Any, Any],
                         table: list[dict[Any, Any]]) -> tuple[str, float, Any, Any, Any, Any]:
    """One option's :data:`_INTERRUPTION_COLUMNS` (:func:`with_interruption_defaults`), from its
    own rate and what its row gave of the rest (range low, high, the default's text)."""
    low, high, named = given
    interruptible = kind in NOTEBOOK_KINDS or (kind == "rent" and not missing(spot) and bool(spot))
    if not interruptible:
        return "kill", 0.0, own_rate, low, high, named
    table_kind = "free" if kind in NOTEBOOK_KINDS else kind  # interruptions.csv: notebook tiers are 'free'
    d = next((d for d in table if d["kind"] == table_kind and fnmatch.fnmatchcase(option, d["match"])), None)
    if d is None:  # the catalog's check (pricing.loader.check_defaults) keeps this from happening
        raise ValueError(f"{option}: no interruption default matches it; interruptions.csv needs a row of "
                         f"kind {kind} matching '*'")
    wait = float(d["resume_wait_h"]) if d["mode"] == "pause" else 0.0
    if not missing(own_rate):
        return d["mode"], wait, own_rate, low, high, named
    return (d["mode"], wait, float(d["interruptions_per_h"]), float(d["low_per_h"]), float(d["high_per_h"]),
            f"{option}: {d['interruptions_per_h']:g} interruptions/h assumed "
            f"(range {d['low_per_h']:g}-{d['high_per_h']:g}; {'an estimate, ' if d['estimate'] else ''}"
            f"no rate in the catalog; default '{d['id']}': {d['source']})")


def stale_rows(options: pd.DataFrame, on: dt.date, days: int = STALE_AFTER_DAYS) -> pd.DataFrame:
    """Options whose catalog date is more than ``days`` before ``on``."""
    age = options["as_of"].map(lambda d: (on - d).days if isinstance(d, dt.date) else 0)
    return options[age > days].assign(age_days=age[age > days])
