"""Choose the cheapest plan that meets the deadlines.

First model (to be replaced by a MILP over weekly buckets): every phase runs
on a single option; purchases are at most one buy offer. Every purchase set
({nothing} and each buy offer) is tried; for each, every phase takes its
cheapest option that finishes by its deadline; the cheapest plan wins.
Plans that miss a deadline or exceed the budget rank after those that don't.

Pipeline (pure): options -> workload (fit, speed) -> sessions (hours) ->
quotes (phase x option, with cost parts) -> plan.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from . import costs, sessions, workload
from .options import build_options, stale_rows
from .result import Assignment, PhasePlan, Plan, Purchase
from .scenario import Scenario

HOURS_PER_MONTH = 730.5

#: Checkpoint write rate on a local disk [GB/h]: ~500 MB/s, a SATA SSD's
#: sequential write (estimate; NVMe drives are faster).
LOCAL_DISK_GB_PER_H = 1800.0
QUOTE_COLUMNS = [
    "phase", "option", "kind", "device", "offer", "relative_speed", "speed_source", "verdict", "fit_reason",
    "spot", "interruptions_per_h", "device_hours",
    "wall_hours", "billed_hours", "sessions", "restarts_by_hand", "lost_hours", "setup_hours", "checkpoint_hours",
    "weekly_capacity_h",
    "finish", "ok", "reason", "cost_usd", "electricity_usd", "rent_usd", "storage_usd", "egress_usd", "your_time_usd",
]
DEFAULT_TRIALS = 2000
STRATEGIES = {
    "buy-only": {"own", "buy"},
    "rent-only": {"rent"},
    "free-only": {"free"},
    "hybrid": {"own", "buy", "rent", "free"},
}


def exclusions(s: Scenario, opts: pd.DataFrame, devices: pd.DataFrame, throughput: pd.DataFrame) -> pd.DataFrame:
    """Per option: fit verdict, speed, and the reason it cannot be used (or None)."""
    need = workload.memory_need(s.workload)
    speed = workload.relative_speed(devices, throughput, s.workload.reference_gpu, s.workload.family,
                                    s.workload.precision)
    dev = devices.set_index("id")
    rows = []
    for r in opts.itertuples():
        vram = dev.at[r.device, "vram_gb"]
        f = workload.fit(need, vram)
        verdict, why = f.verdict, f.reason
        rel = speed.at[r.device, "relative_speed"]
        reason = None
        if verdict == "does-not-fit":
            reason = why
        elif isinstance(r.frameworks, tuple) and r.frameworks and s.framework not in r.frameworks:
            reason = f"runs {', '.join(r.frameworks)} only; the scenario uses {s.framework}"
        elif not (isinstance(rel, float) and math.isfinite(rel) and rel > 0):
            reason = "no speed figures for this device in the catalog"
        elif r.kind in ("own", "buy") and not s.you.host_machine and s.you.host_price_usd is None:
            reason = "needs a host computer: set you.host_price (or you.host_machine: true)"
        elif r.kind == "free" and isinstance(r.quota_h_total, float) and r.quota_h_total == 0:
            reason = "the tier grants no hours"
        count = int(r.count) if not _nan(r.count) else 1
        rows.append(dict(option=r.option, verdict=verdict, fit_reason=why, slowdown=f.slowdown,
                         relative_speed=rel * count * float(workload.multi_gpu_efficiency(count)),
                         speed_source=speed.at[r.device, "speed_source"], reason=reason))
    return pd.DataFrame(rows, columns=["option", "verdict", "fit_reason", "slowdown", "relative_speed",
                                       "speed_source", "reason"])


def process_for(ph, r, s: Scenario, checkpoint_gb: float, checkpoint_every_h: float | None = None
                ) -> sessions.Process:
    """The session process of one run of phase ``ph`` on option row ``r``."""
    local = r.kind in ("own", "buy")
    persistent = local or bool(r.persistent_storage)
    transfer = _val(r.transfer_gb_per_h)
    setup_h = 0.0 if local else sessions.setup_hours_per_session(_val(r.setup_min), transfer, persistent,
                                                                  ph.dataset_size_gb)
    restore_h = 0.0 if persistent else sessions.copy_hours(checkpoint_gb, transfer)
    write_rate = LOCAL_DISK_GB_PER_H if local else transfer
    return sessions.Process(
        work_h=ph.gpu_hours_per_run / r.relative_speed * r.slowdown,
        checkpoint_every_h=checkpoint_every_h or ph.checkpoint_every_h,
        checkpoint_write_h=sessions.copy_hours(checkpoint_gb, write_rate),
        setup_first_h=setup_h,
        setup_resume_h=setup_h + restore_h,
        session_limit_h=_opt(r.session_limit_h),
        interruptions_per_h=_val(r.interruptions_per_h),
    )


def checkpoint_gb_of(s: Scenario, ph) -> float:
    """The phase's checkpoint size; by default weights and optimizer states."""
    return ph.checkpoint_size_gb if ph.checkpoint_size_gb is not None else workload.memory_need(s.workload).states_gb


