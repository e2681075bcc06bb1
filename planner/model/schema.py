"""The scenario format's keys: each key's converter (unit, range, did-you-mean) and the
schema of every section, from which docs/scenario.md's table and ``planner keys`` are made."""

from __future__ import annotations

import calendar
import datetime as dt
import fnmatch
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pricing import column_types
from pricing.errors import did_you_mean
from pricing.ids import CatalogIds, provider_of

if TYPE_CHECKING:
    import pandas as pd

from . import units
from .scenario import (
    ATTENTIONS,
    DEFAULT_ATTENTION_PER_DAY,
    DEFAULT_CHECKPOINT_EVERY_H,
    DEFAULT_CONFIDENCE,
    DEFAULT_HORIZON_MONTHS,
    DEFAULT_HOST_POWER_W,
    FAMILIES,
    FRAMEWORKS,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    SHARDINGS,
    Credit,
)

#: A section's record type (Workload, Phase, You, Consider) built from its checked values.
T = TypeVar("T")

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
    #: how a device's name that several devices go by was read ('A100': a100-40gb), as converted
    read_as: list[str] = field(default_factory=list)


def _text(v: Any, ctx: _Context) -> Any:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)) or (isinstance(v, str) and not v.strip()):
        raise ValueError(f"expected text, got {v!r}")
    return str(v)


def _enum(choices: Sequence[str], meant: Mapping[str, str] | None = None) -> Callable[[Any, _Context], Any]:
    """One of ``choices`` (any case). ``meant``: words people write for a choice under another
    name (``bf16`` for mixed precision), each refused with the choice that reads, never read in
    its place: the word may mean something the choice does not."""
    def convert(v: Any, ctx: _Context) -> Any:
        if not isinstance(v, str) or v.lower() not in choices:
            said = (meant or {}).get(re.sub(r"[\s_-]", "", str(v).lower()))
            hint = f" ({said})" if said else did_you_mean(str(v), choices)
            raise ValueError(f"expected one of {', '.join(choices)}, got {v!r}{hint}")
        return v.lower()
    return convert


_MIXED = "training in bf16 or fp16 with fp32 master weights, as autocast and AMP do, is 'mixed'"
#: Words for a precision the schema names otherwise (keys without spaces, '-' or '_', lower case).
PRECISION_WORDS = {**dict.fromkeys(("bf16", "fp16", "bfloat16", "float16", "half", "amp", "autocast", "mixedprecision",
                                    "bf16mixed", "16mixed", "fp16mixed", "bf16amp"), _MIXED),
                   **dict.fromkeys(("float32", "tf32", "full", "single", "32"), "full precision is 'fp32'"),
                   **dict.fromkeys(("float8", "e4m3", "e5m2"), "training in 8-bit floating point is 'fp8'"),
                   **dict.fromkeys(("int8", "int4", "4bit", "8bit", "nf4"),
                                   "a base model quantized to 4 or 8 bits under adapters is workload.method: qlora, "
                                   "its adapters trained in 'mixed'")}
#: Words for a family the schema names otherwise.
FAMILY_WORDS = {**dict.fromkeys(("vit", "llm", "gpt", "bert", "t5", "llama", "attention", "decoder", "encoder"),
                                "a transformer, vision or language, is 'transformer'"),
                **dict.fromkeys(("lstm", "gru", "recurrent"), "an LSTM or GRU is 'rnn'"),
                **dict.fromkeys(("resnet", "convnet", "conv", "vgg", "efficientnet", "convolutional"),
                                "a convolutional network is 'cnn'"),
                **dict.fromkeys(("diffusion", "unet", "stablediffusion", "sd", "sdxl", "latentdiffusion", "ldm"),
                                "a diffusion model's U-Net, mostly convolutions, is 'cnn'; a diffusion transformer "
                                "(DiT) is 'transformer'"),
                "dit": "a diffusion transformer is 'transformer'",
                **dict.fromkeys(("gan", "dcgan", "stylegan"), "a GAN of convolutions (DCGAN, StyleGAN) is 'cnn'")}
#: Words for a catalog column's choice written otherwise, by column (a card's condition).
ENUM_WORDS = {"condition": {**dict.fromkeys(("secondhand", "preowned", "refurbished", "refurb", "old"),
                                            "a card someone owned before, refurbished or not, is 'used'"),
                            **dict.fromkeys(("brandnew", "unused", "sealed", "retail"), "a card bought new is 'new'")}}
#: Words for a method the schema names otherwise.
METHOD_WORDS = {**dict.fromkeys(("finetune", "fullfinetune", "sft", "fullft"),
                                "a fine-tune of every weight is 'full'"),
                **dict.fromkeys(("scratch", "fromscratch", "pretraining"),
                                "training from scratch is 'pretrain'"),
                **dict.fromkeys(("peft", "adapter", "adapters", "dora"),
                                "adapters on a frozen base are 'lora' (or 'qlora' on a 4-bit base)")}


def _bool(v: Any, ctx: _Context) -> Any:
    if not isinstance(v, bool):
        raise ValueError(f"expected true or false, got {v!r}")
    return v


def _auto_or_bool(v: Any, ctx: _Context) -> Any:
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


