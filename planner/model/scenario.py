"""The scenario as typed, frozen records: its workload, phases, you and what it considers.

The records only: the format's keys and their converters are in :mod:`.schema`, ``--set`` and
variants in :mod:`.overrides`, reading and checking a file in :mod:`.validate`
(``load_scenario_text``), a what-if's typed edits in :mod:`.edits`. Every quantity is canonical:
hours, GB, W, USD, USD/h, USD/kWh.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import units

FAMILIES = ("cnn", "transformer", "rnn")
PRECISIONS = ("fp32", "mixed", "fp8")
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
METHODS = ("full", "pretrain", "lora", "qlora")
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
    model: str | None = None  # a named model of the catalog (models.csv) that filled the shape


@dataclass(frozen=True)
class Job:
    """A phase's work as data: ``tokens`` (each pass) or ``samples``, times ``epochs``."""

    tokens: float | None = None
    samples: float | None = None
    epochs: float = 1.0


@dataclass(frozen=True)
class Estimate:
    """A job's work on the reference GPU (planner.model.job): its FLOPs, the utilisation's range
    and the hours they give."""

    flops: float  # one run's training FLOPs
    tokens: float | None  # tokens one run processes (epochs included); None for a vision CNN
    reference_gpu: str
    peak_tflops: float  # the reference's dense peak at the job's precision [TFLOPS]
    device_class: str
    mfu_low: float
    mfu: float
    mfu_high: float
    utilisation_source: str
    notes: tuple[str, ...]  # what was assumed, for the answer's up-front notes
    #: what the utilisation is a share of where the speed model sets it: the peak of the card the
    #: utilisation was measured on (``measured_on``) times the reference's speed over it
    #: (planner.model.job.usable_peak); None: the reference's own peak [TFLOPS]
    usable_tflops: float | None = None
    measured_on: str | None = None

    @property
    def rate_basis_tflops(self) -> float:
        """The TFLOPS a utilisation is a share of: the usable peak where the speed model sets it,
        else the peak."""
        return self.peak_tflops if self.usable_tflops is None else self.usable_tflops

    def hours_at(self, mfu: float) -> float:
        """Hours on the reference GPU at a utilisation (one run)."""
        return self.flops / (self.rate_basis_tflops * 1e12 * mfu) / 3600.0

    @property
    def hours_typical(self) -> float:
        return self.hours_at(self.mfu)

    @property
    def hours_range(self) -> tuple[float, float]:
        """(fewest, most) hours: at the high and at the low utilisation."""
        return self.hours_at(self.mfu_high), self.hours_at(self.mfu_low)

    @property
    def hours_planned(self) -> float:
        """The mean hours with the utilisation triangular over its range, peaked at its typical
        value: the figure the plan uses (hours go as 1 / utilisation, so the mean lies above the
        hours at the typical utilisation); the uncertainty analysis draws the same distribution."""
        return self.hours_at(1.0) * inverse_moments(self.mfu_low, self.mfu, self.mfu_high)[0]

    @property
    def hours_rel_sd(self) -> float:
        """The relative standard deviation of the hours under that distribution."""
        m1, m2 = inverse_moments(self.mfu_low, self.mfu, self.mfu_high)
        return math.sqrt(max(m2 - m1 * m1, 0.0)) / m1

    def hours_rel_sd_at(self, chance: float) -> float:
        """The relative spread the hours are booked with at ``chance`` (the plan's confidence): the
        larger of their standard deviation and the spread that puts their quantile at mean + z x
        it. Hours go as 1 / utilisation, a long tail of slow runs, so mean + z sd falls short of
        the quantile: at 95 % with utilisation 12-30-69 % it is 4.82 where the quantile is 5.20
        (x the hours at full utilisation), and a plan booked so met its deadline in 92.5 % of its
        own draws where it stated 95 %."""

        import numpy as np  # here, not at the top: `planner validate` reads a scenario without numpy

        from .sessions import triangular_ppf

        sd = self.hours_rel_sd
        z = units.z_at(chance)
        if z <= 0.0:
            return sd
        mean = inverse_moments(self.mfu_low, self.mfu, self.mfu_high)[0]
        slow = 1.0 / float(triangular_ppf(np.array(1.0 - chance), self.mfu_low, self.mfu, self.mfu_high))
        return max(sd, (slow - mean) / (z * mean))


