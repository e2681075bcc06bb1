"""A phase's work described as a job (a model and its data) instead of measured hours.

Most people who plan have not timed anything yet: they know "QLoRA on Llama 3.1 8B, 40 M
tokens, three epochs". A job is turned into hours on the workload's reference GPU in three
steps, each with its source:

1. **FLOPs.** Training a dense transformer costs about 6 N FLOPs per token (forward 2 N,
   backward 4 N: Kaplan et al. 2020, "Scaling Laws for Neural Language Models", eq. 2.1 and
   Table 1; Hoffmann et al. 2022) plus attention's 12 L d s per token (L layers, width d,
   sequence length s: Chowdhery et al. 2022, PaLM, Appendix B, the count MFU figures use).
   Adapters on a frozen base (LoRA, QLoRA) skip the frozen weights' gradients, half of the
   backward pass: 4 N per token, plus 6 per trainable (adapter) parameter; attention's backward
   is still computed (Hu et al. 2021, LoRA, Section 4). A recurrent network: 6 N per token. A
   vision CNN: 3 x its forward FLOPs per sample (backward about twice the forward, Kaplan et
   al.), the forward FLOPs read from its model card at its image size and scaled by the area.
2. **Utilisation.** The share of the reference GPU's dense 16-bit tensor peak a job of this size
   reaches (model FLOPs utilisation, MFU), by kind of device and model size, from published
   throughput tables and training runs (``pricing/data/utilisation.csv``), with its range.
   Adapter training has rows of its own (measured LoRA and QLoRA runs); QLoRA reaches a share
   of LoRA's (:data:`QLORA_MFU_FACTOR`).
3. **Hours** = FLOPs / (peak x MFU) on the reference GPU; every other device follows from the
   speed model's ratios (planner.model.workload.relative_speed), as for hours you measured.

The utilisation's range becomes the phase's work range: planned at its middle, it widens the
planned confidence and is drawn by the uncertainty analysis, as a range you write is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from pricing.ids import CatalogIds, DeviceSpec, JobFacts, ModelCard, SpeedRatio, Utilisation
from pricing.memo import Kept

from . import units, workload
from .scenario import Estimate, Job, Phase, Workload

#: Training FLOPs per parameter and token of full training (forward 2, backward 4; Kaplan et al.
#: 2020, eq. 2.1) and of training adapters on a frozen base (no weight gradients for the frozen
#: weights: forward 2, backward 2; Hu et al. 2021).
FULL_FLOPS_PER_PARAM = 6.0
FROZEN_FLOPS_PER_PARAM = 4.0
#: Attention's training FLOPs per token, in units of layers x width x sequence length: forward
#: QK^T and AV at 2 s d each, backward twice that (Chowdhery et al. 2022, PaLM, Appendix B).
ATTENTION_FLOPS = 12.0
#: Training FLOPs per forward FLOP of a vision model (backward about twice the forward).
TRAINING_PER_FORWARD = 3.0

#: QLoRA's utilisation as a share of LoRA's (low, typical, high): the 4-bit base is dequantised
#: for every matrix product. Measured 0.79 on an RTX 4090 and 0.98 on an A100 with torchtune
#: (README @30b8519, 2024-09-24 and @1814feb, 2024-11-18), 0.78 with PEFT and bitsandbytes on an
#: RTX 4090 (BenjaminBossan/peft-experiments, 2024-07-31), 0.74 with a GPTQ base (Qwen README,
#: 2023-10-11), 0.50-0.72 with LitGPT (config hub @00af8b0, resource tables @e567dbe).
QLORA_MFU_FACTOR = (0.5, 0.78, 1.0)
#: The utilisation table's rows for a method: pretraining (measured at scale, by model size), a
#: full fine-tune (short samples and stock trainers: lower), adapters on a frozen base.
UTILISATION_METHODS = {"pretrain": "pretrain", "full": "full", "lora": "adapters", "qlora": "adapters"}

#: Where a device's utilisation comes from, by id: GeForce, RTX workstation and the PCIe Ada and
#: Blackwell data-centre cards (same dies) reach consumer figures.
CONSUMER_PREFIXES = ("rtx-", "gtx-", "titan-", "quadro-")
CONSUMER_IDS = ("l4", "l40", "l40s")
HOPPER_ARCHITECTURES = ("hopper", "blackwell")
#: The card each kind of device's utilisation was measured on (utilisation.csv's sources: LLM
#: Foundry and torchtune on A100s, LLM Foundry on H100s, torchtune and PEFT on RTX 4090s); TPUs
#: have none (their figures are the PaLM run's and the data-centre GPUs').
UTILISATION_MEASURED_ON = {"data-centre": "a100-80gb", "hopper": "h100-sxm", "consumer": "rtx-4090"}
_SPEEDS = Kept()


class JobError(ValueError):
    """A job that cannot be turned into hours (the message says what to add)."""


def device_class(device: str, spec: DeviceSpec) -> str:
    """The row of the utilisation table a device reads (``utilisation.device_class``)."""
    if spec.kind == "tpu":
        return "tpu"
    if device.startswith(CONSUMER_PREFIXES) or device in CONSUMER_IDS:
        return "consumer"
    return "hopper" if spec.architecture in HOPPER_ARCHITECTURES else "data-centre"


def utilisation_row(rows: tuple[Utilisation, ...], cls: str, params: float, method: str,
                    family: str | None = None) -> Utilisation:
    """The utilisation of a kind of device training a model of ``params`` parameters by ``method``:
    the row measured on the workload's ``family`` where there is one (a CNN's convolutions reach a
    far smaller share of the tensor peak than a transformer's matrix products: ResNet-50 12 % of an
    A100 where LLMs reach 30-60 %), else the row for every family."""
    methods = UTILISATION_METHODS[method]
    for fam in ([family, None] if family is not None else [None]):
        for r in rows:
            if (r.family == fam and r.device_class == cls and r.methods == methods
                    and r.params_from <= params < r.params_to):
                return r
    raise JobError(f"the catalog has no utilisation for {methods} on {cls} devices at {params:.3g} parameters")


def peak_tflops(device: str, spec: DeviceSpec, precision: str) -> float:
    """The dense matrix peak a run at ``precision`` can use [TFLOPS], by the speed model's rule
    (planner.model.workload.effective_tflops_of); FP8 counts as mixed precision, its gain applied to
    the hours (:func:`estimate`)."""
    blank = lambda x: math.nan if x is None else float(x)
    peak = float(workload.effective_tflops_of([spec.kind], [spec.architecture], [blank(spec.fp32_tflops)],
                                              [blank(spec.fp16_tensor_tflops)], workload.memory_precision(precision))[0])
    if not math.isfinite(peak) or peak <= 0:
        raise JobError(f"the catalog gives no compute peak for {device}: give the phase's gpu_hours")
    return peak


def data_words(tokens: float | None, samples: float | None, epochs: float | None) -> str:
    """What a run processes, in the terms its phase gives it: "1.8M samples (355M tokens)" for
    a transformer's samples (30 epochs of 60k images of 197 patches), "240M tokens", "4.8M
    samples" for a CNN (no tokens)."""
    seen = f"{units.format_count((samples or 0) * (epochs or 1))} samples"
    if tokens is None:
        return seen
    return f"{seen} ({units.format_count(tokens)} tokens)" if samples is not None else f"{units.format_count(tokens)} tokens"


