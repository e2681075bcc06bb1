"""The optimiser against an independent program written from the scenario contract, day by day.

The planner cuts time into buckets (weeks, split where a phase window opens or closes or a quota
resets) and prunes options it proves useless. The reference here knows none of that: one
variable per (phase, option, day) for every usable quote, every rule of the contract stated per
day (a run is sequential, a card runs 24 h a day, an account one session at a time, a rent offer
as many instances as it has, starts by hand a day), quotas per quota week, and the budget as cash;
capacity counts the wall hours not exceeded at the scenario's confidence. It reads only the per-option figures of the session
model (wall hours, at the confidence too, money, sessions per reference hour, weekly hours),
which tests/test_sessions.py checks against a simulation. The planner must find the same
optimum: never dearer (a pruned partner, a coarse bucket that forbids a mix) and never cheaper
(a card booked twice in a day).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import planner
from planner.decide import milp, uncertainty
from planner.decide.optimize import card_costs
from planner.decide.options import build_options
from planner.decide.quotes import exclusions, quote
from planner.decide.result import to_dict
from pricing.errors import InputError

from .conftest import examples

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def reference_optimum(s, catalog) -> tuple[float, set[str]] | None:
    """(cost, options used) of the cheapest plan that does every phase by its deadline, found day
    by day; None when no plan does."""
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, milp

    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    q = quote(s, opts, exclusions(s, opts, cat.devices, cat.throughput))
    q = q[q["usable"].astype(bool) & np.isfinite(q["wall_hours"].astype(float))]
    cards = card_costs(s, opts)
    xs = []  # (phase, option, day, row of q)
    for i, r in enumerate(q.itertuples()):
        ph = s.phase(r.phase)
        begin, end = s.window(ph)  # from 00:00 of 'from' to 24:00 of the deadline
        for d in range((begin - s.start).days, (end - s.start).days):
            xs.append((r.phase, r.option, d, i))
    buys = sorted(set(q.loc[q["kind"] == "buy", "option"]))
    # a card may be bought on the first day, and with buy_later on every week start so many weeks
    # apart while a phase is still open; its price then follows buy_price_trend from the first day
    # (a scenario's own rows are undated) and its resale is the same share of that price
    last = max((s.window(ph)[1] - s.start).days for ph in s.phases)
    days = list(range(0, last, 7 * s.buy_every_weeks)) if s.buy_every_weeks else [0]
    steps = [(b, d) for b in buys for d in days]  # one binary per (card, day bought)

    def on_day(b: str, d: int) -> tuple[float, float]:
        price, resale = cards[b]
        factor = (1.0 + s.buy_trend_per_year) ** (d / 365.25)
        return price * factor, resale * factor

    # a commitment (a rent offer with a term of whole weeks) is paid for its term from a week
    # start, used or not, and its hours carry no rent: one integer per (offer, week start)
    offered = set(q["option"])
    terms = {str(o): float(t) for o, t in zip(opts["option"], opts["term_days"]) if t == t and o in offered}
    rate = dict(zip(opts["option"], opts["usd_per_hour"]))
    commits = [(o, d) for o in sorted(terms) for d in range(0, last, 7)]
    nx, nb = len(xs), len(steps) + len(commits)
    n = nx + nb
    rows: list[tuple[dict[int, float], float]] = []  # ({var: coef}, upper); equalities kept apart
    eq: list[tuple[dict[int, float], float]] = []

    def per_ref(i, col):
        return float(q.iloc[i][col]) / s.phase(q.iloc[i]["phase"]).gpu_hours

    def wall(i):  # capacity is planned with the wall hours at the scenario's confidence
        return per_ref(i, "wall_hours_conf")

    c = np.zeros(n)
    ub = np.full(n, np.inf)
    for j, (p, o, _, i) in enumerate(xs):
        c[j] = per_ref(i, "cost_usd") - (per_ref(i, "rent_usd") if o in terms else 0.0)
        supply = q.iloc[i]["supply"]
        parallel = (min(s.phase(p).runs, int(supply) if supply == supply and supply is not None else s.phase(p).runs)
                    if q.iloc[i]["kind"] == "rent" else 1)
        ub[j] = float(q.iloc[i]["open_capacity_h"]) * parallel / 7.0 / wall(i)  # a day's worth of sessions
    for k, (b, d) in enumerate(steps):
        c[nx + k] = on_day(b, d)[0] - on_day(b, d)[1]
        ub[nx + k] = 1
    for k, (o, _) in enumerate(commits):
        c[nx + len(steps) + k] = float(rate[o]) * 24.0 * terms[o]
        ub[nx + len(steps) + k] = sum(ph.runs for ph in s.phases)
    for b in buys:  # bought once at most
        rows.append(({nx + k: 1.0 for k, (o, _) in enumerate(steps) if o == b}, 1.0))
    for ph in s.phases:  # every hour done
        eq.append(({j: 1.0 for j, x in enumerate(xs) if x[0] == ph.name}, ph.gpu_hours))
    for d in sorted({x[2] for x in xs}):
        today = [j for j, x in enumerate(xs) if x[2] == d]
        for ph in s.phases:  # a run never on two machines at once
            mine = {j: wall(xs[j][3]) for j in today if xs[j][0] == ph.name}
            if mine:
                rows.append((mine, ph.runs * 24.0))
        for o in {xs[j][1] for j in today if q.iloc[xs[j][3]]["kind"] in ("own", "buy")}:  # 24 h a day a card
            mine = {j: wall(xs[j][3]) for j in today if xs[j][1] == o}
            if o in buys:  # owned from the day it is bought
                mine.update({nx + k: -24.0 for k, (c_, day) in enumerate(steps) if c_ == o and day <= d})
            rows.append((mine, 0.0 if o in buys else 24.0))
        for o in {xs[j][1] for j in today} & set(terms):  # 24 h a day per instance committed over the day
            mine = {j: wall(xs[j][3]) for j in today if xs[j][1] == o}
            mine.update({nx + len(steps) + k: -24.0 for k, (c_, day) in enumerate(commits)
                         if c_ == o and day <= d < day + terms[o]})
            rows.append((mine, 0.0))
        for o in {xs[j][1] for j in today if q.iloc[xs[j][3]]["kind"] == "rent"} - set(terms):  # instances at once
            mine = [j for j in today if xs[j][1] == o]
            supply = q.iloc[xs[mine[0]][3]]["supply"]
            if supply == supply and supply is not None:
                rows.append(({j: wall(xs[j][3]) for j in mine}, float(supply) * 24.0))
        groups = {q.iloc[xs[j][3]]["quota_group"] for j in today if q.iloc[xs[j][3]]["kind"] == "free"}
        for g in groups:  # an account: one session at a time, each phase's hours at its own sessions' rate
            mine = [j for j in today if q.iloc[xs[j][3]]["kind"] == "free" and q.iloc[xs[j][3]]["quota_group"] == g]
            rate = {j: float(q.iloc[xs[j][3]]["open_capacity_h"]) / 7.0 for j in mine}
            rows.append(({j: wall(xs[j][3]) / rate[j] for j in mine if rate[j] > 0}, 1.0))
        by_hand = {j: per_ref(xs[j][3], "sessions") for j in today if bool(q.iloc[xs[j][3]]["needs_person"])}
        if by_hand:
            rows.append((by_hand, s.you.attention_starts_per_day))
    for g in set(q.loc[q["kind"] == "free", "quota_group"]):  # weekly quotas, from the provider's reset day
        mine = [j for j, x in enumerate(xs) if q.iloc[x[3]]["kind"] == "free" and q.iloc[x[3]]["quota_group"] == g]
        quota = q.iloc[xs[mine[0]][3]]["quota_h_per_week"] if mine else None
        if not mine or quota is None or not math.isfinite(quota):
            continue
        reset = q.iloc[xs[mine[0]][3]]["quota_reset"]
        offset = (WEEKDAYS.index(reset) - s.start.weekday()) % 7 if isinstance(reset, str) else 0
        for week in {(xs[j][2] - offset) // 7 for j in mine}:
            rows.append(({j: wall(xs[j][3]) for j in mine if (xs[j][2] - offset) // 7 == week},
                         float(quota)))
    if s.you.budget_usd is not None:  # cash: purchases at their price
        money = {j: per_ref(i, "cost_usd") - per_ref(i, "your_time_usd") - (per_ref(i, "rent_usd") if o in terms else 0.0)
                 for j, (_, o, _, i) in enumerate(xs)}
        money.update({nx + k: on_day(b, day)[0] for k, (b, day) in enumerate(steps)})
        money.update({nx + len(steps) + k: c[nx + len(steps) + k] for k in range(len(commits))})
        rows.append((money, s.you.budget_usd))
    every = [(r, -np.inf, u) for r, u in rows] + [(r, v, v) for r, v in eq]
    a = sparse.lil_array((len(every), n))
    for i, (coefs, _, _) in enumerate(every):
        for j, v in coefs.items():
            a[i, j] = v
    res = milp(c, constraints=[LinearConstraint(a.tocsr(), [lo for _, lo, _ in every], [u for _, _, u in every])],
               integrality=np.r_[np.zeros(nx), np.ones(nb)], bounds=Bounds(np.zeros(n), ub),
               options={"mip_rel_gap": 1e-9})
    if res.status != 0:
        return None
    used = {xs[j][1] for j in range(nx) if res.x[j] > 1e-6} | {b for k, (b, _) in enumerate(steps) if res.x[nx + k] > 0.5}
    return float(res.fun), used


def planned(s, catalog):
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, alternatives=False, breakevens=False)
    used = {a.option for ph in p.phases for a in ph.assignments} | {b.offer for b in p.purchases}
    return p, used


# --------------------------------------------------------------------------- the cases, by hand

PARTNER = """\
name: a partner too slow to finish alone
start: 2027-01-04
electricity: 0.20 USD/kWh
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  b: {{gpu_hours: 263, from: 2027-01-04, deadline: 2027-01-10, checkpoint_every: 30 min, checkpoint_size: 0.36 GB}}
you: {{host_power: 100 W}}
consider: {{buy: [used-3060], rent: [fast, spot{more}], free: [t4-tier], spot: true}}
catalog:
  buy:
    - {{id: used-3060, device: rtx-3060-12gb, condition: used, price: 250 USD, resale: 50%, power: 170 W}}
  rent:
    - {{id: fast, device: a100-40gb, price: {fast} USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
    - {{id: spot, device: a100-40gb, price: 0.56 USD/h, spot: true, interruptions: 0.5/h, billing: 1 s,
       startup: 0 min, setup: 5 min}}
    - {{id: spot-2, device: a100-40gb, price: 0.60 USD/h, spot: true, interruptions: 0.5/h, billing: 1 s,
       startup: 0 min, setup: 5 min}}
  free:
    - {{id: t4-tier, device: t4, quota: 30 h/week, session_limit: 12 h, setup: 0 min}}
"""


def test_a_partner_too_slow_to_finish_alone_still_does_most_of_the_work(load, catalog):
    # The spot A100, interrupted twice an hour, cannot do 263 h in the 7 days alone; beside the
    # on-demand A100 it does most of them at a fifth of the price. The old pruning kept only
    # offers that finish alone (and the fastest), so it paid the on-demand price for everything.
    s = load(PARTNER.format(fast=2.94, more=""))
    ref_cost, ref_used = reference_optimum(s, catalog)
    p, used = planned(s, catalog)
    q = p.quotes.set_index("option")
    assert not q.at["spot", "ok"] and q.at["spot", "usable"]  # too slow alone, usable as a share
    assert {"fast", "spot"} <= used == ref_used
    assert p.total_usd == pytest.approx(ref_cost, abs=0.01)
    # the spot share fills the run's 7 x 24 h, counting its wall hours at 90 % confidence
    conf = q["wall_hours_conf"] / q["wall_hours"]
    walls = {a.option: a.wall_hours * conf[a.option] for a in p.phases[0].assignments}
    # the A100's speed is measured against the 3090 on other jobs: on this one it is off by a median
    # 6.7 % (mixed-precision CNNs, leave one job out: workload.speed_sigma), a log-normal of sigma
    # 0.067 / 0.6745 about the speed planned; at 90 % every option books the log-normal's own
    # quantile, e^(z(0.9) sigma) = e^(1.2816 x 0.0993) (13.6 % more; the normal's 1 + z sd, 12.8 %,
    # fell short of it); the spot's interruptions spread its wall hours further
    assert conf["fast"] == pytest.approx(math.exp(1.281552 * 0.067 / 0.6745), rel=1e-5)
    assert conf["spot"] > conf["fast"] + 0.001  # in quadrature with the speed's 12 %
    assert sum(walls.values()) == pytest.approx(168.0, abs=1e-3)


def test_one_more_offer_a_dearer_price_and_a_later_deadline_keep_their_order(load, catalog):
    base = planned(load(PARTNER.format(fast=2.94, more="")), catalog)[0].total_usd
    more = planned(load(PARTNER.format(fast=2.94, more=", spot-2")), catalog)[0].total_usd
    dearer = planned(load(PARTNER.format(fast=3.50, more="")), catalog)[0].total_usd
    later = planned(load(PARTNER.format(fast=2.94, more="").replace("2027-01-10", "2027-01-12")), catalog)[0]
    assert more <= base + 0.005 and dearer >= base - 0.005 and later.total_usd <= base + 0.005


CARD_TWICE = """\
name: one card, two phases, the same days
start: 2027-01-04
electricity: 0.20 USD/kWh
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 40, from: 2027-01-04, deadline: 2027-01-05, checkpoint_size: 0.36 GB}}
  b: {{gpu_hours: 60, from: 2027-01-04, deadline: 2027-01-06, checkpoint_size: 0.36 GB}}
  c: {{gpu_hours: 20, from: 2027-01-08, deadline: 2027-01-10, checkpoint_size: 0.36 GB}}
