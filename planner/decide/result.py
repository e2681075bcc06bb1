"""The answer: a plan with purchases, per-phase assignments, costs and dates.

Money is kept in USD here; :func:`to_dict` converts to the scenario's
currency and produces the JSON object of docs/output.md.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..model.costs import COST_PARTS, NOT_CASH  # re-exported for the report writers
from ..model.records import QuoteTable, considers_home
from ..model.scenario import Phase, Scenario
from ..model.sessions import Finish


@dataclass(frozen=True)
class Assignment:
    option: str
    kind: str
    device: str
    gpu_hours: float
    wall_hours: float
    billed_hours: float
    sessions: int
    restarts_by_hand: int
    lost_hours: float
    setup_hours: float
    checkpoint_every_min: float
    checkpoint_every_recommended_min: float | None
    relative_speed: float
    speed_source: str
    verdict: str
    cost_usd: dict[str, float]
    fit_reason: str = ""
    #: how much longer than at ``relative_speed`` the work takes for the way the batch fits this
    #: device against the reference (gradient accumulation, activation checkpointing: below 1
    #: where it holds more of the batch than the reference); ``relative_speed / slowdown`` is the
    #: speed the work runs at
    slowdown: float = 1.0
    #: runs of the phase its machine carries at once, one to a group of its GPUs (1: one run on
    #: every GPU); ``relative_speed`` is the machine's with them so (quotes.machine_runs)
    side_by_side: int = 1
    saved_by_recommended_h: float = 0.0  # wall hours the recommended checkpoint interval saves
    wall_hours_p50: float | None = None
    wall_hours_p90: float | None = None
    lost_hours_p10: float | None = None
    lost_hours_p90: float | None = None
    cost_p50_usd: float | None = None
    cost_p90_usd: float | None = None
    wait_hours: float = 0.0  # unbilled waits for a paused machine to resume (in wall_hours)
    checkpoint_hours: float = 0.0  # completed checkpoint writes (in wall_hours)
    checkpoint_gb: float = 0.0  # one checkpoint's size
    checkpoint_write_gb_per_h: float = 0.0  # how fast the option writes it (quotes.checkpoint_write_gb_per_h)
    price_source: str | None = None  # catalog layer of the price: shipped, refreshed DATE, a --catalog file, scenario
    prepaid: bool = False  # on a commitment, a subscription or packs of units: its hours carry no rent
    # (Plan.commitments, Plan.subscriptions and Plan.packs hold the terms', months' and packs' cost)
    energy_kwh: float = 0.0  # its energy (planner.model.carbon)
    co2_kg: float = 0.0  # its emissions: energy at its grid, a rented or free machine's making by the hour

    @property
    def total_usd(self) -> float:
        return sum(self.cost_usd.values())


@dataclass(frozen=True)
class PhasePlan:
    name: str
    gpu_hours: float
    start: dt.date
    deadline: dt.date | None
    finish_expected: dt.date | None
    finish_p50: dt.date | None
    finish_p90: dt.date | None
    meets_deadline: bool
    assignments: tuple[Assignment, ...]
    shortfall: str | None = None  # why the deadline cannot be met, and what would fix it
    finish_confident: dt.date | None = None  # the finish at the scenario's confidence: the one promised
    confidence: float = 0.9  # you.confidence
    on_time_chance: float | None = None  # the chance the phase ends by its deadline (or the horizon's end)


@dataclass(frozen=True)
class Purchase:
    offer: str
    device: str
    count: int
    price_usd: float
    resale_usd: float
    price_source: str | None = None
    bought_on: dt.date | None = None  # a card bought later than the start (buy_later); None: on the first day
    embodied_kg: float = 0.0  # the share of its making the plan carries (planner.model.carbon) [kg CO2e]


class _Paid:
    """Something paid for a span of days from its start (a term, a month): its last day."""

    start: dt.date
    days: float

    @property
    def end(self) -> dt.date:
        """The span's last day."""
        return self.start + dt.timedelta(days=math.ceil(self.days) - 1)


