"""Charts for reports (matplotlib, no screen): each function returns a Figure.

Every chart has a title, axes labelled with units and a legend where there
is more than one series.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import matplotlib

matplotlib.use("Agg")
# names, ids and values are drawn as written: a '$...$' pair in a variant's name is no formula
# (matplotlib would parse it as mathtext and fail on '$\\frac{$')
matplotlib.rcParams["text.parse_math"] = False
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ..decide import breakeven  # noqa: E402
from ..decide.result import COST_PARTS, Plan  # noqa: E402
from ..model import units  # noqa: E402


def _dates(days: list) -> Any:
    """Dates as matplotlib plots them (its date converter; the type stubs know only numbers)."""
    return days


def _date_axis(ax: Any) -> None:
    """Dates on the x axis at a step that suits the span (days for a month, months for years),
    each written once and briefly (matplotlib's concise formatter): no month repeated."""
    locator = mdates.AutoDateLocator(minticks=3, maxticks=9)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def cumulative_cost(plan: Plan) -> Figure:
    """Money spent over time by each strategy's best plan (resale comes back at the end). The
    legend gives each curve's last value, the money alone: the strategies' totals in the table
    also count your time. Strategies whose plans spend alike are one line, named together (one
    would hide the other); the axis ends a week after the last change of any line (the
    horizon's end only where a resale comes back then)."""
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    fig, ax = plt.subplots(figsize=(9, 4.8))
    lines: dict[tuple, list[str]] = {}
    for alt in plan.alternatives:
        if alt.cumulative:
            key = tuple((d, round(c * per, 2)) for d, c in alt.cumulative)
            lines.setdefault(key, []).append(alt.strategy)
    last_change = None
    for key, names in lines.items():
        days, money = [d for d, _ in key], [c for _, c in key]
        ax.step(_dates(days), money, where="post",
                label=f"{' = '.join(names)}: {units.format_money(money[-1], cur)} spent")
        changed = [days[i] for i in range(1, len(money)) if money[i] != money[i - 1]] or days[:1]
        last_change = max(changed[-1], last_change) if last_change else changed[-1]
    if last_change is not None:
        first = min(k[0][0] for k in lines)
        ax.set_xlim(_dates([first])[0], _dates([last_change + dt.timedelta(days=7)])[0])
    return _money_over_time(fig, ax, "Money spent by each strategy's best plan (your time not counted)",
                            f"Money spent [{cur}]", bool(plan.alternatives), 8)


def _money_over_time(fig: Any, ax: Any, title: str, ylabel: str, legend: bool, fontsize: int) -> Figure:
    """Title, date axis and a legend beside the plot (never over the curves) for money over time."""
    ax.set_title(title)
    ax.set_xlabel("Date")
    ax.set_ylabel(ylabel)
    _date_axis(ax)
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=fontsize)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def breakeven_chart(plan: Plan) -> Figure:
    """The break-even pairs the report lists: money spent by each day at the scenario's pace
    buying each card (resold at the horizon's end, as the plans do) and renting each offer; a dot where a card pays off, on the
    date the table gives (both come from breakeven.curves)."""
    from ..decide.result import to_dict
    from .page import breakeven_shown

    s = plan.scenario
    cur, per = s.currency, 1.0 / s.usd_per_currency
    pairs = {(p.buy, p.rent): p for p in plan.breakeven}
    shown = [pairs[b["buy"], b["rent"]] for b in breakeven_shown(plan, to_dict(plan))]
    pace = breakeven.pace(s)
    fig, ax = plt.subplots(figsize=(10, 5))
    colors = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"] * 4)
    drawn: dict[str, str] = {}
    for pair in shown:
        c = breakeven.curves(s, pair, pace)
        for name, usd, style in ((f"buy {pair.buy}", c.buy_usd, "-"), (f"rent {pair.rent}", c.rent_usd, "--")):
            if name not in drawn:
                drawn[name] = next(colors)
                ax.plot(c.dates, usd * per, style, color=drawn[name], linewidth=1.4, label=name)
        when = c.first_crossing()
        if when is not None:
            ax.plot(_dates([when]), [float(c.buy_usd[c.dates.index(when)]) * per], "o", color=drawn[f"buy {pair.buy}"],
                    markeredgecolor="black", label=f"{pair.buy} pays off against {pair.rent} on {when}")
    return _money_over_time(fig, ax, "Buying (resold at the horizon) against renting, at the scenario's pace",
                            f"Money spent by then [{cur}]", bool(shown), 7)


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
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # beside the bars, never over them
    ax.set_title("Week-by-week schedule of the chosen plan")
    ax.set_xlabel("Week starting")
    ax.set_ylabel("Work [reference GPU-h per week]")
    _date_axis(ax)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def breakdown(plan: Plan) -> Figure:
    """The chosen plan's cost by part (resale is negative)."""
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    parts = [(k.replace("_", " "), plan.cost_usd.get(k, 0.0) * per) for k in COST_PARTS
             if k != "carbon" or plan.scenario.you.carbon_usd_per_kg is not None]  # a part only with a price
    fig, ax = plt.subplots(figsize=(8, 4.5))
    colors = ["tab:green" if v < 0 else "tab:blue" for _, v in parts]
    bars = ax.bar([k for k, _ in parts], [v for _, v in parts], color=colors, label="cost part")
    # amounts as the report's tables write them (the currency's precision: 0.59 EUR, not "1")
    ax.bar_label(bars, labels=[units.format_amount(v, cur) if v else "" for _, v in parts], fontsize=8)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_title(f"Cost breakdown of the chosen plan (total {units.format_money(plan.total_usd * per, cur)})")
    ax.set_xlabel("Part")
    ax.set_ylabel(f"Cost [{cur}]")
    ax.legend(handles=[bars[0]], labels=["cost part (resale and credits in green, negative)"], fontsize=8)
    fig.tight_layout()
    return fig


