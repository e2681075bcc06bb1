"""How sure the answer is: uncertain inputs carried to each strategy's cost, finish and chance
of being the cheapest (issue 16), against cases worked out by hand and a direct sweep."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import planner
import planner.api
import planner.report
from planner import whatif
from planner.cli import main
from planner.decide import uncertainty
from planner.model import workload

from .conftest import TODAY
from .test_plan import BASE

# The hand-built card: 1,000 USD, resale 40 % (given), 0.45 kW at 0.20 USD/kWh; renting the same
# device costs 0.50 USD/h. Every figure is the scenario's own, so only a range is uncertain.
# Buying costs 600 + 0.09 H, renting 0.50 H: they tie at about 1,463 reference GPU-hours.

#: The emissions' inputs (a grid, a PUE, a making): drawn always, they move no cost without a carbon price.
CARBON_INPUTS = ("grid ", "pue ", "made ")


def scenario(load, hours):
    return load(BASE.format(hours=hours, deadline="2027-12-31", buy="my-card", rent="uni-cluster", free=""))


def analysed(load, hours, samples=2000, seed=0):
    return planner.plan(scenario(load, hours), trials=10, uncertainty=samples, seed=seed)


def by_strategy(p):
    return {o.strategy: o for o in p.uncertainty.outcomes}


def test_with_every_input_certain_the_spread_is_nil_and_the_cheapest_certain(load):
    p = analysed(load, 100, samples=200)
    # your prices, the reference device: nothing that moves the cost to draw (emissions without a carbon price
    # move no cost)
    assert [i.name for i in p.uncertainty.inputs if not i.name.startswith(CARBON_INPUTS)] == []
    for o in p.uncertainty.outcomes:
        p10, p50, p90 = uncertainty.quantiles(o.cost_usd)
        assert p10 == p50 == p90
        assert o.meets.all()
    alt = {a.strategy: a for a in p.alternatives}
    assert by_strategy(p)["rent-only"].cost_usd[0] == pytest.approx(alt["rent-only"].total_cost_usd)
    assert p.uncertainty.p_cheapest["rent-only"] == 1.0 and p.uncertainty.p_cheapest["buy-only"] == 0.0
    assert p.uncertainty.p_chosen_cheapest == 1.0


def test_a_near_tie_is_a_coin_toss_decided_by_the_hours_where_a_sweep_flips(load):
    p = analysed(load, "1024..1902")
    u = p.uncertainty
    assert 0.2 < u.p_cheapest["buy-only"] < 0.8 and 0.2 < u.p_cheapest["rent-only"] < 0.8
    assert u.p_cheapest["buy-only"] + u.p_cheapest["rent-only"] == pytest.approx(1.0)  # distinct plans
    top = u.drivers[0]
    assert top.input == "phases.train.gpu_hours" and top.importance > 0.9 and top.wins_above == "buy-only"
    # a direct sweep of the hours, re-planning each time: the chosen plan starts buying between two values
    text = BASE.format(hours="1024..1902", deadline="2027-12-31", buy="my-card", rent="uni-cluster", free="")
    values = list(range(1440, 1485, 5))
    table = whatif.sweep(whatif.Job(text, "s.yaml", TODAY), [("phases.train.gpu_hours", values)])
    buys = [v for v, b in zip(values, table["buy"]) if b != "nothing"]
    assert buys and buys[0] > values[0]
    assert values[values.index(buys[0]) - 1] <= top.flips_at <= buys[0]


def test_the_mean_cost_under_uniform_hours_is_the_cost_at_their_middle(load):
    """Renting is linear in the hours: over hours uniform on a range, its mean cost is the cost of
    the range's middle, the hours the plan used (closed form), within three standard errors."""
    p = analysed(load, "1024..1902", samples=4000)
    rent = by_strategy(p)["rent-only"].cost_usd
    at_middle = next(a.total_cost_usd for a in p.alternatives if a.strategy == "rent-only")
    assert abs(rent.mean() - at_middle) < 3 * rent.std() / np.sqrt(len(rent))
    assert rent.std() > 0.1 * at_middle  # and the spread is the range's: +-30 % of the hours


def test_a_clear_case_is_clear(load):
    p = analysed(load, "210..390")  # renting costs about a quarter of buying
    assert p.uncertainty.p_cheapest["rent-only"] > 0.95
    assert not any(d.flips_at for d in p.uncertainty.drivers)  # nothing in range turns it around


def test_the_same_seed_gives_the_same_numbers(load):
    s = scenario(load, "1024..1902")
    a, b, c = (planner.to_dict(planner.plan(s, trials=10, uncertainty=300, seed=seed))["uncertainty"]
               for seed in (7, 7, 8))
    assert a == b and a != c


def test_estimated_speeds_and_catalog_prices_are_drawn_with_their_sources(thesis_plan_with_uncertainty):
    u = thesis_plan_with_uncertainty.uncertainty
    names = {i.name: i for i in u.inputs}
    speeds = [i for n, i in names.items() if n.startswith("speed ") and "(estimated)" in n]
    assert speeds and all("leave-one-device-out" in i.source for i in speeds)
    for i in speeds:  # log-normal around the estimate with the model's error: median at the estimate
        assert np.median(i.draws) == pytest.approx(i.base, rel=0.05)
    prices = [i for n, i in names.items() if n.startswith("price ")]
    assert prices and all("catalog price dated" in i.source for i in prices)
    interruptions = [i for n, i in names.items() if n.startswith("interruptions ")]
    for i in interruptions:  # the default's range, its mode the rate the plan used
        assert i.draws.min() >= 0 and "range" in i.source
    # a catalog price is log-normal, its spread 5 % plus 15 % for each year of its age on the start day
    s, opts = thesis_plan_with_uncertainty.scenario, thesis_plan_with_uncertainty.options.set_index("option")
    ages = set()
    for i in prices:
        option = i.name.removeprefix("price ")
        if opts.at[option, "kind"] != "rent" or "listings" in i.source:
            continue
        age = (s.start - opts.at[option, "as_of"]).days / 365.25
        ages.add(round(age, 1))
        assert np.std(np.log(i.draws / i.base)) == pytest.approx(0.05 + 0.15 * max(age, 0.0), rel=0.1), option
    assert len(ages) >= 2 or max(ages) > 0.3  # prices of more than one age, or an old one: the rule is seen