def inverse_moments(a: float, c: float, b: float) -> tuple[float, float]:
    """(E[1/X], E[1/X^2]) of X triangular on [a, b] with mode c (0 < a <= c <= b), in closed form:
    the pdf's two linear pieces integrated against 1/x and 1/x^2. A point (a == b) gives 1/a."""
    if b - a < 1e-12 * b:
        return 1.0 / a, 1.0 / (a * a)
    left1 = 1.0 - a * math.log(c / a) / (c - a) if c - a > 1e-12 * b else 0.0
    right1 = (b * math.log(b / c) - (b - c)) / (b - c) if b - c > 1e-12 * b else 0.0
    left2 = (math.log(c / a) + a / c - 1.0) / (c - a) if c - a > 1e-12 * b else 0.0
    right2 = (b / c - 1.0 - math.log(b / c)) / (b - c) if b - c > 1e-12 * b else 0.0
    k = 2.0 / (b - a)
    return k * (left1 + right1), k * (left2 + right2)


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
    #: the job, where the work is also described by its data (planner.model.job)
    tokens: float | None = None
    samples: float | None = None
    epochs: float | None = None
    #: the job's estimate on the reference GPU; with ``hours_from_job`` it gave gpu_hours_per_run
    job_estimate: Estimate | None = None
    hours_from_job: bool = False

    @property
    def gpu_hours(self) -> float:
        """All the phase's work in reference-GPU hours (every run)."""
        return self.gpu_hours_per_run * self.runs

    def job_hours_rel_sd(self, chance: float) -> float:
        """The relative spread of the hours where they come from the job (the utilisation's range),
        as the plan books them at ``chance`` (Estimate.hours_rel_sd_at), else 0."""
        return (self.job_estimate.hours_rel_sd_at(chance) if self.hours_from_job and self.job_estimate is not None
                else 0.0)


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
    #: your electricity's grid: a zone of the catalog's grid table, an intensity [g CO2e/kWh], or
    #: None for the world average (said up front)
    grid: str | float | None = None
    carbon_usd_per_kg: float | None = None  # a price on emissions, added to what the plan minimises
    max_co2_kg: float | None = None  # a cap on the plan's emissions

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


def prices_move(trend_per_year: float, points: tuple) -> bool:
    """Whether prices move: a yearly trend or dated levels are given (one rule for the scenario
    and the records a cache keeps of it)."""
    return bool(trend_per_year or points)


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
    #: (path, how it was read) of each device named by a name several devices go by ('A100')
    read_as: tuple[tuple[str, str], ...] = ()
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
    horizon_is_default: bool = False  # the file gives no 'horizon': the answer says the one it took
    #: the file names no workload.reference_gpu (its phases describe their jobs): the answer says which it took
    reference_gpu_is_default: bool = False
    #: the file gives no electricity price and you.grid names a region the catalog prices: its price
    #: was taken (None: the catalog's default region's)
    electricity_region: str | None = None

    @property
    def past_deadlines(self) -> tuple[Phase, ...]:
        """The phases whose deadline lies before the day the scenario was read (``read_on``): no
        plan made then can meet them (a mistyped year; a plan of the past, what the work would
        have cost)."""
        return tuple(ph for ph in self.phases if self.read_on is not None and ph.deadline is not None
                     and ph.deadline < self.read_on)

    @property
    def rent_trend_of_catalog(self) -> bool:
        """Whether rent follows each device's catalog trend (no price_trend given, or 'catalog')."""
        return self.rent_trend_per_year is None and not self.rent_price_points

    @property
    def buy_moves(self) -> bool:
        """Whether the scenario says where card prices go (``buy_price_trend``)."""
        return prices_move(self.buy_trend_per_year, self.buy_price_points)

    @property
    def buy_days(self) -> tuple[int, ...]:
        """The days (from the start) on which the plan may buy a card: the first day, and with
        ``buy_later`` every so many weeks after it while a phase may still use a card bought then,
        before the horizon's end (when bought cards are sold).
        Week starts, so a card is owned for whole buckets of the program (docs/model.md)."""
        if not self.buy_every_weeks:
            return (0,)
        last = max((self.window(ph)[1] - self.start).days for ph in self.phases)
        return tuple(range(0, min(last, self.sold_day), 7 * self.buy_every_weeks))  # never on the day of sale

    @property
    def horizon_end(self) -> dt.date:
        """The day after the horizon: bought cards are sold then (exclusive end)."""
        return self.start + dt.timedelta(days=self.horizon_months * units.HOURS_PER_MONTH / 24)

    @property
    def sold_day(self) -> int:
        """Days from the start to the horizon's end, when bought cards are sold."""
        return (self.horizon_end - self.start).days

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

    def card_window(self, ph: Phase) -> tuple[dt.date, dt.date]:
        """The phase's window as a card bought for the plan sees it: it is sold at the horizon's
        end (the program's calendar books it so), so a window running past that day ends there."""
        begin, end = self.window(ph)
        return begin, min(end, self.horizon_end)

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
