"""Speed of what-if runs: a 100-value sweep of thesis.yaml and a sensitivity run.

    python bench/whatif.py

Prints variants per second on one and on all cores, the sensitivity time,
and where the time of one plan goes (cProfile, top entries). Not pass/fail.
"""

from __future__ import annotations

import cProfile
import datetime as dt
import io
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner import whatif  # noqa: E402


def main() -> None:
    text = (ROOT / "scenarios" / "thesis.yaml").read_text(encoding="utf-8")
    base = whatif.Job(text, "thesis.yaml", dt.date(2026, 11, 22))
    values = [f"{v:.4f} USD/kWh" for v in [0.05 + 0.005 * i for i in range(100)]]
    whatif.run_one(base)  # warm the catalog
    cores = os.cpu_count() or 1
    for workers in sorted({1, cores}):
        t = time.perf_counter()
        whatif.sweep(base, [("electricity", values)], workers=workers)
        took = time.perf_counter() - t
        print(f"sweep of 100 electricity prices, {workers} worker(s): {took:.1f} s, {100 / took:.1f} variants/s")
    t = time.perf_counter()
    df = whatif.sensitivity(base, 0.2, workers=cores)
    print(f"sensitivity ±20 %: {len(df)} inputs, {1 + 2 * len(df)} plans, {time.perf_counter() - t:.1f} s "
          f"on {cores} worker(s)")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(5):
        whatif.run_one(base)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(
        "planner/(api|optimize|milp|quotes|options|workload|sessions|breakeven|scenario)", 12)
    print("profile of 5 plans (cumulative, planner functions):")
    print("\n".join(line for line in out.getvalue().splitlines() if "planner/" in line or "ncalls" in line))


if __name__ == "__main__":
    main()
