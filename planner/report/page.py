"""Turn a Plan into text people read. Each format is a small function over the Plan."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from pricing.ids import provider_of

from ..decide import breakeven
from ..decide.breakeven import FREE_MIX
from ..decide.result import COST_PARTS, Assignment, Plan, to_dict
from ..model import costs, units
from ..model.records import HOME_KINDS
from ..model.scenario import Scenario
from . import view
from .view import text_table


def _amount(x: float | None, currency: str) -> str:
    """An amount at its currency's precision, for a column headed by the currency."""
    return "—" if x is None else units.format_amount(x, currency)


def _money(x: float | None, currency: str) -> str:
    return "—" if x is None else units.format_money(x, currency)


def _h(x: float | None) -> str:
    return "—" if x is None or x != x or x in (float("inf"), float("-inf")) else units.format_hours(x)


def _horizon(s: Scenario) -> str:
    """The horizon as written before "horizon": "24-month", "18.5-month", and in days under a
    month ("7-day", not "0.229979-month")."""
    if s.horizon_months >= 1:
        return f"{units.format_significant(s.horizon_months, 3)}-month"
    return f"{s.sold_day}-day"


def _percent(x: float) -> str:
    """A chance as a whole percentage ("97 %"); the model's tails are not to be trusted to the
    last percent, so above 99 % it reads "> 99 %" and below 1 % "< 1 %"."""
    pct = 100.0 * x
    if pct >= 99.5:
        return "> 99 %"
    if 0.0 < pct < 0.5:
        return "< 1 %"
    return f"{pct:.0f} %"


#: A what-if table of at most this many rows shows each plan one line per phase; a longer one
#: (a grid sweep) one line per row, so it fits a projector.
LINES_PER_PHASE_UP_TO = 12

#: What-if columns that hold a chance: shown as percentages, never as 1 or 0.685.
CHANCE_COLUMNS = {"p_cheapest", "p_meets_deadlines", "on_time_chance"}


