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

:func:`expected` computes the exact expectation of this process by backward
recursion over (segment, segments done in the session): each state's
expected remaining time is affine in the expected time of a fresh session at
the same segment, which closes the recursion (the renewal argument of Daly,
"A higher order estimate of the optimum checkpoint interval for restart
dumps", FGCS 2006, generalised to hard session limits). :func:`simulate`
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

from .units import HOURS_PER_WEEK, MIN_CHECKPOINT_EVERY_H

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
    """The sessions a person would count: the expectation rounded up, and never fewer than the
    wall hours (waits aside) need at the session limit."""
    if not wall_h > 0:
        return 0
    n = max(1, math.ceil(expected_sessions - 1e-6))
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


def _coefficients(p: Process, i: int, a: float, kmax: int) -> tuple | None:
    """The recursion's step at segment ``i`` (``a`` hours of training and its write), for every
    count k of segments this session already ran: F(i, k) = alpha + beta V(i) with
    alpha = C + D F(i+1, k+1), and V(i), a fresh session at segment i (whose setup may itself be
    interrupted), = cv + sv alpha[:, 0]. Rows of C and F are the rewards: wall time, sessions,
    setup time, checkpoint time. None when V(i) diverges (a session can never get past i).

    The step does not depend on the run's length, and past segment ``kmax`` not on ``i``
    either: it is kept per process for every run of the same option and phase (a what-if that
    moves the GPU-hours, the two shorter runs of a long one). The arrays are shared: read only."""
    return _step(p.setup_first_h, p.setup_resume_h, p.session_limit_h, p.interruptions_per_h, p.checkpoint_every_h,
                 p.checkpoint_write_h, min(i, kmax), a, kmax)


#: Steps kept per process: each holds a few arrays of ``kmax`` floats (about 46 kB at a
#: 1-minute checkpoint in 12-h sessions), so 2,048 stay under 100 MB; 65,536 took 1.1 GB on the
#: thesis at 1-minute checkpoints, and ran slower (bench: 3.6 s against 3.4 s).
STEPS_KEPT = 2048


@functools.lru_cache(maxsize=STEPS_KEPT)
def _step(setup_first_h: float, setup_resume_h: float, session_limit_h: float | None, lam: float,
          checkpoint_every_h: float, checkpoint_write_h: float, i: int, a: float, kmax: int) -> tuple | None:
    k = np.arange(kmax)
    first = (i - k) == 0  # a session that reached segment i after k segments started at segment i-k
    setup = np.where(first, setup_first_h, setup_resume_h)
    if session_limit_h is None:
        room = np.full(kmax, np.inf)
    else:
        room = session_limit_h - setup - k * (checkpoint_every_h + checkpoint_write_h)  # time left
    fits = room >= a - 1e-12
    ok = math.exp(-lam * a)
    c_step = np.zeros((4, kmax))
    c_step[0] = np.where(fits, _min_exp(lam, a), 0.0)  # a segment that does not fit: stopped at the checkpoint
    c_step[3] = np.where(fits, ok * checkpoint_write_h, 0.0)
    d_step = np.where(fits, ok, 0.0)
    beta = np.where(fits, 1.0 - ok, 1.0)
    s = setup_first_h if i == 0 else setup_resume_h
    s_ok = math.exp(-lam * s)
    denom = 1.0 - (1.0 - s_ok) - s_ok * beta[0]  # F(i, 0) is a session that started at segment i
    if denom <= 1e-15:
        return None
    cv = np.array([_min_exp(lam, s), 1.0, _min_exp(lam, s), 0.0]) / denom
    for array in (c_step, d_step, beta, cv):
        array.flags.writeable = False  # shared between calls
    return c_step, d_step, beta, cv, s_ok / denom


def _recursion(p: Process, seg: np.ndarray) -> Expectation:
    """Backward recursion over (segment, segments done in this session): see the module docstring.

    Between the first ``kmax`` segments (where a session may still be the run's first) and the
    last (shorter) one, every step has the same coefficients (:func:`_coefficients`), so those
    steps are one affine map of F(i+1, .) applied repeatedly: a small matrix product each."""
    n = len(seg)
    inf = Expectation(math.inf, math.inf, math.inf, math.inf, p.work_h)
    if p.session_limit_h is None:
        kmax = 1  # no limit: the position in a session does not matter
    else:
        step = p.checkpoint_every_h + p.checkpoint_write_h
        kmax = int((p.session_limit_h - min(p.setup_first_h, p.setup_resume_h)) // step) + 2
    nxt = np.zeros((4, kmax + 1))  # F(i+1, k) for k = 0..kmax (beyond the end of the run: 0)
    v = np.zeros(4)
    lo, hi = max(kmax, 1), n - 2  # the steps with equal coefficients
    i = n - 1
    while i >= 0:
        if i == hi and hi - lo >= 2 and p.session_limit_h is not None and np.all(seg[lo: hi + 1] == seg[hi]):
            co = _coefficients(p, hi, float(seg[hi]), kmax)
            if co is None:
                return inf
            c_step, d_step, beta, cv, sv = co
            # the affine map y -> y M + const with M = shift * d + sv d[0] e1 beta^T, applied
            # through its structure (a shift and a rank-one term): O(kmax) a step, not O(kmax^2)
            # (a 1-minute checkpoint in 12 h sessions is kmax = 722: 34 s of matrix products)
            const = c_step + np.outer(cv + sv * c_step[:, 0], beta)
            scaled_beta = sv * d_step[0] * beta
            d_next = d_step[:-1]
            y = nxt[:, :kmax].copy()
            for _ in range(hi - lo + 1):
                new = const + y[:, 1:2] * scaled_beta[None, :]
                new[:, :-1] += y[:, 1:] * d_next[None, :]
                y = new
            nxt = np.concatenate([y, np.zeros((4, 1))], axis=1)
            i = lo - 1
            continue
        co = _coefficients(p, i, float(seg[i]), kmax)
        if co is None:
            return inf
        c_step, d_step, beta, cv, sv = co
        if i == n - 1:
            f_next = np.zeros((4, kmax))
        elif p.session_limit_h is None:
            f_next = nxt[:, 0:1]  # without a limit the position in the session does not matter
        else:
            f_next = nxt[:, 1: kmax + 1]
        alpha = c_step + d_step[None, :] * f_next
        v = cv + sv * alpha[:, 0]
        nxt = np.concatenate([alpha + beta[None, :] * v[:, None], np.zeros((4, 1))], axis=1)
        i -= 1
    return Expectation(float(v[0]), float(v[1]), float(v[2]), float(v[3]), p.work_h)  # V(0): the run's start


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
    xs, ys = np.asarray(rates, dtype=float), np.asarray(hours, dtype=float)
    keep = np.unique(xs, return_index=True)[1]
    if len(keep) < 3:
        return np.interp(drawn, xs[keep], ys[keep])
    return np.polyval(np.polyfit(xs, ys, 2), drawn)


#: Quantiles a default interruption rate's spread is taken over (deterministic: no draws).
RATE_QUANTILES = (np.arange(64) + 0.5) / 64


def wall_over_rate_h(rates: tuple[float, float, float], walls: tuple[float, float, float]) -> tuple[float, float]:
    """(mean beyond the hours at the rate used, standard deviation) of a phase's expected wall
    hours when its interruption rate is a default, not known: the rate triangular over its
    sourced range, most likely the rate used (the uncertainty analysis's draw,
    :func:`triangular_ppf`; its mean lies above the rate used when the range reaches further up:
    0.02-0.5 around 0.1 has a mean of 0.21), the hours through :func:`at_rates`. (0, 0) where the
    rate is published (no range) or the range is empty."""
    low, rate, high = rates
    if not (np.all(np.isfinite(rates)) and np.all(np.isfinite(walls))) or high <= low:
        return 0.0, 0.0
    hours = at_rates(rates, walls, triangular_ppf(RATE_QUANTILES, low, rate, high))
    return float(hours.mean() - walls[1]), float(hours.std())


def wall_at_chance_h(mean_h: float, sd_h: float, chance: float) -> float:
    """Wall hours not exceeded with probability ``chance`` (normal approximation of a sum of
    many interruptions' costs; never below the mean) [h]."""
    from statistics import NormalDist

    if sd_h == 0.0 or not math.isfinite(mean_h):
        return mean_h
    return mean_h + max(NormalDist().inv_cdf(chance), 0.0) * sd_h


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