you: {{own: [rtx-3090], host_power: 100 W}}
consider: {{buy: [], rent: [box], free: []}}
catalog:
  rent:
    - {{id: box, device: rtx-3090, price: {price} USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


def test_one_card_never_runs_two_phases_in_the_same_hours(load, catalog):
    # a (40 h in Jan 4-5) and b (60 h in Jan 4-6) need 100 card-hours in 72 h of calendar: the card
    # runs the whole 72 h, the rest is rented. A weekly bucket over the union of the phases' days
    # (Jan 4-6 and 8-10: 6 days, 144 h) let the card do all 100 and skipped the rent.
    s = load(CARD_TWICE.format(price=0.50))
    ref_cost, _ = reference_optimum(s, catalog)
    p, used = planned(s, catalog)
    card_wall = sum(a.wall_hours for ph in p.phases[:2] for a in ph.assignments if a.kind == "own")
    assert "box" in used and card_wall == pytest.approx(72.0, abs=1e-6)
    assert p.total_usd == pytest.approx(ref_cost, abs=0.01)


BUDGET = """\
name: cash, not net of resale
start: 2027-01-04
electricity: 0.20 USD/kWh
horizon: 12 months
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 1000, from: 2027-01-04, deadline: 2027-06-30, checkpoint_size: 0.36 GB}}
you: {{host_power: 0 W, budget: {budget} USD}}
consider: {{buy: [card], rent: [box], free: []}}
catalog:
  buy:
    - {{id: card, device: rtx-3090, condition: used, price: 1000 USD, resale: 800 USD, power: 350 W}}
  rent:
    - {{id: box, device: rtx-3090, price: 0.50 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


def test_the_budget_counts_a_purchase_at_its_price(load, catalog):
    # Buying nets 200 USD plus about 1000 h x 0.35 kW x 0.20 USD/kWh = 70 USD of electricity, against
    # about 500 USD of rent. But the student pays 1,000 USD up front; the 800 come back after the horizon.
    p, used = planned(load(BUDGET.format(budget=5000)), catalog)
    q = p.quotes.set_index("option")["cost_usd"]
    assert used == {"card"} and p.total_usd == pytest.approx(200 + q["card"], abs=0.01)
    assert q["card"] == pytest.approx(70, rel=0.01) and q["box"] == pytest.approx(500, rel=0.01)
    p, used = planned(load(BUDGET.format(budget=600)), catalog)  # 200 net, but 1,000 in cash
    assert used == {"box"} and p.total_usd == pytest.approx(q["box"], abs=0.01) and p.feasible
    cash = 1000 + q["card"]  # the price and the card's electricity
    assert planned(load(BUDGET.format(budget=f"{cash + 0.01:.2f}")), catalog)[1] == {"card"}
    assert planned(load(BUDGET.format(budget=f"{cash - 0.01:.2f}")), catalog)[1] == {"box"}


# --------------------------------------------------------------------------- random small scenarios


@st.composite
def small(draw, commit: bool = False):
    """One to three short phases (windows that open and close inside weeks), a card owned or to
    buy, on-demand and spot offers, and a free tier with a quota that resets on some weekday."""
    start = dt.date(2027, 1, 4) + dt.timedelta(days=draw(st.integers(0, 6)))
    lines = []
    for i in range(draw(st.integers(1, 3))):
        begin = start + dt.timedelta(days=draw(st.integers(0, 10)))
        end = begin + dt.timedelta(days=draw(st.integers(0, 9)))
        hours = draw(st.sampled_from([10, 40, 120, 300]))
        lines.append(f"  p{i}: {{gpu_hours: {hours}, runs: {draw(st.integers(1, 2))}, from: {begin}, deadline: {end}, "
                     "checkpoint_every: 1 h, checkpoint_size: 1 GB, dataset_size: 5 GB}")
    own = draw(st.sampled_from(["[]", "[rtx-3060-12gb]"]))
    reset = draw(st.sampled_from(["", ", quota_reset: saturday", ", quota_reset: wednesday"]))
    budget = draw(st.sampled_from(["", "budget: 400 USD, "]))
    supply = draw(st.sampled_from(["", ", supply: 1"]))
    later = draw(st.sampled_from(["", "buy_later: 1 week\nbuy_price_trend: -60%/year\n", "buy_later: 1 week\n"]))
    reserved = ""
    if commit:  # a block of whole weeks, paid whether used or not
        term, price = draw(st.sampled_from([7, 14])), draw(st.sampled_from([0.2, 0.6]))
        reserved = (f"\n    - {{id: res, device: a100-40gb, price: {price} USD/h, billing: 1 s, setup: 0 min, "
                    f"term: {term} days}}")
    return f"""\
name: generated
start: {start}
{later}horizon: 12 months
electricity: 0.25 USD/kWh
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
{chr(10).join(lines)}
you: {{own: {own}, attention: 3/day, time_value: 5 USD/h, {budget}host_power: 100 W}}
consider: {{buy: [card-x], rent: [fast, slow, spot{", res" if commit else ""}], free: [tier], spot: true}}
catalog:
  buy:
    - {{id: card-x, device: rtx-4090, condition: new, price: {draw(st.sampled_from([300, 1600]))} USD, resale: 50%}}
  rent:
    - {{id: fast, device: a100-40gb, price: {draw(st.sampled_from([1.5, 3.0]))} USD/h, billing: 1 s, setup: 0 min}}
    - {{id: slow, device: t4, price: {draw(st.sampled_from([0.1, 0.3]))} USD/h, billing: 1 s, setup: 0 min}}
    - {{id: spot, device: a100-40gb, price: 0.5 USD/h, spot: true, billing: 1 s, interruptions: 0.5/h{supply}}}{reserved}
  free:
    - {{id: tier, device: t4, quota: {draw(st.sampled_from([10, 30]))} h/week, session_limit: 9 h{reset}}}
"""


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small(commit=True))
def test_the_plan_is_the_day_by_day_optimum(load, catalog, text):
    s = load(text)
    ref = reference_optimum(s, catalog)
    p, _ = planned(s, catalog)
    if ref is None:  # no plan meets every deadline: neither may claim one
        assert not p.feasible
    else:
        assert p.feasible
        assert p.total_usd == pytest.approx(ref[0], rel=1e-6, abs=0.01)


# --------------------------------------------------------------------------- deadlines met with a stated chance

LIKELY = """\
name: a free tier that runs up to the deadline
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: {hours}, from: 2027-01-04, deadline: 2027-01-10, checkpoint_every: 1 h, checkpoint_size: 0.36 GB}}
you: {{confidence: {confidence}}}
consider: {{buy: [], rent: [], free: [tier]}}
catalog:
  free:
    - {{id: tier, device: rtx-3090, session_limit: 24 h, setup: 6 min, needs_person: false, interruptions: 0.25/h}}
"""


def _finish_chance(s, catalog, window_h: float) -> float:
    """The chance, by simulation, that the phase's one run on the tier ends within ``window_h``."""
    from planner.decide.quotes import checkpoint_gb_of, process_for
    from planner.model import sessions

    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    feas = exclusions(s, opts, cat.devices, cat.throughput)
    row = next(opts.merge(feas, on="option").itertuples())
    ph = s.phases[0]
    proc = process_for(ph, row, s, checkpoint_gb_of(s, ph))
    return float(np.mean(sessions.simulate(proc, 20_000, 7).wall_h <= window_h))


def test_a_deadline_is_met_at_the_stated_confidence(load, catalog):
    # 7 days of a tier interrupted every 4 h on average, checkpointed hourly: 142 reference hours take
    # about 166 wall-h on average, within the week's 168 h, but more than 168 h in a third of the
    # futures. Planned on expected hours it was headlined "meets every deadline"; at 90 % it is not
    # planned as met, at 60 % it is, with the chance the simulation gives.
    strict = load(LIKELY.format(hours=142, confidence="90%"))
    loose = load(LIKELY.format(hours=142, confidence="60%"))
    chance = _finish_chance(strict, catalog, 7 * 24)
    assert 0.6 < chance < 0.75
    p90, p60 = planned(strict, catalog)[0], planned(loose, catalog)[0]
    assert not p90.feasible and "at 90 % confidence" in p90.phases[0].shortfall
    assert p60.feasible and p60.phases[0].on_time_chance == pytest.approx(chance, abs=0.05)
    # a plan that meets the deadline at 90 % does so in 90 % of simulated futures or more
    fewer = load(LIKELY.format(hours=134, confidence="90%"))
    p = planned(fewer, catalog)[0]
    assert p.feasible and p.phases[0].on_time_chance >= 0.9
    assert _finish_chance(fewer, catalog, 7 * 24) >= 0.9


SPLIT = """\
name: a range of work split between a card you own and a rented one
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: {hours}, runs: 2, from: 2027-01-04, deadline: 2027-01-10, checkpoint_size: 0.36 GB}}
you: {{own: [rtx-3090], host_power: 100 W}}
consider: {{buy: [], rent: [box], free: []}}
catalog:
  rent:
    - {{id: box, device: a100-80gb, price: 3.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


def test_a_split_phases_stated_chance_is_the_chance_its_own_draws_find(load, catalog):
    # 140-180 reference h a run (your range: one draw moves both shares alike), 2 runs in a week on
    # your RTX 3090 and a rented A100. Summing the two shares' overruns as independent put the chance
    # at 96 % where the uncertainty analysis (the same spreads, drawn) finds 90 %: the work's part
    # of each share's spread adds up before it is squared.
    s = load(SPLIT.format(hours="140..180"))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0)
    assert {a.option for a in p.phases[0].assignments} == {"own:rtx-3090", "box"}
    drawn = float(np.mean(uncertainty.analyse(p, 4000, seed=1).chosen.meets))
    assert p.phases[0].on_time_chance == pytest.approx(drawn, abs=0.025)
    # by hand: sd = sqrt(sum of (sd_i^2 - c_i^2) + (sum of c_i)^2), the common parts c_i added first
    from planner.decide.optimize import _on_time
    def normal(sd):
        return 0.5 + 0.5 * math.erf(6.0 / sd / math.sqrt(2))

    assert _on_time([3.0, 4.0], 6.0, [{"work": 2.0}, {"work": 2.0}]) == pytest.approx(normal(math.sqrt(33.0)))
    assert _on_time([3.0, 4.0], 6.0) == pytest.approx(normal(5.0))
    # a part drawn once for one device adds up over its options, not over another device's; a part
    # that moves two options' hours opposite ways (a step's fixed time: a device faster than the
    # reference and one slower) cancels: 5 + 12 + (2 - 2)^2 = 17
    assert _on_time([3.0, 4.0], 6.0, [{"speed a": 2.0}, {"speed a": 2.0}]) == pytest.approx(normal(math.sqrt(33.0)))
    assert _on_time([3.0, 4.0], 6.0, [{"speed a": 2.0}, {"speed b": 2.0}]) == pytest.approx(normal(5.0))
    assert _on_time([3.0, 4.0], 6.0, [{"step": 2.0}, {"step": -2.0}]) == pytest.approx(normal(math.sqrt(17.0)))


SAME_CARD = """\
name: your RTX 4090 and a rented one, one draw of the card's speed
start: 2027-01-04
workload: {family: transformer, params: 125M, precision: mixed, batch_size: 8, sequence_length: 512, reference_gpu: a100-80gb}
phases:
  a: {gpu_hours: 60, runs: 2, from: 2027-01-04, deadline: 2027-01-09, checkpoint_size: 0.36 GB}
you: {own: [rtx-4090], host_power: 100 W}
consider: {buy: [], rent: [box], free: []}
catalog:
  rent:
    - {id: box, device: rtx-4090, price: 0.70 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}
