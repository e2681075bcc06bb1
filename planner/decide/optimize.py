"""Choose the cheapest plan that meets every deadline.

A mixed-integer program over weekly buckets (:mod:`planner.decide.milp`, HiGHS via
highspy): which cards to buy, and how many reference
GPU-hours of each phase each option does in each week, within capacities,
quotas, deadlines and the budget. Overheads from the session model enter as
per-option factors (wall, billed hours and money per reference GPU-hour), so
the program stays linear; splitting a phase across options scales those
factors linearly (an approximation for per-session setup).

Pipeline (pure): options -> workload (fit, speed) -> quotes (phase x option)
-> MILP -> plan, plus the best plan of each strategy, a cost-vs-finish
Pareto front on request, and why each unused option lost.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from pricing.errors import SolverError
from pricing.ids import provider_of
from pricing.memo import Kept, per_table
from pricing.values import float_or, missing, opt_float

from ..model import job, sessions, units, workload
from ..model.costs import COST_PARTS, PART_NAMES
from ..model.records import HOME_KINDS, NOTEBOOK_KINDS, Option, Quote, QuoteTable, considers_home
from ..model.scenario import Phase, Scenario
from . import breakeven, milp
from .options import build_options, commitments_of, stale_rows, subscriptions_of
from .quotes import (
    CardPath,
    card_costs,
    card_paths,
    checkpoint_gb_of,
    checkpoint_write_gb_per_h,
    disk_need_gb,
    exclusions,
    machine_runs,
    money_by_part,
    one_gpu_speed,
    process_for,
    quote_records,
    shared_rel_sd,
    speed_share_at_step,
    usable_options,
)
from .result import (
    Alternative,
    Assignment,
    Commitment,
    CreditKept,
    LateStrategy,
    Pack,
    ParetoPoint,
    PhasePlan,
    Plan,
    Purchase,
    Subscription,
)

if TYPE_CHECKING:
    import pricing

__all__ = ["STRATEGIES", "card_costs", "dominated_cards", "dominated_rents", "plan", "prune"]

DEFAULT_TRIALS = 2000
#: A notebook tier with no disk in the catalog is not checked for room (quotes.too_big); the answer
#: says so where a phase's data needs more than this [GB]: the smallest disk the catalog gives a
#: tier (SageMaker Studio Lab's 15 GB), which any data below it fits.
UNCHECKED_DISK_SAID_FROM_GB = 15.0
STRATEGIES = {
    "buy-only": set(HOME_KINDS),
    "rent-only": {"rent"},
    "free-only": {"free"},
    "hybrid": {*HOME_KINDS, "rent", *NOTEBOOK_KINDS},
}
def dominated_cards(quotes: QuoteTable, cards: dict[str, tuple[float, float]],
                    paths: dict[str, CardPath] | None = None, made_kg: Mapping[str, float] | None = None
                    ) -> dict[str, str]:
    """Cards to buy that no plan needs: {card: a card that dominates it}. A card dominates
    another when it costs no more net of resale and, in every phase the other can run, it can
    run too, costs no more (money and time), runs no slower and has no less weekly capacity:
    swapping them in any plan keeps it feasible and no dearer (each card is a machine of its
    own; the budget counts the price, so a dominator must cost no more net of resale and no
    more up front). Of equal cards the first by id stays (the MILP's own tie-break). Pruning
    them shrinks the integer part of the program. With ``paths`` (cards bought later), a dominator
    must be no dearer on every day the plan may buy on. Under a cap on emissions (``made_kg``: each
    card's making [kg CO2e], which the cap counts for a card bought, in the same share of its life
    for any card bought on one day), a dominator must also emit no more, made and run."""
    q = _compared(quotes, (quotes["kind"] == "buy") & _runs(quotes) & _named(quotes, cards))
    if not len(q["option"]):
        return {}
    steps = paths or {c: ((0, *cards[c]),) for c in cards}
    ids = sorted(set(q["option"].tolist()))
    fixed = np.array([[x for _, price, resale in steps[c] for x in (price - resale, price)] for c in ids])
    if made_kg is None:
        return _dominated(q, fixed)
    return _dominated(q, np.column_stack([fixed, [made_kg.get(c, 0.0) for c in ids]]), co2=True)


#: The quote columns dominance reads (:func:`_compared`).
_COMPARED = ("option", "phase", "cost_usd", "your_time_usd", "carbon_usd", "rent_usd", "wall_hours", "wall_hours_conf",
             "billed_hours", "weekly_capacity_h", "open_capacity_h", "needs_person", "supply", "co2_kg", "units_per_hour")


def _compared(quotes: QuoteTable, keep: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of ``quotes`` where ``keep``, as arrays of the columns dominance reads: a what-if
    plan prunes three times, and copying the frame's rows each time made the three take 2.6 ms of
    a lab-box plan, 1.1 ms as arrays."""
    rows = np.flatnonzero(keep)
    return {c: quotes[c][rows] for c in _COMPARED if c in quotes}


def _runs(quotes: QuoteTable) -> np.ndarray:
    """Rows of options that can take a share of their phase: usable, finite hours."""
    return np.asarray(quotes["usable"], dtype=bool) & np.isfinite(np.asarray(quotes["wall_hours"], dtype=float))


def _named(quotes: QuoteTable, options: Iterable[str]) -> np.ndarray:
    """Rows of the ``options`` named."""
    names = set(options)
    return np.array([o in names for o in quotes["option"].tolist()], dtype=bool)


def _rentable(quotes: QuoteTable, credited: frozenset[str]) -> np.ndarray:
    """Rows of rent offers that can take a share (usable, finite hours) whose price describes
    them: not an offer of a provider a credit pays (``credited``)."""
    return (quotes["kind"] == "rent") & _runs(quotes) & ~_credited(quotes, credited)


def _credited(quotes: QuoteTable, credited: frozenset[str]) -> np.ndarray:
    """Rows of offers of a provider a credit pays."""
    return np.array([provider_of(o) in credited for o in quotes["option"].tolist()], dtype=bool)


def dominated_rents(quotes: QuoteTable, credited: frozenset[str] = frozenset(),
                    committed: frozenset[str] = frozenset(), capped: bool = False, flat: bool = False
                    ) -> dict[str, str]:
    """Rent offers no plan needs: {offer: an offer that dominates it}. An offer dominates another
    when, in every phase the other can take a share of, it can too, costs no more per reference
    hour (money, and money plus time), takes no more wall hours (so no more of the run's hours
    in any bucket), offers no fewer hours a week and no fewer instances at once (``supply``), and
    needs no person. Rent offers share no constraint but the run's concurrency (wall hours),
    their own supply and the budget (money), so moving any
    share from the dominated offer to its dominator keeps every plan feasible and no dearer.
    Of equal offers the first by id stays. Nothing else is pruned: an offer too slow to finish
    a phase alone may still do most of it beside a fast one; nor is an offer a credit pays for
    (``credited``: its providers), which its price no longer describes.
    A commitment (``committed``), paid for its term rather than by the hour, dominates none.
    Where rent prices stay as dated (``flat``: no trend moves an hour's price away from a term's,
    fixed on its start day), a commitment is dominated as an offer by the hour would be, at its
    price by the hour with its terms fully used: its terms cost at least that for every hour its
    instances run (the term's capacity counts its wall hours at the confidence, so its rent is
    counted on those, where they are fewer than the hours billed), so an offer by the hour no
    dearer than that, and no slower, does any of its work for no more money and frees its terms.
    A lab's two years in INR planned in 16.5 s with weekly capacity blocks of 8 A100s and
    1- and 3-year CUDs among its integers (437), 3.8 s without them, the same plan.
    Under a cap on emissions (``capped``: ``you.max_co2``, which every hour counts against), a
    dominator must also emit no more in every phase: a dearer A100 on a cleaner grid was pruned
    for a cheaper one, and a plan under a cap that only the dearer one meets said no plan could."""
    is_term = _named(quotes, committed)
    q = _compared(quotes, _rentable(quotes, credited) & (~is_term | flat))
    if not len(q["option"]):
        return {}
    terms = np.isin(q["option"], list(committed))
    if terms.any():  # a term's rent on the hours its capacity counts, where fewer than those billed
        billed, conf = q["billed_hours"].astype(float), q["wall_hours_conf"].astype(float)
        over = np.clip(1.0 - np.divide(conf, billed, out=np.ones_like(billed), where=billed > 0), 0.0, 1.0)
        q = {**q, "cost_usd": q["cost_usd"].astype(float) - np.where(terms, over, 0.0) * q["rent_usd"].astype(float)}
    names = np.unique(q["option"])  # options sorted by id, as _dominated's
    return _dominated(q, np.zeros((len(names), 1)), co2=capped, dominates=~np.isin(names, list(committed)))


def dominated_tiers(quotes: QuoteTable, subs: Mapping[str, tuple[str, float, float]],
                    credited: frozenset[str] = frozenset(), committed: frozenset[str] = frozenset(),
                    capped: bool = False) -> dict[str, str]:
    """The options of notebook tiers paid by the month (``subs``: option -> (tier, fee [USD a
    month], compute units a month)) that no plan needs: {option: a rent offer that dominates it},
    for a tier only where an offer by the hour dominates every one of its options. An hour on a
    tier burns its device's units (its wall hours at the confidence, as the program counts them),
    so the months a plan pays cost at least the fee's share of the units its hours burn: the
    option is priced at that, its months fully used, and an offer by the hour no dearer than
    that, and no worse in every respect :func:`dominated_rents` compares (it needs no person, and
    an offer whose marketplace has few instances dominates none), does its work for no more
    money. Per option it would not do: a month paid for one device's hours makes another's free
    at the margin. Only where rent prices stay as dated, as for terms. Over a lab's two years
    the months of Colab Pro and Pro+ (72 binaries) took 2.9 s of HiGHS's cuts a plan and none
    was ever bought: 4.1 s a plan, 1.8 s without them."""
    out: dict[str, str] = {}
    if not subs:
        return out
    fine = _runs(quotes) & ~_credited(quotes, credited)
    by_hour = _compared(quotes, _rentable(quotes, credited) & ~_named(quotes, committed))
    if not len(by_hour["option"]):
        return out
    for tier in sorted({v[0] for v in subs.values()}):
        mine = [o for o, v in subs.items() if v[0] == tier]
        named = _named(quotes, mine)
        q = _compared(quotes, fine & named)
        if not len(q["option"]) or set(q["option"].tolist()) != set(quotes["option"][named].tolist()):
            continue  # an option it cannot price (unusable somewhere): the tier stays
        usd_per_unit = np.array([subs[o][1] / subs[o][2] for o in q["option"]])  # the fee over the month's units
        burned = q["wall_hours_conf"].astype(float) * q["units_per_hour"].astype(float)
        q = {**q, "cost_usd": q["cost_usd"].astype(float) - q["rent_usd"].astype(float) + burned * usd_per_unit}
        both = {c: np.concatenate([by_hour[c], q[c]]) for c in by_hour}
        names = np.unique(both["option"])
        found = _dominated(both, np.zeros((len(names), 1)), co2=capped, dominates=~np.isin(names, mine))
        if all(o in found for o in set(q["option"].tolist())):
            out.update({o: found[o] for o in sorted(set(q["option"].tolist()))})
    return out


def _dominated(q: Mapping[str, np.ndarray], fixed: np.ndarray, co2: bool = False, dominates: np.ndarray | None = None
               ) -> dict[str, str]:
    """{option: the option that dominates it} over the quotes ``q`` of one kind (their columns,
    :func:`_compared`): ``fixed``
    (options sorted by id x figures) is what choosing it costs apart from its hours (a card: net
    of resale, and its price for the budget; under a cap on emissions, its making); a dominator
    is no dearer in any of them. With ``co2``, it also emits no more in any phase. ``dominates``
    (options sorted by id): those that may dominate another (default: all)."""
    opt_of, option_index = milp.codes_of(q["option"])  # sorted by id, as np.unique sorts them, by hashing
    phase_of, phases = milp.codes_of(q["phase"])
    options = [str(o) for o in option_index]

    def table(values: Any, fill: float) -> np.ndarray:  # option x phase; a phase the option cannot run is never better
        out = np.full((len(options), len(phases)), fill)
        out[opt_of, phase_of] = values
        return out

    def number(column: str) -> np.ndarray:
        return np.asarray(q[column], dtype=float)

    cost_usd = number("cost_usd")
    cost, wall = table(cost_usd, np.inf), table(number("wall_hours"), np.inf)
    # the wall hours at the confidence too: the program's capacity and concurrency count those
    conf = table(number("wall_hours_conf"), np.inf)
    money = table(cost_usd - number("your_time_usd") - number("carbon_usd"), np.inf)
    cap = table(number("weekly_capacity_h"), 0.0)
    open_cap = table(number("open_capacity_h"), 0.0)
    person = table(number("needs_person"), 1.0)
    supply = number("supply") if "supply" in q else np.full(len(cost_usd), np.nan)
    supply = table(np.where(np.isnan(supply), np.inf, supply), 0.0)  # instances to be had at once
    eps = 1e-9
    kg = table(number("co2_kg"), np.inf) if co2 else np.zeros((len(options), 1))
    # better[i, j]: option i is at least as good as option j everywhere: no more of each figure
    # (within eps; a capacity, negated: no less), no more need of a person, no fewer instances
    within = np.concatenate([fixed, kg, cost, money, wall, conf, -cap, -open_cap], axis=1)
    exact = np.concatenate([person, -supply], axis=1)
    better = np.asarray((within[:, None, :] <= within[None, :, :] + eps).all(axis=2)
                        & (exact[:, None, :] <= exact[None, :, :]).all(axis=2))
    if dominates is not None:
        better &= dominates[:, None] | np.eye(len(options), dtype=bool)
    out: dict[str, str] = {}
    at_least, as_good = better.T.tolist(), better.tolist()  # [j][i]: i as good as j; j as good as i
    for j, option in enumerate(options):
        for i, ok in enumerate(at_least[j]):
            if ok and i != j and (not as_good[j][i] or i < j) and options[i] not in out:
                out[option] = options[i]
                break
    return out


def prune(quotes: QuoteTable, dominated: dict[str, str] | None = None) -> QuoteTable:
    """Drop the quotes of options another dominates (:func:`dominated_cards`,
    :func:`dominated_rents`): provably never in a cheapest plan."""
    if not dominated:
        return quotes
    return quotes.take(np.flatnonzero(~_named(quotes, dominated)))


def cheapest_rents(quotes: pd.DataFrame) -> set[str]:
    """Per phase, the rent offer that does it on time for the least money and time: what a plan
    that rents nothing passed over (its break-even in what-if rows)."""
    q = quotes[(quotes["kind"] == "rent").to_numpy() & quotes["ok"].to_numpy(dtype=bool)]
    return set(q.loc[q.groupby("phase")["cost_usd"].idxmin(), "option"]) if len(q) else set()


@dataclasses.dataclass
class Solved:
    """A solved program and what is read off it, each once: schedule, finishes, purchases and
    the money of the solution (one formula for the total, its items and its curve over time)."""

    s: Scenario
    program: milp.Program
    sol: milp.Solution
    cards: dict[str, tuple[float, float]]  # buy option -> (purchase, resale) [USD]

    @cached_property
    def schedule(self) -> milp.Schedule:
        """Reference hours per (phase, option, bucket) (:func:`milp.schedule`)."""
        return milp.schedule(self.program, self.sol)

    @cached_property
    def weekly(self) -> pd.DataFrame:
        return milp.weekly(self.schedule)

    @cached_property
    def finishes(self) -> dict[str, dt.date]:
        return milp.finishes(self.s, self.program, self.schedule, times=self.finish_times)

    def _weighted(self, values: np.ndarray, rent_only: bool = False) -> dict[tuple[str, str], tuple[float, float]]:
        """Per (phase, option) with hours: (hours, hours times ``values``), summed in the
        variables' order over those placed (the others add nothing)."""
        xi = self.program.x_index
        x = self.sol.x[: len(xi)]
        out: dict[tuple[str, str], tuple[float, float]] = {}
        placed = x > 1e-12
        if rent_only:
            placed &= xi.kind == "rent"
        for i in np.flatnonzero(placed):
            key = (str(xi.phase[i]), str(xi.option[i]))
            h, v = out.get(key, (0.0, 0.0))
            out[key] = (h + float(x[i]), v + float(x[i] * values[i]))
        return out

    @cached_property
    def price_factors(self) -> dict[tuple[str, str], float]:
        """Per (phase, option) the plan puts hours on: the rent's price path factor over those
        hours (1 without a price trend)."""
        return {k: v / h for k, (h, v) in self._weighted(self.program.x_index.price_factor).items()}

    @cached_property
    def price_years(self) -> dict[tuple[str, str], float]:
        """Per (phase, option) of rent: the years from the price's date to the hours the plan puts
        there, weighted by them (what a yearly price trend acts over)."""
        return {k: v / h for k, (h, v) in self._weighted(self.program.x_index.price_years, rent_only=True).items()}

    @cached_property
    def finish_models(self) -> dict[str, sessions.Finish]:
        """Each phase's end as planned and what an overrun does to it (:func:`milp.finish_models`)."""
        return milp.finish_models(self.s, self.program, self.schedule, times=self.finish_times,
                                  times_conf=self.finish_times_conf, stretches=self.stretches)

    @cached_property
    def finishes_conf(self) -> dict[str, dt.date]:
        """The finish not exceeded at the scenario's confidence: the program plans capacity with
        the wall hours at that confidence, so it holds inside each phase's window."""
        return milp.finishes(self.s, self.program, self.schedule, times=self.finish_times_conf)

    @cached_property
    def stretches(self) -> dict[str, tuple[np.ndarray, int]]:
        """Each phase's last stretch of buckets (:func:`milp.last_stretches`), read once."""
        return milp.last_stretches(self.schedule)

    @cached_property
    def finish_times(self) -> dict[str, tuple[dt.date, float, dt.date]]:
        return milp.finish_times(self.s, self.program, self.schedule, stretches=self.stretches)

    @cached_property
    def finish_times_conf(self) -> dict[str, tuple[dt.date, float, dt.date]]:
        return milp.finish_times(self.s, self.program, self.schedule, "wall_hours_conf", self.stretches)

    @cached_property
    def bought(self) -> list[str]:
        return milp.purchases(self.program, self.sol)

    @cached_property
    def options_used(self) -> tuple[str, ...]:
        """What the plan puts hours on and buys, by id."""
        return tuple(sorted(set(self.schedule.option.tolist()) | set(self.bought)))

    @property
    def last_finish(self) -> dt.date | None:
        """The last phase's expected finish (None: no phase has one)."""
        return max(self.finishes.values(), default=None)

    @cached_property
    def committed(self) -> list[tuple[milp.CommitVar, int]]:
        """Each commitment made: its start day, term and price, and the instances committed."""
        return milp.committed(self.program, self.sol)

    @property
    def committed_usd(self) -> float:
        """What the commitments cost, paid whether used or not [USD]."""
        return sum(z.usd * k for z, k in self.committed)

    @cached_property
    def bought_on(self) -> dict[str, milp.BuyVar]:
        """Each card bought: the day, its price then and its resale at the horizon's end."""
        return milp.bought(self.program, self.sol)

    @cached_property
    def co2_kg(self) -> float:
        """The plan's emissions [kg CO2e] (:func:`milp.emissions_kg`)."""
        return milp.emissions_kg(self.program, self.sol)

    @cached_property
    def energy_kwh(self) -> float:
        return milp.energy_of(self.program, self.sol)

    @cached_property
    def unmet(self) -> dict[str, float]:
        return milp.unmet(self.program, self.sol)

    @property
    def host_bought(self) -> bool:
        return milp.bought_host(self.program, self.sol)

    @cached_property
    def running_usd(self) -> np.ndarray:
        """Money each x variable spends (rent, electricity, storage, egress) [USD]."""
        xi = self.program.x_index
        return self.sol.x[: len(xi)] * xi.money_per_ref

    @property
    def purchase_usd(self) -> float:
        return sum(v.price_usd for v in self.bought_on.values()) + (self.s.you.host_usd if self.host_bought else 0.0)

    @property
    def resale_usd(self) -> float:
        return sum(v.resale_usd for v in self.bought_on.values())

    @property
    def credits_used(self) -> list[float]:
        """What each credit of ``you.credits`` pays [USD]."""
        terms = self.program.credit_terms or tuple((np.zeros(0, dtype=int), ()) for _ in self.program.credit_index)
        return [float(self.sol.x[u].sum() + self.sol.x[v].sum()) for (u, _), (v, _) in zip(self.program.credit_index, terms)]

    @cached_property
    def credits_on_hours(self) -> np.ndarray:
        """What the credits pay of each x's money [USD]: each group's payment (the program pays
        by group: :func:`milp.credit_groups`) on its bills in date order, as a provider takes a
        credit off its bills as they come."""
        bills = self.running_usd
        out = np.zeros(len(bills))
        paid: dict[int, float] = {}
        for u, gs in self.program.credit_index:
            for var, g in zip(u, gs):
                paid[int(g)] = paid.get(int(g), 0.0) + float(self.sol.x[var])
        first_day = self.program.x_index.weeks_in
        for g, usd in paid.items():
            xs = self.program.credit_groups[g]
            xs = xs[np.argsort(first_day[xs], kind="stable")]
            before = np.cumsum(bills[xs]) - bills[xs]
            out[xs] = np.clip(usd - before, 0.0, bills[xs])
        return out

    @cached_property
    def credit_reach(self) -> tuple[tuple[float, tuple[tuple[str, str, float], ...], tuple[tuple[str, int], ...]], ...]:
        """Per credit of ``you.credits``: its amount [USD], the share of each (phase, option)'s money
        as planned that it may pay (the buckets inside its days, its providers), and the
        commitments (offer, start day) it may pay: what the uncertainty analysis needs to let the
        credits pay a draw's bills as they pay the plan's."""
        xi = self.program.x_index
        money = pd.DataFrame({"phase": xi.phase, "option": xi.option, "usd": self.running_usd})
        total = money.groupby(["phase", "option"], sort=True)["usd"].sum()
        terms = self.program.credit_terms or tuple((np.zeros(0, dtype=int), ()) for _ in self.program.credit_index)
        made = {(z.option, z.day) for z, k in self.committed if k > 0}
        out = []
        groups = self.program.credit_groups
        for credit, (_, paid), (_, zs) in zip(self.s.you.credits, self.program.credit_index, terms):
            covered = np.sort(np.concatenate([groups[g] for g in paid])) if len(paid) else np.zeros(0, dtype=int)
            reach = money.iloc[covered].groupby(["phase", "option"], sort=True)["usd"].sum()
            shares = tuple((str(key[0]), str(key[1]), float(v / total[key])) for key, v in
                           zip(reach.index.to_list(), reach.to_numpy()) if v > 0 and total[key] > 0)
            out.append((credit.amount_usd, shares, tuple(sorted({(z.option, z.day) for z in zs} & made))))
        return tuple(out)

    @property
    def money_usd(self) -> float:
        """Money spent: purchases and host, less resale and credits, plus running costs (no time,
        no penalties)."""
        return (self.purchase_usd - self.resale_usd + self.committed_usd + float(self.running_usd.sum())
                - sum(self.credits_used))

    @property
    def cash_usd(self) -> float:
        """Cash out during the plan, what the budget caps: purchases at their price, the host and
        running costs less what credits pay (resale comes back only after the horizon) [USD]."""
        return self.purchase_usd + self.committed_usd + float(self.running_usd.sum()) - sum(self.credits_used)

    @property
    def total_usd(self) -> float:
        """Money plus the user's time and emissions at the carbon price (the hours' and the
        making of the cards bought) [USD]."""
        xi = self.program.x_index
        not_cash_per_ref = xi.cost_per_ref - xi.money_per_ref
        made = sum(v.made_kg for v in self.bought_on.values()) * (self.s.you.carbon_usd_per_kg or 0.0)
        return self.money_usd + float(self.sol.x[: len(xi)] @ not_cash_per_ref) + made

    def money_items(self) -> dict[str, float]:
        """Money per item: each purchase (net of resale), the host, each option's running money [USD]."""
        xi = self.program.x_index
        label = np.array([("electricity for " if k in HOME_KINDS else "") + o for k, o in zip(xi.kind, xi.option)],
                         dtype=object)
        spent = pd.Series(self.running_usd).groupby(label).sum()
        out = {f"buy {b}": v.price_usd - v.resale_usd for b, v in self.bought_on.items()}
        if self.host_bought:
            out["host computer"] = self.s.you.host_usd
        for z, k in self.committed:
            what = (f"packs of {z.option}" if z.pack else f"subscribe {z.option}" if z.subscription
                    else f"commit {z.option}")
            out[what] = out.get(what, 0.0) + z.usd * k
        out.update({str(k): float(v) for k, v in spent.items() if v > 0.005})
        return out

    def hours_placed(self) -> tuple[tuple[str, str, float], ...]:
        """(phase, option, reference GPU-hours) the plan places, in that order, none empty."""
        hours = self.schedule.frame.groupby(["phase", "option"], sort=True)["gpu_hours"].sum()
        return tuple((str(p), str(o), float(h)) for (p, o), h in zip(hours.index, hours) if h > 0)

    def host_day(self) -> int | None:
        """The day the host computer is bought [days from the start]: with the first card it serves,
        the first bought (``buy_later``: not before it) or the first week a card you own works
        (None: no host bought)."""
        if not self.host_bought:
            return None
        xi = self.program.x_index
        worked = np.flatnonzero((xi.kind == "own") & (self.sol.x[: len(xi)] > 1e-9))
        days = [v.day for v in self.bought_on.values()] + ([7 * int(xi.week[worked].min())] if len(worked) else [])
        return min(days, default=0)

    def cumulative(self) -> tuple[tuple[dt.date, float], ...]:
        """Money spent by the end of each week: purchases on their days (the host with the first
        card it serves, :meth:`host_day`), running costs less what credits pay in their weeks,
        resale back at the horizon's end [USD]."""
        weekly = np.zeros(len(self.program.week_starts))
        week = self.program.x_index.week
        np.add.at(weekly, week, self.running_usd)
        np.add.at(weekly, week, -self.credits_on_hours)
        later = [v for v in self.bought_on.values() if v.day > 0]
        for v in later:
            weekly[min(v.day // 7, len(weekly) - 1)] += v.price_usd
        host_day = self.host_day()
        if host_day:  # bought after the first day: in its week, not with the first day's purchases
            weekly[min(host_day // 7, len(weekly) - 1)] += self.s.you.host_usd
        for z, k in self.committed:  # a term is paid when it starts, packs when first used
            day = milp.first_use(self.program, self.sol, z) if z.pack else z.day
            weekly[min(day // 7, len(weekly) - 1)] += z.usd * k
        for u, zs in self.program.credit_terms:  # less what credits pay of it
            for var, z in zip(u, zs):
                weekly[min(z.day // 7, len(weekly) - 1)] -= self.sol.x[var]
        first_day = self.purchase_usd - sum(v.price_usd for v in later) - (self.s.you.host_usd if host_day else 0.0)
        total = first_day + np.cumsum(weekly)
        points = [(self.s.start, first_day)]
        points += [(w + dt.timedelta(days=7), float(t)) for w, t in zip(self.program.week_starts, total)]
        if self.resale_usd:
            points.append((self.s.horizon_end, float(total[-1] - self.resale_usd)))
        return tuple(points)


def _solve(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, kinds: set[str], cards: dict[str, tuple[float, float]],
           deadline_override: dict[str, dt.date] | None = None, budget_usd: float | None = None, forced: dict[str,
           int] | None = None, start: milp.Start = ()) -> Solved:
    """The program of these quotes and kinds built and solved; its search from ``start`` (a plan
    by name: :func:`milp.start_of`) where that is a plan of it."""
    program = _build(s, quotes, opts, kinds, cards, deadline_override, budget_usd, forced)
    return _solved(s, program, cards, milp.start_of(program, start) if start else None)


def _build(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, kinds: set[str], cards: dict[str, tuple[float, float]],
           deadline_override: dict[str, dt.date] | None = None, budget_usd: float | None = None, forced: dict[str,
           int] | None = None
           ) -> milp.Program:
    return milp.build(s, quotes, opts, cards, kinds, deadline_override, budget_usd, forced,
                      card_paths(s, opts) if s.buy_every_weeks else None)


def _solved(s: Scenario, program: milp.Program, cards: dict[str, tuple[float, float]],
            start: np.ndarray | None = None) -> Solved:
    """The program solved (its search from ``start``, a plan of it: :func:`milp.solve`), or
    SolverError where HiGHS proves no plan."""
    sol = milp.solve(program, start=start)
    if not sol.ok:
        raise SolverError(
            f"the optimiser found no proven plan for '{s.name}' ({program.n_vars:,} variables, "
            f"{program.n_constraints:,} constraints): {sol.message}. No plan is shown rather than a wrong one; "
            "a shorter horizon, fewer phases or a narrower 'consider' makes the problem smaller")
    return Solved(s, program, sol, cards)


def plan(s: Scenario, catalog: pricing.Catalog, base_catalog: pricing.Catalog | None = None, trials: int = DEFAULT_TRIALS,
         seed: int = 0,
         pareto: bool = False, alternatives: bool = True, detail: bool = True, breakevens: bool = True,
         start: milp.Start = ()) -> Plan:
    """The cheapest plan for the scenario (see module docstring).

    ``catalog`` already holds the scenario's own entries; ``base_catalog``
    (without them) tells which of their fields took a documented default.
    ``trials`` Monte Carlo runs (seeded) give each assignment its spread (0: none, and no checkpoint
    advice either; what-if tables need neither);
    ``pareto`` adds the cost-vs-finish front of the last phase; ``alternatives``
    (on by default) solves once more per strategy. Without ``detail`` (a what-if row needs no
    more), break-even is found only against the rent offers the plan chose (if none, the cheapest
    per phase: :func:`cheapest_rents`) and the free tiers, options are excluded only for not
    being able to run, not phase by phase, and there is no week-by-week schedule, no statement
    of the figures the plan rests on (``assumed_figures``) and none of the warnings they bring,
    nor a search for what would fix work left undone (a shortfall says it was not searched for).
    Without ``breakevens`` there is no break-even table (a sensitivity row reads none).
    ``start``: a plan by name (:attr:`Plan.named_plan` of another position's plan) the search
    for the plan starts from, where it is a plan of this program: a what-if hands it its base
    plan's, which a price moved leaves a plan (often the best: HiGHS then closes its gap at the
    root, 7.1 -> 2.8 ms a lab-box search).
    """
    # stage 1: the options, what the workload makes of each, and every (phase, option) priced
    opts = build_options(s, catalog)
    step = job.step(s.workload, catalog.job_facts(), job.speed_ratio_of(catalog.devices, catalog.throughput))
    feas = exclusions(s, opts, catalog.devices, catalog.throughput, step)
    records = quote_records(s, opts, feas, step)
    all_quotes = QuoteTable.of(records)
    cards = card_costs(s, opts)
    # stage 2: prune what no plan needs, solve the program
    capped = s.you.max_co2_kg is not None  # the cap counts emissions: a dominator must emit no more
    flat = not s.rent_price_points and all(v == 0.0 for v in milp.rent_trends(s, opts).values())
    credited, committed = frozenset(p for c in s.you.credits for p in c.providers), commitments_of(opts)
    rents_dominated = dominated_rents(all_quotes, credited, committed, capped, flat)
    if flat:  # a tier's months where offers by the hour do all of its options' work for less
        rents_dominated |= dominated_tiers(all_quotes, subscriptions_of(opts), credited, committed, capped)
    made = milp.made_kg(opts) if capped else None
    dominated = {**dominated_cards(all_quotes, cards, card_paths(s, opts) if s.buy_every_weeks else None, made),
                 **rents_dominated}
    quotes = prune(all_quotes, dominated)
    warnings = _warnings(s, opts, catalog)
    if opts.empty:
        warnings.append("no options to consider: the 'consider' patterns and 'you.own' select nothing")
    best = _solve(s, quotes, opts, STRATEGIES["hybrid"], cards, start=start)
    # what would fix work left undone (the budget, the cap on emissions): searched for the answer; a
    # what-if's row (without ``detail``) reads none of it, and each search solves programs as large
    # as the plan's (with cards bought later, most of a lab's sensitivity over its budget)
    unbounded = (_solve(s, quotes, opts, STRATEGIES["hybrid"], cards, budget_usd=math.inf)
                 if detail and best.unmet and s.you.budget_usd is not None else None)  # the plan the budget holds back
    over_budget = _over_budget(s, quotes, opts, cards, best, unbounded, warnings)
    over_cap = _over_cap(s, quotes, opts, cards, best, warnings) if detail and over_budget is None else None
    held = _held_by_budget(s, best, unbounded, warnings) if over_budget is None else {}
    # stage 3: read the plan off the solution (records of the options it uses)
    placed = set(best.options_used)
    options = {o.option: o for o in usable_options(opts, feas) if o.option in placed}  # placed: quoted, so usable
    parts = dict.fromkeys(COST_PARTS, 0.0)
    purchases = _purchases(s, best, options, parts)
    credits = _credits(s, opts, best, parts, warnings)
    credit_kept = _credit_kept(s, quotes, opts, cards, best) if detail and s.you.credits else None
    commitments = _commitments(s, best, opts, parts)
    subscriptions = _subscriptions(s, best, parts)
    packs = _packs(s, best, parts)
    by_key = {(q.phase, q.option): q for q in records}
    by_phase = _hours_by_phase(best.schedule)
    later = ({p: _earliest_deadline(s, quotes, opts, cards, s.phase(p)) for p in best.unmet}
             if detail and over_cap is None else {})
    phases = [_phase_plan(s, ph, best, by_phase.get(ph.name, _NO_HOURS), by_key, options, parts, trials, seed,
                          all_quotes, over_budget, later.get(ph.name), over_cap, searched=detail, step=step,
                          held=held.get(ph.name))
              for ph in s.phases]
    # stage 4: what the answer is set against: strategies, candidates, break-even, the front
    others, late = _alternatives(s, quotes, opts, cards, best) if alternatives else ([], [])
    free_only = next((a for a in others if a.strategy == "free-only"), None)
    free_rate = free_only.total_cost_usd / sum(ph.gpu_hours for ph in s.phases) if free_only else None
    pairs = []
    if breakevens:  # without ``detail``, against the rent offers chosen, or the cheapest per phase
        chosen = None if detail else ({a.option for ph in phases for a in ph.assignments if a.kind == "rent"}
                                      or cheapest_rents(all_quotes.frame))
        pairs = breakeven.breakeven(s, opts, all_quotes.frame, free_rate, rents=chosen)
    front = _pareto(s, quotes, opts, cards) if pareto else ()
    candidates = _candidates(s, all_quotes, opts, cards, rents_dominated) if detail and alternatives and cards else []
    # stage 5: what the answer rests on (a what-if row, without ``detail``, states none)
    used = {a.option for ph in phases for a in ph.assignments} | set(best.bought)
    assumed = []
    if detail:
        assumed = _assumed_figures(s, [o for o in options.values() if o.option in used], warnings)
        assumed += _catalog_trends(s, catalog, opts, used)  # where rent goes: a default with its range, said up front
        assumed += _step_note(s, step, [o for o in options.values() if o.option in used])
        assumed += _long_runs(options, phases)
    return Plan(
        scenario=s,
        feasible=all(ph.meets_deadline for ph in phases),
        purchases=tuple(purchases),
        commitments=tuple(commitments),
        subscriptions=tuple(subscriptions),
        packs=tuple(packs),
        phases=tuple(phases),
        cost_usd=parts,
        alternatives=tuple(others),
        late_strategies=tuple(late),
        excluded=_excluded(s, feas, records, best.schedule, used, dominated, per_phase=detail, cards=cards),
        quote_table=all_quotes,
        catalog_as_of=catalog.as_of(),
        catalog_layers=catalog.layers,
        warnings=tuple(warnings),
        over_budget=over_budget is not None,
        needs_budget_usd=over_budget.least_usd if over_budget is not None else None,
        assumptions=(tuple(_assumed_defaults(s, base_catalog)) if base_catalog is not None else ())
        + ((f"rent prices are projections: each moves {s.rent_trend_per_year:+.0%} a year from its catalog date "
            "(price_trend)",) if s.rent_trend_per_year else ())
        + (("rent prices are projections: each goes from its catalog price to "
            + ", ".join(f"{units.format_share(lv)} by {d}" for d, lv in s.rent_price_points)
            + ", linearly in between (price_trend)",) if s.rent_price_points else ())
        + tuple(f"{path} is given as a range ({low:g} to {high:g} in the planner's units: h, GB, USD, ...); "
                f"the plan uses the middle, {(low + high) / 2:g}" for path, (low, high) in s.ranges.items()),
        assumed_figures=tuple(assumed),
        schedule=best.weekly if detail else None,
        pareto=tuple(front),
        candidates=tuple(candidates),
        credits=credits,
        credit_kept=credit_kept,
        breakeven=tuple(pairs),
        problem_size=(best.program.n_vars, best.program.n_constraints),
        named_plan=milp.named_plan(best.program, best.sol.x),
        options=opts,
        step=step,
    )


def _hours_by_phase(sched: milp.Schedule) -> dict[str, dict[str, float]]:
    """Reference hours per option of each phase (options in the order they first appear)."""
    sums: dict[str, dict[str, float]] = {}
    for p, o, h in zip(sched.phase.tolist(), sched.option.tolist(), sched.gpu_hours.tolist()):
        mine = sums.setdefault(str(p), {})
        mine[str(o)] = mine.get(str(o), 0.0) + float(h)
    return sums


def _over_budget(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]], best: Solved,
                 unbounded: Solved | None, warnings: list[str]) -> OverBudget | None:
    """When the budget leaves work undone: what meeting every deadline would cost in cash, said
    in the warnings, and what the infeasible phases say of it (None otherwise). ``unbounded``:
    the plan without the budget (None: no budget, or nothing left undone)."""
    if unbounded is None or not best.unmet or s.you.budget_usd is None or unbounded.unmet:
        return None
    money = unbounded.cash_usd
    least = _least_cash(s, quotes, opts, cards, money)
    items = ", ".join(f"{what} {s.money(unbounded.bought_on[what[4:]].price_usd if what[4:] in unbounded.bought_on else usd)}"
                      for what, usd in unbounded.money_items().items())
    if (credited := sum(unbounded.credits_used)) > 0.005:  # the items are the bills; credits pay part of them
        items += f", less {s.money(credited)} your credits pay"
    last = _later_deadlines_fix(s, quotes, opts, cards)
    later = last is not None
    cheaper = s.money(least) != s.money(money)  # a plan in time that spends less cash, for more in all
    warnings.append(f"meeting every deadline needs {s.money(least)} in cash, more than the budget "
                    f"({s.money(s.you.budget_usd)}): raise the budget by {s.money(least - s.you.budget_usd)}"
                    + (f" ({s.money(money - s.you.budget_usd)} for the cheapest plan in time)" if cheaper else "")
                    + (" or move deadlines" if later else "") + "; the plan shown keeps to the budget")
    return OverBudget(f"the cheapest plan that meets every deadline spends {s.money(money)} in cash ({items}); "
                      "the budget caps cash out during the plan: cards at their price (resale comes back only "
                      "after the horizon), the electricity of cards you own included",
                      s.money(least) + (f" (the least cash of any plan in time; {s.money(money)} lets it be the "
                                        "cheapest in time)" if cheaper else ""), last, least)


def _held_by_budget(s: Scenario, best: Solved, unbounded: Solved | None, warnings: list[str]
                    ) -> dict[str, tuple[float, float]]:
    """Where no budget meets every deadline (:func:`_over_budget` finds no fix) yet the budget
    holds work back: per phase, (hours the budget leaves undone that the plan without it does,
    hours undone without it), said in the warnings. A budget of 1,500 USD beside 3,000 h due in 12
    weeks left a second phase, due six months later and 203 USD on its own, wholly undone, and
    its answer blamed the phases it shares a machine with and asked for a later deadline.
    ``unbounded``: the plan without the budget, as :func:`_over_budget` reads it."""
    if unbounded is None or s.you.budget_usd is None:
        return {}
    held = {p: (h - unbounded.unmet.get(p, 0.0), unbounded.unmet.get(p, 0.0)) for p, h in best.unmet.items()
            if h - unbounded.unmet.get(p, 0.0) > 0.05}
    if held:
        warnings.append(f"the budget ({s.money(s.you.budget_usd)}) holds back work a plan without it does in time: "
                        + units.format_and([f"{units.format_hours(h)} h of '{p}'" for p, (h, _) in held.items()])
                        + "; no budget meets every deadline (what each phase says), and the plan spends the budget "
                        "on the hours of every phase alike")
    return held


def _least_cash(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]],
                cheapest_usd: float) -> float:
    """The least cash out of any plan that meets every deadline [USD], rounded up to a cent of the
    scenario's currency (a yen): the least budget that fixes a shortfall. The cheapest plan in time
    (``cheapest_usd`` of cash) may spend more: a card bought for its resale, say, where renting
    spends less cash and more money in all. The program with a budget row (:func:`milp.budget`:
    cash, as the budget counts it) minimises that row with every phase done (its unmet work
    bounded at 0), a linear objective over the same rows; planned again with the budget at the
    figure, the plan meets every deadline, and a cent less it does not."""
    program = _build(s, quotes, opts, STRATEGIES["hybrid"], cards, budget_usd=cheapest_usd + 1.0)
    row = next(b for b in program.blocks if b.family == "budget")
    cash = np.zeros(program.n_vars)
    np.add.at(cash, row.col, row.val)
    ub = program.bounds.ub.copy()
    ub[list(program.unmet_index.values())] = 0.0
    least = milp.solve(dataclasses.replace(program, c=cash, bounds=milp.Bounds(program.bounds.lb, ub), ties=None,
                                           blocks=[b for b in program.blocks if b.family != "budget"]))
    # (not ok: the cheapest plan in time is one such plan; never, but never a wrong figure either)
    usd = min(cheapest_usd, least.objective) if least.ok else cheapest_usd
    cent = (1.0 if s.currency.upper() in units.WHOLE_CURRENCIES else 0.01) * s.usd_per_currency  # as s.money shows
    return math.ceil(usd / cent - 1e-6) * cent  # up: a budget written as shown must hold the plan


class OverBudget(NamedTuple):
    """Work the budget leaves undone (:func:`_over_budget`): what meeting every deadline spends
    (``spends``, a sentence; ``needs``, the least cash written as money, ``least_usd`` [USD]) and ``every_phase_by``, the
    horizon's last day where every phase due then is done within the budget (None: no later
    deadline is a fix)."""

    spends: str
    needs: str
    every_phase_by: dt.date | None
    least_usd: float

    def fix(self, ph: Phase, later: dt.date | None) -> str:
        """What would fix the shortfall of ``ph``: the budget, or ``later``, the phase's earliest
        deadline within the budget, the other phases as they are (:func:`_earliest_deadline`),
        else every phase due by the horizon's end."""
        if later is not None:
            return (f"a budget of {self.needs} would fix it, or, within this budget, a deadline for '{ph.name}' "
                    f"on or after {later} (the other phases as they are)")
        if self.every_phase_by is not None:
            return f"a budget of {self.needs} or later deadlines (every phase by {self.every_phase_by} would do) would fix it"
        return (f"a budget of {self.needs} would fix it (no later deadline would: within the budget, not even "
                "the horizon's end leaves nothing undone)")


def _later_deadlines_fix(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame,
                         cards: dict[str, tuple[float, float]]) -> dt.date | None:
    """The horizon's last day where later deadlines are a fix for work the budget or the cap on
    emissions leaves undone (every phase due that day, planned again within them, leaves nothing
    undone), else None: the answer offers them only then."""
    last = s.horizon_end - dt.timedelta(days=1)
    return None if _solve(s, quotes, opts, STRATEGIES["hybrid"], cards, {ph.name: last for ph in s.phases}).unmet \
        else last


def _over_cap(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]], best: Solved,
              warnings: list[str]) -> str | None:
    """When the cap on emissions (``you.max_co2``) leaves work undone: what the plan without the
    cap emits, said in the warnings, and the sentence the infeasible phases quote (None
    otherwise, or when the work is undone with no cap too)."""
    if not best.unmet or s.you.max_co2_kg is None:
        return None
    free = dataclasses.replace(s, you=dataclasses.replace(s.you, max_co2_kg=None))
    uncapped = _solve(free, quotes, opts, STRATEGIES["hybrid"], cards)
    if uncapped.unmet:
        return None
    later = _later_deadlines_fix(s, quotes, opts, cards) is not None
    warnings.append(f"meeting every deadline emits {uncapped.co2_kg:,.1f} kg CO2e in the cheapest plan, more than the "
                    f"cap of {s.you.max_co2_kg:,.1f} kg (you.max_co2): raise the cap" + (" or move deadlines" if later
                                                                                         else "")
                    + "; the plan shown keeps to the cap")
    return (f"the cap on emissions ({s.you.max_co2_kg:,.1f} kg CO2e, you.max_co2) holds it back: the cheapest plan "
            f"that meets every deadline emits {uncapped.co2_kg:,.1f} kg; a cap of {_kg_up(uncapped.co2_kg)} kg or "
            "cleaner options in 'consider' would fix it")


def _kg_up(kg: float) -> str:
    """A mass rounded up to the tenth of a kg it is written with: a cap of that figure holds it."""
    return f"{math.ceil(kg * 10 - 1e-9) / 10:,.1f}"


def _purchases(s: Scenario, best: Solved, options: dict[str, Option], parts: dict[str, float]) -> list[Purchase]:
    """The cards the plan buys (and the host), added to the cost parts."""
    out = []
    for b, v in best.bought_on.items():
        o = options[b]
        out.append(Purchase(b, o.device, o.count, v.price_usd, v.resale_usd, _price_source(o),
                            s.start + dt.timedelta(days=v.day) if v.day else None, v.made_kg))
        parts["purchase"] += v.price_usd
        parts["resale"] -= v.resale_usd
        parts["carbon"] += v.made_kg * (s.you.carbon_usd_per_kg or 0.0)
    if best.host_bought:
        parts["host"] = s.you.host_usd
    return out


def _packs(s: Scenario, best: Solved, parts: dict[str, float]) -> list[Pack]:
    """The packs of compute units the plan buys, their price added to the rent (the hours on the
    tier carry none: a pack is paid whole whether its units are used or not). The program buys a
    period's packs at its start; the answer buys them on the first day the period runs hours on
    the tier, when they are needed (their units, lasting from then, cover every hour planned)."""
    out = []
    for z, k in best.committed:
        if z.pack:
            day = milp.first_use(best.program, best.sol, z)
            out.append(Pack(z.option, s.start + dt.timedelta(days=day), z.days, k, z.usd * k, float(z.units or 0) * k))
            parts["rent"] += z.usd * k
    return out


def _subscriptions(s: Scenario, best: Solved, parts: dict[str, float]) -> list[Subscription]:
    """The months the plan subscribes to a tier, their fees added to the rent (the hours on the
    tier carry none: the month's units are paid whether used or not)."""
    out = []
    for z, k in best.committed:
        if z.subscription and not z.pack:
            out.append(Subscription(z.option, s.start + dt.timedelta(days=z.day), z.days, z.usd * k, float(z.units or 0)))
            parts["rent"] += z.usd * k
    return out


def _commitments(s: Scenario, best: Solved, opts: pd.DataFrame, parts: dict[str, float]) -> list[Commitment]:
    """The commitments the plan makes, their cost added to the rent (each phase's hours on them
    carry none: the term is paid whether used or not)."""
    terms = [(z, k) for z, k in best.committed if not z.subscription]
    if not terms:
        return []
    rows = opts.set_index("option")
    out = []
    for z, k in terms:
        r = rows.loc[z.option]
        layer = r.get("price_source")
        out.append(Commitment(z.option, str(r["device"]), k, s.start + dt.timedelta(days=z.day), z.days, z.usd * k,
                              layer if isinstance(layer, str) else None))
        parts["rent"] += z.usd * k
    return out


def _credits(s: Scenario, opts: pd.DataFrame, best: Solved, parts: dict[str, float], warnings: list[str]
             ) -> tuple[tuple[str, float, float, float], ...]:
    """Per credit: (name, amount, what it pays, what it leaves unused) [USD], its payment taken
    off the cost parts; a warning for a credit no considered offer can use."""
    used = best.credits_used
    parts["credits"] = -sum(used)
    rent_providers = {provider_of(o) for o in opts.loc[opts["kind"] == "rent", "option"]} if s.you.credits else set()
    for c in s.you.credits:
        if not set(c.providers) & rent_providers:
            warnings.append(f"{c.name}: no rent offer of {', '.join(c.providers)} is considered, so it pays for "
                            f"nothing; add {', '.join(repr(p + ':*') for p in c.providers)} to consider.rent")
    return tuple((c.name, c.amount_usd, u, c.amount_usd - u) for c, u in zip(s.you.credits, used))


#: A plan that keeps more of your credits is said where it keeps at least this much [USD] ...
CREDIT_KEPT_MIN_USD = 1.0
#: ... found with this weight on each dollar a credit pays [per USD], its cash held to the plan's:
#: above the wall hours' tie-break (1e-4 an hour), which otherwise decides among plans the credits
#: pay alike, and far below any cash (a cent buys 100 USD of credit kept).
CREDIT_KEPT_WEIGHT = 1e-4


def _credit_kept(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]],
                 best: Solved) -> CreditKept | None:
    """Where your credits pay part of the plan, the plan of the same cash that spends the least of
    them, if it keeps at least CREDIT_KEPT_MIN_USD more: the program again, its cash held to the
    plan's (the budget row) and each dollar of credit weighed (CREDIT_KEPT_WEIGHT). Of plans the
    credits pay alike the plan takes the fewest wall hours (milp.TIE_BREAKS): a 1,000 USD AWS
    credit paid 431 USD for a LoRA on 8 H200s where 147 USD on spot A100s did it for the same
    cash, which a user left with credit for more work may prefer. None where no such plan exists."""
    used = sum(best.credits_used)
    if best.unmet or used < CREDIT_KEPT_MIN_USD:
        return None
    limit = best.cash_usd + 0.005  # the same cash, to the half cent
    if s.you.budget_usd is not None:
        limit = min(limit, s.you.budget_usd)
    program = _build(s, quotes, opts, STRATEGIES["hybrid"], cards, budget_usd=limit)
    c = program.c.copy()
    for u, _ in (*program.credit_index, *program.credit_terms):
        c[u] += CREDIT_KEPT_WEIGHT
    try:
        kept = _solved(s, dataclasses.replace(program, c=c), cards)
    except SolverError:
        return None
    spent = sum(kept.credits_used)
    if kept.unmet or kept.cash_usd > best.cash_usd + 0.005 or spent > used - CREDIT_KEPT_MIN_USD:
        return None
    return CreditKept(kept.options_used, spent, kept.last_finish)


_NO_HOURS: dict[str, float] = {}


def _phase_plan(s: Scenario, ph: Phase, best: Solved, placed: Mapping[str, float], by_key: dict[tuple[str, str], Quote],
                options: dict[str, Option], parts: dict[str, float], trials: int, seed: int,
                all_quotes: QuoteTable, over_budget: OverBudget | None, later: dt.date | None = None,
                over_cap: str | None = None, searched: bool = True, step: workload.Step | None = None,
                held: tuple[float, float] | None = None) -> PhasePlan:
    """One phase of the plan: where its hours go (``placed``: reference GPU-hours per option,
    largest share first), its finishes, the chance it ends in time, and what would fix it when
    it cannot (not ``searched``: that it cannot); its money added to ``parts``. ``step``: the
    workload's step, whose fixed time moves the hours of every option sized to it alike."""
    assignments = []
    p50 = p90 = best.finishes.get(ph.name)
    at_conf = best.finishes_conf.get(ph.name)
    finish = best.finish_models.get(ph.name)
    spread: list[float] = []  # each option's standard deviation of wall hours
    shared: list[dict[str, float]] = []  # the parts of it that one draw moves on other options too
    work_rel_sd = _work_rel_sd(s, ph)
    shifts = 0.0  # wall hours a default interruption rate's range adds on average (Quote.wall_hours_rate_shift)
    over_p50 = over_p90 = 0.0  # wall hours over the expected ones, each option at its P50 / P90
    for option, hours in sorted(placed.items(), key=lambda oh: -oh[1]):  # largest first; a tie in order placed
        c, o = by_key[(ph.name, str(option))], options[str(option)]
        f = float(hours) / ph.gpu_hours
        cost = {k: c.part_usd(k) * f for k in PART_NAMES}
        if c.kind == "rent":  # rent prices on their path (price_trend), over the hours placed
            cost["rent"] *= best.price_factors.get((ph.name, c.option), 1.0)
        if o.term_days is not None or o.by_the_month or o.by_the_pack:  # paid once by the term, month or pack
            cost["rent"] = 0.0
        for k in PART_NAMES:
            parts[k] += cost[k]
        a = _assignment(s, ph, c, o, f, float(hours), cost, trials, seed)
        assignments.append(a)
        if c.weekly_capacity_h > 0:
            over_p50 += max((a.wall_hours_p50 or a.wall_hours) - a.wall_hours, 0.0)
            over_p90 += max((a.wall_hours_p90 or a.wall_hours) - a.wall_hours, 0.0)
            shift = float_or(c.wall_hours_rate_shift) * f
            shifts += shift
            spread.append(_wall_sd(s, c, f, shift))
            shared.append(_shared_parts(s, c, o, (c.wall_hours + float_or(c.wall_hours_rate_shift)) * f, work_rel_sd,
                                        step))
    chance = 1.0
    if p50 is not None and finish is not None:
        # the finishes and the promise rest on the program's own model (sessions.Finish): the
        # run's overrun (its options' overruns added, the work's part of them moving together)
        # is on time while it fits in
        # what the earlier buckets keep for it and the days left after the expected finish
        p50, p90 = _later(p50, finish.day_with(over_p50)), _later(p90, finish.day_with(over_p90))
        sigmas = {f"speed {c.device}": workload.speed_sigma(s.workload.family, s.workload.precision,
                                                            str(c.speed_source)) for c in
                  (by_key[(ph.name, str(o))] for o in placed)}
        booked = {k: workload.speed_rel_sd_at(v, s.phase_confidence) for k, v in sigmas.items() if v > 0}

        def at_chance(part: str, p: float) -> float:  # a speed's part booked at chance p, over its booking at conf
            return workload.speed_rel_sd_at(sigmas[part], p) / booked[part] if part in booked else 1.0

        chance = _on_time(spread, finish.headroom_h(s.last_day(ph)) - shifts, shared, at_chance)
    done = ph.name not in best.unmet
    shortfall_text = None if done else _infeasible_text(s, ph, all_quotes.frame, best.unmet[ph.name], over_budget, later,
                                                        over_cap, searched, held)
    meets = done and at_conf is not None and at_conf <= s.last_day(ph)
    return PhasePlan(ph.name, ph.gpu_hours, ph.start, ph.deadline, best.finishes.get(ph.name) if done else None,
                     p50 if done else None, p90 if done else None, meets, tuple(assignments),
                     shortfall_text, at_conf if done else None, s.phase_confidence, chance if done else 0.0)


def _catalog_trends(s: Scenario, catalog: pricing.Catalog, opts: pd.DataFrame, used: set[str]) -> tuple[str, ...]:
    """What the answer says, up front, of the catalog's rent trends the plan's rent follows
    (price_trend not given): each trend, its range and its record; a flat one says the prices
    are kept as dated."""
    if not s.rent_trend_of_catalog or "rent_trend_default" not in opts:
        return ()
    rows = catalog.trends.set_index("id")
    named = sorted({d for o, d in zip(opts["option"], opts["rent_trend_default"]) if o in used and isinstance(d, str)})
    if not named:
        return ()
    said = [f"{d} {rows.at[d, 'trend_per_year']:+.1%} a year (range {rows.at[d, 'low_per_year']:+.0%} to "
            f"{rows.at[d, 'high_per_year']:+.0%}, {rows.at[d, 'since']:%Y-%m} to {rows.at[d, 'until']:%Y-%m})"
            for d in named]
    moving = any(rows.at[d, "trend_per_year"] != 0 for d in named)
    lead = ("rent prices are projections from their catalog dates along each device's trend: " if moving else
            "rent prices are kept as dated; their catalog trend is flat, within a wide range the uncertainty "
            "analysis draws: ")
    return (lead + "; ".join(said) + " (the catalog's trends, their sources and dates: planner pricing list "
            "--trends; price_trend sets your own)",)


def _later(a: dt.date | None, b: dt.date | None) -> dt.date | None:
    """The later of two dates, None (never) being the latest."""
    return None if a is None or b is None else max(a, b)


def _assignment(s: Scenario, ph: Phase, c: Quote, o: Option, f: float, hours: float, cost: dict[str, float], trials: int,
                seed: int) -> Assignment:
    """A share ``f`` of phase ``ph`` (``hours`` reference GPU-hours) on quote ``c``'s option."""
    spread = _spread(s, ph, o, c, f, trials, seed)
    wall, wait = c.wall_hours * f, (c.wait_hours or 0.0) * f
    return Assignment(
        option=c.option, kind=c.kind, device=c.device, gpu_hours=hours,
        wall_hours=wall, billed_hours=c.billed_hours * f,
        sessions=sessions.sessions_count(c.sessions * f, wall, c.session_limit_h, wait),
        restarts_by_hand=(sessions.sessions_count(c.restarts_by_hand * f, wall, c.session_limit_h, wait)
                          if c.restarts_by_hand else 0),
        wait_hours=wait, lost_hours=c.lost_hours * f, setup_hours=c.setup_hours * f,
        checkpoint_hours=(c.checkpoint_hours or 0.0) * f, checkpoint_gb=checkpoint_gb_of(s, ph),
        checkpoint_write_gb_per_h=checkpoint_write_gb_per_h(o),
        checkpoint_every_min=ph.checkpoint_every_h * 60,
        checkpoint_every_recommended_min=spread.recommended_min,
        relative_speed=c.relative_speed, speed_source=c.speed_source, verdict=c.verdict,
        fit_reason=c.fit_reason or "", slowdown=o.slowdown, side_by_side=c.side_by_side, cost_usd=cost,
        saved_by_recommended_h=spread.saved_h,
        wall_hours_p50=spread.wall_p50, wall_hours_p90=spread.wall_p90,
        lost_hours_p10=spread.lost_p10, lost_hours_p90=spread.lost_p90,
        cost_p50_usd=spread.cost_p50, cost_p90_usd=spread.cost_p90,
        price_source=_price_source(o), prepaid=o.term_days is not None or o.by_the_month or o.by_the_pack,
        energy_kwh=c.energy_kwh * f, co2_kg=c.co2_kg * f,
    )


#: The speeds at a job's size are said up front where they move a device the plan uses this much.
STEP_NOTE_AT = 0.02


def _step_note(s: Scenario, step: workload.Step | None, used: list[Option]) -> list[str]:
    """What the speeds at the job's size rest on, said up front where they move a device the plan
    uses by STEP_NOTE_AT or more: the step's fixed time per layer, a default with its range
    (planner.model.workload.Step)."""
    moved = sorted({(o.device, one_gpu_speed(o, s.workload.sharding))
                    for o in used if o.speed_source in ("measured", "estimated") and o.device != s.workload.reference_gpu})
    if step is None:
        return [f"speeds are those of large work: {workload.UNKNOWN_STEP}, so on small steps the speeds of "
                f"{', '.join(d for d, _ in moved[:3])} against {s.workload.reference_gpu} may lie nearer 1 than stated "
                "(planner fit shows speeds at a job's size)"] if moved else []
    share = step.share
    moved = [(d, v) for d, v in moved if abs(float(workload.at_scale(v, share)) / v - 1.0) >= STEP_NOTE_AT]
    if not moved:
        return []
    low, typical, high = workload.STEP_FIXED_S_PER_LAYER
    said = ", ".join("{} {}x instead of {}x".format(d, *_apart(v, float(workload.at_scale(v, share))))
                     for d, v in moved[:3])
    return [f"speeds at this job's size: a step of {step.flops / 1e12:.3g} TFLOP over {step.layers} layers spends a fixed "
            f"time a layer that no GPU shortens (kernel launches and host work: {low * 1e3:g}-{high * 1e3:g} ms, typically "
            f"{typical * 1e3:g}; fitted on published runs at several sizes), on average {share:.0%} of a step on "
            f"{s.workload.reference_gpu}, so speeds lie nearer the reference's than on large work ({said}); the plan counts "
            "on the mean hours over the range and the uncertainty analysis draws it"
            + (f"; the range was fitted on PyTorch trainers on GPUs, and {s.framework}'s compiled steps (XLA fuses a "
               "layer's kernels, on TPUs as on GPUs) may spend less: an extrapolation" if s.framework in ("jax", "tensorflow")
               else "")]


#: A session on a rent offer longer than this is a run of days: what its host must allow is said.
LONG_SESSION_H = 24.0


def _long_runs(options: Mapping[str, Option], phases: Sequence[PhasePlan]) -> list[str]:
    """What the plan's sessions of more than a day (:data:`LONG_SESSION_H`) on a rent offer need of
    its host, where the catalog says (``long_runs``: a Vast host's maximum rental duration and
    reliability): a lab's 1.3B pretrain ran 1,534 h in one session on one Vast 3090, unsaid."""
    longest: dict[str, float] = {}
    for ph in phases:
        for a in ph.assignments:
            o = options.get(a.option)
            if o is not None and o.kind == "rent" and o.long_runs and a.sessions > 0:
                longest[a.option] = max(longest.get(a.option, 0.0), a.wall_hours / a.sessions)
    return [f"{option}: runs of about {h:,.0f} h ({h / 24:,.0f} days) in one session: {options[option].long_runs}"
            for option, h in sorted(longest.items()) if h > LONG_SESSION_H]


def _apart(a: float, b: float) -> tuple[str, str]:
    """Two figures written with two decimals, or as many more (up to four) as tell them apart:
    "t4 0.141x instead of 0.138x", never "0.14x instead of 0.14x"."""
    for decimals in (2, 3, 4):
        x, y = f"{a:.{decimals}f}", f"{b:.{decimals}f}"
        if x != y:
            break
    return x, y


def _assumed_figures(s: Scenario, used: list[Option], warnings: list[str]) -> list[str]:
    """The figures no provider publishes that the plan rests on (said up front), and warnings
    for free tiers without any usage limit and for old prices."""
    share = units.format_share
    assumed = job_notes(s)  # the work itself first
    assumed += [o.interruptions_default for o in used if isinstance(o.interruptions_default, str)]
    assumed += [f"{o.option}: the {o.device} is not to be had at "
                f"{share(o.unavailable_estimate if o.unavailable_estimate is not None else o.unavailable_share)} of "
                f"session starts (range {share(o.unavailable_low or 0.0)}-{share(o.unavailable_high or 1.0)}; an estimate "
                f"from users' reports, the provider publishes none): the plan counts on {share(1 - o.unavailable_share)} "
                "of its hours" + (f", what it gives in {share(s.phase_confidence)} of outcomes"
                                  if o.unavailable_estimate is not None else "")
                for o in used if o.unavailable_share]
    assumed += [f"{o.option}: its price, {s.money(o.purchase_usd or 0.0)}, rests on one dated figure ({o.as_of}; the "
                "catalog holds no market range for it): the uncertainty analysis spreads it by its age only"
                for o in used if o.kind == "buy" and o.price_source != "scenario" and o.purchase_low_usd is None]
    if s.workload.precision == "fp8":
        low, high = workload.FP8_SPEEDUP_RANGE
        assumed.append(f"precision fp8: cards with FP8 tensor cores ({', '.join(workload.FP8_ARCHITECTURES)}) are taken "
                       f"{workload.FP8_SPEEDUP:g}x as fast as in mixed precision (measured {low:g}-{high:g}x on H100 "
                       "and B200; none measured on a GeForce card), the others train in mixed precision")
    quotas = {o.offer: o for o in used if o.quota_estimate_h_per_week is not None}
    assumed += [f"{offer}: its weekly quota is an estimate, {o.quota_estimate_h_per_week:g} h (range "
                f"{o.quota_low_h_per_week:g}-{o.quota_high_h_per_week:g}; the service publishes none): the plan counts on "
                f"{o.quota_h_per_week:.1f} h a week, what it gives in {share(s.phase_confidence)} of weeks"
                for offer, o in sorted(quotas.items())]
    # a weekly quota whose reset day is unpublished is counted in weeks from the start (milp.Calendar):
    # said, for a plan that fills a week at a phase's edges holds only if the service resets then
    unreset = {o.quota_group or o.offer: o for o in used if o.kind in NOTEBOOK_KINDS and o.quota_h_per_week
               and not (isinstance(o.quota_reset, str) and o.quota_reset)}
    assumed += [f"{name}: its weekly quota ({o.quota_h_per_week:g} h) is counted in weeks from the scenario's start, "
                f"{s.start:%A}s: the day it resets is not published (set quota_reset in the scenario's catalog); on "
                "another day, a week at a phase's start or end may hold fewer of its hours"
                for name, o in sorted(unreset.items())]
    idle = {o.offer: o for o in used if o.kind in NOTEBOOK_KINDS and o.idle_timeout_min
            and (o.session_limit_h is None or o.idle_timeout_min / 60.0 < o.session_limit_h)}
    assumed += [f"{offer}: a session stops after {o.idle_timeout_min:g} idle minutes; the plan counts on sessions "
                + (f"of up to {o.session_limit_h:g} h" if o.session_limit_h else "that run until done")
                + ", so it assumes you keep each one active (the page open and used at least that often)"
                for offer, o in sorted(idle.items())]
    assumed += list(dict.fromkeys(o.board_w_estimate for o in used if o.board_w_estimate))
    # blank is never zero: a rent offer without an egress price has its downloads counted free, said
    unpriced = sorted({o.offer for o in used if o.kind == "rent" and missing(o.egress_usd_per_gb)})
    if unpriced:
        assumed.append(f"{units.format_and(unpriced)}: no egress price is published or given, so the plan counts "
                       "the download of what each run leaves (its weights) as free; set egress for the offer in the "
                       "scenario's catalog")
    # a notebook tier whose disk the catalog lacks: the data's fit is not checked (quotes.too_big), said
    need_gb = {o.offer: max(disk_need_gb(ph, o, checkpoint_gb_of(s, ph)) for ph in s.phases)
               for o in used if o.kind in NOTEBOOK_KINDS and o.disk_gb is None}
    assumed += [f"{offer}: the catalog has no figure for its disk, so the plan does not check that a phase's dataset "
                f"and checkpoint fit on it (up to {units.format_significant(gb, 3, thousands=True)} GB here; set disk "
                "for the tier in the scenario's catalog)"
                for offer, gb in sorted(need_gb.items()) if gb > UNCHECKED_DISK_SAID_FROM_GB]
    # what an account needs before its first session or machine (catalog sign_up): one line for
    # tiers of one account, and for offers of one provider
    accounts: dict[str, set[str]] = {}
    for o in used:
        if o.kind in (*NOTEBOOK_KINDS, "rent") and o.sign_up:
            accounts.setdefault(o.sign_up, set()).add(o.offer)
    assumed += [f"{units.format_and(sorted(offers))}: the plan assumes an account that may use "
                f"{'them' if len(offers) > 1 else 'it'} now: {text}"
                for text, offers in sorted(accounts.items(), key=lambda kv: sorted(kv[1]))]
    for o in used:
        if o.kind in NOTEBOOK_KINDS and o.quota_h_per_week is None and o.quota_h_total is None and o.cap_h_per_month is None:
            warnings.append(f"{o.option}: the service publishes no usage limit; the plan assumes only its session "
                            "limit and your starts by hand — set a 'quota' for it in the scenario's catalog")
    rows = pd.DataFrame([(o.option, o.as_of) for o in used if o.kind != "own"], columns=["option", "as_of"])
    for r in stale_rows(rows, s.start).itertuples():
        warnings.append(f"{r.option}: catalog price dated {r.as_of} is {r.age_days} days older than the "
                        f"scenario's start; check it or override it in the scenario's 'catalog'")
    return assumed


def job_notes(s: Scenario) -> list[str]:
    """What the answer says up front of each phase described as a job: hours estimated, not
    measured (their FLOPs, utilisation and range), or your gpu_hours used instead of the job; the
    reference GPU the planner took where the file names none; and how a device named by a name
    several devices go by was read ('A100': a100-40gb)."""
    out = [f"{path}: {note}" for path, note in s.read_as]  # what the hours are hours on comes first
    if s.reference_gpu_is_default:
        out.append(f"workload.reference_gpu not given: the jobs' hours are estimated on {s.workload.reference_gpu}, "
                   "the card the utilisation of data-centre GPUs was measured on, and every other device's follow from "
                   "the speed model (name the card you will time runs on to read the hours in its terms)")
    for ph in s.phases:
        e = ph.job_estimate
        if e is None:
            continue
        low, high = e.hours_range
        data = job.data_words(e.tokens, ph.samples, ph.epochs)
        if ph.hours_from_job:
            out.append(f"{ph.name}: {ph.gpu_hours_per_run:,.1f} h a run on {e.reference_gpu}, estimated from the job, not "
                       f"measured: {data}, {e.flops:.3g} FLOPs at {units.format_share(e.mfu_low)}-"
                       f"{units.format_share(e.mfu_high)} of {'its' if e.measured_on is None else 'a usable'} "
                       f"{e.rate_basis_tflops:,.0f} TFLOPS (typically "
                       f"{units.format_share(e.mfu)}) take {low:,.1f}-{high:,.1f} h; the plan counts on their mean, and the "
                       "uncertainty analysis draws the utilisation over its range (`planner estimate` shows every device)")
            out += [f"{ph.name}: {n}" for n in e.notes[:-1]]
        else:
            out.append(f"{ph.name}: your gpu_hours ({ph.gpu_hours_per_run:,.1f} h a run) are used; the job you describe "
                       f"would take {low:,.1f}-{high:,.1f} h on {e.reference_gpu} by the planner's estimate")
    return out


def _price_source(option: Option) -> str | None:
    """Which catalog layer priced the option (None for a card you own: no price)."""
    return option.price_source if option.kind != "own" else None


def _alternatives(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]],
                  hybrid: Solved) -> tuple[list[Alternative], list[LateStrategy]]:
    """The best feasible plan of each strategy, with its cost and finish; ``hybrid`` is the
    plan itself, already solved. And the strategies that have options of their own but no plan
    meeting every deadline: (strategy, the options its best plan uses, reference GPU-hours it
    leaves undone, the cash its best plan meeting every deadline needs where only the budget
    stops it, else None, and what it emits where only the cap on emissions stops it, else None),
    so the answer can say free tiers alone fall short rather than leave them out, and that
    buying would do, past the budget, or renting, past the cap. A strategy with no option of its
    own (buy-only where no card is owned or considered) is neither listed nor solved: its program
    would leave every hour undone, a build and a solve of about 4 ms a plan for nothing."""
    out, late = [], []
    kinds_quoted = set(quotes["kind"].tolist())
    for name, kinds in STRATEGIES.items():
        if name != "hybrid" and not kinds & kinds_quoted and any(ph.gpu_hours > 0 for ph in s.phases):
            continue
        solved = hybrid if name == "hybrid" else _solve(s, quotes, opts, kinds, cards)
        if solved.unmet:
            if kinds & kinds_quoted and name != "hybrid":
                # its program with one limit lifted (as _candidates does), not built again
                unbounded = (_solved(s, milp.without_budget(solved.program), cards)
                             if s.you.budget_usd is not None else None)
                past_cap = (_solved(s, milp.without_cap(solved.program), cards)
                            if s.you.max_co2_kg is not None else None)
                late.append((name, solved.options_used,
                             float(sum(solved.unmet.values())),
                             unbounded.cash_usd if unbounded is not None and not unbounded.unmet else None,
                             past_cap.co2_kg if past_cap is not None and not past_cap.unmet else None))
            continue
        out.append(_alternative(name, solved, paths=True))
    return out, late


