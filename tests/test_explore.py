"""The interactive page for a meeting: sliders over the inputs that matter most, every position
planned beforehand with plain runs, loaded in a browser without a server or the network."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from planner import whatif
from planner.cli import main

from .conftest import TODAY
from .test_plan import BASE
from .test_reports import _page_requests

# 1,600 h: buying the card (600 USD net + electricity) beats renting by 57 USD; at 20 % fewer hours,
# renting wins (the flip is at about 1,462 h, worked by hand in test_whatif)
TEXT = BASE.format(hours=1600, deadline="2027-12-31", buy="my-card", rent="uni-cluster", free="")


def test_explore_writes_one_page_whose_every_position_is_a_plain_run(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "page"
    result = CliRunner().invoke(main, ["explore", str(path), "--report", str(out), "--inputs", "2", "--points", "5",
                                       "--workers", "1", "--today", TODAY.isoformat()])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "explore.json").read_text(encoding="utf-8"))
    keys = [i["key"] for i in data["inputs"]]
    assert len(keys) == 2 and all(len(i["values"]) == 5 for i in data["inputs"])
    assert len(data["plans"]) == 25
    given = [i["given"] for i in data["inputs"]]
    assert [i["values"][g] for i, g in zip(data["inputs"], given)] == ["1000 USD", "40 %"] or keys[0] != (
        "catalog.buy[my-card].price")
    # a position's plan is the plan of a plain run with the sliders' values set
    for position in ("0,0", "4,4", "2,0"):
        sets = tuple(f"{i['key']}={i['values'][int(p)]}" for i, p in zip(data["inputs"], position.split(",")))
        row = whatif.run_one(whatif.Job(TEXT, "s.yaml", TODAY, sets=sets))
        assert data["plans"][position]["cost"] == row["total_cost"] and data["plans"][position]["buy"] == row["buy"]
    # the page asks for nothing, and moving a slider that flips the plan (the URL gives the positions, as
    # the sliders do) shows the other plan
    at_given = ",".join(map(str, given))
    base = data["plans"][at_given]
    one_moved = [",".join(str(end if k == j else g) for k, g in enumerate(given)) for j in range(2) for end in (0, 4)]
    moved = next(p for p in one_moved if data["plans"][p]["buy"] != base["buy"])
    html = out / "explore.html"
    dom_base, asked_base = _page_requests(html, tmp_path, "&".join(f"i{k}={v}" for k, v in enumerate(given)))
    dom_moved, asked_moved = _page_requests(html, tmp_path, "&".join(f"i{k}={v}" for k, v in enumerate(moved.split(","))))
    assert asked_base == asked_moved == []
    assert f"Buy {base['buy']}." in dom_base and "The plan as with every input as given." in dom_base
    assert f"Buy {data['plans'][moved]['buy']}." in dom_moved and "Another plan than with every input" in dom_moved
    assert "Content-Security-Policy" in html.read_text(encoding="utf-8")


def test_a_position_whose_plan_misses_a_deadline_says_its_cost_is_of_the_work_done(tmp_path):
    # 100 h on the cluster cost 50.05 USD; a 55 USD budget holds it, 20 % more hours (60.06 USD) not:
    # that position's cost is the work its plan does, the rest left undone, and the page says so
    text = BASE.format(hours=100, deadline="2027-12-31", buy="", rent="uni-cluster", free="").replace(
        "  host_power: 100 W\n", "  host_power: 100 W\n  budget: 55 USD\n")
    path = tmp_path / "budget.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["explore", str(path), "--report", str(tmp_path / "p"), "--inputs", "1",
                                       "--points", "3", "--workers", "1", "--today", TODAY.isoformat()])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "p" / "explore.json").read_text(encoding="utf-8"))
    (slider,) = data["inputs"]
    missed = [p for p, plan in data["plans"].items() if not plan["feasible"]]
    assert missed and slider["key"] in ("phases.train.gpu_hours", "phases.train.runs", "you.budget")
    dom, _ = _page_requests(tmp_path / "p" / "explore.html", tmp_path, f"i0={missed[0]}")
    assert "Cannot meet every deadline: the cost is that of the work it does, the rest left undone." in dom


def test_explore_with_nothing_to_slide_says_so(tmp_path):
    # free tiers only: every input moved by 20 % leaves the plan and its cost (0) as they are
    text = BASE.format(hours=100, deadline="2027-12-31", buy="", rent="", free="my-free")
    path = tmp_path / "free.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["explore", str(path), "--report", str(tmp_path / "p"), "--workers", "1",
                                       "--today", TODAY.isoformat()])
    assert result.exit_code == 0, result.output
    assert "no input moved by 20% changes the plan or its cost" in result.output
    data = json.loads((tmp_path / "p" / "explore.json").read_text(encoding="utf-8"))
    assert data["inputs"] == [] and list(data["plans"]) == [""]
    dom, asked = _page_requests(tmp_path / "p" / "explore.html", tmp_path)
    assert asked == [] and "nothing to slide" in dom and "Buy nothing." in dom


def test_the_explore_plan_at_the_values_as_given_is_the_plan_as_given():
    # issue 35 item 6: the page writes a slider's values to 4 digits (0.5012 USD/h); at the value
    # as given the plan must be the scenario's own (0.50123 USD/h), not one at the rounded value
    from planner.whatif import explore

    text = BASE.format(hours=1000, deadline="2027-12-31", buy="", rent="uni-cluster", free="").replace(
        "price: 0.50 USD/h", "price: 0.50123 USD/h")
    job = whatif.Job(text, "s.yaml", TODAY)
    data = explore.explore(job, 0.2, workers=1, n_inputs=2, points=3)
    axis = {i["key"]: i for i in data["inputs"]}["catalog.rent[uni-cluster].price"]
    assert axis["values"][axis["given"]] == "0.5012 USD/h"
    given = ",".join(str(i["given"]) for i in data["inputs"])
    assert data["plans"][given]["cost"] == whatif.run_one(job)["total_cost"] == data["base"]["cost"]


def test_a_card_that_pays_off_only_past_the_span_gets_a_slider_across_its_flip():
    # issue 35 item 8: 1,000 h; renting costs 0.5 x 1,001 = 500.50 USD, the card 0.6 P (its price less a
    # 40 % resale) + 90.02 USD of power: it pays off below P = 684.1 USD, 32 % under its 1,000 USD, past
    # the 20 % span. Its price is still a slider, reaching a tenth past the flip, and the plans either side agree
    from planner.whatif import explore

    text = BASE.format(hours=1000, deadline="2027-12-31", buy="my-card", rent="uni-cluster", free="")
    data = explore.explore(whatif.Job(text, "s.yaml", TODAY), 0.2, workers=1, n_inputs=1, points=5)
    (axis,) = data["inputs"]
    assert axis["key"] == "catalog.buy[my-card].price"
    prices = [float(v.split()[0]) for v in axis["values"]]
    flip = (0.5 * 1001 - 0.45 * 0.20 * 1000.2) / 0.6
    assert min(prices) < flip < max(prices) and min(prices) == pytest.approx(0.9 * flip, rel=0.02)
    for k, price in enumerate(prices):
        assert data["plans"][str(k)]["buy"] == ("my-card" if price < flip else "nothing"), price


def test_a_scenario_named_like_a_placeholder_is_a_title():
    # issue 39 item 5: a scenario named '__DATA__' pasted the page's raw data into its title and heading
    from planner.whatif import explore

    data = {"currency": "__TITLE__", "base": {}, "inputs": [], "plans": {"": {"cost": 1.0}}}
    html = explore.page(data, "__DATA__ <b>")
    assert html.count('{"currency"') == 1  # the data once, in its script element
    assert "<title>__DATA__ &lt;b&gt;</title>" in html and "<h1>__DATA__ &lt;b&gt;</h1>" in html
    assert "Money in __TITLE__." in html and "no provider publishes" not in html
    # a default interruption rate on a slider: the page says the cost steps at its value as given
    rate = {**data, "inputs": [{"key": "catalog.rent[spot].interruptions", "values": ["0.05/h", "0.1/h"], "given": 1}]}
    assert "as given, the plan costs the hours its range adds on average" in explore.page(rate, "t")


def test_every_position_a_neighbour_stands_for_is_the_plan_a_plain_run_gives(monkeypatch):
    """A position one step from a planned neighbour that only makes an offer that plan leaves out
    worse (the card dearer while renting wins, the rent dearer while the card wins) takes the
    neighbour's plan unplanned: every position of the grid, copied or planned, is checked here
    against a plain run of its own (brute force), and some were copied."""
    import itertools

    from planner.whatif import explore, tables

    planned = []

    class Counted:  # the grid's runs, counted (the sensitivity's own runs are not)
        def __getattr__(self, name):
            return getattr(tables, name)

        def run_one(self, job):
            planned.append(job)
            return tables.run_one(job)

    monkeypatch.setattr(explore, "whatif", Counted())
    data = explore.explore(whatif.Job(TEXT, "s.yaml", TODAY), 0.2, workers=1, n_inputs=3, points=3)
    keys = [i["key"] for i in data["inputs"]]
    assert len(keys) == 3 and any(tables.worse_side(k) for k in keys)
    for combo in itertools.product(*(range(len(i["values"])) for i in data["inputs"])):
        sets = tuple(f"{k}={i['values'][c]}" for k, i, c in zip(keys, data["inputs"], combo) if c != i["given"])
        row = tables.run_one(whatif.Job(TEXT, "s.yaml", TODAY, sets=sets, breakevens=False))
        assert data["plans"][",".join(map(str, combo))] == explore._shown(row), (combo, sets)
    assert 0 < len(planned) < len(data["plans"]) == 27  # some positions were copied


@pytest.mark.parametrize("default, planned", [(None, [(0,)]), (1, [(0,), (1,), (2,)])])
def test_no_step_to_or_from_a_default_rate_with_a_range_is_copied(monkeypatch, default, planned):
    """An interruption rate left at its default is planned over its range, so it is no known rate
    to order against the slider's others (lab-boxes: the default 0.1/h keeps the plan as a known
    0.45/h would): a position one step from it is planned, never copied. Known rates that only
    make an unused offer worse are copied (here every plan rents 'y', never 'x')."""
    from planner.whatif import explore, tables

    ran = []

    def run_one(job):
        ran.append(job)
        return {"plan": "a: y", "buy": "nothing"}

    monkeypatch.setattr(tables, "run_one", run_one)
    rows = explore._grid({(i,): (i,) for i in range(3)}, [("catalog.rent[x].interruptions", 3, default)], 1, None)
    assert ran == planned and set(rows) == {(0,), (1,), (2,)}