def training_flops(job: Job, w: Workload, card: ModelCard | None) -> tuple[float, float | None, tuple[str, ...]]:
    """(one run's training FLOPs, tokens processed or None, what was assumed)."""
    if w.family == "cnn":
        if job.samples is None:
            raise JobError("a CNN's job is given as samples (with epochs), not tokens")
        return cnn_flops_per_sample(w, card) * job.samples * job.epochs, None, ()
    if job.tokens is not None:
        tokens = job.tokens * job.epochs
    else:
        if w.sequence_length is None:
            raise JobError("samples need the tokens in each: set workload.sequence_length (or give tokens)")
        tokens = float(job.samples or 0.0) * w.sequence_length * job.epochs
    per_token, notes = flops_per_token(w, card)
    return per_token * tokens, tokens, notes


def cnn_flops_per_sample(w: Workload, card: ModelCard | None) -> float:
    """A vision CNN's training FLOPs per sample: 3 x its forward FLOPs at the workload's image
    size (scaled by the area from its card's)."""
    if card is None or card.forward_gflops is None:
        raise JobError("a CNN job needs the FLOPs of one sample: name its workload.model (resnet-50) "
                       "or give the phase's gpu_hours")
    size = w.image_size or card.image_size
    if size and card.image_size and size < card.image_size * MIN_IMAGE_SHARE:
        raise JobError(f"the utilisation of CNNs was measured on {card.image_size} px images; at {size} px the "
                       "network is not the same one (CIFAR-style variants drop the stem's downsampling, so "
                       "the FLOPs do not scale with the area) and small images leave a GPU idle between "
                       "kernels: give the phase's gpu_hours (time a few epochs)")
    scale = (size / card.image_size) ** 2 if size and card.image_size else 1.0
    return TRAINING_PER_FORWARD * card.forward_gflops * 1e9 * scale


