"""Energy and emissions of a plan (planner.model.carbon): figures worked by hand, the plan's own
hours carried through, a carbon price and a cap in the decision, located errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.model import carbon

from .conftest import TODAY

BASE = """\
name: carbon
start: 2027-01-04
currency: USD
electricity: 0.30 USD/kWh
horizon: {horizon}
workload: {{family: cnn, params: 25M, reference_gpu: rtx-4090, activation_memory: 4 GB}}
phases:
  train: {{gpu_hours: 100, deadline: 2027-06-30, checkpoint_every: 30 min}}
you: {{host_power: 0 W{you}}}
consider: {{buy: {buy}, rent: {rent}, free: []}}
catalog:
  buy:
    - {{id: card-300w, device: rtx-4090, price: 1500 USD, power: 300 W, resale: 0%, as_of: 2026-11-01}}
"""


def scenario(load, you="", buy='["card-300w"]', rent="[]", horizon="24 months"):
    return load(BASE.format(you=you, buy=buy, rent=rent, horizon=horizon))


def test_a_card_at_300_w_for_100_h_at_400_g_per_kwh_emits_12_kg():
    kwh = carbon.energy_kwh(300.0, 0.0, 100.0)
    assert kwh == pytest.approx(30.0)
    assert carbon.operational_kg(kwh, 400.0) == pytest.approx(12.0)


def test_a_rented_gpu_at_a_pue_of_1_1_draws_a_tenth_more():
    assert carbon.energy_kwh(700.0, 0.0, 10.0, pue=1.1) == pytest.approx(7.7)


def test_making_shared_over_three_years_and_resold_after_two_is_two_thirds():
    assert carbon.embodied_share_kg(150.0, 2.0, 3.0) == pytest.approx(100.0)
    assert carbon.embodied_share_kg(150.0, 5.0, 3.0) == pytest.approx(150.0)  # kept past its life: all of it
    # a rented machine around the clock for 4 years: 1 kg over 35,040 hours
    assert carbon.embodied_per_hour_kg(35.04) == pytest.approx(0.001)


def test_a_device_without_a_published_power_takes_the_watts_a_tflops_of_its_kind_nearest_before_it():
    """Blank is never zero: a device with no board power is counted at its peak TFLOPS times the
    watts a TFLOPS of the device of its kind released nearest before it (else nearest after):
    c (500 TFLOPS, 2023) at b's 400 W / 200 TFLOPS = 1,000 W; d (50 TFLOPS, 2019, before every
    figure) at a's 3 W a TFLOPS = 150 W; a kind with no figure at all stays unknown."""
    import pandas as pd

    from planner.decide.options import board_powers

    devices = pd.DataFrame({"id": ["a", "b", "c", "d", "t"], "kind": ["gpu", "gpu", "gpu", "gpu", "tpu"],
                            "release_date": ["2020-01-01", "2022-01-01", "2023-01-01", "2019-01-01", "2023-01-01"],
                            "fp16_tensor_tflops": [100.0, 200.0, 500.0, 50.0, 90.0],
                            "board_power_w": [300.0, 400.0, None, None, None]})
    power, said = board_powers(devices)
    assert power["c"] == pytest.approx(1000.0) and power["d"] == pytest.approx(150.0)
    assert power["a"] == 300.0 and np.isnan(power["t"]) and set(said) == {"c", "d"}
    assert said["c"].startswith("c: no board power in the catalog (none published): counted at 1,000 W, its 500 peak "
                                "TFLOPS at the 2 W a TFLOPS of b, the gpu released nearest before it")
    assert "of a, the gpu released nearest after it" in said["d"]


def test_a_rented_tpu_without_a_published_power_draws_energy_and_says_so(load, catalog):
    # the test catalog's TPU v6e has no power: 918 TFLOPS at tpu-v5e-1's 140 W / 197 TFLOPS, 652 W, over
    # the plan's wall hours at the provider's PUE; it took 0 kWh and 0 kg before, free of emissions
    text = BASE.format(you="", buy="[]", rent='["tpus:v6e"]', horizon="24 months").replace(
        "family: cnn", "family: transformer").replace("catalog:\n", "framework: jax\ncatalog:\n  rent:\n"
        "    - {id: 'tpus:v6e', device: tpu-v6e-1, price: 1.00 USD/h, billing: 1 s}\n")
    p = planner.plan(load(text), catalog, alternatives=False)
    (a,) = p.phases[0].assignments
    watts = 918 * 140 / 197
    opts = p.options.set_index("option")
    assert opts.at["tpus:v6e", "board_w"] == pytest.approx(watts)
    assert a.energy_kwh == pytest.approx(watts / 1000 * a.wall_hours * opts.at["tpus:v6e", "pue"], rel=1e-6)
    assert any(f.startswith("tpu-v6e-1: no board power in the catalog") for f in p.assumed_figures)


