"""Quantities with units, as written in scenario and catalog files.

A quantity is a number with an optional unit ("30 min", "86M", "0.18 USD/kWh").
Each ``parse_*`` function takes the raw YAML value (a number or a string) and
returns a float in the canonical unit named by the function: hours, GB
(decimal), watts, USD. A bare number takes the key's default unit. A unit of
another kind raises :class:`QuantityError` whose text says what was expected;
the scenario loader adds the file position and key path.

Units follow docs/scenario.md, "Quantities".
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pricing.errors import did_you_mean

DAYS_PER_YEAR = 365.25
DAYS_PER_MONTH = DAYS_PER_YEAR / 12  # 30.4375 days (docs/scenario.md): a year is 12 months exactly
HOURS_PER_MONTH = DAYS_PER_MONTH * 24
HOURS_PER_YEAR = DAYS_PER_YEAR * 24
HOURS_PER_WEEK = 7 * 24
#: Checkpointing more often than this is not a training setup (a write takes longer); the
#: session model's cost grows with checkpoints per session, so it bounds both what a scenario
#: may ask and what the planner recommends [h].
MIN_CHECKPOINT_EVERY_H = 1 / 60
WEEKS_PER_MONTH = DAYS_PER_MONTH / 7

DURATION_H = {
    "s": 1 / 3600, "sec": 1 / 3600, "second": 1 / 3600, "seconds": 1 / 3600,
    "min": 1 / 60, "mins": 1 / 60, "minute": 1 / 60, "minutes": 1 / 60,
    "h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0,
    "d": 24.0, "day": 24.0, "days": 24.0,
    "week": HOURS_PER_WEEK, "weeks": HOURS_PER_WEEK,
    "month": HOURS_PER_MONTH, "months": HOURS_PER_MONTH,
    "year": HOURS_PER_YEAR, "years": HOURS_PER_YEAR,
}
SIZE_GB = {
    "mb": 1e-3, "gb": 1.0, "tb": 1e3,
    "mib": 2**20 / 1e9, "gib": 2**30 / 1e9, "tib": 2**40 / 1e9,
}
COUNT_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9}
#: Mass of CO2-equivalent in kg (a tonne is 1,000 kg).
MASS_KG = {"g": 1e-3, "kg": 1.0, "t": 1e3, "tonne": 1e3, "tonnes": 1e3, "tco2e": 1e3, "kgco2e": 1.0}
#: A grid's carbon intensity in g per kWh.
INTENSITY_G_PER_KWH = {"g/kwh": 1.0, "gco2e/kwh": 1.0, "kg/kwh": 1e3, "kg/mwh": 1.0, "t/mwh": 1e3}
POWER_W = {"w": 1.0, "kw": 1e3}
ENERGY_KWH = {"kwh": 1.0, "wh": 1e-3, "mwh": 1e3}

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_QUANTITY = re.compile(rf"^\s*({_NUMBER})\s*([^\d\s].*?)?\s*$")


class QuantityError(ValueError):
    """A value that is not a quantity of the expected kind; ``str`` says why."""


def _kind_of(unit: str) -> str | None:
    """Name the kind a unit belongs to, for 'got a size' style messages."""
    u = unit.lower()
    if u in DURATION_H or unit in DURATION_H:
        return "duration"
    if u in SIZE_GB:
        return "size"
    if u in POWER_W:
        return "power"
    if u in ENERGY_KWH:
        return "energy"
    if "/" in unit:
        return "rate"
    if u == "%":
        return "fraction"
    return None


def _range_meant(text: str) -> str | None:
    """A range or an estimate written another way, as a scenario writes it: '200-300 h' is
    '200..300 h', '~250' is '250' (docs/scenario.md, 'Ranges'); None for anything else."""
    if (m := re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([^\d\s.-]*)\s*[-–]\s*(\d+(?:\.\d+)?)\s*(.*?)\s*", text)) is not None:
        low, unit, high, after = m.groups()
        return f"{low}..{high}" + (f" {after or unit}" if after or unit else "")
    if (m := re.fullmatch(r"\s*(?:~|about|approx\.?|ca\.?)\s*(\d.*?)\s*", text)) is not None:
        return m.group(1)
    return None


#: A number written with thousands separators ('4,000 h', '1,200 GB'), or with a K/M suffix and
#: then a unit after a space ('4k hours'; never '4 kWh', a unit of its own).
_GROUPED = re.compile(r"\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?)\s*(.*?)\s*")
_SUFFIXED = re.compile(r"\s*(\d+(?:\.\d+)?)([kKM])\s+(\S.*?)\s*")


def _written_out(text: str) -> tuple[str, str] | None:
    """(The number written out, its unit) of a quantity written with thousands separators or a
    K/M suffix before its unit ('4,000 h' and '4k hours' are 4000 h), else None: what a refusal
    suggests, never read in its place."""
    if (m := _GROUPED.fullmatch(text)) is not None:
        return m.group(1).replace(",", ""), m.group(2)
    if (m := _SUFFIXED.fullmatch(text)) is not None:
        number = float(m.group(1)) * {"k": 1e3, "m": 1e6}[m.group(2).lower()]
        return format_significant(number, 12), m.group(3)
    return None


def _split(value: object, expected: str) -> tuple[float, str]:
    """Split a raw value into (number, unit text); unit is '' for a bare number."""
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"expected {expected}, got {value!r}")
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"expected {expected} (a finite number), got {value!r}")
        try:
            return float(value), ""
        except OverflowError:  # an integer of hundreds of digits
            raise QuantityError(f"expected {expected}, got a number of {len(str(value))} digits") from None
    if not isinstance(value, str):
        raise QuantityError(f"expected {expected}, got {type(value).__name__}")
    m = _QUANTITY.match(value)
    if not m:
        hint = _range_meant(value) or (" ".join(filter(None, out)) if (out := _written_out(value)) else None)
        raise QuantityError(f"expected {expected}, got {value!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
    number = float(m.group(1))
    if number != number or number in (float("inf"), float("-inf")):
        raise QuantityError(f"expected {expected} (a finite number), got {value!r}")
    return number, (m.group(2) or "").strip()


def split_range(value: object) -> tuple[str, str] | None:
    """A range as written in a scenario (docs/scenario.md, 'Ranges'), as its two ends, or None.

    ``200..300`` and ``200 h..300 h`` (a unit after the second end applies to both);
    ``250 h ± 20%`` (also ``+/-`` and ``+-``) and ``0.4 USD/h ± 0.1``: the ends are the middle less and
    plus the spread, in the middle's unit."""
    if not isinstance(value, str):
        return None
    if ".." in value:
        left, right = (s.strip() for s in value.split("..", 1))
        lm, rm = _QUANTITY.match(left), _QUANTITY.match(right)
        if not (lm and rm):
            return None
        unit = (rm.group(2) or "").strip()
        if not (lm.group(2) or "").strip() and unit:
            left = f"{left} {unit}"
        return left, right
    for sign in ("±", "+/-", "+-"):
        if sign in value:
            middle, spread = (s.strip() for s in value.split(sign, 1))
            mm = _QUANTITY.match(middle)
            if not mm or not spread:
                return None
            number, unit = float(mm.group(1)), (mm.group(2) or "").strip()
            if spread.endswith("%"):
                width = number * float(spread[:-1].strip()) / 100.0
            else:
                sm = _QUANTITY.match(spread)
                if not sm or ((sm.group(2) or "").strip() not in ("", unit)):
                    return None
                width = float(sm.group(1))
            return f"{number - abs(width):.12g} {unit}".strip(), f"{number + abs(width):.12g} {unit}".strip()
    return None