def _significant(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits with thousands separators (units.format_significant)."""
    return units.format_significant(x, digits, thousands=True)


def _input_figure(x: float, unit: str) -> str:
    """An uncertain input's value: a share as a percentage (9.7 %, not 0.0974), else four
    significant digits."""
    from ..decide.uncertainty import SHARE_UNIT

    return units.format_share(x) if unit == SHARE_UNIT else f"{x:,.4g}"


def _unit(unit: str) -> str:
    """A unit after its figure: ' h/week', or nothing for a ratio without one (a PUE)."""
    return f" {unit}" if unit else ""


def _confidence(x: float) -> str:
    """A confidence as written: 90 %, 97.5 % (units.format_share)."""
    return units.format_share(x)


def _terms(commitments: list[dict]) -> list[tuple[str, int, str, str, float]]:
    """Commitments as (offer, instances, first day, last day, cost), terms that follow one
    another back to back joined (four 7-day blocks in a row read as one span)."""
    out: list[tuple[str, int, str, str, float]] = []
    for c in sorted(commitments, key=lambda c: (c["offer"], c["count"], c["start"])):
        last = out[-1] if out else None
        if (last and last[:2] == (c["offer"], c["count"])
                and dt.date.fromisoformat(last[3]) + dt.timedelta(days=1) == dt.date.fromisoformat(c["start"])):
            out[-1] = (*last[:3], c["end"], last[4] + c["cost"])
        else:
            out.append((c["offer"], c["count"], c["start"], c["end"], c["cost"]))
    return out


#: The share of an assignment's wall hours spent writing checkpoints from which its line says so
#: (a 70B model's 1.1 TB of states written every hour took three quarters of its time, unsaid).
CHECKPOINT_SHARE_SHOWN = 0.05


#: A fit that moves the speed the work runs at by this factor or more against the device's speed,
#: either way, is said on the assignment's line (1.05: one halving of the micro-batch).
SLOWDOWN_SHOWN = 1.05


def _as_it_fits(a: Assignment, reference: str) -> str:
    """The speed the work runs at where the way the batch fits moves it (``Assignment.slowdown``):
    32.5 reference GPU-h that became 58.8 wall-h "at 2.90x" a TPU, which ran micro-batches of 2,
    left the reader 47 h short; now "(estimated; 0.61x with gradient accumulation)" says where they go."""
    if not (a.slowdown > 0 and max(a.slowdown, 1.0 / a.slowdown) >= SLOWDOWN_SHOWN * (1 - 1e-9)):
        return ""
    speed = f"; {a.relative_speed / a.slowdown:.2f}x"
    if a.slowdown < 1.0:
        return f"{speed} as it holds more of the batch than the {reference}"
    if a.verdict == "fits-with-checkpointing":
        return f"{speed} with activation checkpointing"
    return f"{speed} with gradient accumulation"


def explain(a: Assignment, reference: str, packed: frozenset[str] = frozenset()) -> str:
    """One assignment in words: speed, sessions, losses, the checkpoint advice, the spread.
    ``packed``: the tiers whose compute units the plan buys in packs (Plan.packs)."""
    if a.wall_hours != a.wall_hours or a.wall_hours == float("inf"):
        return f"{units.format_hours(a.gpu_hours)} reference GPU-h cannot be done in time here"
    text = (f"{units.format_hours(a.gpu_hours)} reference GPU-h become {a.wall_hours:,.1f} wall-h at {a.relative_speed:.2f}x "
            f"the {reference} ({a.speed_source}{_as_it_fits(a, reference)}"
            + (f"; {a.side_by_side} runs side by side" if a.side_by_side > 1 else "") + ")")
    if a.kind in ("free", "subscription", "rent"):
        text += (f" over {a.sessions} session{'s' if a.sessions != 1 else ''}; {a.setup_hours:,.1f} h of setup, "
                 f"{a.lost_hours:,.1f} h lost to session ends and interruptions")
        if a.prepaid and a.kind == "subscription" and a.option.split(":", 1)[0] in packed:
            text += "; no price by the hour: the packs bought pay for its compute units, whether used or not"
        elif a.prepaid and a.kind == "subscription":
            text += "; no price by the hour: the month's fee buys its compute units, whether used or not"
        elif a.prepaid:
            text += "; no rent by the hour: the commitment's term is paid once, whether used or not"
        if a.wait_hours:
            text += f", {a.wait_hours:,.1f} h waiting for the paused machine to resume (unbilled)"
        if a.restarts_by_hand:
            text += f"; {a.restarts_by_hand} start{'s' if a.restarts_by_hand != 1 else ''} by hand"
    if a.wall_hours_p90 is not None and a.wall_hours_p90 > a.wall_hours * 1.001:
        text += f"; P50 {_h(a.wall_hours_p50)} h, P90 {_h(a.wall_hours_p90)} h"
    if a.checkpoint_hours >= max(0.1, CHECKPOINT_SHARE_SHOWN * a.wall_hours):  # writes that cost real time
        # with the size and the rate they rest on: a rented machine's is the catalog's estimate of
        # its transfer rate, which a machine with a fast local disk beats
        rate = f"{units.format_significant(a.checkpoint_write_gb_per_h / 3.6, 3, thousands=True)} MB/s"  # 1 GB/h = 1/3.6 MB/s
        text += (f"; {a.checkpoint_hours:,.1f} h of it writing checkpoints ("
                 f"{units.format_significant(a.checkpoint_gb, 3, thousands=True)} GB every "
                 f"{a.checkpoint_every_min:,.0f} min at {rate}"
                 + (", a local disk's" if a.kind in HOME_KINDS else ", the machine's transfer rate, an "
                    "estimate: 'transfer' of its entry in the scenario's catalog sets it") + ")")
    if a.checkpoint_every_recommended_min is not None and a.saved_by_recommended_h >= 0.05:
        text += (f"; checkpointing every {a.checkpoint_every_recommended_min:,.0f} min instead of "
                 f"{a.checkpoint_every_min:,.0f} would save {a.saved_by_recommended_h:,.1f} h")
    if a.verdict != "fits":
        text += f"\n    {a.verdict}: {a.fit_reason}"
    return text


def layers_text(d: dict) -> str:
    """', with prices from refreshed 2026-11-22, lab.yaml over the shipped rows': the layers over the shipped
    catalog (JSON ``catalog_layers`` has each one's source; ``planner pricing check`` prints them)."""
    names = [layer["name"] for layer in d.get("catalog_layers", ()) if layer["name"] != "scenario"]
    return f", with prices from {', '.join(names)} over the shipped rows" if names else ""


def breakeven_shown(plan: Plan, d: dict) -> list[dict]:
    """The break-even pairs that matter to this scenario (issue 15): each card you own or listed
    in ``consider.buy`` (without such a list, the card the best buy-only plan buys; where it buys
    none, for want of such a plan or because your own cards alone do it, the card of the cheapest
    plan that buys one) against the rent offers the plan chose (when it
    rents nothing: those of the best rent-only plan, the way to rent it passed over), the best
    rent offer of the card's own device, and the free-tier mix.
    The full table stays in breakeven.csv and result.json. ``d`` is the plan's ``to_dict``."""
    s = plan.scenario
    device = plan.quotes.drop_duplicates("option").set_index("option")["device"].to_dict()
    cards = list(dict.fromkeys(b["buy"] for b in d["breakeven"]))
    wanted = {c for c in cards if s.names_card(c)}
    if not s.consider.buy:
        wanted |= {o for a in d["alternatives"] if a["strategy"] == "buy-only" for o in a["options"] if o in cards}
    if not wanted:  # no buy-only plan meets the deadlines, or yours alone do: the card of the cheapest plan that buys one
        buying = sorted((c for c in d["candidates"] if c["buy"]), key=lambda c: c["total_cost"])
        wanted = set(buying[0]["buy"]) if buying else set()
    chosen = {a["option"] for ph in d["phases"] for a in ph["assignments"] if a["kind"] == "rent"}
    if not chosen:
        rent_ids = {b["rent"] for b in d["breakeven"]}
        chosen = {o for a in d["alternatives"] if a["strategy"] == "rent-only" for o in a["options"] if o in rent_ids}
    out = []
    for card in (c for c in cards if c in wanted):
        pairs = [b for b in d["breakeven"] if b["buy"] == card]  # ordered: same device first, then cheapest
        same = next((b for b in pairs if device.get(b["rent"]) == device.get(card)), None)
        out += [b for b in pairs if b["rent"] in chosen or b is same or b["rent"] == FREE_MIX]
    return out


def pace_notes(plan: Plan, shown: list[dict]) -> list[str]:
    """Break-even dates assume the work goes at the scenario's pace (each phase spread evenly
    over its window); say so for each card shown with a date that one card alone could not keep
    up with: its reference GPU-hours a week in some phase (its weekly hours over its wall hours
    per reference hour there) against the pace's."""
    s = plan.scenario
    q = plan.quotes
    rate = {(p, o): (float(w), float(c)) for p, o, w, c in
            zip(q["phase"], q["option"], q["wall_hours"], q["weekly_capacity_h"])}
    out = []
    for card in dict.fromkeys(b["buy"] for b in shown if b["date"]):
        worst = None
        for ph in s.phases:
            wall_h, weekly_h = rate.get((ph.name, card), (math.nan, math.nan))
            if not (wall_h > 0 and math.isfinite(wall_h)):
                continue
            can = weekly_h * ph.gpu_hours / wall_h  # reference GPU-h a week on this card
            need = breakeven.pace_per_week(s, ph)
            if need > can * (1 + 1e-9) and (worst is None or need / can > worst[0]):
                worst = (need / can, ph.name, need, can)
        if worst:
            out.append(f"`{card}` runs about {worst[3]:,.0f} reference GPU-h a week, and the scenario's pace needs "
                       f"{worst[2]:,.0f} in '{worst[1]}': one card alone reaches its dates later (the strategies "
                       "above plan what cards can do).")
    return out


#: The plan report's charts, by file name (planner.report.charts.CHARTS draws them).
FIGURE_TITLES = {"cumulative_cost": "Money spent over time by each strategy's best plan",
                 "breakeven": "Buying against renting at the scenario's pace",
                 "schedule": "Week-by-week schedule", "cost_breakdown": "Cost breakdown",
                 "pareto": "Cost against finish date",
                 "uncertainty": "Cost of each strategy over the uncertain inputs, and the chance it is the cheapest",
                 "emissions": "Cost against emissions of each strategy's and each card's best plan"}


def plan_page(plan: Plan, figures: bool = False) -> view.Page:
    """The plan report as one view model: question, answer, plan, money, what the choice saves,
    the candidates, break-even, schedule, exclusions, assumptions, warnings (``figures``: with
    the charts), each section by a function of its own over the plan and its JSON object."""
    d = to_dict(plan)

    def figure(name: str) -> Any:
        return view.Figure(name, FIGURE_TITLES[name]) if figures else None

    sections: list[view.Section | None] = [*_question_and_answer(plan, d), _plan_section(plan, d),
                                           _cost_section(d, figure)]
    sections += [_choice_section(d, figures, figure), _candidates_section(plan, d)]
    if d.get("uncertainty"):
        sections.append(uncertainty_section(plan, d, figure("uncertainty")))
    sections += [_breakeven_section(plan, d, figure), _pareto_section(d, figure), _schedule_section(plan, figure),
                 _excluded_section(d), _assumptions_section(plan, d)]
    if d["warnings"]:
        sections.append(view.section("Warnings", view.Bullets(tuple(d["warnings"]))))
    title = d["scenario"] + (f" — variant {d['variant']}" if d["variant"] else "")
    return view.Page(title, tuple(s for s in sections if s is not None))


def _question_and_answer(plan: Plan, d: dict) -> list[view.Section]:
    """The question the report answers, and the answer in two sentences: what to buy, where each
    phase runs (phases grouped by place), whether it meets every deadline, and what it costs."""
    s, cur = plan.scenario, d["currency"]
    ref = s.workload.reference_gpu
    buys = ", ".join(f"buy {p['offer']}{' on ' + p['bought_on'] if p.get('bought_on') else ''} "
                     f"({_money(p['price'], cur)}, resale {_money(p['resale'], cur)})"
                     for p in d["purchases"]) or "buy nothing"
    # the exact amounts, summed then rounded, as the cost breakdown is: three months of 8.4942 EUR
    # read 25.47 (3 x 8.49) beside the breakdown's 25.48
    per = 1.0 / s.usd_per_currency
    terms = [{**c, "cost": x.cost_usd * per} for c, x in zip(d.get("commitments", []), plan.commitments)]
    buys += "".join(f"; commit to {n} x `{offer}` from {start} to {end} ({_money(cost, cur)}, paid whether used or not)"
                    for offer, n, start, end, cost in _terms(terms))
    months = [{**m, "offer": m["tier"], "count": 1, "cost": x.cost_usd * per}
              for m, x in zip(d.get("subscriptions", []), plan.subscriptions)]
    spans: dict[str, list[tuple[str, str, float]]] = {}  # per tier: its stretches of months, in order
    for tier, _, start, end, cost in _terms(months):
        spans.setdefault(tier, []).append((start, end, cost))
    buys += "".join(f"; subscribe to `{tier}` from {units.format_and([f'{a} to {b}' for a, b, _ in ts])} "
                    f"({_money(sum(c for _, _, c in ts), cur)}, the monthly fees, whether "
                    f"{'its' if len(ts) == 1 else 'their'} units are used or not)" for tier, ts in spans.items())
    buys += "".join(f"; pay for {k['count']} pack{'s' if k['count'] != 1 else ''} of `{k['tier']}`'s compute units "
                    f"on {k['bought']} ({_money(x.cost_usd * per, cur)} for "
                    f"{units.format_significant(k['units'], 6, thousands=True)} units"
                    + (f", which last until {k['expires']}" if k["expires"] else "") + ", whether used or not)"
                    for k, x in zip(d.get("packs", []), plan.packs))
    # phases grouped by where they run: "a, b and c on `x`; d on `y` + `z`" (not `x` seven times)
    groups: dict[str, list[str]] = {}
    for ph in d["phases"]:
        if ph["assignments"]:
            groups.setdefault(" + ".join(f"`{a['option']}`" for a in ph["assignments"]), []).append(ph["name"])
    # phases with no hours: no option can run them, or the plan leaves them undone (a budget spent elsewhere)
    nowhere = [ph["name"] for ph in d["phases"] if not ph["assignments"]
               and str(ph.get("problem") or "").startswith("no option considered can run")]
    undone = [ph["name"] for ph in d["phases"] if not ph["assignments"] and ph["name"] not in nowhere]
    where = "; ".join([f"{units.format_and(names)} on {options}" for options, names in groups.items()]
                      + ([f"{units.format_and(nowhere)} on no option considered"] if nowhere else [])
                      + ([f"{units.format_and(undone)} left undone"] if undone else []))
    conf = s.you.confidence
    by_chance: dict[str, list[str]] = {}
    for ph in d["phases"]:
        if ph["on_time_chance"] is not None:
            by_chance.setdefault(_percent(ph["on_time_chance"]), []).append(ph["name"])
    chances = ", ".join(f"{units.format_and(names)} {chance}" for chance, names in by_chance.items())
    # without a deadline a phase is due by the horizon's end (Scenario.window): said so, not "every deadline"
    dated = any(ph.deadline for ph in s.phases)
    due = "meet every deadline" if dated else "end before the horizon's end"
    verdict = (f"{'meets every deadline' if dated else 'ends before the horizon ends'} at {_confidence(conf)} "
               f"confidence (the chance each phase ends in time: {chances})" if d["feasible"] else f"**cannot {due}**"
               # where the budget holds it back, the least budget that would not, up front (the phases say more)
               + (f" within the budget of {_money(s.you.budget_usd / s.usd_per_currency, cur)}: a budget of "
                  f"**{_money(d['needs_budget'], cur)}** would {due} (the least cash of any plan that does)"
                  if d.get("needs_budget") is not None and s.you.budget_usd is not None else ""))
    past = s.past_deadlines  # a deadline before today: said first, whatever the plan
    if past:
        verdict += (f". **The deadline{'s' if len(past) > 1 else ''} of "
                    f"{units.format_and([f'{ph.name} ({ph.deadline})' for ph in past])} "
                    f"{'lie' if len(past) > 1 else 'lies'} before today ({s.read_on}): no plan made now can meet "
                    f"{'them' if len(past) > 1 else 'it'}; this one is made as if the work could start on "
                    f"{s.start} (check the year)**")
    until = (f"between {s.start} and the last deadline, to meet every deadline" if dated else
             f"between {s.start} and the horizon's end ({s.horizon_end - dt.timedelta(days=1)}; no phase has a "
             "deadline)")
    time_part = d["cost_breakdown"]["your_time"]
    # a phase's gpu_hours are per run: its runs said where there are several, so a total given as
    # gpu_hours (26 jobs of 6 h written as 156 h with runs: 26) shows as 26 runs of 156 h up front
    repeated = "".join(f"; {ph.name}: {ph.runs} runs of {units.format_hours(ph.gpu_hours_per_run)} h"
                       for ph in s.phases if ph.runs > 1)
    return [
        view.section("The question",
                     f"Where should {units.format_hours(sum(p.gpu_hours for p in s.phases))} reference GPU-hours (on "
                     f"{ref}{repeated}) run, "
                     f"{until} at the lowest cost: on cards "
                     "bought or owned, on rented GPUs, or on free tiers?"),
        view.section("The answer",
                     f"**{buys[0].upper() + buys[1:]}; {where}.** The plan {verdict}.",
                     f"Total cost: **{_money(d['total_cost'], cur)}**"
                     + (f" (of which your time {_money(time_part, cur)})" if time_part else "")
                     + f" over {units.a_or_an(_horizon(s))} {_horizon(s)} horizon"
                     + (" (the default: 'horizon' sets it)." if s.horizon_is_default else "."),
                     _emissions_line(plan, d),
                     "It rests on figures no provider publishes (defaults with their range):"
                     if d["assumed_figures"] else None,
                     view.Bullets(tuple(d["assumed_figures"]))),
    ]


def _emissions_line(plan: Plan, d: dict) -> str:
    """The plan's emissions in one sentence, with what they rest on (planner.model.carbon)."""
    e = d["emissions"]
    you = plan.scenario.you
    grid = ("" if not plan.considers_home else f"your grid {e['grid']}; " if e["grid"] not in (None, "world") else
            f"your grid {e['grid_g_per_kwh']:g} g/kWh; " if e["grid_g_per_kwh"] is not None else
            "your grid unknown: the world average, 473 g/kWh, assumed (set you.grid); ")
    made = f", of which {e['embodied_co2_kg']:,.1f} kg making the cards it buys" if e["embodied_co2_kg"] else ""
    priced = (f"; priced at {_money(e['carbon_price_per_t'], d['currency'])} a tonne" if e["carbon_price_per_t"]
              is not None else "")
    cap = f"; capped at {e['max_co2_kg']:,.1f} kg" if you.max_co2_kg is not None else ""
    kwh = f"{e['energy_kwh']:,.0f}" if e["energy_kwh"] >= 10 else units.format_significant(e["energy_kwh"], 2)
    return (f"Emissions: {e['co2_kg']:,.1f} kg CO2e from {kwh} kWh{made} ({grid}rented and free "
            f"machines at their region's grid and their operator's PUE{priced}{cap}).")


def _plan_section(plan: Plan, d: dict) -> view.Section:
    """Each phase on each option: work, wall hours, sessions, finishes, deadline, on time, cost."""
    cur, conf, ref = d["currency"], plan.scenario.you.confidence, plan.scenario.workload.reference_gpu
    rows = []
    for phase, ph in zip(plan.phases, d["phases"]):
        # hours from the records, as the line under the table writes them (the JSON's, already
        # rounded to 0.01, rounded again read 3.7499 h as 3.8 above a line that said 3.7)
        for record, a in zip(phase.assignments, ph["assignments"]) if ph["assignments"] else [(None, None)]:
            rows.append((ph["name"], f"`{a['option']}`" if a else "—",
                         f"{record.gpu_hours if record else phase.gpu_hours:,.1f}",
                         f"{record.wall_hours:,.1f}" if record and a and a["wall_hours"] is not None else "—",
                         str(a["sessions"]) if a else "—", ph["finish_expected"] or "—", ph["finish_confident"] or "—",
                         ph["deadline"] or "—",
                         f"yes ({_percent(ph['on_time_chance'])})" if ph["meets_deadline"] else "**NO**",
                         _amount(a["cost"], cur) if a else "—"))
    packed = frozenset(k.tier for k in plan.packs)
    notes = [f"{ph.name} on `{a.option}`: " + explain(a, ref, packed).replace("\n    ", " — ")
             for ph in plan.phases for a in ph.assignments]
    notes += [f"**{ph.name}: {ph.shortfall}**" for ph in plan.phases if ph.shortfall]
    # the finish each phase is held to: at the phase's own confidence (finish_confident in the
    # JSON), which the header names; its finish_p90 is the session simulation's alone
    each = _confidence(plan.scenario.phase_confidence)
    if len(plan.phases) > 1 and each != _confidence(conf):
        notes.append(f"Finish P{each[:-2]}: each phase ends by then in {each} of outcomes, so that every phase "
                     f"ends by its own in at least {_confidence(conf)} (you.confidence)")
    return view.section(
        "The plan",
        view.Table(("Phase", "Option", "Work [ref GPU-h]", "Wall [h]", "Sessions", "Finish", f"Finish P{each[:-2]}",
                    "Deadline", "On time", f"Cost [{cur}]"), tuple(rows), frozenset({2, 3, 4, 9})),
        view.Bullets(tuple(notes)))


def _cost_section(d: dict, figure: Callable[[str], Any]) -> view.Section:
    """The cost by part, and what each credit paid and left unused."""
    cur = d["currency"]

    def amount(x: Any) -> str:
        return _amount(x, cur)

    parts = [(k.replace("_", " "), amount(d["cost_breakdown"][k])) for k in COST_PARTS if d["cost_breakdown"].get(k)]
    credit_lines = tuple(
        f"{c['name']}: {amount(c['used'])} of {amount(c['amount'])} {cur} paid"
        + (f", {amount(c['expires_unused'])} {cur} lost unused" if c["expires_unused"] > 0.005 else "")
        for c in d.get("credits", []))
    if (kept := d.get("credit_kept")) is not None:  # of plans the credits pay alike, the fewest wall hours
        used = sum(c["used"] for c in d["credits"])
        credit_lines += (f"A plan of the same cash keeps {amount(used - kept['credits_used'])} {cur} more of your "
                         f"credit: it spends {amount(kept['credits_used'])} {cur} of it, on "
                         f"{', '.join(f'`{o}`' for o in kept['options'])}, and finishes {kept['finish'] or '—'}; "
                         "of plans that cost the same, this one takes the fewest wall hours",)
    return view.section(
        "Cost breakdown",
        view.Table(("Part", f"Cost [{cur}]"), (*parts, ("**total**", f"**{amount(d['total_cost'])}**")),
                   frozenset({1})),
        "Credits (they pay their providers' bills before cash does; what is left when they expire is lost):"
        if credit_lines else None, view.Bullets(credit_lines) if credit_lines else None,
        figure("cost_breakdown") if parts else None)  # a plan that costs nothing has no part to draw


def _choice_section(d: dict, figures: bool, figure: Callable[[str], Any]) -> view.Section | None:
    """The best plan of each strategy (buy only, rent only, free only, hybrid)."""
    if not d["alternatives"]:
        return None
    cur = d["currency"]
    return view.section(
        "What the choice saves",
        view.Table(("Strategy", f"Best plan [{cur}]", "Finish", "CO2e [kg]", "Options"),
                   tuple((a["strategy"], _amount(a["total_cost"], cur), a["finish"] or "—", _kg(a.get("co2_kg")),
                          ", ".join(f"`{o}`" for o in a["options"])) for a in d["alternatives"]),
                   frozenset({1, 3})),
        view.Bullets(tuple(_late_line(late, cur) for late in d["late_strategies"])),
        "Totals include your time; the chart shows the money alone." if figures else None,
        figure("cumulative_cost"),
        figure("emissions"))


def _late_line(late: dict, cur: str) -> str:
    """A strategy without a plan in time: the limit that alone stops it (the budget, with the cash
    its plan in time needs; the cap on emissions, with what that plan emits), and the work its
    best plan within them leaves undone."""
    limits = ([f"the budget (its best plan in time needs {_money(late['needs_budget'], cur)} in cash)"]
              if late.get("needs_budget") is not None else [])
    limits += ([f"the cap on emissions (its best plan in time emits {late['needs_co2_kg']:,.1f} kg CO2e)"]
               if late.get("needs_co2_kg") is not None else [])
    return (f"{late['strategy']}: no plan meets every deadline" + (" within " + " and ".join(limits) if limits else "")
            + f"; the best {'within ' + ('them ' if len(limits) > 1 else 'it ') if limits else ''}leaves "
            f"{units.format_hours(late['undone_gpu_hours'])} reference GPU-h undone"
            + (f" (on {', '.join(f'`{o}`' for o in late['options'])})" if late["options"] else ""))


def _kg(x: float | None) -> str:
    """A mass of CO2e for a table (kg, three significant figures)."""
    return "—" if x is None else units.format_significant(x, 3, thousands=True)


def _candidates_section(plan: Plan, d: dict) -> view.Section | None:
    """Each card considered, side by side with buying nothing, and the price under which it wins;
    a card its plan buys but gives no work (bought as late and cheaply as it can be, as the row
    must buy it) is marked idle among the options."""
    if len(d["candidates"]) <= 1:
        return None
    idle = {c.strategy: {b for b in c.bought if not any(o == b and h > 0 for _, o, h in c.hours)}
            for c in plan.candidates}
    cur = d["currency"]
    def past_a_limit(c: dict) -> bool:  # in time only past the budget or the cap on emissions
        return c.get("needs_budget") is not None or c.get("needs_co2_kg") is not None

    within = [c["total_cost"] for c in d["candidates"] if not past_a_limit(c)]
    best = min(within) if within else None

    def flip(c: dict) -> str:
        if c.get("needs_budget") is not None:
            return f"over the budget: needs {_money(c['needs_budget'], cur)}"
        if c.get("needs_co2_kg") is not None:
            return f"over the cap: emits {c['needs_co2_kg']:,.1f} kg"
        return (_amount(c["wins_below"], cur) if c.get("wins_below") is not None else ("—" if not c["buy"] else "never"))

    return view.section(
        "Each card you consider, side by side",
        view.Table(("Candidate", f"Best plan [{cur}]", f"More than the best [{cur}]",
                    f"Cheapest if the card costs under [{cur}]", "Finish", "CO2e [kg]", "Options"),
                   tuple((c["candidate"] + (f" on {c['bought_on']}" if c.get("bought_on") else ""),
                          _amount(c["total_cost"], cur), _amount(c["total_cost"] - best, cur) if best is not None else "—",
                          flip(c), c["finish"] or "—", _kg(c.get("co2_kg")),
                          ", ".join(f"`{o}`" + (" (idle)" if o in idle.get(c["candidate"], ()) else "")
                                    for o in c["options"]))
                         for c in sorted(d["candidates"], key=lambda c: (past_a_limit(c), c["total_cost"]))),
                   frozenset({1, 2, 3, 5})),
        "The best plan that buys each card and no other (or none), meeting every deadline (a card missing "
        "here cannot, whatever the budget; one past the budget says the cash its plan needs"
        + (", one past the cap on emissions what its plan emits" if plan.scenario.you.max_co2_kg is not None else "")
        + "), and the price "
        "under which that card's plan would be the cheapest of all (its resale moving with its price; "
        "'never': not even free)." + (" A card marked idle is bought and does no work: other options do it for "
                                     "less, and the card is bought when it costs least." if any(idle.values()) else ""))


def _after_the_card(plan: Plan, gpu_hours: float) -> str:
    """Why a break-even has no date at the scenario's pace: the pace never gets there, or gets
    there only after the horizon's end, when the card is already sold (a phase due later)."""
    s = plan.scenario
    (when,) = breakeven.pace(s).dates_of(s, np.array([gpu_hours]))
    return f"after the horizon's end ({s.horizon_end}: the card is sold)" if when is not None else "past the plan's work"


def _breakeven_section(plan: Plan, d: dict, figure: Callable[[str], Any]) -> view.Section:
    """When buying each card beats renting: hours and the date at the scenario's pace."""
    shown = breakeven_shown(plan, d) if d["breakeven"] else []
    rents = any(a["kind"] == "rent" for ph in d["phases"] for a in ph["assignments"])
    return view.section(
        "Break-even: when buying beats renting",
        view.Table(("Buy", "Instead of renting", "Break-even [ref GPU-h]", "Date at the scenario's pace",
                    "Why never"),
                   tuple((f"`{b['buy']}`", f"`{b['rent']}`" if b["rent"] != FREE_MIX else b["rent"],
                          f"{b['gpu_hours']:,.0f}" if b["gpu_hours"] is not None else "never",
                          b["date"] or ("—" if b["gpu_hours"] is None else _after_the_card(plan, b["gpu_hours"])),
                          b["why_not"] or "") for b in shown), frozenset({2})),
        "No card to buy is considered." if not d["breakeven"] else None,
        (f"No plan that buys a card meets the deadlines, so none is set against renting here "
         f"(breakeven.csv and result.json list all {len(d['breakeven'])} pairs).")
        if d["breakeven"] and not shown else None,
        (f"Each card you own or consider against the rent offers "
         f"{'this plan chose' if rents else 'the best rent-only plan would use'}, the same card rented"
         f"{' and the free tiers' if any(b['rent'] == FREE_MIX for b in shown) else ''} "
         f"({len(shown)} of {len(d['breakeven'])} pairs; breakeven.csv and result.json list all). "
         "Your time is left out on both sides.") if 0 < len(shown) < len(d["breakeven"]) else None,
        _credits_note(plan, shown),
        view.Bullets(tuple(pace_notes(plan, shown))),
        figure("breakeven") if shown else None)


def _credits_note(plan: Plan, shown: list[dict]) -> str | None:
    """Break-even prices rent at its price; where your credits pay a provider set against a card,
    renting there costs you nothing while they last, which the plan counts and this table not."""
    rented = {provider_of(str(b["rent"])) for b in shown}
    paid = [c for c in plan.scenario.you.credits if rented & set(c.providers)]
    if not paid:
        return None
    providers = sorted(rented & {p for c in paid for p in c.providers})
    return (f"Rent counts here at its price, though {units.format_and([c.name for c in paid])} "
            f"pay{'s' if len(paid) == 1 else ''} the bills of {units.format_and(providers)} while "
            f"{'it lasts' if len(paid) == 1 else 'they last'}: the plan and the candidates above count "
            f"{'it' if len(paid) == 1 else 'them'}, so a card pays off later than this table says, or never.")


def _pareto_section(d: dict, figure: Callable[[str], Any]) -> view.Section | None:
    """What finishing the last phase earlier would cost (--pareto)."""
    if len(d["pareto"]) > 1:
        return view.section(
            "Paying more to finish earlier",
            view.Table((f"Finish of '{d['pareto'][0]['phase']}'", f"Total [{d['currency']}]"),
                       tuple((p["finish"], _amount(p["total_cost"], d["currency"])) for p in d["pareto"]),
                       frozenset({1})),
            figure("pareto"))
    if d["pareto"]:
        return view.section(
            "Paying more to finish earlier",
            f"No trade-off: moving the deadline of '{d['pareto'][0]['phase']}' earlier a week at a time finds "
            f"no plan that finishes it before {d['pareto'][0]['finish']}, at any cost.")
    return None


def _schedule_section(plan: Plan, figure: Callable[[str], Any]) -> view.Section | None:
    """Each phase on each option: the days worked and the work a week."""
    if plan.schedule is None or not len(plan.schedule):
        return None
    weeks = []
    phases = {ph.name: ph for ph in plan.phases}
    for (phase, option), sel in plan.schedule.groupby(["phase", "option"], sort=False):
        ph, n = phases[str(phase)], len(sel)
        # the days booked, not the weeks' Mondays: never before the phase starts or after the end the
        # plan books at the confidence (the expected end can come a bucket earlier: milp.last_stretch)
        first = max(sel["week_start"].min(), ph.start)
        last = min(d for d in (sel["week_start"].max() + dt.timedelta(days=6),
                               ph.finish_confident or ph.finish_expected, ph.deadline) if d)
        if n == 1:  # within one week: the days and the work, not "1 week, 12-07 to 12-07, ... a week on average"
            days = str(first) if first == last else f"{first} to {last}"
            weeks.append(f"{phase} on `{option}`: {days}, {units.format_hours(sel['gpu_hours'].sum())} reference GPU-h")
            continue
        weeks.append(f"{phase} on `{option}`: {n} weeks, {first} to {last}, {units.format_hours(sel['gpu_hours'].sum() / n)} "
                     "reference GPU-h a week on average")
    return view.section("Schedule", view.Bullets(tuple(weeks)), figure("schedule"))


def _excluded_section(d: dict) -> view.Section:
    """Options left out outright, and why: options left out for the same reason in one line (the
    TPUs a PyTorch job cannot use), the first EXCLUDED_SHOWN reasons."""
    by_reason: dict[str, list[str]] = {}
    for e in d["excluded"]:
        if e["phase"] is None:
            by_reason.setdefault(e["reason"], []).append(e["option"])
    shown_excluded = []
    for reason, options in list(by_reason.items())[:EXCLUDED_SHOWN]:
        names = ", ".join(f"`{o}`" for o in options[:NAMES_SHOWN])
        if len(options) > NAMES_SHOWN:
            names += f" and {len(options) - NAMES_SHOWN} more"
        shown_excluded.append(f"{names}{f' ({len(options)} options)' if len(options) > 1 else ''}: {reason}")
    if len(by_reason) > EXCLUDED_SHOWN:
        left = sum(len(options) for options in list(by_reason.values())[EXCLUDED_SHOWN:])
        shown_excluded.append(f"... and {left} more (result.json and --format json list all)")
    return view.section("Excluded and why", view.Bullets(tuple(shown_excluded))
                        if shown_excluded else "Nothing was excluded outright.")


def _assumptions_section(plan: Plan, d: dict) -> view.Section:
    """The catalog's date, electricity, resale, your time, and every assumption the plan states."""
    s, cur = plan.scenario, d["currency"]
    return view.section("Assumptions", view.Bullets((
        f"Catalog as of {d['catalog_as_of']}{layers_text(d)}; every price and spec carries its date and source "
        "(`planner pricing show ID`).",
        *((f"Electricity {s.electricity_usd_per_kwh / s.usd_per_currency:.4f} {cur}/kWh"
           + (f" (the catalog's price for {s.electricity_region}, you.grid)" if s.electricity_region
              else " (catalog default)" if s.electricity_is_default else "")
           + f"; the host draws {s.you.host_power_w:g} W; both counted while the cards train (a machine left on "
           "between runs also draws its idle power, which the plan does not count)"
           + (f"; a card at home needs a host computer bought for {_money(s.you.host_usd / s.usd_per_currency, cur)} "
              "(you.host_price; not resold)" if s.you.buys_host else "") + ".",
           f"Cards are sold after the {_horizon(s)} horizon; resale follows each offer's figure or the "
           f"default model ({costs.resale_model_text()}).") if plan.considers_home else
          ("No card at home is considered (you.own and consider.buy select none): your electricity, a host "
           "computer and resale do not enter the plan.",)),
        f"Your time is valued at {s.you.time_value_usd_per_hour / s.usd_per_currency:g} {cur}/h; you can start "
        f"{s.you.attention_starts_per_day:g} sessions a day.",
        *d["assumptions"], *(f"Override: {o}" for o in d["overrides"]))))


def uncertainty_section(plan: Plan, d: dict, chart: Any) -> view.Section:
    """How sure the answer is (planner.decide.uncertainty): each strategy's spread, the chance it is the
    cheapest, the inputs that move the decision and where it flips, and every input's spread."""
    u, cur = d["uncertainty"], d["currency"]

    def amount(x: Any) -> str:
        return _amount(x, cur)

    mine = u["plan"]
    lead = (f"Over {u['samples']:,} draws of the uncertain inputs (seed {u['seed']}), the chosen plan costs "
            f"**{amount(mine['cost_p10'])} to {amount(mine['cost_p90'])} {cur}** (P10 to P90; P50 "
            f"{amount(mine['cost_p50'])}), meets every deadline in {mine['p_meets_deadlines']:.0%} of them and is "
            f"the cheapest way in {mine['p_cheapest']:.0%}.")
    rows = tuple((o["strategy"] + (f" (the same plan as {o['same_as']})" if o.get("same_as") else ""),
                  amount(o["cost_p10"]), amount(o["cost_p50"]), amount(o["cost_p90"]), o["finish_p10"], o["finish_p90"],
                  f"{o['p_meets_deadlines']:.0%}", f"{o['p_cheapest']:.0%}") for o in u["strategies"])
    drivers = []
    versus = " against ".join(u["decision"]) if u["decision"] else None
    for dr in u["drivers"]:
        if dr["flips_at"] is None:
            drivers.append(f"{dr['input']} (rank correlation {dr['importance']:.2f}): the choice does not flip "
                           "within its range")
        else:
            said = (f"{dr['input']} (rank correlation {dr['importance']:.2f}): {dr['wins_above']} wins above "
                    f"{_input_figure(dr['flips_at'], dr['unit'])}{_unit(dr['unit'])} with the plans' assignments fixed")
            again = dr.get("replanned")
            if again is None:
                said += " (re-priced, not re-planned)"
            elif again["changes"]:
                said += f"; planned again, just below it the plan {again['below']}, just above it {again['above']}"
            else:
                said += (f"; planned again either side of it, the plan {again['below']} on both: "
                         "it does not flip there ('planner sensitivity' finds where it does)")
            drivers.append(said)
    spreads = [f"{i['input']}: {_input_figure(i['low'], i['unit'])} to {_input_figure(i['high'], i['unit'])}"
               f"{_unit(i['unit'])} (5th to 95th percentile; "
               f"{i['source']})" for i in u["inputs"]]
    return view.section(
        "How sure is the answer", lead,
        view.Table(("Strategy", f"Cost P10 [{cur}]", "P50", "P90", "Finish P10", "Finish P90", "Meets deadlines",
                    "Cheapest"), rows, frozenset({1, 2, 3, 6, 7})),
        "Each strategy's best plan is re-priced with its assignments fixed; a plan that runs late in a draw "
        "misses its deadline there (no re-planning). Cheapest counts only draws where a plan meets every deadline; "
        "ties between different plans are shared, and a strategy whose plan is another's shows that one's chance.",
        f"What moves the choice of {versus} most:" if drivers else None,
        view.Bullets(tuple(drivers)),
        "The inputs drawn:" if spreads else "No input of this plan is uncertain in the catalog.",
        view.Bullets(tuple(spreads)),
        (f"Given as ranges but not drawn (the plan uses their middle): {', '.join(u['not_sampled'])}."
         if u["not_sampled"] else None),
        chart)


#: General exclusions listed on a page (all of them are in result.json).
EXCLUDED_SHOWN = 25
#: Options named in a line of those excluded for one reason; the rest are counted.
NAMES_SHOWN = 6


def render_text(plan: Plan) -> str:
    """The terminal report: :func:`plan_page` laid out as text."""
    return view.to_text(plan_page(plan))


def render_markdown(plan: Plan, figures: bool = False) -> str:
    """The report page as Markdown (``figures``: with the charts, as NAME.png beside it)."""
    return view.to_markdown(plan_page(plan, figures))

def render_json(plan: Plan) -> str:
    return json.dumps(to_dict(plan), indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json}  # markdown and csv are added below


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        x = float(v)
        return f"{x:,.4g}" if abs(x) < 1000 else f"{x:,.0f}"
    if isinstance(v, (tuple, list)):
        return ";".join(map(str, v))
    return str(v)


def _plain(v: Any) -> Any:
    """A JSON-ready value: dates as ISO text, NaN as null, tuples as lists."""
    if v is None or (isinstance(v, float) and v != v):
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, tuple):
        return list(v)
    if hasattr(v, "item"):
        return v.item()
    return v


def render_rows(frames: dict, headers: dict, fmt: str) -> str:
    """Listings: text tables with unit headers, or JSON/CSV rows with every column plus as_of and source."""
    if fmt == "json":
        rows = [{**({"table": t} if len(frames) > 1 else {}), **{k: _plain(v) for k, v in r.items()}}
                for t, df in frames.items() for r in df.to_dict("records")]
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        parts = [df.assign(table=t)[["table", *df.columns]] if len(frames) > 1 else df for t, df in frames.items()]
        return view.csv_text(pd.concat(parts, ignore_index=True).map(lambda v: ";".join(v) if isinstance(v, tuple) else v))
    out = []
    for t, df in frames.items():
        cols = [c for c in headers[t] if c in df.columns]
        numeric = {i for i, c in enumerate(cols) if df[c].dtype.kind in "fi"}
        if len(frames) > 1:
            out.append(f"{t} ({len(df)})")
        out += text_table([headers[t][c] for c in cols], [[_cell(v) for v in r] for r in df[cols].itertuples(index=False)],
                      right=numeric)
        out.append("")
    return "\n".join(out)


def render_fields(table: str, fields: list, fmt: str) -> str:
    """One catalog row, field by field."""
    if fmt == "json":
        return json.dumps({"table": table, **{k: _plain(v) for k, v in fields if not k.startswith("---")}},
                          indent=2, ensure_ascii=False) + "\n"
    width = max(len(k) for k, _ in fields)
    lines = [f"[{table}]"] + [f"{k.ljust(width)}  {_cell(v) if not isinstance(v, dict) else v}" for k, v in fields]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- markdown, HTML, CSV


def plan_rows(plan: Plan) -> pd.DataFrame:
    """One row per (phase, assignment): the plan as a table."""
    d = to_dict(plan)
    rows = []
    for ph in d["phases"]:
        for a in ph["assignments"]:
            rows.append({"phase": ph["name"], "deadline": ph["deadline"], "finish_expected": ph["finish_expected"],
                         "finish_p50": ph["finish_p50"], "finish_p90": ph["finish_p90"],
                         "meets_deadline": ph["meets_deadline"], **{k: a[k] for k in (
                             "option", "kind", "device", "gpu_hours", "wall_hours", "billed_hours", "sessions",
                             "restarts_by_hand", "lost_hours", "checkpoint_every_min",
                             "checkpoint_every_recommended_min", "cost")}, "currency": d["currency"]})
    return pd.DataFrame(rows)


def render_csv(plan: Plan) -> str:
    return view.csv_text(plan_rows(plan))


RENDERERS.update(markdown=render_markdown, csv=render_csv)


# --------------------------------------------------------------------------- what-if pages

#: The mark of a sensitivity's cost whose plan cannot meet every deadline.
MISSES = "(misses)"
#: What-if columns that hold money (in the row's ``currency``).
MONEY_COLUMNS = {"total_cost", "cost_change", "cost_low", "cost_base", "cost_high", "swing", "cost_p10", "cost_p90"}
#: What-if columns as a page heads them (words that wrap, not identifiers); CSV and JSON keep the names.
#: A swept key's column keeps its path.
HEADERS = {"total_cost": "total cost", "cost_change": "cost change", "decision_changed": "decision changed",
           "inputs_changed": "inputs changed",
           "plan_changes": "plan changes", "breakeven_gpu_hours": "break-even [ref GPU-h]",
           "breakeven_pair": "break-even of",
           "low_value": "low value", "high_value": "high value", "cost_low": "cost low", "cost_base": "cost base",
           "cost_high": "cost high", "decision_flips": "decision flips", "buy_low": "buy low", "buy_high": "buy high",
           "kinds_low": "kinds low", "kinds_high": "kinds high", "plan_low": "plan low", "plan_high": "plan high",
           "cost_p10": "cost P10", "cost_p90": "cost P90",
           "p_cheapest": "P(cheapest)"}


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Offer ids without their provider prefix ('vast:a100-40gb' -> 'a100-40gb') where that stays
    unambiguous among ``ids``; the others as they are."""
    ids = set(ids)
    tails: dict[str, set[str]] = {}
    for i in ids:
        tails.setdefault(i.split(":", 1)[-1], set()).add(i)
    return {i: (tail if len(tails[tail]) == 1 and tail not in ids - {i} else i)
            for i in ids for tail in [i.split(":", 1)[-1]]}


def render_table(df: pd.DataFrame, fmt: str) -> str:
    """A what-if table as JSON or CSV rows with every column (render_rows over one table)."""
    return render_rows({"rows": df}, {"rows": {c: c for c in df.columns}}, fmt)


def whatif_page(df: pd.DataFrame, title: str) -> view.Page:
    """A compare, sweep or sensitivity table as a page a projector shows: money at its currency's
    precision (the currency in the header when there is one), GPU-hours whole, yes/no for flags,
    the plan one line per phase (one line per row in a table of more than
    :data:`LINES_PER_PHASE_UP_TO` rows: a 7 x 5 sweep is 35 lines, not 255), offer ids without
    their provider where unambiguous. The CSV and JSON keep every column as it is."""
    df = df.copy()
    split_plans = len(df) <= LINES_PER_PHASE_UP_TO
    currencies = df["currency"].tolist() if "currency" in df else [None] * len(df)
    one_currency = len(set(currencies)) == 1 and isinstance(currencies[0], str)
    if one_currency:
        df = df.drop(columns="currency")
    if "feasible" in df and df["feasible"].all():
        df = df.drop(columns="feasible")
    notes = []
    # sensitivity: a side whose plan cannot meet every deadline (over its budget, or at all) costs the
    # work it does, the rest left undone; its cost is marked, and said under the table
    missed = {c: ~df.pop(f"feasible_{side}").astype(bool) for c, side in
              (("cost_low", "low"), ("cost_high", "high"), ("cost_base", "base")) if f"feasible_{side}" in df}
    if "cost_base" in df and df["cost_base"].nunique() == 1 and one_currency:  # sensitivity: said once
        base_missed = bool(missed.pop("cost_base", pd.Series([False])).iloc[0])
        notes.append(f"Cost with every input as given: {_money(float(df['cost_base'].iloc[0]), str(currencies[0]))}"
                     + (f" {MISSES}" if base_missed else "") + ".")
        df = df.drop(columns="cost_base")
    if any(m.any() for m in missed.values()):
        notes.append(f"{MISSES}: the plan at that value cannot meet every deadline (within the budget, or at all); "
                     "its cost is that of the work it does, the rest left undone.")
    flips = _flip_lines(df)
    if "decision_flips" in df and not df["decision_flips"].astype(bool).any():
        notes.append("No input moved this far changes the plan: what is bought or which offers do which phase.")
        df = df.drop(columns=[c for c in ("decision_flips", "buy_low", "buy_high", "kinds_low", "kinds_high",
                                          "plan_low", "plan_high") if c in df])
    elif flips:  # where each flip happens and what the plan becomes, above the table: the table keeps the swings
        df = df.drop(columns=[c for c in ("buy_low", "buy_high", "kinds_low", "kinds_high", "plan_low", "plan_high")
                              if c in df])
    df = df.drop(columns=[c for c in FLIP_COLUMNS if c in df])
    if "plan" in df:
        ids = {o for plan in df["plan"] for part in str(plan).split("; ")
               for o in part.split(": ", 1)[-1].split("+")}
        ids |= {b for col in ("buy", "buy_low", "buy_high") if col in df for b in df[col] if b != "nothing"}
        short = short_ids(ids)

        def shorten(plan: str) -> str:
            return "; ".join(part.split(": ", 1)[0] + ": " + "+".join(short.get(o, o) for o in
                                                                     part.split(": ", 1)[-1].split("+"))
                             if ": " in part else part for part in str(plan).split("; "))

        df["plan"] = df["plan"].map(shorten).map(_grouped_plan)

    def cell(column: str, v: Any, currency: str | None) -> view.Cell:
        if v is None or (isinstance(v, float) and v != v):
            return "—"
        if column in ("plan", "plan_low", "plan_high", "inputs_changed"):
            if not v:
                return "—"
            return tuple(str(v).split("; ")) if split_plans or column == "inputs_changed" else str(v)
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        if isinstance(v, (float, np.floating, int, np.integer)) and column in MONEY_COLUMNS and currency:
            return units.format_amount(float(v), currency)
        if isinstance(v, (float, np.floating)) and column in CHANCE_COLUMNS:
            return _percent(float(v))
        if isinstance(v, (float, np.floating)):
            return f"{v:,.0f}" if "gpu_hours" in column else _significant(float(v))
        return str(v)

    columns = list(df.columns)
    headers = tuple(HEADERS.get(c, c) + (f" [{currencies[0]}]" if one_currency and c in MONEY_COLUMNS else "")
                    for c in columns)
    rows = tuple(tuple(f"{cell(c, v, cur)} {MISSES}" if c in missed and missed[c].iloc[i] else cell(c, v, cur)
                       for c, v in zip(columns, r)) for i, (r, cur) in
                 enumerate(zip(df.itertuples(index=False), currencies)))
    right = frozenset(i for i, c in enumerate(columns) if df[c].dtype.kind in "fi")
    wrap = frozenset(i for i, c in enumerate(columns) if c in ("plan", "plan_low", "plan_high", "inputs_changed"))
    table = view.section(None, view.Table(headers, rows, right, wrap), *notes)
    if not flips:
        return view.Page(title, (table,))
    return view.Page(title, (view.section("Where the plan changes", view.Bullets(tuple(flips))), table))


#: Sensitivity's flip columns (whatif.sensitivity): said in sentences above the table, kept in CSV and JSON.
FLIP_COLUMNS = ("flip_down_kept", "flip_down_at", "flip_up_kept", "flip_up_at", "shipped_value", "default_range")


def _number(text: object) -> float | None:
    """The number a shown value starts with ('0.3513 EUR/h' -> 0.3513), or None."""
    m = re.match(r"^\s*([-+]?\d+(?:\.\d*)?)", str(text))
    return float(m.group(1)) if m else None


def _flip_lines(df: pd.DataFrame) -> list[str]:
    """One sentence per input and side where the plan changes: 'electricity above 0.2788 USD/kWh
    (0.28 changes it): buy nothing; train: uni-cluster' (the flip lies between the two values)."""
    if "flip_up_at" not in df:
        return []
    out = []
    for r in df.itertuples(index=False):
        for side, word, buy, plan in (("down", "below", r.buy_low, r.plan_low), ("up", "above", r.buy_high, r.plan_high)):
            at, kept = getattr(r, f"flip_{side}_at"), getattr(r, f"flip_{side}_kept")
            if at and getattr(r, "default_range", ""):
                # as given, a default's range is priced; a rate set is known: where known rates change it
                where = (f"one of {r.value} or {word}" if _number(kept) == _number(r.value)
                         else f"one {word} {kept} ({at} changes it)")
                out.append(f"{r.input}: {r.value} is a default with a range ({r.default_range}), whose hours the plan "
                           f"pays on average; a rate you give is known, and {where} changes the plan: buy {buy}; "
                           f"{_grouped_plan(str(plan))}")
            elif at:
                out.append(f"{r.input} {word} {kept} ({at} changes it): buy {buy}; {_grouped_plan(str(plan))}")
                was, at_x = _number(getattr(r, "shipped_value", "")), _number(at)
                if was is not None and at_x is not None and (was >= at_x if side == "up" else was <= at_x):
                    out.append(f"{r.input} is now {r.value} (refreshed prices), {r.shipped_value} in the shipped "
                               f"catalog: past the flip between {kept} and {at}, so a plan made with the shipped "
                               "prices is out of date")
    return out


def _grouped_plan(plan: str) -> str:
    """A what-if row's plan ('a: x; b: x; c: y') as phases grouped by where they run: 'a and b on
    x; c on y' (the run's answer groups them so too), 'every phase on x' when they all run there."""
    groups: dict[str, list[str]] = {}
    parts = str(plan).split("; ")
    for part in parts:
        name, _, where = part.partition(": ")
        if where:
            groups.setdefault(where, []).append(name)
    if len(groups) == 1 and len(parts) > 1 and len(next(iter(groups.values()))) == len(parts):
        return f"every phase on {next(iter(groups))}"
    return "; ".join(f"{units.format_and(names)} on {where}" for where, names in groups.items()) or str(plan)