@dataclass(frozen=True)
class Subscription(_Paid):
    """A month of a notebook tier paid by the month: its fee, paid whether its units are used or not."""

    tier: str
    start: dt.date
    days: float  # the month's days
    cost_usd: float  # the month's fee
    units: float  # compute units the fee buys


@dataclass(frozen=True)
class Pack(_Paid):
    """Packs of a notebook tier's compute units bought on one day (units bought as you go: Colab's
    pay-as-you-go), paid whole whether their units are used or not, lasting ``days``."""

    tier: str
    start: dt.date  # the day they are bought
    days: float  # how long their units last (inf: they do not expire)
    count: int  # packs bought
    cost_usd: float  # all of them
    units: float  # the compute units they hold

    @property
    def end(self) -> dt.date:
        """The last day their units last (the horizon's end is far enough where they never expire)."""
        return self.start + dt.timedelta(days=math.ceil(min(self.days, 365_000)) - 1)


@dataclass(frozen=True)
class Commitment(_Paid):
    """Instances of an offer with a term, paid for the whole term from its start, used or not."""

    offer: str
    device: str
    count: int  # instances committed
    start: dt.date
    days: float  # the term
    cost_usd: float  # all of them over the whole term
    price_source: str | None = None


@dataclass(frozen=True)
class CreditKept:
    """Where credits pay the plan: a plan of the same cash that spends less of them (the plan, of
    plans of equal cost, takes the fewest wall hours): the options it uses, what your credits pay
    of it [USD], its last finish."""

    options: tuple[str, ...]
    credits_used_usd: float
    finish: dt.date | None


@dataclass(frozen=True)
class Alternative:
    """The best feasible plan of one strategy (buy-only, rent-only, free-only, hybrid)."""

    strategy: str
    total_cost_usd: float
    finish: dt.date | None  # the last phase's expected finish
    options: tuple[str, ...]  # what it uses and buys
    cumulative: tuple[tuple[dt.date, float], ...]  # money spent by each date [USD]
    hours: tuple[tuple[str, str, float], ...] = ()  # (phase, option, reference GPU-h) it schedules
    bought: tuple[str, ...] = ()  # cards it buys
    host: bool = False  # whether it buys the host computer
    finishes: tuple[tuple[str, dt.date], ...] = ()  # each phase's expected finish
    wins_below_usd: float | None = None  # a candidate card: the price below which its plan is the cheapest
    needs_budget_usd: float | None = None  # a candidate whose plan is in time only past the budget: the cash it needs
    needs_co2_kg: float | None = None  # a candidate whose plan is in time only past the cap on emissions: what it emits
    price_factors: tuple[tuple[str, str, float], ...] = ()  # (phase, option, factor): rent on its price path
    price_years: tuple[tuple[str, str, float], ...] = ()  # (phase, option, years from the price's date): rent
    #: (card, day from the start, price then, resale at the horizon's end) [USD] of each card it buys
    bought_costs: tuple[tuple[str, int, float, float], ...] = ()
    #: (offer, start day from the start, instances, USD for all of them over the term) of each commitment,
    #: and (tier, month's first day, 1, fee) of each month subscribed
    commitments: tuple[tuple[str, int, int, float], ...] = ()
    #: (phase, its end as planned and what an overrun does to it): the uncertainty's finishes
    finish_models: tuple[tuple[str, Finish], ...] = ()
    #: per credit: (amount [USD], (phase, option, share of its money the credit may pay), (offer, start
    #: day) of the commitments it may pay): the uncertainty analysis lets credits pay a draw's bills
    credits: tuple[tuple[float, tuple[tuple[str, str, float], ...], tuple[tuple[str, int], ...]], ...] = ()
    co2_kg: float | None = None  # its emissions, the making of the cards it buys included [kg CO2e]
    bought_kg: tuple[tuple[str, float], ...] = ()  # (card, the making it carries [kg CO2e]) of each card it buys

    @property
    def past_a_limit(self) -> bool:
        """A candidate's row in time only past the budget or the cap on emissions."""
        return self.needs_budget_usd is not None or self.needs_co2_kg is not None

    @property
    def plan_key(self) -> tuple:
        """What makes two strategies' plans the same plan (hours to the thousandth: two solves
        of one plan differ in the last bits)."""
        return (tuple((p, o, round(h, 3)) for p, o, h in self.hours), self.bought, self.host,
                tuple((b, day) for b, day, *_ in self.bought_costs),
                tuple((o, d, k) for o, d, k, _ in self.commitments))


