"""`planner pricing refresh` on gpuhunt's CSV format, offline: mapping, aggregation, layering,
staleness and errors. gpuhunt reads tests/gpuhunt through GPUHUNT_CATALOG_DIR; no test
touches the network."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import planner
import planner.api
import planner.report
from planner.cli import main
from pricing.refresh import Fetched, catalog_date, fetch, newer_rows, read_layer, to_layer

from .conftest import FROZEN, FULL, SCENARIOS

FIXTURE = Path(__file__).resolve().parent / "gpuhunt"
ON = dt.date(2026, 11, 22)


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    """An empty user data dir and gpuhunt pointed at the fixture catalog."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(FIXTURE))
    monkeypatch.setenv("PLANNER_FIXTURE_LAYER", "1")  # this test's own data dir may hold fixture prices
    return tmp_path / "data"


@pytest.fixture(scope="module")
def layer():
    old = os.environ.get("GPUHUNT_CATALOG_DIR")
    os.environ["GPUHUNT_CATALOG_DIR"] = str(FIXTURE)
    try:
        fetched = fetch()
    finally:
        os.environ.pop("GPUHUNT_CATALOG_DIR")
        if old is not None:
            os.environ["GPUHUNT_CATALOG_DIR"] = old
    rows, unmapped = to_layer(fetched, dict(zip(FROZEN.rent["id"], FROZEN.rent["device"])), ON, "test")
    return fetched, rows.set_index("id"), unmapped


def test_locations_aggregate_to_the_median_with_count(layer):
    _, rows, _ = layer
    g5 = rows.loc["aws:g5.xlarge"]
    assert g5["usd_per_hour"] == 1.006  # median of 1.006, 1.006, 1.123
    assert g5["region"] == "median of 3 location(s)" and "min 1.006, max 1.123" in g5["notes"]
    # dated by the provider's catalog (its version names 2026-11-20), not by the day of the fetch
    assert g5["as_of"] == dt.date(2026, 11, 20) and "gpuhunt test aws catalog v-fixture-2026-11-20" in g5["source"]
    gcp = rows.loc["gcp:a2-ultragpu-1g"]
    assert gcp["usd_per_hour"] == pytest.approx((5.0688 + 5.524) / 2)  # median of two is their mean


def test_spot_zones_priced_like_on_demand_are_left_out(layer):
    _, rows, _ = layer
    # g5 spot: 0.45, 0.40 and a zone at the on-demand 1.006 (no spot capacity): median of the two
    assert rows.loc["aws:g5.xlarge-spot", "usd_per_hour"] == pytest.approx(0.425)
    # p5 spot: 55.04 (= on-demand) is dropped; median of 19.2531, 21.1543, 25.7522, 17.6289
    assert rows.loc["aws:p5.48xlarge-spot", "usd_per_hour"] == pytest.approx((19.2531 + 21.1543) / 2)
    assert "median of 4 location(s)" == rows.loc["aws:p5.48xlarge-spot", "region"]


def test_gpu_names_map_to_devices_and_variants_are_never_guessed(layer):
    _, rows, unmapped = layer
    assert rows.loc["aws:p4de.24xlarge", "device"] == "a100-80gb"  # AWS p4: SXM modules
    assert rows.loc["aws:p4de.24xlarge", "count"] == 8
    assert rows.loc["gcp:a2-ultragpu-1g", "device"] == "a100-80gb"  # GCP A2: SXM
    assert rows.loc["aws:gr6.4xlarge", "device"] == "l4"
    assert rows.loc["gcp:tpu-v5litepod-1", "device"] == "tpu-v5e-1"
    assert rows.loc["gcp:tpu-v5litepod-1", "instance"] == "tpu-v5litepod-1"
    why = dict(zip(unmapped["provider"] + ":" + unmapped["instance"], unmapped["why"]))
    assert "pcie or sxm" in why["oci:BM.GPU.H100.8"]  # H100 80 GB, the name does not say which
    assert "no catalog device" in why["gcp:v5litepod-4"]
    assert "amd" in why["runpod:AMD Instinct MI300X OAM"]
    assert "unknown GPU GH200" in why["lambdalabs:gpu_1x_gh200"]
    assert not any(i.startswith("oci:") for i in rows.index)


