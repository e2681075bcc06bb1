"""Turn a Plan into text people read. Each format is a small function over the Plan."""

from __future__ import annotations

import json

import numpy as np

from .result import COST_PARTS, Plan, to_dict


def _money(x: float | None, currency: str) -> str:
    return "—" if x is None else f"{x:,.2f} {currency}"


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
    out.append(f"Catalog as of {d['catalog_as_of']}; electricity {s.electricity_usd_per_kwh / s.usd_per_currency:.4f} "
               f"{cur}/kWh; resale after {s.horizon_months:g} months.")
    return "\n".join(out) + "\n"


def render_json(plan: Plan) -> str:
    return json.dumps(to_dict(plan), indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json}


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
        import io

        buf = io.StringIO()
        parts = [df.assign(table=t)[["table", *df.columns]] if len(frames) > 1 else df for t, df in frames.items()]
        import pandas as pd

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