def too_much_work(gpu_hours_per_run: float, runs: int) -> str | None:
    """Why a phase's runs hold more work than a plan takes (None: they do not): at most
    MAX_GPU_HOURS reference GPU-hours in a phase, all its runs together. One rule for a file
    and for a what-if's edit (planner.model.edits), which holds its hours per run too."""
    total = gpu_hours_per_run * runs
    if total <= MAX_GPU_HOURS:
        return None
    return (f"{runs:,} runs of {gpu_hours_per_run:,.0f} h are {total:,.0f} reference GPU-hours; at most "
            f"{MAX_GPU_HOURS:,.0f} in a phase")


def phase_days_problems(start: dt.date, begin: dt.date, deadline: dt.date | None) -> list[tuple[str, str]]:
    """What is wrong with a phase's days, each as (its key, why): a start before the scenario's;
    a deadline, else a start, past the years a plan looks ahead, else a deadline before the
    phase's start. One rule for a file and for a what-if's edit of a deadline (planner.model.edits)."""
    out = []
    if begin < start:
        out.append(("from", f"phase starts {begin} before the scenario's start {start}"))
    if deadline is not None and deadline > _years_after(start, MAX_SPAN_YEARS):
        out.append(("deadline", f"deadline {deadline} is more than {MAX_SPAN_YEARS} years after the scenario's "
                                f"start {start}; the planner plans at most {MAX_SPAN_YEARS} years ahead"))
    elif begin > _years_after(start, MAX_SPAN_YEARS):
        out.append(("from", f"phase starts {begin}, more than {MAX_SPAN_YEARS} years after the scenario's start "
                            f"{start}"))
    elif deadline is not None and deadline < begin:  # both inclusive: a one-day phase is valid
        out.append(("deadline", f"deadline {deadline} is before the phase's start {begin}; move the deadline later "
                                "or 'from' earlier"))
    return out


MIN_HOURS = 0.01  # 36 s: less work than a session's setup is a typing mistake
MAX_RUNS = 10_000
MAX_JOB_AMOUNT = 1e15  # tokens or samples a pass: 50x the largest published pretraining
#: Devices in a machine or instances to be had at once: no offer counts more.
MAX_COUNT = 100_000
#: Phases a scenario may have: a plan of 100 phases takes about 3 s on two cores, of 1,000 more
#: than a user waits (bench: the lab's phases repeated); a real project has a handful.
MAX_PHASES = 100
MAX_HORIZON_MONTHS = 12 * MAX_SPAN_YEARS


_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                          "dec"), start=1)}


def date_meant(text: str) -> dt.date | None:
    """The date a text written another way can only mean: 2027-9-30, 2027/09/30, 30.09.2027
    (day.month.year), Sept 30 2027, 30 Sep 2027, 2027-09-30T12:00; None where it could mean
    two (01/04/2027: January or April) or none. What a refusal suggests, never read in its place."""
    t = text.strip()
    if (m := re.fullmatch(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ][\d:.]+Z?)?", t)) is not None:
        year, month, day = (int(g) for g in m.groups())
    elif (m := re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", t)) is not None:
        day, month, year = (int(g) for g in m.groups())
    elif (m := re.fullmatch(r"([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})", t)) is not None \
            and m.group(1)[:3].lower() in _MONTHS:
        month, day, year = _MONTHS[m.group(1)[:3].lower()], int(m.group(2)), int(m.group(3))
    elif (m := re.fullmatch(r"(\d{1,2})\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})", t)) is not None \
            and m.group(2)[:3].lower() in _MONTHS:
        day, month, year = int(m.group(1)), _MONTHS[m.group(2)[:3].lower()], int(m.group(3))
    else:
        return None
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _dates_meant(text: str) -> list[dt.date]:
    """What a refusal of a date suggests: the one date it can mean (:func:`date_meant`), or, for
    01/04/2027, each that day and month could be (the US's and most of the world's order)."""
    if (one := date_meant(text)) is not None:
        return [one]
    m = re.fullmatch(r"\s*(\d{1,2})/(\d{1,2})/(\d{4})\s*", text)
    if m is None:
        return []
    a, b, year = (int(g) for g in m.groups())
    out = []
    for month, day in ((a, b), (b, a)):
        try:
            out.append(dt.date(year, month, day))
        except ValueError:
            pass
    return sorted(set(out))


def date_hint(v: Any) -> str:
    """What a refusal of a date written otherwise adds: the date or dates it can mean
    (:func:`_dates_meant`), else the days a month written without one can mean
    (:func:`_month_days`), else what is wrong with a day past its month's end; else ''."""
    meant = _dates_meant(v) if isinstance(v, str) else []
    if meant:
        return f" (did you mean {' or '.join(d.isoformat() for d in meant)}?)"
    if isinstance(v, str) and (days := _month_days(v)):
        return f" (a month, not a day: did you mean {days}?)"
    return f" ({short})" if isinstance(v, str) and (short := _past_month_end(v)) else ""


def _month_days(text: str) -> str | None:
    """The day a month written without one can mean, as a refusal says it: 'end of June 2027'
    its last day, 'start of June 2027' its first, 'June 2027' (or 2027-06, 06/2027) either; a
    deadline is a day, and whether June's deadline is its first or its last day is 29 days of
    work. None where the text is no such month."""
    t = re.sub(r"\s+", " ", text.strip().lower())
    edge, _, rest = t.partition(" of ") if re.match(r"(end|start|beginning) of ", t) else ("", "", t)
    m = re.fullmatch(r"([a-z]{3,9})\.?,? (\d{4})", rest)
    named = [i for i in range(1, 13) if m and calendar.month_name[i].lower().startswith(m.group(1))]
    if m is not None and named:  # June, Jun, Sept: the start of a month's name
        month, year = named[0], int(m.group(2))
    elif (m := re.fullmatch(r"(\d{4})[-/](\d{1,2})|(\d{1,2})/(\d{4})", rest)) is not None:
        year, month = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(4)), int(m.group(3)))
    else:
        return None
    if not 1 <= month <= 12 or not 1 <= year <= 9999:
        return None
    first = dt.date(year, month, 1)
    last = dt.date(year, month, calendar.monthrange(year, month)[1])
    if edge == "end":
        return f"{last}, its last day"
    if edge:
        return f"{first}, its first day"
    return f"{last}, its last day, or {first}, its first"