def _alternative(name: str, solved: Solved, paths: bool) -> Alternative:
    """A solved plan as one strategy's or candidate's row; ``paths`` adds what re-pricing it in
    the uncertainty analysis and its money-over-time curve need (the strategies' rows)."""
    return Alternative(
        name, solved.total_usd, solved.last_finish, solved.options_used,
        solved.cumulative() if paths else (), solved.hours_placed(),
        tuple(solved.bought), solved.host_bought, tuple(sorted(solved.finishes.items())),
        price_factors=tuple((p, o, f) for (p, o), f in sorted(solved.price_factors.items()) if f != 1.0)
        if paths else (),
        price_years=tuple((p, o, y) for (p, o), y in sorted(solved.price_years.items())) if paths else (),
        bought_costs=tuple((b, v.day, v.price_usd, v.resale_usd) for b, v in sorted(solved.bought_on.items())),
        commitments=tuple((z.option, z.day, k, z.usd * k) for z, k in solved.committed),
        credits=solved.credit_reach if paths else (),
        finish_models=tuple(sorted(solved.finish_models.items())), co2_kg=solved.co2_kg,
        bought_kg=tuple((b, v.made_kg) for b, v in sorted(solved.bought_on.items())))


def _candidates(s: Scenario, all_quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]],
                rents_dominated: dict[str, str]) -> list[Alternative]:
    """The best plan with each card you consider bought (and no other), and with none: the lab's
    question, "this box, that box, or rent?", answered side by side. A card another dominates
    still gets its row (it is what the lab asks about); rent offers are pruned as for the plan.
    Only plans that meet every deadline are listed; a card whose plan does only past the budget
    is listed with the cash that plan needs (``needs_budget_usd``), one whose plan does only past
    the cap on emissions with what that plan emits (``needs_co2_kg``)."""
    quotes = prune(all_quotes, rents_dominated)
    buys = sorted(set(quotes["option"][quotes["kind"] == "buy"].tolist()) & set(cards))
    out = []
    plans: dict[str, np.ndarray] = {}  # each row's solution, where a price search starts
    built: milp.Program | None = None  # one program; each candidate changes only which card is bought
    nothing: np.ndarray | None = None  # its plan that buys nothing: each card's search starts from it, the card unused
    for candidate in [None, *buys]:
        forced = {b: int(b == candidate) for b in buys}
        built = (_build(s, quotes, opts, STRATEGIES["hybrid"], cards, forced=forced) if built is None
                 else milp.with_forced(built, forced))
        name = f"buy {candidate}" if candidate else "buy nothing"
        start = None if nothing is None or candidate is None else milp.bought_unused(built, nothing, candidate)
        try:
            solved: Solved | None = _solved(s, built, cards, start)
        except SolverError:  # the card alone is past the budget, or its making past the cap on emissions
            solved = None
        if candidate is None and solved is not None:
            nothing = solved.sol.x
        if solved is not None and not solved.unmet:
            out.append(_alternative(name, solved, paths=False))
            plans[name] = solved.sol.x
            continue
        # in time only past one limit: listed with what it would need (the cash, or the emissions)
        for limit, lifted in (("budget", milp.without_budget), ("co2", milp.without_cap)):
            if (s.you.budget_usd if limit == "budget" else s.you.max_co2_kg) is None:
                continue
            try:
                past = _solved(s, lifted(built), cards, start)
            except SolverError:  # its making alone is past the cap on emissions (you.max_co2)
                continue
            if not past.unmet:
                row = _alternative(name, past, paths=False)
                out.append(dataclasses.replace(row, needs_budget_usd=past.cash_usd) if limit == "budget"
                           else dataclasses.replace(row, needs_co2_kg=past.co2_kg))
                break
    return _wins_below(s, quotes, opts, out, buys, plans)


