"""The scenario contract: values land in canonical units; variants and --set apply."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

import planner.api
from pricing.errors import InputError

from .conftest import MINIMAL, SCENARIOS, TODAY


def test_thesis_in_canonical_units(load, thesis_text):
    s = load(thesis_text)
    assert s.start == dt.date(2027, 1, 4)
    assert s.horizon_months == 24
    assert s.electricity_usd_per_kwh == pytest.approx(0.18)
    assert s.workload.params == 86e6
    assert s.workload.activation_memory_gb == 9.0
    proto, final = s.phases
    assert proto.checkpoint_every_h == 0.5 and proto.run_length_h == 2.0 and proto.dataset_size_gb == 12.0
    assert final.gpu_hours == 540.0  # 180 h per run x 3 runs
    assert final.deadline == dt.date(2027, 8, 15)
    assert s.you.attention_starts_per_day == 2.0
    assert s.you.time_value_usd_per_hour == 15.0
    assert s.you.own == ("gtx-1060-6gb",)


def test_defaults_of_a_minimal_scenario(load):
    s = load(MINIMAL)
    assert s.currency == "USD" and s.framework == "pytorch" and s.horizon_months == 24
    assert s.workload.precision == "mixed" and s.workload.optimizer == "adam"
    (train,) = s.phases
    assert train.start == s.start and train.runs == 1
    assert s.consider.buy is None and s.consider.spot is True


def test_start_defaults_to_today(load):
    s = load(MINIMAL.replace("start: 2027-01-04\n", "").replace("    deadline: 2027-03-01\n", ""))
    assert s.start == TODAY


def test_scenario_currency_converts_money_with_catalog_rates(load, catalog):
    text = MINIMAL.replace("electricity: 0.20 USD/kWh", "currency: EUR\nelectricity: 0.397")
    s = load(text + "you:\n  budget: 1000\n")
    eur = catalog.usd_per_unit()["EUR"]
    assert eur == pytest.approx(1.0705)  # ECB: 1 EUR = 1.0705 USD on 2024-06-28
    assert s.electricity_usd_per_kwh == pytest.approx(0.397 * 1.0705)
    assert s.you.budget_usd == pytest.approx(1070.5)


def test_aliases_resolve_to_ids(load):
    s = load(MINIMAL.replace("reference_gpu: rtx-3090", "reference_gpu: 3090") + "you:\n  own: [tesla-t4]\n")
    assert s.workload.reference_gpu == "rtx-3090" and s.you.own == ("t4",)


def test_variant_equals_the_same_change_by_set(load, thesis_text):
    by_variant = load(thesis_text, variant="bigger-model")
    by_set = load(thesis_text, sets=["workload.params=304M", "workload.activation_memory=20 GB",
                                     "phases.prototyping.gpu_hours=800", "phases.final.gpu_hours=600"])
    strip = dict(variant=None, overrides=())
    assert dataclasses.replace(by_variant, **strip) == dataclasses.replace(by_set, **strip)
    assert by_variant.workload.params == 304e6 and by_variant.phase("final").gpu_hours == 1800


def test_set_wins_over_variant_and_is_logged(load, thesis_text):
    s = load(thesis_text, variant="cheap-power", sets=["electricity=0.30 USD/kWh"])
    assert s.electricity_usd_per_kwh == pytest.approx(0.30)
    assert s.overrides == ("electricity: 0.18 USD/kWh -> 0.10 USD/kWh (variant 'cheap-power')",
                           "electricity: 0.10 USD/kWh -> 0.30 USD/kWh (--set)")


def test_set_can_add_a_key_the_file_leaves_out(load):
    s = load(MINIMAL, sets=["phases.train.runs=4", "you.budget=500"])
    assert s.phases[0].gpu_hours == 400 and s.you.budget_usd == 500


def test_set_addresses_catalog_entries_by_id(load, catalog):
    text = (MINIMAL + "catalog:\n  rent:\n    - {id: uni, device: a100-40gb, price: 0.40 USD/h}\n")
    s = load(text, sets=["catalog.rent.uni.price=0.25"])
    assert s.catalog_entries["rent"][0]["usd_per_hour"] == pytest.approx(0.25)


def test_scenario_catalog_entries_in_catalog_columns(load):
    text = MINIMAL + """catalog:
  buy:
    - {id: rtx-3090-marketplace, device: rtx-3090, condition: used, price: 650 USD, resale: 40%}
  rent:
    - {id: uni-cluster, device: a100-40gb, price: 0.40 USD/h, session_limit: 24 h,
       startup: 10 min, interruptions: 0.02/h}
