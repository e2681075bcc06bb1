"""HiGHS's integer searches with and without the planner's search options (milp.SEARCH_OPTIONS).

    python bench/searches.py [planner arguments]     # default: sensitivity bench/lab-boxes.yaml

Runs the planner command in this process (one worker), keeps every branch-and-bound search it
asks HiGHS for (``milp.highs``), then solves each again with HiGHS's defaults and with the options,
and prints the mean time of a search each way and how many give the same x to the last bit.
Figures for notes, not pass/fail: a new HiGHS may change them.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner import cli
from planner.decide import milp


def searches(args: list[str]) -> list[dict[str, Any]]:
    """The keyword arguments of every integer search the command made."""
    kept: list[dict[str, Any]] = []
    plain = milp.highs

    def keep(c: np.ndarray, rows: milp.Rows, bounds: milp.Bounds, integrality: np.ndarray, options: Any) -> Any:
        if integrality.any():
            kept.append({"c": c, "rows": rows, "bounds": bounds, "integrality": integrality, "options": options})
        return plain(c, rows, bounds, integrality, options)

    milp.highs = keep  # type: ignore[assignment]
    try:
        cli.main(args, standalone_mode=False)
    except SystemExit:
        pass
    finally:
        milp.highs = plain  # type: ignore[assignment]
    return kept


def timed(calls: list[dict[str, Any]], extra: dict[str, Any]) -> tuple[float, list[Any]]:
    """Mean seconds of a search, and each search's x, with ``extra`` options."""
    xs = []
    t = time.perf_counter()
    for kwargs in calls:
        options = {k: v for k, v in kwargs["options"].items() if k not in milp.SEARCH_OPTIONS}
        xs.append(milp.highs(**{**kwargs, "options": {**options, **extra}}).x)
    return (time.perf_counter() - t) / max(len(calls), 1), xs


def main() -> None:
    args = sys.argv[1:] or ["sensitivity", str(ROOT / "bench" / "lab-boxes.yaml"), "--workers", "1",
                            "--format", "json"]
    sys.stdout = open("/dev/null", "w")  # the command's own answer
    calls = searches(args)
    sys.stdout = sys.__stdout__
    plain_s, plain_x = timed(calls, {})
    ours_s, ours_x = timed(calls, milp.SEARCH_OPTIONS)
    same = sum((a is not None and b is not None and np.array_equal(a, b)) or (a is None and b is None)
               for a, b in zip(plain_x, ours_x))
    close = sum(a is not None and b is not None and not np.array_equal(a, b) and np.abs(a - b).max() < 1e-9
                for a, b in zip(plain_x, ours_x))
    print(f"{len(calls)} searches of `planner {' '.join(args)}`")
    print(f"HiGHS defaults:     {plain_s * 1000:6.1f} ms a search")
    print(f"{milp.SEARCH_OPTIONS}: {ours_s * 1000:6.1f} ms a search; x identical in {same}, "
          f"within 1e-9 in {close} (the hours are then solved again with the purchases fixed)")


if __name__ == "__main__":
    main()