def _past_month_end(text: str) -> str | None:
    """What is wrong with a day past its month's end (2027-02-30, 2027-04-31): the month's days."""
    m = re.fullmatch(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*", text)
    if m is None or not 1 <= int(m.group(2)) <= 12:
        return None
    year, month, day = (int(g) for g in m.groups())
    days = calendar.monthrange(year, month)[1]
    return f"{calendar.month_name[month]} {year} has {days} days" if day > days else None


def _date(v: Any, ctx: _Context) -> Any:
    if isinstance(v, dt.datetime):
        v = v.date()
    elif isinstance(v, str):
        try:
            v = dt.date.fromisoformat(v.strip())
        except ValueError:
            pass
    if not isinstance(v, dt.date):
        raise ValueError(f"expected a date such as 2027-05-31, got {v!r}{date_hint(v)}")
    if not FIRST_DATE <= v <= LAST_DATE:
        raise ValueError(f"expected a date between {FIRST_DATE} and {LAST_DATE}, got {v}")
    return v


def _positive_int(v: Any, ctx: _Context) -> Any:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        thousands = isinstance(v, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*[kK]\s*", v)
        word = units.number_in_words(v) if isinstance(v, str) else None  # 'runs: two', suggested as 2
        raise ValueError(f"expected a whole number of at least 1, got {str(v)[:40]!r}"
                         + (" (write it out, e.g. 2048: a 'k' could mean 1,000 or 1,024)" if thousands else
                            f" (did you mean {word}?)" if word else ""))  # (never 0: 'zero' is no count)
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
def _checkpoint_every(v: Any, ctx: _Context) -> Any:
    h = _q(_hours, positive=True)(v, ctx)
    if h < MIN_CHECKPOINT_EVERY_H - 1e-12:
        raise ValueError(f"expected at least 1 min between checkpoints, got {v!r}")
    return h



_OFFER_ID = re.compile(r"[a-z0-9][a-z0-9._:+-]*")


def _offer_id(v: Any, ctx: _Context) -> Any:
    """A catalog id: lowercase letters, digits and . _ : + - (docs/scenario.md's identifiers)."""
    text = _text(v, ctx)
    if not _OFFER_ID.fullmatch(text):
        raise ValueError(f"expected an id of lowercase letters, digits, '-', '.', ':' such as rtx-3090-used "
                         f"or uni:a100, got {text!r}")
    return text


def _years_after(d: dt.date, years: int) -> dt.date:
    return d.replace(year=min(d.year + years, dt.MAXYEAR), day=min(d.day, 28))


def _int_at_most(largest: int) -> Callable[[Any, _Context], Any]:
    """A whole number from 1 to ``largest``."""
    def convert(v: Any, ctx: _Context) -> Any:
        n = _positive_int(v, ctx)
        if n > largest:
            raise ValueError(f"expected a whole number from 1 to {largest:,}, got {str(v)[:40]!r}")
        return n
    return convert


#: Most draws an uncertainty analysis takes (a thousand take well under a second).
MAX_SAMPLES = 100_000


def _samples(v: Any, ctx: _Context) -> Any:
    if isinstance(v, bool) or not isinstance(v, int) or not (v == 0 or 10 <= v <= MAX_SAMPLES):
        raise ValueError(f"expected 0 (off) or a number of draws from 10 to {MAX_SAMPLES:,}, such as 1000, "
                         f"got {v!r}")
    return v


def _runs(v: Any, ctx: _Context) -> Any:
    n = _positive_int(v, ctx)
    if n > MAX_RUNS:
        raise ValueError(f"expected at most {MAX_RUNS:,} runs, got {str(v)[:40]!r}")
    return n


def _q(parse: Callable[[Any, _Context], float], positive: bool = False, nonneg: bool = True,
       maximum: float | None = None, unit: str = "",
       minimum: float | None = None) -> Converter:
    """Wrap a units.parse_* function; check the sign and, where given, the sensible range."""
    def convert(v: Any, ctx: _Context) -> Any:
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


def _count(v: Any, ctx: _Context) -> Any:
    return units.parse_count(v)


def _hours(v: Any, ctx: _Context) -> Any:
    return units.parse_duration_h(v)


def _minutes(v: Any, ctx: _Context) -> Any:
    return units.parse_duration_h(v, default_unit="min") * 60.0


def _seconds(v: Any, ctx: _Context) -> Any:
    return units.parse_duration_h(v, default_unit="s") * 3600.0


def _days(v: Any, ctx: _Context) -> Any:
    return units.parse_duration_h(v, default_unit="days") / 24.0


def _months(v: Any, ctx: _Context) -> Any:
    return units.parse_duration_h(v, default_unit="months") / units.HOURS_PER_MONTH


def _size(v: Any, ctx: _Context) -> Any:
    return units.parse_size_gb(v)


def _gb_per_h(v: Any, ctx: _Context) -> Any:
    return units.parse_data_rate_gb_per_h(v)


def _power(v: Any, ctx: _Context) -> Any:
    return units.parse_power_w(v)


def _money(v: Any, ctx: _Context) -> Any:
    return units.parse_money_usd(v, ctx.currency, ctx.ids.usd_per_unit)


def _usd_per_hour(v: Any, ctx: _Context) -> Any:
    return units.parse_money_rate_usd(v, ctx.currency, ctx.ids.usd_per_unit, per="h")


def _usd_per_month(v: Any, ctx: _Context) -> Any:
    """Money a month: "9.99 USD/month", "120 EUR/year", or money alone ("1024 INR", a bare number
    in the currency), which a fee is by the month."""
    if not (isinstance(v, str) and "/" in v):
        return units.parse_money_usd(v, ctx.currency, ctx.ids.usd_per_unit)
    return units.parse_money_rate_usd(v, ctx.currency, ctx.ids.usd_per_unit, per="month") * units.HOURS_PER_MONTH


#: "/unit", "/units" or "/compute unit" ending a price of a compute unit.
_PER_UNIT = re.compile(r"/\s*(compute\s+)?units?\s*$", re.IGNORECASE)


def _usd_per_unit(v: Any, ctx: _Context) -> Any:
    """Money for one compute unit: "0.10 EUR", "0.10 EUR/unit" or a bare number in the currency."""
    if isinstance(v, str) and _PER_UNIT.search(v.strip()):
        v = _PER_UNIT.sub("", v.strip())
    return units.parse_money_usd(v, ctx.currency, ctx.ids.usd_per_unit)


def _usd_per_kwh(v: Any, ctx: _Context) -> Any:
    return units.parse_money_rate_usd(v, ctx.currency, ctx.ids.usd_per_unit, per="kWh")


def _usd_per_gb(v: Any, ctx: _Context) -> Any:
    return units.parse_money_rate_usd(v, ctx.currency, ctx.ids.usd_per_unit, per="GB")


def _usd_per_gb_month(v: Any, ctx: _Context) -> Any:
    return units.parse_money_rate_usd(v, ctx.currency, ctx.ids.usd_per_unit, per="GB/month")


def _starts_per_day(v: Any, ctx: _Context) -> Any:
    return units.parse_rate(v, per_h=24.0, numerator="count", example="2 restarts/day")


def _per_hour(v: Any, ctx: _Context) -> Any:
    return units.parse_rate(v, per_h=1.0, numerator="count", example="0.02/h")


def _hours_per_week(v: Any, ctx: _Context) -> Any:
    return units.parse_rate(v, per_h=units.HOURS_PER_WEEK, numerator="duration", example="30 h/week")


def _currency(v: Any, ctx: _Context) -> Any:
    if not isinstance(v, str) or v.upper() not in ctx.ids.usd_per_unit:
        hint = did_you_mean(str(v).upper(), ctx.ids.usd_per_unit)
        raise ValueError(f"expected a currency code the catalog has a rate for "
                         f"({', '.join(sorted(ctx.ids.usd_per_unit))}), got {v!r}{hint}")
    return v.upper()


#: Countries by the names people write for them, for the code a grid is given by ('germany': de):
#: suggested where the catalog has the country's grid, never read in its place.
COUNTRY_CODES = {"germany": "de", "deutschland": "de", "united states": "us", "usa": "us", "america": "us",
                 "france": "fr", "united kingdom": "gb", "uk": "gb", "england": "gb", "britain": "gb",
                 "great britain": "gb", "netherlands": "nl", "the netherlands": "nl", "holland": "nl",
                 "sweden": "se", "norway": "no", "poland": "pl", "italy": "it", "spain": "es", "china": "cn",
                 "japan": "jp", "korea": "kr", "south korea": "kr", "india": "in", "canada": "ca",
                 "australia": "au", "brazil": "br", "singapore": "sg", "switzerland": "ch", "finland": "fi",
                 "ireland": "ie", "taiwan": "tw", "belgium": "be"}


def _grid(v: Any, ctx: _Context) -> Any:
    """A zone of the catalog's grid table (a country code in any case), a region the catalog
    prices electricity for within a country of it (us-ca: the US grid, California's price;
    the validator splits it), or an intensity."""
    if isinstance(v, str) and v.strip().lower() in ctx.ids.grid_zones:
        return v.strip().lower()
    if isinstance(v, str) and grid_of_region(v.strip().lower(), ctx.ids) is not None:
        return v.strip().lower()
    if (isinstance(v, (int, float)) and not isinstance(v, bool)) or (isinstance(v, str) and v.strip()[:1].isdigit()):
        g = units.parse_intensity(v)
        if not 0 <= g <= 2000:
            raise ValueError(f"expected an intensity between 0 and 2,000 g/kWh, got {v!r}")
        return g
    if v is False and "no" in ctx.ids.grid_zones:  # YAML 1.1: an unquoted no (Norway) is false
        raise ValueError("got false: YAML reads an unquoted no as false; for Norway write grid: 'no' (in quotes)")
    named = COUNTRY_CODES.get(re.sub(r"[\s_-]+", " ", str(v).strip().lower()))
    hint = (f" (did you mean '{named}'?)" if named in ctx.ids.grid_zones else
            did_you_mean(str(v).strip().lower(), sorted({*ctx.ids.grid_zones, *ctx.ids.electricity_usd_per_kwh_by_region})))
    raise ValueError(f"unknown grid {v!r}{hint}: a country (de, us), a zone of `planner pricing list --grid`, "
                     "a region of `planner pricing list --electricity` (us-ca), or an intensity such as 350 g/kWh")


def grid_of_region(region: str, ids: CatalogIds) -> str | None:
    """The grid zone of an electricity region that is not a zone itself: its country, the part
    before the first '-' (us-ca: us; jp-tokyo: jp), where the catalog has both; else None."""
    country = region.split("-", 1)[0]
    if region in ids.grid_zones or region not in ids.electricity_usd_per_kwh_by_region or country == region:
        return None
    return country if country in ids.grid_zones else None


def _usd_per_kg(v: Any, ctx: _Context) -> Any:
    return units.parse_money_per_mass_usd(v, ctx.currency, ctx.ids.usd_per_unit)


def _mass_kg(v: Any, ctx: _Context) -> Any:
    return units.parse_mass_kg(v)


def _amount(word: str) -> Callable[[Any, _Context], Any]:
    def convert(v: Any, ctx: _Context) -> Any:
        x = units.parse_amount(v, word)
        if x <= 0:
            raise ValueError(f"expected a count of {word} above zero, got {v!r}")
        if x > MAX_JOB_AMOUNT:
            raise ValueError(f"expected at most {MAX_JOB_AMOUNT:.0e} {word}, got {v!r}")
        return x
    return Converter(convert, word)


def _epochs(v: Any, ctx: _Context) -> Any:
    """A number of passes: 3, 0.5 or '3 epochs'."""
    if isinstance(v, str):
        text = v.strip().lower().removesuffix("epochs").removesuffix("epoch").strip()
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number of epochs such as 3, got {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"expected a number of epochs such as 3, got {v!r}")
    return float(v)


def _model(v: Any, ctx: _Context) -> Any:
    if not isinstance(v, str):
        raise ValueError(f"expected a model id such as llama-3.1-8b, got {v!r}")
    key = v.strip().lower()
    if key in ctx.ids.models:
        return key
    hint = did_you_mean(key, sorted(ctx.ids.models))
    raise ValueError(f"unknown model {v!r}{hint}; `planner pricing list --models` lists them")


def _device(v: Any, ctx: _Context) -> Any:
    if not isinstance(v, (str, int)) or isinstance(v, bool):
        raise ValueError(f"expected a device id such as rtx-3060-12gb, got {v!r}")
    key = str(v).strip().lower()
    if key in ctx.ids.devices:
        return key
    if key in ctx.ids.aliases:
        device = ctx.ids.aliases[key]
        others = sorted(d for d in ctx.ids.devices if d != device and d.startswith(key))
        if others:  # 'a100' is the 40 GB card; the 80 GB ones go by the name too: said up front
            ctx.read_as.append(f"{str(v).strip()!r} is read as {device}; {' and '.join(others)} "
                               f"{'goes' if len(others) == 1 else 'go'} by that name too (name the one you mean)")
        return device
    hint = did_you_mean(key, sorted(ctx.ids.devices | set(ctx.ids.aliases)))
    raise ValueError(f"unknown device {v!r}{hint}; `planner pricing list --devices` lists them")


#: A count before a device id, as people write how many cards they own ('2x rtx-3090', '2 x 3090').
_COUNTED = re.compile(r"^\s*(\d+)\s*[x×*]?\s+(\S.*?)\s*$|^\s*(\d+)\s*[x×*]\s*(\S.*?)\s*$", re.IGNORECASE)


def _devices(v: Any, ctx: _Context) -> Any:
    """Device ids, one per card: two cards of a model are the id twice ([rtx-3090, rtx-3090]);
    '2x rtx-3090' is refused with the list it means."""
    if isinstance(v, (str, int)) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list):
        raise ValueError(f"expected a list of device ids such as [gtx-1060-6gb], got {v!r}")
    out = []
    for x in v:
        m = _COUNTED.match(x) if isinstance(x, str) else None
        if m is not None and 1 <= int(m.group(1) or m.group(3)) <= 16:
            n, name = int(m.group(1) or m.group(3)), m.group(2) or m.group(4)
            try:
                device = _device(name, ctx)
            except ValueError:
                device = None
            if device is not None:
                raise ValueError(f"unknown device {x!r}: one id per card; {n} of them are "
                                 f"[{', '.join([device] * n)}]")
        out.append(_device(x, ctx))
    return tuple(out)


def _measured_speeds(v: Any, ctx: _Context) -> Any:
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


#: A credit's keys (you.credits), and those people write for them: a grant "expires", "starts".
CREDIT_KEYS = ("amount", "providers", "from", "until", "name")
_CREDIT_SYNONYMS = {"expires": "until", "expiry": "until", "expiration": "until", "expires_on": "until",
                    "valid_until": "until", "end": "until", "ends": "until", "to": "until",
                    "start": "from", "starts": "from", "valid_from": "from", "granted": "from",
                    "value": "amount", "usd": "amount", "credit": "amount", "cloud": "providers"}


def synonym_of(key: Any, keys: Collection[str], synonyms: Mapping[str, str]) -> str | None:
    """The key of ``keys`` a word people write stands for (``synonyms``), which an unknown key's
    refusal suggests before any close spelling: an entry's 'cost' is its price, not the 'count' it
    is spelt close to; None where the word is none of them."""
    meant = synonyms.get(key.lower()) if isinstance(key, str) else None
    return meant if meant in keys else None


def _credit_key_meant(key: str) -> str:
    """' (did you mean ...?)' for an unknown key of a credit: the key it stands for ('expires':
    'until', :func:`synonym_of`), else a close spelling ('provider': 'providers'); else ''."""
    meant = synonym_of(key, CREDIT_KEYS, _CREDIT_SYNONYMS)
    return f" (did you mean '{meant}'?)" if meant else did_you_mean(key, CREDIT_KEYS)


def _credits(v: Any, ctx: _Context) -> Any:
    """``[{amount: 5000 USD, providers: [aws], from: 2027-03-01, until: 2027-06-30, name: AWS grant}]``."""
    if isinstance(v, tuple) and all(isinstance(c, Credit) for c in v):
        return v  # canonical already
    if not isinstance(v, list):
        raise ValueError("expected a list of credits such as [{amount: 5000 USD, providers: [aws], until: 2027-06-30}]")
    if len(v) > MAX_CREDITS_LISTED:
        raise ValueError(f"{len(v):,} credits; at most {MAX_CREDITS_LISTED:,} (credits of the same providers and "
                         "dates combine into one)")
    providers_known = sorted({provider_of(i) for i in ctx.ids.rent | ctx.user_ids["rent"] if ":" in i})
    out = []
    wrong = [f"credit {i + 1}: unknown key{'s' if len(keys) > 1 else ''} "
             + " and ".join(f"{k!r}{_credit_key_meant(k)}" for k in keys)
             for i, c in enumerate(v) if isinstance(c, dict) and (keys := sorted(set(map(str, c)) - set(CREDIT_KEYS)))]
    if wrong:  # every credit's, at once
        raise ValueError(f"{'; '.join(wrong)}; expected {', '.join(CREDIT_KEYS)}")
    for i, c in enumerate(v):
        if not isinstance(c, dict):
            raise ValueError(f"credit {i + 1}: expected a mapping with amount, providers, from, until")
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


def _trend(v: Any, ctx: _Context) -> Any:
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
        raise ValueError(expected + _yearly_meant(v)) from None
    if not -0.9 <= x <= 1.0:
        raise ValueError(expected)
    return x


#: A share a year as people write it: '-20% per year', '-20% a year', '-20%/yr', '-20% p.a.', '-20% yearly'.
_YEARLY = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?\s*%?)\s*(?:(?:per|a|an|/|every)\s*(?:year|yr|annum)|p\.?\s*a\.?|yearly"
                     r"|annually)\s*$", re.IGNORECASE)


