"""Plan every flip a sensitivity states again at the figures it writes, as a user would.

    python bench/flips.py SCENARIO [SCENARIO ...]

For each input and side where `planner sensitivity` says the plan changes ("... below 0.2737
EUR/h (0.2728 EUR/h changes it)"), runs the scenario with `--set INPUT=KEPT` and `--set
INPUT=AT` and checks that the first gives the plan as given and the second the plan the
sentence names. Prints each failure and a count per scenario. A check for notes, not a test:
a sensitivity takes seconds to minutes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner import whatif


def check(path: str, today: dt.date) -> tuple[int, int]:
    """(flips planned again, flips that did not hold) of one scenario."""
    text = Path(path).read_text(encoding="utf-8")
    job = whatif.Job(text, path, today)
    df = whatif.sensitivity(job, 0.2, workers=2)
    base = whatif.run_one(job)
    checked = failed = 0
    for r in df.itertuples(index=False):
        for side, buy, plan in (("down", r.buy_low, r.plan_low), ("up", r.buy_high, r.plan_high)):
            kept, at = getattr(r, f"flip_{side}_kept"), getattr(r, f"flip_{side}_at")
            if not at:
                continue
            k, a = (whatif.run_one(whatif.Job(text, path, today, sets=(f"{r.input}={v}".replace(" ", ""),)))
                    for v in (kept, at))
            checked += 1
            if (k["buy"], k["plan"]) != (base["buy"], base["plan"]) or (a["buy"], a["plan"]) != (buy, plan):
                failed += 1
                print(f"FAIL {r.input} {side}: at {kept} the plan is {k['buy']} | {k['plan']}; "
                      f"at {at} it is {a['buy']} | {a['plan']}; said {buy} | {plan}")
    return checked, failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    args = ap.parse_args()
    for path in args.scenarios:
        checked, failed = check(path, args.today)
        print(f"{path}: {checked} flips planned again, {failed} did not hold")


if __name__ == "__main__":
    main()
