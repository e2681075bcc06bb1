"""Typed records passed between the stages: an option the scenario may use, and its quote.

Stages hand each other these frozen records (blanks are ``None``, never NaN), validated once
when made; DataFrames (``Plan.quotes``, ``Plan.options``) are views of them for notebooks,
CSV and the program's vectorised rows. A record is hashable by value, so a per-process cache
can key on it directly (a what-if that changes one row re-prices only that row).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .costs import PART_NAMES

#: The kinds that run in a provider's notebook sessions (an account, quotas, sessions started by
#: hand): free tiers and the tiers you pay for. Only ``free`` costs nothing.
NOTEBOOK_KINDS = ("free", "subscription")

#: The kinds that run at home: cards you own or buy, which draw your household's electricity on
#: your grid, need a host computer and are sold after the horizon.
HOME_KINDS = ("own", "buy")


def considers_home(options: pd.DataFrame) -> bool:
    """Whether any card at home (owned or to buy) is among ``options``: else electricity, your
    grid, a host computer and resale do not enter the plan, and the answer does not dwell on them."""
    return bool(options["kind"].isin(HOME_KINDS).any())


@dataclass(frozen=True, slots=True)
class Option:
    """One way to run work: a card you own (``own``), a card to buy (``buy``), a rent offer
    (``rent``), a free notebook tier (``free``) or a notebook tier you pay for
    (``subscription``: a monthly fee for compute units, or units bought as you go), with what the
    workload's fit made of it (verdict, speed relative to the reference GPU, and the reason it
    cannot run, if any). Fields a kind does not have are ``None``."""

    option: str
    kind: str
    offer: str
    device: str
    count: int
    # prices
    usd_per_hour: float | None
    usd_per_month: float | None
    purchase_usd: float | None
    resale_usd: float | None
    resale_fraction: float | None
    resale_model_factor: float | None  # a multiple of the resale model (resale: 0.9x)
    condition: str | None
    power_w: float | None
    usd_per_hour_low: float | None
    usd_per_hour_high: float | None
    # sessions and limits
    session_limit_h: float | None
    idle_timeout_min: float | None
    quota_h_per_week: float | None
    quota_h_total: float | None
    cap_h_per_month: float | None
    units_per_hour: float | None
    needs_person: bool
    setup_min: float | None
    transfer_gb_per_h: float | None
    persistent_storage: bool
    frameworks: tuple[str, ...] | None
    spot: bool
    billing_s: float | None
    startup_min: float | None
    interruptions_per_h: float | None
    interruption_mode: str
    resume_wait_h: float
    interruptions_low_per_h: float | None
    interruptions_high_per_h: float | None
    interruptions_default: str | None
    storage_usd_per_gb_month: float | None
    egress_usd_per_gb: float | None
    quota_group: str | None
    quota_reset: str | None
    supply: float | None
    term_days: float | None  # a commitment's term (paid whether used or not); None: pay as you go
    disk_gb: float | None
    dataset_mount: bool
    unavailable_share: float | None
    unavailable_low: float | None
    unavailable_high: float | None
    unavailable_estimate: float | None  # the catalog's estimate where the share planned is taken from its range
    quota_low_h_per_week: float | None  # an estimated quota's range (planned at your confidence)
    quota_high_h_per_week: float | None
    quota_estimate_h_per_week: float | None  # the catalog's estimate where the quota planned is taken from its range
    purchase_low_usd: float | None  # a card's price range: what buyers meet (the uncertainty analysis draws it)
    purchase_high_usd: float | None
    # where it comes from
    as_of: dt.date | None
    source: str | None
    price_source: str | None
    notes: str | None
    sign_up: str | None  # what an account needs before its first session (a tier) or machine (a rent offer)
    long_runs: str | None = None  # what a run of many days in one session needs of a rent offer's host
    # the workload's fit (quotes.exclusions; blank before it)
    verdict: str = ""
    fit_reason: str | None = None
    slowdown: float = 1.0
    relative_speed: float = math.nan
    speed_source: str = ""
    reason: str | None = None
    # where it runs, for its energy and emissions (planner.decide.options.with_footprints)
    operator: str | None = None
    grid_zone: str | None = None
    board_w: float | None = None  # the devices' board power [W]
    board_w_estimate: str | None = None  # what an estimated board power rests on (none in the catalog)
    g_co2e_per_kwh: float | None = None  # its grid's intensity, with its range
    g_co2e_low: float | None = None
    g_co2e_high: float | None = None
    pue: float | None = None  # its facility's power usage effectiveness (1.0 at home), with its range
    pue_low: float | None = None
    pue_high: float | None = None
    embodied_kg: float | None = None  # making its devices (and a rented machine's server share) [kg CO2e]
    embodied_low_kg: float | None = None
    embodied_high_kg: float | None = None
    embodied_source: str | None = None
    co2_kg_per_wall_h: float | None = None  # an hour's emissions, central [kg CO2e/h]
    fp8: bool = False  # its device trains in FP8 (workload.FP8_ARCHITECTURES)
    reference_fp8: bool = False  # and the reference GPU does
    gpu_class: str = "pro"  # its GPUs' class, for a machine of several's data parallelism (workload.gpu_class)
    units_per_pack: float | None = None  # compute units bought as you go come in packs of these (options.packs_of)
    pack_days: float | None = None  # and last this long from the day a pack is bought (None: no expiry)

    def __hash__(self) -> int:
        """By its id alone: versions of one option (an edited price) share a hash and equality
        tells them apart. A what-if plan looks each of its quotes up by its option (quotes._ROWS):
        hashing every field, the 280 lookups of a plan of bench/lab-boxes.yaml took 0.70 ms, now 0.21."""
        return hash(self.option)

    @property
    def by_the_month(self) -> bool:
        """A tier paid by the month (``options.subscriptions_of``): its hours carry no price; the
        month's fee buys its units."""
        return (self.kind == "subscription" and self.usd_per_month is not None and self.cap_h_per_month is not None
                and self.units_per_hour is not None)

    @property
    def by_the_pack(self) -> bool:
        """A tier whose compute units are bought in packs (``options.packs_of``): its hours carry
        no price; the packs bought pay for its units."""
        return (self.kind == "subscription" and self.units_per_pack is not None and self.units_per_pack > 0
                and self.units_per_hour is not None)


