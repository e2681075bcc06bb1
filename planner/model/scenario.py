"""Scenario files: parse, apply variant and ``--set`` overrides, validate.

The format is docs/scenario.md. Precedence, lowest to highest:
defaults < the file < the chosen variant < ``--set`` overrides. Every applied
override is recorded as ``key: old -> new`` in :attr:`Scenario.overrides`.

All problems are collected, then raised together as one
:class:`~pricing.errors.InputError` sorted by position.

Internally every quantity is canonical: hours, GB, W, USD, USD/h, USD/kWh.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pricing import column_types
from pricing.errors import InputError, Problem, did_you_mean
from pricing.ids import CatalogIds
from pricing.yamldoc import Document, dotted, parse_document

from . import units

FAMILIES = ("cnn", "transformer", "rnn")
PRECISIONS = ("fp32", "mixed")
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
METHODS = ("full", "lora", "qlora")
ATTENTIONS = ("auto", "eager", "memory-efficient")
SHARDINGS = ("none", "zero2", "zero3")
FRAMEWORKS = ("pytorch", "tensorflow", "jax", "paddlepaddle")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

DEFAULT_HORIZON_MONTHS = 24.0
DEFAULT_CHECKPOINT_EVERY_H = 1.0
DEFAULT_ATTENTION_PER_DAY = 2.0
#: A deadline is met when the finish at this chance is on time (the report's P90 finish is the one
#: promised); capacity is planned with the wall hours at this chance.
DEFAULT_CONFIDENCE = 0.9
DEFAULT_HOST_POWER_W = 100.0


# --------------------------------------------------------------------------- results


# The sections' dataclasses. Their fields' defaults, units and documentation are declared
# once, in the schema below (WORKLOAD, PHASE, YOU, CONSIDER), and :func:`build` fills them.


@dataclass(frozen=True)
class Workload:
    family: str
    params: float
    precision: str
    optimizer: str
    batch_size: int
    reference_gpu: str
    activation_memory_gb: float | None
    sequence_length: int | None
    image_size: int | None
    method: str
    trainable_params: float | None  # None takes the method's default
    attention: str
    activation_checkpointing: bool | str
    sharding: str
    #: speeds you measured: (device, times as fast, than this device; None: the reference GPU)
    measured_speed: tuple[tuple[str, float, str | None], ...] = ()


@dataclass(frozen=True)
class Phase:
    name: str
    gpu_hours_per_run: float
    runs: int
    start: dt.date
    deadline: dt.date | None
    run_length_h: float | None
    checkpoint_every_h: float
    checkpoint_size_gb: float | None
    dataset_size_gb: float

    @property
    def gpu_hours(self) -> float:
        """All the phase's work in reference-GPU hours (every run)."""
        return self.gpu_hours_per_run * self.runs


@dataclass(frozen=True)
class Credit:
    """Money a provider (or several) grants: it pays their bills between ``start`` and ``until``
    (inclusive days), before cash does, and what is left at ``until`` is lost."""

    name: str
    amount_usd: float
    providers: tuple[str, ...]
    start: dt.date | None
    until: dt.date | None


@dataclass(frozen=True)
class You:
    own: tuple[str, ...]
    host_machine: bool
    host_power_w: float
    time_value_usd_per_hour: float
    attention_starts_per_day: float
    budget_usd: float | None
    host_price_usd: float | None
    confidence: float = DEFAULT_CONFIDENCE
    credits: tuple[Credit, ...] = ()

    # One rule for "a card needs a host computer" (docs/scenario.md: host_machine false adds a host's
    # cost; you.host_price gives it). Every module asks these, none re-derives them.
    @property
    def buys_host(self) -> bool:
        """A card bought or owned comes with a host computer to buy (its price is known)."""
        return not self.host_machine and self.host_price_usd is not None

    @property
    def host_unpriced(self) -> bool:
        """A card would need a host computer, but its price is not given: cards are excluded."""
        return not self.host_machine and self.host_price_usd is None

    @property
    def host_usd(self) -> float:
        """What the host computer adds to a card's purchase [USD]."""
        return float(self.host_price_usd) if self.buys_host and self.host_price_usd is not None else 0.0


@dataclass(frozen=True)
class Consider:
    """Patterns of offer ids to consider; None means the whole catalog."""

    buy: tuple[str, ...] | None
    rent: tuple[str, ...] | None
    free: tuple[str, ...] | None
    spot: bool


@dataclass(frozen=True)
class Scenario:
    name: str
    start: dt.date
    currency: str
    usd_per_currency: float
    horizon_months: float
    electricity_usd_per_kwh: float
    electricity_is_default: bool
    framework: str
    workload: Workload
    phases: tuple[Phase, ...]
    you: You
    consider: Consider
    catalog_entries: Mapping[str, tuple[Mapping[str, Any], ...]]  # kind -> canonical rows
    variant: str | None = None
    overrides: tuple[str, ...] = ()
    file: str = "<scenario>"
    variant_names: tuple[str, ...] = ()
    ranges: Mapping[str, tuple[float, float]] = dataclasses.field(default_factory=dict)  # path -> (low, high)
    uncertainty_samples: int = 0  # draws of the uncertainty analysis asked by the file (0: none)
    #: rent prices move by this share a year from their catalog date; None: each device's catalog trend
    rent_trend_per_year: float | None = 0.0
    #: or rent's level at dates, as a share off its catalog price: ((date, -0.10), ...), in date order
    rent_price_points: tuple[tuple[dt.date, float], ...] = ()
    read_on: dt.date | None = None  # the day the scenario was read (--today): how old its prices are then
    #: the program may buy a card on any of these week starts, not only on the first day (``buy_later``)
    buy_every_weeks: int | None = None
    buy_trend_per_year: float = 0.0  # buy prices move by this share a year from their catalog date
    buy_price_points: tuple[tuple[dt.date, float], ...] = ()  # or reach these levels by these dates

    @property
    def rent_trend_of_catalog(self) -> bool:
        """Whether rent follows each device's catalog trend (no price_trend given, or 'catalog')."""
        return self.rent_trend_per_year is None and not self.rent_price_points

    @property
    def buy_moves(self) -> bool:
        """Whether the scenario says where card prices go (``buy_price_trend``)."""
        return bool(self.buy_trend_per_year or self.buy_price_points)

    @property
    def buy_days(self) -> tuple[int, ...]:
        """The days (from the start) on which the plan may buy a card: the first day, and with
        ``buy_later`` every so many weeks after it while a phase may still use a card bought then.
        Week starts, so a card is owned for whole buckets of the program (docs/model.md)."""
        if not self.buy_every_weeks:
            return (0,)
        last = max((self.window(ph)[1] - self.start).days for ph in self.phases)
        return tuple(range(0, last, 7 * self.buy_every_weeks))

    @property
    def horizon_end(self) -> dt.date:
        """The day after the horizon: bought cards are sold then (exclusive end)."""
        return self.start + dt.timedelta(days=self.horizon_months * units.HOURS_PER_MONTH / 24)

    def names_card(self, offer: str) -> bool:
        """A card you own or list in ``consider.buy`` (by id or pattern): one a break-even is about."""
        return (offer in self.you.own or offer.startswith("own:")
                or any(fnmatch.fnmatchcase(offer, pat) for pat in self.consider.buy or ()))

    def money(self, usd: float) -> str:
        """USD shown in the scenario's currency with that currency's precision (for messages)."""
        return units.format_money(usd / self.usd_per_currency, self.currency)

    def window(self, ph: Phase, deadline: dt.date | None = None) -> tuple[dt.date, dt.date]:
        """A phase's window as [begin, end): ``from`` and ``deadline`` are inclusive days, so
        work may run from 00:00 of ``from`` to 24:00 of the deadline (docs/scenario.md, "What the keys
        mean in a plan"); without a deadline, to the horizon's end. ``deadline`` overrides the phase's."""
        last = deadline or ph.deadline
        return ph.start, (last + dt.timedelta(days=1)) if last else self.horizon_end

    def last_day(self, ph: Phase) -> dt.date:
        """The last day work of ``ph`` may use (its deadline, or the horizon's last day)."""
        return self.window(ph)[1] - dt.timedelta(days=1)

    def phase(self, name: str) -> Phase:
        return next(p for p in self.phases if p.name == name)

    @property
    def phase_confidence(self) -> float:
        """The chance each phase is planned to end in time, so that all of them do with
        ``you.confidence``: its n-th root over n phases (Sidak). A slower device or more work makes
        every phase later together, so the chances that phases end in time are positively
        associated (Harris's inequality for increasing events of independent draws), and all of
        them end in time with at least the product of their chances."""
        return self.you.confidence ** (1.0 / max(len(self.phases), 1))


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class Field:
    """A leaf key, declared once: ``convert(value, ctx) -> canonical`` (raising ValueError with
    the expected text), the dataclass attribute it fills, its default when absent, the unit of
    its canonical value and a line of documentation (``planner keys`` prints them)."""

    convert: Callable[[Any, _Context], Any]
    required: bool = False
    attr: str | None = None  # the dataclass attribute; None: the key itself
    default: Any = None
    doc: str = ""

    @property
    def unit(self) -> str:
        """The unit of the canonical value: the one its quantity check states (see :func:`_q`)."""
        return getattr(self.convert, "unit", "")


