"""The optimiser against exhaustive search, hybrids, and monotonicity properties."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import planner
from planner.cli import main
from planner.decide import milp
from planner.decide.optimize import STRATEGIES, card_costs
from planner.decide.options import build_options
from planner.decide.quotes import exclusions, quote, quote_table

from .conftest import SCENARIOS, examples
from .test_plan import BASE

TEMPLATE = """\
name: small
start: 2027-01-04
electricity: {power_price} USD/kWh
workload:
  family: cnn
  params: 25M
  activation_memory: 4 GB
  reference_gpu: rtx-3090
phases:
  a:
    gpu_hours: {hours_a}
    from: 2027-01-04
    deadline: {deadline_a}
    checkpoint_size: 0.36 GB
  b:
    gpu_hours: {hours_b}
    runs: 2
    from: 2027-04-05
    deadline: {deadline_b}
    checkpoint_size: 0.36 GB
you:
  host_power: 100 W
  time_value: 10 USD/h
  attention: 2/day
{budget}consider:
  buy: [card-x, card-y]
  rent: [slow-cheap, fast-dear]
  free: [quota-tier]
catalog:
  buy:
    - {{id: card-x, device: rtx-3090, condition: used, price: {price_x} USD, resale: 40%, power: 350 W}}
    - {{id: card-y, device: rtx-4090, condition: new, price: 1600 USD, resale: 50%, power: 450 W}}
  rent:
    - {{id: slow-cheap, device: t4, price: {rent_slow} USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
    - {{id: fast-dear, device: a100-40gb, price: {rent_fast} USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
  free:
    - {{id: quota-tier, device: t4, quota: {quota} h/week, session_limit: 12 h, setup: 0 min, needs_person: false}}
"""

DEFAULTS = dict(power_price=0.20, hours_a=300, deadline_a="2027-03-29", hours_b=200, deadline_b="2027-06-28",
                price_x=900, rent_slow=0.30, rent_fast=1.80, quota=30, budget="")


def scenario(load, **kw):
    return load(TEMPLATE.format(**{**DEFAULTS, **kw}))


def brute_force(s, catalog) -> float:
    """Every single-option-per-phase plan with every set of purchases; the cheapest that meets the deadlines."""
    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    q = quote(s, opts, exclusions(s, opts, cat.devices, cat.throughput)).set_index(["phase", "option"])
    net = {b: p - r for b, (p, r) in card_costs(s, opts).items()}
    phases = [p.name for p in s.phases]
    best = math.inf
    for bought in itertools.chain.from_iterable(itertools.combinations(net, k) for k in range(len(net) + 1)):
        allowed = set(opts.loc[opts["kind"] != "buy", "option"]) | set(bought)
        for choice in itertools.product(sorted(allowed), repeat=len(phases)):
            if any((p, o) not in q.index or not q.loc[(p, o), "ok"] for p, o in zip(phases, choice)):
                continue
            if any(b not in choice for b in bought):
                continue  # a card nobody uses is never cheaper
            money = sum(net[b] for b in bought) + sum(q.loc[(p, o), "cost_usd"] - q.loc[(p, o), "your_time_usd"]
                                                     for p, o in zip(phases, choice))
            if s.you.budget_usd is not None and money > s.you.budget_usd + 1e-6:
                continue
            total = money + sum(q.loc[(p, o), "your_time_usd"] for p, o in zip(phases, choice))
            best = min(best, total)
    return best


def all_options_finish_in_time(s, catalog) -> bool:
    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    return bool(quote(s, opts, exclusions(s, opts, cat.devices, cat.throughput))["ok"].all())


@settings(max_examples=examples(25), deadline=None)
@given(power=st.sampled_from([0.10, 0.30, 0.60]), hours_a=st.integers(50, 600), hours_b=st.integers(20, 400),
       price_x=st.integers(300, 2000), rent_slow=st.sampled_from([0.10, 0.30, 0.90]),
       rent_fast=st.sampled_from([0.8, 1.8, 4.0]))
def test_milp_equals_exhaustive_search_when_no_capacity_binds(load, catalog, power, hours_a, hours_b, price_x,
                                                             rent_slow, rent_fast):
    # every option can do each phase alone in time and costs are linear in hours: the best plan uses one
    # option per phase, which exhaustive search enumerates (with every set of purchases)
    text = TEMPLATE.format(**{**DEFAULTS, "power_price": power, "hours_a": hours_a, "hours_b": hours_b,
                              "price_x": price_x, "rent_slow": rent_slow, "rent_fast": rent_fast})
    s = load(text.replace("free: [quota-tier]", "free: []"))
    assume(all_options_finish_in_time(s, catalog))
    p = planner.plan(s, catalog, trials=10, alternatives=False)
    assert p.feasible
    assert p.total_usd == pytest.approx(brute_force(s, catalog), rel=1e-6, abs=1e-4)


@settings(max_examples=examples(25), deadline=None)
@given(hours_a=st.integers(50, 900), quota=st.sampled_from([5, 10, 20, 30]), price_x=st.integers(300, 2000))
def test_hybrid_is_never_dearer_than_the_best_single_option_plan(load, catalog, hours_a, quota, price_x):
    s = scenario(load, hours_a=hours_a, quota=quota, price_x=price_x)
    p = planner.plan(s, catalog, trials=10, alternatives=False)
    brute = brute_force(s, catalog)
    if math.isfinite(brute):
        assert p.feasible and p.total_usd <= brute + 1e-4


def test_free_quota_with_rent_overflow_by_hand(load):
    # 300 h on a T4 tier capped at 10 h/week over 12 weeks, the rest rented: a genuine hybrid
    text = TEMPLATE.format(**{**DEFAULTS, "hours_a": 300, "quota": 10, "rent_slow": 5.0, "rent_fast": 9.0})
    s = load(text.replace("buy: [card-x, card-y]", "buy: []"))
    s = dataclasses.replace(s, phases=s.phases[:1])
    p = planner.plan(s, trials=10)
    kinds = {a.kind for a in p.phases[0].assignments}
    assert kinds == {"free", "rent"}
    free = next(a for a in p.phases[0].assignments if a.kind == "free")
    # 2027-01-04 .. 2027-03-29, both days inclusive: 85 days = 12 quota weeks from Monday 2027-01-04 and
    # one day of a 13th; the tier publishes no reset day, so its weeks start on the scenario's start
    # weekday, and the 13th week's one day keeps the whole 10 h (12 h sessions fit in a day): 13 x 10 h
    # the quota holds the wall hours at the scenario's 90 % confidence (the tier is interrupted: its default rate)
    q = p.quotes.set_index("option").loc["quota-tier"]
    assert free.wall_hours * q["wall_hours_conf"] / q["wall_hours"] == pytest.approx(13 * 10, rel=1e-6)
    assert q["wall_hours_conf"] > q["wall_hours"]
    single = brute_force(s, planner.api.default_catalog())
    assert p.total_usd < single


def test_owned_card_is_shared_by_overlapping_phases(load):
    text = TEMPLATE.format(**{**DEFAULTS, "hours_a": 1000, "hours_b": 1000, "deadline_a": "2027-03-01"}).replace(
        "from: 2027-04-05", "from: 2027-01-04").replace("deadline: 2027-06-28", "deadline: 2027-03-01")
    text = text.replace("you:\n", "you:\n  own: [rtx-3090]\n")
    s = load(text)
    p = planner.plan(s, trials=10, alternatives=False)
    sched = p.schedule
    own = sched[sched["option"] == "own:rtx-3090"]
    # both phases together never use the card more than 168 h in a week
    assert own.groupby("week")["wall_hours"].sum().max() <= 168 + 1e-6


def test_budget_binds_and_says_so(load):
    s = scenario(load, budget="  budget: 20 USD\n".replace("  budget", "  budget"))
    text = TEMPLATE.format(**{**DEFAULTS, "budget": ""}).replace("  attention: 2/day\n",
                                                                "  attention: 2/day\n  budget: 20 USD\n")
    s = load(text)
    p = planner.plan(s, trials=10)
    assert not p.feasible and p.over_budget
    assert any("more than the budget" in w for w in p.warnings)
    assert p.money_usd <= 20 + 1e-6


def test_problem_is_built_without_solving(load, catalog):
    s = scenario(load)
    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    q = quote_table(s, opts, exclusions(s, opts, cat.devices, cat.throughput))
    problem = milp.build(s, q, opts, card_costs(s, opts), STRATEGIES["hybrid"])
    assert problem.n_vars == len(problem.x_index) + len(problem.buy_index) + len(problem.unmet_index)
    assert set(problem.buy_index) == {"card-x", "card-y"}
    assert problem.integrality.sum() == 2  # the two purchases


def test_a_program_without_its_budget_is_the_one_built_without_one(load, catalog):
    # a candidate card past the budget is planned again without it (the cash it would need) from
    # the candidates' one build, its budget row dropped: the very program a build without a budget makes
    text = TEMPLATE.format(**{**DEFAULTS, "budget": ""}).replace("  attention: 2/day\n",
                                                                "  attention: 2/day\n  budget: 20 USD\n")
    s = load(text)
    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    q = quote_table(s, opts, exclusions(s, opts, cat.devices, cat.throughput))
    forced = {"card-x": 1, "card-y": 0}
    budgeted = milp.build(s, q, opts, card_costs(s, opts), STRATEGIES["hybrid"], forced=forced)
    unbounded = milp.build(s, q, opts, card_costs(s, opts), STRATEGIES["hybrid"], budget_usd=math.inf, forced=forced)
    dropped = milp.without_budget(budgeted)
    assert "budget" in {b.family for b in budgeted.blocks} and budgeted.n_constraints == dropped.n_constraints + 1
    a, b = dropped.rows(), unbounded.rows()
    for field in ("lower", "upper", "start", "index", "value"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert np.array_equal(dropped.c, unbounded.c) and np.array_equal(dropped.integrality, unbounded.integrality)
    assert np.array_equal(dropped.bounds.lb, unbounded.bounds.lb) and np.array_equal(dropped.bounds.ub, unbounded.bounds.ub)


def _candidates_program(load, catalog, budget=None, host=True):
    """The candidates' one program of the small scenario (both cards forced out) and its plan;
    ``host``: whether you have a computer to put a card in (else the program may buy one)."""
    text = TEMPLATE.format(**DEFAULTS).replace("you:\n", "you:\n" if host else "you:\n  host_machine: false\n"
                                                                                 "  host_price: 700 USD\n")
    if budget:
        text = text.replace("  attention: 2/day\n", f"  attention: 2/day\n  budget: {budget}\n")
    s = load(text)
    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    q = quote_table(s, opts, exclusions(s, opts, cat.devices, cat.throughput))
    program = milp.build(s, q, opts, card_costs(s, opts), STRATEGIES["hybrid"], forced={"card-x": 0, "card-y": 0})
    return program, milp.solve(program)


@pytest.mark.parametrize("host", [True, False])
def test_a_card_bought_unused_is_a_plan_of_its_candidates_program(load, catalog, host):
    # each card's search starts from the plan that buys nothing with the card bought and left
    # unused: a plan of the program with the card forced, dearer by the card (and a host computer
    # where you have none)
    nothing, sol = _candidates_program(load, catalog, host=host)
    assert sol.ok and nothing.holds(sol.x) and (nothing.host_index is None) == host
    forced = milp.with_forced(nothing, {"card-x": 1, "card-y": 0})
    assert not forced.holds(sol.x)  # the card must be bought there
    start = milp.bought_unused(forced, sol.x, "card-x")
    assert forced.holds(start) and not nothing.holds(start)
    extra = forced.c[forced.buy_index["card-x"]] + (0.0 if host else forced.c[forced.host_index])
    assert float(forced.c @ start) == pytest.approx(float(forced.c @ sol.x) + extra, abs=1e-9)
    assert np.array_equal(start[: len(forced.x_index)], sol.x[: len(forced.x_index)])  # the same hours: the card idle
    assert host or forced.c[forced.host_index] == 700.0


def test_a_plan_is_told_from_what_breaks_a_row_a_bound_or_a_whole_number(load, catalog):
    program, sol = _candidates_program(load, catalog, host=False)
    assert program.holds(sol.x) and program.host_index is not None
    unit = np.eye(program.n_vars)
    work = program.unmet_index["a"]
    hours = sol.x[: len(program.x_index)]
    busiest = int(np.argmax(hours))
    idle = np.flatnonzero((program.x_index.phase == "a") & (program.x_index.kind == "rent") & (hours == 0))
    shifted = sol.x + unit[idle[0]] - unit[work]  # an hour more rented and -1 h unmet: phase a's work as it was
    assert sol.x[work] == 0
    for broken in (sol.x + unit[work] * 1e-6,  # phase a's work past its GPU-hours (a row)
                   sol.x - unit[busiest] * 2.0,  # and short of them
                   np.where(np.arange(program.n_vars) == program.host_index, 0.5, sol.x),  # half a host: no row breaks
                   np.where(np.arange(program.n_vars) == program.host_index, 2.0, sol.x),  # two: past its bound
                   shifted):  # below a bound (unmet work), every row kept
        assert not program.holds(broken)
    assert program.holds(sol.x + unit[work] * 5e-8)  # within the tolerance, a tenth of HiGHS's


@pytest.mark.parametrize("budget, handed", [(None, True), ("1000 USD", False)])
def test_a_search_from_a_start_finds_the_plan_it_finds_without(load, catalog, monkeypatch, budget, handed):
    # a start changes how fast HiGHS finds the plan, never which: the same purchases and cost; one
    # that breaks a row (the card past the budget) is not handed to HiGHS, which would repair it
    program, base = _candidates_program(load, catalog, budget)
    forced = milp.with_forced(program, {"card-x": 0, "card-y": 1})
    start = milp.bought_unused(forced, base.x, "card-y")
    assert forced.holds(start) == handed
    given = []  # the start each search is handed
    real = milp.highs

    def spy(c, rows, bounds, integrality, options, start=None):
        if integrality.any():
            given.append(start)
        return real(c, rows, bounds, integrality, options, start)

    monkeypatch.setattr(milp, "highs", spy)
    cold, warm = milp.solve(forced), milp.solve(forced, start=start)
    assert len(given) == 2 and given[0] is None and (given[1] is not None) == handed
    assert cold.ok == warm.ok and warm.objective == pytest.approx(cold.objective, rel=1e-9)
    whole = forced.integrality > 0
    assert np.array_equal(cold.x[whole], warm.x[whole]) and np.allclose(cold.x, warm.x, atol=1e-9)


@settings(max_examples=examples(15), deadline=None)
@given(hours_a=st.integers(50, 900), quota=st.sampled_from([5, 30]), factor=st.floats(0.3, 0.95))
def test_a_lower_price_never_raises_the_optimum(load, catalog, hours_a, quota, factor):
    base = planner.plan(scenario(load, hours_a=hours_a, quota=quota), catalog, trials=10, alternatives=False)
    cheaper = planner.plan(scenario(load, hours_a=hours_a, quota=quota, rent_slow=round(0.30 * factor, 4),
                                    price_x=int(900 * factor)), catalog, trials=10, alternatives=False)
    assume(base.feasible)
    assert cheaper.feasible and cheaper.total_usd <= base.total_usd + 1e-4


@settings(max_examples=examples(15), deadline=None)
@given(hours_a=st.integers(50, 1500), weeks=st.integers(1, 12))
def test_a_later_deadline_never_raises_the_optimum(load, catalog, hours_a, weeks):
    import datetime as dt

    base = planner.plan(scenario(load, hours_a=hours_a), catalog, trials=10, alternatives=False)
    later = (dt.date(2027, 3, 29) + dt.timedelta(weeks=weeks)).isoformat()
    moved = planner.plan(scenario(load, hours_a=hours_a, deadline_a=later), catalog, trials=10, alternatives=False)
    assume(base.feasible)
    assert moved.feasible and moved.total_usd <= base.total_usd + 1e-4


@settings(max_examples=examples(15), deadline=None)
@given(hours_a=st.integers(50, 900), budget=st.integers(250, 1500), extra=st.integers(1, 2000))
def test_a_bigger_budget_never_raises_the_optimum(load, catalog, hours_a, budget, extra):
    def with_budget(b):
        text = TEMPLATE.format(**{**DEFAULTS, "hours_a": hours_a}).replace(
            "  attention: 2/day\n", f"  attention: 2/day\n  budget: {b} USD\n")
        return planner.plan(load(text), catalog, trials=10, alternatives=False)

    small, big = with_budget(budget), with_budget(budget + extra)
    assume(small.feasible)
    assert big.feasible and big.total_usd <= small.total_usd + 1e-4


def test_pareto_front_trades_money_for_time():
    result = CliRunner().invoke(main, ["run", str(SCENARIOS / "lab.yaml"), "--pareto", "--format", "json",
                                       "--trials", "10"])
    d = json.loads(result.output)
    front = d["pareto"]
    assert front, result.output
    finishes = [p["finish"] for p in front]
    costs = [p["total_cost"] for p in front]
    assert finishes == sorted(finishes) and costs == sorted(costs, reverse=True)


def test_unused_options_say_why(load):
    p = planner.plan(scenario(load), trials=10)
    reasons = {(e.option, e.phase): e.reason for e in p.excluded.itertuples()}
    assert any(r.startswith("dearer") for r in reasons.values())


def test_a_solutions_money_reads_the_same_every_way(load):
    """The total, its items (the over-budget message) and the cumulative curve (the chart) are
    three views of one solution's money: they agree, with a card bought and sold."""
    from planner.decide import optimize
    from planner.decide.options import build_options
    from planner.decide.quotes import exclusions, quote_table

    s = load(BASE.format(hours=2000, deadline="2027-12-31", buy="my-card", rent="uni-cluster", free=""))
    catalog = planner.api.shipped_catalog().with_entries(s.catalog_entries)
    opts = build_options(s, catalog)
    q = optimize.prune(quote_table(s, opts, exclusions(s, opts, catalog.devices, catalog.throughput)))
    solved = optimize._solve(s, q, opts, optimize.STRATEGIES["buy-only"], optimize.card_costs(s, opts))
    assert solved.bought == ["my-card"] and solved.resale_usd > 0
    assert sum(solved.money_items().values()) == pytest.approx(solved.money_usd)
    assert solved.cumulative()[-1] == (s.horizon_end, pytest.approx(solved.money_usd))
    assert solved.cumulative()[0] == (s.start, pytest.approx(solved.cards["my-card"][0]))


def test_the_host_is_bought_with_the_card_it_serves(load):
    """With buy_later a card for work that starts in June is bought then; the host it needs is
    bought with it, not on the first day: the curve of money spent (the chart) held the host's
    500 USD from January. It still ends at the solution's money."""
    from planner.decide import optimize
    from planner.decide.options import build_options
    from planner.decide.quotes import exclusions, quote_table

    text = BASE.format(hours=300, deadline="2027-12-31", buy="my-card", rent="", free="").replace(", resale: 40%", "")
    text = text.replace("start: 2027-01-04\n", "start: 2027-01-04\nbuy_later: 1 month\n").replace(
        "    deadline: 2027-12-31\n", "    from: 2027-06-01\n    deadline: 2027-12-31\n").replace(
        "  host_power: 100 W\n", "  host_power: 100 W\n  host_price: 500 USD\n")
    s = load(text)
    catalog = planner.api.shipped_catalog().with_entries(s.catalog_entries)
    opts = build_options(s, catalog)
    q = optimize.prune(quote_table(s, opts, exclusions(s, opts, catalog.devices, catalog.throughput)))
    solved = optimize._solve(s, q, opts, optimize.STRATEGIES["buy-only"], optimize.card_costs(s, opts))
    day = solved.bought_on["my-card"].day
    assert solved.host_bought and day > 0 and solved.host_day() == day
    curve = dict(solved.cumulative())
    before = [usd for when, usd in curve.items() if when <= s.start + dt.timedelta(days=day // 7 * 7)]
    assert max(before) < 1.0  # nothing bought, nothing run, before the card's week
    week_end = s.start + dt.timedelta(days=day // 7 * 7 + 7)
    assert curve[week_end] >= 500 + solved.bought_on["my-card"].price_usd - 1e-6  # card and host that week
    assert solved.cumulative()[-1] == (s.horizon_end, pytest.approx(solved.money_usd))
    # a card you own needs the host from the first week it works (here June's)
    own = load(text.replace("buy: [my-card]", "buy: []").replace("  host_power: 100 W\n",
                                                                   "  host_power: 100 W\n  own: [rtx-3090]\n"))
    opts = build_options(own, catalog)
    q = optimize.prune(quote_table(own, opts, exclusions(own, opts, catalog.devices, catalog.throughput)))
    mine = optimize._solve(own, q, opts, optimize.STRATEGIES["buy-only"], optimize.card_costs(own, opts))
    first = int(mine.program.x_index.week[mine.sol.x[: len(mine.program.x_index)] > 1e-9].min())
    assert mine.host_bought and first > 0 and mine.host_day() == 7 * first
    assert dict(mine.cumulative())[own.start + dt.timedelta(days=7 * first)] < 1.0


CARDS = """\
name: cards
start: 2027-01-04
horizon: 6 months
electricity: {power} USD/kWh
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: {hours_a}, deadline: {deadline_a}}}
  b: {{gpu_hours: {hours_b}, from: 2027-02-01, deadline: 2027-06-30}}
you: {{attention: 3/day, host_power: {host} W}}
consider: {{buy: [c1, c2, c3, c4], rent: [box], free: []}}
catalog:
  buy:
    - {{id: c1, device: rtx-3090, condition: used, price: {p1} USD}}
    - {{id: c2, device: rtx-3090, condition: new, price: {p2} USD}}
    - {{id: c3, device: rtx-4090, condition: new, price: {p3} USD}}
    - {{id: c4, device: rtx-4060, condition: new, price: {p4} USD, resale: {r4}%}}
  rent:
    - {{id: box, device: a100-40gb, price: {rent} USD/h, billing: 1 s}}
"""


def _solve_with(s, dominated):
    from planner.decide import optimize

    catalog = planner.api.shipped_catalog().with_entries(s.catalog_entries)
    opts = build_options(s, catalog)
    all_quotes = quote_table(s, opts, exclusions(s, opts, catalog.devices, catalog.throughput))
    cards = optimize.card_costs(s, opts)
    found = optimize.dominated_cards(all_quotes, cards) if dominated else {}
    return optimize._solve(s, optimize.prune(all_quotes, found), opts, STRATEGIES["hybrid"], cards), found


def test_a_dominated_card_is_pruned_by_hand(load):
    # c2 is the same card as c1, dearer and new (resale 65 % of 1500 = 975 after a year, less the
    # 12.9 % fee: 849 back; net 651, against c1's used 700 less 87.5 % x 0.871 x 700 = 533.6 back:
    # net 166): c1 dominates c2. c3 (a 4090) is faster, so not dominated.
    s = load(CARDS.format(power=0.2, host=100, hours_a=300, deadline_a="2027-03-01", hours_b=300, p1=700, p2=1500,
                          p3=1800, p4=300, r4=40, rent=2.0))
    _, found = _solve_with(s, True)
    assert found.get("c2") == "c1" and "c3" not in found and "c1" not in found


@settings(max_examples=examples(20), deadline=None)
@given(power=st.sampled_from([0.1, 0.4]), host=st.sampled_from([0, 100]), hours_a=st.sampled_from([20, 300, 1500]),
       deadline_a=st.sampled_from(["2027-01-20", "2027-03-01"]), hours_b=st.sampled_from([50, 800]),
       p1=st.sampled_from([500, 900]), p2=st.sampled_from([700, 1500]), p3=st.sampled_from([900, 1800]),
       p4=st.sampled_from([200, 300]), r4=st.sampled_from([10, 60]), rent=st.sampled_from([0.3, 2.0]))
def test_pruning_dominated_cards_never_changes_the_optimum(load, **kw):
    s = load(CARDS.format(**kw))
    pruned, found = _solve_with(s, True)
    everything, _ = _solve_with(s, False)
    assert pruned.total_usd == pytest.approx(everything.total_usd, rel=1e-6)  # HiGHS' gap is 1e-7
    assert pruned.unmet.keys() == everything.unmet.keys()
    assert not set(found) & set(pruned.bought)


def _table(rows):
    """Quotes made of ``rows`` (their fields; the rest as an option that offers no hours has them)."""
    from planner.model.records import QuoteTable, no_hours_quote

    return QuoteTable.of(no_hours_quote(r) for r in rows)


def test_a_cheaper_but_slower_card_does_not_dominate():
    """A low-power card can cost less to run per reference hour and yet take longer: where a
    deadline binds its speed matters, so it prunes nothing (and a faster, dearer card stays)."""
    from planner.decide import optimize

    def row(option, cost, wall):
        return dict(option=option, phase="a", kind="buy", usable=True, cost_usd=cost, your_time_usd=0.0, carbon_usd=0.0,
                    wall_hours=wall, wall_hours_conf=wall, weekly_capacity_h=168.0, open_capacity_h=168.0,
                    needs_person=False)

    quotes = _table([row("slow", 10.0, 250.0), row("fast", 12.0, 100.0), row("same-but-dear", 12.0, 100.0)])
    found = optimize.dominated_cards(quotes, {"slow": (300.0, 0.0), "fast": (500.0, 0.0),
                                              "same-but-dear": (900.0, 0.0)})
    assert found == {"same-but-dear": "fast"}


def test_of_two_offers_the_one_with_fewer_hours_to_give_is_pruned():
    """Dominance is everywhere at least as good, capacity included: of two offers alike but for
    the hours a week they give (or give in the phase's window), the one with fewer is pruned,
    never the one with more, though it comes first by id (the tie-break between equals)."""
    from planner.decide import optimize

    def row(option, week_h, open_h):
        return dict(option=option, phase="a", kind="rent", usable=True, cost_usd=10.0, your_time_usd=0.0, carbon_usd=0.0,
                    wall_hours=100.0, wall_hours_conf=100.0, weekly_capacity_h=week_h, open_capacity_h=open_h,
                    needs_person=False, supply=float("nan"))

    less = {"a-less": "b-more"}
    assert optimize.dominated_rents(_table([row("a-less", 84.0, 168.0), row("b-more", 168.0, 168.0)])) == less
    assert optimize.dominated_rents(_table([row("a-less", 168.0, 84.0), row("b-more", 168.0, 168.0)])) == less
    assert optimize.dominated_rents(_table([row("a-same", 168.0, 168.0), row("b-same", 168.0, 168.0)])) == {
        "b-same": "a-same"}
    # and instances to be had at once: one a marketplace has 2 of at that price, the other any number
    scarce, plenty = row("a-scarce", 168.0, 168.0), row("b-plenty", 168.0, 168.0)
    scarce["supply"] = 2.0
    assert optimize.dominated_rents(_table([scarce, plenty])) == {"a-scarce": "b-plenty"}


def test_an_offer_slower_at_the_confidence_does_not_dominate():
    """The program gives each phase and week the wall hours at the scenario's confidence (its
    capacity, its concurrency), not the expected ones: an interruptible offer cheaper and
    quicker on average but slower at the confidence (its interruptions spread its hours) may miss
    a deadline the steady one meets, so it prunes nothing."""
    from planner.decide import optimize

    def row(option, cost, wall, conf):
        return dict(option=option, phase="a", kind="rent", usable=True, cost_usd=cost, your_time_usd=0.0,
                    carbon_usd=0.0, wall_hours=wall, wall_hours_conf=conf, weekly_capacity_h=168.0,
                    open_capacity_h=168.0, needs_person=False, supply=float("nan"))

    spread = _table([row("a-spot", 80.0, 100.0, 130.0), row("b-steady", 100.0, 101.0, 101.0)])
    assert optimize.dominated_rents(spread) == {}
    steady = _table([row("a-spot", 80.0, 100.0, 100.5), row("b-steady", 100.0, 101.0, 101.0)])
    assert optimize.dominated_rents(steady) == {"b-steady": "a-spot"}


TERMS = """\
name: terms
start: 2027-01-04
workload: {{family: transformer, params: 300M, reference_gpu: a100-80gb}}
{trend}
phases:
  a: {{gpu_hours: {hours}, deadline: 2027-03-31}}
  b: {{gpu_hours: 200, from: 2027-04-01, deadline: 2027-09-30}}
consider: {{buy: [], free: [], rent: [hourly, monthly, weekly-block]}}
catalog:
  rent:
    - {{id: hourly, device: a100-80gb, price: 1.50 USD/h, billing: 1 s}}
    - {{id: monthly, device: a100-80gb, price: {monthly} USD/h, term: 30 days, billing: 1 s}}
    - {{id: weekly-block, device: a100-80gb, price: {block} USD/h, term: 7 days, billing: 1 s}}
"""


def _terms_plan(load, monkeypatch, prune_terms, **kw):
    from planner.decide import optimize

    if not prune_terms:  # every commitment back in the program: the optimum over all of them
        real = optimize.dominated_rents
        monkeypatch.setattr(optimize, "dominated_rents",
                            lambda q, credited, committed, capped, flat: real(q, credited, committed, capped, False))
    text = TERMS.format(**{"trend": "", "hours": 300, "monthly": 1.0, "block": 1.60, **kw})
    return planner.plan(load(text), planner.api.shipped_catalog(), trials=0, alternatives=False)


@pytest.mark.parametrize(("hours", "monthly"), [(300, 1.0), (300, 1.55), (300, 3.0), (30, 1.0), (1200, 2.5)])
def test_a_commitment_no_cheaper_by_the_hour_than_an_offer_by_the_hour_is_pruned_and_the_optimum_stays(
        load, monkeypatch, hours, monthly):
    """A weekly block at 1.60 USD/h, the same A100 as an hourly offer at 1.50, costs at least
    1.60 an hour its instances run: the hourly offer does any of its work for less, so it is
    pruned, named as such, and so is a monthly term at 1.55 or 3.00 USD/h; at 1.00 USD/h it is not
    (fully used, it is cheaper). The plan's cost is the optimum with every commitment in the
    program (brute force: the same plan without the pruning)."""
    pruned = _terms_plan(load, monkeypatch, True, hours=hours, monthly=monthly)

    def reasons(option):
        return [str(r) for o, r in zip(pruned.excluded["option"], pruned.excluded["reason"]) if o == option]

    assert reasons("weekly-block") and all(r.startswith("never better than renting hourly")
                                           for r in reasons("weekly-block"))
    assert any(r.startswith("never better") for r in reasons("monthly")) == (monthly > 1.5)
    everything = _terms_plan(load, monkeypatch, False, hours=hours, monthly=monthly)
    assert pruned.total_usd == pytest.approx(everything.total_usd, rel=1e-7)
    assert pruned.problem_size[0] < everything.problem_size[0]


@settings(max_examples=examples(20), deadline=None)
@given(hours=st.sampled_from([30, 300, 1200, 3000]), monthly=st.sampled_from([0.8, 1.2, 1.49, 1.5, 1.51, 2.5]),
       block=st.sampled_from([1.0, 1.45, 1.5, 1.6]))
def test_pruning_commitments_never_changes_the_optimum(load, hours, monthly, block):
    """Whatever the terms' prices against the hourly offer's 1.50 USD/h and however much work,
    the plan with the commitments pruned costs what the program with all of them costs."""
    with pytest.MonkeyPatch.context() as m:
        pruned = _terms_plan(load, m, True, hours=hours, monthly=monthly, block=block)
        everything = _terms_plan(load, m, False, hours=hours, monthly=monthly, block=block)
    assert pruned.total_usd == pytest.approx(everything.total_usd, rel=1e-7)
    assert pruned.feasible == everything.feasible


def test_work_left_undone_beside_cheap_terms_says_the_deadline_that_would_do_and_it_holds(load):
    """3,000 h due in 12 weeks, one run at a time (168 h a week at most): 940 h stay undone. The
    earliest deadline that would do is searched by planning again; with weekly blocks and monthly
    terms cheaper than the hourly offer, each of those plans was a search over which weeks, none
    proven in 30 s, and the whole answer failed ('no proven plan'). Whether the work can be done
    does not need the cheapest way to do it (milp.work_left): the answer names the deadline, by
    hand 3,000 h / 168 h a week and its writes from 2027-01-04, and planning at it meets it, a
    day before it does not."""
    import re

    def plan(deadline=None):
        text = TERMS.format(trend="", hours=3000, monthly=1.2, block=1.0)
        if deadline:
            text = text.replace("deadline: 2027-03-31", f"deadline: {deadline}")
        return planner.plan(load(text), planner.api.shipped_catalog(), trials=0, alternatives=False)

    p = plan()
    a = p.phases[0]
    assert not a.meets_deadline and a.shortfall is not None
    fix = dt.date.fromisoformat(re.search(r"A deadline on or after (\d{4}-\d{2}-\d{2})", a.shortfall).group(1))
    assert dt.date(2027, 1, 4) + dt.timedelta(weeks=3000 / 168) <= fix <= dt.date(2027, 5, 17)
    assert plan(fix).phases[0].meets_deadline
    assert not plan(fix - dt.timedelta(days=1)).phases[0].meets_deadline


TIER = """\
name: a tier by the month beside an offer by the hour
start: 2027-01-04
workload: {{family: transformer, params: 300M, reference_gpu: a100-40gb}}
phases:
  a: {{gpu_hours: {hours}, deadline: 2027-06-30}}
consider: {{buy: [], free: [colab-pro], rent: [by-hour]}}
catalog:
  rent:
    - {{id: by-hour, device: a100-40gb, price: {price} USD/h, billing: 1 s}}
"""


def _tier_plan(load, catalog, monkeypatch, prune, **kw):
    from planner.decide import optimize

    if not prune:  # the tier's months back in the program: the optimum over all of it
        monkeypatch.setattr(optimize, "dominated_tiers", lambda *a, **k: {})
    return planner.plan(load(TIER.format(**kw)), catalog, trials=0, alternatives=False)


@pytest.mark.parametrize(("price", "pruned"), [(0.10, True), (1.0, True), (1.5, True), (1.58, False), (2.0, False)])
def test_a_tier_by_the_month_is_pruned_only_where_an_offer_by_the_hour_does_all_its_work_for_less(
        load, catalog, monkeypatch, price, pruned):
    """Colab Pro: 9.99 USD for 100 units a month, a T4 burning 1.86 units an hour, an A100 13.08
    (the frozen catalog): fully used, 0.19 and 1.31 USD an hour. 200 h on the tier's A100 burn
    238 h x 13.08 units (311 USD of fees), on its T4 1,780 h x 1.86 (330 USD), on its V100 329
    USD; on an A100 by the hour 203 h. At 0.10, 1.00 or 1.50 USD an hour (304.5 USD, under the
    fees the A100's hours burn though above the 299.70 its quote alone pays for its months) that is
    cheaper than each of the tier's devices fully used, and faster: the whole tier is pruned. At
    1.58 USD (321 USD) it
    beats the T4 and the V100 but not the tier's A100, so none is: a month paid for the A100 makes
    the T4's hours free at the margin. At 2.00 USD none."""
    from planner.decide import optimize
    from planner.decide.options import subscriptions_of

    p = _tier_plan(load, catalog, monkeypatch, True, hours=200, price=price)
    subs = subscriptions_of(p.options)
    assert set(subs) == {"colab-pro:t4", "colab-pro:v100-16gb", "colab-pro:a100-40gb"}
    found = optimize.dominated_tiers(p.quote_table, subs)
    assert found == (dict.fromkeys(subs, "by-hour") if pruned else {})
    everything = _tier_plan(load, catalog, monkeypatch, False, hours=200, price=price)
    assert (p.problem_size[0] < everything.problem_size[0]) == pruned  # the tier's months left out


def test_a_tier_by_the_month_is_one_binary_a_month_whatever_its_devices(load, catalog, monkeypatch):
    """Colab Pro's T4, V100 and A100 each give the tier's 100 units a month as their hours a month
    x their units an hour, equal but for rounding (100.0, 100.00000000000001): the program has one
    binary per month of the tier, granting 100 units, not one per rounding of them (two a month,
    one never used). Over January to June: six."""
    from planner.decide import optimize

    p = _tier_plan(load, catalog, monkeypatch, False, hours=200, price=2.0)
    s = load(TIER.format(hours=200, price=2.0))
    program = milp.build(s, p.quote_table, p.options, card_costs(s, p.options), optimize.STRATEGIES["hybrid"])
    months = [(z.option, z.day) for z in program.commit_vars if z.subscription]
    assert len(months) == len(set(months)) == 6 and {t for t, _ in months} == {"colab-pro"}
    assert all(z.units == pytest.approx(100.0) and z.usd == pytest.approx(9.99) for z in program.commit_vars)


@settings(max_examples=examples(20), deadline=None)
@given(hours=st.sampled_from([20, 200, 800]), price=st.sampled_from([0.05, 0.10, 0.5, 1.2, 2.0]))
def test_pruning_a_tier_by_the_month_never_changes_the_optimum(load, catalog, hours, price):
    with pytest.MonkeyPatch.context() as m:
        pruned = _tier_plan(load, catalog, m, True, hours=hours, price=price)
        everything = _tier_plan(load, catalog, m, False, hours=hours, price=price)
    assert pruned.total_usd == pytest.approx(everything.total_usd, rel=1e-7)
    assert pruned.feasible == everything.feasible


PACKS = """\
name: packs of units beside an offer by the hour
start: 2027-01-04
workload: {{family: transformer, params: 300M, reference_gpu: t4}}
phases:
  a: {{gpu_hours: {hours}, deadline: 2027-03-31}}
consider: {{buy: [], free: [colab-payg], rent: [by-hour]}}
catalog:
  rent:
    - {{id: by-hour, device: t4, price: {price} USD/h, billing: 1 s}}
"""


@settings(max_examples=examples(20), deadline=None)
@given(hours=st.sampled_from([5, 40, 120, 300]), price=st.sampled_from([0.02, 0.1, 0.3, 1.0]))
def test_packs_of_units_match_a_search_over_their_count(load, catalog, hours, price):
    """The plan against an independent optimum written from the contract: for each count of packs
    n (9.99 USD for 100 units, frozen catalog's colab-payg), a linear program puts the hours
    where they cost least (the tier's hours at their cost less rent, their units at the
    confidence at most 100 n; the offer by the hour at its cost), and the best n wins. One phase
    within one stretch of 90 days, a deadline far enough that no capacity binds."""
    from scipy.optimize import linprog

    from planner.decide.options import packs_of

    p = planner.plan(load(PACKS.format(hours=hours, price=price)), catalog, trials=0, alternatives=False)
    assert p.feasible
    q = p.quotes[p.quotes["usable"].astype(bool) & np.isfinite(p.quotes["wall_hours"].to_numpy(dtype=float))]
    packed = packs_of(p.options)
    on_tier = q["option"].isin(list(packed)).to_numpy()
    per_ref = (q["cost_usd"].to_numpy(dtype=float) - np.where(on_tier, q["rent_usd"].to_numpy(dtype=float), 0.0)) / hours
    units = np.where(on_tier, q["wall_hours_conf"].to_numpy(dtype=float) / hours
                     * q["units_per_hour"].to_numpy(dtype=float), 0.0)
    best = math.inf
    for n in range(0, 8):
        lp = linprog(per_ref, A_ub=[units], b_ub=[100.0 * n], A_eq=[np.ones(len(q))], b_eq=[hours],
                     bounds=[(0, None)] * len(q), method="highs")
        if lp.status == 0:
            best = min(best, 9.99 * n + lp.fun)
    assert p.total_usd == pytest.approx(best, abs=0.01)
    assert sum(k.count for k in p.packs) * 9.99 == pytest.approx(p.cost_usd["rent"] - sum(
        a.cost_usd["rent"] for ph in p.phases for a in ph.assignments), abs=1e-6)


def test_a_commitment_is_kept_where_rent_prices_move(load, monkeypatch):
    """Where rent prices rise (price_trend +30 %/year), a term fixes its start day's price while
    an hour by the hour costs more later: the hourly offer no longer does its work for less, so
    nothing with a term is pruned."""
    p = _terms_plan(load, monkeypatch, True, trend="price_trend: 30%/year")
    assert not any(str(r).startswith("never better") for r in p.excluded["reason"])


def test_an_exact_tie_follows_the_documented_order_not_the_search_gap(monkeypatch):
    """Two ways to do 10 h at the same cost, the first with fewer wall hours (the documented
    tie-break), and a card to buy or not: the mixed-integer search may stop within its gap at
    the worse of the two (simulated here); the hours are then solved exactly, purchases fixed."""
    import pandas as pd

    from planner.decide.milp import Block, Bounds, Calendar

    c = np.array([1.0 + 1e-4, 1.0 + 2e-4, 0.0])  # equal cost, tie-breaks 1e-4 and 2e-4 an hour; a card, unused
    work = Block.of("work", ["a"], [0, 0], [0, 1], [1.0, 1.0], 10.0, 10.0)
    program = milp.Program(c, [work], np.array([0, 0, 1]), Bounds(np.zeros(3), np.array([np.inf, np.inf, 1.0])),
                           pd.DataFrame(), {}, {}, None, Calendar(dt.date(2027, 1, 4), 1, np.array([0, 7]), {}))
    real = milp.highs
    calls = []

    def gap_stop(c, rows, bounds, integrality, options, start=None):  # the search ends at the worse tie, within its gap
        res = real(c, rows, bounds, integrality, options, start)
        calls.append(integrality.any())
        if len(calls) == 1:
            res = dataclasses.replace(res, x=np.array([0.0, 10.0, 0.0]), mip_gap=1e-8)
        return res

    monkeypatch.setattr(milp, "highs", gap_stop)
    sol = milp.solve(program)
    assert sol.ok and sol.x[:2] == pytest.approx([10.0, 0.0])
    assert calls == [True, False]  # the second solve is a linear program


def test_a_commitments_search_stopped_at_its_node_limit_keeps_its_terms_and_places_the_hours_again(monkeypatch):
    """With commitments, the search with the tie-breaks may stop at its node limit (simulated:
    the worse of two equal ways to do 10 h); the integers are then proven on cost alone, the
    ordered search's terms kept when they cost no more, and the hours solved again with them
    fixed: the documented order decides the hours, as in a proven search."""
    import pandas as pd

    from planner.decide.milp import Block, Bounds, Calendar, CommitVar

    ties = np.array([1e-4, 2e-4, 0.0])
    work = Block.of("work", ["a"], [0, 0], [0, 1], [1.0, 1.0], 10.0, 10.0)
    program = milp.Program(np.array([1.0, 1.0, 0.0]) + ties, [work], np.array([0, 0, 1]),
                           Bounds(np.zeros(3), np.array([np.inf, np.inf, 1.0])), pd.DataFrame(), {}, {}, None,
                           Calendar(dt.date(2027, 1, 4), 1, np.array([0, 7]), {}),
                           commit_vars=(CommitVar(2, "term", 0, 7.0, 0.0),), ties=ties)
    real, calls = milp.highs, []

    def node_limit(c, rows, bounds, integrality, options, start=None):
        res = real(c, rows, bounds, integrality, options, start)
        calls.append(integrality.any())
        if len(calls) == 1:
            assert options["mip_max_nodes"] == milp.ORDERED_NODES
            res = dataclasses.replace(res, optimal=False, x=np.array([0.0, 10.0, 0.0]))
        return res

    monkeypatch.setattr(milp, "highs", node_limit)
    sol = milp.solve(program)
    assert sol.ok and sol.x[:2] == pytest.approx([10.0, 0.0]) and calls == [True, True, False]


def test_a_search_that_proves_its_plan_exactly_is_not_solved_again(monkeypatch):
    """A search that closes its gap (HiGHS reports 0) has the documented order's plan already:
    the hours are not solved a second time (issue 36: a what-if plan's second solve cost 7 ms)."""
    import pandas as pd

    from planner.decide.milp import Block, Bounds, Calendar

    c = np.array([1.0 + 1e-4, 1.0 + 2e-4, 0.0])
    work = Block.of("work", ["a"], [0, 0], [0, 1], [1.0, 1.0], 10.0, 10.0)
    program = milp.Program(c, [work], np.array([0, 0, 1]), Bounds(np.zeros(3), np.array([np.inf, np.inf, 1.0])),
                           pd.DataFrame(), {}, {}, None, Calendar(dt.date(2027, 1, 4), 1, np.array([0, 7]), {}))
    real = milp.highs
    calls = []

    def counted(c, rows, bounds, integrality, options, start=None):
        calls.append(integrality.any())
        return real(c, rows, bounds, integrality, options, start)

    monkeypatch.setattr(milp, "highs", counted)
    sol = milp.solve(program)
    assert sol.ok and sol.x[:2] == pytest.approx([10.0, 0.0]) and calls == [True]


def test_a_proven_search_with_a_purchase_a_hair_from_whole_is_solved_again_without_the_dust(monkeypatch):
    """HiGHS accepts an integer within 1e-6 of whole: a proven search (gap 0) that buys a card
    1e-9 times puts 2e-6 h of work on it. The purchases are rounded and the hours solved again,
    so no plan shows "0.0 h" on a card it does not buy (renting wins by hand: 20 against 1,005)."""
    real, calls = milp.highs, []

    def dusty(c, rows, bounds, integrality, options, start=None):
        res = real(c, rows, bounds, integrality, options, start)
        calls.append(integrality.any())
        if len(calls) == 1:
            res = dataclasses.replace(res, x=np.array([10.0 - 2e-6, 2e-6, 1e-9]), mip_gap=0.0)
        return res

    monkeypatch.setattr(milp, "highs", dusty)
    sol = milp.solve(_card_or_rent(1000.0))
    assert sol.ok and list(sol.x) == [10.0, 0.0, 0.0] and calls == [True, False]


def _card_or_rent(card_usd: float) -> milp.Program:
    """10 h of work, rented at 2 USD/h or run on a card (0.5 USD/h, 100 h a card) bought whole at
    ``card_usd``: columns rent hours, card hours, cards bought (0 or 1)."""
    import pandas as pd

    from planner.decide.milp import Block, Bounds, Calendar

    work = Block.of("work", ["a"], [0, 0], [0, 1], [1.0, 1.0], 10.0, 10.0)
    capacity = Block.of("card", ["c"], [0, 0], [1, 2], [1.0, -100.0], -np.inf, 0.0)
    return milp.Program(np.array([2.0, 0.5, card_usd]), [work, capacity], np.array([0, 0, 1]),
                        Bounds(np.zeros(3), np.array([np.inf, np.inf, 1.0])), pd.DataFrame(), {}, {}, None,
                        Calendar(dt.date(2027, 1, 4), 1, np.array([0, 7]), {}))


@pytest.mark.parametrize("card_usd, plan, cost", [
    (1000.0, [10.0, 0.0, 0.0], 20.0),  # by hand: renting (20) beats the card (5 + 1000)
    (10.0, [0.0, 10.0, 1.0], 15.0),  # by hand: the card (5 + 10) beats renting (20); the linear relaxation
    # buys a tenth of a card (0.6 USD/h, 6 USD in all), which is no plan
])
def test_the_search_buys_whole_cards_without_feasibility_jump_and_says_nothing(card_usd, plan, cost):
    """A purchase is whole, never the relaxation's fraction; the search runs without HiGHS's
    feasibility jump, RINS, RENS and root reduced-cost heuristics (milp.SEARCH_OPTIONS, issue 36:
    26 -> 18 ms a lab-box search, 236 -> 94 ms one with buy_later), and no warning reaches the user."""
    import warnings

    real, options = milp.highs, []

    def seen(c, rows, bounds, integrality, opts, start=None):
        options.append(opts)
        return real(c, rows, bounds, integrality, opts, start)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(milp, "highs", seen)
            sol = milp.solve(_card_or_rent(card_usd))
    assert sol.ok and sol.x == pytest.approx(plan) and sol.objective == pytest.approx(cost)
    assert [options[0][f"mip_heuristic_run_{h}"] for h in ("feasibility_jump", "rins", "rens", "root_reduced_cost")
            ] == [False] * 4
    assert [str(w.message) for w in caught] == []


def test_an_option_highs_lacks_is_an_error_not_a_silent_default():
    """A misspelt option (or one an older HiGHS lacks) would leave HiGHS's default in place with
    no sign: it stops the solve instead."""
    with pytest.raises(ValueError, match="no option mip_heuristic_run_rinse"):
        program = _card_or_rent(1.0)
        milp.highs(program.c, program.rows(), program.bounds, program.integrality, {"mip_heuristic_run_rinse": False})


def test_the_programs_variables_are_named_families_that_tile_its_columns(load):
    """issue 36: no offset counted by hand: every column belongs to one named family, in order."""
    from .test_plan import BASE

    text = BASE.format(hours=300, deadline="2027-12-31", buy="my-card", rent="uni-cluster", free="my-free")
    s = load(text.replace("  host_power: 100 W\n", "  host_power: 100 W\n  host_machine: false\n  host_price: 500 USD\n"))
    p = planner.plan(s, trials=0, alternatives=False, breakevens=False)
    program = milp.build(s, p.quote_table, p.options, card_costs(s, p.options), STRATEGIES["hybrid"])
    families = program.variables
    assert list(families)[:4] == ["hours", "bought", "unmet", "host"]
    columns = [j for r in families.values() for j in r]
    assert columns == list(range(program.n_vars))  # each column once, in order
    assert list(program.x_index.var) == list(families["hours"])
    assert [v.var for v in program.buy_vars] == list(families["bought"])
    assert list(program.unmet_index.values()) == list(families["unmet"]) and program.host_index == families["host"][0]
    index = milp.VarIndex()
    assert index.add("x", 2) == range(0, 2) and index.add("y", 3) == range(2, 5)
    with pytest.raises(ValueError, match="added twice"):
        index.add("x", 1)


def test_each_row_of_the_program_is_named_for_what_it_bounds(load, catalog, thesis_text):
    """issue 36: a row of the program is read by its name ("final 2027-05-03..2027-05-09"): the
    rows per bucket name the phase, machine, account or offer of every hour variable in them and
    that bucket, one name a row, however late the names are written."""
    s = load(thesis_text)
    p = planner.plan(s, catalog, trials=0, alternatives=False, breakevens=False)
    program = milp.build(s, p.quote_table, p.options, card_costs(s, p.options), STRATEGIES["hybrid"])
    xi, cal = program.x_index, program.calendar
    named = {"concurrency": xi.phase, "machine": xi.group, "account": xi.group, "supply": xi.option,
             "commitment": xi.option}
    seen = set()
    for b in program.blocks:
        assert len(b.labels) == len(b.lower) == len(b.upper) and len(set(b.labels)) == len(b.labels), b.family
        hours = b.col < len(xi)  # the entries of hour variables (not a card, a term or a month)
        if b.family in named:
            seen.add(b.family)
            for row, col in zip(b.row[hours].tolist(), b.col[hours].tolist()):
                assert b.labels[row] == f"{named[b.family][col]} {cal.labels[xi.bucket[col]]}", b.family
        if b.family == "starts":
            seen.add(b.family)
            assert all(b.labels[row] == cal.labels[xi.bucket[col]] for row, col in zip(b.row[hours], b.col[hours]))
    assert seen >= {"concurrency", "machine", "account", "starts"}
    assert program.n_constraints == sum(len(b.labels) for b in program.blocks) == len(program.rows().lower)


def _stretch_case(rows: list[tuple[str, int, str, float, float]]):
    """A calendar of Monday-Wednesday and Thursday-Sunday from Monday 2027-01-04, and a schedule of
    (phase, bucket, option, expected wall h, weekly capacity h) rows, one run a phase."""
    import types

    import pandas as pd

    from planner.decide.milp import Calendar

    cal = Calendar(dt.date(2027, 1, 4), 1, np.array([0, 3, 7]), {"a": (0, 7), "b": (0, 7)})
    frame = pd.DataFrame(rows, columns=["phase", "bucket", "option", "wall_hours", "weekly_capacity_h"])
    frame["wall_hours_conf"] = frame["wall_hours"] * 1.5
    frame["open_capacity_h"], frame["parallel"], frame["streams"] = 168.0, 1.0, 1.0
    frame["kind"], frame["week"], frame["days"] = "rent", 0, cal.days[frame["bucket"]]
    frame["gpu_hours"], frame["first_day"], frame["week_start"] = frame["wall_hours"], None, None
    s = types.SimpleNamespace(phase=lambda p: types.SimpleNamespace(runs=1))
    return s, types.SimpleNamespace(calendar=cal), milp.Schedule.from_frame(frame)


def test_work_that_the_calendar_alone_cuts_runs_on_without_a_break():
    """By hand: 40 expected h booked Monday-Wednesday and 20 h Thursday-Sunday on a machine open
    all week end 60 h after Monday 00:00, on Wednesday 2027-01-06, not 20 h after Thursday (the
    program books each bucket at the confidence, so the first ends early in expectation). A tier
    with a weekly quota, or a machine another phase also used then, keeps the bucket's start."""
    s, program, sched = _stretch_case([("a", 0, "m", 40.0, 168.0), ("a", 1, "m", 20.0, 168.0)])
    assert milp.finishes(s, program, sched) == {"a": dt.date(2027, 1, 6)}
    begin, days, final = milp.finish_times(s, program, sched)["a"]
    assert (begin, days, final) == (dt.date(2027, 1, 4), pytest.approx(60 / 24), dt.date(2027, 1, 10))
    model = milp.finish_models(s, program, sched)["a"]
    assert model.slack_h == 0.0 and model.last_slack_h == pytest.approx(30.0)  # both buckets' booked hours
    quota = _stretch_case([("a", 0, "m", 40.0, 30.0), ("a", 1, "m", 20.0, 30.0)])
    assert milp.finishes(*quota) == {"a": dt.date(2027, 1, 7)}  # 3 + 20/24 days: around the clock while its quota lasts
    beside = _stretch_case([("a", 0, "m", 40.0, 168.0), ("a", 0, "tier", 10.0, 30.0), ("a", 1, "m", 20.0, 168.0)])
    assert milp.finishes(*beside) == {"a": dt.date(2027, 1, 7)}  # a tier with a quota beside it before
    shared = _stretch_case([("a", 0, "m", 40.0, 168.0), ("b", 0, "m", 20.0, 168.0), ("a", 1, "m", 20.0, 168.0)])
    assert milp.finishes(*shared)["a"] == dt.date(2027, 1, 7)  # 3 + 20/24 days


def test_the_rows_handed_to_highs_are_the_blocks_entries_summed_where_they_meet():
    """Program.rows stacks the blocks' (row, column, value) entries by columns for HiGHS: read back
    as a dense matrix it equals the entries added up one by one (np.add.at), duplicates included."""
    rng = np.random.default_rng(7)
    row, col = rng.integers(0, 6, 60), rng.integers(0, 9, 60)  # 60 entries on 54 places: some meet
    val = rng.normal(size=60)
    rows = milp.Rows.of(row, col, val, 9, np.zeros(6), np.ones(6))
    dense = np.zeros((6, 9))
    for j in range(9):
        for k in range(rows.start[j], rows.start[j + 1]):
            dense[rows.index[k], j] += rows.value[k]
    expected = np.zeros((6, 9))
    np.add.at(expected, (row, col), val)
    assert dense == pytest.approx(expected)
    assert all(np.all(np.diff(rows.index[rows.start[j]:rows.start[j + 1]]) > 0) for j in range(9))  # each place once


SHARED_ACCOUNT = """\
name: share
start: 2027-01-04
electricity: 0.20 USD/kWh
workload: {{family: transformer, params: 100M, reference_gpu: rtx-3090}}
phases:
  sweep: {{gpu_hours: 1, runs: {runs}, deadline: {deadline}, checkpoint_every: 30 min}}
  final: {{gpu_hours: {hours}, from: 2027-01-18, deadline: 2027-01-21, checkpoint_every: 1 h}}
you: {{time_value: 0 USD/h}}
consider: {{free: [my-free], rent: [uni-cluster], buy: []}}
catalog:
  rent:
    - {{id: uni-cluster, device: rtx-3090, price: 0.50 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}}
  free:
    - {{id: my-free, device: rtx-3090, quota: 30 h/week, session_limit: 12 h, setup: 0 min, needs_person: true,
       interruptions: 0}}
"""


@settings(max_examples=examples(10), deadline=None)
@given(runs=st.integers(2, 8), hours=st.integers(8, 24), days=st.integers(1, 4))
def test_a_phase_of_short_runs_does_not_cap_another_phases_long_sessions_on_one_account(load, catalog, runs,
                                                                                        hours, days):
    """A sweep of 1-hour runs (one 1-hour session each, 2 starts a day by hand: 2 h a day) done by
    17 January, then a final phase of 12-hour sessions on 18-21 January (24 h a day, 2 starts):
    its hours fit on the free tier. Moving the sweep's deadline into the final's days, where the
    sweep places nothing, must not change that: the account's rows counted every phase at the
    slowest rate among them, so the sweep's 2 h a day capped the final (24 h: 8 h free, 16
    rented for 8 USD)."""
    plans = [planner.plan(load(SHARED_ACCOUNT.format(runs=runs, hours=hours, deadline=d)), catalog, trials=0,
                          alternatives=False)
             for d in ("2027-01-17", (dt.date(2027, 1, 17) + dt.timedelta(days=days)).isoformat())]
    for p in plans:
        final = next(ph for ph in p.phases if ph.name == "final")
        assert p.feasible and [a.option for a in final.assignments] == ["my-free"]
    assert plans[1].total_usd <= plans[0].total_usd + 1e-9


def test_the_exclusions_read_their_option_record_alone_and_an_edited_price_finds_them(load, catalog, thesis_text):
    """What can run where reads of each option its quotes.FitOption alone (device, count,
    frameworks, notes, ...): those records read the table's cells as options_of does, for every
    offer of the catalog, and they are what the exclusions are kept under, so a what-if that
    edits a price finds the exclusions it had instead of placing every model again, and one that
    edits a tier's notes finds them anew."""
    import dataclasses

    from planner.decide import quotes
    from planner.model.records import options_of

    s = load(thesis_text, sets=('consider.rent=["*"]', 'consider.buy=["*"]', 'consider.free=["*"]',
                                "framework=paddlepaddle"))  # a framework most tiers do not run
    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat).copy()
    tiers = opts["kind"] == "free"
    opts.loc[opts["option"] == "colab-free-tpu", "notes"] = "paddlepaddle's wheels fail on its image (a user's report)"
    opts["frameworks"] = [("pytorch",) if o == "kaggle" else f  # kaggle-t4x2, on the same account, runs it
                          for o, f in zip(opts["option"], opts["frameworks"])]
    opts.loc[tiers & opts["frameworks"].map(lambda f: isinstance(f, tuple) and "paddlepaddle" in f), "quota_h_total"] = 0.0
    opts.loc[opts["option"] == "lambda:gpu_4x_a6000", "gpu_class"] = "geforce"  # its data parallelism over PCIe
    opts.loc[opts["option"] == "lambda:gpu_2x_a6000", "count"] = np.nan  # a blank count: one device
    opts.loc[opts["option"] == "kaggle-t4x2", "gpu_class"] = np.nan  # a blank class: the default
    fields = [f.name for f in dataclasses.fields(quotes.FitOption)]
    assert quotes.FitOption.rows(opts) == tuple(quotes.FitOption(*(getattr(o, f) for f in fields))
                                                for o in options_of(opts))
    said = exclusions(s, opts, cat.devices, cat.throughput)["reason"].dropna()
    assert said.str.contains("the catalog says: paddlepaddle's wheels").any()  # a tier's notes read
    assert said.str.contains("grants no hours").any() and said.str.contains("the same account runs").any()
    edited = opts.copy()
    edited.loc[edited["kind"] == "rent", "usd_per_hour"] *= 1.2
    assert exclusions(s, edited, cat.devices, cat.throughput) is exclusions(s, opts, cat.devices, cat.throughput)
    noted = edited.copy()  # a new table, as every what-if makes (tables are never changed in place)
    noted.loc[noted["option"] == "colab-free-tpu", "notes"] = "paddlepaddle: no wheel for its TPU runtime"
    assert exclusions(s, noted, cat.devices, cat.throughput)["reason"].str.contains("no wheel for its TPU").any()


def test_the_options_quoted_are_the_usable_rows_of_the_table_merged_with_their_fit(load, catalog, thesis_text):
    """issue 36: the options a plan quotes are read row for row beside their fit (no merged
    table made); they are those of the options table merged with its exclusions on the option
    (pandas) where nothing excludes them: every field the same, in the table's order. A fit in
    another order than the table's is merged."""
    from planner.decide import quotes
    from planner.model.records import options_of

    s = load(thesis_text, sets=('consider.rent=["*"]', 'consider.buy=["*"]', 'consider.free=["*"]'))
    cat = catalog.with_entries(s.catalog_entries)
    opts = build_options(s, cat)
    feas = exclusions(s, opts, cat.devices, cat.throughput)
    excluded = feas["reason"].notna().to_numpy()
    assert excluded.any() and not excluded[-1] and (~excluded).sum() > 20  # some left out, before others
    merged = opts.merge(feas, on="option")
    expected = options_of(merged[merged["reason"].isna()])
    assert all(o.relative_speed > 0 and o.verdict for o in expected)  # the fit's fields are in
    assert quotes.usable_options(opts, feas) == expected
    assert quotes.usable_options(opts, feas.iloc[::-1].reset_index(drop=True)) == expected


def test_the_columns_the_optimiser_reads_are_the_quotes_the_plan_shows(load, catalog, thesis_text):
    """issue 36: the optimiser reads its quotes as named arrays (records.QuoteTable), a user reads
    them as a DataFrame (Plan.quotes): every column of every quote the same (a blank is a blank
    in both), also for rows kept in another order after some columns were read; and a column
    every reader shares cannot be written."""
    from planner.model.records import QUOTE_COLUMNS
    from pricing.values import missing

    s = load(thesis_text, sets=('consider.rent=["*"]', 'consider.buy=["*"]', 'consider.free=["*"]'))
    p = planner.plan(s, catalog, trials=0, alternatives=False, breakevens=False)
    table, frame = p.quote_table, p.quotes
    assert len(table) == len(frame) > 100 and set(frame["kind"]) >= {"buy", "rent", "free"}

    def same(ours: np.ndarray, theirs: np.ndarray) -> bool:
        return len(ours) == len(theirs) and all(
            (missing(a) and missing(b)) or (not missing(a) and not missing(b) and a == b)
            for a, b in zip(ours.tolist(), theirs.tolist()))

    read_first = table["cost_usd"]
    rows = np.arange(len(table))[::-3]  # from the last, every third
    kept = table.take(rows)
    for column in QUOTE_COLUMNS:
        assert same(table[column], frame[column].to_numpy()), column
        assert same(kept[column], frame[column].to_numpy()[rows]), column
    assert kept.records == tuple(p.quote_table.records[i] for i in rows)
    with pytest.raises(ValueError):
        read_first[0] = 0.0
