"""Speed of the uncertainty analysis: `planner run` with and without `--uncertainty N`.

    python bench/uncertainty.py [--repeat 3]

Prints the best wall time of the CLI (fresh processes, as a user runs it) for thesis.yaml and
lab.yaml plain, with 1,000 and with 100,000 draws, the ratio to the plain run (issue 16's goal:
1,000 draws within 3x), and the analysis alone in-process. Not pass/fail.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def wall(args: list[str], repeat: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "planner.cli", "run", *args], check=True, stdout=subprocess.DEVNULL,
                       env=env)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import planner
    from planner.decide import uncertainty

    for name in ("thesis.yaml", "lab.yaml"):
        path = str(ROOT / "scenarios" / name)
        plain = wall([path], args.repeat)
        print(f"{name}: plain run {plain:.2f} s")
        for n in (1000, 100_000):
            took = wall([path, "--uncertainty", str(n)], args.repeat)
            print(f"  --uncertainty {n:>7,}: {took:.2f} s, {took / plain:.2f}x the plain run")
        p = planner.plan(planner.load_scenario(path), trials=100)
        t = time.perf_counter()
        uncertainty.analyse(p, 1000, 0)
        print(f"  the analysis alone, 1,000 draws: {(time.perf_counter() - t) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
