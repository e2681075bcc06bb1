"""What-if for lab meetings: compare variants, sweep a parameter, sensitivity.

Every what-if is the scenario file plus ``--set``-style overrides, planned
again; the catalog is loaded once per process and reused. Each run is
summarised in one row (cost, decision, finish), so tables stay comparable.
Runs are independent, so :func:`run_many` spreads them over processes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pricing.errors import InputError, Problem
from pricing.values import opt_float
from pricing.yamldoc import parse_document

#: Monte Carlo trials per what-if run: none, the spread is not shown in these tables.
WHATIF_TRIALS = 0


@dataclass(frozen=True)
class Job:
    """One what-if run: the scenario text with a variant and overrides."""

    text: str
    file: str
    today: dt.date
    variant: str | None = None
    sets: tuple[str, ...] = ()
    catalog_files: tuple[str, ...] = ()
    uncertainty: int = 0  # draws of the uncertainty analysis (0: none)
    breakevens: bool = True  # the row's break-even (sensitivity reads none)


def summarize(plan) -> dict[str, Any]:
    """One row for a plan: its cost, its decision (what is bought, where each phase runs), its finish."""
    from .result import to_dict

    d = to_dict(plan)
    bought = "+".join(p["offer"] for p in d["purchases"]) or "nothing"
    where = "; ".join(f"{ph['name']}: " + "+".join(a["option"] for a in ph["assignments"]) for ph in d["phases"])
    kinds = sorted({a["kind"] for ph in d["phases"] for a in ph["assignments"]})
    finishes = [ph["finish_expected"] for ph in d["phases"] if ph["finish_expected"]]
    row = {
        "total_cost": d["total_cost"], "currency": d["currency"], "feasible": d["feasible"],
        "buy": bought, "kinds": "+".join(kinds), "plan": where,
        "finish": max(finishes) if finishes else None,
        "breakeven_gpu_hours": decision_breakeven(plan.scenario, d, plan.quotes) if d["breakeven"] else None,
    }
    if d.get("uncertainty"):  # how sure: the chosen plan's spread and its chance of being the cheapest
        u = d["uncertainty"]["plan"]
        row.update(cost_p10=u["cost_p10"], cost_p90=u["cost_p90"], p_cheapest=u["p_cheapest"])
    return row


def decision_breakeven(s, d: dict, quotes: pd.DataFrame | None = None) -> float | None:
    """The break-even of the decision that matters: the cards you own or consider against what
    the plan chose instead (its rent offers, or the free tiers; a plan that rents nothing, against
    the cheapest rent of each phase among ``quotes``); the earliest such crossover.
    Not the minimum over every pair of the catalog (a card nobody considered against a machine
    nobody would rent)."""
    from .breakeven import FREE_MIX

    kinds = {a["kind"] for ph in d["phases"] for a in ph["assignments"]}
    chosen = {a["option"] for ph in d["phases"] for a in ph["assignments"] if a["kind"] == "rent"}
    if not chosen:  # a plan that rents nothing: against the rent it passed over (optimize.cheapest_rents)
        from .optimize import cheapest_rents

        chosen = cheapest_rents(quotes) if quotes is not None else set()
    if "free" in kinds:
        chosen.add(FREE_MIX)
    hours = [b["gpu_hours"] for b in d["breakeven"] if b["gpu_hours"] is not None and b["rent"] in chosen
             and (s.consider.buy is None or s.names_card(b["buy"]))]
    return min(hours, default=None)


def _plan(job: Job, alternatives: bool):
    """A what-if's plan: the job's scenario over the (per process, loaded once) catalog, planned
    for a table row (no spread, no per-phase exclusions, break-even against what it chose)."""
    from . import api
    from .scenario import load_scenario_text

    catalog = api.load_catalog(job.catalog_files, job.today)
    s = load_scenario_text(job.text, catalog.ids(), file=job.file, today=job.today, variant=job.variant,
                           sets=job.sets)
    return s, catalog, api.plan(s, catalog, trials=WHATIF_TRIALS, alternatives=alternatives, detail=False,
                                breakevens=job.breakevens, uncertainty=job.uncertainty)


def run_one(job: Job) -> dict[str, Any]:
    """Plan one what-if (in this process or a worker); with ``uncertainty`` draws, with the
    strategies' best plans, which the analysis compares."""
    return summarize(_plan(job, alternatives=bool(job.uncertainty))[2])


def run_many(jobs: Sequence[Job], workers: int = 1, progress: Callable[[int], None] | None = None
             ) -> list[dict[str, Any]]:
    """Run jobs, in order; with ``workers`` > 1 on that many processes."""
    out: list[dict[str, Any]] = []
    if workers <= 1 or len(jobs) < 4:
        for job in jobs:
            out.append(run_one(job))
            if progress:
                progress(1)
        return out
    with ProcessPoolExecutor(max_workers=workers) as pool:  # forked: the workers start with this process's caches
        for row in pool.map(run_one, jobs):
            out.append(row)
            if progress:
                progress(1)
    return out