def _yearly_meant(v: Any) -> str:
    """' (did you mean ...?)' for a yearly change written another way ('-20% per year': '-20%/year');
    else ''. Suggested, never read in its place."""
    m = _YEARLY.match(str(v)) if isinstance(v, str) else None
    return f" (did you mean '{m.group(1).replace(' ', '')}/year'?)" if m else ""


def _rent_trend(v: Any, ctx: _Context) -> Any:
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


def _frameworks(v: Any, ctx: _Context) -> Any:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list):
        raise ValueError(f"expected a list of frameworks ({', '.join(FRAMEWORKS)}), got {v!r}")
    return tuple(_enum(FRAMEWORKS)(x, ctx) for x in v)


@stated_unit("fraction")
def _confidence(v: Any, ctx: _Context) -> Any:
    try:
        x = units.parse_fraction(v)
    except units.QuantityError:
        x = math.nan
    if not 0.5 <= x <= 0.999:
        raise ValueError(f"expected a chance from 50% to 99.9%, got {v!r}{units.percent_hint(v)}")
    return x



def _money_or_fraction(v: Any, ctx: _Context) -> Any:
    """Resale: money ("300 USD"), a share of the price ("40%"), or a multiple of the resale
    model's figure ("0.9x": what a sensitivity moves where the model gives a card's resale)."""
    if isinstance(v, str) and v.strip().endswith("%"):
        return ("fraction", units.parse_fraction(v))
    if isinstance(v, str) and v.strip().lower().endswith("x"):
        try:
            factor = float(v.strip()[:-1])
        except ValueError:
            raise ValueError(f"expected a multiple of the resale model such as 0.9x, got {v!r}") from None
        if not (math.isfinite(factor) and factor >= 0):
            raise ValueError(f"expected a multiple of the resale model of zero or more, got {v!r}")
        return ("model", factor)
    if isinstance(v, float) and 0 <= v <= 1:
        return ("fraction", v)
    try:
        return ("usd", _q(_money)(v, ctx))
    except ValueError as exc:
        if hint := units.percent_hint(v):  # a share written out: the share it means
            raise ValueError(f"expected a share of the price such as 40%, got {v!r}{hint}") from None
        raise ValueError(f"{exc} (or a share of the price such as 40%, or a multiple of the resale model such "
                         "as 0.9x)") from None


