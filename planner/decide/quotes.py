"""Price every (phase, option) pair: fit, speed, session overhead, dates and cost.

The optimiser works with these per-option factors: wall hours, billed hours,
sessions and money per reference GPU-hour, and the option's weekly capacity.
Pure: Scenario + option table in, DataFrames out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from pricing.memo import ByValue, Kept
from pricing.values import float_or, missing, opt_float

from ..model import carbon, costs, sessions, units, workload
from ..model.costs import PART_NAMES
from ..model.records import (
    HOME_KINDS,
    NOTEBOOK_KINDS,
    OPTION_DEFAULTS,
    QUOTE_COLUMNS,
    Option,
    Quote,
    QuoteTable,
    no_hours_quote,
    options_of,
    quotes_frame,
)
from ..model.scenario import Phase, Scenario, Workload, You, prices_move
from ..model.workload import Step

__all__ = ["QUOTE_COLUMNS", "Quote", "card_costs", "exclusions", "money_by_part", "quote", "quote_records",
           "quote_table"]

#: Checkpoint write rate on a local disk [GB/h]: ~500 MB/s, a SATA SSD's
#: sequential write (estimate; NVMe drives are faster).
LOCAL_DISK_GB_PER_H = 1800.0
_FITS, _EXCLUSIONS, _TABLE_EXCLUSIONS = Kept(), Kept(), Kept()


def _fits(w: Workload, devices: pd.DataFrame, throughput: pd.DataFrame, step: Step | None
          ) -> tuple[dict, _Placements, float]:
    """What a workload's exclusions need from the device tables — each device's speed at the
    workload's step (:func:`planner.model.workload.speeds_at_size`), the reference's slowdown, and
    a placement per (device, count), filled as asked — once per (workload, step, tables) in a
    process (pricing.memo: a what-if varies prices and hours far more often than the model)."""
    def make() -> tuple[dict, _Placements, float]:
        speed = workload.speeds_at_size(workload.relative_speed(
            devices, throughput, w.reference_gpu, w.family, w.precision, w.measured_speed), step)
        ref_slowdown = workload.reference_slowdown(w, devices, step)
        speeds = dict(zip(speed.index, zip(speed["relative_speed"], speed["speed_source"],
                                           speed["speed_at_scale"])))  # a row read per option
        return speeds, _Placements(w, {d.id: d for d in devices.itertuples()}), ref_slowdown

    return _FITS.get((devices, throughput), (w, step), make)


class _Placements:
    """Where a workload goes on each (device, count): placed when first asked, then kept (the
    per-process memo of :func:`_fits` holds one per workload and device table)."""

    def __init__(self, w: Workload, devices: dict):
        self._w, self.devices = w, devices
        self._placed: dict[tuple[str, int], workload.Placement] = {}

    def fit(self, device: str, count: int) -> workload.Fit:
        key = (device, count)
        if key not in self._placed:
            self._placed[key] = workload.place(self._w, self.devices[device], count)
        return self._placed[key].fit


@dataclass(frozen=True)
class FitInputs:
    """Everything the options' exclusions read of their scenario: the key they are kept under
    (pricing.memo), the only record they see."""

    workload: Workload
    framework: str
    host_unpriced: bool  # you.host_unpriced: a card at home needs a host with no price given
    step: Step | None  # the workload's step: its speeds depend on its size

    @classmethod
    def of(cls, s: Scenario, step: Step | None = None) -> FitInputs:
        return cls(s.workload, s.framework, s.you.host_unpriced, step)


def exclusions(s: Scenario, opts: pd.DataFrame, devices: pd.DataFrame, throughput: pd.DataFrame,
               step: Step | None = None) -> pd.DataFrame:
    """Per option: fit verdict, speed, and the reason it cannot be used (or None).

    The slowdown is relative to the reference GPU's own: hours measured on a card that
    needed gradient accumulation already include its cost. Once per (device tables,
    :class:`FitInputs`, the options' :class:`FitOption` records) in a process (pricing.memo), and
    found first by this very options table: a what-if that edits a price or a rate builds another
    table of the same records and finds the exclusions it had."""
    inputs = FitInputs.of(s, step)

    def by_value() -> pd.DataFrame:  # another table of the same options' fit (an edited price)
        fits = FitOption.rows(opts)
        return _EXCLUSIONS.get((devices, throughput), (inputs, fits), lambda: _exclusions(inputs, fits, devices, throughput))

    return _TABLE_EXCLUSIONS.get((opts, devices, throughput), (inputs,), by_value)  # this very table


@dataclass(frozen=True)
class FitOption:
    """What the exclusions read of one option, all they see of it: with :class:`FitInputs`, the
    key they are kept under, so a what-if that edits a price or a rate finds them as they were,
    and an option field they would read and this record leaves out is an AttributeError in every
    plan, never a stale exclusion."""

    option: str
    kind: str
    device: str
    count: int
    frameworks: tuple[str, ...] | None
    quota_group: str | None
    notes: str | None
    quota_h_total: float | None
    gpu_class: str

    @classmethod
    def rows(cls, opts: pd.DataFrame) -> tuple[FitOption, ...]:
        """One per row of an options table, its cells read as :func:`options_of` reads them
        (blank None; one device where the count is blank; the class's default where it is)."""
        names = [f.name for f in dataclasses.fields(cls)]
        blank = [None] * len(opts)
        cells = [[None if missing(v) else v for v in opts[c].tolist()] if c in opts else blank for c in names]
        default = OPTION_DEFAULTS["gpu_class"]
        return tuple(cls(o, k, d, int(n) if n is not None else 1, f, g, notes, q, c if c is not None else default)
                     for o, k, d, n, f, g, notes, q, c in zip(*cells))


def _exclusions(s: FitInputs, options: tuple[FitOption, ...], devices: pd.DataFrame, throughput: pd.DataFrame
                ) -> pd.DataFrame:
    w = s.workload
    speed, placements, ref_slowdown = _fits(w, devices, throughput, s.step)
    runs_it: dict[str, list[str]] = {}  # per free account: its tiers that run the scenario's framework
    for r in options:
        if r.kind in NOTEBOOK_KINDS and (not r.frameworks or s.framework in r.frameworks):
            runs_it.setdefault(r.quota_group or r.option, []).append(r.option)
    rows = []
    for r in options:
        d = placements.devices[r.device]
        count = r.count
        f = placements.fit(r.device, count)
        verdict, why = f.verdict, f.reason
        rel, source, large = speed[r.device]
        reason = None  # the first that holds: what the option cannot run outranks what does not fit on it
        if isinstance(r.frameworks, tuple) and r.frameworks and s.framework not in r.frameworks:
            reason = f"runs {', '.join(r.frameworks)} only; the scenario uses {s.framework}"
            other = [o for o in runs_it.get(r.quota_group or r.option, []) if o != r.option] if r.kind in NOTEBOOK_KINDS else []
            if other:  # Kaggle's P100 fails with the default image's PyTorch; its 2x T4 on the same account runs it
                reason += f" ({', '.join(other)} on the same account runs {s.framework})"
            said = [c.strip() for c in str(r.notes or "").split(";") if s.framework.lower() in c.lower()]
            if said:  # what the catalog knows about it, sourced in the row
                reason += f"; the catalog says: {said[0]}"
        elif d.kind == "tpu" and s.framework == "pytorch":
            reason = workload.PYTORCH_ON_TPU
        elif verdict == "does-not-fit":
            reason = why
        elif not (isinstance(rel, float) and math.isfinite(rel) and rel > 0):
            reason = "no speed figures for this device in the catalog"
        elif r.kind in HOME_KINDS and s.host_unpriced:
            reason = "needs a host computer: set you.host_price (or you.host_machine: true)"
        elif r.kind in NOTEBOOK_KINDS and isinstance(r.quota_h_total, float) and r.quota_h_total == 0:
            reason = "the tier grants no hours"
        rows.append(dict(option=r.option, verdict=verdict, fit_reason=why,
                         slowdown=workload.slowdown_at(f, w, s.step, float(large)) / ref_slowdown,
                         relative_speed=rel * workload.data_parallel_speed(count, w.sharding, gpus=r.gpu_class),
                         speed_source=source, reason=reason))
    return pd.DataFrame(rows, columns=["option", "verdict", "fit_reason", "slowdown", "relative_speed",
                                       "speed_source", "reason"])


def process_for(ph: Phase, r: Any, s: Scenario | QuoteInputs, checkpoint_gb: float, checkpoint_every_h: float | None = None
                ) -> sessions.Process:
    """The session process of one round of phase ``ph`` on option row ``r``: one run, or the runs
    its machine carries at once (:func:`machine_runs`), which share its sessions, setup and
    restores."""
    local = r.kind in HOME_KINDS
    paused = r.interruption_mode == "pause"  # the machine comes back with its disk
    persistent = local or bool(r.persistent_storage) or paused
    mounted = mounts_datasets(r)
    transfer = float_or(r.transfer_gb_per_h)
    setup_h = 0.0 if local else sessions.setup_hours_per_session(float_or(r.setup_min), transfer,
                                                                  persistent or mounted, ph.dataset_size_gb)
    restore_h = 0.0 if persistent else sessions.copy_hours(checkpoint_gb, transfer)
    write_rate = checkpoint_write_gb_per_h(r)
    machine = machine_runs(r, ph, s.workload.sharding)
    per_ref_h = r.slowdown / machine.speed  # device hours per reference hour
    # an experiment of each group at once
    experiment_h = ph.run_length_h * per_ref_h * machine.groups if ph.run_length_h is not None else None
    work_h = ph.gpu_hours_per_run * per_ref_h
    if machine.groups > 1:  # a round's runs at once: the work spread evenly over the rounds
        work_h *= ph.runs / machine.rounds
    return sessions.Process(
        work_h=work_h,
        checkpoint_every_h=checkpoint_every_h or sessions.experiment_interval_h(ph.checkpoint_every_h, experiment_h),
        checkpoint_write_h=sessions.copy_hours(checkpoint_gb, write_rate),
        setup_first_h=setup_h,
        setup_resume_h=setup_h + restore_h,
        session_limit_h=opt_float(r.session_limit_h),
        interruptions_per_h=float_or(r.interruptions_per_h),
        resume_wait_h=float_or(r.resume_wait_h) if paused else 0.0,
    )


class MachineRuns(NamedTuple):
    """How option ``r``'s machine does a phase's runs (:func:`machine_runs`)."""

    groups: int  # runs it carries at once, one to a group of its GPUs (1: one run on every GPU)
    rounds: int  # rounds that take them all; the runs of a round share its sessions, setup and restores
    speed: float  # its speed so [x the reference GPU]


def machine_runs(r: Any, ph: Phase, sharding: str) -> MachineRuns:
    """How option ``r``'s machine does phase ``ph``'s runs. A card you own or buy, a box of
    several, a free tier's machine of two carries them side by side, one to a group of its GPUs
    (:func:`planner.model.workload.side_by_side`), which no communication slows: 2 cards you own
    do two seeds at 2x one card, not the 1.83x of one run on both; in as many rounds as take
    them all, whose runs share the round's sessions, setup and restores (Kaggle's 2x T4 does six
    seeds in three sessions, not six), the work spread evenly over the rounds. A rented offer
    takes one run an instance, as many instances as it has (:func:`sessions.parallel_runs`): one
    group, a round a run, at its machine's speed (``r.relative_speed``, every GPU on one run)."""
    count = int(r.count) if not missing(r.count) else 1
    groups = 1 if r.kind == "rent" else workload.side_by_side(count, ph.runs, sharding, gpus=r.gpu_class)
    if groups == 1:
        return MachineRuns(1, ph.runs, float(r.relative_speed))
    return MachineRuns(groups, -(-ph.runs // groups),
                       one_gpu_speed(r, sharding) * workload.machine_speed(count, groups, sharding, gpus=r.gpu_class))


def one_gpu_speed(r: Any, sharding: str) -> float:
    """One GPU's speed of option ``r``'s machine [x the reference GPU]: its speed (every GPU on
    one run, data-parallel) over its GPUs' data-parallel throughput (workload.data_parallel_speed)."""
    count = int(r.count) if not missing(r.count) else 1
    return float(r.relative_speed) / workload.data_parallel_speed(count, sharding, gpus=r.gpu_class)


def checkpoint_write_gb_per_h(r: Any) -> float:
    """How fast option ``r`` writes a checkpoint [GB/h]: a card at home to its own disk
    (:data:`LOCAL_DISK_GB_PER_H`), a rented or free machine at its transfer rate (the catalog's,
    an estimate where the provider publishes none; a scenario's entry sets its own)."""
    return LOCAL_DISK_GB_PER_H if r.kind in HOME_KINDS else float_or(r.transfer_gb_per_h)


def mounts_datasets(r: Any) -> bool:
    """The option attaches datasets without copying them (no copy time, no disk for them)."""
    return bool(r.dataset_mount) if not missing(r.dataset_mount) else False


def disk_need_gb(ph: Phase, r: Any, checkpoint_gb: float) -> float:
    """What the phase needs of the option's disk [GB]: its dataset and a checkpoint (tiers that
    attach datasets without copying: the checkpoint only)."""
    return checkpoint_gb + (0.0 if mounts_datasets(r) else ph.dataset_size_gb)


def too_big(ph: Phase, r: Any, checkpoint_gb: float) -> str | None:
    """Why the phase's dataset and checkpoint cannot be copied onto the option's disk
    (:func:`disk_need_gb`), or None."""
    disk = opt_float(r.disk_gb)
    need = disk_need_gb(ph, r, checkpoint_gb)
    if disk is None or need <= disk:
        return None
    return (f"the dataset ({ph.dataset_size_gb:g} GB) and a checkpoint ({checkpoint_gb:g} GB) need {need:g} GB; "
            f"the tier's disk holds {disk:g} GB")


def checkpoint_gb_of(s: Scenario | QuoteInputs, ph: Phase) -> float:
    """The phase's checkpoint size; by default weights and optimizer states."""
    return ph.checkpoint_size_gb if ph.checkpoint_size_gb is not None else workload.checkpoint_gb(s.workload)


def download_gb_of(s: Scenario | QuoteInputs, ph: Phase) -> float:
    """What each run of the phase leaves to download [GB]: its checkpoint where the phase gives
    its size, else the trained weights (:func:`planner.model.workload.weights_gb`): a full
    fine-tune of a 7B model takes away 27 GB of weights, not the 107 GB its resumable
    checkpoint holds with the optimizer's states."""
    return ph.checkpoint_size_gb if ph.checkpoint_size_gb is not None else workload.weights_gb(s.workload)


_OPTION_ROWS = Kept()
#: A phase's row for one option, by the phase's key and the option row's values: a what-if that
#: moves one phase re-prices that phase, and one that changes one catalog row (a price, a rate)
#: builds new tables but re-prices only that row.
_ROWS = ByValue(size=20_000)  # about 2 KB a row: tens of MB at most
#: A phase's part of its quotes' keys, one object for equal values: looking up each of a phase's
#: options in _ROWS then compares it by identity, not the phase, workload and dates field by field.
_PHASE_KEYS = ByValue(size=2_000)


def quote(s: Scenario, opts: pd.DataFrame, feas: pd.DataFrame, step: Step | None = None) -> pd.DataFrame:
    """The quotes of :func:`quote_records` as a DataFrame (a view for notebooks and CSV)."""
    return quotes_frame(quote_records(s, opts, feas, step))


def quote_table(s: Scenario, opts: pd.DataFrame, feas: pd.DataFrame, step: Step | None = None) -> QuoteTable:
    """The quotes of :func:`quote_records` as named columns, what the optimiser reads."""
    return QuoteTable.of(quote_records(s, opts, feas, step))


@dataclass(frozen=True)
class QuoteYou:
    """What a quote reads of ``you``: the rest (your budget, credits, cards, grid) is the
    options' and the program's."""

    host_power_w: float  # read for cards at home
    time_value_usd_per_hour: float  # read where sessions are started by hand
    attention_starts_per_day: float  # likewise
    carbon_usd_per_kg: float | None

    @classmethod
    def of(cls, you: You) -> QuoteYou:
        return cls(you.host_power_w, you.time_value_usd_per_hour, you.attention_starts_per_day, you.carbon_usd_per_kg)


@dataclass(frozen=True)
class QuoteInputs:
    """Everything a quote reads of its scenario, whole and frozen. A quote is priced from this
    record and its option's alone, so a scenario field it would read and this record leaves out
    is an AttributeError in every plan, never a stale price in a sweep. It answers the Scenario's
    questions a quote asks (``window``, ``last_day``, ``ranges``) for its one phase, and says
    what an option's quote is kept under (:meth:`key`)."""

    phase: Phase
    begin: dt.date
    end: dt.date  # exclusive, as Scenario.window
    workload: Workload
    electricity_usd_per_kwh: float
    you: QuoteYou
    work_range: tuple[float, float] | None  # the phase's gpu_hours written as a range
    phase_confidence: float
    step: Step | None = None  # the workload's step: the range of its fixed time widens the planned hours
    sold_on: dt.date | None = None  # the horizon's end, where the phase's window runs past it (Scenario.card_window)

    @classmethod
    def of(cls, s: Scenario, ph: Phase, step: Step | None = None) -> QuoteInputs:
        begin, end = s.window(ph)
        sold = s.card_window(ph)[1]
        return cls(ph, begin, end, s.workload, s.electricity_usd_per_kwh, QuoteYou.of(s.you),
                   s.ranges.get(f"phases.{ph.name}.gpu_hours"), s.phase_confidence, step,
                   sold if sold < end else None)

    @functools.cached_property
    def _every_option_reads(self) -> _HashedOnce:
        values = _HashedOnce((self.phase, self.begin, self.end, self.workload, self.work_range, self.phase_confidence,
                              self.step, self.you.carbon_usd_per_kg))
        return _PHASE_KEYS.get(values, lambda: values)  # one object for equal values: keys then compare by identity

    def key(self, r: Option) -> tuple:
        """What option ``r``'s quote is kept under in a process (pricing.memo), with ``r``: these
        inputs less those its kind never reads, blank. Electricity and the host's power are read
        for cards at home, your time and attention where sessions are started by hand, the day
        cards are sold for a card bought; so a what-if that moves your time re-prices the free
        tiers, not the rented machines (tests/test_plan.py changes each blank field and finds the
        quote the same)."""
        home, by_hand = r.kind in HOME_KINDS, bool(r.needs_person)
        return (self._every_option_reads,
                (self.electricity_usd_per_kwh, self.you.host_power_w) if home else None,
                (self.you.time_value_usd_per_hour, self.you.attention_starts_per_day) if by_hand else None,
                self.sold_on if r.kind == "buy" else None)

    def window(self, ph: Phase) -> tuple[dt.date, dt.date]:
        assert ph == self.phase, "a quote's inputs answer for their own phase"
        return self.begin, self.end

    def last_day(self, ph: Phase) -> dt.date:
        return self.window(ph)[1] - dt.timedelta(days=1)

    @property
    def ranges(self) -> dict[str, tuple[float, float]]:
        return {} if self.work_range is None else {f"phases.{self.phase.name}.gpu_hours": self.work_range}


class _HashedOnce:
    """Values hashed once: a phase's part of the key of each of its options' quotes."""

    __slots__ = ("_hash", "values")

    def __init__(self, values: tuple):
        self.values, self._hash = values, hash(values)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _HashedOnce) and self._hash == other._hash and self.values == other.values


def quote_records(s: Scenario, opts: pd.DataFrame, feas: pd.DataFrame, step: Step | None = None) -> list[Quote]:
    """Price every (phase, usable option): expected hours, dates and cost parts [USD].

    A quote is priced from its :class:`QuoteInputs` and the option's own record alone, and kept
    per process under the option and what of those inputs it reads (:meth:`QuoteInputs.key`):
    a what-if that moves one of them prices again what it touches, never less."""
    options = usable_options(opts, feas)
    out = []
    for ph in s.phases:
        inputs = QuoteInputs.of(s, ph, step)
        out += [_ROWS.get((inputs.key(r), r), functools.partial(_phase_row, inputs, ph, r)) for r in options]
    return out


def usable_options(opts: pd.DataFrame, feas: pd.DataFrame) -> list[Option]:
    """The options that can run (no ``reason`` in ``feas``, :func:`exclusions`), as records with
    their fit merged in, in the table's order: those quoted, kept per process for these very
    tables (pricing.memo.Kept); read-only. ``feas`` holds a row per option in the table's order,
    as :func:`exclusions` makes it; any other table is merged with it on the option."""
    def usable_rows() -> list[Option]:
        option = opts["option"].to_numpy()
        if len(feas) != len(opts) or not (feas["option"].to_numpy() == option).all() or len(set(option)) < len(option):
            merged = opts.merge(feas, on="option")
            return options_of(merged[merged["reason"].isna()])
        usable = feas["reason"].isna().to_numpy()
        return options_of(opts[usable], feas[usable])

    return _OPTION_ROWS.get((opts, feas), (), usable_rows)


def _phase_row(s: QuoteInputs, ph: Phase, r: Option) -> Quote:
    """Price one usable option ``r`` for phase ``ph``. A card bought works until it is sold at the
    horizon's end (``QuoteInputs.sold_on``), as the program books it (milp.Calendar): where the
    phase's window runs past that day, the card's own window ends there."""
    begin, end = s.window(ph)
    sold = s.sold_on if r.kind == "buy" else None  # a card bought works until then
    end = sold or end
    last_day = end - dt.timedelta(days=1)
    checkpoint_gb = checkpoint_gb_of(s, ph)
    rented = r.kind == "rent"
    proc = process_for(ph, r, s, checkpoint_gb)
    machine = machine_runs(r, ph, s.workload.sharding)
    rounds = machine.rounds  # the runs, or the rounds of those side by side
    cap = _capacity(s, r, opt_float(r.session_limit_h))  # an upper bound before the session model
    if cap <= 0:
        return _no_hours(ph, r, proc, cap, rounds)
    supply = opt_float(r.supply)
    parallel = sessions.parallel_runs(r.kind, ph.runs, int(supply) if supply else None)
    window_h = max((end - begin).days, 1) / 7.0 * cap * parallel / rounds
    e, sd_run, scale = _expected_run(proc, window_h)
    session_h = e.wall_h / e.sessions if e.sessions > 0 and math.isfinite(e.wall_h) else opt_float(r.session_limit_h)
    if e.sessions > 0 and math.isfinite(e.wall_h):
        cap = _capacity(s, r, session_h)
    open_cap = _capacity(s, r, session_h, weekly_quota=False)
    wall = e.wall_h * rounds
    n_sessions = e.sessions * rounds
    restarts = n_sessions if bool(r.needs_person) else 0.0
    # wall hours not exceeded at the scenario's confidence (runs independent): capacity and dates
    # are planned with them. Over the interruptions, a default rate's range, the speed and the
    # work (workload.work_spread): the spreads the uncertainty analysis draws
    job_sd = ph.job_hours_rel_sd(s.phase_confidence)
    fp8, step = shared_rel_sd(s, r, s.step)
    if fp8:  # the FP8 gain's range, drawn likewise
        job_sd = math.hypot(job_sd, fp8)
    if step is not None:  # the step's fixed time, likewise
        job_sd = math.hypot(job_sd, step)
    spread = workload.work_spread(workload.speed_sigma(s.workload.family, s.workload.precision, str(r.speed_source)),
                                  s.ranges.get(f"phases.{ph.name}.gpu_hours"), job_sd, s.phase_confidence,
                                  speed_share_at_step(s, r, s.step))
    low, high, billed_low, billed_high = _at_range_ends(proc, r, scale, rounds)
    shift, over_rate = _over_rate(r, (low, wall, high), s.phase_confidence)
    # the speed and the work move every session hour, the interruptions' too: their relative spread
    # scales the hours at a default rate's mean (wall + shift), and the rate's own spread with them
    # (the sd of a product of independent factors; the uncertainty analysis draws hours as work /
    # speed x the hours at its drawn rate). On the hours at the rate used alone, a spot RTX 4090's
    # 38 h were said to end in time at 92.9 % and did in 89.0 % of its own analysis's draws (90.1 %
    # said now: tests/test_uncertainty.py).
    wall_conf = shift + sessions.wall_at_chance_h(
        wall, math.sqrt((sd_run * math.sqrt(rounds)) ** 2 + ((wall + shift) * spread) ** 2
                        + (over_rate ** 2) * (1.0 + spread ** 2)), s.phase_confidence)
    weeks = wall_conf / (cap * parallel) if cap > 0 else math.inf
    month_h = opt_float(r.cap_h_per_month)
    if month_h:  # alone on a subscription: a month's units a month, on average
        weeks = max(weeks, wall_conf / month_h * units.WEEKS_PER_MONTH)
    total_quota = opt_float(r.quota_h_total)
    finish = sessions.finish_day(begin, weeks * 7)
    disk_problem = too_big(ph, r, checkpoint_gb)
    fits_disk = not disk_problem  # ok: finishes alone in time; usable: may take a share
    reason = _why_not_alone(ph, r, proc, disk_problem, wall, finish, last_day, sold)
    months_used = max(weeks * 7 / units.DAYS_PER_MONTH, 0.0)
    billed = rounds * sessions.billed_hours(proc, e.wall_h - e.wait_h, e.sessions, float_or(r.startup_min) / 60.0,
                                             (opt_float(r.billing_s) or 0.0) / 3600.0,
                                             exact=scale == 1) if rented else 0.0
    # what the plan costs is its expected cost: over a default interruption rate's range, as the
    # uncertainty analysis draws it, the hours' mean lies above those at the rate used (0.05-0.5
    # around 0.1: a mean rate of 0.22), so the money, energy and emissions count that mean
    billed_shift = _over_rate(r, (billed_low, billed, billed_high))[0] if rented else 0.0
    parts = money_by_part(s, ph, r, wall + shift, billed + billed_shift, restarts, months_used)
    energy = carbon.energy_kwh(float_or(r.board_w), s.you.host_power_w if r.kind in HOME_KINDS else 0.0,
                               wall + shift, float_or(r.pue, 1.0))
    return Quote(
        phase=ph.name, option=r.option, kind=r.kind, device=r.device, offer=r.offer,
        relative_speed=machine.speed, speed_source=r.speed_source, verdict=r.verdict,
        fit_reason=r.fit_reason, spot=r.spot, side_by_side=machine.groups,
        interruptions_per_h=opt_float(r.interruptions_per_h), device_hours=proc.work_h * rounds,
        wall_hours=wall, wall_hours_conf=wall_conf, billed_hours=billed, sessions=n_sessions,
        restarts_by_hand=restarts,
        lost_hours=e.lost_h * rounds, setup_hours=e.setup_h * rounds, wait_hours=e.wait_h * rounds,
        session_limit_h=opt_float(r.session_limit_h),
        checkpoint_hours=e.checkpoint_h * rounds, weekly_capacity_h=cap, open_capacity_h=open_cap,
        quota_h_per_week=opt_float(r.quota_h_per_week), quota_reset=r.quota_reset, supply=supply, finish=finish,
        units_per_hour=opt_float(r.units_per_hour), quota_group=r.quota_group,
        needs_person=bool(r.needs_person), quota_h_total=total_quota, cap_h_per_month=opt_float(r.cap_h_per_month),
        wall_hours_rate_low=low, wall_hours_rate_high=high, billed_hours_rate_low=billed_low,
        billed_hours_rate_high=billed_high, wall_hours_rate_shift=shift, wall_hours_run_sd=sd_run * math.sqrt(rounds),
        storage_months=months_used,
        ok=reason is None, usable=fits_disk, reason=reason, energy_kwh=energy,
        co2_kg=(wall + shift) * float_or(r.co2_kg_per_wall_h), cost_usd=sum(parts.values()),
        **{f"{k}_usd": v for k, v in parts.items()},
    )


def shared_rel_sd(s: Scenario | QuoteInputs, r: Option, step: Step | None) -> tuple[float, float | None]:
    """The parts of option ``r``'s relative standard deviation of hours that one draw of the
    uncertainty analysis moves on other options too, signed by the way they move its hours:
    (the FP8 gain's, 0 unless ``r`` and the reference differ in FP8: fewer hours with a larger
    gain where ``r`` trains in FP8, more where the reference does; the step's fixed time, None
    unless the speed is measured or estimated on large work and taken to the job's ``step``:
    more hours with a longer fixed time on a device faster than the reference, fewer on a
    slower one). Quotes plan their hours at the confidence with them, and a phase's chance of
    ending in time adds each up over its options before squaring it (optimize._on_time)."""
    fp8 = 0.0
    if s.workload.precision == "fp8" and r.fp8 != r.reference_fp8:
        fp8 = workload.fp8_gain_rel_sd() * (-1.0 if r.fp8 else 1.0)
    speeds = _at_step(s, r, step)
    if step is None or speeds is None:
        return fp8, None
    ratio = speeds[1]
    return fp8, workload.size_rel_sd(step, ratio) * (1.0 if ratio > 1.0 else -1.0)


def speed_share_at_step(s: Scenario | QuoteInputs, r: Option, step: Step | None) -> float:
    """The share of option ``r``'s hours that its device's speed moves, at the job's ``step``:
    the uncertainty analysis draws the speed on large work (log-normal) and takes it to the step,
    whose fixed time no device shortens, so the hours at the step go as (1 - e) + e / (the drawn
    speed over the speed planned), e being the compute's share of the device's step,
    (1 - f) / R x the speed at the step (f: the step's fixed share on the reference, R: the
    device's large-work ratio). 1 where the speed is not measured or estimated on large work and
    taken to a step (a speed you measured on your job, the reference, large work). A small job's
    spread of hours from the speed was booked whole: two RTX 4090s on a 125M model stated 92.7 %
    where the draws found 96.0 %."""
    speeds = _at_step(s, r, step)
    if step is None or speeds is None:
        return 1.0
    one_gpu, ratio = speeds
    if not (math.isfinite(ratio) and ratio > 0 and math.isfinite(one_gpu)):
        return 1.0
    return min(max((1.0 - step.share) / ratio * one_gpu, 0.0), 1.0)


def _at_step(s: Scenario | QuoteInputs, r: Option, step: Step | None) -> tuple[float, float] | None:
    """(one GPU's speed, its ratio at the job's ``step``) of option ``r`` (workload.at_scale),
    where its speed is measured or estimated on large work and taken to the step; else None."""
    if step is None or r.speed_source not in ("measured", "estimated"):
        return None
    one_gpu = one_gpu_speed(r, s.workload.sharding)
    return one_gpu, float(workload.at_scale(one_gpu, step.share))


def _expected_run(proc: sessions.Process, window_h: float) -> tuple[sessions.Expectation, float, float]:
    """The session model's expected run and its standard deviation [h], and the scale used: the
    model's cost grows with the work, so when even an overhead-free run could not end in the
    window's ``window_h``, the share that fits is priced and scaled (per-hour factors; the
    parts independent, their variances add)."""
    scale = max(1.0, proc.work_h / max(window_h, proc.checkpoint_every_h))
    part = dataclasses.replace(proc, work_h=proc.work_h / scale) if scale > 1 else proc
    e = sessions.expected(part)
    sd_run = sessions.wall_sd_h(part, e) * math.sqrt(scale)
    if scale > 1:
        e = dataclasses.replace(e, wall_h=e.wall_h * scale, sessions=e.sessions * scale,
                                setup_h=e.setup_h * scale, checkpoint_h=e.checkpoint_h * scale,
                                wait_h=e.wait_h * scale, work_h=proc.work_h)
    return e, sd_run, scale


def _why_not_alone(ph: Phase, r: Option, proc: sessions.Process, disk_problem: str | None, wall_h: float,
                   finish: dt.date | None, last_day: dt.date, sold_on: dt.date | None = None) -> str | None:
    """Why the option cannot do the whole phase alone by its deadline (None: it can): sessions
    too short for one checkpoint, no room on its disk, a one-off grant too small, too slow
    (``sold_on``: the card is sold that day, the horizon's end, before the deadline; ``last_day``
    is the day before)."""
    total_quota = opt_float(r.quota_h_total)
    if not proc.feasible():
        return (f"{units.a_or_an(f'{r.session_limit_h:g}')} {r.session_limit_h:g} h session cannot fit setup and one "
                f"{ph.checkpoint_every_h * 60:g} min checkpoint interval")
    if disk_problem:
        return disk_problem
    if total_quota is not None and wall_h > total_quota:
        return f"needs {wall_h:.0f} h, the tier grants {total_quota:g} h in all"
    if finish is None or finish > last_day:
        when = f"finishes {finish}" if finish else "would run past the year 9999"
        if sold_on is not None:
            return f"{when}, after the horizon's end {sold_on}, when a card bought for the plan is sold"
        return f"{when}, after the {'deadline' if ph.deadline else 'horizon end'} {last_day}"
    return None


def money_by_part(s: Scenario | QuoteInputs, ph: Phase, r: Any, wall_h: Any, billed_h: Any, restarts: Any, months: Any,
                  share: float = 1.0, rent_factor: Any = 1.0,
                  electricity_factor: Any = 1.0, time_value_factor: Any = 1.0, carbon_factor: Any = 1.0) -> dict[str, Any]:
    """Money of a phase's share on option ``r`` by part [USD]: the one pricing formula. The quote
    calls it with the session model's expected hours, the Monte Carlo spread with sampled hours,
    the uncertainty analysis with hours and prices drawn (``*_factor``: the draw over the price
    used); scalars or numpy arrays alike.

    Electricity: (board + host power) x wall hours x price (cards you own or buy). Rent: billed
    hours x price (rented); the fees of the months whose units the wall hours burn (a
    subscription); wall hours x the derived price (units bought as you go; free tiers cost 0).
    Storage: dataset and checkpoint kept for ``months``; egress: what each run leaves
    downloaded (:func:`download_gb_of`; both for ``share`` of the phase: the hours are already
    the share's).
    Your time: the setup of each session started by hand. Carbon: the wall hours' emissions
    (planner.model.carbon) at your carbon price, none without one."""
    checkpoint_gb = checkpoint_gb_of(s, ph)
    zero = 0.0 * wall_h
    parts = dict.fromkeys(PART_NAMES, zero)
    if r.kind in HOME_KINDS:
        parts["electricity"] = costs.electricity_usd(r.power_w, s.you.host_power_w, wall_h,
                                                     s.electricity_usd_per_kwh * electricity_factor)
    elif r.kind == "rent":
        parts["rent"] = billed_h * r.usd_per_hour * rent_factor
        parts["storage"] = costs.storage_usd(ph.dataset_size_gb + checkpoint_gb, months,
                                             float_or(r.storage_usd_per_gb_month)) * share + zero
        parts["egress"] = costs.egress_usd(download_gb_of(s, ph) * ph.runs, float_or(r.egress_usd_per_gb)) * share + zero
    elif r.kind == "subscription" and opt_float(r.usd_per_month) and opt_float(r.cap_h_per_month):
        # paid by the month: the fees of the months whose units the hours burn (the program
        # prices the months themselves: milp.subscription)
        parts["rent"] = np.ceil(wall_h / r.cap_h_per_month - 1e-9) * r.usd_per_month * rent_factor
    else:  # free tiers (0) and compute units bought as you go at their price per hour
        parts["rent"] = wall_h * float_or(r.usd_per_hour) * rent_factor
    parts["your_time"] = (restarts * float_or(r.setup_min) / 60.0 * s.you.time_value_usd_per_hour
                          * time_value_factor + zero)
    parts["carbon"] = wall_h * float_or(r.co2_kg_per_wall_h) * (s.you.carbon_usd_per_kg or 0.0) * carbon_factor + zero
    return parts


def _over_rate(r: Any, walls: tuple[float, float, float], chance: float | None = None) -> tuple[float, float]:
    """What a default interruption rate's range adds to the phase's wall (or billed) hours on
    option ``r`` (``walls``: those hours at the range's low end, the rate used and its high end):
    (mean, sd) [h], the sd as the plan books it at ``chance`` where given (sessions.wall_over_rate_h)."""
    if not math.isfinite(walls[0]):
        return 0.0, 0.0
    return sessions.wall_over_rate_h((float_or(r.interruptions_low_per_h), float_or(r.interruptions_per_h),
                                      float_or(r.interruptions_high_per_h)), walls, chance)


def _at_range_ends(proc: sessions.Process, r: Any, scale: float, rounds: int) -> tuple[float, float, float, float]:
    """Expected wall and billed hours of the phase at the low and high ends of the option's
    default interruption range (wall low, wall high, billed low, billed high; NaN without a
    range): the uncertainty analysis interpolates between them and the rate used, since the
    overhead is convex in the rate (and a paused machine's waits are not billed)."""
    low, high = opt_float(r.interruptions_low_per_h), opt_float(r.interruptions_high_per_h)
    if low is None or high is None or not isinstance(r.interruptions_default, str):
        return math.nan, math.nan, math.nan, math.nan
    part = dataclasses.replace(proc, work_h=proc.work_h / scale)
    walls, billed = [], []
    for rate in (low, high):
        at = dataclasses.replace(part, interruptions_per_h=rate)
        e = sessions.expected(at)
        walls.append(e.wall_h * scale * rounds)
        billed.append(scale * rounds * sessions.billed_hours(at, e.wall_h - e.wait_h, e.sessions,
                                                          float_or(r.startup_min) / 60.0,
                                                          (opt_float(r.billing_s) or 0.0) / 3600.0, exact=False)
                      if r.kind == "rent" else 0.0)
    return walls[0], walls[1], billed[0], billed[1]


def available_share(r: Any) -> float:
    """Share of session starts at which the option's device is to be had (1 unless the catalog
    gives the tier's device an ``unavailable_share``)."""
    return 1.0 - (opt_float(r.unavailable_share) or 0.0)


def _capacity(s: Scenario | QuoteInputs, r: Any, session_h: float | None, weekly_quota: bool = True) -> float:
    """Weekly wall hours of option ``r`` for sessions lasting ``session_h``. Without
    ``weekly_quota``: what sessions and your starts allow at most, the rate inside a week before
    the quota runs out (a quota week the plan covers only in part still grants its whole quota).
    A subscription's compute units bound its hours by the month, in the program (``milp.subscription``):
    a month's units may all be spent in one week."""
    quota = opt_float(r.quota_h_per_week) if weekly_quota else None
    return sessions.weekly_capacity_h(session_h, quota, bool(r.needs_person), s.you.attention_starts_per_day,
                                      available_share(r))


def _no_hours(ph: Phase, r: Option, proc: sessions.Process, cap: float, rounds: int) -> Quote:
    """A quote for an option that offers no hours at all."""
    return no_hours_quote(dict(
        phase=ph.name, option=r.option, kind=r.kind, device=r.device, offer=r.offer, open_capacity_h=cap,
        quota_h_per_week=r.quota_h_per_week, quota_reset=r.quota_reset, relative_speed=r.relative_speed, side_by_side=1,
        speed_source=r.speed_source, verdict=r.verdict, fit_reason=r.fit_reason, device_hours=proc.work_h * rounds,
        weekly_capacity_h=cap, units_per_hour=r.units_per_hour, quota_group=r.quota_group,
        needs_person=r.needs_person, quota_h_total=r.quota_h_total, cap_h_per_month=r.cap_h_per_month))


_CARD_PATHS = Kept()

#: Per buy option, per day the plan may buy it on: (day from the start, price, resale at the
#: horizon's end of a card bought that day) [USD].
CardPath = tuple[tuple[int, float, float], ...]


def card_costs(s: Scenario, opts: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """(purchase, resale at the horizon's end) per buy option [USD] for a card bought on the
    first day: the first step of :func:`card_paths`. Read-only."""
    return {b: (path[0][1], path[0][2]) for b, path in card_paths(s, opts).items()}


def card_paths(s: Scenario, opts: pd.DataFrame) -> dict[str, CardPath]:
    """Per buy option, what buying it costs on each day the plan may buy it (``Scenario.buy_days``:
    the first day, and every few weeks with ``buy_later``), asked once per options table and
    figures in a process (pricing.memo). Read-only."""
    inputs = CardInputs.of(s)

    def paths() -> dict[str, CardPath]:  # the cells card_path reads, not every column's row (iterrows)
        buy = np.flatnonzero(opts["kind"].to_numpy() == "buy")
        cells = {c: opts[c].to_numpy()[buy].tolist() for c in _CARD_CELLS if c in opts}
        return {o["option"]: card_path(inputs, o) for o in (dict(zip(cells, row)) for row in zip(*cells.values()))}

    return _CARD_PATHS.get((opts,), (inputs,), paths)


#: What :func:`card_path` reads of an option's row.
_CARD_CELLS = ("option", "purchase_usd", "as_of", "condition", "resale_usd", "resale_fraction", "resale_model_factor")


@dataclass(frozen=True)
class CardInputs:
    """Everything a card's prices read of their scenario: the key they are kept under
    (pricing.memo), the only record :func:`card_path` sees from :func:`card_paths`."""

    start: dt.date
    horizon_months: float
    buy_days: tuple[int, ...]
    buy_trend_per_year: float
    buy_price_points: tuple[tuple[dt.date, float], ...]

    @classmethod
    def of(cls, s: Scenario) -> CardInputs:
        return cls(s.start, s.horizon_months, s.buy_days, s.buy_trend_per_year, s.buy_price_points)

    @property
    def buy_moves(self) -> bool:
        return prices_move(self.buy_trend_per_year, self.buy_price_points)


def card_path(s: Scenario | CardInputs, opt: Mapping[str, Any]) -> CardPath:
    """A buy option's price on each of ``s.buy_days``, along ``buy_price_trend`` from the offer's
    own date (flat without one), and the resale at the horizon's end of a card bought that day:
    the offer's own figure, else the default model at the card's age then (bought later, sold
    younger; :func:`costs.resale_usd`)."""
    days = np.array(s.buy_days, dtype=float)
    price = float(opt["purchase_usd"])
    prices = np.full(len(days), price)
    if s.buy_moves:
        dated = opt.get("as_of")
        priced = float((dated - s.start).days) if isinstance(dated, dt.date) else 0.0
        points = tuple((float((d - s.start).days), lv) for d, lv in s.buy_price_points)
        prices = price * costs.path_factor(days, priced, s.buy_trend_per_year, points)
    months = s.horizon_months - days * 24.0 / units.HOURS_PER_MONTH
    return tuple((int(d), float(p), float(costs.resale_usd(float(p), float(m), opt["condition"],
                                                           opt_float(opt["resale_usd"]),
                                                           opt_float(opt["resale_fraction"]),
                                                           opt_float(opt.get("resale_model_factor")))))
                 for d, p, m in zip(days, prices, months))
