"""Will the model fit on a device, and how fast is the device for this work?

Pure functions over the scenario's :class:`~planner.scenario.Workload` and
the catalog's device table.

Memory need (training, data parallel, per GPU) = weights + gradients +
optimizer states + activations + framework overhead.

Speed is relative to the scenario's ``reference_gpu``: one reference
GPU-hour of work takes ``1 / relative_speed`` hours on the device.
"""

from __future__ import annotations

import dataclasses
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

#: Slowdown of gradient accumulation per halving of the micro-batch (same
#: math, lower GPU utilisation at small batches). Estimate: 5 % per halving;
#: the measured tables hold one batch size per device, too few to fit it.
ACCUMULATION_SLOWDOWN_PER_HALVING = 0.05

#: Activation checkpointing recomputes the forward pass during backward:
#: about one extra forward, a third more compute (Chen et al. 2016, "Training
#: Deep Nets with Sublinear Memory Cost": ~30 %; Korthikanti et al. 2022:
#: full recomputation adds ~33 %).
CHECKPOINTING_SLOWDOWN = 4.0 / 3.0

#: Share of activations kept with checkpointing for non-transformers:
#: 2 / sqrt(n) for n = 50 layers (Chen et al. 2016: O(sqrt n) memory). Estimate.
CHECKPOINTED_FRACTION_OTHER = 2.0 / math.sqrt(50)

#: Activation memory per 224 px image of a ResNet-50-class CNN [GB]: device
#: memory / largest batch that trained, median over the ten GPUs of Lambda's
#: PyTorch ResNet-50 benchmark (catalog throughput table; an upper bound, as
#: it includes weights and workspace). tests/test_workload.py recomputes it.
CNN_GB_PER_IMAGE_224 = {"fp32": 0.107, "mixed": 0.053}

DEFAULT_SEQUENCE_LENGTH = 512

#: Architectures with tensor cores, where mixed precision runs on them.
TENSOR_ARCHITECTURES = {"volta", "turing", "ampere", "ada", "hopper", "blackwell"}

#: Where a tensor-core GPU's FP16 tensor rate is unpublished (the RTX 50
#: consumer cards list only FP4 "AI TOPS"), assume the FP32-accumulate tensor
#: rate is this multiple of FP32, as for the RTX 4090 (165 / 82.6 = 2.0).
#: Estimate.
TENSOR_TO_FP32_FALLBACK = 2.0

#: Benchmark runs at smaller batches were limited by memory, not speed.
MIN_BENCHMARK_BATCH = 8

#: Architectures whose tensor cores run FP32 training as TF32.
TF32_ARCHITECTURES = {"ampere", "ada", "hopper", "blackwell"}

#: Prior weight of compute (vs memory bandwidth) in the spec-based speed
#: estimate, used only where too few measured devices exist to fit it.
#: CNNs and transformers are mostly bound by matrix throughput, RNNs by
#: memory bandwidth (DESIGN.md).
COMPUTE_WEIGHT = {"cnn": 0.5, "transformer": 0.5, "rnn": 0.2}

#: TPU speed relative to the GPU spec formula at the same bf16 TFLOPS and
#: bandwidth. Estimate: TPUs run large CNNs and transformers at high
#: utilisation but RNNs poorly (Wang, Wei and Brooks, "Benchmarking TPU,
#: GPU, and CPU Platforms for Deep Learning", arXiv:1907.10701, 2019 —
#: qualitative); no measured table covers TPUs here.
TPU_FAMILY_FACTOR = {"cnn": 1.0, "transformer": 1.0, "rnn": 0.5}


@dataclass(frozen=True)
class MemoryNeed:
    """VRAM need of one training replica [GB], by part, at ``batch_size``."""

    states_gb: float  # weights + gradients + optimizer states
    activations_gb: float  # at batch_size
    overhead_gb: float
    activations_source: str  # "measured", "estimated" or "unknown"
    batch_size: int = 1
    checkpointed_fraction: float = CHECKPOINTED_FRACTION_OTHER  # activations kept with checkpointing

    @property
    def total_gb(self) -> float:
        return self.states_gb + self.activations_gb + self.overhead_gb


@dataclass(frozen=True)
class Fit:
    """How a workload fits on a device, and what that costs in speed."""

    verdict: str  # fits | fits-with-accumulation | fits-with-checkpointing | does-not-fit
    reason: str
    slowdown: float  # device hours multiply by this
    micro_batch: int | None


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


