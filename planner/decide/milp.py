"""The planning problem as a mixed-integer linear program, solved with HiGHS.

Staged as in PyPSA: :func:`build` makes the program (testable without
solving) from one function per constraint family, each returning a
:class:`Block` of named rows; :func:`solve` runs HiGHS (:func:`highs`);
:func:`schedule` and :func:`finishes` read the solution back.

Time is cut into buckets (:class:`Calendar`): at every week from the scenario's
start, every day a phase's window opens or closes (``from`` and ``deadline``
inclusive), every day a free tier's weekly quota resets and every day a credit
starts or ends. Inside a bucket the
open phases do not change, so every machine and every run is bounded bucket by
bucket, each by its length in days: two phases never share a card's hours.

Variables
    x[p, o, b] >= 0   reference GPU-hours of phase p done on option o in bucket b
                      (only buckets inside the phase's window), at most what the
                      option's sessions and your starts allow over those days
    y[b, d] in {0, 1} buy offer b is purchased on day d (the first day; with buy_later, every
                      few week starts too), at that day's price less its resale then
    h in {0, 1}       a host computer is bought (when the user has none)
    u[p] >= 0         work of phase p that no option can do in time (penalised)
    z[c, d] integer   instances of commitment c started on day d; m[t, month] in {0, 1}: a month of
                      subscription tier t (its hours then carry no price); k[t, period] integer: packs
                      of tier t's compute units bought at the period's start (its hours carry no price)
    v[k, g] >= 0      USD credit k pays of the money of group g: the x that the same credits may
                      pay (rent of their providers in buckets inside their days; :func:`credit_groups`);
                      v[k, z] of a commitment's terms

Constraint families (wall hours come from the session model as factors per reference hour)
    work          sum_{o,b} x[p, o, b] + u[p] = gpu_hours[p]
    concurrency   a run is sequential: per phase and bucket, wall hours over all options
                  <= runs x 24 h x the bucket's days
    machine       a card you own or buy: per bucket, wall hours of every phase <= 24 h x the
                  bucket's days (x the y[b, d] of days d up to the bucket's first, for a card bought)
    buy once      sum_d y[b, d] <= 1 (= 1 or 0 where the candidates side by side force it)
    account       a free tier's account: per bucket, the days each phase's hours take at the rate
                  its sessions and your starts allow <= the bucket's days
    quota         a free tier's weekly quota, per quota week (the provider's reset day where
                  known); a week the plan covers in part keeps its whole quota
    subscription  a tier's compute units per month <= its month's units x m[t, month] (m in {0, 1}:
                  the month is subscribed, its fee paid; months from the start's day of the month)
    packs         a tier's compute units per period <= a pack's units x k[t, period] (periods as
                  long as a pack's units last, from the start)
    starts        sessions started by hand <= starts a day x the bucket's days
    supply        a rent offer with a known supply: its instances at once, over every phase
    once          a tier's one-off hours
    host          y[b] <= h and x[p, own, b] <= gpu_hours[p] h (only without a host machine)
    credits       sum_g v[k, g] + sum_z v[k, z] <= credit k's amount; sum_k v[k, g] <= the
                  money of group g's x; sum_k v[k, z] <= the terms of z
    budget        cash: purchases at their price + host + money per hour x - credits <= budget

Objective: purchases - resale + host + money and time per reference hour x - credits,
+ a large penalty on u, + tie-breaks far below a cent (:data:`TIE_BREAKS`); the
hours are solved again as a linear program with the purchases fixed, so exact
ties follow the documented order rather than the search's stopping gap.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from pricing.ids import provider_of
from pricing.memo import per_table

from ..model import carbon, costs, units
from ..model.records import HOME_KINDS, NOTEBOOK_KINDS, QuoteTable
from ..model.scenario import WEEKDAYS, Credit, Scenario
from ..model.sessions import Finish, finish_day, parallel_runs
from .options import commitments_of, packs_of, subscriptions_of

UNMET_PENALTY_USD_PER_H = 1e7
#: How far a start may miss a row or bound [the row's unit] (:meth:`Program.holds`): a tenth of
#: HiGHS's ``mip_feasibility_tolerance`` (1e-6), past which HiGHS repairs it with a linear program.
START_TOLERANCE = 1e-7
#: Plans of equal cost are told apart, in this order of weight, by: fewer commitment terms, fewer
#: sessions started by hand, fewer wall hours (less overhead), earlier days (weighed in weeks: a
#: bucket's first day), and last the option id in alphabetical
#: order (so equal free tiers never swap between runs). Each weight is far below a cent over any
#: real plan, so no plan spends money on them, and far above the linear solver's tolerances.
TIE_BREAKS = {"term": 1e-3, "restart_by_hand": 1e-3, "wall_hour": 1e-4, "week": 1e-6, "option_rank": 1e-7}
HOURS_PER_DAY = 24.0




def month_starts(start: dt.date, total_days: int) -> list[int]:
    """Days from ``start`` to the first day of each month of a subscription taken on ``start``,
    every month the plan's days reach: the same day of the month (the month's last day where it
    has fewer days: a month from 31 January runs to 27 February, the next from 28 February)."""
    out: list[int] = []
    k = 0
    while True:
        year, month = divmod(start.month - 1 + k, 12)
        year, month = start.year + year, month + 1
        last = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)).day
        day = (dt.date(year, month, min(start.day, last)) - start).days
        if day >= total_days:
            return out
        out.append(day)
        k += 1


@dataclass(frozen=True)
class Calendar:
    """The plan's days cut into buckets: at every week from the scenario's start, every day a
    phase's window opens or closes, every day a free tier's weekly quota resets, and every day a
    credit starts or ends (a credit pays the buckets inside its days). Inside a
    bucket the set of open phases is constant, so a machine's and a run's hours are bounded
    bucket by bucket, each weighted by its length in days (as energy-system models weight their
    snapshots; PyPSA's ``snapshot_weightings``): two phases that share a card on the same days
    share its 24 hours a day, whatever their windows' weeks.

    Days are offsets from ``start``; ``edges`` are the buckets' first days and the end.
    """

    start: dt.date
    n_weeks: int
    edges: np.ndarray  # int days, increasing: edges[0] = 0, edges[-1] = 7 n_weeks
    windows: dict[str, tuple[int, int]]  # phase -> [first day, end day), clipped to the calendar
    sold_day: int | None = None  # the horizon's end, where a phase's window runs past it: cards bought are sold then

    @classmethod
    def of(cls, s: Scenario, deadline_override: dict[str, dt.date] | None = None, resets: tuple[str, ...] = (),
           monthly: bool = False, periods: tuple[float, ...] = ()) -> Calendar:
        """``resets``: the weekdays on which the quotas in play reset (cut there too); ``monthly``:
        cut at every month's first day too (:func:`month_starts`; subscriptions are in play);
        ``periods``: cut every so many days from the start too (the days a pack's units last)."""
        override = deadline_override or {}
        dated = {ph.name: s.window(ph, override.get(ph.name)) for ph in s.phases}
        last = max([s.horizon_end, *(end for _, end in dated.values())])
        n_weeks = max(1, math.ceil((last - s.start).days / 7))
        total = 7 * n_weeks
        windows = {p: (min(max((b - s.start).days, 0), total), min(max((e - s.start).days, 0), total))
                   for p, (b, e) in dated.items()}
        cuts = set(range(0, total + 1, 7))
        for b, e in windows.values():
            cuts |= {b, e}
        for day in resets:
            cuts |= set(range(cls.reset_offset(s.start, day), total, 7))
        if monthly:
            cuts |= set(month_starts(s.start, total))
        for days in periods:
            cuts |= set(pack_starts(days, total))
        for credit in s.you.credits:  # from 'from' to the end of 'until'
            ends = (credit.start, None if credit.until is None else credit.until + dt.timedelta(days=1))
            cuts |= {(day - s.start).days for day in ends if day is not None and 0 < (day - s.start).days < total}
        past = any(e > s.sold_day for _, e in windows.values())
        if past:  # a bucket ends where bought cards are sold, when a phase may run past it
            cuts.add(s.sold_day)
        return cls(s.start, n_weeks, np.array(sorted(cuts), dtype=int), windows, s.sold_day if past else None)

    @staticmethod
    def reset_offset(start: dt.date, weekday: str | None) -> int:
        """Days from ``start`` to the first reset on ``weekday`` (0 without one: quota weeks then
        run from the scenario's start weekday)."""
        return (WEEKDAYS.index(weekday) - start.weekday()) % 7 if weekday in WEEKDAYS else 0

    @cached_property
    def first_day(self) -> np.ndarray:
        return self.edges[:-1]

    @cached_property
    def days(self) -> np.ndarray:
        """Each bucket's length [days]."""
        return np.diff(self.edges)

    @cached_property
    def week(self) -> np.ndarray:
        """The week (from the scenario's start) each bucket lies in."""
        return self.first_day // 7

    def open(self, phase: str) -> np.ndarray:
        """Whether each bucket lies inside the phase's window."""
        b, e = self.windows[phase]
        return (self.first_day >= b) & (self.edges[1:] <= e)

    def quota_week(self, weekday: str | None) -> np.ndarray:
        """The quota week each bucket lies in, for quotas that reset on ``weekday``."""
        return (self.first_day - self.reset_offset(self.start, weekday)) // 7

    @cached_property
    def week_starts(self) -> list[dt.date]:
        return [self.start + dt.timedelta(days=7 * w) for w in range(self.n_weeks)]

    def date(self, day: int) -> dt.date:
        return self.start + dt.timedelta(days=int(day))

    def day_of(self, when: object) -> float:
        """Days from the start to a price's date (0 for an undated price: it counts from the start)."""
        return float((when - self.start).days) if isinstance(when, dt.date) else 0.0

    @cached_property
    def first_dates(self) -> np.ndarray:
        """Each bucket's first day, as dates (an object array, to index by bucket)."""
        return np.array([self.date(d) for d in self.edges[:-1]] + [None], dtype=object)[:-1]

    def bucket_label(self, i: int) -> str:
        return self.labels[i]

    @cached_property
    def labels(self) -> list[str]:
        """Each bucket's dates as constraint labels say them (2027-01-04..2027-01-10)."""
        out = []
        for b, e in zip(self.edges[:-1], self.edges[1:]):
            first, last = self.date(b), self.date(e - 1)
            out.append(first.isoformat() if first == last else f"{first.isoformat()}..{last.isoformat()}")
        return out

    def week_label(self, w: int) -> str:
        return (self.start + dt.timedelta(days=7 * int(w))).isoformat()


@dataclass(frozen=True)
class Bounds:
    """Each variable's lower and upper bound (``np.inf`` for none)."""

    lb: np.ndarray
    ub: np.ndarray


@dataclass(frozen=True)
class Rows:
    """Constraint rows ``lower <= A x <= upper`` with ``A`` stored by columns (compressed sparse
    column, as HiGHS takes it): column j's entries are ``value[start[j]:start[j + 1]]`` in rows
    ``index[...]``, rows ascending."""

    start: np.ndarray  # int32, one more than the columns
    index: np.ndarray  # int32
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, row: np.ndarray, col: np.ndarray, val: np.ndarray, n_cols: int, lower: np.ndarray,
           upper: np.ndarray) -> Rows:
        """From entries (row, column, value) in any order; entries at one place add up."""
        order = np.lexsort((row, col))
        row, col, val = row[order], col[order], np.asarray(val, dtype=float)[order]
        if len(row):
            first = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (col[1:] != col[:-1])])
            row, col, val = row[first], col[first], np.add.reduceat(val, first)
        start = np.zeros(n_cols + 1, dtype=np.int32)
        np.cumsum(np.bincount(col, minlength=n_cols), out=start[1:])
        return cls(start, row.astype(np.int32), val, np.asarray(lower, dtype=float), np.asarray(upper, dtype=float))

    def holds(self, x: np.ndarray, tolerance: float) -> bool:
        """Whether ``x`` meets every row within ``tolerance`` (absolute, as HiGHS checks a plan)."""
        columns = np.repeat(np.arange(len(self.start) - 1), np.diff(self.start))
        activity = np.bincount(self.index, weights=self.value * x[columns], minlength=len(self.lower))
        return bool(np.all(activity >= self.lower - tolerance) and np.all(activity <= self.upper + tolerance))