"""


def test_a_chance_over_two_cards_of_one_model_draws_their_speed_once(load, catalog):
    """Two runs of 60 A100-hours in 6 days, on your RTX 4090 and one on a rented RTX 4090:
    the uncertainty analysis draws the 4090's speed once, so both runs are slow together. Taken
    as independent, the chance stated lay above the one its own draws find: 98 % against 95 %
    here, 99 % against 95 % with a rented and an owned 4090 in a conference rebuttal's plan; with
    the speed's whole spread booked, where the draws take it to this small job's step (whose fixed
    time no speed moves), 92.7 % against 96.0 %. Now 93.7 % against 92.8 %."""
    s = load(SAME_CARD)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0)
    assert {a.option for a in p.phases[0].assignments} == {"own:rtx-4090", "box"}
    drawn = float(np.mean(uncertainty.analyse(p, 4000, seed=1).chosen.meets))
    assert 0.5 < drawn < 0.97  # the deadline is tight enough for the draws to tell
    assert p.phases[0].on_time_chance == pytest.approx(drawn, abs=0.015)


QUOTAS = """\
name: one run across two free tiers whose weekly quotas reset on Saturday
start: 2027-01-04
workload: {family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}
phases:
  a: {gpu_hours: 50..80, from: 2027-01-04, deadline: 2027-01-10, checkpoint_every: 30 min, checkpoint_size: 0.36 GB}
consider: {buy: [], rent: [], free: [one, two]}
catalog:
  free:
    - {id: one, device: rtx-3090, session_limit: 9 h, quota: 30 h/week, quota_reset: saturday, setup: 6 min,
       needs_person: false, interruptions: 0.1/h}
    - {id: two, device: rtx-3090, session_limit: 9 h, quota: 16 h/week, quota_reset: saturday, setup: 6 min,
       needs_person: false, interruptions: 0.1/h}
"""


def test_a_phase_split_in_its_last_bucket_ends_in_time_at_the_confidence_it_was_planned_at(load, catalog):
    # 50-80 reference hours in a week on two tiers whose quotas reset on Saturday: the program books
    # both tiers' wall hours at 90 % side by side in the weekend's bucket. The chance let an overrun
    # run on only at the fastest tier's quota rate (30 h a week) after the expected end, so the plan
    # "met the deadline at 90 %" with a stated chance of 87 % and 82 % of its own draws on time. An
    # overrun the size the program booked ends on the finish it promised (sessions.Finish).
    s = load(QUOTAS)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0)
    ph = p.phases[0]
    assert {a.option for a in ph.assignments} == {"one", "two"} and ph.meets_deadline
    drawn = float(np.mean(uncertainty.analyse(p, 4000, seed=1).chosen.meets))
    assert ph.on_time_chance >= 0.9 and drawn >= 0.9
    assert ph.on_time_chance == pytest.approx(drawn, abs=0.025)


def test_the_chance_over_weeks_counts_the_slack_every_week_keeps(load, catalog):
    # Four weeks of the same tier: 565 h fit at 90 % (570 do not). Each week's bucket keeps the
    # wall hours at 90 %, so an overrun in week one runs on into slack later weeks hold for it; the
    # chance counted only the days after the expected finish and said 65 % where the simulation of
    # the whole run gives 89 %.
    text = LIKELY.format(hours=565, confidence="90%").replace("deadline: 2027-01-10", "deadline: 2027-01-31")
    s = load(text)
    p = planned(s, catalog)[0]
    simulated = _finish_chance(s, catalog, 28 * 24)
    assert 0.85 < simulated < 0.93
    assert p.feasible and p.phases[0].on_time_chance == pytest.approx(simulated, abs=0.03)
    assert not planned(load(text.replace("gpu_hours: 565", "gpu_hours: 570")), catalog)[0].feasible


def _later(text: str, days: int) -> str:
    """Every phase's deadline ``days`` later."""
    import re

    return re.sub(r"deadline: (\d{4}-\d\d-\d\d)",
                  lambda m: f"deadline: {dt.date.fromisoformat(m.group(1)) + dt.timedelta(days=days)}", text)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small(), st.sampled_from(["fast", "slow", "spot"]), st.integers(1, 6))
def test_more_offers_lower_prices_and_later_deadlines_never_cost_more(load, catalog, text, offer, days):
    """Three orders a user relies on, on every generated scenario (none filtered out): an offer
    added, a price lowered or a deadline moved later never makes the plan dearer or infeasible."""
    base = planned(load(text), catalog)[0]
    fewer = planned(load(text.replace("rent: [fast, slow, spot]", "rent: [" + ", ".join(
        o for o in ("fast", "slow", "spot") if o != offer) + "]")), catalog)[0]
    cheaper = planned(load(text.replace("price: 0.5 USD/h", "price: 0.4 USD/h").replace(
        "price: 3.0 USD/h", "price: 2.5 USD/h")), catalog)[0]
    later = planned(load(_later(text, days)), catalog)[0]
    for more, less in ((base, fewer), (cheaper, base), (later, base)):
        assert more.feasible or not less.feasible
        if less.feasible:
            assert more.total_usd <= less.total_usd + 0.005


