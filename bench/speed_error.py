"""Leave-one-device-out error of the speed estimate, per family and precision.

For each measured device: drop its rows from the throughput table, estimate its speed
from specs (planner.model.workload.relative_speed) relative to a reference that stays measured,
and compare with the measured ratio from the full table. Prints, per family and precision,
the median and worst error (estimate / measured - 1) and the device with the worst miss.

    python bench/speed_error.py [--data DIR] [--family cnn] [--csv FILE]

This is how wrong an ``estimated`` speed in a plan can be expected to be: the figures go
into the closing notes and the uncertainty model, never into tests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pricing
from planner.model.workload import measured_scores, relative_speed

REFERENCES = ("rtx-3090", "a100-80gb", "v100-32gb")


def loo(devices: pd.DataFrame, throughput: pd.DataFrame, family: str, precision: str) -> pd.DataFrame:
    scores = measured_scores(throughput, family, precision)
    rows = []
    for device in scores.index:
        ref = next(r for r in REFERENCES if r != device and r in scores.index)
        rest = throughput[throughput["device"] != device]
        est = relative_speed(devices, rest, ref, family, precision).at[device, "relative_speed"]
        truth = float(np.exp(scores[device] - scores[ref]))
        arch = devices.set_index("id").at[device, "architecture"]
        rows.append(dict(family=family, precision=precision, device=device, architecture=arch, reference=ref,
                         measured=truth, estimated=est, error=est / truth - 1.0))
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(pricing.DATA_DIR), help="catalog directory (default: the shipped one)")
    ap.add_argument("--family", choices=["cnn", "transformer", "rnn"])
    ap.add_argument("--csv", help="also write every device's row here")
    args = ap.parse_args()
    catalog = pricing.load_catalog(args.data)
    families = [args.family] if args.family else ["cnn", "transformer", "rnn"]
    frames = [loo(catalog.devices, catalog.throughput, f, p) for f in families for p in ("fp32", "mixed")]
    df = pd.concat([f for f in frames if not f.empty], ignore_index=True)
    print(f"leave-one-device-out speed error, catalog {args.data}")
    print(f"{'family':12s} {'precision':9s} {'devices':>7s} {'median |err|':>12s} {'worst':>8s}  worst device")
    for (family, precision), g in df.groupby(["family", "precision"], sort=False):
        worst = g.loc[g["error"].abs().idxmax()]
        print(f"{family:12s} {precision:9s} {len(g):7d} {g['error'].abs().median():12.1%} {worst['error']:+8.1%}  "
              f"{worst['device']} ({worst['architecture']})")
    print(f"{'all':12s} {'':9s} {len(df):7d} {df['error'].abs().median():12.1%} "
          f"{df.loc[df['error'].abs().idxmax(), 'error']:+8.1%}")
    by_arch = df.groupby("architecture")["error"].agg(lambda e: e.abs().median()).sort_values()
    print("median |err| by architecture: " + ", ".join(f"{a} {v:.0%}" for a, v in by_arch.items()))
    if args.csv:
        df.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
