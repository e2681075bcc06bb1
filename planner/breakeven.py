"""When does buying a card pay off against renting?

For a buy offer and a rent offer, both as the scenario would use them, the
cost of doing H reference GPU-hours of the scenario's work is

    buy(H)  = price + host - resale(horizon) + electricity per ref-hour x H
    rent(H) = rent, storage and setup per ref-hour x H

(per-hour factors from the quotes, averaged over the phases by their work;
the user's time is left out on both sides). The card is kept for the
scenario's horizon and sold then, as every plan that buys it does, so the
break-even agrees with the plans: at more hours than the break-even, the
buy-only plan of that card is no dearer than renting. The date is the day the
scenario's own pace — each phase's hours spread evenly over its window —
reaches H. :func:`crossovers` also takes a resale that steps with the hours
(a card sold when the work ends), for callers who ask that question.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pricing.values import opt_float

from . import costs
from .scenario import Scenario

#: How far past the scenario's own work the search goes, as a multiple of it.
SEARCH_MULTIPLE = 50.0
FREE_MIX = "free tiers (best free-only plan)"


@dataclass(frozen=True)
class Pace:
    """Cumulative reference GPU-hours of the scenario's work over time."""

    days: np.ndarray  # days since start (knots)
    hours: np.ndarray  # cumulative hours at the knots

    def dates_of(self, s: Scenario, hours: np.ndarray) -> list[dt.date | None]:
        """The day the pace reaches each of ``hours`` (None for NaN and past the total): the day
        whose 24 hours hold that moment (reached at 18:00 of day 10 or at its 24:00: day 10)."""
        hours = np.asarray(hours, dtype=float)
        day = np.maximum(np.ceil(np.interp(np.nan_to_num(hours), self.hours, self.days) - 1e-9) - 1, 0)
        ok = np.isfinite(hours) & (hours <= self.hours[-1] + 1e-9)
        return [s.start + dt.timedelta(days=int(d)) if k else None for d, k in zip(day, ok)]

    def daily(self, s: Scenario) -> tuple[np.ndarray, np.ndarray]:
        """(knots, hours): reference GPU-hours done by 00:00 of each day from the start to the
        last day of the work (knot d is 24:00 of the day before day d)."""
        day = np.arange(0, math.ceil(self.days[-1]) + 1, dtype=float)
        return day, np.interp(day, self.days, self.hours)


def _pace_days(s: Scenario, ph) -> tuple[int, int]:
    """The days (since the scenario's start) over which the pace spreads a phase: its window,
    from 00:00 of 'from' to 24:00 of the deadline (both inclusive: :meth:`Scenario.window`)."""
    begin, end = s.window(ph)
    return (begin - s.start).days, (end - s.start).days


def pace_per_week(s: Scenario, ph) -> float:
    """Reference GPU-hours a week the pace gives a phase."""
    a, b = _pace_days(s, ph)
    return ph.gpu_hours / max(b - a, 1) * 7


def pace(s: Scenario) -> Pace:
    """Each phase's reference hours spread evenly over its window (from 'from' to the deadline)."""
    spans = [_pace_days(s, ph) for ph in s.phases]
    days = np.array(sorted({0, *(d for span in spans for d in span)}), dtype=float)
    hours = np.zeros_like(days)
    for ph, (a, b) in zip(s.phases, spans):
        hours += ph.gpu_hours * np.clip((days - a) / max(b - a, 1), 0.0, 1.0)
    return Pace(days, hours)


@dataclass(frozen=True)
class Pair:
    buy: str
    rent: str
    gpu_hours: float | None
    date: dt.date | None
    why_not: str | None
    buy_fixed_usd: float
    buy_usd_per_hour: float
    rent_usd_per_hour: float
    resale: tuple = ()  # costs.resale_usd's arguments after the months: (price, condition, given USD, given fraction)

    def resale_usd(self, months: np.ndarray) -> np.ndarray:
        return _resale_usd(self.resale, months)


def _resale_usd(args: tuple, months: np.ndarray) -> np.ndarray:
    """What selling the card after each of ``months`` brings (the one resale model, costs.resale_usd)."""
    price, condition, given_usd, given_fraction = args
    return costs.resale_usd(price, months, condition, given_usd, given_fraction) + np.zeros_like(months)


@dataclass(frozen=True)
class Curves:
    """Money spent by each day's end at the scenario's pace (the first point: before the start), for
    one pair: buying (the card resold at the horizon's end) and renting, the lines the solver
    compares, so the first day buying is no dearer is the pair's break-even date."""

    dates: list
    hours: np.ndarray  # reference GPU-hours done by each day's end
    buy_usd: np.ndarray
    rent_usd: np.ndarray

    def first_crossing(self) -> dt.date | None:
        at = np.flatnonzero(self.buy_usd <= self.rent_usd + 1e-9)
        return self.dates[at[0]] if len(at) else None


def curves(s: Scenario, pair: Pair, p: Pace | None = None) -> Curves:
    """The pair's cost curves over the scenario's work (see :class:`Curves`)."""
    p = pace(s) if p is None else p
    day, hours = p.daily(s)
    buy = pair.buy_fixed_usd - pair.resale_usd(np.full_like(day, s.horizon_months)) + pair.buy_usd_per_hour * hours
    # the knot at day d is 24:00 of the day before (the start's knot: nothing done yet, the day before)
    return Curves([s.start + dt.timedelta(days=int(d) - 1) for d in day], hours, buy, pair.rent_usd_per_hour * hours)


