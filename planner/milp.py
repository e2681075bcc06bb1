"""The planning problem as a mixed-integer linear program, solved with HiGHS.

Staged as in PyPSA: :func:`build` makes the program (testable without
solving) from one function per constraint family, each returning a
:class:`Block` of named rows; :func:`solve` runs ``scipy.optimize.milp``;
:func:`schedule` and :func:`finishes` read the solution back.

Time is cut into weeks from the scenario's start; a :class:`Calendar` knows,
day by day, which days of each week lie inside each phase's window (``from``
and ``deadline`` inclusive), so a phase that covers two days of a week gets
two days' worth of hours in it, whatever other phases do.

Variables
    x[p, o, w] >= 0   reference GPU-hours of phase p done on option o in week w
                      (only weeks with days in the phase's window), at most the
                      option's capacity over those days
    y[b] in {0, 1}    buy offer b is purchased
    h in {0, 1}       a host computer is bought (when the user has none)
    u[p] >= 0         work of phase p that no option can do in time (penalised)

Constraint families (wall hours come from the session model as factors per reference hour)
    work          sum_{o,w} x[p, o, w] + u[p] = gpu_hours[p]
    concurrency   a run is sequential: per phase and week, wall hours over all options
                  <= runs x 24 h x the window's days in that week
    machine       a card you own or buy: wall hours of every phase <= 24 h x the days of the
                  week inside any of their windows (x y[b] for a card bought)
    account       a free tier's quota group: its weekly capacity, pro rata to those days
    subscription  compute units a week
    starts        sessions started by hand <= starts a day x days
    once          a tier's one-off hours
    host          y[b] <= h and x[p, own, w] <= gpu_hours[p] h (only without a host machine)
    budget        purchases + money per hour x <= budget

Objective: purchases - resale + host + money and time per reference hour x,
+ a large penalty on u, + tie-breaks far below a cent (:data:`TIE_BREAKS`).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from .sessions import finish_day, parallel_runs
from .units import HOURS_PER_WEEK, WEEKS_PER_MONTH

UNMET_PENALTY_USD_PER_H = 1e7
#: Plans of equal cost are told apart, in this order of weight, by: fewer sessions
#: started by hand, fewer wall hours (less overhead), earlier weeks, and last the
#: option id in alphabetical order (so equal free tiers never swap between runs).
#: Each weight is far below a cent over any real plan and far above HiGHS' tolerances.
TIE_BREAKS = {"restart_by_hand": 1e-3, "wall_hour": 1e-4, "week": 1e-6, "option_rank": 1e-7}
HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class Calendar:
    """Weeks from the scenario's start and, per phase, which of their days are in its window."""

    start: dt.date
    n_weeks: int
    days: dict[str, np.ndarray]  # phase -> bool array (n_weeks, 7)

    @classmethod
    def of(cls, s, deadline_override: dict[str, dt.date] | None = None) -> Calendar:
        override = deadline_override or {}
        windows = {ph.name: s.window(ph, override.get(ph.name)) for ph in s.phases}
        last = max([s.horizon_end, *(end for _, end in windows.values())])
        n_weeks = max(1, math.ceil((last - s.start).days / 7))
        day = np.arange(n_weeks * 7)
        days = {p: ((day >= (b - s.start).days) & (day < (e - s.start).days)).reshape(n_weeks, 7)
                for p, (b, e) in windows.items()}
        return cls(s.start, n_weeks, days)

    @cached_property
    def week_starts(self) -> list[dt.date]:
        return [self.start + dt.timedelta(days=7 * w) for w in range(self.n_weeks)]

    def share(self, phase: str) -> np.ndarray:
        """Share of each week inside the phase's window (0..1)."""
        return self.days[phase].mean(axis=1)

    def union_share(self, phases) -> np.ndarray:
        """Share of each week inside the window of any of ``phases``."""
        return np.logical_or.reduce([self.days[p] for p in phases]).mean(axis=1)

    def week_label(self, w: int) -> str:
        return (self.start + dt.timedelta(days=7 * int(w))).isoformat()


@dataclass(frozen=True)
class Block:
    """Rows of one constraint family: lower <= A[rows] x <= upper, one label per row."""

    family: str
    labels: list[str]
    row: np.ndarray
    col: np.ndarray
    val: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, family, labels, row, col, val, lower, upper) -> Block:
        n = len(labels)
        return cls(family, list(labels), np.asarray(row, dtype=int), np.asarray(col, dtype=int),
                   np.asarray(val, dtype=float), np.broadcast_to(np.asarray(lower, dtype=float), (n,)),
                   np.broadcast_to(np.asarray(upper, dtype=float), (n,)))