def test_a_bought_card_emits_its_energy_at_your_grid_and_carries_its_making(load, catalog):
    s = scenario(load, you=", grid: 400 g/kWh")
    p = planner.plan(s, catalog, alternatives=False)
    (a,) = p.phases[0].assignments
    assert a.option == "card-300w"
    # 300 W (host 0 W) over the plan's own wall hours, at home (PUE 1), at 400 g/kWh
    assert a.energy_kwh == pytest.approx(0.300 * a.wall_hours, rel=1e-9)
    assert a.co2_kg == pytest.approx(a.energy_kwh * 0.400, rel=1e-9)
    # an RTX 4090 is made with 150 kg (the catalog's estimate for a card without an assessment), kept for the
    # 24-month horizon of its 4-year life: half of it
    (bought,) = p.purchases
    assert bought.embodied_kg == pytest.approx(150.0 * (730.5 / 365.25) / 4.0, rel=1e-3)
    assert p.co2_kg == pytest.approx(a.co2_kg + bought.embodied_kg)
    d = planner.to_dict(p)
    assert d["co2_kg"] == pytest.approx(p.co2_kg, abs=1e-3) and d["emissions"]["grid_g_per_kwh"] == 400.0
    assert "carbon" not in d["cost_breakdown"]  # no price: emissions are reported, not priced


def test_a_rented_machine_runs_at_its_region_and_carries_its_making_by_the_hour(load, catalog):
    s = scenario(load, buy="[]", rent='["aws:g6e.xlarge"]')
    p = planner.plan(s, catalog, alternatives=False)
    (a,) = p.phases[0].assignments
    o = p.options.set_index("option").loc["aws:g6e.xlarge"]
    # an L40S (350 W) in us-east-1 (403 g/kWh) at AWS's PUE of 1.15, and its board (150 kg) with its server's
    # share (312 kg) over 4 years of hours
    assert (o["grid_zone"], o["pue"], o["board_w"], o["embodied_kg"]) == ("aws:us-east-1", 1.15, 350.0, 462.0)
    per_h = 0.350 * 1.15 * 0.403 + 462.0 / (4 * 8760)
    assert a.co2_kg == pytest.approx(per_h * a.wall_hours, rel=1e-9)
    assert a.energy_kwh == pytest.approx(0.350 * 1.15 * a.wall_hours, rel=1e-9)


def test_a_carbon_price_is_paid_on_the_hours_and_the_making_of_cards(load, catalog):
    free = planner.plan(scenario(load, you=", grid: de"), catalog, alternatives=False)
    priced = planner.plan(scenario(load, you=", grid: de, carbon_price: 100 USD/t"), catalog, alternatives=False)
    assert priced.co2_kg == pytest.approx(free.co2_kg)  # the same plan: only one card to do it
    assert priced.cost_usd["carbon"] == pytest.approx(priced.co2_kg * 0.1, rel=1e-6)
    assert priced.total_usd == pytest.approx(free.total_usd + priced.co2_kg * 0.1, rel=1e-6)
    assert planner.to_dict(priced)["cost_breakdown"]["carbon"] == pytest.approx(priced.co2_kg * 0.1, abs=0.01)
    # money paid leaves the price out: the budget and the break-even see cash
    assert priced.money_usd == pytest.approx(free.money_usd, rel=1e-9)


