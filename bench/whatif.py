"""Speed of what-if commands as a lab meeting runs them: `planner sensitivity` (with the flip
values it bisects) and a 20-value `planner sweep` on thesis.yaml and over the whole catalog, and
on bench/lab-boxes.yaml (two boxes against renting A100/H100 over two years: seven phases of
twenty runs) `run`, `sensitivity`, a 7 x 5 sweep and `explore` (343 plans); `run` and
`sensitivity` on bench/lab-two-years.yaml, whose cards may be bought later (buy_later); and `run`
on bench/student-three-years.yaml (credits and buy_later over three years), with and without
its credits.

    python bench/whatif.py [--repeat 3] [--only lab]

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
LAB = str(ROOT / "bench" / "lab-boxes.yaml")
LATER = str(ROOT / "bench" / "lab-two-years.yaml")
STUDENT = str(ROOT / "bench" / "student-three-years.yaml")
WHOLE = ["--set", 'consider.rent=["*"]', "--set", 'consider.buy=["*"]', "--set", 'consider.free=["*"]']
CASES = {
    "sensitivity, thesis": ["sensitivity", THESIS],
    "sensitivity, whole catalog": ["sensitivity", THESIS, *WHOLE],
    "sweep of 20 prices, thesis": ["sweep", THESIS, "--vary", "catalog.rent[vast:a100-80gb].price=0.6:2.6:20 USD/h"],
    "sweep of 20 prices, whole catalog": ["sweep", THESIS, *WHOLE, "--vary",
                                          "catalog.rent[vast:a100-80gb].price=0.6:2.6:20 USD/h"],
    "lab: run": ["run", LAB],
    "lab: sensitivity": ["sensitivity", LAB],
    "lab: sweep 7 x 5": ["sweep", LAB, "--vary", "catalog.rent[vast:a100-40gb-interruptible].price=0.25:0.55:7 EUR/h",
                         "--vary", "phases.paper-d.gpu_hours=60:100:5"],
    "lab: explore (343 plans)": ["explore", LAB, "--report", "{tmp}", "--force"],
    "lab, buying later: run": ["run", LATER],
    "lab, buying later: sensitivity": ["sensitivity", LATER],
    "student, credits, 3 years: run": ["run", STUDENT, "--today", "2026-11-27"],
    "student, no credits: run": ["run", STUDENT, "--today", "2026-11-27", "--set", "you.credits=[]"],
}


def timed(args: list[str]) -> tuple[float, float, int | None]:
    """(wall seconds, CPU seconds of the children, plans made or None) of one CLI run."""
    import tempfile

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        cli = [a.replace("{tmp}", tmp + "/out") for a in args] + ([] if args[0] == "explore" else ["--format", "json"])
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "planner.cli", *cli], check=args[0] != "run",
                             capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}).stdout
        wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if args[0] == "explore":
        plans: int | None = int(out.split()[0])
    elif args[0] == "run":
        plans = None
    else:
        rows = len(json.loads(out))
        plans = 2 * rows + 1 if args[0] == "sensitivity" else rows  # each input down and up, and the base
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", metavar="WORD", help="Only the cases whose name holds WORD (e.g. lab).")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; best of {args.repeat}")
    for name, cli in CASES.items():
        if args.only and args.only not in name:
            continue
        runs = [timed(cli) for _ in range(args.repeat)]
        wall, cpu, plans = min(runs, key=lambda r: r[0])
        made = f"{plans} plans" if plans is not None else "one plan and its alternatives"
        print(f"{name:36s} {wall:5.1f} s wall, {cpu:5.1f} s CPU, {made} (all runs: "
              f"{', '.join(f'{w:.1f}' for w, _, _ in runs)} s)")


if __name__ == "__main__":
    main()