@pytest.fixture(scope="module")
def thesis_plan_with_uncertainty():
    from .conftest import SCENARIOS

    return planner.plan(planner.load_scenario(SCENARIOS / "thesis.yaml", today=TODAY), trials=20, uncertainty=500)


def test_run_uncertainty_in_json_text_and_report(tmp_path):
    from .conftest import SCENARIOS

    result = CliRunner().invoke(main, ["run", str(SCENARIOS / "thesis.yaml"), "--uncertainty", "200",
                                       "--format", "json", "--today", "2026-11-22"])
    assert result.exit_code == 0, result.output
    u = json.loads(result.output)["uncertainty"]
    assert u["samples"] == 200 and u["seed"] == 0
    for row in u["strategies"]:
        assert row["cost_p10"] <= row["cost_p50"] <= row["cost_p90"] and row["finish_p10"] <= row["finish_p90"]
        assert 0 <= row["p_meets_deadlines"] <= 1 and 0 <= row["p_cheapest"] <= 1
    assert set(u["plan"]) >= {"cost_p10", "cost_p50", "cost_p90", "p_meets_deadlines", "p_cheapest"}
    assert all({"input", "low", "high", "source"} <= set(i) for i in u["inputs"])
    plain = CliRunner().invoke(main, ["run", str(SCENARIOS / "thesis.yaml"), "--format", "json"])
    assert "uncertainty" not in json.loads(plain.output)  # only when asked
    # the scenario key asks for it too, and the report shows it with its chart
    text = (SCENARIOS / "thesis.yaml").read_text(encoding="utf-8").replace("name:", "uncertainty: 200\nname:", 1)
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "rep"
    run = CliRunner().invoke(main, ["run", str(path), "--report", str(out), "--trials", "50"])
    assert run.exit_code == 0, run.output
    assert "How sure is the answer" in run.output and "Over 200 draws" in run.output
    assert (out / "uncertainty.svg").exists()
    assert "How sure is the answer" in (out / "report.html").read_text(encoding="utf-8")


def test_compare_shows_how_sure_each_row_is(tmp_path):
    path = tmp_path / "tie.yaml"
    path.write_text(BASE.format(hours="1024..1902", deadline="2027-12-31", buy="my-card", rent="uni-cluster",
                                free=""), encoding="utf-8")
    out = CliRunner().invoke(main, ["compare", str(path), "--uncertainty", "500", "--format", "json",
                                    "--workers", "1"])
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.output)
    assert 0.2 < row["p_cheapest"] < 0.8 and row["cost_p10"] < row["total_cost"] < row["cost_p90"]


def test_chances_of_being_cheapest_sum_to_one_over_distinct_plans(thesis_plan_with_uncertainty):
    """Two solves of one plan differ in the last bits of their hours; they are still one plan."""
    u = thesis_plan_with_uncertainty.uncertainty
    distinct = [s for s in u.p_cheapest if u.aliases[s] == s]
    assert sum(u.p_cheapest[s] for s in distinct) == pytest.approx(1.0)
    for s, first in u.aliases.items():
        assert u.p_cheapest[s] == u.p_cheapest[first]


def test_rank_correlation_is_spearmans():
    from scipy import stats

    rng = np.random.default_rng(3)
    x = rng.normal(size=400)
    y = np.exp(x) + rng.normal(size=400)
    assert uncertainty._spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_re_pricing_at_a_drawn_interruption_rate_agrees_with_pricing_at_that_rate(load, thesis_text):
    """The uncertainty analysis re-prices a fixed plan at each drawn rate; the session model's
    overhead is convex in the rate, so scaling only the lost hours understated it. Its cost at a
    rate must be what the quotes cost when planned at that rate, for the same hours."""
    option = "vast:rtx-3090-interruptible"  # a default rate, 0.1/h, its range 0.05-0.5
    p = planner.plan(load(thesis_text), trials=0)
    alt = next(a for a in p.alternatives if a.strategy == "rent-only")
    assert any(o == option for _, o, _ in alt.hours)
    rates = np.array([0.05, 0.2, 0.35, 0.5])
    drawn = uncertainty.Input(f"interruptions {option}", rates, 0.1, "/h", "test")
    q = p.quotes.set_index(["phase", "option"])
    device = p.quotes.drop_duplicates("option").set_index("option")["device"]
    got = uncertainty.evaluate(p, alt, {drawn.name: drawn}, len(rates), q, device).cost_usd
    for rate, cost in zip(rates, got):
        at = planner.plan(load(thesis_text, sets=(f"catalog.rent[{option}].interruptions={rate}/h",)), trials=0)
        qa = at.quotes.set_index(["phase", "option"])
        phases = {ph.name: ph.gpu_hours for ph in at.scenario.phases}
        expected = sum(qa.at[(ph, o), "cost_usd"] * h / phases[ph] for ph, o, h in alt.hours)
        assert cost == pytest.approx(expected, rel=0.005), rate