def _wins_below(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, rows: list[Alternative],
                buys: list[str], plans: Mapping[str, np.ndarray] | None = None) -> list[Alternative]:
    """What would it take: the catalog price below which each candidate card's plan is the
    cheapest of all. Its plan does not depend on its price (the card is bought whatever it
    costs), only its cost does, by the price on the day it is bought (the catalog price times
    its path factor, ``buy_price_trend``) less the resale that moves with it (a share of the
    price, by the offer's figure or the default model; a resale given in money does not move):
    so the flip is the catalog price less the gap to the best candidate over that slope. None
    where even a free card loses, or only ties (a card its plan leaves idle). Where the plan
    chooses when to buy (``buy_later``) the plan does depend on the price: :func:`_price_to_win`
    searches it."""
    within = [r.total_cost_usd for r in rows if not r.past_a_limit]
    if not within:
        return rows
    best = min(within)
    out = []
    for r in rows:
        if len(r.bought_costs) != 1 or r.past_a_limit:
            out.append(r)  # no price makes it fit the budget or the cap
            continue
        listed, slope = _price_line(r, opts)
        flip = listed - (r.total_cost_usd - best) / slope if slope > 0 else None
        if s.buy_every_weeks and r.total_cost_usd > best:
            flip = _price_to_win(s, quotes, opts, r, best, buys, (plans or {}).get(r.strategy))
        # a price that rounds to no money is none: a card its plan leaves idle costs its price less
        # the resale share, a line through 0 at 0, so its flip is 0 give or take 1e-13 USD, and
        # was written '0.00' (cheapest under a price no seller asks) or 'never' at random
        out.append(dataclasses.replace(r, wins_below_usd=flip if flip is not None and flip > 0.005 else None))
    return out