SUPPLY = """\
name: twenty runs, two cheap instances
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  sweep: {{gpu_hours: 20, runs: 20, from: 2027-01-04, deadline: 2027-01-06, checkpoint_size: 0.36 GB}}
consider: {{buy: [], rent: [floor, list], free: []}}
catalog:
  rent:
    - {{id: floor, device: a100-40gb, price: 0.40 USD/h, billing: 1 s, startup: 0 min, setup: 0 min{supply}}}
    - {{id: list, device: a100-40gb, price: 1.20 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


def test_a_marketplace_offer_rents_no_more_instances_than_it_has(load, catalog):
    # 20 runs of 20 reference h (400 in all, about 218 wall-h on an A100) in 3 days: at the floor price of
    # a marketplace with 2 instances,
    # at most 2 x 72 = 144 wall-h; the rest at the list price. Unlimited, all 200 h at the floor.
    unlimited, _ = planned(load(SUPPLY.format(supply="")), catalog)
    two, _ = planned(load(SUPPLY.format(supply=", supply: 2")), catalog)
    walls = {a.option: a.wall_hours for a in two.phases[0].assignments}
    assert {a.option for a in unlimited.phases[0].assignments} == {"floor"}
    # the 2 x 72 h are booked at 90 %: wall hours x e^(z(0.9) sigma), the log-normal quantile of the
    # A100's speed, measured on other jobs (a median 6.7 % off on a new mixed-precision CNN: sigma
    # 0.067 / 0.6745)
    assert walls["floor"] * math.exp(1.281552 * 0.067 / 0.6745) == pytest.approx(2 * 72, rel=1e-5)
    assert walls["list"] > 0
    assert two.total_usd == pytest.approx(reference_optimum(load(SUPPLY.format(supply=", supply: 2")), catalog)[0],
                                          abs=0.01)


# --------------------------------------------------------------------------- credits and grants

CREDIT = """\
name: a grant
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 100, from: 2027-01-04, deadline: 2027-03-31, checkpoint_size: 0.36 GB}}
you: {{host_power: 0 W{budget}, credits: [{credits}]}}
consider: {{buy: [], rent: ["grant:box", "cash:box"], free: []}}
catalog:
  rent:
    - {{id: "grant:box", device: rtx-3090, price: 1.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
    - {{id: "cash:box", device: rtx-3090, price: 0.60 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


def _credit_plan(load, catalog, credits, budget=""):
    return planned(load(CREDIT.format(credits=credits, budget=budget)), catalog)[0]


def test_a_credit_pays_its_provider_first_and_what_is_left_expires(load, catalog):
    # 100 h of work, about 100 wall-h: 'cash' at 0.60 USD/h costs 60 USD; 'grant' at 1.00 USD/h costs 100,
    # but a 30 USD credit on 'grant' pays for its first 30 h: 30 h free there, 70 h at 0.60 elsewhere = 42 USD
    none = _credit_plan(load, catalog, "")
    q = none.quotes.set_index("option")
    per_h_cash, per_h_grant = q.at["cash:box", "cost_usd"] / 100, q.at["grant:box", "cost_usd"] / 100
    assert none.total_usd == pytest.approx(100 * per_h_cash, abs=0.01)
    p = _credit_plan(load, catalog, "{amount: 30 USD, providers: [grant], name: G}")
    hours = {a.option: a.gpu_hours for a in p.phases[0].assignments}
    assert hours["grant:box"] == pytest.approx(30 / per_h_grant, rel=1e-6)
    assert p.total_usd == pytest.approx((100 - 30 / per_h_grant) * per_h_cash, abs=0.01)
    assert p.credits == (("G", 30.0, pytest.approx(30.0), pytest.approx(0.0)),)
    assert p.cost_usd["credits"] == pytest.approx(-30.0)
    # a credit that expires before the phase starts pays nothing: the plan without it, 25 USD lost
    late = _credit_plan(load, catalog, "{amount: 25 USD, providers: [grant], until: 2027-01-03, name: L}")
    assert late.total_usd == pytest.approx(none.total_usd, abs=0.01)
    assert late.credits[0][2] == pytest.approx(0.0) and late.credits[0][3] == pytest.approx(25.0)
    # granted from 2027-03-01 only: it pays for work done in March, no earlier
    march = _credit_plan(load, catalog, "{amount: 30 USD, providers: [grant], from: 2027-03-01, name: M}")
    weeks = march.schedule[march.schedule["option"] == "grant:box"]["week_start"]
    assert len(weeks) and min(weeks) >= dt.date(2027, 2, 22)  # the week that holds March 1st
    assert march.total_usd == pytest.approx(p.total_usd, abs=0.01)


KEPT = """\
name: a grant that covers either machine
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 100, from: 2027-01-04, deadline: 2027-03-31, checkpoint_size: 0.36 GB}}
you: {{host_power: 0 W, credits: [{{amount: {amount} USD, providers: [grant], name: G}}]}}
consider: {{buy: [], rent: ["grant:*"], free: []}}
catalog:
  rent:
    - {{id: "grant:slow", device: rtx-3090, price: 0.60 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
    - {{id: "grant:fast", device: rtx-4090, price: 3.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


@pytest.mark.parametrize("amount", [1000, 50])
def test_a_plan_the_credits_pay_names_the_plan_of_the_same_cash_that_keeps_more_credit(load, catalog, amount):
    """1,000 USD of credit pays 100 h on either machine: 0 USD of cash both ways. Of plans that
    cost the same the plan takes the fewest wall hours (the RTX 4090, at five times the price),
    and the answer names the one that keeps the most credit: the 3090's, whose bill (about 60 USD)
    the credit pays. A credit of 50 USD pays part of the 3090's bill, the least cash: every plan
    of that cash spends all of it, and there is none to name (a student's 1,000 USD AWS credit
    paid 431 USD for a LoRA on 8 H200s, unsaid, where 147 USD on spot A100s did it for the same
    cash)."""
    p = planned(load(KEPT.format(amount=amount)), catalog)[0]
    q = p.quotes.set_index("option")
    slow, fast = q.at["grant:slow", "cost_usd"], q.at["grant:fast", "cost_usd"]
    assert q.at["grant:fast", "wall_hours"] < q.at["grant:slow", "wall_hours"] and 50 < slow < fast
    if amount == 1000:
        assert p.total_usd == pytest.approx(0.0, abs=0.01)
        assert {a.option for a in p.phases[0].assignments} == {"grant:fast"}
        assert p.credit_kept is not None and p.credit_kept.options == ("grant:slow",)
        assert p.credit_kept.credits_used_usd == pytest.approx(slow, abs=0.01)
        from planner.report import render_text

        said = render_text(p)
        assert (f"A plan of the same cash keeps {fast - slow:,.2f} USD more of your credit: it spends {slow:,.2f} USD "
                "of it, on grant:slow") in said
        assert planner.to_dict(p)["credit_kept"]["options"] == ["grant:slow"]
    else:
        assert {a.option for a in p.phases[0].assignments} == {"grant:slow"}
        assert p.total_usd == pytest.approx(slow - 50, abs=0.01)
        assert p.credit_kept is None and planner.to_dict(p)["credit_kept"] is None


def test_two_credits_never_pay_the_same_bill_twice_and_are_not_cash(load, catalog):
    both = _credit_plan(load, catalog, "{amount: 30 USD, providers: [grant]}, {amount: 500 USD, providers: [grant]}")
    q = both.quotes.set_index("option")
    bill = q.at["grant:box", "cost_usd"]  # all 100 h on 'grant', paid by the credits: 100 USD, not 530
    per_h_cash, per_h_grant = q.at["cash:box", "cost_usd"] / 100, bill / 100
    assert both.total_usd == pytest.approx(0.0, abs=0.01)
    assert sum(c[2] for c in both.credits) == pytest.approx(bill, abs=0.01)
    # a 10 USD budget: the cash plan needs 60 USD, but with a 30 USD credit 70 h of 'cash' and 30 free
    # are 42 USD of cash: still over; with 55 USD of credit, 45 h at 0.60 = 27 USD: over; 100 USD: 0 USD
    assert _credit_plan(load, catalog, "{amount: 100 USD, providers: [grant]}", budget=", budget: 10 USD").feasible
    over = _credit_plan(load, catalog, "{amount: 30 USD, providers: [grant]}", budget=", budget: 10 USD")
    assert not over.feasible
    # what meeting every deadline costs, item by item: the bills, less what the credit pays of them, make the cash
    cash = (100 - 30 / per_h_grant) * per_h_cash  # 30 h on 'grant' paid by the credit, 70 h on 'cash'
    said = over.phases[0].shortfall
    assert f"spends {over.scenario.money(cash)} in cash (" in said
    assert f", less {over.scenario.money(30.0)} your credits pay)" in said


def test_a_credit_pays_only_the_bills_of_its_days_where_another_pays_any(load, catalog):
    # B (200 USD) pays only work from 2027-03-29, the phase's last 3 days: one run, 72 wall-h at
    # most, 72 USD of 'grant' bills (100 wall-h cost 100.1 USD); A (10 USD) pays any bill: 82 USD
    # of 'grant' work paid by credits, the rest of the 100 h on 'cash', 128 USD of B lost. By hand
    # from the quotes (the program pays credits by groups of hours the same credits may pay)
    s = load(CREDIT.format(credits="{amount: 10 USD, providers: [grant], name: A}, "
                                   "{amount: 200 USD, providers: [grant], from: 2027-03-29, name: B}", budget=""))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0)
    q = p.quotes.set_index("option")
    per_h_cash, per_h_grant = q.at["cash:box", "cost_usd"] / 100, q.at["grant:box", "cost_usd"] / 100
    late = 3 * 24 * q.at["grant:box", "cost_usd"] / q.at["grant:box", "wall_hours_conf"]  # B's 3 days of bills
    assert late == pytest.approx(72.0)
    assert p.credits == (("A", 10.0, pytest.approx(10.0), pytest.approx(0.0)),
                         ("B", 200.0, pytest.approx(late), pytest.approx(200.0 - late)))
    assert p.total_usd == pytest.approx((100 - (late + 10.0) / per_h_grant) * per_h_cash, abs=0.01)
    # money over time: credits pay bills as they come, so the curve never falls, and ends at the total
    (hybrid,) = [a for a in p.alternatives if a.strategy == "hybrid"]
    spent = [usd for _, usd in hybrid.cumulative]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(spent)) and spent[-1] == pytest.approx(p.total_usd, abs=0.01)


@pytest.mark.parametrize("since, until, days", [("2027-01-04", "2027-01-04", 1), ("2027-01-06", "2027-01-08", 3),
                                                 ("2027-03-31", None, 1)])
def test_a_credit_pays_the_bills_of_every_day_it_is_valid(load, catalog, since, until, days):
    # a credit valid for days inside a week pays the work of those days: one run, 24 wall-h a day,
    # 1.00 USD a wall-h on 'grant' (it paid nothing where its days did not fill a week of the plan)
    valid = f"from: {since}" + (f", until: {until}" if until else "")
    p = _credit_plan(load, catalog, f"{{amount: 200 USD, providers: [grant], {valid}, name: D}}")
    q = p.quotes.set_index("option")
    bills = days * 24 * q.at["grant:box", "cost_usd"] / q.at["grant:box", "wall_hours_conf"]
    assert p.credits == (("D", 200.0, pytest.approx(bills), pytest.approx(200.0 - bills)),)


def test_a_credit_pays_the_bills_in_the_order_they_come(load, catalog):
    # 300 h on 'grant' at 0.50 USD/h (cheaper than 'cash') over three weeks, 168 wall-h a week at
    # most: 84 USD of bills in the first week, the rest in the second. A 100 USD credit pays the
    # first week's bills and 16 USD of the second's: nothing spent by the end of the first week
    text = CREDIT.format(credits="{amount: 100 USD, providers: [grant], name: G}", budget="")
    s = load(text.replace("price: 1.00 USD/h", "price: 0.50 USD/h").replace("gpu_hours: 100", "gpu_hours: 300")
             .replace("deadline: 2027-03-31", "deadline: 2027-01-24"))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0)
    q = p.quotes.set_index("option")
    per_wall_h = q.at["grant:box", "cost_usd"] / q.at["grant:box", "wall_hours"]
    weekly = p.schedule.groupby("week_start")["wall_hours"].sum() * per_wall_h
    assert list(weekly.index) == [dt.date(2027, 1, 4), dt.date(2027, 1, 11)] and 0 < weekly.iloc[0] < 100
    (hybrid,) = [a for a in p.alternatives if a.strategy == "hybrid"]
    spent = dict(hybrid.cumulative)
    assert spent[dt.date(2027, 1, 11)] == pytest.approx(0.0, abs=1e-9)  # the first week's bills, all paid
    assert spent[dt.date(2027, 1, 18)] == pytest.approx(weekly.sum() - 100.0, abs=0.01) == p.total_usd


def test_hours_are_grouped_by_the_credits_that_may_pay_them():
    # credit 1 may pay x 0, 1, 2, 5; credit 2 x 2, 3, 5; x 4 and 6 neither: three groups, by hand
    groups, paid = milp.credit_groups([np.array([0, 1, 2, 5]), np.array([2, 3, 5])], 7)
    by_members = {tuple(g): g_id for g_id, g in enumerate(map(list, groups))}
    assert set(by_members) == {(0, 1), (3,), (2, 5)}
    assert sorted(by_members[g] for g in [(0, 1), (2, 5)]) == sorted(paid[0].tolist())
    assert sorted(by_members[g] for g in [(3,), (2, 5)]) == sorted(paid[1].tolist())
    assert milp.credit_groups([], 3) == ([], [])


def test_a_credit_for_a_provider_not_considered_says_so(load, catalog):
    p = _credit_plan(load, catalog, "{amount: 30 USD, providers: [aws], name: A}")
    assert p.credits[0][2] == pytest.approx(0.0)
    assert any("A: no rent offer of aws is considered" in w and "'aws:*'" in w for w in p.warnings)


# --------------------------------------------------------------------------- prices that move

TREND = """\
name: a price that falls
start: 2027-01-04
price_trend: {trend}
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  late: {{gpu_hours: 50, from: 2028-01-03, deadline: {deadline}, checkpoint_size: 0.36 GB}}
you: {{host_power: 0 W}}
consider: {{buy: [], rent: [box], free: []}}
catalog:
  rent:
    - {{id: box, device: rtx-3090, price: 1.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min, as_of: 2026-11-01}}
"""


def test_a_rent_price_on_its_path_is_the_price_of_its_days(load, catalog):
    # -50 %/year from the price's date, 2026-11-01. The window Mon 3 - Fri 7 Jan 2028 is one bucket of
    # 5 days, its middle 2.5 days after the 3rd: the rent is today's times 0.5 ** (years to there)
    flat = planned(load(TREND.format(trend="0", deadline="2028-01-07")), catalog)[0]
    moving = planned(load(TREND.format(trend="-50%/year", deadline="2028-01-07")), catalog)[0]
    years = ((dt.date(2028, 1, 3) - dt.date(2026, 11, 1)).days + 2.5) / 365.25
    assert moving.cost_usd["rent"] == pytest.approx(flat.cost_usd["rent"] * 0.5 ** years, rel=1e-6)
    assert any("rent prices are projections" in a for a in moving.assumptions)
    assert not any("projections" in a for a in flat.assumptions)
    # with the whole year open, a falling price waits for the cheapest days; a rising one goes first
    falling = planned(load(TREND.format(trend="-50%/year", deadline="2028-12-31")), catalog)[0]
    rising = planned(load(TREND.format(trend="+50%/year", deadline="2028-12-31")), catalog)[0]
    assert falling.phases[0].finish_expected >= dt.date(2028, 12, 1)
    assert rising.phases[0].finish_expected <= dt.date(2028, 1, 10)
    assert falling.total_usd < moving.total_usd < flat.total_usd < rising.total_usd


def test_rent_along_dated_levels_is_the_level_of_its_days(load, catalog):
    # levels off the catalog price: -20 % by 2027-11-01, -60 % by 2028-11-01; the price is dated
    # 2026-11-01 (level 0). The one-bucket window's middle, 2028-01-05 12:00, lies between the two
    # points: the level there is linear between -20 % and -60 %, worked by hand
    trend = "{2027-11-01: -20%, 2028-11-01: -60%}"
    flat = planned(load(TREND.format(trend="0", deadline="2028-01-07")), catalog)[0]
    dated = planned(load(TREND.format(trend=trend, deadline="2028-01-07")), catalog)[0]
    share = ((dt.date(2028, 1, 3) - dt.date(2027, 11, 1)).days + 2.5) / (dt.date(2028, 11, 1) - dt.date(2027, 11, 1)).days
    level = -0.20 + share * (-0.60 + 0.20)
    assert dated.cost_usd["rent"] == pytest.approx(flat.cost_usd["rent"] * (1 + level), rel=1e-6)
    assert any("-20 % by 2027-11-01, -60 % by 2028-11-01" in a for a in dated.assumptions)
    # past the last point the last level holds; before the first, linear from the price's date
    after = planned(load(TREND.format(trend="{2027-06-01: -30%}", deadline="2028-01-07")), catalog)[0]
    assert after.cost_usd["rent"] == pytest.approx(flat.cost_usd["rent"] * 0.7, rel=1e-6)
    with pytest.raises(InputError, match="price level"):
        load(TREND.format(trend="{2027-06-01: cheap}", deadline="2028-01-07"))


def test_the_money_spent_over_time_counts_what_credits_pay(load, catalog):
    # the chart of money spent ended at the bills before credits (84 USD where the answer said 42)
    s = load(CREDIT.format(credits="{amount: 30 USD, providers: [grant], name: G}", budget=""))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0)
    (hybrid,) = [a for a in p.alternatives if a.strategy == "hybrid"]
    assert hybrid.cumulative[-1][1] == pytest.approx(p.total_usd, abs=0.01)


# --------------------------------------------------------------------------- the budget is cash, every part of it

#: BUDGET's card without a computer to put it in (a 300 USD host to buy), against dearer rent
HOST_BUDGET = (BUDGET.replace("name: cash, not net of resale", "name: a card that needs a computer around it")
               .replace("you: {{host_power: 0 W,", "you: {{host_machine: false, host_price: 300 USD, host_power: 0 W,")
               .replace("price: 0.50 USD/h", "price: 1.00 USD/h"))


def test_the_budget_counts_the_host_computer_a_card_needs(load, catalog):
    # Buying: 200 net + 300 host + about 70 USD of electricity, against about 1,000 USD of rent, so
    # the card wins when cash allows: 1,000 + 300 + its electricity up front.
    p, used = planned(load(HOST_BUDGET.format(budget=5000)), catalog)
    elec = p.quotes.set_index("option")["cost_usd"]["card"]
    assert used == {"card"} and p.total_usd == pytest.approx(200 + 300 + elec, abs=0.01)
    cash = 1000 + 300 + elec
    assert planned(load(HOST_BUDGET.format(budget=f"{cash + 0.01:.2f}")), catalog)[1] == {"card"}
    assert planned(load(HOST_BUDGET.format(budget=f"{cash - 0.01:.2f}")), catalog)[1] == {"box"}


TIME_BUDGET = """\
name: your time is not cash
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 100, from: 2027-01-04, deadline: 2027-03-31, checkpoint_every: 1 h, checkpoint_size: 0.36 GB}}
you: {{time_value: 10 USD/h, attention: 3/day, budget: {budget} USD}}
consider: {{buy: [], rent: [box], free: [tier]}}
catalog:
  rent:
    - {{id: box, device: rtx-3090, price: 1.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
  free:
    - {{id: tier, device: rtx-3090, session_limit: 10 h, setup: 30 min, needs_person: true, interruptions: 0}}
"""


def test_the_budget_leaves_out_the_value_of_your_time(load, catalog):
    # A 10 h session is 30 min of setup, then 9.5 h of which the last half hour (after the last
    # hourly checkpoint) is lost at the cut: 9 h kept, so ceil(100 / 9) = 12 starts by hand. The tier
    # costs no cash but 12 x 30 min x 10 USD/h = 60 USD of your time, under the rent's 100 USD: it
    # does the work, and a 1 USD budget is no obstacle (nothing is paid).
    p, used = planned(load(TIME_BUDGET.format(budget=1)), catalog)
    time_usd = sum(a.cost_usd["your_time"] for ph in p.phases for a in ph.assignments)
    assert used == {"tier"} and p.feasible
    assert time_usd == pytest.approx(12 * 0.5 * 10, abs=0.01) and p.money_usd == pytest.approx(0, abs=1e-6)


# --------------------------------------------------------------------------- your starts and a subscription's units

ATTENTION = """\
name: two notebook tiers and one person
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 140, runs: 2, from: 2027-01-04, deadline: 2027-01-10, checkpoint_every: 1 h, checkpoint_size: 0.36 GB}}
you: {{attention: 1/day}}
consider: {{buy: [], rent: [box], free: [{free}]}}
catalog:
  rent:
    - {{id: box, device: rtx-3090, price: 5.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
  free:
    - {{id: tier-a, device: rtx-3090, session_limit: 10 h, setup: 0 min, interruptions: 0, needs_person: true}}
    - {{id: tier-b, device: rtx-3090, session_limit: 10 h, setup: 0 min, interruptions: 0, needs_person: true}}
"""


def test_tiers_started_by_hand_share_your_starts(load, catalog):
    # One start a day, 7 in the week, each a session of the session model's mean length (10 h
    # sessions, the last of each run shorter): 7 sessions in all, whichever tier they are on (each
    # tier alone could take all 7). The rest of the 140 h is rented at 5 USD/h.
    for free in ("tier-a", "tier-a, tier-b"):
        p, used = planned(load(ATTENTION.format(free=free)), catalog)
        q = p.quotes.set_index("option").loc["tier-a"]
        mean_session_h = q["wall_hours"] / q["sessions"]
        tiers = sum(a.wall_hours for a in p.phases[0].assignments if a.kind == "free")
        assert p.feasible and "box" in used and 8 < mean_session_h <= 10
        assert tiers == pytest.approx(7 * mean_session_h, rel=1e-6), free


SUBSCRIPTION = """\
name: a month of compute units
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: t4}}
phases:
  a: {{gpu_hours: {hours}, from: 2027-01-04, deadline: {deadline}, checkpoint_every: 1 h, checkpoint_size: 0.36 GB}}
you: {{attention: 10/day, confidence: 50%}}
consider: {{buy: [], rent: [box], free: [colab-pro]}}
catalog:
  rent:
    - {{id: box, device: t4, price: {box} USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


def test_a_subscription_month_grants_its_units_to_spend_in_any_week_for_its_fee(load, catalog):
    # colab-pro (test catalog): 9.99 USD a month for 100 units; its T4 burns 1.86 units/h, its V100
    # and A100 more, all far cheaper per reference hour than the 5 USD/h box. 60 h in the first
    # week: the plan subscribes for one month and spends the month's 100 units in that week (at
    # 50 % confidence the program plans the expected wall hours, so the units bound them exactly),
    # the box does the rest; the fee is paid once, as rent, and the tier's hours carry no price
    p, used = planned(load(SUBSCRIPTION.format(hours=60, deadline="2027-01-10", box="5.00")), catalog)
    q = p.quotes.set_index("option")
    burn, planned_h = q["units_per_hour"], q["wall_hours_conf"] / q["wall_hours"]  # capacity is planned at C
    tiers = [a for a in p.phases[0].assignments if a.kind == "subscription"]
    assert p.feasible and "box" in used and tiers
    assert sum(a.wall_hours * planned_h[a.option] * burn[a.option] for a in tiers) == pytest.approx(100, rel=1e-6)
    assert [(m.tier, m.start, m.end, m.cost_usd) for m in p.subscriptions] == [
        ("colab-pro", dt.date(2027, 1, 4), dt.date(2027, 2, 3), 9.99)]
    box = next(a for a in p.phases[0].assignments if a.option == "box")
    assert all(a.prepaid and a.cost_usd["rent"] == 0 for a in tiers)
    assert p.cost_usd["rent"] == pytest.approx(9.99 + box.cost_usd["rent"], abs=0.01)
    assert to_dict(p)["subscriptions"] == [{"tier": "colab-pro", "start": "2027-01-04", "end": "2027-02-03",
                                            "days": 31.0, "cost": 9.99, "units": 100.0}]


def test_your_own_fee_and_unit_price_price_the_tiers(load, catalog):
    # Colab Pro where it costs another fee (catalog.free[colab-pro].fee, in the scenario's own
    # currency) and pay-as-you-go units at another price: the month costs your fee, a pack 100 x your
    # unit price; everything else as in the catalog (the frozen rates: INR per USD)
    inr = catalog.usd_per_unit()["INR"]  # USD an INR
    text = SUBSCRIPTION.format(hours=60, deadline="2027-01-10", box="5.00") + (
        "  free:\n    - {id: colab-pro, fee: 1024 INR}\n    - {id: colab-payg, unit_price: 0.2 EUR/unit}\n")
    s = load(text)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, alternatives=False)
    assert [m.cost_usd for m in p.subscriptions] == [pytest.approx(1024 * inr)]
    payg = load(text.replace("free: [colab-pro]", "free: [colab-payg]"))
    q = planner.plan(payg, catalog.with_entries(payg.catalog_entries), trials=0, alternatives=False)
    assert q.packs and all(k.cost_usd / k.count == pytest.approx(100 * 0.2 * catalog.usd_per_unit()["EUR"])
                           for k in q.packs)
    # a month's fee as money a month too, and --set reaches it
    per_year = load(text.replace("fee: 1024 INR", "fee: 12288 INR/year"))
    assert planner.plan(per_year, catalog.with_entries(per_year.catalog_entries), trials=0,
                        alternatives=False).subscriptions[0].cost_usd == pytest.approx(1024 * inr)


def test_a_fee_or_unit_price_on_a_tier_without_units_is_refused(load):
    # a fee on a tier sold by the pack, a unit price on a free tier, a fee on a notebook of your
    # own: each would plan as free (their hours have no units to price), so each is refused where
    # it is written, with the tiers that take it
    text = SUBSCRIPTION.format(hours=60, deadline="2027-01-10", box="5.00") + (
        "  free:\n    - {id: colab-payg, fee: 9.99 USD}\n    - {id: kaggle, unit_price: 0.1 USD}\n"
        "    - {id: mine, device: t4, fee: 5 USD}\n")
    with pytest.raises(InputError) as err:
        load(text)
    shown = str(err.value)
    assert "s.yaml:12:" in shown and "catalog.free[colab-payg].fee: 'colab-payg' has no monthly fee to set" in shown
    assert "(colab-pro, colab-pro-plus)" in shown
    assert "catalog.free[kaggle].unit_price: 'kaggle' is not priced in compute units" in shown
    assert "catalog.free[mine].fee: 'mine' has no monthly fee to set" in shown


@pytest.mark.parametrize("box, subscribes", [("5.00", False), ("10.05", True), ("12.00", True)])
def test_a_subscription_is_taken_only_where_its_fee_beats_the_hours_it_saves(load, catalog, box, subscribes):
    # 1 reference hour: 1.001 h on the box (5.00, 10.05 or 12.00 USD/h) against a month of Pro at
    # 9.99 USD, whose A100 does the hour in 0.41 h. The fee is what the month costs: priced by the
    # units the hour burns it would cost 0.19 USD (so 5.00 would subscribe), and with the units
    # charged on top of the fee 9.99 + 0.53 = 10.52 USD (so 10.05 would not)
    p, used = planned(load(SUBSCRIPTION.format(hours=1, deadline="2027-01-10", box=box)), catalog)
    assert ("box" in used) is not subscribes
    assert [m.cost_usd for m in p.subscriptions] == ([9.99] if subscribes else [])
    assert p.total_usd == pytest.approx(9.99 if subscribes else float(box) * 1.001, rel=1e-3)


def test_each_month_subscribed_is_paid_and_grants_its_own_units(load, catalog):
    # 200 reference hours from 4 January to 10 March at 12 USD/h on the box: every month the window
    # touches is worth its fee (100 units = 53.8 T4 wall hours for 9.99 against 645 USD on the
    # box), so the plan subscribes for the three months from 4 Jan, 4 Feb and 4 Mar, each month's
    # hours burning at most its 100 units
    p, _ = planned(load(SUBSCRIPTION.format(hours=200, deadline="2027-03-10", box="12.00")), catalog)
    assert [(m.start, m.end) for m in p.subscriptions] == [
        (dt.date(2027, 1, 4), dt.date(2027, 2, 3)), (dt.date(2027, 2, 4), dt.date(2027, 3, 3)),
        (dt.date(2027, 3, 4), dt.date(2027, 4, 3))]
    assert sum(m.cost_usd for m in p.subscriptions) == pytest.approx(3 * 9.99)


def test_the_answer_names_a_tiers_months_once_with_their_stretches_and_total(load, catalog):
    """Two phases two months apart on colab-pro at 12 USD/h on the box: the months from 4 Jan and
    from 4 Mar are subscribed, not the one between, and the answer says so in one clause with the
    fees' total, not a clause a stretch."""
    from planner.report.page import render_text

    text = SUBSCRIPTION.format(hours=60, deadline="2027-01-20", box="12.00").replace(
        "checkpoint_size: 0.36 GB}\n", "checkpoint_size: 0.36 GB}\n"
        "  b: {gpu_hours: 60, from: 2027-03-04, deadline: 2027-03-20, checkpoint_every: 1 h, checkpoint_size: 0.36 GB}\n")
    p, _ = planned(load(text), catalog)
    assert [(m.start, m.end) for m in p.subscriptions] == [(dt.date(2027, 1, 4), dt.date(2027, 2, 3)),
                                                           (dt.date(2027, 3, 4), dt.date(2027, 4, 3))]
    assert ("subscribe to colab-pro from 2027-01-04 to 2027-02-03 and 2027-03-04 to 2027-04-03 (19.98 USD, the "
            "monthly fees, whether their units are used or not)") in render_text(p)


def test_the_answers_fees_are_the_exact_months_summed_then_rounded(load, catalog):
    """In EUR a month of colab-pro is 9.99 USD / 1.0705 USD per EUR (the test catalog's rate) =
    9.3321 EUR; three months are 27.996, so 28.00 EUR, as the cost breakdown sums them. The answer
    summed the rounded months: 27.99 (a Colab Pro thesis read 25.47 beside the breakdown's 25.48)."""
    from planner.report.page import render_text

    s = load(SUBSCRIPTION.format(hours=200, deadline="2027-03-10", box="12.00").replace(
        "start: 2027-01-04", "start: 2027-01-04\ncurrency: EUR"))
    p, _ = planned(s, catalog)
    assert len(p.subscriptions) == 3 and s.usd_per_currency == pytest.approx(1.0705)
    assert "subscribe to colab-pro from 2027-01-04 to 2027-04-03 (28.00 EUR, the monthly fees" in render_text(p)


def test_months_start_on_the_start_day_of_the_month_or_the_months_last_day():
    # from 31 January: 28 February (2027 is no leap year), 31 March, 30 April
    assert milp.month_starts(dt.date(2027, 1, 31), 100) == [0, 28, 59, 89]
    assert milp.month_starts(dt.date(2027, 1, 4), 31) == [0]
    assert milp.month_starts(dt.date(2027, 1, 4), 32) == [0, 31]
    assert milp.month_starts(dt.date(2027, 12, 15), 40) == [0, 31]


def test_free_only_is_free_subscriptions_are_their_own_kind(load, catalog):
    s = load(SUBSCRIPTION.format(hours=60, deadline="2027-01-10", box="5.00").replace(
        "free: [colab-pro]", "free: [colab-pro, colab-free]"))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, breakevens=False)
    kinds = dict(zip(p.options["option"], p.options["kind"]))
    free_only = next(a for a in p.alternatives if a.strategy == "free-only")
    assert {kinds[o] for o in free_only.options} == {"free"} and free_only.total_cost_usd == 0
    assert {kinds[o] for o in kinds if o.startswith("colab-pro:")} == {"subscription"}


# --------------------------------------------------------------------------- buying later

LATER = """\
name: a card needed from March
start: 2027-01-04
horizon: 12 months
electricity: 0.20 USD/kWh
{later}
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  early: {{gpu_hours: 100, from: 2027-01-04, deadline: 2027-01-24, checkpoint_size: 0.36 GB}}
  late: {{gpu_hours: 2000, from: 2027-03-01, deadline: 2027-05-24, checkpoint_size: 0.36 GB}}
you: {{host_power: 100 W}}
consider: {{buy: [card-x], rent: [box], free: []}}
catalog:
  buy:
    - {{id: card-x, device: rtx-3090, condition: new, price: 1600 USD, resale: 50%, power: 350 W}}
  rent:
    - {{id: box, device: rtx-3090, price: {rent} USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


@pytest.mark.parametrize("rent", [0.50, 1.20])
def test_a_card_whose_price_falls_is_bought_when_it_is_needed_unless_renting_till_then_costs_more(load, catalog,
                                                                                                     rent):
    # Prices fall 50 % a year. 'late' (2,000 h in 85 days) needs the card from the day it opens,
    # 2027-03-01 (day 56, a week start): bought then, it costs 1600 x 0.5^(56/365.25) = 1,438.69 USD
    # and sells for half, 719.34 net: 80.66 less than on the first day (renting 'late' costs 1,000
    # or more). Then 'early' must be rented: 100 h at 0.50 USD/h costs 50 (+ storage) < 80.66 + the
    # card's 9.0 USD of electricity there, so the plan rents and buys later; at 1.20 USD/h, 120 >
    # 89.66, so it buys on the first day and the card does both phases.
    later = "buy_later: 4 weeks\nbuy_price_trend: -50%/year"
    s = load(LATER.format(later=later, rent=rent))
    p, used = planned(s, catalog)
    q = p.quotes.set_index(["phase", "option"])["cost_usd"]
    price_then = 1600 * 0.5 ** (56 / 365.25)
    assert price_then == pytest.approx(1438.69, abs=0.01)
    buy_later = price_then / 2 + q["early", "box"] + q["late", "card-x"]
    buy_first = 800 + q["early", "card-x"] + q["late", "card-x"]
    assert q["early", "card-x"] == pytest.approx(100 * 0.45 * 0.20, rel=0.01)  # 9.0 USD of electricity
    (bought,) = p.purchases
    if rent == 0.50:
        assert buy_later < buy_first
        assert bought.bought_on == dt.date(2027, 3, 1) and bought.price_usd == pytest.approx(price_then, abs=0.01)
        assert bought.resale_usd == pytest.approx(price_then / 2, abs=0.01)
        assert used == {"box", "card-x"} and p.total_usd == pytest.approx(buy_later, abs=0.01)
        early = {a.option for a in p.phases[0].assignments}
        assert early == {"box"}  # a card bought in March runs nothing in January
    else:
        assert buy_first < buy_later
        assert bought.bought_on is None and bought.price_usd == pytest.approx(1600, abs=0.01)
        assert used == {"card-x"} and p.total_usd == pytest.approx(buy_first, abs=0.01)
    ref_cost, ref_used = reference_optimum(s, catalog)
    assert p.total_usd == pytest.approx(ref_cost, abs=0.01) and used == ref_used
    # every figure is the scenario's own, so nothing is drawn: each draw re-prices the card bought
    # on its day at that day's price, as the plan does
    u = planner.plan(s, trials=0, uncertainty=20).uncertainty
    hybrid = next(o for o in u.outcomes if o.strategy == "hybrid")
    assert hybrid.cost_usd == pytest.approx(np.full(20, p.total_usd), abs=0.01)


def test_without_buy_later_a_card_is_bought_on_the_first_day_and_the_plan_is_as_before(load, catalog):
    # the same falling price, but the plan may only buy on the first day: 800 net for the card
    base = planned(load(LATER.format(later="", rent=0.50)), catalog)[0]
    trend = planned(load(LATER.format(later="buy_price_trend: -50%/year", rent=0.50)), catalog)[0]
    assert [b.bought_on for b in base.purchases] == [b.bought_on for b in trend.purchases] == [None]
    assert trend.total_usd == pytest.approx(base.total_usd, abs=1e-6)  # the catalog price is dated on day 0
    later = planned(load(LATER.format(later="buy_later: 4 weeks", rent=0.50)), catalog)[0]
    assert later.total_usd <= base.total_usd + 1e-6  # more days to buy on never cost more


# --------------------------------------------------------------------------- commitments

COMMIT = """\
name: a month of reserved capacity or pay as you go
start: 2027-01-04
electricity: 0.20 USD/kWh
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: {hours}, from: 2027-01-04, deadline: 2027-01-31, checkpoint_size: 0.36 GB}}
consider: {{buy: [], rent: [od, res], free: []}}
catalog:
  rent:
    - {{id: od, device: rtx-3090, price: 1.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
    - {{id: res, device: rtx-3090, price: 0.60 USD/h, billing: 1 s, startup: 0 min, setup: 0 min, term: 28 days}}
"""


@pytest.mark.parametrize("hours", [300, 500])
def test_a_commitment_wins_only_above_the_utilisation_its_discount_pays_for(load, catalog, hours):
    # 28 days reserved at 0.60 USD/h cost 0.60 x 24 x 28 = 403.20 USD, used or not; the same card
    # on demand costs 1.00 USD per billed hour. So reserving pays above 403.2 h in the 672 h of the
    # month (60 % utilisation, the price ratio): 300 h rent on demand, 500 h reserve.
    s = load(COMMIT.format(hours=hours))
    p, used = planned(s, catalog)
    q = p.quotes.set_index("option")
    other = {o: float(q.at[o, "cost_usd"] - q.at[o, "rent_usd"]) for o in ("od", "res")}  # storage, egress
    assert q.at["od", "rent_usd"] == pytest.approx(hours * 1.00, rel=0.01)
    if hours == 300:
        assert used == {"od"} and not p.commitments
        assert p.total_usd == pytest.approx(q.at["od", "cost_usd"], abs=0.01)
    else:
        (c,) = p.commitments
        assert (c.offer, c.count, c.days) == ("res", 1, 28.0) and c.cost_usd == pytest.approx(403.20, abs=0.01)
        assert used == {"res"} and p.total_usd == pytest.approx(403.20 + other["res"], abs=0.01)
        assert p.cost_usd["rent"] == pytest.approx(403.20, abs=0.01)  # the term, once; its hours carry no rent
        assert sum(a.cost_usd["rent"] for a in p.phases[0].assignments) == 0.0
        assert c.start >= s.start and c.end <= dt.date(2027, 1, 31) + dt.timedelta(days=6)
    # every figure is the scenario's own: each draw of the uncertainty analysis costs the plan's total
    u = planner.plan(s, trials=0, uncertainty=20).uncertainty
    hybrid = next(o for o in u.outcomes if o.strategy == "hybrid")
    assert hybrid.cost_usd == pytest.approx(np.full(20, p.total_usd), abs=0.01)


def test_a_commitment_holds_only_over_its_term(load, catalog):
    # 500 h need 3 weeks of one instance; a 7-day block covers one week, so the plan stacks
    # blocks (3 x 7 x 24 x 0.60 = 302.40 USD) and never runs a week no block covers
    s = load(COMMIT.format(hours=500).replace("term: 28 days", "term: 7 days"))
    p, _ = planned(s, catalog)
    weeks = sorted(c.start for c in p.commitments)
    assert sum(c.count for c in p.commitments) == 3 and len(set(weeks)) == 3
    # of the placements that cost the same, the earliest weeks: the work ends soonest
    assert weeks == [dt.date(2027, 1, 4), dt.date(2027, 1, 11), dt.date(2027, 1, 18)]
    assert sum(c.cost_usd for c in p.commitments) == pytest.approx(3 * 7 * 24 * 0.60, abs=0.01)
    covered = {c.start + dt.timedelta(days=d) for c in p.commitments for d in range(7)}
    assert all(week in covered for week in p.schedule.loc[p.schedule["option"] == "res", "week_start"])


def test_a_term_is_priced_on_the_price_path_on_the_day_it_starts(load, catalog):
    # a 28-day term for 500 h due on 1 August, rent falling 20 % a year: the plan starts it a week
    # after the phase opens, 189 days after the start (its three weeks in the window still hold
    # 504 h, and a later day is cheaper): 0.60 x 24 x 28 x 0.8^(189 / 365.25) = 359.23 USD
    s = load(COMMIT.format(hours=500).replace("from: 2027-01-04, deadline: 2027-01-31",
                                              "from: 2027-07-05, deadline: 2027-08-01")
             .replace("consider:", "price_trend: -20%/year\nconsider:"))
    p, used = planned(s, catalog)
    (c,) = p.commitments
    assert used == {"res"} and c.start == dt.date(2027, 7, 12)
    assert c.cost_usd == pytest.approx(0.60 * 24 * 28 * 0.8 ** (189 / 365.25), abs=0.01)


def test_a_term_is_cash_the_budget_counts(load, catalog):
    # the month's term costs 403.20 USD, paid when it starts; with 380 USD the plan cannot take it
    # (500 h on demand, 500.50 USD, does not fit either): it keeps to the budget, on demand, and
    # says the budget is short
    s = load(COMMIT.format(hours=500).replace("consider:", "you: {budget: 380 USD}\nconsider:"))
    p, used = planned(s, catalog)
    assert not p.commitments and used == {"od"} and p.over_budget and not p.feasible
    assert p.money_usd <= 380 + 0.01


def test_runs_on_one_reserved_instance_finish_one_after_another(load, catalog):
    # issue 35 item 8: three runs of 150 h share one reserved instance (cheaper than two terms or
    # on demand): 450.45 wall-h at 24 h a day from 4 January end on day 18.8, 22 January (the
    # finish was computed as if the three ran at once: 19 January)
    s = load(COMMIT.format(hours=150).replace("gpu_hours: 150,", "gpu_hours: 150, runs: 3,")
             .replace("deadline: 2027-01-31", "deadline: 2027-03-31"))
    p, used = planned(s, catalog)
    (c,) = p.commitments
    assert used == {"res"} and c.count == 1
    wall = sum(a.wall_hours for a in p.phases[0].assignments)
    assert wall == pytest.approx(450.45, abs=0.01)
    assert p.phases[0].finish_expected == dt.date(2027, 1, 4) + dt.timedelta(days=math.floor(wall / 24))


def test_a_terms_hours_are_usable_on_every_day_it_covers(load, catalog):
    # issue 35 item 7: a 30-day term at 0.50 USD/h costs 0.50 x 24 x 30 = 360 USD for 720 hours,
    # from a week start; 700 h due on 10 February all fit in them. Counted in whole weeks it held
    # 672 h (its last two days lie in a week it covers in part), and the plan bought the other
    # 28 h on demand at 1.00 USD/h (388 USD)
    s = load(COMMIT.format(hours=700).replace("deadline: 2027-01-31", "deadline: 2027-02-10")
             .replace("price: 0.60 USD/h", "price: 0.50 USD/h").replace("term: 28 days", "term: 30 days"))
    p, used = planned(s, catalog)
    (c,) = p.commitments
    assert used == {"res"} and (c.start, c.end, c.days) == (dt.date(2027, 1, 4), dt.date(2027, 2, 2), 30.0)
    assert p.cost_usd["rent"] == pytest.approx(360.0, abs=0.01)
    assert p.phases[0].meets_deadline


@pytest.mark.parametrize("credit, pays", [("{amount: 100 USD, providers: [aws]}", 100.0),
                                          ("{amount: 100 USD, providers: [aws], from: 2027-01-05}", 100.0),
                                          ("{amount: 100 USD, providers: [gcp]}", 0.0)])
def test_a_credit_pays_a_term_of_its_provider_that_starts_while_it_is_valid(load, catalog, credit, pays):
    # 500 h on the month's term (403.20 USD): an AWS credit of 100 USD pays part of it, as it pays
    # rent. Valid from 2027-01-05 only, it cannot pay a term starting on the 4th: the plan starts
    # it on the 11th instead, whose three whole weeks (504 h) still hold the 500 h. A GCP credit
    # pays nothing here.
    text = (COMMIT.format(hours=500).replace("id: od", "id: 'aws:od'").replace("id: res", "id: 'aws:res'")
            .replace("rent: [od, res]", "rent: ['aws:od', 'aws:res']")
            .replace("consider:", f"you: {{credits: [{credit}]}}\nconsider:"))
    p, used = planned(load(text), catalog)
    (c,) = p.commitments
    assert used == {"aws:res"} and c.cost_usd == pytest.approx(403.20, abs=0.01)
    q = p.quotes.set_index("option")
    other = float(q.at["aws:res", "cost_usd"] - q.at["aws:res", "rent_usd"])
    assert p.total_usd == pytest.approx(403.20 - pays + other, abs=0.01)
    assert p.credits[0][2] == pytest.approx(pays, abs=0.01)
    if "from" in credit:
        assert c.start == dt.date(2027, 1, 11)


def test_of_plans_a_credit_pays_in_full_the_one_without_idle_terms(load, catalog):
    # 1,000 USD of AWS credit pays any plan here (500 h on demand: 500.50 USD); committing to
    # months as well costs nothing more, but buys terms nobody uses: the plan takes none
    text = (COMMIT.format(hours=500).replace("id: od", "id: 'aws:od'").replace("id: res", "id: 'aws:res'")
            .replace("rent: [od, res]", "rent: ['aws:od', 'aws:res']")
            .replace("consider:", "you: {credits: [{amount: 1000 USD, providers: [aws]}]}\nconsider:"))
    p, used = planned(load(text), catalog)
    assert not p.commitments and used == {"aws:od"} and p.total_usd == pytest.approx(0.0, abs=0.01)
    assert p.credits[0][2] == pytest.approx(p.quotes.set_index("option").at["aws:od", "cost_usd"], abs=0.01)


def test_many_credits_that_pay_alike_plan_as_one_and_too_many_distinct_are_a_located_error(load, catalog):
    """issue 39: 100 credits ran 95 s and failed; credits of the same providers and dates pay the
    same bills, so they combine: 100 of 0.30 USD plan as one of 30 USD (the plan by hand above:
    30 h free on grant, 70 h on cash, 42 USD). Past MAX_CREDITS distinct ones, a located error."""
    from planner.model.schema import MAX_CREDITS
    from pricing.errors import InputError

    many = _credit_plan(load, catalog, ", ".join(["{amount: 0.30 USD, providers: [grant]}"] * 100))
    one = _credit_plan(load, catalog, "{amount: 30 USD, providers: [grant], name: G}")
    assert many.total_usd == pytest.approx(one.total_usd, abs=0.01)
    (pooled,) = many.credits
    assert pooled[0] == "credit 1, credit 2, credit 3 and 97 more" and pooled[1] == pytest.approx(30.0)
    distinct = ", ".join(f"{{amount: 1 USD, providers: [grant], until: 2027-03-{d:02d}}}" for d in range(1, MAX_CREDITS + 2))
    with pytest.raises(InputError) as err:
        load(CREDIT.format(credits=distinct, budget=""))
    (problem,) = err.value.problems
    assert problem.path == "you.credits" and problem.line > 0 and f"at most {MAX_CREDITS}" in problem.message


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small())
def test_the_answer_agrees_with_its_own_uncertainty_analysis(load, catalog, text):
    """issue 35: one answer. On every generated scenario the plan's cost lies inside its own P10-P90
    (as-planned inputs are the middle of what is drawn) and a plan said to meet every deadline at
    the scenario's confidence C meets them all in at least C - 5 points of the draws."""
    s = load(text)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, uncertainty=400, breakevens=False)
    if not p.feasible or p.uncertainty is None or p.uncertainty.chosen is None:
        return  # no plan meets every deadline: nothing is promised
    chosen = p.uncertainty.chosen
    p10, _, p90 = uncertainty.quantiles(chosen.cost_usd)
    assert p10 - 0.01 <= p.total_usd <= p90 + 0.01, (p10, p.total_usd, p90)
    assert chosen.meets.mean() >= s.you.confidence - 0.05, (chosen.meets.mean(), s.you.confidence)


ESTIMATED_QUOTA = """\
name: a free tier whose quota is an estimate
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: t4}}
phases:
  a: {{gpu_hours: {hours}, from: 2027-01-04, deadline: 2027-01-31, checkpoint_every: 1 h, checkpoint_size: 0.36 GB}}
consider: {{buy: [], rent: [], free: [estimated-tier]}}
"""


def test_an_estimated_quota_is_planned_at_the_hours_it_gives_at_your_confidence(load, catalog):
    # issue 35 item 2: 22.5 h a week estimated from a 15-30 h range (uniform): at 90 % the plan counts
    # on 15 + 15 x 0.1 = 16.5 h a week, and says so up front; four quota weeks hold 66 h, so 60 h
    # are on time (at the estimate's 22.5 h they were promised by about the 22nd), and the uncertainty
    # analysis, drawing the quota over its range, meets the deadline in at least 85 % of its draws
    s = load(ESTIMATED_QUOTA.format(hours=60))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, uncertainty=400, breakevens=False)
    opts = p.options.set_index("option")
    assert opts.at["estimated-tier", "quota_h_per_week"] == pytest.approx(16.5)
    assert any("estimated-tier: its weekly quota is an estimate, 22.5 h (range 15-30" in a and "16.5 h a week" in a
               for a in p.assumed_figures)
    assert p.feasible and p.uncertainty.chosen.meets.mean() >= 0.85
    # 70 h do not fit 4 x 16.5 h: no plan promises them at 90 % (at 22.5 h a week it would have)
    s = load(ESTIMATED_QUOTA.format(hours=70))
    assert not planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, breakevens=False).feasible


