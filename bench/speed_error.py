"""Leave-one-device-out error of the speed estimate, per family and precision.

For each measured device: drop its rows from the throughput table, estimate its speed
from specs (planner.model.workload.relative_speed) relative to a reference that stays measured,
and compare with the measured ratio from the full table. Prints, per family and precision,
the median and worst error (estimate / measured - 1) and the device with the worst miss.

    python bench/speed_error.py [--data DIR] [--family cnn] [--csv FILE]

This is how wrong an ``estimated`` speed in a plan can be expected to be, and (leaving one job
out) how far a ``measured`` ratio moves on a job the table does not hold: the figures go into
the closing notes and the uncertainty model (planner.model.workload.SPEED_MEDIAN_ERROR,
SPEED_JOB_MEDIAN_ERROR), never into tests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pricing
from planner.model.workload import input_bound, measured_scores, relative_speed

REFERENCES = ("rtx-3090", "a100-80gb", "v100-32gb")


def loo(devices: pd.DataFrame, throughput: pd.DataFrame, family: str, precision: str) -> pd.DataFrame:
    scores = measured_scores(throughput, family, precision, devices)
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


#: jobs measured since this date are "published same-job pairs": recent software on recent cards
PAIRS_SINCE = "2023-01-01"


def pairs(devices: pd.DataFrame, throughput: pd.DataFrame, since: str = PAIRS_SINCE) -> pd.DataFrame:
    """Leave-one-job-out error on device ratios: for each job (model and framework) measured on
    two or more devices since ``since``, drop that job's rows, estimate every device's speed from
    the rest, and compare each pair's estimated ratio with the job's measured one (the higher
    throughput over the lower). A device measured only in that job is then estimated from specs.
    Runs the speed fit leaves out as input-bound (workload.input_bound) are left out here too:
    they time a data loader, not the card."""
    t = throughput[(throughput["as_of"].astype(str) >= since) & (throughput["precision"] != "fp8")
                   & ~input_bound(throughput, devices)]  # a data loader's ceiling is no card's speed
    rows = []
    for (model, framework, family, precision), g in t.groupby(["model", "framework", "family", "precision"]):
        if g["device"].nunique() < 2:
            continue
        rest = throughput[~((throughput["model"] == model) & (throughput["framework"] == framework))]
        ref = g["device"].iloc[0]
        est = relative_speed(devices, rest, ref, family, precision)["relative_speed"]
        by = g.groupby("device")["throughput"].mean().sort_values(ascending=False)
        for i, a in enumerate(by.index):
            for b in by.index[i + 1:]:
                truth = float(by[a] / by[b])
                guess = float(est[a] / est[b])
                source = g["source"].iloc[0].split(",")[0].split(" (")[0][:40]
                rows.append(dict(job=model, source=source, family=family, precision=precision, pair=f"{a} / {b}",
                                 measured=truth, estimated=guess, error=guess / truth - 1.0))
    return pd.DataFrame(rows)


def floor(pr: pd.DataFrame) -> pd.DataFrame:
    """The least worst error any model could reach on these pairs if it gives two cards one ratio
    per family and precision (as the speed model does on large work): where the same two cards
    measured ``low`` and ``high`` on two jobs, the best single ratio, 2 low high / (low + high),
    still misses both by (high - low) / (high + low). One row per (family, precision, pair),
    worst first."""
    g = pr.groupby(["family", "precision", "pair"])["measured"].agg(["min", "max", "count"]).reset_index()
    g["floor"] = (g["max"] - g["min"]) / (g["max"] + g["min"])
    g["jobs"] = [", ".join(pr.loc[(pr["family"] == r.family) & (pr["precision"] == r.precision)
                                  & (pr["pair"] == r.pair) & pr["measured"].isin([r.min, r.max]), "job"])
                 for r in g.itertuples()]
    return g.sort_values("floor", ascending=False, ignore_index=True)


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
    pr = pairs(catalog.devices, catalog.throughput)
    if not pr.empty:
        print(f"\nleave-one-job-out error on published same-job pairs (measured since {PAIRS_SINCE}): "
              f"{len(pr)} pairs, median |err| {pr['error'].abs().median():.1%}, "
              f"worst {pr.loc[pr['error'].abs().idxmax(), 'error']:+.1%}")
        by_kind = pr.groupby(["family", "precision"])["error"].agg(lambda e: e.abs().median())
        print("  by family and precision (planner.model.workload.SPEED_JOB_MEDIAN_ERROR, a measured speed's spread "
              "on a new job): " + ", ".join(f"{f} {p} {v:.3f}" for (f, p), v in by_kind.items()))
        for source, g in pr.groupby("source"):
            print(f"  {source:40s} {len(g):4d} pairs, median |err| {g['error'].abs().median():6.1%}, "
                  f"worst {g.loc[g['error'].abs().idxmax(), 'error']:+7.1%}")
        fl = floor(pr)
        top = fl.iloc[0]
        print(f"  floor: no model that gives two cards one ratio per family and precision can miss less than "
              f"{top['floor']:.1%} at worst here: {top['pair']} ({top['family']} {top['precision']}) measured "
              f"{top['min']:.2f} and {top['max']:.2f} ({top['jobs']}); {int((fl['floor'] > 0.30).sum())} pairs of "
              "cards have a floor past 30 %")
        print("  the 12 worst:")
        for r in pr.sort_values("error", key=abs, ascending=False).head(12).itertuples():
            print(f"  {r.pair:28s} {r.measured:5.2f} measured, {r.estimated:5.2f} estimated ({r.error:+6.1%})  {r.job}")
    if args.csv:
        df.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
