"""Turn a Plan into text people read. Each format is a small function over the Plan."""

from __future__ import annotations

import json

from .result import COST_PARTS, Plan, to_dict


def _money(x: float | None, currency: str) -> str:
    return "—" if x is None else f"{x:,.2f} {currency}"


def _table(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


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
                f"{ph['gpu_hours']:,.1f}",
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
            out.append(f"  {ph.name} on {a.option}: {a.gpu_hours:,.0f} reference GPU-h = {a.wall_hours:,.1f} wall-h "
                       f"at {a.relative_speed:.2f}x the {s.workload.reference_gpu} ({a.speed_source}; {a.verdict})"
                       + (f", {a.sessions} sessions, {a.setup_hours:.1f} h setup, {a.lost_hours:.1f} h lost"
                          if a.kind in ("free", "rent") else ""))
    if d["alternatives"]:
        out.append("")
        out += _table(["Strategy", f"Total [{cur}]", "Finish", "Options"],
                      [[a["strategy"], f"{a['total_cost']:,.2f}", a["finish"] or "—", ", ".join(a["options"])]
                       for a in d["alternatives"]], right={1})
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