OPTION_FIELDS = tuple(f.name for f in dataclasses.fields(Option))
_BOOL = {"needs_person", "persistent_storage", "spot", "dataset_mount"}


#: Each option field's value where its cell is blank, where it has one.
OPTION_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Option) if f.default is not dataclasses.MISSING}


def options_of(frame: pd.DataFrame, fit: pd.DataFrame | None = None) -> list[Option]:
    """The rows of an options table (merged with its exclusions, or not yet), as records: blank
    cells None, flags False where blank, one device where the count is blank. ``fit``: the
    options' exclusions (``quotes.exclusions``) row for row, whose columns the records take
    where ``frame`` has none: a merge on the option without making the merged table (pandas
    took 3 ms of a 30 ms what-if plan to merge the lab box's 40 options with their fit)."""
    names = list(frame.columns) + (list(fit.columns) if fit is not None else [])
    at: dict[str, int] = {}
    for i, name in enumerate(names):
        at.setdefault(name, i)  # a column of both (the option): the table's
    cols = [c for c in OPTION_FIELDS if c in at]
    cells = frame.to_numpy(dtype=object)  # the whole table, then its columns: a third of selecting them first
    if fit is not None:
        cells = np.concatenate([cells, fit.to_numpy(dtype=object)], axis=1)
    cells = cells[:, [at[c] for c in cols]]
    cells[pd.isna(cells)] = None  # blank cells (NaN, None, NaT) as None
    given = dict(zip(cols, cells.T.tolist()))
    n = len(cells)
    fields = []  # field by field, in the record's order: a blank takes the field's default, if any
    for c in OPTION_FIELDS:
        default = OPTION_DEFAULTS.get(c)
        values = given.get(c, [default] * n)
        if c in OPTION_DEFAULTS and c in given:
            values = [default if v is None else v for v in values]
        if c in _BOOL:
            values = [bool(v) if v is not None else False for v in values]
        elif c == "count":
            values = [int(v) if v is not None else 1 for v in values]
        elif c == "interruption_mode":
            values = [v or "kill" for v in values]
        elif c == "resume_wait_h":
            values = [float(v or 0.0) for v in values]
        fields.append(values)
    return [Option(*row) for row in zip(*fields)] if n else []