@pytest.mark.parametrize("low, high, top", [(0.5, 3.0, 1.5), (0.9, 1.05, 1.05)])
def test_a_marketplace_price_is_drawn_about_the_plans_price(load, thesis_text, low, high, top):
    """A marketplace offer with a floor and a high quantile (catalog columns usd_per_hour_low/high):
    the plan rents at its typical listing, the listings at or below it its supply, so a draw is as
    far above that price as the floor is below it (capped by the high listing): triangular from
    the floor to 2 x price - floor, its mean the plan's price (the old draw, up to the high
    quantile, averaged 1.33x the plan's price on the Vast RTX 3090: the plan lay far below its own
    analysis)."""
    p = planner.plan(load(thesis_text), trials=0)
    option = "vast:rtx-3090-interruptible"
    opts = p.options.copy()
    at = opts.index[opts["option"] == option]
    mode = float(opts.loc[at[0], "usd_per_hour"])
    opts.loc[at, "usd_per_hour_low"], opts.loc[at, "usd_per_hour_high"] = mode * low, mode * high
    drawn = {i.name: i for i in uncertainty.inputs(dataclasses.replace(p, options=opts), 20_000, 1)}
    price = drawn[f"price {option}"]
    assert price.draws.min() >= mode * low and price.draws.max() <= mode * top
    assert price.draws.mean() == pytest.approx((low + 1 + top) / 3 * mode, rel=0.01)
    assert "marketplace's listings" in price.source


def test_a_marketplace_price_is_described_in_the_scenarios_currency(load, thesis_text):
    """In euros, the listings beside the draws are in euros too (the test catalog: 1.0705 USD a
    euro): the floor and the typical listing divided by the rate, where the catalog's USD figures
    were written beside draws in EUR/h."""
    p = planner.plan(load(thesis_text.replace("currency: USD", "currency: EUR")), trials=0)
    option = "vast:rtx-3090-interruptible"
    opts = p.options.copy()
    at = opts.index[opts["option"] == option]
    usd = float(opts.loc[at[0], "usd_per_hour"])
    opts.loc[at, "usd_per_hour_low"], opts.loc[at, "usd_per_hour_high"] = usd * 0.5, usd * 3.0
    drawn = {i.name: i for i in uncertainty.inputs(dataclasses.replace(p, options=opts), 100, 1)}
    price = drawn[f"price {option}"]
    assert price.unit == "EUR/h"
    assert (f"listings: floor {usd * 0.5 / 1.0705:.4g}, typical {usd / 1.0705:.4g} EUR/h, the plan's price; drawn "
            f"from {usd * 0.5 / 1.0705:.4g} to {usd * 1.5 / 1.0705:.4g} about it (high listing {usd * 3 / 1.0705:.4g}"
            in price.source)


def _outcome(name, cost, meets):
    cost = np.asarray(cost, dtype=float)
    return uncertainty.StrategyOutcome(name, cost, np.zeros(len(cost)), np.asarray(meets, dtype=bool))


def test_a_plan_that_misses_a_deadline_is_never_the_cheapest():
    # four draws: the cheap plan misses a deadline in two of them, and there the dear one wins
    cheap = _outcome("rent-only", [10, 10, 10, 10], [True, False, True, False])
    dear = _outcome("buy-only", [20, 20, 20, 20], [True, True, True, True])
    alias = {"rent-only": "rent-only", "buy-only": "buy-only"}
    p, chosen = uncertainty._p_cheapest(alias, (cheap, dear), cheap)
    assert p == {"rent-only": 0.5, "buy-only": 0.5} and chosen == 0.5
    # where every plan misses, the cheapest anyway
    late = _outcome("buy-only", [20, 20, 20, 20], [True, False, True, True])
    p, _ = uncertainty._p_cheapest(alias, (cheap, late), cheap)
    assert p == {"rent-only": 0.75, "buy-only": 0.25}


def test_plans_that_tie_share_the_chance_of_being_cheapest():
    # draw 1: a tie (each half); draw 2: rent-only alone; hybrid is rent-only's plan, so shares its chance
    a = _outcome("rent-only", [10, 10], [True, True])
    b = _outcome("buy-only", [10, 12], [True, True])
    h = _outcome("hybrid", [10, 10], [True, True])
    alias = {"rent-only": "rent-only", "buy-only": "buy-only", "hybrid": "rent-only"}
    p, chosen = uncertainty._p_cheapest(alias, (a, b, h), h)
    assert p == {"rent-only": 0.75, "buy-only": 0.25, "hybrid": 0.75} and chosen == 0.75


STORAGE = """\
name: a dataset kept on a rented machine's disk
start: 2027-01-04
price_trend: flat
workload: {family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: a10g}
phases:
  a: {gpu_hours: 300, from: 2027-01-04, deadline: 2027-04-30, checkpoint_size: 1 GB, dataset_size: 2000 GB}
consider: {buy: [], rent: ["aws:g5.xlarge"], free: []}
catalog:
  rent:
    - {id: "aws:g5.xlarge", price: 1.00 USD/h}
"""


def test_re_pricing_keeps_every_part_of_the_cost(load):
    # your price, kept flat, the reference device, no interruptions: nothing is drawn, so every draw must cost
    # what the plan costs, storage (2 TB at 0.023 USD/GB-month over the weeks used) and egress included
    p = planner.plan(load(STORAGE), trials=0, uncertainty=50)
    parts = p.phases[0].assignments[0].cost_usd
    drawn = [i.name for i in p.uncertainty.inputs if not i.name.startswith(CARBON_INPUTS)]
    assert drawn == [] and parts["storage"] > 10 and parts["egress"] > 0
    for o in p.uncertainty.outcomes:
        assert o.cost_usd == pytest.approx(np.full(50, p.total_usd), rel=1e-9)


def test_finishing_on_the_deadline_day_is_on_time(load):
    # 40 h of work from Monday 2027-01-04 on one rented machine ends on Tuesday, the deadline day
    # (the deadline is inclusive: until 24:00 that day); nothing is uncertain, so every draw meets it
    p = planner.plan(load(BASE.format(hours=40, deadline="2027-01-05", buy="", rent="uni-cluster", free="")),
                     trials=0, uncertainty=50)
    assert p.feasible and p.phases[0].finish_expected == dt.date(2027, 1, 5)
    assert all(o.meets.all() for o in p.uncertainty.outcomes)