def test_a_high_enough_carbon_price_moves_the_work_to_a_cleaner_machine(load, catalog):
    # 500 h on a 300-USD card at home on a coal-heavy grid (Poland, 615 g/kWh): about 92 kg to run it and 75 kg
    # of its making; or an A100 rented in Iowa (412 g/kWh) for about 96 kg. With no price on carbon the card
    # is cheaper; at 5,000 USD a tonne the rent is
    def plan(you):
        text = BASE.format(you=you, buy='["card-300w"]', rent='["gcp:a2-highgpu-1g-spot"]', horizon="24 months")
        text = text.replace("price: 1500 USD", "price: 300 USD").replace("gpu_hours: 100", "gpu_hours: 500")
        return planner.plan(load(text), catalog, alternatives=False)

    cheap, dear = plan(", grid: pl"), plan(", grid: pl, carbon_price: 5000 USD/t")
    assert {p.purchases[0].offer for p in (cheap,) if p.purchases} == {"card-300w"}
    assert not dear.purchases and dear.co2_kg < cheap.co2_kg
    # at that price the plan chosen costs less than the card's plan would, carbon included
    assert dear.total_usd < cheap.money_usd + cheap.co2_kg * 5.0


def test_a_cap_on_emissions_holds_or_says_it_cannot(load, catalog):
    both = dict(buy='["card-300w"]', rent='["gcp:*", "aws:*"]')
    free = planner.plan(scenario(load, you=", grid: pl", **both), catalog, alternatives=False)
    cap = round(free.co2_kg * 0.6, 1)
    capped = planner.plan(scenario(load, you=f", grid: pl, max_co2: {cap} kg", **both), catalog, alternatives=False)
    if capped.feasible:
        assert capped.co2_kg <= cap + 1e-6
        assert capped.total_usd >= free.total_usd - 1e-6  # a constraint never makes the plan cheaper
    tiny = planner.plan(scenario(load, you=", grid: pl, max_co2: 1 kg", **both), catalog, alternatives=False)
    assert not tiny.feasible


CLEANER = """\
name: a cap the dearer machine meets
start: 2027-01-04
workload: {{family: transformer, params: 300M, reference_gpu: a100-80gb}}
phases:
  main: {{gpu_hours: 100, deadline: 2027-03-31}}
consider: {{buy: [], free: [], rent: [runpod:a100-pcie-80gb, azure:standard_nc24ads_a100_v4], spot: false}}
you: {{max_co2: {cap}}}
"""


def test_under_a_cap_an_offer_is_never_pruned_for_one_that_emits_more(load, catalog):
    """Two A100 80GB offers: RunPod's is cheaper and as fast, so without a cap Azure's is never
    in a cheapest plan and is pruned; but it emits less (its region's grid). Under a cap between
    the two, the cheapest plan mixes them, by hand the linear program of two shares: Azure's share
    a of the phase and RunPod's 1 - a, with a * kg_azure + (1 - a) * kg_runpod = cap. It said
    no plan met the deadline, the cleaner offer pruned for the dirtier one."""
    free = planner.plan(load(CLEANER.format(cap="100000 kg")), catalog, trials=0, alternatives=False)
    q = free.quotes.set_index("option")
    azure, runpod = "azure:standard_nc24ads_a100_v4", "runpod:a100-pcie-80gb"
    assert q.at[azure, "cost_usd"] > q.at[runpod, "cost_usd"] and q.at[azure, "co2_kg"] < q.at[runpod, "co2_kg"]
    assert q.at[azure, "wall_hours"] >= q.at[runpod, "wall_hours"]  # so RunPod's dominates on cost and time
    assert [a.option for ph in free.phases for a in ph.assignments] == [runpod]
    cap = 18.0
    a = (q.at[runpod, "co2_kg"] - cap) / (q.at[runpod, "co2_kg"] - q.at[azure, "co2_kg"])
    assert 0 < a < 1
    capped = planner.plan(load(CLEANER.format(cap=f"{cap} kg")), catalog, trials=0, alternatives=False)
    assert capped.feasible and capped.co2_kg <= cap + 1e-6
    hours = {a.option: a.gpu_hours for ph in capped.phases for a in ph.assignments}
    assert hours[azure] == pytest.approx(100 * a, rel=1e-3) and hours[runpod] == pytest.approx(100 * (1 - a), rel=1e-3)
    assert capped.total_usd == pytest.approx(a * q.at[azure, "cost_usd"] + (1 - a) * q.at[runpod, "cost_usd"], rel=1e-3)


TWO_CARDS = """\
name: a cap the cooler card meets
start: 2027-01-04
electricity: 0 USD/kWh
horizon: 12 months
workload: {{family: transformer, params: 300M, reference_gpu: rtx-3090}}
phases:
  main: {{gpu_hours: 300, deadline: 2027-06-30}}
consider: {{buy: [hot-card, cool-card], rent: [], free: []}}
catalog:
  buy:
    - {{id: hot-card, device: rtx-3090, condition: used, price: 700 USD, power: 350 W}}
    - {{id: cool-card, device: rtx-3090, condition: used, price: 750 USD, power: 250 W}}
you: {{grid: pl{cap}}}
"""


