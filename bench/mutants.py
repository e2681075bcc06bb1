"""One-line mutations of rules a user relies on, and whether the test suite catches each.

Each mutant copies the repository's last commit (``git archive HEAD``: what is committed, not the
files being edited) to a temporary directory, changes one line of the core, and
runs the default test suite there (``pytest -x``, stopping at the first failure). A mutant the
suite passes is a rule no test guards: the script lists it and exits 1.

    python bench/mutants.py              # every mutant (about a minute each when it survives)
    python bench/mutants.py budget-host  # the named ones

It reads and writes nothing in the repository. Issue 27 asked for the first ten.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


class Mutant(NamedTuple):
    name: str
    rule: str
    path: str
    old: str
    new: str


MUTANTS = [
    Mutant("budget-host", "the budget counts the host computer", "planner/decide/milp.py",
           "vals += [host_usd] if host_index is not None else []", "vals += [0.0] if host_index is not None else []"),
    Mutant("budget-time", "your time is not cash for the budget", "planner/decide/milp.py",
           'vals = [*xi["money_per_ref"].to_numpy(dtype=float)', 'vals = [*xi["cost_per_ref"].to_numpy(dtype=float)'),
    Mutant("p-cheapest-deadlines", "P(cheapest) counts a plan that misses a deadline as losing", "planner/decide/uncertainty.py",
           "cost = np.array([_effective(o) for o in distinct])", "cost = np.array([o.cost_usd for o in distinct])"),
    Mutant("p-cheapest-ties", "plans that tie share P(cheapest)", "planner/decide/uncertainty.py",
           "share = winners / winners.sum(axis=0)", "share = winners * (np.cumsum(winners, axis=0) == 1)"),
    Mutant("uncertainty-storage", "the uncertainty analysis prices storage", "planner/decide/uncertainty.py",
           'float(c["storage_months"]) * r, share=share', "0.0, share=share"),
    Mutant("card-48h", "a card runs at most 24 h a day", "planner/decide/milp.py",
           "hours = HOURS_PER_DAY * g.days", "hours = 2 * HOURS_PER_DAY * g.days"),
    Mutant("starts-twice", "each session started by hand counts once", "planner/decide/milp.py",
           'sel["sessions_per_ref"].to_numpy(dtype=float), -np.inf,',
           '2 * sel["sessions_per_ref"].to_numpy(dtype=float), -np.inf,'),
    Mutant("units-month", "compute units are spread over the month's weeks", "planner/decide/milp.py",
           "-np.inf, units_month / WEEKS_PER_MONTH *", "-np.inf, units_month *"),
    Mutant("dominance-capacity", "pruning keeps an option with more weekly capacity", "planner/decide/optimize.py",
           "& (cap[:, None, :] >= cap[None, :, :] - eps).all(axis=2)", "& True"),
    Mutant("dominance-open-capacity", "pruning keeps an option with more capacity in the phase's window",
           "planner/decide/optimize.py", "& (open_cap[:, None, :] >= open_cap[None, :, :] - eps).all(axis=2)", "& True"),
    Mutant("deadline-exclusive", "the uncertainty analysis counts the deadline day as on time", "planner/decide/uncertainty.py",
           "meets &= days <= (ph.deadline - s.start).days", "meets &= days < (ph.deadline - s.start).days"),
    Mutant("budget-resale", "the budget is cash: resale does not pay for the plan", "planner/decide/milp.py",
           "*(price[b] for b in buy_index)]", "*(0.5 * price[b] for b in buy_index)]"),
    Mutant("dominance-supply", "pruning keeps an offer with more supply", "planner/decide/optimize.py",
           "& (supply[:, None, :] >= supply[None, :, :]).all(axis=2))", ")"),
]


def run(m: Mutant) -> tuple[bool, str, float]:
    """Apply one mutant in a copy of the repository; (caught, first failing test, seconds)."""
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        copy = Path(tmp) / "repo"
        copy.mkdir()
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
        target = copy / m.path
        text = target.read_text()
        if text.count(m.old) != 1:
            raise SystemExit(f"{m.name}: the line to mutate is not in {m.path} exactly once; update the mutant")
        target.write_text(text.replace(m.old, m.new))
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "tests"],
                              cwd=copy, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        failed = [line.split(" ", 1)[1].split(" - ")[0] for line in done.stdout.splitlines() if line.startswith("FAILED ")]
        return done.returncode != 0, (failed[0] if failed else done.stdout.strip().splitlines()[-1]), seconds


def main(names: list[str]) -> int:
    chosen = [m for m in MUTANTS if not names or m.name in names]
    survivors = []
    for m in chosen:
        caught, test, seconds = run(m)
        print(f"{m.name:26} {'caught' if caught else 'SURVIVED':9} {seconds:5.0f} s  {test}", flush=True)
        if not caught:
            survivors.append(m)
    for m in survivors:
        print(f"no test guards: {m.rule} ({m.path}: {m.old!r} -> {m.new!r})")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
