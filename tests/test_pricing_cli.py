"""`planner pricing list/show/check` and catalog files layered with --catalog."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest
from click.testing import CliRunner

import pricing
from planner.cli import main

from .conftest import SCENARIOS


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


def test_list_filters_and_sorts():
    rows = json.loads(invoke("pricing", "list", "--rent", "--min-vram", "80", "--sort", "usd_per_hour",
                             "--format", "json").output)
    assert rows and all(r["vram_gb"] >= 80 for r in rows)
    prices = [r["usd_per_hour"] for r in rows]
    assert prices == sorted(prices)
    only = json.loads(invoke("pricing", "list", "--buy", "--device", "3090", "--format", "json").output)
    assert {r["device"] for r in only} == {"rtx-3090"}


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


def test_show_unknown_id():
    result = invoke("pricing", "show", "rtx-3090-usd")
    assert result.exit_code == 2 and "did you mean 'rtx-3090-used'" in result.output


def test_check_passes_on_the_shipped_catalog_and_lists_stale_rows():
    result = invoke("pricing", "check", "--today", "2026-11-22")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("integrity: ok")
    assert "stale:" in result.output


def test_check_exits_1_on_integrity_errors(tmp_path, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(pricing.DATA_DIR, data)
    (data / "buy.csv").write_text((data / "buy.csv").read_text().replace("rtx-3090-used,rtx-3090,", "rtx-3090-used,rtx-3009,"))
    import planner.api

    monkeypatch.setattr(planner.api, "default_catalog", lambda: pricing.load_catalog(data))
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
    lab = tmp_path / "lab.yaml"
    lab.write_text("rent:\n  - {id: uni, device: a100-40gb, prise: 0.2}\n", encoding="utf-8")
    result = invoke("pricing", "list", "--rent", "--catalog", str(lab))
    assert result.exit_code == 2
    assert f"{lab}:2:34: rent.0.prise: unknown key (did you mean 'price'" in result.output