def pareto(plan: Plan) -> Figure:
    """Total cost against the last phase's finish date."""
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if plan.pareto:
        xs = [p.finish for p in plan.pareto]
        ys = [p.total_cost_usd * per for p in plan.pareto]
        ax.plot(_dates(xs), ys, marker="o", label="cheapest plan finishing by then")
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


def plan_name(row: Any) -> str:
    """A what-if row's decision in a few words: what is bought, then the other options it runs on
    (a card bought is named once: 'buy box-4x4090', not 'buy box-4x4090; box-4x4090')."""
    bought = set(str(row["buy"]).split("+")) if row["buy"] != "nothing" else set()
    options = dict.fromkeys(o for part in str(row["plan"]).split("; ") for o in part.split(": ", 1)[-1].split("+"))
    return "; ".join([*(["buy " + row["buy"]] if bought else []), *(o for o in options if o and o not in bought)])


def sweep_map(table: pd.DataFrame, keys: tuple[str, str], currency: str, labels: tuple[str, str] | None = None
              ) -> Figure:
    """A 2-D sweep as a decision map: each cell coloured by the plan that wins there, shaded by
    its cost (darker is dearer), the cost written in the cell."""
    import numpy as np
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch

    kx, ky = keys
    xs, ys = list(dict.fromkeys(table[kx])), list(dict.fromkeys(table[ky]))
    names = [plan_name(r) for _, r in table.iterrows()]
    plans = list(dict.fromkeys(names))
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    cost = table["total_cost"].astype(float).to_numpy()
    low, high = float(np.nanmin(cost)), float(np.nanmax(cost))
    image = np.ones((len(ys), len(xs), 3))
    fig, ax = plt.subplots(figsize=(max(7.0, 0.9 * len(xs) + 4), max(4.5, 0.45 * len(ys) + 2.5)))
    for (_, r), name, c in zip(table.iterrows(), names, cost):
        i, j = ys.index(r[ky]), xs.index(r[kx])
        shade = 0.35 + 0.65 * ((c - low) / (high - low) if high > low else 0.5)
        image[i, j] = 1.0 - shade * (1.0 - np.array(to_rgb(palette[plans.index(name) % len(palette)])))
        if len(xs) * len(ys) <= 225:
            ax.text(j, i, f"{c:,.0f}", ha="center", va="center", fontsize=7)
    ax.imshow(image, origin="lower", aspect="auto")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(ys)), [str(y) for y in ys], fontsize=8)
    ax.set_xlabel(labels[0] if labels else kx)
    ax.set_ylabel(labels[1] if labels else ky)
    ax.set_title(f"Which plan wins where (cell: total cost [{currency}], darker is dearer)")
    ax.legend(handles=[Patch(color=palette[k % len(palette)], label=p) for k, p in enumerate(plans)],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, title="plan")
    fig.tight_layout()
    return fig


