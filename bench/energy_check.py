"""The planner's energy and emissions against published training footprints.

Each row of ``bench/published_energy.csv`` is a training run whose energy (and, where given, its
emissions) was published with its hardware, GPU-hours, power per GPU, PUE and grid intensity.
The planner's formulas (planner.model.carbon) are given the same inputs: the board power the
publication counts (or, with ``--catalog-power``, the catalog's board power for the device), and
this prints estimate / reported - 1. Runs whose energy was measured show how far a board's
rated power is from what a GPU draws on average. Not pass/fail; the figures go into the notes.

    python bench/energy_check.py [--catalog-power]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pricing
from planner.model import carbon

RUNS = Path(__file__).with_name("published_energy.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog-power", action="store_true", help="the catalog's board power instead of the run's")
    args = ap.parse_args()
    runs = pd.read_csv(RUNS)
    board = pricing.load_catalog(pricing.DATA_DIR).devices.set_index("id")["board_power_w"]
    print(f"{'run':16s} {'power':>6s} {'energy [MWh]':>13s} {'reported':>9s} {'error':>7s} {'tCO2e':>8s} {'reported':>9s}")
    for r in runs.itertuples():
        watts = float(board[r.device]) if args.catalog_power else float(r.board_w)
        kwh = carbon.energy_kwh(watts, 0.0, float(r.gpu_hours), float(r.pue))
        t = carbon.operational_kg(kwh, float(r.g_co2e_per_kwh)) / 1000 if r.g_co2e_per_kwh == r.g_co2e_per_kwh else None
        err = kwh / 1000 / r.reported_mwh - 1
        print(f"{r.run:16s} {watts:6.0f} {kwh / 1000:13,.1f} {r.reported_mwh:9,.1f} {err:+7.1%} "
              f"{'' if t is None else f'{t:8,.1f}'} {'' if r.reported_tco2e != r.reported_tco2e else f'{r.reported_tco2e:9,.1f}'}"
              f"{'  (measured)' if r.measured == 'yes' else ''}")


if __name__ == "__main__":
    main()
