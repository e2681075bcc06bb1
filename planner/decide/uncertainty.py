"""How sure is the answer: the inputs' uncertainty carried to each strategy's cost and finish.

Every uncertain input gets a distribution from its source (:func:`inputs`):

- a speed (:func:`planner.model.workload.speed_sigma`): log-normal around the catalog's, each
  median absolute error m giving sigma = m / 0.674, the normal's median absolute deviation
  (``python bench/speed_error.py``, 2026-11-27): ``measured`` on other jobs, by how far a
  measured ratio moves on a job left out (the published same-job pairs), ``estimated`` by the
  speed model's leave-one-device-out error and that, in quadrature, ``yours`` by 5 % (an
  estimate of run-to-run spread); at the job's step, the
  speed on large work is drawn so and then taken to the job's size with a step's fixed time
  per layer drawn triangular over its range (planner.model.workload.STEP_FIXED_S_PER_LAYER),
  one for every device;
- a catalog price (not one the scenario gives: that is yours): log-normal, 5 % plus 15 % a year of the price's age (an
  estimate: regions, zones and time move prices; the 2026-11 catalog audit found
  shipped prices off by up to 1.8x);
- an interruption rate taken from a default: triangular over the default's
  sourced range, its mode the rate the plan used;
- resale by the default model: uniform within +-23 % of it (the 500-800 USD spread of used
  RTX 3090 prices in 2026 around its 650 USD middle, local-llm.net), never above what the card
  sold the day it is bought brings (a short horizon's card would otherwise sell for more than
  its price);
- the scenario's own ranges (docs/scenario.md, ``200..300`` or ``250 h +- 20%``):
  uniform over the range, for GPU-hours, electricity and the value of your time.

Each strategy's best plan (and the chosen plan, the hybrid) is then re-priced
under every joint draw with its assignments fixed: work and session hours scale
with the phase's GPU-hours over the speed, lost hours with the interruption
rate, rent with the price, purchases and resale with theirs. That is linear
algebra on the quotes (one matrix product per strategy), not a new MILP, so a
thousand draws take milliseconds. A fixed plan that runs late in a draw counts
as missing its deadline there; the analysis does not re-plan around it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from pricing.values import float_or, missing, opt_float

from ..model import carbon, costs, units, workload
from ..model.costs import NOT_CASH
from ..model.records import HOME_KINDS
from ..model.sessions import at_rates, triangular_ppf
from . import quotes
from .options import commitments_of, packs_of, subscriptions_of
from .quotes import card_costs

#: A plan and one strategy's plan (planner.decide.result.Plan and Alternative): not imported,
#: since the result module shows this analysis and modules import one way only.
Plan = Any
Alternative = Any

#: Spread of a catalog price: this much at once, growing this much a year of age (estimates).
PRICE_SIGMA = 0.05
PRICE_SIGMA_PER_YEAR = 0.15
#: Resale within +-23 %: used RTX 3090s sold for 500-800 USD in 2026 (local-llm.net), around 650.
RESALE_SPREAD = 0.23
#: Weaker rank correlations than this are not named as drivers (noise at a few hundred draws).
MIN_IMPORTANCE = 0.1
#: Ranges a scenario may give that the analysis draws from (others: the middle, said so).
SAMPLED_RANGES = ("phases.*.gpu_hours", "electricity", "you.time_value")


@dataclass(frozen=True)
class Input:
    """One uncertain input: its draws (in ``unit``), the value the plan used and where the spread
    comes from."""

    name: str
    draws: np.ndarray
    base: float
    unit: str
    source: str


@dataclass(frozen=True)
class StrategyOutcome:
    strategy: str
    cost_usd: np.ndarray  # per draw
    finish: np.ndarray  # last phase's finish per draw, days since the start
    meets: np.ndarray  # every deadline met, per draw
    co2_kg: np.ndarray | None = None  # emissions per draw [kg CO2e]


@dataclass(frozen=True)
class Driver:
    input: str
    importance: float  # |Spearman correlation| with the cost difference of the decision
    flips_at: float | None  # the input's value where the decision flips (None: not within its range)
    unit: str
    wins_above: str | None  # which strategy wins above flips_at
    #: the plan re-planned just below and just above flips_at (api.replan_flips): what it buys and
    #: where it runs on each side; None where the input is not one a plan can be re-planned at
    #: (a speed, a resale, a default rate, a trend): the flip is then re-priced, not re-planned
    replanned: tuple[str, str] | None = None


@dataclass(frozen=True)
class Uncertainty:
    samples: int
    seed: int
    start: dt.date
    outcomes: tuple[StrategyOutcome, ...]
    chosen: StrategyOutcome | None  # the plan's own outcome (None without any strategy's plan)
    p_cheapest: dict[str, float]
    p_chosen_cheapest: float
    drivers: tuple[Driver, ...]
    inputs: tuple[Input, ...]
    decision: tuple[str, str] | None  # (chosen strategy, runner-up) the drivers move
    not_sampled: tuple[str, ...] = ()  # ranges given but not drawn
    aliases: dict[str, str] = field(default_factory=dict)  # strategy -> the first with the very same plan


def _options(plan: Plan) -> pd.DataFrame:
    """The options the plan was made from (every plan analysed keeps them)."""
    assert plan.options is not None, "an analysed plan keeps its options"
    return plan.options


def _lognormal(rng: np.random.Generator, n: int, sigma: float) -> np.ndarray:
    return np.exp(rng.normal(0.0, sigma, n)) if sigma > 0 else np.ones(n)


def inputs(plan: Plan, n: int, seed: int) -> list[Input]:
    """The uncertain inputs of the options the strategies' plans use, drawn ``n`` times (seeded;
    one generator, inputs in a fixed order, so the same seed gives the same draws)."""
    s = plan.scenario
    rng = np.random.default_rng(seed)
    opts: Any = _options(plan).drop_duplicates("option").set_index("option")  # rows read cell by cell
    q: Any = plan.quotes.drop_duplicates("option").set_index("option")
    used = sorted({o for a in plan.alternatives for _, o, _ in a.hours} | {b for a in plan.alternatives for b in a.bought})
    out: list[Input] = []
    family, precision = s.workload.family, s.workload.precision
    fitted = workload.memory_precision(precision)
    median = workload.SPEED_MEDIAN_ERROR.get((family, fitted), workload.SPEED_MEDIAN_ERROR_ALL)
    job_median = workload.SPEED_JOB_MEDIAN_ERROR.get((family, fitted), workload.SPEED_JOB_MEDIAN_ERROR_ALL)
    spreads = {"estimated": f"leave-one-device-out error of the speed model, {family} {precision} (median {median:.0%}), "
                            f"and a new job's (median {job_median:.0%}, leave one job out)",
               "measured": f"measured on other jobs: a new job's ratio moves by a median {job_median:.0%} "
                           "(leave one job out)",
               "yours": f"yours; {workload.YOUR_SPEED_SIGMA:.0%} spread (an estimate)"}
    step = plan.step
    sized: set[str] = set()  # speeds at the workload's step: drawn on large work, then at a drawn fixed time
    for device in sorted({q.at[o, "device"] for o in used if o in q.index}):
        o = next(o for o in used if o in q.index and q.at[o, "device"] == device)
        row = q.loc[o]
        source = row["speed_source"]
        if device == s.workload.reference_gpu:
            continue  # the work is measured in its hours
        count = opts.at[o, "count"]
        one_gpu = float(row["relative_speed"]) / workload.machine_speed(  # its phase's runs side by side
            int(count) if not missing(count) else 1, int(row["side_by_side"]), s.workload.sharding,
            gpus=str(opts.at[o, "gpu_class"]))
        sigma = workload.speed_sigma(family, precision, source)
        why = spreads.get(source, spreads["yours"])
        large = one_gpu
        if step is not None and source in ("measured", "estimated"):
            large = float(workload.at_scale(one_gpu, step.share))
            sized.add(f"speed {device} ({source})")
            why += f"; {large:.3g}x on large work, at the job's step with its fixed time drawn"
        out.append(Input(f"speed {device} ({source})", large * _lognormal(rng, n, sigma), one_gpu,
                         f"x {s.workload.reference_gpu}", why))
    per = s.usd_per_currency
    # the catalog's figures in the scenario's currency, as the draws beside them: an hourly rate as
    # the catalog writes it in USD, converted to 4 significant digits
    hourly = "g" if s.currency == "USD" else ".4g"
    monthly = subscriptions_of(_options(plan))
    packed = packs_of(_options(plan))
    for o in used:
        r: Any = opts.loc[o]
        kind = r["kind"]
        yours = r.get("price_source") == "scenario"  # a price you wrote is yours: certain unless a range
        # units bought as you go one at a time (a month's fee and a pack's price are certain; the
        # hours of their tiers carry no price)
        paid_tier = kind == "subscription" and o not in monthly and o not in packed
        low, high = (opt_float(r.get(c)) for c in ("usd_per_hour_low", "usd_per_hour_high"))
        if kind == "rent" and not yours and low is not None and high is not None and low <= high:
            # a marketplace: the plan rents at its typical listing, the listings at or below it its
            # supply; what a user pays is about that, as far above it as the cheapest listings are
            # below (the listings past that, up to the high quantile, are not the plan's supply):
            # triangular and symmetric about the plan's price, so the draws' mean is the plan's
            price = float(r["usd_per_hour"])
            mode = min(max(price, low), high)
            top = min(high, 2.0 * mode - low)
            out.append(Input(f"price {o}", rng.triangular(low, mode, top, n) / per if top > low else
                             np.full(n, low / per), price / per, f"{s.currency}/h",
                             f"the marketplace's listings: floor {low / per:{hourly}}, typical {price / per:{hourly}} "
                             f"{s.currency}/h, the plan's price; drawn from {low / per:{hourly}} to {top / per:{hourly}} "
                             f"about it (high listing {high / per:{hourly}}; dated {r['as_of']})"))
        elif kind == "buy" and not yours and opt_float(r.get("purchase_low_usd")) is not None \
                and opt_float(r.get("purchase_high_usd")) is not None:
            # a card's market: what buyers meet, from the low to the high end, most likely the catalog's price
            lo, hi, price = float(r["purchase_low_usd"]), float(r["purchase_high_usd"]), float(r["purchase_usd"])
            out.append(Input(f"price {o}", rng.triangular(lo, min(max(price, lo), hi), hi, n) / per
                             if hi > lo else np.full(n, lo / per), price / per, s.currency,
                             f"the market's range: {lo / per:,.0f} to {hi / per:,.0f} {s.currency}, most likely "
                             f"{price / per:,.0f} (an estimate from dated figures; catalog price dated {r['as_of']})"))
        elif (kind in ("rent", "buy") or paid_tier) and not yours:
            price = float(r["purchase_usd"] if kind == "buy" else r["usd_per_hour"])
            age = ((s.start - r["as_of"]).days / 365.25) if isinstance(r["as_of"], dt.date) else 0.0
            sigma = PRICE_SIGMA + PRICE_SIGMA_PER_YEAR * max(age, 0.0)
            unit = s.currency if kind == "buy" else f"{s.currency}/h"
            out.append(Input(f"price {o}", price / per * _lognormal(rng, n, sigma), price / per, unit,
                             f"catalog price dated {r['as_of']}: {sigma:.0%} spread (5 % + 15 % a year of age; "
                             "an estimate)"))
        if kind == "buy" and missing(r.get("resale_usd")) and missing(r.get("resale_fraction")):
            out.append(Input(f"resale {o}", rng.uniform(1 - RESALE_SPREAD, 1 + RESALE_SPREAD, n), 1.0,
                             "x the resale used", "used-card prices spread +-23 % (RTX 3090, 2026, local-llm.net)"))
        rate, low, high = (opt_float(r.get(c)) for c in ("interruptions_per_h", "interruptions_low_per_h",
                                                           "interruptions_high_per_h"))
        if rate and low is not None and high is not None and high > low and isinstance(
                r.get("interruptions_default"), str):
            mode = min(max(rate, low), high)
            out.append(Input(f"interruptions {o}", rng.triangular(low, mode, high, n), rate, "/h",
                             f"default rate, its sourced range {low:g}-{high:g}/h"))
    for tier in sorted({str(opts.at[o, "offer"]) for o in used if o in opts.index
                        and not missing(opts.at[o, "quota_estimate_h_per_week"])}):
        r = opts[opts["offer"] == tier].iloc[0]
        low, high = float(r["quota_low_h_per_week"]), float(r["quota_high_h_per_week"])
        out.append(Input(f"quota {tier}", rng.uniform(low, high, n), float(r["quota_h_per_week"]), "h/week",
                         f"an estimated quota, uniform over its range {low:g}-{high:g} h a week; the plan counts on "
                         f"{float(r['quota_h_per_week']):.1f}"))
    for o in used:  # a tier's device often taken: its share, triangular over its range about the estimate
        if o not in opts.index or missing(opts.at[o, "unavailable_estimate"]):
            continue
        r = opts.loc[o]
        low, mode, high = (float(r[c]) for c in ("unavailable_low", "unavailable_estimate", "unavailable_high"))
        out.append(Input(f"unavailable {o}", rng.triangular(low, mode, high, n), float(r["unavailable_share"]),
                         SHARE_UNIT, f"an estimate from users' reports, triangular over "
                         f"{units.format_share(low)}-{units.format_share(high)} about {units.format_share(mode)}; "
                         f"planned at {units.format_share(float(r['unavailable_share']))}"))
    for path, (low, high) in sorted(s.ranges.items()):
        if _sampled(path):
            mid = (low + high) / 2
            out.append(Input(path, rng.uniform(low, high, n), mid, _range_unit(path), "your range"))
    for ph in s.phases:  # work estimated from a job: its utilisation, triangular over its range
        e = ph.job_estimate
        if ph.hours_from_job and e is not None and f"phases.{ph.name}.gpu_hours" not in s.ranges:
            mfu = rng.triangular(e.mfu_low, e.mfu, e.mfu_high, n) if e.mfu_high > e.mfu_low else np.full(n, e.mfu)
            out.append(Input(f"phases.{ph.name}.gpu_hours", e.hours_at(1.0) / mfu, ph.gpu_hours_per_run, "h",
                             f"estimated from the job: utilisation triangular over {e.mfu_low:.1%}-{e.mfu_high:.1%} "
                             f"of {e.reference_gpu}'s {'usable ' if e.measured_on else ''}peak, typically {e.mfu:.1%}"))
    placed_rent = {o for a in plan.alternatives for _, o, _ in a.price_years if o in opts.index}
    trends = {str(opts.at[o, "rent_trend_default"]): tuple(float(opts.at[o, c]) for c in TREND_COLUMNS)
              for o in sorted(placed_rent) if isinstance(opts.at[o, "rent_trend_default"], str)}
    if s.rent_trend_of_catalog and trends:  # a trend you give is yours, as above
        level = rng.random(n)  # one market: every device's trend at the same quantile of its range
        for name, (central, low, high) in sorted(trends.items()):
            out.append(Input(f"{TREND_INPUT} {name}", triangular_ppf(level, low, central, high), central, "a year",
                             f"catalog trend '{name}': {central:+.1%} a year, range {low:+.0%} to {high:+.0%} "
                             "(trends.csv; every device's trend drawn at one quantile of its range, triangular)"))
    out += _carbon_inputs(opts, used, rng, n)  # last: the draws above stay those of a plan without them
    if s.workload.precision == "fp8" and any(bool(opts.at[o, "fp8"]) != bool(opts.at[o, "reference_fp8"])
                                             for o in used if o in opts.index):
        low, high = workload.FP8_SPEEDUP_RANGE
        out.append(Input(FP8_INPUT, rng.triangular(low, workload.FP8_SPEEDUP, high, n), workload.FP8_SPEEDUP, "x",
                         f"FP8 over mixed precision, triangular over the measured {low:g}-{high:g}x (torchao, "
                         "Megatron-LM; one gain for every FP8 card: they share the software)"))
    if sized:  # drawn last, as the emissions: the draws above stay those of a plan without a step
        low, typical, high = workload.STEP_FIXED_S_PER_LAYER
        fixed = rng.triangular(low, typical, high, n)
        share = step.fixed_share(fixed)
        out = [dataclasses.replace(i, draws=np.asarray(workload.at_size(i.draws, share))) if i.name in sized else i for i in out]
        out.append(Input(STEP_INPUT, fixed * 1e3, typical * 1e3, "ms a layer",
                         f"a step's fixed time per layer, triangular over {low * 1e3:g}-{high * 1e3:g} ms (fitted on "
                         "Lambda's and Surogate's runs at several sizes; one for every device: they share the "
                         f"software); {step.layers} layers, on average {step.share:.0%} of the step on "
                         f"{s.workload.reference_gpu}"))
    # drawn last, as the step: the sessions' own spread, where something interrupts a run (when an
    # interruption strikes, the work it loses): the session model's standard deviation of the wall
    # hours (quotes: wall_hours_run_sd), which the confidence books beside the inputs' spreads; one
    # normal draw an option, in its standard deviations
    run_sd = q["wall_hours_run_sd"] if "wall_hours_run_sd" in q else None
    for o in used:
        if run_sd is not None and o in run_sd.index and float_or(run_sd.get(o)) > 0:
            out.append(Input(f"{SESSIONS_INPUT} {o}", rng.standard_normal(n), 0.0, "sd",
                             "when interruptions strike and the work each loses: the session model's own spread of "
                             "the wall hours (sessions.wall_sd_h), normal"))
    return out


#: The uncertainty analysis's name for a step's fixed time per layer (planner.model.workload.Step).
STEP_INPUT = "step fixed time"


#: The uncertainty analysis's name for the FP8 gain (``precision: fp8``).
FP8_INPUT = "fp8 gain"

#: The uncertainty analysis's name for a run's luck with its sessions on an option (when
#: interruptions strike, the work each loses), in the session model's standard deviations.
SESSIONS_INPUT = "sessions"


def _fp8_factor(by_name: dict[str, Input], r: Any, n: int) -> np.ndarray:
    """A device's speed in a draw of the FP8 gain over its speed as planned: the drawn gain over
    the planned one for an FP8 card against a reference without FP8, the inverse the other way,
    none where both (or neither) train in FP8."""
    gain = _factor(by_name, FP8_INPUT, n)
    fp8, ref = bool(r.get("fp8", False)), bool(r.get("reference_fp8", False))
    if fp8 == ref:
        return np.ones(n)
    return gain if fp8 else 1.0 / gain


def _carbon_inputs(opts: pd.DataFrame, used: list[str], rng: np.random.Generator, n: int) -> list[Input]:
    """The emissions' uncertain figures of the options used (planner.model.carbon), each
    triangular over its catalog range, most likely its central figure: each grid's intensity, each
    operator's PUE, and the making of each kind of device (at home: a card; elsewhere, a machine
    with its server share)."""
    grids: dict[str, tuple[float, float, float]] = {}
    pues: dict[str, tuple[float, float, float]] = {}
    made: dict[str, tuple[float, float, float]] = {}
    for o in used:
        if o not in opts.index or not isinstance(opts.at[o, "grid_zone"], str):
            continue
        r: dict = opts.loc[o].to_dict()
        grids.setdefault(str(r["grid_zone"]), (float(r["g_co2e_low"]), float(r["g_co2e_per_kwh"]),
                                               float(r["g_co2e_high"])))
        if r["kind"] not in HOME_KINDS:
            pues.setdefault(str(r["operator"]) if isinstance(r["operator"], str) else "other",
                            (float(r["pue_low"]), float(r["pue"]), float(r["pue_high"])))
        if float(r["embodied_kg"]) > 0:
            count = int(r["count"]) if r["count"] == r["count"] else 1
            low, central, high = (float(r[c]) / count for c in ("embodied_low_kg", "embodied_kg", "embodied_high_kg"))
            made.setdefault(_made_key(r), (low, central, high))
    out = []
    for kind, table, unit, why in (("grid", grids, "g/kWh", "grid.csv"), ("pue", pues, "", "pue.csv"),
                                   ("made", made, "kg", "embodied.csv")):
        for key, (low, central, high) in sorted(table.items()):
            if high > low:
                out.append(Input(f"{kind} {key}", rng.triangular(low, central, high, n), central, unit,
                                 f"{why}: {central:g}{' ' + unit if unit else ''}, range {low:g}-{high:g}, triangular"))
    return out


def _made_key(r: Any) -> str:
    """Which making an option's devices share (one draw for all of them): the embodied row, and
    whether a server share comes with it."""
    return f"{r['embodied_source']}" + ("" if r["kind"] in HOME_KINDS else " with its server")


def _co2_factors(by_name: dict[str, Input], r: pd.Series, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(an hour's emissions, the making of a card bought) of option ``r`` in each draw, over their
    central figures: the energy part scales with the drawn grid and PUE, the making with its own
    draw (planner.model.carbon)."""
    ones = np.ones(n)
    if not isinstance(r["grid_zone"], str):
        return ones, ones
    at_home = r["kind"] in HOME_KINDS
    g = _factor(by_name, f"grid {r['grid_zone']}", n)
    p = ones if at_home else _factor(by_name, f"pue {r['operator'] if isinstance(r['operator'], str) else 'other'}", n)
    e = _factor(by_name, f"made {_made_key(r)}", n)
    per_h = float(r["co2_kg_per_wall_h"])
    made_h = 0.0 if at_home else carbon.embodied_per_hour_kg(float(r["embodied_kg"]))
    hour = ((per_h - made_h) * g * p + made_h * e) / per_h if per_h > 0 else ones
    return hour, e


