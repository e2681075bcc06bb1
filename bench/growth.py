"""How plan time grows with the horizon, the number of phases and the offers considered.

    python bench/growth.py [--repeat N]

Scenarios are made from thesis.yaml's workload: (1) its two phases, the whole catalog, the
last deadline and the horizon at 2, 5 and 10 years; (2) 20, 50 and 100 overlapping phases
of 40-120 GPU-h with 60-day windows starting a week apart, whole catalog; (3) the thesis
with only its own 'consider', then every rent offer, then everything. Each row: median wall
time of ``planner.plan`` in this process (imports excluded), its ratio to the thesis, the
MILP's size and the peak memory of the process so far. Figures for notes, not pass/fail.
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import planner
from planner.api import default_catalog
from planner.model.validate import load_scenario_text

TODAY = dt.date(2026, 11, 22)
EVERYTHING = {"buy": ["*"], "rent": ["*"], "free": ["*"]}


def thesis() -> dict:
    data = yaml.safe_load((ROOT / "scenarios" / "thesis.yaml").read_text(encoding="utf-8"))
    data.pop("variants", None)
    return data


def horizon(years: int) -> dict:
    data = thesis()
    data["consider"] = dict(EVERYTHING)
    data["horizon"] = f"{years} years"
    data["phases"]["final"]["deadline"] = dt.date(2026 + years, 12, 31)
    return data


def phases(n: int) -> dict:
    data = thesis()
    data["consider"] = dict(EVERYTHING)
    start = dt.date(2027, 1, 4)
    data["phases"] = {f"p{i}": {"gpu_hours": 40 + 5 * (i % 17), "from": start + dt.timedelta(days=7 * i),
                                "deadline": start + dt.timedelta(days=7 * i + 60), "checkpoint_every": "1 h",
                                "dataset_size": "10 GB"} for i in range(n)}
    data["horizon"] = f"{max(24, (7 * n + 60) // 30 + 1)} months"
    return data


def offers(which: str) -> dict:
    data = thesis()
    if which == "every rent offer":
        data["consider"]["rent"] = ["*"]
    elif which == "everything":
        data["consider"] = dict(EVERYTHING)
    return data


def timed(data: dict, catalog, repeat: int) -> tuple[float, tuple[int, int]]:
    s = load_scenario_text(yaml.safe_dump(data, allow_unicode=True), catalog.ids(), file="bench.yaml", today=TODAY)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        p = planner.plan(s, catalog)
        times.append(time.perf_counter() - t)
    return statistics.median(times), p.problem_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    repeat = ap.parse_args().repeat
    catalog = default_catalog()
    timed(thesis(), catalog, 1)  # warm: scipy's first import, the session model's cache
    base, _ = timed(thesis(), catalog, repeat)
    cases = [("thesis.yaml as shipped", thesis())]
    cases += [(f"whole catalog, {y} years", horizon(y)) for y in (2, 5, 10)]
    cases += [(f"whole catalog, {n} phases", phases(n)) for n in (20, 50, 100)]
    cases += [(f"thesis, {w}", offers(w)) for w in ("every rent offer", "everything")]
    print(f"{'case':30s} {'plan [s]':>8s} {'x thesis':>8s} {'variables':>10s} {'rows':>8s} {'peak MB':>8s}")
    for name, data in cases:
        t, (n_vars, n_rows) = timed(data, catalog, repeat)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{name:30s} {t:8.2f} {t / base:8.1f} {n_vars:10,d} {n_rows:8,d} {peak_mb:8.0f}")


if __name__ == "__main__":
    main()