def billed_hours(wall_h: float, sessions_n: float, startup_h: float, billing_s: float | None) -> float:
    """Expected billed hours: wall time plus startup per session, each session rounded up to
    the billing unit (on average half a unit more)."""
    unit_h = (billing_s or 0.0) / 3600.0
    return wall_h + sessions_n * (startup_h + unit_h / 2.0)


def quote(s: Scenario, opts: pd.DataFrame, feas: pd.DataFrame) -> pd.DataFrame:
    """Price every (phase, usable option): expected hours, dates and cost parts [USD]."""
    rows = []
    usable = opts.merge(feas, on="option")
    usable = usable[usable["reason"].isna()]
    for ph in s.phases:
        end = ph.deadline or s.horizon_end
        checkpoint_gb = checkpoint_gb_of(s, ph)
        for r in usable.itertuples():
            rented = r.kind == "rent"
            local = r.kind in ("own", "buy")
            proc = process_for(ph, r, s, checkpoint_gb)
            cap = sessions.weekly_capacity_h(_opt(r.session_limit_h), _opt(r.quota_h_per_week),
                                             bool(r.needs_person), s.you.attention_starts_per_day)
            if _opt(r.cap_h_per_month) is not None:  # a subscription's monthly compute units
                cap = min(cap, r.cap_h_per_month * 12 / 52.18)
            lower_weeks = proc.work_h * ph.runs / cap if cap > 0 else math.inf
            if ph.start + dt.timedelta(days=lower_weeks * 7) > end:
                # even without any overhead the work cannot end in time: skip the session model
                rows.append(_late(ph, r, proc, end, lower_weeks, cap))
                continue
            e = sessions.expected(proc)
            wall = e.wall_h * ph.runs
            n_sessions = e.sessions * ph.runs
            restarts = n_sessions if bool(r.needs_person) else 0.0
            weeks = wall / cap if cap > 0 else math.inf
            total_quota = _opt(r.quota_h_total)
            finish = ph.start + dt.timedelta(days=math.ceil(weeks * 7 - 1e-9)) if math.isfinite(weeks) else None
            reason = None
            if not proc.feasible():
                reason = (f"a {r.session_limit_h:g} h session cannot fit setup and one "
                          f"{ph.checkpoint_every_h * 60:g} min checkpoint interval")
            elif total_quota is not None and wall > total_quota:
                reason = f"needs {wall:.0f} h, the tier grants {total_quota:g} h in all"
            elif finish is None or finish > end:
                reason = f"finishes {finish} after the {'deadline' if ph.deadline else 'horizon end'} {end}"
            months_used = max(weeks * 7 / 30.44, 0.0)
            billed = billed_hours(wall, n_sessions, _val(r.startup_min) / 60.0, _opt(r.billing_s)) if rented else 0.0
            parts = dict.fromkeys(("electricity", "rent", "storage", "egress", "your_time"), 0.0)
            if local:
                parts["electricity"] = costs.electricity_usd(r.power_w, s.you.host_power_w, wall,
                                                             s.electricity_usd_per_kwh)
            elif rented:
                parts["rent"] = billed * r.usd_per_hour
                parts["storage"] = costs.storage_usd(ph.dataset_size_gb + checkpoint_gb, months_used,
                                                     _val(r.storage_usd_per_gb_month))
            else:  # free tiers and compute-unit subscriptions
                fee = _val(r.usd_per_month)
                if fee > 0:
                    parts["rent"] = fee * max(1, math.ceil(months_used - 1e-9))
                else:
                    parts["rent"] = wall * _val(r.usd_per_hour)
            parts["your_time"] = restarts * _val(r.setup_min) / 60.0 * s.you.time_value_usd_per_hour
            rows.append(dict(
                phase=ph.name, option=r.option, kind=r.kind, device=r.device, offer=r.offer,
                relative_speed=r.relative_speed, speed_source=r.speed_source, verdict=r.verdict,
                fit_reason=r.fit_reason, spot=bool(r.spot) if not _nan(r.spot) else False,
                interruptions_per_h=_opt(r.interruptions_per_h), device_hours=proc.work_h * ph.runs,
                wall_hours=wall, billed_hours=billed, sessions=n_sessions, restarts_by_hand=restarts,
                lost_hours=e.lost_h * ph.runs, setup_hours=e.setup_h * ph.runs,
                checkpoint_hours=e.checkpoint_h * ph.runs, weekly_capacity_h=cap, finish=finish,
                ok=reason is None, reason=reason, cost_usd=sum(parts.values()),
                **{f"{k}_usd": v for k, v in parts.items()},
            ))
    return pd.DataFrame(rows, columns=QUOTE_COLUMNS)


