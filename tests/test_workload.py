"""Workload model: memory need by hand for three models, speed scores, calibration error."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.model import workload
from planner.model.validate import workload_of
from pricing.errors import InputError


def wl(**kw):
    return workload_of({**dict(family="transformer", params=110e6, precision="mixed", optimizer="adam",
                               batch_size=32, reference_gpu="rtx-3090", sequence_length=512), **kw})


def test_110m_transformer_adam_mixed_by_hand():
    need = workload.memory_need(wl())
    # states: 110M x 16 bytes; activations: L=13, h=832, a=13, s=512, b=32, eager attention:
    # 13 layers x 512*32*832*(34 + 5*13*512/832) bytes = 13 x 13,631,488 x 74, x 1.6 under autocast
    assert need.states_gb == pytest.approx(1.76)
    assert need.activations_gb == pytest.approx(13 * 13_631_488 * 74 * 1.6 / 1e9)  # 20.98 GB
    assert need.total_gb == pytest.approx(1.76 + 20.982 + 1.0, abs=1e-3)
    assert workload.fit(need, 24).verdict == "fits"
    f = workload.fit(need, 12)  # (12 - 2.76) GB / (20.982 GB / 32) a sample = 14.1 -> 14 fit; 11 + 11 + 10
    assert f.verdict == "fits-with-accumulation" and f.micro_batch == 11


def test_resnet50_sgd_momentum_fp32_by_hand():
    need = workload.memory_need(wl(family="cnn", params=25.6e6, precision="fp32", optimizer="momentum",
                                   batch_size=256, sequence_length=None, image_size=224))
    assert need.states_gb == pytest.approx(25.6e6 * 12 / 1e9)
    assert need.activations_gb == pytest.approx(0.107 * 256)
    f = workload.fit(need, 24)  # (24 - 1.3072) / 0.107 = 212.1 -> 212 fit; 128 x 2 steps
    assert f.verdict == "fits-with-accumulation" and f.micro_batch == 128
    # twice the image side, four times the pixels
    big = workload.memory_need(wl(family="cnn", params=25.6e6, precision="fp32", optimizer="momentum",
                                  batch_size=256, image_size=448))
    assert big.activations_gb == pytest.approx(4 * need.activations_gb)


def test_7b_model_fits_only_with_checkpointing_or_not_at_all():
    # SGD, mixed: 7e9 x 8 bytes = 56 GB of states; L=52, h=3328, a=52, s=2048:
    # one sample = 52 x 2048*3328*(34 + 5*52*2048/3328) = 52 x 6,815,744 x 194 bytes = 68.8 GB, x 1.6
    need = workload.memory_need(wl(params=7e9, optimizer="sgd", batch_size=8, sequence_length=2048))
    assert workload.transformer_shape(7e9) == (52, 3328, 52)
    assert need.activations_gb / 8 == pytest.approx(52 * 6_815_744 * 194 * 1.6 / 1e9)
    f = workload.fit(need, 80)  # 23 GB left; checkpointing keeps 2/194 of it: 1.13 GB a sample
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


def test_fit_takes_a_named_model_as_a_scenario_does():
    """--model fills the family, size and shape from the model's card, as a scenario's
    workload.model does; without it a family and a size are asked for, located, exit 2."""
    def rows(*flags: str) -> dict:
        out = CliRunner().invoke(main, ["fit", *flags, "--method", "lora", "--sequence-length", "1024",
                                        "--batch-size", "4", "--reference", "rtx-3090", "--format", "json"])
        assert out.exit_code == 0, out.output
        return {r["device"]: r for r in json.loads(out.output)}

    named, given = rows("--model", "llama-3.2-1b"), rows("--family", "transformer", "--params", "1.23B")
    assert {d: (r["need_gb"], r["verdict"]) for d, r in named.items()} == \
        {d: (r["need_gb"], r["verdict"]) for d, r in given.items()}
    # the step is the card's 16 layers of 2048, not the 29 of 1856 a 1.23B transformer would have
    text = CliRunner().invoke(main, ["fit", "--model", "llama-3.2-1b", "--method", "lora", "--sequence-length", "1024",
                                     "--batch-size", "4", "--reference", "rtx-3090"]).output
    assert workload.transformer_shape(1.23e9)[0] != 16 and "TFLOP, 16 layers)" in text.splitlines()[0]
    missing = CliRunner().invoke(main, ["fit", "--reference", "rtx-3090"])
    assert missing.exit_code == 2 and "missing required key 'workload.family'" in missing.output


def test_fit_bad_flag_value():
    result = CliRunner().invoke(main, ["fit", "--params", "86 GB", "--family", "cnn"])
    assert result.exit_code == 2
    assert "--flags: workload.params: expected a count such as 86M, got '86 GB' (a size)" in result.output


def test_plan_excludes_what_cannot_hold_the_model_with_the_reason(load):
    import planner

    from .conftest import MINIMAL

    s = load(MINIMAL.replace("params: 100M", "params: 7B") + "you:\n  own: [gtx-1060-6gb]\n")
    d = planner.to_dict(planner.plan(s))
    reasons = {e["option"]: e["reason"] for e in d["excluded"] if e["phase"] is None}
    assert reasons["own:gtx-1060-6gb"] == "needs 113.0 GB for weights, gradients and optimizer states alone, has 6 GB"


def test_wrong_framework_is_excluded_with_the_reason(load):
    import planner

    from .conftest import MINIMAL

    s = load(MINIMAL.replace("electricity:", "framework: paddlepaddle\nelectricity:")
             + "consider:\n  free: [kaggle-tpu]\n  rent: []\n  buy: []\n")
    d = planner.to_dict(planner.plan(s))
    reasons = {e["option"]: e["reason"] for e in d["excluded"] if e["phase"] is None}
    assert reasons["kaggle-tpu"] == "runs tensorflow, jax, pytorch only; the scenario uses paddlepaddle"
    # a model too big for it as well: what the tier cannot run is the reason, not a memory fix that
    # would still leave it unable to run the job (7e9 x 16 bytes do not fit a 16 GB TPU core)
    big = load(MINIMAL.replace("params: 100M", "params: 7B").replace("electricity:", "framework: paddlepaddle\nelectricity:")
               + "consider:\n  free: [kaggle-tpu]\n  rent: []\n  buy: []\n")
    reasons = {e["option"]: e["reason"] for e in planner.to_dict(planner.plan(big))["excluded"] if e["phase"] is None}
    assert reasons["kaggle-tpu"] == "runs tensorflow, jax, pytorch only; the scenario uses paddlepaddle"


# --- Adapters, attention, sharding, TPU cores (issue 13) -------------------------------------

def _device(catalog, device_id):
    return next(catalog.devices.set_index("id", drop=False).loc[[device_id]].itertuples())


def test_lora_keeps_a_16_bit_frozen_base_and_states_only_for_the_adapters():
    w = wl(params=7e9, method="lora")
    # default adapters: rank 8 on W_q and W_v of the 52-layer, h = 3328 shape: 52 x 4 x 8 x 3328
    adapters, how = workload.trainable_params(w)
    assert adapters == 52 * 4 * 8 * 3328 == 5_537_792
    assert "rank 8" in how and "set workload.trainable_params" in how
    # 7e9 x 2 bytes of frozen base + 16 bytes (mixed Adam) per adapter parameter
    assert workload.states_gb(w) == pytest.approx((7e9 * 2 + 5_537_792 * 16) / 1e9)
    # given adapters replace the default; the checkpoint holds the adapters and their states only
    given = wl(params=7e9, method="lora", trainable_params=4_194_304)
    assert workload.states_gb(given) == pytest.approx((7e9 * 2 + 4_194_304 * 16) / 1e9)
    assert workload.checkpoint_gb(given) == pytest.approx(4_194_304 * 16 / 1e9)
    assert workload.checkpoint_gb(wl(params=7e9)) == pytest.approx(7e9 * 16 / 1e9)


def test_lora_7b_matches_litgpt_measured_peaks():
    # Lightning-AI/litgpt tutorials/resource-tables.md (2023-10-20): Llama 2 7B, LoRA with
    # 4,194,304 trainable parameters, bf16-true, one A100 40GB, Alpaca (longest 1,304 tokens):
    # peak 21.30 GB at micro-batch 1 and 29.07 GB at micro-batch 2.
    def need(batch):
        w = wl(params=7e9, method="lora", trainable_params=4_194_304, batch_size=batch, sequence_length=1304)
        return workload.memory_need(w, "ampere")  # SDPA: memory-efficient attention

    assert need(1).total_gb == pytest.approx(21.30, rel=0.10)
    assert need(2).total_gb == pytest.approx(29.07, rel=0.10)
    # the per-sample activations alone: 52 x 1304 x 3328 x 34 bytes (16-bit, no s^2 term)
    assert need(1).activations_gb == pytest.approx(52 * 1304 * 3328 * 34 / 1e9)
    assert need(2).total_gb - need(1).total_gb == pytest.approx(29.07 - 21.30, rel=0.05)


def test_qlora_65b_fits_one_48_gb_card_and_not_a_24_gb_one(catalog):
    # Dettmers et al. 2023: NF4 with double quantisation costs 4 + 0.127 bits a parameter;
    # "finetune a 65B parameter model on a single 48GB GPU" (with gradient checkpointing)
    w = wl(params=65e9, method="qlora", batch_size=1, sequence_length=512)
    assert workload.QLORA_BASE_BYTES_PER_PARAM == pytest.approx(4.127 / 8, abs=1e-4)
    adapters, _ = workload.trainable_params(w)
    layers, hidden, _ = workload.transformer_shape(65e9)
    assert adapters == layers * 18 * 64 * hidden  # r = 64 on every linear layer
    assert workload.states_gb(w) == pytest.approx((65e9 * 4.127 / 8 + adapters * 12) / 1e9, rel=1e-4)
    assert workload.place(w, _device(catalog, "rtx-a6000")).fit.verdict in ("fits", "fits-with-checkpointing")
    assert workload.place(w, _device(catalog, "rtx-3090")).fit.verdict == "does-not-fit"
    # the same model fully fine-tuned needs 65e9 x 16 bytes: no single card holds it
    assert workload.place(wl(params=65e9, batch_size=1), _device(catalog, "a100-80gb")).fit.verdict == "does-not-fit"


def test_qlora_7b_near_litgpt_measured_peak():
    # litgpt resource tables: Llama 2 7B, NF4 + double quantisation, micro-batch 1: 13.84 GB
    # (LitGPT keeps embeddings and head in bf16, which the per-parameter figure leaves out)
    w = wl(params=7e9, method="qlora", trainable_params=4_194_304, batch_size=1, sequence_length=1304)
    assert workload.memory_need(w, "ampere").total_gb == pytest.approx(13.84, rel=0.15)


def test_full_7b_fits_only_sharded_across_eight_gpus(catalog):
    a100 = _device(catalog, "a100-80gb")
    w = wl(params=7e9, batch_size=4, sequence_length=512)
    assert workload.place(w, a100).fit.verdict == "does-not-fit"  # 7e9 x 16 bytes = 112 GB of states
    # data parallel without sharding: every GPU still holds all 112 GB; the answer says the memory is
    # a GPU's, and that sharding fixes it (112 / 8 = 14 GB of states a GPU)
    eight = workload.place(w, a100, 8).fit
    assert eight.verdict == "does-not-fit"
    assert eight.reason == ("needs 113.0 GB for weights, gradients and optimizer states alone, has 80 GB a GPU "
                            "(workload.sharding: zero3 would split the states across its 8 GPUs: fits)")
    assert workload.place(w, a100).fit.reason.endswith("has 80 GB")  # one GPU: nothing to split
    # where even sharded states do not fit (65e9 x 16 / 8 = 130 GB a GPU), no fix is offered
    assert "sharding" not in workload.place(wl(params=65e9, batch_size=1), a100, 8).fit.reason
    z3 = workload.place(wl(params=7e9, batch_size=4, sequence_length=512, sharding="zero3"), a100, 8)
    assert z3.need.states_gb == pytest.approx(7e9 * 16 / 8 / 1e9)  # ZeRO-3: 16/N bytes a parameter
    assert z3.fit.verdict == "fits"
    z2 = workload.place(wl(params=7e9, batch_size=4, sequence_length=512, sharding="zero2"), a100, 8)
    assert z2.need.states_gb == pytest.approx(7e9 * (2 + 14 / 8) / 1e9)  # ZeRO-2: 2 + 14/N bytes
    # sharding costs communication: ZeRO-3 scales worse than plain data parallelism
    assert (workload.data_parallel_speed(8, "zero3", gpus="pro") < workload.data_parallel_speed(8, "none", gpus="pro")
            < 8)


def test_tpu_memory_is_per_core(catalog):
    v3 = _device(catalog, "tpu-v3-8")  # 8 cores x 16 GB, not one 128 GB pool
    w = wl(params=1e9, optimizer="adam", batch_size=8, sequence_length=512, precision="mixed")
    p = workload.place(w, v3)
    assert p.replica_vram_gb == 16 and p.replicas == 8
    assert p.need.states_gb == pytest.approx(16.0)  # 1e9 x 16 bytes do not fit one 16 GB core
    assert p.fit.verdict == "does-not-fit" and "has 16 GB a TPU core" in p.fit.reason
    sharded = workload.place(dataclasses.replace(w, sharding="zero3"), v3)
    assert sharded.need.states_gb == pytest.approx(2.0) and sharded.fit.verdict != "does-not-fit"


def test_memory_efficient_attention_drops_the_quadratic_term():
    # 350M params -> L = 19, h = 1216, a = 19; s = 1024, b = 16:
    # eager 34 + 5 x 19 x 1024 / 1216 = 114 bytes per s*b*h, memory-efficient 34
    w = wl(params=350e6, batch_size=16, sequence_length=1024)
    assert workload.transformer_shape(350e6) == (19, 1216, 19)
    base = 19 * 1024 * 16 * 1216 / 1e9 * workload.ACTIVATION_FACTOR["mixed"]
    assert workload.memory_need(w, "kepler").activations_gb == pytest.approx(base * (34 + 5 * 19 * 1024 / 1216))
    assert workload.memory_need(w, "ampere").activations_gb == pytest.approx(base * 34)
    # PyTorch's memory-efficient SDPA kernel runs from sm_50 on (sdp_utils.cpp,
    # check_mem_efficient_hardware_support): the free tiers' T4, V100 and P100 keep no scores either
    for arch in ("pascal", "volta", "turing"):
        assert workload.memory_need(w, arch).activations_gb == pytest.approx(base * 34), arch
    assert workload.memory_need(dataclasses.replace(w, attention="eager"), "ampere").activations_gb == \
        pytest.approx(base * (34 + 5 * 19 * 1024 / 1216))
    assert workload.memory_need(dataclasses.replace(w, attention="memory-efficient"), "kepler").activations_gb == \
        pytest.approx(base * 34)


def test_mixed_precision_keeps_more_than_half_of_fp32_activations():
    # Hugging Face docs (perf_train_gpu_one, v4.27.2): BERT-large, V100, batch 4, seq 512:
    # 14,949 MB fp32 vs 13,939 MB AMP; less 1.3 GB context and 16 vs 18 bytes of states a
    # parameter (335M), activations are 8.29 vs 6.61 GB: AMP keeps 0.80 of fp32's
    fp32_act = 14.949 - 1.3 - 335e6 * 16 / 1e9
    amp_act = 13.939 - 1.3 - 335e6 * 18 / 1e9
    factor = workload.ACTIVATION_FACTOR
    assert factor["mixed"] / factor["fp32"] == pytest.approx(amp_act / fp32_act, abs=0.01)
    w = wl(params=110e6, batch_size=32, sequence_length=128)
    assert workload.memory_need(w).activations_gb == pytest.approx(13 * 128 * 32 * 832 * 44 * 1.6 / 1e9)


def test_activation_checkpointing_true_and_false():
    need = workload.memory_need(wl(activation_checkpointing=True))
    f = workload.fit(need, 80)  # would fit as it is; checkpointing is asked for
    assert f.verdict == "fits-with-checkpointing" and f.slowdown == pytest.approx(workload.CHECKPOINTING_SLOWDOWN)
    off = workload.memory_need(wl(params=7e9, optimizer="sgd", batch_size=8, sequence_length=2048,
                                  activation_checkpointing=False))
    f = workload.fit(off, 80)  # fits only with checkpointing (test above), which is forbidden
    assert f.verdict == "does-not-fit" and "activation_checkpointing is false" in f.reason


def test_fit_command_lora_and_sharding_flags():
    runner = CliRunner()
    r = runner.invoke(main, ["fit", "--params", "65B", "--method", "qlora", "--family", "transformer",
                             "--batch-size", "1", "--sequence-length", "512", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = {row["device"]: row for row in json.loads(r.output)}
    assert rows["rtx-a6000"]["verdict"] != "does-not-fit" and rows["rtx-3090"]["verdict"] == "does-not-fit"
    assert "trainable parameters assumed" in rows["rtx-a6000"]["assumptions"]
    r = runner.invoke(main, ["fit", "--params", "7B", "--family", "transformer", "--batch-size", "4",
                             "--sequence-length", "512", "--sharding", "zero3", "--gpus", "8", "--format", "json"])
    rows = {row["device"]: row for row in json.loads(r.output)}
    assert rows["a100-80gb"]["verdict"] == "fits" and rows["a100-80gb"]["vram_gb"] == 640
    assert rows["a100-80gb"]["replica_vram_gb"] == 80


def test_pytorch_on_tpu_is_excluded_with_the_reason_and_jax_is_not(load, catalog):
    base = """