#: Where a rent price goes from its date, when the scenario gives no price_trend: the device's
#: catalog trend (trends.csv: its central yearly change, the plan's path, and its range). The
#: uncertainty analysis draws one quantile per draw and takes every device's trend there
#: (triangular between low and high, most likely the central), so a draw is a whole price path
#: and the market moves as one.
TREND_INPUT = "rent price trend"
#: The unit of an input that is a share (a device not to be had at a share of session starts):
#: drawn and written to JSON as a fraction, shown as a percentage.
SHARE_UNIT = "of session starts"
TREND_COLUMNS = ("rent_trend_per_year", "rent_trend_low_per_year", "rent_trend_high_per_year")


def _sampled(path: str) -> bool:
    parts = path.split(".")
    return path in SAMPLED_RANGES or (len(parts) == 3 and parts[0] == "phases" and parts[2] == "gpu_hours")


def _range_unit(path: str) -> str:
    return {"electricity": "USD/kWh", "you.time_value": "USD/h"}.get(path, "h")


def _factor(by_name: dict[str, Input], name: str, n: int) -> np.ndarray:
    i = by_name.get(name)
    return np.ones(n) if i is None or not i.base else i.draws / i.base


def _at_rate(c: pd.Series, option: pd.Series, rate: Input | None, hours: str) -> np.ndarray | float:
    """The phase's expected ``hours`` ("wall_hours" or "billed_hours") at each drawn interruption
    rate: the quadratic through the session model's values at the low end of the default's
    range, the rate used and the high end (quote ``c``'s, for ``option``). Without a drawn rate,
    the quote's hours."""
    used = float(c[hours])
    ends = [float(c[f"{hours}_rate_low"]), float(c[f"{hours}_rate_high"])]
    if rate is None or not np.isfinite(ends).all():
        return used
    return at_rates((float(option["interruptions_low_per_h"]), rate.base, float(option["interruptions_high_per_h"])),
                    (ends[0], used, ends[1]), rate.draws)