def _price_line(r: Alternative, opts: pd.DataFrame) -> tuple[float, float]:
    """(The catalog price of the one card candidate ``r`` buys, what its plan's cost moves by per
    unit of it) [USD]: the price on the day it is bought is the catalog price times its path
    factor, less the resale that moves with it (a share; a resale given in money stays)."""
    card, _, price, resale = r.bought_costs[0]
    buy = opts[opts["kind"].eq("buy")].set_index("option")
    listed = float_or(buy.loc[card, "purchase_usd"])
    factor = price / listed if listed > 0 else 1.0
    fixed_resale = opt_float(buy.loc[card, "resale_usd"]) is not None
    return listed, factor * (1.0 if fixed_resale or price <= 0 else 1.0 - resale / price)


#: Plans a candidate's price search may make where the plan chooses when to buy (``buy_later``).
WIN_PRICE_SOLVES = 8


def _price_to_win(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, r: Alternative, best: float,
                  buys: list[str], start: np.ndarray | None = None) -> float | None:
    """:func:`_wins_below` where the plan chooses when to buy (``buy_later``): there a
    candidate's plan depends on its price, a dear card bought late (less of it lost), a cheap
    one early (it runs more), so the line of the plan at the catalog price says "never" for a
    card a lower price would have bought months sooner (a 5090 bought two weeks before the
    horizon's end: never; re-planned at 500 EUR, bought in March and the cheapest plan).

    The candidate's cost is the least over its plans of lines in the price: concave. Newton's
    method on plans made with the card at a price (each solved like the candidate's own) finds
    where it meets ``best``, the best candidate's cost: a concave cost lies below each line, so
    every price a step reaches has the card's plan no dearer than the best, and from there the
    prices rise to the flip, a plan's line a step (Newton-Raphson on a concave function; a
    piecewise linear one ends in as many steps as it has pieces). None where even an almost
    free card (1 % of its price) loses. ``buys``: every card the candidates choose among (the
    others not bought); ``start``: the candidate's own plan.

    Each search starts from the plan of the step before (the candidate's own, first), a plan of
    the program at a lower price too, and the best there or near it: over the whole 3-year plan
    of a student who may buy a card later (buy_later) the four searches took 2.2-7.3 s cold
    (branch and bound: when to buy) and 1.3-1.8 s from it, the same prices."""
    card = r.bought_costs[0][0]
    at, found, moved = r, None, opts
    floor = 0.01 * _price_line(r, opts)[0]  # almost free (a free card has no resale share to move)
    for _ in range(WIN_PRICE_SOLVES):
        listed, slope = _price_line(at, moved)
        price = max(listed - (at.total_cost_usd - best) / slope, floor) if slope > 0 else floor
        moved = opts.copy()
        moved.loc[moved["option"].eq(card), "purchase_usd"] = price
        costs = card_costs(s, moved)
        try:
            solved = _solved(s, _build(s, quotes, moved, STRATEGIES["hybrid"], costs,
                                       forced={b: int(b == card) for b in buys}), costs, start)
        except SolverError:
            break
        start = solved.sol.x
        if solved.unmet or solved.total_usd > best + 1e-6:  # even an almost free card loses
            break
        at, found = _alternative(r.strategy, solved, paths=False), price
        if best - at.total_cost_usd < 0.005 or len(at.bought_costs) != 1:
            break
    return found


