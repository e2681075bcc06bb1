"""Start-up time of the commands people type most, against the bare imports they need.

    python bench/startup.py [--repeat N]

Goals (issue 14): ``planner --help`` and ``planner validate`` within 1.3x a bare
``python -c "import yaml, click"``; ``planner run`` within 1.5x the bare import of its own
dependencies (pandas, numpy, highspy, matplotlib, yaml, click). Prints medians; the
figures go into notes, never into tests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_time import wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    n = ap.parse_args().repeat
    py = sys.executable
    planner = [py, "-m", "planner.cli"]
    light = wall([py, "-c", "import yaml, click"], n)
    deps = wall([py, "-c", "import yaml, click, pandas, numpy, highspy, matplotlib"], n)
    rows = [
        ("planner --help", wall(planner + ["--help"], n), light, 1.3),
        ("planner validate thesis", wall(planner + ["validate", "scenarios/thesis.yaml"], n), light, 1.3),
        ("planner run thesis", wall(planner + ["run", "scenarios/thesis.yaml"], n), deps, 1.5),
    ]
    print(f"{'command':26s} {'median [s]':>10s} {'baseline [s]':>12s} {'ratio':>6s} {'goal':>5s}")
    for name, t, base, goal in rows:
        print(f"{name:26s} {t:10.3f} {base:12.3f} {t / base:6.2f} {goal:5.1f}")


if __name__ == "__main__":
    main()