# --------------------------------------------------------------------------- checkpoint writes, said

WRITES = """\
name: big checkpoints
start: 2027-01-04
workload: {family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}
phases:
  a: {gpu_hours: 10, from: 2027-01-04, deadline: 2027-03-31, checkpoint_every: 1 h, checkpoint_size: 100 GB}
you: {host_power: 0 W}
consider: {buy: [], rent: ["cash:box"], free: []}
catalog:
  rent:
    - {id: "cash:box", device: rtx-3090, price: 0.60 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}
"""


def test_what_an_account_of_a_cloud_needs_is_said_up_front_and_a_new_offer_of_it_takes_it(load, catalog):
    """A cloud GPU needs an account that may start one (AWS: a quota in vCPUs that is 0 until
    asked for; catalog sign_up): a plan that rents it says so up front, as for a free tier. A
    scenario's own 'aws:box' needs what every AWS row says an AWS account needs; an offer of a
    provider the catalog does not know says nothing, and a row's own sign_up wins."""
    import dataclasses

    needs = "a GPU quota asked for in Service Quotas"
    rent = catalog.rent.assign(sign_up=[needs if p == "aws" else None for p in catalog.rent["provider"]])
    clouds = dataclasses.replace(catalog, tables={**catalog.tables, "rent": rent})
    aws, used = planned(load(WRITES.replace('"cash:box"', '"aws:box"')), clouds)
    assert used == {"aws:box"}
    assert [f for f in aws.assumed_figures if "account" in f] == [
        f"aws:box: the plan assumes an account that may use it now: {needs}"]
    own = "a form signed by the lab's head"
    mine, _ = planned(load(WRITES.replace('"cash:box"', '"aws:box"').replace(
        "setup: 0 min}", f"setup: 0 min, sign_up: {own}}}")), clouds)
    assert [f for f in mine.assumed_figures if "account" in f] == [
        f"aws:box: the plan assumes an account that may use it now: {own}"]
    unknown, _ = planned(load(WRITES), clouds)
    assert not [f for f in unknown.assumed_figures if "account" in f]
    shipped, _ = planned(load(WRITES.replace('"cash:box"', '"aws:box"')), catalog)  # no AWS row says one
    assert not [f for f in shipped.assumed_figures if "account" in f]


