"""Speed of what-if commands as a lab meeting runs them: `planner sensitivity` and a 20-value
`planner sweep`, on thesis.yaml and on thesis.yaml over the whole catalog.

    python bench/whatif.py [--repeat 3]

Runs the installed CLI (a fresh process each time, as a user would), prints the best wall time
of the repeats, the CPU seconds of that run (this process's children: user + system), so a
busy machine shows as CPU far above twice the wall, and how many plans the command made
(a sensitivity plans its base and each input down and up). Not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THESIS = str(ROOT / "scenarios" / "thesis.yaml")
WHOLE = ["--set", 'consider.rent=["*"]', "--set", 'consider.buy=["*"]', "--set", 'consider.free=["*"]']
CASES = {
    "sensitivity, thesis": ["sensitivity", THESIS],
    "sensitivity, whole catalog": ["sensitivity", THESIS, *WHOLE],
    "sweep of 20 prices, thesis": ["sweep", THESIS, "--vary", "catalog.rent[vast:a100-80gb].price=0.6:2.6:20 USD/h"],
    "sweep of 20 prices, whole catalog": ["sweep", THESIS, *WHOLE, "--vary",
                                          "catalog.rent[vast:a100-80gb].price=0.6:2.6:20 USD/h"],
}


def timed(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the children, plans made) of one CLI run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "planner.cli", *args, "--format", "json"], check=True,
                         capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = len(json.loads(out))
    plans = 2 * rows + 1 if args[0] == "sensitivity" else rows  # each input down and up, and the base
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; best of {args.repeat}")
    for name, cli in CASES.items():
        runs = [timed(cli) for _ in range(args.repeat)]
        wall, cpu, plans = min(runs)
        print(f"{name:36s} {wall:5.1f} s wall, {cpu:5.1f} s CPU, {plans} plans (all runs: "
              f"{', '.join(f'{w:.1f}' for w, _, _ in runs)} s)")


if __name__ == "__main__":
    main()
