"""Sessions, checkpoints and resuming: how device hours become wall and billed hours.

The process, for one training run of ``work_h`` device hours on one option:

* a session starts with setup: ``setup_first_h`` for a run's first session
  (environment, dataset copy), ``setup_resume_h`` for later ones (plus the
  checkpoint restore);
* training proceeds in segments of ``checkpoint_every_h`` hours, each ended by
  a checkpoint write of ``checkpoint_write_h`` hours; only completed segments
  count as progress;
* interruptions (disconnects, preemptions) arrive as a Poisson process of
  ``interruptions_per_h`` per wall hour, at any moment of a session;
* a session with a hard ``session_limit_h`` (setup included) is stopped at
  its last checkpoint before the limit, when the next segment would not fit:
  running on to the limit would only lose that time (and, billed by the
  second, pay for it);
* an interruption loses the work since the last checkpoint; either way a
  new session starts from the last checkpoint.

:func:`expected` computes the exact expectation of this process by the
recursion over (segment, segments done in the session): each state's
expected remaining time is affine in the expected time of a fresh session at
the same segment, which closes the recursion (the renewal argument of Daly,
"A higher order estimate of the optimum checkpoint interval for restart
dumps", FGCS 2006, generalised to hard session limits), so it is solved as a
banded triangular system over the fresh sessions alone. :func:`simulate`
samples the same process (vectorised, seeded) for its distribution.
:func:`recommended_interval` is Young's first-order optimum sqrt(2 C / lambda)
(Young, CACM 1974), fitted so that a checkpoint lands exactly before a known
session limit.

The calendar: an option offers ``weekly_capacity_h`` wall hours a week
(quota, the user's manual starts, 24x7); work is spread evenly over them.
Idle timeouts are not modelled: a training session is never idle.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .units import HOURS_PER_WEEK, MIN_CHECKPOINT_EVERY_H, z_at

#: A run with a session limit longer than three times this many segments (and four sessions' worth)
#: is extended linearly from two shorter ones (see :func:`expected`).
RECURSION_SEGMENTS = 50


def copy_hours(size_gb: float, transfer_gb_per_h: float) -> float:
    """Hours to copy ``size_gb`` onto a machine at its transfer rate."""
    return size_gb / transfer_gb_per_h if size_gb > 0 and transfer_gb_per_h > 0 else 0.0


def setup_hours_per_session(setup_min: float, transfer_gb_per_h: float, persistent: bool, dataset_gb: float) -> float:
    """Hours before training starts in a new session: fixed setup plus the dataset copy."""
    return setup_min / 60.0 + (0.0 if persistent else copy_hours(dataset_gb, transfer_gb_per_h))


def sessions_count(expected_sessions: float, wall_h: float, session_limit_h: float | None,
                   wait_h: float = 0.0) -> int:
    """The sessions a person would count: the whole number nearest the expectation (1.02, one
    session and a 2 % chance of a restart, is one session, not two), and never fewer than one
    nor than the wall hours (waits aside) need at the session limit."""
    if not wall_h > 0:
        return 0
    n = max(1, math.floor(expected_sessions + 0.5 + 1e-9))
    if session_limit_h:
        n = max(n, math.ceil((wall_h - wait_h) / session_limit_h - 1e-9))
    return n


def parallel_runs(kind: str, runs: int, supply: int | None = None) -> int:
    """How many of a phase's runs one option can carry at once: a rented offer starts one
    instance per run, as many as it has at that price (``supply``); a card (owned or bought) and
    a free tier's account run one at a time."""
    if kind != "rent":
        return 1
    return runs if supply is None else max(1, min(runs, int(supply)))


def last_day_offset(days: Any) -> Any:
    """Days from the first day to the last of work that starts at 00:00 and takes ``days`` (0
    for work done within the first day); numbers or arrays."""
    return np.maximum(np.ceil(np.asarray(days, dtype=float) - 1e-6), 1) - 1


def finish_day(begin: dt.date, days: float) -> dt.date | None:
    """The day on which work that starts at 00:00 of ``begin`` and takes ``days`` ends
    (inclusive, as deadlines are); None when that is past the calendar's end."""
    if not math.isfinite(days) or days > (dt.date.max - begin).days:
        return None
    return begin + dt.timedelta(days=int(last_day_offset(days)))