def evaluate(plan: Plan, alt: Alternative, by_name: dict[str, Input], n: int, q: Any, device: Any
             ) -> StrategyOutcome:
    """One strategy's fixed plan re-priced under every draw (see the module docstring); ``q`` is
    the plan's quotes by (phase, option), ``device`` each option's device."""
    s = plan.scenario
    phases = {ph.name: ph for ph in s.phases}
    opts: Any = _options(plan).drop_duplicates("option").set_index("option", drop=False)  # read cell by cell
    cost = np.zeros(n)
    co2 = np.zeros(n)  # emissions per draw [kg CO2e]
    elec = _factor(by_name, "electricity", n)
    time_value = _factor(by_name, "you.time_value", n)
    over: dict[str, np.ndarray] = {}  # per phase: wall hours over the plan's, per draw
    path = {(phase, option): f for phase, option, f in alt.price_factors}  # rent on its price path (price_trend)
    years = {(phase, option): y for phase, option, y in alt.price_years}
    committed = commitments_of(_options(plan))
    monthly = subscriptions_of(_options(plan))
    packed = packs_of(_options(plan))
    burnt: dict[str, np.ndarray] = {}  # per tier paid by the month or the pack: compute units the draw's hours burn
    money: dict[tuple[str, str], np.ndarray] = {}  # per (phase, option): money spent in each draw
    for phase, option, hours in alt.hours:
        c = q.loc[(phase, option)]
        ph = phases[phase]
        share = hours / ph.gpu_hours
        work = _factor(by_name, f"phases.{phase}.gpu_hours", n)
        speed = _factor(by_name, f"speed {device[option]} ({c['speed_source']})", n) * _fp8_factor(
            by_name, opts.loc[option], n)
        price = (_factor(by_name, f"price {option}", n) * path.get((phase, option), 1.0) if c["kind"] != "buy"
                 else np.ones(n))
        trend = by_name.get(f"{TREND_INPUT} {opts.loc[option].get('rent_trend_default')}")
        if trend is not None and (phase, option) in years:  # a dated price on its device's trend
            # the plan's path is at the central trend: the draw's path instead, from the price's date
            price = price * ((1.0 + trend.draws) / (1.0 + trend.base)) ** years[(phase, option)]
        if option in committed or option in monthly or option in packed:  # a term, month or pack: paid below
            price = np.zeros(n)
        wall, billed = float(c["wall_hours"]), float(c["billed_hours"])
        # the session hours scale with the work over the speed, and with the interruption rate as
        # the session model has them (convex in the rate: through its values at the range's ends)
        drawn = by_name.get(f"interruptions {option}")
        r = work / speed * (_at_rate(c, opts.loc[option], drawn, "wall_hours") / wall if wall > 0 else 1.0)
        rb = work / speed * (_at_rate(c, opts.loc[option], drawn, "billed_hours") / billed if billed > 0 else 1.0)
        luck = by_name.get(f"{SESSIONS_INPUT} {option}")
        if luck is not None and wall > 0:  # the sessions' own spread, as many sessions as the draw's hours
            noise = luck.draws * float_or(c["wall_hours_run_sd"]) / wall * np.sqrt(np.maximum(r, 0.0))
            r, rb = np.maximum(r + noise, 0.0), np.maximum(rb + noise, 0.0)
        if float(c["weekly_capacity_h"]) > 0:  # an option that runs at all (as the plan's P50/P90)
            over[phase] = over.get(phase, 0.0) + wall * share * (r - 1.0)
            quota = by_name.get(f"quota {opts.loc[option, 'offer']}")
            if quota is not None:  # a quota below the one planned: the hours past it run late (as if every
                # week used the planned quota whole: on the safe side)
                over[phase] = over[phase] + wall * share * r * np.maximum(1.0 - quota.draws / quota.base, 0.0)
            taken = by_name.get(f"unavailable {option}")
            if taken is not None:  # the device taken more often than planned: as a smaller quota, the same way
                over[phase] = over[phase] + wall * share * r * np.maximum(
                    1.0 - (1.0 - taken.draws) / max(1.0 - taken.base, 1e-9), 0.0)
        co2_hour, _ = _co2_factors(by_name, opts.loc[option], n)
        co2 = co2 + wall * share * r * float_or(opts.loc[option, "co2_kg_per_wall_h"]) * co2_hour
        parts = quotes.money_by_part(
            s, ph, opts.loc[option], wall * share * r, billed * share * rb,
            float(c["restarts_by_hand"]) * share * r, float(c["storage_months"]) * r, share=share,
            rent_factor=price, electricity_factor=elec, time_value_factor=time_value, carbon_factor=co2_hour)
        cost += sum(parts.values())
        money[(phase, option)] = sum(v for k, v in parts.items() if k not in NOT_CASH) + np.zeros(n)
        if option in monthly or option in packed:
            tier = monthly[option][0] if option in monthly else packed[option][0]
            burnt[tier] = burnt.get(tier, 0.0) + wall * share * r * float(opts.at[option, "units_per_hour"])
    cards = card_costs(s, _options(plan))
    bought = {b: (price, resale) for b, _, price, resale in alt.bought_costs}  # on the day the plan buys it
    for b in alt.bought:
        price_usd, resale_usd = bought.get(b, cards[b])
        pf = _factor(by_name, f"price {b}", n)
        # a resale drawn above the model's figure brings at most what the model may (the cap of
        # costs.resale_usd): a short horizon's card is otherwise sold for more than its price
        resale = resale_usd * _factor(by_name, f"resale {b}", n)
        if f"resale {b}" in by_name:  # drawn: the model's figure (a resale you give is yours, as given)
            resale = np.minimum(resale, costs.most_resale_usd(price_usd))
        cost += price_usd * pf - resale * pf
        made = dict(alt.bought_kg).get(b, 0.0)
        made_draws = made * _co2_factors(by_name, opts.loc[b], n)[1]
        co2 = co2 + made_draws
        cost += made_draws * (s.you.carbon_usd_per_kg or 0.0)
    terms: dict[tuple[str, int], np.ndarray] = {}
    for option, day, _, usd in alt.commitments:  # paid for the term, used or not, at the drawn price
        terms[(option, day)] = usd * _factor(by_name, f"price {option}", n)
        cost += terms[(option, day)]
    cost -= credits_paid(alt.credits, money, terms, n)
    cost += _units_beyond(alt, monthly, burnt, n) + _packs_beyond(alt, packed, burnt, n)
    if alt.host:
        cost += s.you.host_usd
    last = np.zeros(n)
    meets = np.ones(n, dtype=bool)
    for phase, finish in alt.finish_models:  # the plan's one rule for an overrun (sessions.Finish)
        ph = phases[phase]
        days = finish.offset_with(over.get(phase, np.zeros(n)), s.start)
        last = np.maximum(last, days)
        if ph.deadline is not None:
            meets &= days <= (ph.deadline - s.start).days
    return StrategyOutcome(alt.strategy, cost, last, meets, co2 + np.zeros(n))