#: Units people spell out, by the symbol the planner reads ("60 kilos": "60 kg"): what a refusal
#: suggests, never read in its place ("tons" may be short tons of 907 kg, "gigs" GiB).
_SPELLED_UNITS = {"kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilograms": "kg", "kgs": "kg",
                  "gram": "g", "grams": "g", "ton": "t", "tons": "t", "metric tons": "t",
                  "gig": "GB", "gigs": "GB", "gigabyte": "GB", "gigabytes": "GB", "gbs": "GB",
                  "megabyte": "MB", "megabytes": "MB", "terabyte": "TB", "terabytes": "TB", "tbs": "TB",
                  "watt": "W", "watts": "W", "kilowatt": "kW", "kilowatts": "kW",
                  "kilowatt-hour": "kWh", "kilowatt-hours": "kWh", "kilowatt hours": "kWh"}


def _wrong_unit(value: object, expected: str, unit: str, units: Iterable[str] = ()) -> QuantityError:
    """The error for a value in a unit the key does not take: the kind of quantity it is (a size
    where a duration belongs), else the units of ``units`` it comes close to ("1 mnth")."""
    kind = _kind_of(unit)
    meant = _range_meant(value) if isinstance(value, str) and ("-" in unit or "–" in unit) else None  # 200-300 h
    if meant is None and isinstance(value, str):  # 4k hours, 1,200 h, 40 GPU-hours (the key's hours are a GPU's)
        out = _written_out(value)
        number, written = out if out else (m.group(1), (m.group(2) or "").strip()) if (
            m := _QUANTITY.match(value)) else ("", unit)
        bare = re.sub(r"^gpu[-_ ]?", "", written, flags=re.IGNORECASE)
        if number and (out or bare != written) and (not bare or bare in units or bare.lower() in units):
            meant = " ".join(filter(None, (number, bare)))
        symbol = _SPELLED_UNITS.get(written.lower())
        if meant is None and number and symbol is not None and symbol.lower() in {u.lower() for u in units}:
            meant = f"{number} {symbol}"
    article = "an" if kind and kind[0] in "aeiou" else "a"
    note = f" ({article} {kind})" if kind else f" (did you mean {meant!r}?)" if meant else did_you_mean(unit, units)
    return QuantityError(f"expected {expected}, got {value!r}{note}")


