"""When does buying a card pay off against renting?

For a buy offer and a rent offer, both as the scenario would use them, the
cost of doing H reference GPU-hours of the scenario's work is

    buy(H)  = price + host - resale(months kept) + electricity per ref-hour x H
    rent(H) = rent, storage and setup per ref-hour x H

(per-hour factors from the quotes, averaged over the phases by their work;
the user's time is left out on both sides). The card is kept until the
scenario's own pace reaches H — each phase's hours spread evenly over its
window — or the horizon's end, and sold then, so resale falls as H grows and
the curves are not straight lines. The break-even is the smallest H where
buying has cost no more than renting, found by scanning for a sign change
and refining it with ``scipy.optimize.brentq``.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import costs, units
from .scenario import Scenario
from pricing.values import opt_float

#: How far past the scenario's own work the search goes, as a multiple of it.
SEARCH_MULTIPLE = 50.0
FREE_MIX = "free tiers (best free-only plan)"


@dataclass(frozen=True)
class Pace:
    """Cumulative reference GPU-hours of the scenario's work over time."""

    days: np.ndarray  # days since start (knots)
    hours: np.ndarray  # cumulative hours at the knots

    def date_of(self, s: Scenario, h: float) -> dt.date | None:
        """When the pace reaches ``h`` hours (None past the total)."""
        if h > self.hours[-1] + 1e-9:
            return None
        day = float(np.interp(h, self.hours, self.days))
        return s.start + dt.timedelta(days=math.ceil(day - 1e-9))

    def months_until(self, s: Scenario, h):
        """Months a card bought at the start is kept to do ``h`` hours (scalar or array): until
        the pace reaches them, at most to the horizon's end."""
        h = np.asarray(h, dtype=float)
        horizon_days = (s.horizon_end - s.start).days
        days = np.ceil(np.interp(h, self.hours, self.days) - 1e-9)
        days = np.where(h > self.hours[-1] + 1e-9, horizon_days, np.minimum(days, horizon_days))
        return days / units.DAYS_PER_MONTH


def pace(s: Scenario) -> Pace:
    """Each phase's reference hours spread evenly over its window (from 'from' to the deadline)."""
    knots = sorted({0, *((ph.start - s.start).days for ph in s.phases),
                    *(((ph.deadline or s.horizon_end) - s.start).days for ph in s.phases)})
    days = np.array(knots, dtype=float)
    hours = np.zeros_like(days)
    for ph in s.phases:
        a = (ph.start - s.start).days
        b = ((ph.deadline or s.horizon_end) - s.start).days
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


def per_ref_hour(quotes: pd.DataFrame, s: Scenario) -> dict[str, float]:
    """Money per reference GPU-hour on each option, averaged over the phases by their work."""
    q = quotes[np.isfinite(quotes["cost_usd"].astype(float))]
    hours = q["phase"].map({ph.name: ph.gpu_hours for ph in s.phases})
    money = (q["cost_usd"] - q["your_time_usd"]).groupby(q["option"]).sum()
    return (money / hours.groupby(q["option"]).sum()).to_dict()


def crossover(fixed_usd: float, resale_at, buy_per_h: float, rent_per_h: float, h_max: float) -> float | None:
    """Smallest H in (0, h_max] with fixed - resale_at(H) + buy_per_h H <= rent_per_h H, or None."""
    def gap(h):
        return fixed_usd - resale_at(h) + buy_per_h * h - rent_per_h * h

    grid = np.concatenate([[1e-6], np.geomspace(1e-3, h_max, 400)])
    values = np.asarray(gap(grid), dtype=float)
    below = np.flatnonzero(values <= 0)
    if below.size == 0:
        return None
    k = int(below[0])
    if k == 0:
        return 0.0
    from scipy.optimize import brentq

    return float(brentq(lambda h: float(gap(h)), grid[k - 1], grid[k], xtol=1e-6))


def breakeven(s: Scenario, opts: pd.DataFrame, quotes: pd.DataFrame,
              free_mix_usd_per_hour: float | None = None) -> list[Pair]:
    """Every usable buy offer against every usable rent offer and, when given, the best free-tier
    mix (its cost per reference GPU-hour, the user's time included: that is what free tiers cost)."""
    p = pace(s)
    total = float(p.hours[-1])
    rate = per_ref_hour(quotes, s)
    rent_rate = {o: rate[o] for o in quotes.loc[quotes["kind"] == "rent", "option"].unique() if o in rate}
    if free_mix_usd_per_hour is not None:
        rent_rate[FREE_MIX] = free_mix_usd_per_hour
    out = []
    rows = opts.set_index("option")
    devices = rows["device"]
    for b in quotes.loc[quotes["kind"] == "buy", "option"].unique():
        if b not in rate:
            continue
        o = rows.loc[b]
        buy_rate = rate[b]
        host = s.you.host_usd
        fixed = float(o["purchase_usd"]) + host
        # the card's own device first, then the rest from the cheapest per reference hour
        order = sorted(rent_rate, key=lambda r: (r == FREE_MIX, r not in devices or devices[r] != o["device"],
                                                 rent_rate[r], r))
        price, condition = float(o["purchase_usd"]), o["condition"]
        given_usd, given_fraction = opt_float(o["resale_usd"]), opt_float(o["resale_fraction"])

        def resale_at(h, price=price, condition=condition, given_usd=given_usd, given_fraction=given_fraction):
            return costs.resale_usd(price, p.months_until(s, h), condition, given_usd, given_fraction)

        for r in order:
            h = crossover(fixed, resale_at, buy_rate, rent_rate[r], SEARCH_MULTIPLE * max(total, 1.0))
            why = None
            if h is None:
                if buy_rate >= rent_rate[r]:
                    what = "the free tiers cost" if r == FREE_MIX else "renting costs"
                    per = s.usd_per_currency
                    why = (f"{what} {rent_rate[r] / per:.3f} {s.currency} per reference GPU-hour, no more than "
                           f"the card's electricity ({buy_rate / per:.3f})")
                else:
                    why = "the purchase, less its resale, is not earned back within the search"
            out.append(Pair(b, r, h, p.date_of(s, h) if h is not None else None, why, fixed, buy_rate,
                            rent_rate[r]))
    return out