@dataclass
class Program:
    """A built MILP with the maps needed to read its solution."""

    c: np.ndarray
    blocks: list[Block]
    integrality: np.ndarray
    bounds: Bounds
    x_index: pd.DataFrame  # one row per x variable: phase, option, week, share, wall_per_ref, ...
    buy_index: dict[str, int]
    unmet_index: dict[str, int]
    host_index: int | None
    calendar: Calendar

    @property
    def n_vars(self) -> int:
        return len(self.c)

    @property
    def n_constraints(self) -> int:
        return sum(len(b.labels) for b in self.blocks)

    @property
    def week_starts(self) -> list[dt.date]:
        return self.calendar.week_starts

    def block(self, family: str) -> Block | None:
        return next((b for b in self.blocks if b.family == family), None)

    def constraints(self) -> list[LinearConstraint]:
        if not self.blocks:
            return []
        offsets = np.cumsum([0] + [len(b.labels) for b in self.blocks])
        rows = np.concatenate([b.row + off for b, off in zip(self.blocks, offsets)])
        from scipy import sparse
        from scipy.optimize import LinearConstraint

        a = sparse.csr_array((np.concatenate([b.val for b in self.blocks]),
                              (rows, np.concatenate([b.col for b in self.blocks]))),
                             shape=(int(offsets[-1]), self.n_vars))
        return [LinearConstraint(a, np.concatenate([b.lower for b in self.blocks]),
                                 np.concatenate([b.upper for b in self.blocks]))]


# --------------------------------------------------------------------------- variables


#: The quote columns the program reads.
COLUMNS = ["phase", "option", "kind", "wall_hours", "sessions", "restarts_by_hand", "cost_usd", "your_time_usd",
           "weekly_capacity_h", "units_per_hour", "cap_h_per_month", "quota_group", "needs_person", "quota_h_total"]


def _variables(s, cal: Calendar, quotes: pd.DataFrame) -> pd.DataFrame:
    """One x variable per (quote, week with days in the phase's window), with per-reference-hour
    factors: each quote's row repeated over its phase's weeks, in quote then week order."""
    phases = {ph.name: ph for ph in s.phases}
    names = quotes["phase"].to_numpy()
    gpu_h = np.array([phases[p].gpu_hours for p in names], dtype=float)
    runs = np.array([phases[p].runs for p in names], dtype=int)
    shares = {p: cal.share(p) for p in phases}
    weeks = {p: np.flatnonzero(share > 0) for p, share in shares.items()}
    take = np.repeat(np.arange(len(names)), [len(weeks[p]) for p in names]).astype(int)
    kind, option = quotes["kind"].to_numpy(), quotes["option"].to_numpy()
    group = np.array([f"machine:{o}" if k in ("own", "buy") else f"account:{g}" if k == "free" else f"rent:{o}"
                      for k, o, g in zip(kind, option, quotes["quota_group"].to_numpy())], dtype=object)
    per_ref = {
        "wall_per_ref": quotes["wall_hours"].to_numpy(dtype=float) / gpu_h,
        "sessions_per_ref": quotes["sessions"].to_numpy(dtype=float) / gpu_h,
        "restarts_per_ref": quotes["restarts_by_hand"].to_numpy(dtype=float) / gpu_h,
        "cost_per_ref": quotes["cost_usd"].to_numpy(dtype=float) / gpu_h,
        "money_per_ref": (quotes["cost_usd"].to_numpy(dtype=float) - quotes["your_time_usd"].to_numpy(dtype=float)) / gpu_h,
    }
    xi = pd.DataFrame({c: quotes[c].to_numpy()[take] for c in COLUMNS})
    xi["runs"] = runs[take]
    for c, v in per_ref.items():
        xi[c] = v[take]
    xi["parallel"] = np.array([parallel_runs(k, r) for k, r in zip(kind, runs)], dtype=int)[take]
    xi["week"] = np.concatenate([weeks[p] for p in names]) if len(names) else np.zeros(0, dtype=int)
    xi["share"] = np.concatenate([shares[p][weeks[p]] for p in names]) if len(names) else np.zeros(0)
    xi["var"] = np.arange(len(xi))
    xi["group"] = group[take]
    return xi


