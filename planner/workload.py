"""Will the model fit on a device, and how fast is the device for this work?

Pure functions over the scenario's :class:`~planner.scenario.Workload` and
the catalog's device table.

Memory need (training, data parallel, per GPU) = weights + gradients +
optimizer states + activations + framework overhead.

Speed is relative to the scenario's ``reference_gpu``: one reference
GPU-hour of work takes ``1 / relative_speed`` hours on the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .scenario import Workload

#: Bytes per parameter for weights + gradients + optimizer states.
#: fp32: 4 (weights) + 4 (grads) + 0/4/8 (SGD / momentum / Adam states), i.e.
#: x2, x3, x4 the weights. Mixed precision keeps fp16 weights and grads (2+2)
#: plus an fp32 master copy (4) and fp32 states: 8 / 12 / 16 bytes.
#: Source: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
#: Trillion Parameter Models", SC'20, sec. 3.1 (mixed-precision Adam = 16 bytes/param).
BYTES_PER_PARAM = {
    ("fp32", "sgd"): 8.0, ("fp32", "momentum"): 12.0, ("fp32", "adam"): 16.0, ("fp32", "adamw"): 16.0,
    ("mixed", "sgd"): 8.0, ("mixed", "momentum"): 12.0, ("mixed", "adam"): 16.0, ("mixed", "adamw"): 16.0,
}

#: CUDA context, cuDNN workspaces and allocator fragmentation [GB].
#: Estimate: a PyTorch CUDA context alone takes several hundred MB.
FRAMEWORK_OVERHEAD_GB = 1.0

#: Per-GPU throughput efficiency of data-parallel training on N GPUs in one
#: machine: the median of throughput(N GPUs) / (N x throughput(1 GPU)) over the
#: same model and precision in Lambda's PyTorch benchmark
#: (lambdal/deeplearning-benchmark@2ed2ee02, runs 2020-2021; 332/296/226
#: pairs for 2/4/8 GPUs). Between the measured counts, interpolated in log2(N).
MULTI_GPU_EFFICIENCY = {1: 1.0, 2: 0.976, 4: 0.944, 8: 0.932}

#: Slowdown of training with smaller micro-batches and gradient accumulation
#: (same math, lower GPU utilisation). Estimate: 10 %, until calibrated on
#: measured throughput at several batch sizes.
ACCUMULATION_SLOWDOWN = 1.10

#: Architectures with tensor cores, where mixed precision runs on them.
TENSOR_ARCHITECTURES = {"volta", "turing", "ampere", "ada", "hopper", "blackwell"}

#: Where a tensor-core GPU's FP16 tensor rate is unpublished (the RTX 50
#: consumer cards list only FP4 "AI TOPS"), assume the FP32-accumulate tensor
#: rate is this multiple of FP32, as for the RTX 4090 (165 / 82.6 = 2.0).
#: Estimate.
TENSOR_TO_FP32_FALLBACK = 2.0

#: Weight of compute (vs memory bandwidth) in the spec-based speed estimate,
#: per family. Estimate: CNNs and transformers are mostly bound by matrix
#: throughput, RNNs by memory bandwidth (DESIGN.md). To be calibrated on the
#: measured throughput tables.
COMPUTE_WEIGHT = {"cnn": 0.5, "transformer": 0.5, "rnn": 0.2}


@dataclass(frozen=True)
class MemoryNeed:
    """VRAM need of one training replica [GB], by part."""

    states_gb: float  # weights + gradients + optimizer states
    activations_gb: float
    overhead_gb: float
    activations_source: str  # "measured", "estimated" or "unknown"

    @property
    def total_gb(self) -> float:
        return self.states_gb + self.activations_gb + self.overhead_gb


def transformer_shape(params: float) -> tuple[int, int, int]:
    """(layers, hidden size, heads) of a transformer with ``params`` parameters.

    Uses params ~= 12 L h^2 (Kaplan et al. 2020, "Scaling Laws for Neural
    Language Models", Table 1) with BERT's aspect ratio h = 64 L and 64-wide
    heads (Devlin et al. 2019: BERT-base L=12, h=768, 12 heads, 110M).
    """
    layers = max(1, round((params / (12 * 64**2)) ** (1 / 3)))
    hidden = 64 * layers
    return layers, hidden, max(1, hidden // 64)


def transformer_activations_gb(params: float, batch_size: int, sequence_length: int, precision: str) -> float:
    """Activation memory of a transformer [GB] at a batch size.

    Per layer s*b*h*(34 + 5*a*s/h) bytes with 16-bit activations and no
    recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation
    in Large Transformer Models", eq. 2); doubled for fp32.
    """
    layers, hidden, heads = transformer_shape(params)
    s, b, h, a = sequence_length, batch_size, hidden, heads
    per_layer = s * b * h * (34 + 5 * a * s / h)
    return layers * per_layer * (2.0 if precision == "fp32" else 1.0) / 1e9


def memory_need(w: Workload) -> MemoryNeed:
    """VRAM a training replica needs at the scenario's batch size."""
    states = w.params * BYTES_PER_PARAM[(w.precision, w.optimizer)] / 1e9
    if w.activation_memory_gb is not None:
        act, source = w.activation_memory_gb, "measured"
    elif w.family == "transformer":
        act, source = transformer_activations_gb(w.params, w.batch_size, w.sequence_length or 512, w.precision), "estimated"
    else:
        act, source = 0.0, "unknown"
    return MemoryNeed(states, act, FRAMEWORK_OVERHEAD_GB, source)


def fit_verdict(need: MemoryNeed, vram_gb: float) -> tuple[str, str]:
    """('fits' | 'fits-with-accumulation' | 'does-not-fit', reason)."""
    if need.total_gb <= vram_gb:
        return "fits", f"needs {need.total_gb:.1f} GB, has {vram_gb:g} GB"
    floor = need.states_gb + need.overhead_gb
    if floor < vram_gb:
        return ("fits-with-accumulation",
                f"needs {need.total_gb:.1f} GB at full batch, has {vram_gb:g} GB: "
                "smaller micro-batches with gradient accumulation")
    return "does-not-fit", f"needs {floor:.1f} GB for weights, gradients and optimizer states alone, has {vram_gb:g} GB"


def multi_gpu_efficiency(count: int | np.ndarray) -> np.ndarray:
    """Per-GPU data-parallel efficiency for ``count`` GPUs (see MULTI_GPU_EFFICIENCY)."""
    xs = np.log2(list(MULTI_GPU_EFFICIENCY))
    ys = np.array(list(MULTI_GPU_EFFICIENCY.values()))
    return np.interp(np.log2(np.maximum(count, 1)), xs, ys)


def effective_tflops(devices: pd.DataFrame, precision: str) -> pd.Series:
    """Matrix throughput a training run can use, per device [TFLOPS].

    fp32: the FP32 rate. Mixed: the FP16 tensor rate on tensor-core GPUs
    (TENSOR_TO_FP32_FALLBACK x FP32 where unpublished); without tensor cores
    the faster of FP32 and the FP16 ALU rate (P100: 2x FP32). TPUs: bf16.
    """
    fp32 = devices["fp32_tflops"]
    tensor = devices["fp16_tensor_tflops"]
    if precision == "mixed":
        tensor_core = tensor.fillna(fp32 * TENSOR_TO_FP32_FALLBACK)
        no_tensor_core = np.fmax(fp32, tensor.fillna(0.0))
        out = tensor_core.where(devices["architecture"].isin(TENSOR_ARCHITECTURES), no_tensor_core)
    else:
        out = fp32
    return out.where(devices["kind"] != "tpu", tensor)


def relative_speed(devices: pd.DataFrame, reference: str, family: str, precision: str) -> pd.DataFrame:
    """Speed of each device relative to ``reference`` for this family and precision.

    Spec-based estimate: a weighted geometric mean of the matrix-throughput
    ratio and the memory-bandwidth ratio (COMPUTE_WEIGHT). Returns columns
    ``relative_speed`` and ``speed_source`` indexed by device id.
    """
    d = devices.set_index("id")
    tflops = effective_tflops(devices, precision).set_axis(d.index)
    bw = d["memory_bandwidth_gb_per_s"]
    w = COMPUTE_WEIGHT[family]
    speed = (tflops / tflops[reference]) ** w * (bw / bw[reference]) ** (1 - w)
    return pd.DataFrame({"relative_speed": speed, "speed_source": "estimated"})


def hours_on(gpu_hours: float, speed: float) -> float:
    """Device hours for ``gpu_hours`` reference GPU-hours at ``speed``."""
    return gpu_hours / speed if speed > 0 else math.inf