def _pareto(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]]) -> list[ParetoPoint]:
    """Cost against the last phase's finish: re-solve with that phase's deadline moved earlier
    week by week, keeping the plans no other plan beats on both."""
    last = max(s.phases, key=lambda ph: (ph.deadline or s.horizon_end, ph.start))
    end = last.deadline or s.horizon_end
    points = []
    day = end
    while day > last.start:
        solved = _solve(s, quotes, opts, STRATEGIES["hybrid"], cards, {last.name: day})
        if solved.unmet:
            break
        finish = solved.finishes[last.name]
        points.append(ParetoPoint(last.name, finish, solved.total_usd))
        day = min(finish, day) - dt.timedelta(days=7)
    points.sort(key=lambda p: (p.finish, p.total_cost_usd))
    front, cheapest = [], math.inf
    for p in points:  # earliest first: keep each one cheaper than every earlier one
        if p.total_cost_usd < cheapest - 1e-6:
            front.append(p)
            cheapest = p.total_cost_usd
    return front


def _earliest_deadline(s: Scenario, quotes: QuoteTable, opts: pd.DataFrame, cards: dict[str, tuple[float, float]],
                       ph: Phase) -> dt.date | None:
    """The earliest deadline of ``ph`` at which the plan does all its work (the other phases as
    they are, within the budget), planned again: a week later, then doubling, then halving to the
    day; None when not even the horizon's end would do."""
    def done(day: dt.date) -> bool:  # whether the work can be done, not at what cost (milp.work_left)
        program = milp.work_left(_build(s, quotes, opts, STRATEGIES["hybrid"], cards, {ph.name: day}), ph.name)
        return ph.name not in milp.unmet(program, _solved(s, program, cards).sol)

    end, last = s.last_day(ph), s.horizon_end - dt.timedelta(days=1)
    if end >= last or not done(last):
        return None
    low, step = end, 7  # low: not enough; high: enough
    high = min(end + dt.timedelta(days=step), last)
    while not done(high):
        low, step = high, step * 2
        high = min(end + dt.timedelta(days=step), last)
    while (high - low).days > 1:
        mid = low + (high - low) / 2
        mid = dt.date.fromordinal(mid.toordinal())
        if done(mid):
            high = mid
        else:
            low = mid
    return high