def test_a_draw_with_more_work_ends_when_its_extra_hours_have_run_at_the_options_pace(load):
    # 40 reference GPU-h on one rented machine from 00:00 Monday 2027-01-04, nothing interrupted:
    # W wall-h at 24 h a day. A draw with k times the work runs k W hours, so it ends on day
    # ceil(k W / 24) - 1 (by hand). Stretching the phase's days by k instead puts 2x on day 2,
    # not 3, and 0.5x on day 1, not 0.
    p = planner.plan(load(BASE.format(hours=40, deadline="2027-12-31", buy="", rent="uni-cluster", free="")),
                     trials=0)
    alt = next(a for a in p.alternatives if a.strategy == "rent-only")
    wall = p.phases[0].assignments[0].wall_hours
    k = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    drawn = uncertainty.Input("phases.train.gpu_hours", 40.0 * k, 40.0, "h", "test")
    q = p.quotes.set_index(["phase", "option"])
    device = p.quotes.drop_duplicates("option").set_index("option")["device"]
    got = uncertainty.evaluate(p, alt, {drawn.name: drawn}, len(k), q, device).finish
    assert 40 < wall < 41  # the checkpoints add a little
    assert list(got) == [max(math.ceil(x * wall / 24 - 1e-6), 1) - 1 for x in k] == [0, 1, 2, 3, 5]


def test_an_overrun_runs_into_the_earlier_weeks_slack_first_then_past_the_planned_end():
    # the phase's last bucket starts on 2027-03-01 and takes 2 days; its earlier buckets keep 10 h
    # beyond the expected hours; past the planned end it runs at 5 h a day (by hand)
    from planner.model.sessions import Finish

    f = Finish(dt.date(2027, 3, 1), 2.0, slack_h=10.0, rate_h_per_day=5.0)
    assert list(f.days_with(np.array([-5.0, 0.0, 8.0, 10.0, 20.0]))) == [1.0, 2.0, 2.0, 2.0, 4.0]
    assert f.day_with(20.0) == dt.date(2027, 3, 4)
    # the chance of ending in time and the finish agree: 10 h of slack and 4 days left at 5 h a day
    last = dt.date(2027, 3, 6)
    assert f.headroom_h(last) == 30.0
    assert f.day_with(30.0) == last and f.day_with(30.5) > last


def test_an_overrun_the_size_of_the_last_buckets_booking_ends_on_the_promised_finish():
    # the last bucket takes 2 days as expected and 4 at the confidence, where its options, side by
    # side, hold 12 h more; alone, the fastest runs on at 2 h a day (by hand)
    from planner.model.sessions import Finish

    f = Finish(dt.date(2027, 3, 1), 2.0, slack_h=10.0, rate_h_per_day=2.0, last_slack_h=12.0, days_conf=4.0)
    # the earlier weeks' slack first; then 12 h over 2 days (6 h a day, faster than 2); then 2 h a day
    assert list(f.days_with(np.array([-4.0, 10.0, 16.0, 22.0, 26.0]))) == [0.0, 2.0, 3.0, 4.0, 6.0]
    assert f.day_with(22.0) == dt.date(2027, 3, 4)  # the booked overrun: the finish at the confidence
    assert f.headroom_h(dt.date(2027, 3, 3)) == 16.0 and f.headroom_h(dt.date(2027, 3, 6)) == 26.0
    # where the fastest option alone ends it sooner (12 h a day), it does
    fast = Finish(dt.date(2027, 3, 1), 2.0, slack_h=0.0, rate_h_per_day=12.0, last_slack_h=12.0, days_conf=4.0)
    assert float(fast.days_with(12.0)) == 3.0 and fast.headroom_h(dt.date(2027, 3, 3)) == 12.0


SPOT_BOX = """\
name: a spot box whose interruption rate no one publishes
start: 2027-03-01
workload: {family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}
phases:
  train: {gpu_hours: 300, deadline: 2027-06-30, checkpoint_every: 1 h, checkpoint_size: 1 GB, dataset_size: 10 GB}
consider: {buy: [], rent: [spotbox], free: []}
catalog:
  rent:
    - {id: spotbox, device: rtx-3090, price: 1.00 USD/h, spot: true, billing: 1 s, startup: 0 min, setup: 6 min}
"""


def test_a_plans_cost_is_the_mean_its_own_draws_find(load, catalog):
    # One spot box at your own price on the reference card: only its interruption rate, a default
    # (the test catalog's 0.2 in 0.02-0.74: a mean of 0.32), is drawn. The plan costed its hours at
    # 0.2, 8 % below the mean of its 4,000 draws; it costs the mean hours the range adds
    # (Quote.wall_hours_rate_shift). Independently, 4,000 rates through the session model give 371.8 USD.
    # The sessions' own spread (when interruptions strike) is drawn too, about the hours: its mean is nil
    s = load(SPOT_BOX)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0)
    u = uncertainty.analyse(p, 4000, seed=1)
    assert [i.name for i in u.inputs if not i.name.startswith(("grid", "pue", "made"))] == [
        "interruptions spotbox", "sessions spotbox"]
    assert p.total_usd == pytest.approx(float(u.chosen.cost_usd.mean()), rel=0.005)


def test_re_pricing_follows_the_rent_on_its_price_path(load):
    # at -50 % a year the plan waits for the cheaper days of its window (rent 0.50 USD/h at the
    # catalog date): it costs about half of 100 h x 0.5005; nothing is drawn (your prices, the
    # reference device), so every draw must cost what the plan costs, not today's price
    text = "price_trend: -50%/year\n" + BASE.format(hours=100, deadline="2027-12-31", buy="", rent="uni-cluster",
                                                   free="")
    p = planner.plan(load(text), trials=0, uncertainty=50)
    assert p.total_usd < 0.75 * 100 * 0.5005
    for o in p.uncertainty.outcomes:
        assert o.cost_usd == pytest.approx(np.full(50, p.total_usd), rel=1e-9)