def _late(ph, r, proc: sessions.Process, end: dt.date, lower_weeks: float, cap: float) -> dict:
    """A quote for an option that cannot finish in time even with no overhead at all."""
    finish = ph.start + dt.timedelta(days=math.ceil(lower_weeks * 7)) if math.isfinite(lower_weeks) else None
    reason = (f"finishes {finish} at the earliest, after the deadline {end}" if finish
              else "offers no hours")
    row = dict.fromkeys(QUOTE_COLUMNS)
    row.update(phase=ph.name, option=r.option, kind=r.kind, device=r.device, offer=r.offer,
               relative_speed=r.relative_speed, speed_source=r.speed_source, verdict=r.verdict,
               fit_reason=r.fit_reason, spot=False, device_hours=proc.work_h * ph.runs,
               wall_hours=math.inf, billed_hours=math.nan, sessions=0, restarts_by_hand=0, lost_hours=math.nan,
               setup_hours=math.nan, checkpoint_hours=math.nan, weekly_capacity_h=cap,
               finish=finish, ok=False, reason=reason, cost_usd=math.inf,
               **{f"{k}_usd": 0.0 for k in ("electricity", "rent", "storage", "egress", "your_time")})
    return row


def purchase_cost(s: Scenario, opt: pd.Series) -> tuple[float, float, float]:
    """(price, resale at the horizon, host) in USD for a buy option."""
    price = float(opt["purchase_usd"])
    resale = costs.resale_usd(price, s.horizon_months, opt["condition"],
                              _opt(opt["resale_usd"]), _opt(opt["resale_fraction"]))
    host = s.you.host_price_usd if (not s.you.host_machine and s.you.host_price_usd) else 0.0
    return price, resale, host


def _ranked(quotes: pd.DataFrame) -> dict[str, tuple[list, list]]:
    """Per phase: quotes that meet the deadline by cost, and all quotes by finish date."""
    out = {}
    for ph, q in quotes.groupby("phase", sort=False):
        ok = [r for _, r in q[q["ok"]].sort_values(["cost_usd", "option"]).iterrows()]
        late = q.assign(_f=q["finish"].map(lambda d: d or dt.date.max)).sort_values(["_f", "cost_usd", "option"])
        out[ph] = (ok, [r for _, r in late.iterrows()])
    return out


def _best(ranked: dict, phases: Iterable[str], allowed: set[str]) -> tuple[dict[str, pd.Series], int]:
    """Per phase, the cheapest allowed quote that meets its deadline, else the earliest finish."""
    chosen, misses = {}, 0
    for ph in phases:
        ok, by_finish = ranked.get(ph, ([], []))
        pick = next((r for r in ok if r["option"] in allowed), None)
        if pick is None:
            misses += 1
            pick = next((r for r in by_finish if r["option"] in allowed), None)
        if pick is not None:
            chosen[ph] = pick
    return chosen, misses