@dataclass(frozen=True)
class MapOf:
    """A mapping of user-chosen names (phase names) to sections."""

    item: Mapping[str, Any]


@dataclass(frozen=True)
class ListOf:
    """A list of sections, addressable in paths by index or by their ``id``."""

    item: Mapping[str, Any]


class _Any:
    """A subtree checked elsewhere (variants)."""


@dataclass
class _Context:
    ids: CatalogIds
    today: dt.date
    currency: str = "USD"
    start: dt.date | None = None
    user_ids: dict[str, set[str]] = field(default_factory=lambda: {"buy": set(), "rent": set(), "free": set()})


def _text(v, ctx):
    if isinstance(v, bool) or not isinstance(v, (str, int, float)) or (isinstance(v, str) and not v.strip()):
        raise ValueError(f"expected text, got {v!r}")
    return str(v)


def _enum(choices: Sequence[str]):
    def convert(v, ctx):
        if not isinstance(v, str) or v.lower() not in choices:
            hint = did_you_mean(str(v), choices)
            raise ValueError(f"expected one of {', '.join(choices)}, got {v!r}{hint}")
        return v.lower()
    return convert


def _bool(v, ctx):
    if not isinstance(v, bool):
        raise ValueError(f"expected true or false, got {v!r}")
    return v


def _auto_or_bool(v, ctx):
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() == "auto":
        return "auto"
    raise ValueError(f"expected auto, true or false, got {v!r}")


#: The calendar the planner covers: dates outside it are typing mistakes, not plans.
FIRST_DATE, LAST_DATE = dt.date(1990, 1, 1), dt.date(2100, 12, 31)
#: A phase may end at most this many years after the scenario's start (the weekly
#: calendar grows with the span; a lab's purchase horizon is a few years).
MAX_SPAN_YEARS = 30
#: Upper bounds of quantities no real plan reaches (a typing mistake such as 1e308 h).
MAX_GPU_HOURS = 1e6  # 114 GPU-years
MIN_HOURS = 0.01  # 36 s: less work than a session's setup is a typing mistake
MAX_RUNS = 10_000
#: Devices in a machine or instances to be had at once: no offer counts more.
MAX_COUNT = 100_000
#: Phases a scenario may have: a plan of 100 phases takes about 3 s on two cores, of 1,000 more
#: than a user waits (bench: the lab's phases repeated); a real project has a handful.
MAX_PHASES = 100
MAX_HORIZON_MONTHS = 12 * MAX_SPAN_YEARS


def _date(v, ctx):
    if isinstance(v, dt.datetime):
        v = v.date()
    elif isinstance(v, str):
        try:
            v = dt.date.fromisoformat(v.strip())
        except ValueError:
            pass
    if not isinstance(v, dt.date):
        raise ValueError(f"expected a date such as 2027-05-31, got {v!r}")
    if not FIRST_DATE <= v <= LAST_DATE:
        raise ValueError(f"expected a date between {FIRST_DATE} and {LAST_DATE}, got {v}")
    return v


def _positive_int(v, ctx):
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"expected a whole number of at least 1, got {str(v)[:40]!r}")
    return v


MIN_CHECKPOINT_EVERY_H = units.MIN_CHECKPOINT_EVERY_H


class Converter:
    """A key's converter that states the unit its value comes out in (``planner keys``)."""

    def __init__(self, convert: Callable[[Any, Any], Any], unit: str):
        self.convert, self.unit = convert, unit

    def __call__(self, v: Any, ctx: Any) -> Any:
        return self.convert(v, ctx)


def stated_unit(unit: str) -> Callable[[Callable[[Any, Any], Any]], Converter]:
    """Decorate a converter with the unit it states."""
    return lambda convert: Converter(convert, unit)


@stated_unit("h")  # as _q's converters state theirs
def _checkpoint_every(v, ctx):
    h = _q(_hours, positive=True)(v, ctx)
    if h < MIN_CHECKPOINT_EVERY_H - 1e-12:
        raise ValueError(f"expected at least 1 min between checkpoints, got {v!r}")
    return h



_OFFER_ID = re.compile(r"[a-z0-9][a-z0-9._:+-]*")


def _offer_id(v, ctx):
    """A catalog id: lowercase letters, digits and . _ : + - (docs/scenario.md's identifiers)."""
    text = _text(v, ctx)
    if not _OFFER_ID.fullmatch(text):
        raise ValueError(f"expected an id of lowercase letters, digits, '-', '.', ':' such as rtx-3090-used "
                         f"or uni:a100, got {text!r}")
    return text


def _years_after(d: dt.date, years: int) -> dt.date:
    return d.replace(year=min(d.year + years, dt.MAXYEAR), day=min(d.day, 28))


def _int_at_most(largest: int):
    """A whole number from 1 to ``largest``."""
    def convert(v, ctx):
        n = _positive_int(v, ctx)
        if n > largest:
            raise ValueError(f"expected a whole number from 1 to {largest:,}, got {str(v)[:40]!r}")
        return n
    return convert


#: Most draws an uncertainty analysis takes (a thousand take well under a second).
MAX_SAMPLES = 100_000


def _samples(v, ctx):
    if isinstance(v, bool) or not isinstance(v, int) or not (v == 0 or 10 <= v <= MAX_SAMPLES):
        raise ValueError(f"expected 0 (off) or a number of draws from 10 to {MAX_SAMPLES:,}, such as 1000, "
                         f"got {v!r}")
    return v


def _runs(v, ctx):
    n = _positive_int(v, ctx)
    if n > MAX_RUNS:
        raise ValueError(f"expected at most {MAX_RUNS:,} runs, got {str(v)[:40]!r}")
    return n


def _q(parse, positive=False, nonneg=True, maximum: float | None = None, unit: str = "",
       minimum: float | None = None):
    """Wrap a units.parse_* function; check the sign and, where given, the sensible range."""
    def convert(v, ctx):
        x = parse(v, ctx)
        if positive and x <= 0:
            raise ValueError(f"expected a value above zero, got {v!r}")
        if minimum is not None and x < minimum:
            raise ValueError(f"expected at least {minimum:g} {unit}, got {v!r}".replace("  ", " "))
        if nonneg and x < 0:
            raise ValueError(f"expected a value of zero or more, got {v!r}")
        if maximum is not None and x > maximum:
            raise ValueError(f"expected at most {maximum:,.0f} {unit}, got {v!r}".replace("  ", " "))
        return x
    return Converter(convert, unit)


def _count(v, ctx):
    return units.parse_count(v)


def _hours(v, ctx):
    return units.parse_duration_h(v)


def _minutes(v, ctx):
    return units.parse_duration_h(v, default_unit="min") * 60.0


def _seconds(v, ctx):
    return units.parse_duration_h(v, default_unit="s") * 3600.0


def _days(v, ctx):
    return units.parse_duration_h(v, default_unit="days") / 24.0


def _months(v, ctx):
    return units.parse_duration_h(v, default_unit="months") / units.HOURS_PER_MONTH


def _size(v, ctx):
    return units.parse_size_gb(v)


def _power(v, ctx):
    return units.parse_power_w(v)


def _money(v, ctx):
    return units.parse_money_usd(v, ctx.currency, ctx.ids.usd_per_unit)


def _usd_per_hour(v, ctx):
    return units.parse_money_rate_usd(v, ctx.currency, ctx.ids.usd_per_unit, per="h")


def _usd_per_kwh(v, ctx):
    return units.parse_money_rate_usd(v, ctx.currency, ctx.ids.usd_per_unit, per="kWh")


def _starts_per_day(v, ctx):
    return units.parse_rate(v, per_h=24.0, numerator="count", example="2 restarts/day")


def _per_hour(v, ctx):
    return units.parse_rate(v, per_h=1.0, numerator="count", example="0.02/h")


def _hours_per_week(v, ctx):
    return units.parse_rate(v, per_h=units.HOURS_PER_WEEK, numerator="duration", example="30 h/week")


def _currency(v, ctx):
    if not isinstance(v, str) or v.upper() not in ctx.ids.usd_per_unit:
        hint = did_you_mean(str(v).upper(), ctx.ids.usd_per_unit)
        raise ValueError(f"expected a currency code the catalog has a rate for "
                         f"({', '.join(sorted(ctx.ids.usd_per_unit))}), got {v!r}{hint}")
    return v.upper()


def _device(v, ctx):
    if not isinstance(v, (str, int)) or isinstance(v, bool):
        raise ValueError(f"expected a device id such as rtx-3060-12gb, got {v!r}")
    key = str(v).strip().lower()
    if key in ctx.ids.devices:
        return key
    if key in ctx.ids.aliases:
        return ctx.ids.aliases[key]
    hint = did_you_mean(key, sorted(ctx.ids.devices | set(ctx.ids.aliases)))
    raise ValueError(f"unknown device {v!r}{hint}; `planner pricing list --devices` lists them")