TREND = """\
name: catalog rent over a year
start: 2027-01-04
workload: {family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}
phases:
  a: {gpu_hours: 300, from: 2027-06-01, deadline: 2027-12-31, checkpoint_size: 0.36 GB}
consider: {buy: [], rent: ["runpod:rtx-3090"], free: []}
"""


def test_without_a_price_trend_each_draw_is_a_whole_price_path(load):
    """The plan follows the device's catalog trend (the test catalog's: flat, range -30 % to
    +40 % a year); where it goes from there is drawn: one yearly trend per draw within the range,
    carried over the years from the price's date to the hours the plan places. Each draw's rent
    is the plan's rent x the drawn price level x (1 + trend)^years / (1 + central)^years (closed
    form); the rest is unchanged."""
    p = planner.plan(load(TREND), trials=0, uncertainty=400, seed=3)
    by_name = {i.name: i for i in p.uncertainty.inputs}
    trend = by_name[f"{uncertainty.TREND_INPUT} any"]
    assert trend.base == 0.0
    assert trend.draws.min() >= -0.30 and trend.draws.max() <= 0.40 and abs(np.median(trend.draws)) < 0.1
    alt = next(a for a in p.alternatives if a.strategy == "rent-only")
    ((_, _, years),) = alt.price_years
    assert years > 0.5  # the price is dated 2026, the work is in the second half of 2027
    level = by_name["price runpod:rtx-3090"].draws / by_name["price runpod:rtx-3090"].base
    rent = p.cost_usd["rent"]
    expected = p.total_usd - rent + rent * level * (1 + trend.draws) ** years
    rent_only = next(o for o in p.uncertainty.outcomes if o.strategy == "rent-only")
    assert rent_only.cost_usd == pytest.approx(expected, rel=1e-9)
    # a trend the scenario gives is its figure: the path is the plan's, not drawn
    given = planner.plan(load("price_trend: -20%/year\n" + TREND), trials=0, uncertainty=50)
    assert not any(i.name.startswith(uncertainty.TREND_INPUT) for i in given.uncertainty.inputs)


# --------------------------------------------------------------------------- credits and the host (issue 35)

def test_a_credit_pays_the_drawn_bills_as_it_pays_the_plans(load):
    """A 30 USD credit on 'grant' (1.00 USD/h) beside 'cash' (0.60 USD/h), 100 h of work: the plan
    puts about 30 h on grant (its credit pays them) and 70 on cash, 42 USD. With the work drawn
    at f times the plan's, grant's bill is 30 f and cash's 42 f; the credit pays min(30, 30 f):
    the cost is 42 f + 30 f - min(30, 30 f), by hand. Re-pricing without the credit said 72 f."""
    from .test_contract import CREDIT

    s = load(CREDIT.format(credits="{amount: 30 USD, providers: [grant], name: G}", budget="")
             .replace("gpu_hours: 100,", "gpu_hours: 80..120,"))
    p = planner.plan(s, trials=0, uncertainty=1000, seed=3)
    hybrid = next(a for a in p.alternatives if a.strategy == "hybrid")
    assert hybrid.total_cost_usd == pytest.approx(42.0, abs=0.1)  # 0.06 of checkpoint writes
    u = p.uncertainty
    f = next(i for i in u.inputs if i.name == "phases.a.gpu_hours").draws / 100.0
    placed = {o: h for _, o, h in hybrid.hours}
    q = p.quotes.set_index("option")
    grant = placed["grant:box"] * q.at["grant:box", "cost_usd"] / 100 * f
    cash = placed["cash:box"] * q.at["cash:box", "cost_usd"] / 100 * f
    expected = grant + cash - np.minimum(30.0, grant)
    assert by_strategy(p)["hybrid"].cost_usd == pytest.approx(expected, rel=1e-9, abs=1e-9)
    # the plan's own cost lies inside its P10-P90
    p10, _, p90 = uncertainty.quantiles(u.chosen.cost_usd)
    assert p10 <= hybrid.total_cost_usd <= p90


def test_a_credit_that_pays_everything_makes_every_draw_free(load):
    from .test_contract import CREDIT

    s = load(CREDIT.format(credits="{amount: 300 USD, providers: [grant], name: G}", budget="")
             .replace("gpu_hours: 100,", "gpu_hours: 80..120,"))
    p = planner.plan(s, trials=0, uncertainty=500, seed=1)
    assert p.total_usd == pytest.approx(0.0, abs=0.01)
    assert by_strategy(p)["hybrid"].cost_usd == pytest.approx(np.zeros(500), abs=1e-9)
    assert p.uncertainty.p_chosen_cheapest == pytest.approx(1.0)


def test_the_host_a_plan_buys_is_in_every_draw(load):
    # no host: a card needs one, 700 USD; every figure else is the scenario's, so the buy-only plan's
    # cost is certain: card 1,000 - resale 400 + host 700 + electricity (0.45 kW x 0.20 x wall-h)
    s = load(BASE.format(hours=100, deadline="2027-12-31", buy="my-card", rent="", free="")
             .replace("host_power: 100 W", "host_power: 100 W\n  host_machine: false\n  host_price: 700 USD"))
    p = planner.plan(s, trials=10, uncertainty=200, seed=0)
    buy = next(a for a in p.alternatives if a.strategy == "buy-only")
    assert buy.host
    cost = by_strategy(p)["buy-only"].cost_usd
    assert cost == pytest.approx(np.full(200, buy.total_cost_usd), rel=1e-9)
    assert cost[0] > 1000 - 400 + 700


