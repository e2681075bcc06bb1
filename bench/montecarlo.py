"""How long the session Monte Carlo takes, and how it grows with trials and work.

    python bench/montecarlo.py

The process is a 500 GPU-hour phase on Colab free as the catalog describes it
(T4, 12 h sessions, 10 min setup, files wiped: 120 GB dataset copied each
session), with 1 GB checkpoints every 30 min and an assumed 0.1 disconnects
an hour (the catalog has no published rate). Figures for notes, not pass/fail.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.api import default_catalog
from planner.model.sessions import Process, copy_hours, expected, simulate


def colab_process(work_h: float) -> Process:
    row = default_catalog().row("free", "colab-free")
    setup = row["setup_min"] / 60 + copy_hours(120, row["transfer_gb_per_h"])
    restore = copy_hours(1.0, row["transfer_gb_per_h"])
    return Process(work_h=work_h, checkpoint_every_h=0.5, checkpoint_write_h=copy_hours(1.0, row["transfer_gb_per_h"]),
                   setup_first_h=setup, setup_resume_h=setup + restore, session_limit_h=row["session_limit_h"],
                   interruptions_per_h=0.1)


def timed(fn, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    p = colab_process(500)
    e = expected(p)
    sm = simulate(p, 10_000, seed=0)
    print(f"500 h on colab-free: expected wall {e.wall_h:.1f} h over {e.sessions:.1f} sessions; "
          f"MC mean {sm.wall_h.mean():.1f} h, P50 {statistics.median(sm.wall_h):.1f}, "
          f"P90 {sorted(sm.wall_h)[9000]:.1f}")
    print(f"exact expectation (recursion): {timed(lambda: expected(p)) * 1000:.1f} ms")
    print(f"Monte Carlo, 10,000 trials:    {timed(lambda: simulate(p, 10_000, 0)) * 1000:.1f} ms")
    print("trials   time [ms]")
    for n in (1_000, 10_000, 100_000):
        print(f"{n:>7,}  {timed(lambda n=n: simulate(p, n, 0)) * 1000:9.1f}")
    print("work [h]  sessions  MC 10k [ms]  expectation [ms]")
    for w in (50, 500, 5_000):
        q = colab_process(w)
        print(f"{w:>8,}  {expected(q).sessions:8.0f}  {timed(lambda q=q: simulate(q, 10_000, 0)) * 1000:11.1f}  "
              f"{timed(lambda q=q: expected(q)) * 1000:16.1f}")


if __name__ == "__main__":
    main()