@dataclass(frozen=True)
class Finish:
    """When a phase ends as planned, and where more or fewer wall hours than planned move that
    end: the one rule for the plan's P50/P90 finishes, its chance of ending in time and each
    draw of the uncertainty analysis.

    The phase's last bucket starts on ``begin`` and its work there takes ``days``. An overrun of
    the phase's wall hours first fills ``slack_h``, the hours its earlier buckets keep beyond the
    expected ones (the program books each bucket at the confidence). Then it fills the last
    bucket's own booked hours, ``last_slack_h``, which end by ``days_conf`` (the program's finish
    at the confidence, its options side by side): the end moves linearly from ``days`` to
    ``days_conf``, so an overrun the size the program booked ends when the program promised.
    Past that it runs on at ``rate_h_per_day``: the fastest of its options (weekly capacity over
    the week, times the runs it carries at once), no more than the runs' 24 h a day. Where that
    rate alone ends an overrun sooner, it does. An under-run ends earlier at that rate."""

    begin: dt.date
    days: float
    slack_h: float
    rate_h_per_day: float
    last_slack_h: float = 0.0
    days_conf: float | None = None  # None: the last bucket's booked hours are its expected ones

    def _run_on(self, days: float, over_h: np.ndarray) -> np.ndarray:
        """``days`` plus ``over_h`` wall hours at the rate (never, where there is no rate)."""
        if self.rate_h_per_day <= 0:
            return np.where(over_h > 0, np.inf, days)
        return days + over_h / self.rate_h_per_day

    def days_with(self, overrun_h: float | np.ndarray) -> Any:
        """The last bucket's days with ``overrun_h`` more wall hours (numbers or arrays)."""
        over = np.asarray(overrun_h, dtype=float)
        moved = np.where(over > self.slack_h, over - self.slack_h, np.minimum(over, 0.0))
        alone = self._run_on(self.days, moved)
        booked = self.last_slack_h
        if booked <= 0 or self.days_conf is None:
            return alone
        within = self.days + np.clip(moved, 0.0, booked) / booked * max(self.days_conf - self.days, 0.0)
        past = self._run_on(self.days_conf, np.maximum(moved - booked, 0.0))
        side_by_side = np.where(moved <= 0, alone, np.where(moved > booked, past, within))
        return np.minimum(alone, side_by_side)

    def day_with(self, overrun_h: float) -> dt.date | None:
        """The finish day with ``overrun_h`` more wall hours (None: never)."""
        return finish_day(self.begin, float(self.days_with(overrun_h)))

    def offset_with(self, overrun_h: float | np.ndarray, start: dt.date) -> Any:
        """Days from ``start`` to the finish day, per overrun (arrays: the uncertainty's draws)."""
        return (self.begin - start).days + last_day_offset(self.days_with(overrun_h))

    def headroom_h(self, last_day: dt.date) -> float:
        """The overrun that still ends by ``last_day`` (the inverse of :meth:`days_with`): the
        slack, then the days left after the planned end at the rate, or the last bucket's booked
        hours and the days left after the finish at the confidence, whichever holds more."""
        limit = (last_day - self.begin).days + 1
        alone = self.slack_h + max(limit - self.days, 0.0) * self.rate_h_per_day
        if self.last_slack_h <= 0 or self.days_conf is None or limit < self.days:
            return alone
        if limit < self.days_conf:
            side_by_side = self.slack_h + self.last_slack_h * (limit - self.days) / (self.days_conf - self.days)
        else:
            side_by_side = self.slack_h + self.last_slack_h + (limit - self.days_conf) * self.rate_h_per_day
        return max(alone, side_by_side)


def weekly_capacity_h(session_h: float | None, quota_h_per_week: float | None,
                      needs_person: bool, starts_per_day: float, available: float = 1.0) -> float:
    """Wall hours a week the option can run: quota, manual starts, the week itself.

    ``session_h`` is how long a session lasts: its limit as an upper bound, or the
    expected length from the session model (interruptions shorten sessions).
    ``available`` is the share of session starts at which the device is to be had (a
    subscription's premium GPU): the week's hours and your starts yield that share of
    sessions, while a quota, counted in hours used, stays whole.
    """
    cap = HOURS_PER_WEEK * available
    if quota_h_per_week is not None:
        cap = min(cap, quota_h_per_week)
    if needs_person and session_h is not None:
        cap = min(cap, 7.0 * starts_per_day * available * session_h)
    return cap


@dataclass(frozen=True)
class Process:
    """Parameters of the session process for one run (hours, per hour)."""

    work_h: float
    checkpoint_every_h: float
    checkpoint_write_h: float = 0.0
    setup_first_h: float = 0.0
    setup_resume_h: float = 0.0
    session_limit_h: float | None = None
    interruptions_per_h: float = 0.0
    resume_wait_h: float = 0.0  # mean unbilled wait before a paused machine resumes (pauses only)

    def segments(self) -> np.ndarray:
        """Training hours of each segment; the last one takes the remainder."""
        n = max(1, math.ceil(self.work_h / self.checkpoint_every_h - 1e-9))
        seg = np.full(n, self.checkpoint_every_h)
        seg[-1] = self.work_h - self.checkpoint_every_h * (n - 1)
        return seg

    def feasible(self) -> bool:
        """Every segment fits in a session after its setup."""
        if self.session_limit_h is None:
            return True
        longest = float(self.segments().max()) + self.checkpoint_write_h
        return self.session_limit_h > max(self.setup_first_h, self.setup_resume_h) + longest - 1e-12