def _units_beyond(alt: Alternative, monthly: dict[str, tuple[str, float, float]], burnt: dict[str, np.ndarray],
                  n: int) -> np.ndarray:
    """What a draw pays for compute units beyond those its subscribed months grant [USD], at the
    subscription's own price per unit (its fee over its units; Colab sells more units as you go
    at 9.99 USD per 100, so for Pro+ this is about 17 % low), counted over the whole plan: a
    month's spare units pay for another month's overrun, which Colab allows within 90 days."""
    granted = _granted(alt, {t: u for t, _, u in monthly.values()})
    per_unit = {t: fee / units for t, fee, units in monthly.values()}
    extra = np.zeros(n)
    for tier, used in sorted(burnt.items()):
        if tier in per_unit:  # a tier paid by the month (packs: _packs_beyond)
            extra += np.maximum(np.asarray(used, dtype=float) - granted.get(tier, 0.0), 0.0) * per_unit[tier]
    return extra


def _granted(alt: Alternative, units_of: dict[str, float]) -> dict[str, float]:
    """Per tier, the compute units the plan's months or packs grant (``units_of``: tier -> units
    a month or a pack; alt.commitments: (tier, day, count, cost))."""
    granted: dict[str, float] = {}
    for option, _, k, _ in alt.commitments:
        if option in units_of:
            granted[option] = granted.get(option, 0.0) + units_of[option] * k
    return granted