#: The smallest image a CNN's job is estimated at, as a share of its card's side: a ResNet-18 on
#: CIFAR-10 (32 px) scaled down from 224 px came out at 0.06 h for 200 epochs on a T4. The CIFAR
#: variant keeps its first stage at full resolution (many times the FLOPs of the scaled ImageNet
#: network), and at 32 px a GPU idles between kernels; no measurement here covers either.
MIN_IMAGE_SHARE = 0.5


def flops_per_token(w: Workload, card: ModelCard | None) -> tuple[float, tuple[str, ...]]:
    """(training FLOPs per token of a transformer or RNN, what was assumed): the weights' (full
    training or adapters on a frozen base) and, for a transformer, attention's (module docstring)."""
    notes: list[str] = []
    full = w.method in workload.FULL_METHODS
    per_token = (FULL_FLOPS_PER_PARAM if full else FROZEN_FLOPS_PER_PARAM) * w.params
    if not full:
        adapters, _ = workload.trainable_params(w)
        per_token += FULL_FLOPS_PER_PARAM * adapters
    if w.family == "transformer":
        layers, hidden = shape_of(w, card)
        if card is None or not (card.layers and card.hidden_size):
            notes.append(f"attention counted for {layers} layers of width {hidden} (the shape of a "
                         f"{units.format_count(w.params)}-parameter transformer; name workload.model for its own)")
        seq = w.sequence_length or workload.DEFAULT_SEQUENCE_LENGTH
        if w.sequence_length is None:
            notes.append(f"attention counted at {seq} tokens a sample (set workload.sequence_length)")
        per_token += ATTENTION_FLOPS * layers * hidden * seq
    return per_token, tuple(notes)


def shape_of(w: Workload, card: ModelCard | None) -> tuple[int, int]:
    """(layers, hidden size) of a transformer: its named model's, else the shape of a transformer
    of its size (planner.model.workload.transformer_shape)."""
    if card is not None and card.layers and card.hidden_size:
        return card.layers, card.hidden_size
    layers, hidden, _ = workload.transformer_shape(w.params)
    return layers, hidden


def speed_ratio_of(devices: pd.DataFrame, throughput: pd.DataFrame) -> SpeedRatio:
    """A device's speed over another's on large work, by the speed model
    (planner.model.workload.relative_speed) over these tables: one table per (other card, family,
    precision), kept per tables in a process (pricing.memo)."""
    def ratio(device: str, other: str, family: str, precision: str) -> tuple[float, bool] | None:
        if other not in devices["id"].to_numpy():
            return None
        value = _SPEEDS.get((devices, throughput), (other, family, precision),
                            lambda: _speeds_over(devices, throughput, other, family, precision)).get(device)
        return value if value is not None and math.isfinite(value[0]) and value[0] > 0 else None
    return ratio


def _speeds_over(devices: pd.DataFrame, throughput: pd.DataFrame, other: str, family: str,
                 precision: str) -> dict[str, tuple[float, bool]]:
    """Each device's speed over ``other`` on large work, and whether both were measured."""
    speed = workload.relative_speed(devices, throughput, other, family, precision)
    return {str(d): (float(v), src == "measured")
            for d, v, src in zip(speed.index, speed["relative_speed"], speed["speed_source"])}


