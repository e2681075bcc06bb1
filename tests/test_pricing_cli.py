"""`planner pricing list/show/check` and catalog files layered with --catalog."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import pricing
from planner.cli import main

ROOT = Path(__file__).resolve().parents[1]

from .conftest import SCENARIOS, TEST_CATALOG


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_list_devices_csv_has_every_device(catalog):
    result = invoke("pricing", "list", "--devices", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert result.exit_code == 0 and len(rows) == len(catalog.devices) >= 40
    assert {"id", "vram_gb", "as_of", "source"} <= set(rows[0])


def test_list_rent_counts_offers_and_providers():
    rows = json.loads(invoke("pricing", "list", "--rent", "--format", "json").output)
    assert len(rows) >= 40 and len({r["provider"] for r in rows}) >= 6
    assert all(r["as_of"] and r["source"] for r in rows)


def test_list_free_expands_compute_unit_subscriptions():
    rows = {r["id"]: r for r in json.loads(invoke("pricing", "list", "--free", "--format", "json").output)}
    assert len({r["id"].split(":")[0] for r in rows.values()}) >= 5
    assert rows["colab-pro:a100-40gb"]["usd_per_hour"] == pytest.approx(0.0999 * 13.08)


def test_list_electricity_gives_each_regions_price_and_the_default(catalog):
    # the prices you.grid may take its electricity from (a region's) when the scenario gives none
    rows = {r["region"]: r for r in json.loads(invoke("pricing", "list", "--electricity", "--format", "json").output)}
    table = catalog.electricity.set_index("region")
    assert set(rows) == set(table.index) and all(r["as_of"] and r["source"] for r in rows.values())
    assert rows["de"]["price"] == table.at["de", "price"] and rows["de"]["currency"] == "EUR"
    assert [region for region, r in rows.items() if r["default"]] == list(table.index[table["default"]])


def test_show_names_every_table_that_has_the_id(catalog):
    # de is an electricity region and a grid zone: show gave the first row alone, and the grid's
    # could not be read; it names the other table, and --table reads it
    first = invoke("pricing", "show", "de")
    assert first.exit_code == 0 and first.output.startswith("[electricity]")
    assert "also in grid" in first.output and "planner pricing show de --table grid" in first.output
    grid = json.loads(invoke("pricing", "show", "de", "--table", "grid", "--format", "json").output)
    assert grid["table"] == "grid" and grid["g_co2e_per_kwh"] == catalog.tables["grid"].set_index("id").at[
        "de", "g_co2e_per_kwh"]
    wrong = invoke("pricing", "show", "de", "--table", "rent")
    assert wrong.exit_code == 2 and "no row 'de' in the rent table; it is in electricity, grid" in wrong.output
    assert "also in buy" in invoke("pricing", "show", "rtx-4090").output  # the device, and the card to buy
    assert "also in" not in invoke("pricing", "show", "vast:rtx-3090").output  # a rent offer alone
    # 'a100' is an id (the A100s' making) and the A100 40GB's alias: show gave the row and never named the card
    both = invoke("pricing", "show", "a100").output
    assert both.startswith("[embodied]") and "planner pricing show a100-40gb" in both
    assert "alias" not in invoke("pricing", "show", "a100-40gb").output.split("--- derived")[-1]


def test_list_filters_and_sorts():
    rows = json.loads(invoke("pricing", "list", "--rent", "--min-vram", "80", "--sort", "usd_per_hour",
                             "--format", "json").output)
    assert rows and all(r["vram_gb"] >= 80 for r in rows)
    prices = [r["usd_per_hour"] for r in rows]
    assert prices == sorted(prices)
    only = json.loads(invoke("pricing", "list", "--buy", "--device", "3090", "--format", "json").output)
    assert {r["device"] for r in only} == {"rtx-3090"}
    # issue 39: without a table flag a filter lists every table it applies to (not the trends, which
    # said '--device and --min-vram apply to devices and offers, not to --trends')
    every = invoke("pricing", "list", "--min-vram", "80")
    assert every.exit_code == 0 and "not to --trends" not in every.output
    assert all(f"{table} (" in every.output for table in ("devices", "buy", "rent")) and "trends (" not in every.output


@pytest.mark.parametrize("args, message", [
    (["--rent", "--provider", "lamda"], "unknown provider 'lamda' (did you mean 'lambda'?)"),
    (["--buy", "--sort", "prce"], "unknown column 'prce' (did you mean 'price_usd'"),
    (["--device", "rtx-3009"], "unknown device 'rtx-3009' (did you mean 'rtx-3090'"),
])
def test_list_bad_input_exits_2_with_did_you_mean(args, message):
    result = invoke("pricing", "list", *args)
    assert result.exit_code == 2 and message in result.output


def test_show_derives_hourly_price_from_compute_units():
    result = invoke("pricing", "show", "colab-pro")
    assert result.exit_code == 0
    assert "13.08 units/h (published) -> 1.307 USD/h (derived), at most 7.6 h/month" in result.output
    assert "source" in result.output and "as_of" in result.output


def test_show_a_tier_that_sells_packs_says_what_a_pack_buys():
    # colab-payg (frozen): 100 units for 9.99 USD that last 90 days; an A100 burns 13.08 an hour
    result = invoke("pricing", "show", "colab-payg")
    assert result.exit_code == 0
    assert "13.08 units/h (published) -> 1.307 USD/h (derived), 7.6 h a pack" in result.output
    assert "100 units for 9.99 USD, paid whole, lasting 90 days" in result.output
    # and the list of tiers names the pack beside the price by the hour, which it is sold in
    listed = invoke("pricing", "list", "--free")
    assert listed.exit_code == 0 and "Pack [units]" in listed.output
    row = next(line for line in listed.output.splitlines() if line.startswith("colab-payg:t4 "))
    assert " 100 " in row
    assert " 100 " not in next(line for line in listed.output.splitlines() if line.startswith("colab-pro:t4 "))


def test_show_a_device_lists_what_it_costs_to_buy_newest_first():
    # issue 37: 'pricing show CARD' gave its specs only; the test catalog sells the RTX 4090 three ways
    out = invoke("pricing", "show", "rtx-4090").output
    lines = [line for line in out.splitlines() if line.startswith("buy ")]
    assert lines[0].split()[1] == "card-ranged" and "2,000 USD (market 1,500-3,000), as of 2026-09-01" in lines[0]
    assert [line.split()[1] for line in lines] == ["card-ranged", "rtx-4090", "rtx-4090-launch"]


def test_show_unknown_id():
    result = invoke("pricing", "show", "rtx-3090-usd")
    assert result.exit_code == 2 and "did you mean 'rtx-3090-used'" in result.output


def test_check_passes_on_the_shipped_catalog_and_lists_stale_rows(monkeypatch):
    import planner.api

    monkeypatch.setattr(planner.api, "shipped_catalog", pricing.load_catalog)  # pricing/data itself
    result = invoke("pricing", "check", "--today", "2026-11-22")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("integrity: ok")
    assert "stale:" in result.output and "lint: ok" in result.output
    # the share of fresh rent rows, counted here from the file itself
    import csv

    rows = list(csv.DictReader((ROOT / "pricing" / "data" / "rent.csv").open()))
    fresh = sum(0 <= (dt.date(2026, 11, 22) - dt.date.fromisoformat(r["as_of"])).days <= 120 for r in rows)
    assert f"rent {fresh} of {len(rows)} rows ({fresh / len(rows):.0%})" in result.output


def _line_of(path, row_id: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(row_id + ","))


@pytest.mark.parametrize("file, row_id, old, new, column, message", [
    # a zone without spot capacity copied as spot (aws:p5.48xlarge-spot before the 2026-11 audit)
    ("rent.csv", "aws:g5.xlarge-spot", ",0.4507,", ",1.006,", 7, "equals the on-demand 1.006 USD/h"),
    ("rent.csv", "aws:g5.xlarge-spot", ",0.4507,", ",1.2,", 7, "is above the on-demand"),
    # an instance mapped to another GPU (Azure T4 VMs were mapped to a V100 until 2026-11-22)
    ("rent.csv", "azure:standard_nc24ads_a100_v4", ",a100-pcie-80gb,", ",t4,", 5, "names the A100"),
    # Azure NC A100 v4 is the PCIe card (catalog audit 2026-11)
    ("rent.csv", "azure:standard_nc24ads_a100_v4", ",a100-pcie-80gb,", ",a100-80gb,", 5, "is a PCIe card"),
    ("rent.csv", "lambda:gpu_1x_h100_pcie", ",h100-pcie,", ",h100-sxm,", 5, "is a PCIe card"),
    ("buy.csv", "rtx-4090", ",2026-01-01,", ",2027-01-01,", 9, "after today (2026-11-22)"),
])
def test_check_finds_each_kind_of_mistake_at_its_cell(tmp_path, monkeypatch, file, row_id, old, new, column, message):
    import planner.api

    data = tmp_path / "data"
    shutil.copytree(TEST_CATALOG, data, ignore=shutil.ignore_patterns("README.md"))
    path = data / file
    lines = path.read_text().splitlines()
    line = _line_of(path, row_id)
    assert old in lines[line - 1], "the fixture edit must apply"
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(planner.api, "shipped_catalog", lambda: pricing.load_catalog(data))
    result = invoke("pricing", "check", "--today", "2026-11-22")
    assert result.exit_code == 1, result.output
    hits = [x for x in result.output.splitlines() if message in x]
    assert len(hits) == 1, result.output
    assert hits[0].startswith(f"{path}:{line}:") and f"{row_id}." in hits[0]
    assert hits[0].startswith(f"{path}:{line}:{column}:")
    assert "lint error(s)" in result.output


def test_check_flags_prices_far_off_the_refreshed_list(tmp_path, monkeypatch):
    import planner.api

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(Path(__file__).resolve().parent / "gpuhunt"))
    monkeypatch.setenv("PLANNER_FIXTURE_LAYER", "1")  # the fixture's prices, in this test's own data dir
    assert invoke("pricing", "refresh", "--today", "2026-11-22").exit_code == 0
    data = tmp_path / "data"
    shutil.copytree(TEST_CATALOG, data, ignore=shutil.ignore_patterns("README.md"))
    rent = data / "rent.csv"
    rent.write_text(rent.read_text().replace("runpod:rtx-4090,runpod,RTX 4090 (Community Cloud),,rtx-4090,1,0.34,",
                                             "runpod:rtx-4090,runpod,RTX 4090 (Community Cloud),,rtx-4090,1,0.6,"))
    monkeypatch.setattr(planner.api, "shipped_catalog", lambda: pricing.load_catalog(data))
    # the layer (dated today) overrides the shipped row in plans; check judges the shipped rows against it
    from pricing.checks import off_list
    from pricing.refresh import read_layer

    found = off_list(pricing.load_catalog(data), read_layer()[0])
    by_path = {f.path: f for f in found}
    # the edited row, the fixture's Lambda H100 (3.14 listed against 4.29 shipped) and its Vast RTX 4090
    # interruptible bids (a 0.225 median against the shipped row)
    assert set(by_path) == {"rent.runpod:rtx-4090.usd_per_hour", "rent.lambda:gpu_1x_h100_sxm5.usd_per_hour",
                            "rent.vast:rtx-4090-interruptible.usd_per_hour"}
    f = by_path["rent.runpod:rtx-4090.usd_per_hour"]
    assert "1.71x the provider's list 0.35" in f.message
    assert (f.line, f.column) == (_line_of(rent, "runpod:rtx-4090"), 7)
    assert all(f.severity == "warning" for f in found)  # for the catalog's keepers: plans use the list's price


def test_the_shipped_catalog_checks_clean_after_a_refresh(tmp_path, monkeypatch):
    """issue 37: after any refresh, 'pricing check' exited 1 on shipped rows far off the refreshed
    list, which a user cannot fix and which no plan uses (the layer's price is used): warnings now."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(Path(__file__).resolve().parent / "gpuhunt"))
    monkeypatch.setenv("PLANNER_FIXTURE_LAYER", "1")
    import planner.api

    monkeypatch.setattr(planner.api, "shipped_catalog", pricing.load_catalog)  # pricing/data itself
    assert invoke("pricing", "refresh", "--today", "2026-11-22").exit_code == 0
    result = invoke("pricing", "check", "--today", "2026-11-22")
    assert result.exit_code == 0, result.output
    assert "warning: rent.lambda:gpu_1x_h100_sxm5.usd_per_hour" in result.output and "warning(s) above" in result.output


def test_check_exits_1_on_integrity_errors(tmp_path, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(TEST_CATALOG, data, ignore=shutil.ignore_patterns("README.md"))
    (data / "buy.csv").write_text((data / "buy.csv").read_text().replace("rtx-3090-used,rtx-3090,", "rtx-3090-used,rtx-3009,"))
    import planner.api

    monkeypatch.setattr(planner.api, "shipped_catalog", lambda: pricing.load_catalog(data))
    result = invoke("pricing", "check")
    assert result.exit_code == 1
    assert "unknown device 'rtx-3009'" in result.output and "1 integrity error(s)" in result.output


def test_catalog_file_layers_over_the_shipped_catalog(tmp_path):
    lab = tmp_path / "lab-prices.yaml"
    lab.write_text("currency: EUR\nrent:\n  - {id: aws:g5.xlarge, price: 0.50}\n"
                   "  - {id: uni-gpu, device: a100-40gb, price: 0.20 EUR/h}\n", encoding="utf-8")
    rows = {r["id"]: r for r in json.loads(invoke("pricing", "list", "--rent", "--catalog", str(lab),
                                                  "--format", "json").output)}
    assert rows["aws:g5.xlarge"]["usd_per_hour"] == pytest.approx(0.50 * 1.0705)
    assert rows["uni-gpu"]["usd_per_hour"] == pytest.approx(0.20 * 1.0705)


def test_scenario_entries_win_over_catalog_files(tmp_path):
    lab = tmp_path / "lab.yaml"
    lab.write_text("rent:\n  - {id: uni-cluster, device: rtx-3090, price: 9.00 USD/h}\n", encoding="utf-8")
    scen = tmp_path / "s.yaml"
    scen.write_text((SCENARIOS / "thesis.yaml").read_text(encoding="utf-8").replace(
        'rent: ["aws:*", "lambda:*", "runpod:*", "vast:*"]', "rent: [uni-cluster]").replace(
        "variants:", "catalog:\n  rent:\n    - {id: uni-cluster, price: 0.01 USD/h}\n\nvariants:"), encoding="utf-8")
    d = json.loads(invoke("run", str(scen), "--catalog", str(lab), "--format", "json").output)
    options = {a["option"] for ph in d["phases"] for a in ph["assignments"]}
    assert options == {"uni-cluster"}  # at 0.01 USD/h it beats everything


def test_catalog_file_errors_are_located(tmp_path):
    """A catalog file's mistake is located and named by the entry's id, as in a scenario's
    catalog (it was 'rent.1.prise': which of a lab's twenty offers is the second?)."""
    lab = tmp_path / "lab.yaml"
    lab.write_text("rent:\n  - {id: uni-a, device: a100-40gb, price: 0.2}\n  - {id: uni, device: a100-40gb, prise: 0.2}\n"
                   "  - {device: a100-40gb, prise: 0.2}\n", encoding="utf-8")
    result = invoke("pricing", "list", "--rent", "--catalog", str(lab))
    assert result.exit_code == 2
    assert f"{lab}:3:34: rent[uni].prise: unknown key (did you mean 'price'" in result.output
    assert f"{lab}:4:25: rent.2.prise: unknown key" in result.output  # no id to name it by


def test_check_fails_on_a_spec_the_speed_model_needs(tmp_path):
    """A blank FP16 tensor rate on a tensor-core card made the RTX 5090 slower than a 4090: every
    device must carry what the speed model reads (a Pascal card has no tensor rate to give)."""
    from pricing.checks import missing_specs

    data = tmp_path / "data"
    shutil.copytree(TEST_CATALOG, data, ignore=shutil.ignore_patterns("README.md"))
    path = data / "devices.csv"
    before = {f.path for f in missing_specs(pricing.load_catalog(data))}
    lines = path.read_text().splitlines()
    line = _line_of(path, "rtx-4090")
    assert ",82.6,165," in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(",82.6,165,", ",82.6,,", 1)
    path.write_text("\n".join(lines) + "\n")
    found = [f for f in missing_specs(pricing.load_catalog(data)) if f.path not in before]
    assert [(f.path, f.line, f.column) for f in found] == [("devices.rtx-4090.fp16_tensor_tflops", line, 9)]
    assert not any(".gtx-1080-ti." in p for p in before)  # no tensor cores: nothing to fill