def test_under_a_cap_a_card_is_never_pruned_for_one_that_emits_more(load, catalog):
    """Two 3090s, one power-limited to 250 W and 50 USD dearer; electricity free, so the hot one
    is as cheap to run and cheaper to buy: without a cap the cool one is pruned. Under a cap the
    hot one's plan breaks, the cool one's plan is the answer: its price less resale (by hand),
    and its emissions, its energy at Poland's grid and its making, under the cap."""
    free = planner.plan(load(TWO_CARDS.format(cap="")), catalog, trials=0, alternatives=False)
    assert [b.offer for b in free.purchases] == ["hot-card"]
    assert "never better than buying hot-card" in free.excluded.set_index("option").at["cool-card", "reason"]
    capped = planner.plan(load(TWO_CARDS.format(cap=f", max_co2: {free.co2_kg - 5:.1f} kg")), catalog, trials=0,
                          alternatives=False)
    assert capped.feasible and [b.offer for b in capped.purchases] == ["cool-card"]
    bought = capped.purchases[0]
    assert capped.total_usd == pytest.approx(bought.price_usd - bought.resale_usd, abs=0.01)
    q = capped.quotes.set_index("option")
    assert capped.co2_kg == pytest.approx(q.at["cool-card", "co2_kg"] + bought.embodied_kg, rel=1e-9)
    assert capped.co2_kg <= free.co2_kg - 5 + 1e-6


def test_carbon_keys_are_checked(tmp_path):
    f = tmp_path / "s.yaml"
    for you, message in ((", grid: pll", "unknown grid 'pll' (did you mean 'pl'"),
                         (", grid: 5000 g/kWh", "expected an intensity between 0 and 2,000 g/kWh"),
                         (", carbon_price: 80 USD/h", "expected a price such as 80 USD/t"),
                         (", max_co2: 2 GB", "expected a mass such as 500 kg or 2 t")):
        f.write_text(BASE.format(you=you, buy="[]", rent="[]", horizon="24 months"), encoding="utf-8")
        out = CliRunner().invoke(main, ["validate", str(f), "--today", TODAY.isoformat()])
        assert out.exit_code == 2 and ": you." in out.output, out.output
        assert message in out.output, out.output


def test_the_uncertainty_analysis_draws_the_emissions(load, catalog):
    p = planner.plan(scenario(load, buy="[]", rent='["aws:g6e.xlarge"]'), catalog, uncertainty=2000)
    names = {i.name for i in p.uncertainty.inputs}
    assert {"grid aws:us-east-1", "pue aws", "made other with its server"} <= names
    co2 = p.uncertainty.chosen.co2_kg
    # the draws are the plan's emissions at each draw's grid, PUE and making: their mean is the plan's at the
    # triangular distributions' means (independent draws; 2,000 draws: within 3 %)
    o = p.options.set_index("option").loc["aws:g6e.xlarge"]
    (a,) = p.phases[0].assignments
    mean = lambda low, mode, high: (low + mode + high) / 3
    hours_factor = np.mean(p.uncertainty.chosen.co2_kg) / p.co2_kg
    per_h_mean = (0.350 * mean(1.14, 1.15, 1.15) * mean(379.1, 403.0, 418.0) / 1000
                  + mean(150 + 150, 150 + 312, 300 + 625) / (4 * 8760))
    per_h = float(o["co2_kg_per_wall_h"])
    assert hours_factor == pytest.approx(per_h_mean / per_h, rel=0.03) and len(co2) == 2000
    d = planner.to_dict(p)["uncertainty"]["plan"]
    assert d["co2_kg_p10"] <= a.co2_kg <= d["co2_kg_p90"]