def _devices(v, ctx):
    if isinstance(v, (str, int)) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list):
        raise ValueError(f"expected a list of device ids such as [gtx-1060-6gb], got {v!r}")
    return tuple(_device(x, ctx) for x in v)


def _measured_speeds(v, ctx):
    """``{rtx-5090: 2.4}`` (times the reference GPU) or ``{rtx-5090: 1.35 x rtx-4090}``; the
    canonical form, a tuple of (device, factor, base), stays as it is."""
    if isinstance(v, tuple) and all(isinstance(x, tuple) and len(x) == 3 for x in v):
        return v
    if not isinstance(v, dict):
        raise ValueError(f"expected a mapping of device ids to speeds such as {{rtx-5090: 1.35 x rtx-4090}}, got {v!r}")
    out = []
    for device, speed in v.items():
        base = None
        if isinstance(speed, str) and re.search(r"[a-z]", speed.split("x", 1)[-1] if "x" in speed else ""):
            number, _, base_id = speed.partition("x")
            base = _device(base_id.strip(), ctx)
            speed = number.strip()
        try:
            factor = float(speed)
        except (TypeError, ValueError):
            raise ValueError(f"{device}: expected a speed such as 2.4 (times the reference GPU) or "
                             f"'1.35 x rtx-4090', got {speed!r}") from None
        if not (math.isfinite(factor) and 0 < factor <= 1000):
            raise ValueError(f"{device}: expected a speed above 0 and at most 1000 times another card, got {speed!r}")
        out.append((_device(device, ctx), factor, base))
    return tuple(sorted(out, key=lambda x: x[0]))


def _credits(v, ctx):
    """``[{amount: 5000 USD, providers: [aws], from: 2027-03-01, until: 2027-06-30, name: AWS grant}]``."""
    if isinstance(v, tuple) and all(isinstance(c, Credit) for c in v):
        return v  # canonical already
    if not isinstance(v, list):
        raise ValueError("expected a list of credits such as [{amount: 5000 USD, providers: [aws], until: 2027-06-30}]")
    if len(v) > MAX_CREDITS_LISTED:
        raise ValueError(f"{len(v):,} credits; at most {MAX_CREDITS_LISTED:,} (credits of the same providers and "
                         "dates combine into one)")
    providers_known = sorted({i.split(":", 1)[0] for i in ctx.ids.rent | ctx.user_ids["rent"] if ":" in i})
    out = []
    for i, c in enumerate(v):
        if not isinstance(c, dict):
            raise ValueError(f"credit {i + 1}: expected a mapping with amount, providers, from, until")
        unknown = set(c) - {"amount", "providers", "from", "until", "name"}
        if unknown:
            key = sorted(unknown)[0]
            raise ValueError(f"credit {i + 1}: unknown key {key!r}"
                             f"{did_you_mean(key, ['amount', 'providers', 'from', 'until', 'name'])}")
        if "amount" not in c or "providers" not in c:
            raise ValueError(f"credit {i + 1}: 'amount' and 'providers' are required")
        amount = _q(_money, maximum=1e12, unit="USD")(c["amount"], ctx)
        names = c["providers"] if isinstance(c["providers"], list) else [c["providers"]]
        for name in names:
            if str(name) not in providers_known:
                raise ValueError(f"credit {i + 1}: unknown provider {name!r}{did_you_mean(str(name), providers_known)}; "
                                 f"rent offers come from {', '.join(providers_known)}")
        start = _date(c["from"], ctx) if c.get("from") is not None else None
        until = _date(c["until"], ctx) if c.get("until") is not None else None
        if start and until and until < start:
            raise ValueError(f"credit {i + 1}: it expires ({until}) before it is granted ({start})")
        out.append(Credit(str(c.get("name") or f"credit {i + 1}"), float(amount), tuple(str(n) for n in names),
                          start, until))
    pooled = _pooled(out)
    if len(pooled) > MAX_CREDITS:
        raise ValueError(f"{len(pooled)} credits of different providers or dates; a scenario takes at most "
                         f"{MAX_CREDITS} (credits of the same providers, from and until combine into one: "
                         "give grants that pay alike the same dates)")
    return pooled


#: Credits a scenario takes once those of the same providers and dates are combined: each is a
#: family of variables of the program (one per bill it may pay); 20 plan in seconds.
MAX_CREDITS = 20
#: Credits listed at most, before combining (a file of them is input, not a thousand grants).
MAX_CREDITS_LISTED = 10_000


def _pooled(credits: list[Credit]) -> tuple[Credit, ...]:
    """Credits that pay the same bills (the same providers, from and until) as one, their amounts
    added: the plan cannot tell them apart, and one family of variables instead of many keeps a
    hundred small grants as fast as one. Named by their names (the first three, then a count)."""
    groups: dict[tuple, list[Credit]] = {}
    for c in credits:
        groups.setdefault((frozenset(c.providers), c.start, c.until), []).append(c)
    out = []
    for same in groups.values():
        names = [c.name for c in same]
        name = " + ".join(names) if len(names) <= 3 else f"{', '.join(names[:3])} and {len(names) - 3} more"
        out.append(Credit(name, sum(c.amount_usd for c in same), same[0].providers, same[0].start, same[0].until))
    return tuple(out)


def _trend(v, ctx):
    """A yearly change ('-25%/year', '-0.25/year', '-25%' or -0.25: a share a year), or dated
    points, rent's level at each date as a share off its catalog price ({2027-06-30: -10%,
    2028-06-30: -25%}: piecewise linear from the price's date, flat after the last)."""
    if isinstance(v, dict):
        points = []
        for day, level in v.items():
            when = _date(day, ctx)
            try:
                share = float(units.parse_fraction(str(level).strip().lstrip("+-"))) * (
                    -1.0 if str(level).strip().startswith("-") else 1.0)
            except units.QuantityError:
                raise ValueError(f"expected a price level at {when} such as -10% (off the catalog price), "
                                 f"got {level!r}") from None
            if not -0.95 <= share <= 3.0:
                raise ValueError(f"expected a price level from -95% to +300% at {when}, got {level!r}")
            points.append((when, share))
        if not points:
            raise ValueError("expected at least one date: level, such as {2027-06-30: -10%}")
        return tuple(sorted(points))
    expected = (f"expected flat, a yearly change from -90%/year to +100%/year such as -25%/year, or dated levels "
                f"such as {{2027-06-30: -10%}}, got {v!r}")
    text = str(v).strip().lower().replace(" ", "").removesuffix("/year")
    if text == "flat":  # price_trend's word for no change, for buy_price_trend too
        return 0.0
    sign = -1.0 if text.startswith("-") else 1.0
    try:
        x = sign * units.parse_fraction(text.lstrip("+-"))
    except units.QuantityError:
        raise ValueError(expected) from None
    if not -0.9 <= x <= 1.0:
        raise ValueError(expected)
    return x


def _rent_trend(v, ctx):
    """Rent's path: 'catalog' (the default: each device's sourced trend, trends.csv), 'flat' (prices
    stay as dated; 0 says the same), a yearly change or dated levels (:func:`_trend`)."""
    word = str(v).strip().lower() if isinstance(v, str) else None
    if word == "catalog":
        return None
    if word == "flat":
        return 0.0
    try:
        return _trend(v, ctx)
    except ValueError as exc:
        if word is None or not word.isalpha():
            raise
        raise ValueError(f"expected catalog (the default), flat, a yearly change such as -25%/year, or dated "
                         f"levels such as {{2027-06-30: -10%}}, got {v!r}{did_you_mean(word, ('catalog', 'flat'))}"
                         ) from exc


def _frameworks(v, ctx):
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list):
        raise ValueError(f"expected a list of frameworks ({', '.join(FRAMEWORKS)}), got {v!r}")
    return tuple(_enum(FRAMEWORKS)(x, ctx) for x in v)


@stated_unit("fraction")
def _confidence(v, ctx):
    try:
        x = units.parse_fraction(v)
    except units.QuantityError:
        x = math.nan
    if not 0.5 <= x <= 0.999:
        raise ValueError(f"expected a chance from 50% to 99.9%, got {v!r}")
    return x



def _money_or_fraction(v, ctx):
    """Resale: money ("300 USD") or a share of the price ("40%")."""
    if isinstance(v, str) and v.strip().endswith("%"):
        return ("fraction", units.parse_fraction(v))
    if isinstance(v, float) and 0 <= v <= 1:
        return ("fraction", v)
    return ("usd", _q(_money)(v, ctx))


