"""The shipped catalog is complete, sourced and passes its own check; each integrity rule catches its fault.

These tests read ``pricing/data`` itself (the ``shipped`` fixture), not the frozen test catalog."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

import pricing
from pricing.errors import InputError

from .conftest import ROOT, TEST_CATALOG


@pytest.fixture(scope="module")
def shipped():
    return pricing.load_catalog()


def test_coverage(shipped):
    assert len(shipped.devices) >= 40
    assert len(shipped.rent) >= 40 and shipped.rent["provider"].nunique() >= 6
    assert len(shipped.free) >= 5
    assert {"USD", "EUR", "CNY", "JPY", "GBP"} <= set(shipped.rates["currency"])


def test_every_row_is_dated_and_sourced(shipped):
    for name, table in shipped.tables.items():
        assert table["as_of"].map(lambda d: isinstance(d, dt.date)).all(), name
        assert table["source"].str.len().gt(10).all(), name


def test_every_device_draws_a_power(shipped):
    # blank is never zero: a device with no board power takes an estimate (options.board_powers),
    # so every device the catalog offers counts its energy; one whose kind has no figure at all
    # could not, and would count 0 kWh
    from planner.decide.options import board_powers

    power, _ = board_powers(shipped.devices)
    assert {d for d, w in power.items() if not w > 0} == set()


def test_every_rent_row_prices_its_storage():
    # blank is never zero: a blank storage price loads as the column's default, 0, and a 120 GB
    # data set on a rented machine would be kept for free (Vast's and Azure's rows were)
    import csv

    with open(pricing.DATA_DIR / "rent.csv", newline="", encoding="utf-8") as f:
        blank = [r["id"] for r in csv.DictReader(f) if not r["storage_usd_per_gb_month"].strip()]
    assert not blank, blank


def test_reference_and_example_ids_exist(shipped):
    ids = set(shipped.devices["id"])
    for device in ("gtx-1060-6gb", "gtx-1080-ti", "rtx-2080-ti", "titan-rtx", "quadro-rtx-8000", "rtx-3060-12gb",
                   "rtx-3090", "rtx-4090", "rtx-5090", "rtx-a6000", "rtx-6000-ada", "k80", "p100", "t4",
                   "v100-16gb", "v100-32gb", "a10", "a10g", "l4", "a100-40gb", "a100-80gb", "h100-pcie", "h100-sxm",
                   "tpu-v3-8", "tpu-v5e-1"):
        assert device in ids, device
    assert {"rtx-3090-used", "rtx-4090", "rtx-4060-ti-16gb"} <= set(shipped.buy["id"])
    assert {"aws:g5.xlarge", "lambda:gpu_1x_a100"} <= set(shipped.rent["id"])
    assert {"colab-free", "colab-pro", "kaggle", "ai-studio"} <= set(shipped.free["id"])


def test_compute_units_priced_per_hour(catalog):
    pro = catalog.row("free", "colab-pro")  # the frozen test catalog: 2022's A100 rate
    assert pro["units_per_hour"]["a100-40gb"] == 13.08
    assert pro["usd_per_unit"] * pro["units_per_hour"]["a100-40gb"] == pytest.approx(0.0999 * 13.08)


@pytest.fixture
def broken(tmp_path):
    """Copy the shipped data; ``broken(file, old, new)`` edits one file and loads."""
    data = tmp_path / "data"
    shutil.copytree(TEST_CATALOG, data, ignore=shutil.ignore_patterns("README.md"))

    def _load(name, old, new):
        path = data / name
        text = path.read_text(encoding="utf-8")
        assert old in text, old
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        with pytest.raises(InputError) as info:
            pricing.load_catalog(data)
        return [str(p) for p in info.value.problems]

    return _load


def test_rule_unknown_device(broken):
    msgs = broken("buy.csv", "rtx-3090-used,rtx-3090,", "rtx-3090-used,rtx-3009,")
    assert any("buy.csv:" in m and "buy.rtx-3090-used.device: unknown device 'rtx-3009' (did you mean 'rtx-3090'" in m
               for m in msgs)


def test_rule_duplicate_id(broken):
    msgs = broken("buy.csv", "rtx-3070,rtx-3070,", "rtx-3060-12gb,rtx-3070,")
    assert any("buy.rtx-3060-12gb: duplicate id (first at line" in m and "rows must be unique" in m for m in msgs)


def test_rule_missing_as_of(broken):
    msgs = broken("rent.csv", ",2025-08-01,skypilot", ",,skypilot")
    assert any(m.endswith("rent.csv:2:18: rent.aws:g4dn.xlarge.as_of: required (every row needs it)") for m in msgs)


def test_rule_missing_source(broken):
    msgs = broken("rates.csv", "USD,1.0705,2024-06-28,ECB euro foreign exchange reference rates (eurofxref-daily.xml) "
                  "as quoted in dialogplay/tool-directory integrations/ecb_exchange_rate/README.md",
                  "USD,1.0705,2024-06-28,")
    assert any("rates.USD.source: required" in m for m in msgs)


def test_rule_ragged_rows(broken):
    """A row with a field past the header is a problem at its line, not a traceback; a short row's
    missing fields are blank (here a required one)."""
    msgs = broken("rates.csv", "USD,1.0705,2024-06-28,ECB", "USD,1.0705,2024-06-28,extra,ECB")
    assert any("rates.csv:3:" in m and "rates.USD.(a field past the header): unknown column" in m for m in msgs)


def test_rule_short_row(broken):
    msgs = broken("rates.csv", "USD,1.0705,2024-06-28,ECB euro", "USD,1.0705\nXXX,1.0,2024-06-28,ECB euro")
    assert any("rates.csv:3:" in m and "rates.USD.as_of: required (every row needs it)" in m for m in msgs)


def test_rule_bad_number(broken):
    msgs = broken("devices.csv", "gtx-1080,GeForce GTX 1080,gpu,pascal,2016-05-27,8,",
                  "gtx-1080,GeForce GTX 1080,gpu,pascal,2016-05-27,8GB,")
    assert any("devices.gtx-1080.vram_gb: expected a number, got '8GB'" in m for m in msgs)


def test_rule_bad_date(broken):
    msgs = broken("buy.csv", "2022-06-15", "15/06/2022")
    assert any("expected a date YYYY-MM-DD, got '15/06/2022'" in m for m in msgs)


def test_rule_unknown_column_in_yaml(broken):
    msgs = broken("free.yaml", "  session_limit_h: 12\n  idle_timeout_min: 90",
                  "  session_limit_h: 12\n  idle_timeout: 90")
    assert any("free.yaml:" in m and "free.colab-free.idle_timeout: unknown column (did you mean 'idle_timeout_min'?)"
               in m for m in msgs)


def test_rule_subscription_device(broken):
    msgs = broken("free.yaml", "units_per_hour: {t4: 1.86,", "units_per_hour: {t5: 1.86,")
    assert any("free.colab-pro.units_per_hour: unknown device 't5'" in m for m in msgs)


def test_rule_enum(broken):
    msgs = broken("buy.csv", "rtx-3090-used,rtx-3090,1,used,", "rtx-3090-used,rtx-3090,1,usd,")
    assert any("expected one of new, used, got 'usd' (did you mean 'used'?)" in m for m in msgs)


def test_rule_uppercase_id(broken):
    msgs = broken("rent.csv", "aws:g5.xlarge,", "AWS:g5.xlarge,")
    assert any("expected a lowercase id" in m for m in msgs)


def test_rule_alias_shadows_an_id(broken):
    msgs = broken("devices.csv", "1070,2016-06-10", "rtx-3090,2016-06-10")
    assert any("devices.gtx-1070.aliases: alias 'rtx-3090' already names rtx-3090" in m for m in msgs)


def test_rule_default_electricity_region(broken):
    msgs = broken("electricity.csv", "us,0.1545,USD,true", "us,0.1545,USD,false")
    assert any("exactly one region must be the default, found 0" in m for m in msgs)


def test_scenario_entry_overrides_a_catalog_row_field_by_field(catalog):
    merged = catalog.with_entries({"rent": [{"id": "aws:g5.xlarge", "usd_per_hour": 0.5, "source": "my quote"}]})
    row = merged.row("rent", "aws:g5.xlarge")
    assert row["usd_per_hour"] == 0.5 and row["device"] == "a10g" and row["billing_s"] == 1
    assert row["source"].startswith("my quote (overrides the catalog row: skypilot-org")
    assert catalog.row("rent", "aws:g5.xlarge")["usd_per_hour"] == 1.006  # the original is untouched


def test_a_table_overlaid_again_with_the_same_rows_is_the_table_made_before(catalog):
    """issue 36: a what-if that edits one rent price overlays the scenario's own rows on the buy
    table again; that table is the one made before (what is kept under the tables then finds it),
    made anew where any of its inputs moves (a row, the layer, the table under it), and the
    same, cell for cell, as one made without anything kept."""
    import pandas as pd

    from pricing import memo

    boxes = [{"id": "box-2", "device": "rtx-4090", "count": 2, "price_usd": 5000.0, "condition": "new"}]
    first = catalog.with_entries({"buy": [dict(r) for r in boxes]})
    again = catalog.with_entries({"buy": [dict(r) for r in boxes], "rent": [{"id": "aws:g5.xlarge", "usd_per_hour": 0.5}]})
    assert again.buy is first.buy and first.rent is catalog.rent and again.rent is not catalog.rent
    moved = catalog.with_entries({"buy": [{**boxes[0], "price_usd": 5100.0}]})
    layered = catalog.with_entries({"buy": [dict(r) for r in boxes]}, layer="lab.yaml")
    under = again.with_entries({"buy": [dict(r) for r in boxes]})  # over a table with other rows
    assert len({id(c.buy) for c in (first, moved, layered, under)}) == 4
    assert moved.row("buy", "box-2")["price_usd"] == 5100.0 and layered.row("buy", "box-2")["layer"] == "lab.yaml"
    memo.clear_all()
    for made, entries, layer in ((first, {"buy": boxes}, "scenario"), (moved, {"buy": [{**boxes[0], "price_usd": 5100.0}]},
                                 "scenario"), (layered, {"buy": boxes}, "lab.yaml")):
        pd.testing.assert_frame_equal(made.buy, catalog.with_entries(entries, layer=layer).buy, check_exact=True)


def test_new_scenario_entry_takes_documented_defaults(catalog):
    merged = catalog.with_entries({"rent": [{"id": "uni-cluster", "device": "a100-40gb", "usd_per_hour": 0.4}]})
    row = merged.row("rent", "uni-cluster")
    assert row["count"] == 1 and row["billing_s"] == 60 and row["setup_min"] == 15 and not row["spot"]
    assert row["provider"] == "user"


def test_no_spot_row_costs_as_much_as_on_demand(shipped):
    # a spot price equal to on-demand is a zone without spot capacity read as a price (the p5.48xlarge audit)
    from pricing.checks import spot_not_cheaper

    assert not spot_not_cheaper(shipped)


def test_runpod_rows_as_runpod_lists_them(shipped):
    # Community and Secure Cloud are separate on-demand offers, billed by the second; none is spot
    rp = shipped.rent[shipped.rent["provider"] == "runpod"].set_index("id")
    assert not rp["spot"].astype(bool).any() and (rp["billing_s"] == 1).all()
    assert rp.at["runpod:h100-sxm", "usd_per_hour"] == 2.69 and rp.at["runpod:h100-sxm-secure", "usd_per_hour"] == 3.99
    assert rp.at["runpod:rtx-4090", "usd_per_hour"] == 0.34 and rp.at["runpod:rtx-4090-secure", "usd_per_hour"] == 0.74


def test_azure_nc_a100_v4_is_the_pcie_card(shipped):
    rent = shipped.rent.set_index("id")
    # eastus prices the three sizes by the card: 1, 2 and 4 x 3.673 USD/h (Azure Retail Prices, 2026-10-10);
    # 9.554 and 19.108 were West Europe's
    for size, usd in (("nc24ads", 3.673), ("nc48ads", 7.346), ("nc96ads", 14.692)):
        row = rent.loc[f"azure:standard_{size}_a100_v4"]
        assert row["device"] == "a100-pcie-80gb" and row["usd_per_hour"] == usd
    # the NCv3 (V100) sizes were retired on 2025-09-30 (Microsoft's retirement notice): not offered
    assert not [i for i in rent.index if i.startswith("azure:") and "s_v3" in i]


def test_colab_offers_only_devices_it_still_has_with_dated_rates(shipped):
    for tier in ("colab-pro", "colab-pro-plus", "colab-payg"):
        row = shipped.row("free", tier)
        assert "v100-16gb" not in row["units_per_hour"]  # Colab no longer offers the V100
        assert row["as_of"] >= dt.date(2023, 5, 1)  # the newest published burn rates


def test_launch_prices_are_not_offered_years_later(shipped):
    from planner.decide.options import current_buy_offers
    from pricing.views import old_offers

    buy = shipped.buy
    offered_2027 = set(current_buy_offers(buy, dt.date(2027, 1, 4))["id"])
    launch = set(buy.loc[old_offers(buy, dt.date(2027, 1, 4)), "id"])
    assert "gtx-1060-6gb" in launch and not (offered_2027 & launch)
    assert {"gtx-1080-ti-used-2020-02", "rtx-3080-used"} <= launch  # a 2020 or 2022 used price neither
    # a historical scenario dated near the launch still sees it
    assert "rtx-3090" in set(current_buy_offers(buy, dt.date(2020, 10, 1))["id"])


@pytest.mark.parametrize("which", ["frozen", "shipped"])
def test_quick_ids_agree_with_the_loaded_catalog(which, catalog, shipped):
    """planner validate reads ids without pandas (pricing.ids); the full loader must agree."""
    from pricing.ids import read_ids

    data = TEST_CATALOG if which == "frozen" else pricing.DATA_DIR
    full = (catalog if which == "frozen" else shipped).ids()
    quick = read_ids(data)
    for name, f in full.__dataclass_fields__.items():
        if not f.compare:  # the speed model's function: planner.api.scenario_ids gives both the same tables
            continue
        a, b = getattr(full, name), getattr(quick, name)
        assert a == (pytest.approx(b) if isinstance(a, float) else b), name


def test_validate_checks_catalog_file_ids_too(tmp_path):
    from click.testing import CliRunner

    from planner.cli import main

    own = tmp_path / "lab.yaml"
    own.write_text("rent:\n  - {id: lab-box, device: a100-40gb, price: 0.30 USD/h}\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text((ROOT / "scenarios" / "thesis.yaml").read_text(encoding="utf-8").replace(
        'rent: ["aws:*", "lambda:*", "runpod:*", "vast:*"]', 'rent: ["lab-box"]'))
    assert CliRunner().invoke(main, ["validate", str(scenario)]).exit_code == 2  # unknown without the file
    assert CliRunner().invoke(main, ["validate", str(scenario), "--catalog", str(own)]).output == "ok\n"


def test_every_interruptible_offer_has_a_sourced_default(tmp_path):
    """Blank is never zero: a catalog whose interruption defaults lack the catch-all row of a kind
    is refused at load, at the file, naming what is missing (an unmatched spot offer would have
    been planned as never interrupted)."""
    import shutil

    import pricing
    from pricing.errors import InputError

    from .conftest import TEST_CATALOG

    shutil.copytree(TEST_CATALOG, tmp_path / "c")
    path = tmp_path / "c" / "interruptions.csv"
    path.write_text("".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                            if not line.startswith("other-spot,")), encoding="utf-8")
    with pytest.raises(InputError, match=r"interruptions\.rent: no default for every rent offer"):
        pricing.load_catalog(tmp_path / "c")


def test_a_tier_with_a_fee_but_no_units_is_a_located_error(tmp_path):
    # issue 35: a subscription is priced by its months' units; a fee without them would plan as free
    import shutil

    import pricing
    from pricing.errors import InputError

    from .conftest import TEST_CATALOG

    shutil.copytree(TEST_CATALOG, tmp_path / "c")
    free = tmp_path / "c" / "free.yaml"
    free.write_text(free.read_text(encoding="utf-8").replace("  units_per_month: 100\n", "", 1), encoding="utf-8")
    with pytest.raises(InputError, match=r"free.yaml:\d+:1: free.colab-pro.usd_per_month: a tier with a monthly fee "
                                         "needs units_per_month and units_per_hour"):
        pricing.load_catalog(tmp_path / "c")


def test_rule_packs_of_units_have_a_price_and_burn_rates(tmp_path):
    # a pack's price is usd_per_unit x units_per_pack, its hours burn units_per_hour: a pack
    # without them could not be priced, and pack_days without packs says nothing
    import shutil

    import pricing
    from pricing.errors import InputError

    from .conftest import TEST_CATALOG

    shutil.copytree(TEST_CATALOG, tmp_path / "c")
    free = tmp_path / "c" / "free.yaml"
    text = free.read_text(encoding="utf-8")
    free.write_text(text.replace("  usd_per_unit: 0.0999\n  units_per_pack: 100\n", "  units_per_pack: 100\n", 1),
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"free.yaml:\d+:1: free.colab-payg.units_per_pack: a tier that sells its "
                                         "compute units in packs needs units_per_hour and usd_per_unit"):
        pricing.load_catalog(tmp_path / "c")
    free.write_text(text.replace("  units_per_pack: 100\n", "", 1), encoding="utf-8")
    with pytest.raises(InputError, match=r"free.colab-payg.pack_days: pack_days says how long a pack's units last: "
                                         "it needs units_per_pack"):
        pricing.load_catalog(tmp_path / "c")
    # a tier paid by the month sells no packs besides: its units would be paid twice
    free.write_text(text.replace("  units_per_month: 100\n", "  units_per_month: 100\n  units_per_pack: 100\n", 1),
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"free.colab-pro.units_per_pack: a tier sells its units by the month"):
        pricing.load_catalog(tmp_path / "c")


def test_rule_utilisation_covers_every_model_size(broken):
    # blank is never zero: a job of 1B parameters on a consumer card must find a utilisation
    msgs = broken("utilisation.csv", "consumer,,pretrain,200000000,2000000000,", "consumer,,pretrain,300000000,2000000000,")
    assert any("utilisation.consumer.params_from: pretrain on consumer devices: expected a row from 2e+08 parameters, "
               "got one from 3e+08 (a gap or an overlap)" in m for m in msgs), msgs


def test_rule_a_familys_own_utilisation_rows_cover_every_size_and_are_unique(broken):
    # a family's own rows (CNN, measured on ResNet-50) replace the rows for every family where
    # they exist, so they too must tile the sizes; a blank family is one key, not a wildcard
    cnn = "consumer,cnn,full,0,1e12,0.19,0.20,0.46,2025-02-17,ResNet-50 runs,\ntpu,,adapters,0,1e13,"
    msgs = broken("utilisation.csv", "tpu,,adapters,0,1e13,", cnn)
    assert any("utilisation.consumer: full on consumer devices for cnn: no utilisation from 1e+12 to 1e+13 parameters"
               in m for m in msgs), msgs


def test_rule_utilisation_rows_are_unique_with_a_blank_family(broken):
    msgs = broken("utilisation.csv", "tpu,,adapters,0,1e13,", "tpu,,full,0,1e13,")
    assert any("utilisation.tpu: duplicate device_class + family + methods + params_from" in m for m in msgs), msgs


def test_rule_utilisation_typical_inside_its_range(broken):
    msgs = broken("utilisation.csv", "hopper,,adapters,0,1e13,0.11,0.27,0.36", "hopper,,adapters,0,1e13,0.11,0.47,0.36")
    assert any("utilisation.hopper.mfu: expected 0 < mfu_low <= mfu <= mfu_high <= 1, got 0.11, 0.47, 0.36" in m
               for m in msgs), msgs


def test_every_named_model_has_its_shape_and_source(shipped):
    models = shipped.tables["models"]
    transformers = models[models["family"] == "transformer"]
    assert transformers["layers"].notna().all() and transformers["hidden_size"].notna().all()
    cnns = models[models["family"] == "cnn"]
    assert cnns["forward_gflops"].notna().all() and cnns["image_size"].notna().all()
    assert (models["source"].str.len() > 20).all()