def test_a_sweep_over_the_carbon_price(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(BASE.format(you=", grid: pl", buy='["card-300w"]', rent='["gcp:*"]', horizon="24 months"),
                 encoding="utf-8")
    out = CliRunner().invoke(main, ["sweep", str(f), "--vary", "you.carbon_price=0 USD/t,1000 USD/t,5000 USD/t",
                                    "--format", "json", "--today", TODAY.isoformat()])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert [r["you.carbon_price"] for r in rows] == ["0 USD/t", "1000 USD/t", "5000 USD/t"]
    costs = [r["total_cost"] for r in rows]
    assert costs == sorted(costs)  # a dearer carbon never makes the best plan cheaper


def test_a_cap_too_tight_says_what_would_fix_it_and_that_fix_holds(load, catalog):
    import re

    both = dict(buy="[]", rent='["gcp:*", "aws:*"]')
    tight = planner.plan(scenario(load, you=", max_co2: 1 kg", **both), catalog, alternatives=False)
    problem = tight.phases[0].shortfall or ""
    assert "the cap on emissions (1.0 kg CO2e, you.max_co2) holds it back" in problem, problem
    fix = float(re.search(r"a cap of ([\d,.]+) kg", problem).group(1).replace(",", ""))
    fixed = planner.plan(scenario(load, you=f", max_co2: {fix} kg", **both), catalog, alternatives=False)
    assert fixed.feasible and fixed.co2_kg <= fix + 1e-9
    assert any("more than the cap of 1.0 kg" in w for w in tight.warnings)
    # rented machines emit per hour of work whatever the date: no later deadline brings the work
    # under 1 kg, so the answer does not offer one
    assert not any("move deadlines" in w for w in tight.warnings)


def test_a_strategy_only_the_cap_stops_says_what_its_plan_in_time_emits_and_that_cap_brings_it_back(load, catalog):
    """Buying the card alone meets the deadline easily, but not within a cap that renting keeps
    to (the card's making counts: 76 kg against 21): the answer said 'buy-only: no plan meets
    every deadline', as if the card were too slow. It names the cap and what buy-only's plan in
    time emits, the emissions of the buy-only plan without the cap (its row when no cap is
    set), and a cap of that figure brings the strategy back."""
    from planner.report.page import render_text

    both = dict(buy='["card-300w"]', rent='["gcp:*", "aws:*"]')
    free = planner.plan(scenario(load, you=", grid: fr", **both), catalog)
    rows = {a.strategy: a.co2_kg for a in free.alternatives}
    assert rows["rent-only"] < rows["buy-only"]
    cap = round((rows["buy-only"] + rows["rent-only"]) / 2, 1)
    capped = planner.plan(scenario(load, you=f", grid: fr, max_co2: {cap} kg", **both), catalog)
    assert capped.feasible
    late = {name: kg for name, _, _, _, kg in capped.late_strategies}
    assert late["buy-only"] == pytest.approx(rows["buy-only"], rel=1e-9)
    assert "buy-only: no plan meets every deadline within the cap on emissions (its best plan in time emits " \
           f"{rows['buy-only']:,.1f} kg CO2e); the best within it leaves" in render_text(capped)
    up = math.ceil(rows["buy-only"] * 10) / 10
    back = planner.plan(scenario(load, you=f", grid: fr, max_co2: {up} kg", **both), catalog)
    assert "buy-only" in {a.strategy for a in back.alternatives}


def test_a_candidate_only_the_cap_stops_is_listed_with_what_its_plan_in_time_emits(load, catalog):
    """The card meets the deadline, but its plan emits more than a cap that renting keeps to (its
    making counts: 76 kg against 21): its row was left out of the side-by-side table, which says
    a row missing cannot meet the deadlines at all. It is listed past the cap with what its plan
    emits, that of its row without the cap; no price of the card is asked of it (none lowers
    its emissions)."""
    from planner.report.page import render_text

    both = dict(buy='["card-300w"]', rent='["gcp:*", "aws:*"]')
    free = planner.plan(scenario(load, you=", grid: fr", **both), catalog)
    rows = {c.strategy: c for c in free.candidates}
    nothing, card = rows["buy nothing"].co2_kg, rows["buy card-300w"].co2_kg
    assert nothing < card
    capped = planner.plan(scenario(load, you=f", grid: fr, max_co2: {round((card + nothing) / 2, 1)} kg", **both),
                          catalog)
    row = next(c for c in capped.candidates if c.strategy == "buy card-300w")
    assert row.needs_co2_kg == pytest.approx(card, rel=1e-9) and row.wins_below_usd is None
    assert f"over the cap: emits {card:,.1f} kg" in render_text(capped)
    listed = {c["candidate"]: c["needs_co2_kg"] for c in planner.to_dict(capped)["candidates"]}
    assert listed == {"buy nothing": None, "buy card-300w": round(card, 1)}