def _patterns(kind: str):
    def convert(v, ctx):
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ValueError(f"expected a list of {kind} offer ids or patterns such as \"aws:*\", got {v!r}")
        known = getattr(ctx.ids, kind) | ctx.user_ids[kind]
        for pattern in v:
            if not any(fnmatch.fnmatchcase(i, pattern) for i in known):
                providers = {i.split(":")[0] + ":*" for i in known if ":" in i}  # "lamda:*" -> "lambda:*"
                hint = did_you_mean(pattern, sorted(known | providers))
                raise ValueError(f"{pattern!r} matches no {kind} offer{hint}; "
                                 f"`planner pricing list --{kind}` lists them")
        return tuple(v)
    return convert


WORKLOAD = {
    "family": Field(_enum(FAMILIES), required=True, doc="architecture: " + " | ".join(FAMILIES)),
    "params": Field(_q(_count, positive=True, maximum=1e13, unit="parameters"), required=True,
                    doc="the model's parameters (86M, 7B)"),
    "precision": Field(_enum(PRECISIONS), default="mixed", doc=" | ".join(PRECISIONS)),
    "optimizer": Field(_enum(OPTIMIZERS), default="adam", doc=" | ".join(OPTIMIZERS)),
    "batch_size": Field(_int_at_most(1_000_000), default=32, doc="samples per optimizer step"),
    "activation_memory": Field(_q(_size, maximum=1e5, unit="GB"), attr="activation_memory_gb",
                               doc="measured at batch_size; estimated when absent"),
    "sequence_length": Field(_int_at_most(10_000_000), doc="tokens per sample (transformer, rnn)"),
    "image_size": Field(_int_at_most(100_000), doc="pixels per side (cnn)"),
    "reference_gpu": Field(_device, required=True, doc="the GPU on which the phases' gpu_hours were measured"),
    "method": Field(_enum(METHODS), default="full", doc="full | lora | qlora (adapters on a frozen base)"),
    "trainable_params": Field(_q(_count, positive=True, maximum=1e13, unit="parameters"),
                              doc="adapter parameters (lora, qlora); default stated in the report"),
    "attention": Field(_enum(ATTENTIONS), default="auto", doc=" | ".join(ATTENTIONS)),
    "activation_checkpointing": Field(_auto_or_bool, default="auto", doc="auto (only when needed to fit) | true | false"),
    "sharding": Field(_enum(SHARDINGS), default="none", doc="none | zero2 | zero3: states split across a machine's GPUs"),
    "measured_speed": Field(_measured_speeds, default=(),
                            doc="speeds you measured for this workload, per device: times reference_gpu (2.4) "
                                "or times another device ('1.35 x rtx-4090'); they replace the catalog's"),
}

PHASE = {
    "gpu_hours": Field(_q(_hours, positive=True, maximum=MAX_GPU_HOURS, unit="h", minimum=MIN_HOURS), required=True,
                       attr="gpu_hours_per_run", doc="work per run, in hours on reference_gpu"),
    "runs": Field(_runs, default=1, doc="independent runs of gpu_hours each (seeds, folds)"),
    "from": Field(_date, attr="start", doc="first day the phase may use; default: the scenario's start"),
    "deadline": Field(_date, doc="last day the phase may use (inclusive); default: the horizon's end"),
    "run_length": Field(_q(_hours, positive=True, maximum=MAX_GPU_HOURS, unit="h", minimum=MIN_HOURS),
                        attr="run_length_h",
                        doc="one experiment's length on the reference GPU: the phase is many experiments, each starting "
                            "fresh and saved at its end, so an interruption loses at most one checkpoint interval of one "
                            "experiment"),
    "checkpoint_every": Field(_checkpoint_every, attr="checkpoint_every_h", default=DEFAULT_CHECKPOINT_EVERY_H,
                              doc="work lost to an interruption is at most this"),
    "checkpoint_size": Field(_q(_size, maximum=1e6, unit="GB"), attr="checkpoint_size_gb",
                             doc="estimated from the workload when absent"),
    "dataset_size": Field(_q(_size, maximum=1e6, unit="GB"), attr="dataset_size_gb", default=0.0,
                          doc="copied to every fresh machine"),
}

YOU = {
    "own": Field(_devices, default=(), doc="cards already owned: no purchase, still electricity"),
    "host_machine": Field(_bool, default=True, doc="a desktop that can take a new card; false adds a host's cost"),
    "host_power": Field(_q(_power, maximum=100_000, unit="W"), attr="host_power_w", default=DEFAULT_HOST_POWER_W,
                        doc="what the rest of the desktop draws while training"),
    "time_value": Field(_q(_usd_per_hour, maximum=1e6, unit="USD/h"), attr="time_value_usd_per_hour", default=0.0,
                        doc="an hour of your attention; 0 ignores it"),
    "attention": Field(_q(_starts_per_day, positive=True, maximum=10_000, unit="starts a day"),
                       attr="attention_starts_per_day", default=DEFAULT_ATTENTION_PER_DAY,
                       doc="how often you can start a session by hand"),
    "budget": Field(_q(_money, maximum=1e12, unit="USD"), attr="budget_usd",
                    doc="cap on cash spent during the plan: cards at their price (resale comes back only after the "
                        "horizon), host, rent, electricity, storage; none when absent"),
    "host_price": Field(_q(_money, maximum=1e9, unit="USD"), attr="host_price_usd",
                        doc="what a host computer costs when host_machine is false"),
    "credits": Field(_credits, default=(),
                     doc="money providers grant: each {amount, providers: [aws, ...], from, until, name}; it pays their "
                         "rent before cash does, between from and until (inclusive), and what is left then is lost"),
    "confidence": Field(_confidence, default=DEFAULT_CONFIDENCE,
                        doc="the chance that every deadline is met (90%: all phases end in time in 9 of 10 "
                            "outcomes); each of n phases is planned to end in time at its n-th root"),
}

CONSIDER = {
    "buy": Field(_patterns("buy"), doc="buy offer ids or patterns; default: the whole catalog"),
    "rent": Field(_patterns("rent"), doc="rent offer ids or patterns; default: the whole catalog"),
    "free": Field(_patterns("free"), doc="free tier ids or patterns; default: the whole catalog"),
    "spot": Field(_bool, default=True, doc="allow spot/preemptible offers"),
}


def build(cls, schema: Mapping[str, Any], values: Mapping[str, Any], **extra):
    """A ``cls`` from a section's checked values, each missing key taking its schema default."""
    fields = {(f.attr or key): values.get(key, f.default) for key, f in schema.items() if isinstance(f, Field)}
    return cls(**fields, **extra)


