"""Turn a Plan into text people read. Each format is a small function over the Plan."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from .breakeven import FREE_MIX
from . import costs, units
from .result import COST_PARTS, Plan, to_dict


def _money(x: float | None, currency: str) -> str:
    return "—" if x is None else units.format_money(x, currency)


def _table(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _h(x: float | None) -> str:
    return "—" if x is None or x != x or x in (float("inf"), float("-inf")) else f"{x:,.0f}"


def explain(a, reference: str) -> str:
    """One assignment in words: speed, sessions, losses, the checkpoint advice, the spread."""
    if a.wall_hours != a.wall_hours or a.wall_hours == float("inf"):
        return f"{a.gpu_hours:,.0f} reference GPU-h cannot be done in time here"
    text = (f"{a.gpu_hours:,.0f} reference GPU-h become {a.wall_hours:,.1f} wall-h at {a.relative_speed:.2f}x "
            f"the {reference} ({a.speed_source})")
    if a.kind in ("free", "rent"):
        text += (f" over {a.sessions} session{'s' if a.sessions != 1 else ''}; {a.setup_hours:,.1f} h of setup, "
                 f"{a.lost_hours:,.1f} h lost to session ends and interruptions")
        if a.wait_hours:
            text += f", {a.wait_hours:,.1f} h waiting for the paused machine to resume (unbilled)"
        if a.restarts_by_hand:
            text += f"; {a.restarts_by_hand} starts by hand"
    if a.wall_hours_p90 is not None and a.wall_hours_p90 > a.wall_hours * 1.001:
        text += f"; P50 {_h(a.wall_hours_p50)} h, P90 {_h(a.wall_hours_p90)} h"
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


def render_text(plan: Plan) -> str:
    """The terminal report: the answer first, then where each phase runs, then the money."""
    d = to_dict(plan)
    cur = d["currency"]
    s = plan.scenario
    out = [d["scenario"] + (f"  [variant: {d['variant']}]" if d["variant"] else "")]
    out.append("=" * len(out[0]))
    verdict = "Plan" if d["feasible"] else "Plan (some deadlines cannot be met)"
    buys = ", ".join(f"buy {p['offer']} ({_money(p['price'], cur)}, resale {_money(p['resale'], cur)})"
                     for p in d["purchases"]) or "buy nothing"
    out.append(f"{verdict}: {buys}.")
    out.append(f"Total cost: {_money(d['total_cost'], cur)}"
               + (f" (of which your time {_money(d['cost_breakdown']['your_time'], cur)})"
                  if d["cost_breakdown"]["your_time"] else ""))
    if d["assumed_figures"]:
        out.append("This plan rests on figures no provider publishes (defaults with their range):")
        out += [f"  - {a}" for a in d["assumed_figures"]]
    out.append("")
    rows = []
    for ph in d["phases"]:
        for a in ph["assignments"] or [None]:
            rows.append([
                ph["name"],
                a["option"] if a else "—",
                a["device"] if a else "—",
                f"{a['gpu_hours'] if a else ph['gpu_hours']:,.1f}",
                f"{a['wall_hours']:,.1f}" if a and a["wall_hours"] is not None else "—",
                str(a["sessions"]) if a else "—",
                ph["finish_expected"] or "—",
                ph["deadline"] or "—",
                "yes" if ph["meets_deadline"] else "NO",
                f"{a['cost']:,.2f}" if a else "—",
            ])
    out += _table(["Phase", "Option", "Device", "Work [ref GPU-h]", "Wall [h]", "Sessions", "Finish", "Deadline",
                   "On time", f"Cost [{cur}]"], rows, right={3, 4, 5, 9})
    for ph in d["phases"]:
        if ph["problem"]:
            out.append(f"  ! {ph['name']}: {ph['problem']}")
    out.append("")
    out.append(f"Cost breakdown [{cur}]: " + ", ".join(
        f"{k.replace('_', ' ')} {d['cost_breakdown'][k]:,.2f}" for k in COST_PARTS if d["cost_breakdown"][k]) or "nothing")
    for ph in plan.phases:
        for a in ph.assignments:
            out.append(f"  {ph.name} on {a.option}: {explain(a, s.workload.reference_gpu)}")
    if d["alternatives"]:
        out.append("")
        out += _table(["Strategy", f"Total [{cur}]", "Finish", "Options"],
                      [[a["strategy"], f"{a['total_cost']:,.2f}", a["finish"] or "—", ", ".join(a["options"])]
                       for a in d["alternatives"]], right={1})
    if d["breakeven"]:
        out.append("")
        shown = _breakeven_shown(plan, d)
        rows = [[b["buy"], b["rent"], f"{b['gpu_hours']:,.0f}" if b["gpu_hours"] is not None else "never",
                 b["date"] or ("—" if b["gpu_hours"] is None else "past the plan's work")]
                for b in shown]
        if rows:
            out += _table(["Buy", "vs rent", "Break-even [ref GPU-h]", "Date at the scenario's pace"], rows,
                          right={2})
        if len(shown) < len(d["breakeven"]):
            out.append(f"  ({len(shown)} of {len(d['breakeven'])} pairs shown: the cards you own or consider "
                       "against the rent the plan chose, the same card rented, and the free tiers; "
                       "--format json lists all)")
    if plan.schedule is not None and len(plan.schedule):
        out.append("")
        out.append("Schedule [reference GPU-h a week]:")
        for (phase, option), sel in plan.schedule.groupby(["phase", "option"], sort=False):
            first, last = sel["week_start"].min(), sel["week_start"].max()
            per_week = sel["gpu_hours"].sum() / len(sel)
            out.append(f"  {phase:<12} {option:<28} weeks of {first} .. {last}: {len(sel)} weeks, "
                       f"{per_week:,.1f} a week on average")
    if d["pareto"]:
        out.append("")
        out += _table([f"Finish of '{d['pareto'][0]['phase']}'", f"Total [{cur}]"],
                      [[p["finish"], f"{p['total_cost']:,.2f}"] for p in d["pareto"]], right={1})
    general = [e for e in d["excluded"] if e["phase"] is None]
    if general:
        out.append("")
        out.append("Excluded:")
        out += [f"  {e['option']}: {e['reason']}" for e in general[:12]]
        if len(general) > 12:
            out.append(f"  ... and {len(general) - 12} more (--format json lists all)")
    if s.overrides:
        out.append("")
        out.append("Overrides: " + "; ".join(s.overrides))
    if d["assumptions"]:
        out.append("")
        out += [f"assumed: {a}" for a in d["assumptions"]]
    if d["warnings"]:
        out.append("")
        out += [f"warning: {w}" for w in d["warnings"]]
    out.append("")
    out.append(f"Catalog as of {d['catalog_as_of']}{layers_text(d)}; electricity "
               f"{s.electricity_usd_per_kwh / s.usd_per_currency:.4f} {cur}/kWh; resale after {s.horizon_months:g} months.")
    return "\n".join(out) + "\n"


def render_json(plan: Plan) -> str:
    return json.dumps(to_dict(plan), indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json}  # markdown and csv are added below


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, (tuple, list)):
        return ";".join(map(str, v))
    return str(v)


def _plain(v):
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
        buf = io.StringIO()
        parts = [df.assign(table=t)[["table", *df.columns]] if len(frames) > 1 else df for t, df in frames.items()]
        pd.concat(parts, ignore_index=True).map(lambda v: ";".join(v) if isinstance(v, tuple) else v).to_csv(
            buf, index=False, lineterminator="\n")
        return buf.getvalue()
    out = []
    for t, df in frames.items():
        cols = [c for c in headers[t] if c in df.columns]
        numeric = {i for i, c in enumerate(cols) if df[c].dtype.kind in "fi"}
        if len(frames) > 1:
            out.append(f"{t} ({len(df)})")
        out += _table([headers[t][c] for c in cols], [[_cell(v) for v in r] for r in df[cols].itertuples(index=False)],
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


def md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    esc = [[str(c).replace("|", "\\|") for c in r] for r in rows]
    return ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|",
            *("| " + " | ".join(r) + " |" for r in esc)]


def _breakeven_shown(plan: Plan, d: dict) -> list[dict]:
    """The break-even pairs that matter to this scenario (issue 15): each card you own or listed
    in ``consider.buy`` (without such a list, the card of the best buy-only plan) against the rent
    offers the plan chose, the best rent offer of the card's own device, and the free-tier mix.
    The full table stays in breakeven.csv and result.json. ``d`` is the plan's ``to_dict``."""
    import fnmatch

    s = plan.scenario
    device = plan.quotes.drop_duplicates("option").set_index("option")["device"].to_dict()
    cards = list(dict.fromkeys(b["buy"] for b in d["breakeven"]))
    listed = s.consider.buy
    wanted = {c for c in cards if c in s.you.own or c.startswith("own:")}
    if listed:
        wanted |= {c for c in cards if any(fnmatch.fnmatchcase(c, pat) for pat in listed)}
    else:
        wanted |= {o for a in d["alternatives"] if a["strategy"] == "buy-only" for o in a["options"]}
    chosen = {a["option"] for ph in d["phases"] for a in ph["assignments"] if a["kind"] == "rent"}
    out = []
    for card in (c for c in cards if c in wanted):
        pairs = [b for b in d["breakeven"] if b["buy"] == card]  # ordered: same device first, then cheapest
        same = next((b for b in pairs if device.get(b["rent"]) == device.get(card)), None)
        keep = [b for b in pairs if b["rent"] in chosen or b is same or b["rent"] == FREE_MIX]
        out += keep
    return out