@dataclass(frozen=True)
class Expectation:
    """Expected totals for one run [h, except sessions]."""

    wall_h: float
    sessions: float
    setup_h: float
    checkpoint_h: float  # completed checkpoint writes
    work_h: float
    wait_h: float = 0.0  # unbilled waits for paused machines to resume (in wall_h)

    @property
    def lost_h(self) -> float:
        """Wall time that produced nothing: work and writes lost to ends and interruptions."""
        return max(0.0, self.wall_h - self.work_h - self.setup_h - self.checkpoint_h - self.wait_h)

    def with_waits(self, resume_wait_h: float) -> Expectation:
        """Add the mean wait before each resumed session (every session but the first)."""
        wait = max(self.sessions - 1.0, 0.0) * resume_wait_h
        return dataclasses.replace(self, wall_h=self.wall_h + wait, wait_h=self.wait_h + wait)


def _min_exp(rate: float, length: np.ndarray | float) -> np.ndarray | float:
    """E[min(T, length)] for T ~ Exp(rate); ``length`` when rate is 0."""
    if rate == 0.0:
        return length
    return -np.expm1(-rate * np.asarray(length, dtype=float)) / rate


@functools.lru_cache(maxsize=4096)
def expected(p: Process) -> Expectation:
    """Exact expectation of the session process (see the module docstring).

    Cached per process: a sweep or sensitivity run re-prices the same sessions for every value of
    an input that does not touch them (prices, electricity), and a Process is a frozen value."""
    if not p.feasible():
        return Expectation(math.inf, math.inf, math.inf, math.inf, p.work_h)
    lam = p.interruptions_per_h
    seg = p.segments() + p.checkpoint_write_h  # wall hours per segment
    if lam == 0.0:
        return _deterministic(p, seg)
    if p.session_limit_h is None:
        return _renewal(p, seg).with_waits(p.resume_wait_h)
    per_session = max(1, int(p.session_limit_h // (p.checkpoint_every_h + p.checkpoint_write_h)))
    block = max(RECURSION_SEGMENTS, 4 * per_session)
    if len(seg) <= 3 * block:
        return _recursion(p, seg).with_waits(p.resume_wait_h)
    # A long run: sessions renew from checkpoints, so past a transient the expectation grows by the same
    # amount per segment (the renewal-reward theorem). Take that rate from two shorter runs and extend it.
    last = float(seg[-1] - p.checkpoint_write_h)
    e1, e2 = (_recursion(q, q.segments() + p.checkpoint_write_h) for q in (
        dataclasses.replace(p, work_h=(m - 1) * p.checkpoint_every_h + last) for m in (block, 2 * block)))
    more = (len(seg) - 2 * block) / block
    wall_h, sessions, setup_h, checkpoint_h = (getattr(e2, f) + more * (getattr(e2, f) - getattr(e1, f))
                                               for f in ("wall_h", "sessions", "setup_h", "checkpoint_h"))
    return Expectation(wall_h, sessions, setup_h, checkpoint_h, p.work_h).with_waits(p.resume_wait_h)


def _renewal(p: Process, seg: np.ndarray) -> Expectation:
    """Without a session limit the recursion of :func:`_recursion` telescopes: the expected
    rest from segment i is the rest from i+1 plus a constant of segment i (Daly 2006's
    renewal argument), so the run's expectation is a vectorised sum over its segments."""
    lam = p.interruptions_per_h
    ok = np.exp(-lam * seg)  # each segment's attempt succeeds
    resume_ok = math.exp(-lam * p.setup_resume_h)
    c_resume = np.array([_min_exp(lam, p.setup_resume_h), 1.0, _min_exp(lam, p.setup_resume_h), 0.0])
    # k: what an attempt of a segment costs (rewards: wall, sessions, setup, checkpoint writes)
    k = np.stack([_min_exp(lam, seg), np.zeros_like(seg), np.zeros_like(seg), ok * p.checkpoint_write_h])
    step = k / ok + np.outer(c_resume, (1.0 - ok) / (resume_ok * ok))  # F(i) - F(i+1)
    rest = step[:, 1:].sum(axis=1)  # F(1): from the second segment on
    first_ok = math.exp(-lam * p.setup_first_h)
    c_first = np.array([_min_exp(lam, p.setup_first_h), 1.0, _min_exp(lam, p.setup_first_h), 0.0])
    # V(0): a fresh first session (its setup may be interrupted too) that then runs segment 0;
    # a failure before segment 0 is checkpointed starts the run over, first setup included
    denom = first_ok * ok[0]
    if denom <= 1e-300:
        return Expectation(math.inf, math.inf, math.inf, math.inf, p.work_h)
    v0 = (c_first + first_ok * (k[:, 0] + ok[0] * rest)) / denom
    return Expectation(float(v0[0]), float(v0[1]), float(v0[2]), float(v0[3]), p.work_h)


#: Fresh-session starts solved together (see :func:`_recursion`): a block's triangular system is
#: solved at once, and the identical blocks in the middle of a run share its inverse.
BLOCK_SEGMENTS = 48


def _recursion(p: Process, seg: np.ndarray) -> Expectation:
    """The exact expectation by the recursion over (segment, segments done in the session) of the
    module docstring, solved through the fresh sessions it closes on.

    A session that starts afresh at segment i (its setup ``setup_first_h`` at i = 0, else
    ``setup_resume_h``) runs i, i+1, ... while each next segment fits before the limit; it ends
    at an interruption (resuming at the segment it was in), at a segment that does not fit
    (resuming there) or at the run's end. So V(i), the expected rest of the run from a fresh
    session at i, is const(i) + sum over m >= 1 of weight(i, m) V(i + m): const(i) the rewards of
    that session (wall time, sessions, setup, checkpoint writes), weight(i, m) the expected number
    of times it ends by handing over to a fresh session at i + m (Daly 2006's renewal argument;
    a session interrupted in its setup or its first segment starts again at i, which divides
    both by the chance that it does not). The system is triangular with
    as many bands as segments fit in a session; the run's expectation V(0) is the starts of fresh
    sessions at each segment (forward, from a single start at 0) times const.

    Every segment but the last is as long as the others, so every row between the first and the
    last sessions' worth has the same coefficients: those are computed once, and their blocks of
    :data:`BLOCK_SEGMENTS` share one inverse. ``seg``: each segment's wall hours (its write included)."""
    n = len(seg)
    lam, write = p.interruptions_per_h, p.checkpoint_write_h
    step = p.checkpoint_every_h + write
    if p.session_limit_h is None:
        width, limit = n, math.inf  # no limit: a session runs to an interruption or the end
    else:
        width, limit = min(int((p.session_limit_h - min(p.setup_first_h, p.setup_resume_h)) // step) + 2, n), \
            p.session_limit_h
    # the rows whose coefficients differ: the first; one for the middle (a session that cannot reach
    # the last segment); each of the last `width`
    middle = max(n - width - 1, 0) if np.all(seg[:-1] == seg[0]) else 0
    segment = np.arange(n)
    rows, row_of = np.unique(np.where((segment >= 1) & (segment <= middle), 1, segment), return_inverse=True)
    coefficients = _fresh_sessions(p, seg, rows, width, limit, step, lam, write)
    if coefficients is None:
        return Expectation(math.inf, math.inf, math.inf, math.inf, p.work_h)
    const, weight = coefficients
    starts = np.zeros(n + width + BLOCK_SEGMENTS)  # expected fresh-session starts at each segment
    starts[0] = 1.0
    shared: tuple[np.ndarray, np.ndarray] | None = None
    span = np.arange(BLOCK_SEGMENTS)[:, None] + np.arange(width)[None, :]
    for k0 in range(0, n, BLOCK_SEGMENTS):
        nb = min(BLOCK_SEGMENTS, n - k0)
        same = nb == BLOCK_SEGMENTS and k0 >= 1 and k0 + nb <= middle + 1  # every row a middle one
        if same and shared is not None:
            inverse, beyond = shared
        else:
            band = np.zeros((nb, nb + width))
            np.put_along_axis(band, span[:nb], weight[row_of[k0: k0 + nb]], axis=1)
            inverse, beyond = np.linalg.inv(np.eye(nb) - band[:, :nb]), band[:, nb:]
            if same:
                shared = inverse, beyond
        y = starts[k0: k0 + nb] @ inverse  # y (I - U) = what earlier blocks handed over
        starts[k0: k0 + nb] = y
        starts[k0 + nb: k0 + nb + width] += y @ beyond
    total = np.bincount(row_of, weights=starts[:n], minlength=len(rows)) @ const
    return Expectation(float(total[0]), float(total[1]), float(total[2]), float(total[3]), p.work_h)


def _fresh_sessions(p: Process, seg: np.ndarray, rows: np.ndarray, width: int, limit: float, step: float, lam: float,
                    write: float) -> tuple[np.ndarray, np.ndarray] | None:
    """For a fresh session at each segment of ``rows`` (see :func:`_recursion`): its rewards
    (a row of wall time, sessions, setup, checkpoint writes) and the expected hand-overs to a
    fresh session m = 0..width-1 segments later (column 0 is zero). None when a session can
    never get past a segment (its setup and the segment do not fit)."""
    n = len(seg)
    m = np.arange(width)
    j = rows[:, None] + m[None, :]  # the segment a session from row i reaches m segments in
    there = j < n
    j = np.minimum(j, n - 1)
    setup = np.where(rows == 0, p.setup_first_h, p.setup_resume_h)
    fits = (limit - setup[:, None] - m[None, :] * step >= seg[j] - 1e-12) & there
    ok = np.exp(-lam * seg)[j]  # the segment and its write see no interruption
    on = np.where(fits, ok, 0.0)
    reach = np.ones_like(on)  # the chance the session gets to its m-th segment
    np.cumprod(on[:, :-1], axis=1, out=reach[:, 1:])
    ends = np.where(fits, 1.0 - ok, 1.0)  # ... and ends there, to resume (past the run's end: never counted)
    setup_ok = np.exp(-lam * setup)
    denom = setup_ok * (1.0 - ends[:, 0])  # the setup and the first segment succeed (else retried)
    if np.any(denom <= 1e-15):
        return None
    wall = np.asarray(_min_exp(lam, seg))[j]
    before = np.asarray(_min_exp(lam, setup))
    const = np.stack([before + setup_ok * (reach * np.where(fits, wall, 0.0)).sum(axis=1), np.ones(len(rows)),
                      before, setup_ok * (reach * np.where(fits, ok * write, 0.0)).sum(axis=1)], axis=1)
    weight = setup_ok[:, None] * reach * ends
    weight[:, 0] = 0.0
    return const / denom[:, None], weight / denom[:, None]


def _deterministic(p: Process, seg: np.ndarray) -> Expectation:
    """Without interruptions the process is deterministic: count whole sessions
    (:func:`_sessions_without_interruptions`)."""
    lengths = _sessions_without_interruptions(p, seg)
    sessions = sum(k for _, k in lengths)
    wall = sum(h * k for h, k in lengths)
    setup = p.setup_first_h + (sessions - 1) * p.setup_resume_h
    return Expectation(wall, float(sessions), setup, len(seg) * p.checkpoint_write_h, p.work_h)


def _sessions_without_interruptions(p: Process, seg: np.ndarray) -> tuple[tuple[float, int], ...]:
    """Each session's wall hours, as (hours, how many), of a run that is never interrupted.

    A first session holds ``k0`` full segments, each resumed one ``k1``; the
    finishing session also fits the (shorter) last segment; every other
    session stops at its last checkpoint before the limit.
    """
    n, last = len(seg), float(seg[-1])
    step = p.checkpoint_every_h + p.checkpoint_write_h
    eps = 1e-9
    if p.session_limit_h is None or (n - 1) * step + last <= p.session_limit_h - p.setup_first_h + eps:
        return ((p.setup_first_h + (n - 1) * step + last, 1),)
    limit = p.session_limit_h
    k0 = math.floor((limit - p.setup_first_h) / step + eps)
    k1 = math.floor((limit - p.setup_resume_h) / step + eps)
    m = n - k0  # segments left after the first session (the last one among them)
    f = math.floor((limit - p.setup_resume_h - last) / step + eps)  # full segments a finishing session fits
    extra = max(0, math.ceil((m - 1 - f) / k1)) if k1 > 0 else 0  # resumed sessions that run to the limit
    tail = p.setup_resume_h + (m - 1 - extra * k1) * step + last
    return tuple((h, k) for h, k in ((p.setup_first_h + k0 * step, 1), (p.setup_resume_h + k1 * step, extra), (tail, 1))
                 if k > 0)


def wall_sd_h(p: Process, e: Expectation) -> float:
    """Standard deviation of one run's wall hours [h], exactly for a run without session limits:
    each segment (its checkpoint write included) is tried until an attempt sees no interruption;
    the first attempt runs the segment alone, a later one the resume setup and the segment. The
    failed attempts are geometric in number, each lasting an exponential time conditioned to end
    inside its attempt (and, on a paused machine, an exponential wait to resume), so segments are
    independent renewals and their variances add (:func:`_segment_moments`). Sessions stopped at
    a checkpoint before a limit add known setups, no spread. Against the simulation
    (:func:`simulate`) its P90 is within 0.3 % up to 1 interruption an hour on 2-h intervals
    (the compound-Poisson approximation used before was 1-6 % low there)."""
    lam = p.interruptions_per_h
    if lam <= 0 or not math.isfinite(e.wall_h):
        return 0.0 if math.isfinite(e.wall_h) else math.inf
    segs = p.segments() + p.checkpoint_write_h
    lengths, counts = np.unique(segs, return_counts=True)
    var = sum(k * _segment_moments(lam, float(a), p.setup_resume_h, p.resume_wait_h)[1]
              for a, k in zip(lengths, counts))
    return math.sqrt(var)


def _truncated_exp(lam: float, a: float) -> tuple[float, float]:
    """E[Y], E[Y^2] of an exponential time of rate ``lam`` given that it is shorter than ``a``."""
    q = math.exp(-lam * a)
    if q >= 1.0 - 1e-15:
        return a / 2.0, a * a / 3.0
    return 1.0 / lam - a * q / (1.0 - q), 2.0 / lam ** 2 - (a * a + 2.0 * a / lam) * q / (1.0 - q)


def _segment_moments(lam: float, a: float, setup_h: float, wait_h: float) -> tuple[float, float]:
    """(mean, variance) of the wall hours one segment of ``a`` hours takes: tried alone, then
    after each interruption (an exponential wait of mean ``wait_h`` on a paused machine) with
    the resume setup first, until an attempt sees no interruption."""
    q1, q2 = math.exp(-lam * a), math.exp(-lam * (setup_h + a))
    fails = []
    for length in (a, setup_h + a):
        y, y2 = _truncated_exp(lam, length)
        fails.append((y + wait_h, y2 + 2.0 * y * wait_h + 2.0 * wait_h * wait_h))
    (f1, f1s), (f2, f2s) = fails
    k_mean, k_var = (1.0 - q2) / q2, (1.0 - q2) / q2 ** 2  # failed attempts with the setup: geometric
    after = k_mean * f2 + setup_h + a  # from the first interruption on
    after_var = k_mean * (f2s - f2 * f2) + k_var * f2 * f2
    mean = q1 * a + (1.0 - q1) * (f1 + after)
    second = q1 * a * a + (1.0 - q1) * (f1s + 2.0 * f1 * after + after_var + after * after)
    return mean, max(second - mean * mean, 0.0)


def triangular_ppf(u: np.ndarray, low: float, mode: float, high: float) -> np.ndarray:
    """The triangular distribution's quantiles at ``u``: the inverse of its distribution
    function, as numpy's generator draws it from one uniform number each."""
    u = np.asarray(u, dtype=float)
    if high <= low:
        return np.full(u.shape, mode)
    cut = (mode - low) / (high - low)
    return np.where(u <= cut, low + np.sqrt(u * (high - low) * (mode - low)),
                    high - np.sqrt((1.0 - u) * (high - low) * (high - mode)))


def at_rates(rates: tuple[float, float, float], hours: tuple[float, float, float], drawn: np.ndarray) -> np.ndarray:
    """Expected hours at each of the ``drawn`` interruption rates, from the session model's
    ``hours`` at three ``rates`` (a default's low end, the rate used, its high end): the
    quadratic through them, the overhead being convex in the rate (a straight line where the
    rate used is an end of its range)."""
    (x0, x1, x2), (y0, y1, y2) = rates, hours
    if x0 == x1 or x1 == x2 or x0 == x2:
        xs, ys = np.asarray(rates, dtype=float), np.asarray(hours, dtype=float)
        keep = np.unique(xs, return_index=True)[1]
        return np.interp(drawn, xs[keep], ys[keep])
    d = np.asarray(drawn, dtype=float)  # Lagrange's form of the quadratic through the three points
    return (y0 * (d - x1) * (d - x2) / ((x0 - x1) * (x0 - x2)) + y1 * (d - x0) * (d - x2) / ((x1 - x0) * (x1 - x2))
            + y2 * (d - x0) * (d - x1) / ((x2 - x0) * (x2 - x1)))


#: Quantiles a default interruption rate's spread is taken over (deterministic: no draws).
RATE_QUANTILES = (np.arange(64) + 0.5) / 64


def wall_over_rate_h(rates: tuple[float, float, float], walls: tuple[float, float, float],
                     chance: float | None = None) -> tuple[float, float]:
    """(mean beyond the hours at the rate used, standard deviation) of a phase's expected wall
    hours when its interruption rate is a default, not known: the rate triangular over its
    sourced range, most likely the rate used (the uncertainty analysis's draw,
    :func:`triangular_ppf`; its mean lies above the rate used when the range reaches further up:
    0.02-0.5 around 0.1 has a mean of 0.21), the hours through :func:`at_rates`. (0, 0) where the
    rate is published (no range) or the range is empty.

    With ``chance`` (the plan's confidence), the spread is the one the plan books there: the
    larger of the sd and the spread that puts the hours at the rate's quantile at the mean + z x
    it. The range reaches further up than down and the hours grow faster than the rate, so the
    mean + z sd fell short of that quantile: a spot T4 planned at 90 % met its deadline in 88.5 %
    of its own uncertainty analysis's draws."""
    low, rate, high = rates
    if not (np.all(np.isfinite(rates)) and np.all(np.isfinite(walls))) or high <= low:
        return 0.0, 0.0
    z = z_at(chance)
    # the grid's hours and, at the end, those at the chance's quantile: one fit through the three
    at = chance if chance is not None and z > 0.0 else 0.5
    drawn = at_rates(rates, walls, triangular_ppf(np.append(RATE_QUANTILES, at), low, rate, high))
    hours = drawn[:-1]
    mean, sd = float(hours.mean()), float(hours.std())
    if z > 0.0:
        sd = max(sd, (float(drawn[-1]) - mean) / z)
    return mean - walls[1], sd


def wall_at_chance_h(mean_h: float, sd_h: float, chance: float) -> float:
    """Wall hours not exceeded with probability ``chance`` (normal approximation of a sum of
    many interruptions' costs; never below the mean) [h]."""
    if sd_h == 0.0 or not math.isfinite(mean_h):
        return mean_h
    return mean_h + max(z_at(chance), 0.0) * sd_h


def experiment_interval_h(checkpoint_every_h: float, experiment_h: float | None) -> float:
    """The checkpoint interval of a phase made of experiments of ``experiment_h`` device hours,
    each starting fresh (``run_length``): every experiment is cut into equal intervals no longer
    than ``checkpoint_every_h``, so the last one ends with the experiment, whose results are kept.
    An interruption then loses at most one interval of the experiment it hits, never work of a
    finished experiment (a 20-minute experiment checkpointed every hour loses at most 20
    minutes). Without experiments, the phase's own interval [h]."""
    if experiment_h is None or not experiment_h > 0:
        return checkpoint_every_h
    return experiment_h / max(1, math.ceil(experiment_h / checkpoint_every_h - 1e-9))


#: Billing in units of at least a minute, on an interrupted run, is averaged over this many
#: simulated runs (seeded: the same figure every time); finer billing rounds by half a unit.
BILLING_SAMPLED_FROM_H = 1 / 60
BILLING_TRIALS = 2000


def billed_hours(p: Process, wall_h: float, sessions: float, startup_h: float, billing_unit_h: float,
                 exact: bool = True) -> float:
    """Billed hours of one run [h]: each session's startup and wall hours, rounded up to the
    billing unit. Without interruptions the sessions are known, so the rounding is exact (100 h
    in 10 h sessions with 30 min setup and hourly billing: 11 sessions of 10 h and one of 1.5 h,
    112 billed hours); with them, each session is taken to round up by half a unit on average
    (sessions end at random times; ``wall_h`` and ``sessions`` are the run's expectations, waits
    for a paused machine excluded), or, for billing by the minute or coarser, the mean of the
    session model's own simulation, which rounds each simulated session. Without ``exact`` (``p`` stands for a share of the run),
    the average rounding is used in any case."""
    if exact and p.interruptions_per_h == 0.0 and p.feasible():
        lengths = _sessions_without_interruptions(p, p.segments() + p.checkpoint_write_h)
        if billing_unit_h <= 0:
            return sum((startup_h + h) * k for h, k in lengths)
        return sum(math.ceil((startup_h + h) / billing_unit_h - 1e-9) * billing_unit_h * k for h, k in lengths)
    if exact and billing_unit_h >= BILLING_SAMPLED_FROM_H and p.feasible() and math.isfinite(wall_h):
        # sessions end at the limit (known lengths) or at random: the session model's own
        # simulation gives the mean rounding (half a unit a session is 1-3 % off)
        return float(simulate(p, BILLING_TRIALS, 0, startup_h=startup_h, billing_h=billing_unit_h).billed_h.mean())
    return wall_h + sessions * (startup_h + billing_unit_h / 2.0)


@dataclass(frozen=True)
class Samples:
    """Monte Carlo samples, one value per trial [h, except sessions]."""

    wall_h: np.ndarray
    sessions: np.ndarray
    setup_h: np.ndarray
    checkpoint_h: np.ndarray
    billed_h: np.ndarray
    work_h: float  # device hours of training per trial (all runs)
    wait_h: np.ndarray | float = 0.0  # unbilled waits for paused machines (in wall_h)

    @property
    def lost_h(self) -> np.ndarray:
        return np.maximum(0.0, self.wall_h - self.setup_h - self.checkpoint_h - self.wait_h - self.work_h)


def simulate(p: Process, trials: int, seed: int, runs: int = 1, startup_h: float = 0.0,
             billing_h: float | None = None) -> Samples:
    """Sample the session process ``trials`` times (each trial: ``runs`` runs in a row).

    Vectorised over trials, one loop step per session: each session draws
    its time to the next interruption (exponential, memoryless), ends at
    that time, at its limit or when the run is done, and keeps the segments
    completed before then. Billed hours add ``startup_h`` per session and
    round each session up to ``billing_h``.
    """
    total = trials * runs
    seg = p.segments() + p.checkpoint_write_h
    n = len(seg)
    step = p.checkpoint_every_h + p.checkpoint_write_h
    last = seg[-1]
    if not p.feasible():
        inf = np.full(trials, math.inf)
        return Samples(inf, inf, inf, inf, inf, p.work_h * runs)
    rng = np.random.default_rng(seed)
    lam = p.interruptions_per_h
    limit = math.inf if p.session_limit_h is None else p.session_limit_h
    wall, sessions, setup_t, ckpt, billed, wait = (np.zeros(total) for _ in range(6))
    i = np.zeros(total, dtype=np.int64)  # next segment of each trial's run
    active = np.arange(total)
    while active.size:
        ii = i[active]
        if p.resume_wait_h > 0:  # a paused machine resumes after an (exponential) wait, unbilled
            waited = np.where(sessions[active] > 0, rng.exponential(p.resume_wait_h, size=active.size), 0.0)
            wall[active] += waited
            wait[active] += waited
        setup = np.where(ii == 0, p.setup_first_h, p.setup_resume_h)
        t_fail = rng.exponential(1.0 / lam, size=active.size) if lam > 0 else np.full(active.size, math.inf)
        full_left = n - 1 - ii  # full-length segments before the last one
        rest = full_left * step + last  # wall hours to finish the run from here
        finished = np.minimum(t_fail, limit) - setup >= rest - 1e-12
        # unless it finishes, a session is stopped at its last checkpoint before the limit
        stop = setup + np.floor(np.maximum(limit - setup, 0.0) / step + 1e-12) * step if math.isfinite(limit) else limit
        end = np.minimum(t_fail, stop)
        avail = end - setup
        k = np.where(finished, full_left + 1, np.minimum(np.floor(np.maximum(avail, 0.0) / step + 1e-12), full_left))
        k = k.astype(np.int64)
        spent = np.where(finished, setup + rest, end)
        in_setup = np.minimum(spent, setup)
        wall[active] += spent
        setup_t[active] += in_setup
        ckpt[active] += k * p.checkpoint_write_h
        sessions[active] += 1
        session_billed = spent + startup_h
        if billing_h:
            session_billed = np.ceil(session_billed / billing_h - 1e-9) * billing_h
        billed[active] += session_billed
        i[active] = ii + k
        active = active[~finished]

    def per_trial(x: np.ndarray) -> np.ndarray:
        return x.reshape(trials, runs).sum(axis=1)

    return Samples(per_trial(wall), per_trial(sessions), per_trial(setup_t), per_trial(ckpt), per_trial(billed),
                   p.work_h * runs, per_trial(wait))


def young_interval_h(checkpoint_write_h: float, interruptions_per_h: float) -> float:
    """Young's first-order optimum checkpoint interval sqrt(2 C / lambda) [h] (inf without interruptions)."""
    if interruptions_per_h <= 0:
        return math.inf
    return math.sqrt(2.0 * max(checkpoint_write_h, 1e-6) / interruptions_per_h)


def recommended_interval(p: Process) -> float:
    """Young's optimum, fitted so that the last checkpoint of a session completes at its limit.

    With a limit, a session has room for ``U = limit - setup`` hours; the
    interval is ``U / m - C`` for the smallest number of segments ``m`` that
    makes it no longer than Young's optimum. Without a limit and without
    interruptions there is nothing to recommend (inf). Never less than a minute
    (:data:`MIN_CHECKPOINT_EVERY_H`): a free checkpoint write (0 GB) sends Young's
    optimum to zero, and no training setup checkpoints every few seconds.
    """
    young = max(young_interval_h(p.checkpoint_write_h, p.interruptions_per_h), MIN_CHECKPOINT_EVERY_H)
    if p.session_limit_h is None:
        return young  # inf without interruptions: nothing to recommend
    room = p.session_limit_h - p.setup_resume_h
    if room <= p.checkpoint_write_h:
        return p.checkpoint_every_h
    m = max(1, math.ceil(room / (young + p.checkpoint_write_h))) if math.isfinite(young) else 1
    return max(min(room / m - p.checkpoint_write_h, p.work_h), min(MIN_CHECKPOINT_EVERY_H, p.work_h))