def _patterns(kind: str) -> Callable[[Any, _Context], Any]:
    def convert(v: Any, ctx: _Context) -> Any:
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


#: The card a job described by its tokens or samples is estimated on when the workload names none:
#: the one the utilisation of data-centre GPUs was measured on (planner.model.job's
#: UTILISATION_MEASURED_ON), whose hours people quote ("A100-hours"). Every other device's hours
#: follow from the speed model; a reference given reads them through its own ratio instead.
DEFAULT_REFERENCE_GPU = "a100-80gb"

WORKLOAD = {
    "model": Field(_model, doc="a named model (llama-3.1-8b, gpt2, resnet-50: `planner pricing list --models`); "
                   "fills family, params, and the shape a job's FLOPs need"),
    "family": Field(_enum(FAMILIES, FAMILY_WORDS), doc="architecture: " + " | ".join(FAMILIES) + "; required unless model"),
    "params": Field(_q(_count, positive=True, maximum=1e13, unit="parameters"),
                    doc="the model's parameters (86M, 7B); required unless model"),
    "precision": Field(_enum(PRECISIONS, PRECISION_WORDS), default="mixed", doc=" | ".join(PRECISIONS)),
    "optimizer": Field(_enum(OPTIMIZERS), default="adam", doc=" | ".join(OPTIMIZERS)),
    "batch_size": Field(_int_at_most(1_000_000), default=32,
                        doc="samples per optimizer step on one GPU or TPU core; a machine of several runs this many on "
                            "each (data parallel, as the measured multi-GPU speeds do)"),
    "activation_memory": Field(_q(_size, maximum=1e5, unit="GB"), attr="activation_memory_gb",
                               doc="measured at batch_size; estimated when absent"),
    "sequence_length": Field(_int_at_most(10_000_000), doc="tokens per sample (transformer, rnn)"),
    "image_size": Field(_int_at_most(100_000), doc="pixels per side (cnn; a named vision transformer's tokens follow it)"),
    "reference_gpu": Field(_device, doc="the GPU on which the phases' gpu_hours were measured; required where a phase "
                                        "gives gpu_hours. Phases that describe their job (tokens, samples) alone: "
                                        f"their hours are estimated on {DEFAULT_REFERENCE_GPU} when not given"),
    "method": Field(_enum(METHODS, METHOD_WORDS), default="full",
                    doc="full | pretrain (both train every weight) | lora | qlora (adapters on a frozen base)"),
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
    "gpu_hours": Field(_q(_hours, positive=True, maximum=MAX_GPU_HOURS, unit="h", minimum=MIN_HOURS),
                       attr="gpu_hours_per_run", doc="work per run, in hours on reference_gpu (or describe the job: "
                       "tokens or samples); wins where both are given"),
    "tokens": Field(_amount("tokens"), doc="the job's tokens per epoch (40M, 1.2T): its hours are estimated from the "
                    "workload's model, method and precision (`planner estimate`)"),
    "samples": Field(_amount("samples"), doc="or its samples per epoch: images, sequences of sequence_length or "
                     "examples (50k, or 50k images)"),
    "epochs": Field(_q(_epochs, positive=True, maximum=100_000), doc="passes over the tokens or samples (3, or "
                    "'3 epochs'); default 1"),
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
    "own": Field(_devices, default=(), doc="cards already owned: no purchase, still electricity; a card listed "
                 "twice is two, one machine of two, as a bought box is: a phase's runs go side by side on it, one "
                 "a card, and a single run on both data-parallel"),
    "host_machine": Field(_bool, default=True, doc="a desktop for your cards, owned or new; false: running any "
                          "card at home needs a host computer bought (host_price)"),
    "host_power": Field(_q(_power, maximum=100_000, unit="W"), attr="host_power_w", default=DEFAULT_HOST_POWER_W,
                        doc="what the rest of the desktop draws while training"),
    "time_value": Field(_q(_usd_per_hour, maximum=1e6, unit="USD/h"), attr="time_value_usd_per_hour", default=0.0,
                        doc="an hour of your attention; 0 ignores it"),
    "attention": Field(_q(_starts_per_day, positive=True, maximum=10_000, unit="starts a day"),
                       attr="attention_starts_per_day", default=DEFAULT_ATTENTION_PER_DAY,
                       doc="how often you can start a session by hand"),
    "budget": Field(_q(_money, maximum=1e12, unit="USD"), attr="budget_usd",
                    doc="cap on cash spent during the plan: cards at their price (resale comes back only after the "
                        "horizon), host, rent, electricity, storage, egress; none when absent"),
    "host_price": Field(_q(_money, maximum=1e9, unit="USD"), attr="host_price_usd",
                        doc="what a host computer costs when host_machine is false; given without host_machine, "
                            "a host is bought for the cards (host_machine false)"),
    "credits": Field(_credits, default=(),
                     doc="money providers grant: each {amount, providers: [aws, ...], from, until, name}; it pays their "
                         "rent before cash does, between from and until (inclusive), and what is left then is lost"),
    "grid": Field(_grid, doc="where your electricity comes from: a country (de, us, fr), a zone of `planner pricing list "
                  "--grid`, a region of `planner pricing list --electricity` within a country (us-ca: the US grid, "
                  "California's price), or an intensity (350 g/kWh); default: the world average (said in the answer)"),
    "carbon_price": Field(_q(_usd_per_kg, unit="USD/t"), attr="carbon_usd_per_kg",
                          doc="a price on emissions (80 EUR/t): the plan minimises cost plus emissions at this price; "
                              "none: emissions are reported, not priced"),
    "max_co2": Field(_q(_mass_kg, positive=True, unit="kg"), attr="max_co2_kg",
                     doc="a cap on the plan's emissions (500 kg, 2 t): operation and the making of cards bought"),
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


def build(cls: type[T], schema: Mapping[str, Any], values: Mapping[str, Any], **extra: Any) -> T:
    """A ``cls`` from a section's checked values, each missing key taking its schema default."""
    fields = {(f.attr or key): values.get(key, f.default) for key, f in schema.items() if isinstance(f, Field)}
    return cls(**fields, **extra)


def section_values(obj: object, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a section from the dataclass built from it (the inverse of :func:`build`),
    blanks left out."""
    values = {key: getattr(obj, f.attr or key) for key, f in schema.items() if isinstance(f, Field)}
    return {k: v for k, v in values.items() if v is not None}


#: How a number in a catalog column's unit (columns.csv) is read from a scenario's text.
_READ_UNIT: dict[str, Callable[[Any, Any], float]] = {
    "USD": _money, "USD/h": _usd_per_hour, "W": _power, "s": _seconds, "min": _minutes, "h": _hours,
    "days": _days, "1/h": _per_hour, "h/week": _hours_per_week, "GB": _size, "GB/h": _gb_per_h, "USD/GB": _usd_per_gb,
    "USD/(GB*month)": _usd_per_gb_month, "USD/month": _usd_per_month, "USD/unit": _usd_per_unit,
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
        convert = _enum(tuple(kind[5:].split("|")), ENUM_WORDS.get(column))
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
        # money, a share of the price or a multiple of the model: one key for three columns
        "resale": ("resale", Field(_money_or_fraction, doc="money, a share of the price (60%), or a multiple "
                                   "of the resale model's figure (0.9x); default: the resale model (planner "
                                   "pricing show ID)")),
        "power": "power_w",
    }),
    "rent": _entry("rent", {
        "provider": "provider", "region": "region", "count": "count", "price": "usd_per_hour", "spot": "spot",
        "billing": ("billing_s", {"positive": True}), "startup": "startup_min",
        "session_limit": ("session_limit_h", {"positive": True}), "interruptions": "interruptions_per_h",
        "setup": "setup_min", "supply": "supply", "storage": "storage_usd_per_gb_month", "egress": "egress_usd_per_gb",
        "transfer": ("transfer_gb_per_h", {"positive": True}),
        "term": ("term_days", {"positive": True, "maximum": 5 * 365,
                               "doc": "a commitment: paid for every hour of this long from the day the plan "
                                      "starts it, used or not (1 year, 7 days); the plan chooses start and count"}),
        "frameworks": "frameworks", "sign_up": "sign_up", "long_runs": "long_runs",
    }),
    "free": _entry("free", {
        "session_limit": ("session_limit_h", {"positive": True}), "idle_timeout": "idle_timeout_min",
        "quota": "quota_h_per_week", "quota_reset": "quota_reset", "quota_group": "quota_group",
        "setup": "setup_min", "interruptions": "interruptions_per_h", "persistent_storage": "persistent_storage",
        "transfer": ("transfer_gb_per_h", {"positive": True}),
        "needs_person": "needs_person", "frameworks": "frameworks", "sign_up": "sign_up",
        "disk": ("disk_gb", {"positive": True, "maximum": 1e6}),
        # a tier priced in compute units (Colab's): its fee and its unit's price where you pay another
        "fee": ("usd_per_month", {"positive": True, "maximum": 1e5,
                                  "doc": "a subscription's monthly fee where yours differs (9.99 USD/month; in "
                                         "another country, its price there): a catalog tier with a fee only"}),
        "unit_price": ("usd_per_unit", {"positive": True, "maximum": 1e3,
                                        "doc": "a compute unit's price where yours differs (0.10 EUR): a catalog "
                                               "tier priced in compute units only (its GPUs' burn rates are the "
                                               "catalog's)"}),
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
                         doc="default: the catalog's price for you.grid's region where it has one, else its default "
                             "region; stated in the report"),
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


def key_unit(path: str, columns: pd.DataFrame, currency: str) -> str:
    """The unit a bare number takes for the key at ``path`` (a --set/--vary path such as
    ``phases.final.gpu_hours`` or ``catalog.rent[ID].price``): the key's unit, money in the
    scenario's currency (docs/scenario.md: bare amounts are in it); '' when it has none."""
    parts = re.sub(r"\[[^\]]*\]", "[]", path).split(".")
    if len(parts) >= 3 and parts[0] == "phases":
        parts[1] = "<name>"
    wanted = ".".join(parts)
    unit = next((r["unit"] for r in schema_rows(columns) if r["key"] == wanted), "")
    return re.sub(r"\bUSD\b", currency, unit)


def schema_rows(columns: pd.DataFrame, schema: Mapping[str, Any] | None = None, prefix: str = "") -> list[dict[str, Any]]:
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