def _packs_beyond(alt: Alternative, packed: dict[str, tuple[str, float, float, float]], burnt: dict[str, np.ndarray],
                  n: int) -> np.ndarray:
    """What a draw pays for the packs of compute units it needs beyond those the plan buys [USD]:
    whole packs, at their price, for the units its hours burn beyond the packs' (counted over the
    whole plan, as :func:`_units_beyond` counts months)."""
    tiers = {t: (usd, units) for t, usd, units, _ in packed.values()}
    granted = _granted(alt, {t: units for t, (_, units) in tiers.items()})
    extra = np.zeros(n)
    for tier, used in sorted(burnt.items()):
        if tier in tiers:
            usd, units = tiers[tier]
            beyond = np.maximum(np.asarray(used, dtype=float) - granted.get(tier, 0.0), 0.0)
            extra += np.ceil(beyond / units - 1e-9) * usd
    return extra


def credits_paid(credits: Any, money: dict[tuple[str, str], np.ndarray], terms: dict[tuple[str, int], np.ndarray],
                 n: int) -> np.ndarray:
    """What the plan's credits pay of each draw's bills [USD per draw], as they pay the plan's:
    each at most its amount, of the money it may pay (its share of each (phase, option)'s money,
    the commitments it may pay), no bill paid twice. Credits pay in the order given, each taking
    the same fraction of every bill it reaches: the plan's own split where credits do not share
    a bill (the usual case: one grant a provider), an even one where they do."""
    left = {k: v.copy() for k, v in money.items()}
    left_terms = {k: v.copy() for k, v in terms.items()}
    paid = np.zeros(n)
    for amount, shares, commits in credits:
        reach = [((p, o), share * left[(p, o)]) for p, o, share in shares if (p, o) in left]
        reach_terms = [(k, left_terms[k]) for k in commits if k in left_terms]
        eligible = sum((v for _, v in [*reach, *reach_terms]), np.zeros(n))
        pays = np.minimum(amount, eligible)
        frac = np.divide(pays, eligible, out=np.zeros(n), where=eligible > 0)
        for k, v in reach:
            left[k] = left[k] - frac * v
        for k, v in reach_terms:
            left_terms[k] = left_terms[k] - frac * v
        paid += pays
    return paid


