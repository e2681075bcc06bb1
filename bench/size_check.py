"""Speeds at a job's size, against published runs of one harness at several sizes.

    python bench/size_check.py [--catalog DIR]

A step takes its FLOPs at the device's rate on large work plus a fixed time per layer that no
GPU shortens (planner.model.workload.Step, at_size). Two checks on ``bench/published_sizes.csv``
(each row a dated, sourced run: Surogate's LoRA benchmark of Qwen3 0.6B-32B on an RTX 5090,
H100, H200 and B200, with Unsloth and with its own engine; Lambda's BERT-base and BERT-large
fine-tunes on 11 GPUs):

1. The fixed time per layer of each harness, fitted with each device's rate by least squares on
   log throughput (step time = FLOPs / rate + layers x fixed time, the FLOPs by planner.model.job):
   the source of ``workload.STEP_FIXED_S_PER_LAYER``.
2. The planner's ratio between two devices that ran the same job, against the measured one:
   on large work (the speed model alone, as before size-aware speeds) and at the job's step
   (the mean fixed share the plan counts on, and the harness's own), each pair with the slower device as the
   reference, as a user who measured their hours there would set it.

Prints figures for notes; not pass/fail.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pricing
from planner.model import job, workload
from planner.model.validate import load_workload

DATA = ROOT / "bench" / "published_sizes.csv"


def rows() -> list[dict]:
    with DATA.open(encoding="utf-8") as f:
        return [dict(r, batch_size=int(r["batch_size"]), sequence_length=int(r["sequence_length"]),
                     tokens_per_s=float(r["tokens_per_s"])) for r in csv.DictReader(f)]


def step_of(r: dict, reference: str, ids: pricing.CatalogIds) -> workload.Step:
    """The run's step as the planner makes it, with ``reference`` as the reference GPU."""
    card = ids.models[r["model"]]
    w = load_workload({"model": r["model"], "family": card.family, "params": card.params, "method": r["method"],
                       "precision": "mixed", "batch_size": r["batch_size"], "sequence_length": r["sequence_length"],
                       "reference_gpu": reference}, ids)
    step = job.step_of(w, card, ids.device_specs[reference], ids.utilisation)
    assert step is not None
    return step


def fit_fixed_time(runs: list[dict], ids: pricing.CatalogIds) -> tuple[float, dict[str, float], float]:
    """(fixed time per layer [s], each device's rate on large work [TFLOPS], rms miss of log
    throughput) of one harness's runs."""
    from scipy.optimize import least_squares

    devices = sorted({r["device"] for r in runs})
    steps = [step_of(r, r["device"], ids) for r in runs]
    tokens = np.array([r["batch_size"] * r["sequence_length"] for r in runs], dtype=float)
    measured = np.log([r["tokens_per_s"] for r in runs])
    at = np.array([devices.index(r["device"]) for r in runs])
    flops = np.array([s.flops for s in steps])
    layers = np.array([s.layers for s in steps], dtype=float)

    def miss(p: np.ndarray) -> np.ndarray:
        rate, fixed = np.exp(p[:-1]) * 1e12, np.exp(p[-1])
        return np.log(tokens / (flops / rate[at] + layers * fixed)) - measured

    fit = least_squares(miss, np.r_[np.full(len(devices), np.log(100.0)), np.log(1e-3)])
    return (float(np.exp(fit.x[-1])), dict(zip(devices, np.exp(fit.x[:-1]).round(0))),
            float(np.sqrt(np.mean(fit.fun ** 2))))


#: The catalog's throughput rows that come from each harness's runs: held out when its pairs are
#: checked, so the speed model judges runs it was not fitted on.
HELD_OUT = {"Lambda NGC PyTorch 22.09 fp16": "[Lambda v1]", "Unsloth BF16 LoRA (Surogate benchmark)": "Surogate benchmark]",
            "Surogate BF16 LoRA": "Surogate benchmark]"}