def _finite(x: float, value: object, expected: str) -> float:
    if x != x or x in (float("inf"), float("-inf")):
        raise QuantityError(f"expected {expected}, got {value!r}")
    return x


def _in_units(value: object, expected: str, table: Mapping[str, float], default_unit: str) -> float:
    """The value times its unit's factor from ``table`` (looked up as written, then in lower case)."""
    number, unit = _split(value, expected)
    unit = unit or default_unit
    factor = table.get(unit, table.get(unit.lower()))
    if factor is None:
        raise _wrong_unit(value, expected, unit, table)
    return _finite(number * factor, value, expected)


#: A duration as a clock writes it: hours and minutes (1:30), and seconds (0:45:00).
_CLOCK = re.compile(r"^\s*(\d+):([0-5]\d)(?::([0-5]\d))?\s*$")
#: Hours and minutes together: 1h30m, 1 h 30 min, 2 hours 15 minutes.
_HOURS_MINUTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*h(?:ours?|rs?)?\s*(\d+(?:\.\d+)?)\s*m(?:ins?|inutes?)?\s*$",
                            re.IGNORECASE)


def _clock_hours(text: str) -> float | None:
    """Hours of a duration written as a clock (1:30, 0:45:00) or in hours and minutes (1h30m), else None."""
    if (m := _CLOCK.match(text) or _HOURS_MINUTES.match(text)) is None:
        return None
    seconds = float(m.group(3) or 0) if m.re is _CLOCK else 0.0
    return float(m.group(1)) + float(m.group(2)) / 60 + seconds / 3600


def in_hours_if_clock(value: object) -> object:
    """A duration written as a clock or in hours and minutes as a number of hours ('1:30' ->
    '1.5 h'), what a what-if moves by its share; any other value as it is."""
    hours = _clock_hours(value) if isinstance(value, str) else None
    return value if hours is None else f"{format_significant(hours, 12)} h"


_PER_WORDS = re.compile(r"\s+(?:per|a|an|each|every)\s+", re.IGNORECASE)
_EVERY = re.compile(r"^\s*(?:every|each)\s+(.+?)\s*$", re.IGNORECASE)


def _written_as_rate(text: str) -> str | None:
    """A rate or a duration as people write it, in the form the planner reads: "2 per day" and
    "30 hours a week" as "2/day" and "30 hours/week", "every hour" as "1 hour", "every 30 min"
    as "30 min"; None where it is written neither way."""
    if (m := _EVERY.match(text)) is not None:
        rest = m.group(1)
        return rest if rest[:1].isdigit() else f"1 {rest}"
    return _PER_WORDS.sub("/", text.strip()) if _PER_WORDS.search(text) else None