def test_runpod_community_and_secure_by_location(layer):
    _, rows, _ = layer
    # gpuhunt lists Community Cloud by country code, Secure Cloud by data centre id
    assert rows.loc["runpod:rtx-4090", "usd_per_hour"] == pytest.approx((0.34 + 0.36) / 2)
    assert rows.loc["runpod:rtx-4090-secure", "usd_per_hour"] == pytest.approx((0.69 + 0.74) / 2)
    assert rows.loc["runpod:a100-sxm-80gb", "device"] == "a100-80gb"  # the shipped id, not runpod:a100-80gb
    assert rows.loc["runpod:h100-sxm-secure", "device"] == "h100-sxm"  # "80GB HBM3" is RunPod's SXM product
    assert rows.loc["runpod:h100-pcie-secure", "device"] == "h100-pcie"
    assert rows.loc["runpod:rtx-4090-secure", "count"] == 1  # the 2-GPU pod is not a separate offer


def test_a_layer_older_than_the_shipped_row_does_not_override_it(layer):
    _, rows, _ = layer
    rows = rows.reset_index()
    old = rows.assign(as_of=dt.date(2020, 1, 1))
    kept = newer_rows(old, FROZEN.rent)
    shipped = set(FROZEN.rent["id"])
    assert not kept["id"].isin(shipped).any()  # every known offer keeps its newer shipped price
    assert set(kept["id"]) == set(rows["id"]) - shipped  # offers the catalog lacks still come in
    assert set(newer_rows(rows, FROZEN.rent)["id"]) == set(rows["id"])


def test_refresh_writes_a_layer_that_run_uses_and_names(data_home):
    result = CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"])
    assert result.exit_code == 0, result.output
    assert "refreshed 20 rent offer(s)" in result.output and "GH200" in result.output  # 17 + 3 from Vast
    _, info = read_layer()
    assert info["fetched_on"] == "2026-11-22" and (data_home / "gpu-planner" / "refreshed" / "rent.csv").is_file()

    listed = CliRunner().invoke(main, ["pricing", "list", "--rent", "--provider", "aws", "--format", "json"])
    by_id = {r["id"]: r for r in json.loads(listed.output)}
    assert by_id["aws:g5.xlarge-spot"]["usd_per_hour"] == pytest.approx(0.425)
    assert by_id["aws:g5.xlarge-spot"]["layer"] == "refreshed 2026-11-22"
    assert by_id["aws:g4dn.xlarge"]["layer"] == "shipped"

    text = SCENARIOS.joinpath("thesis.yaml").read_text(encoding="utf-8")
    s = planner.api.load_scenario(SCENARIOS / "thesis.yaml", today=ON)
    s = planner.model.validate.load_scenario_text(
        text, planner.api.default_catalog().ids(), file="t.yaml", today=ON,
        sets=["consider.rent=[aws:g5.xlarge-spot]", "consider.free=[]", "consider.buy=[]", "you.own=[]"])
    d = planner.to_dict(planner.plan(s, trials=50))
    used = [a for ph in d["phases"] for a in ph["assignments"]]
    assert used and all(a["price_source"] == "refreshed 2026-11-22" for a in used)
    assert d["catalog_layers"][0]["name"] == "refreshed 2026-11-22"
    assert "gpuhunt" in d["catalog_layers"][0]["source"]
    assert "with prices from refreshed 2026-11-22" in planner.report.render_text(planner.plan(s, trials=50))


def test_clear_goes_back_to_the_shipped_catalog(data_home):
    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    result = CliRunner().invoke(main, ["pricing", "refresh", "--clear"])
    assert result.exit_code == 0 and "removed" in result.output
    assert read_layer() is None
    assert planner.api.default_catalog() is FROZEN


def test_no_offers_is_a_clear_failure_and_the_shipped_catalog_still_works(data_home, tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(tmp_path / "empty"))
    result = CliRunner().invoke(main, ["pricing", "refresh"])
    assert result.exit_code == 2  # the local catalog is the user's input
    assert "refresh failed: gpuhunt gave no offers" in result.output and "Traceback" not in result.output
    assert read_layer() is None


def test_no_network_is_a_clear_failure(data_home, monkeypatch):
    import urllib.error

    import gpuhunt

    monkeypatch.delenv("GPUHUNT_CATALOG_DIR")

    def offline(self, version=None):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(gpuhunt.Catalog, "load", offline)
    result = CliRunner().invoke(main, ["pricing", "refresh"])
    assert result.exit_code == 1
    assert "cannot fetch gpuhunt's catalogs" in result.output and "shipped catalog" in result.output