def test_a_stated_flip_is_planned_again_on_both_sides(load):
    """The flip of the hours (about 1,463 h, where buying at 600 + 0.09 H meets renting at 0.50 H)
    is planned again 2 % either side: below, the plan rents; above, it buys the card, as a plain
    run with --set says."""
    p = analysed(load, "1024..1902", samples=1000)
    top = p.uncertainty.drivers[0]
    assert top.input == "phases.train.gpu_hours" and top.flips_at is not None
    assert top.replanned == ("buys nothing, runs on uni-cluster", "buys my-card, runs on my-card")
    for factor, buys in ((0.98, []), (1.02, ["my-card"])):  # the same as planning the scenario at that value
        plain = planner.plan(scenario(load, f"{top.flips_at * factor!r}"), trials=0, alternatives=False)
        assert [b.offer for b in plain.purchases] == buys
    driver = json.loads(planner.report.render_json(p))["uncertainty"]["drivers"][0]
    assert driver["replanned"] == {"below": top.replanned[0], "above": top.replanned[1], "changes": True}


def test_a_flip_that_a_plan_cannot_be_made_at_says_it_is_re_priced_only(load):
    p = analysed(load, "1024..1902", samples=300)
    text = planner.report.render_text(p)
    assert "planned again, just below it the plan buys nothing" in text
    d = dataclasses.replace(p.uncertainty.drivers[0], input="speed rtx-4090 (estimated)")
    assert planner.api.replan_flips(dataclasses.replace(
        p, uncertainty=dataclasses.replace(p.uncertainty, drivers=(d,))), planner.api.default_catalog()
    ).drivers[0].replanned is None


def test_a_subscription_month_is_paid_in_every_draw(load, catalog):
    # 1 reference hour at 12 USD/h on the box against a month of Colab Pro (9.99 USD, 100 units):
    # the plan subscribes, and its hour burns about 5 units, far below the month's 100, so every
    # draw pays the fee and nothing else (the hours on the tier carry no price)
    from .test_contract import SUBSCRIPTION

    s = load(SUBSCRIPTION.format(hours=1, deadline="2027-01-10", box="12.00"))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=10, uncertainty=300, seed=0)
    assert [m.cost_usd for m in p.subscriptions] == [9.99]
    hybrid = by_strategy(p)["hybrid"]
    assert hybrid.cost_usd.min() == pytest.approx(9.99) and hybrid.cost_usd.max() == pytest.approx(9.99)


def test_units_beyond_the_months_subscribed_are_bought_at_the_fees_price_per_unit():
    # two months of 100 units subscribed; draws burning 150, 210 and 300 units pay for 0, 10 and
    # 100 units more at 9.99 / 100 USD each
    alt = planner.decide.result.Alternative("hybrid", 0.0, None, (), (), commitments=(
        ("colab-pro", 0, 1, 9.99), ("colab-pro", 31, 1, 9.99), ("aws:x", 0, 2, 100.0)))
    monthly = {"colab-pro:t4": ("colab-pro", 9.99, 100.0), "colab-pro:a100-40gb": ("colab-pro", 9.99, 100.0)}
    extra = uncertainty._units_beyond(alt, monthly, {"colab-pro": np.array([150.0, 210.0, 300.0])}, 3)
    assert extra == pytest.approx([0.0, 10 * 0.0999, 100 * 0.0999])


def test_units_beyond_the_packs_bought_are_bought_in_whole_packs():
    # two packs of 100 units bought (9.99 USD each); draws burning 150, 200, 201 and 350 units
    # pay for 0, 0, 1 and 2 packs more: a pack is sold whole
    from planner.decide.result import Alternative

    alt = Alternative("hybrid", 0.0, None, (), (), commitments=(
        ("colab-payg", 0, 2, 19.98), ("aws:x", 0, 2, 100.0)))
    packed = {"colab-payg:t4": ("colab-payg", 9.99, 100.0, 90.0), "colab-payg:a100-40gb": ("colab-payg", 9.99, 100.0, 90.0)}
    extra = uncertainty._packs_beyond(alt, packed, {"colab-payg": np.array([150.0, 200.0, 201.0, 350.0])}, 4)
    assert extra == pytest.approx([0.0, 0.0, 9.99, 2 * 9.99])


def test_a_pack_is_paid_in_every_draw(load):
    # ten T4 hours on colab-payg burn far fewer than a pack's 100 units: every draw pays the pack,
    # 9.99 USD, and no rent by the hour
    from .test_plan import BASE, _payg

    p = planner.plan(load(_payg(BASE.format(hours=10, deadline="2027-12-31", buy="", rent="", free="colab-payg"))),
                     trials=10, uncertainty=300, seed=0)
    assert [k.cost_usd for k in p.packs] == [pytest.approx(9.99)]
    hybrid = by_strategy(p)["hybrid"]
    rest = p.total_usd - 9.99  # the plan's your time (and nothing else) beside the pack
    assert hybrid.cost_usd.min() >= 9.99 + 0.5 * rest and hybrid.cost_usd.max() <= 9.99 + 2 * rest


def test_a_cards_market_range_is_drawn_over_it(load, catalog):
    # a card priced 2,000 USD whose market runs from 1,500 to 3,000 (test catalog): its draws stay
    # inside the range, most likely at the price, with the triangular mean (1,500 + 2,000 + 3,000) / 3
    text = BASE.format(hours=3000, deadline="2027-12-31", buy="card-ranged", rent="uni-cluster", free="")
    s = load(text)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, uncertainty=4000, breakevens=False)
    (price,) = [i for i in p.uncertainty.inputs if i.name == "price card-ranged"]
    assert price.draws.min() >= 1500 and price.draws.max() <= 3000 and price.base == 2000
    assert price.draws.mean() == pytest.approx((1500 + 2000 + 3000) / 3, rel=0.01)
    assert "the market's range: 1,500 to 3,000 USD" in price.source
    # in euros (the test catalog: 1.0705 USD a euro) the range is written as the draws are, in the
    # scenario's currency: 1,500 / 1.0705 = 1,401, 3,000 / 1.0705 = 2,802, 2,000 / 1.0705 = 1,868
    s = load(text.replace("start: 2027-01-04", "start: 2027-01-04\ncurrency: EUR"))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, uncertainty=100, breakevens=False)
    (price,) = [i for i in p.uncertainty.inputs if i.name == "price card-ranged"]
    assert price.unit == "EUR" and price.base == pytest.approx(2000 / 1.0705)
    assert "the market's range: 1,401 to 2,802 EUR, most likely 1,868 (" in price.source