def render_markdown(plan: Plan, charts: dict[str, str] | None = None) -> str:
    """A page a supervisor can read: question, answer, plan, money, break-even, exclusions, assumptions."""
    d = to_dict(plan)
    s = plan.scenario
    cur = d["currency"]
    buys = ", ".join(f"buy {p['offer']}" for p in d["purchases"]) or "buy nothing"
    where = "; ".join(f"{ph['name']} on " + " + ".join(a["option"] for a in ph["assignments"])
                      for ph in d["phases"] if ph["assignments"])
    out = [f"# {d['scenario']}" + (f" — variant {d['variant']}" if d["variant"] else ""), ""]
    out += ["## The question", "",
            f"Where should {sum(p.gpu_hours for p in s.phases):,.0f} reference GPU-hours "
            f"(on {s.workload.reference_gpu}) run, between {s.start} and the last deadline, to meet every "
            "deadline at the lowest cost: on cards bought or owned, on rented GPUs, or on free tiers?", ""]
    verdict = "meets every deadline" if d["feasible"] else "cannot meet every deadline"
    out += ["## The answer", "",
            f"**{buys.capitalize()}; {where}.** The plan {verdict} and costs "
            f"**{d['total_cost']:,.2f} {cur}** over a {s.horizon_months:g}-month horizon.", ""]
    if d["assumed_figures"]:
        out += ["It rests on figures no provider publishes (defaults with their range):", "",
                *(f"- {a}" for a in d["assumed_figures"]), ""]
    out += ["## The plan", ""]
    rows = []
    for ph in d["phases"]:
        for a in ph["assignments"] or [None]:
            rows.append([ph["name"], a["option"] if a else "—", a["device"] if a else "—",
                         f"{a['gpu_hours'] if a else ph['gpu_hours']:,.1f}",
                         f"{a['wall_hours']:,.1f}" if a and a["wall_hours"] is not None else "—",
                         ph["finish_expected"] or "—", ph["finish_p90"] or "—", ph["deadline"] or "—",
                         "yes" if ph["meets_deadline"] else "**no**", f"{a['cost']:,.2f}" if a else "—"])
    out += md_table(["Phase", "Option", "Device", "Work [ref GPU-h]", "Wall [h]", "Finish", "Finish P90",
                      "Deadline", "On time", f"Cost [{cur}]"], rows)
    out.append("")
    for ph in plan.phases:
        for a in ph.assignments:
            out.append(f"- {ph.name} on {a.option}: {explain(a, s.workload.reference_gpu)}".replace("\n    ", " — "))
        if ph.shortfall:
            out.append(f"- **{ph.name}: {ph.shortfall}**")
    out.append("")
    out += ["## Cost breakdown", ""]
    out += md_table(["Part", f"Cost [{cur}]"], [[k.replace("_", " "), f"{d['cost_breakdown'][k]:,.2f}"]
                                                 for k in COST_PARTS])
    out += ["", f"Total: **{d['total_cost']:,.2f} {cur}**.", ""]
    if d["alternatives"]:
        out += ["## What the choice saves", ""]
        out += md_table(["Strategy", f"Best plan [{cur}]", "Finish", "Options"],
                         [[a["strategy"], f"{a['total_cost']:,.2f}", a["finish"] or "—", ", ".join(a["options"])]
                          for a in d["alternatives"]])
        out.append("")
    out += ["## Break-even: when buying beats renting", ""]
    if d["breakeven"]:
        shown = _breakeven_shown(plan, d)
        out += md_table(["Buy", "Instead of renting", "Break-even [ref GPU-h]", "Date at the scenario's pace",
                          "Why never"],
                         [[b["buy"], b["rent"], f"{b['gpu_hours']:,.0f}" if b["gpu_hours"] is not None else "never",
                           b["date"] or "—", b["why_not"] or ""] for b in shown])
        if len(shown) < len(d["breakeven"]):
            out += ["", f"Each card you own or consider against the rent offers this plan chose, the same card "
                        f"rented and the free tiers; all {len(d['breakeven'])} pairs are in breakeven.csv and "
                        "result.json."]
    else:
        out.append("No card to buy is considered.")
    out.append("")
    if d["pareto"]:
        out += ["## Paying more to finish earlier", ""]
        out += md_table([f"Finish of '{d['pareto'][0]['phase']}'", f"Total [{cur}]"],
                         [[p["finish"], f"{p['total_cost']:,.2f}"] for p in d["pareto"]])
        out.append("")
    if charts:
        out += ["## Charts", ""]
        out += [f"![{title}]({path})" for title, path in charts.items()]
        out.append("")
    general = [e for e in d["excluded"] if e["phase"] is None]
    out += ["## Excluded and why", ""]
    out += [f"- {e['option']}: {e['reason']}" for e in general[:40]] or ["Nothing was excluded outright."]
    if len(general) > 40:
        out.append(f"- ... and {len(general) - 40} more (result.json lists all)")
    out.append("")
    out += ["## Assumptions", "",
            f"- Catalog as of {d['catalog_as_of']}{layers_text(d)}; every price and spec carries its date and source "
            "(`planner pricing show ID`).",
            f"- Electricity {s.electricity_usd_per_kwh / s.usd_per_currency:.4f} {cur}/kWh"
            + (" (catalog default)" if s.electricity_is_default else "") + f"; the host draws {s.you.host_power_w:g} W.",
            f"- Cards are sold after the {s.horizon_months:g}-month horizon; resale follows each offer's figure or the "
            f"default model ({costs.resale_model_text()}).",
            f"- Your time is valued at {s.you.time_value_usd_per_hour / s.usd_per_currency:g} {cur}/h; you can start "
            f"{s.you.attention_starts_per_day:g} sessions a day.",
            *(f"- {a}" for a in d["assumptions"]), *(f"- Override: {o}" for o in d["overrides"]), ""]
    if d["warnings"]:
        out += ["## Warnings", "", *(f"- {w}" for w in d["warnings"]), ""]
    return "\n".join(out)