def cnn_activations_gb(batch_size: int, image_size: int, precision: str) -> float:
    """Activation memory of a ResNet-50-class CNN [GB]: per-image memory at 224 px
    (CNN_GB_PER_IMAGE_224) scaled with the pixel count."""
    return CNN_GB_PER_IMAGE_224[precision] * batch_size * (image_size / 224) ** 2


def checkpointed_fraction(w: Workload) -> float:
    """Share of activation memory kept with full activation checkpointing.

    Transformers keep each layer's 16-bit input, 2*s*b*h bytes of the
    s*b*h*(34 + 5*a*s/h) per layer (Korthikanti et al. 2022, sec. 4.1);
    other families keep about 2/sqrt(n) of n layers' activations (Chen et al.
    2016, "Training Deep Nets with Sublinear Memory Cost"), n = 50 assumed.
    """
    if w.family == "transformer":
        _, h, a = transformer_shape(w.params)
        s = w.sequence_length or DEFAULT_SEQUENCE_LENGTH
        return 2.0 / (34 + 5 * a * s / h)
    return CHECKPOINTED_FRACTION_OTHER


def memory_need(w: Workload) -> MemoryNeed:
    """VRAM a training replica needs at the scenario's batch size.

    Activations: the scenario's measured figure; else the transformer
    formula (with sequence_length, 512 when not given) or the CNN per-image
    figure (with image_size, 224 when not given); RNNs: unknown (0, with a
    warning in the report).
    """
    states = w.params * BYTES_PER_PARAM[(w.precision, w.optimizer)] / 1e9
    if w.activation_memory_gb is not None:
        act, source = w.activation_memory_gb, "measured"
    elif w.family == "transformer":
        act = transformer_activations_gb(w.params, w.batch_size, w.sequence_length or DEFAULT_SEQUENCE_LENGTH,
                                         w.precision)
        source = "estimated"
    elif w.family == "cnn":
        act, source = cnn_activations_gb(w.batch_size, w.image_size or 224, w.precision), "estimated"
    else:
        act, source = 0.0, "unknown"
    return MemoryNeed(states, act, FRAMEWORK_OVERHEAD_GB, source, w.batch_size, checkpointed_fraction(w))


def accumulation_slowdown(micro_batch: int, batch_size: int) -> float:
    """Slowdown of gradient accumulation at ``micro_batch`` instead of ``batch_size``."""
    halvings = max(0.0, math.log2(batch_size / micro_batch))
    return 1.0 + ACCUMULATION_SLOWDOWN_PER_HALVING * halvings


def fit(need: MemoryNeed, vram_gb: float) -> Fit:
    """Does the workload fit, and at what speed cost?

    fits: everything at the full batch. fits-with-accumulation: the largest
    micro-batch that fits, gradients accumulated to the full batch (same
    math, lower utilisation). fits-with-checkpointing: activation
    checkpointing (CHECKPOINTING_SLOWDOWN) plus accumulation where needed.
    does-not-fit: weights, gradients, optimizer states and one checkpointed
    sample exceed the memory.
    """
    if need.total_gb <= vram_gb:
        return Fit("fits", f"needs {need.total_gb:.1f} GB, has {vram_gb:g} GB", 1.0, need.batch_size)
    free = vram_gb - need.states_gb - need.overhead_gb
    if free <= 0:
        return Fit("does-not-fit", f"needs {need.states_gb + need.overhead_gb:.1f} GB for weights, gradients and "
                   f"optimizer states alone, has {vram_gb:g} GB", math.inf, None)
    per_sample = need.activations_gb / need.batch_size
    micro = min(need.batch_size, int(free / per_sample + 1e-9))
    if micro >= 1:
        return Fit("fits-with-accumulation",
                   f"needs {need.total_gb:.1f} GB at batch {need.batch_size}, has {vram_gb:g} GB: "
                   f"micro-batch {micro} with gradient accumulation",
                   accumulation_slowdown(micro, need.batch_size), micro)
    micro = min(need.batch_size, int(free / (per_sample * need.checkpointed_fraction) + 1e-9))
    if micro >= 1:
        return Fit("fits-with-checkpointing",
                   f"activations of even one sample ({per_sample:.1f} GB) exceed the {free:.1f} GB left: "
                   f"activation checkpointing, micro-batch {micro}",
                   CHECKPOINTING_SLOWDOWN * accumulation_slowdown(micro, need.batch_size), micro)
    return Fit("does-not-fit", f"one sample needs {per_sample * need.checkpointed_fraction:.1f} GB of activations "
               f"even with checkpointing; {free:.1f} GB are left after weights and optimizer states", math.inf, None)


