"""The default resale model against dated used prices: its error, and the least-squares fit.

Each point is a card's used price as a share of its launch MSRP at an age in years: monthly
means of eBay sold listings from Tom's Hardware's series (github buttke/ebay-2021-2023-gpu-prices,
gpu_time_series.csv @883c3109), 2022-09 to 2023-11, after the 2022 crash and before the 2025-26
memory shortage; launch MSRPs from the launch articles (2070 499, 2080 Ti 999, 3060 329,
3080 699, 3090 1,499 USD). Prints the model's error over the points and the fitted rates.

    python bench/resale_fit.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.model import costs

# (card, age in years, used price / launch MSRP)
POINTS = [("rtx-3090", 2.0, 834 / 1499), ("rtx-3080", 2.0, 585 / 699), ("rtx-3060", 2.0, 290 / 329),
          ("rtx-3060", 2.7, 218 / 329), ("rtx-3090", 3.0, 730 / 1499), ("rtx-3080", 3.0, 414 / 699),
          ("rtx-3090", 3.2, 704 / 1499), ("rtx-3080", 3.2, 401 / 699), ("rtx-2080-ti", 4.0, 464 / 999),
          ("rtx-2070", 4.0, 226 / 499), ("rtx-2070", 4.9, 159 / 499), ("rtx-2080-ti", 5.0, 335 / 999),
          ("rtx-2070", 5.1, 159 / 499), ("rtx-2080-ti", 5.2, 309 / 999)]


def main() -> None:
    age = np.array([a for _, a, _ in POINTS])
    kept = np.array([k for _, _, k in POINTS])
    model = np.array([costs.resale_fraction(12 * a, "new") for a in age])
    err = model / kept - 1
    print(f"{len(POINTS)} points; model {costs.resale_model_text()} (the fee left out: the points are prices)")
    print(f"error: median {np.median(np.abs(err)):.1%}, worst {np.max(np.abs(err)):.1%}")
    for (card, a, _), e in zip(POINTS, err):
        print(f"  {card:12s} {a:4.1f} years  {e:+.0%}")
    rate = 1 - np.exp(np.sum(age * np.log(kept)) / np.sum(age * age))
    print(f"least-squares fit of one rate from the start (in log): {rate:.1%} a year")


if __name__ == "__main__":
    main()
