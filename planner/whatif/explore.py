"""One interactive page for a lab meeting: sliders over the inputs that matter most.

The inputs are the sensitivity's (:func:`planner.whatif.sensitivity`): first those that change
the plan, then those that move the cost most. Each slider runs over values from the input's
low to its high value (the sensitivity's span, with the flip values found), and every
combination is planned beforehand (plain runs of the scenario with those inputs set, or the
plan of a neighbour that provably stands for one: :func:`_grid`), so
moving a slider only looks a plan up: the page needs no server and asks the network for
nothing (its Content-Security-Policy forbids any request).
"""

from __future__ import annotations

import dataclasses
import html
import itertools
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from ..executors import rounds
from . import tables as whatif

#: Sliders at most (a grid of their values is planned beforehand: 7 x 7 x 7 = 343 plans).
MAX_INPUTS = 3
#: Values per slider (odd: the input as given sits in the middle).
POINTS = 7


def chosen_inputs(table: pd.DataFrame, n: int = MAX_INPUTS) -> list[dict[str, Any]]:
    """The sensitivity rows of the inputs that matter most: those that change the plan (largest
    swing first; a price that brings an offer in only past the span, what it would take, counts:
    the lab's box that pays off at 30 % less), then the largest swings; inputs that move nothing
    are left out. A row whose flip lies past its low value has its low value moved past the flip
    (:func:`_past_the_flip`), so its slider crosses it."""
    beyond = table["flip_down_at"].astype(bool) if "flip_down_at" in table else pd.Series(False, index=table.index)
    flips = table["decision_flips"].astype(bool) | beyond
    moving = table[(table["swing"] > 0.005) | flips]
    order = moving.assign(_flips=flips[moving.index]).sort_values(
        ["_flips", "swing"], ascending=[False, False], kind="stable")
    return [_past_the_flip(dict(r)) for _, r in order.head(n).iterrows()]


#: How far past a flip found beyond the span a slider reaches (a share of the flip value).
PAST_THE_FLIP = 0.1


def _past_the_flip(row: dict[str, Any]) -> dict[str, Any]:
    """The row with its low value moved a tenth past a flip that lies below it (what it would
    take: the price at which a card or offer the plan leaves out comes in)."""
    at, low = row.get("flip_down_at"), row["low_value"]
    if not isinstance(at, str) or not at or "down" in str(row.get("decision_flips", "")):
        return row
    ma, ml = whatif._NUMBER.match(at), whatif._NUMBER.match(str(low))
    if not (ma and ml and ma.group(2).strip() == ml.group(2).strip() and float(ma.group(1)) < float(ml.group(1))):
        return row
    return {**row, "low_value": f"{whatif._figure(float(ma.group(1)) * (1 - PAST_THE_FLIP))}{ma.group(2)}"}


def slider_values(row: dict[str, Any], points: int = POINTS) -> list[Any]:
    """``points`` values from the input's low to its high value, the value as given in the
    middle, the flip values the sensitivity found in place of the nearest values between (the
    ends and the value as given stay); as the input is written (numbers with units, counts,
    dates), in order, none repeated."""
    low, value, high = row["low_value"], row["value"], row["high_value"]
    half = points // 2
    out = ([_towards(low, value, k / half) for k in range(half)] + [value]
           + [_towards(value, high, k / half) for k in range(1, half + 1)]) if half else [value]
    out = list(dict.fromkeys(v for v in out if v is not None))
    fixed = {value, out[0], out[-1]}
    for key in ("flip_down_kept", "flip_down_at", "flip_up_kept", "flip_up_at"):
        v = row.get(key)
        if v in (None, "") or (isinstance(v, float) and math.isnan(v)):
            continue
        flip = _typed_like(v, value)
        if flip in out:
            fixed.add(flip)
            continue
        free = [i for i, x in enumerate(out) if x not in fixed]
        if free:  # the nearest value not as given nor a flip makes way: the grid keeps its size
            out[min(free, key=lambda i: abs(_sort_key(out[i])[1] - _sort_key(flip)[1]))] = flip
            fixed.add(flip)
    return sorted(dict.fromkeys(out), key=_sort_key)


def _towards(a: Any, b: Any, t: float) -> Any | None:
    """The value a share ``t`` of the way from ``a`` to ``b``, written as they are."""
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        return round(a + (b - a) * t)
    if isinstance(a, float) or isinstance(b, float):
        return a + (b - a) * t
    if isinstance(a, str) and isinstance(b, str):
        if whatif.DATE.fullmatch(a) and whatif.DATE.fullmatch(b):
            import datetime as dt

            first, last = dt.date.fromisoformat(a), dt.date.fromisoformat(b)
            return (first + dt.timedelta(days=round((last - first).days * t))).isoformat()
        ma, mb = whatif._NUMBER.match(a), whatif._NUMBER.match(b)
        if ma and mb and ma.group(2).strip() == mb.group(2).strip():
            x, y = float(ma.group(1)), float(mb.group(1))
            return f"{whatif._figure(x + (y - x) * t)}{ma.group(2)}"
    return None