def multi_gpu_efficiency(count: int | np.ndarray) -> np.ndarray:
    """Per-GPU data-parallel efficiency for ``count`` GPUs (see MULTI_GPU_EFFICIENCY)."""
    xs = np.log2(list(MULTI_GPU_EFFICIENCY))
    ys = np.array(list(MULTI_GPU_EFFICIENCY.values()))
    return np.interp(np.log2(np.maximum(count, 1)), xs, ys)


def effective_tflops(devices: pd.DataFrame, precision: str) -> pd.Series:
    """Matrix throughput a training run can use, per device [TFLOPS].

    Mixed: the FP16 tensor rate on tensor-core GPUs (TENSOR_TO_FP32_FALLBACK
    x FP32 where unpublished); without tensor cores the faster of FP32 and the
    FP16 ALU rate (P100: 2x FP32). fp32: on Ampere and newer, TF32 tensor
    cores at half the FP16 tensor rate (NVIDIA A100 whitepaper, 2020), as in
    the NGC containers the measured tables come from; else FP32. TPUs: bf16.
    """
    fp32 = devices["fp32_tflops"]
    tensor = devices["fp16_tensor_tflops"]
    arch = devices["architecture"]
    tensor_rate = tensor.fillna(fp32 * TENSOR_TO_FP32_FALLBACK)
    if precision == "mixed":
        out = tensor_rate.where(arch.isin(TENSOR_ARCHITECTURES), np.fmax(fp32, tensor.fillna(0.0)))
    else:
        out = fp32.where(~arch.isin(TF32_ARCHITECTURES), np.fmax(fp32, tensor_rate / 2.0))
    return out.where(devices["kind"] != "tpu", tensor)


def measured_scores(throughput: pd.DataFrame, family: str, precision: str) -> pd.Series:
    """Log speed score per measured device for a family and precision.

    Fits log T[d, m] = s_d + c_m by least squares over every measured
    (device, benchmark model) pair: c_m absorbs each model's (and framework's)
    own scale, s_d is the device's speed. Runs at batch sizes below
    MIN_BENCHMARK_BATCH (an 8 GB card squeezing BERT-large), and PyTorch
    benchmark runs that record no batch size (no batch fitted), are left out.
    Anchored so that the scores average zero.
    """
    t = throughput[(throughput["family"] == family) & (throughput["precision"] == precision)]
    starved = (t["batch_size"] < MIN_BENCHMARK_BATCH) | (t["batch_size"].isna() & (t["framework"] == "pytorch"))
    t = t[~starved]  # memory-starved runs say little about speed
    if t.empty:
        return pd.Series(dtype=float)
    model = t["model"] + " | " + t["framework"]
    devices = sorted(t["device"].unique())
    models = sorted(model.unique())
    d_idx = t["device"].map({d: i for i, d in enumerate(devices)}).to_numpy()
    m_idx = model.map({m: i for i, m in enumerate(models)}).to_numpy()
    a = np.zeros((len(t) + 1, len(devices) + len(models)))
    a[np.arange(len(t)), d_idx] = 1.0
    a[np.arange(len(t)), len(devices) + m_idx] = 1.0
    a[-1, : len(devices)] = 1.0  # anchor: scores sum to zero
    y = np.append(np.log(t["throughput"].to_numpy(dtype=float)), 0.0)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return pd.Series(coef[: len(devices)], index=devices)


@dataclass(frozen=True)
class Calibration:
    """Spec-based speed: log score = intercept + w log(TFLOPS) + (1 - w) log(bandwidth)."""

    family: str
    precision: str
    intercept: float
    compute_weight: float
    ratio: pd.Series  # estimate / measured, per measured device

    def log_score(self, devices: pd.DataFrame) -> pd.Series:
        tflops = effective_tflops(devices, self.precision).to_numpy(dtype=float)
        bw = devices["memory_bandwidth_gb_per_s"].to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = self.intercept + self.compute_weight * np.log(tflops) + (1 - self.compute_weight) * np.log(bw)
        return pd.Series(x, index=devices["id"].to_numpy())