class Labels(Sequence[str]):
    """A block's row labels, written when first read: a program is built and solved by its rows'
    numbers, and a reader who asks for a row by name (a debugger, a notebook) gets them all.
    Written at every build, the labels of the thesis's 628 rows took 0.8 of its 4.9 ms."""

    def __init__(self, n: int, make: Callable[[], list[str]]):
        self._n, self._make = n, make
        self._made: list[str] | None = None

    def __len__(self) -> int:
        return self._n

    def _labels(self) -> list[str]:
        if self._made is None:
            self._made = self._make()
            assert len(self._made) == self._n, "a block has one label a row"
        return self._made

    def __getitem__(self, i: Any) -> Any:
        return self._labels()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels())


def _bucket_labels(cal: Calendar, names: Any, code: np.ndarray, bucket: np.ndarray) -> Labels:
    """Labels "name YYYY-MM-DD..YYYY-MM-DD" of rows per (name ``names[code]``, bucket)."""
    return Labels(len(code), lambda: [f"{names[c]} {cal.bucket_label(b)}" for c, b in zip(code, bucket)])


@dataclass(frozen=True)
class Block:
    """Rows of one constraint family: lower <= A[rows] x <= upper, one label per row."""

    family: str
    labels: Sequence[str]
    row: np.ndarray
    col: np.ndarray
    val: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, family: str, labels: Sequence[str], row: Any, col: Any, val: Any, lower: Any, upper: Any) -> Block:
        n = len(labels)
        rows = labels if isinstance(labels, Labels) else list(labels)
        return cls(family, rows, np.asarray(row, dtype=int), np.asarray(col, dtype=int),
                   np.asarray(val, dtype=float), np.broadcast_to(np.asarray(lower, dtype=float), (n,)),
                   np.broadcast_to(np.asarray(upper, dtype=float), (n,)))


@dataclass
class VarIndex:
    """The program's variables by name: each family a range of columns, handed out in the order
    families are added (as linopy's ``add_variables``), so no offset is counted by hand."""

    n: int = 0
    ranges: dict[str, range] = dataclasses.field(default_factory=dict)

    def add(self, name: str, count: int) -> range:
        """Columns for ``count`` variables of family ``name`` (a name once)."""
        if name in self.ranges:
            raise ValueError(f"variables {name!r} added twice")
        self.ranges[name] = out = range(self.n, self.n + count)
        self.n += count
        return out


@dataclass(frozen=True)
class BuyVar:
    """The y variable of a card bought on one day: 1 if the plan buys it then."""

    var: int
    option: str
    day: int  # days from the start
    price_usd: float  # what it costs that day
    resale_usd: float  # what it sells for at the horizon's end
    made_kg: float = 0.0  # the making of the card the plan carries (:func:`bought_kg`) [kg CO2e]

    @property
    def label(self) -> str:
        return f"{self.option} bought on day {self.day}"


@dataclass(frozen=True)
class CommitVar:
    """The z variable of a commitment started on one day: the instances committed to (integer);
    also a subscription's month (yes or no) and a tier's packs bought on one day (integer)."""

    var: int
    option: str  # the rent offer; for a subscription month, the tier
    day: int  # days from the start
    days: float  # the term
    usd: float  # one instance over the whole term, paid whether used or not
    units: float | None = None  # a subscription month (one at a time) or a pack: the compute units its price buys
    pack: bool = False  # packs of compute units, as many as needed, bought on ``day`` and lasting ``days``

    @property
    def subscription(self) -> bool:
        """A notebook tier's month or pack (the tier's hours carry no price), not a term of a rent offer."""
        return self.units is not None


@dataclass
class Program:
    """A built MILP with the maps needed to read its solution."""

    c: np.ndarray  # cost [USD] plus the tie-breaks
    blocks: list[Block]
    integrality: np.ndarray
    bounds: Bounds
    x_index: XTable  # the hour variables x, columns 0 to n - 1: what each is and its factors
    buy_index: dict[str, int]
    unmet_index: dict[str, int]
    host_index: int | None
    calendar: Calendar
    #: per credit: the indices of its u variables (USD it pays of a group of hours) and the group each pays for
    credit_index: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    #: the x the credits may pay for, in groups the same credits may pay (:func:`credit_groups`)
    credit_groups: tuple[np.ndarray, ...] = ()
    #: every purchase variable: a card on each day it may be bought (``buy_index`` holds the first day's)
    buy_vars: tuple[BuyVar, ...] = ()
    #: every commitment variable: an offer with a term, on each day it may start
    commit_vars: tuple[CommitVar, ...] = ()
    #: per credit: its u variables on commitments (USD it pays of a term) and the commitment each pays for
    credit_terms: tuple[tuple[np.ndarray, tuple[CommitVar, ...]], ...] = ()
    ties: np.ndarray | None = None  # the tie-breaks inside ``c``
    #: per tier whose compute units come in packs: its options (what :func:`first_use` reads)
    pack_options: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    #: the variables by family (hours, bought, unmet, host, terms, months, packs, credits): their columns
    variables: dict[str, range] = dataclasses.field(default_factory=dict)

    @property
    def n_vars(self) -> int:
        return len(self.c)

    @property
    def n_constraints(self) -> int:
        return sum(len(b.labels) for b in self.blocks)

    @property
    def week_starts(self) -> list[dt.date]:
        return self.calendar.week_starts

    def holds(self, x: np.ndarray, rows: Rows | None = None) -> bool:
        """Whether ``x`` is a plan of this program: within its bounds and rows (``rows``: :meth:`rows`,
        when made already) to :data:`START_TOLERANCE`, whole where it must be."""
        whole = self.integrality > 0
        return bool(len(x) == self.n_vars and np.all(x >= self.bounds.lb - START_TOLERANCE)
                    and np.all(x <= self.bounds.ub + START_TOLERANCE) and np.array_equal(x[whole], np.round(x[whole]))
                    and (rows or self.rows()).holds(x, START_TOLERANCE))

    def block(self, family: str) -> Block | None:
        return next((b for b in self.blocks if b.family == family), None)

    def rows(self) -> Rows:
        """Every block's rows, stacked in order, as HiGHS takes them (:class:`Rows`); entries at
        the same row and column add up."""
        if not self.blocks:
            return Rows.of(np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0), self.n_vars, np.zeros(0),
                           np.zeros(0))
        offsets = np.cumsum([0] + [len(b.labels) for b in self.blocks])
        return Rows.of(np.concatenate([b.row + off for b, off in zip(self.blocks, offsets)]),
                       np.concatenate([b.col for b in self.blocks]), np.concatenate([b.val for b in self.blocks]),
                       self.n_vars, np.concatenate([b.lower for b in self.blocks]),
                       np.concatenate([b.upper for b in self.blocks]))


# --------------------------------------------------------------------------- variables