# --------------------------------------------------------------------------- compare


def compare(jobs: Sequence[Job], labels: Sequence[tuple[str | None, str]], workers: int = 1,
            progress=None) -> pd.DataFrame:
    """Runs side by side, labelled (file or None, variant), with the change against the first."""
    rows = run_many(jobs, workers, progress)
    df = pd.DataFrame(rows)
    if any(file for file, _ in labels):
        df.insert(0, "scenario", [file for file, _ in labels])
    df.insert(1 if "scenario" in df else 0, "variant", [v for _, v in labels])
    # money compares only within one currency: against the first row in the same currency
    first = df.groupby("currency", sort=False)["total_cost"].transform("first")
    df["cost_change"] = (df["total_cost"] - first).round(2)  # money at its precision, no float noise
    df["decision_changed"] = (df["buy"] != df["buy"].iloc[0]) | (df["plan"] != df["plan"].iloc[0])
    df["inputs_changed"] = inputs_changed(jobs)
    return df


def _inputs(job: Job) -> dict[str, str]:
    """A run's inputs as dotted keys and the values as written: the file, its variant, its --set."""
    from pricing.yamldoc import parse_document

    data = parse_document(job.text, job.file).data or {}
    out: dict[str, str] = {}

    def flat(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                flat(v, f"{prefix}.{k}" if prefix else str(k))
        else:
            out[prefix] = str(node)

    flat({k: v for k, v in data.items() if k not in ("variants", "name")}, "")
    if job.variant and isinstance(data.get("variants"), dict):
        for k, v in (data["variants"].get(job.variant) or {}).items():
            flat(v, str(k))
    for s in job.sets:
        key, _, value = s.partition("=")
        out[key.strip()] = value.strip()
    return out


def inputs_changed(jobs: Sequence[Job], shown: int = 4) -> list[str]:
    """Per run, the inputs that differ from the first run's ('key: a -> b'), so a table of files
    says how the files differ, not only how their answers do."""
    first = _inputs(jobs[0]) if jobs else {}
    out = []
    for job in jobs:
        mine = _inputs(job)
        keys = sorted(k for k in set(first) | set(mine) if first.get(k) != mine.get(k))
        parts = [f"{k}: {first.get(k, '(unset)')} -> {mine.get(k, '(unset)')}" for k in keys[:shown]]
        out.append("; ".join(parts) + (f"; and {len(keys) - shown} more" if len(keys) > shown else ""))
    return out


# --------------------------------------------------------------------------- sweep


#: A sweep is for a meeting: a few hundred plans at most.
MAX_SWEEP_VALUES = 500
#: No input of a plan reaches this (a million GPU-hours, a trillion of money are the file's own limits).
MAX_SWEEP_NUMBER = 1e12


def parse_vary(option: str) -> tuple[str, list[Any]]:
    """``key.path=START:STOP:STEPS`` (numbers, units kept) or ``key.path=a,b,c`` (values as in the file)."""
    if "=" not in option:
        raise InputError([Problem("--vary", 0, 0, option, "expected key.path=START:STOP:STEPS or key.path=a,b,c")])
    key, spec = (p.strip() for p in option.split("=", 1))
    parts = spec.split(":")
    if len(parts) == 3:
        start, stop, steps = (_NUMBER.match(p) for p in parts)
        if not (start and stop and steps) or not steps.group(1).isdigit():
            raise InputError([Problem("--vary", 0, 0, key, f"expected START:STOP:STEPS such as 0.1:0.5:5 USD/kWh, "
                                      f"got {spec!r}")])
        unit = next((m.group(2).strip() for m in (start, stop, steps) if m.group(2).strip()), "")
        n = int(steps.group(1))
        if not 2 <= n <= MAX_SWEEP_VALUES:
            raise InputError([Problem("--vary", 0, 0, key, f"STEPS must be between 2 and {MAX_SWEEP_VALUES}, got {n}")])
        low, high = float(start.group(1)), float(stop.group(1))
        if not (math.isfinite(low) and math.isfinite(high) and max(abs(low), abs(high)) <= MAX_SWEEP_NUMBER):
            raise InputError([Problem("--vary", 0, 0, key, f"START and STOP must be numbers of at most "
                                      f"{MAX_SWEEP_NUMBER:,.0f}, got {spec[:60]!r}")])
        return key, [f"{number} {unit}".strip() for number in _evenly(low, high, n)]
    values = [v.strip() for v in spec.split(",") if v.strip()]
    if not values:
        raise InputError([Problem("--vary", 0, 0, key, "no values given")])
    if len(values) > MAX_SWEEP_VALUES:
        raise InputError([Problem("--vary", 0, 0, key, f"at most {MAX_SWEEP_VALUES} values, got {len(values)}")])
    return key, values


def _evenly(start: float, stop: float, n: int) -> list[str]:
    """``n`` evenly spaced numbers from ``start`` to ``stop``, written to a tenth of the step
    (0.2:1.2:20 gives 0.2, 0.253, ... 1.2, not 0.252632), never in exponent notation."""
    step = abs(stop - start) / (n - 1)
    decimals = max(0, 1 - math.floor(math.log10(step))) if step > 0 else 0
    out = []
    for v in np.linspace(start, stop, n):
        text = f"{round(float(v), decimals):.{decimals}f}"
        out.append(text.rstrip("0").rstrip(".") if "." in text else text)
    return [("0" if x in ("-0", "") else x) for x in out]


def sweep(base: Job, vary: Sequence[tuple[str, list[Any]]], workers: int = 1, progress=None) -> pd.DataFrame:
    """One row per value (a grid for two or more --vary), marking where the chosen plan changes."""
    grid = list(itertools.product(*(values for _, values in vary)))
    keys = [k for k, _ in vary]
    jobs = [dataclasses.replace(base, sets=base.sets + tuple(f"{k}={v}" for k, v in zip(keys, combo)))
            for combo in grid]
    rows = run_many(jobs, workers, progress)
    df = pd.DataFrame(rows)
    for i, k in enumerate(keys):
        df.insert(i, k, [combo[i] for combo in grid])
    signature = df["buy"] + " | " + df["plan"]
    df["plan_changes"] = signature.ne(signature.shift()) & (df.index > 0)
    return df


# --------------------------------------------------------------------------- sensitivity

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(.*)$")
#: Inputs moved in a sensitivity run: dotted paths (``*`` is each phase).
SENSITIVE = ["electricity", "horizon", "workload.params", "workload.batch_size", "workload.activation_memory",
             "phases.*.gpu_hours", "phases.*.runs", "phases.*.checkpoint_every", "phases.*.dataset_size",
             "you.host_power", "you.time_value", "you.attention", "you.budget"]


def scaled(value: Any, factor: float) -> Any | None:
    """A value with its number multiplied by ``factor``, unit kept (None when not numeric).
    Whole numbers move by at least one whole step (3 runs -> 2 and 4, never 3 and 3)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        moved = round(value * factor)
        if moved == value:
            moved = value + (1 if factor > 1 else -1)
        return max(1, moved)
    if isinstance(value, float):
        return value * factor
    if isinstance(value, str):
        m = _NUMBER.match(value)
        if m and not re.match(r"^\d{4}-\d{2}-\d{2}", value):
            return f"{float(m.group(1)) * factor:.6g}{m.group(2)}"
    return None


def numeric_inputs(text: str, file: str) -> list[tuple[str, Any]]:
    """(dotted path, raw value) of the numeric inputs the scenario file sets."""
    data = parse_document(text, file).data or {}
    out = []
    for pattern in SENSITIVE:
        parts = pattern.split(".")
        nodes: list[tuple[list[str], Any]] = [([], data)]
        for part in parts:
            nxt = []
            for path, node in nodes:
                if not isinstance(node, dict):
                    continue
                keys = list(node) if part == "*" else [part]
                nxt += [(path + [k], node[k]) for k in keys if k in node]
            nodes = nxt
        out += [(".".join(p), v) for p, v in nodes if scaled(v, 1.0) is not None]
    return out


def decisive_inputs(base: Job, span: float) -> tuple[dict[str, Any], list[tuple[str, Any, Any, Any]]]:
    """The base plan's row and the inputs outside the scenario file that decide its answer, as
    (path, value, low, high):
    the prices of the offers the plan and the other strategies' best plans use, the
    interruption rates of the interruptible ones and free tiers (a default rate, the least known
    of them, across its sourced range instead), the free tiers' weekly quotas, and each phase's
    deadline moved by ``span``
    of its window (whole days)."""
    from . import api

    s, _, p = _plan(dataclasses.replace(base, uncertainty=0), alternatives=True)
    d = api.to_dict(p)
    used = [a["option"] for ph in d["phases"] for a in ph["assignments"]]
    used += [o for alt in d["alternatives"] for o in alt["options"]]
    used += [p["offer"] for p in d["purchases"]]
    per = s.usd_per_currency
    opts = p.options.drop_duplicates("option").set_index("option")  # as planned: defaults filled, prices in USD
    out: list[tuple[str, Any, Any, Any]] = []

    def moved(path: str, value: str) -> None:
        out.append((path, value, scaled(value, 1 - span), scaled(value, 1 + span)))

    # an option's offer is its catalog row (a free tier's, for each of its devices): one row per offer
    rows = {(opts.at[o, "kind"], opts.at[o, "offer"]): opts.loc[o] for o in dict.fromkeys(used) if o in opts.index}
    for (kind, offer), r in rows.items():
        if kind == "rent":
            moved(f"catalog.rent[{offer}].price", f"{float(r['usd_per_hour']) / per:.4g} {s.currency}/h")
        if kind == "buy":
            moved(f"catalog.buy[{offer}].price", f"{float(r['purchase_usd']) / per:.4g} {s.currency}")
        rate = opt_float(r["interruptions_per_h"])  # the rate the plan used: published or default
        if kind in ("rent", "free") and rate:
            path = f"catalog.{kind}[{offer}].interruptions"
            low, high = opt_float(r["interruptions_low_per_h"]), opt_float(r["interruptions_high_per_h"])
            if isinstance(r["interruptions_default"], str) and low is not None and high is not None and low < high:
                out.append((path, f"{rate:.4g}/h", f"{low:.4g}/h", f"{high:.4g}/h"))  # a default: its sourced range
            else:
                moved(path, f"{rate:.4g}/h")
        if kind == "free" and opt_float(r["quota_h_per_week"]):
            moved(f"catalog.free[{offer}].quota", f"{float(r['quota_h_per_week']):g} h/week")
    for ph in s.phases:
        if ph.deadline is None:
            continue
        days = max(1, round(span * (ph.deadline - ph.start).days))
        low, high = ph.deadline - dt.timedelta(days=days), ph.deadline + dt.timedelta(days=days)
        if low > ph.start:
            out.append((f"phases.{ph.name}.deadline", ph.deadline.isoformat(), low.isoformat(), high.isoformat()))
    return summarize(p), _moving(out)  # the base row: its cost, purchases and kinds are run_one's


def own_inputs(base: Job, span: float) -> list[tuple[str, Any, Any, Any]]:
    """(path, value, low, high) for the scenario file's own numbers (SENSITIVE)."""
    return _moving([(path, raw, scaled(raw, 1 - span), scaled(raw, 1 + span))
                    for path, raw in numeric_inputs(base.text, base.file)])


def _moving(inputs: list[tuple[str, Any, Any, Any]]) -> list[tuple[str, Any, Any, Any]]:
    return [i for i in inputs if i[2] != i[1] or i[3] != i[1]]  # never a row that moves nothing


def sensitivity_inputs(base: Job, span: float) -> tuple[dict[str, Any], list[tuple[str, Any, Any, Any]]]:
    """The base plan's row and (path, value, low, high) for every input sensitivity moves: the
    scenario's own numbers (:func:`own_inputs`) and what decides its answer outside the file
    (:func:`decisive_inputs`). Plans the base here: the catalog, fits and session figures it
    leaves in this process's caches are what forked workers start with."""
    ref, decisive = decisive_inputs(base, span)
    return ref, own_inputs(base, span) + decisive


def sensitivity(base: Job, span: float, workers: int = 1, progress=None,
                planned: tuple[dict[str, Any], list] | None = None) -> pd.DataFrame:
    """Each input moved down and up by ``span``: cost range and whether the plan changes (what
    is bought or which offers do which phase: ``decision_flips``, and the plan it changes to).
    ``planned``: what :func:`sensitivity_inputs` returned, when the caller asked it first."""
    ref, inputs = planned or sensitivity_inputs(base, span)
    jobs = [dataclasses.replace(base, sets=base.sets + (f"{path}={value}",), breakevens=False)  # cost and decision
            for path, _, low, high in inputs for value in (low, high)]
    rows = [ref, *run_many(jobs, workers, progress)]
    table = []
    for i, (path, raw, low_value, high_value) in enumerate(inputs):
        low, high = rows[1 + 2 * i], rows[2 + 2 * i]
        # every change of plan: what is bought, or which offers do which phase (a +20 % price that
        # moves a phase from one rent offer to another changes the plan, though not its kinds)
        flips = [side for side, r in (("down", low), ("up", high))
                 if (r["buy"], r["plan"]) != (ref["buy"], ref["plan"])]
        table.append({
            "input": path, "value": raw, "low_value": low_value, "high_value": high_value,
            "cost_low": low["total_cost"], "cost_base": ref["total_cost"], "cost_high": high["total_cost"],
            "swing": round(abs(high["total_cost"] - low["total_cost"]), 2), "currency": ref["currency"],
            "decision_flips": ",".join(flips) or "",
            "buy_low": low["buy"], "buy_high": high["buy"], "kinds_low": low["kinds"], "kinds_high": high["kinds"],
            "plan_low": low["plan"] if "down" in flips else "", "plan_high": high["plan"] if "up" in flips else "",
        })
    df = pd.DataFrame(table)
    return df.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True) if len(df) else df

