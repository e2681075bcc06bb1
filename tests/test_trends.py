"""Rent prices that move by default (issue 30): each device's catalog trend (trends.csv), the
plan priced along it, the answer saying so, and the uncertainty analysis drawing within its
range; worked by hand on one-week windows."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pandas as pd
import pytest

import planner
from planner.decide import uncertainty
from pricing.errors import InputError

from .conftest import FROZEN

# one week of work on RunPod's RTX 3090 (0.22 USD/h, dated 2026-03-10) or its A100 80GB, Monday
# 2027-06-07 to Sunday 2027-06-13: one bucket, whose middle is 3.5 days after its Monday
WEEK = """\
name: one week in June 2027
start: 2027-01-04
workload: {{family: cnn, params: 25M, activation_memory: 4 GB, reference_gpu: rtx-3090}}
phases:
  a: {{gpu_hours: 60, from: 2027-06-07, deadline: 2027-06-13, checkpoint_size: 0.36 GB}}
consider: {{buy: [], rent: [{rent}], free: []}}
{extra}"""


def with_trends(rows: list[dict]) -> planner.api.pricing.Catalog:
    """The frozen catalog with its trends table replaced."""
    table = pd.DataFrame([{"since": dt.date(2024, 1, 1), "until": dt.date(2026, 9, 30), "as_of": dt.date(2026, 9, 30),
                           "source": "test", "notes": "", "layer": "shipped", **r} for r in rows])
    return dataclasses.replace(FROZEN, tables={**FROZEN.tables, "trends": table})


TRENDS = [{"id": "ampere-consumer", "match": "rtx-30*", "trend_per_year": -0.20, "low_per_year": -0.40,
           "high_per_year": 0.10},
          {"id": "a100", "match": "a100-*", "trend_per_year": 0.10, "low_per_year": -0.10, "high_per_year": 0.50},
          {"id": "any", "match": "*", "trend_per_year": 0.0, "low_per_year": -0.30, "high_per_year": 0.40}]


def plan(load, catalog, rent="runpod:rtx-3090", extra="", **kw):
    s = load(WEEK.format(rent=rent, extra=extra))
    return planner.api.plan(s, planner.api.with_entries(catalog, s.catalog_entries), trials=0, **kw)


def test_a_catalog_price_moves_along_its_devices_trend_from_its_date(load):
    # by hand: the 3090 row is dated 2026-03-10; the bucket's middle is 2027-06-10 12:00, 457.5 days
    # later; at -20 % a year its rent is 0.8^(457.5 / 365.25) of the price as dated (0.756)
    catalog = with_trends(TRENDS)
    moved, flat = plan(load, catalog), plan(load, catalog, extra="price_trend: flat\n")
    years = ((dt.date(2027, 6, 7) - dt.date(2026, 3, 10)).days + 3.5) / 365.25
    assert moved.cost_usd["rent"] == pytest.approx(flat.cost_usd["rent"] * 0.8 ** years, rel=1e-9)
    assert 0.75 < 0.8 ** years < 0.76
    # the answer says up front that the prices are projections, along which trend
    said = [a for a in moved.assumed_figures if "projections" in a]
    assert len(said) == 1 and "ampere-consumer -20.0% a year" in said[0] and "price_trend" in said[0]
    assert not [a for a in flat.assumed_figures + flat.assumptions if "rent prices" in a]
    # a trend the scenario gives replaces the catalog's
    given = plan(load, catalog, extra="price_trend: -10%/year\n")
    assert given.cost_usd["rent"] == pytest.approx(flat.cost_usd["rent"] * 0.9 ** years, rel=1e-9)


def test_the_first_matching_trend_applies_and_every_device_has_one(load):
    # the 3090 matches 'rtx-30*' before '*'; an H100 matches only '*' (flat here)
    catalog = with_trends(TRENDS)
    opts = plan(load, catalog, rent='"runpod:*"').options.set_index("option")
    assert opts.at["runpod:rtx-3090", "rent_trend_default"] == "ampere-consumer"
    assert opts.at["runpod:h100-sxm", "rent_trend_default"] == "any"
    # blank is never zero: a trends table without a row for every device is refused at load
    from pricing.loader import check_trends

    table = with_trends(TRENDS[:2]).trends.assign(_line=[2, 3])
    problems = check_trends({"trends": table}, {"trends": "trends.csv"})
    assert problems and "'*'" in problems[0].message


def test_the_uncertainty_draws_every_devices_trend_at_one_quantile_of_its_range(load):
    # two rows: each draw puts both at the same quantile (a market that moves as one), triangular
    # from low to high with the central trend as its mode; the plan's path is the central one
    # two runs of 150 h in one week, one 3090 to rent at a time: the other run goes to an A100
    catalog = with_trends(TRENDS)
    text = WEEK.format(rent='"runpod:rtx-3090", "runpod:a100-sxm-80gb"',
                       extra="catalog: {rent: [{id: runpod:rtx-3090, supply: 1}]}\n").replace(
        "gpu_hours: 60,", "gpu_hours: 150, runs: 2,")
    s = load(text)
    p = planner.api.plan(s, planner.api.with_entries(catalog, s.catalog_entries), trials=0, uncertainty=2000)
    assert {a.option for a in p.phases[0].assignments} == {"runpod:rtx-3090", "runpod:a100-sxm-80gb"}
    by_name = {i.name: i for i in p.uncertainty.inputs}
    a, b = by_name[f"{uncertainty.TREND_INPUT} ampere-consumer"], by_name[f"{uncertainty.TREND_INPUT} a100"]
    assert (a.base, b.base) == (-0.20, 0.10)
    assert a.draws.min() >= -0.40 and a.draws.max() <= 0.10 and b.draws.min() >= -0.10 and b.draws.max() <= 0.50
    assert (np.argsort(a.draws) == np.argsort(b.draws)).all()
    # the triangular's mean, (low + mode + high) / 3, by its closed form
    assert a.draws.mean() == pytest.approx((-0.40 - 0.20 + 0.10) / 3, abs=0.01)


def test_triangular_quantiles_are_what_numpys_generator_draws():
    u = np.random.default_rng(5).random(1000)
    drawn = np.random.default_rng(5).triangular(-0.3, 0.0, 0.4, 1000)
    assert uncertainty.triangular_ppf(u, -0.3, 0.0, 0.4) == pytest.approx(drawn, abs=1e-12)


def test_an_unknown_trend_word_is_refused_with_what_is_expected(load):
    with pytest.raises(InputError) as e:
        load(WEEK.format(rent="runpod:rtx-3090", extra="price_trend: sideways\n"))
    assert "expected catalog (the default), flat, a yearly change" in str(e.value)
    with pytest.raises(InputError) as e:
        load(WEEK.format(rent="runpod:rtx-3090", extra="price_trend: flatt\n"))
    assert "did you mean 'flat'?" in str(e.value)


def test_options_follow_the_trends_table_of_the_catalog_they_are_built_from(load, catalog):
    """The options of one scenario were kept per process by the catalog's other tables alone, so a
    catalog that differs only in its trends got the first one's trend ids (a KeyError in a full
    run, depending on test order): the trends table is part of the key."""
    from planner.decide.options import build_options

    s = load(WEEK.format(rent="runpod:rtx-3090", extra=""))
    first = build_options(s, with_trends(TRENDS)).set_index("option")
    second = build_options(s, catalog).set_index("option")
    assert first.at["runpod:rtx-3090", "rent_trend_default"] == "ampere-consumer"
    assert second.at["runpod:rtx-3090", "rent_trend_default"] == "any"