#: A strategy with options of its own but no plan meeting every deadline: (strategy, the options
#: its best plan uses, the reference GPU-hours it leaves undone, the cash its best plan in time
#: needs where only the budget stops it, what that plan emits [kg CO2e] where only the cap on
#: emissions stops it; None where that limit alone does not).
LateStrategy = tuple[str, tuple[str, ...], float, float | None, float | None]


@dataclass(frozen=True)
class ParetoPoint:
    """A plan no other beats on both cost and the last phase's finish."""

    phase: str
    finish: dt.date
    total_cost_usd: float


@dataclass(frozen=True)
class Plan:
    scenario: Scenario
    feasible: bool
    purchases: tuple[Purchase, ...]
    phases: tuple[PhasePlan, ...]
    cost_usd: dict[str, float]
    alternatives: tuple[Alternative, ...]
    excluded: pd.DataFrame  # option, phase, reason
    quote_table: QuoteTable  # every (phase, option) priced
    catalog_as_of: dt.date
    warnings: tuple[str, ...] = ()
    over_budget: bool = False
    #: where the budget leaves work undone: the least cash of any plan that meets every deadline [USD]
    #: (the least budget that fixes it; None otherwise, and in a what-if's plan, which does not search)
    needs_budget_usd: float | None = None
    assumptions: tuple[str, ...] = ()
    assumed_figures: tuple[str, ...] = ()  # unpublished figures the chosen plan relies on (defaults, ranges)
    schedule: pd.DataFrame | None = None  # phase, option, week, week_start, gpu_hours, wall_hours
    pareto: tuple[ParetoPoint, ...] = ()  # cost against the last phase's finish
    candidates: tuple[Alternative, ...] = ()  # the best plan with each considered card bought, and with none
    commitments: tuple[Commitment, ...] = ()  # reserved capacity the plan commits to
    subscriptions: tuple[Subscription, ...] = ()  # months of notebook tiers paid by the month
    packs: tuple[Pack, ...] = ()  # packs of notebook tiers' compute units bought as you go
    credits: tuple[tuple[str, float, float, float], ...] = ()  # (name, amount, used, lost unused) [USD]
    credit_kept: CreditKept | None = None  # a plan of the same cash that spends less of your credits
    problem_size: tuple[int, int] = (0, 0)  # MILP variables, constraints
    breakeven: tuple = ()  # planner.decide.breakeven.Pair
    catalog_layers: tuple[tuple[str, dt.date | None, str], ...] = ()  # (name, as_of, source) over the shipped tables
    options: pd.DataFrame | None = None  # every option considered (planner.decide.options.OPTION_COLUMNS)
    uncertainty: Any = None  # planner.decide.uncertainty.Uncertainty, when asked
    step: Any = None  # planner.model.workload.Step: the workload's step its speeds are at (None: large work)
    #: strategies with options of their own whose best plan still leaves work undone
    #: (:data:`LateStrategy`); alternatives holds the others
    late_strategies: tuple[LateStrategy, ...] = ()
    #: the program's solution by its variables' names (planner.decide.milp.named_plan): a plan for
    #: what-ifs of this scenario to start their search from (api.plan's ``start``)
    named_plan: tuple = ()

    @property
    def quotes(self) -> pd.DataFrame:
        """Every (phase, option) priced, a DataFrame (the view of :attr:`quote_table`)."""
        return self.quote_table.frame

    @property
    def total_usd(self) -> float:
        return sum(self.cost_usd.values())

    def phase(self, name: str) -> PhasePlan:
        return next(ph for ph in self.phases if ph.name == name)

    @property
    def considers_home(self) -> bool:
        """Whether any card at home is considered (:func:`~planner.model.records.considers_home`)."""
        return self.options is None or considers_home(self.options)

    @property
    def money_usd(self) -> float:
        """What is paid in money (everything but the user's time and the carbon price)."""
        return self.total_usd - sum(self.cost_usd.get(k, 0.0) for k in NOT_CASH)

    @property
    def energy_kwh(self) -> float:
        """The plan's energy [kWh]."""
        return sum(a.energy_kwh for ph in self.phases for a in ph.assignments)

    @property
    def embodied_kg(self) -> float:
        """The making of the cards it buys that the plan carries [kg CO2e]."""
        return sum(p.embodied_kg for p in self.purchases)

    @property
    def co2_kg(self) -> float:
        """The plan's emissions [kg CO2e]: its hours' and the making of the cards it buys."""
        return sum(a.co2_kg for ph in self.phases for a in ph.assignments) + self.embodied_kg