def _infeasible_text(s: Scenario, ph: Phase, quotes: pd.DataFrame, unmet_h: float, over_budget: OverBudget | None,
                     later: dt.date | None = None, over_cap: str | None = None, searched: bool = True,
                     held: tuple[float, float] | None = None) -> str:
    """What cannot be met and what would fix it: the budget it needs, or the fastest option and
    ``later``, the earliest deadline at which the plan does it (:func:`_earliest_deadline`).
    Not ``searched`` (a what-if's plan): what cannot be met, and that its fix was not looked for.
    ``held``: (hours the budget holds back, hours undone without it) where no budget meets every
    deadline but the budget leaves undone work a plan without it does (:func:`_held_by_budget`)."""
    end = s.last_day(ph)
    undone = units.format_hours(unmet_h)  # a share of an hour is one (0.3), never "0 of 60 h stay undone"
    if not searched:
        return (f"'{ph.name}' cannot be finished by {end}: {undone} of {units.format_hours(ph.gpu_hours)} reference "
                "GPU-h stay undone (a what-if's plan: what would fix it is not searched for; planner run says)")
    if held is not None and held[1] <= 0.05:  # all of it done without the budget: the budget is the cause
        return (f"'{ph.name}' cannot be finished by {end} within the budget of {s.money(s.you.budget_usd or 0.0)}: "
                f"{undone} of {units.format_hours(ph.gpu_hours)} reference GPU-h stay undone. Without the budget the "
                "plan does all of it; but no budget meets every deadline (what the other phases say), and the plan "
                "spends the budget on the hours of every phase alike. A larger budget, or less work or later "
                "deadlines for the phases no budget finishes, would fix it.")
    if over_budget:
        return (f"'{ph.name}' cannot be finished by {end} within the budget of {s.money(s.you.budget_usd or 0.0)}: "
                f"{undone} of {units.format_hours(ph.gpu_hours)} reference GPU-h stay undone; {over_budget.spends}: "
                f"{over_budget.fix(ph, later)}.")
    if over_cap:
        return (f"'{ph.name}' cannot be finished by {end}: {undone} of {units.format_hours(ph.gpu_hours)} reference GPU-h "
                f"stay undone; {over_cap}.")
    mine = quotes[(quotes["phase"] == ph.name).to_numpy()]
    q = mine[mine["usable"].to_numpy(dtype=bool) & mine["finish"].notna().to_numpy()]
    if q.empty:  # no later deadline would do: say what stops each option
        why: dict[str, list[str]] = {}
        for option, reason in zip(mine["option"], mine["reason"]):
            why.setdefault(str(reason) if isinstance(reason, str) else "it cannot run", []).append(f"`{option}`")
        reasons = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in why.items())
        return (f"no option considered can run '{ph.name}' at all" + (f" ({reasons})" if reasons else "")
                + ". No later deadline would fix it: what each reason names would (a smaller dataset_size or "
                "checkpoint, a smaller batch), or other options (widen 'consider'; planner pricing list shows the "
                "catalog).")
    fastest = q.sort_values(["finish", "cost_usd"]).iloc[0]
    cost = (f", costing {s.money(fastest['cost_usd'])}" if math.isfinite(fastest["cost_usd"]) else "")
    # less work, as the phase gives it: its job's data where its hours come from it
    less = (f"fewer {'tokens' if ph.tokens is not None else 'samples'} or epochs" if ph.hours_from_job
            else "fewer GPU-hours")
    # where interruptions make wall hours uncertain, the capacity was planned at the confidence: say so
    conf = units.format_share(s.you.confidence)
    uncertain = bool((q["wall_hours_conf"].to_numpy(dtype=float) > q["wall_hours"].to_numpy(dtype=float) + 1e-9).any())
    alone = fastest["finish"]
    own_end = s.card_window(ph)[1] - dt.timedelta(days=1) if fastest["kind"] == "buy" else end
    sold = own_end < end  # a card bought is sold at the horizon's end, before the phase's last day
    shared = isinstance(alone, dt.date) and alone <= own_end  # alone in time: the other phases share what it needs
    fix = ("A 'horizon' that runs past " + str(alone) + " (the card is kept until then), an earlier 'from'"
           if sold and not shared
           else f"A deadline on or after {later}" if later is not None
           else f"A deadline on or after {alone}" if not shared else "A later deadline for it or for the phases it shares with")
    return (f"no plan finishes '{ph.name}' ({units.format_hours(ph.gpu_hours)} reference GPU-h) by {end}"
            + (f" at {conf} confidence" if uncertain else "") + f": {undone} h stay undone. "
            + (f"The fastest option, {fastest['option']}, would finish it alone by {alone}{cost}, but the other "
               "phases need it too" if shared else
               f"The fastest option, {fastest['option']}, finishes {alone}{cost}"
               + (f", after the horizon's end ({s.horizon_end}), when a card bought for the plan is sold"
                  if sold else "")) + f". {fix}"
            + (f", {less} or a lower you.confidence (now {conf})" if uncertain else f" or {less}")
            + (f" would fix it, with a larger budget: the budget ({s.money(s.you.budget_usd or 0.0)}) holds back "
               f"{units.format_hours(held[0])} h of it (without it, {units.format_hours(held[1])} h would stay undone)."
               if held is not None else " would fix it.") + _room_would(s, mine, end))


