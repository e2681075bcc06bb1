"""Workload model: memory need by hand for three models, speed scores, calibration error."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from planner import workload
from planner.cli import main
from planner.scenario import Workload


def wl(**kw):
    return Workload(**{**dict(family="transformer", params=110e6, precision="mixed", optimizer="adam",
                              batch_size=32, reference_gpu="rtx-3090", sequence_length=512), **kw})


def test_110m_transformer_adam_mixed_by_hand():
    need = workload.memory_need(wl())
    # states: 110M x 16 bytes; activations: L=13, h=832, a=13, s=512, b=32:
    # 13 layers x 512*32*832*(34 + 5*13*512/832) bytes = 13 x 13,631,488 x 74
    assert need.states_gb == pytest.approx(1.76)
    assert need.activations_gb == pytest.approx(13 * 13_631_488 * 74 / 1e9)
    assert need.total_gb == pytest.approx(1.76 + 13.113 + 1.0, abs=1e-3)
    assert workload.fit(need, 16).verdict == "fits"
    f = workload.fit(need, 12)  # (12 - 2.76) GB / (13.113 GB / 32) a sample -> micro-batch 22
    assert f.verdict == "fits-with-accumulation" and f.micro_batch == 22


def test_resnet50_sgd_momentum_fp32_by_hand():
    need = workload.memory_need(wl(family="cnn", params=25.6e6, precision="fp32", optimizer="momentum",
                                   batch_size=256, sequence_length=None, image_size=224))
    assert need.states_gb == pytest.approx(25.6e6 * 12 / 1e9)
    assert need.activations_gb == pytest.approx(0.107 * 256)
    f = workload.fit(need, 24)  # (24 - 1.3072) / 0.107 = 212.1 -> micro-batch 212
    assert f.verdict == "fits-with-accumulation" and f.micro_batch == 212
    # twice the image side, four times the pixels
    big = workload.memory_need(wl(family="cnn", params=25.6e6, precision="fp32", optimizer="momentum",
                                  batch_size=256, image_size=448))
    assert big.activations_gb == pytest.approx(4 * need.activations_gb)


def test_7b_model_fits_only_with_checkpointing_or_not_at_all():
    # SGD, mixed: 7e9 x 8 bytes = 56 GB of states; L=52, h=3328, a=52, s=2048:
    # one sample = 52 x 2048*3328*(34 + 5*52*2048/3328) = 52 x 6,815,744 x 194 bytes = 68.8 GB
    need = workload.memory_need(wl(params=7e9, optimizer="sgd", batch_size=8, sequence_length=2048))
    assert workload.transformer_shape(7e9) == (52, 3328, 52)
    assert need.activations_gb / 8 == pytest.approx(52 * 6_815_744 * 194 / 1e9)
    f = workload.fit(need, 80)  # 23 GB left; checkpointing keeps 2/194 of it: 0.709 GB a sample
    assert f.verdict == "fits-with-checkpointing" and f.micro_batch == 8
    assert f.slowdown == pytest.approx(4 / 3)
    adam = workload.memory_need(wl(params=7e9, optimizer="adam", batch_size=8, sequence_length=2048))
    f = workload.fit(adam, 80)
    assert f.verdict == "does-not-fit"
    assert f.reason == "needs 113.0 GB for weights, gradients and optimizer states alone, has 80 GB"


def test_scores_recover_a_known_ratio():
    # B is exactly twice as fast as A on both models; C only ran one model, 3x A
    t = pd.DataFrame({
        "device": ["a", "b", "a", "b", "c"], "model": ["m1", "m1", "m2", "m2", "m1"],
        "framework": "pytorch", "family": "cnn", "precision": "fp32", "batch_size": 64,
        "throughput": [100.0, 200.0, 7.0, 14.0, 300.0],
    })
    s = workload.measured_scores(t, "cnn", "fp32")
    assert math.exp(s["b"] - s["a"]) == pytest.approx(2.0)
    assert math.exp(s["c"] - s["a"]) == pytest.approx(3.0)


def test_memory_starved_runs_are_left_out():
    t = pd.DataFrame({
        "device": ["a", "b", "a", "b"], "model": ["m1", "m1", "m2", "m2"], "framework": "pytorch",
        "family": "cnn", "precision": "fp32", "batch_size": [64, 64, 64, 2], "throughput": [100.0, 200.0, 10.0, 1.0],
    })
    s = workload.measured_scores(t, "cnn", "fp32")
    assert math.exp(s["b"] - s["a"]) == pytest.approx(2.0)


#: Calibration error of the spec estimate against the measured devices it was
#: fitted on (|estimate / measured - 1|): the bounds the closing note reports.
CALIBRATION_BOUNDS = {  # (family, precision): (median, worst)
    ("cnn", "fp32"): (0.06, 0.25), ("cnn", "mixed"): (0.12, 1.00), ("transformer", "fp32"): (0.10, 0.30),
    ("transformer", "mixed"): (0.30, 0.60), ("rnn", "fp32"): (0.20, 0.85), ("rnn", "mixed"): (0.20, 0.55),
}


@pytest.mark.parametrize("family, precision", list(CALIBRATION_BOUNDS))
def test_spec_estimate_reproduces_measured_speeds(catalog, family, precision):
    cal = workload.calibrate(catalog.devices, catalog.throughput, family, precision)
    err = (cal.ratio - 1).abs()
    median, worst = CALIBRATION_BOUNDS[(family, precision)]
    assert len(err) >= 15
    assert err.median() <= median and err.max() <= worst
    assert 0.0 <= cal.compute_weight <= 1.0


def test_measured_speed_when_both_devices_are_measured(catalog):
    r = workload.relative_speed(catalog.devices, catalog.throughput, "rtx-3090", "cnn", "mixed")
    assert r.at["rtx-3090", "relative_speed"] == 1.0 and r.at["rtx-3090", "speed_source"] == "reference"
    assert r.at["a100-40gb", "speed_source"] == "measured"
    # independent check: the geometric mean of the per-model throughput ratios of the two cards
    t = catalog.throughput
    t = t[(t["family"] == "cnn") & (t["precision"] == "mixed") & (t["framework"] == "pytorch")]
    per_model = t.pivot_table(index="model", columns="device", values="throughput")[["a100-40gb", "rtx-3090"]].dropna()
    geo = float(np.exp(np.log(per_model["a100-40gb"] / per_model["rtx-3090"]).mean()))
    assert r.at["a100-40gb", "relative_speed"] == pytest.approx(geo, rel=0.1)
    assert r.at["rtx-4090", "speed_source"] == "estimated"
    # mixed precision on a GPU without tensor cores gains nothing over its fp32 speed
    ratio_mixed = r.at["gtx-1080-ti", "relative_speed"]
    assert ratio_mixed < 0.5


def test_tpus_are_poor_at_rnns(catalog):
    cnn = workload.relative_speed(catalog.devices, catalog.throughput, "rtx-3090", "cnn", "mixed")
    rnn = workload.relative_speed(catalog.devices, catalog.throughput, "rtx-3090", "rnn", "mixed")
    assert rnn.at["tpu-v3-8", "relative_speed"] / cnn.at["tpu-v3-8", "relative_speed"] < \
        rnn.at["v100-32gb", "relative_speed"] / cnn.at["v100-32gb", "relative_speed"]


def test_cnn_activation_constant_recomputed_from_the_catalog(catalog):
    t = catalog.throughput
    rn = t[(t["model"] == "ResNet-50 (ImageNet)") & (t["framework"] == "pytorch")]
    vram = rn["device"].map(catalog.devices.set_index("id")["vram_gb"])
    for precision, value in workload.CNN_GB_PER_IMAGE_224.items():
        per = (vram / rn["batch_size"])[rn["precision"] == precision]
        assert per.median() == pytest.approx(value, rel=0.1)


def test_fit_command_rows(catalog):
    result = CliRunner().invoke(main, ["fit", "--params", "350M", "--family", "transformer", "--precision", "mixed",
                                       "--optimizer", "adam", "--batch-size", "32", "--sequence-length", "512",
                                       "--reference", "rtx-3090", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["device"]: r for r in json.loads(result.output)}
    assert len(rows) == len(catalog.devices)
    assert {"device", "vram_gb", "need_gb", "verdict", "relative_speed", "speed_source"} <= set(rows["t4"])
    assert rows["a100-80gb"]["verdict"] == "fits" and rows["gtx-1050-ti"]["verdict"] == "does-not-fit"
    assert rows["rtx-3090"]["relative_speed"] == 1.0


def test_fit_from_a_scenario_with_flag_override():
    from .conftest import SCENARIOS

    result = CliRunner().invoke(main, ["fit", str(SCENARIOS / "thesis.yaml"), "--batch-size", "8", "--format", "csv"])
    assert result.exit_code == 0
    assert result.output.splitlines()[0].startswith("device,vram_gb,need_gb,verdict")


def test_fit_bad_flag_value():
    result = CliRunner().invoke(main, ["fit", "--params", "86 GB", "--family", "cnn"])
    assert result.exit_code == 2
    assert "--flags: workload.params: expected a count such as 86M, got '86 GB' (a size)" in result.output


def test_plan_excludes_what_cannot_hold_the_model_with_the_reason(load):
    from .conftest import MINIMAL
    import planner

    s = load(MINIMAL.replace("params: 100M", "params: 7B") + "you:\n  own: [gtx-1060-6gb]\n")
    d = planner.to_dict(planner.plan(s))
    reasons = {e["option"]: e["reason"] for e in d["excluded"] if e["phase"] is None}
    assert reasons["own:gtx-1060-6gb"] == "needs 113.0 GB for weights, gradients and optimizer states alone, has 6 GB"


def test_wrong_framework_is_excluded_with_the_reason(load):
    from .conftest import MINIMAL
    import planner

    s = load(MINIMAL.replace("electricity:", "framework: paddlepaddle\nelectricity:")
             + "consider:\n  free: [kaggle-tpu]\n  rent: []\n  buy: []\n")
    d = planner.to_dict(planner.plan(s))
    reasons = {e["option"]: e["reason"] for e in d["excluded"] if e["phase"] is None}
    assert reasons["kaggle-tpu"] == "runs tensorflow, jax, pytorch only; the scenario uses paddlepaddle"