def sweep_chart(table: pd.DataFrame, key: str, currency: str, label: str | None = None) -> Figure:
    """Total cost against the swept value, with the points where the chosen plan changes; each
    region of one plan is shaded in that plan's colour, named in a legend under the axes (labels
    inside the plot would sit on the curve or on each other where a region is one value wide)."""
    from matplotlib.patches import Patch

    labels = [str(v) for v in table[key]]
    xs = range(len(labels))
    changed = table.index[table["plan_changes"]]
    starts = [0, *[int(i) for i in changed]]
    ends = [*starts[1:], len(table)]
    names = [plan_name(table.iloc[a]) for a in starts]  # the plan of each region
    plans = list(dict.fromkeys(names))
    fig, ax = plt.subplots(figsize=(8, 4.8 + 0.22 * len(plans)))
    colours = plt.get_cmap("Pastel1")(range(9))  # the map's nine colours
    for a, b, name in zip(starts, ends, names):
        ax.axvspan(a - 0.5, b - 0.5, color=colours[plans.index(name) % len(colours)], alpha=0.6, linewidth=0)
    ax.plot(xs, table["total_cost"], marker="o", label="cheapest plan")
    if len(changed):
        ax.scatter(changed, table.loc[changed, "total_cost"], s=120, facecolors="none", edgecolors="red",
                   label="the chosen plan changes", zorder=3)
    ax.set_xlim(-0.5, len(table) - 0.5)
    ax.set_xticks(list(xs), labels, rotation=30, ha="right")
    ax.set_title(f"Total cost as {key} varies")
    ax.set_xlabel(label or key)
    ax.set_ylabel(f"Total cost [{currency}]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.legend([Patch(color=colours[i % len(colours)], alpha=0.6) for i in range(len(plans))], plans,
               loc="lower center", ncol=1, fontsize=8, frameon=False, title="Plan chosen", title_fontsize=8)
    fig.tight_layout(rect=(0, 0.04 + 0.055 * len(plans), 1, 1))
    return fig


def compare_chart(table: pd.DataFrame) -> Figure:
    """Total cost of each compared scenario or variant, its finish date written at the bar's end."""
    labels = [" / ".join(str(x) for x in (r.get("scenario"), r["variant"]) if x) for _, r in table.iterrows()]
    fig, ax = plt.subplots(figsize=(9, 0.5 * max(len(table), 3) + 1.5))
    ys = list(range(len(table)))[::-1]
    ax.barh(ys, table["total_cost"], color="tab:blue")
    for y, (_, r) in zip(ys, table.iterrows()):
        ax.annotate(f" {units.format_money(r['total_cost'], r['currency'])}, done {r['finish'] or '—'}", (r["total_cost"], y),
                    va="center", fontsize=8)
    ax.set_yticks(ys, labels, fontsize=8)
    currencies = sorted(set(table["currency"]))
    ax.set_xlabel(f"Total cost [{', '.join(currencies)}]")
    ax.set_title("Compared plans: total cost and finish")
    ax.margins(x=0.35)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


#: Bars a tornado draws at most (besides the inputs that flip the plan): a projector shows 15.
TORNADO_BARS = 15