def _room_would(s: Scenario, quotes: pd.DataFrame, end: dt.date) -> str:
    """' So would room for the data: ...' where options left out for want of disk (a free tier's
    70 GB against a 120 GB dataset) would finish the phase alone by its last day ``end``: the
    cheapest of them, and how many more (empty when none would)."""
    blocked = quotes[~quotes["usable"].to_numpy(dtype=bool) & quotes["finish"].notna().to_numpy()]
    blocked = blocked[np.array([f <= end for f in blocked["finish"]], dtype=bool)].sort_values(
        ["cost_usd", "finish", "option"])
    if blocked.empty:
        return ""
    first = blocked.iloc[0]
    more = f" (and {len(blocked) - 1} more options)" if len(blocked) > 1 else ""
    return (f" So would room for the data: {first['option']} would finish it alone by {first['finish']}, costing "
            f"{s.money(first['cost_usd'])}{more}, but {first['reason']}; a smaller dataset_size or checkpoint "
            "would let it.")


def _assumed_defaults(s: Scenario, base_catalog: pricing.Catalog) -> list[str]:
    """'uni-cluster: billing_s = 60, ...' for each scenario offer that omitted documented fields."""
    out = []
    for table, rows in s.catalog_entries.items():
        for row in rows:
            taken = base_catalog.defaults_for(table, row)
            if taken:  # what an account needs is said in full up front (_assumed_figures), named here
                out.append(f"{row['id']} ({table}): catalog defaults "
                           + ", ".join("sign_up = its provider's (said up front where the plan rents it)" if k == "sign_up"
                                       else f"{k} = {_show(v)}" for k, v in taken.items()))
    return out


def _show(v: Any) -> str:
    if isinstance(v, tuple):
        return ";".join(v)
    if isinstance(v, bool):
        return str(v).lower()
    return f"{v:g}" if isinstance(v, float) else str(v)


class Spread(NamedTuple):
    """One assignment's spread over the session model's Monte Carlo, and its checkpoint advice."""

    recommended_min: float | None  # the recommended checkpoint interval (None: no advice)
    saved_h: float  # wall hours the recommended interval saves
    wall_p50: float
    wall_p90: float
    lost_p10: float | None
    lost_p90: float | None
    cost_p50: float
    cost_p90: float


def _spread(s: Scenario, ph: Phase, r: Option, c: Quote, share: float, trials: int, seed: int) -> Spread:
    """Monte Carlo spread of one assignment (``share`` of the phase) and its recommended checkpoint
    interval; with no ``trials``, neither (the expected figures alone: what-if tables)."""
    finite = math.isfinite(c.wall_hours)
    lost = c.lost_hours * share if finite else None
    wall, cost = c.wall_hours * share, c.cost_usd * share
    if trials <= 0 or not finite:
        return Spread(None, 0.0, wall, wall, lost, lost, cost, cost)
    ckpt_gb = checkpoint_gb_of(s, ph)
    full = process_for(ph, r, s, ckpt_gb)
    # the runs this option does: all of them with the whole phase, else the share's worth of whole
    # runs (at least one), each its part of the work: 0.8 of 4 runs' work is one run of 0.8 of a
    # run's work and one setup, not four runs of a fifth each and four setups (which put the P50 of
    # a 1.5 h assignment at 2.0 h). Runs its machine carries side by side go in rounds (quotes.machine_runs)
    rounds = machine_runs(r, ph, s.workload.sharding).rounds
    runs = rounds if share >= 1.0 else max(1, round(share * rounds))
    proc = dataclasses.replace(full, work_h=full.work_h * share * rounds / runs)
    rec_h = sessions.recommended_interval(proc)
    recommended = rec_h * 60 if math.isfinite(rec_h) else None
    saved_h = 0.0
    if math.isfinite(rec_h):
        e_user = sessions.expected(proc)
        e_rec = sessions.expected(dataclasses.replace(proc, checkpoint_every_h=rec_h))
        saved_h = max(0.0, (e_user.wall_h - e_rec.wall_h) * runs)
    if proc.interruptions_per_h == 0.0:  # deterministic: no spread to sample
        return Spread(recommended, saved_h, wall, wall, lost, lost, cost, cost)
    rented = r.kind == "rent"
    sm = sessions.simulate(proc, trials, seed, runs=runs, startup_h=float_or(r.startup_min) / 60.0 if rented else 0.0,
                           billing_h=(opt_float(r.billing_s) or 0.0) / 3600.0 or None)
    # the one pricing formula at the sampled hours (storage for as long as the run takes)
    ratio = sm.wall_h / max(c.wall_hours * share, 1e-12)
    restarts = sm.sessions if r.needs_person else 0.0 * sm.sessions
    costs = sum(money_by_part(s, ph, r, sm.wall_h, sm.billed_h, restarts, (c.storage_months or 0.0) * ratio,
                              share=share).values())
    return Spread(recommended, saved_h,
                  float(np.quantile(sm.wall_h, 0.5)), float(np.quantile(sm.wall_h, 0.9)),
                  float(np.quantile(sm.lost_h, 0.1)), float(np.quantile(sm.lost_h, 0.9)),
                  float(np.quantile(costs, 0.5)), float(np.quantile(costs, 0.9)))


