"""The planning problem as a mixed-integer linear program, solved with HiGHS.

Staged as in PyPSA: :func:`build` makes the problem (testable without
solving), :func:`solve` runs ``scipy.optimize.milp``, :func:`schedule` reads
the solution back as a week-by-week table.

Variables
    x[p, o, w] >= 0   reference GPU-hours of phase p done on option o in week w
                      (only for weeks inside the phase's window and options that can run it)
    y[b] in {0, 1}    buy offer b is purchased
    h in {0, 1}       a host computer is bought (when the user has none)
    u[p] >= 0         work of phase p that no option can do in time (penalised)

Constraints (wall hours come from the session model as per-reference-hour factors)
    work       sum_{o,w} x[p, o, w] + u[p] = gpu_hours[p]
    per week   sum_p wall[p, o] x[p, o, w] <= window share x capacity, shared by the
               phases that use the same machine or account: a card you own or buy
               (168 h, times y[b]), a free tier's quota group (quota, starts by hand,
               session caps), a subscription's compute units; a rented instance runs
               one run at a time (168 h x runs per phase)
    starts     sum sessions[p, o] x[p, o, w] <= starts a day x 7 over tiers that need a person
    in all     sum wall x <= the tier's one-off hours (quota_h_total)
    host       y[b] <= h and x[p, own, w] <= gpu_hours[p] h (only without a host machine)
    budget     purchases + money per hour x <= budget

Objective: purchases - resale + host + money and time per reference hour x
(+ a tiny preference for earlier weeks, + a large penalty on u).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

HOURS_PER_WEEK = 168.0
UNMET_PENALTY_USD_PER_H = 1e7
EARLY_BONUS_USD_PER_H_WEEK = 1e-6
WEEKS_PER_MONTH = 52.1775 / 12


@dataclass
class Problem:
    """A built MILP with the maps needed to read its solution."""

    c: np.ndarray
    constraints: list[LinearConstraint]
    integrality: np.ndarray
    bounds: Bounds
    x_index: pd.DataFrame  # columns: var, phase, option, week, wall_per_ref, ...
    buy_index: dict[str, int]
    unmet_index: dict[str, int]
    host_index: int | None
    week_starts: list[dt.date]
    fixed_usd: float = 0.0
    names: list[str] = field(default_factory=list)

    @property
    def n_vars(self) -> int:
        return len(self.c)

    @property
    def n_constraints(self) -> int:
        return sum(con.A.shape[0] for con in self.constraints)


def _week_shares(start: dt.date, n_weeks: int, begin: dt.date, end: dt.date) -> np.ndarray:
    """Share of each week (from ``start``) inside [begin, end)."""
    out = np.zeros(n_weeks)
    for w in range(n_weeks):
        a = start + dt.timedelta(days=7 * w)
        b = a + dt.timedelta(days=7)
        days = (min(b, end) - max(a, begin)).days
        out[w] = max(0, days) / 7.0
    return out


def build(s, quotes: pd.DataFrame, opts: pd.DataFrame, purchase: dict[str, float], kinds: set[str],
          deadline_override: dict[str, dt.date] | None = None, budget_usd: float | None = None) -> Problem:
    """Build the MILP for the quotes whose kind is in ``kinds``.

    ``purchase[b]`` is the net purchase cost of buy option b (price - resale);
    ``deadline_override`` moves phase deadlines (for the Pareto front).
    """
    deadline_override = deadline_override or {}
    ends = {ph.name: deadline_override.get(ph.name, ph.deadline or s.horizon_end) for ph in s.phases}
    last = max([s.horizon_end, *ends.values()])
    n_weeks = max(1, math.ceil((last - s.start).days / 7))
    week_starts = [s.start + dt.timedelta(days=7 * w) for w in range(n_weeks)]
    phases = {ph.name: ph for ph in s.phases}

    q = quotes[quotes["kind"].isin(kinds) & np.isfinite(quotes["wall_hours"].astype(float))].copy()
    q = q[q["option"].isin(opts.loc[opts["kind"].isin(kinds), "option"])]
    gpu_h = q["phase"].map(lambda p: phases[p].gpu_hours)
    q["wall_per_ref"] = q["wall_hours"] / gpu_h
    q["sessions_per_ref"] = q["sessions"].astype(float) / gpu_h
    q["cost_per_ref"] = q["cost_usd"] / gpu_h
    q["money_per_ref"] = (q["cost_usd"] - q["your_time_usd"]) / gpu_h

    rows = []
    for r in q.itertuples():
        ph = phases[r.phase]
        shares = _week_shares(s.start, n_weeks, ph.start, ends[r.phase])
        for w in np.flatnonzero(shares > 0):
            rows.append((r.phase, r.option, int(w), shares[w]))
    xi = pd.DataFrame(rows, columns=["phase", "option", "week", "share"])
    xi = xi.merge(q, on=["phase", "option"], how="left")
    xi["var"] = np.arange(len(xi))
    buys = sorted(set(q.loc[q["kind"] == "buy", "option"]) & set(purchase))
    buy_index = {b: len(xi) + i for i, b in enumerate(buys)}
    unmet_index = {p: len(xi) + len(buys) + i for i, p in enumerate(phases)}
    needs_host = (not s.you.host_machine) and s.you.host_price_usd is not None
    host_index = len(xi) + len(buys) + len(phases) if needs_host else None
    n = len(xi) + len(buys) + len(phases) + (1 if needs_host else 0)

    c = np.zeros(n)
    c[: len(xi)] = xi["cost_per_ref"].to_numpy(dtype=float) + EARLY_BONUS_USD_PER_H_WEEK * xi["week"].to_numpy()
    for b, j in buy_index.items():
        c[j] = purchase[b]
    for p, j in unmet_index.items():
        c[j] = UNMET_PENALTY_USD_PER_H
    if host_index is not None:
        c[host_index] = s.you.host_price_usd

    blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    n_rows = 0

    def add_block(row, col, val, lower, upper):
        """Rows numbered 0..k-1 within the block; shifted after the rows so far."""
        nonlocal n_rows
        blocks.append((np.asarray(row) + n_rows, np.asarray(col), np.asarray(val, dtype=float),
                       np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)))
        n_rows += len(lower)

    var = xi["var"].to_numpy()
    wall = xi["wall_per_ref"].to_numpy(dtype=float)
    share = xi["share"].to_numpy(dtype=float)

    # work: one row per phase, x and the unmet slack
    names = list(phases)
    prow = xi["phase"].map({p: i for i, p in enumerate(names)}).to_numpy()
    hours = np.array([phases[p].gpu_hours for p in names])
    add_block(np.concatenate([prow, np.arange(len(names))]),
              np.concatenate([var, [unmet_index[p] for p in names]]),
              np.ones(len(var) + len(names)), hours, hours)

    # capacity per week, by machine or account
    kind = xi["kind"].to_numpy()
    group = np.where(np.isin(kind, ["own", "buy"]), "machine:" + xi["option"],
                     np.where(kind == "free", "account:" + xi["quota_group"].astype(str),
                              "rent:" + xi["phase"] + ":" + xi["option"]))
    xi["group"] = group
    xi["units_known"] = xi["units_per_hour"].notna()
    gw = xi.groupby(["group", "week"], sort=True)
    gid = gw.ngroup().to_numpy()
    agg = gw.agg(share=("share", "max"), kind=("kind", "first"), option=("option", "first"),
                 phase=("phase", "first"), cap=("weekly_capacity_h", "max"), cap_min=("weekly_capacity_h", "min"),
                 units_known=("units_known", "min"))
    runs = agg["phase"].map(lambda p: phases[p].runs).to_numpy()
    upper = np.where(agg["kind"].isin(["own"]), HOURS_PER_WEEK * agg["share"],
                     np.where(agg["kind"] == "rent", HOURS_PER_WEEK * agg["share"] * runs,
                              np.where(agg["kind"] == "free",
                                       np.where(agg["units_known"].astype(bool), agg["cap"], agg["cap_min"])
                                       * agg["share"], 0.0)))
    is_buy = (agg["kind"] == "buy").to_numpy()
    buy_rows = np.flatnonzero(is_buy)
    add_block(np.concatenate([gid, buy_rows]),
              np.concatenate([var, [buy_index[o] for o in agg["option"].to_numpy()[is_buy]]]),
              np.concatenate([wall, -HOURS_PER_WEEK * agg["share"].to_numpy()[is_buy]]),
              np.full(len(agg), -np.inf), upper)

    # a subscription's compute units a week
    units = xi["units_per_hour"].astype(float).to_numpy()
    sub = np.flatnonzero(np.isfinite(units) & xi["cap_h_per_month"].notna().to_numpy())
    if sub.size:
        xs = xi.iloc[sub].assign(units_month=lambda d: d["cap_h_per_month"] * d["units_per_hour"])
        g = xs.groupby(["group", "week"], sort=True)
        rid = g.ngroup().to_numpy()
        units_week = g["units_month"].max().to_numpy() / WEEKS_PER_MONTH
        add_block(rid, var[sub], wall[sub] * units[sub], np.full(len(units_week), -np.inf),
                  units_week * g["share"].max().to_numpy())

    # starts by hand, shared by every tier that needs a person
    person = np.flatnonzero(xi["needs_person"].fillna(False).astype(bool).to_numpy())
    if person.size:
        weeks = xi["week"].to_numpy()[person]
        uniq, rid = np.unique(weeks, return_inverse=True)
        wshare = pd.Series(share[person]).groupby(rid).max().to_numpy()
        add_block(rid, var[person], xi["sessions_per_ref"].to_numpy(dtype=float)[person],
                  np.full(len(uniq), -np.inf), s.you.attention_starts_per_day * 7.0 * wshare)

    # one-off hours
    once = np.flatnonzero(xi["quota_h_total"].notna().to_numpy())
    if once.size:
        groups, rid = np.unique(group[once], return_inverse=True)
        limit = pd.Series(xi["quota_h_total"].to_numpy(dtype=float)[once]).groupby(rid).min().to_numpy()
        add_block(rid, var[once], wall[once], np.full(len(groups), -np.inf), limit)

    # host computer: buying a card or using your own needs it
    if host_index is not None:
        b_cols = list(buy_index.values())
        if b_cols:
            k = len(b_cols)
            add_block(np.repeat(np.arange(k), 2), np.ravel([[j, host_index] for j in b_cols]),
                      np.tile([1.0, -1.0], k), np.full(k, -np.inf), np.zeros(k))
        own = np.flatnonzero(kind == "own")
        if own.size:
            big = xi["phase"].map(lambda p: phases[p].gpu_hours).to_numpy(dtype=float)[own]
            add_block(np.repeat(np.arange(own.size), 2), np.ravel(np.column_stack([var[own], np.full(own.size,
                      host_index)])), np.ravel(np.column_stack([np.ones(own.size), -big])),
                      np.full(own.size, -np.inf), np.zeros(own.size))

    # budget (money only)
    budget = budget_usd if budget_usd is not None else s.you.budget_usd
    if budget is not None and math.isfinite(budget):
        cols = [*var, *buy_index.values()] + ([host_index] if host_index is not None else [])
        vals = [*xi["money_per_ref"].to_numpy(dtype=float), *(purchase[b] for b in buy_index)]
        vals += [s.you.host_price_usd] if host_index is not None else []
        add_block(np.zeros(len(cols), dtype=int), cols, vals, [-np.inf], [budget])

    rows_a = np.concatenate([b[0] for b in blocks]) if blocks else np.zeros(0, dtype=int)
    cols_a = np.concatenate([b[1] for b in blocks]) if blocks else np.zeros(0, dtype=int)
    vals_a = np.concatenate([b[2] for b in blocks]) if blocks else np.zeros(0)
    lo = np.concatenate([b[3] for b in blocks]) if blocks else np.zeros(0)
    hi = np.concatenate([b[4] for b in blocks]) if blocks else np.zeros(0)
    a = sparse.csr_array((vals_a, (rows_a.astype(int), cols_a.astype(int))), shape=(len(lo), n))
    integrality = np.zeros(n)
    ub = np.full(n, np.inf)
    for j in buy_index.values():
        integrality[j], ub[j] = 1, 1
    if host_index is not None:
        integrality[host_index], ub[host_index] = 1, 1
    return Problem(c, [LinearConstraint(a, lo, hi)] if len(lo) else [], integrality, Bounds(np.zeros(n), ub),
                   xi, buy_index, unmet_index, host_index, week_starts)


@dataclass(frozen=True)
class Solution:
    ok: bool
    x: np.ndarray
    objective: float
    message: str


def solve(problem: Problem, time_limit_s: float = 30.0) -> Solution:
    """Solve with HiGHS; the unmet-work slack keeps every problem feasible but the budget."""
    if problem.n_vars == 0:
        return Solution(True, np.zeros(0), 0.0, "empty")
    res = milp(problem.c, constraints=problem.constraints, integrality=problem.integrality, bounds=problem.bounds,
               options={"time_limit": time_limit_s, "mip_rel_gap": 1e-7})
    if res.x is None:
        return Solution(False, np.zeros(problem.n_vars), math.inf, res.message)
    x = np.where(np.abs(res.x) < 1e-7, 0.0, res.x)
    return Solution(res.status == 0, x, float(problem.c @ x), res.message)


def schedule(problem: Problem, sol: Solution) -> pd.DataFrame:
    """Week-by-week reference hours per (phase, option) with positive work."""
    xi = problem.x_index
    out = xi[["phase", "option", "kind", "week"]].copy()
    out["gpu_hours"] = sol.x[: len(xi)]
    out["wall_hours"] = out["gpu_hours"] * xi["wall_per_ref"]
    out = out[out["gpu_hours"] > 1e-6].reset_index(drop=True)
    out["week_start"] = [problem.week_starts[w] for w in out["week"]]
    return out


def purchases(problem: Problem, sol: Solution) -> list[str]:
    return [b for b, j in problem.buy_index.items() if sol.x[j] > 0.5]


def unmet(problem: Problem, sol: Solution) -> dict[str, float]:
    return {p: float(sol.x[j]) for p, j in problem.unmet_index.items() if sol.x[j] > 1e-6}


def bought_host(problem: Problem, sol: Solution) -> bool:
    return problem.host_index is not None and sol.x[problem.host_index] > 0.5
