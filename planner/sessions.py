"""Sessions, setup and lost work: how device hours become wall and billed hours.

First-order model, pure arithmetic on one (phase, option) pair:

* work is split into sessions: one per run, more where a session limit cuts
  a run (each session's first ``setup`` hours do no training);
* every session start costs setup: the option's fixed ``setup_min`` plus,
  where files do not persist, copying the dataset, and for a session that
  resumes a run, the last checkpoint, at the option's transfer rate;
* a session that ends at a hard limit loses, on average, half a checkpoint
  interval of work; so does each interruption (rate per hour);
* rented machines bill from request (startup) to release, rounded up to the
  billing granularity per session.

The calendar side: an option offers at most ``weekly_capacity_h`` wall hours
a week (quota, the user's attention for manual starts, 24x7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOURS_PER_WEEK = 168.0


@dataclass(frozen=True)
class SessionEstimate:
    device_hours: float  # pure training time on the option
    wall_hours: float  # device hours + setup + lost work
    billed_hours: float  # what a provider charges for (rent only)
    sessions: int
    restarts_by_hand: int
    lost_hours: float
    setup_hours: float
    weekly_capacity_h: float


def copy_hours(size_gb: float, transfer_gb_per_h: float) -> float:
    """Hours to copy ``size_gb`` onto a machine at its transfer rate."""
    return size_gb / transfer_gb_per_h if size_gb > 0 and transfer_gb_per_h > 0 else 0.0


def setup_hours_per_session(setup_min: float, transfer_gb_per_h: float, persistent: bool, dataset_gb: float) -> float:
    """Hours before training starts in a new session: fixed setup plus the dataset copy."""
    return setup_min / 60.0 + (0.0 if persistent else copy_hours(dataset_gb, transfer_gb_per_h))


def weekly_capacity_h(session_limit_h: float | None, quota_h_per_week: float | None,
                      needs_person: bool, starts_per_day: float) -> float:
    """Wall hours a week the option can run: quota, manual starts, the week itself."""
    cap = HOURS_PER_WEEK
    if quota_h_per_week is not None:
        cap = min(cap, quota_h_per_week)
    if needs_person and session_limit_h is not None:
        cap = min(cap, 7.0 * starts_per_day * session_limit_h)
    return cap


def estimate(
    device_hours: float,
    *,
    runs: int,
    session_limit_h: float | None,
    setup_h: float,
    restore_h: float = 0.0,
    checkpoint_every_h: float,
    interruptions_per_h: float,
    startup_h: float,
    billing_s: float | None,
    needs_person: bool,
    rented: bool,
    weekly_cap_h: float,
) -> SessionEstimate:
    """Expected wall/billed hours, sessions and losses for ``device_hours`` of training.

    ``setup_h`` is paid by every session; ``restore_h`` (copying the last
    checkpoint in) only by sessions that resume a run.
    """
    if session_limit_h is not None and session_limit_h <= setup_h + restore_h:
        return SessionEstimate(device_hours, math.inf, math.inf, 0, 0, math.inf, math.inf, weekly_cap_h)
    per_run = device_hours / runs
    if session_limit_h is None:
        sessions_per_run = 1
    else:
        sessions_per_run = max(1, math.ceil(per_run / (session_limit_h - setup_h - restore_h)))
    sessions = runs * sessions_per_run
    forced_ends = runs * (sessions_per_run - 1)
    lost = forced_ends * checkpoint_every_h / 2.0 + interruptions_per_h * device_hours * checkpoint_every_h / 2.0
    setup_total = sessions * setup_h + forced_ends * restore_h
    wall = device_hours + lost + setup_total
    billed = 0.0
    if rented:
        per_session = wall / sessions + startup_h
        if billing_s:
            unit_h = billing_s / 3600.0
            per_session = math.ceil(per_session / unit_h - 1e-9) * unit_h
        billed = per_session * sessions
    return SessionEstimate(
        device_hours=device_hours,
        wall_hours=wall,
        billed_hours=billed,
        sessions=sessions,
        restarts_by_hand=sessions if needs_person else 0,
        lost_hours=lost,
        setup_hours=setup_total,
        weekly_capacity_h=weekly_cap_h,
    )