def _date(d: dt.date | None) -> str | None:
    return d.isoformat() if d else None


def _num(x: float | None, ndigits: int = 2) -> float | None:
    """``x`` rounded to ``ndigits`` places; None when not finite. A figure that rounds to zero
    is written 0.0, never -0.0 (a plan whose credits pay all but -1e-9 USD read "-0.00 EUR")."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), ndigits) + 0.0


class Money:
    """Amounts in USD written in the scenario's currency, rounded to cents (None when not finite):
    how the JSON answer and every what-if row write money."""

    def __init__(self, s: Scenario):
        self.per = 1.0 / s.usd_per_currency

    def __call__(self, usd: float | None) -> float | None:
        return None if usd is None else _num(usd * self.per)


def to_dict(plan: Plan) -> dict[str, Any]:
    """The JSON object of docs/output.md (money in the scenario's currency)."""
    s = plan.scenario
    money = Money(s)
    return {
        "scenario": s.name,
        "variant": s.variant,
        "currency": s.currency,
        "feasible": plan.feasible,
        "needs_budget": money(plan.needs_budget_usd),
        "total_cost": money(plan.total_usd),
        "cost_breakdown": {k: money(plan.cost_usd.get(k, 0.0)) for k in COST_PARTS
                           if k != "carbon" or s.you.carbon_usd_per_kg is not None},
        "co2_kg": _num(plan.co2_kg, 3),
        "emissions": _emissions(plan, money),
        "purchases": [
            {"offer": p.offer, "device": p.device, "count": p.count, "price": money(p.price_usd),
             "resale": money(p.resale_usd), "price_source": p.price_source,
             "bought_on": p.bought_on.isoformat() if p.bought_on else None,
             "embodied_co2_kg": _num(p.embodied_kg, 3)} for p in plan.purchases
        ],
        "commitments": [
            {"offer": c.offer, "device": c.device, "count": c.count, "start": _date(c.start), "end": _date(c.end),
             "days": _num(c.days, 1), "cost": money(c.cost_usd), "price_source": c.price_source}
            for c in plan.commitments
        ],
        "subscriptions": [
            {"tier": m.tier, "start": _date(m.start), "end": _date(m.end), "days": _num(m.days, 1),
             "cost": money(m.cost_usd), "units": _num(m.units, 1)} for m in plan.subscriptions
        ],
        "packs": [
            {"tier": k.tier, "bought": _date(k.start), "expires": _date(k.end) if math.isfinite(k.days) else None,
             "count": k.count, "cost": money(k.cost_usd), "units": _num(k.units, 1)} for k in plan.packs
        ],
        "phases": [_phase_dict(ph, money, plan.scenario) for ph in plan.phases],
        "breakeven": [
            {"buy": b.buy, "rent": b.rent, "gpu_hours": _num(b.gpu_hours, 1), "date": _date(b.date),
             "why_not": b.why_not} for b in plan.breakeven
        ],
        "alternatives": [
            {"strategy": alt.strategy, "total_cost": money(alt.total_cost_usd), "finish": _date(alt.finish),
             "options": list(alt.options), "co2_kg": _num(alt.co2_kg, 3)} for alt in plan.alternatives
        ],
        "late_strategies": [
            {"strategy": name, "options": list(options), "undone_gpu_hours": _num(undone, 1),
             "needs_budget": money(needs), "needs_co2_kg": _num(kg, 1)}
            for name, options, undone, needs, kg in plan.late_strategies
        ],
        "credits": [{"name": n, "amount": money(a), "used": money(u), "expires_unused": money(x)}
                    for n, a, u, x in plan.credits],
        "credit_kept": None if plan.credit_kept is None else {
            "options": list(plan.credit_kept.options), "credits_used": money(plan.credit_kept.credits_used_usd),
            "finish": _date(plan.credit_kept.finish)},
        "candidates": [
            {"candidate": c.strategy, "buy": list(c.bought), "total_cost": money(c.total_cost_usd),
             "finish": _date(c.finish), "options": list(c.options), "wins_below": money(c.wins_below_usd),
             "needs_budget": money(c.needs_budget_usd), "needs_co2_kg": _num(c.needs_co2_kg, 1),
             "co2_kg": _num(c.co2_kg, 3),
             "bought_on": next((_date(s.start + dt.timedelta(days=day)) for _, day, *_ in c.bought_costs if day),
                               None)}
            for c in plan.candidates
        ],
        "excluded": [
            {"option": str(option), "phase": phase if isinstance(phase, str) else None, "reason": reason}
            for option, phase, reason in plan.excluded[["option", "phase", "reason"]].itertuples(index=False)
        ],
        "catalog_as_of": plan.catalog_as_of.isoformat(),
        "catalog_layers": [{"name": name, "as_of": _date(as_of), "source": source}
                           for name, as_of, source in plan.catalog_layers],
        "overrides": list(s.overrides),
        "schedule": _schedule_rows(plan),
        "problem_size": {"variables": plan.problem_size[0], "constraints": plan.problem_size[1]},
        "pareto": [{"phase": p.phase, "finish": p.finish.isoformat(), "total_cost": money(p.total_cost_usd)}
                   for p in plan.pareto],
        "assumptions": list(plan.assumptions),
        "assumed_figures": list(plan.assumed_figures),
        "warnings": list(plan.warnings),
        **({"uncertainty": _uncertainty(plan)} if plan.uncertainty is not None else {}),
    }


def _emissions(plan: Plan, money: Money) -> dict[str, Any]:
    """The plan's energy and emissions, and what they rest on (docs/output.md)."""
    you = plan.scenario.you
    zone = you.grid if you.grid is not None else "world"
    per_t = None if you.carbon_usd_per_kg is None else money(you.carbon_usd_per_kg * 1000.0)
    return {"co2_kg": _num(plan.co2_kg, 3), "energy_kwh": _num(plan.energy_kwh, 3),
            "embodied_co2_kg": _num(plan.embodied_kg, 3),
            "grid": zone if isinstance(zone, str) else None,
            "grid_g_per_kwh": _num(zone, 1) if isinstance(zone, float) else None,
            "grid_assumed": you.grid is None, "carbon_price_per_t": per_t,
            "max_co2_kg": _num(you.max_co2_kg, 3)}


def job_dict(sp: Phase) -> dict[str, Any] | None:
    """A phase's job as the JSON answer and ``planner estimate`` give it (None: no job given)."""
    e = sp.job_estimate
    if e is None:
        return None
    low, high = e.hours_range
    return {"tokens": _num(sp.tokens), "samples": _num(sp.samples), "epochs": _num(sp.epochs or 1.0),
            "tokens_processed": _num(e.tokens), "flops": float(f"{e.flops:.4g}"), "reference_gpu": e.reference_gpu,
            "peak_tflops": _num(e.peak_tflops, 1), "usable_tflops": _num(e.rate_basis_tflops, 1),
            "utilisation_measured_on": e.measured_on, "device_class": e.device_class,
            "utilisation": {"low": _num(e.mfu_low, 4), "typical": _num(e.mfu, 4), "high": _num(e.mfu_high, 4)},
            "gpu_hours_typical": _num(e.hours_typical), "gpu_hours_low": _num(low), "gpu_hours_high": _num(high),
            "gpu_hours_planned": _num(e.hours_planned), "utilisation_source": e.utilisation_source}


def _phase_dict(ph: PhasePlan, money: Money, s: Scenario) -> dict[str, Any]:
    """One phase of the JSON answer, with its assignments."""
    sp = s.phase(ph.name)
    return {
        "name": ph.name,
        "gpu_hours": _num(ph.gpu_hours),
        "deadline": _date(ph.deadline),
        "finish_expected": _date(ph.finish_expected),
        "finish_p50": _date(ph.finish_p50),
        "finish_p90": _date(ph.finish_p90),
        "finish_confident": _date(ph.finish_confident),
        "confidence": _num(ph.confidence, 3),
        "on_time_chance": _num(ph.on_time_chance, 3),
        "meets_deadline": ph.meets_deadline,
        "problem": ph.shortfall,  # the JSON key stays (docs/output.md: none renamed)
        "assignments": [_assignment_dict(a, money) for a in ph.assignments],
        "co2_kg": _num(sum(a.co2_kg for a in ph.assignments), 3),
        "work_from": "job" if sp.hours_from_job else "gpu_hours",
        **({"job": job_dict(sp)} if sp.job_estimate is not None else {}),
    }


def _assignment_dict(a: Assignment, money: Money) -> dict[str, Any]:
    """One assignment of the JSON answer."""
    return {
        "option": a.option, "kind": a.kind, "device": a.device,
        "gpu_hours": _num(a.gpu_hours), "wall_hours": _num(a.wall_hours),
        "billed_hours": _num(a.billed_hours), "sessions": a.sessions,
        "restarts_by_hand": a.restarts_by_hand, "lost_hours": _num(a.lost_hours),
        "checkpoint_hours": _num(a.checkpoint_hours), "checkpoint_gb": _num(a.checkpoint_gb, 3),
        "checkpoint_write_gb_per_h": _num(a.checkpoint_write_gb_per_h, 1),
        "checkpoint_every_min": _num(a.checkpoint_every_min, 1),
        "checkpoint_every_recommended_min": _num(a.checkpoint_every_recommended_min, 1),
        "relative_speed": _num(a.relative_speed, 3), "speed_source": a.speed_source,
        "slowdown": _num(a.slowdown, 3), "side_by_side": a.side_by_side, "fit": a.verdict, "fit_reason": a.fit_reason,
        "saved_by_recommended_hours": _num(a.saved_by_recommended_h),
        "wall_hours_p50": _num(a.wall_hours_p50), "wall_hours_p90": _num(a.wall_hours_p90),
        "lost_hours_p10": _num(a.lost_hours_p10), "lost_hours_p90": _num(a.lost_hours_p90),
        "cost": money(a.total_usd),
        "cost_p50": money(a.cost_p50_usd),
        "cost_p90": money(a.cost_p90_usd),
        "price_source": a.price_source,
        "energy_kwh": _num(a.energy_kwh, 3), "co2_kg": _num(a.co2_kg, 3),
    }


def _schedule_rows(plan: Plan) -> list[dict[str, Any]]:
    """The weekly schedule of the JSON answer."""
    if plan.schedule is None:
        return []
    return [{"phase": str(phase), "option": str(option), "week_start": week.isoformat(),
             "gpu_hours": _num(float(gpu_h)), "wall_hours": _num(float(wall_h))}
            for phase, option, week, gpu_h, wall_h in
            plan.schedule[["phase", "option", "week_start", "gpu_hours", "wall_hours"]].itertuples(index=False)]


def _uncertainty(plan: Plan) -> dict:
    from .uncertainty import to_dict as uncertainty_dict

    return uncertainty_dict(plan.uncertainty, plan.scenario.usd_per_currency)
