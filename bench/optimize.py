"""Solve time and problem size of the optimiser.

    python bench/optimize.py

thesis.yaml as shipped, and a large scenario: lab.yaml's five phases with
'consider' removed (the whole catalog: every buy, rent and free offer) over
its two-year horizon. Figures for notes, not pass/fail.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import planner
from planner.api import default_catalog
from planner.decide import milp
from planner.decide.optimize import STRATEGIES, card_costs, dominated_cards, dominated_rents, prune
from planner.decide.options import build_options
from planner.decide.quotes import exclusions, quote_table
from planner.model.validate import load_scenario_text


def measure(name: str, s) -> None:
    catalog = default_catalog()
    times, p = [], None
    for _ in range(3):
        t = time.perf_counter()
        p = planner.plan(s, catalog, trials=2000)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    planner.plan(s, catalog, trials=2000, alternatives=False)
    single = time.perf_counter() - t
    n_vars, n_cons = p.problem_size
    n_opts = p.quotes["option"].nunique()
    print(f"{name}: {len(s.phases)} phases, {n_opts} usable options; MILP {n_vars:,} variables, {n_cons:,} constraints; "
          f"plan with alternatives {statistics.median(times) * 1000:.0f} ms (median of 3), "
          f"plan without {single * 1000:.0f} ms; total {p.total_usd:,.0f} USD, feasible {p.feasible}")
    # the MILP alone: building it (one function per constraint family) against HiGHS' solve
    opts = build_options(s, catalog)
    cards = card_costs(s, opts)
    all_quotes = quote_table(s, opts, exclusions(s, opts, catalog.devices, catalog.throughput))
    quotes = prune(all_quotes, {**dominated_cards(all_quotes, cards), **dominated_rents(all_quotes)})
    build_s, solve_s = [], []
    for _ in range(5):
        t = time.perf_counter()
        program = milp.build(s, quotes, opts, cards, STRATEGIES["hybrid"])
        build_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        milp.solve(program)
        solve_s.append(time.perf_counter() - t)
    print(f"    build {statistics.median(build_s) * 1000:.0f} ms, HiGHS solve {statistics.median(solve_s) * 1000:.0f} ms "
          f"(medians of 5); rows per family: "
          + ", ".join(f"{b.family} {len(b.labels)}" for b in program.blocks))


def main() -> None:
    ids = default_catalog().ids()
    import datetime as dt

    today = dt.date(2026, 11, 22)
    thesis = (ROOT / "scenarios" / "thesis.yaml").read_text(encoding="utf-8")
    measure("thesis.yaml", load_scenario_text(thesis, ids, file="thesis.yaml", today=today))
    lab = yaml.safe_load((ROOT / "scenarios" / "lab.yaml").read_text(encoding="utf-8"))
    lab.pop("consider")
    lab.pop("variants")
    measure("large (lab, whole catalog)", load_scenario_text(yaml.safe_dump(lab), ids, file="large.yaml", today=today))


if __name__ == "__main__":
    main()