def test_an_assignment_says_the_hours_its_checkpoint_writes_take(load, catalog):
    """10 h of work on the reference card checkpointed every hour: 10 writes of 100 GB at a new
    offer's 360 GB/h (columns.csv's default), 2.78 h of the wall time, which the answer says (the writes of a 70B model's
    states every hour took three quarters of a plan's time unsaid), with the size and the rate
    they rest on; the offer's own transfer rate (1 GB/s, its scenario entry) writes them in 0.28 h."""
    from planner.report.page import explain

    p, _ = planned(load(WRITES), catalog)
    a = p.phases[0].assignments[0]
    assert a.checkpoint_hours == pytest.approx(10 * 100 / 360, rel=1e-9)
    assert a.wall_hours == pytest.approx(10 + 10 * 100 / 360, rel=1e-9)
    assert "; 2.8 h of it writing checkpoints (100 GB every 60 min at 100 MB/s, the machine's transfer rate, an " \
           "estimate: 'transfer' of its entry in the scenario's catalog sets it)" in explain(a, "rtx-3090")
    d = to_dict(p)["phases"][0]["assignments"][0]
    assert (d["checkpoint_hours"], d["checkpoint_gb"], d["checkpoint_write_gb_per_h"]) == (
        pytest.approx(2.78, abs=0.005), 100.0, 360.0)
    fast, _ = planned(load(WRITES.replace("setup: 0 min}", "setup: 0 min, transfer: 1 GB/s}")), catalog)
    a = fast.phases[0].assignments[0]
    assert a.checkpoint_hours == pytest.approx(10 * 100 / 3600, rel=1e-9)
    assert a.wall_hours == pytest.approx(10 + 10 * 100 / 3600, rel=1e-9)
    assert "writing checkpoints" not in explain(a, "rtx-3090")  # 2.7 % of the wall time: not said
    assert to_dict(fast)["phases"][0]["assignments"][0]["checkpoint_write_gb_per_h"] == 3600.0
    small, _ = planned(load(WRITES.replace("checkpoint_size: 100 GB", "checkpoint_size: 1 GB")), catalog)
    assert "writing checkpoints" not in explain(small.phases[0].assignments[0], "rtx-3090")  # 0.03 h: not said


