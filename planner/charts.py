"""Charts for reports (matplotlib, no screen): each function returns a Figure.

Every chart has a title, axes labelled with units and a legend where there
is more than one series.
"""

from __future__ import annotations

import datetime as dt

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .result import COST_PARTS, Plan  # noqa: E402


def curve_crossings(plan: Plan) -> list[tuple[dt.date, str, float]]:
    """Where the buy-only curve of the chart comes down to another strategy's: (date, strategy,
    money there [USD]). Read off the plotted step curves, so a mark sits where the lines cross."""
    curves = {a.strategy: list(a.cumulative) for a in plan.alternatives}
    buy = curves.pop("buy-only", None)
    if not buy:
        return []

    def at(points, when):
        value = points[0][1] if points else 0.0
        for d, c in points:
            if d > when:
                break
            value = c
        return value

    out = []
    for name, pts in curves.items():
        if name == "hybrid" or not pts:
            continue
        dates = sorted({d for d, _ in buy} | {d for d, _ in pts})
        above = False
        for d in dates:
            b, o = at(buy, d), at(pts, d)
            if b > o + 1e-9:
                above = True
            elif above:
                out.append((d, name, b))
                break
    return out


def cumulative_cost(plan: Plan) -> Figure:
    """Money spent over time by each strategy's best plan, break-even dates marked."""
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for alt in plan.alternatives:
        if alt.cumulative:
            ax.step([d for d, _ in alt.cumulative], [c * per for _, c in alt.cumulative], where="post",
                    label=f"{alt.strategy} ({alt.total_cost_usd * per:,.0f} {cur})")
    for k, (when, other, money) in enumerate(curve_crossings(plan)):
        ax.axvline(when, color="grey", linestyle=":", linewidth=1)
        ax.annotate(f"buying overtakes {other}", (when, money * per), xytext=(6, -14 - 12 * k),
                    textcoords="offset points", fontsize=7, color="dimgrey", ha="left", va="top")
    ax.set_title("Cumulative cost of each strategy's best plan")
    ax.set_xlabel("Date")
    ax.set_ylabel(f"Money spent [{cur}]")
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m"))
    if plan.alternatives:
        ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def schedule(plan: Plan) -> Figure:
    """Reference GPU-hours a week, stacked by option."""
    fig, ax = plt.subplots(figsize=(9, 4.8))
    sched = plan.schedule
    if sched is not None and len(sched):
        table = sched.pivot_table(index="week_start", columns="option", values="gpu_hours", aggfunc="sum").fillna(0)
        bottom = pd.Series(0.0, index=table.index)
        for option in table.columns:
            ax.bar(table.index, table[option], bottom=bottom, width=6, label=option, align="edge")
            bottom += table[option]
        ax.legend(loc="upper right", fontsize=8)
    ax.set_title("Week-by-week schedule of the chosen plan")
    ax.set_xlabel("Week starting")
    ax.set_ylabel("Work [reference GPU-h per week]")
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m"))
    ax.grid(axis="y", alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def breakdown(plan: Plan) -> Figure:
    """The chosen plan's cost by part (resale is negative)."""
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    parts = [(k.replace("_", " "), plan.cost_usd.get(k, 0.0) * per) for k in COST_PARTS]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    colors = ["tab:green" if v < 0 else "tab:blue" for _, v in parts]
    bars = ax.bar([k for k, _ in parts], [v for _, v in parts], color=colors, label="cost part")
    ax.bar_label(bars, labels=[f"{v:,.0f}" for _, v in parts], fontsize=8)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_title(f"Cost breakdown of the chosen plan (total {plan.total_usd * per:,.0f} {cur})")
    ax.set_xlabel("Part")
    ax.set_ylabel(f"Cost [{cur}]")
    ax.legend(handles=[bars[0]], labels=["cost part (resale in green, negative)"], fontsize=8)
    fig.tight_layout()
    return fig


def pareto(plan: Plan) -> Figure:
    """Total cost against the last phase's finish date."""
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if plan.pareto:
        xs = [p.finish for p in plan.pareto]
        ys = [p.total_cost_usd * per for p in plan.pareto]
        ax.plot(xs, ys, marker="o", label="cheapest plan finishing by then")
        phase = plan.pareto[0].phase
        ax.set_title(f"Paying more to finish '{phase}' earlier")
        ax.legend(fontsize=8)
    else:
        ax.set_title("Cost against finish date (no trade-off found)")
    ax.set_xlabel("Finish date")
    ax.set_ylabel(f"Total cost [{cur}]")
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))
    ax.grid(alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def sweep_chart(table: pd.DataFrame, key: str, currency: str) -> Figure:
    """Total cost against the swept value, with the points where the chosen plan changes."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels = [str(v) for v in table[key]]
    xs = range(len(labels))
    ax.plot(xs, table["total_cost"], marker="o", label="cheapest plan")
    changed = table.index[table["plan_changes"]]
    if len(changed):
        ax.scatter(changed, table.loc[changed, "total_cost"], s=120, facecolors="none", edgecolors="red",
                   label="the chosen plan changes", zorder=3)
    # name the plan chosen in each region (from a change to the next), under the curve
    starts = [0, *[int(i) for i in changed]]
    ends = [*starts[1:], len(table)]
    bottom = ax.get_ylim()[0]
    for k, (a, b) in enumerate(zip(starts, ends)):
        if a > 0:
            ax.axvline(a - 0.5, color="grey", linestyle=":", linewidth=1)
        row = table.iloc[a]
        options = dict.fromkeys(o for part in str(row["plan"]).split("; ") for o in part.split(": ", 1)[-1].split("+"))
        name = ("buy " + row["buy"] + "; " if row["buy"] != "nothing" else "") + "\n".join(o for o in options if o)
        ax.annotate(name, ((a + b - 1) / 2, bottom), xytext=(0, 6 + 10 * (k % 2)), textcoords="offset points",
                    ha="center", fontsize=7, color="dimgrey")
    ax.set_xticks(list(xs), labels, rotation=30, ha="right")
    ax.set_title(f"Total cost as {key} varies")
    ax.set_xlabel(key)
    ax.set_ylabel(f"Total cost [{currency}]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def compare_chart(table: pd.DataFrame) -> Figure:
    """Total cost of each compared scenario or variant, its finish date written at the bar's end."""
    labels = [" / ".join(str(x) for x in (r.get("scenario"), r["variant"]) if x) for _, r in table.iterrows()]
    fig, ax = plt.subplots(figsize=(9, 0.5 * max(len(table), 3) + 1.5))
    ys = list(range(len(table)))[::-1]
    ax.barh(ys, table["total_cost"], color="tab:blue")
    for y, (_, r) in zip(ys, table.iterrows()):
        ax.annotate(f" {r['total_cost']:,.2f} {r['currency']}, done {r['finish'] or '—'}", (r["total_cost"], y),
                    va="center", fontsize=8)
    ax.set_yticks(ys, labels, fontsize=8)
    currencies = sorted(set(table["currency"]))
    ax.set_xlabel(f"Total cost [{', '.join(currencies)}]")
    ax.set_title("Compared plans: total cost and finish")
    ax.margins(x=0.35)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def tornado(table: pd.DataFrame, currency: str, span: float) -> Figure:
    """How far the total cost moves when each input goes down / up by the span; flips marked."""
    t = table.iloc[::-1]
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(len(t), 4) + 1.5))
    base = float(table["cost_base"].iloc[0]) if len(table) else 0.0
    ys = range(len(t))
    ax.barh(ys, t["cost_low"] - base, left=base, color="tab:blue", label=f"input -{span:.0%}")
    ax.barh(ys, t["cost_high"] - base, left=base, color="tab:orange", label=f"input +{span:.0%}")
    names = [f"{r.input}{'  (flips the decision)' if r.decision_flips else ''}" for r in t.itertuples()]
    ax.set_yticks(list(ys), names, fontsize=8)
    ax.axvline(base, color="black", linewidth=0.8)
    ax.set_title(f"Sensitivity of the total cost (base {base:,.0f} {currency})")
    ax.set_xlabel(f"Total cost [{currency}]")
    ax.set_ylabel("Input")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


CHARTS = {"cumulative_cost": cumulative_cost, "schedule": schedule, "cost_breakdown": breakdown, "pareto": pareto}