def analyse(plan: Plan, samples: int, seed: int = 0) -> Uncertainty:
    """Each strategy's and the chosen plan's cost and finish over ``samples`` joint draws, the
    chance each strategy is the cheapest, and the inputs that move the decision most."""
    n = samples
    drawn = inputs(plan, n, seed)
    by_name = {i.name: i for i in drawn}
    q = plan.quotes.set_index(["phase", "option"])
    device = plan.quotes.drop_duplicates("option").set_index("option")["device"]
    outcomes = tuple(evaluate(plan, a, by_name, n, q, device) for a in plan.alternatives)
    chosen = next((o for o in outcomes if o.strategy == "hybrid"), outcomes[0] if outcomes else None)
    alias = _aliases(plan)
    p_cheapest, p_chosen = _p_cheapest(alias, outcomes, chosen)
    decision = _decision(alias, outcomes, chosen)
    drivers = _drivers(drawn, outcomes, decision, alias) if decision else ()
    ranged = [p for p in plan.scenario.ranges if not _sampled(p)]
    named = (alias[decision[0].strategy], alias[decision[1].strategy]) if decision else None
    return Uncertainty(n, seed, plan.scenario.start, outcomes, chosen, p_cheapest, p_chosen, tuple(drivers),
                       tuple(drawn), named, tuple(ranged), alias)