def usable_peak(w: Workload, spec: DeviceSpec, specs: Mapping[str, DeviceSpec] | None = None,
                speed_ratio: SpeedRatio | None = None, mfu_high: float = 1.0) -> tuple[float, str | None]:
    """(The peak the utilisation table's share applies to on the reference [TFLOPS], the card that
    sets it or None.) A utilisation was measured on one card of each kind
    (:data:`UTILISATION_MEASURED_ON`); on another card the same rate follows from the measured
    card's rate times the speed model's ratio of the two (measured or estimated), so one job gives
    an A100 the same hours whether an A10, a T4 or the A100 is its reference: an RTX 3090 runs at
    0.62x an RTX 4090, more than their peaks (71 and 165 TFLOPS) say; a T4 at 70 W at 0.14x an A100
    on large transformer work with 0.21x its peak.

    The card's own peak bounds it: at the utilisation's high end (``mfu_high``) no card runs past
    its peak. The share is of a tensor-core peak; a card without tensor cores at the job's
    precision reaches far more of its own (a P100 trains ResNet-50 in fp32 at about half its 10.6
    TFLOPS), so taking the share of its own peak, as before, made a P100 4.5x and a T4 in fp32
    2.5x too slow on a CNN."""
    own = _job_peak(w, spec)
    anchor = UTILISATION_MEASURED_ON.get(device_class(w.reference_gpu, spec))
    if anchor is None or anchor == w.reference_gpu or speed_ratio is None or specs is None or anchor not in specs:
        return own, None
    found = speed_ratio(w.reference_gpu, anchor, w.family, w.precision)
    if found is None:
        return own, None
    try:
        anchored = _job_peak(w, specs[anchor]) * found[0]
    except JobError:
        return own, None
    return min(anchored, own / mfu_high), anchor


def reference_tflops(w: Workload, spec: DeviceSpec, rows: tuple[Utilisation, ...],
                     specs: Mapping[str, DeviceSpec] | None = None, speed_ratio: SpeedRatio | None = None) -> float:
    """What the workload's reference GPU reaches on the job's own kind of work [TFLOPS]: its usable
    peak at the precision (:func:`usable_peak`, with FP8's gain where it trains in FP8) x the
    typical utilisation of its kind of device at the model's size and method (x QLoRA's share of
    LoRA's)."""
    _, (_, mid, high) = _utilisation(w, spec, rows)
    return usable_peak(w, spec, specs, speed_ratio, high)[0] * mid


def _utilisation(w: Workload, spec: DeviceSpec, rows: tuple[Utilisation, ...]
                 ) -> tuple[Utilisation, tuple[float, float, float]]:
    """The utilisation row of the reference's kind of device at the model's size and method, and
    its (low, typical, high) share of the peak, QLoRA's at its share of LoRA's."""
    u = utilisation_row(rows, device_class(w.reference_gpu, spec), w.params, w.method, w.family)
    factors = QLORA_MFU_FACTOR if w.method == "qlora" else (1.0, 1.0, 1.0)
    return u, (u.mfu_low * factors[0], u.mfu * factors[1], u.mfu_high * factors[2])


def _job_peak(w: Workload, spec: DeviceSpec) -> float:
    """The reference's peak for the job [TFLOPS]: FP8's gain where it trains in FP8 (the same
    utilisation of a faster path)."""
    peak = peak_tflops(w.reference_gpu, spec, w.precision)
    return peak * workload.FP8_SPEEDUP if w.precision == "fp8" and spec.architecture in workload.FP8_ARCHITECTURES else peak


def step_of(w: Workload, card: ModelCard | None, spec: DeviceSpec, rows: tuple[Utilisation, ...],
            specs: Mapping[str, DeviceSpec] | None = None, speed_ratio: SpeedRatio | None = None) -> workload.Step | None:
    """One micro-batch's step of the workload (planner.model.workload.Step): ``batch_size``
    samples of ``sequence_length`` tokens for a transformer (its layers from its named model, else
    from its size); its compute on the reference at the rate large work reaches
    (:func:`reference_tflops`). None for a CNN or an RNN, and where the reference has no peak or
    utilisation: their speeds are those of large work (:data:`workload.UNKNOWN_STEP`).

    A CNN has none because the fixed time per layer (:data:`workload.STEP_FIXED_S_PER_LAYER`) was
    fitted on transformer blocks, each a few hundred kernels; a convolution is a handful. Applied
    to ResNet-50's 50 layers at batch 256 it made 62 % of an A100's step fixed and put a T4 at
    0.39x an A100 (large work, as Lambda's ResNet-50 runs measure it: 0.20x), which the
    leave-one-job-out check on CNN pairs (a median 5-7 % off at large work) does not support."""
    if w.family != "transformer":
        return None
    try:
        layers, _ = shape_of(w, card)
        flops = flops_per_token(w, card)[0] * w.batch_size * (w.sequence_length or workload.DEFAULT_SEQUENCE_LENGTH)
        rate = reference_tflops(w, spec, rows, specs, speed_ratio)
    except JobError:
        return None
    return workload.Step(flops, int(layers), flops / (rate * 1e12))


