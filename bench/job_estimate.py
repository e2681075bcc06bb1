"""The job estimate (planner.model.job) against published training runs.

Each row of ``bench/published_runs.csv`` is a run whose model, tokens, hardware and GPU-hours
were published (a paper, a model card, a reproduction's log), with its source. The planner
estimates the GPU-hours from the model and tokens alone, as ``planner estimate`` would for a
user who names that model and device, and this prints estimate / reported - 1 per run, by
role: ``source`` runs are among the measurements the utilisation table cites, ``held out``
runs are not, so they judge it. Not pass/fail; the figures go into the closing notes.

    python bench/job_estimate.py [--data DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pricing
from planner.model import job
from planner.model.scenario import Job
from planner.model.validate import workload_of
from pricing.ids import ModelCard

RUNS = Path(__file__).with_name("published_runs.csv")


def estimates(ids: pricing.CatalogIds, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run: the estimate's typical and planned (mean) GPU-hours, its range, and the
    ratio of the planned figure to the reported one."""
    out = []
    for r in runs.itertuples():
        card = ids.models.get(r.model) if isinstance(r.model, str) else None
        if card is None and r.layers == r.layers and r.layers:
            card = ModelCard(r.run, r.run, "transformer", float(r.params), int(r.layers), int(r.hidden_size),
                                     None, None, None, r.source)
        w = workload_of({"family": "transformer", "params": float(r.params), "reference_gpu": r.device,
                         "method": r.method, "precision": "mixed", "sequence_length": int(r.sequence_length)})
        e = job.estimate(Job(tokens=float(r.tokens)), w, card, ids.device_specs[r.device], ids.utilisation)
        low, high = e.hours_range
        out.append(dict(run=r.run, role=r.role, device=r.device, params=r.params, reported=r.reported_gpu_hours,
                        typical=e.hours_typical, planned=e.hours_planned, low=low, high=high,
                        error=e.hours_planned / r.reported_gpu_hours - 1.0,
                        inside=low <= r.reported_gpu_hours <= high, notes=r.notes))
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(pricing.DATA_DIR), help="catalog directory (default: the shipped one)")
    args = ap.parse_args()
    from pricing.ids import read_ids

    df = estimates(read_ids(args.data), pd.read_csv(RUNS))
    print(f"{'run':28s} {'role':9s} {'device':10s} {'reported':>10s} {'estimate':>10s} {'error':>7s}  range holds it")
    for r in df.itertuples():
        print(f"{r.run:28s} {r.role:9s} {r.device:10s} {r.reported:10,.0f} {r.planned:10,.0f} {r.error:+7.0%}  "
              f"{'yes' if r.inside else 'no'} ({r.low:,.0f}-{r.high:,.0f})")
    end_to_end = df["notes"].str.startswith("end to end")
    for role, g in df[~end_to_end].groupby("role"):
        err = g["error"].abs()
        ratio = g["planned"] / g["reported"]
        print(f"{role}: {len(g)} runs, median |error| {err.median():.0%}, worst {g.loc[err.idxmax(), 'error']:+.0%}, "
              f"within 25 %: {(err <= 0.25).mean():.0%}, within 2x: {ratio.between(0.5, 2.0).mean():.0%}, "
              f"range holds the reported: {g['inside'].mean():.0%}")
    if end_to_end.any():
        e2e = df[end_to_end]
        ratios = ", ".join(f"{x:.2f}" for x in e2e["planned"] / e2e["reported"])
        print(f"end to end (model cards' GPU-hours, more than pretraining): {', '.join(e2e['run'])}: "
              f"estimate / reported {ratios}")

if __name__ == "__main__":
    main()
