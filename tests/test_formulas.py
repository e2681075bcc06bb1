"""Each formula against numbers worked out by hand."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from planner.model import costs, sessions, workload
from planner.model.validate import workload_of


def test_resale_model():
    assert costs.resale_fraction(0, "new") == 1.0
    assert costs.resale_fraction(6, "new") == pytest.approx(1 - 0.19 * 0.5)
    assert costs.resale_fraction(12, "new") == pytest.approx(0.81)
    assert costs.resale_fraction(24, "new") == pytest.approx(0.81 * 0.81)
    assert costs.resale_fraction(24, "used") == pytest.approx(0.81**2)
    # the dated used prices it is fitted on (eBay sold-listing means, 2022-09 to 2023-11), e.g. an RTX 2080 Ti
    # (999 USD) sold for 335 USD at 5 years, a 2070 (499) for 226 at 4, a 3080 (699) for 414 at 3: within 12 %
    for months, kept in ((60, 335 / 999), (48, 226 / 499), (36, 414 / 699)):
        assert costs.resale_fraction(months, "new") == pytest.approx(kept, rel=0.12)


def test_offer_resale_overrides_the_model():
    assert costs.resale_usd(1000, 24, "new", resale_usd_given=300) == 300
    assert costs.resale_usd(1000, 24, "new", resale_fraction_given=0.4) == pytest.approx(400)
    # the default model's market value, less eBay's 12.9 % final value fee
    assert costs.resale_usd(1000, 24, "new", math.nan, math.nan) == pytest.approx(1000 * 0.81 * 0.81 * 0.871)


def test_a_multiple_of_the_resale_model_scales_it_up_to_what_a_new_card_brings():
    # resale: 0.5x on a new 1,000 USD card held 24 months: half of 1000 x 0.81 x 0.81 x 0.871
    assert costs.resale_usd(1000, 24, "new", None, None, 0.5) == pytest.approx(0.5 * 1000 * 0.81 * 0.81 * 0.871)
    # 1.2x on one held a week would bring 1.2 x 1000 x (1 - 0.19 x 7/365.25) x 0.871 = 1,041 USD, more than it
    # cost: capped at what one sold the day it is bought brings, 871 USD (arrays alike)
    assert costs.resale_usd(1000, 7 / 365.25 * 12, "new", None, None, 1.2) == pytest.approx(871.0)
    months = [7 / 365.25 * 12, 24.0]
    assert list(costs.resale_usd(1000, np.array(months), "new", None, None, 1.2)) == pytest.approx(
        [871.0, 1.2 * 1000 * 0.81 * 0.81 * 0.871])
    # a share or money the offer gives wins over the multiple
    assert costs.resale_usd(1000, 24, "new", None, 0.4, 0.5) == pytest.approx(400)


def test_electricity():
    # (350 W card + 100 W host) x 100 h x 0.20 USD/kWh = 45 kWh x 0.20 = 9 USD
    assert costs.electricity_usd(350, 100, 100, 0.20) == pytest.approx(9.0)


def test_storage():
    assert costs.storage_usd(150, 2, 0.07) == pytest.approx(21.0)


def test_setup_copies_data_only_without_persistent_storage():
    assert sessions.setup_hours_per_session(15, 360, False, 120) == pytest.approx(0.25 + 120 / 360)
    assert sessions.setup_hours_per_session(15, 360, True, 120) == pytest.approx(0.25)


def _wl(**kw):
    base = dict(family="cnn", params=25.6e6, precision="fp32", optimizer="momentum", batch_size=256,
                reference_gpu="rtx-3090")
    return workload_of({**base, **kw})


def test_memory_states_by_optimizer_and_precision():
    # ResNet-50, SGD with momentum, fp32: 4 + 4 + 4 bytes per parameter
    assert workload.memory_need(_wl()).states_gb == pytest.approx(25.6e6 * 12 / 1e9)
    # mixed-precision Adam: 2 + 2 + 4 (master) + 8 (states) = 16 bytes (ZeRO, sec. 3.1)
    assert workload.memory_need(_wl(precision="mixed", optimizer="adam")).states_gb == pytest.approx(25.6e6 * 16 / 1e9)
    assert workload.memory_need(_wl(optimizer="sgd")).states_gb == pytest.approx(25.6e6 * 8 / 1e9)


def test_transformer_activation_estimate_by_hand():
    # 110M params -> L = round((110e6 / 49152) ** (1/3)) = 13, h = 832, a = 13
    assert workload.transformer_shape(110e6) == (13, 832, 13)
    # per layer s*b*h*(34 + 5*a*s/h) = 128*32*832*(34 + 10) bytes; 13 layers
    expected = 13 * 128 * 32 * 832 * 44 / 1e9
    assert workload.transformer_activations_gb(110e6, 32, 128, 1.0) == pytest.approx(expected)
    assert workload.transformer_activations_gb(110e6, 32, 128, 2.0) == pytest.approx(2 * expected)
    # memory-efficient attention keeps no s x s term: 34 instead of 44 bytes
    assert workload.transformer_activations_gb(110e6, 32, 128, 1.0, True) == pytest.approx(expected * 34 / 44)


def test_fit_verdicts():
    need = workload.MemoryNeed(states_gb=2.0, activations_gb=9.0, overhead_gb=1.0, activations_source="measured",
                               batch_size=64, checkpointed_fraction=0.1)
    assert workload.fit(need, 24).verdict == "fits"
    # 3 GB left for 9 GB / 64 samples: 21 would fit; 16 x 4 steps make the batch exactly, 2 halvings
    f = workload.fit(need, 6)
    assert f.verdict == "fits-with-accumulation" and f.micro_batch == 16
    assert f.slowdown == pytest.approx(1 + 0.05 * 2)
    assert f.reason.endswith("micro-batch 16 x 4 steps of gradient accumulation")
    # a batch of 63 where 21 fit: three micro-batches of 21, not 63 of 1; 65: 17 + 16 + 16 + 16
    f = workload.fit(dataclasses.replace(need, batch_size=63, activations_gb=9.0 * 63 / 64), 6)
    assert f.micro_batch == 21 and f.slowdown == pytest.approx(1 + 0.05 * math.log2(3))
    f = workload.fit(dataclasses.replace(need, batch_size=65, activations_gb=9.0 * 65 / 64), 6)
    assert f.micro_batch == 17 and f.reason.endswith("micro-batch 17 x 4 steps (3 of them 16) of gradient accumulation")
    assert workload.accumulation_text(3, 64) == "micro-batch 3 x 22 steps (2 of them 2)"  # 20 x 3 + 2 x 2
    f = workload.fit(need, 2)
    assert f.verdict == "does-not-fit"
    assert f.reason == "needs 3.0 GB for weights, gradients and optimizer states alone, has 2 GB"


def test_checkpointing_when_one_sample_does_not_fit():
    # 1 sample = 4 GB of activations, 2 GB left; checkpointing keeps 10 %: 0.4 GB a sample -> 5 fit,
    # micro-batch 4 x 2 steps
    need = workload.MemoryNeed(states_gb=5.0, activations_gb=32.0, overhead_gb=1.0, activations_source="measured",
                               batch_size=8, checkpointed_fraction=0.1)
    f = workload.fit(need, 8)
    assert f.verdict == "fits-with-checkpointing" and f.micro_batch == 4
    assert f.slowdown == pytest.approx(4 / 3 * (1 + 0.05 * 1))
    assert workload.fit(need, 6.1).verdict == "does-not-fit"


@pytest.mark.parametrize("batch, most, micro", [
    (32, 31, 16), (32, 32, 32), (64, 100, 64), (100, 30, 25), (48, 20, 16), (256, 212, 128), (37, 20, 19),
    (17, 8, 6), (50, 8, 8), (8, 0, 0)])
def test_micro_batches_add_up_to_the_batch(batch, most, micro):
    # the fewest micro-batches that fit, as even as they go: 37 where 20 fit is 19 + 18, not 37 of 1
    m = workload.micro_batch(batch, most)
    assert m == micro
    if m:
        steps = workload.accumulation_steps(m, batch)
        assert m <= most and m * (steps - 1) < batch <= m * steps  # the steps make the batch
        # brute force: no split into fewer micro-batches fits, and none of as many has a smaller largest one
        assert all(-(-batch // k) > most for k in range(1, steps))
        assert -(-batch // steps) == m


def test_multi_gpu_efficiency_interpolates_measured_points():
    # Lambda's medians by class: GeForce 0.913 / 0.869 / 0.81, data-centre and workstation
    # 0.983 / 0.960 / 0.962 for 2 / 4 / 8 GPUs
    assert workload.multi_gpu_efficiency(1, "geforce") == workload.multi_gpu_efficiency(1, "pro") == 1.0
    assert workload.multi_gpu_efficiency(4, "geforce") == pytest.approx(0.869)
    assert workload.multi_gpu_efficiency(8, "pro") == pytest.approx(0.962)
    # 3 GPUs: 0.585 of the way from 2 to 4 in log2 terms
    t = math.log2(3) - 1
    assert workload.multi_gpu_efficiency(3, "geforce") == pytest.approx(0.913 + t * (0.869 - 0.913))
    assert workload.multi_gpu_efficiency(3, "pro") == pytest.approx(0.983 + t * (0.960 - 0.983))


@pytest.mark.parametrize(("name", "gpus"), [("GeForce RTX 4090", "geforce"), ("TITAN RTX", "geforce"),
                                            ("RTX A6000", "pro"), ("RTX 6000 Ada Generation", "pro"),
                                            ("A100 SXM4 80GB", "pro"), ("Tesla T4", "pro")])
def test_a_gpu_is_geforce_by_its_name_for_its_machines_scaling(name, gpus):
    # a box of GeForce cards exchanges gradients over PCIe: the 4090 and the 6000 Ada share a die,
    # not a class
    assert workload.gpu_class(name) == gpus