@dataclass(frozen=True, slots=True)
class Quote:
    """One phase on one option, all runs together: the session model's expected hours, the
    capacity and finish, whether it can run and why not, and the money by part [USD].

    Per reference GPU-hour factors (what the program reads) are the totals over the phase's
    GPU-hours (:meth:`per_ref`)."""

    phase: str
    option: str
    kind: str
    device: str
    offer: str
    relative_speed: float  # the speed the option's machine does the phase's runs at (quotes.machine_runs)
    speed_source: str
    verdict: str
    fit_reason: str | None
    spot: bool
    side_by_side: int  # runs the machine carries at once, one to a group of its GPUs (workload.side_by_side)
    interruptions_per_h: float | None
    device_hours: float
    wall_hours: float
    wall_hours_conf: float
    billed_hours: float
    sessions: float
    restarts_by_hand: float
    lost_hours: float
    setup_hours: float
    checkpoint_hours: float | None
    wait_hours: float | None
    session_limit_h: float | None
    weekly_capacity_h: float
    open_capacity_h: float | None
    quota_h_per_week: float | None
    quota_reset: str | None
    units_per_hour: float | None
    quota_group: str | None
    needs_person: bool
    quota_h_total: float | None
    cap_h_per_month: float | None
    wall_hours_rate_low: float | None
    wall_hours_rate_high: float | None
    supply: float | None
    billed_hours_rate_low: float | None
    billed_hours_rate_high: float | None
    #: the wall hours a default interruption rate's range adds on average (0 for a published
    #: rate): the planned capacity holds them, the chance of ending in time counts them
    wall_hours_rate_shift: float | None
    #: the standard deviation of the wall hours at the rate used from the sessions themselves (when
    #: interruptions strike, the work each loses: sessions.wall_sd_h), which the confidence books
    #: and the uncertainty analysis draws; 0 where nothing interrupts a run
    wall_hours_run_sd: float | None
    storage_months: float | None
    finish: dt.date | None
    ok: bool
    usable: bool
    reason: str | None
    energy_kwh: float  # the phase's energy on the option (planner.model.carbon)
    co2_kg: float  # its emissions: energy at its grid, and a rented or free machine's making by the hour
    cost_usd: float
    electricity_usd: float
    rent_usd: float
    storage_usd: float
    egress_usd: float
    your_time_usd: float
    carbon_usd: float  # the emissions at your carbon price (none without one)

    @property
    def money_usd(self) -> float:
        """Money paid, without your time and the carbon price [USD]."""
        return self.cost_usd - self.your_time_usd - self.carbon_usd

    def part_usd(self, part: str) -> float:
        """One cost part (costs.PART_NAMES) [USD]."""
        return float(getattr(self, f"{part}_usd"))

    def per_ref(self, value: float, gpu_hours: float) -> float:
        """A phase total per reference GPU-hour of the phase."""
        return value / gpu_hours


QUOTE_COLUMNS = [f.name for f in dataclasses.fields(Quote)]
assert [f"{p}_usd" for p in PART_NAMES] == QUOTE_COLUMNS[-len(PART_NAMES):]


_QUOTE_VALUES = operator.attrgetter(*QUOTE_COLUMNS)


