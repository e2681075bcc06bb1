"""Will the model fit on a device, and how fast is the device for this work?

Pure functions over the scenario's :class:`~planner.model.scenario.Workload` and
the catalog's device table.

Memory need (training, data parallel, per GPU) = weights + gradients +
optimizer states + activations + framework overhead.

Speed is relative to the scenario's ``reference_gpu``: one reference
GPU-hour of work takes ``1 / relative_speed`` hours on the device.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pricing import checks
from pricing.memo import Kept

from . import units
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

#: LoRA keeps the frozen base in the training precision, with no gradient or optimizer
#: state (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models", sec. 4.2):
#: 4 bytes a parameter in fp32, 2 in mixed precision (a 16-bit base).
FROZEN_BYTES_PER_PARAM = {"fp32": 4.0, "mixed": 2.0}

#: QLoRA's base: 4-bit NormalFloat weights with double-quantised block constants,
#: 8/64 + 32/(64*256) = 0.127 bits a parameter (Dettmers et al. 2023, "QLoRA: Efficient
#: Finetuning of Quantized LLMs", sec. 3): (4 + 0.127) / 8 bytes.
QLORA_BASE_BYTES_PER_PARAM = (4 + 8 / 64 + 32 / (64 * 256)) / 8

#: QLoRA's adapters: BF16 weights and gradients (2 + 2 bytes) and the paged AdamW's
#: 32-bit states (8 bytes): 12 bytes a trainable parameter (Dettmers et al. 2023, sec. 3).
QLORA_ADAPTER_BYTES_PER_PARAM = 12.0

#: Default adapter rank and where it goes, when the scenario gives no trainable_params:
#: LoRA: r = 8 on the query and value projections (PEFT's LoraConfig default r = 8;
#: Hu et al. 2021, sec. 7.1, adapt W_q and W_v); QLoRA: r = 64 on every linear layer
#: (Dettmers et al. 2023, sec. 4: "LoRA r = 64 ... on all linear transformer block layers").
#: Methods that train every weight (pretraining is full training from a random start).
FULL_METHODS = ("full", "pretrain")
LORA_RANK = {"lora": 8, "qlora": 64}

#: Architectures whose PyTorch runs attention without the s^2 score matrix. PyTorch's
#: scaled_dot_product_attention (what Hugging Face Transformers' models call by default, and
#: nanoGPT and LitGPT) picks FlashAttention-2 on Ampere and newer (Dao 2023, sec. 4) and
#: otherwise its memory-efficient kernel, which "supports hardware in the range [sm_50, sm_90]"
#: in fp16 and fp32 (pytorch/pytorch@21c3369e aten/src/ATen/native/transformers/cuda/
#: sdp_utils.cpp, check_mem_efficient_hardware_support; sm_121 in later versions): every GPU
#: from Maxwell on, the T4, V100 and P100 of the free tiers among them. A Kepler card (the K80,
#: compute capability 3.7) falls back to the math kernel, which keeps the scores; so do TPUs
#: here, whose XLA attention the catalog has not measured. ``attention: auto`` uses the set.
MEMORY_EFFICIENT_ARCHITECTURES = {"maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell"}

#: ZeRO's communication volume relative to plain data parallelism: stage 2 moves the
#: same 2x parameters per step, stage 3 1.5 times that (Rajbhandari et al. 2020, sec. 7).
SHARDING_COMMUNICATION = {"none": 1.0, "zero2": 1.0, "zero3": 1.5}

#: PyTorch reaches a TPU only through PyTorch/XLA, whose training speed no table in the
#: catalog measures; rather than guess a factor, such options are left out with this reason.
PYTORCH_ON_TPU = ("PyTorch runs on TPUs only through PyTorch/XLA, and the catalog has no measured speed for it; "
                  "JAX and TensorFlow run natively (set framework: jax or tensorflow to plan TPUs)")

#: CUDA context, cuDNN workspaces and allocator fragmentation [GB].
#: Estimate: a PyTorch CUDA context alone takes several hundred MB.
FRAMEWORK_OVERHEAD_GB = 1.0

#: Per-GPU throughput efficiency of data-parallel training on N GPUs in one machine, by the
#: class of its cards (:func:`gpu_class`): the median of throughput(N GPUs) / (N x throughput(1
#: GPU)) over the same model and precision in Lambda's PyTorch benchmark
#: (lambdal/deeplearning-benchmark@2ed2ee02, runs 2020-2021). GeForce machines (GTX 1080 Ti,
#: RTX 2080 Ti, 3070, 3080 and 3090 without an NVLink bridge: 64/64/48 pairs for 2/4/8 GPUs)
#: exchange gradients over PCIe and lose far more to it than data-centre and workstation
#: machines (A100, V100, A40, RTX A4000-A6000, Quadro RTX 6000 and 8000: 252/216/180 pairs),
#: whose larger machines mostly link their GPUs (NVLink, NVSwitch). One median for both (0.976 /
#: 0.944 / 0.932) put a box of four RTX 4090s at 3.78x one card where GeForce machines of four
#: measured 3.48x, and a rented 8x A100 at 7.46x where such machines measured 7.70x. The
#: 8-GPU median above the 4-GPU one is as measured. The benchmark's later table
#: (pytorch/pytorch-train-throughput-fp32.csv at 0551cb70) has two RTX 4090s, which have no
#: peer-to-peer transfers at all, at a median 0.93 over its 10 models (0.56 to 1.00), two
#: RTX 3090s at 0.94, and two RTX 6000 Ada (the 4090's die) at 0.98. Between the measured
#: counts, interpolated in log2(N).
MULTI_GPU_EFFICIENCY = {
    "geforce": {1: 1.0, 2: 0.913, 4: 0.869, 8: 0.81},
    "pro": {1: 1.0, 2: 0.983, 4: 0.960, 8: 0.962},
}


def gpu_class(name: str) -> str:
    """The class of a GPU by its name in the devices table, for its machines' data-parallel
    efficiency (:data:`MULTI_GPU_EFFICIENCY`): "geforce" for NVIDIA's consumer cards (GeForce,
    TITAN), which exchange gradients over PCIe; "pro" for data-centre and workstation cards."""
    return "geforce" if str(name).startswith(("GeForce", "TITAN")) else "pro"


#: Slowdown of gradient accumulation per halving of the micro-batch (same
#: math, lower GPU utilisation at small batches). Estimate: 5 % per halving;
#: the measured tables hold one batch size per device, too few to fit it. Used where the job's
#: step is unknown; with a step, each micro-batch pays the step's fixed time
#: (:func:`accumulation_at_size`).
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

#: Activation bytes relative to the 16-bit formula of Korthikanti et al. (which assumes
#: 16-bit tensors). fp32 doubles it. Mixed precision under PyTorch autocast does not halve
#: it: fp32 master weights stay, many saved tensors (norms, softmax, losses) stay fp32 and
#: fp16 weight copies are cached. Calibration: BERT-large, V100 16 GB, batch 4, sequence
#: 512, nvidia-smi peak 14,949 MB in fp32 vs 13,939 MB with fp16 AMP (Hugging Face
#: Transformers docs, perf_train_gpu_one, v4.27.2); less 1.3 GB of CUDA context and the
#: states (335M x 16 bytes fp32, x 18 with AMP's cached copies) leaves 8.29 GB vs 6.61 GB
#: of activations: AMP keeps 0.80 of fp32's, i.e. 1.6 x the 16-bit formula. Other
#: published AMP/fp32 ratios of whole-run peaks: 0.54 (torchsparse PR #69, 2021), 0.77-0.82
#: (NVIDIA/apex #248, 2019), 0.73 (diff-svc PR #53, 2023).
ACTIVATION_FACTOR = {"fp32": 2.0, "mixed": 1.6}

#: Adapters train on a base loaded in 16 bits (PEFT, LitGPT and torchtune recipes), so its
#: activations are 16-bit: factor 1.0 in mixed precision. Checked against LitGPT's
#: measured peaks for Llama 2 7B LoRA in bf16 (tests/test_workload.py).
ADAPTER_ACTIVATION_FACTOR = {"fp32": 2.0, "mixed": 1.0}

#: Architectures with tensor cores, where mixed precision runs on them (the catalog's rule).
TENSOR_ARCHITECTURES = set(checks.TENSOR_ARCHITECTURES)

#: Where a tensor-core GPU's FP16 tensor rate is unpublished (the RTX 50
#: consumer cards list only FP4 "AI TOPS"), assume the FP32-accumulate tensor
#: rate is this multiple of FP32, as for the RTX 4090 (165 / 82.6 = 2.0).
#: Estimate.
TENSOR_TO_FP32_FALLBACK = 2.0

#: A family of devices' typical miss shifts its unmeasured devices when this many of its devices
#: are measured. Families are compute capabilities (the same instructions and kernels), so a
#: data-centre B200 (10.0), input-bound in Lambda's runs, no longer drags the GeForce and RTX PRO
#: Blackwell cards (12.0) down; devices without one (TPUs) group by architecture.
MIN_ARCHITECTURE_MEASURED = 2

#: Benchmark runs at smaller batches were limited by memory, not speed.
MIN_BENCHMARK_BATCH = 8

#: Architectures whose tensor cores run FP32 training as TF32.
TF32_ARCHITECTURES = {"ampere", "ada", "hopper", "blackwell"}

#: Prior weight of compute (vs memory bandwidth) in the spec-based speed
#: estimate, used only where too few measured devices exist to fit it.
#: CNNs and transformers are mostly bound by matrix throughput, RNNs by
#: memory bandwidth (docs/model.md).
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

    states_gb: float  # weights + gradients + optimizer states (this replica's shard)
    activations_gb: float  # at batch_size
    overhead_gb: float
    activations_source: str  # "measured", "estimated" or "unknown"
    batch_size: int = 1
    checkpointed_fraction: float = CHECKPOINTED_FRACTION_OTHER  # activations kept with checkpointing
    checkpointing: bool | str = "auto"  # the workload's activation_checkpointing
    notes: tuple[str, ...] = ()  # assumptions the figure rests on (adapter size, attention kernel)

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


def transformer_activations_gb(params: float, batch_size: int, sequence_length: int, factor: float,
                               memory_efficient: bool = False) -> float:
    """Activation memory of a transformer [GB] at a batch size.

    Per layer s*b*h*(34 + 5*a*s/h) bytes with 16-bit activations and no
    recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation
    in Large Transformer Models", eq. 2); memory-efficient attention keeps no
    s x s scores, softmax output or dropout mask, dropping the 5*a*s/h term
    (the paper's sec. 4.2 notes FlashAttention removes it); times ``factor``
    (:func:`activation_factor`: 2 for fp32).
    """
    layers, hidden, heads = transformer_shape(params)
    s, b, h, a = sequence_length, batch_size, hidden, heads
    per_layer = s * b * h * (34 + (0.0 if memory_efficient else 5 * a * s / h))
    return layers * per_layer * factor / 1e9


def cnn_activations_gb(batch_size: int, image_size: int, precision: str) -> float:
    """Activation memory of a ResNet-50-class CNN [GB]: per-image memory at 224 px
    (CNN_GB_PER_IMAGE_224) scaled with the pixel count."""
    return CNN_GB_PER_IMAGE_224[precision] * batch_size * (image_size / 224) ** 2


def checkpointed_fraction(w: Workload, memory_efficient: bool = False) -> float:
    """Share of activation memory kept with full activation checkpointing.

    Transformers keep each layer's 16-bit input, 2*s*b*h bytes of the
    s*b*h*(34 + 5*a*s/h) per layer (Korthikanti et al. 2022, sec. 4.1);
    other families keep about 2/sqrt(n) of n layers' activations (Chen et al.
    2016, "Training Deep Nets with Sublinear Memory Cost"), n = 50 assumed.
    """
    if w.family == "transformer":
        _, h, a = transformer_shape(w.params)
        s = w.sequence_length or DEFAULT_SEQUENCE_LENGTH
        return 2.0 / (34 + (0.0 if memory_efficient else 5 * a * s / h))
    return CHECKPOINTED_FRACTION_OTHER


def trainable_params(w: Workload) -> tuple[float, str]:
    """(adapter parameters, how they were set) for LoRA and QLoRA; (params, '') for full training.

    Default: rank LORA_RANK on the method's layers of the transformer_shape model: LoRA on
    W_q and W_v, 2 x r x 2h a layer; QLoRA on the four attention and two MLP matrices
    (h x h and h x 4h), r x (4 x 2h + 2 x 5h) = 18 r h a layer.
    """
    if w.method in FULL_METHODS:
        return w.params, ""
    if w.trainable_params is not None:
        return w.trainable_params, "given"
    layers, hidden, _ = transformer_shape(w.params)
    r = LORA_RANK[w.method]
    per_layer = 4 * r * hidden if w.method == "lora" else 18 * r * hidden
    n = float(layers * per_layer)
    where = "W_q and W_v" if w.method == "lora" else "every linear layer"
    return n, (f"{n / 1e6:.3g}M trainable parameters assumed ({n / w.params:.2%}: rank {r} on {where}; "
               f"set workload.trainable_params)")


def states_gb(w: Workload, shards: int = 1, sharding: str | None = None) -> float:
    """Weights, gradients and optimizer states one replica holds [GB].

    Full training: BYTES_PER_PARAM (ZeRO's 16 bytes for mixed-precision Adam). LoRA: the
    frozen base (FROZEN_BYTES_PER_PARAM) plus the adapters at BYTES_PER_PARAM. QLoRA: the
    4-bit base plus 12-byte adapters. With ``shards`` > 1, ZeRO stage 2 splits gradients
    and optimizer states across the replicas and stage 3 also the weights (Rajbhandari et
    al. 2020, sec. 5: per device 2 + 14/N and 16/N bytes for mixed Adam). ``sharding``: in place
    of the workload's own (a checkpoint holds the states unsharded).
    """
    sharding = w.sharding if sharding is None else sharding
    per_param = BYTES_PER_PARAM[(memory_precision(w.precision), w.optimizer)]
    weight_bytes = 2.0 if memory_precision(w.precision) == "mixed" else 4.0
    if w.method in FULL_METHODS:
        weights, rest = w.params * weight_bytes, w.params * (per_param - weight_bytes)
    else:
        adapters, _ = trainable_params(w)
        if w.method == "lora":
            base, adapter_bytes = w.params * FROZEN_BYTES_PER_PARAM[memory_precision(w.precision)], per_param
        else:
            base, adapter_bytes = w.params * QLORA_BASE_BYTES_PER_PARAM, QLORA_ADAPTER_BYTES_PER_PARAM
        weights, rest = base + adapters * weight_bytes, adapters * (adapter_bytes - weight_bytes)
    n = max(1, shards)
    if sharding == "zero3":
        return (weights + rest) / n / 1e9
    if sharding == "zero2":
        return (weights + rest / n) / 1e9
    return (weights + rest) / 1e9


def checkpoint_gb(w: Workload) -> float:
    """Size of a resumable checkpoint [GB]: what training changes (the weights, or the adapters,
    with their optimizer states), unsharded; a frozen base is not saved."""
    if w.method in FULL_METHODS:
        return states_gb(w, sharding="none")
    adapters, _ = trainable_params(w)
    per_param = (BYTES_PER_PARAM[(memory_precision(w.precision), w.optimizer)] if w.method == "lora"
                 else QLORA_ADAPTER_BYTES_PER_PARAM)
    return adapters * per_param / 1e9


#: Bytes of a trained weight as a run's result is saved: the fp32 master copy that mixed
#: precision keeps (ZeRO's 16 bytes of mixed-precision Adam hold it: Rajbhandari et al. 2020,
#: sec. 3.1), which a model loaded in fp32 is saved as (Hugging Face Trainer, FSDP's full state
#: dict, Alpaca's train.py); a model saved in bf16 is half as large.
SAVED_WEIGHT_BYTES = 4.0


def weights_gb(w: Workload) -> float:
    """The trained weights a run leaves to take away [GB]: every weight (full, pretrain) or the
    adapters (lora, qlora, without their frozen base) at SAVED_WEIGHT_BYTES; the optimizer
    states of a resumable checkpoint (:func:`checkpoint_gb`) stay behind."""
    trained = w.params if w.method in FULL_METHODS else trainable_params(w)[0]
    return trained * SAVED_WEIGHT_BYTES / 1e9


def activation_factor(w: Workload) -> float:
    """Activation bytes of this workload relative to Korthikanti's 16-bit formula."""
    table = ACTIVATION_FACTOR if w.method in FULL_METHODS else ADAPTER_ACTIVATION_FACTOR
    return table[memory_precision(w.precision)]


def memory_efficient_attention(w: Workload, architecture: str | None) -> bool:
    """Whether attention runs without storing the s x s scores on this architecture."""
    if w.attention != "auto":
        return w.attention == "memory-efficient"
    return architecture in MEMORY_EFFICIENT_ARCHITECTURES


def memory_need(w: Workload, architecture: str | None = None, shards: int = 1) -> MemoryNeed:
    """VRAM one training replica needs at the scenario's batch size.

    ``architecture`` decides ``attention: auto``; ``shards`` is the number of replicas
    that share the states under ``sharding`` (the GPUs or TPU cores of one machine).
    Activations: the scenario's measured figure; else the transformer formula (with
    sequence_length, 512 when not given) or the CNN per-image figure (with image_size,
    224 when not given); RNNs: unknown (0, with a warning in the report). Adapters
    change what is stored, not the activations (gradients still flow through the base).
    """
    notes = []
    if w.method not in FULL_METHODS:
        _, how = trainable_params(w)
        if how != "given":
            notes.append(how)
    states = states_gb(w, shards)
    efficient = memory_efficient_attention(w, architecture)
    if w.activation_memory_gb is not None:
        act, source = w.activation_memory_gb, "measured"
    elif w.family == "transformer":
        act = transformer_activations_gb(w.params, w.batch_size, w.sequence_length or DEFAULT_SEQUENCE_LENGTH,
                                         activation_factor(w), efficient)
        source = "estimated"
        if efficient and w.attention == "auto":
            notes.append(f"memory-efficient attention on {architecture} (PyTorch SDPA / FlashAttention)")
    elif w.family == "cnn":
        act, source = cnn_activations_gb(w.batch_size, w.image_size or 224, memory_precision(w.precision)), "estimated"
    else:
        act, source = 0.0, "unknown"
    return MemoryNeed(states, act, FRAMEWORK_OVERHEAD_GB, source, w.batch_size,
                      checkpointed_fraction(w, efficient), w.activation_checkpointing, tuple(notes))


def accumulation_steps(micro_batch: int, batch_size: int) -> int:
    """The micro-batches of at most ``micro_batch`` samples that make a batch (gradient accumulation)."""
    return -(-batch_size // micro_batch)


def accumulation_slowdown(micro_batch: int, batch_size: int) -> float:
    """Slowdown of gradient accumulation at ``micro_batch`` instead of ``batch_size``: 5 % for
    each halving, the micro-batches a step counted (:func:`accumulation_steps`)."""
    halvings = max(0.0, math.log2(accumulation_steps(micro_batch, batch_size)))
    return 1.0 + ACCUMULATION_SLOWDOWN_PER_HALVING * halvings


def micro_batch(batch_size: int, most: int) -> int:
    """The micro-batch for gradient accumulation: the batch in the fewest micro-batches that fit
    (``most`` samples), as even as they go (a batch of 32 where 31 would fit: 16 x 2, not 31 + 1;
    one of 37 where 20 would: 19 + 18, not 37 of 1). The gradients are the batch's whatever the
    split (each micro-batch's loss weighted by its samples), so only the micro-batches' count
    costs time. The largest of them is returned (the memory it needs); 0 when not even one
    sample fits."""
    if most < 1:
        return 0
    steps = accumulation_steps(min(most, batch_size), batch_size)
    return -(-batch_size // steps)


def accumulation_text(micro: int, batch_size: int) -> str:
    """'micro-batch 17 x 4 steps (3 of them 16)': how a batch is split as evenly as it goes
    (:func:`micro_batch`): ``batch_size - (micro - 1) x steps`` micro-batches of ``micro``, the
    rest one smaller; 'micro-batch 32' where one step holds the batch."""
    steps = accumulation_steps(micro, batch_size)
    if steps == 1:
        return f"micro-batch {micro}"
    smaller = steps - (batch_size - (micro - 1) * steps)
    return f"micro-batch {micro} x {steps} steps" + (f" ({smaller} of them {micro - 1})" if smaller else "")


def fit(need: MemoryNeed, vram_gb: float, each: str = "") -> Fit:
    """Does the workload fit, and at what speed cost? ``vram_gb`` is one replica's memory;
    ``each`` says whose in the texts where a machine holds several (" a GPU": an 8x V100 machine
    "has 16 GB a GPU", not 16 GB in all).

    fits: everything at the full batch. fits-with-accumulation: the largest
    micro-batch that fits, gradients accumulated to the full batch (same
    math, lower utilisation). fits-with-checkpointing: activation
    checkpointing (CHECKPOINTING_SLOWDOWN) plus accumulation where needed.
    does-not-fit: weights, gradients, optimizer states and one checkpointed
    sample exceed the memory.
    """
    forced = need.checkpointing is True
    if need.total_gb <= vram_gb and not forced:
        return Fit("fits", f"needs {need.total_gb:.1f} GB, has {vram_gb:g} GB{each}", 1.0, need.batch_size)
    free = vram_gb - need.states_gb - need.overhead_gb
    if free <= 0:
        return Fit("does-not-fit", f"needs {need.states_gb + need.overhead_gb:.1f} GB for weights, gradients and "
                   f"optimizer states alone, has {vram_gb:g} GB{each}", math.inf, None)
    per_sample = need.activations_gb / need.batch_size
    micro = micro_batch(need.batch_size, int(free / per_sample + 1e-9) if per_sample > 0 else need.batch_size)
    if micro >= 1 and not forced:
        return Fit("fits-with-accumulation",
                   f"needs {need.total_gb:.1f} GB at batch {need.batch_size}, has {vram_gb:g} GB{each}: "
                   f"{accumulation_text(micro, need.batch_size)} of gradient accumulation",
                   accumulation_slowdown(micro, need.batch_size), micro)
    if need.checkpointing is False:
        return Fit("does-not-fit", f"activations of even one sample ({per_sample:.1f} GB) exceed the {free:.1f} GB "
                   "left, and activation_checkpointing is false", math.inf, None)
    kept = per_sample * need.checkpointed_fraction
    micro = micro_batch(need.batch_size, int(free / kept + 1e-9) if kept > 0 else need.batch_size)
    if micro >= 1:
        why = ("activation checkpointing (workload.activation_checkpointing: true)" if forced else
               f"activations of even one sample ({per_sample:.1f} GB) exceed the {free:.1f} GB left: "
               "activation checkpointing")
        return Fit("fits-with-checkpointing", f"{why}, {accumulation_text(micro, need.batch_size)}",
                   CHECKPOINTING_SLOWDOWN * accumulation_slowdown(micro, need.batch_size), micro)
    return Fit("does-not-fit", f"one sample needs {kept:.1f} GB of activations "
               f"even with checkpointing; {free:.1f} GB are left after weights and optimizer states", math.inf, None)


#: Median |estimate / measured - 1| of the speed model, leave one device out, by (family,
#: precision): ``python bench/speed_error.py`` on the shipped throughput table, 2026-11-27
#: (after the MLPerf rows, the rates Surogate's LoRA sweep gives on large work, and the P100, T4
#: and K80 measured on BERT fine-tunes and the P100 on V-Net: the spec estimate had the P100 62 %
#: too fast on FP32 transformers, 52 % on mixed-precision CNNs; input-bound runs left out).
SPEED_MEDIAN_ERROR = {("cnn", "fp32"): 0.073, ("cnn", "mixed"): 0.118, ("transformer", "fp32"): 0.101,
                      ("transformer", "mixed"): 0.100, ("rnn", "fp32"): 0.112, ("rnn", "mixed"): 0.116}
SPEED_MEDIAN_ERROR_ALL = 0.103  # every family and precision (the same run)
#: Median |estimate / measured - 1| of the ratio between two measured devices on a job the
#: table does not hold, by (family, precision): leave one job out over the published same-job
#: pairs measured since 2023 (234 pairs; ``python bench/speed_error.py`` on the shipped table,
#: 2026-11-27; the input-bound runs the fit leaves out are left out here too). Your job is
#: such a job: a measured ratio is the mean over other jobs, and moves from job to job by
#: this much (10 % of the pairs by more than 30 %). Before 2026-11-27 a
#: measured speed was taken as known to 5 %, an estimate; the pairs put it at 8 % (median).
SPEED_JOB_MEDIAN_ERROR = {("cnn", "fp32"): 0.047, ("cnn", "mixed"): 0.067, ("transformer", "fp32"): 0.065,
                          ("transformer", "mixed"): 0.123, ("rnn", "fp32"): 0.204, ("rnn", "mixed"): 0.228}
SPEED_JOB_MEDIAN_ERROR_ALL = 0.079  # every family and precision (the same run)
#: A normal's median absolute deviation in units of its sigma.
MAD_PER_SIGMA = 0.6745
#: Spread of a speed you measured on your own job (``workload.measured_speed``): run-to-run
#: variation only (an estimate).
YOUR_SPEED_SIGMA = 0.05


def speed_sigma(family: str, precision: str, source: str) -> float:
    """The log-normal spread (sigma, of log speed) of a device's speed relative to the reference
    on your job, each median absolute error over the normal's median absolute deviation:

    - ``measured`` (on other jobs): how far a measured ratio moves from job to job
      (:data:`SPEED_JOB_MEDIAN_ERROR`, leave one job out);
    - ``estimated`` (from specs): the speed model's leave-one-device-out error
      (:data:`SPEED_MEDIAN_ERROR`) and that job-to-job spread, independent, in quadrature;
    - ``yours`` (measured on your job): :data:`YOUR_SPEED_SIGMA`;
    - the reference itself (``reference``): none, the work being measured in its hours.

    One figure for the planned confidence (:func:`work_spread`) and the uncertainty analysis's
    draws. FP8 speeds are the mixed-precision model's times the gain (drawn apart)."""
    fitted = memory_precision(precision)
    job = SPEED_JOB_MEDIAN_ERROR.get((family, fitted), SPEED_JOB_MEDIAN_ERROR_ALL) / MAD_PER_SIGMA
    if source == "estimated":
        return math.hypot(SPEED_MEDIAN_ERROR.get((family, fitted), SPEED_MEDIAN_ERROR_ALL) / MAD_PER_SIGMA, job)
    if source == "measured":
        return job
    if source == "reference":
        return 0.0
    return YOUR_SPEED_SIGMA


def speed_rel_sd_at(speed_sigma_log: float, chance: float | None = None) -> float:
    """The relative spread of wall hours from a device's speed, as the plan books them at
    ``chance`` (its confidence): wall hours go as 1 / speed, a log-normal about the hours at the
    speed planned (its median) with ``speed_sigma_log``, whose relative sd is sqrt(e^(s^2) - 1);
    its long tail of slow runs puts the quantile at e^(z s), above the hours + z sd, so the
    spread booked is the larger of the sd and (e^(z s) - 1) / z, the spread that puts the
    quantile at the hours + z x it (as the job's utilisation's: Estimate.hours_rel_sd_at). At a
    95 % confidence with s = 0.2, 0.237 instead of 0.202; without it, a spot T4 planned at 90 %
    met its deadline in 88.5 % of its own uncertainty analysis's draws, and a rented RTX 3090's
    three runs stated 98.4 % where it found 96.3 %. Without ``chance``: the sd."""
    sd = math.sqrt(math.expm1(speed_sigma_log ** 2))
    z = units.z_at(chance)
    if z <= 0.0 or speed_sigma_log <= 0.0:
        return sd
    return max(sd, math.expm1(z * speed_sigma_log) / z)


def work_spread(speed_sigma_log: float, work_range: tuple[float, float] | None, work_rel_sd: float = 0.0,
                chance: float | None = None, speed_share: float = 1.0) -> float:
    """The relative standard deviation of a phase's wall hours on one device from what the plan
    does not know of the work itself: the device's speed (wall hours go as 1 / speed, a
    log-normal with ``speed_sigma_log``: :func:`speed_rel_sd_at`, at ``chance`` where given) and
    the work's range if the user gave one (uniform: (high - low) / sqrt(12) over its middle),
    independent, added in quadrature. With the interruptions' own spread it sets the wall hours
    planned at the scenario's confidence, so the chance stated is the one the uncertainty
    analysis finds. ``work_rel_sd``: the work's own relative sd where it is estimated from a job
    (planner.model.job); ``speed_share``: the share of the hours the speed moves at the job's
    step (quotes.speed_share_at_step; the rest is the step's fixed time)."""
    var = (speed_share * speed_rel_sd_at(speed_sigma_log, chance)) ** 2 + work_rel_sd ** 2
    if work_range is not None:
        low, high = work_range
        mid = (low + high) / 2.0
        if mid > 0:
            var += ((high - low) / math.sqrt(12.0) / mid) ** 2
    return math.sqrt(var)


def multi_gpu_efficiency(count: int | np.ndarray, gpus: str) -> np.ndarray:
    """Per-GPU data-parallel efficiency for ``count`` GPUs of class ``gpus`` (:func:`gpu_class`;
    see MULTI_GPU_EFFICIENCY)."""
    table = MULTI_GPU_EFFICIENCY[gpus]
    xs = np.log2(list(table))
    ys = np.array(list(table.values()))
    return np.interp(np.log2(np.maximum(count, 1)), xs, ys)


def data_parallel_speed(count: int, sharding: str = "none", *, gpus: str) -> float:
    """Throughput of ``count`` GPUs of class ``gpus`` in one machine in units of one GPU:
    count x per-GPU efficiency, whose loss grows with ZeRO's extra communication
    (SHARDING_COMMUNICATION)."""
    if count <= 1:
        return 1.0
    loss = 1.0 - float(multi_gpu_efficiency(count, gpus))
    return count * max(0.0, 1.0 - loss * SHARDING_COMMUNICATION[sharding])


def side_by_side(count: int, runs: int, sharding: str = "none", *, gpus: str) -> int:
    """How many of a phase's ``runs`` (independent: seeds, folds) one machine of ``count`` GPUs
    of class ``gpus`` carries at once: equal groups of its GPUs, each group training one run
    data-parallel, as many as make the machine fastest (:func:`machine_speed`; the most groups
    where they tie). Groups without communication between them lose nothing to it: 4 GeForce
    cards and 8 seeds go 4 at once, one a card, at 4.00x one card where one run on all four goes
    3.48x; 2 seeds as two pairs, 3.65x. 1 (one run on every GPU) where the states are sharded
    across them (ZeRO: a group of fewer GPUs holds more of them each) or the runs are one. A
    rented machine takes a run an instance instead (:func:`planner.model.sessions.parallel_runs`)."""
    if count <= 1 or runs <= 1 or sharding != "none":
        return 1
    groups = [g for g in range(1, min(count, runs) + 1) if count % g == 0]
    return max(groups, key=lambda g: (round(machine_speed(count, g, sharding, gpus=gpus), 12), g))


def machine_speed(count: int, groups: int = 1, sharding: str = "none", *, gpus: str) -> float:
    """Throughput of ``count`` GPUs of class ``gpus`` in one machine carrying ``groups`` runs at
    once (:func:`side_by_side`), in units of one GPU: each group of count / groups GPUs
    data-parallel (:func:`data_parallel_speed`)."""
    return groups * data_parallel_speed(count // groups, sharding, gpus=gpus)


@dataclass(frozen=True)
class Placement:
    """A workload on ``count`` devices of one machine: the memory need of one replica and its fit."""

    need: MemoryNeed
    fit: Fit
    replica_vram_gb: float
    replicas: int


def memory_units(device: Any) -> int:
    """Separately addressed memories of a device (TPU cores or chips); 1 for a GPU."""
    units = getattr(device, "memory_units", 1)
    return int(units) if isinstance(units, (int, float)) and units == units and units >= 1 else 1


def place_reference(w: Workload, devices: pd.DataFrame) -> Placement:
    """The workload on its reference GPU (a devices table holds its row)."""
    row = next(r for r in devices.itertuples() if r.id == w.reference_gpu)
    return place(w, row)


def place(w: Workload, device: Any, count: int = 1) -> Placement:
    """Fit the workload on ``count`` of ``device`` (a devices-table row): one data-parallel
    replica per GPU or TPU core, its states sharded across all of them under ``sharding``."""
    units = memory_units(device)
    replicas = max(1, count) * units
    architecture = device.architecture if device.kind == "gpu" else None
    need = memory_need(w, architecture, replicas)
    vram = float(device.vram_gb) / units
    unit = "GPU" if device.kind == "gpu" else "TPU core"
    each = "" if replicas == 1 else f" a {unit}"
    f = fit(need, vram, each)
    if f.verdict == "does-not-fit" and replicas > 1 and w.sharding != "zero3":  # what would fix it
        sharded = fit(memory_need(dataclasses.replace(w, sharding="zero3"), architecture, replicas), vram, each)
        if sharded.verdict != "does-not-fit":
            f = dataclasses.replace(f, reason=f"{f.reason} (workload.sharding: zero3 would split the states "
                                              f"across its {replicas} {unit}s: {sharded.verdict})")
    return Placement(need, f, vram, replicas)


def effective_tflops(devices: pd.DataFrame, precision: str) -> pd.Series:
    """Matrix throughput a training run can use, per device of a devices table [TFLOPS]
    (:func:`effective_tflops_of`)."""
    return pd.Series(effective_tflops_of(devices["kind"], devices["architecture"], devices["fp32_tflops"],
                                         devices["fp16_tensor_tflops"], precision), index=devices.index)


def effective_tflops_of(kind: Any, architecture: Any, fp32_tflops: Any, fp16_tensor_tflops: Any,
                        precision: str) -> np.ndarray:
    """Matrix throughput a training run can use [TFLOPS], per device given by its kind, its
    architecture and its peaks (arrays, blank as NaN).

    Mixed: the FP16 tensor rate on tensor-core GPUs (TENSOR_TO_FP32_FALLBACK
    x FP32 where unpublished); without tensor cores the faster of FP32 and the
    FP16 ALU rate (P100: 2x FP32). fp32: on Ampere and newer, TF32 tensor
    cores at half the FP16 tensor rate (NVIDIA A100 whitepaper, 2020), as in
    the NGC containers the measured tables come from; else FP32. TPUs: bf16.
    """
    fp32 = np.asarray(fp32_tflops, dtype=float)
    tensor = np.asarray(fp16_tensor_tflops, dtype=float)
    arch = np.asarray(architecture, dtype=object)
    tensor_rate = np.where(np.isnan(tensor), fp32 * TENSOR_TO_FP32_FALLBACK, tensor)
    if precision == "mixed":
        out = np.where(np.isin(arch, list(TENSOR_ARCHITECTURES)), tensor_rate, np.fmax(fp32, np.nan_to_num(tensor, nan=0.0)))
    else:
        out = np.where(np.isin(arch, list(TF32_ARCHITECTURES)), np.fmax(fp32, tensor_rate / 2.0), fp32)
    return np.where(np.asarray(kind, dtype=object) != "tpu", out, tensor)


#: A vision job's mixed-precision run is input-bound (the data loading, not the GPU, sets its
#: pace) where its card gains from mixed precision this many times less than the job's median
#: card whose fp32 runs also use tensor cores (TF32): Lambda's 2025 B200 ResNet-50 ran 3,076
#: images/s mixed against 2,967 in fp32 where the H100, GH200 and H200 gained 1.36-1.42x (the
#: H200 stopping at the same ~3,080), SSD300 1,025 against 1,043. Only where the job gains at
#: least INPUT_BOUND_MIN_GAIN and at least three such cards ran it both ways.
INPUT_BOUND_GAIN_FACTOR = 1.25
INPUT_BOUND_MIN_GAIN = 1.2


def input_bound(throughput: pd.DataFrame, devices: pd.DataFrame) -> np.ndarray:
    """Which rows are input-bound mixed-precision vision runs (:data:`INPUT_BOUND_GAIN_FACTOR`):
    a ceiling outside the GPU, so not its speed. A boolean per row of ``throughput``, once per
    pair of tables in a process (pricing.memo: every speed fit asks for it)."""
    return _INPUT_BOUND.get((throughput, devices), (), lambda: _input_bound(throughput, devices))


_INPUT_BOUND = Kept()


def _input_bound(throughput: pd.DataFrame, devices: pd.DataFrame) -> np.ndarray:
    arch = dict(zip(devices["id"], devices["architecture"]))
    key = ["device", "model", "framework"]
    vision = throughput[(throughput["family"] == "cnn") & throughput["device"].map(
        lambda d: arch.get(d) in TF32_ARCHITECTURES)]
    both = vision.pivot_table(index=key, columns="precision", values="throughput", aggfunc="mean")
    if not {"fp32", "mixed"} <= set(both.columns):
        return np.zeros(len(throughput), dtype=bool)
    gain = (both["mixed"] / both["fp32"]).dropna()
    by_job = gain.groupby(level=["model", "framework"])
    median, count = by_job.transform("median"), by_job.transform("size")
    capped = gain[(count >= 3) & (median >= INPUT_BOUND_MIN_GAIN) & (gain < median / INPUT_BOUND_GAIN_FACTOR)].index
    rows = pd.MultiIndex.from_frame(throughput[key])
    out = np.asarray(rows.isin(capped) & (throughput["precision"] == "mixed").to_numpy(), dtype=bool)
    out.flags.writeable = False  # shared by every caller (the memo above)
    return out


def measured_scores(throughput: pd.DataFrame, family: str, precision: str,
                    devices: pd.DataFrame | None = None) -> pd.Series:
    """Log speed score per measured device for a family and precision.

    Fits log T[d, m] = s_d + c_m by least squares over every measured
    (device, benchmark model) pair: c_m absorbs each model's (and framework's)
    own scale, s_d is the device's speed. Runs at batch sizes below
    MIN_BENCHMARK_BATCH (an 8 GB card squeezing BERT-large), and PyTorch
    benchmark runs that record no batch size (no batch fitted), are left out;
    with ``devices``, so are input-bound vision runs (:func:`input_bound`).
    Anchored so that the scores average zero.
    """
    if devices is not None:
        throughput = throughput[~input_bound(throughput, devices)]
    t = throughput[(throughput["family"] == family) & (throughput["precision"] == precision)]
    starved = (t["batch_size"] < MIN_BENCHMARK_BATCH) | (t["batch_size"].isna() & (t["framework"] == "pytorch"))
    t = t[~starved]  # memory-starved runs say little about speed
    if t.empty:
        return pd.Series(dtype=float)
    model = t["model"] + " | " + t["framework"]
    measured = sorted(t["device"].unique())
    models = sorted(model.unique())
    d_idx = t["device"].map({d: i for i, d in enumerate(measured)}).to_numpy()
    m_idx = model.map({m: i for i, m in enumerate(models)}).to_numpy()
    a = np.zeros((len(t) + 1, len(measured) + len(models)))
    a[np.arange(len(t)), d_idx] = 1.0
    a[np.arange(len(t)), len(measured) + m_idx] = 1.0
    a[-1, : len(measured)] = 1.0  # anchor: scores sum to zero
    y = np.append(np.log(t["throughput"].to_numpy(dtype=float)), 0.0)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return pd.Series(coef[: len(measured)], index=measured)


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
    scores = measured_scores(throughput, family, precision, devices)
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


def speed_family(devices: pd.DataFrame) -> pd.Series:
    """Each device's family for the typical miss: its compute capability, else its architecture."""
    d = devices.set_index("id")
    cc = d["compute_capability"] if "compute_capability" in d else pd.Series(None, index=d.index, dtype=object)
    return cc.where(cc.notna() & (cc.astype(str) != ""), d["architecture"]).astype(str)


#: FP8 training (``precision: fp8``): on the architectures with FP8 tensor cores, end-to-end
#: steps this much faster than the same job in mixed (BF16) precision, an estimate with its range:
#: torchao float8 (tensorwise) on Llama3-8B, 1.25x on H100 and on B200 (pytorch/ao, 2025-03-12 and
#: 2025-08-15); Transformer Engine 1.33x on a GPT-2 XL on H100; Megatron-LM 1.42x (13B GPT,
#: NVIDIA/Megatron-LM#396) and 1.15x (22B, #330); 0.98x on a small shape (marin-community/marin#4311).
#: No measured FP8 training gain on a GeForce card was found: Ada and Blackwell GeForce cards take
#: the same factor (an estimate). Other cards train in mixed precision.
FP8_SPEEDUP, FP8_SPEEDUP_RANGE = 1.25, (0.98, 1.42)
FP8_ARCHITECTURES = ("ada", "hopper", "blackwell")


def triangular_rel_sd(a: float, c: float, b: float) -> float:
    """The relative standard deviation (sd over mean) of a triangular distribution on [a, b] with
    mode c: sqrt((a^2 + b^2 + c^2 - ab - ac - bc) / 18) over (a + b + c) / 3."""
    return math.sqrt(max(a * a + b * b + c * c - a * b - a * c - b * c, 0.0) / 18.0) / ((a + b + c) / 3.0)


def fp8_gain_rel_sd() -> float:
    """The FP8 gain's relative standard deviation, triangular over its range (the spread a
    device's speed takes against a reference that does not train in FP8, or the other way)."""
    return triangular_rel_sd(FP8_SPEEDUP_RANGE[0], FP8_SPEEDUP, FP8_SPEEDUP_RANGE[1])


def memory_precision(precision: str) -> str:
    """The precision a memory need is figured at: FP8 training keeps the 16-bit weights, their
    gradients and master copy and 16-bit activations for most operations (Transformer Engine and
    torchao cast to FP8 around the matrix products), so as mixed precision (an estimate)."""
    return "mixed" if precision == "fp8" else precision


def trains_in_fp8(devices: pd.DataFrame) -> pd.Series:
    """Whether each device (by id) has FP8 tensor cores (Ada, Hopper, Blackwell)."""
    return pd.Series(devices["architecture"].isin(FP8_ARCHITECTURES).to_numpy(), index=devices["id"])


#: A training step's fixed time per layer that no GPU shortens [s] (low, typical, high): kernel
#: launches and the framework's host work (eager PyTorch spends about 5-10 us a kernel: pytorch
#: issue #41383; a layer's forward and backward launch a few hundred), and small kernels that
#: cannot fill the device. A step takes its FLOPs at the device's rate on large work plus this for
#: each layer, so the gap between a large and a small GPU shrinks on small steps (Amdahl 1967).
#: Fitted with each device's rate on runs of one harness at several sizes (``python
#: bench/size_check.py``, bench/published_sizes.csv): Lambda's BERT-base and BERT-large fine-tunes
#: on 11 GPUs in NGC PyTorch 22.09 with fused kernels (lambdal/deeplearning-benchmark @aa5addb6),
#: 0.3 ms; Surogate's LoRA benchmark of Qwen3 0.6B-32B on an RTX 5090, H100, H200 and B200
#: (invergent-ai/surogate docs/reference/benchmarks.md @3902e260, 2026-05-15): its own engine
#: 1.7 ms (the typical figure: a trainer in eager PyTorch launches about that), Unsloth's 5.6 ms.
STEP_FIXED_S_PER_LAYER = (0.3e-3, 1.7e-3, 5.6e-3)


@dataclass(frozen=True)
class Step:
    """One micro-batch's training step of a workload, as its size-aware speed needs it
    (planner.model.job.step_of makes it from the workload and the catalog)."""

    flops: float  # its training FLOPs
    layers: int
    reference_s: float  # its compute on the reference GPU at the rate large work reaches [s]

    def fixed_share(self, s_per_layer: float | np.ndarray = STEP_FIXED_S_PER_LAYER[1]) -> float | np.ndarray:
        """The share of the reference's step time that no GPU shortens at a fixed time of
        ``s_per_layer`` a layer (0-1)."""
        fixed = self.layers * np.asarray(s_per_layer, dtype=float)
        share = fixed / (fixed + self.reference_s)
        return float(share) if share.ndim == 0 else share

    @functools.cached_property
    def share(self) -> float:
        """The fixed share the plan counts on: its mean over the fixed time's range, triangular
        (:data:`STEP_FIXED_S_PER_LAYER`). A device's hours are linear in the share
        (:func:`at_size`: 1 / speed = share + (1 - share) / ratio), so at the mean share they are
        the mean hours, as the uncertainty analysis draws them; the share is concave in the fixed
        time, whose range is skewed (0.3-1.7-5.6 ms: mean 2.5 ms), so the typical time would be
        optimistic. Closed form: share = 1 - a E[1 / (t + a)], a = reference_s / layers, with
        E[1 / (t + a)] integrated over the triangle's two sides. Read for every quote: worked
        out once a step."""
        low, mode, high = STEP_FIXED_S_PER_LAYER
        a = self.reference_s / self.layers
        inverse = 0.0
        if mode > low:  # rising side: 2 (t - low) / ((high - low)(mode - low))
            inverse += 2.0 / ((high - low) * (mode - low)) * (
                (mode - low) - (low + a) * math.log((mode + a) / (low + a)))
        if high > mode:  # falling side: 2 (high - t) / ((high - low)(high - mode))
            inverse += 2.0 / ((high - low) * (high - mode)) * (
                (high + a) * math.log((high + a) / (mode + a)) - (high - mode))
        return 1.0 - a * inverse

    @functools.cached_property
    def range_shares(self) -> tuple[float, float, float]:
        """The fixed share at the low end, the mode and the high end of the fixed time's range
        (:data:`STEP_FIXED_S_PER_LAYER`)."""
        low, mode, high = (float(self.fixed_share(t)) for t in STEP_FIXED_S_PER_LAYER)
        return low, mode, high


#: Why a workload has no :class:`Step` (planner.model.job.step_of), as the answer and planner fit say it.
UNKNOWN_STEP = ("the fixed time per layer of a step is known for transformers only (fitted on their runs; a CNN's "
                "or an RNN's speeds are those of the benchmarks that measured them)")


def at_size(ratio: float | np.ndarray, share: float | np.ndarray) -> float | np.ndarray:
    """The speed, relative to the reference, of a device ``ratio`` times as fast on large work,
    on a step whose fixed part is ``share`` of the reference's time (Amdahl's law: the fixed part
    takes as long on every device). 1 for the reference; at most 1 / ``share``. [x reference]"""
    return ratio / (share * ratio + (1.0 - share))


def at_scale(speed: float | np.ndarray, share: float | np.ndarray) -> float | np.ndarray:
    """The inverse of :func:`at_size`: the large-work ratio of a device ``speed`` times as fast
    as the reference on a step whose fixed part is ``share`` of the reference's time."""
    return speed * (1.0 - share) / (1.0 - share * speed)


def accumulation_at_size(step: Step, ratio: float, micro_batch: int, batch_size: int) -> float:
    """The slowdown of training ``batch_size`` samples as micro-batches of ``micro_batch`` (gradient
    accumulation) on a device ``ratio`` times as fast as the reference on large work: the same
    compute, but every micro-batch pays the step's fixed time (:class:`Step`):
    ((1 - f) / ratio + f k) / ((1 - f) / ratio + f), with f the fixed share of the reference's
    step and k the micro-batches a step (:func:`accumulation_steps`). [x the full batch's time]"""
    share = step.share
    compute = (1.0 - share) / ratio
    return (compute + share * accumulation_steps(micro_batch, batch_size)) / (compute + share)


def slowdown_at(f: Fit, w: Workload, step: Step | None, ratio: float) -> float:
    """A fit's slowdown on a device ``ratio`` times as fast as the reference on large work: its
    gradient accumulation at the job's step where the step is known (each micro-batch pays the
    step's fixed time: accumulation_at_size), else the flat estimate the fit holds."""
    micro = f.micro_batch
    if step is None or not micro or micro >= w.batch_size or not (math.isfinite(ratio) and ratio > 0):
        return f.slowdown
    flat = accumulation_slowdown(micro, w.batch_size)
    return f.slowdown / flat * accumulation_at_size(step, ratio, micro, w.batch_size)


def size_rel_sd(step: Step | None, ratio: float) -> float:
    """The relative standard deviation of a device's hours (1 / speed) from the fixed time per
    layer's range (:data:`STEP_FIXED_S_PER_LAYER`, triangular), for a device ``ratio`` times as
    fast as the reference on large work: none for the reference, or without a step."""
    if step is None or ratio == 1.0:
        return 0.0
    a, c, b = (1.0 / float(at_size(ratio, share)) for share in step.range_shares)
    return triangular_rel_sd(a, c, b)


def relative_speed(devices: pd.DataFrame, throughput: pd.DataFrame, reference: str, family: str,
                   precision: str, yours: tuple[tuple[str, float, str | None], ...] = ()) -> pd.DataFrame:
    """Speed relative to ``reference`` (:func:`_relative_speed`); with ``precision: fp8`` each
    device trains in FP8 where it can (x FP8_SPEEDUP over its mixed-precision speed), else in
    mixed precision, the reference likewise (your hours were measured on it as it trains).
    Speeds you measured are yours, as given."""
    if precision != "fp8":
        return _relative_speed(devices, throughput, reference, family, precision, yours)
    out = _relative_speed(devices, throughput, reference, family, "mixed", ())
    gain = trains_in_fp8(devices).map({True: FP8_SPEEDUP, False: 1.0}).reindex(out.index).fillna(1.0)
    ref_gain = float(gain.get(reference, 1.0))
    out["relative_speed"] = out["relative_speed"] * gain / ref_gain
    scaled = (gain != ref_gain) & (out["speed_source"] == "measured")
    out.loc[scaled, "speed_source"] = "estimated"  # a measured mixed-precision ratio times an estimated gain
    for device, factor, base in yours:
        base_speed = 1.0 if base in (None, reference) else float(out["relative_speed"][base])
        out.loc[device, "relative_speed"] = factor * base_speed
        out.loc[device, "speed_source"] = "yours"
    return out


def _relative_speed(devices: pd.DataFrame, throughput: pd.DataFrame, reference: str, family: str,
                    precision: str, yours: tuple[tuple[str, float, str | None], ...] = ()) -> pd.DataFrame:
    """Speed of each device relative to ``reference`` for this family and precision.

    Each device gets a score on the measured scale: its fitted score where
    the throughput tables cover it, else the calibrated spec estimate
    (:func:`calibrate`; TPUs scaled by TPU_FAMILY_FACTOR), shifted by the
    median miss of the measured devices of its architecture, or by the miss of the measured
    card it is a variant of (:func:`_at_measured_variant`). Relative speed is
    the ratio of the device's and the reference's scores: ``measured`` when
    both are measured, ``estimated`` otherwise. Speeds you measured (``yours``:
    device, times as fast, than which device, None for the reference) replace
    the table's, with the source ``yours``. Returns ``relative_speed`` and
    ``speed_source`` indexed by device id.
    """
    cal = calibrate(devices, throughput, family, precision)
    measured = measured_scores(throughput, family, precision, devices)
    tpu = np.where(devices["kind"].to_numpy() == "tpu", np.log(TPU_FAMILY_FACTOR[family]), 0.0)
    score = cal.log_score(devices) + tpu
    # an unmeasured device shares its architecture's typical miss: shift it by the
    # median log residual of the measured devices of the same architecture, where at least
    # MIN_ARCHITECTURE_MEASURED are (one data-centre B200, input-bound in Lambda's runs, dragged
    # every GeForce Blackwell card down to 0.67x an RTX 4090)
    arch = speed_family(devices)
    groups = (measured - score[measured.index]).groupby(arch[measured.index])
    residual = groups.median()[groups.size() >= MIN_ARCHITECTURE_MEASURED]
    estimate = score
    score = score + arch.map(residual).fillna(0.0).reindex(score.index).to_numpy()
    score = _at_measured_variant(score, estimate, measured, devices)
    score[measured.index] = measured
    is_measured = score.index.isin(measured.index)
    source = np.where(is_measured & (reference in measured.index), "measured", "estimated")
    out = pd.DataFrame({"relative_speed": np.exp(score - score[reference]), "speed_source": source},
                       index=score.index)
    out.loc[reference, "speed_source"] = "reference"
    for device, factor, base in yours:
        base_speed = 1.0 if base in (None, reference) else float(out["relative_speed"][base])
        out.loc[device, "relative_speed"] = factor * base_speed
        out.loc[device, "speed_source"] = "yours"
    return out


def _at_measured_variant(score: pd.Series, estimate: pd.Series, measured: pd.Series,
                         devices: pd.DataFrame) -> pd.Series:
    """An unmeasured card that is another card's chip at other clocks, power or memory
    (``variant_of`` in devices.csv: the Tesla P100 PCIe of the P100 SXM2, the V100 PCIe of the
    V100 SXM2), or the other way round, takes its measured variant's score, moved by the spec
    estimate's difference between the two: the variant's own miss, not its architecture's
    typical one. One chip runs the same kernels, so what the estimate misses on one it misses on
    the other; an estimate on specs alone put the V100 PCIe above the measured V100 SXM2 it is a
    slower clock of."""
    if "variant_of" not in devices:
        return score
    out = score.copy()
    pairs = [(a, b) for a, b in zip(devices["id"], devices["variant_of"]) if isinstance(b, str) and b]
    for device, variant in [*pairs, *((b, a) for a, b in pairs)]:  # either way round: one chip
        if variant in measured.index and device not in measured.index:
            out[device] = estimate[device] + float(measured[variant] - estimate[variant])
    return out


def speeds_at_size(speed: pd.DataFrame, step: Step | None) -> pd.DataFrame:
    """The speeds of :func:`relative_speed` (large work) at the workload's ``step``
    (:func:`at_size`), kept as ``speed_at_scale``; speeds you measured are yours, as given (they
    were measured on your job), and the reference stays 1."""
    out = speed.assign(speed_at_scale=speed["relative_speed"])
    if step is None:
        return out
    scaled = out["speed_source"].isin(["measured", "estimated"]).to_numpy()
    out.loc[scaled, "relative_speed"] = at_size(out.loc[scaled, "speed_at_scale"].to_numpy(dtype=float), step.share)
    return out


def reference_slowdown(w: Workload, devices: pd.DataFrame, step: Step | None) -> float:
    """The slowdown of the workload's fit on its reference GPU (:func:`slowdown_at`; 1 where it
    cannot hold the states): hours measured on a card that accumulates gradients already hold
    that cost, so a device's slowdown counts against the reference's own."""
    ref = place_reference(w, devices)
    return slowdown_at(ref.fit, w, step, 1.0) if math.isfinite(ref.fit.slowdown) else 1.0


def fit_table(w: Workload, devices: pd.DataFrame, throughput: pd.DataFrame, count: int = 1,
              step: Step | None = None) -> pd.DataFrame:
    """One row per device (``count`` of them in one machine): memory, need, verdict,
    micro-batch and relative speed at the workload's ``step`` (:func:`speeds_at_size`), with the
    speed on large work, the step's fixed share on the reference, and ``runs_at``: the speed the
    work runs at, its fit's slowdown against the reference's own (:func:`reference_slowdown`)
    counted, as a plan's hours on the device are (planner.decide.quotes)."""
    speed = speeds_at_size(relative_speed(devices, throughput, w.reference_gpu, w.family, w.precision,
                                          w.measured_speed), step)
    ref_slowdown = reference_slowdown(w, devices, step)
    share = step.share if step is not None else 0.0
    rows = []
    d: Any  # a row of the devices table
    for d in devices.itertuples():
        p = place(w, d, count)
        f = p.fit
        machine = data_parallel_speed(count, w.sharding, gpus=gpu_class(d.name))
        rel = float(speed["relative_speed"].loc[d.id]) * machine
        at_large = float(speed["speed_at_scale"].loc[d.id]) * machine
        slowdown = slowdown_at(f, w, step, float(speed["speed_at_scale"].loc[d.id]))
        rows.append(dict(device=d.id, kind=d.kind, vram_gb=d.vram_gb * count, need_gb=round(p.need.total_gb, 2),
                         replica_vram_gb=round(p.replica_vram_gb, 2), replicas=p.replicas,
                         verdict=f.verdict, micro_batch=f.micro_batch,
                         slowdown=round(slowdown, 3) if math.isfinite(slowdown) else None,
                         relative_speed=round(rel, 3) if np.isfinite(rel) else None,
                         runs_at=(round(rel * ref_slowdown / slowdown, 3)
                                  if np.isfinite(rel) and math.isfinite(slowdown) and slowdown > 0 else None),
                         speed_at_scale=round(at_large, 3) if np.isfinite(at_large) else None,
                         fixed_share=round(share, 4), speed_source=speed.at[d.id, "speed_source"], reason=f.reason,
                         assumptions="; ".join(p.need.notes)))
    return pd.DataFrame(rows)