def _rate_hint(parse: Callable[..., float]) -> Callable[..., float]:
    """``parse`` whose refusal of a rate or duration written in words (:func:`_written_as_rate`)
    suggests the form that reads, where it reads: suggested, never read in its place."""
    @functools.wraps(parse)
    def parsed(value: object, *args: Any, **kwargs: Any) -> float:
        try:
            return parse(value, *args, **kwargs)
        except QuantityError as exc:
            hint = _written_as_rate(value) if isinstance(value, str) else None
            raise _hinted(exc, hint, lambda v: parse(v, *args, **kwargs)) from None
    return parsed


def _hinted(exc: QuantityError, hint: str | None, parse: Callable[[str], float]) -> QuantityError:
    """``exc`` with "did you mean ``hint``?" where the hint reads (``parse`` takes it) and ``exc``
    suggests nothing yet; else ``exc`` as it is: what a refusal suggests, never read in its place."""
    if hint is None or "did you mean" in str(exc):
        return exc
    try:
        parse(hint)
    except QuantityError:
        return exc
    return QuantityError(f"{exc} (did you mean {hint!r}?)")


@_rate_hint
def parse_duration_h(value: object, default_unit: str = "h") -> float:
    """Duration in hours. Bare numbers are in ``default_unit``; the example in an error is in
    the key's own scale (a horizon in months, a checkpoint interval in minutes or hours). A
    clock's hours and minutes (1:30) and both units together (1h30m) are 1.5 h."""
    if isinstance(value, str) and (hours := _clock_hours(value)) is not None:
        return hours
    example = {"months": "6 months or 2 years", "days": "7 days or 1 year"}.get(default_unit, "30 min or 2 h")
    return _in_units(value, f"a duration such as {example}", DURATION_H, default_unit)


def parse_size_gb(value: object) -> float:
    """Size in decimal GB (1 GB = 1e9 bytes). Bare numbers are GB."""
    return _in_units(value, "a size such as 500 MB or 120 GB", SIZE_GB, "gb")


@_rate_hint
def parse_data_rate_gb_per_h(value: object) -> float:
    """A rate of copying data in GB per hour: "100 MB/s" (360), "1.5 GB/s", "500 GB/h"; a bare
    number is GB/h, the catalog's unit."""
    expected = "a rate such as 100 MB/s or 360 GB/h"
    number, unit = _split(value, expected)
    if not unit:
        return _finite(number, value, expected)
    gb, hours = _size_per_duration(unit)
    if gb is None or hours is None:
        raise _wrong_unit(value, expected, unit)
    return _finite(number * gb / hours, value, expected)


def _size_per_duration(unit: str) -> tuple[float | None, float | None]:
    """(GB, hours) of a unit written size/duration or size-duration ('MB/s', 'GB/month',
    'GB-month'): each None where it is not read or not written."""
    size, _, duration = unit.replace("-", "/").partition("/")
    return SIZE_GB.get(size.strip().lower()), DURATION_H.get(duration.strip().lower()) if duration else None


def parse_count(value: object) -> float:
    """A count, with an optional K/M/B suffix ("86M" is 86e6)."""
    return _in_units(value, "a count such as 86M", COUNT_SUFFIX, "")


#: A data size in tokens or samples: the count suffixes and T (a trillion tokens).
AMOUNT_SUFFIX = {**COUNT_SUFFIX, "t": 1e12}
#: The words a count of tokens or samples may end with: a sample is an image, a sequence (of
#: the workload's sequence_length) or an example, as a dataset card counts them.
AMOUNT_WORDS = {"tokens": ("tokens", "token"),
                "samples": ("samples", "sample", "images", "image", "sequences", "sequence", "examples", "example")}


