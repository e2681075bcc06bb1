"""How long `planner run` takes: whole command, import, load, plan.

    python bench/run_time.py [SCENARIO ...]

Prints medians over repeated runs; figures for notes, not pass/fail.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list[str], repeat: int = 5) -> float:
    """Median wall time of ``cmd`` as a user runs it: with byte-code caches written and warm (a
    machine with PYTHONDONTWRITEBYTECODE set would otherwise compile every module each run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(paths: list[str]) -> None:
    paths = paths or ["scenarios/thesis.yaml", "scenarios/lab.yaml"]
    py = sys.executable
    imp = wall([py, "-c", "import planner.cli, planner.api, planner.decide.optimize, pricing"])
    bare = wall([py, "-c", "pass"])
    print(f"python start-up             {bare * 1000:7.0f} ms")
    print(f"import planner (+pandas...) {(imp - bare) * 1000:7.0f} ms")
    sys.path.insert(0, str(ROOT))
    import planner
    from planner.api import default_catalog

    t = time.perf_counter()
    default_catalog()
    print(f"load + validate catalog     {(time.perf_counter() - t) * 1000:7.0f} ms")
    for path in paths:
        cmd = wall([py, "-m", "planner.cli", "run", path])
        s = planner.load_scenario(ROOT / path)
        loads, plans = [], []
        for _ in range(5):
            t = time.perf_counter()
            s = planner.load_scenario(ROOT / path)
            loads.append(time.perf_counter() - t)
            t = time.perf_counter()
            planner.plan(s)
            plans.append(time.perf_counter() - t)
        print(f"{path}: `planner run` {cmd * 1000:.0f} ms wall; in-process load "
              f"{statistics.median(loads) * 1000:.1f} ms, plan {statistics.median(plans) * 1000:.1f} ms")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", help="scenario files (default: the thesis and the lab)")
    main(ap.parse_args().scenarios)