def _aliases(plan: Plan) -> dict[str, str]:
    """Each strategy by the first strategy with the very same plan: the chosen hybrid that buys
    one card and rents nothing is called buy-only where the choice is named."""
    first: dict = {}
    out = {}
    for a in plan.alternatives:
        out[a.strategy] = first.setdefault(a.plan_key, a.strategy)
    return out


def _effective(o: StrategyOutcome) -> np.ndarray:
    """Cost where the deadlines are met; a plan that misses one loses to any that does not."""
    return np.where(o.meets, o.cost_usd, np.inf)


def _p_cheapest(alias: dict[str, str], outcomes: Sequence[StrategyOutcome],
                chosen: StrategyOutcome | None) -> tuple[dict[str, float], float]:
    """The chance each strategy's plan is the cheapest, over the distinct plans (ties between
    different plans shared): a strategy whose best plan is another's (hybrid often is) has that
    one's chance, so the distinct plans' chances sum to 1."""
    if not outcomes:
        return {}, 0.0
    distinct = [o for o in outcomes if alias[o.strategy] == o.strategy]  # the first of each plan
    cost = np.array([_effective(o) for o in distinct])
    all_missed = ~np.isfinite(cost).any(axis=0)
    cost[:, all_missed] = np.array([o.cost_usd for o in distinct])[:, all_missed]  # then the cheapest anyway
    best = cost.min(axis=0)
    winners = np.isclose(cost, best, rtol=1e-9, atol=1e-9)
    share = winners / winners.sum(axis=0)
    by_plan = {o.strategy: float(share[k].mean()) for k, o in enumerate(distinct)}
    p = {o.strategy: by_plan[alias[o.strategy]] for o in outcomes}
    return p, (p.get(chosen.strategy, 0.0) if chosen is not None else 0.0)