"""
    s = load(text)
    (buy,) = s.catalog_entries["buy"]
    assert buy == {"id": "rtx-3090-marketplace", "device": "rtx-3090", "condition": "used", "price_usd": 650.0,
                   "resale_fraction": 0.4, "source": "scenario file (s.yaml)"}
    (rent,) = s.catalog_entries["rent"]
    assert rent["session_limit_h"] == 24 and rent["startup_min"] == 10 and rent["interruptions_per_h"] == 0.02


def test_a_resale_may_be_a_multiple_of_the_model_and_a_wrong_one_says_what_it_expects(load):
    # what a sensitivity moves where the model gives a card's resale: --set takes the figure it states
    row = "    - {id: card, device: rtx-3090, condition: used, price: 650 USD, resale: RESALE}\n"
    s = load(MINIMAL + "catalog:\n  buy:\n" + row.replace("RESALE", "0.9x"))
    assert s.catalog_entries["buy"][0]["resale_model_factor"] == pytest.approx(0.9)
    s = load(MINIMAL + "catalog:\n  buy:\n" + row.replace("RESALE", "40%"), sets=["catalog.buy.card.resale=1.1x"])
    assert s.catalog_entries["buy"][0]["resale_model_factor"] == pytest.approx(1.1)
    assert "resale_fraction" not in s.catalog_entries["buy"][0]
    with pytest.raises(InputError, match=r"catalog\.buy\[card\]\.resale: expected a multiple of the resale model "
                       r"such as 0\.9x, got 'abcx'"):  # the entry by its id, as --set names it
        load(MINIMAL + "catalog:\n  buy:\n" + row.replace("RESALE", "abcx"))
    with pytest.raises(InputError, match="expected a multiple of the resale model of zero or more"):
        load(MINIMAL + "catalog:\n  buy:\n" + row.replace("RESALE", "-0.5x"))


def test_consider_patterns_may_name_the_scenarios_own_offers(load):
    text = MINIMAL + ("catalog:\n  rent:\n    - {id: uni-cluster, device: a100-40gb, price: 0.40 USD/h}\n"
                      "consider:\n  rent: [uni-*]\n")
    assert load(text).consider.rent == ("uni-*",)


def test_new_offer_needs_a_device(load):
    with pytest.raises(InputError, match="new rent offer 'uni' needs a 'device'"):
        load(MINIMAL + "catalog:\n  rent:\n    - {id: uni, price: 0.40 USD/h}\n")


def test_shipped_scenarios_and_all_their_variants_validate(load):
    for path in sorted(SCENARIOS.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        s = load(text, file=str(path))
        for name in s.variant_names:
            load(text, file=str(path), variant=name)


def test_any_catalog_row_can_be_changed_by_id_in_brackets(load, catalog):
    """--set 'catalog.rent[ID].price=...' changes one field of a shipped row (ids contain dots and
    colons); the row keeps its other fields; a misspelt id gets did-you-mean (docs/scenario.md)."""
    from planner.model.overrides import _split_path

    assert _split_path("catalog.rent[aws:g5.xlarge].price") == ("catalog", "rent", "aws:g5.xlarge", "price")
    assert _split_path("phases.final.gpu_hours") == ("phases", "final", "gpu_hours")
    s = load(MINIMAL, sets=["catalog.rent[aws:g5.xlarge].price=0.80 USD/h"])
    (entry,) = s.catalog_entries["rent"]
    assert entry == {"id": "aws:g5.xlarge", "usd_per_hour": pytest.approx(0.80), **{
        k: v for k, v in entry.items() if k not in ("id", "usd_per_hour")}}
    merged = catalog.with_entries(s.catalog_entries).row("rent", "aws:g5.xlarge")
    shipped = catalog.row("rent", "aws:g5.xlarge")
    assert merged["usd_per_hour"] == pytest.approx(0.80)
    assert merged["device"] == shipped["device"] and merged["billing_s"] == shipped["billing_s"]
    # the report's list of overrides names the row by its id, as the user wrote it
    assert s.overrides == ("catalog.rent[aws:g5.xlarge].price: (the catalog's) -> 0.80 USD/h (--set)",)
    with pytest.raises(InputError, match=r"no rent offer 'aws:g5.xlarg' .*did you mean 'aws:g5.xlarge'"):
        load(MINIMAL, sets=["catalog.rent[aws:g5.xlarg].price=0.80 USD/h"])
    # a row of the scenario's own catalog is changed in place
    own = MINIMAL + "catalog:\n  rent:\n    - {id: uni, device: a100-40gb, price: 0.40 USD/h}\n"
    s = load(own, sets=["catalog.rent[uni].price=0.10 USD/h"])
    assert [e["usd_per_hour"] for e in s.catalog_entries["rent"]] == [pytest.approx(0.10)]
    assert s.overrides == ("catalog.rent[uni].price: 0.40 USD/h -> 0.10 USD/h (--set)",)


@pytest.mark.parametrize("written, low, middle, high", [
    ("200..300", 200, 250, 300),
    ("200 h..300 h", 200, 250, 300),
    ("3..5 days", 72, 96, 120),
    ("250 h ± 20%", 200, 250, 300),
    ("250 +/- 50", 200, 250, 300),
])
def test_a_quantity_may_be_a_range_and_the_plan_uses_its_middle(load, written, low, middle, high):
    """docs/scenario.md, 'Quantities and units': the plan uses the middle; the range is kept for the uncertainty analysis."""
    s = load(MINIMAL.replace("gpu_hours: 100", f"gpu_hours: {written}"))
    assert s.phases[0].gpu_hours == pytest.approx(middle)
    assert s.ranges["phases.train.gpu_hours"] == (pytest.approx(low), pytest.approx(high))


def test_ranges_of_money_use_the_scenarios_currency_and_bad_ranges_are_located(load):
    s = load(MINIMAL.replace("electricity: 0.20 USD/kWh", "currency: EUR\nelectricity: 0.30..0.40"))
    eur = s.usd_per_currency
    assert s.electricity_usd_per_kwh == pytest.approx(0.35 * eur)
    assert s.ranges["electricity"] == (pytest.approx(0.30 * eur), pytest.approx(0.40 * eur))
    with pytest.raises(InputError, match=r"phases.train.gpu_hours: a range runs from low to high"):
        load(MINIMAL.replace("gpu_hours: 100", "gpu_hours: 300..200"))
    with pytest.raises(InputError, match=r"phases.train.gpu_hours: expected a duration"):
        load(MINIMAL.replace("gpu_hours: 100", "gpu_hours: 200 GB..300 GB"))
    with pytest.raises(InputError, match=r"got '200 OO' \(in the range '200..15OO'\)"):  # a typo: O for 0
        load(MINIMAL.replace("gpu_hours: 100", "gpu_hours: 200..15OO"))
    with pytest.raises(InputError, match=r"phases.train.deadline: "):
        load(MINIMAL.replace("deadline: 2027-03-01", "deadline: 2027-03-01..2027-04-01"))


def test_every_key_is_declared_once_with_its_meaning(load):
    """planner keys lists every key from the schema; each has a meaning, and a key left out of a
    file takes the default the listing shows (the schema is the one place defaults live)."""
    from click.testing import CliRunner

    from planner.cli import main
    from planner.model.schema import schema_rows

    rows = {r["key"]: r for r in schema_rows(planner.api.shipped_catalog().columns)}
    assert all(r["doc"] for r in rows.values()), [k for k, r in rows.items() if not r["doc"]]
    s = load(MINIMAL)  # only the required keys
    (ph,) = s.phases
    assert ph.checkpoint_every_h == rows["phases.<name>.checkpoint_every"]["default"] == 1.0
    assert ph.runs == rows["phases.<name>.runs"]["default"] == 1
    assert s.workload.precision == rows["workload.precision"]["default"] == "mixed"
    assert s.you.host_power_w == rows["you.host_power"]["default"] == 100.0
    assert s.horizon_months == rows["horizon"]["default"] == 24.0
    assert rows["catalog.rent[].billing"]["unit"] == "s"  # entries documented by columns.csv
    out = CliRunner().invoke(main, ["keys", "--format", "csv"])
    assert out.exit_code == 0 and out.output.count("\n") == len(rows) + 1


def test_a_workload_round_trips_through_its_keys(load):
    from planner.model.validate import workload_of, workload_values

    w = load(MINIMAL.replace("reference_gpu: rtx-3090", "reference_gpu: rtx-3090\n  method: lora\n"
                             "  trainable_params: 20M")).workload
    assert w.method == "lora" and w.trainable_params == 20e6
    assert workload_of(workload_values(w)) == w


# A what-if sets the scenario's own quantities on the parsed scenario (edits.with_value),
# not by reading the file again: each must give the scenario that `--set path=value` reads.
EDITS = {"electricity": "0.31 EUR/kWh", "horizon": "18 months", "workload.params": "30M", "workload.batch_size": 48,
         "workload.activation_memory": "5 GB", "phases.train.gpu_hours": "100..140 h", "phases.train.runs": 3,
         "phases.train.checkpoint_every": "45 min", "phases.train.dataset_size": "20 GB",
         "phases.train.deadline": "2027-04-15",
         "you.host_power": "120 W", "you.time_value": "5 EUR/h", "you.attention": "3 starts/day",
         "you.budget": "900 EUR"}


@pytest.mark.parametrize("path", sorted(EDITS))
def test_a_what_ifs_typed_edit_is_the_scenario_set_reads(load, catalog, path):
    from planner.model.edits import EDITABLE, editable, with_value
    from planner.model.overrides import parse_set

    assert editable(path) and len(EDITS) == len(EDITABLE)
    text = "currency: EUR\n" + MINIMAL.replace("electricity: 0.20 USD/kWh\n", "")  # the default rate, a currency
    _, raw = parse_set(f"{path}={EDITS[path]}")
    edited = with_value(load(text), path, raw, catalog.ids())
    read = load(text, sets=(f"{path}={EDITS[path]}",))
    assert edited != load(text)
    assert dataclasses.replace(edited, overrides=()) == dataclasses.replace(read, overrides=())


def test_a_what_ifs_typed_edit_refuses_what_set_refuses(load, catalog):
    from planner.model.edits import with_value

    s = load(MINIMAL)
    with pytest.raises(InputError) as typed:
        with_value(s, "phases.train.gpu_hours", "-5 h", catalog.ids())
    with pytest.raises(InputError) as text:
        load(MINIMAL, sets=("phases.train.gpu_hours=-5 h",))
    assert [p.message for p in typed.value.problems] == [p.message for p in text.value.problems]
    assert with_value(s, "phases.other.gpu_hours", "5 h", catalog.ids()) is None  # a new phase: set as text
    for deadline in ("2026-01-01", "2070-01-01"):  # before the phase's start; past the years a plan looks ahead
        with pytest.raises(InputError) as typed:
            with_value(s, "phases.train.deadline", deadline, catalog.ids())
        with pytest.raises(InputError) as text:
            load(MINIMAL, sets=(f"phases.train.deadline={deadline}",))
        assert [p.message for p in typed.value.problems] == [p.message for p in text.value.problems]


def test_a_what_ifs_edit_of_a_phases_hours_caps_all_its_runs_once(load, catalog):
    # 20 runs of 2,500 h (50,000 in all) moved by +20 %: 20 runs of 3,000 h, 60,000 h in all. The edit
    # counted the runs twice (the phase holds its total) and refused it as "20 runs of 60,000 h are
    # 1,200,000 reference GPU-hours", so `planner sensitivity` of a lab's two years stopped with exit 2
    from planner.model.edits import with_value

    text = MINIMAL.replace("gpu_hours: 100\n", "gpu_hours: 2500\n    runs: 20\n")
    moved = with_value(load(text), "phases.train.gpu_hours", 3000, catalog.ids())
    assert moved is not None and moved.phase("train").gpu_hours == 20 * 3000
    # the cap is the file's: 50,001 h a run is past it, edited or written, in the same words
    with pytest.raises(InputError) as typed:
        with_value(load(text), "phases.train.gpu_hours", 50_001, catalog.ids())
    with pytest.raises(InputError) as written:
        load(text.replace("gpu_hours: 2500", "gpu_hours: 50001"))
    said = "20 runs of 50,001 h are 1,000,020 reference GPU-hours; at most 1,000,000 in a phase"
    assert [p.message for p in typed.value.problems] == [p.message for p in written.value.problems] == [said]


def test_a_phase_named_by_a_number_is_set_by_its_name(load):
    # a path reads the part 2028 as a number (a list's index); --set phases.2028.deadline answered "no phase
    # named '2028' (did you mean '2028'?)", and so did a sensitivity's flip search on it. A variant's keys too
    text = MINIMAL.replace("  train:\n", "  2028:\n") + (
        "variants:\n  later: {phases.2028.deadline: 2027-04-01}\n  nested: {phases: {2028: {gpu_hours: 50}}}\n")
    assert load(text, sets=("phases.2028.deadline=2027-03-15",)).phase("2028").deadline == dt.date(2027, 3, 15)
    assert load(text, variant="later").phase("2028").deadline == dt.date(2027, 4, 1)
    assert load(text, variant="nested").phase("2028").gpu_hours == 50
    with pytest.raises(InputError) as wrong:
        load(text, sets=("phases.2029.deadline=2027-03-15",))
    assert "no phase named '2029' in the scenario (did you mean '2028'?)" in wrong.value.problems[0].message


def test_a_clocks_duration_in_a_file_is_hours_and_minutes_not_base_60(load):
    # YAML 1.1 reads an unquoted 1:30 as the number 90 (base 60): "checkpoint_every: 1:30" planned a
    # checkpoint every 90 hours and "budget: 1:30" was 90 USD. A clock's 1:30 is 1.5 h; as money it is
    # refused, located
    text = MINIMAL.replace("    deadline: 2027-03-01\n", "    deadline: 2027-03-01\n    checkpoint_every: 1:30\n")
    assert load(text).phase("train").checkpoint_every_h == pytest.approx(1.5)
    with pytest.raises(InputError) as money:
        load(MINIMAL + "you: {budget: 1:30}\n")
    (problem,) = money.value.problems
    assert problem.path == "you.budget" and "got '1:30'" in problem.message


def test_grid_no_unquoted_is_said_to_be_read_as_false(load):
    # YAML 1.1 reads an unquoted no as false: a Norwegian's "grid: no" was "unknown grid False"
    with pytest.raises(InputError) as refused:
        load(MINIMAL + "you: {grid: no}\n")
    (problem,) = refused.value.problems
    assert problem.path == "you.grid" and "for Norway write grid: 'no' (in quotes)" in problem.message
    assert load(MINIMAL + "you: {grid: 'no'}\n").you.grid == "no"


@pytest.mark.parametrize(("written", "meant"), [("2027-9-30", "2027-09-30"), ("2027/09/30", "2027-09-30"),
                                                ("30.09.2027", "2027-09-30"), ("Sept 30 2027", "2027-09-30"),
                                                ("30 June 2027", "2027-06-30"), ("13/04/2027", "2027-04-13"),
                                                ("01/04/2027", "2027-01-04 or 2027-04-01")])
def test_a_date_written_another_way_is_refused_with_what_it_can_mean(load, written, meant):
    # dates as people write them were refused with no hint; a refusal names the date they can only
    # mean, or both where day and month could be either (never read in its place)
    with pytest.raises(InputError) as refused:
        load(MINIMAL.replace("deadline: 2027-03-01", f"deadline: '{written}'"))
    (problem,) = refused.value.problems
    assert problem.path == "phases.train.deadline" and problem.message.endswith(f"(did you mean {meant}?)")


@pytest.mark.parametrize(("written", "meant"), [
    ("June 2027", "2027-06-30, its last day, or 2027-06-01, its first"),
    ("Sept. 2027", "2027-09-30, its last day, or 2027-09-01, its first"),
    ("2028-02", "2028-02-29, its last day, or 2028-02-01, its first"),
    ("02/2027", "2027-02-28, its last day, or 2027-02-01, its first"),
    ("end of June 2027", "2027-06-30, its last day"), ("Beginning of  April 2027", "2027-04-01, its first day")])
def test_a_month_written_for_a_deadline_is_refused_with_its_last_and_first_day(load, written, meant):
    # 'deadline: June 2027' was refused as no date with no hint: which day of June is 29 days of work
    with pytest.raises(InputError) as refused:
        load(MINIMAL.replace("deadline: 2027-03-01", f"deadline: '{written}'"))
    (problem,) = refused.value.problems
    assert problem.path == "phases.train.deadline"
    assert problem.message.endswith(f"(a month, not a day: did you mean {meant}?)")


@pytest.mark.parametrize("written", ["Junebug 2027", "2027-13", "next month", "June"])
def test_what_is_no_month_of_a_year_gets_no_day_suggested(load, written):
    with pytest.raises(InputError) as refused:
        load(MINIMAL.replace("deadline: 2027-03-01", f"deadline: '{written}'"))
    (problem,) = refused.value.problems
    assert "did you mean" not in problem.message and "a month" not in problem.message


@pytest.mark.parametrize(("written", "meant"), [("fifty percent", "50%"), ("95 percent", "95%"), ("12.5 pct", "12.5%"),
                                                ("ninety-five per cent", "95%"), ("Twenty Five Percent", "25%"),
                                                ("a hundred percent", "100%"), ("fiftyish percent", None),
                                                ("fifty", None), ("twenty-ten percent", None), ("50%", None)])
def test_a_share_written_with_percent_is_suggested_as_one(written, meant):
    from planner.model import units

    assert units.percent_meant(written) == meant


def test_a_confidence_or_a_resale_written_in_words_is_refused_with_the_share_it_means(load):
    # 'confidence: ninety percent' and 'resale: fifty percent' were refused with no hint
    with pytest.raises(InputError) as refused:
        load(MINIMAL + "you: {confidence: ninety percent}\n")
    (problem,) = refused.value.problems
    assert problem.path == "you.confidence" and problem.message.endswith("(did you mean '90%'?)")
    text = MINIMAL + "catalog:\n  buy:\n    - {id: my-card, device: rtx-3090, price: 900 USD, resale: fifty percent}\n"
    with pytest.raises(InputError) as refused:
        load(text)
    (problem,) = refused.value.problems
    assert problem.path == "catalog.buy[my-card].resale"
    assert problem.message == "expected a share of the price such as 40%, got 'fifty percent' (did you mean '50%'?)"