def _candidates(s: Scenario, opts: pd.DataFrame, quotes: pd.DataFrame, kinds: set[str]):
    """Yield (score, purchase option or None, per-phase choice) for every purchase set."""
    base = set(opts.loc[opts["kind"].isin(kinds - {"buy"}), "option"])
    buys = [None] + (list(opts.loc[opts["kind"] == "buy", "option"]) if "buy" in kinds else [])
    used = set(quotes["option"])
    phases = [p.name for p in s.phases]
    ranked = _ranked(quotes)
    for b in buys:
        if b is not None and b not in used:
            continue
        allowed = base | ({b} if b else set())
        chosen, misses = _best(ranked, phases, allowed)
        if b is not None and not any(c["option"] == b for c in chosen.values()):
            continue  # buying a card no phase uses is never cheaper
        purchase = purchase_cost(s, opts.set_index("option").loc[b]) if b else (0.0, 0.0, 0.0)
        money = purchase[0] - purchase[1] + purchase[2] + sum(
            c["cost_usd"] - c["your_time_usd"] for c in chosen.values())
        total = money + sum(c["your_time_usd"] for c in chosen.values())
        over = s.you.budget_usd is not None and money > s.you.budget_usd + 1e-9
        yield (misses, int(over), round(total, 6), b or ""), b, purchase, chosen