def ratios(runs: list[dict], catalog: pricing.Catalog, fixed: float) -> list[tuple]:
    """Per pair of devices that ran the same job: (job, fast, slow, measured, large work, at the
    typical fixed time, at the harness's own) ratios of fast over slow, the speed model fitted
    without the harness's own rows (:data:`HELD_OUT`)."""
    ids = catalog.ids()
    throughput = catalog.throughput[~catalog.throughput["model"].str.contains(HELD_OUT[runs[0]["harness"]], regex=False)]
    out = []
    by_job: dict[str, dict[str, dict]] = {}
    for r in runs:
        by_job.setdefault(f"{r['model']} b{r['batch_size']}", {})[r["device"]] = r
    speeds: dict[str, object] = {}
    for name, on in sorted(by_job.items()):
        devices = sorted(on, key=lambda d: on[d]["tokens_per_s"])
        for i, slow in enumerate(devices):
            if slow not in speeds:
                speeds[slow] = workload.relative_speed(catalog.devices, throughput, slow, "transformer", "mixed")
            large = speeds[slow]["relative_speed"]  # type: ignore[index]
            for fast in devices[i + 1:]:
                # the slower device is the reference; its step at its own batch (Lambda's batches differ)
                step = step_of(on[slow], slow, ids)
                measured = on[fast]["tokens_per_s"] / on[slow]["tokens_per_s"]
                r0 = float(large[fast])
                out.append((name, fast, slow, measured, r0, float(workload.at_size(r0, step.share)),
                            float(workload.at_size(r0, step.fixed_share(fixed)))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", default=str(ROOT / "pricing" / "data"))
    args = parser.parse_args()
    catalog = pricing.load_catalog(Path(args.catalog))
    ids = catalog.ids()
    low, typical, high = workload.STEP_FIXED_S_PER_LAYER
    print(f"planner: fixed time per layer {typical * 1e3:g} ms (range {low * 1e3:g}-{high * 1e3:g})\n")
    harnesses: dict[str, list[dict]] = {}
    for r in rows():
        harnesses.setdefault(r["harness"], []).append(r)
    every: list[tuple] = []
    for harness, runs in harnesses.items():
        fixed, rates, rms = fit_fixed_time(runs, ids)
        print(f"{harness}: {len(runs)} runs; fixed time {fixed * 1e3:.2f} ms a layer, rms miss {rms:.1%}; "
              f"rates on large work [TFLOPS]: " + ", ".join(f"{d} {v:g}" for d, v in rates.items()))
        pairs = ratios(runs, catalog, fixed)
        every += pairs
        err = {k: [abs(p[k] / p[3] - 1) for p in pairs] for k in (4, 5, 6)}
        print(f"  {len(pairs)} pairs, median |err| of the ratio: large work {statistics.median(err[4]):.1%}, "
              f"at the job's step {statistics.median(err[5]):.1%} (as the plan counts: the mean fixed share), "
              f"{statistics.median(err[6]):.1%} (the harness's own); worst {max(err[4]):.0%} / {max(err[5]):.0%} / "
              f"{max(err[6]):.0%}")
        for name, fast, slow, measured, r0, r1, _ in pairs:
            if slow in ("rtx-5090", "rtx-4090", "rtx-3090") and fast in ("h100-sxm", "b200", "a100-80gb"):
                print(f"    {fast:>9s} / {slow:<9s} {name:18s} measured {measured:5.2f}  large work {r0:5.2f} "
                      f"({r0 / measured - 1:+4.0%})  at its step {r1:5.2f} ({r1 / measured - 1:+4.0%})")
    err = {k: [abs(p[k] / p[3] - 1) for p in every] for k in (4, 5)}
    print(f"\nall {len(every)} pairs: median |err| large work {statistics.median(err[4]):.1%}, at the job's step "
          f"{statistics.median(err[5]):.1%}; worst {max(err[4]):.0%} / {max(err[5]):.0%}")


if __name__ == "__main__":
    main()