def tornado(table: pd.DataFrame, currency: str, span: float) -> Figure:
    """How far the total cost moves when each input goes down / up; each label says what moved
    (counts move by whole steps and deadlines by whole days, so not always by the span); flips marked.
    Inputs that move nothing (under half a cent, no flip) are left to the table, which lists them;
    so are the smallest swings past the TORNADO_BARS largest (every flip is drawn)."""
    base = float(table["cost_base"].iloc[0]) if len(table) else 0.0
    moves: pd.Series | list = ((table["swing"] >= 0.005) | table["decision_flips"].astype(bool)) if len(table) else []
    drawn = table[moves]
    flips = drawn["decision_flips"].astype(bool) if len(drawn) else pd.Series([], dtype=bool)
    if len(drawn) > TORNADO_BARS:  # the largest swings and every flip, in the table's order
        keep = drawn["swing"].rank(ascending=False, method="first") <= TORNADO_BARS
        drawn = drawn[keep | flips]
    t = drawn.iloc[::-1]
    still = len(table) - len(t)
    fig, ax = plt.subplots(figsize=(10, 0.45 * max(len(t), 4) + 1.5))
    ys = range(len(t))
    ax.barh(ys, t["cost_low"] - base, left=base, color="tab:blue", label="input moved down")
    ax.barh(ys, t["cost_high"] - base, left=base, color="tab:orange", label="input moved up")
    names = [f"{r.input}: {r.low_value} / {r.value} / {r.high_value}{'  (flips the decision)' if r.decision_flips else ''}"
             for r in t.itertuples()]
    ax.set_yticks(list(ys), names, fontsize=8)
    ax.axvline(base, color="black", linewidth=0.8)
    fig.suptitle(f"Sensitivity of the total cost (base {units.format_money(base, currency)})\n"
                 f"inputs moved about ±{span:.0%}, default rates across their sourced range\n"
                 "labels: down / as given / up", fontsize=11)
    ax.set_xlabel(f"Total cost [{currency}]" + (f"; {still} input{'s' if still > 1 else ''} that "
                                                 f"move{'' if still > 1 else 's'} it little or nothing left to the "
                                                 "table" if still else ""))
    ax.set_ylabel("Input")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def uncertainty_chart(plan: Plan) -> Figure:
    """Each strategy's cost over the draws (P10-P90 bar, P50 tick, the draws' 5th-95th percentile
    whiskers) beside the chance it is the cheapest."""
    import numpy as np

    u = plan.uncertainty
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 0.6 * max(len(u.outcomes), 3) + 1.8),
                                 gridspec_kw={"width_ratios": [3, 1]}, sharey=True)
    ys = list(range(len(u.outcomes)))[::-1]
    for y, o in zip(ys, u.outcomes):
        p5, p10, p50, p90, p95 = np.quantile(o.cost_usd * per, [0.05, 0.1, 0.5, 0.9, 0.95])
        ax.plot([p5, p95], [y, y], color="grey", linewidth=1, label="5th to 95th percentile" if y == ys[0] else None)
        ax.barh(y, p90 - p10, left=p10, height=0.5, color="tab:blue", alpha=0.6,
                label="P10 to P90" if y == ys[0] else None)
        ax.plot([p50, p50], [y - 0.25, y + 0.25], color="black", linewidth=2, label="P50" if y == ys[0] else None)
    alias = u.aliases or {}
    ax.set_yticks(ys, [o.strategy + (f"\n(= {alias[o.strategy]})" if alias.get(o.strategy, o.strategy) != o.strategy
                                     else "") for o in u.outcomes])
    ax.set_xlabel(f"Total cost [{cur}]")
    ax.set_ylabel("Strategy")
    ax.set_title(f"Cost over {u.samples:,} draws of the uncertain inputs")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    bx.barh(ys, [u.p_cheapest.get(o.strategy, 0.0) for o in u.outcomes], height=0.5, color="tab:green")
    bx.set_xlim(0, 1)
    bx.set_xlabel("P(cheapest) [fraction of draws]")
    bx.set_title("Chance of being the cheapest")
    fig.tight_layout()
    return fig


def emissions(plan: Plan) -> Figure:
    """Cost against emissions: each strategy's best plan and each candidate card's, so the plan
    that emits least for its money stands out (planner.model.carbon). Each point is named beside
    it, unless its label would cover one already there: then its name joins that label, one
    under another (cards of one class land together). Whether labels meet is measured on the
    drawn chart; a share of the cost axis (20 %) stood for it, and "buy rtx-4090" stood beside
    the used 3090's square, 170 USD from its own, with room for both labels."""
    cur, per = plan.scenario.currency, 1.0 / plan.scenario.usd_per_currency
    fig, ax = plt.subplots(figsize=(8, 4.5))
    points = [(a.total_cost_usd * per, float(a.co2_kg), a.strategy, marker, color)
              for rows, marker, color in ((plan.alternatives, "o", "tab:blue"), (plan.candidates, "s", "tab:orange"))
              for a in rows if a.co2_kg is not None]
    for x, y, _, marker, color in points:
        ax.scatter([x], [y], marker=marker, color=color)
    ax.scatter([plan.total_usd * per], [plan.co2_kg], marker="*", s=180, color="tab:green", zorder=3,
               label="the chosen plan")
    ax.set_title("Cost against emissions: each strategy's best plan (circles) and each card's (squares)")
    ax.set_xlabel(f"Total cost [{cur}]")
    ax.set_ylabel("Emissions [kg CO2e]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    middle_y = (max(p[1] for p in points) + min(p[1] for p in points)) / 2 if points else 0.0
    labels: list[tuple[Any, list[str]]] = []  # (the label, its names)
    for x, y, name, _, _ in points:
        if any(name in names for _, names in labels):
            continue
        # upper labels hang down from their point, lower ones stand up: inside the axes
        label = ax.annotate(name, (x, y), textcoords="offset points", xytext=(6, 0), fontsize=8,
                            va="top" if y > middle_y else "bottom")
        box = label.get_window_extent(renderer)
        covered = next(((other, names) for other, names in labels
                        if other.get_window_extent(renderer).overlaps(box)), None)
        if covered is None:
            labels.append((label, [name]))
        else:
            label.remove()
            covered[1].append(name)
            covered[0].set_text("\n".join(covered[1]))
    fig.tight_layout()
    return fig


CHARTS = {"cumulative_cost": cumulative_cost, "breakeven": breakeven_chart, "schedule": schedule,
          "cost_breakdown": breakdown, "pareto": pareto, "uncertainty": uncertainty_chart, "emissions": emissions}