def markdown_to_html(md: str, title: str, svgs: dict[str, str] | None = None) -> str:
    """Our Markdown subset (headings, paragraphs, bullet lists, tables, bold, images) as one HTML page.

    Images whose target is in ``svgs`` are embedded inline, so the page needs no other file.
    """
    import html
    import re

    def inline(text: str) -> str:
        text = html.escape(text)
        return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)

    body, lines, i = [], md.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{inline(line[level:].strip())}</h{level}>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip().replace("\\|", "|") for c in lines[i].strip().strip("|").split(" | ")])
                i += 1
            head, rest = rows[0], rows[2:]
            body.append("<table><thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr></thead><tbody>"
                        + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in rest)
                        + "</tbody></table>")
            continue
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{inline(lines[i][2:])}</li>")
                i += 1
            body.append("<ul>" + "".join(items) + "</ul>")
            continue
        elif line.startswith("!["):
            m = re.match(r"!\[(.*?)\]\((.*?)\)", line)
            if m and svgs and m.group(2) in svgs:
                body.append(f"<figure>{svgs[m.group(2)]}<figcaption>{inline(m.group(1))}</figcaption></figure>")
            elif m:
                body.append(f'<img alt="{html.escape(m.group(1))}" src="{html.escape(m.group(2))}">')
        elif line.strip():
            body.append(f"<p>{inline(line)}</p>")
        i += 1
    style = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;font-size:18px;"
             "line-height:1.45;color:#111}table{border-collapse:collapse;margin:.5em 0;font-size:16px}"
             "th,td{border:1px solid #bbb;padding:.25em .6em;text-align:left}th{background:#eee}"
             "figure{margin:1em 0}figure svg{max-width:100%;height:auto}h1{font-size:1.7em}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{style}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


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
    return plan_rows(plan).to_csv(index=False, lineterminator="\n")


RENDERERS.update(markdown=render_markdown, csv=render_csv)
