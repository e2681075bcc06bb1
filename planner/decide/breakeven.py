"""When does buying a card pay off against renting?

For a buy offer and a rent offer, both as the scenario would use them, the
cost of doing H reference GPU-hours of the scenario's work is

    buy(H)  = price + host - resale(horizon) + electricity per ref-hour x H
    rent(H) = rent, storage and setup per ref-hour x H

(per-hour factors from the quotes, averaged over the phases by their work,
rent on the plan's price path over each phase's window: ``price_trend`` or
the device's catalog trend; the user's time is left out on both sides). The card is kept for the
scenario's horizon and sold then, as every plan that buys it does, so the
break-even agrees with the plans: at more hours than the break-even, the
buy-only plan of that card is no dearer than renting. The date is the day the
scenario's own pace — each phase's hours spread evenly over its window —
reaches H. :func:`crossovers` also takes a resale that steps with the hours
(a card sold when the work ends), for callers who ask that question.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pricing.values import opt_float

from ..model import costs, units
from ..model.scenario import Phase, Scenario

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


def _pace_days(s: Scenario, ph: Phase) -> tuple[int, int]:
    """The days (since the scenario's start) over which the pace spreads a phase: its window,
    from 00:00 of 'from' to 24:00 of the deadline (both inclusive: :meth:`Scenario.window`)."""
    begin, end = s.window(ph)
    return (begin - s.start).days, (end - s.start).days


def pace_per_week(s: Scenario, ph: Phase) -> float:
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
    resale: tuple = ()  # costs.resale_usd's arguments after the months: (price, condition, given USD, given
    # fraction, multiple of the model)
    rent_curve: RentCurve | None = None  # a rent price that moves: what H hours cost (rent_usd_per_hour: at the break-even)

    def resale_usd(self, months: np.ndarray) -> np.ndarray:
        return _resale_usd(self.resale, months)


def _resale_usd(args: tuple, months: np.ndarray) -> np.ndarray:
    """What selling the card after each of ``months`` brings (the one resale model, costs.resale_usd)."""
    price, condition, given_usd, given_fraction, model_factor = args
    return costs.resale_usd(price, months, condition, given_usd, given_fraction, model_factor) + np.zeros_like(months)


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
    """The pair's cost curves over the scenario's work (see :class:`Curves`), up to the horizon's
    end: the card is sold then, so work past it (a phase due later) is no longer the card's."""
    p = pace(s) if p is None else p
    day, hours = p.daily(s)
    owned = day <= s.sold_day
    day, hours = day[owned], hours[owned]
    buy = pair.buy_fixed_usd - pair.resale_usd(np.full_like(day, s.horizon_months)) + pair.buy_usd_per_hour * hours
    # the knot at day d is 24:00 of the day before (the start's knot: nothing done yet, the day before)
    rent = pair.rent_curve(hours) if pair.rent_curve is not None else pair.rent_usd_per_hour * hours
    return Curves([s.start + dt.timedelta(days=int(d) - 1) for d in day], hours, buy, rent)


def per_ref_hour(quotes: pd.DataFrame, s: Scenario) -> dict[str, float]:
    """Money per reference GPU-hour on each option, averaged over the phases by their work, at
    the catalog's prices (a price that moves: :func:`rent_curves`)."""
    q = quotes[np.isfinite(quotes["cost_usd"].astype(float))]
    hours = q["phase"].map({ph.name: ph.gpu_hours for ph in s.phases})
    money = (q["cost_usd"] - q["your_time_usd"] - q["carbon_usd"]).groupby(q["option"]).sum()
    return {str(k): float(v) for k, v in (money / hours.groupby(q["option"]).sum()).items()}


@dataclass(frozen=True)
class RentCurve:
    """What renting ``hours`` of the scenario's work costs when the price moves (``price_trend``
    or the device's catalog trend): piecewise linear between knots, ``hours`` increasing,
    continued past the last knot at its last slope."""

    hours: np.ndarray
    usd: np.ndarray

    def __call__(self, h: np.ndarray | float) -> np.ndarray:
        h = np.asarray(h, dtype=float)
        slope = ((self.usd[-1] - self.usd[-2]) / (self.hours[-1] - self.hours[-2])) if len(self.hours) > 1 else 0.0
        return np.where(h <= self.hours[-1], np.interp(h, self.hours, self.usd),
                        self.usd[-1] + slope * (h - self.hours[-1]))


def rent_curves(s: Scenario, opts: pd.DataFrame, quotes: pd.DataFrame) -> dict[str, RentCurve]:
    """Per rent offer whose price moves, what renting H reference hours costs as its plans rent:
    each phase's share of H (its share of the work) on the cheapest days of its window first,
    at most its runs x 24 wall-h a day (at the scenario's confidence, as the program plans
    capacity), each day at its price on the path (``costs.path_factor``, the program's rule),
    storage and egress unmoved. A falling price puts the hours on the last days, as the plan
    does; a break-even at these prices agrees with the plans. Commitments are left out (a
    term's price is fixed when it starts)."""
    from .milp import rent_trends
    from .options import commitments_of

    trends = rent_trends(s, opts)
    points = tuple((float((d - s.start).days), lv) for d, lv in s.rent_price_points)
    as_of = dict(zip(opts["option"], opts["as_of"]))
    committed = commitments_of(opts)
    phases = {ph.name: ph for ph in s.phases}
    total = sum(ph.gpu_hours for ph in s.phases)
    q = quotes[(quotes["kind"] == "rent").to_numpy() & np.isfinite(quotes["cost_usd"].to_numpy(dtype=float))
               & np.isfinite(quotes["wall_hours_conf"].to_numpy(dtype=float))]
    out: dict[str, RentCurve] = {}
    for option, mine in q.groupby("option", sort=True):
        trend = trends.get(str(option), 0.0)
        if option in committed or not (trend or points) or set(mine["phase"]) != set(phases):
            continue  # flat, a term, or an offer that cannot do every phase: per_ref_hour's rate
        dated = as_of.get(option)
        priced = float((dated - s.start).days) if isinstance(dated, dt.date) else 0.0
        phase_curves = []  # per phase: (its share of H, its hours at its knots, its cost there)
        for r in mine.itertuples():
            ph = phases[r.phase]
            a, b = _pace_days(s, ph)
            factor = np.sort(costs.path_factor(np.arange(a, max(b, a + 1)) + 0.5, priced, trend, points))
            per_h = float(r.rent_usd) / ph.gpu_hours
            other = (float(r.cost_usd) - float(r.your_time_usd) - float(r.carbon_usd) - float(r.rent_usd)) / ph.gpu_hours
            day_h = ph.runs * 24.0 / (float(r.wall_hours_conf) / ph.gpu_hours)  # reference hours a day
            own = np.arange(len(factor) + 1) * day_h
            usd = np.concatenate([[0.0], np.cumsum((other + per_h * factor) * day_h)])
            phase_curves.append((ph.gpu_hours / total, own, usd))
        # H grows every phase by its share at once: the cost at H is the sum of each phase's at its share
        knots = np.unique(np.concatenate([own / share for share, own, _ in phase_curves]))
        usd_at = sum(RentCurve(own, usd)(knots * share) for share, own, usd in phase_curves)
        out[str(option)] = RentCurve(knots, np.asarray(usd_at, dtype=float))
    return out


def _gap(net_usd: float, buy_usd_per_hour: float, rent: RentCurve) -> Callable[[np.ndarray], np.ndarray]:
    """Buying less renting after H hours: ``net_usd`` (price and host less resale) plus the card's
    running money, against ``rent``."""
    return lambda h: net_usd + buy_usd_per_hour * h - rent(h)


def first_below(gap_at: Callable[[np.ndarray], np.ndarray], knots: np.ndarray, h_max: float) -> float:
    """The smallest H in [0, h_max] where a gap that is linear between ``knots`` (and past the
    last) is no more than 0 (NaN where there is none)."""
    xs = np.unique(np.concatenate([knots[knots < h_max], [0.0, h_max]]))
    gap = gap_at(xs)
    at = np.flatnonzero(gap <= 1e-9)
    if not len(at):
        return math.nan
    k = int(at[0])
    if k == 0:
        return 0.0
    x0, x1, g0, g1 = xs[k - 1], xs[k], gap[k - 1], gap[k]
    return float(x0 + (x1 - x0) * g0 / (g0 - g1))


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


def _not_within(beyond: float, h_max: float, total_h: float, moving: bool, card_h: float) -> str:
    """Why a card that runs for less than the rent costs has no break-even in the table: it is
    earned back only past ``h_max`` (SEARCH_MULTIPLE x the scenario's ``total_h``), after
    ``beyond`` hours at a flat rent (:func:`crossovers` unbounded), or not within ``card_h``, the
    reference hours the card runs, day and night, before it is sold at the horizon's end (where
    the rent's price moves: past the search)."""
    within = f"{SEARCH_MULTIPLE:g}x this scenario's work ({h_max:,.0f} reference GPU-h)"
    card = ("the purchase, less its resale, is not earned back in the hours the card can run before it is sold at "
            f"the horizon's end (about {card_h:,.0f} reference GPU-h, day and night)")
    if moving:
        return card if card_h <= h_max else f"the purchase, less its resale, is not earned back within {within}"
    if not beyond <= card_h:
        return card
    times = beyond / max(total_h, 1.0)  # past the multiple searched: never written as the multiple itself
    shown = f"{times:,.0f}" if times >= SEARCH_MULTIPLE + 0.5 else f"{math.ceil(times * 10) / 10:g}"
    return (f"not within {within}: the purchase, less its resale, is earned back after {beyond:,.0f} "
            f"({shown}x)")


def breakeven(s: Scenario, opts: pd.DataFrame, quotes: pd.DataFrame,
              free_mix_usd_per_hour: float | None = None, rents: set[str] | None = None) -> list[Pair]:
    """Every usable buy offer against every usable rent offer (or only ``rents``) and, when given,
    the best free-tier mix (its cost per reference GPU-hour, the user's time included: that is what
    free tiers cost)."""
    p = pace(s)
    total = float(p.hours[-1])
    rate = per_ref_hour(quotes, s)
    moving = rent_curves(s, opts, quotes)
    rent_rate = {o: rate[o] for o in quotes.loc[quotes["kind"] == "rent", "option"].unique()
                 if o in rate and (rents is None or o in rents)}
    if free_mix_usd_per_hour is not None:
        rent_rate[FREE_MIX] = free_mix_usd_per_hour
    out = []
    edges, months = np.array([0.0, np.inf]), np.array([float(s.horizon_months)])  # kept for the horizon
    rows = opts.drop_duplicates("option").set_index("option")
    devices = rows["device"].to_dict()
    cards = rows[rows["kind"] == "buy"][["device", "purchase_usd", "condition", "resale_usd", "resale_fraction",
                                         "resale_model_factor"]].to_dict("index")  # one read, not a lookup per card
    by_rate = sorted(rent_rate, key=lambda r: (r == FREE_MIX, rent_rate[r], r))
    # each card's reference hours per wall hour over the phases, and the wall hours until it is sold
    bought = quotes[(quotes["kind"] == "buy").to_numpy() & np.isfinite(quotes["wall_hours"].to_numpy(dtype=float))]
    work = bought["phase"].map({ph.name: ph.gpu_hours for ph in s.phases})
    runs = (work.groupby(bought["option"]).sum() / bought["wall_hours"].groupby(bought["option"]).sum()).to_dict()
    horizon_h = (s.horizon_end - s.start).days * 24.0
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
                       opt_float(o["resale_fraction"]), opt_float(o["resale_model_factor"]))
        resale = _resale_usd(resale_args, months)
        # searched up to SEARCH_MULTIPLE x the work, and never past what the card runs before it is sold
        h_max, card_h = SEARCH_MULTIPLE * max(total, 1.0), horizon_h * runs.get(b, math.inf)
        limit = min(h_max, card_h)
        unbounded = crossovers(fixed, edges, resale, buy_rate, np.array([rent_rate[r] for r in order]), math.inf)
        hours = np.where(unbounded <= limit, unbounded, np.nan)
        for k, r in enumerate(order):  # a price that moves: against what its plans pay (rent_curves)
            if r in moving:
                curve = moving[r]
                hours[k] = first_below(_gap(fixed - float(resale[0]), buy_rate, curve), curve.hours, limit)
        dates = [when if when is None or when < s.horizon_end else None  # the card is sold then
                 for when in p.dates_of(s, hours)]
        for k, (r, h, when) in enumerate(zip(order, hours, dates)):
            h = None if math.isnan(h) else float(h)
            why = None
            if h is None:
                if buy_rate >= rent_rate[r]:
                    what = "the free tiers cost" if r == FREE_MIX else "renting costs"
                    per = s.usd_per_currency
                    figure = functools.partial(units.format_significant, digits=3, thousands=True)
                    why = (f"{what} {figure(rent_rate[r] / per)} {s.currency} per reference GPU-hour, no more than "
                           f"the card's electricity ({figure(buy_rate / per)})")
                else:
                    why = _not_within(float(unbounded[k]), h_max, total, r in moving, card_h)
            path = moving.get(r)
            at = h if h else max(total, 1.0)
            out.append(Pair(b, r, h, when, why, fixed, buy_rate,
                            float(path(at)) / at if path is not None else rent_rate[r], resale_args, path))
    return out