name: tpu
start: 2027-01-04
framework: {fw}
workload: {{family: transformer, params: 110M, batch_size: 32, sequence_length: 512, reference_gpu: rtx-3090}}
phases: {{train: {{gpu_hours: 50, deadline: 2027-03-01}}}}
consider: {{rent: ["gcp:tpu-*", "gcp:a2-*"]}}
"""
    res = planner.plan(load(base.format(fw="pytorch")), catalog, trials=20, alternatives=False)
    tpu_reasons = [e["reason"] for e in planner.to_dict(res)["excluded"] if "tpu" in e["option"]]
    assert len(tpu_reasons) >= 3 and all("PyTorch/XLA" in r for r in tpu_reasons)
    res = planner.plan(load(base.format(fw="jax")), catalog, trials=20, alternatives=False)
    assert not any("PyTorch/XLA" in e["reason"] for e in planner.to_dict(res)["excluded"])


def test_a_reference_gpu_too_small_for_the_workload_is_called_out(load, catalog):
    from .conftest import MINIMAL

    s = load(MINIMAL.replace("params: 100M", "params: 7B"))  # 112 GB of states, measured on a 24 GB card?
    warnings = planner.plan(s, catalog, trials=20, alternatives=False).warnings
    assert any("reference GPU rtx-3090 cannot hold this workload" in w for w in warnings)
    s = load(MINIMAL.replace("params: 100M", "params: 7B\n  method: qlora\n  batch_size: 1"))
    warnings = planner.plan(s, catalog, trials=20, alternatives=False).warnings
    assert not any("reference GPU" in w for w in warnings)
    # hours a job's tokens give were not measured on the reference: it is their unit of speed
    # (the default a100-80gb for a 7B full fine-tune under ZeRO-3 was said to be 'wrong')
    s = load(MINIMAL.replace("params: 100M", "params: 7B\n  sequence_length: 512").replace(
        "gpu_hours: 100", "tokens: 20M"))
    plan = planner.plan(s, catalog, trials=20, alternatives=False)
    assert plan.phases[0].gpu_hours > 0 and not any("reference GPU" in w for w in plan.warnings)
    assert any("trainable parameters assumed" in w for w in warnings)


def test_one_measured_card_does_not_drag_its_whole_architecture(catalog):
    """An unmeasured card takes its architecture's typical miss only where two or more cards of it
    are measured: Lambda's one Blackwell card, a B200 run limited by its input pipeline, made
    every GeForce Blackwell card slower than the Ada card it replaces. Here Volta with one
    measured card (the V100 32GB, the Titan V's rows left out) and the unmeasured V100 16GB."""
    from planner.model.workload import relative_speed

    t = catalog.throughput[catalog.throughput["device"] != "titan-v"]
    slow = t.assign(throughput=t["throughput"].where(t["device"] != "v100-32gb", t["throughput"] * 0.5))
    for family in ("transformer", "cnn"):
        before = relative_speed(catalog.devices, t, "rtx-3090", family, "mixed")
        after = relative_speed(catalog.devices, slow, "rtx-3090", family, "mixed")
        assert after.at["v100-32gb", "relative_speed"] == pytest.approx(
            0.5 * before.at["v100-32gb", "relative_speed"], rel=1e-6)
        # the spec fit moves a little with one point among a dozen; the shift would move it by half
        assert after.at["v100-16gb", "relative_speed"] == pytest.approx(
            before.at["v100-16gb", "relative_speed"], rel=0.1)


@pytest.mark.parametrize("declared_on", ["v100-16gb", "v100-32gb"])
def test_an_unmeasured_variant_of_a_measured_card_takes_that_cards_miss(catalog, declared_on):
    """issue 37: the Tesla P100 PCIe is the P100 SXM2's chip at lower clocks; with the SXM2 measured
    on CNNs, an estimate on specs alone put the PCIe card 1.7x faster against a V100. A card
    whose variant is measured takes the variant's measured score moved by the spec estimate's
    difference, whichever row names the other. Here the V100 16GB (unmeasured) and the V100
    32GB (measured), made to run at half their rows: the 16GB card follows it to half."""
    from planner.model.workload import calibrate, measured_scores, relative_speed

    other = {"v100-16gb": "v100-32gb", "v100-32gb": "v100-16gb"}[declared_on]
    devices = catalog.devices.assign(variant_of=[other if i == declared_on else None for i in catalog.devices["id"]])
    t = catalog.throughput[catalog.throughput["device"] != "titan-v"]
    slow = t.assign(throughput=t["throughput"].where(t["device"] != "v100-32gb", t["throughput"] * 0.5))
    for family in ("transformer", "cnn"):
        before = relative_speed(devices, t, "rtx-3090", family, "mixed").at["v100-16gb", "relative_speed"]
        after = relative_speed(devices, slow, "rtx-3090", family, "mixed").at["v100-16gb", "relative_speed"]
        assert after == pytest.approx(0.5 * before, rel=0.02)  # the spec fit moves a little with the point
        # by hand: its spec estimate plus the 32GB card's miss, over the 3090's measured score
        est, measured = calibrate(devices, slow, family, "mixed").log_score(devices), measured_scores(slow, family,
                                                                                                        "mixed")
        assert "v100-16gb" not in measured.index
        assert after == pytest.approx(math.exp(est["v100-16gb"] + measured["v100-32gb"] - est["v100-32gb"]
                                               - measured["rtx-3090"]), rel=1e-9)


def test_a_variant_must_be_another_card_of_the_same_chip(catalog):
    """A variant hands its miss over: only between cards of one architecture and compute
    capability (a T4 is no variant of a V100), and never a card of itself."""
    from pricing.loader import check_variants

    def problems(device: str, variant: str) -> list:
        devices = catalog.devices.assign(variant_of=[variant if i == device else None for i in catalog.devices["id"]],
                                          _line=range(2, len(catalog.devices) + 2))
        return check_variants({"devices": devices}, {"devices": "devices.csv"})

    assert problems("v100-16gb", "v100-32gb") == []
    bad = problems("rtx-3090", "v100-32gb")
    assert len(bad) == 1 and bad[0].path == "devices.rtx-3090.variant_of" and "volta" in bad[0].message
    assert problems("v100-16gb", "v100-16gb")


def test_a_speed_you_measured_replaces_the_estimate(load):
    """Many users have measured their own card: 'rtx-5090: 1.35 x rtx-4090' is 1.35 times whatever
    the 4090 runs at for this workload, '2.1' times the reference GPU; both are marked yours."""
    text = """\
name: my measurements
start: 2027-01-04
workload: {family: transformer, params: 86M, reference_gpu: rtx-3090, measured_speed: %s}
phases: {final: {gpu_hours: 180, deadline: 2027-08-15}}
consider: {buy: [], rent: ["runpod:rtx-5090", "runpod:rtx-4090"], free: []}
"""
    base = planner.plan(load(text % "{}"), trials=0).quotes.set_index("option")
    mine = planner.plan(load(text % "{rtx-5090: 1.35 x rtx-4090, rtx-4090: 1.6}"), trials=0).quotes.set_index("option")
    assert mine.at["runpod:rtx-4090", "relative_speed"] == pytest.approx(1.6)
    assert mine.at["runpod:rtx-5090", "relative_speed"] == pytest.approx(1.35 * 1.6)
    assert set(mine["speed_source"]) == {"yours"} and base.at["runpod:rtx-5090", "speed_source"] == "estimated"
    # the work's device hours follow: 180 reference h at 2.16x
    assert mine.at["runpod:rtx-5090", "device_hours"] == pytest.approx(180 / (1.35 * 1.6))
    with pytest.raises(InputError, match="did you mean 'rtx-4090'"):
        load(text % "{rtx-5090: 1.35 x rtx-409}")
    with pytest.raises(InputError, match="expected a speed"):
        load(text % "{rtx-5090: fast}")


def test_an_unmeasured_card_shares_the_miss_of_its_compute_capability(catalog):
    """Within one architecture, devices of another compute capability run other kernels: Ampere's
    A100s (8.0) are not the GeForce and RTX A cards (8.6). Make the measured A100s miss their
    spec estimate by 2x: the unmeasured RTX 3060 (8.6) keeps the 8.6 cards' typical miss; grouped
    by architecture it would move with the A100s."""
    from planner.model.workload import calibrate, measured_scores, relative_speed

    cc = {"a100-40gb": "8.0", "a100-80gb": "8.0", "a100-pcie-80gb": "8.0"}
    devices = catalog.devices.assign(
        compute_capability=[cc.get(i, "8.6") if a == "ampere" else "" for i, a in
                            zip(catalog.devices["id"], catalog.devices["architecture"])])
    t = catalog.throughput
    slow = t.assign(throughput=t["throughput"].where(~t["device"].str.startswith("a100"), t["throughput"] * 0.5))
    for family in ("transformer", "cnn"):
        before = relative_speed(devices, t, "rtx-3090", family, "mixed").at["rtx-3060-12gb", "relative_speed"]
        after = relative_speed(devices, slow, "rtx-3090", family, "mixed").at["rtx-3060-12gb", "relative_speed"]
        assert after == pytest.approx(before, rel=0.1)  # the fit moves a little; a shared miss would halve it
        # by hand: its spec estimate plus the median miss of the measured 8.6 cards, over the 3090's score
        cal = calibrate(devices, slow, family, "mixed")
        est, measured = cal.log_score(devices), measured_scores(slow, family, "mixed")
        ga10x = [d for d in measured.index if devices.set_index("id").at[d, "compute_capability"] == "8.6"]
        assert len(ga10x) >= 2
        shift = float(np.median(measured[ga10x] - est[ga10x]))
        assert after == pytest.approx(math.exp(est["rtx-3060-12gb"] + shift - measured["rtx-3090"]), rel=1e-9)


def test_fp8_trains_faster_only_on_cards_with_fp8_tensor_cores(catalog):
    """issue 37: precision fp8. An Ada, Hopper or Blackwell card takes FP8_SPEEDUP (1.25x) over
    its mixed-precision speed, an Ampere card none: against an A100 reference an RTX 4090 gains
    1.25x, an RTX 3090 nothing; between two FP8 cards the ratio is unchanged; memory as mixed."""
    d, t = catalog.devices, catalog.throughput
    mixed = workload.relative_speed(d, t, "a100-40gb", "transformer", "mixed")["relative_speed"]
    fp8 = workload.relative_speed(d, t, "a100-40gb", "transformer", "fp8")["relative_speed"]
    assert fp8["rtx-4090"] == pytest.approx(1.25 * mixed["rtx-4090"]) and fp8["rtx-3090"] == mixed["rtx-3090"]
    on_4090 = workload.relative_speed(d, t, "rtx-4090", "transformer", "fp8")["relative_speed"]
    assert on_4090["h100-sxm"] == pytest.approx(mixed["h100-sxm"] / mixed["rtx-4090"])  # both gain alike
    assert on_4090["rtx-3090"] == pytest.approx(mixed["rtx-3090"] / mixed["rtx-4090"] / 1.25)
    w = workload_of({"family": "transformer", "params": 350e6, "precision": "mixed", "reference_gpu": "a100-40gb"})
    assert workload.memory_need(dataclasses.replace(w, precision="fp8"), "hopper") == workload.memory_need(w, "hopper")


def test_a_speed_spread_by_where_it_comes_from():
    """On your job a measured ratio is off by how far ratios move from job to job (leave one job
    out over the published pairs: a median 8.9 % on mixed-precision CNNs, 12.3 % on transformers);
    an estimated one by that and the speed model's own error (10.0 %) in quadrature; a speed you
    measured on your job by 5 %; the reference by nothing. Each median over 0.6745 (a normal's
    median absolute deviation); FP8 takes the mixed-precision figures."""
    mad = 0.6745
    assert workload.speed_sigma("cnn", "mixed", "measured") == pytest.approx(0.067 / mad)
    assert workload.speed_sigma("transformer", "mixed", "estimated") == pytest.approx(math.hypot(0.100, 0.123) / mad)
    assert workload.speed_sigma("transformer", "fp8", "estimated") == pytest.approx(math.hypot(0.100, 0.123) / mad)
    assert workload.speed_sigma("cnn", "fp32", "yours") == pytest.approx(0.05)
    assert workload.speed_sigma("rnn", "mixed", "reference") == 0.0


def test_an_input_bound_vision_run_is_left_out_of_the_speeds():
    """A card that gains far less from mixed precision than the other TF32 cards of its vision job
    hit a ceiling outside the GPU (Lambda's 2025 B200 ResNet-50: 3,076 mixed against 2,967 fp32
    images/s where the H100, GH200 and H200 gained 1.36-1.42x): that run is left out of the fit.
    Cards without TF32 gain 2-3x by nature and are not the TF32 cards' yardstick; a text job, or
    one that gains little on every card, flags nothing."""
    tf32 = ["h100-sxm", "gh200-96gb", "h200", "b200"]
    older = ["v100-16gb", "v100-32gb", "titan-v", "quadro-rtx-8000", "rtx-2080-ti"]
    devices = pd.DataFrame({"id": tf32 + older,
                            "architecture": ["hopper", "hopper", "hopper", "blackwell"] + ["volta"] * 3 + ["turing"] * 2})
    rows = []
    for job, family, gains in (("resnet", "cnn", (1.42, 1.38, 1.36, 1.04) + (3.0,) * 5),
                               ("bert", "transformer", (1.42, 1.38, 1.36, 1.04) + (3.0,) * 5),
                               ("flat", "cnn", (1.10, 1.05, 1.02, 0.80) + (1.0,) * 5)):
        for device, gain in zip(devices["id"], gains):
            for precision, value in (("fp32", 1000.0), ("mixed", 1000.0 * gain)):
                rows.append(dict(device=device, model=job, family=family, precision=precision,
                                 framework="pytorch", batch_size=64, throughput=value))
    t = pd.DataFrame(rows)
    flagged = t[workload.input_bound(t, devices)]
    assert list(zip(flagged["device"], flagged["model"], flagged["precision"])) == [("b200", "resnet", "mixed")]
    # the fit leaves it out: the B200 has no other mixed-precision vision run here
    assert "b200" not in workload.measured_scores(t[t["model"] == "resnet"], "cnn", "mixed", devices).index
    assert "b200" in workload.measured_scores(t[t["model"] == "resnet"], "cnn", "mixed").index