#: WRITES with 40 GB of activations, timed on an A100 80GB, and small checkpoints
FITS = (WRITES.replace("name: big checkpoints", "name: a batch that one card holds and another does not")
        .replace("activation_memory: 4 GB, reference_gpu: rtx-3090", "activation_memory: 40 GB, reference_gpu: a100-80gb")
        .replace("checkpoint_size: 100 GB", "checkpoint_size: 0.1 GB"))


def test_an_assignment_says_the_speed_its_work_runs_at_where_the_batch_fits_one_card_and_not_the_other(load, catalog):
    """40 GB of activations at batch 32 fit the A100 80GB the hours were timed on; the RTX 3090
    (24 GB, 0.4 GB of states and 1 GB of framework) holds 18 samples, so it runs 2 micro-batches
    of 16: one halving, 5 % slower (workload.ACCUMULATION_SLOWDOWN_PER_HALVING). The line said
    "at 0.42x" over wall hours 5 % longer than that speed gives: a TPU that ran micro-batches of 2
    left its reader 47 h short. It now gives the speed the work runs at, which with the writes
    adds up to the wall hours; the other way round (hours timed on the 3090, run on the A100)
    the work runs faster than the cards' speeds say."""
    from planner.report.page import explain

    p, _ = planned(load(FITS), catalog)
    a = p.phases[0].assignments[0]
    assert (a.verdict, a.slowdown) == ("fits-with-accumulation", pytest.approx(1.05, rel=1e-12))
    runs_at = a.relative_speed / 1.05
    assert a.wall_hours == pytest.approx(10 / runs_at + a.checkpoint_hours + a.setup_hours + a.lost_hours, rel=1e-9)
    assert f"at {a.relative_speed:.2f}x the a100-80gb (measured; {runs_at:.2f}x with gradient accumulation)" \
        in explain(a, "a100-80gb")
    assert to_dict(p)["phases"][0]["assignments"][0]["slowdown"] == 1.05
    back, _ = planned(load(FITS.replace("reference_gpu: a100-80gb", "reference_gpu: rtx-3090")
                           .replace("device: rtx-3090", "device: a100-80gb")), catalog)
    b = back.phases[0].assignments[0]
    assert (b.verdict, b.slowdown) == ("fits", pytest.approx(1 / 1.05, rel=1e-12))
    assert f"({b.speed_source}; {b.relative_speed * 1.05:.2f}x as it holds more of the batch than the rtx-3090)" \
        in explain(b, "rtx-3090")
    fits, _ = planned(load(FITS.replace("activation_memory: 40 GB", "activation_memory: 20 GB")), catalog)
    assert fits.phases[0].assignments[0].slowdown == 1.0  # 18 samples' room holds the batch of 32 at 20 GB
    assert "x with" not in explain(fits.phases[0].assignments[0], "a100-80gb")


def test_the_plan_table_writes_the_wall_hours_its_line_does(load, catalog):
    """The plan's table and the line under it write one figure: an assignment of 3.7499 wall
    hours is 3.7 in both (the table read the JSON's 3.75, already rounded, and wrote 3.8 above
    a line that said 3.7)."""
    import dataclasses

    from planner.report.page import render_text

    p, _ = planned(load(WRITES), catalog)
    ph = p.phases[0]
    a = dataclasses.replace(ph.assignments[0], wall_hours=3.7499)
    text = render_text(dataclasses.replace(p, phases=(dataclasses.replace(ph, assignments=(a,)),)))
    row = next(line.split() for line in text.splitlines() if line.startswith("a ") and "cash:box" in line)
    assert row[2:4] == ["10.0", "3.7"]
    assert "reference GPU-h become 3.7 wall-h" in text


def test_the_plan_tables_second_finish_is_the_one_each_phase_is_held_to_and_says_at_what_chance(load, catalog):
    """Two phases under you.confidence 0.81 are each held to 0.9 (its square root): the table's
    column is finish_confident, headed 'Finish P90', with a line saying why; it was headed with
    the scenario's 81 %, where the JSON's finish_p90 is another figure (the sessions' alone). One
    phase at 0.9: 'Finish P90' and no line."""
    from planner.report.page import render_text

    two = WRITES.replace("you: {host_power: 0 W}", "you: {host_power: 0 W, confidence: 0.81}").replace(
        "  a: {gpu_hours: 10,", "  b: {gpu_hours: 5, from: 2027-01-04, deadline: 2027-03-31}\n  a: {gpu_hours: 10,")
    p, _ = planned(load(two), catalog)
    text = render_text(p)
    header = next(line for line in text.splitlines() if line.startswith("Phase "))
    assert "  Finish P90  " in header and "P81" not in header
    rows = [line.split() for line in text.splitlines() if line.startswith(("a ", "b ")) and "cash:box" in line]
    assert sorted(row[6] for row in rows) == sorted(ph["finish_confident"] for ph in to_dict(p)["phases"])
    assert "Finish P90: each phase ends by then in 90 % of outcomes, so that every phase ends by its own in at " \
           "least 81 % (you.confidence)" in text
    one, _ = planned(load(WRITES), catalog)
    text = render_text(one)
    assert "  Finish P90  " in next(line for line in text.splitlines() if line.startswith("Phase "))
    assert "each phase ends by then" not in text


def test_an_offer_without_an_egress_price_has_its_downloads_counted_free_and_the_answer_says_so(load, catalog):
    """Blank is never zero: the offer of WRITES gives no egress price, so what its run leaves
    (its checkpoint_size, 100 GB) is downloaded at no cost, and the answer says it
    rests on that; 'egress: 0' (free, as Lambda's and RunPod's are) says nothing, at the same cost;
    a price of 0.05 USD/GB adds 100 GB x 0.05 = 5 USD."""
    unknown, _ = planned(load(WRITES), catalog)
    free, _ = planned(load(WRITES.replace("setup: 0 min}", "setup: 0 min, egress: 0}")), catalog)
    priced, _ = planned(load(WRITES.replace("setup: 0 min}", "setup: 0 min, egress: 0.05 USD/GB}")), catalog)
    said = [f for f in unknown.assumed_figures if "no egress price" in f]
    assert said == ["cash:box: no egress price is published or given, so the plan counts the download of what each "
                    "run leaves (its weights) as free; set egress for the offer in the scenario's catalog"]
    assert not any("no egress price" in f for f in free.assumed_figures + priced.assumed_figures)
    assert unknown.cost_usd["egress"] == free.cost_usd["egress"] == 0.0
    assert priced.cost_usd["egress"] == pytest.approx(100 * 0.05, rel=1e-9)