def step(w: Workload, facts: CatalogIds | JobFacts, speed_ratio: SpeedRatio | None = None) -> workload.Step | None:
    """The workload's step (:func:`step_of`) from the catalog's named models, device peaks and
    utilisation (``Catalog.job_facts()``, or its ids) and the speed model (``speed_ratio``, else
    the ids')."""
    spec = facts.device_specs.get(w.reference_gpu)
    ratio = speed_ratio if speed_ratio is not None else getattr(facts, "speed_ratio", None)
    return None if spec is None else step_of(w, facts.models.get(w.model or ""), spec, facts.utilisation,
                                             facts.device_specs, ratio)


def estimate(job: Job, w: Workload, card: ModelCard | None, spec: DeviceSpec,
             rows: tuple[Utilisation, ...], specs: Mapping[str, DeviceSpec] | None = None,
             speed_ratio: SpeedRatio | None = None) -> Estimate:
    """The job's FLOPs and its hours' range on the workload's reference GPU (module docstring),
    the utilisation applying to its usable peak (:func:`usable_peak`)."""
    flops, tokens, notes = training_flops(job, w, card)
    ref = w.reference_gpu
    cls = device_class(ref, spec)
    u, (low, mid, high) = _utilisation(w, spec, rows)
    peak = _job_peak(w, spec)
    usable, anchor = usable_peak(w, spec, specs, speed_ratio, high)
    extra = ("an estimate" if "estimate" in u.notes else "measured runs")
    if anchor is not None:
        bound = usable >= peak / high * (1 - 1e-12)
        notes = (*notes, f"the utilisation was measured on {anchor} cards: on {ref} it applies to {usable:,.1f} "
                 + (f"TFLOPS, so that at its high end ({high:.0%}) {ref} reaches its own peak ({peak:,.1f} TFLOPS; "
                    f"{anchor}'s rate times {ref}'s speed over it by the speed model would be more)" if bound else
                    f"TFLOPS, {anchor}'s rate times {ref}'s speed over it by the speed model (its own peak: "
                    f"{peak:,.0f} TFLOPS)"))
    notes = (*notes, f"utilisation {low:.0%}-{high:.0%} of {ref}'s {usable:,.0f} TFLOPS ({cls} devices, "
             f"{units.format_count(w.params)} parameters, {w.method}; {extra})")
    return Estimate(flops, tokens, ref, peak, cls, low, mid, high, u.source, notes,
                    usable if anchor is not None else None, anchor)


def estimate_table(s_phases: Sequence[Phase], w: Workload, devices: pd.DataFrame, throughput: pd.DataFrame,
                   at: workload.Step | None = None) -> pd.DataFrame:
    """One row per phase and catalog device: the work's FLOPs, its hours on one such device (the
    reference's hours over the device's speed, with the utilisation's range where the hours come
    from the job), whether it fits, and where the hours came from (``planner estimate``)."""
    fits = workload.fit_table(w, devices, throughput, step=at).set_index("device")
    rows = []
    for ph in s_phases:
        e = ph.job_estimate
        ref_h = ph.gpu_hours_per_run
        low_h, high_h = e.hours_range if (e is not None and ph.hours_from_job) else (ref_h, ref_h)
        for device, f in fits.iterrows():
            # as a plan counts its hours: at the speed the work runs at, the fit's slowdown too (a
            # device that cannot hold the model, and a reference that cannot: at its speed)
            speed = f["runs_at"] if f["runs_at"] is not None and f["runs_at"] == f["runs_at"] else f["relative_speed"]
            ok = speed is not None and speed == speed and speed > 0
            rows.append(dict(
                phase=ph.name, device=device, kind=f["kind"], verdict=f["verdict"],
                relative_speed=f["relative_speed"], runs_at=speed, speed_source=f["speed_source"],
                hours_from="job" if ph.hours_from_job else "gpu_hours",
                flops=float(f"{e.flops:.4g}") if e is not None else None,
                gpu_hours=round(ref_h / speed, 2) if ok else None,
                gpu_hours_low=round(low_h / speed, 2) if ok else None,
                gpu_hours_high=round(high_h / speed, 2) if ok else None,
                utilisation=round(e.mfu, 4) if e is not None else None,
                utilisation_low=round(e.mfu_low, 4) if e is not None else None,
                utilisation_high=round(e.mfu_high, 4) if e is not None else None,
                utilisation_source=e.utilisation_source if e is not None else None))
    return pd.DataFrame(rows)