def _typed_like(v: Any, like: Any) -> Any:
    """A table cell (text in a CSV) as the input's own type (a count stays a count; a number
    written whole, such as 1 epoch, may move to a fraction)."""
    if isinstance(like, int) and not isinstance(like, bool):
        x = float(v)
        return int(x) if x.is_integer() else x
    if isinstance(like, float):
        return float(v)
    return str(v)


def _sort_key(v: Any) -> tuple:
    if isinstance(v, (int, float)):
        return (0, float(v), "")
    x = whatif.magnitude(str(v))
    return (0, x, "") if x is not None else (1, 0.0, str(v))


def explore(base: whatif.Job, span: float, workers: whatif.Workers = 1, n_inputs: int = MAX_INPUTS,
            points: int = POINTS, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Everything the page shows: the inputs (their key and slider values, the value as given),
    and a plan for every combination of slider positions, keyed by the positions."""
    planned = whatif.sensitivity_inputs(base, span)
    table = whatif.sensitivity(base, span, workers, None, planned)
    ref = planned[0]
    rows = chosen_inputs(table, n_inputs)
    axes = [(r["input"], slider_values(r, points), r["value"]) for r in rows]
    grid = list(itertools.product(*(range(len(values)) for _, values, _ in axes)))
    # an input at its value as given is left as it is (the value shown is rounded; the plan is not)
    started = dataclasses.replace(base, start=planned[2])  # each position's search starts from the base plan
    jobs = {combo: dataclasses.replace(whatif.with_values(started, [(key, values[i]) for (key, values, given), i
                                                                    in zip(axes, combo) if values[i] != given]),
                                       breakevens=False) for combo in grid}
    defaults = [bool(r.get("default_range")) for r in rows]
    planned_at = _grid(jobs, [(key, len(values), values.index(given) if d and given in values else None)
                              for (key, values, given), d in zip(axes, defaults)], workers, progress)
    results = [planned_at[combo] for combo in grid]
    return {
        "currency": ref["currency"],
        "base": _shown(ref),
        "inputs": [{"key": key, "values": [str(v) for v in values], "given": values.index(given) if given in values
                    else len(values) // 2} for key, values, given in axes],
        "plans": {",".join(map(str, combo)): _shown(r) for combo, r in zip(grid, results)},
        "sensitivity": table,
    }


def _grid(jobs: dict[tuple[int, ...], whatif.Job], axes: list[tuple[str, int, int | None]],
          workers: whatif.Workers, progress: Callable[[int], None] | None) -> dict[tuple[int, ...], dict[str, Any]]:
    """The row of every position: a plain run, or the row of a neighbour from which this position
    only makes an offer that neighbour's plan does not use worse (:func:`planner.whatif.tables.unchanged`:
    provably the same plan and cost). ``axes``: per slider its input, its number of values, and
    the index of a default with a range as given (planned over its range, it is no known rate to
    order against the others: no step to or from it is copied).

    A position waits for its better neighbours (one step towards a price's lowest, a resale's
    highest): it is copied as soon as one of them stands for it, and planned once all are known
    and none does. Each round plans every position so decided, on one pool for the whole grid.
    On the lab's boxes 326 of 343 positions copy a neighbour (the cheap box stays unbought as
    its price rises, the plan's rent offers stay as the others grow dearer), and the 17 others
    are planned in 12 rounds (three at a time at first, then one by one along a chain)."""
    sides = [whatif.worse_side(key) for key, _, _ in axes]

    def better(combo: tuple[int, ...]) -> list[tuple[str, str, tuple[int, ...]]]:
        """(input, the side that makes it worse, the neighbour one step better) per slider with one."""
        out = []
        for k, (side, (key, n, default)) in enumerate(zip(sides, axes)):
            j = combo[k] + (-1 if side == "up" else 1 if side == "down" else 0)
            if side and j != combo[k] and 0 <= j < n and default not in (j, combo[k]):
                out.append((key, side, (*combo[:k], j, *combo[k + 1:])))
        return out

    rows: dict[tuple[int, ...], dict[str, Any]] = {}
    waiting = sorted(jobs)
    with rounds(workers) as run:
        while waiting:
            copied = True
            while copied:  # a copy may decide positions beyond it
                copied = False
                for combo in waiting:
                    source = next((b for key, side, b in better(combo) if b in rows
                                   and whatif.unchanged(key, side, rows[b])), None)
                    if source is not None:
                        rows[combo] = rows[source]
                        copied = True
                if progress and copied:
                    progress(sum(c in rows for c in waiting))
                waiting = [c for c in waiting if c not in rows]
            if not waiting:
                break
            ready = [c for c in waiting if all(b in rows for _, _, b in better(c))]
            rows.update(zip(ready, run(whatif.run_one, [jobs[c] for c in ready])))
            if progress:
                progress(len(ready))
            waiting = [c for c in waiting if c not in rows]
    return rows


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    """What the page shows of one plan."""
    groups: dict[str, list[str]] = {}
    for part in str(row["plan"]).split("; "):
        name, _, where = part.partition(": ")
        if where:
            groups.setdefault(where, []).append(name)
    return {"cost": row["total_cost"], "buy": row["buy"], "feasible": bool(row["feasible"]),
            "finish": row.get("finish"), "where": [[where, names] for where, names in groups.items()],
            "signature": f"{row['buy']} | {row['plan']}"}


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}.slider{margin:1.2em 0}.slider label{display:block;font-weight:600}
.slider input{width:100%}.value{font-family:monospace}.answer{border:2px solid #444;border-radius:6px;padding:1em 1.4em}
.answer.changed{border-color:#c60}.cost{font-size:2em;font-weight:700}.note{color:#555}
li code,td code{font-size:.95em}.scale{display:flex;justify-content:space-between;color:#666;font-size:.85em}
</style></head><body>
<h1>__TITLE__</h1>
<p class="note">Move a slider: the plan shown is the cheapest that meets every deadline with the inputs at those
values, planned beforehand for every position (a plain run of the scenario, or the plan of a neighbouring position
that only makes an offer its plan leaves out dearer or worse: provably the same). Money in __CURRENCY__.__DEFAULTS__</p>
<div id="sliders"></div>
<p class="note" id="none" hidden>No input moved this far changes the plan or its cost: there is nothing to slide.</p>
<div class="answer" id="answer"><div class="cost" id="cost"></div><p id="decision"></p><ul id="where"></ul>
<p id="ontime"></p><p class="note" id="same"></p></div>
<script type="application/json" id="data">__DATA__</script>
<script>
const data = JSON.parse(document.getElementById("data").textContent);
const box = document.getElementById("sliders");
const pos = data.inputs.map(i => i.given);
if (!data.inputs.length) document.getElementById("none").hidden = false;
const hash = new URLSearchParams(location.hash.slice(1));
data.inputs.forEach((inp, k) => {
  if (hash.has("i" + k)) { const v = parseInt(hash.get("i" + k), 10); if (v >= 0 && v < inp.values.length) pos[k] = v; }
  const div = document.createElement("div"); div.className = "slider";
  const label = document.createElement("label"); label.htmlFor = "s" + k;
  const name = document.createElement("span"); name.textContent = inp.key + ": ";
  const val = document.createElement("span"); val.className = "value"; val.id = "v" + k;
  label.append(name, val);
  const input = document.createElement("input"); input.type = "range"; input.id = "s" + k;
  input.min = 0; input.max = inp.values.length - 1; input.step = 1; input.value = pos[k];
  input.addEventListener("input", () => { pos[k] = parseInt(input.value, 10); show(); });
  const scale = document.createElement("div"); scale.className = "scale";
  const lo = document.createElement("span"); lo.textContent = inp.values[0];
  const hi = document.createElement("span"); hi.textContent = inp.values[inp.values.length - 1];
  scale.append(lo, hi);
  div.append(label, input, scale); box.append(div);
});
function money(x) {
  if (x === null) return "—";
  return x.toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2}) + " " + data.currency;
}
function show() {
  data.inputs.forEach((inp, k) => {
    document.getElementById("v" + k).textContent = inp.values[pos[k]] + (pos[k] === inp.given ? " (as given)" : "");
  });
  const p = data.plans[pos.join(",")];
  document.getElementById("cost").textContent = money(p.cost);
  document.getElementById("decision").textContent = p.buy === "nothing" ? "Buy nothing." : "Buy " + p.buy + ".";
  const ul = document.getElementById("where"); ul.replaceChildren();
  p.where.forEach(([where, names]) => {
    const li = document.createElement("li"); const code = document.createElement("code"); code.textContent = where;
    li.append(names.join(", ") + " on ", code); ul.append(li);
  });
  document.getElementById("ontime").textContent = p.feasible ? "Meets every deadline."
    : "Cannot meet every deadline: the cost is that of the work it does, the rest left undone.";
  const same = p.signature === data.base.signature;
  document.getElementById("same").textContent = same ? "The plan as with every input as given."
    : "Another plan than with every input as given (" + money(data.base.cost) + ").";
  document.getElementById("answer").className = "answer" + (same ? "" : " changed");
}
show();
</script></body></html>
"""


def page(data: dict[str, Any], title: str) -> str:
    """The self-contained HTML page (inline data, script and style; no request allowed)."""
    payload = {k: v for k, v in data.items() if k != "sensitivity"}
    text = json.dumps(payload, ensure_ascii=False).replace("</", "<\\/")  # no '</script>' inside the data
    defaults = any(str(i["key"]).endswith(".interruptions") for i in data["inputs"])
    fills = {"__TITLE__": html.escape(title), "__CURRENCY__": html.escape(str(data["currency"])), "__DATA__": text,
             "__DEFAULTS__": (" An interruption rate no provider publishes is a default with a range: as given, the "
                              "plan costs the hours its range adds on average; at any other position the rate is "
                              "taken as known, so the cost steps at the value as given.") if defaults else ""}
    # one pass over the template: what is filled in is never read for a placeholder again (a
    # scenario named '__DATA__' is a title, not the page's data)
    return re.sub("|".join(fills), lambda m: fills[m.group(0)], _PAGE)