def plan(s: Scenario, catalog, base_catalog=None, trials: int = DEFAULT_TRIALS, seed: int = 0) -> Plan:
    """The cheapest plan for the scenario (see module docstring).

    ``catalog`` already holds the scenario's own entries; ``base_catalog``
    (without them) tells which of their fields took a documented default.
    ``trials`` Monte Carlo runs (seeded) give each chosen assignment its spread.
    """
    opts = build_options(s, catalog)
    feas = exclusions(s, opts, catalog.devices, catalog.throughput)
    quotes = quote(s, opts, feas)
    warnings = _warnings(s, opts, catalog)
    if opts.empty:
        raise_empty = "no options to consider: the 'consider' patterns and 'you.own' select nothing"
        warnings.append(raise_empty)

    best = min(_candidates(s, opts, quotes, STRATEGIES["hybrid"]), key=lambda c: c[0], default=None)
    alternatives = []
    for name, kinds in STRATEGIES.items():
        cand = min(_candidates(s, opts, quotes, kinds), key=lambda c: c[0], default=None)
        if cand and cand[0][0] == 0 and cand[0][1] == 0:
            finish = max((c["finish"] for c in cand[3].values()), default=None)
            alternatives.append(dict(strategy=name, total_cost_usd=cand[0][2], finish=finish.isoformat() if finish else None,
                                     options=sorted({c["option"] for c in cand[3].values()} | ({cand[1]} if cand[1] else set()))))

    rows = opts.merge(feas, on="option").set_index("option", drop=False)
    phases, parts, purchases = [], dict.fromkeys(("purchase", "resale", "host", "electricity", "rent", "storage",
                                                  "egress", "your_time"), 0.0), []
    chosen = best[3] if best else {}
    if best and best[1]:
        o = opts.set_index("option").loc[best[1]]
        price, resale, host = best[2]
        purchases.append(Purchase(best[1], o["device"], int(o["count"]), price, resale))
        parts["purchase"], parts["resale"], parts["host"] = price, -resale, host
    for ph in s.phases:
        c = chosen.get(ph.name)
        problem = None
        if c is None:
            problem = _no_option_problem(ph.name, feas, opts)
            phases.append(PhasePlan(ph.name, ph.gpu_hours, ph.start, ph.deadline, None, None, None, False, (), problem))
            continue
        for k in ("electricity", "rent", "storage", "egress", "your_time"):
            parts[k] += c[f"{k}_usd"]
        if not c["ok"]:
            problem = (f"no option finishes '{ph.name}' by {ph.deadline or s.horizon_end}; the earliest, "
                       f"{c['option']}, {c['reason']}. A later deadline or fewer GPU-hours would fix it.")
        spread = _spread(s, ph, rows.loc[c["option"]], c, trials, seed)
        a = Assignment(
            option=c["option"], kind=c["kind"], device=c["device"], gpu_hours=ph.gpu_hours,
            wall_hours=c["wall_hours"], billed_hours=c["billed_hours"], sessions=round(c["sessions"]),
            restarts_by_hand=round(c["restarts_by_hand"]), lost_hours=c["lost_hours"], setup_hours=c["setup_hours"],
            checkpoint_every_min=ph.checkpoint_every_h * 60,
            checkpoint_every_recommended_min=spread["recommended_min"],
            relative_speed=c["relative_speed"], speed_source=c["speed_source"], verdict=c["verdict"],
            fit_reason=c["fit_reason"],
            cost_usd={k: c[f"{k}_usd"] for k in ("electricity", "rent", "storage", "egress", "your_time")},
            saved_by_recommended_h=spread["saved_h"], wall_hours_p50=spread["wall_p50"],
            wall_hours_p90=spread["wall_p90"], lost_hours_p10=spread["lost_p10"], lost_hours_p90=spread["lost_p90"],
            cost_p50_usd=spread["cost_p50"], cost_p90_usd=spread["cost_p90"],
        )
        cap = c["weekly_capacity_h"]
        p50, p90 = (_finish(ph.start, spread[k], cap) for k in ("wall_p50", "wall_p90"))
        phases.append(PhasePlan(ph.name, ph.gpu_hours, ph.start, ph.deadline, c["finish"], p50, p90,
                                bool(c["ok"]), (a,), problem))
    used = {a.option for ph in phases for a in ph.assignments} | {p.offer for p in purchases}
    chosen_rows = [c for c in chosen.values()]
    for c in chosen_rows:
        if c["spot"] and c["interruptions_per_h"] is None:
            warnings.append(f"{c['option']}: spot/interruptible capacity with no published interruption rate; the "
                            "plan assumes none — set its 'interruptions' in the scenario's catalog or 'consider.spot: "
                            "false'")
    for r in stale_rows(opts[opts["option"].isin(used)], s.start).itertuples():
        warnings.append(f"{r.option}: catalog price dated {r.as_of} is {r.age_days} days older than the "
                        f"scenario's start; check it or override it in the scenario's 'catalog'")
    if best and best[0][1]:
        warnings.append(f"every plan that meets the deadlines costs more than the budget "
                        f"({s.you.budget_usd:,.0f} USD); the cheapest is shown")
    return Plan(
        scenario=s,
        feasible=all(p.meets_deadline for p in phases),
        purchases=tuple(purchases),
        phases=tuple(phases),
        cost_usd=parts,
        alternatives=tuple(alternatives),
        excluded=_excluded(feas, quotes, chosen, best[1] if best else None),
        quotes=quotes,
        catalog_as_of=catalog.as_of(),
        warnings=tuple(warnings),
        over_budget=bool(best and best[0][1]),
        assumptions=tuple(_assumed_defaults(s, base_catalog)) if base_catalog is not None else (),
    )


def _assumed_defaults(s: Scenario, base_catalog) -> list[str]:
    """'uni-cluster: billing_s = 60, ...' for each scenario offer that omitted documented fields."""
    out = []
    for table, rows in s.catalog_entries.items():
        for row in rows:
            taken = base_catalog.defaults_for(table, row)
            if taken:
                out.append(f"{row['id']} ({table}): catalog defaults "
                           + ", ".join(f"{k} = {_show(v)}" for k, v in taken.items()))
    return out


def _show(v) -> str:
    if isinstance(v, tuple):
        return ";".join(v)
    if isinstance(v, bool):
        return str(v).lower()
    return f"{v:g}" if isinstance(v, float) else str(v)


def _finish(start: dt.date, wall_h: float, cap_h_per_week: float) -> dt.date | None:
    """The date ``wall_h`` hours of sessions end when the option gives ``cap_h_per_week`` a week."""
    if not (math.isfinite(wall_h) and cap_h_per_week > 0):
        return None
    return start + dt.timedelta(days=math.ceil(wall_h / cap_h_per_week * 7 - 1e-9))