def _objective(xi: pd.DataFrame, n: int) -> np.ndarray:
    rank = xi["option"].map({o: i for i, o in enumerate(sorted(xi["option"].unique()))}).to_numpy(dtype=float)
    c = np.zeros(n)
    c[: len(xi)] = (xi["cost_per_ref"].to_numpy(dtype=float)
                    + TIE_BREAKS["restart_by_hand"] * xi["restarts_per_ref"].to_numpy(dtype=float)
                    + TIE_BREAKS["wall_hour"] * xi["wall_per_ref"].to_numpy(dtype=float)
                    + TIE_BREAKS["week"] * xi["week"].to_numpy(dtype=float)
                    + TIE_BREAKS["option_rank"] * rank)
    return c


def _upper_bounds(xi: pd.DataFrame) -> np.ndarray:
    """x[p, o, w] at most what the option can run over the phase's days of that week."""
    cap = xi["weekly_capacity_h"].to_numpy(dtype=float) * xi["parallel"].to_numpy(dtype=float)
    wall = xi["wall_per_ref"].to_numpy(dtype=float)
    return np.where(wall > 0, cap * xi["share"].to_numpy(dtype=float) / np.where(wall > 0, wall, 1.0), np.inf)


# --------------------------------------------------------------------------- constraint families


def work(xi: pd.DataFrame, s, unmet_index: dict[str, int]) -> Block:
    """Each phase's reference hours are done, or left undone (penalised)."""
    names = list(unmet_index)
    prow = xi["phase"].map({p: i for i, p in enumerate(names)}).to_numpy()
    hours = np.array([s.phase(p).gpu_hours for p in names])
    return Block.of("work", names, np.concatenate([prow, np.arange(len(names))]),
                    np.concatenate([xi["var"].to_numpy(), list(unmet_index.values())]),
                    np.ones(len(xi) + len(names)), hours, hours)