def test_a_price_range_that_misses_its_price_is_a_located_error(tmp_path):
    import shutil

    import pricing
    from pricing.errors import InputError

    from .conftest import TEST_CATALOG

    shutil.copytree(TEST_CATALOG, tmp_path / "c")
    buy = tmp_path / "c" / "buy.csv"
    buy.write_text(buy.read_text(encoding="utf-8").replace(",2000,,,,2026-09-01,test catalog row: a card whose price "
                                                           "is a market range,,1500,", ",2000,,,,2026-09-01,test catalog "
                                                           "row: a card whose price is a market range,,2500,"),
                   encoding="utf-8")
    with pytest.raises(InputError, match=r"buy.csv:\d+:1: buy.card-ranged.price_low_usd: the range 2500-3000 does "
                                         "not hold the price 2000"):
        pricing.load_catalog(tmp_path / "c")


FP8 = """\
name: fp8
start: 2027-01-04
price_trend: flat
workload: {{family: transformer, params: 1B, precision: fp8, reference_gpu: {ref}, batch_size: 16, sequence_length: 1024}}
phases:
  train: {{gpu_hours: 200, deadline: 2027-03-31}}
consider: {{buy: [], rent: ["{rent}"], free: []}}
catalog:
  rent:
    - {{id: "{rent}", price: 2.00 USD/h}}
"""


def test_the_fp8_gain_is_drawn_where_it_moves_a_speed(load):
    # an H100 (FP8) against an A100 reference (none): its speed moves with the drawn gain over the 1.25 planned
    h100 = planner.plan(load(FP8.format(ref="a100-80gb", rent="runpod:h100-sxm")), trials=0, uncertainty=3000)
    gain = next(i for i in h100.uncertainty.inputs if i.name == "fp8 gain")
    a, c, b = 0.98, 1.25, 1.42
    assert np.mean(gain.draws) == pytest.approx((a + b + c) / 3, rel=0.01)
    assert np.std(gain.draws) / np.mean(gain.draws) == pytest.approx(workload.fp8_gain_rel_sd(), rel=0.05)
    # two FP8 cards, or mixed precision: the gain cancels or is not used, and is not drawn
    same = planner.plan(load(FP8.format(ref="h100-sxm", rent="runpod:h100-sxm")), trials=0, uncertainty=100)
    assert "fp8 gain" not in {i.name for i in same.uncertainty.inputs}


def test_the_fp8_gain_widens_the_planned_wall_hours(load, catalog):
    # the plan's wall hours at its confidence take the gain's spread, as the draws do
    with_fp8 = planner.plan(load(FP8.format(ref="a100-80gb", rent="runpod:h100-sxm")), trials=0, alternatives=False)
    q = with_fp8.quotes.set_index("option").loc["runpod:h100-sxm"]
    spread_h = q["wall_hours_conf"] - q["wall_hours"]
    mixed = planner.plan(load(FP8.format(ref="a100-80gb", rent="runpod:h100-sxm").replace("fp8", "mixed")),
                         trials=0, alternatives=False)
    m = mixed.quotes.set_index("option").loc["runpod:h100-sxm"]
    assert spread_h / q["wall_hours"] > (m["wall_hours_conf"] - m["wall_hours"]) / m["wall_hours"]


def test_a_resale_drawn_from_the_model_never_brings_more_than_a_new_cards_sale(load):
    """A used card (1,000 USD) kept three months: the model gives 1000 x 0.81^0.25 x 0.871 = 826.3
    USD, and the analysis draws it within +-23 % (up to 1,016: more than the card cost). A draw
    brings at most what the card sold the day it is bought brings, 871 USD at the price drawn
    (costs.resale_usd caps a multiple of the model so): the card's net cost is never below 12.9 %
    of its price, and the plan's cost in every draw is at least that."""
    text = BASE.format(hours=100, deadline="2027-03-31", buy="my-card", rent="", free="").replace(
        ", resale: 40%", "").replace("start: 2027-01-04\n", "start: 2027-01-04\nhorizon: 3 months\n")
    p = planner.plan(load(text), trials=0, uncertainty=2000)
    assert [b.offer for b in p.purchases] == ["my-card"]
    assert p.purchases[0].resale_usd == pytest.approx(1000 * 0.81 ** 0.25 * 0.871, abs=0.01)
    drawn = {i.name: i for i in p.uncertainty.inputs}
    factor = drawn["resale my-card"].draws / drawn["resale my-card"].base
    assert (826.3 * factor > 871).any()  # the spread reaches past a new card's sale
    price = drawn["price my-card"].draws if "price my-card" in drawn else np.full(2000, 1000.0)
    chosen = by_strategy(p)["buy-only"]
    assert (chosen.cost_usd >= 0.129 * price - 1e-6).all()


def test_an_analysis_asked_for_with_no_plan_in_time_says_why_there_is_none(load):
    # 100 h by 2027-01-06 (three days of one cluster) meets no deadline in any strategy: --uncertainty
    # printed nothing, as if it had not been asked for; the answer says why there is none
    from .test_plan import BASE

    late = BASE.format(hours=100, deadline="2027-01-06", buy="", rent="uni-cluster", free="")
    p = planner.plan(load(late), trials=0, uncertainty=200)
    assert not p.feasible and p.uncertainty is None
    assert any(w.startswith("no uncertainty analysis: it draws the inputs of the strategies' plans that meet every "
                            "deadline, and no strategy has one") for w in p.warnings)
    in_time = planner.plan(load(late.replace("2027-01-06", "2027-12-31")), trials=0, uncertainty=200)
    assert in_time.uncertainty is not None and not any("no uncertainty analysis" in w for w in in_time.warnings)