def parse_amount(value: object, word: str) -> float:
    """A count of tokens or samples ("40M", "1.2T", "40M tokens", "50k images"): the count
    suffixes and T, one of the word's AMOUNT_WORDS allowed after it; another unit ("40 GB") or
    the other word ("40M samples" as tokens) is an error."""
    words = AMOUNT_WORDS.get(word, (word,))
    if isinstance(value, str):
        text = value.strip()
        m = re.fullmatch(r"(.*?\d\s*[kmbtKMBT]?)\s*([A-Za-z]+)", text)
        if m and m.group(2).lower() in words:
            text = m.group(1).strip()
        elif m and m.group(2).lower() not in AMOUNT_SUFFIX:
            other = next((w for w, said in AMOUNT_WORDS.items() if m.group(2).lower() in said), None)
            hint = f" ({other} are counted under {other}:)" if other else did_you_mean(m.group(2), words)
            raise QuantityError(f"expected a count of {word} such as 40M or 1.2T, got {value!r}{hint}")
        value = text
    return _in_units(value, f"a count of {word} such as 40M or 1.2T", AMOUNT_SUFFIX, "")


def parse_mass_kg(value: object) -> float:
    """A mass of CO2-equivalent in kg ("500 kg", "2 t"). Bare numbers are kg."""
    return _in_units(value, "a mass such as 500 kg or 2 t", MASS_KG, "kg")


@_rate_hint
def parse_intensity(value: object) -> float:
    """A grid's carbon intensity in g CO2e per kWh ("350 g/kWh", "0.35 kg/kWh")."""
    return _in_units(value, "an intensity such as 350 g/kWh", INTENSITY_G_PER_KWH, "g/kwh")


@_rate_hint
def parse_money_per_mass_usd(value: object, currency: str, usd_per_unit: Mapping[str, float]) -> float:
    """Money per tonne of CO2e ("80 EUR/t", "0.08 USD/kg") in USD per kg. A bare number is in
    ``currency`` per tonne."""
    expected = f"a price such as 80 {currency}/t"
    number, unit = _split(value, expected)
    cur, den = (currency, "t") if not unit else (tuple(x.strip() for x in unit.split("/", 1)) if "/" in unit
                                                  else (None, None))
    if cur is None or den is None:
        raise _wrong_unit(value, expected, unit)
    rate = money_unit(cur or currency, usd_per_unit)
    if rate is None:
        raise QuantityError(f"expected {expected}: unknown currency {cur!r}")
    kg = MASS_KG.get(den.lower())
    if kg is None:
        raise _wrong_unit(value, expected, unit)
    return _finite(number * rate / kg, value, expected)


def parse_power_w(value: object) -> float:
    """Power in watts. Bare numbers are W."""
    return _in_units(value, "a power such as 350 W or 0.45 kW", POWER_W, "w")


def format_significant(x: float, digits: int = 4, thousands: bool = False) -> str:
    """``x`` to ``digits`` significant digits, never in exponent notation (10800, not 1.08e+04),
    trailing zeros dropped; ``thousands``: with a comma every three digits, as the report shows
    figures (a figure a user writes back, as a what-if's value, has none)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    places = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{round(x, places):{',' if thousands else ''}.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_hours(x: float) -> str:
    """Hours of work as the report writes them in words: whole hours from 100 on (5,400), one
    decimal below as the plan's table has them (7.2, 50), and a figure under 0.05 h to one
    significant digit (0.04): a job's 0.1 h pilot is never "0 reference GPU-h", and a phase of
    2.4 h never reads 2 beside the table's 2.4."""
    if not math.isfinite(x) or abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.1f}".removesuffix(".0") if abs(x) >= 0.05 or x == 0 else format_significant(x, 1)


def a_or_an(figure: str) -> str:
    """The article before a figure as it is read aloud: "an 18-month horizon", "an 8 h session",
    "an 11,500 h", "a 12-month horizon", "a 110 h" (eight, eighty, eleven and eighteen, alone or
    before thousand or million, begin with a vowel)."""
    whole = figure.replace(",", "").split(".")[0]
    return "an" if figure.startswith("8") or (len(whole) % 3 == 2 and whole[:2] in ("11", "18")) else "a"


def format_count(x: float) -> str:
    """A large count as people write it: 79.9M, 1.2T, 52K (three significant figures)."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def format_and(names: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def format_share(x: float) -> str:
    """A share as written by a user: 90 %, 97.5 % (a confidence, a trend)."""
    return f"{round(100.0 * x, 1):g} %"


def z_at(chance: float | None) -> float:
    """The standard normal's quantile at ``chance``, the z a confidence books its spreads at: 0
    for none, or a chance outside (0, 1)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(chance) if chance is not None and 0.0 < chance < 1.0 else 0.0