@dataclass(frozen=True)
class XTable:
    """The program's hour variables x[p, o, b]: one per (quote, bucket inside its phase's window),
    in quote then bucket order, columns 0 to n - 1 of the program. Named numpy arrays of one
    length, made once by :func:`x_table` and never written after; what the constraint families,
    the objective and the read-back take. A variable's reference GPU-hours times a factor
    ``*_per_ref`` is its share of the quote's figure (the session model's overheads scale
    linearly with the hours: :mod:`planner.decide.quotes`).

    :meth:`frame` is the DataFrame view, for a notebook or a debugger.
    """

    # what each x is
    phase: np.ndarray  # the phase's name (str)
    option: np.ndarray  # the option's id (str)
    kind: np.ndarray  # own | buy | rent | free | subscription (str)
    group: np.ndarray  # what shares capacity: "machine:<card>", "account:<quota group>", "rent:<offer>" (str)
    bucket: np.ndarray  # the calendar bucket (int)
    week: np.ndarray  # the week from the scenario's start the bucket lies in (int)
    days: np.ndarray  # the bucket's length [days] (int)
    weeks_in: np.ndarray  # the bucket's first day [weeks from the start]
    runs: np.ndarray  # the phase's runs (int)
    parallel: np.ndarray  # runs the option carries at once (int)
    streams: np.ndarray  # runs each wall hour of it carries: its runs side by side (quotes.machine_runs)
    committed: np.ndarray  # the option is a commitment: its hours are paid by the term (bool)
    needs_person: np.ndarray  # a session needs you to start it (bool)
    # what the option allows (nan: no such limit)
    open_capacity_h: np.ndarray  # wall hours a week its sessions and your starts allow [h]
    weekly_capacity_h: np.ndarray  # the same with its weekly quota [h]
    quota_h_per_week: np.ndarray  # [h]
    quota_reset: np.ndarray  # the weekday its quota resets ("" where unknown: the start's weekday)
    units_per_hour: np.ndarray  # a subscription's compute units an hour
    quota_h_total: np.ndarray  # hours granted once [h]
    supply: np.ndarray  # instances to be had at that price at once
    # per reference GPU-hour
    wall_per_ref: np.ndarray  # expected wall hours [h]
    wall_conf_per_ref: np.ndarray  # wall hours at the scenario's confidence [h]
    sessions_per_ref: np.ndarray
    restarts_per_ref: np.ndarray  # sessions started by hand
    co2_per_ref: np.ndarray  # [kg CO2e]
    energy_per_ref: np.ndarray  # [kWh]
    rent_per_ref: np.ndarray  # rent at the catalog's price [USD]
    # priced: on the rent's price path, none on prepaid hours (:func:`price_path`)
    price_factor: np.ndarray  # the rent's price over the catalog's
    price_years: np.ndarray  # years from the price's date to the bucket's middle
    cost_per_ref: np.ndarray  # what the program minimises: money, your time, carbon [USD]
    money_per_ref: np.ndarray  # cash: rent, electricity, storage, egress [USD]

    def __len__(self) -> int:
        return len(self.phase)

    @cached_property
    def var(self) -> np.ndarray:
        """Each x's column in the program (the hours are its first family)."""
        return np.arange(len(self.phase))

    def frame(self) -> pd.DataFrame:
        """The variables as a DataFrame, one row each (a view for reading; the program reads the arrays)."""
        return pd.DataFrame({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


def x_table(s: Scenario, cal: Calendar, quotes: QuoteTable, opts: pd.DataFrame, subs: Mapping[str, Any],
            trends: Mapping[str, float]) -> XTable:
    """The x variables of the quotes over their phases' buckets, each with its per-reference-hour
    factors and priced on its rent's path (:func:`price_path`); a commitment's and a
    subscription's hours carry no rent (the term or the month is paid whether used or not)."""
    phases = {ph.name: ph for ph in s.phases}
    names = quotes["phase"]
    gpu_h = np.array([phases[p].gpu_hours for p in names], dtype=float)
    runs = np.array([phases[p].runs for p in names], dtype=int)
    buckets = {p: np.flatnonzero(cal.open(p)) for p in phases}
    take = np.repeat(np.arange(len(names)), [len(buckets[p]) for p in names]).astype(int)
    kind, option = quotes["kind"], quotes["option"]
    group = np.array([f"machine:{o}" if k in HOME_KINDS else f"account:{g}" if k in NOTEBOOK_KINDS else f"rent:{o}"
                      for k, o, g in zip(kind.tolist(), option.tolist(), quotes["quota_group"].tolist())], dtype=object)
    supply = np.asarray(quotes["supply"], dtype=float)

    def per_ref(column: str) -> np.ndarray:
        return (np.asarray(quotes[column], dtype=float) / gpu_h)[take]

    def each(column: str, dtype: Any = float) -> np.ndarray:
        return np.asarray(quotes[column], dtype=dtype)[take]

    bucket = np.concatenate([buckets[p] for p in names]) if len(names) else np.zeros(0, dtype=int)
    option_x = option[take]
    committed = np.isin(option_x, list(commitments_of(opts)))
    kind_x = kind[take]
    dated = dict(zip(opts["option"].tolist(), opts["as_of"].tolist()))
    path = price_path(s, cal, kind_x, option_x, bucket, dated, committed, trends)
    rent = per_ref("rent_usd")
    change = np.where(committed | np.isin(option_x, list(subs)), -rent, (path.factor - 1.0) * rent)
    cost_flat = per_ref("cost_usd")
    money_flat = ((np.asarray(quotes["cost_usd"], dtype=float) - np.asarray(quotes["your_time_usd"], dtype=float)
                   - np.asarray(quotes["carbon_usd"], dtype=float)) / gpu_h)[take]
    return XTable(
        phase=names[take], option=option_x, kind=kind_x, group=group[take], bucket=bucket, week=cal.week[bucket],
        days=cal.days[bucket], weeks_in=cal.first_day[bucket] / 7.0, runs=runs[take],
        parallel=np.array([parallel_runs(k, r, None if not n == n else int(n))
                           for k, r, n in zip(kind.tolist(), runs.tolist(), supply.tolist())],
                          dtype=int)[take],
        streams=np.asarray(quotes["side_by_side"], dtype=float)[take],
        committed=committed,
        needs_person=np.array([bool(v) and v == v for v in quotes["needs_person"].tolist()], dtype=bool)[take],
        open_capacity_h=each("open_capacity_h"), weekly_capacity_h=each("weekly_capacity_h"),
        quota_h_per_week=each("quota_h_per_week"),
        quota_reset=np.array([d if isinstance(d, str) else "" for d in quotes["quota_reset"].tolist()], dtype=object)[take],
        units_per_hour=each("units_per_hour"),
        quota_h_total=np.array([np.nan if v is None else float(v) for v in quotes["quota_h_total"].tolist()], dtype=float)[take],
        supply=supply[take],
        wall_per_ref=per_ref("wall_hours"), wall_conf_per_ref=per_ref("wall_hours_conf"),
        sessions_per_ref=per_ref("sessions"), restarts_per_ref=per_ref("restarts_by_hand"),
        co2_per_ref=per_ref("co2_kg"), energy_per_ref=per_ref("energy_kwh"), rent_per_ref=rent,
        price_factor=path.factor, price_years=path.years, cost_per_ref=cost_flat + change,
        money_per_ref=money_flat + change)


def rent_trends(s: Scenario, opts: pd.DataFrame) -> dict[str, float]:
    """Each rent option's yearly price trend over the plan: the scenario's ``price_trend`` where
    it gives one, else the option's catalog trend (trends.csv; none for an undated offer of your
    own)."""
    if not s.rent_trend_of_catalog:
        return {o: float(s.rent_trend_per_year or 0.0) for o in opts["option"].tolist()}
    return _catalog_trends(opts)


@per_table
def _catalog_trends(opts: pd.DataFrame) -> dict[str, float]:
    """Each option's catalog trend (:func:`rent_trends`), once per options table (read-only)."""
    if "rent_trend_per_year" not in opts:
        return {}
    return {o: float(v) for o, v in zip(opts["option"].tolist(), opts["rent_trend_per_year"].tolist()) if v == v}


def _rent_points(s: Scenario, cal: Calendar) -> tuple[tuple[float, float], ...]:
    """The scenario's dated rent levels (``price_trend`` as {date: level}) in days from the start."""
    return tuple((cal.day_of(d), lv) for d, lv in s.rent_price_points)


@dataclass(frozen=True)
class PricePath:
    """Per x: the factor its rent is paid at (its price on its path over the catalog's) and the
    years from the price's date to its bucket's middle (what a trend acts over)."""

    factor: np.ndarray
    years: np.ndarray


def price_path(s: Scenario, cal: Calendar, kind: np.ndarray, option: np.ndarray, bucket: np.ndarray,
               as_of: Mapping[str, Any], committed: np.ndarray, trends: Mapping[str, float]) -> PricePath:
    """Rent prices that move: each x's rent is its catalog price carried from the price's date to
    the middle of its bucket at its yearly trend (:func:`rent_trends`: the scenario's
    ``price_trend`` or the device's catalog trend), or along the scenario's dated levels (linear
    between them), a projection the answer states. A commitment's x (``committed``) carry no rent:
    it is paid for the term, at the price of the day it starts (:func:`commit_vars`)."""
    rent = (kind == "rent") & ~committed
    factor, years = np.ones(len(kind)), np.zeros(len(kind))
    if not rent.any():
        return PricePath(factor, years)
    middle = (cal.first_day[bucket] + cal.days[bucket] / 2.0)
    code, names = codes_of(option)
    dated = np.array([cal.day_of(as_of.get(o)) for o in names], dtype=float)[code]
    trend = np.array([trends.get(o, 0.0) for o in names], dtype=float)[code]
    years = np.where(rent, (middle - dated) / 365.25, 0.0)
    points = _rent_points(s, cal)
    for at, tr in sorted(set(zip(dated[rent].tolist(), trend[rent].tolist()))) if (points or np.any(trend[rent])) else ():
        sel = rent & (dated == at) & (trend == tr)
        factor[sel] = costs.path_factor(middle[sel], at, tr, points)
    return PricePath(factor, years)


def _objective(x: XTable, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(cost per variable [USD], tie-breaks per variable) for the x; the rest is set by build."""
    rank = codes_of(x.option)[0]
    cost, ties = np.zeros(n), np.zeros(n)
    cost[: len(x)] = x.cost_per_ref
    ties[: len(x)] = (TIE_BREAKS["restart_by_hand"] * x.restarts_per_ref + TIE_BREAKS["wall_hour"] * x.wall_per_ref
                      + TIE_BREAKS["week"] * x.weeks_in + TIE_BREAKS["option_rank"] * rank.astype(float))
    return cost, ties


def _upper_bounds(x: XTable) -> np.ndarray:
    """x[p, o, b] at most what the option can run over the bucket's days: its sessions and your
    starts allow (the weekly quota is a row of its own, per quota week)."""
    cap = x.open_capacity_h * x.parallel.astype(float)
    wall = x.wall_conf_per_ref
    return np.where(wall > 0, cap * x.days.astype(float) / 7.0 / np.where(wall > 0, wall, 1.0), np.inf)


# --------------------------------------------------------------------------- constraint families


def work(x: XTable, s: Scenario, unmet_index: dict[str, int]) -> Block:
    """Each phase's reference hours are done, or left undone (penalised)."""
    names = list(unmet_index)
    row = {p: i for i, p in enumerate(names)}
    prow = np.array([row[p] for p in x.phase], dtype=int)
    hours = np.array([s.phase(p).gpu_hours for p in names])
    return Block.of("work", names, np.concatenate([prow, np.arange(len(names))]),
                    np.concatenate([x.var, list(unmet_index.values())]),
                    np.ones(len(x) + len(names)), hours, hours)


def _rows(codes: np.ndarray, period: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Constraint rows per (code, period), sorted by code then period: (each x's row, the first x
    of each row, each row's code and period). Periods may be negative (a quota week that began
    before the scenario's start)."""
    period = period.astype(np.int64)
    low = int(period.min(initial=0))
    span = int(period.max(initial=0)) - low + 1
    uniq, first, rid = np.unique(codes.astype(np.int64) * span + (period - low), return_index=True,
                                 return_inverse=True)
    return rid.reshape(-1), first, uniq // span, uniq % span + low


def codes_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each value's code, the distinct values sorted): codes number the sorted values (as
    ``np.unique(values, return_inverse=True)``, by hashing: names are few, rows many)."""
    codes, names = pd.factorize(values, sort=True)
    return codes.astype(np.int64), np.asarray(names)


def concurrency(x: XTable, cal: Calendar) -> Block:
    """A run never runs on two machines at once: per phase and bucket, the runs' hours over every
    option <= runs x 24 h x the bucket's days, a wall hour of a machine carrying runs side by
    side counting each of them (four cards with four seeds left no room for a fifth stream on a
    rented card, which the plan took, finishing four runs' work 16 % sooner than they can)."""
    codes, names = codes_of(x.phase)
    rid, first, code, bucket = _rows(codes, x.bucket)
    upper = x.runs[first] * HOURS_PER_DAY * cal.days[bucket]
    return Block.of("concurrency", _bucket_labels(cal, names, code, bucket), rid,
                    x.var, x.wall_conf_per_ref * x.streams, -np.inf, upper)


@dataclass(frozen=True)
class _Shared:
    """Rows per (group, bucket) over some x, sorted by group then bucket (see :func:`_shared`)."""

    at: np.ndarray  # positions of the x in the variable table
    rid: np.ndarray  # each x's row
    labels: Labels  # each row's "group YYYY-MM-DD..YYYY-MM-DD"
    kind: np.ndarray  # each row's kind and option (of its first x)
    option: np.ndarray
    days: np.ndarray  # the bucket's days
    bucket: np.ndarray  # each row's bucket


def _shared(x: XTable, cal: Calendar, kinds: Sequence[str]) -> _Shared:
    """Rows per (group, bucket) over the x of ``kinds``."""
    at = np.flatnonzero(np.isin(x.kind, kinds))
    codes, names = codes_of(x.group[at])
    rid, first, group_code, bucket = _rows(codes, x.bucket[at])
    return _Shared(at, rid, _bucket_labels(cal, names, group_code, bucket),
                   x.kind[at][first], x.option[at][first], cal.days[bucket].astype(float), bucket)


def machine(x: XTable, cal: Calendar, buy_vars: tuple[BuyVar, ...]) -> Block:
    """A card runs one thing at a time: over each bucket, its wall hours over every phase <= 24 h
    x the bucket's days (x the y of the card bought on a day no later than the bucket's first,
    and before the horizon's end, when it is sold: a phase that runs past the horizon has no
    card bought for this plan after it, only rented, free and your own)."""
    g = _shared(x, cal, list(HOME_KINDS))
    is_buy = g.kind == "buy"
    hours = HOURS_PER_DAY * g.days
    upper = np.where(is_buy, 0.0, hours)
    rows, cols, vals = [g.rid], [x.var[g.at]], [x.wall_conf_per_ref[g.at]]
    first = cal.first_day[g.bucket]
    for v in buy_vars:  # each purchase day's y gives the card's hours from that day on
        owned = np.flatnonzero(is_buy & (g.option == v.option) & (first >= v.day)
                               & (first < (cal.sold_day if cal.sold_day is not None else np.inf)))
        rows.append(owned)
        cols.append(np.full(len(owned), v.var))
        vals.append(-hours[owned])
    return Block.of("machine", g.labels, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                    -np.inf, upper)


def buy_once(buy_vars: tuple[BuyVar, ...], forced: dict[str, int] | None = None) -> Block:
    """A card is bought at most once, on one of the days the plan may buy it (exactly once, or
    never, where ``forced`` says so: the candidates side by side)."""
    offers = sorted({v.option for v in buy_vars})
    if all(v.day == 0 for v in buy_vars) and not forced:
        return Block.of("buy once", [], [], [], [], -np.inf, [])  # one binary per card says it already
    row = {o: i for i, o in enumerate(offers)}
    lower = [float((forced or {}).get(o, 0)) for o in offers]
    upper = [float((forced or {}).get(o, 1)) for o in offers]
    return Block.of("buy once", offers, [row[v.option] for v in buy_vars], [v.var for v in buy_vars],
                    np.ones(len(buy_vars)), lower, upper)


def with_forced(program: Program, forced: dict[str, int]) -> Program:
    """``program`` with its purchases fixed as ``forced`` says (1: bought, 0: not), for a program
    built with a ``forced`` of the same cards: only the bounds of its 'buy once' rows change, so
    the candidates side by side share one build."""
    blocks = [buy_once(program.buy_vars, forced) if b.family == "buy once" else b for b in program.blocks]
    return dataclasses.replace(program, blocks=blocks)


def bought_unused(program: Program, x: np.ndarray, card: str) -> np.ndarray:
    """``x``, a plan of ``program`` that buys no card, with ``card`` bought on its first day and
    left unused (and a host computer bought, where the program may buy one): a plan of the
    program with ``card`` forced (:func:`with_forced`) wherever the budget and the cap on
    emissions leave room for the card (:func:`solve` checks), dearer by the card.

    The candidates' searches start from it: a plan this near the best one (the card's price is
    most of both) ends HiGHS's root linear program in a few iterations, where a start far from
    it (every phase's work unmet) did not shorten it at all. Over the whole catalog at a 10-year
    horizon (bench/growth.py) a card's plan without the budget took 0.8 s (the feasibility
    jump's 0.75, then 20 iterations) and 0.17 s from this start; within the budget 0.54-0.74 s
    and 0.18 s; the same plans, byte for byte, there and in every what-if of the shipped and
    bench scenarios."""
    start = np.array(x, dtype=float)
    whole = program.integrality > 0
    start[whole] = np.round(start[whole])
    start[program.buy_index[card]] = 1.0
    if program.host_index is not None:
        start[program.host_index] = 1.0
    return start


def without_budget(program: Program) -> Program:
    """``program`` without its budget row: the program :func:`build` makes with an unbounded
    budget (the same blocks in the same order, the budget last), without building it again."""
    return dataclasses.replace(program, blocks=[b for b in program.blocks if b.family != "budget"])


def work_left(program: Program, phase: str) -> Program:
    """``program`` asking only how much work stays undone: its objective the unmet hours of every
    phase, money and the tie-breaks out of it, those of ``phase`` a thousandth cheaper, so that of
    plans leaving as much undone it takes one that leaves ``phase`` undone where any does. Its
    solution does all of ``phase`` only where every plan leaving the least undone does, and so
    the cheapest plan does too (the program's own objective leaves the least undone first:
    UNMET_PENALTY_USD_PER_H); where the cheapest plan of several alike would do it, this says
    not, so a deadline found with it holds when planned at. Whether a phase can be done is this
    question, and the full cost made it hard: a search with weekly capacity blocks and monthly
    terms over two years found no proven plan in 30 s (plans of equal cost, which weeks), and
    the whole answer failed; without costs a plan that does the work is soon proven."""
    c = np.zeros(program.n_vars)
    for name, j in program.unmet_index.items():
        c[j] = 1.0 - (1e-3 if name == phase else 0.0)
    return dataclasses.replace(program, c=c, ties=None)


def without_cap(program: Program) -> Program:
    """``program`` without its cap on emissions (:func:`co2_cap`): the program of the same
    scenario without ``you.max_co2``, without building it again."""
    return dataclasses.replace(program, blocks=[b for b in program.blocks if b.family != "co2"])


def account(x: XTable, cal: Calendar) -> Block:
    """A free tier's account runs one session at a time: over each bucket, each phase's sessions
    on each of its options take the days their hours need at the rate those sessions and your
    starts allow (``open_capacity_h`` a week), and the days add up to the bucket's at most.

    A rate shared by every x of the bucket (the smallest, as before) let a phase of short runs
    that placed nothing there (a sweep of 1-hour runs: 2 starts a day, 14 h a week) cap the
    final phase's 12-hour sessions at its 14 h: a sweep's deadline moved later made the final
    phase miss its own (buy nothing and Kaggle, 0 EUR; then a Vast rental, 0.62 EUR)."""
    g = _shared(x, cal, NOTEBOOK_KINDS)
    rate = x.open_capacity_h[g.at] / 7.0  # wall hours a day
    days = np.where(rate > 0, x.wall_conf_per_ref[g.at] / np.where(rate > 0, rate, 1.0), 0.0)  # none: x is 0
    return Block.of("account", g.labels, g.rid, x.var[g.at], days, -np.inf, g.days)


def quota(x: XTable, cal: Calendar) -> Block:
    """A free tier's weekly quota, per quota week: weeks reset on the provider's weekday where
    the catalog knows it, else on the scenario's start weekday. A quota week the plan covers
    only in part keeps its whole quota, as the provider grants it (the account's rows bound
    what those days can run)."""
    hours = x.quota_h_per_week
    at = np.flatnonzero(np.isin(x.kind, NOTEBOOK_KINDS) & np.isfinite(hours))
    if not len(at):
        return Block.of("quota", [], [], [], [], -np.inf, [])
    reset = x.quota_reset[at]
    bucket = x.bucket[at]
    period = np.zeros(len(at), dtype=np.int64)
    for day in set(reset):
        mine = reset == day
        period[mine] = cal.quota_week(day or None)[bucket[mine]]
    codes, names = codes_of(x.group[at])
    rid, first, group_code, week = _rows(codes, period)
    limit = np.full(len(first), np.inf)
    np.minimum.at(limit, rid, hours[at])
    labels = [f"{names[c]} quota week from {cal.date(7 * w + cal.reset_offset(cal.start, r))}"
              for c, w, r in zip(group_code, week, reset[first])]
    return Block.of("quota", labels, rid, x.var[at], x.wall_conf_per_ref[at], -np.inf, limit)


def _one_per_tier(figures: Iterable[tuple]) -> dict[str, tuple]:
    """Each tier's figures once, from the (tier, *figures) its options give: equal but for rounding
    where worked out from each device's own figures (units a month as a device's hours a month x
    its units an hour: 100.0 and 100.00000000000001 for Colab Pro made two binaries a month, one
    of them never used); the largest."""
    return {v[0]: tuple(v[1:]) for v in sorted(set(figures))}


def month_vars(cal: Calendar, x: XTable, subs: Mapping[str, tuple[str, float, float]],
               first_var: int) -> tuple[CommitVar, ...]:
    """One binary per (subscription tier, month) the tier's x lie in: the month is subscribed (its
    fee paid, its units granted) or not. Months start on the scenario's start day of the month
    (:func:`month_starts`); the calendar cuts there, so each bucket lies in one month."""
    mine = np.isin(x.option, list(subs))
    if not mine.any():
        return ()
    starts = np.array(month_starts(cal.start, int(cal.edges[-1])), dtype=int)
    ends = np.append(starts[1:], int(cal.edges[-1]))
    month = np.searchsorted(starts, cal.first_day[x.bucket[mine]], side="right") - 1
    out: list[CommitVar] = []
    for tier, (fee, units_month) in sorted(_one_per_tier(subs.values()).items()):
        ours = np.isin(x.option[mine], [o for o, v in subs.items() if v[0] == tier])
        for m in sorted(set(month[ours].tolist())):
            out.append(CommitVar(first_var + len(out), tier, int(starts[m]), float(ends[m] - starts[m]), fee,
                                 units_month))
    return tuple(out)


def pack_starts(days: float, total_days: int) -> list[int]:
    """Days from the start on which a tier's packs may be bought: every ``days`` (as long as a
    pack's units last, whole days, at least one) within ``total_days``; only the first where
    units never expire."""
    if not math.isfinite(days):
        return [0]
    step = max(1, math.floor(days))
    return list(range(0, max(total_days, 1), step))


def pack_vars(cal: Calendar, x: XTable, packs: Mapping[str, tuple[str, float, float, float]],
              first_var: int) -> tuple[CommitVar, ...]:
    """One integer per (tier whose units come in packs, period its x lie in): the packs bought at
    the period's start, their units spent within it (:func:`pack_starts`: the calendar cuts
    there, so each bucket lies in one period). Buying every pack at a period's start is one way
    to buy them, so the cost is one a user can pay; buying in mid-period can need fewer packs
    where the hours straddle two periods."""
    mine = np.isin(x.option, list(packs))
    if not mine.any():
        return ()
    out: list[CommitVar] = []
    for tier, (usd, units_each, days) in sorted(_one_per_tier(packs.values()).items()):
        starts = np.array(pack_starts(days, int(cal.edges[-1])), dtype=int)
        ends = np.append(starts[1:], int(cal.edges[-1]))
        ours = np.isin(x.option, [o for o, v in packs.items() if v[0] == tier])
        period = np.searchsorted(starts, cal.first_day[x.bucket[ours]], side="right") - 1
        for k in sorted(set(period.tolist())):
            out.append(CommitVar(first_var + len(out), tier, int(starts[k]), float(ends[k] - starts[k]), usd,
                                 units_each, pack=True))
    return tuple(out)


def packs_block(x: XTable, cal: Calendar, packs: Mapping[str, tuple[str, float, float, float]],
                bought: tuple[CommitVar, ...]) -> Block:
    """A tier's compute units, per period: the units its hours burn in the period (wall hours at
    the confidence x the device's units an hour, over every device of the tier) <= a pack's units
    x the packs bought at the period's start. Units left at a period's end are not carried over
    (they expire; where they never do, one period spans the calendar)."""
    return _units_block("packs", x, cal, {o: v[0] for o, v in packs.items()}, bought, "packs")


def subscription(x: XTable, cal: Calendar, subs: Mapping[str, tuple[str, float, float]],
                 months: tuple[CommitVar, ...]) -> Block:
    """A subscription's compute units, per month: the units its hours burn in the month (wall
    hours x the device's units an hour, over every device of the tier) <= the month's units if
    the month is subscribed, else 0. Units left at a month's end are not carried over (Colab
    keeps them 90 days: a plan that relies on that pays for a month it may not need)."""
    return _units_block("subscription", x, cal, {o: v[0] for o, v in subs.items()}, months, "month")


def _units_block(family: str, x: XTable, cal: Calendar, tier_of: Mapping[str, str], grants: tuple[CommitVar, ...],
                 what: str) -> Block:
    """Per grant of a tier's compute units (a month subscribed, packs bought), from its day to the
    next grant's: the units the tier's hours burn there (wall hours at the confidence x the
    device's units an hour; ``tier_of``: option -> tier) <= the grant's units x its variable."""
    if not grants:
        return Block.of(family, [], [], [], [], -np.inf, [])
    at = np.flatnonzero(np.isin(x.option, list(tier_of)))
    first = cal.first_day[x.bucket[at]]
    tier = np.array([tier_of[o] for o in x.option[at]], dtype=object)
    # each hour's grant: its tier's last grant on or before the hour's bucket's first day
    rid = np.zeros(len(at), dtype=int)
    for t in set(tier.tolist()):
        mine = np.flatnonzero(tier == t)
        rows = sorted((z.day, i) for i, z in enumerate(grants) if z.option == t)  # by day (each once a tier)
        days, index = np.array([d for d, _ in rows]), np.array([i for _, i in rows], dtype=int)
        before = np.searchsorted(days, first[mine], side="right") - 1
        if (before < 0).any():
            raise ValueError(f"an hour of {t} lies before its first {what}")
        rid[mine] = index[before]
    burn = x.wall_conf_per_ref[at] * x.units_per_hour[at]
    return Block.of(family, [f"{z.option} {what} from {cal.date(z.day)}" for z in grants],
                    np.concatenate([rid, np.arange(len(grants))]),
                    np.concatenate([x.var[at], [z.var for z in grants]]),
                    np.concatenate([burn, [-float(z.units or 0.0) for z in grants]]), -np.inf, 0.0)


def supply(x: XTable, cal: Calendar) -> Block:
    """A rent offer with a known supply: per bucket, its instances over every phase <= the
    instances to be had at that price at once (wall hours <= supply x 24 h x the bucket's days)."""
    n = x.supply
    at = np.flatnonzero((x.kind == "rent") & np.isfinite(n) & ~x.committed)
    if not len(at):  # a commitment's supply bounds its instances committed instead
        return Block.of("supply", [], [], [], [], -np.inf, [])
    codes, names = codes_of(x.option[at])
    rid, first, code, bucket = _rows(codes, x.bucket[at])
    return Block.of("supply", _bucket_labels(cal, names, code, bucket), rid,
                    x.var[at], x.wall_conf_per_ref[at], -np.inf, n[at][first] * HOURS_PER_DAY * cal.days[bucket])


def _covered_days(day: int | np.ndarray, term_days: float | np.ndarray, first: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Days of each bucket (first day, end day exclusive) that a term started on ``day`` covers:
    a term's hours are usable on every day it covers, a bucket it covers in part included."""
    return np.clip(np.minimum(end, day + term_days) - np.maximum(first, day), 0.0, None)


def commit_vars(s: Scenario, cal: Calendar, x: XTable, opts: pd.DataFrame, first_var: int,
                trends: Mapping[str, float] | None = None) -> tuple[CommitVar, ...]:
    """One integer per (commitment, start day): week starts for terms up to four weeks (blocks a
    plan stacks), every fourth week start for longer ones, and only days from which the term
    covers a bucket the offer's x lie in. One instance's term costs the price per hour x 24 h x
    the term's days, at the price of its start day on the rent's path (:func:`rent_trends`)."""
    if not x.committed.any():
        return ()
    row = {o: i for i, o in enumerate(opts["option"].tolist())}  # an option is one row
    terms, dated, usd_h = (opts[c].to_numpy() for c in ("term_days", "as_of", "usd_per_hour"))
    points = _rent_points(s, cal)
    out: list[CommitVar] = []
    for option in sorted(set(x.option[x.committed])):
        i = row[option]
        term = float(terms[i])
        buckets = np.unique(x.bucket[x.option == option])
        first, end = cal.first_day[buckets], cal.edges[buckets + 1]
        priced = cal.day_of(dated[i])
        trend = (trends or {}).get(str(option), 0.0)
        days = np.arange(0, int(cal.edges[-1]), 7 if term <= 28 else 28)
        # the start days whose term covers a bucket of the offer's x: every day at once, not one by one
        days = days[(_covered_days(days[:, None], term, first[None, :], end[None, :]) > 0).any(axis=1)]
        factors = costs.path_factor(days, priced, trend, points) if (trend or points) else np.ones(len(days))
        out += [CommitVar(first_var + len(out) + k, str(option), int(day), term,
                          float(usd_h[i]) * HOURS_PER_DAY * term * float(factor))
                for k, (day, factor) in enumerate(zip(days, factors))]
    return tuple(out)


def commitment(x: XTable, cal: Calendar, commits: tuple[CommitVar, ...]) -> Block:
    """A commitment's instances run one thing at a time each: per bucket, its wall hours over
    every phase <= 24 h x the days of the bucket each term covers x its instances (a 30-day
    term's last two days are as usable as its first four weeks)."""
    at = np.flatnonzero(x.committed)
    if not len(at):
        return Block.of("commitment", [], [], [], [], -np.inf, [])
    codes, names = codes_of(x.option[at])
    rid, _, code, bucket = _rows(codes, x.bucket[at])
    option, first, end = np.asarray(names)[code], cal.first_day[bucket], cal.edges[bucket + 1]
    # rows come sorted by offer, then bucket: each term meets only its offer's rows from its first
    # day to its last (searched, not scanned: a 10-year plan has thousands of terms), all terms at once
    offers, starts_at = np.unique(option, return_index=True)
    ends_at = np.append(starts_at[1:], len(option))
    term_of = np.array([v.option for v in commits], dtype=object)
    day = np.array([v.day for v in commits], dtype=int)
    days = np.array([v.days for v in commits], dtype=float)
    lo, hi = np.zeros(len(commits), dtype=int), np.zeros(len(commits), dtype=int)
    for o, a, b in zip(offers.tolist(), starts_at.tolist(), ends_at.tolist()):
        mine = np.flatnonzero(term_of == o)
        lo[mine] = a + np.searchsorted(end[a:b], day[mine], side="right")
        hi[mine] = a + np.searchsorted(first[a:b], day[mine] + days[mine])
    assert set(term_of.tolist()) <= set(offers.tolist()), "a term's offer has hours in the program"
    n = np.maximum(hi - lo, 0)  # each term's rows, in order: term by term, bucket by bucket
    at_row = np.repeat(lo, n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    covered = _covered_days(np.repeat(day, n), np.repeat(days, n), first[at_row], end[at_row])
    held = covered > 0
    return Block.of("commitment", _bucket_labels(cal, names, code, bucket),
                    np.concatenate([rid, at_row[held]]),
                    np.concatenate([x.var[at], np.repeat([v.var for v in commits], n)[held]]),
                    np.concatenate([x.wall_conf_per_ref[at], -HOURS_PER_DAY * covered[held]]), -np.inf, 0.0)


def starts(x: XTable, cal: Calendar, starts_per_day: float) -> Block:
    """Sessions started by hand, over every tier that needs a person, per bucket."""
    at = np.flatnonzero(x.needs_person)
    buckets, rid = np.unique(x.bucket[at], return_inverse=True)
    return Block.of("starts", Labels(len(buckets), lambda: [cal.bucket_label(b) for b in buckets]), rid.reshape(-1), x.var[at],
                    x.sessions_per_ref[at], -np.inf, starts_per_day * cal.days[buckets].astype(float))


def once(x: XTable) -> Block:
    """A tier's hours granted once, over the whole plan."""
    at = np.flatnonzero(~np.isnan(x.quota_h_total))
    rid, groups = codes_of(x.group[at])
    limit = np.full(len(groups), np.inf)
    np.minimum.at(limit, rid, x.quota_h_total[at])
    return Block.of("once", list(groups), rid, x.var[at], x.wall_conf_per_ref[at], -np.inf, limit)


def host(x: XTable, s: Scenario, buy_vars: tuple[BuyVar, ...], host_index: int) -> Block:
    """Without a host machine, a card bought or owned needs the host computer bought."""
    b_cols = [v.var for v in buy_vars]
    own = np.flatnonzero(x.kind == "own")
    big = np.array([s.phase(p).gpu_hours for p in x.phase[own]], dtype=float)
    k, m = len(b_cols), len(own)
    row = np.concatenate([np.repeat(np.arange(k), 2), k + np.repeat(np.arange(m), 2)])
    col = np.concatenate([np.ravel([[j, host_index] for j in b_cols]) if k else np.zeros(0),
                          np.ravel(np.column_stack([x.var[own], np.full(m, host_index)]))])
    val = np.concatenate([np.tile([1.0, -1.0], k), np.ravel(np.column_stack([np.ones(m), -big]))])
    return Block.of("host", [*(v.label for v in buy_vars), *(f"{o} bucket {b}" for o, b in zip(x.option[own], x.bucket[own]))],
                    row, col, val, -np.inf, 0.0)


def budget(x: XTable, buy_vars: tuple[BuyVar, ...], host_index: int | None, host_usd: float, budget_usd: float | None,
           credit_vars: np.ndarray | None = None, commits: tuple[CommitVar, ...] = ()) -> Block:
    """Cash out <= the budget: purchases at their price (resale comes back only after the
    horizon, so it pays for nothing during the plan), the host, rent, electricity, storage and
    egress, less what credits pay; your time is not cash."""
    credit_vars = np.zeros(0, dtype=int) if credit_vars is None else credit_vars
    cols = [*x.var, *(v.var for v in buy_vars)] + ([host_index] if host_index is not None else []) + list(credit_vars)
    vals = [*x.money_per_ref, *(v.price_usd for v in buy_vars)]
    vals += [host_usd] if host_index is not None else []
    vals += [-1.0] * len(credit_vars)
    cols += [v.var for v in commits]
    vals += [v.usd for v in commits]
    return Block.of("budget", ["budget"], np.zeros(len(cols)), cols, vals, -np.inf, budget_usd)


def emissions_kg(program: Program, sol: Solution) -> float:
    """A solution's emissions [kg CO2e]: each x's hours at their emissions an hour, and the
    making carried by the cards it buys."""
    x = program.x_index
    hours = float(np.asarray(sol.x[: len(x)]) @ x.co2_per_ref)
    return hours + sum(v.made_kg for v in program.buy_vars if sol.x[v.var] > 0.5)


def energy_of(program: Program, sol: Solution) -> float:
    """A solution's energy [kWh] (the hours'; making a card is not counted as energy)."""
    x = program.x_index
    return float(np.asarray(sol.x[: len(x)]) @ x.energy_per_ref)


@per_table
def made_kg(opts: pd.DataFrame) -> dict[str, float]:
    """Each option's making [kg CO2e] (options.with_footprints; 0 where unknown)."""
    return dict(zip(opts["option"].tolist(), pd.to_numeric(opts["embodied_kg"], errors="coerce").fillna(0.0).tolist()))


def bought_kg(s: Scenario, opts: pd.DataFrame, buy_vars: tuple[BuyVar, ...]) -> list[float]:
    """The making of each card a buy variable buys that the plan carries [kg CO2e]: its share of
    the card's service life for the years from its day to the horizon's end, when it is sold
    (planner.model.carbon.embodied_share_kg)."""
    made = made_kg(opts)
    return [carbon.embodied_share_kg(float(made.get(v.option, 0.0)), (s.sold_day - v.day) / units.DAYS_PER_YEAR)
            for v in buy_vars]


def co2_cap(x: XTable, buy_vars: tuple[BuyVar, ...], max_kg: float) -> Block:
    """Emissions <= ``you.max_co2``: each hour's (its energy at its grid, a rented machine's
    making) and the making carried by the cards bought."""
    cols = [*x.var, *(v.var for v in buy_vars)]
    vals = [*x.co2_per_ref, *(v.made_kg for v in buy_vars)]
    return Block.of("co2", ["co2"], np.zeros(len(cols)), cols, vals, -np.inf, max_kg)


def _pays(credit: Credit, cal: Calendar, option: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Mask: the credit pays for money of ``option`` spent from day ``first`` to ``last``: its
    providers' offers, inside its days (from ``from`` to ``until``, both inclusive)."""
    provider = np.array([provider_of(str(o)) for o in option], dtype=object)
    ok = np.isin(provider, list(credit.providers))
    if credit.start is not None:
        ok &= first >= (credit.start - cal.start).days
    if credit.until is not None:
        ok &= last <= (credit.until - cal.start).days
    return ok


def credit_cover(s: Scenario, x: XTable, cal: Calendar) -> list[np.ndarray]:
    """Per credit of ``you.credits``: the x it may pay for: rent in buckets that lie inside its
    days (:func:`_pays`)."""
    rent = x.kind == "rent"
    first = cal.first_day[x.bucket]
    last = cal.edges[1:][x.bucket] - 1
    return [np.flatnonzero(rent & _pays(credit, cal, x.option, first, last)) for credit in s.you.credits]


def credit_groups(covers: Sequence[np.ndarray], n: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The x the credits may pay for (``covers``: per credit, :func:`credit_cover`; ``n`` x in
    all) grouped by which credits may pay them: (per group its x, ascending; per credit the groups
    it may pay). The program pays credits by group, not by x: a group's credits pay at most its
    x's money together, which is exact, since the same credits may pay every x of the group
    (shared out in proportion to each x's money, any payment of the group is one of its x), and it
    needs a variable per credit and group where one per credit and x made the program's linear
    relaxation slow to solve: 6,700 of them on a student's three years with two credits, whose
    root took 7,150 simplex iterations and 1.2 s in every search of the plan (under 0.2 s by group)."""
    member = np.zeros((n, len(covers)), dtype=bool)
    for k, covered in enumerate(covers):
        member[covered, k] = True
    paid = np.flatnonzero(member.any(axis=1))
    signatures, group = np.unique(member[paid], axis=0, return_inverse=True)
    groups = [paid[group.ravel() == g] for g in range(len(signatures))]
    return groups, [np.flatnonzero(signatures[:, k]) for k in range(len(covers))]


def credit_terms(s: Scenario, cal: Calendar, commits: tuple[CommitVar, ...]) -> list[tuple[CommitVar, ...]]:
    """Per credit: the commitments it may pay for, a term being paid on the day it starts."""
    option = np.array([z.option for z in commits], dtype=object)
    day = np.array([z.day for z in commits], dtype=int)
    return [tuple(z for z, ok in zip(commits, _pays(credit, cal, option, day, day)) if ok)
            for credit in s.you.credits]


def credits(x: XTable, amounts: list[float], index: tuple[tuple[np.ndarray, np.ndarray], ...],
            groups: Sequence[np.ndarray], on_terms: tuple[tuple[np.ndarray, tuple[CommitVar, ...]], ...] = ()) -> Block:
    """A credit pays at most its amount, and together the credits pay at most the money of each
    group of x they may pay (``index``: per credit its u and the group each pays;
    :func:`credit_groups`) and each commitment's terms (``on_terms``: per credit, its u on
    commitments and the commitment each pays for)."""
    labels, rows, cols, vals, upper = [], [], [], [], []
    for k, (u, _) in enumerate(index):
        labels.append(f"credit {k + 1}")
        u_terms = on_terms[k][0] if on_terms else np.zeros(0, dtype=int)
        rows += [len(labels) - 1] * (len(u) + len(u_terms))
        cols += [*u, *u_terms]
        vals += [1.0] * (len(u) + len(u_terms))
        upper.append(amounts[k])
    terms: dict[CommitVar, list[int]] = {}
    for u_terms, zs in on_terms:
        for var, z in zip(u_terms, zs):
            terms.setdefault(z, []).append(int(var))
    for z, us in terms.items():
        labels.append(f"credits on {z.option} from day {z.day}")
        r = len(labels) - 1
        rows += [r] * (len(us) + 1)
        cols += [*us, z.var]
        vals += [1.0] * len(us) + [-z.usd]
        upper.append(0.0)
    pays: dict[int, list[int]] = {}
    for u, paid in index:
        for var, g in zip(u, paid):
            pays.setdefault(int(g), []).append(int(var))
    for g, us in sorted(pays.items()):
        labels.append(f"credits on hours of group {g + 1}")
        r = len(labels) - 1
        rows += [r] * (len(us) + len(groups[g]))
        cols += [*us, *x.var[groups[g]]]
        vals += [1.0] * len(us) + [*-x.money_per_ref[groups[g]]]
        upper.append(0.0)
    return Block.of("credits", labels, rows, cols, vals, -np.inf, upper)


# --------------------------------------------------------------------------- build, solve, read back


def build(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]], kinds: set[str],
          deadline_override: dict[str, dt.date] | None = None, budget_usd: float | None = None,
          forced: dict[str, int] | None = None,
          paths: Mapping[str, tuple[tuple[int, float, float], ...]] | None = None) -> Program:
    """Build the MILP for the quotes whose kind is in ``kinds``.

    ``cards[b]`` is (price, resale at the horizon's end) of buy option b [USD]: the objective
    counts a card net of its resale, the budget at its price (cash out);
    ``deadline_override`` moves phase deadlines (for the Pareto front); ``forced`` fixes
    purchases (1: bought, 0: not; the candidates side by side). ``paths[b]`` lists, per day the
    card may be bought on, (day, price, resale) (``buy_later``); without it, ``cards`` on day 0.
    """
    considered = set(opts["option"].to_numpy()[np.isin(opts["kind"].to_numpy(), list(kinds))].tolist())
    kind = quotes["kind"]
    keep = (np.isin(kind, list(kinds)) & np.asarray(quotes["usable"], dtype=bool)
            & np.isfinite(np.asarray(quotes["wall_hours"], dtype=float))
            & np.array([o in considered for o in quotes["option"].tolist()], dtype=bool))
    q = quotes.take(np.flatnonzero(keep))
    kind, quoted = kind[keep], set(q["option"].tolist())
    resets = q["quota_reset"][np.isin(kind, list(NOTEBOOK_KINDS)) & ~np.isnan(q["quota_h_per_week"])]
    subs = {o: v for o, v in subscriptions_of(opts).items() if o in quoted}
    packs = {o: v for o, v in packs_of(opts).items() if o in quoted}
    cal = Calendar.of(s, deadline_override, tuple(sorted({r for r in resets if isinstance(r, str)})), bool(subs),
                      tuple(sorted({v[3] for v in packs.values()})))
    trends = rent_trends(s, opts)
    xi = x_table(s, cal, q, opts, {**subs, **packs}, trends)
    # the variables, family by family
    var = VarIndex()
    var.add("hours", len(xi))  # x: xi.var numbers them
    nx = len(xi)
    buys = sorted(set(q["option"][kind == "buy"].tolist()) & set(cards))
    steps = [(b, *step) for b in buys for step in (paths[b] if paths and b in paths else ((0, *cards[b]),))]
    buy_vars = tuple(BuyVar(j, b, int(day), float(price), float(resale))
                     for j, (b, day, price, resale) in zip(var.add("bought", len(steps)), steps))
    buy_vars = tuple(dataclasses.replace(v, made_kg=kg) for v, kg in zip(buy_vars, bought_kg(s, opts, buy_vars)))
    buy_index = {v.option: v.var for v in buy_vars if v.day == 0}
    unmet_index = dict(zip((ph.name for ph in s.phases), var.add("unmet", len(s.phases))))
    host_var = var.add("host", 1 if s.you.buys_host else 0)
    host_index = host_var[0] if host_var else None
    commits = commit_vars(s, cal, xi, opts, var.n, trends)
    var.add("terms", len(commits))
    months = month_vars(cal, xi, subs, var.n)
    var.add("months", len(months))
    bought_packs = pack_vars(cal, xi, packs, var.n)
    var.add("packs", len(bought_packs))
    groups, paid = credit_groups(credit_cover(s, xi, cal), nx)
    credit_index = []  # one u variable per (credit, group of hours it may pay for)
    for k, gs in enumerate(paid):
        credit_index.append((np.array(var.add(f"credit {k + 1} on hours", len(gs)), dtype=int), gs))
    paid_terms = []  # and per (credit, commitment it may pay for): a term paid when it starts
    for k, zs in enumerate(credit_terms(s, cal, commits)):
        paid_terms.append((np.array(var.add(f"credit {k + 1} on terms", len(zs)), dtype=int), zs))
    n = var.n

    c, ties = _objective(xi, n)
    for v in buy_vars:
        c[v.var] = v.price_usd - v.resale_usd + v.made_kg * (s.you.carbon_usd_per_kg or 0.0)
    for z in (*commits, *months, *bought_packs):
        c[z.var] = z.usd
        ties[z.var] = TIE_BREAKS["term"]
    for j in unmet_index.values():
        c[j] = UNMET_PENALTY_USD_PER_H
    if host_index is not None:
        c[host_index] = s.you.host_usd
    for u in [u for u, _ in credit_index] + [u for u, _ in paid_terms]:
        c[u] = -1.0  # a dollar of credit is a dollar not spent

    blocks = [work(xi, s, unmet_index), concurrency(xi, cal), machine(xi, cal, buy_vars), buy_once(buy_vars, forced),
              account(xi, cal),
              quota(xi, cal), subscription(xi, cal, subs, months),
              packs_block(xi, cal, packs, bought_packs), supply(xi, cal),
              commitment(xi, cal, commits), starts(xi, cal, s.you.attention_starts_per_day),
              once(xi)]
    if host_index is not None:
        blocks.append(host(xi, s, buy_vars, host_index))
    limit = budget_usd if budget_usd is not None else s.you.budget_usd
    if credit_index:
        blocks.append(credits(xi, [c.amount_usd for c in s.you.credits], tuple(credit_index), groups,
                              tuple(paid_terms)))
    if s.you.max_co2_kg is not None:
        blocks.append(co2_cap(xi, buy_vars, s.you.max_co2_kg))
    if limit is not None and math.isfinite(limit):
        blocks.append(budget(xi, buy_vars, host_index, s.you.host_usd, limit,
                             np.concatenate([u for u, _ in [*credit_index, *paid_terms]]) if credit_index else None,
                             (*commits, *months, *bought_packs)))
    blocks = [b for b in blocks if b.labels]

    integrality = np.zeros(n)
    ub = np.full(n, np.inf)
    ub[:nx] = _upper_bounds(xi)
    for j in [*(v.var for v in buy_vars), *([host_index] if host_index is not None else [])]:
        integrality[j], ub[j] = 1, 1
    instances = dict(zip(opts["option"].tolist(), opts["supply"].tolist())) if "supply" in opts else {}
    most = sum(ph.runs for ph in s.phases)  # never more instances than runs at once
    for z in commits:
        n_max = instances.get(z.option)
        integrality[z.var], ub[z.var] = 1, float(n_max) if n_max is not None and n_max == n_max else most
    for z in months:  # one subscription of a tier at a time
        integrality[z.var], ub[z.var] = 1, 1
    for z in bought_packs:  # as many packs as the period's hours burn
        integrality[z.var] = 1
    lb = np.zeros(n)
    return Program(c + ties, blocks, integrality, Bounds(lb, ub), xi, buy_index, unmet_index, host_index, cal,
                   tuple(credit_index), tuple(groups), buy_vars, (*commits, *months, *bought_packs), tuple(paid_terms),
                   ties, {t: tuple(sorted(o for o, v in packs.items() if v[0] == t)) for t in {v[0] for v in packs.values()}},
                   dict(var.ranges))


@dataclass(frozen=True)
class Solution:
    ok: bool
    x: np.ndarray
    objective: float
    message: str


#: A plan of a program by its variables' names rather than their columns (:func:`named_plan`):
#: ((name, value), ...), the variables at zero left out. Names are (family, ...): ("hours", phase,
#: option, the bucket's first day), ("bought", card, day), ("unmet", phase), ("host",).
Start = tuple[tuple[tuple[Any, ...], float], ...]

#: The families of variables :func:`named_plan` names; a program with others (a term, a month, a
#: pack, a credit) has no named plan.
NAMED_FAMILIES = frozenset({"hours", "bought", "unmet", "host"})


def _all_named(program: Program) -> bool:
    """Whether every variable of ``program`` is of a family :func:`named_plan` names."""
    return not {family for family, columns in program.variables.items() if len(columns)} - NAMED_FAMILIES


def named_plan(program: Program, x: np.ndarray) -> Start:
    """The plan ``x`` of ``program`` by its variables' names (:data:`Start`): what a what-if hands
    the search of a program built at another position (a price, a phase's hours moved), whose
    columns differ, as a plan to start from (:func:`start_of`). () where the program has
    variables of a family it does not name."""
    if not _all_named(program):
        return ()
    xi = program.x_index
    used = np.flatnonzero(np.abs(x[: len(xi)]) > 0)
    first = program.calendar.first_dates[xi.bucket[used]]
    named: list[tuple[tuple[Any, ...], float]] = [
        (("hours", p, o, d), v) for p, o, d, v in zip(xi.phase[used].tolist(), xi.option[used].tolist(), first.tolist(),
                                                       x[used].tolist())]
    named += [(("bought", v.option, v.day), float(x[v.var])) for v in program.buy_vars if x[v.var] != 0]
    named += [(("unmet", p), float(x[j])) for p, j in program.unmet_index.items() if x[j] != 0]
    if program.host_index is not None and x[program.host_index] != 0:
        named.append((("host",), float(x[program.host_index])))
    return tuple(named)


def start_of(program: Program, named: Start) -> np.ndarray | None:
    """A plan of ``program`` from a named one (:func:`named_plan`): each variable it names at its
    value, every other at zero, and each phase's hours (done and left undone) scaled to the
    phase's work in this program (its hours moved: the plan of them moved alike, so its work row
    holds). None where ``named`` is empty or the program has variables of a family it does not
    name. Whether it is a plan of this program (its other rows and its bounds) is for
    :func:`solve` to check: more hours may not fit where the plan put them, and it is left out."""
    if not named or not _all_named(program):
        return None
    values = dict(named)
    xi = program.x_index
    x = np.zeros(program.n_vars)
    # the hours of the options the plan uses (a few of the program's options: their x alone are read)
    at = np.flatnonzero(np.isin(xi.option, list({name[2] for name in values if name[0] == "hours"})))
    first = program.calendar.first_dates[xi.bucket[at]].tolist()
    of_phase: dict[str, list[int]] = {}
    for i, p, o, d in zip(at.tolist(), xi.phase[at].tolist(), xi.option[at].tolist(), first):
        value = values.get(("hours", p, o, d))
        if value:
            x[i] = value
            of_phase.setdefault(p, []).append(i)
    for v in program.buy_vars:
        x[v.var] = values.get(("bought", v.option, v.day), 0.0)
    for p, j in program.unmet_index.items():
        x[j] = values.get(("unmet", p), 0.0)
    if program.host_index is not None:
        x[program.host_index] = values.get(("host",), 0.0)
    work = program.block("work")
    if work is not None:
        for k, (p, j) in enumerate(program.unmet_index.items()):
            mine = of_phase.get(p, [])
            done = float(x[mine].sum()) + x[j]
            need = float(work.lower[k])  # (the work rows are the phases', in order)
            if done > 0 and abs(done - need) > START_TOLERANCE:  # (a sum a hair off is left as it is)
                x[mine] *= need / done
                x[j] *= need / done
    return x


def solve(program: Program, time_limit_s: float = 30.0, start: np.ndarray | None = None) -> Solution:
    """Solve with HiGHS; the unmet-work slack keeps every program feasible but the budget.
    ``start``: a plan of this program the search may start from (:func:`bought_unused`; a
    what-if's base plan, :func:`start_of`); one that breaks a row or bound is left out, as HiGHS
    would repair it with a linear program of its own. A start changes how soon HiGHS proves the
    plan, not which (tests/test_whatif.py: the same rows with and without).

    HiGHS stops a mixed-integer search within a relative gap (1e-7: 7e-5 USD on a 700 USD plan),
    which can exceed the tie-breaks' weights, so an exact tie could go either way. The hours are
    therefore solved again as a linear program with the purchases fixed, which HiGHS solves to
    optimality: among plans of equal cost the documented order (:data:`TIE_BREAKS`) decides. A
    search that closes its gap (HiGHS reports 0) has proven that plan already and is not solved
    again (outputs of every shipped scenario's run, report, sensitivity, sweep, compare and explore
    the same; 7 ms less a what-if plan), unless a purchase came out a hair from whole (HiGHS
    accepts 1e-6): a card bought 1e-9 times carried 2e-6 h of work, an assignment of "0.0 h"
    on a card the plan does not buy.
    (Equal cards never reach the program: dominance pruning keeps the first by id.)

    The integer search runs without HiGHS's presolve: on these programs (hundreds of rows, a few
    binaries) presolve costs more than it saves (36 -> 24 ms on the lab box, 32 -> 17 ms on the
    thesis; bench/optimize.py), and the hours come from the second solve, with presolve, so the
    plan is the same. Nor does it run HiGHS's heuristics that find what its root finds (:data:`SEARCH_OPTIONS`).
    The linear relaxation is not tried first: it bought whole cards in 8 of the 126 programs of
    `planner sensitivity bench/lab-boxes.yaml`, and in 2 of 119 where the box is the plan (its price
    set to 2,000 EUR), so it cost 7 ms a plan far more often than it saved 11.

    HiGHS runs on one thread. The what-ifs run a process per core, forked from the one that
    planned the base, and HiGHS's worker threads do not survive a fork: the forked processes
    spun (`planner sensitivity bench/lab-two-years.yaml`: over 5 minutes instead of 16 s). One
    thread also takes less CPU: 16 against 26 ms a lab-box search, the second thread's spinning.

    ``ok`` is false when HiGHS returns no proven optimum (time limit, numerical trouble):
    the caller must not read such a solution as a plan.
    """
    if program.n_vars == 0:
        return Solution(True, np.zeros(0), 0.0, "empty")
    rows = program.rows()
    options: dict[str, Any] = {"time_limit": time_limit_s, "mip_rel_gap": 1e-7, "presolve": "on", "threads": 1}
    search = {**options, **SEARCH_OPTIONS, "presolve": "off" if program.integrality.any() else "on"}
    if start is not None and not program.holds(start, rows):
        start = None
    if program.commit_vars:  # the search with the tie-breaks; large, without a budget or start: the feasibility jump's
        search = {**search, "mip_max_nodes": ORDERED_NODES, "mip_heuristic_run_feasibility_jump":
                  start is None and program.integrality.sum() >= JUMP_INTEGERS
                  and all(b.family != "budget" for b in program.blocks)}
    res = highs(program.c, rows, program.bounds, program.integrality, search, start)
    if program.commit_vars and program.ties is not None and not res.optimal and res.message != INFEASIBLE:
        res = _on_cost_alone(program, rows, options, res)  # (a program proven infeasible is so on cost alone)
    if res.x is None:
        return Solution(False, np.zeros(program.n_vars), math.inf, res.message)
    found = res.x
    fixed = program.integrality > 0
    if res.optimal and fixed.any() and (res.mip_gap != 0.0 or not np.array_equal(found[fixed], np.round(found[fixed]))):
        lower, upper = program.bounds.lb.copy(), program.bounds.ub.copy()
        lower[fixed] = upper[fixed] = np.round(found[fixed])
        exact = highs(program.c, rows, Bounds(lower, upper), np.zeros(program.n_vars), options)
        if exact.optimal and exact.x is not None:
            res, found = exact, exact.x
    x = np.where(np.abs(found) < 1e-7, 0.0, found)
    return Solution(res.optimal, x, float(program.c @ x), res.message)


#: Options of HiGHS's branch and bound beyond :func:`solve`'s own: primal heuristics that look
#: for integer plans the search itself finds at its root. Feasibility jump (Luteberget and
#: Sartor 2023, *Feasibility Jump: an LP-free Lagrangian MIP heuristic*; HiGHS from 1.11) runs
#: before the root LP; here the root LP of a few binaries (a box bought or not) finds a plan
#: anyway: 26 -> 18 ms a search on the lab box and 15 -> 10 ms on the thesis. RINS and RENS
#: (sub-MIPs around the LP's solution; Danna et al. 2005, Berthold 2014) and the root
#: reduced-cost heuristic took most of a search with ``buy_later`` (a binary per card and buy
#: day: 54 of them on a lab's two years), whose root closes the gap with cuts: 236 -> 94 ms a
#: search, and 458 -> 128 ms on a sweep of it, the other searches as fast as before; the same
#: purchases and cost in all 161 searches of six commands (bench/searches.py for one). The
#: search still proves its plan optimal within its gap. Nor does it look for symmetry (orbits of
#: interchangeable integers to branch on once): these programs have none a search could use,
#: and looking took 1.2-2.6 ms of a search (lab box 16.2 -> 13.6 ms, thesis 12.2 -> 10.8); the
#: same solutions, bit for bit, in all 387 searches of the lab's, the thesis's and the lab's
#: two years' sensitivities. And its root LP relaxation is solved without LP presolve
#: (``mip_root_presolve_only``: HiGHS presolves that LP unless it is set,
#: HighsMipSolverData::evaluateRootNode), for the reason its MIP presolve is off: on hundreds
#: of rows presolve costs more than it saves (lab box 11.3 -> 7.9 ms a search, thesis 8.1 ->
#: 5.5). Over the 653 searches of eight commands' sensitivities the integers are the same in
#: every one and the hours within 1e-11 h; every output of the shipped and bench scenarios the
#: same, byte for byte.
SEARCH_OPTIONS = {"mip_heuristic_run_feasibility_jump": False, "mip_heuristic_run_rins": False,
                  "mip_heuristic_run_rens": False, "mip_heuristic_run_root_reduced_cost": False,
                  "mip_detect_symmetry": False, "mip_root_presolve_only": True}


#: HiGHS's words for a program it proved to have no solution (``Highs.modelStatusToString``).
INFEASIBLE = "Infeasible"


@dataclass(frozen=True)
class HighsRun:
    """What one HiGHS run returned: ``optimal`` when it proved an optimum (within ``mip_gap`` for
    a search); ``x`` its best solution, or None when it has no feasible one."""

    optimal: bool
    x: np.ndarray | None
    mip_gap: float
    message: str


def highs(c: np.ndarray, rows: Rows, bounds: Bounds, integrality: np.ndarray, options: Mapping[str, Any],
          start: np.ndarray | None = None) -> HighsRun:
    """Minimise ``c @ x`` subject to ``rows`` and ``bounds``, the columns where ``integrality`` is 1
    whole, with HiGHS (Huangfu and Hall 2018, *Parallelizing the dual revised simplex method*;
    highs.dev) through highspy, its makers' Python interface: the one place the planner talks to
    a solver. ``options`` are HiGHS's own (highs.dev: options), each checked: an option this
    HiGHS lacks is an error, not a silent default.

    A search stopped at a limit (time, ``mip_max_nodes``) with a feasible plan returns it, not
    optimal; HiGHS's log stays off. Called directly rather than through ``scipy.optimize.milp``
    (HiGHS 1.12 inside), whose Python around the same solver took 5.7 of a lab what-if's 18.8 ms
    (the same solutions in all 424 programs of the thesis's, the lab's and the lab's two years'
    sensitivities), and whose import took 0.4 s of every ``planner run``."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key, value in options.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise ValueError(f"HiGHS {h.version()} has no option {key}={value!r}")
    n = len(c)
    status = h.passModel(n, len(rows.lower), len(rows.value), int(highspy.MatrixFormat.kColwise),
                         int(highspy.ObjSense.kMinimize), 0.0, np.asarray(c, dtype=float),
                         np.asarray(bounds.lb, dtype=float), np.asarray(bounds.ub, dtype=float), rows.lower, rows.upper,
                         rows.start, rows.index, rows.value, np.asarray(integrality, dtype=np.int32))
    if status == highspy.HighsStatus.kError:
        return HighsRun(False, None, math.inf, "HiGHS could not load the program")
    if start is not None:  # a plan to start from (HiGHS: setSolution)
        given = highspy.HighsSolution()
        given.col_value = np.asarray(start, dtype=float)
        given.value_valid = True
        h.setSolution(given)
    h.run()
    model = h.getModelStatus()
    info = h.getInfo()
    feasible = info.primal_solution_status == int(highspy.SolutionStatus.kSolutionStatusFeasible)
    return HighsRun(model == highspy.HighsModelStatus.kOptimal,
                  np.array(h.getSolution().col_value) if feasible else None,
                  float(info.mip_gap) if np.any(integrality) else 0.0, h.modelStatusToString(model))


#: Branch-and-bound nodes the search with the tie-breaks gets when the program has commitments
#: (a count, not a time: the same plan on every machine); about 0.5 s for 52 weekly blocks.
ORDERED_NODES = 200

#: Integers (commitment blocks, mostly: one a week of a term's offer) from which the search with
#: the tie-breaks of a program without a budget also runs the feasibility jump (Luteberget and
#: Sartor 2023; off in :data:`SEARCH_OPTIONS`), which finds a plan before the root LP: over the
#: whole catalog (bench/growth.py), a card's plan without a budget (the cash its candidate row
#: would need) took a root LP of 9,197 simplex iterations and 5.0-5.2 s at a 10-year horizon (43k
#: columns, 1,857 integers), with it one of 20 iterations and 0.7-0.8 s (HiGHS's log); 1.2 and
#: 0.4 s at 5 years (945 integers). With few integers the root LP is quick anyway and the jump costs more than it
#: saves: 0.07-0.09 s against 0.15-0.38 s with 20 to 100 phases (131 to 465 integers), 0.024
#: against 0.044-0.082 s on the thesis's whole catalog; under a budget it made searches slower
#: at every size (2.6 -> 2.9 s, 0.07 -> 0.10 s). The same integers with and without it, the hours
#: within 6e-14 h. A search handed a start (the candidates': :func:`bought_unused`) runs without
#: it: the jump took 0.75 s to find a plan farther from the best than that start is.
JUMP_INTEGERS = 600


def _on_cost_alone(program: Program, rows: Rows, options: dict[str, Any], ordered: HighsRun) -> HighsRun:
    """Blocks of a commitment come in many plans of equal cost (which weeks), which the
    tie-breaks order: proving the best of them took HiGHS 12 s for 52 weekly blocks, and over 30 s
    with two offers. So where the search with the tie-breaks stops at its node limit, the integers
    are proven on cost alone (and, of plans that cost the same, the fewest terms): 0.2 s. The
    ordered search's plan is kept when it costs no more (its weeks come earliest); the hours are
    then placed with the tie-breaks (:func:`solve`)."""
    assert program.ties is not None
    cost = program.c - program.ties
    cost[[z.var for z in program.commit_vars]] += TIE_BREAKS["term"]
    best = highs(cost, rows, program.bounds, program.integrality, options)
    if best.optimal and best.x is not None and ordered.x is not None \
            and float(cost @ ordered.x) <= float(cost @ best.x) + 1e-6:
        return HighsRun(True, ordered.x, math.inf, best.message)  # not proven as ordered: its hours are solved again
    return best


@dataclass(frozen=True)
class Schedule:
    """Reference hours per (phase, option, bucket) with positive work, read off a solution by
    :func:`schedule`: named numpy arrays of one length, in the variables' order, never written
    after they are made (as :class:`XTable`). The finishes read them; :meth:`frame` is the
    DataFrame view (the week-by-week table, a notebook). A what-if plan reads its finishes off
    these arrays, not a frame's columns: a lab-box plan of a phase's other hours took 24.9 ms,
    now 23.7 (60 such plans in one process)."""

    phase: np.ndarray  # (str)
    option: np.ndarray  # (str)
    kind: np.ndarray  # (str)
    week: np.ndarray  # the week from the scenario's start the bucket lies in (int)
    bucket: np.ndarray  # the calendar bucket (int)
    days: np.ndarray  # the bucket's length [days] (int)
    open_capacity_h: np.ndarray  # wall hours a week its sessions and your starts allow [h]
    weekly_capacity_h: np.ndarray  # the same with its weekly quota [h]
    parallel: np.ndarray  # runs the option carries at once (a commitment: at most its instances)
    streams: np.ndarray  # runs each wall hour carries (side by side)
    gpu_hours: np.ndarray  # reference GPU-hours [h]
    wall_hours: np.ndarray  # expected wall hours [h]
    wall_hours_conf: np.ndarray  # wall hours at the scenario's confidence [h]
    first_day: np.ndarray  # the bucket's first day (date)
    week_start: np.ndarray  # the first day of its week (date)

    def __len__(self) -> int:
        return len(self.phase)

    @property
    def empty(self) -> bool:
        return len(self.phase) == 0

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The schedule as a DataFrame, one row each, columns in the fields' order (read-only)."""
        return pd.DataFrame({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Schedule:
        """The schedule whose :attr:`frame` ``frame`` is (every field a column)."""
        return cls(**{f.name: frame[f.name].to_numpy() for f in dataclasses.fields(cls)})


def schedule(program: Program, sol: Solution) -> Schedule:
    """Reference hours per (phase, option, bucket) with positive work, with the bucket's first
    day, length and week."""
    xi = program.x_index
    hours = np.asarray(sol.x[: len(xi)], dtype=float)
    keep = np.flatnonzero(hours > 1e-6)
    bucket, option = xi.bucket[keep], xi.option[keep]
    parallel = xi.parallel[keep]
    cal = program.calendar
    if program.commit_vars and len(keep):  # a commitment runs as many runs at once as instances its terms give
        first, end = cal.first_day[bucket], cal.edges[bucket + 1]
        instances = np.zeros(len(keep))
        for z in program.commit_vars:
            if not z.subscription and sol.x[z.var] > 0.5:
                mine = option == z.option
                instances[mine & (_covered_days(z.day, z.days, first, end) > 0)] += round(float(sol.x[z.var]))
        held = xi.committed[keep].astype(bool)
        parallel = np.where(held, np.minimum(parallel, np.maximum(instances, 1)), parallel)
    return Schedule(phase=xi.phase[keep], option=option, kind=xi.kind[keep], week=xi.week[keep], bucket=bucket,
                    days=xi.days[keep], open_capacity_h=xi.open_capacity_h[keep],
                    weekly_capacity_h=xi.weekly_capacity_h[keep], parallel=parallel, streams=xi.streams[keep],
                    gpu_hours=hours[keep], wall_hours=hours[keep] * xi.wall_per_ref[keep],
                    wall_hours_conf=hours[keep] * xi.wall_conf_per_ref[keep], first_day=cal.first_dates[bucket],
                    week_start=np.asarray(program.week_starts, dtype=object)[xi.week[keep]])


def weekly(sched: Schedule) -> pd.DataFrame:
    """The schedule week by week (phase, option, kind, week, week_start, gpu_hours, wall_hours):
    what the report, its chart and schedule.csv show."""
    cols = ["phase", "option", "kind", "week", "week_start"]
    if sched.empty:
        return pd.DataFrame(columns=[*cols, "gpu_hours", "wall_hours"])
    return sched.frame.groupby(cols, sort=False, as_index=False)[["gpu_hours", "wall_hours"]].sum()


def days_needed(wall_h: np.ndarray, weekly_capacity_h: np.ndarray, parallel: np.ndarray, runs: int,
                streams: np.ndarray) -> float:
    """Days one phase's wall hours in a bucket take: the runs share 24 h a day each (a wall hour
    of a machine carrying runs side by side, ``streams``, is one of each), and no option goes
    faster than its weekly capacity spread over the week."""
    wall_h = np.asarray(wall_h, dtype=float)
    rate = np.asarray(weekly_capacity_h, dtype=float) * np.asarray(parallel, dtype=float) / 7.0
    per_option = np.where(rate > 0, wall_h / np.where(rate > 0, rate, 1.0), np.inf)
    return float(max((wall_h * np.asarray(streams, dtype=float)).sum() / (runs * HOURS_PER_DAY),
                     per_option.max(initial=0.0)))


def last_stretch(phase: np.ndarray, bucket: np.ndarray, option: np.ndarray, capacity_h: np.ndarray, p: str
                 ) -> tuple[np.ndarray, int]:
    """The rows of phase ``p``'s last stretch, and its first bucket: its last bucket, and before it
    each adjacent bucket the phase also works in on the same options, every one of them open all
    week (``capacity_h``, each row's weekly capacity with its quota, is a whole week's: a rented
    or bought machine, not a tier with a quota) and doing no other phase's work there. Only the
    calendar cuts such a stretch (a week, a quota reset or a subscription month of an option the
    plan does not use), so its work runs on without a break: the program books each bucket at
    the confidence, and the expected hours of a bucket end before it does (1-3 June holds 216 h
    booked, 155 expected). Read bucket by bucket, the thesis's final phase ended on 4 June in the
    hybrid plan and on 3 June in the rent-only plan, the same Vast hours."""
    rows = _Rows.of(phase, bucket, option, capacity_h)
    return rows.mask(rows.stretch(p))


@dataclass(frozen=True)
class _Rows:
    """A schedule's rows as lists (a few dozen: Python reads them faster than numpy masks them),
    for :func:`last_stretch`: each row's phase, bucket, option and weekly capacity, and the rows
    of each phase and of each bucket, in order."""

    phase: list[str]
    bucket: list[int]
    option: list[str]
    capacity_h: list[float]
    of_phase: dict[str, list[int]]
    in_bucket: dict[int, list[int]]

    @classmethod
    def of(cls, phase: np.ndarray, bucket: np.ndarray, option: np.ndarray, capacity_h: np.ndarray) -> _Rows:
        ph, bk = [str(p) for p in phase.tolist()], [int(b) for b in bucket.tolist()]
        of_phase: dict[str, list[int]] = {}
        in_bucket: dict[int, list[int]] = {}
        for i, (p, b) in enumerate(zip(ph, bk)):
            of_phase.setdefault(p, []).append(i)
            in_bucket.setdefault(b, []).append(i)
        return cls(ph, bk, option.tolist(), np.asarray(capacity_h, dtype=float).tolist(), of_phase, in_bucket)

    def stretch(self, p: str) -> tuple[list[int], int]:
        """Phase ``p``'s last stretch (:func:`last_stretch`): its rows and its first bucket."""
        full_week = HOURS_PER_DAY * 7 - 1e-6
        mine = self.of_phase[p]
        b = max(self.bucket[i] for i in mine)
        stretch = [i for i in mine if self.bucket[i] == b]
        while b > 0 and all(self.capacity_h[i] >= full_week for i in stretch):
            at = self.in_bucket.get(b - 1, [])
            before = [i for i in at if self.phase[i] == p]
            names = {self.option[i] for i in before}
            if not names or not all(self.capacity_h[i] >= full_week for i in before) \
                    or not {self.option[i] for i in stretch} <= names \
                    or any(self.option[i] in names for i in at if self.phase[i] != p):  # another phase's hours there
                break
            b -= 1
            stretch += before
        return stretch, b

    def mask(self, found: tuple[list[int], int]) -> tuple[np.ndarray, int]:
        rows, first = found
        mask = np.zeros(len(self.phase), dtype=bool)
        mask[rows] = True
        return mask, first


def last_stretches(sched: Schedule) -> dict[str, tuple[np.ndarray, int]]:
    """Each phase's :func:`last_stretch` in the schedule ``sched``: the finishes read them at
    the expected wall hours and at the confidence alike (the stretch does not depend on them)."""
    if sched.empty:
        return {}
    rows = _Rows.of(sched.phase, sched.bucket, sched.option, sched.weekly_capacity_h)  # with its quota
    return {p: rows.mask(rows.stretch(p)) for p in sorted(rows.of_phase)}


def finish_times(s: Scenario, program: Program, sched: Schedule, wall: str = "wall_hours",
                 stretches: dict[str, tuple[np.ndarray, int]] | None = None) -> dict[str, tuple[dt.date, float, dt.date]]:
    """When each phase's last scheduled hour ends, as (first day of its last stretch of buckets
    (:func:`last_stretch`), days from 00:00 of that day, the last bucket's last day): the
    stretch's work starts on its first day and takes :func:`days_needed`, each option's hours
    summed over it, and ends no later than the last bucket's own work read alone would.
    ``wall``: the expected wall hours, or ``wall_hours_conf``, those not exceeded at the scenario's
    confidence; ``stretches``: :func:`last_stretches` of ``sched``, where the caller has them."""
    out: dict[str, tuple[dt.date, float, dt.date]] = {}
    cal = program.calendar
    if sched.empty:
        return out
    bucket, option = sched.bucket, sched.option
    wall_h, cap = np.asarray(getattr(sched, wall), dtype=float), np.asarray(sched.open_capacity_h, dtype=float)
    parallel, streams = np.asarray(sched.parallel, dtype=float), np.asarray(sched.streams, dtype=float)
    for p, (stretch, first) in (stretches if stretches is not None else last_stretches(sched)).items():
        rows = np.flatnonzero(stretch)
        b = int(bucket[rows].max())
        last = rows[bucket[rows] == b]
        runs = s.phase(p).runs
        # the last bucket read alone, in days from the stretch's first day
        days = float(cal.edges[b] - cal.edges[first]) + days_needed(wall_h[last], cap[last], parallel[last], runs,
                                                                    streams[last])
        if first < b:  # the stretch as one: each option once, with its hours over it (its rows in order)
            of_option: dict[str, list[int]] = {}
            for i, o in zip(rows.tolist(), option[rows].tolist()):
                of_option.setdefault(o, []).append(i)
            at = [mine[0] for mine in of_option.values()]
            hours = np.array([wall_h[mine].sum() for mine in of_option.values()])
            days = min(days, days_needed(hours, cap[at], parallel[at], runs, streams[at]))
        out[str(p)] = (cal.date(cal.edges[first]), days, cal.date(cal.edges[b + 1] - 1))
    return out


def finish_models(s: Scenario, program: Program, sched: Schedule,
                  times: dict[str, tuple[dt.date, float, dt.date]] | None = None,
                  times_conf: dict[str, tuple[dt.date, float, dt.date]] | None = None,
                  stretches: dict[str, tuple[np.ndarray, int]] | None = None) -> dict[str, Finish]:
    """Each phase's end as planned (:func:`finish_times`, or ``times``) and what moves it
    (:class:`sessions.Finish`): the wall hours its buckets before the last keep beyond the
    expected ones, its last bucket's and the finish at the confidence (``times_conf``, else read
    here), and the fastest rate among its options (weekly capacity with its quota, over the week,
    times the runs it carries at once), at most the runs' 24 h a day."""
    out: dict[str, Finish] = {}
    if sched.empty:
        return out
    phase = sched.phase
    slack = np.asarray(sched.wall_hours_conf - sched.wall_hours, dtype=float)
    rate = np.asarray(sched.weekly_capacity_h, dtype=float) * np.asarray(sched.parallel, dtype=float) / 7.0
    stretches = stretches if stretches is not None else last_stretches(sched)
    at_conf = times_conf if times_conf is not None else finish_times(s, program, sched, "wall_hours_conf", stretches)
    for p, (begin, days, final) in (times if times is not None else finish_times(s, program, sched,
                                                                                 stretches=stretches)).items():
        mine = phase == p
        last, _ = stretches[p]  # as finish_times reads it
        fastest = float(np.where(rate[mine] > 0, rate[mine], 0.0).max(initial=0.0))
        # the last bucket's booked hours end by the finish at the confidence, never past the bucket
        # (as finishes(..., wall="wall_hours_conf") reads it: the end the plan promises)
        days_conf = min(at_conf[p][1], float((final - begin).days + 1))
        out[p] = Finish(begin, days, float(slack[mine & ~last].sum()),
                        min(fastest, s.phase(p).runs * HOURS_PER_DAY), float(slack[last].sum()), days_conf)
    return out


def finishes(s: Scenario, program: Program, sched: Schedule, wall: str = "wall_hours",
             times: dict[str, tuple[dt.date, float, dt.date]] | None = None) -> dict[str, dt.date]:
    """The day each phase's last scheduled hour ends (:func:`finish_times`, or ``times`` when
    the caller has them), never past its bucket (the capacities hold bucket by bucket)."""
    out = {}
    for p, (begin, days, final) in (times if times is not None else finish_times(s, program, sched, wall)).items():
        day = finish_day(begin, days)
        out[p] = final if day is None else min(day, final)
    return out


def purchases(program: Program, sol: Solution) -> list[str]:
    """The cards the plan buys, by id (each once, whatever the day)."""
    return sorted(bought(program, sol))


def committed(program: Program, sol: Solution) -> list[tuple[CommitVar, int]]:
    """Each commitment the plan makes: its start day and term, and the instances committed."""
    return [(z, round(float(sol.x[z.var]))) for z in program.commit_vars if sol.x[z.var] > 0.5]


def first_use(program: Program, sol: Solution, z: CommitVar) -> int:
    """The first day (from the start) within the period of packs ``z`` on which the solution runs
    hours on their tier: the day they are needed, bought then rather than at the period's start,
    their units lasting from then (``z.day`` where no hour is run, or ``z`` is no pack)."""
    x = program.x_index
    day = program.calendar.first_day[x.bucket]
    used = ((np.asarray(sol.x[: len(x)]) > 1e-9) & np.isin(x.option, list(program.pack_options.get(z.option, ())))
            & (day >= z.day)
            & (day < z.day + z.days))
    return int(day[used].min()) if used.any() else z.day


def bought(program: Program, sol: Solution) -> dict[str, BuyVar]:
    """Each card the plan buys, with the day it buys it, its price then and its resale."""
    return {v.option: v for v in program.buy_vars if sol.x[v.var] > 0.5}


def unmet(program: Program, sol: Solution) -> dict[str, float]:
    return {p: float(sol.x[j]) for p, j in program.unmet_index.items() if sol.x[j] > 1e-6}


def bought_host(program: Program, sol: Solution) -> bool:
    return program.host_index is not None and sol.x[program.host_index] > 0.5