def test_offline_refresh_says_one_line_whatever_gpuhunt_logs(data_home, monkeypatch, caplog):
    """gpuhunt logs through its modules' loggers (gpuhunt._internal.catalog, ...): offline they
    printed 586 lines of tracebacks before the one line that says what to do (issue 37)."""
    import logging
    import urllib.error

    import gpuhunt

    monkeypatch.delenv("GPUHUNT_CATALOG_DIR")

    def offline(self, version=None):
        try:
            raise urllib.error.URLError("no route to host")
        except urllib.error.URLError:
            logging.getLogger("gpuhunt._internal.catalog").exception("Failed to load catalog from the network")
            raise

    monkeypatch.setattr(gpuhunt.Catalog, "load", offline)
    result = CliRunner().invoke(main, ["pricing", "refresh"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot fetch gpuhunt's catalogs" in lines[0], result.output
    assert not [r for r in caplog.records if r.name.startswith("gpuhunt")]  # no record reaches a handler
    assert logging.getLogger("gpuhunt").level == logging.NOTSET  # restored afterwards


def test_unknown_provider_gets_a_did_you_mean(data_home):
    result = CliRunner().invoke(main, ["pricing", "refresh", "--provider", "lambda"])
    assert result.exit_code == 2 and "lambdalabs" in result.output


def test_to_layer_of_nothing_is_empty():
    rows, unmapped = to_layer(Fetched(pd.DataFrame(), {}, {}), {}, ON)
    assert rows.empty and unmapped.empty


# --------------------------------------------------------------------------- hostile catalogs and layers (issue 29)


def _copy_fixture(tmp_path) -> Path:
    import shutil

    local = tmp_path / "catalog"
    shutil.copytree(FIXTURE, local)
    return local


def test_the_fixture_is_never_stored_as_prices_to_plan_with(tmp_path, monkeypatch):
    # run through the CLI, the test fixtures became a user's live layer dated today
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(FIXTURE))
    monkeypatch.delenv("PLANNER_FIXTURE_LAYER", raising=False)
    result = CliRunner().invoke(main, ["pricing", "refresh"])
    assert result.exit_code == 2 and "test fixture" in result.output and read_layer() is None


def test_refreshing_one_provider_keeps_the_others(data_home):
    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    before, _ = read_layer()
    result = CliRunner().invoke(main, ["pricing", "refresh", "--provider", "runpod", "--today", "2026-11-23"])
    assert result.exit_code == 0, result.output
    after, info = read_layer()
    assert sorted(after["id"]) == sorted(before["id"])  # 20 rows stayed 20 (it kept 5 before)
    assert set(info["versions"]) == {"aws", "gcp", "lambdalabs", "oci", "runpod", "vastai"}


@pytest.mark.parametrize("damage", ["nan-price", "not-utf8", "directory", "dev-zero", "fifo", "negative"])
def test_a_bad_provider_file_is_one_line_and_leaves_the_earlier_layer(data_home, tmp_path, monkeypatch, damage):
    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    before, _ = read_layer()
    local = _copy_fixture(tmp_path)
    aws = local / "aws.csv"
    if damage == "nan-price":
        aws.write_text(aws.read_text().replace(",1.006,", ",nan,").replace(",1.123,", ",inf,"))
    elif damage == "not-utf8":
        aws.write_bytes(b"\xff\xfe\x00garbage" * 100)
    elif damage == "directory":
        aws.unlink()
        aws.mkdir()
    elif damage == "dev-zero":
        aws.unlink()
        aws.symlink_to("/dev/zero")  # read whole, it was a MemoryError at 3.7 GB
    elif damage == "fifo":
        aws.unlink()
        os.mkfifo(aws)  # opened, it blocked forever
    elif damage == "negative":
        for f in local.glob("*.csv"):
            lines = f.read_text().splitlines()
            f.write_text("\n".join([lines[0], *(re.sub(r",(\d+\.?\d*),", r",-\1,", x, count=1) for x in lines[1:])]) + "\n")
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(local))
    result = CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-23"])
    assert "Traceback" not in result.output and "internal error" not in result.output
    after = read_layer()
    if damage == "negative":  # nothing left to store: refused, the good layer stays
        assert result.exit_code == 2 and "earlier layer stays" in result.output
        assert sorted(after[0]["id"]) == sorted(before["id"])
    else:
        assert result.exit_code == 0, result.output
        rows = after[0]
        assert rows["usd_per_hour"].map(lambda p: 0 < p < 1e4).all()
        if damage != "nan-price":
            assert "aws: not refreshed" in result.output and not rows["provider"].eq("aws").any()