_UNITS_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen").split()
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_in_words(text: str) -> int | None:
    """A whole number from 0 to 100 written in words ('fifty', 'twenty-five', 'a hundred', 'a
    dozen'), else None: what a refusal suggests, never read in its place."""
    words = text.lower().replace("-", " ").split()
    if words in (["hundred"], ["a", "hundred"], ["one", "hundred"]):
        return 100
    if words in (["dozen"], ["a", "dozen"]):
        return 12
    if words == ["a", "couple"]:
        return 2
    if len(words) == 1 and words[0] in _UNITS_WORDS:
        return _UNITS_WORDS.index(words[0])
    if words and words[0] in _TENS_WORDS and (len(words) == 1 or (len(words) == 2 and words[1] in _UNITS_WORDS[1:10])):
        return 20 + 10 * _TENS_WORDS.index(words[0]) + (_UNITS_WORDS.index(words[1]) if len(words) == 2 else 0)
    return None


def percent_meant(value: object) -> str | None:
    """The percentage a share written with 'percent' means ('fifty percent', '50 per cent', '12.5
    pct': '50%', '12.5%'), else None: what a refusal suggests, never read in its place."""
    if not isinstance(value, str):
        return None
    m = re.fullmatch(r"\s*(.+?)\s*(?:percent|per\s+cent|pct)\.?\s*", value.lower())
    if m is None:
        return None
    number = m.group(1)
    if re.fullmatch(r"\d+(?:\.\d+)?", number):
        return f"{number}%"
    words = number_in_words(number)
    return None if words is None else f"{words}%"


def percent_hint(value: object) -> str:
    """' (did you mean '50%'?)' for a share written with 'percent' (:func:`percent_meant`), else ''."""
    meant = percent_meant(value)
    return f" (did you mean {meant!r}?)" if meant else ""


def parse_fraction(value: object) -> float:
    """A fraction 0-1, written as a decimal (0.4) or a percentage (40%)."""
    expected = "a fraction such as 40% or 0.4"
    if hint := percent_hint(value):
        raise QuantityError(f"expected {expected}, got {value!r}{hint}")
    number, unit = _split(value, expected)
    if unit == "%":
        number /= 100.0
    elif unit:
        raise _wrong_unit(value, expected, unit)
    if not 0.0 <= number <= 1.0:
        raise QuantityError(f"expected {expected} (between 0% and 100%), got {value!r}")
    return number


#: Currencies without minor units in everyday prices (ISO 4217 exponent 0).
WHOLE_CURRENCIES = {"JPY", "KRW", "HUF", "ISK", "CLP", "VND", "IDR"}


def format_amount(amount: float, currency: str) -> str:
    """An amount with its currency's precision, without the code (for a column headed by it);
    never '-0.00': an amount that rounds to nothing (credits that pay every bill leave -1e-13)
    is none, not a loss."""
    digits = 0 if currency.upper() in WHOLE_CURRENCIES else 2
    text = f"{amount:,.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.,") else text


def format_money(amount: float, currency: str) -> str:
    """An amount with its currency's precision: '1,234.50 EUR', '12,345 JPY'."""
    return f"{format_amount(amount, currency)} {currency}"


def money_unit(unit: str, usd_per_unit: Mapping[str, float]) -> float | None:
    """USD value of one unit of the currency code ``unit`` (None if unknown)."""
    return usd_per_unit.get(unit.upper())


#: Currency signs and words people write money with, and the code each means ("$500", "500
#: dollars"); "¥" (yen or yuan) and other signs of several currencies are left out.
_MONEY_SIGNS = {"US$": "USD", "C$": "CAD", "A$": "AUD", "Rs.": "INR", "Rs": "INR", "$": "USD", "€": "EUR", "£": "GBP",
                "₹": "INR", "₩": "KRW"}
#: Words for large sums in Indian English (a lakh is 100,000, a crore 10,000,000), as the K and M suffixes.
_MONEY_SCALES = {"": 1.0, "k": 1e3, "m": 1e6, "lakh": 1e5, "lakhs": 1e5, "lac": 1e5, "lacs": 1e5,
                 "crore": 1e7, "crores": 1e7, "cr": 1e7, "mio": 1e6}