def per_ref_hour(quotes: pd.DataFrame, s: Scenario) -> dict[str, float]:
    """Money per reference GPU-hour on each option, averaged over the phases by their work."""
    q = quotes[np.isfinite(quotes["cost_usd"].astype(float))]
    hours = q["phase"].map({ph.name: ph.gpu_hours for ph in s.phases})
    money = (q["cost_usd"] - q["your_time_usd"]).groupby(q["option"]).sum()
    return {str(k): float(v) for k, v in (money / hours.groupby(q["option"]).sum()).items()}


def crossovers(fixed_usd: float, edges_h: np.ndarray, resale_usd: np.ndarray, buy_per_h: float,
               rent_per_h: np.ndarray, h_max: float) -> np.ndarray:
    """The smallest H in [0, h_max] where buying, ``fixed - resale(H) + buy_per_h H``, has cost
    no more than renting, ``rent_per_h H``, for one card against many rent rates, exactly (NaN
    where there is none).

    Resale is a step function of H: constant ``resale_usd[k]`` on the piece
    ``(edges_h[k], edges_h[k+1]]`` (a card is sold after whole days). On a piece the gap
    ``C + slope H`` is a straight line, so its first non-positive point is the piece's start
    or the line's root; the answer is the earliest over all pieces. (A scan with a root finder,
    as before, could step over the first crossing of this saw-tooth and land a day later.)"""
    edges_h = np.asarray(edges_h, dtype=float)
    a, b = edges_h[:-1][None, :], edges_h[1:][None, :]
    c = (fixed_usd - np.broadcast_to(np.asarray(resale_usd, dtype=float), a.shape[1:]))[None, :]
    slope = (buy_per_h - np.asarray(rent_per_h, dtype=float))[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(slope < 0, -c / slope, np.inf)  # where a falling line reaches zero
    first = np.where(c + slope * a <= 0, a, root)
    first = np.where((first <= b) & (b > a), first, np.inf)
    out = first.min(axis=1)
    return np.where(out <= h_max, out, np.nan)


def breakeven(s: Scenario, opts: pd.DataFrame, quotes: pd.DataFrame,
              free_mix_usd_per_hour: float | None = None, rents: set[str] | None = None) -> list[Pair]:
    """Every usable buy offer against every usable rent offer (or only ``rents``) and, when given,
    the best free-tier mix (its cost per reference GPU-hour, the user's time included: that is what
    free tiers cost)."""
    p = pace(s)
    total = float(p.hours[-1])
    rate = per_ref_hour(quotes, s)
    rent_rate = {o: rate[o] for o in quotes.loc[quotes["kind"] == "rent", "option"].unique()
                 if o in rate and (rents is None or o in rents)}
    if free_mix_usd_per_hour is not None:
        rent_rate[FREE_MIX] = free_mix_usd_per_hour
    out = []
    edges, months = np.array([0.0, np.inf]), np.array([float(s.horizon_months)])  # kept for the horizon
    rows = opts.drop_duplicates("option").set_index("option")
    devices = rows["device"].to_dict()
    cards = rows[rows["kind"] == "buy"][["device", "purchase_usd", "condition", "resale_usd", "resale_fraction"]
                                        ].to_dict("index")  # one read of the table, not a row lookup per card
    by_rate = sorted(rent_rate, key=lambda r: (r == FREE_MIX, rent_rate[r], r))
    for b in quotes.loc[quotes["kind"] == "buy", "option"].unique():
        if b not in rate:
            continue
        o = cards[b]
        buy_rate = rate[b]
        host = s.you.host_usd
        fixed = float(o["purchase_usd"]) + host
        # the card's own device first, then the rest from the cheapest per reference hour (a stable sort)
        device = o["device"]
        order = sorted(by_rate, key=lambda r: r == FREE_MIX or devices.get(r) != device)
        resale_args = (float(o["purchase_usd"]), o["condition"], opt_float(o["resale_usd"]),
                       opt_float(o["resale_fraction"]))
        resale = _resale_usd(resale_args, months)
        hours = crossovers(fixed, edges, resale, buy_rate, np.array([rent_rate[r] for r in order]),
                           SEARCH_MULTIPLE * max(total, 1.0))
        dates = p.dates_of(s, hours)
        for r, h, when in zip(order, hours, dates):
            h = None if math.isnan(h) else float(h)
            why = None
            if h is None:
                if buy_rate >= rent_rate[r]:
                    what = "the free tiers cost" if r == FREE_MIX else "renting costs"
                    per = s.usd_per_currency
                    why = (f"{what} {rent_rate[r] / per:.3f} {s.currency} per reference GPU-hour, no more than "
                           f"the card's electricity ({buy_rate / per:.3f})")
                else:
                    why = "the purchase, less its resale, is not earned back within the search"
            out.append(Pair(b, r, h, when, why, fixed, buy_rate,
                            rent_rate[r], resale_args))
    return out