def test_a_damaged_layer_is_skipped_with_one_line_that_says_how_to_clear_it(data_home):
    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    csv = data_home / "gpu-planner" / "refreshed" / "rent.csv"
    csv.write_text(csv.read_text().replace("1.006", "inf", 1))
    for args in (["validate", str(SCENARIOS / "thesis.yaml")], ["pricing", "list", "--rent"],
                 ["run", str(SCENARIOS / "thesis.yaml"), "--trials", "10"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code in (0, 3), result.output
        assert "internal error" not in result.output
        if args[0] != "validate":  # validate reads only the ids
            assert "warning: the refreshed prices in" in result.output and "--clear" in result.output
    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    huge = data_home / "gpu-planner" / "refreshed" / "layer.json"
    huge.write_text("{" + " " * 2_000_000 + "}")
    assert read_layer() is not None  # 2 MB is a (silly) layer, not an attack; the cap is far above
    huge.write_text("[1, 2]")
    with pytest.warns(Warning, match="cannot be read"):
        assert read_layer() is None


def _write_layers_forever(rows: pd.DataFrame, directory: Path, written) -> None:
    """A child's loop: layer after layer, each with its own price and its number; says when the
    first is written."""
    from pricing.refresh import write_layer

    n = 1
    while True:
        rows = rows.assign(usd_per_hour=1.0 + n)
        write_layer(rows, {"n": n}, directory)
        written.set()
        n += 1


def test_a_kill_during_a_refresh_leaves_the_old_layer_or_the_new_one(data_home, tmp_path):
    """kill -9 at random moments of write_layer: the layer read afterwards is whole (its rows and
    its metadata agree), never a mix of an old rent.csv and a new layer.json. The writer is a
    forked child (no start-up to wait for), killed at a random moment once it writes."""
    import multiprocessing
    import random
    import signal

    from pricing.refresh import write_layer

    directory = tmp_path / "layer" / "refreshed"
    rows = pd.DataFrame([dict(id=f"x:{i}", provider="x", instance=str(i), region="r", device="t4", count=1,
                              usd_per_hour=1.0 + i, spot=False, as_of="2026-11-20", source="s", notes="")
                         for i in range(2000)])
    write_layer(rows, {"n": 0}, directory)
    fork = multiprocessing.get_context("fork")
    rng = random.Random(11)
    for _ in range(8 if FULL else 4):
        written = fork.Event()
        child = fork.Process(target=_write_layers_forever, args=(rows, directory, written))
        child.start()
        assert written.wait(30)
        time.sleep(rng.uniform(0.0, 0.3))  # a few layers' writing: the kill lands anywhere in one
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        got = read_layer(directory)
        assert got is not None
        layer, info = got
        if info["n"] == 0:  # the first layer, whole
            assert layer["usd_per_hour"].tolist() == [1.0 + i for i in range(2000)]
        else:  # a later one, whole: its rows are the ones its metadata names
            assert set(layer["usd_per_hour"]) == {1.0 + info["n"]}


def test_fuzz_a_corrupted_layer_never_breaks_a_command(data_home):
    """Random damage to the stored layer (cut short, bytes overwritten, either file): every
    command still answers, with the layer or with a one-line warning, never an internal error."""
    import random

    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    directory = data_home / "gpu-planner" / "refreshed"
    good = {name: (directory / name).read_bytes() for name in ("rent.csv", "layer.json")}
    rng = random.Random(7)
    for trial in range(25 if os.environ.get("PLANNER_TESTS") == "full" else 6):
        name = rng.choice(sorted(good))
        data = bytearray(good[name])
        if rng.random() < 0.5:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randrange(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        for other, original in good.items():
            (directory / other).write_bytes(original)
        (directory / name).write_bytes(bytes(data))
        for args in (["pricing", "list", "--rent", "--format", "json"], ["validate", str(SCENARIOS / "thesis.yaml")]):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0 and "internal error" not in result.output, (trial, name, result.output[-300:])
    (directory / "rent.csv").write_bytes(bytes(range(256)) * 4)  # binary: validate read it as text and failed
    assert CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml")]).exit_code == 0


def test_a_data_directory_that_is_a_file_is_one_line_and_exit_2(tmp_path, monkeypatch):
    blocker = tmp_path / "data"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(FIXTURE))
    monkeypatch.setenv("PLANNER_FIXTURE_LAYER", "1")
    result = CliRunner().invoke(main, ["pricing", "refresh"])
    assert result.exit_code == 2 and "cannot write the refreshed layer" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_vast_listings_become_offers_at_their_median_with_their_range_and_supply(layer):
    """Vast is a marketplace: gpuhunt reads its live one-GPU listings (tests/gpuhunt/vastai.csv
    holds some). On-demand RTX 4090 listings at 0.30, 0.34, 0.40, 0.50 and 0.80 USD/h: the offer
    is their median 0.40, its range their 10th and 90th percentiles (0.316 and 0.68, linear),
    its supply the 3 listings at or below the median. Interruptible bids at 0.20, 0.25 and 0.45:
    the 0.45 is above the on-demand median (no bargain), the rest give 0.225 with one listing.
    A two-GPU listing is no one-GPU offer; an A100 80GB, PCIe or SXM, is the marketplace's one
    shipped A100 80GB offer; an unknown GPU is named with its reason."""
    _, rows, unmapped = layer
    on = rows.loc["vast:rtx-4090"]
    assert (on["usd_per_hour"], on["usd_per_hour_low"], on["usd_per_hour_high"], on["supply"]) == \
        pytest.approx((0.40, 0.316, 0.68, 3))
    assert on["count"] == 1 and not on["spot"] and "median of 5 one-GPU listing(s)" in on["notes"]
    # a saved copy is dated by its catalog version (v-fixture-2026-11-20), not the day it was read
    # (issue 37: stamped with the refresh day); live listings have no date but the fetch's
    assert on["as_of"] == dt.date(2026, 11, 20) != ON and catalog_date("live listings") is None
    bid = rows.loc["vast:rtx-4090-interruptible"]
    assert (bid["usd_per_hour"], bid["supply"]) == pytest.approx((0.225, 1)) and bid["spot"]
    assert rows.loc["vast:a100-80gb", "device"] == "a100-80gb" and rows.loc["vast:a100-80gb", "usd_per_hour"] == 0.95
    why = dict(zip(unmapped["provider"] + ":" + unmapped["instance"], unmapped["why"]))
    assert "unknown GPU RTX9999" in why["vastai:RTX9999"]
    assert {i for i in rows.index if i.startswith("vast:")} == {"vast:rtx-4090", "vast:rtx-4090-interruptible",
                                                                "vast:a100-80gb"}


def test_sensitivity_says_when_refreshed_prices_cross_a_flip(data_home):
    """A plan made with the shipped prices is out of date when a refreshed price lies past a flip:
    the sensitivity keeps the shipped figure beside the refreshed one, and the page says so."""
    import pandas as pd

    from planner import whatif
    from planner.report import whatif_page
    from planner.report.view import to_text

    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    text = ("name: a 4090 by the hour\nstart: 2027-01-04\n"
            "workload: {family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}\n"
            "phases: {a: {gpu_hours: 100, deadline: 2027-06-30}}\n"
            'consider: {buy: [], rent: ["runpod:rtx-4090"], free: []}\n')
    df = whatif.sensitivity(whatif.Job(text, "s.yaml", ON), 0.2, find_flips=False).set_index("input")
    row = df.loc["catalog.rent[runpod:rtx-4090].price"]
    assert row["value"] == "0.35 USD/h" and row["shipped_value"] == "0.34 USD/h"  # refreshed (0.34+0.36)/2; shipped
    # the page: a shipped price past the flip is said; one on the plan's side is not
    table = pd.DataFrame([dict(input="catalog.rent[x].price", value="0.35 USD/h", low_value="0.28 USD/h",
                               high_value="0.42 USD/h", swing=10.0, decision_flips="up", buy_low="nothing",
                               buy_high="nothing", kinds_low="rent", kinds_high="rent", plan_low="",
                               plan_high="a: y", flip_down_kept="", flip_down_at="", flip_up_kept="0.38 USD/h",
                               flip_up_at="0.39 USD/h", shipped_value=shipped) for shipped in ("0.41 USD/h", "0.30 USD/h")])
    page = to_text(whatif_page(table, "t"))
    assert page.count("out of date") == 1 and "0.41 USD/h in the shipped catalog" in page


@pytest.mark.parametrize("meta", [
    '{"versions": 5}', '{"fetched_on": [1, 2]}', '{"fetched_on": "yesterday"}', '{"gpuhunt": {"a": 1}}',
    '{"versions": {"aws": [1]}}', "[" * 50_000 + "]" * 50_000, '"just text"',
])
def test_a_damaged_layer_json_never_stops_planning_and_refresh_replaces_it(data_home, meta):
    """issue 39: a wrong-typed or deeply nested layer.json made run and pricing list exit 1 and
    pricing check and refresh print a traceback: now each warns with the path and plans without."""
    assert CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"]).exit_code == 0
    (data_home / "gpu-planner" / "refreshed" / "layer.json").write_text(meta)
    for args in (["run", str(SCENARIOS / "thesis.yaml"), "--trials", "10"], ["pricing", "list", "--rent"],
                 ["pricing", "check"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code in (0, 1, 3) and "internal error" not in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        if args[0] == "run" or args[1] == "list":  # what plans with the layer says it plans without it
            assert "cannot be read" in result.output and "refreshed" in result.output
    result = CliRunner().invoke(main, ["pricing", "refresh", "--today", "2026-11-22"])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert read_layer() is not None