def _wall_sd(s: Scenario, c: Quote, share: float, shift_h: float = 0.0) -> float:
    """The standard deviation of the wall hours of ``share`` of a phase on quote ``c``: the
    program's own model (the quote's normal approximation, sessions.wall_sd_h, read back from
    the wall hours at the confidence, less ``shift_h``, the mean a default rate's range adds, and
    scaled to the share as the program scales it), so that the chance stated agrees with the
    capacity planned. Infinite for an option that cannot run."""
    wall, conf = c.wall_hours * share, c.wall_hours_conf * share - shift_h
    if not math.isfinite(wall) or not math.isfinite(conf):
        return math.inf
    z = units.z_at(s.phase_confidence)
    return (conf - wall) / z if z > 0 else 0.0


def _work_rel_sd(s: Scenario, ph: Phase) -> float:
    """The relative standard deviation of a phase's work itself, which moves every option's share
    alike: the utilisation's range where the hours come from the job, your range of the hours
    (the uncertainty analysis draws each once per phase)."""
    return workload.work_spread(0.0, s.ranges.get(f"phases.{ph.name}.gpu_hours"), ph.job_hours_rel_sd(s.phase_confidence))


def _shared_parts(s: Scenario, c: Quote, o: Option, wall_h: float, work_rel_sd: float, step: workload.Step | None
                  ) -> dict[str, float]:
    """The parts of the standard deviation of ``wall_h`` wall hours on quote ``c`` (option ``o``)
    that one draw of the uncertainty analysis moves on other options too, by what is drawn,
    signed by the way each moves these hours: the phase's work (``work_rel_sd``, every option
    alike), the device's speed (one draw a device: a card rented and your own of the same
    model), the FP8 gain and a step's fixed time (quotes.shared_rel_sd)."""
    speed_rel_sd = workload.speed_rel_sd_at(workload.speed_sigma(s.workload.family, s.workload.precision,
                                                                 str(c.speed_source)), s.phase_confidence)
    speed_rel_sd *= speed_share_at_step(s, o, step)
    fp8, fixed = shared_rel_sd(s, o, step)
    parts = {"work": work_rel_sd, f"speed {c.device}": speed_rel_sd, "fp8": fp8, "step": fixed or 0.0}
    return {k: wall_h * v for k, v in parts.items() if v}


#: At most so many rounds settle a stated chance whose skewed parts are booked at it (_on_time).
ITERATIONS_OF_A_CHANCE = 50


def _on_time(spread_h: list[float], headroom_h: float, shared_h: Sequence[Mapping[str, float]] | None = None,
             at_chance: Callable[[str, float], float] | None = None) -> float:
    """The chance that a run's overrun, the sum of the options' normal overruns of standard
    deviations ``spread_h``, stays within ``headroom_h`` wall hours. ``shared_h``: per option, the
    parts of its standard deviation that one draw moves on other options too (signed, by what is
    drawn: :func:`_shared_parts`), which add up over the options before they are squared; the
    rest of each is independent. (Summed as independent, a split phase's chance stood at 96 %
    where the uncertainty analysis found 90 %, and 99 % where it found 95 % with two RTX 4090s,
    rented and your own, one draw of their speed.) ``at_chance(part, p)``: a shared part's size
    booked at chance p over its size as given (1 / speed, a log-normal: workload.speed_rel_sd_at);
    with it, the chance is the one whose quantile of the overrun is ``headroom_h``, each such part
    booked at that chance (exactly the log-normal's own chance with one such part alone)."""
    from statistics import NormalDist

    if any(math.isinf(sd) for sd in spread_h):
        return 0.0

    def sd_at(p: float | None) -> float:  # the run's overrun's sd, skewed parts booked at chance p
        var, totals = 0.0, dict[str, float]()
        for x, parts in zip(spread_h, shared_h or [{}] * len(spread_h)):
            held = sum(v * v for v in parts.values())
            scale = min(1.0, x / math.sqrt(held)) if held > 0 else 1.0  # never more of it shared than there is
            var += max(x * x - held * scale * scale, 0.0)
            for k, v in parts.items():
                totals[k] = totals.get(k, 0.0) + v * scale * (at_chance(k, p) if at_chance and p is not None else 1.0)
        return math.sqrt(var + sum(v * v for v in totals.values()))

    sd = sd_at(None)
    if sd <= 0:
        return float(headroom_h >= -1e-9)
    chance = float(NormalDist(0.0, sd).cdf(headroom_h))
    if at_chance is None:
        return chance
    # a skewed part (1 / speed) is booked at the chance itself: the chance whose quantile of the
    # overrun is the headroom (increasing in the chance, so the iteration settles from either side)
    for _ in range(ITERATIONS_OF_A_CHANCE):
        sd = sd_at(chance)
        settled = float(NormalDist(0.0, sd).cdf(headroom_h)) if sd > 0 else float(headroom_h >= -1e-9)
        if abs(settled - chance) < 1e-6:
            return settled
        chance = settled
    return chance


def _excluded(s: Scenario, feas: pd.DataFrame, quotes: list[Quote], sched: milp.Schedule, used: set[str],
              dominated: dict[str, str], per_phase: bool = True,
              cards: dict[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """Why each option is not in the plan: cannot run, too slow for a phase, or dearer (the last
    two phase by phase, unless not ``per_phase``). A card to buy is priced for a phase on its
    own with its purchase less its resale (``cards``), as the plan would pay it."""
    if not per_phase:
        return _cannot_run(feas)
    rows = _cannot_run_rows(feas)
    cost = {(q.phase, q.option): q.cost_usd for q in quotes}
    hours = {ph.name: ph.gpu_hours for ph in s.phases}
    placed = sched.frame.groupby(["phase", "option"])["gpu_hours"].sum()
    plan_cost: dict[str, float] = {}
    for (p, o), h in zip(placed.index, placed):
        plan_cost[str(p)] = plan_cost.get(str(p), 0.0) + cost[(str(p), str(o))] * float(h) / hours[str(p)]
    for q in quotes:
        if q.option in used:
            continue
        if not q.ok:
            rows.append(dict(option=q.option, phase=q.phase, reason=q.reason))
        elif q.option in dominated and q.kind == "buy":
            rows.append(dict(option=q.option, phase=q.phase,
                             reason=f"never better than buying {dominated[q.option]}: no cheaper net of resale or up "
                                    "front, no faster and no cheaper to run"
                                    f"{', and emitting no less, made and run,' if s.you.max_co2_kg is not None else ''} "
                                    "in any phase"))
        elif q.option in dominated:
            rows.append(dict(option=q.option, phase=q.phase,
                             reason=f"never better than renting {dominated[q.option]}: no cheaper and no faster"
                                    f"{', emitting no less,' if s.you.max_co2_kg is not None else ''} in "
                                    f"any phase ({s.money(q.cost_usd)} for this phase)"))
        elif q.phase in plan_cost:
            price, resale = (cards or {}).get(q.option, (0.0, 0.0)) if q.kind == "buy" else (0.0, 0.0)
            alone = q.cost_usd + price - resale
            what = (f" (the card at {s.money(price)} less {s.money(resale)} resale, and running it)"
                    if q.kind == "buy" and price else "")
            more = alone - plan_cost[q.phase]
            reason = (f"dearer: {s.money(alone)} for the phase on its own{what}, {s.money(more)} more than the "
                      "plan's choice" if more >= 0 else
                      f"not chosen although {s.money(-more)} cheaper for this phase on its own "
                      f"({s.money(alone)}{what}): the whole plan costs less without it (capacity, purchases or "
                      "your time shared with other phases)")
            rows.append(dict(option=q.option, phase=q.phase, reason=reason))
    return pd.DataFrame(rows, columns=["option", "phase", "reason"])


def _cannot_run_rows(feas: pd.DataFrame) -> list[dict[str, Any]]:
    """The options that cannot run (``feas``: :func:`quotes.exclusions`) and why, with no phase:
    the first rows of :func:`_excluded`."""
    return [dict(option=o, phase=None, reason=why) for o, why in zip(feas["option"], feas["reason"])
            if isinstance(why, str)]


@per_table
def _cannot_run(feas: pd.DataFrame) -> pd.DataFrame:
    """:func:`_cannot_run_rows` as the table a what-if's plan gives, once per exclusions table
    (read-only)."""
    return pd.DataFrame(_cannot_run_rows(feas), columns=["option", "phase", "reason"])


_REFERENCE = Kept()  # the workload on its reference GPU, per device table and workload


#: Prices older than this on the day a plan is made are said up front: the catalog's own date
#: (a release's newest price) and a refreshed layer's (gpuhunt moves daily) [days].
CATALOG_STALE_DAYS = 120
REFRESH_STALE_DAYS = 30


def _stale_prices(s: Scenario, catalog: pricing.Catalog) -> list[str]:
    """Warnings for prices old on the day the plan is made (``s.read_on``, the --today of the
    command): the catalog's date, and a refreshed layer's, each with what would bring them up to
    date."""
    if s.read_on is None:
        return []
    out = []
    age = (s.read_on - catalog.as_of()).days
    if age > CATALOG_STALE_DAYS:
        out.append(f"the catalog's newest prices are from {catalog.as_of()}, {age} days before today ({s.read_on}): "
                   "'planner pricing refresh' fetches current rent prices, or a newer planner release updates "
                   "the catalog")
    for name, as_of, _ in catalog.layers:
        if name.startswith("refreshed") and isinstance(as_of, dt.date) and (s.read_on - as_of).days > REFRESH_STALE_DAYS:
            out.append(f"the refreshed rent prices are from {as_of}, {(s.read_on - as_of).days} days before today: "
                       "'planner pricing refresh' fetches them again")
    return out


def _past_days(s: Scenario) -> list[str]:
    """A warning where the plan's days begin before the day it is made (``s.read_on``): deadlines
    already past, which no plan made now can meet (a mistyped year: 2020 for 2027; the answer
    says so first as well), else work placed on days already past (a scenario copied from last
    term). A plan of the past, what the work would have cost, is still made."""
    if s.read_on is None or s.start >= s.read_on:
        return []
    if past := s.past_deadlines:
        return [f"{units.format_and([ph.name for ph in past])}: deadline{'s' if len(past) > 1 else ''} before today "
                f"({s.read_on}): no plan made now can meet {'them' if len(past) > 1 else 'it'}; check the year"]
    return [f"start {s.start} is before today ({s.read_on}): the plan may place work on days already past; set "
            "start to today or later (without it, the plan starts today)"]


def _warnings(s: Scenario, opts: pd.DataFrame, catalog: pricing.Catalog) -> list[str]:
    out = _stale_prices(s, catalog) + _past_days(s)
    if s.electricity_is_default and considers_home(opts):  # else no card draws it
        where = (f"the catalog's price for {s.electricity_region} (you.grid)" if s.electricity_region
                 else "the catalog default")
        out.append(f"no electricity price given: using {where} "
                   f"{s.electricity_usd_per_kwh / s.usd_per_currency:.4f} {s.currency}/kWh"
                   + ("" if s.electricity_region else " (US average residential)") + "; set 'electricity'")
    if s.you.host_machine and s.you.host_price_usd is not None:
        out.append("you.host_price is not used: you.host_machine is true (you have a desktop for the cards); "
                   "set host_machine: false to count a host computer's price")
    w = s.workload
    ref = _REFERENCE.get((catalog.devices,), (w,), lambda: workload.place_reference(w, catalog.devices))
    if ref.need.activations_source == "unknown":
        out.append("activation memory not estimated for this family: VRAM checks count weights, gradients and "
                   "optimizer states only; set workload.activation_memory")
    # hours given on a card that cannot hold the work were not measured on it; hours a job's
    # FLOPs give (tokens or samples) only count in its speed, and cards that hold the work do it
    if ref.fit.verdict == "does-not-fit" and not all(ph.hours_from_job for ph in s.phases):
        out.append(f"the reference GPU {w.reference_gpu} cannot hold this workload as described "
                   f"({ref.fit.reason}), yet the phase hours were measured on it: either the workload "
                   "(params, method, batch, sequence, sharding) or the reference GPU is wrong")
    out += [f"{note} (workload)" for note in ref.need.notes if "trainable" in note]
    past = [ph.name for ph in s.phases if s.card_window(ph) != s.window(ph)]  # a card bought is sold before its end
    if past and (opts["kind"] == "buy").any():
        out.append(f"{units.format_and(past)} may run past the horizon's end ({s.horizon_end}): a card bought for the "
                   "plan is sold then, so work after it runs on rented or free machines or cards you own; a longer "
                   "'horizon' keeps a card")
    return out