SPOT_AT_A_DEFAULT_RATE = """\
name: a spot card at a default rate
start: 2027-05-03
workload: {{family: transformer, params: 350M, batch_size: 8, sequence_length: 1024, precision: mixed,
            reference_gpu: a100-80gb}}
phases:
  a: {{gpu_hours: {hours}, deadline: 2027-05-08, checkpoint_every: 1 h, dataset_size: 1 GB}}
consider: {{buy: [], rent: ["vast:rtx-4090-interruptible"], free: []}}
"""


@pytest.mark.parametrize("hours", [34, 36])
def test_a_spot_offers_chance_at_a_default_rate_is_the_one_its_own_analysis_finds(load, catalog, hours):
    """A spot RTX 4090 at Vast's default rate (0.05-0.5/h around 0.1): the speed's spread moves
    every session hour, the interruptions' too, as the analysis draws them (work / speed x the
    hours at the drawn rate). Counted on the hours at the rate used alone, 38 h were promised at
    92.9 % and planned at 90 %, and the analysis met them in 89.0 % of its 4,000 draws (34 h:
    98.1 % said, 94.5 % found); with a normal spread of the rate and of 1 / speed, 38 h were
    still planned at 90 %. Booked at their quantiles (the rate's range reaches further up than
    down, and 1 / speed has a long tail: workload.speed_rel_sd_at, sessions.wall_over_rate_h),
    the chance said is within a point and a half of the one found, and not above it by more
    than half a point."""
    s = load(SPOT_AT_A_DEFAULT_RATE.format(hours=hours))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, uncertainty=4000, breakevens=False)
    assert p.feasible and p.uncertainty is not None and p.uncertainty.chosen is not None
    found = float(p.uncertainty.chosen.meets.mean())
    said = p.phases[0].on_time_chance
    assert -0.015 <= said - found <= 0.005, (said, found)


def test_a_chance_read_beyond_the_confidence_is_the_log_normals_own():
    # one option whose hours' spread is its speed's (1 / speed: a log-normal of sigma 0.3 about
    # the hours planned, 100 h), booked at 90 %: with 60 h of headroom the chance is the chance
    # whose quantile of the hours is 160 h, e^(z 0.3) = 1.6, z = ln 1.6 / 0.3 = 1.567: 94.1 %. A
    # normal read with the spread booked at 90 % (0.366) said 95.0 %, one with the sd (0.307) 97.5 %
    from statistics import NormalDist

    from planner.decide.optimize import _on_time
    from planner.model import workload

    sigma, conf, wall, headroom = 0.3, 0.9, 100.0, 60.0
    booked = wall * workload.speed_rel_sd_at(sigma, conf)

    def at_chance(part: str, p: float) -> float:
        return workload.speed_rel_sd_at(sigma, p) / workload.speed_rel_sd_at(sigma, conf)

    exact = NormalDist().cdf(math.log(1 + headroom / wall) / sigma)
    assert exact == pytest.approx(0.9414, abs=1e-4)
    assert _on_time([booked], headroom, [{"speed x": booked}], at_chance) == pytest.approx(exact, abs=1e-5)
    assert _on_time([booked], headroom, [{"speed x": booked}]) == pytest.approx(0.9495, abs=1e-4)  # read at 90 %'s


KAGGLE_WEEK = """\
name: a free tier's week
start: 2027-01-04
workload: {{family: transformer, params: 125M, precision: mixed, reference_gpu: t4, batch_size: 16, sequence_length: 512}}
phases:
  train: {{gpu_hours: {hours}, deadline: 2027-01-12, checkpoint_every: 1 h}}
consider: {{buy: [], rent: [], free: [kaggle-t4x2]}}
you: {{confidence: 80%}}
"""


@pytest.mark.parametrize("hours", [96, 102])
def test_a_free_tiers_chance_counts_the_sessions_own_spread_as_its_analysis_does(load, catalog, hours):
    """Kaggle's 2x T4 for nine days, its quota 30 h a week: the chance stated books the sessions'
    own spread (when interruptions strike, the work each loses: sessions.wall_sd_h) beside the
    default rate's, and the analysis drew only the rate, so a week's run (the shipped catalog's)
    stated 88.9 % where its draws found 93.1 %. The analysis draws the sessions' spread too
    ("sessions kaggle-t4x2"): 96 h 96.4 % said, 95.9 % found; 102 h 89.9 %, 90.4 %."""
    s = load(KAGGLE_WEEK.format(hours=hours))
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, uncertainty=4000, breakevens=False)
    assert p.feasible and p.uncertainty is not None and p.uncertainty.chosen is not None
    assert any(i.name == "sessions kaggle-t4x2" for i in p.uncertainty.inputs)
    found = float(p.uncertainty.chosen.meets.mean())
    said = p.phases[0].on_time_chance
    assert 0.8 <= said < 0.99 and said == pytest.approx(found, abs=0.012), (said, found)


def test_a_spot_offer_met_less_often_than_the_confidence_is_not_promised_at_it(load, catalog):
    # 38 h by the deadline: the best plan, as at 85 %, meets it in 89.0 % of its own analysis's
    # 4,000 draws, so at 90 % the plan says it cannot (it once said it could, at 92.9 %)
    text = SPOT_AT_A_DEFAULT_RATE.format(hours=38)
    s = load(text)
    assert not planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, alternatives=False).feasible
    s = load(text + "you: {confidence: 85%}\n")
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, uncertainty=4000, breakevens=False)
    assert p.feasible and p.uncertainty is not None and p.uncertainty.chosen is not None
    assert float(p.uncertainty.chosen.meets.mean()) < 0.90