OWNED = """\
name: cards you own
start: 2027-01-04
electricity: 0.20 USD/kWh
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 40, runs: 8, from: 2027-01-04, deadline: {deadline}, checkpoint_every: 1 h, checkpoint_size: 0.1 GB}}
you: {{own: {own}, host_power: 100 W}}
consider: {{buy: [], rent: [box], free: []}}
catalog:
  rent:
    - {{id: box, device: rtx-3090, price: 1.00 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
"""


def test_a_card_you_list_twice_is_two_cards(load, catalog):
    """'own: [rtx-3090, rtx-3090]' was one card: eight runs of 40 GPU-h due in 9 days (216 h)
    rented 104 h beside it. Two cards are a machine of two, drawing two boards and one host.
    Eight independent runs go two at a time, one a card, at 2x one card (no gradients to
    exchange): by hand, 320 h / 2 of wall, each hour (2 x 350 + 100) W at 0.20 USD/kWh, writes
    included. One run of 320 h takes both cards data-parallel, as a bought box of two does, at
    the efficiency measured on GeForce machines of two: 2 x 0.913, 320 h / 1.826."""
    from planner.model import workload

    board = float(catalog.devices.set_index("id").at["rtx-3090", "board_power_w"])
    two, used = planned(load(OWNED.format(own="[rtx-3090, rtx-3090]", deadline="2027-01-12")), catalog)
    assert used == {"own:rtx-3090"} and two.feasible
    a = two.phases[0].assignments[0]
    assert (a.relative_speed, a.side_by_side) == (pytest.approx(2.0, rel=1e-9), 2)
    writes = a.checkpoint_hours
    assert a.wall_hours == pytest.approx(320 / 2 + writes, rel=1e-9)
    assert two.cost_usd["electricity"] == pytest.approx((2 * board + 100) / 1000 * a.wall_hours * 0.20, rel=1e-9)
    one_run = OWNED.replace("gpu_hours: 40, runs: 8", "gpu_hours: 320, runs: 1")
    alone, _ = planned(load(one_run.format(own="[rtx-3090, rtx-3090]", deadline="2027-01-22")), catalog)
    b = alone.phases[0].assignments[0]
    speed = workload.data_parallel_speed(2, gpus="geforce")
    assert speed == pytest.approx(2 * 0.913) and (b.relative_speed, b.side_by_side) == (pytest.approx(speed, rel=1e-9), 1)
    assert b.wall_hours == pytest.approx(320 / speed + b.checkpoint_hours, rel=1e-9)
    _, used = planned(load(OWNED.format(own="[rtx-3090]", deadline="2027-01-12")), catalog)
    assert used == {"own:rtx-3090", "box"}  # one card cannot do it alone in 9 days


@pytest.mark.parametrize(("count", "runs", "gpus", "sharding", "groups", "speed"), [
    (4, 8, "geforce", "none", 4, 4.0), (4, 4, "geforce", "none", 4, 4.0), (4, 3, "geforce", "none", 2, 2 * 2 * 0.913),
    (4, 2, "geforce", "none", 2, 2 * 2 * 0.913), (4, 1, "geforce", "none", 1, 4 * 0.869),
    (8, 6, "geforce", "none", 4, 4 * 2 * 0.913), (3, 2, "geforce", "none", 1, None), (2, 5, "pro", "none", 2, 2.0),
    (1, 8, "pro", "none", 1, 1.0), (4, 8, "pro", "zero3", 1, None),
    (8, 2, "pro", "none", 1, 8 * 0.962)])
def test_a_machine_carries_as_many_runs_at_once_as_make_it_fastest(count, runs, gpus, sharding, groups, speed):
    """By hand, from the measured data-parallel efficiencies (GeForce 0.913 for 2 cards, 0.869 for
    4; data-centre 0.960 for 4, 0.962 for 8): a GeForce box of 4 with 8 seeds runs 4 at once, one
    a card, at 4.00x one card; with 3 or 2 seeds, two pairs (3.65x); with one run, all four on it
    (3.48x). 3 cards and 2 runs: no equal groups of two, one run on all three. Sharded states
    (ZeRO-3) need every GPU on the one run. 8 data-centre GPUs and 2 runs: one run on all eight
    (7.70x) beats two groups of four (7.68x), as measured."""
    from planner.model import workload

    assert workload.side_by_side(count, runs, sharding, gpus=gpus) == groups
    machine = workload.machine_speed(count, groups, sharding, gpus=gpus)
    assert machine == pytest.approx(speed if speed is not None else workload.data_parallel_speed(count, sharding, gpus=gpus))


def test_runs_go_side_by_side_on_a_free_tier_of_two_gpus_and_never_on_a_rented_machine(load, catalog):
    """Kaggle's 2x T4 carries two of eight seeds at once, 2x one T4, where one run takes both
    (2 x 0.983, T4s being data-centre cards); a rented machine of two RTX 3090s takes a seed an
    instance instead (as many instances as it has), each seed on both of its GPUs: 2 x 0.913 one
    card whatever the runs."""
    def quotes(runs: int) -> dict:
        text = OWNED.format(own="[]", deadline="2027-06-30").replace(
            "gpu_hours: 40, runs: 8", f"gpu_hours: {320 // runs}, runs: {runs}").replace(
            "rent: [box], free: []", "rent: [pair], free: [kaggle-t4x2]").replace(
            "{id: box, device: rtx-3090,", "{id: pair, device: rtx-3090, count: 2,")
        return {q.option: q for q in planner.plan(load(text), catalog, trials=0).quotes.itertuples()}

    eight, one = quotes(8), quotes(1)
    assert (eight["kaggle-t4x2"].side_by_side, one["kaggle-t4x2"].side_by_side) == (2, 1)
    assert eight["kaggle-t4x2"].relative_speed / one["kaggle-t4x2"].relative_speed == pytest.approx(2 / 1.966, rel=1e-9)
    assert eight["pair"].side_by_side == one["pair"].side_by_side == 1
    assert eight["pair"].relative_speed == one["pair"].relative_speed == pytest.approx(1.826, rel=1e-9)


def test_runs_side_by_side_share_their_sessions_setup_and_starts(load, catalog):
    """Six seeds of 2 GPU-h on Kaggle's 2x T4 go in three rounds of two: three sessions, three
    setups, three starts by hand, where one run at a time on both T4s (ZeRO-2: states sharded,
    so no runs side by side, and its communication the same as plain data parallelism) takes six
    of each. By hand, each round holds two runs' work at twice one T4, the wall of one run on
    one T4 (under the 12 h session limit; no disconnects); its overheads are those of one session."""
    def quote(sharding: str):
        text = OWNED.format(own="[]", deadline="2027-06-30").replace(
            "gpu_hours: 40, runs: 8", "gpu_hours: 2, runs: 6").replace(
            "rent: [box], free: []", "rent: [], free: [kaggle-t4x2]").replace(
            "reference_gpu: rtx-3090}", f"reference_gpu: rtx-3090, sharding: {sharding}}}")
        text += "  free:\n    - {id: kaggle-t4x2, interruptions: 0}\n"  # sessions end at their limit alone
        p = planner.plan(load(text), catalog, trials=0)
        return next(q for q in p.quotes.itertuples() if q.option == "kaggle-t4x2")

    pairs, alone = quote("none"), quote("zero2")
    assert (pairs.side_by_side, alone.side_by_side) == (2, 1)
    assert (round(pairs.sessions), round(alone.sessions)) == (3, 6)
    assert pairs.setup_hours == pytest.approx(alone.setup_hours / 2, rel=1e-9)
    assert pairs.restarts_by_hand == pytest.approx(alone.restarts_by_hand / 2, rel=1e-9)
    # the same work: 12 reference GPU-h at 2x one T4, against 1.966x
    assert pairs.device_hours * pairs.relative_speed == pytest.approx(alone.device_hours * alone.relative_speed, rel=1e-9)


def test_runs_side_by_side_leave_no_room_for_a_run_on_another_machine(load, catalog):
    """Four seeds of 250 GPU-h due in 9 days (216 h) on four RTX 3090s of your own, a rented 3090
    beside them. By hand, four runs are at most four streams at one 3090 each: 864 of the 1,000
    reference GPU-h, whatever the machines. The four cards carry all four side by side for the
    whole window, so a rented card can carry no fifth: the plan took 136 h on it beside them and
    called the deadline met."""
    text = OWNED.format(own="[rtx-3090, rtx-3090, rtx-3090, rtx-3090]", deadline="2027-01-12").replace(
        "gpu_hours: 40, runs: 8", "gpu_hours: 250, runs: 4")
    p, used = planned(load(text), catalog)
    assert not p.feasible and used == {"own:rtx-3090"}
    (a,) = p.phases[0].assignments
    # each hour of work writes a 0.1 GB checkpoint at 1,800 GB/h (a local disk): 864 / (1 + 0.1 / 1800)
    assert a.side_by_side == 4 and a.gpu_hours == pytest.approx(4 * 216 / (1 + 0.1 / 1800), rel=1e-9)


def test_a_new_offer_of_a_known_provider_downloads_at_the_price_all_its_rows_give(load, catalog):
    """A scenario's own 'aws:box' (or a refreshed instance the catalog does not ship) gives no
    egress price; every AWS row of the catalog charges 0.09 USD/GB out, so it does too, and the
    answer lists it among the defaults the offer took (and AWS's disk price, likewise): its run's
    100 GB at 0.09 is 9 USD. An
    offer of a provider the catalog does not know ('cash:box') has none, and says so."""
    aws, _ = planned(load(WRITES.replace('"cash:box"', '"aws:box"')), catalog)
    assert aws.cost_usd["egress"] == pytest.approx(100 * 0.09, rel=1e-9)
    assert not any("no egress price" in f for f in aws.assumed_figures)
    s = load(WRITES.replace('"cash:box"', '"aws:box"'))
    taken = catalog.defaults_for("rent", s.catalog_entries["rent"][0])
    aws_disk = set(catalog.rent.loc[catalog.rent["provider"] == "aws", "storage_usd_per_gb_month"])
    assert taken["egress_usd_per_gb"] == 0.09 and {taken["storage_usd_per_gb_month"]} == aws_disk  # a disk kept, likewise
    unknown, _ = planned(load(WRITES), catalog)
    assert unknown.cost_usd["egress"] == 0.0 and any("no egress price" in f for f in unknown.assumed_figures)


def test_a_run_of_days_in_one_session_says_what_its_host_must_allow(load, catalog):
    """A Vast host sets a maximum rental duration (docs.vast.ai, catalog long_runs): the lab's 1.3B
    pretrain ran 1,534 h in one session on one Vast 3090 and said nothing of it. A session of more
    than a day on an offer whose rows say what long runs need says so up front, with its length
    (100 h of work on the reference card and its checkpoint writes, in one session); a run of
    hours says nothing. A scenario's own offer of the provider takes the provider's text."""
    import dataclasses

    needs = "a host whose maximum duration exceeds the run"
    rent = catalog.rent.assign(long_runs=[needs if p == "vast" else None for p in catalog.rent["provider"]])
    hosts = dataclasses.replace(catalog, tables={**catalog.tables, "rent": rent})
    long = WRITES.replace("gpu_hours: 10,", "gpu_hours: 100,").replace('"cash:box"', '"vast:box"')
    p, used = planned(load(long), hosts)
    (a,) = p.phases[0].assignments
    assert used == {"vast:box"} and a.sessions == 1 and a.wall_hours > 24
    assert [f for f in p.assumed_figures if "in one session" in f] == [
        f"vast:box: runs of about {a.wall_hours:,.0f} h ({a.wall_hours / 24:,.0f} days) in one session: {needs}"]
    short, _ = planned(load(WRITES.replace('"cash:box"', '"vast:box"')), hosts)  # 12.8 h: a run of hours
    assert not [f for f in short.assumed_figures if "in one session" in f]
    elsewhere, _ = planned(load(long), catalog)  # no row of the provider says it
    assert not [f for f in elsewhere.assumed_figures if "in one session" in f]


def test_a_bucket_of_runs_side_by_side_takes_the_days_its_runs_need():
    """By hand: two runs; a machine carrying both side by side for 24 wall-h is 48 run-hours, and
    24 h on another machine 24 more: 72 run-hours for two runs take 1.5 days, though each machine
    alone would be done in one."""
    from planner.decide import milp

    day = 24.0 * 7  # a week's capacity of a machine open all week
    assert milp.days_needed(np.array([24.0, 24.0]), np.array([day, day]), np.array([1, 1]), 2,
                            np.array([2.0, 1.0])) == pytest.approx(1.5)
    assert milp.days_needed(np.array([24.0, 24.0]), np.array([day, day]), np.array([1, 1]), 2,
                            np.array([1.0, 1.0])) == pytest.approx(1.0)