def section_values(obj, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a section from the dataclass built from it (the inverse of :func:`build`),
    blanks left out."""
    values = {key: getattr(obj, f.attr or key) for key, f in schema.items() if isinstance(f, Field)}
    return {k: v for k, v in values.items() if v is not None}


#: How a number in a catalog column's unit (columns.csv) is read from a scenario's text.
_READ_UNIT: dict[str, Callable[[Any, Any], float]] = {
    "USD": _money, "USD/h": _usd_per_hour, "W": _power, "s": _seconds, "min": _minutes, "h": _hours,
    "days": _days, "1/h": _per_hour, "h/week": _hours_per_week,
}
#: How a value of a catalog column's other types is read (the only list an entry takes is its frameworks).
_READ_TYPE: dict[str, Callable[[Any, Any], Any]] = {
    "id": _offer_id, "ref:devices": _device, "str": _text, "date": _date, "bool": _bool,
    "int": _int_at_most(MAX_COUNT), "list": _frameworks,
}


def _column(table: str, column: str, *, required: bool = False, positive: bool = False,
            maximum: float | None = None, doc: str = "") -> tuple[str, Field]:
    """A catalog entry key's column and its converter, from the column's type and unit in
    columns.csv (``pricing.column_types``: the one place they are declared, so an entry and a
    catalog row cannot disagree on a unit); ``positive`` and ``maximum`` are the key's own
    checks of a number."""
    kind, unit = column_types()[(table, column)]
    if kind == "float":
        convert: Callable[[Any, Any], Any] = _q(_READ_UNIT[unit], positive=positive, maximum=maximum, unit=unit)
    elif kind.startswith("enum:"):
        convert = _enum(tuple(kind[5:].split("|")))
    else:
        convert = _READ_TYPE[kind]
    return column, Field(convert, required=required, doc=doc)


def _entry(table: str, keys: Mapping[str, Any]) -> dict[str, tuple[str, Field]]:
    """Scenario key -> (catalog column, converter) of one table's entries: the common keys, then
    ``keys`` (a column, a column with the key's own checks, or a key of its own: (name, Field))."""
    common = {"id": ("id", {"required": True}), "device": "device", "source": "source", "as_of": "as_of",
              "notes": "notes"}
    out = {}
    for key, spec in {**common, **keys}.items():
        column, checks = (spec, {}) if isinstance(spec, str) else spec
        out[key] = (column, checks) if isinstance(checks, Field) else _column(table, column, **checks)
    return out


# Scenario catalog entries: scenario key -> (catalog column, converter).
ENTRY_COLUMNS: dict[str, dict[str, tuple[str, Field]]] = {
    "buy": _entry("buy", {
        "count": "count", "condition": "condition", "price": "price_usd",
        # money or a share of the price: one key for two columns (resale_usd, resale_fraction)
        "resale": ("resale", Field(_money_or_fraction, doc="money, or a share of the price (60%); default: "
                                   "the resale model (planner pricing show ID)")),
        "power": "power_w",
    }),
    "rent": _entry("rent", {
        "provider": "provider", "region": "region", "count": "count", "price": "usd_per_hour", "spot": "spot",
        "billing": ("billing_s", {"positive": True}), "startup": "startup_min",
        "session_limit": ("session_limit_h", {"positive": True}), "interruptions": "interruptions_per_h",
        "setup": "setup_min", "supply": "supply",
        "term": ("term_days", {"positive": True, "maximum": 5 * 365,
                               "doc": "a commitment: paid for every hour of this long from the day the plan "
                                      "starts it, used or not (1 year, 7 days); the plan chooses start and count"}),
        "frameworks": "frameworks",
    }),
    "free": _entry("free", {
        "session_limit": ("session_limit_h", {"positive": True}), "idle_timeout": "idle_timeout_min",
        "quota": "quota_h_per_week", "quota_reset": "quota_reset", "quota_group": "quota_group",
        "setup": "setup_min", "interruptions": "interruptions_per_h", "persistent_storage": "persistent_storage",
        "needs_person": "needs_person", "frameworks": "frameworks",
    }),
}

CATALOG = {kind: ListOf({k: f for k, (_, f) in cols.items()}) for kind, cols in ENTRY_COLUMNS.items()}

SCHEMA: dict[str, Any] = {
    "name": Field(_text, required=True, doc="shown at the top of every report"),
    "start": Field(_date, doc="first day the plan may use; default: today"),
    "currency": Field(_currency, default="USD", doc="reporting currency; rates come from the catalog"),
    "horizon": Field(_q(_months, positive=True, maximum=MAX_HORIZON_MONTHS, unit="months"), attr="horizon_months",
                     default=DEFAULT_HORIZON_MONTHS, doc="bought hardware is used this long, then sold"),
    "electricity": Field(_q(_usd_per_kwh, maximum=1000, unit="USD/kWh"), attr="electricity_usd_per_kwh",
                         doc="default: the catalog's default region, stated in the report"),
    "framework": Field(_enum(FRAMEWORKS), default="pytorch", doc=" | ".join(FRAMEWORKS)),
    "price_trend": Field(_rent_trend, attr="rent_trend_per_year", default="catalog",
                         doc="where rent prices go from their catalog date: catalog (each device's sourced yearly "
                             "trend with its range, planner pricing list --trends; the uncertainty analysis draws "
                             "within the range), flat (prices stay as dated; 0 says the same), a yearly change "
                             "such as -25%/year, or levels by dates, e.g. {2027-06-30: -10%, 2028-06-30: -25%} "
                             "(linear in between, flat after); a change you give is not drawn"),
    "buy_later": Field(_q(_months, positive=True, maximum=MAX_HORIZON_MONTHS, unit="months"), attr="buy_later_months",
                       doc="the plan may buy a card later than the start, on a week start every this often (e.g. "
                           "1 month: every 4 weeks), choosing when as well as whether; a card bought later costs "
                           "that day's price (buy_price_trend) and sells younger; default: cards are bought on "
                           "the first day"),
    "buy_price_trend": Field(_trend, attr="buy_trend_per_year", default=0.0,
                             doc="card prices (new and used) move by this share a year from their catalog date, "
                                 "e.g. -15%/year, or reach levels by dates, as price_trend; with buy_later, what a "
                                 "card bought later costs; flat (or 0): prices stay as dated"),
    "uncertainty": Field(_samples, attr="uncertainty_samples", default=0,
                         doc="draws of the uncertainty analysis in every run (as --uncertainty N); 0: off"),
    "workload": WORKLOAD,
    "phases": MapOf(PHASE),
    "you": YOU,
    "consider": CONSIDER,
    "catalog": CATALOG,
    "variants": _Any(),
}
REQUIRED_SECTIONS = ("name", "workload", "phases")


def key_unit(path: str, columns, currency: str) -> str:
    """The unit a bare number takes for the key at ``path`` (a --set/--vary path such as
    ``phases.final.gpu_hours`` or ``catalog.rent[ID].price``): the key's unit, money in the
    scenario's currency (docs/scenario.md: bare amounts are in it); '' when it has none."""
    parts = re.sub(r"\[[^\]]*\]", "[]", path).split(".")
    if len(parts) >= 3 and parts[0] == "phases":
        parts[1] = "<name>"
    wanted = ".".join(parts)
    unit = next((r["unit"] for r in schema_rows(columns) if r["key"] == wanted), "")
    return re.sub(r"\bUSD\b", currency, unit)


def schema_rows(columns, schema: Mapping[str, Any] | None = None, prefix: str = "") -> list[dict[str, Any]]:
    """Every scenario key with its unit, default and documentation, from the schema
    (``planner keys``): the one place they are declared. Catalog entries are described by the
    catalog's ``columns`` (``Catalog.columns``, the rows of columns.csv)."""
    schema = SCHEMA if schema is None else schema
    described = {(r["table"], r["column"]): r for r in columns.to_dict("records")}
    rows = []
    for key, f in schema.items():
        path = f"{prefix}{key}"
        if isinstance(f, Field):
            default = f.default if f.default not in (None, ()) else ("required" if f.required else "")
            rows.append({"key": path, "unit": f.unit, "default": default, "doc": f.doc})
        elif isinstance(f, MapOf):
            rows += schema_rows(columns, f.item, f"{path}.<name>.")
        elif isinstance(f, ListOf):  # catalog entries: documented by the catalog's columns.csv
            for entry in schema_rows(columns, f.item, f"{path}[]."):
                column = ENTRY_COLUMNS[key][entry["key"].rsplit(".", 1)[1]][0]
                col = described.get((key, column), {})
                rows.append({**entry, "unit": entry["unit"] or col.get("unit", ""),
                             "default": entry["default"] or col.get("default", ""),
                             "doc": entry["doc"] or col.get("description", "")})
        elif isinstance(f, dict):
            rows += schema_rows(columns, f, f"{path}.")
        else:
            rows.append({"key": path, "unit": "", "default": "", "doc": "named changes of the file (docs/scenario.md, Sections)"})
    return rows


# --------------------------------------------------------------------------- overrides


@dataclass(frozen=True)
class Override:
    """One ``key.path = value`` change, with where it was written."""

    path: tuple
    value: Any
    file: str
    line: int
    column: int
    label: str  # "variant 'cheap-power'" or "--set"


def parse_set(option: str) -> tuple[str, Any]:
    """Split ``key.path=value``; the value is read as YAML, as in a file."""
    if "=" not in option:
        raise InputError([Problem("--set", 0, 0, option, "expected key.path=value, e.g. workload.params=300M")])
    key, text = option.split("=", 1)
    key = key.strip()
    try:
        doc = parse_document(text if text.strip() else "null", "--set " + option)
    except InputError as exc:
        raise InputError([Problem("--set", 0, 0, key, p.message) for p in exc.problems]) from None
    return key, doc.data


def parse_flag_value(text: str, flag: str) -> Any:
    """A command-line flag's value read as YAML, as in a file; errors name the flag."""
    if not text.strip():
        return text
    return parse_document(text, flag).data


_PATH_PART = re.compile(r"([^.\[\]]+)((?:\[[^\]]*\])*)(?:\.|$)")


def _split_path(key: str) -> tuple:
    """``catalog.rent[aws:g5.xlarge].price`` -> ('catalog', 'rent', 'aws:g5.xlarge', 'price'):
    dotted parts, with an id in brackets kept whole (ids contain dots and colons)."""
    if not key:
        return ()
    out: list = []
    pos = 0
    while pos < len(key):
        m = _PATH_PART.match(key, pos)
        if not m or m.end() == pos:
            return tuple(int(p) if p.isdigit() else p for p in key.split("."))  # let the resolver say what is wrong
        name, brackets = m.group(1), m.group(2)
        out.append(int(name) if name.isdigit() else name)
        out += re.findall(r"\[([^\]]*)\]", brackets)
        pos = m.end()
    return tuple(out)


def _catalog_entry_for(path: tuple, data: dict, ids: CatalogIds) -> None:
    """``catalog.KIND[ID]...`` names a row of the shipped catalog (or a catalog file) that the
    scenario's own ``catalog:`` does not list yet: add ``{id: ID}`` there, so that the override
    changes that row field by field (docs/scenario.md: an entry whose id exists overrides the row)."""
    if len(path) < 4 or path[0] != "catalog" or path[1] not in ("buy", "rent", "free") or isinstance(path[2], int):
        return
    kind, offer = path[1], path[2]
    section = data.setdefault("catalog", {}) if isinstance(data.get("catalog", {}), dict) else None
    if section is None:
        return
    entries = section.get(kind)
    if entries is None:
        entries = section[kind] = []
    if not isinstance(entries, list) or any(isinstance(e, dict) and e.get("id") == offer for e in entries):
        return
    known = getattr(ids, kind)
    if offer in known:
        entries.append({"id": offer})
    else:
        raise ValueError(f"no {kind} offer '{offer}' in the catalog or the scenario"
                         f"{did_you_mean(str(offer), sorted(known | {e.get('id') for e in entries if isinstance(e, dict)}))}")


def _resolve_path(path: tuple, data: Any, schema: Any, where: str) -> tuple:
    """Check ``path`` against the schema (and the data for phase names / list ids).

    Returns the path with list ids turned into indices. Raises ValueError with
    a did-you-mean when a part does not exist.
    """
    out: list = []
    node, value = schema, data
    for i, part in enumerate(path):
        shown = dotted(path[: i + 1])
        if isinstance(node, Field) or isinstance(node, _Any):
            raise ValueError(f"'{dotted(path[:i])}' takes a single value; '{shown}' does not exist")
        if isinstance(node, dict):
            if part not in node:
                raise ValueError(f"unknown key '{shown}'{did_you_mean(str(part), node)}")
            out.append(part)
            node, value = node[part], (value or {}).get(part) if isinstance(value, dict) else None
        elif isinstance(node, MapOf):
            names = list(value) if isinstance(value, dict) else []
            if part not in names:
                raise ValueError(f"no phase named '{part}' in {where}{did_you_mean(str(part), names)}")
            out.append(part)
            node, value = node.item, value[part]
        elif isinstance(node, ListOf):
            items = value if isinstance(value, list) else []
            if isinstance(part, int):
                if not 0 <= part < len(items):
                    raise ValueError(f"'{dotted(path[:i])}' has {len(items)} entries; no entry {part}")
                idx = part
            else:
                ids = [str(e.get("id")) for e in items if isinstance(e, dict)]
                if part not in ids:
                    raise ValueError(f"no entry with id '{part}' in '{dotted(path[:i])}'{did_you_mean(str(part), ids)}")
                idx = ids.index(part)
            out.append(idx)
            node, value = node.item, items[idx]
    return tuple(out)


def _flatten(value: Any, prefix: tuple, doc: Document, doc_path: tuple, schema: Any, out: list):
    """Flatten a variant body into (path, value, doc_path) leaves, following the schema."""
    if isinstance(value, dict) and not isinstance(schema, (Field, _Any)) and value:
        for key, sub in value.items():
            parts = _split_path(key)
            sub_schema = schema
            for p in parts:
                if isinstance(sub_schema, dict):
                    sub_schema = sub_schema.get(p, _Any())
                elif isinstance(sub_schema, (MapOf, ListOf)):
                    sub_schema = sub_schema.item
                else:
                    sub_schema = _Any()
            _flatten(sub, prefix + parts, doc, doc_path + (key,), sub_schema, out)
    else:
        out.append((prefix, value, doc_path))


def _set_in(data: dict, path: tuple, value: Any) -> Any:
    """Set ``data[path] = value``, creating mappings on the way; return the old value."""
    node: dict | list = data
    for part in path[:-1]:
        nxt = node[part] if isinstance(node, list) else node.get(part)
        if not isinstance(nxt, (dict, list)):
            nxt = {}
            node[part] = nxt
        node = nxt
    old = node[path[-1]] if isinstance(node, list) else node.get(path[-1])
    node[path[-1]] = value
    return old


# --------------------------------------------------------------------------- loading


def load_scenario_text(
    text: str,
    ids: CatalogIds,
    *,
    file: str = "<scenario>",
    today: dt.date,
    variant: str | None = None,
    sets: Sequence[str] = (),
) -> Scenario:
    """Parse and validate a scenario text. Raises InputError listing every problem.

    ``today`` is the default ``start`` (the core never reads the clock).
    ``variant`` names an entry of ``variants``; ``sets`` are ``key.path=value``.
    """
    doc = parse_document(text, file)
    if doc.data is None:
        raise InputError([Problem(file, 1, 1, "", "the file is empty: expected a scenario mapping with "
                                  "'name', 'workload' and 'phases' (see scenarios/thesis.yaml)")])
    if not isinstance(doc.data, dict):
        kind = type(doc.data).__name__ if not isinstance(doc.data, list) else "list"
        raise InputError([doc.problem((), f"expected a mapping of keys such as 'name:', 'workload:', "
                                      f"'phases:' at the top of the file, got a {kind}")])
    v = _Validator(doc, _Context(ids, today))
    data = doc.data
    variants_raw = _variants(v, data)
    variant_names = tuple(variants_raw or ())
    overrides = _variant_overrides(doc, file, variants_raw, variant) if variant is not None else []
    for option in sets:
        key, value = parse_set(option)
        overrides.append(Override(_split_path(key), value, "--set", 0, 0, "--set"))
    applied = _apply_overrides(v, data, overrides, ids)
    if v.problems:
        raise InputError(v.problems)

    scenario = v.scenario(data)
    if v.problems:
        raise InputError(v.problems)
    return _replace(scenario, variant=variant, overrides=tuple(applied), file=file, variant_names=variant_names)


def _variants(v: _Validator, data: dict) -> dict | None:
    """The file's ``variants`` (None when absent or not a mapping, which is a problem noted)."""
    variants_raw = data.get("variants")
    if variants_raw is not None and not isinstance(variants_raw, dict):
        v.add(("variants",), "expected a mapping of variant names to changes")
        return None
    for name, body in (variants_raw or {}).items():
        if not isinstance(body, dict):
            v.add(("variants", name), "expected a mapping of key.path: value changes, e.g. {electricity: 0.10 USD/kWh}")
    return variants_raw


def _variant_overrides(doc, file: str, variants_raw: dict | None, variant: str) -> list[Override]:
    """The changes a named variant makes, each located in the file (an unknown name is an error)."""
    if variant not in (variants_raw or {}):
        hint = did_you_mean(variant, variants_raw or {})
        known = ", ".join(variants_raw or {}) or "none are defined"
        line, col = doc.position(("variants",), at_key=True) if variants_raw else (0, 0)
        raise InputError([Problem(file, line, col, "variants",
                                  f"no variant named '{variant}'{hint} (variants: {known})")])
    body = (variants_raw or {})[variant]
    overrides: list[Override] = []
    if isinstance(body, dict):
        leaves: list = []
        _flatten(body, (), doc, ("variants", variant), SCHEMA, leaves)
        for path, value, doc_path in leaves:
            line, col = doc.position(doc_path, at_key=True)
            overrides.append(Override(path, value, file, line, col, f"variant '{variant}'"))
    return overrides


def _apply_overrides(v: _Validator, data: dict, overrides: list[Override], ids: CatalogIds) -> list[str]:
    """Set each override (a variant's change, a --set) into the parsed file, where the schema
    has its key; a problem for each that cannot be set. Returns what changed, as said in the
    answer ('key: old -> new (origin)')."""
    applied: list[str] = []
    for o in overrides:
        try:
            _catalog_entry_for(o.path, data, ids)
            path = _resolve_path(o.path, data, SCHEMA, "the scenario")
            if not path or path[0] == "variants":
                raise ValueError("cannot override 'variants'")
            _no_bare_catalog_money(o.path, o.value, data.get("currency", "USD"))
        except ValueError as exc:
            v.problems.append(Problem(o.file, o.line, o.column, dotted(o.path), str(exc)))
            continue
        old = _set_in(data, path, o.value)
        v.origin[path] = o
        by_id = len(o.path) >= 4 and o.path[0] == "catalog" and not isinstance(o.path[2], int)
        shown = (f"catalog.{o.path[1]}[{o.path[2]}].{dotted(o.path[3:])}" if by_id else dotted(path))
        was = "(the catalog's)" if by_id and old is None else _show(old)
        applied.append(f"{shown}: {was} -> {_show(o.value)} ({o.label})")
    return applied


#: Catalog fields in money: a bare number there is ambiguous when the scenario's currency is not
#: the catalog's (USD): read as the scenario's, it is not the figure the catalog row shows.
CATALOG_MONEY_FIELDS = {"price", "resale", "storage", "egress"}


def _no_bare_catalog_money(path: tuple, value: Any, currency: Any) -> None:
    """Refuse a bare number for a catalog row's money (``catalog.rent[ID].price=0.40``) in a
    scenario whose currency is not USD: the catalog lists the row in USD, a bare number would be
    read in the scenario's currency, and the same "0.40" would price another plan than the row."""
    if (len(path) < 4 or path[0] != "catalog" or isinstance(path[2], int) or path[-1] not in CATALOG_MONEY_FIELDS
            or str(currency).strip().upper() == "USD"):
        return
    bare = (isinstance(value, (int, float)) and not isinstance(value, bool)) or (
        isinstance(value, str) and re.fullmatch(r"\s*[-+]?[\d.]+(e[-+]?\d+)?\s*", value, re.I) is not None)
    if bare:
        unit = "/h" if path[1] == "rent" and path[-1] == "price" else ""
        raise ValueError(f"a bare {value} would be read in {currency}, while the catalog lists this row in USD: "
                         f"write the currency ({value} USD{unit} or {value} {currency}{unit})")


def _show(value: Any) -> str:
    return "(unset)" if value is None else str(value)


def _replace(obj, **changes):
    return dataclasses.replace(obj, **changes)


class _Validator:
    """Walks raw data against the schema, collecting problems with positions."""

    def __init__(self, doc: Document, ctx: _Context):
        self.doc = doc
        self.ctx = ctx
        self.problems: list[Problem] = []
        self.origin: dict[tuple, Override] = {}
        self.ranges: dict[str, tuple[float, float]] = {}  # quantities given as ranges (docs/scenario.md)

    # -- problems
    def add(self, path: tuple, message: str, at_key: bool = False) -> None:
        for n in range(len(path), 0, -1):
            o = self.origin.get(path[:n])
            if o is not None:
                self.problems.append(Problem(o.file, o.line, o.column, dotted(path), message))
                return
        self.problems.append(self.doc.problem(path, message, at_key))

    # -- sections
    def convert(self, f: Field, value: Any, path: tuple) -> Any:
        """A field's canonical value; a quantity written as a range (``200..300``, ``250 h ± 20%``)
        gives its middle, and the range is kept for the uncertainty analysis."""
        ends = units.split_range(value)
        if ends is None:
            return f.convert(value, self.ctx)
        try:
            low, high = (f.convert(e, self.ctx) for e in ends)
        except ValueError as exc:  # say what was written, not the end the unit was carried to
            raise type(exc)(f"{exc} (in the range {value!r})") from None
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (low, high)):
            raise ValueError(f"a range is for quantities; got {value!r}")
        if low > high:
            raise ValueError(f"a range runs from low to high, got {value!r}")
        middle = (low + high) / 2
        if isinstance(low, int) and isinstance(high, int):
            middle = round(middle)
        self.ranges[dotted(path)] = (float(low), float(high))
        return middle  # both ends passed the field's checks, so the middle does too

    def section(self, raw: Any, path: tuple, schema: Mapping[str, Any], what: str) -> dict[str, Any]:
        """Validate a mapping; return {key: canonical value} for keys present and valid."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            self.add(path, f"expected a mapping of {what} keys ({', '.join(schema)}), got {_kind(raw)}")
            return {}
        out: dict[str, Any] = {}
        for key, value in raw.items():
            child = path + (key,)
            if key not in schema:
                self.add(child, f"unknown key{did_you_mean(key, schema)}; expected one of: {', '.join(schema)}", at_key=True)
                continue
            f = schema[key]
            if isinstance(f, Field):
                if value is None:
                    if f.required:
                        self.add(child, "a value is required here")
                    continue
                try:
                    out[key] = self.convert(f, value, child)
                except units.QuantityError as exc:
                    self.add(child, str(exc))
                except ValueError as exc:
                    self.add(child, str(exc))
        for key, f in schema.items():
            if isinstance(f, Field) and f.required and key not in raw:
                self.add(path, f"missing required key '{dotted(path + (key,))}'", at_key=bool(path))
        return out

    def scenario(self, data: dict) -> Scenario | None:
        for key in data:
            if key not in SCHEMA:
                self.add((key,), f"unknown key{did_you_mean(key, SCHEMA)}; expected one of: {', '.join(SCHEMA)}", at_key=True)
        for key in REQUIRED_SECTIONS:
            if key not in data or data[key] is None:
                self.add((key,) if key in data else (), f"missing required key '{key}'")
        top_fields = {k: f for k, f in SCHEMA.items() if isinstance(f, Field)}
        # currency first: money values depend on it.
        if "currency" in data and data["currency"] is not None:
            try:
                self.ctx.currency = _currency(data["currency"], self.ctx)
            except ValueError as exc:
                self.add(("currency",), str(exc))
        top = self.section({k: data[k] for k in top_fields if k in data}, (), top_fields, "scenario")
        start = top.get("start", self.ctx.today)
        self.ctx.start = start

        # user catalog entries come before 'consider' and 'you', whose ids may name them
        entries = self.catalog(data.get("catalog"))
        wl = self.section(data.get("workload"), ("workload",), WORKLOAD, "workload") if "workload" in data else {}
        phases = self.phases(data.get("phases"), start) if "phases" in data else ()
        you = self.section(data.get("you"), ("you",), YOU, "you")
        consider = self.section(data.get("consider"), ("consider",), CONSIDER, "consider")
        if self.problems or not wl or not phases:
            return None
        if "electricity" in top:
            elec, elec_default = top["electricity"], False
        else:
            elec, elec_default = self.ctx.ids.electricity_default_usd_per_kwh, True
        currency = self.ctx.currency
        trend = top.get("price_trend", SCHEMA["price_trend"].default)
        buy_trend = top.get("buy_price_trend", SCHEMA["buy_price_trend"].default)
        return Scenario(
            name=top["name"],
            start=start,
            currency=currency,
            usd_per_currency=self.ctx.ids.usd_per_unit[currency],
            horizon_months=top.get("horizon", SCHEMA["horizon"].default),
            electricity_usd_per_kwh=elec,
            electricity_is_default=elec_default,
            framework=top.get("framework", SCHEMA["framework"].default),
            workload=workload_of(wl),
            phases=phases,
            you=build(You, YOU, you),
            consider=build(Consider, CONSIDER, consider),
            catalog_entries=entries,
            ranges=dict(self.ranges),
            uncertainty_samples=top.get("uncertainty", SCHEMA["uncertainty"].default),
            rent_trend_per_year=(trend if isinstance(trend, float) else 0.0 if isinstance(trend, tuple) else None),
            rent_price_points=trend if isinstance(trend, tuple) else (),
            read_on=self.ctx.today,
            buy_every_weeks=(max(1, round(top["buy_later"] * units.WEEKS_PER_MONTH)) if "buy_later" in top
                             else None),
            buy_trend_per_year=buy_trend if isinstance(buy_trend, float) else 0.0,
            buy_price_points=buy_trend if isinstance(buy_trend, tuple) else (),
        )

    def phases(self, raw: Any, start: dt.date) -> tuple[Phase, ...]:
        if isinstance(raw, dict) and not raw:
            self.add(("phases",), "no phases: expected at least one, e.g. "
                     "'final: {gpu_hours: 180, deadline: 2027-08-15}'")
            return ()
        if not isinstance(raw, dict):
            self.add(("phases",), "expected a mapping of phase names to phases, e.g. "
                     "'final: {gpu_hours: 180, deadline: 2027-08-15}'")
            return ()
        out = []
        if len(raw) > MAX_PHASES:
            self.add(("phases",), f"{len(raw):,} phases; a scenario has at most {MAX_PHASES} (merge phases that "
                     "share a window: their hours add up)", at_key=True)
            return ()
        for name, body in raw.items():
            path = ("phases", name)
            if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
                self.add(path, "a phase name uses letters, digits, '-' and '_' only", at_key=True)
                continue
            p = self.section(body, path, PHASE, "phase")
            if "gpu_hours" not in p:
                continue
            begin = p.get("from", start)
            deadline = p.get("deadline")
            if p["gpu_hours"] * p.get("runs", 1) > MAX_GPU_HOURS:
                self.add(path + ("runs",), f"{p.get('runs', 1):,} runs of {p['gpu_hours']:,.0f} h are "
                         f"{p['gpu_hours'] * p.get('runs', 1):,.0f} reference GPU-hours; at most {MAX_GPU_HOURS:,.0f} "
                         "in a phase")
                continue
            if begin < start:
                self.add(path + ("from",), f"phase starts {begin} before the scenario's start {start}")
            if deadline is not None and deadline > _years_after(start, MAX_SPAN_YEARS):
                self.add(path + ("deadline",), f"deadline {deadline} is more than {MAX_SPAN_YEARS} years after the "
                         f"scenario's start {start}; the planner plans at most {MAX_SPAN_YEARS} years ahead")
            elif begin > _years_after(start, MAX_SPAN_YEARS):
                self.add(path + ("from",), f"phase starts {begin}, more than {MAX_SPAN_YEARS} years after the "
                         f"scenario's start {start}")
            elif deadline is not None and deadline < begin:  # both inclusive: a one-day phase is valid
                where = path + ("deadline",)
                self.add(where, f"deadline {deadline} is before the phase's start {begin}; "
                         "move the deadline later or 'from' earlier")
            out.append(build(Phase, PHASE, {**p, "from": begin}, name=name))
        return tuple(out)

    def catalog(self, raw: Any, prefix: tuple = ("catalog",)) -> dict[str, tuple[dict, ...]]:
        out: dict[str, tuple[dict, ...]] = {"buy": (), "rent": (), "free": ()}
        if raw is None:
            return out
        if not isinstance(raw, dict):
            self.add(prefix, f"expected a mapping with buy, rent and/or free lists, got {_kind(raw)}")
            return out
        for kind, entries in raw.items():
            if kind not in ENTRY_COLUMNS:
                self.add(prefix + (kind,), f"unknown key{did_you_mean(kind, ENTRY_COLUMNS)}; expected buy, rent or free",
                         at_key=True)
                continue
            if entries is None:
                continue
            if not isinstance(entries, list):
                self.add(prefix + (kind,), f"expected a list of {kind} offers, each '- {{id: ..., ...}}'")
                continue
            known = getattr(self.ctx.ids, kind)
            columns = ENTRY_COLUMNS[kind]
            rows = []
            first_at: dict[str, int] = {}
            for i, entry in enumerate(entries):
                path = prefix + (kind, i)
                values = self.section(entry, path, {k: f for k, (_, f) in columns.items()}, f"catalog {kind}")
                if "id" not in values:
                    continue
                if values["id"] in first_at:
                    line = self.doc.position(prefix + (kind, first_at[values["id"]]))[0]
                    self.add(path + ("id",), f"duplicate id {values['id']!r} (first given at line {line}); "
                             "one entry per id")
                    continue
                first_at[values["id"]] = i
                if "as_of" in values and values["as_of"] > self.ctx.today:
                    self.add(path + ("as_of",), f"dated {values['as_of']}, after today ({self.ctx.today}): "
                             "a price cannot be known before it is seen")
                    continue
                if values["id"] not in known and "device" not in values:
                    self.add(path, f"new {kind} offer '{values['id']}' needs a 'device' "
                             f"(or an id of the catalog to override{did_you_mean(values['id'], sorted(known))})")
                    continue
                row = {columns[k][0]: val for k, val in values.items()}
                if "resale" in row:
                    how, amount = row.pop("resale")
                    row["resale_fraction" if how == "fraction" else "resale_usd"] = amount
                    price = row.get("price_usd")
                    if how != "fraction" and isinstance(price, (int, float)) and amount > price:
                        self.add(path + ("resale",), f"resale {amount:,.2f} USD is above the price {price:,.2f} "
                                 "USD: a card does not sell for more than it cost; give the resale as money or a %")
                row.setdefault("source", f"scenario file ({self.doc.file})")
                rows.append(row)
                self.ctx.user_ids[kind].add(values["id"])
            out[kind] = tuple(rows)
        return out


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)



def load_catalog_text(text: str, ids: CatalogIds, *, file: str, today: dt.date) -> dict[str, tuple[dict, ...]]:
    """A user's or lab's catalog file: buy/rent/free lists written as in a scenario's ``catalog:``.

    Returns canonical rows to overlay on the catalog (``Catalog.with_entries``).
    """
    doc = parse_document(text, file)
    if doc.data is None:
        raise InputError([Problem(file, 1, 1, "", "the file is empty: expected 'buy:', 'rent:' and/or 'free:' lists")])
    v = _Validator(doc, _Context(ids, today))
    if isinstance(doc.data, dict) and "currency" in doc.data:
        try:
            v.ctx.currency = _currency(doc.data.pop("currency"), v.ctx)
        except ValueError as exc:
            v.add(("currency",), str(exc))
    entries = v.catalog(doc.data, prefix=())
    if v.problems:
        raise InputError(v.problems)
    return entries


def workload_of(wl: Mapping[str, Any]) -> Workload:
    """A Workload from checked ``workload:`` values, with the documented defaults (docs/scenario.md)."""
    return build(Workload, WORKLOAD, wl)


def workload_values(w: Workload) -> dict[str, Any]:
    """The ``workload:`` keys of a Workload (the inverse of :func:`workload_of`), blanks left out."""
    return section_values(w, WORKLOAD)


def load_workload(values: Mapping[str, Any], ids: CatalogIds, *, source: str = "--flags") -> Workload:
    """A Workload from ``workload:`` keys given elsewhere (command-line flags), checked as in a file."""
    doc = Document(source, {"workload": dict(values)})
    v = _Validator(doc, _Context(ids, dt.date.min))  # dates play no part in a workload
    wl = v.section(values, ("workload",), WORKLOAD, "workload")
    if v.problems:
        raise InputError(v.problems)
    return workload_of(wl)


@dataclass(frozen=True)
class CatalogEdit:
    """A what-if's change of one catalog figure, typed: ``table`` (rent, buy, free), the row's
    ``id``, the catalog ``column`` (usd_per_hour, price_usd, resale_usd, interruptions_per_h,
    quota_h_per_week) and its ``value`` in the catalog's unit (USD, per hour). What ``--set
    catalog.rent[ID].price=...`` does, without writing the number out and reading it back."""

    table: str
    id: str
    column: str
    value: float


def with_catalog_edits(s: Scenario, edits: Sequence[CatalogEdit]) -> Scenario:
    """The scenario with each edit in its own catalog entries (dataclasses.replace): the row the
    scenario gives, or a partial row over the catalog's (its other fields kept), as a --set does."""
    if not edits:
        return s
    entries = {table: list(rows) for table, rows in s.catalog_entries.items()}
    for e in edits:
        rows = entries.setdefault(e.table, [])
        at = next((i for i, r in enumerate(rows) if r.get("id") == e.id), None)
        if at is None:
            rows.append({"id": e.id, e.column: e.value})
        else:
            rows[at] = {**rows[at], e.column: e.value}
    return dataclasses.replace(s, catalog_entries={t: tuple(rows) for t, rows in entries.items()})


#: Keys a what-if sets on the parsed scenario (:func:`with_value`) instead of reading the file
#: again: quantities no other key is checked against, beyond ``gpu_hours`` x ``runs``. ``*`` is
#: each phase.
EDITABLE = ("electricity", "horizon", "workload.params", "workload.batch_size", "workload.activation_memory",
            "phases.*.gpu_hours", "phases.*.runs", "phases.*.checkpoint_every", "phases.*.dataset_size",
            "you.host_power", "you.time_value", "you.attention", "you.budget")


def editable(path: str) -> bool:
    """Whether :func:`with_value` sets the key at ``path`` (else a what-if sets it as --set text)."""
    parts = path.split(".")
    return (".".join(["phases", "*", *parts[2:]]) if len(parts) == 3 and parts[0] == "phases" else path) in EDITABLE


def with_value(s: Scenario, path: str, raw: Any, ids: CatalogIds) -> Scenario | None:
    """``s`` with the key at ``path`` (an :data:`EDITABLE` key, 'phases.final.gpu_hours') set to
    ``raw``, a value as a --set writes it ('240 h', 3), by dataclasses.replace: the key's own
    converter reads it in the scenario's currency, with the same checks and the same errors as
    ``--set path=raw``, so the scenario equals the one read with that --set, without reading the
    file again. None where the key is not one to set so (a phase the scenario does not have)."""
    parts = path.split(".")
    if not editable(path) or (parts[0] == "phases" and parts[1] not in {ph.name for ph in s.phases}):
        return None
    section = {"workload": WORKLOAD, "you": YOU, "phases": PHASE}.get(parts[0], SCHEMA)
    key = parts[-1]
    f = section[key]
    v = _Validator(parse_document("null", "--set"), _Context(ids, s.read_on or s.start, currency=s.currency))
    where = tuple(parts)

    def refused(message: str) -> InputError:
        return InputError([Problem("--set", 0, 0, path, message)])

    try:
        value = v.convert(f, raw, where) if raw is not None else None
    except ValueError as exc:
        raise refused(str(exc)) from None
    if value is None:
        if f.required:
            raise refused("a value is required here")
        value = f.default
    attr = f.attr or key
    ranges = {k: r for k, r in s.ranges.items() if k != path} | v.ranges  # a range only where one is written
    change = f"{path}: {_show(_value_at(s, parts, attr))} -> {_show(raw)} (--set)"
    changed = _replace(s, ranges=ranges, overrides=(*s.overrides, change))
    if parts[0] == "phases":
        ph = s.phase(parts[1])
        moved = _replace(ph, **{attr: value})
        if moved.gpu_hours * moved.runs > MAX_GPU_HOURS:
            raise refused(f"{moved.runs:,} runs of {moved.gpu_hours:,.0f} h are {moved.gpu_hours * moved.runs:,.0f} "
                          f"reference GPU-hours; at most {MAX_GPU_HOURS:,.0f} in a phase")
        return _replace(changed, phases=tuple(moved if p.name == ph.name else p for p in s.phases))
    if parts[0] in ("workload", "you"):
        return _replace(changed, **{parts[0]: _replace(getattr(s, parts[0]), **{attr: value})})
    extra = {"electricity_is_default": False} if key == "electricity" else {}
    return _replace(changed, **{attr: value}, **extra)


def _value_at(s: Scenario, parts: list[str], attr: str) -> Any:
    if parts[0] == "phases":
        return getattr(s.phase(parts[1]), attr)
    if parts[0] in ("workload", "you"):
        return getattr(getattr(s, parts[0]), attr)
    return getattr(s, attr)
