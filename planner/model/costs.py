"""Money formulas: resale value, electricity, rent, storage. One formula, one place."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, overload

import numpy as np

from planner.model import carbon
from pricing.values import opt_float

#: The named parts of an option's running cost (docs/output.md's cost_breakdown adds purchase,
#: resale and host).
PART_NAMES = ("electricity", "rent", "storage", "egress", "your_time", "carbon")
#: Parts that are not money paid: your time, and emissions at your carbon price.
NOT_CASH = ("your_time", "carbon")

#: Every named part of a plan's total, in report order (docs/output.md's cost_breakdown); credits
#: are negative: what grants paid.
COST_PARTS = ("purchase", "resale", "host", *PART_NAMES, "credits")

#: Default resale model: a new card loses RESALE_FIRST_YEAR_LOSS of its price
#: in the first year (linearly), then RESALE_LATER_YEARLY_LOSS a year,
#: compounded. Calibrated on dated used prices: the monthly means of eBay sold
#: listings Tom's Hardware published (github buttke/ebay-2021-2023-gpu-prices,
#: gpu_time_series.csv @883c3109) for the RTX 2070, 2080 Ti, 3060, 3080 and
#: 3090 from 2022-09 to 2023-11, 14 points at 2 to 5.2 years after launch, as a
#: share of launch MSRP. They fall about 19 % a year, with no steeper first year
#: to be seen: no clean year-one point exists (the 2020-22 shortage and crypto
#: boom put used cards above MSRP, 2023 export rules lifted the 4090, the
#: 2025-26 memory shortage lifted 2026 prices), so one rate from the start, the
#: least-squares fit in log: 18.8 %, rounded. Error over the 14 points (bench/
#: resale_fit.py): median 10 %, worst 26 % (an RTX 3060 at 2 years, the model
#: below it); the earlier rule of thumb (35 % then 12.5 %) missed by a median
#: 15 %, worst 35 %.
RESALE_FIRST_YEAR_LOSS = 0.19
RESALE_LATER_YEARLY_LOSS = 0.19

#: Selling a card costs a marketplace fee: eBay's final value fee for most
#: categories, 12.9 % from 2023-02-15 (eBay 2023 winter seller update,
#: export.ebay.com). Applied to the default model's market value, so a card
#: bought and sold at once is not free; an offer's own resale figure is taken
#: as what the user gets.
RESALE_SELLING_FEE = 0.129


def resale_model_text() -> str:
    """The default resale model in words, from its constants (for reports)."""
    return (f"{RESALE_FIRST_YEAR_LOSS:.0%} lost in the first year, {RESALE_LATER_YEARLY_LOSS:.1%} a year after, "
            f"less a {RESALE_SELLING_FEE:.1%} selling fee").replace("%", " %")


def resale_fraction(months: float | np.ndarray, condition: str) -> Any:
    """Share of the purchase price a card fetches after ``months`` of use (scalar or array).

    A used card is past its first year, so it loses only the later-year rate.
    """
    years = np.maximum(np.asarray(months, dtype=float), 0.0) / 12.0
    if condition == "used":
        out = (1.0 - RESALE_LATER_YEARLY_LOSS) ** years
    else:
        out = np.where(years <= 1.0, 1.0 - RESALE_FIRST_YEAR_LOSS * years,
                       (1.0 - RESALE_FIRST_YEAR_LOSS) * (1.0 - RESALE_LATER_YEARLY_LOSS) ** (years - 1.0))
    return float(out) if out.ndim == 0 else out


@overload
def resale_usd(price_usd: float, months: float, condition: str, resale_usd_given: float | None = None,
               resale_fraction_given: float | None = None, model_factor: float | None = None) -> float: ...


@overload
def resale_usd(price_usd: float, months: np.ndarray, condition: str, resale_usd_given: float | None = None,
               resale_fraction_given: float | None = None, model_factor: float | None = None
               ) -> float | np.ndarray: ...


def resale_usd(price_usd: float, months: float | np.ndarray, condition: str, resale_usd_given: float | None = None,
               resale_fraction_given: float | None = None, model_factor: float | None = None) -> Any:
    """What selling the card brings: the offer's own figure (money, else a share of the price),
    else the default model's market value less the selling fee, times ``model_factor`` where
    the offer gives one (``resale: 0.9x``: the model's figure for the card's age, a tenth less;
    at most what a new card brings) (scalars, or an array of ``months``)."""
    if resale_usd_given is not None and not math.isnan(resale_usd_given):
        return resale_usd_given
    if resale_fraction_given is not None and not math.isnan(resale_fraction_given):
        return price_usd * resale_fraction_given
    model = price_usd * resale_fraction(months, condition) * (1.0 - RESALE_SELLING_FEE)
    if model_factor is None or math.isnan(model_factor):
        return model
    # a multiple above 1 would otherwise pay for a card bought days before the horizon's end
    most = most_resale_usd(price_usd)
    return np.minimum(model * model_factor, most) if isinstance(model, np.ndarray) else min(model * model_factor, most)


def most_resale_usd(price_usd: Any) -> Any:
    """The most a resale from the model may bring: what the card sold the day it is bought
    brings, its price less the selling fee (a resale above it would pay for buying a card)."""
    return price_usd * (1.0 - RESALE_SELLING_FEE)


def path_factor(days: float | np.ndarray | list[int], priced_day: float, trend_per_year: float,
                points: tuple[tuple[float, float], ...] = ()) -> np.ndarray:
    """What a price dated ``priced_day`` is multiplied by on ``days`` (both in days from the
    scenario's start): along dated levels ``points`` ((day, share off the dated price), in day
    order) linearly from the price's own date (level 0) and flat after the last, else at
    ``trend_per_year`` compounded over the years between. A level dated before the price counts
    only when every point is (the last level holds). One rule for rent (``price_trend``) and
    cards (``buy_price_trend``)."""
    days = np.asarray(days, dtype=float)
    if points:
        later = [(d, lv) for d, lv in points if d > priced_day]
        if not later:
            return np.full(days.shape, 1.0 + points[-1][1])
        xs, ys = [priced_day, *(d for d, _ in later)], [0.0, *(lv for _, lv in later)]
        return 1.0 + np.interp(days, xs, ys)
    return (1.0 + trend_per_year) ** ((days - priced_day) / 365.25)


def electricity_usd(card_power_w: float, host_power_w: float, hours: float, usd_per_kwh: float) -> float:
    """(board power + the host's draw) x hours x price per kWh: the energy as the emissions
    count it (planner.model.carbon.energy_kwh, at home: no facility, a PUE of 1)."""
    return carbon.energy_kwh(card_power_w, host_power_w, hours) * usd_per_kwh


def storage_usd(size_gb: float, months: float, usd_per_gb_month: float) -> float:
    """Persistent storage kept for ``months``."""
    return size_gb * months * usd_per_gb_month


def egress_usd(size_gb: float, usd_per_gb: float) -> float:
    """Downloading ``size_gb`` out of a provider (what the runs leave: quotes.download_gb_of)."""
    return size_gb * usd_per_gb


def resale_rows(offer: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A buy offer's resale after one, two and three years, as ``planner pricing show`` lists it."""
    def after(months: int) -> float:
        return resale_usd(offer["price_usd"], months, offer["condition"], opt_float(offer["resale_usd"]),
                          opt_float(offer["resale_fraction"]), opt_float(offer.get("resale_model_factor")))

    return [(f"resale after {months} months (offer's figure, else default model less fees)", f"{after(months):,.0f} USD")
            for months in (12, 24, 36)]