def _rows(codes: np.ndarray, week: np.ndarray, cal: Calendar) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Constraint rows per (code, week), sorted by code then week: (each x's row, the first x
    of each row, each row's code and week)."""
    span = cal.n_weeks + 1
    uniq, first, rid = np.unique(codes.astype(np.int64) * span + week.astype(np.int64), return_index=True,
                                 return_inverse=True)
    return rid.reshape(-1), first, uniq // span, uniq % span


def concurrency(xi: pd.DataFrame, cal: Calendar) -> Block:
    """A run never runs on two machines at once: per phase and week, wall hours over every
    option <= runs x 24 h x the window's days that week."""
    codes, names = pd.factorize(xi["phase"].to_numpy(), sort=True)
    rid, first, code, week = _rows(codes, xi["week"].to_numpy(), cal)
    runs = xi["runs"].to_numpy()[first]
    upper = np.array([r * HOURS_PER_DAY * cal.days[names[c]][w].sum() for r, c, w in zip(runs, code, week)])
    return Block.of("concurrency", [f"{names[c]} week {cal.week_label(w)}" for c, w in zip(code, week)], rid,
                    xi["var"].to_numpy(), xi["wall_per_ref"].to_numpy(dtype=float), -np.inf, upper)


@dataclass(frozen=True)
class _Shared:
    """Rows per (group, week) over some x, sorted by group then week (see :func:`_shared`)."""

    var: np.ndarray  # the x and their wall hours per reference hour
    wall_per_ref: np.ndarray
    rid: np.ndarray  # each x's row
    labels: list[str]  # each row's "group week YYYY-MM-DD"
    kind: np.ndarray  # each row's kind and option (of its first x)
    option: np.ndarray
    cap: np.ndarray  # largest and smallest weekly capacity of the row's x
    cap_min: np.ndarray
    units_known: np.ndarray  # every x of the row has its compute units a hour
    share: np.ndarray  # the union share of the week over the group's phases


def _shared(xi: pd.DataFrame, cal: Calendar, kinds: list[str]) -> _Shared:
    """Rows per (group, week) over the x of ``kinds``, with the union share of the group's
    phases. In numpy: this runs twice per program."""
    at = np.flatnonzero(np.isin(xi["kind"].to_numpy(), kinds))
    codes, names = pd.factorize(xi["group"].to_numpy()[at], sort=True)
    rid, first, group_code, week = _rows(codes, xi["week"].to_numpy()[at], cal)
    cap = xi["weekly_capacity_h"].to_numpy(dtype=float)[at]
    cap_max, cap_min = np.full(len(first), -np.inf), np.full(len(first), np.inf)
    np.maximum.at(cap_max, rid, cap)
    np.minimum.at(cap_min, rid, cap)
    missing_units = np.zeros(len(first), dtype=bool)
    np.logical_or.at(missing_units, rid, np.isnan(xi["units_per_hour"].to_numpy(dtype=float)[at]))
    phases = [set() for _ in names]
    for c, p in zip(codes, xi["phase"].to_numpy()[at]):
        phases[c].add(p)
    share = (np.array([cal.union_share(sorted(ps)) for ps in phases])[group_code, week] if len(first)
             else np.zeros(0))
    return _Shared(xi["var"].to_numpy()[at], xi["wall_per_ref"].to_numpy(dtype=float)[at], rid,
                   [f"{names[c]} week {cal.week_label(w)}" for c, w in zip(group_code, week)],
                   xi["kind"].to_numpy()[at][first], xi["option"].to_numpy()[at][first], cap_max, cap_min,
                   ~missing_units, share)


def machine(xi: pd.DataFrame, cal: Calendar, buy_index: dict[str, int]) -> Block:
    """A card runs one thing at a time: 24 h a day over the days any of its phases may use."""
    g = _shared(xi, cal, ["own", "buy"])
    is_buy = g.kind == "buy"
    buy_rows = np.flatnonzero(is_buy)
    upper = np.where(is_buy, 0.0, HOURS_PER_WEEK * g.share)
    return Block.of("machine", g.labels, np.concatenate([g.rid, buy_rows]),
                    np.concatenate([g.var, [buy_index[o] for o in g.option[is_buy]]]),
                    np.concatenate([g.wall_per_ref, -HOURS_PER_WEEK * g.share[is_buy]]),
                    -np.inf, upper)


def account(xi: pd.DataFrame, cal: Calendar) -> Block:
    """A free tier's account: its weekly capacity (quota, session caps, starts), pro rata to the
    days its phases may use."""
    g = _shared(xi, cal, ["free"])
    cap = np.where(g.units_known, g.cap, g.cap_min).astype(float)
    return Block.of("account", g.labels, g.rid, g.var, g.wall_per_ref, -np.inf, cap * g.share)


def subscription(xi: pd.DataFrame, cal: Calendar) -> Block:
    """A subscription's compute units a week (its monthly units spread over the month's weeks)."""
    units = xi["units_per_hour"].to_numpy(dtype=float)
    months = xi["cap_h_per_month"].to_numpy(dtype=float)
    at = np.flatnonzero(np.isfinite(units) & np.isfinite(months))
    if not len(at):
        return Block.of("subscription", [], [], [], [], -np.inf, [])
    codes, names = pd.factorize(xi["group"].to_numpy()[at], sort=True)
    rid, first, group_code, week = _rows(codes, xi["week"].to_numpy()[at], cal)
    units_month = np.full(len(first), -np.inf)
    np.maximum.at(units_month, rid, months[at] * units[at])
    phases = [set() for _ in names]
    for c, p in zip(codes, xi["phase"].to_numpy()[at]):
        phases[c].add(p)
    union = [cal.union_share(sorted(ps)) for ps in phases]
    share = np.array([union[c][w] for c, w in zip(group_code, week)])
    return Block.of("subscription", [f"{names[c]} week {cal.week_label(w)}" for c, w in zip(group_code, week)],
                    rid, xi["var"].to_numpy()[at], xi["wall_per_ref"].to_numpy(dtype=float)[at] * units[at],
                    -np.inf, units_month / WEEKS_PER_MONTH * share)


def starts(xi: pd.DataFrame, cal: Calendar, starts_per_day: float) -> Block:
    """Sessions started by hand, over every tier that needs a person, per week."""
    sel = xi[xi["needs_person"].fillna(False).astype(bool)]
    weeks, rid = np.unique(sel["week"].to_numpy(), return_inverse=True)
    union = cal.union_share(list(sel["phase"].unique())) if len(sel) else np.zeros(cal.n_weeks)
    return Block.of("starts", [f"week {cal.week_label(w)}" for w in weeks], rid, sel["var"].to_numpy(),
                    sel["sessions_per_ref"].to_numpy(dtype=float), -np.inf, starts_per_day * 7.0 * union[weeks])


def once(xi: pd.DataFrame) -> Block:
    """A tier's hours granted once, over the whole plan."""
    sel = xi[xi["quota_h_total"].notna()]
    groups, rid = np.unique(sel["group"].to_numpy(), return_inverse=True)
    limit = pd.Series(sel["quota_h_total"].to_numpy(dtype=float)).groupby(rid).min().to_numpy()
    return Block.of("once", list(groups), rid, sel["var"].to_numpy(), sel["wall_per_ref"].to_numpy(dtype=float),
                    -np.inf, limit)


def host(xi: pd.DataFrame, s, buy_index: dict[str, int], host_index: int) -> Block:
    """Without a host machine, a card bought or owned needs the host computer bought."""
    b_cols = list(buy_index.values())
    own = xi[xi["kind"] == "own"]
    big = own["phase"].map(lambda p: s.phase(p).gpu_hours).to_numpy(dtype=float)
    k, m = len(b_cols), len(own)
    row = np.concatenate([np.repeat(np.arange(k), 2), k + np.repeat(np.arange(m), 2)])
    col = np.concatenate([np.ravel([[j, host_index] for j in b_cols]) if k else np.zeros(0),
                          np.ravel(np.column_stack([own["var"].to_numpy(), np.full(m, host_index)]))])
    val = np.concatenate([np.tile([1.0, -1.0], k), np.ravel(np.column_stack([np.ones(m), -big]))])
    return Block.of("host", [*buy_index, *(f"{o} week {w}" for o, w in zip(own["option"], own["week"]))],
                    row, col, val, -np.inf, 0.0)


def budget(xi: pd.DataFrame, purchase: dict[str, float], buy_index, host_index, host_usd, budget_usd) -> Block:
    """Money spent (purchases, host, rent, electricity, storage, egress) <= the budget."""
    cols = [*xi["var"], *buy_index.values()] + ([host_index] if host_index is not None else [])
    vals = [*xi["money_per_ref"].to_numpy(dtype=float), *(purchase[b] for b in buy_index)]
    vals += [host_usd] if host_index is not None else []
    return Block.of("budget", ["budget"], np.zeros(len(cols)), cols, vals, -np.inf, budget_usd)


# --------------------------------------------------------------------------- build, solve, read back


def build(s, quotes: pd.DataFrame, opts: pd.DataFrame, purchase: dict[str, float], kinds: set[str],
          deadline_override: dict[str, dt.date] | None = None, budget_usd: float | None = None) -> Program:
    """Build the MILP for the quotes whose kind is in ``kinds``.

    ``purchase[b]`` is the net purchase cost of buy option b (price - resale);
    ``deadline_override`` moves phase deadlines (for the Pareto front).
    """
    cal = Calendar.of(s, deadline_override)
    q = quotes.loc[quotes["kind"].isin(kinds).to_numpy() & quotes["usable"].to_numpy(dtype=bool)
                   & np.isfinite(quotes["wall_hours"].to_numpy(dtype=float))
                   & quotes["option"].isin(opts.loc[opts["kind"].isin(kinds), "option"]).to_numpy(), COLUMNS]
    xi = _variables(s, cal, q)
    nx = len(xi)
    buys = sorted(set(q.loc[q["kind"] == "buy", "option"]) & set(purchase))
    buy_index = {b: nx + i for i, b in enumerate(buys)}
    unmet_index = {ph.name: nx + len(buys) + i for i, ph in enumerate(s.phases)}
    needs_host = s.you.buys_host
    host_index = nx + len(buys) + len(s.phases) if needs_host else None
    n = nx + len(buys) + len(s.phases) + (1 if needs_host else 0)

    c = _objective(xi, n)
    for b, j in buy_index.items():
        c[j] = purchase[b]
    for j in unmet_index.values():
        c[j] = UNMET_PENALTY_USD_PER_H
    if host_index is not None:
        c[host_index] = s.you.host_usd

    blocks = [work(xi, s, unmet_index), concurrency(xi, cal), machine(xi, cal, buy_index), account(xi, cal),
              subscription(xi, cal), starts(xi, cal, s.you.attention_starts_per_day), once(xi)]
    if host_index is not None:
        blocks.append(host(xi, s, buy_index, host_index))
    limit = budget_usd if budget_usd is not None else s.you.budget_usd
    if limit is not None and math.isfinite(limit):
        blocks.append(budget(xi, purchase, buy_index, host_index, s.you.host_usd, limit))
    blocks = [b for b in blocks if b.labels]

    integrality = np.zeros(n)
    ub = np.full(n, np.inf)
    ub[:nx] = _upper_bounds(xi)
    for j in [*buy_index.values(), *([host_index] if host_index is not None else [])]:
        integrality[j], ub[j] = 1, 1
    from scipy.optimize import Bounds  # scipy loads only when a plan is built

    return Program(c, blocks, integrality, Bounds(np.zeros(n), ub), xi, buy_index, unmet_index, host_index, cal)


@dataclass(frozen=True)
class Solution:
    ok: bool
    x: np.ndarray
    objective: float
    message: str


def solve(program: Program, time_limit_s: float = 30.0) -> Solution:
    """Solve with HiGHS; the unmet-work slack keeps every program feasible but the budget.

    ``ok`` is false when HiGHS returns no proven optimum (time limit, numerical trouble):
    the caller must not read such a solution as a plan.
    """
    if program.n_vars == 0:
        return Solution(True, np.zeros(0), 0.0, "empty")
    from scipy.optimize import milp

    res = milp(program.c, constraints=program.constraints(), integrality=program.integrality,
               bounds=program.bounds, options={"time_limit": time_limit_s, "mip_rel_gap": 1e-7})
    if res.x is None:
        return Solution(False, np.zeros(program.n_vars), math.inf, res.message)
    x = np.where(np.abs(res.x) < 1e-7, 0.0, res.x)
    return Solution(res.status == 0, x, float(program.c @ x), res.message)


def schedule(program: Program, sol: Solution) -> pd.DataFrame:
    """Week-by-week reference hours per (phase, option) with positive work."""
    xi = program.x_index
    out = xi[["phase", "option", "kind", "week"]].copy()
    out["gpu_hours"] = sol.x[: len(xi)]
    out["wall_hours"] = out["gpu_hours"] * xi["wall_per_ref"]
    out = out[out["gpu_hours"] > 1e-6].reset_index(drop=True)
    out["week_start"] = [program.week_starts[w] for w in out["week"]]
    return out


def days_needed(wall_h: np.ndarray, weekly_capacity_h: np.ndarray, parallel: np.ndarray, runs: int) -> float:
    """Days one phase's wall hours in a week take: the runs share 24 h a day each, and no option
    goes faster than its weekly capacity spread over the week."""
    wall_h = np.asarray(wall_h, dtype=float)
    rate = np.asarray(weekly_capacity_h, dtype=float) * np.asarray(parallel, dtype=float) / 7.0
    per_option = np.where(rate > 0, wall_h / np.where(rate > 0, rate, 1.0), np.inf)
    return float(max(wall_h.sum() / (runs * HOURS_PER_DAY), per_option.max(initial=0.0)))


def finishes(s, program: Program, sched: pd.DataFrame) -> dict[str, dt.date]:
    """The day each phase's last scheduled hour ends (expected): its last week's work starts on
    the first day of that week inside the window and takes :func:`days_needed`."""
    out = {}
    xi = program.x_index
    at = dict(zip(zip(xi["phase"], xi["option"], xi["week"]), zip(xi["weekly_capacity_h"], xi["parallel"])))
    for p, sel in sched.groupby("phase"):
        w = int(sel["week"].max())
        last = sel[sel["week"] == w]
        cap, parallel = np.array([at[(p, o, w)] for o in last["option"]], dtype=float).reshape(-1, 2).T
        days = days_needed(last["wall_hours"].to_numpy(), cap, parallel, s.phase(p).runs)
        in_window = np.flatnonzero(program.calendar.days[p][w])
        begin = program.week_starts[w] + dt.timedelta(days=int(in_window[0]))
        final = program.week_starts[w] + dt.timedelta(days=int(in_window[-1]))
        out[p] = min(finish_day(begin, days), final)  # capacities hold per week: never past the window
    return out


def purchases(program: Program, sol: Solution) -> list[str]:
    return [b for b, j in program.buy_index.items() if sol.x[j] > 0.5]


def unmet(program: Program, sol: Solution) -> dict[str, float]:
    return {p: float(sol.x[j]) for p, j in program.unmet_index.items() if sol.x[j] > 1e-6}


def bought_host(program: Program, sol: Solution) -> bool:
    return program.host_index is not None and sol.x[program.host_index] > 0.5
