"""The session model: exact expectation by hand and against a closed form, Monte Carlo
against the expectation, recommended checkpoint intervals."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.model import sessions
from planner.model.sessions import Process, expected, recommended_interval, simulate, weekly_capacity_h, young_interval_h

from .conftest import examples


def test_one_uninterrupted_session_by_hand():
    # 100 h in 1 h segments, 0.01 h per checkpoint write, 0.2 h setup
    e = expected(Process(100, 1.0, 0.01, 0.2, 0.25))
    assert e.wall_h == pytest.approx(0.2 + 100 + 100 * 0.01)
    assert e.sessions == 1 and e.lost_h == pytest.approx(0.0)


def test_hard_session_limit_by_hand():
    # segments of 1.02 h; a 12 h session holds 11 after a 0.3 h (first) or 0.35 h (resumed) setup,
    # and is stopped at its 11th checkpoint (11.52 h, 11.57 h): running on to the limit would lose
    # the rest. 100 segments: 9 full sessions (99 segments) + 0.35 + 1.02 h, nothing lost.
    e = expected(Process(100, 1.0, 0.02, 0.3, 0.35, session_limit_h=12))
    assert e.sessions == pytest.approx(10)
    assert e.wall_h == pytest.approx((0.3 + 11 * 1.02) + 8 * (0.35 + 11 * 1.02) + 0.35 + 1.02)
    assert e.setup_h == pytest.approx(0.3 + 9 * 0.35)
    assert e.lost_h == pytest.approx(0.0, abs=1e-9)
    assert e.lost_h == pytest.approx(e.wall_h - 100 - e.setup_h - 100 * 0.02, abs=1e-9)


def test_interruptions_without_limit_match_the_closed_form():
    # With restart cost R (same for every session), each segment of a = tau + delta hours takes
    # e^{lam R} (e^{lam a} - 1) / lam in expectation, and the first setup (e^{lam R} - 1) / lam
    # (Daly 2006, eq. for exponential failures with restart).
    lam, r, tau, delta, n = 0.4, 0.15, 0.5, 0.02, 80
    e = expected(Process(n * tau, tau, delta, r, r, None, lam))
    a = tau + delta
    closed = math.expm1(lam * r) / lam + n * math.exp(lam * r) * math.expm1(lam * a) / lam
    assert e.wall_h == pytest.approx(closed, rel=1e-10)


CASES = {
    "no interruptions": (Process(100, 1.0, 0.01, 0.2, 0.25), 1.0),
    "frequent interruptions": (Process(50, 0.5, 0.02, 0.1, 0.15, None, 0.5), 1.0),
    "hard session limit": (Process(100, 1.0, 0.02, 0.3, 0.35, 12, 0.0), 1.0),
    "limit and disconnects": (Process(100, 0.75, 0.02, 0.3, 0.35, 12, 0.1), 1.0),
    "weekly quota": (Process(120, 1.0, 0.02, 0.5, 0.6, 12, 0.05), 30.0 / 168),
}


@pytest.mark.parametrize("name", list(CASES))
def test_monte_carlo_mean_matches_the_expectation(name):
    p, share_of_week = CASES[name]
    e = expected(p)
    sm = simulate(p, trials=4000, seed=7)
    for samples, mean in ((sm.wall_h, e.wall_h), (sm.sessions, e.sessions), (sm.setup_h, e.setup_h),
                          (sm.checkpoint_h, e.checkpoint_h), (sm.lost_h, e.lost_h)):
        se = samples.std(ddof=1) / math.sqrt(samples.size)
        if se < 1e-9:
            assert samples.mean() == pytest.approx(mean, rel=1e-9, abs=1e-9)  # deterministic: exact
        else:
            assert abs(samples.mean() - mean) < 3 * se, (name, samples.mean(), mean, se)
    # the calendar: a quota of 30 h/week turns wall hours into weeks; mean finish = E[wall] / quota
    weeks = sm.wall_h / (168 * share_of_week)
    se = weeks.std(ddof=1) / math.sqrt(weeks.size)
    assert abs(weeks.mean() - e.wall_h / (168 * share_of_week)) <= 3 * se + 1e-12


def test_runs_add_up():
    p = Process(40, 1.0, 0.01, 0.2, 0.3, 12, 0.05)
    sm = simulate(p, trials=3000, seed=1, runs=3)
    se = sm.wall_h.std(ddof=1) / math.sqrt(3000)
    assert abs(sm.wall_h.mean() - 3 * expected(p).wall_h) < 3 * se


def test_billing_rounds_each_session_up():
    # 10 h of work, 0.25 h setup, 5 min startup, billed by the hour: 11 h per run
    sm = simulate(Process(10, 10.0, 0.0, 0.25, 0.25), trials=5, seed=0, runs=3, startup_h=5 / 60, billing_h=1.0)
    assert np.all(sm.billed_h == 33.0) and np.all(sm.wall_h == pytest.approx(30.75))


def test_same_seed_same_samples():
    p = Process(50, 0.5, 0.02, 0.1, 0.15, 12, 0.3)
    assert np.array_equal(simulate(p, 500, seed=3).wall_h, simulate(p, 500, seed=3).wall_h)
    assert not np.array_equal(simulate(p, 500, seed=3).wall_h, simulate(p, 500, seed=4).wall_h)


def test_session_shorter_than_setup_and_a_segment_cannot_run():
    p = Process(10, 1.0, 0.0, 0.5, 0.5, session_limit_h=1.2)
    assert not p.feasible()
    assert math.isinf(expected(p).wall_h) and np.all(np.isinf(simulate(p, 10, 0).wall_h))


def test_young_interval():
    # sqrt(2 x 0.05 h / 0.1 per h) = 1 h
    assert young_interval_h(0.05, 0.1) == pytest.approx(1.0)
    assert math.isinf(young_interval_h(0.05, 0.0))


def test_recommended_interval_lands_a_checkpoint_at_the_limit():
    # room = 12 - 0.5 = 11.5 h; Young: 1 h; 11.5 / (1 + 0.05) = 10.95 -> 11 segments of 11.5/11 h
    p = Process(100, 0.25, 0.05, 0.4, 0.5, session_limit_h=12, interruptions_per_h=0.1)
    assert recommended_interval(p) == pytest.approx(11.5 / 11 - 0.05)
    # and it is no worse than the user's 15 min cadence, by the exact expectation
    better = expected(Process(100, recommended_interval(p), 0.05, 0.4, 0.5, 12, 0.1)).wall_h
    assert better < expected(p).wall_h
    # without interruptions: one checkpoint just before the limit
    assert recommended_interval(Process(100, 0.25, 0.05, 0.4, 0.5, 12, 0.0)) == pytest.approx(11.5 - 0.05)
    assert math.isinf(recommended_interval(Process(100, 0.25, 0.05)))


def test_weekly_capacity():
    assert weekly_capacity_h(None, None, False, 2) == 168
    assert weekly_capacity_h(12, 30, True, 2) == 30  # quota binds
    assert weekly_capacity_h(4, None, True, 1) == 28  # one 4 h start a day
    assert weekly_capacity_h(12, None, False, 0.1) == 168  # nobody needs to start it


@pytest.mark.parametrize("args", [
    dict(work_h=10, checkpoint_every_h=1, interruptions_per_h=0.1),
    dict(work_h=10.5, checkpoint_every_h=1, checkpoint_write_h=0.05, setup_first_h=0.5, setup_resume_h=0.3,
         interruptions_per_h=0.3),
    dict(work_h=3, checkpoint_every_h=0.7, checkpoint_write_h=0.1, setup_first_h=1.0, setup_resume_h=0.2,
         interruptions_per_h=1.0),
])
def test_renewal_sum_equals_the_recursion_without_a_limit(args):
    # two independent computations of the same expectation: the telescoped sum and the backward recursion
    p = sessions.Process(**args)
    seg = p.segments() + p.checkpoint_write_h
    fast, slow = sessions._renewal(p, seg), sessions._recursion(p, seg)
    for field in ("wall_h", "sessions", "setup_h", "checkpoint_h"):
        assert getattr(fast, field) == pytest.approx(getattr(slow, field), rel=1e-12)


def test_long_runs_extend_linearly_within_a_hair_of_the_recursion():
    # 600 segments with a 12 h limit and disconnects: the extension from two runs of 50 and 100
    # segments agrees with the full recursion to 1e-4 (about 3 s in 341 h, 0.001 of 62 sessions)
    p = sessions.Process(work_h=300, checkpoint_every_h=0.5, checkpoint_write_h=0.01, setup_first_h=0.4,
                         setup_resume_h=0.3, session_limit_h=12, interruptions_per_h=0.15)
    full = sessions._recursion(p, p.segments() + p.checkpoint_write_h)
    fast = sessions.expected(p)
    for field in ("wall_h", "sessions", "setup_h", "checkpoint_h"):
        assert getattr(fast, field) == pytest.approx(getattr(full, field), rel=1e-4)


@pytest.mark.parametrize("lam", [2.0, 5.0])
def test_high_interruption_rates_match_the_closed_form_and_the_simulation(lam):
    # more than one interruption per checkpoint interval: each 1 h segment takes
    # e^{lam R} (e^{lam a} - 1) / lam on average (e^2 - 1)/2 = 3.19 h at lam = 2
    r, tau, n = 0.05, 1.0, 6
    p = Process(n * tau, tau, 0.0, r, r, None, lam)
    e = expected(p)
    closed = math.expm1(lam * r) / lam + n * math.exp(lam * r) * math.expm1(lam * tau) / lam
    assert e.wall_h == pytest.approx(closed, rel=1e-10)
    assert e.lost_h > n  # most of the time is lost work
    if lam == 2.0:
        sm = simulate(p, trials=20_000, seed=3)
        assert sm.wall_h.mean() == pytest.approx(e.wall_h, rel=0.03)


@pytest.mark.parametrize("work_h, every_h, limit_h", [(100, 0.75, 12), (47.3, 0.5, 9), (40, 1.0, 4.5)])
def test_recursion_with_vanishing_interruptions_counts_whole_sessions(work_h, every_h, limit_h):
    # an independent closed form: without interruptions each session runs whole segments up to its
    # limit (sessions._deterministic counts them); the recursion at 1e-9 interruptions per hour,
    # whose middle segments share their coefficients, must agree to a hair
    p = Process(work_h, every_h, 0.02, 0.4, 0.3, limit_h, 1e-9)
    seg = p.segments() + p.checkpoint_write_h
    exact = sessions._deterministic(dataclasses.replace(p, interruptions_per_h=0.0), seg)
    e = sessions._recursion(p, seg)
    assert len(seg) > 30  # long enough for the repeated steps to matter
    for field in ("wall_h", "sessions", "setup_h", "checkpoint_h"):
        assert getattr(e, field) == pytest.approx(getattr(exact, field), rel=1e-6)


def test_runs_of_every_length_across_a_block_count_whole_sessions():
    # the rows of the recursion in the middle of a run share one block inverse, the last
    # sessions' worth have their own: runs of 48 consecutive lengths (every way the run's end can
    # fall across a block of 48 segments) against the whole-session count, as above
    for n in range(760, 808):
        p = Process((n - 1) * 0.5 + 0.3, 0.5, 0.02, 0.4, 0.3, 12, 1e-9)
        seg = p.segments() + p.checkpoint_write_h
        exact = sessions._deterministic(dataclasses.replace(p, interruptions_per_h=0.0), seg)
        e = sessions._recursion(p, seg)
        for field in ("wall_h", "sessions", "setup_h", "checkpoint_h"):
            assert getattr(e, field) == pytest.approx(getattr(exact, field), rel=1e-6), (n, field)


def _by_states(p: Process, seg: np.ndarray) -> tuple[float, ...]:
    """The process's expectation by plain backward recursion over every state (segment i, k
    segments done in this session), written from the definition in sessions' docstring: an
    independent method for the banded solution. F(i, k) = alpha + beta V(i), with V(i) a fresh
    session at i (its setup retried when interrupted); rewards: wall, sessions, setup, writes."""
    lam, step, n = p.interruptions_per_h, p.checkpoint_every_h + p.checkpoint_write_h, len(seg)

    def wall(x: float) -> float:  # E[min(T, x)], T ~ Exp(lam)
        return -math.expm1(-lam * x) / lam

    after: dict[int, np.ndarray] = {}  # F(i + 1, k) by k; past the run's end nothing is left
    for i in reversed(range(n)):
        a, ok = float(seg[i]), math.exp(-lam * float(seg[i]))
        parts = {}
        for k in range(i + 1):
            setup = p.setup_first_h if i - k == 0 else p.setup_resume_h
            if p.session_limit_h is None or p.session_limit_h - setup - k * step >= a - 1e-12:
                rest = after.get(k + 1, np.zeros(4)) if i < n - 1 else np.zeros(4)
                parts[k] = (np.array([wall(a), 0, 0, ok * p.checkpoint_write_h]) + ok * rest, 1 - ok)
            else:  # stopped at its last checkpoint: a fresh session takes over here
                parts[k] = (np.zeros(4), 1.0)
        s = p.setup_first_h if i == 0 else p.setup_resume_h
        s_ok = math.exp(-lam * s)
        alpha0, beta0 = parts[0]
        v = (np.array([wall(s), 1, wall(s), 0]) + s_ok * alpha0) / (s_ok * (1 - beta0))
        after = {k: alpha + beta * v for k, (alpha, beta) in parts.items()}
    return tuple(float(x) for x in v)


@settings(max_examples=examples(300), deadline=None)
@given(n=st.integers(1, 170), every=st.sampled_from([0.25, 0.5, 1.0]), last=st.floats(0.05, 1.0),
       write=st.floats(0.0, 0.1), first=st.floats(0.0, 1.0), resume=st.floats(0.0, 1.0),
       limit=st.floats(2.5, 12.0), lam=st.floats(0.01, 1.0))
def test_the_banded_solution_equals_a_plain_recursion_over_every_state(n, every, last, write, first, resume, limit,
                                                                       lam):
    # runs of up to 170 segments in sessions of 2.5 to 12 h: across several blocks of 48 rows,
    # the middle ones sharing an inverse, with a last segment of any length
    p = Process((n - 1) * every + last * every, every, write, first, resume, limit, lam)
    if not p.feasible():
        return
    seg = p.segments() + p.checkpoint_write_h
    e = sessions._recursion(p, seg)
    for got, want in zip((e.wall_h, e.sessions, e.setup_h, e.checkpoint_h), _by_states(p, seg)):
        assert got == pytest.approx(want, rel=1e-9)


def test_a_free_checkpoint_write_is_never_recommended_more_often_than_a_minute():
    # checkpoint_size: 0 GB writes in no time, so Young's sqrt(2C/lambda) is 0; the recommendation is
    # bounded at one minute (the least a scenario may ask), and the session model prices it quickly:
    # 150 h in 12 h sessions of one-minute segments is 9,000 segments, not millions
    p = Process(work_h=150.0, checkpoint_every_h=0.5, checkpoint_write_h=0.0, setup_first_h=0.1, setup_resume_h=0.1,
                session_limit_h=12.0, interruptions_per_h=0.2)
    rec = recommended_interval(p)
    assert rec == pytest.approx(1 / 60)
    e = expected(dataclasses.replace(p, checkpoint_every_h=rec))
    # a minute's segments lose half a minute per interruption on average: wall ~ work + setups + little loss
    assert 150.0 < e.wall_h < 150.0 * 1.05
    # a run shorter than a minute is its own interval
    assert recommended_interval(dataclasses.replace(p, work_h=0.01)) == pytest.approx(0.01)


def test_billed_hours_without_interruptions_round_each_known_session():
    # 100 h of work in 1 h checkpoint intervals (free writes), 10 h sessions, 30 min setup, hourly billing:
    # each session fits 9 intervals (0.5 + 9 = 9.5 h) and is stopped there, before its 10 h limit;
    # 100 intervals = 11 sessions of 9 and a 12th of one: 11 x 9.5 h + (0.5 + 1) h = 106 wall-h, billed
    # 11 x 10 + 2 = 112 h (a whole unit per session, not half a unit on average: 106 + 12 x 0.5 = 112 by chance)
    p = Process(work_h=100.0, checkpoint_every_h=1.0, checkpoint_write_h=0.0, setup_first_h=0.5,
                setup_resume_h=0.5, session_limit_h=10.0)
    e = expected(p)
    assert e.wall_h == pytest.approx(106.0) and e.sessions == 12
    assert sessions.billed_hours(p, e.wall_h, e.sessions, 0.0, 1.0) == pytest.approx(112.0)
    # a 36-minute startup a session is billed too: 11 x ceil(10.1) + ceil(2.1) = 11 x 11 + 3
    assert sessions.billed_hours(p, e.wall_h, e.sessions, 0.6, 1.0) == pytest.approx(124.0)
    # with interruptions the sessions stop at their last checkpoint (9.5 h) or at random: the mean of
    # the session model's simulation, against a larger, independent one
    q = dataclasses.replace(p, interruptions_per_h=0.1)
    e = expected(q)
    billed = sessions.billed_hours(q, e.wall_h, e.sessions, 0.0, 1.0)
    assert billed == pytest.approx(simulate(q, 40_000, 99, billing_h=1.0).billed_h.mean(), rel=0.005)
    # a share of a run (not exact) and billing by the second: half a unit a session
    assert sessions.billed_hours(q, 120.0, 15.0, 0.0, 1.0, exact=False) == pytest.approx(120.0 + 15 * 0.5)


@pytest.mark.parametrize("p, runs", [
    (Process(100, 0.5, 0.01, 0.2, 0.25, 12.0, 0.1), 1),  # session limits and disconnects
    (Process(100, 0.5, 0.01, 0.2, 0.25, None, 0.5), 1),  # a preemption every 2 h
    (Process(85, 0.5, 0.003, 0.1, 0.1, None, 0.1, 0.5), 1),  # a paused machine that waits to resume
    (Process(61.4, 1.0, 0.01, 0.1, 0.12, None, 0.1, 0.5), 3),  # three runs in a row
    (Process(300, 1.0, 0.01, 0.1, 0.12, 9, 0.05), 1),
    (Process(100, 1.0, 0.01, 0.2, 0.25, 12.0, 1.0), 1),  # issue 35: 1 interruption an hour, 1-h intervals
    (Process(100, 2.0, 0.01, 0.2, 0.25, None, 0.5), 1),  # and 2-h intervals: the old P90 was 2.1-2.6 % low
])
def test_wall_hours_at_a_chance_match_the_simulation(p, runs):
    # the renewal per segment the program plans with (normal, its exact variance), against 20,000
    # simulated runs: P90 within 0.5 % (P50 within 1 %: the wall hours are skewed, their median
    # below their mean); the spread within 3 % without a session limit, and on the safe side with
    # one (a session stopped at a checkpoint before its limit spares the interruptions it would meet)
    e = expected(p)
    sd = sessions.wall_sd_h(p, e) * math.sqrt(runs)
    sm = simulate(p, 20_000, 3, runs=runs)
    for chance, rel in ((0.5, 0.01), (0.9, 0.005)):
        approx = sessions.wall_at_chance_h(e.wall_h * runs, sd, chance)
        assert approx == pytest.approx(np.quantile(sm.wall_h, chance), rel=rel)
    assert 0.97 * np.std(sm.wall_h) <= sd <= (1.03 if p.session_limit_h is None else 1.2) * np.std(sm.wall_h)
    # never interrupted: no spread
    assert sessions.wall_sd_h(dataclasses.replace(p, interruptions_per_h=0.0), e) == 0.0


def test_a_start_up_is_billed_by_the_second_too():
    # 100 h in 1 h intervals, 10 h sessions, 30 min setup: 11 sessions of 9.5 h and one of 1.5 h (106 h);
    # a 6-minute start-up a session billed by the second: 106 + 12 x 0.1 = 107.2 h
    p = Process(work_h=100.0, checkpoint_every_h=1.0, checkpoint_write_h=0.0, setup_first_h=0.5,
                setup_resume_h=0.5, session_limit_h=10.0)
    e = expected(p)
    assert sessions.billed_hours(p, e.wall_h, e.sessions, 0.1, 0.0) == pytest.approx(106.0 + 12 * 0.1)


def test_weekly_capacity_by_hand_counts_the_starts_at_which_the_device_is_there():
    # 10-h sessions started by hand once a day, the device there at half the starts: 7 x 1 x 0.5 x 10 = 35 h a
    # week; without a person needed, the week's 168 h at half: 84 h; a quota of 30 h caps both
    assert sessions.weekly_capacity_h(10.0, None, True, 1.0, 0.5) == pytest.approx(35.0)
    assert sessions.weekly_capacity_h(10.0, None, False, 1.0, 0.5) == pytest.approx(84.0)
    assert sessions.weekly_capacity_h(10.0, 30.0, True, 1.0, 0.5) == pytest.approx(30.0)


def test_a_default_rates_spread_is_booked_at_its_quantile():
    # hours 90 + 200 x rate, the rate triangular over 0.05-0.5 around 0.1 (a straight line through
    # the three points): mean rate 0.2167, sd 0.1007, 90 % quantile 0.5 - sqrt(0.1 x 0.45 x 0.4) =
    # 0.3658; so the mean hours 133.33 (23.33 over the rate used), sd 20.14, and at 90 % 163.17 h,
    # 23.28 sd above the mean: the spread booked at 90 % (the normal's 1.28 sd fell 3.9 h short)
    rates, walls = (0.05, 0.1, 0.5), (100.0, 110.0, 190.0)
    shift, sd = sessions.wall_over_rate_h(rates, walls)
    assert shift == pytest.approx(23.333, rel=2e-3) and sd == pytest.approx(20.14, rel=3e-3)
    shift90, sd90 = sessions.wall_over_rate_h(rates, walls, 0.9)
    assert shift90 == shift
    assert sd90 == pytest.approx((90 + 200 * (0.5 - math.sqrt(0.1 * 0.45 * 0.4)) - 133.333) / 1.281552, rel=2e-3)
    # a chance at or below one half books the sd
    assert sessions.wall_over_rate_h(rates, walls, 0.5)[1] == sd


def test_a_speeds_spread_is_booked_at_its_log_normal_quantile():
    # wall hours go as 1 / speed, log-normal of sigma 0.2 about the hours planned: at 95 % their
    # quantile is e^(1.6449 x 0.2) = 1.3895, so the spread booked is 0.3895 / 1.6449 = 0.2368,
    # above the sd sqrt(e^0.04 - 1) = 0.2020; without a chance, the sd
    from planner.model import workload

    assert workload.speed_rel_sd_at(0.2, 0.95) == pytest.approx(math.expm1(1.644854 * 0.2) / 1.644854, rel=1e-6)
    assert workload.speed_rel_sd_at(0.2, 0.95) == pytest.approx(0.2368, abs=1e-4)
    assert workload.speed_rel_sd_at(0.2) == pytest.approx(math.sqrt(math.expm1(0.04)), rel=1e-9)
    assert workload.speed_rel_sd_at(0.0, 0.95) == 0.0
