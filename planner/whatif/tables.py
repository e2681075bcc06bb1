"""What-if for lab meetings: compare variants, sweep a parameter, sensitivity.

Every what-if is the scenario file plus ``--set``-style overrides, planned
again; the catalog is loaded once per process and reused. Each run is
summarised in one row (cost, decision, finish), so tables stay comparable.
Runs are independent, so :func:`run_many` spreads them over processes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from pricing.errors import InputError, Problem
from pricing.values import opt_float

from ..executors import Task, Workers, run_all, run_growing
from ..model import edits, units
from ..model.edits import CatalogEdit, editable
from ..model.overrides import parse_set
from ..model.records import HOME_KINDS, NOTEBOOK_KINDS
from ..model.scenario import Scenario

if TYPE_CHECKING:
    from ..decide.result import Plan

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
    edits: tuple[CatalogEdit, ...] = ()  # catalog figures set typed, after the file, variant and sets
    #: the scenario's own keys set typed (edits.EDITABLE), after the file, variant and sets:
    #: (path, the value as --set writes it)
    scenario_edits: tuple[tuple[str, str], ...] = ()
    candidates: bool = False  # the best plan with each card considered, side by side (compare's rows)
    #: a plan by name its search starts from (the base plan's: Plan.named_plan), where it is a
    #: plan of this position's program: the same plan and cost, found sooner
    start: tuple = ()


@dataclass(frozen=True)
class Amount:
    """A catalog figure a what-if moves: its ``value`` in the catalog's unit (USD, per hour),
    what a :class:`CatalogEdit` of ``edit`` (table, id, column) sets, and how it is shown:
    divided by ``per`` (the USD in one unit of the scenario's currency, for money) with
    ``unit``. Moved values stay exact; only what is shown is rounded."""

    value: float
    edit: tuple[str, str, str]
    per: float = 1.0
    unit: str = ""
    digits: int = 4
    shipped: float | None = None  # the shipped catalog's figure, where a refreshed layer changed it
    #: a default's sourced range (low, high), where the value as given is one: the plan as given
    #: prices the hours the range adds on average, and any value set is taken as known
    default_range: tuple[float, float] | None = None

    def __str__(self) -> str:
        return f"{_figure(self.value / self.per, self.digits)}{self.unit}"

    def scaled(self, factor: float) -> Amount:
        return dataclasses.replace(self, value=self.value * factor)

    def at(self, value: float) -> Amount:
        return dataclasses.replace(self, value=value)

    def set(self) -> CatalogEdit:
        return CatalogEdit(*self.edit, self.value)


def with_value(job: Job, path: str, value: Any) -> Job:
    """The job with one input at ``value``: a catalog figure set typed (:class:`Amount`), a key
    of the scenario that can be set on the parsed scenario (edits.EDITABLE) read as --set reads
    it and set typed, any other input as --set text."""
    if isinstance(value, Amount):
        return dataclasses.replace(job, edits=job.edits + (value.set(),))
    if editable(path):
        return dataclasses.replace(job, scenario_edits=job.scenario_edits + ((path, str(value)),))
    return dataclasses.replace(job, sets=job.sets + (f"{path}={value}",))


def with_values(job: Job, changes: Sequence[tuple[str, Any]]) -> Job:
    """The job with each (path, value) set in turn (:func:`with_value`): a sweep's or an
    explore page's grid point."""
    return functools.reduce(lambda j, kv: with_value(j, *kv), changes, job)


def bought_offers(buy: str) -> set[str]:
    """The offers a row's ``buy`` text names ("a+b on 2027-03-01": {a, b}; "nothing": none)."""
    return {part.split(" on ", 1)[0] for part in buy.split("+")} - {"nothing"}


def _bought(purchases: Any) -> str:
    """What a plan buys, and when where it buys later than the first day: a change of either is
    a change of plan."""
    return "+".join(p.offer + (f" on {p.bought_on}" if p.bought_on else "") for p in purchases) or "nothing"


def _where(phase: str, options: list[str]) -> str:
    """'sweep: a+b': where a phase runs, its options in a stated order (by name), so a plan that
    only moves hours between the same options (which of them carries most) is the same plan, as
    one that moves them without changing which carries most always was."""
    return f"{phase}: " + "+".join(sorted(options))


def summarize(plan: Plan) -> dict[str, Any]:
    """One row for a plan: its cost, its decision (what is bought, where each phase runs), its finish."""
    from ..decide.result import Money, to_dict

    if not plan.breakeven and plan.uncertainty is None and not plan.candidates:  # from the plan itself (what-if tables)
        finished = [ph.finish_expected.isoformat() for ph in plan.phases if ph.finish_expected]
        return {
            "total_cost": Money(plan.scenario)(plan.total_usd), "currency": plan.scenario.currency,
            "feasible": plan.feasible, "buy": _bought(plan.purchases),
            "kinds": "+".join(sorted({a.kind for ph in plan.phases for a in ph.assignments})),
            "plan": "; ".join(_where(ph.name, [a.option for a in ph.assignments]) for ph in plan.phases),
            "finish": max(finished) if finished else None, "breakeven_gpu_hours": None, "breakeven_pair": None,
        }
    d = to_dict(plan)
    bought = _bought(plan.purchases)
    where = "; ".join(_where(ph["name"], [a["option"] for a in ph["assignments"]]) for ph in d["phases"])
    kinds = sorted({a["kind"] for ph in d["phases"] for a in ph["assignments"]})
    finishes = [ph["finish_expected"] for ph in d["phases"] if ph["finish_expected"]]
    row = {
        "total_cost": d["total_cost"], "currency": d["currency"], "feasible": d["feasible"],
        "buy": bought, "kinds": "+".join(kinds), "plan": where,
        "finish": max(finishes) if finishes else None,
    }
    pair = decision_pair(plan.scenario, d, plan.quotes) if d["breakeven"] else None
    row["breakeven_gpu_hours"] = pair["gpu_hours"] if pair else None
    row["breakeven_pair"] = f"{pair['buy']} vs {pair['rent']}" if pair else None
    if d.get("uncertainty"):  # how sure: the chosen plan's spread and its chance of being the cheapest
        u = d["uncertainty"]["plan"]
        row.update(cost_p10=u["cost_p10"], cost_p90=u["cost_p90"], p_cheapest=u["p_cheapest"])
    if len(d["candidates"]) > 1:  # each card considered, side by side: the lab's 'this box, that box, or rent?'
        row["candidates"] = "; ".join(f"{c['candidate']}: {c['total_cost']:,.2f}"
                                      for c in sorted(d["candidates"], key=lambda c: c["total_cost"]))
    return row


def decision_breakeven(s: Scenario, d: dict, quotes: pd.DataFrame | None = None) -> float | None:
    """The hours of :func:`decision_pair` (None without one)."""
    pair = decision_pair(s, d, quotes)
    return pair["gpu_hours"] if pair else None


def decision_pair(s: Scenario, d: dict, quotes: pd.DataFrame | None = None) -> dict[str, Any] | None:
    """The break-even of the decision that matters, as its row of ``d["breakeven"]`` (the card
    and what it is set against, named): the cards you own or consider against what the plan
    chose instead (its rent offers, or the free tiers; a plan that rents nothing, against the
    cheapest rent of each phase among ``quotes``); the earliest such crossover. Not the minimum
    over every pair of the catalog (a card nobody considered against a machine nobody would rent)."""
    from ..decide.breakeven import FREE_MIX

    kinds = {a["kind"] for ph in d["phases"] for a in ph["assignments"]}
    chosen = {a["option"] for ph in d["phases"] for a in ph["assignments"] if a["kind"] == "rent"}
    if not chosen:  # a plan that rents nothing: against the rent it passed over (optimize.cheapest_rents)
        from ..decide.optimize import cheapest_rents

        chosen = cheapest_rents(quotes) if quotes is not None else set()
    if kinds & {"free", "subscription"}:
        chosen.add(FREE_MIX)
    pairs = [b for b in d["breakeven"] if b["gpu_hours"] is not None and b["rent"] in chosen
             and (s.consider.buy is None or s.names_card(b["buy"]))]
    return min(pairs, key=lambda b: (b["gpu_hours"], b["buy"], b["rent"]), default=None)


def _plan(job: Job, alternatives: bool) -> tuple[Scenario, Any, Any]:
    """A what-if's plan: the job's scenario over the (per process, loaded once) catalog, planned
    for a table row (no spread, no per-phase exclusions, break-even against what it chose)."""
    from .. import api
    from ..model.edits import with_catalog_edits

    catalog = api.load_catalog(job.catalog_files, job.today)
    s = _scenario(job.text, job.file, job.today, job.variant, job.sets, job.catalog_files)
    for path, text in job.scenario_edits:
        _, raw = parse_set(f"{path}={text}")  # the value as --set reads it: the same YAML
        edited = edits.with_value(s, path, raw, api.scenario_ids(catalog))
        if edited is None:  # a key to set as text here (a phase the file does not have): every change as --set
            s = _scenario(job.text, job.file, job.today, job.variant,
                          job.sets + tuple(f"{p}={v}" for p, v in job.scenario_edits), job.catalog_files)
            break
        s = edited
    s = with_catalog_edits(s, job.edits)
    return s, catalog, api.plan(s, catalog, trials=WHATIF_TRIALS, alternatives=alternatives or job.candidates,
                                detail=job.candidates, breakevens=job.breakevens, uncertainty=job.uncertainty,
                                start=job.start)


@functools.lru_cache(maxsize=8)
def _scenario(text: str, file: str, today: dt.date, variant: str | None, sets: tuple[str, ...],
              catalog_files: tuple[str, ...]) -> Scenario:
    """The scenario read from its text once per process for the same text, variant, --set and
    catalog: a what-if's own changes are set on it typed (:func:`with_value`), not by reading it
    again. Scenarios are frozen, so one may be shared."""
    from .. import api
    from ..model.validate import load_scenario_text

    ids = api.scenario_ids(api.load_catalog(catalog_files, today))
    return load_scenario_text(text, ids, file=file, today=today, variant=variant, sets=sets)


def run_one(job: Job) -> dict[str, Any]:
    """Plan one what-if (in this process or a worker); with ``uncertainty`` draws, with the
    strategies' best plans, which the analysis compares."""
    return summarize(_plan(job, alternatives=bool(job.uncertainty))[2])


def run_many(jobs: Sequence[Job], workers: Workers = 1, progress: Callable[[int], None] | None = None
             ) -> list[dict[str, Any]]:
    """Run jobs, in order; with ``workers`` > 1 on that many processes, or on the Dask cluster
    whose scheduler ``workers`` names (:mod:`planner.executors`)."""
    return run_all(run_one, jobs, workers, progress)


# --------------------------------------------------------------------------- compare


def compare(jobs: Sequence[Job], labels: Sequence[tuple[str | None, str]], workers: Workers = 1,
            progress: Callable[[int], None] | None = None) -> pd.DataFrame:
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
    for key, value in job.scenario_edits:
        out[key] = value.strip()
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
    values = [v.strip() for v in spec.split(",")]
    if not any(values):
        raise InputError([Problem("--vary", 0, 0, key, "no values given")])
    if not all(values):  # 'x=100,,200': a value left out by mistake, not one to drop in silence
        raise InputError([Problem("--vary", 0, 0, key, f"an empty value in {spec[:60]!r} (value {values.index('') + 1}); "
                                  "expected values separated by single commas, such as 100,150,200")])
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


def sweep(base: Job, vary: Sequence[tuple[str, list[Any]]], workers: Workers = 1, progress: Callable[[int],
          None] | None = None) -> pd.DataFrame:
    """One row per value (a grid for two or more --vary), marking where the chosen plan changes."""
    grid = list(itertools.product(*(values for _, values in vary)))
    keys = [k for k, _ in vary]
    jobs = [with_values(base, list(zip(keys, combo))) for combo in grid]
    rows = run_many(jobs, workers, progress)
    df = pd.DataFrame(rows)
    for i, k in enumerate(keys):
        df.insert(i, k, [combo[i] for combo in grid])
    signature = df["buy"] + " | " + df["plan"]
    df["plan_changes"] = signature.ne(signature.shift()) & (df.index > 0)
    return df


# --------------------------------------------------------------------------- sensitivity

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(.*)$")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def magnitude(text: str) -> float | None:
    """The number an input's value written as text starts with ('0.35 EUR/h', '80', '12 GB'),
    None for a date and for what has no number."""
    m = _NUMBER.match(text)
    return float(m.group(1)) if m and not DATE.fullmatch(text) else None


#: Inputs moved in a sensitivity run: dotted paths (``*`` is each phase).
SENSITIVE = ["electricity", "horizon", "workload.params", "workload.batch_size", "workload.activation_memory",
             "phases.*.gpu_hours", "phases.*.tokens", "phases.*.samples", "phases.*.epochs", "phases.*.runs",
             "phases.*.checkpoint_every", "phases.*.dataset_size",
             "you.host_power", "you.time_value", "you.attention", "you.budget", "you.carbon_price", "you.max_co2"]


#: Inputs that count whole things: they move by whole steps. Every other number moves by its
#: share, though written whole (1 epoch -> 0.8 and 1.2, not 1 and 2; 3 GPU-hours -> 2.4 and 3.6).
COUNTS = ("workload.batch_size", "phases.*.runs")


def scaled(value: Any, factor: float, whole: bool = True) -> Any | None:
    """A value with its number multiplied by ``factor``, unit kept (None when not numeric).
    Whole numbers of a count (``whole``) move by at least one whole step (3 runs -> 2 and 4,
    never 3 and 3); others by the factor, written whole where they come out whole."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and not whole:
        x = float(f"{value * factor:.6g}")
        return int(x) if x.is_integer() else x
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
            return f"{_figure(float(m.group(1)) * factor, 6)}{m.group(2)}"
    return None


def numeric_inputs(data: dict) -> list[tuple[str, Any, str]]:
    """(dotted path, raw value, the SENSITIVE pattern it matched) of the numeric inputs the
    scenario file's ``data`` sets (as its variant and --set leave them: :func:`own_inputs`)."""
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
        nodes = [(p, units.in_hours_if_clock(v)) for p, v in nodes]  # 1:30 moves as 1.5 h, not as 1 and ':30'
        out += [(".".join(p), v, pattern) for p, v in nodes if scaled(v, 1.0) is not None]
    return out


#: A sensitivity moves every card considered, or, of many (a whole catalog), this many: those
#: that would do all the work for the least money.
MAX_CARDS_MOVED = 6


def _cards_to_move(quotes: pd.DataFrame, cards: dict[str, tuple[float, float]]) -> list[str]:
    """The cards whose price and resale a sensitivity moves: every one considered, or of more
    than MAX_CARDS_MOVED, those that would do every phase they can for the least money (price
    less resale, plus running money), in that order."""
    if len(cards) <= MAX_CARDS_MOVED:
        return sorted(cards)
    q = quotes[(quotes["kind"] == "buy").to_numpy() & quotes["ok"].to_numpy(dtype=bool)]
    running = (q["cost_usd"] - q["your_time_usd"] - q["carbon_usd"]).groupby(q["option"]).sum()
    money = {c: price - resale + float(running.get(c, math.inf)) for c, (price, resale) in cards.items()}
    return sorted(cards, key=lambda c: (money[c], c))[:MAX_CARDS_MOVED]


def _figure(x: float, digits: int = 4) -> str:
    """A catalog figure as a user writes it (units.format_significant, no thousands separator)."""
    return units.format_significant(x, digits)


def decisive_inputs(base: Job, span: float) -> tuple[dict[str, Any], list[tuple[str, Any, Any, Any]], tuple]:
    """The base plan's row and the inputs outside the scenario file that decide its answer, as
    (path, value, low, high):
    the prices of the offers the plan and the other strategies' best plans use, of the
    runner-up rent offer of each phase (the cheapest the plan leaves out) and of every card
    considered (:func:`_cards_to_move`), with its resale; the interruption rates of the interruptible ones and free
    tiers (a default rate, the least known of them, across its sourced range instead), the free
    tiers' weekly quotas, a paid tier's monthly fee (or, sold by the unit, its unit's price), and
    each phase's deadline moved by ``span`` of its window (whole days); and the base plan by name
    (Plan.named_plan), each what-if's search's start (Job.start)."""
    from .. import api
    from ..decide.quotes import card_costs

    s, _, p = _plan(dataclasses.replace(base, uncertainty=0, breakevens=False), alternatives=True)  # (no row reads one)
    d = api.to_dict(p)
    used = [a["option"] for ph in d["phases"] for a in ph["assignments"]]
    used += [o for alt in d["alternatives"] for o in alt["options"]]
    used += [p["offer"] for p in d["purchases"]]
    q = p.quotes[(p.quotes["kind"] == "rent").to_numpy() & p.quotes["ok"].to_numpy(dtype=bool)
                 & ~p.quotes["option"].isin(used).to_numpy()]
    used += list(q.loc[q.groupby("phase")["cost_usd"].idxmin(), "option"]) if len(q) else []  # the runners-up
    cards = card_costs(s, p.options)
    used += _cards_to_move(p.quotes, cards)
    per = s.usd_per_currency
    opts = p.options.drop_duplicates("option").set_index("option")  # as planned: defaults filled, prices in USD
    out: list[tuple[str, Any, Any, Any]] = []

    def moved(path: str, value: Amount) -> None:
        out.append((path, value, value.scaled(1 - span), value.scaled(1 + span)))

    money: dict[str, Any] = {"per": per, "unit": f" {s.currency}"}
    shipped_rent = api.shipped_catalog().rent.set_index("id")["usd_per_hour"]

    def shipped(offer: str, r: Any) -> float | None:  # the shipped price a refreshed layer replaced
        layer = r.get("price_source")
        was = shipped_rent.get(offer)
        return float(was) if isinstance(layer, str) and layer.startswith("refreshed") and was is not None else None

    # an option's offer is its catalog row (a free tier's, for each of its devices): one row per offer
    rows = {(opts.at[o, "kind"], opts.at[o, "offer"]): opts.loc[o] for o in dict.fromkeys(used) if o in opts.index}
    for (kind, offer), r in rows.items():
        if kind == "rent":
            moved(f"catalog.rent[{offer}].price", Amount(float(r["usd_per_hour"]), ("rent", offer, "usd_per_hour"),
                                                         per, f" {s.currency}/h", shipped=shipped(offer, r)))
        if kind == "buy":
            moved(f"catalog.buy[{offer}].price", Amount(float(r["purchase_usd"]), ("buy", offer, "price_usd"), **money))
            resale = _resale(r, cards.get(offer, (0.0, 0.0)), money)
            if resale is not None:
                moved(f"catalog.buy[{offer}].resale", resale)
        rate = opt_float(r["interruptions_per_h"])  # the rate the plan used: published or default
        table = "free" if kind == "subscription" else kind  # the scenario's catalog.free holds both
        if kind in ("rent", "free", "subscription") and rate:
            path = f"catalog.{table}[{offer}].interruptions"
            amount = Amount(rate, (table, offer, "interruptions_per_h"), unit="/h")
            low, high = opt_float(r["interruptions_low_per_h"]), opt_float(r["interruptions_high_per_h"])
            if isinstance(r["interruptions_default"], str) and low is not None and high is not None and low < high:
                given = dataclasses.replace(amount, default_range=(low, high))
                out.append((path, given, amount.at(low), amount.at(high)))  # a default: its sourced range
            else:
                moved(path, amount)
        if kind == "subscription":  # a tier you pay: its month's fee, or its unit's price where it has none
            fee, burn = opt_float(r["usd_per_month"]), opt_float(r["units_per_hour"])
            if fee:
                moved(f"catalog.free[{offer}].fee", Amount(fee, ("free", offer, "usd_per_month"), **money))
            elif burn:
                moved(f"catalog.free[{offer}].unit_price", Amount(float(r["usd_per_hour"]) / burn,
                                                                  ("free", offer, "usd_per_unit"), **money))
        if kind in ("free", "subscription") and opt_float(r["quota_h_per_week"]):
            moved(f"catalog.free[{offer}].quota", Amount(float(r["quota_h_per_week"]),
                                                         ("free", offer, "quota_h_per_week"), unit=" h/week"))
    for ph in s.phases:
        if ph.deadline is None:
            continue
        days = max(1, round(span * (ph.deadline - ph.start).days))
        early, late = ph.deadline - dt.timedelta(days=days), ph.deadline + dt.timedelta(days=days)
        if early > ph.start:
            out.append((f"phases.{ph.name}.deadline", ph.deadline.isoformat(), early.isoformat(), late.isoformat()))
    return summarize(p), _moving(out), p.named_plan  # the base row: its cost, purchases and kinds are run_one's


def _resale(r: Any, card: tuple[float, float], money: dict[str, Any]) -> Amount | None:
    """A card's resale as a what-if moves it: as the row gives it, a share of the price paid
    (``resale: 50%``, moved as a share, so a card bought later at another price keeps it) or money;
    from the default model, as a multiple of the model (``resale: 1x``, moved to 0.8x and 1.2x),
    which keeps the model's dependence on the card's age: a share of the price would stand for
    the model only on the first day, and a plan that buys the card later (``buy_later``: sold
    younger, for more) changed at the very share the table called 'as given'. None when it sells
    for nothing."""
    share, usd = opt_float(r["resale_fraction"]), opt_float(r["resale_usd"])
    if share is not None:
        return Amount(share, ("buy", str(r["offer"]), "resale_fraction"), 0.01, " %")
    if usd is not None:
        return Amount(usd, ("buy", str(r["offer"]), "resale_usd"), **money) if usd else None
    if card[1] <= 0:
        return None
    factor = opt_float(r.get("resale_model_factor"))
    return Amount(1.0 if factor is None else factor, ("buy", str(r["offer"]), "resale_model_factor"), unit="x")


def own_inputs(base: Job, span: float) -> list[tuple[str, Any, Any, Any]]:
    """(path, value, low, high) for the scenario file's own numbers (SENSITIVE), as its variant
    and --set leave them (they were read from the file alone: `--set phases.final.gpu_hours=300`
    planned 300 h, and the table moved 180 h, the file's, to 144 and 216)."""
    from .. import api
    from ..model.validate import overridden_data

    ids = api.scenario_ids(api.load_catalog(base.catalog_files, base.today))
    data = overridden_data(base.text, ids, file=base.file, today=base.today, variant=base.variant, sets=base.sets)
    return _moving([(path, raw, scaled(raw, 1 - span, pattern in COUNTS), scaled(raw, 1 + span, pattern in COUNTS))
                    for path, raw, pattern in numeric_inputs(data)])


def _moving(inputs: list[tuple[str, Any, Any, Any]]) -> list[tuple[str, Any, Any, Any]]:
    return [i for i in inputs if str(i[2]) != str(i[1]) or str(i[3]) != str(i[1])]  # never a row that moves nothing


def sensitivity_inputs(base: Job, span: float) -> tuple[dict[str, Any], list[tuple[str, Any, Any, Any]], tuple]:
    """The base plan's row, (path, value, low, high) for every input sensitivity moves (the
    scenario's own numbers, :func:`own_inputs`, and what decides its answer outside the file,
    :func:`decisive_inputs`) and the base plan by name (the what-ifs' start: Job.start). Plans
    the base here: the catalog, fits and session figures it leaves in this process's caches are
    what forked workers start with."""
    ref, decisive, start = decisive_inputs(base, span)
    return ref, own_inputs(base, span) + decisive, start


_CATALOG_PATH = re.compile(r"^catalog\.(rent|buy)\[(.+)\]\.(price|interruptions|resale)$")
#: The scenario's inputs that only cards at home read (your electricity, your host's power) and
#: those only sessions started by hand read (your time, your attention: quotes.QuoteInputs.key),
#: with the way each makes those options worse and no other better.
_HOME_INPUTS = {"electricity": "up", "you.host_power": "up"}
_BY_HAND_INPUTS = {"you.time_value": "up", "you.attention": "down"}


def worse_side(path: str) -> str | None:
    """The way moving an input makes the options that read it worse for every plan that uses
    them and no better for any other: "up" for a price or an interruption rate (its offer), "down"
    for a card's resale; "up" for your electricity and your host's power (cards at home) and your
    time, "down" for your attention (sessions started by hand); None for any other input."""
    m = _CATALOG_PATH.match(path)
    if m:
        return "down" if m.group(3) == "resale" else "up"
    return _HOME_INPUTS.get(path) or _BY_HAND_INPUTS.get(path)


def unchanged(path: str, side: str, row: dict[str, Any]) -> bool:
    """Whether moving the input this way from where ``row`` (a plain run's row) was planned
    provably leaves that plan and its cost as they are, so that no run is needed: an offer the
    plan does not use made dearer or worse, or what only cards at home or sessions started by
    hand read made worse where the plan uses none (:func:`worse_side`; its kinds, ``row["kinds"]``).
    The plan stays feasible at the same cost and every other plan gets no cheaper (the order a
    lower price never raises the optimum, turned round), and the program's tie-breaks keep it the
    one chosen."""
    if worse_side(path) != side:
        return False
    if path in _HOME_INPUTS or path in _BY_HAND_INPUTS:
        reads = HOME_KINDS if path in _HOME_INPUTS else NOTEBOOK_KINDS
        return not set(str(row["kinds"]).split("+")) & set(reads)
    m = _CATALOG_PATH.match(path)
    assert m is not None
    table, offer, _ = m.groups()
    used = ({o for part in str(row["plan"]).split("; ") for o in part.split(": ", 1)[-1].split("+")}
            if table == "rent" else bought_offers(str(row["buy"])))
    return offer not in used

#: Halvings of the interval between a value that keeps the plan and one that changes it: the flip
#: value is found to 1/64 of the distance moved (a whole step for counts, a day for dates).
FLIP_STEPS = 6
#: ... and further, up to FLIP_MAX_STEPS, while the two values lie more than FLIP_NEAR apart (a
#: share of the changed one): what a card would have to cost is searched from 80 % of its price
#: down to 1 %, and 6 halvings left "below 81.88 USD (50.94 changes it)" for a card whose plan
#: changes between 75 and 65 USD; a stated flip holds when planned again a little past it.
FLIP_NEAR = 0.02
FLIP_MAX_STEPS = 16


def _between(a: Any, b: Any, decimals: int = 6) -> Any | None:
    """The value halfway between two values of one input, written as the input is (a number with
    its unit to ``decimals`` places, a whole count rounded down, a date to the day: :func:`_toward`
    at the middle); None when no value lies strictly between them."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, str) and isinstance(b, str) and DATE.fullmatch(a) and DATE.fullmatch(b):
        first, last = dt.date.fromisoformat(a), dt.date.fromisoformat(b)
        mid_date = first + (last - first) // 2
        return mid_date.isoformat() if mid_date not in (first, last) else None
    if isinstance(a, int) and isinstance(b, int):
        whole = (a + b) // 2
        return whole if whole not in (a, b) else None
    ends = _magnitudes(a, b)
    return None if ends is None else _toward(a, b, (ends[0] + ends[1]) / 2, decimals)


@dataclass(frozen=True)
class Flip:
    """Where one input, moved one way from its value, changes the plan: ``kept`` is the last value
    found with the plan as it is, ``at`` the first with another (``buy``, ``plan``: that one)."""

    input: str
    side: str  # "down" or "up"
    kept: Any
    at: Any
    buy: str
    plan: str


def _shown(value: Any) -> Any:
    """An input's value as a table shows it (an :class:`Amount` in the scenario's currency)."""
    return str(value) if isinstance(value, Amount) else value


def _shown_pair(kept: Any, at: Any) -> tuple[str, str]:
    """Two values either side of a flip, written with the digits that tell them apart, and none
    written nearer the flip than the value the search planned: --set reads the text, so a last
    digit rounded towards the flip could cross it (later.yaml: 0.27374 EUR/h kept the plan,
    0.2737 written did not)."""
    if isinstance(kept, Amount) and isinstance(at, Amount):
        k, a = kept.value / kept.per, at.value / at.per
        for digits in range(4, 13):  # each rounded away from the other: kept towards the value as given
            sk, sa = (dataclasses.replace(x, value=_rounded(v, digits, up=v > w) * x.per, digits=digits)
                      for x, v, w in ((kept, k, a), (at, a, k)))
            if str(sk) != str(sa):
                return str(sk), str(sa)
    if isinstance(kept, float) or isinstance(at, float):  # a number written whole moved to a fraction (epochs)
        k, a = float(kept), float(at)
        for digits in range(4, 13):
            tk, ta = (_figure(_rounded(v, digits, up=v > w), digits) for v, w in ((k, a), (a, k)))
            if tk != ta:
                return tk, ta
    return str(kept), str(at)


def _rounded(x: float, digits: int, up: bool) -> float:
    """``x`` to ``digits`` significant digits, rounded up or down (as units.format_significant
    counts them; a figure already that short stays as it is)."""
    if x == 0 or not math.isfinite(x):
        return x
    scale = 10.0 ** max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return (math.ceil(x * scale - 1e-9) if up else math.floor(x * scale + 1e-9)) / scale


def _signature(row: dict[str, Any]) -> tuple[str, str]:
    return row["buy"], row["plan"]


@dataclass(frozen=True)
class FlipSearch:
    """Where between ``kept`` (a value with the plan ``signature``, the base one) and ``at``
    (another plan's: ``at_row``, or None when not yet planned) the plan of input ``path``
    changes. ``known``: (value, cost) of plain runs already made with the base plan, which give
    its cost line from the start (the base itself, a side that kept the plan)."""

    base: Job
    path: str
    kept: Any
    at: Any
    at_row: dict[str, Any] | None
    signature: tuple[str, str]
    known: tuple[tuple[Any, float], ...] = ()


def _search(task: FlipSearch) -> tuple[Any, Any, dict[str, Any] | None]:
    """(last value keeping the plan, first value changing it, the row there) between ``kept``
    and ``at`` (each probe a plain run); with no row at ``at``, it is run first, and a plan
    unchanged there gives no row.

    The search ends where halvings would (1/2^FLIP_STEPS of the interval, and FLIP_NEAR of the
    value), but probes where the two plans' costs cross: a plan's cost is a line in a price
    (its hours do not move), so two runs with each plan give the crossing (the method of false
    position, regula falsi), and a probe just short of it and one just past it end the search.
    Where costs bend (an interruption rate, hours) a guess still narrows the interval, and one
    outside it gives way to a halving; dates and what has no number are halved. Every value
    returned is a plain run's. The flips of the shipped and bench scenarios took 260 runs
    instead of 313; on bench/lab-boxes.yaml what a box would have to cost, 5 instead of 8 and 9."""
    kept, at, at_row, signature = task.kept, task.at, task.at_row, task.signature

    def planned(value: Any) -> dict[str, Any]:
        return run_one(dataclasses.replace(with_value(task.base, task.path, value), breakevens=False))

    if at_row is None:
        at_row = planned(at)
        if _signature(at_row) == signature:
            return kept, at, None
    ends = _magnitudes(kept, at)
    if ends is None:
        return _halved(planned, kept, at, at_row, signature)
    width = abs(ends[1] - ends[0]) / 2 ** FLIP_STEPS  # where halvings would end
    decimals = max(0, -math.floor(math.log10(width / 4))) if width > 0 else 6
    ours = [(x, cost) for v, cost in task.known if (x := _magnitude(v)) is not None]
    theirs = [(ends[1], float(at_row["total_cost"]))]
    then: Any = None
    for _ in range(FLIP_MAX_STEPS):
        k, a = _magnitudes(kept, at) or ends
        if abs(a - k) <= width * (1 + 1e-9) and abs(a - k) <= FLIP_NEAR * abs(a):
            break
        probe, then = (then, None) if then is not None else _near_crossing(kept, at, ours, theirs, width, decimals)
        if probe is None:
            probe = _between(kept, at, decimals)
        if probe is None:
            break
        row = planned(probe)
        x = _magnitude(probe) or 0.0  # a number: probes lie between two
        if _signature(row) == signature:
            kept = probe
            ours.append((x, float(row["total_cost"])))
        else:
            if _signature(row) != _signature(at_row):
                theirs = []  # a third plan between: its own line
            at, at_row, then = probe, row, None
            theirs.append((x, float(row["total_cost"])))
    return kept, at, at_row


def _halved(planned: Callable[[Any], dict[str, Any]], kept: Any, at: Any, at_row: dict[str, Any],
            signature: tuple[str, str]) -> tuple[Any, Any, dict[str, Any]]:
    """FLIP_STEPS halvings between ``kept`` and ``at`` (dates: to the day)."""
    for _ in range(FLIP_STEPS):
        mid = _between(kept, at)
        if mid is None:
            break
        row = planned(mid)
        if _signature(row) == signature:
            kept = mid
        else:
            at, at_row = mid, row
    return kept, at, at_row


def _near_crossing(kept: Any, at: Any, ours: list[tuple[float, float]], theirs: list[tuple[float, float]],
                   width: float, decimals: int) -> tuple[Any, Any]:
    """Two probes either side of where the cost lines of the plan at ``kept`` (through the two
    points of ``ours`` nearest it: (value, cost)) and of the plan at ``at`` (``theirs``) cross,
    ``width`` apart: (None, None) without two points on each line, parallel lines, or a crossing
    outside the interval; a probe that would leave it is dropped."""
    k, a = _magnitudes(kept, at) or (math.nan, math.nan)
    if len(ours) < 2 or len(theirs) < 2:
        return None, None
    (x1, y1), (x2, y2) = sorted(ours, key=lambda p: abs(p[0] - k))[:2]
    (u1, v1), (u2, v2) = sorted(theirs, key=lambda p: abs(p[0] - a))[:2]
    if x1 == x2 or u1 == u2:
        return None, None
    slope_ours, slope_theirs = (y2 - y1) / (x2 - x1), (v2 - v1) / (u2 - u1)
    if slope_ours == slope_theirs:
        return None, None
    x = (v1 - y1 + slope_ours * x1 - slope_theirs * u1) / (slope_ours - slope_theirs)
    way, room = math.copysign(1.0, a - k), abs(a - k)
    crossing = (x - k) * way  # from kept towards at
    if not 0 < crossing < room:
        return None, None
    pair = 0.95 * min(width, FLIP_NEAR * abs(x))  # the two probes this far apart, the crossing between
    first, second = crossing - pair / 2, crossing + pair / 2
    if first <= 0:  # kept itself is the probe short of the crossing
        first, second = math.nan, pair
    elif second >= room:  # at itself is the probe past it
        first, second = room - pair, math.nan
    probes = [_toward(kept, at, k + way * d, decimals) for d in (first, second) if 0 < d < room]
    probes = [p for p in probes if p is not None]
    return (probes + [None, None])[0], (probes + [None, None])[1]


def _magnitudes(a: Any, b: Any) -> tuple[float, float] | None:
    """Two values of one input as numbers (:func:`_magnitude`); None when either has none."""
    x, y = _magnitude(a), _magnitude(b)
    return None if x is None or y is None else (x, y)


def _magnitude(v: Any) -> float | None:
    """A value of an input as a number (an amount's, a number, a number with its unit); None for
    a date and what has no number."""
    if isinstance(v, Amount):
        return float(v.value)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return magnitude(v) if isinstance(v, str) else None


def _toward(a: Any, b: Any, x: float, decimals: int) -> Any | None:
    """The value of ``a``'s kind at the number ``x`` (a number with its unit to ``decimals``
    places, a whole count), None unless it lies strictly between ``a`` and ``b``."""
    ends = _magnitudes(a, b)
    if ends is None or isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, Amount):
        value: Any = a.at(x)
    elif isinstance(a, int) and isinstance(b, int):
        value = round(x)
    elif isinstance(a, (int, float)):
        value = x
    else:
        value = _written(round(x, decimals), _NUMBER.match(a).group(2), decimals)  # type: ignore[union-attr]
    v = _magnitude(value)
    return value if v is not None and min(ends) < v < max(ends) else None


def _written(x: float, unit: str, decimals: int) -> str:
    """A number with its unit as a what-if writes it: ``decimals`` places, no trailing zeros."""
    text = f"{x:.{decimals}f}".rstrip("0").rstrip(".") if decimals > 0 else f"{x:.0f}"
    return f"{text}{unit}"


def flip_points(base: Job, ref: dict[str, Any], table: pd.DataFrame, workers: Workers = 1,
                typed: dict[str, tuple[Any, Any, Any]] | None = None) -> list[Flip]:
    """For each input and side where the plan changes (``decision_flips``), the value at which
    it does, by a search (:func:`_search`) between the input's value and the value moved to
    (plain runs of the scenario with that one input set, so the answer is what ``planner run
    --set`` gives on both sides). Several flips within the interval: one of them.

    What it would take: the price of a card or rent offer the plan leaves out, when even its low
    value does not bring it in, is searched below that too, down to almost nothing (1 % of its
    price): the price at which it enters the plan (none when not even then). The searches of a
    table's rows (:class:`_FlipSearches`), on ``workers``."""
    searches = _FlipSearches(base, ref, typed)
    for r in cast(list[dict[str, Any]], table.to_dict("records")):
        searches.add_row(r)
    run_growing([(_search, task) for _, task in searches.tasks], workers, searches.ended)
    return searches.flips()


class _FlipSearches:
    """The flip searches of a sensitivity table's rows, as their rows come in: ``tasks`` the
    first round's ((input, side), search) in order; :meth:`ended` takes each search's result by
    its number and gives the searches it calls for: a default whose range changes the plan both
    ways, where one side's search could not leave the default (its first known rate already
    changes the plan), searches again between known rates, from the rate the other side found to
    keep the plan. ``found``: (kept, at, row) by (input, side), each side's last search."""

    def __init__(self, base: Job, ref: dict[str, Any], typed: dict[str, tuple[Any, Any, Any]] | None):
        self.base, self.ref, self.typed = base, ref, typed
        self.tasks: list[tuple[tuple[str, str], FlipSearch]] = []  # by number: the first round's, then again
        self.found: dict[tuple[str, str], tuple[Any, Any, dict[str, Any] | None]] = {}
        self._open: dict[str, int] = {}  # first-round searches of an input not yet ended

    def add_row(self, r: dict[str, Any]) -> list[Task]:
        """The searches of one table row (its input's both sides planned)."""
        new = _row_searches(self.base, self.ref, r, self.typed)
        self.tasks += new
        if new:
            self._open[str(r["input"])] = len(new)
        return [(_search, task) for _, task in new]

    def ended(self, number: int, result: tuple[Any, Any, dict[str, Any] | None]) -> list[Task]:
        key = self.tasks[number][0]
        self.found[key] = result
        path = key[0]
        if path not in self._open:  # a search again: the last of its input
            return []
        self._open[path] -= 1
        if self._open[path]:
            return []
        del self._open[path]
        again = []
        for (p, side), given in [(k, t.kept) for k, t in self.tasks if k[0] == path]:
            kept, at, row = self.found[(p, side)]
            other = next((f for (q, s), f in self.found.items() if q == path and s != side), None)
            if (row is not None and other is not None and isinstance(given, Amount) and given.default_range is not None
                    and isinstance(kept, Amount) and kept.value == given.value and isinstance(other[0], Amount)
                    and other[0].value != given.value):
                search = FlipSearch(self.base, path, dataclasses.replace(other[0], default_range=None), at, row,
                                    _signature(self.ref))
                again.append(((p, side), search))
        self.tasks += again
        return [(_search, task) for _, task in again]

    def flips(self) -> list[Flip]:
        """Each side's flip, in the rows' order (none where its search found the plan unchanged)."""
        out = []
        for path, side in dict.fromkeys(k for k, _ in self.tasks):
            kept, at, row = self.found[(path, side)]
            if row is not None:
                out.append(Flip(path, side, kept, at, row["buy"], row["plan"]))
        return out


def _row_searches(base: Job, ref: dict[str, Any], r: dict[str, Any], typed: dict[str, tuple[Any, Any, Any]] | None
                  ) -> list[tuple[tuple[str, str], FlipSearch]]:
    """((input, side), search) for each side of table row ``r`` where the plan changes, and the
    search of what it would take (:func:`flip_points`)."""
    out: list[tuple[tuple[str, str], FlipSearch]] = []
    value, low, high = (typed or {}).get(str(r["input"]), (r["value"], r["low_value"], r["high_value"]))
    sides = [side for side in str(r["decision_flips"]).split(",") if side in ("down", "up")]
    default = isinstance(value, Amount) and value.default_range is not None
    # plain runs with the base plan: its cost line (a default's own run is over its range, not at a rate)
    known = tuple((v, float(cost)) for v, cost, moved in (
        (value, r["cost_base"], default), (low, r["cost_low"], "down" in sides), (high, r["cost_high"], "up" in sides))
        if not moved)
    for side in sides:
        at_row = {"buy": r["buy_low"] if side == "down" else r["buy_high"],
                  "plan": r["plan_low"] if side == "down" else r["plan_high"],
                  "total_cost": r["cost_low"] if side == "down" else r["cost_high"]}
        start = value
        if default and len(sides) == 1:
            # a default is priced over its range as given, and a rate set is known: the search
            # runs between known rates, from the end of the range that keeps the plan
            start = high if side == "down" else low
        out.append(((str(r["input"]), side), FlipSearch(base, str(r["input"]), start, low if side == "down" else high,
                                                        at_row, _signature(ref), known)))
    if "down" not in sides and isinstance(low, Amount) and unchanged(str(r["input"]), "up", ref) \
            and str(r["input"]).endswith(".price"):
        out.append(((str(r["input"]), "down"), FlipSearch(base, str(r["input"]), low, low.scaled(0.01), None,
                                                          _signature(ref), known)))
    return out


def sensitivity(base: Job, span: float, workers: Workers = 1, progress: Callable[[int], None] | None = None,
                planned: tuple[dict[str, Any], list, tuple] | None = None, find_flips: bool = True) -> pd.DataFrame:
    """Each input moved down and up by ``span``: cost range and whether the plan changes (what
    is bought or which offers do which phase: ``decision_flips``, and the plan it changes to),
    and, with ``find_flips``, where it changes (:func:`flip_points`): between ``flip_down_kept`` (the
    plan as it is) and ``flip_down_at`` (another), likewise up, with the plan just past the flip
    (``buy_low``/``plan_low``, ``buy_high``/``plan_high``).
    ``planned``: what :func:`sensitivity_inputs` returned, when the caller asked it first."""
    ref, inputs, start = planned or sensitivity_inputs(base, span)
    base = dataclasses.replace(base, start=start)  # each what-if's search starts from the base plan
    typed = {path: (v, lo, hi) for path, v, lo, hi in inputs}
    sides = [(path, value, unchanged(path, side, ref)) for path, _, low, high in inputs
             for side, value in (("down", low), ("up", high))]
    # the inputs that decide the answer (decisive_inputs, last in the list) first: their flips'
    # searches start as soon as their two sides are in, and run beside the other inputs' plans
    order = [k for i in reversed(range(len(inputs))) for k in (2 * i, 2 * i + 1) if not sides[k][2]]
    jobs: list[Task] = [(run_one, dataclasses.replace(with_value(base, sides[k][0], sides[k][1]), breakevens=False))
                        for k in order]  # cost and decision
    got: dict[int, dict[str, Any]] = {k: ref for k, (_, _, same) in enumerate(sides) if same}
    rows: dict[int, dict[str, Any]] = {}
    searches = _FlipSearches(base, ref, typed)

    def row(i: int) -> dict[str, Any]:
        path, raw, low_value, high_value = inputs[i]
        low, high = got[2 * i], got[2 * i + 1]
        # every change of plan: what is bought, or which offers do which phase (a +20 % price that
        # moves a phase from one rent offer to another changes the plan, though not its kinds)
        flips = [side for side, r in (("down", low), ("up", high))
                 if (r["buy"], r["plan"]) != (ref["buy"], ref["plan"])]
        return {
            "input": path, "value": _shown(raw), "low_value": _shown(low_value), "high_value": _shown(high_value),
            "cost_low": low["total_cost"], "cost_base": ref["total_cost"], "cost_high": high["total_cost"],
            "swing": round(abs(high["total_cost"] - low["total_cost"]), 2), "currency": ref["currency"],
            # whether each side meets every deadline: a plan that cannot (over its budget, or at all) costs
            # the work it does, the rest left undone, and the page marks it
            "feasible_low": bool(low["feasible"]), "feasible_base": bool(ref["feasible"]),
            "feasible_high": bool(high["feasible"]),
            "decision_flips": ",".join(flips) or "",
            "buy_low": low["buy"], "buy_high": high["buy"], "kinds_low": low["kinds"], "kinds_high": high["kinds"],
            "plan_low": low["plan"] if "down" in flips else "", "plan_high": high["plan"] if "up" in flips else "",
        }

    def ready(i: int) -> list[Task]:  # an input's two sides in: its row, and its flips' searches
        rows[i] = row(i)
        return searches.add_row(rows[i]) if find_flips else []

    for i in range(len(inputs)):
        if 2 * i in got and 2 * i + 1 in got:
            jobs += ready(i)  # (searches of an input no side of which was planned start after the plans)

    def then(number: int, result: Any) -> list[Task]:
        if number < len(order):  # a side's plan
            if progress:
                progress(1)
            got[order[number]] = result
            i = order[number] // 2
            return ready(i) if 2 * i in got and 2 * i + 1 in got else []
        return searches.ended(number - len(order), result)  # the searches are numbered after the plans, in order

    run_growing(jobs, workers, then)
    df = pd.DataFrame([rows[i] for i in range(len(inputs))])
    if not len(df):
        return df
    df["shipped_value"] = [str(dataclasses.replace(typed[p][0], value=typed[p][0].shipped))
                           if isinstance(typed[p][0], Amount) and typed[p][0].shipped is not None else ""
                           for p in df["input"]]
    df["default_range"] = ["-".join(str(typed[p][0].at(x)).removesuffix(typed[p][0].unit) for x in rng)
                           + typed[p][0].unit if isinstance(typed[p][0], Amount)
                           and (rng := typed[p][0].default_range) is not None else "" for p in df["input"]]
    if find_flips:
        for side in ("down", "up"):
            df[f"flip_{side}_kept"], df[f"flip_{side}_at"] = "", ""
        for f in searches.flips():
            at = df["input"] == f.input
            df.loc[at, f"flip_{f.side}_kept"], df.loc[at, f"flip_{f.side}_at"] = _shown_pair(f.kept, f.at)
            df.loc[at, f"buy_{'low' if f.side == 'down' else 'high'}"] = f.buy
            df.loc[at, f"plan_{'low' if f.side == 'down' else 'high'}"] = f.plan
    return df.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)