def _decision(alias: dict[str, str], outcomes: Sequence[StrategyOutcome], chosen: StrategyOutcome | None
              ) -> tuple[StrategyOutcome, StrategyOutcome] | None:
    """The chosen plan against the best other strategy whose plan differs from it (by median
    cost): the choice a supervisor asks about."""
    if chosen is None:
        return None
    others = [o for o in outcomes if alias[o.strategy] != alias[chosen.strategy]]
    if not others:
        return None
    return chosen, min(others, key=lambda o: float(np.median(_effective(o))))


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation (the Pearson correlation of the ranks; draws are continuous, so
    ties are rare and broken by order). Here rather than scipy.stats, whose import costs half a
    second of every run that asks for the analysis."""
    def ranks(v: np.ndarray) -> np.ndarray:
        r = np.empty(len(v))
        r[np.argsort(v, kind="stable")] = np.arange(len(v))
        return r

    return float(np.corrcoef(ranks(x), ranks(y))[0, 1])


def _drivers(drawn: list[Input], outcomes: Sequence[StrategyOutcome], decision: tuple[StrategyOutcome, StrategyOutcome],
             alias: dict[str, str]) -> list[Driver]:
    """Inputs by how strongly they move the decision: |Spearman correlation| of each input's
    draws with the cost difference (chosen minus runner-up), and where a straight-line fit of
    that difference on the input crosses zero, if within the input's draws."""
    mine, other = decision
    diff = mine.cost_usd - other.cost_usd
    out: list[Driver] = []
    if np.ptp(diff) == 0:
        return out
    for i in drawn:
        if np.ptp(i.draws) == 0:
            continue
        rho = _spearman(i.draws, diff)
        if not np.isfinite(rho) or abs(rho) < MIN_IMPORTANCE:
            continue
        slope, intercept = np.polyfit(i.draws, diff, 1)
        flips = -intercept / slope if slope else math.nan
        inside = bool(np.isfinite(flips) and i.draws.min() <= flips <= i.draws.max())
        wins = alias[other.strategy if slope > 0 else mine.strategy] if inside else None
        out.append(Driver(i.name, float(abs(rho)), float(flips) if inside else None, i.unit, wins))
    return sorted(out, key=lambda d: -d.importance)[:6]


# --------------------------------------------------------------------------- summaries (USD -> currency)


def quantiles(x: np.ndarray) -> tuple[float, float, float]:
    p10, p50, p90 = np.quantile(x, [0.1, 0.5, 0.9])
    return float(p10), float(p50), float(p90)


def _co2_quantiles(o: StrategyOutcome) -> dict[str, float]:
    """A strategy's emissions P10, P50 and P90 [kg CO2e] (none where not drawn)."""
    if o.co2_kg is None:
        return {}
    c10, c50, c90 = (float(np.quantile(o.co2_kg, q)) for q in (0.1, 0.5, 0.9))
    return {"co2_kg_p10": round(c10, 3), "co2_kg_p50": round(c50, 3), "co2_kg_p90": round(c90, 3)}


def to_dict(u: Uncertainty, usd_per_currency: float) -> dict:
    """The JSON ``uncertainty`` key (docs/output.md): money in the scenario's currency."""
    def day(x: float) -> str:
        return (u.start + dt.timedelta(days=int(x))).isoformat()

    def strategy(o: StrategyOutcome) -> dict:
        p10, p50, p90 = (round(v / usd_per_currency, 2) for v in quantiles(o.cost_usd))
        f10, _, f90 = quantiles(o.finish)
        same = u.aliases.get(o.strategy, o.strategy)
        return {"strategy": o.strategy, **({"same_as": same} if same != o.strategy else {}),
                "cost_p10": p10, "cost_p50": p50, "cost_p90": p90,
                "finish_p10": day(f10), "finish_p90": day(math.ceil(f90)),
                "p_meets_deadlines": round(float(o.meets.mean()), 4),
                **_co2_quantiles(o),
                "p_cheapest": round(u.p_cheapest.get(o.strategy, 0.0), 4)}

    plan = strategy(u.chosen) if u.chosen else {}
    plan.pop("strategy", None)
    plan.pop("same_as", None)
    plan["p_cheapest"] = round(u.p_chosen_cheapest, 4)
    return {
        "samples": u.samples, "seed": u.seed,
        "strategies": [strategy(o) for o in u.outcomes],
        "plan": plan,
        "decision": list(u.decision) if u.decision else None,
        "drivers": [{"input": d.input, "importance": round(d.importance, 3),
                     "flips_at": None if d.flips_at is None else round(d.flips_at, 4), "unit": d.unit,
                     "wins_above": d.wins_above,
                     **({"replanned": {"below": d.replanned[0], "above": d.replanned[1],
                                       "changes": d.replanned[0] != d.replanned[1]}}
                        if d.replanned is not None else {})} for d in u.drivers],
        "inputs": [{"input": i.name, "low": round(float(np.quantile(i.draws, 0.05)), 4),
                    "high": round(float(np.quantile(i.draws, 0.95)), 4), "base": round(i.base, 4), "unit": i.unit,
                    "source": i.source} for i in u.inputs],
        "not_sampled": list(u.not_sampled),
    }