_MONEY_WORDS = {"dollar": "USD", "dollars": "USD", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP",
                "yen": "JPY", "rupee": "INR", "rupees": "INR", "yuan": "CNY", "rmb": "CNY", "franc": "CHF",
                "francs": "CHF", "won": "KRW", "krona": "SEK", "kronor": "SEK"}


#: Words for a hundredth of a currency ("30 ct/kWh", as German tariffs are written).
_CENT_WORDS = ("ct", "cent", "cents", "c", "¢")


def money_as_read(text: str, currency: str | None = None) -> str | None:
    """Money as people write it ("$500", "€1.5k", "USD 500", "1,500 USD", "500 dollars",
    "$0.40/h", "0.15 USD per kWh", "0,30 EUR/kWh" with a decimal comma, and, given the
    ``currency`` they are a hundredth of, "30 ct/kWh") in the form the planner reads ("500 USD",
    "0.4 USD/h", "0.3 EUR/kWh"), or None where it is no such form: what a refusal suggests,
    never read in its place ("$" may be another dollar)."""
    amount, _, per = re.sub(r"\s+per\s+", "/", text.strip(), flags=re.IGNORECASE).partition("/")
    amount, code = amount.strip(), None
    cents = re.fullmatch(r"(\d+(?:[.,]\d+)?)\s*(" + "|".join(map(re.escape, _CENT_WORDS)) + r")", amount, re.IGNORECASE)
    if cents is not None:
        if currency is None:
            return None
        return f"{format_significant(float(cents.group(1).replace(',', '.')) / 100, 12)} {currency}" + (
            f"/{per.strip()}" if per else "")
    for sign in _MONEY_SIGNS:  # longest first: US$ before $
        if amount.startswith(sign) or amount.endswith(sign):
            code, amount = _MONEY_SIGNS[sign], amount.removeprefix(sign).removesuffix(sign).strip()
            break
    scales = "|".join(sorted(_MONEY_SCALES, key=len, reverse=True)[:-1])
    if (m := re.fullmatch(rf"([A-Za-z]{{3}})\s*(\d[\d.,]*\s*(?:{scales})?)", amount, re.IGNORECASE)) is not None:
        code, amount = code or m.group(1).upper(), m.group(2)  # "USD 500"
    m = re.fullmatch(rf"(\d[\d.,]*?)\s*((?:{scales})(?![A-Za-z]))?\s*([A-Za-z]*)", amount, re.IGNORECASE)
    if m is None:
        return None
    number, scale, word = m.groups()
    if word:
        code = code or _MONEY_WORDS.get(word.lower(), word.upper())
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", number):  # thousands separated by commas
        number = number.replace(",", "")
    elif re.fullmatch(r"\d{1,2}(,\d{2})*,\d{3}(\.\d+)?", number):  # Indian digit groups: 9,00,000
        number = number.replace(",", "")
    elif re.fullmatch(r"\d+,\d{1,2}", number):  # a decimal comma: 0,30
        number = number.replace(",", ".")
    try:
        x = float(number) * _MONEY_SCALES[(scale or "").lower()]
    except ValueError:
        return None
    written = f"{format_significant(x, 12)} {code}" + (f"/{per.strip()}" if per else "")
    return written if code and written != text.strip() else None


def _suggested(exc: QuantityError, value: object, parse: Callable[[str], float], currency: str | None = None
               ) -> QuantityError:
    """``exc`` with the money form it comes close to (:func:`money_as_read`; cents of
    ``currency``), where that form reads (:func:`_hinted`)."""
    return _hinted(exc, money_as_read(value, currency) if isinstance(value, str) else None, parse)


def parse_money_usd(value: object, currency: str, usd_per_unit: Mapping[str, float]) -> float:
    """Money in USD. Bare numbers are in ``currency``; codes use catalog rates. A refusal of money
    written another way ("$500") suggests the form that reads ("500 USD")."""
    try:
        return _money_usd(value, currency, usd_per_unit)
    except QuantityError as exc:
        raise _suggested(exc, value, lambda v: _money_usd(v, currency, usd_per_unit), currency) from None