def quotes_frame(quotes: Iterable[Quote]) -> pd.DataFrame:
    """The DataFrame view of quotes, one row each, columns QUOTE_COLUMNS."""
    return pd.DataFrame([_QUOTE_VALUES(q) for q in quotes], columns=QUOTE_COLUMNS)


def _column_kind(annotation: Any) -> str:
    """The array a Quote field becomes: "float" (a number, blank NaN), "int", "bool" or "object"."""
    text = str(annotation)
    return "float" if text in ("float", "float | None") else text if text in ("int", "bool") else "object"


#: Each quote column's kind of array (:class:`QuoteTable`), from the record's own annotations.
QUOTE_KINDS = {f.name: _column_kind(f.type) for f in dataclasses.fields(Quote)}


@dataclass(frozen=True, eq=False)
class QuoteTable:
    """Quotes as named columns: what the optimiser reads of them (dominance, the program's
    variables). A column is a numpy array of one length (numbers float with NaN for a blank,
    counts int, flags bool, text and dates object), made from the records the first time it is
    read and never written after; :meth:`take` keeps rows, with the columns read so far.
    :attr:`frame` is the DataFrame view (``Plan.quotes``: a notebook, the report), made when
    first asked for. A what-if plan reads some twenty columns of its quotes, most of them
    several times (dominance, pruning, each program's rows); through a DataFrame made every plan
    a lab-box plan of a phase's other hours took 23.7 ms, read off the records 19.7 (60 such
    plans in one process; every output of the shipped and bench scenarios the same)."""

    records: tuple[Quote, ...]
    _columns: dict[str, np.ndarray] = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, quotes: Iterable[Quote]) -> QuoteTable:
        return cls(tuple(quotes))

    def __len__(self) -> int:
        return len(self.records)

    def __contains__(self, column: object) -> bool:
        return column in QUOTE_KINDS

    def __getitem__(self, column: str) -> np.ndarray:
        """One column, as an array (read-only: every reader shares it)."""
        got = self._columns.get(column)
        if got is None:
            got = self._columns[column] = _column(self.records, column)
        return got

    def take(self, rows: np.ndarray) -> QuoteTable:
        """The quotes at positions ``rows``, in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        out = QuoteTable(tuple(self.records[i] for i in rows.tolist()))
        out._columns.update({c: v[rows] for c, v in self._columns.items()})
        return out

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The quotes as a DataFrame, one row each, columns QUOTE_COLUMNS (read-only)."""
        return quotes_frame(self.records)


def _column(records: tuple[Quote, ...], column: str) -> np.ndarray:
    """Column ``column`` of ``records`` as its kind's array (:data:`QUOTE_KINDS`); a count or a
    flag with another value among them (a blank) stays object, as a DataFrame's column would."""
    values = list(map(operator.attrgetter(column), records))
    kind = QUOTE_KINDS[column]
    if kind == "float":
        out = np.array(values, dtype=float)  # None -> NaN
    elif kind == "int" and all(type(v) is int for v in values):
        out = np.array(values, dtype=np.int64)
    elif kind == "bool" and all(type(v) is bool for v in values):
        out = np.array(values, dtype=bool)
    else:
        out = np.empty(len(values), dtype=object)
        out[:] = values
    out.flags.writeable = False
    return out


def no_hours_quote(fields: Mapping[str, Any]) -> Quote:
    """A quote of an option that offers no hours: every hour infinite, nothing usable."""
    row: dict[str, Any] = dict.fromkeys(QUOTE_COLUMNS)
    row.update(spot=False, side_by_side=1, wall_hours=math.inf, wall_hours_conf=math.inf, billed_hours=math.nan, sessions=0,
               restarts_by_hand=0, lost_hours=math.nan, setup_hours=math.nan, checkpoint_hours=math.nan,
               finish=None, ok=False, usable=False, reason="offers no hours", cost_usd=math.inf,
               energy_kwh=math.nan, co2_kg=math.nan,
               **{f"{k}_usd": 0.0 for k in PART_NAMES})
    row.update(fields)
    return Quote(**row)