def calibrate(devices: pd.DataFrame, throughput: pd.DataFrame, family: str, precision: str) -> Calibration:
    """Fit the spec-based estimate to the measured scores (GPUs only; w kept in [0, 1])."""
    scores = measured_scores(throughput, family, precision)
    d = devices.set_index("id").loc[scores.index]
    d = d.assign(id=d.index)
    log_t = np.log(effective_tflops(d.reset_index(drop=True), precision).to_numpy(dtype=float))
    log_b = np.log(d["memory_bandwidth_gb_per_s"].to_numpy(dtype=float))
    y = scores.to_numpy() - log_b
    x = log_t - log_b
    if len(scores) >= 3 and np.ptp(x) > 0:
        w, a = np.polyfit(x, y, 1)
    else:
        w, a = COMPUTE_WEIGHT[family], float(np.mean(y - COMPUTE_WEIGHT[family] * x)) if len(y) else 0.0
    if not 0.0 <= w <= 1.0:
        w = float(np.clip(w, 0.0, 1.0))
        a = float(np.mean(y - w * x))
    cal = Calibration(family, precision, float(a), float(w), pd.Series(dtype=float))
    est = cal.log_score(d.reset_index(drop=True))
    ratio = pd.Series(np.exp(est.to_numpy() - scores.to_numpy()), index=scores.index)
    return dataclasses.replace(cal, ratio=ratio)


def relative_speed(devices: pd.DataFrame, throughput: pd.DataFrame, reference: str, family: str,
                   precision: str) -> pd.DataFrame:
    """Speed of each device relative to ``reference`` for this family and precision.

    Each device gets a score on the measured scale: its fitted score where
    the throughput tables cover it, else the calibrated spec estimate
    (:func:`calibrate`; TPUs scaled by TPU_FAMILY_FACTOR), shifted by the
    median miss of the measured devices of its architecture. Relative speed is
    the ratio of the device's and the reference's scores: ``measured`` when
    both are measured, ``estimated`` otherwise. Returns ``relative_speed``
    and ``speed_source`` indexed by device id.
    """
    cal = calibrate(devices, throughput, family, precision)
    measured = measured_scores(throughput, family, precision)
    tpu = np.where(devices["kind"].to_numpy() == "tpu", np.log(TPU_FAMILY_FACTOR[family]), 0.0)
    score = cal.log_score(devices) + tpu
    # an unmeasured device shares its architecture's typical miss: shift it by the
    # median log residual of the measured devices of the same architecture
    arch = devices.set_index("id")["architecture"]
    residual = (measured - score[measured.index]).groupby(arch[measured.index]).median()
    score = score + arch.map(residual).fillna(0.0).reindex(score.index).to_numpy()
    score[measured.index] = measured
    is_measured = score.index.isin(measured.index)
    source = np.where(is_measured & (reference in measured.index), "measured", "estimated")
    out = pd.DataFrame({"relative_speed": np.exp(score - score[reference]), "speed_source": source},
                       index=score.index)
    out.loc[reference, "speed_source"] = "reference"
    return out


def fit_table(w: Workload, devices: pd.DataFrame, throughput: pd.DataFrame) -> pd.DataFrame:
    """One row per device: memory, need, verdict, micro-batch and relative speed."""
    need = memory_need(w)
    speed = relative_speed(devices, throughput, w.reference_gpu, w.family, w.precision)
    rows = []
    for d in devices.itertuples():
        f = fit(need, d.vram_gb)
        rows.append(dict(device=d.id, kind=d.kind, vram_gb=d.vram_gb, need_gb=round(need.total_gb, 2),
                         verdict=f.verdict, micro_batch=f.micro_batch,
                         slowdown=round(f.slowdown, 3) if math.isfinite(f.slowdown) else None,
                         relative_speed=round(float(speed.at[d.id, "relative_speed"]), 3)
                         if np.isfinite(speed.at[d.id, "relative_speed"]) else None,
                         speed_source=speed.at[d.id, "speed_source"], reason=f.reason))
    return pd.DataFrame(rows)