def _spread(s: Scenario, ph, r, c: pd.Series, trials: int, seed: int) -> dict:
    """Monte Carlo spread of one chosen assignment and its recommended checkpoint interval."""
    ckpt_gb = checkpoint_gb_of(s, ph)
    proc = process_for(ph, r, s, ckpt_gb)
    rec_h = sessions.recommended_interval(proc)
    saved_h = 0.0
    if math.isfinite(rec_h):
        e_user = sessions.expected(proc)
        e_rec = sessions.expected(process_for(ph, r, s, ckpt_gb, checkpoint_every_h=rec_h))
        saved_h = max(0.0, (e_user.wall_h - e_rec.wall_h) * ph.runs)
    rented = r.kind == "rent"
    if proc.interruptions_per_h == 0.0 or not math.isfinite(c["wall_hours"]):
        # deterministic (or hopeless): no spread to sample
        lost = c["lost_hours"] if math.isfinite(c["wall_hours"]) else None
        return dict(recommended_min=rec_h * 60 if math.isfinite(rec_h) else None, saved_h=saved_h,
                    wall_p50=c["wall_hours"], wall_p90=c["wall_hours"], lost_p10=lost, lost_p90=lost,
                    cost_p50=c["cost_usd"], cost_p90=c["cost_usd"])
    sm = sessions.simulate(proc, trials, seed, runs=ph.runs, startup_h=_val(r.startup_min) / 60.0 if rented else 0.0,
                           billing_h=(_opt(r.billing_s) or 0.0) / 3600.0 or None)
    # cost scales with the sampled hours: billed for rent, wall for electricity and pay-per-hour tiers
    if rented:
        variable = sm.billed_h / max(c["billed_hours"], 1e-12) * c["rent_usd"]
        fixed = c["cost_usd"] - c["rent_usd"]
    else:
        variable = sm.wall_h / max(c["wall_hours"], 1e-12) * (c["cost_usd"] - c["your_time_usd"])
        fixed = c["your_time_usd"]
    cost = fixed + variable
    return dict(
        recommended_min=rec_h * 60 if math.isfinite(rec_h) else None,
        saved_h=saved_h,
        wall_p50=float(np.quantile(sm.wall_h, 0.5)), wall_p90=float(np.quantile(sm.wall_h, 0.9)),
        lost_p10=float(np.quantile(sm.lost_h, 0.1)), lost_p90=float(np.quantile(sm.lost_h, 0.9)),
        cost_p50=float(np.quantile(cost, 0.5)), cost_p90=float(np.quantile(cost, 0.9)),
    )


def _excluded(feas: pd.DataFrame, quotes: pd.DataFrame, chosen: dict, bought: str | None) -> pd.DataFrame:
    rows = [dict(option=r.option, phase=None, reason=r.reason) for r in feas.itertuples() if isinstance(r.reason, str)]
    for r in quotes[~quotes["ok"]].itertuples():
        rows.append(dict(option=r.option, phase=r.phase, reason=r.reason))
    return pd.DataFrame(rows, columns=["option", "phase", "reason"])


def _no_option_problem(phase: str, feas: pd.DataFrame, opts: pd.DataFrame) -> str:
    reasons = feas["reason"].dropna()
    if reasons.empty:
        return f"no option is considered for '{phase}'; widen 'consider'"
    top = reasons.value_counts().index[0]
    return f"no option can run '{phase}': e.g. {top}"


def _warnings(s: Scenario, opts: pd.DataFrame, catalog) -> list[str]:
    out = []
    if s.electricity_is_default:
        out.append(f"no electricity price given: using the catalog default "
                   f"{s.electricity_usd_per_kwh:.4f} USD/kWh (US average residential); set 'electricity'")
    need = workload.memory_need(s.workload)
    if need.activations_source == "unknown":
        out.append("activation memory not estimated for this family: VRAM checks count weights, gradients and "
                   "optimizer states only; set workload.activation_memory")
    return out


def _val(x, default: float = 0.0) -> float:
    return default if _nan(x) else float(x)


def _opt(x) -> float | None:
    return None if _nan(x) else float(x)


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or (isinstance(x, np.floating) and np.isnan(x))