def _money_usd(value: object, currency: str, usd_per_unit: Mapping[str, float]) -> float:
    expected = f"an amount of money such as 650 {currency}"
    number, unit = _split(value, expected)
    rate = money_unit(unit or currency, usd_per_unit)
    if rate is None:
        if unit.isalpha() and _kind_of(unit) is None:  # a currency written wrong ("EURO")
            known = ", ".join(sorted(usd_per_unit))
            raise QuantityError(f"expected {expected}: unknown currency {unit!r}"
                                f"{did_you_mean(unit.upper(), usd_per_unit)} (known: {known})")
        raise _wrong_unit(value, expected, unit)
    return _finite(number * rate, value, expected)


def parse_money_rate_usd(
    value: object, currency: str, usd_per_unit: Mapping[str, float], per: str
) -> float:
    """Money per hour (``per='h'``), per kWh (``per='kWh'``), per GB (``per='GB'``) or per GB
    and month (``per='GB/month'``), in USD.

    A bare number is in ``currency`` per ``per``. "0.40 EUR/h", "25 JPY/kWh",
    "9.99 USD/month" (per='h'), "10 USD/TB" (per='GB'), "0.10 EUR/GB/month" or
    "0.10 EUR/GB-month" (per='GB/month') are converted; a refusal of "$0.40/h" suggests "0.4 USD/h".
    """
    try:
        return _money_rate_usd(value, currency, usd_per_unit, per)
    except QuantityError as exc:
        raise _suggested(exc, value, lambda v: _money_rate_usd(v, currency, usd_per_unit, per), currency) from None


def _money_rate_usd(value: object, currency: str, usd_per_unit: Mapping[str, float], per: str) -> float:
    expected = f"a price such as 0.40 {currency}/{per}"
    number, unit = _split(value, expected)
    if not unit:
        cur, den = currency, per
    elif "/" in unit:
        cur, den = (s.strip() for s in unit.split("/", 1))
        cur = cur or currency
    else:
        raise _wrong_unit(value, expected, unit)
    rate = money_unit(cur, usd_per_unit)
    if rate is None:
        raise QuantityError(f"expected {expected}: unknown currency {cur!r}")
    if per == "kWh":
        factor = ENERGY_KWH.get(den.lower())
        if factor is None:
            raise _wrong_unit(value, expected, unit)
        per_unit = 1.0 / factor  # price per kWh = price per den / (kWh per den)
    elif per in ("GB", "GB/month"):  # a size, and for a month's keeping a duration after it
        gb, hours = _size_per_duration(den)
        duration = "/" in den.replace("-", "/")
        if gb is None or (per == "GB") != (not duration) or (duration and hours is None):
            raise _wrong_unit(value, expected, unit)
        per_unit = 1.0 / gb / (hours / HOURS_PER_MONTH if hours else 1.0)
    else:
        hours = DURATION_H.get(den, DURATION_H.get(den.lower()))
        if hours is None:
            raise _wrong_unit(value, expected, unit)
        per_unit = 1.0 / hours
    return _finite(number * rate * per_unit, value, expected)


@_rate_hint
def parse_rate(value: object, per_h: float, numerator: str = "count", example: str = "2/day") -> float:
    """A frequency, returned per ``per_h`` hours.

    ``numerator='count'`` accepts "2 restarts/day", "0.02/h" (the word before
    the slash is a free label); ``numerator='duration'`` accepts "30 h/week",
    "90 min/day" (hours of something per period). A bare number is already
    per ``per_h`` hours.
    """
    expected = f"a rate such as {example}"
    number, unit = _split(value, expected)
    if not unit:
        return number
    if "/" not in unit:
        raise _wrong_unit(value, expected, unit)
    num, den = (s.strip() for s in unit.split("/", 1))
    den_h = DURATION_H.get(den, DURATION_H.get(den.lower()))
    if den_h is None:
        raise QuantityError(f"expected {expected}: unknown period {den!r}")
    if numerator == "duration":
        num_h = DURATION_H.get(num or "h", DURATION_H.get((num or "h").lower()))
        if num_h is None:
            raise _wrong_unit(value, expected, num)
        number *= num_h
    elif num and not re.fullmatch(r"[A-Za-z_ -]+", num):
        raise _wrong_unit(value, expected, unit)
    return _finite(number / den_h * per_h, value, expected)
