"""A phase described as a job (model and data) instead of measured hours: FLOPs and hours by
hand from the cited formulas, the utilisation's distribution against an independent integral,
named models, which figure wins, and bad input located."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import integrate

from planner.cli import main
from planner.model import job
from planner.model.scenario import Estimate, inverse_moments
from pricing.errors import InputError

from .conftest import ROOT, TODAY

BASE = """\
name: job
start: 2027-01-04
electricity: 0.20 USD/kWh
workload:
{workload}
phases:
  train:
{phase}
    deadline: 2027-03-31
consider: {{rent: ["vast:*"], buy: [], free: []}}
"""


def text(workload: str, phase: str) -> str:
    return BASE.format(workload="\n".join("  " + x for x in workload.strip().splitlines()),
                       phase="\n".join("    " + x for x in phase.strip().splitlines()))


def load_job(load, workload: str, phase: str):
    return load(text(workload, phase))


GPT2 = "model: gpt2\nmethod: pretrain\nreference_gpu: a100-80gb"


def test_pretraining_flops_and_hours_by_hand(load):
    # GPT-2 small from the catalog: 124M parameters, 12 layers of width 768, 1024 tokens a sample.
    # Per token: 6 N (Kaplan et al. 2020) + 12 L d s (PaLM, App. B) = 744.0e6 + 113.2e6 FLOPs.
    s = load_job(load, GPT2, "tokens: 10B")
    e = s.phases[0].job_estimate
    per_token = 6 * 124e6 + 12 * 12 * 768 * 1024
    assert e.flops == pytest.approx(per_token * 10e9, rel=1e-12)
    # an A100's 312 TFLOPS at 25-40-60 % (the data-centre pretraining row below 200M parameters)
    assert (e.mfu_low, e.mfu, e.mfu_high) == (0.25, 0.40, 0.60)
    assert e.hours_typical == pytest.approx(per_token * 10e9 / (312e12 * 0.40) / 3600, rel=1e-12)
    assert e.hours_range == pytest.approx((per_token * 10e9 / (312e12 * 0.60) / 3600,
                                           per_token * 10e9 / (312e12 * 0.25) / 3600), rel=1e-12)
    # the plan counts on the mean hours under the triangular utilisation, and says it estimated them
    assert s.phases[0].gpu_hours_per_run == pytest.approx(e.hours_planned)
    assert s.phases[0].hours_from_job


def test_epochs_multiply_the_tokens_and_runs_multiply_the_hours(load):
    one = load_job(load, GPT2, "tokens: 1B").phases[0]
    three = load_job(load, GPT2, "tokens: 1B\nepochs: 3\nruns: 2").phases[0]
    assert three.job_estimate.flops == pytest.approx(3 * one.job_estimate.flops)
    assert three.gpu_hours == pytest.approx(2 * 3 * one.gpu_hours)


def test_adapters_cost_four_flops_a_parameter_plus_six_for_each_adapter(load):
    # LoRA: forward 2N and the activations' gradients 2N through the frozen base, 6 per adapter
    # parameter, attention as in full training (Hu et al. 2021); adapters' own utilisation row
    s = load_job(load, GPT2.replace("pretrain", "lora") + "\ntrainable_params: 2M", "tokens: 1B")
    e = s.phases[0].job_estimate
    assert e.flops == pytest.approx((4 * 124e6 + 6 * 2e6 + 12 * 12 * 768 * 1024) * 1e9, rel=1e-12)
    assert (e.mfu_low, e.mfu, e.mfu_high) == (0.15, 0.38, 0.50)
    # QLoRA: the same FLOPs at 0.5-0.78-1.0 of LoRA's utilisation
    q = load_job(load, GPT2.replace("pretrain", "qlora") + "\ntrainable_params: 2M", "tokens: 1B").phases[0].job_estimate
    assert q.flops == pytest.approx(e.flops)
    assert (q.mfu_low, q.mfu, q.mfu_high) == pytest.approx((0.15 * 0.5, 0.38 * 0.78, 0.50 * 1.0))


def test_a_cnn_job_is_three_forward_passes_a_sample_scaled_by_the_image_area(load):
    # ResNet-50: 4.09 G multiply-adds at 224 px (torchvision) = 8.18 GFLOPs forward
    base = "model: resnet-50\nmethod: pretrain\nreference_gpu: a100-80gb"
    e = load_job(load, base, "samples: 1.28M\nepochs: 90").phases[0].job_estimate
    assert e.flops == pytest.approx(3 * 8.18e9 * 1.28e6 * 90, rel=1e-12)
    big = load_job(load, base + "\nimage_size: 448", "samples: 1.28M\nepochs: 90").phases[0].job_estimate
    assert big.flops == pytest.approx(4 * e.flops)
    # half the side still scales (a quarter of the FLOPs); below it the job is not estimated: CIFAR's
    # 32 px is another network and leaves a GPU idle, which no measurement here covers
    half = load_job(load, base + "\nimage_size: 112", "samples: 1.28M\nepochs: 90").phases[0].job_estimate
    assert half.flops == pytest.approx(e.flops / 4)
    with pytest.raises(InputError) as info:
        load_job(load, base + "\nimage_size: 32", "samples: 50k\nepochs: 200")
    assert "at 32 px the network is not the same one" in str(info.value) and "give the phase's gpu_hours" in str(
        info.value)


def test_a_cnn_reaches_the_utilisation_measured_on_cnns_not_the_llms(load):
    # ResNet-50 for 90 epochs of ImageNet on an A100 80GB: the LLM rows (30 % of 312 TFLOPS typical)
    # gave 7.6 h; Lambda's PyTorch benchmark trains it at 1,582 images/s, 20.2 h. The CNN rows
    # (utilisation.csv, family cnn) put the typical share at 1,582 x 24.54 GFLOPs / 312 TFLOPS
    base = "model: resnet-50\nmethod: pretrain\nreference_gpu: a100-80gb"
    e = load_job(load, base, "samples: 1.28M\nepochs: 90").phases[0].job_estimate
    assert (e.mfu_low, e.mfu, e.mfu_high) == (0.109, 0.124, 0.281)
    typical_h = e.flops / (e.mfu * 312e12) / 3600
    assert typical_h == pytest.approx(1.28e6 * 90 / 1582 / 3600, rel=0.005)
    # a transformer on the same card keeps the rows for every family; a CNN on a kind of device
    # without CNN rows of its own (consumer, in the test catalog) falls back to them
    t = load_job(load, "family: transformer\nparams: 100M\nsequence_length: 256\nreference_gpu: a100-80gb\n"
                       "method: pretrain", "tokens: 1B").phases[0].job_estimate
    assert (t.mfu_low, t.mfu, t.mfu_high) == (0.25, 0.40, 0.60)
    c = load_job(load, "model: resnet-50\nmethod: pretrain\nreference_gpu: rtx-4090",
                 "samples: 1.28M\nepochs: 90").phases[0].job_estimate
    assert c.mfu == 0.40


def test_the_hours_are_booked_at_their_quantile_not_a_normals(load):
    # Hours go as 1 / utilisation: skewed. Booked at mean + z sd, a free-tier BERT plan "met its
    # deadline at 95 %" in 92.5 % of its own draws. At the plan's confidence the booked spread puts
    # the hours at their quantile, checked against a million draws of the utilisation
    from statistics import NormalDist

    e = Estimate(1e18, None, "a100-80gb", 312.0, "data-centre", 0.12, 0.30, 0.69, "s", ())
    rng = np.random.default_rng(7)
    hours = 1.0 / rng.triangular(0.12, 0.30, 0.69, 1_000_000)
    for chance in (0.9, 0.949, 0.975):
        z = NormalDist().inv_cdf(chance)
        booked = hours.mean() * (1 + z * e.hours_rel_sd_at(chance))
        assert booked == pytest.approx(np.quantile(hours, chance), rel=2e-3)
        assert e.hours_rel_sd_at(chance) > e.hours_rel_sd  # the normal's would fall short
    # a phase described by its job is booked so (quotes and the stated chance); measured hours are not
    ph = load_job(load, GPT2, "tokens: 2B").phases[0]
    assert ph.job_hours_rel_sd(0.949) == ph.job_estimate.hours_rel_sd_at(0.949) > 0
    assert load_job(load, GPT2, "gpu_hours: 100").phases[0].job_hours_rel_sd(0.949) == 0.0


def test_a_vision_transformer_at_another_image_size_has_that_sizes_patches(load):
    # ViT-B/16: 197 tokens at 224 px (14 x 14 patches of 16 px and a class token). Fine-tuned at
    # 384 px it keeps the patch size: (384 / 16)^2 + 1 = 577 tokens, about 3x the FLOPs an image;
    # the image size was ignored and the job's hours came out a third of what they are
    vit = "model: vit-b-16\nmethod: full\nreference_gpu: a100-80gb"
    at224 = load_job(load, vit, "samples: 1M")
    at384 = load_job(load, vit + "\nimage_size: 384", "samples: 1M")
    assert at224.workload.sequence_length == 197 and at384.workload.sequence_length == 577
    assert at384.phases[0].job_estimate.tokens == 577e6
    # a length you give stands; a model without an image size (GPT-2) keeps its card's
    own = load_job(load, vit + "\nimage_size: 384\nsequence_length: 300", "samples: 1M")
    assert own.workload.sequence_length == 300
    assert load_job(load, "model: gpt2\nmethod: full\nreference_gpu: a100-80gb\nimage_size: 384",
                    "samples: 1M").workload.sequence_length == 1024


def test_the_answer_names_a_jobs_data_as_its_phase_gives_it(load, tmp_path):
    # 60k images of a ViT-B/16 for 30 epochs: 1.8M samples of 197 patches, 355M tokens. The answer
    # said "355M tokens" alone of a phase its user gave in images; tokens stay as given, and a CNN
    # has samples only (ResNet-50: 1.28M images for 90 epochs, 115M samples)
    import planner
    from planner.report import render_text

    vit = load_job(load, "model: vit-b-16\nmethod: full\nreference_gpu: a100-80gb", "samples: 60k\nepochs: 30")
    assert job.data_words(vit.phases[0].job_estimate.tokens, 60e3, 30) == "1.8M samples (355M tokens)"
    assert job.data_words(240e6, None, 2) == "240M tokens"
    assert job.data_words(None, 1.28e6, 90) == "115M samples"
    said = render_text(planner.plan(vit, trials=0, alternatives=False, breakevens=False))
    assert "estimated from the job, not measured: 1.8M samples (355M tokens), " in said
    path = tmp_path / "vit.yaml"
    path.write_text(text("model: vit-b-16\nmethod: full\nreference_gpu: a100-80gb", "samples: 60k\nepochs: 30"))
    result = CliRunner().invoke(main, ["estimate", str(path), "--today", "2026-11-22"])
    assert "1.8M samples (355M tokens), " in result.output, result.output


@pytest.mark.parametrize(("framework", "said"), [("pytorch", True), ("jax", False)])
def test_estimate_says_a_pytorch_plan_leaves_tpus_out(tmp_path, framework, said):
    # planner estimate lists TPU hours beside the GPUs' (the hours hold); a PyTorch plan leaves TPUs
    # out (PyTorch/XLA has no measured speed), and the estimate read as if they were in play
    path = tmp_path / "g.yaml"
    path.write_text(f"framework: {framework}\n" + text(GPT2, "tokens: 20M"), encoding="utf-8")
    result = CliRunner().invoke(main, ["estimate", str(path), "--today", "2026-11-22"])
    assert result.exit_code == 0 and "\ntpu-" in result.output, result.output
    assert ("TPUs: plans leave them out: PyTorch runs on TPUs only through PyTorch/XLA" in result.output) is said


def test_samples_of_a_transformer_are_samples_times_their_tokens(load):
    w = "family: transformer\nparams: 100M\nsequence_length: 256\nreference_gpu: a100-80gb\nmethod: pretrain"
    by_samples = load_job(load, w, "samples: 1M\nepochs: 2").phases[0].job_estimate
    by_tokens = load_job(load, w, "tokens: 512M").phases[0].job_estimate
    assert by_samples.flops == pytest.approx(by_tokens.flops) and by_samples.tokens == 512e6


def test_a_named_model_fills_what_its_card_says(load):
    s = load_job(load, "model: llama-3.1-8b\nreference_gpu: a100-80gb", "gpu_hours: 10")
    w = s.workload
    assert (w.model, w.family, w.params) == ("llama-3.1-8b", "transformer", 8e9)
    assert w.sequence_length is None  # an 8B model's training length is yours to give, not its 128k context
    # its own shape is used for attention: 32 layers of 4096
    e = load_job(load, "model: llama-3.1-8b\nreference_gpu: a100-80gb\nsequence_length: 2048",
                 "tokens: 1M").phases[0].job_estimate
    assert e.flops == pytest.approx((6 * 8e9 + 12 * 32 * 4096 * 2048) * 1e6, rel=1e-12)
    # what you give wins over the card
    assert load_job(load, "model: gpt2\nparams: 130M\nreference_gpu: a100-80gb", "gpu_hours: 1").workload.params == 130e6


def test_gpu_hours_given_win_over_the_job_and_the_answer_says_so(load, catalog):
    import planner

    s = load_job(load, GPT2, "gpu_hours: 50\ntokens: 10B")
    ph = s.phases[0]
    assert ph.gpu_hours_per_run == 50 and not ph.hours_from_job and ph.job_estimate is not None
    p = planner.plan(s, catalog, alternatives=False)
    assert any(f.startswith("train: your gpu_hours (50.0 h a run) are used") for f in p.assumed_figures)
    out = planner.to_dict(p)["phases"][0]
    assert out["work_from"] == "gpu_hours" and out["job"]["gpu_hours_typical"] == pytest.approx(
        ph.job_estimate.hours_typical, rel=1e-3)
    estimated = planner.to_dict(planner.plan(load_job(load, GPT2, "tokens: 10B"), catalog, alternatives=False))
    assert estimated["phases"][0]["work_from"] == "job"
    assert any("estimated from the job, not measured" in f for f in estimated["assumed_figures"])


@pytest.mark.parametrize("a, c, b", [(0.15, 0.45, 0.65), (0.25, 0.25, 0.6), (0.1, 0.5, 0.5), (0.3, 0.4, 0.41)])
def test_the_mean_hours_are_the_integral_over_the_triangular_utilisation(a, c, b):
    def pdf(x):
        return 2 * (x - a) / ((b - a) * (c - a)) if x < c else 2 * (b - x) / ((b - a) * (b - c))
    m1 = integrate.quad(lambda x: pdf(x) / x, a, b, points=[c])[0]
    m2 = integrate.quad(lambda x: pdf(x) / x ** 2, a, b, points=[c])[0]
    assert inverse_moments(a, c, b) == pytest.approx((m1, m2), rel=1e-9)


def test_the_uncertainty_analysis_draws_the_hours_the_plan_counts_on(load, catalog):
    import planner

    s = load_job(load, GPT2, "tokens: 3B")
    p = planner.plan(s, catalog, uncertainty=4000)
    work = next(i for i in p.uncertainty.inputs if i.name == "phases.train.gpu_hours")
    # the draws' mean is the plan's hours (Monte Carlo, 4000 draws: within 2 %)
    assert np.mean(work.draws) == pytest.approx(s.phases[0].gpu_hours_per_run, rel=0.02)
    e = s.phases[0].job_estimate
    assert np.std(work.draws) / np.mean(work.draws) == pytest.approx(e.hours_rel_sd, rel=0.05)


def test_a_point_utilisation_has_no_spread():
    e = Estimate(1e18, 1e9, "a100-80gb", 312.0, "data-centre", 0.4, 0.4, 0.4, "", ())
    assert e.hours_planned == pytest.approx(e.hours_typical) and e.hours_rel_sd == pytest.approx(0.0, abs=1e-9)


def test_a_what_if_on_the_workload_re_estimates_the_hours(load, catalog):
    from planner.model import edits

    alpaca = (ROOT / "scenarios" / "alpaca.yaml").read_text(encoding="utf-8")
    s = load(alpaca)
    # a what-if does not set workload keys in place when hours follow from them: it reads the file
    # again with the --set, so the job is estimated again
    assert edits.with_value(s, "workload.params", "13.4B", catalog.ids()) is None
    assert edits.with_value(s, "phases.finetune.runs", 3, catalog.ids()) is not None
    double = load(alpaca, sets=["workload.params=13.4B"]).phases[0]
    # 6 N dominates: twice the parameters, twice the FLOPs but for attention (same shape rule)
    assert double.job_estimate.flops / s.phases[0].job_estimate.flops == pytest.approx(2.0, rel=0.05)
    assert double.gpu_hours_per_run > 1.9 * s.phases[0].gpu_hours_per_run
    # gpu_hours set by a what-if are yours: the job no longer gives them
    given = edits.with_value(s, "phases.finetune.gpu_hours", "20 h", catalog.ids())
    assert given.phases[0].gpu_hours_per_run == 20 and not given.phases[0].hours_from_job


def bad(tmp_path, workload: str, phase: str) -> str:
    f = tmp_path / "s.yaml"
    f.write_text(text(workload, phase), encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(f), "--today", TODAY.isoformat()])
    assert result.exit_code == 2, result.output
    return result.output


def test_an_unknown_model_is_located_with_a_suggestion(tmp_path):
    out = bad(tmp_path, "model: llama-3.1-8\nreference_gpu: a100-80gb", "tokens: 1M")
    assert "s.yaml:5:10: workload.model: unknown model 'llama-3.1-8' (did you mean 'llama-3.1-8b'" in out
    assert out.count("\n") == 1  # one problem: the unknown name, not the family and parameters it would fill


@pytest.mark.parametrize("phase, where, message", [
    ("tokens: 40 GB", "phases.train.tokens", "expected a count of tokens such as 40M or 1.2T, got '40 GB'"),
    ("tokens: 40M\nepochs: -1", "phases.train.epochs", "expected a value above zero"),
    ("epochs: 3", "phases.train.epochs", "epochs multiply tokens or samples: give one of them"),
    ("tokens: 1M\nsamples: 1K", "phases.train.samples", "give tokens or samples, not both"),
    ("samples: 1K", "phases.train.samples", "samples need the tokens in each: set workload.sequence_length"),
    ("runs: 2", "phases.train", "missing required key 'phases.train.gpu_hours' (or describe the job: tokens or samples)"),
])
def test_bad_job_input_is_located(tmp_path, phase, where, message):
    out = bad(tmp_path, "family: transformer\nparams: 100M\nreference_gpu: a100-80gb", phase)
    assert f": {where}: " in out and message in out, out


def test_samples_it_cannot_read_are_one_problem_not_two(tmp_path):
    """'50k imgs' is samples written wrong, not epochs without samples: one message, with the word meant."""
    out = bad(tmp_path, "model: gpt2\nmethod: pretrain\nreference_gpu: a100-80gb", "samples: 50k imgs\nepochs: 3")
    assert "phases.train.samples: expected a count of samples such as 40M or 1.2T, got '50k imgs' (did you mean " \
           "'images'" in out, out
    assert "epochs multiply" not in out, out


@pytest.mark.parametrize("written", ["sequences", "images", "examples"])
def test_a_dataset_counted_under_its_own_word_is_one_problem(tmp_path, written):
    """'sequences: 50k' is samples under another name: one message naming 'samples', not also a
    missing reference GPU, missing gpu_hours and epochs without samples."""
    out = bad(tmp_path, "model: gpt2\nmethod: pretrain", f"{written}: 50k\nepochs: 3")
    assert f"phases.train.{written}: unknown key (did you mean 'samples'" in out, out
    assert out.count("\n") == 1, out


def test_tokens_take_a_suffix_and_the_word():
    from planner.model import units

    assert units.parse_amount("40M tokens", "tokens") == 40e6
    assert units.parse_amount("1.2T", "tokens") == 1.2e12
    assert units.parse_amount(5000, "tokens") == 5000
    with pytest.raises(ValueError, match=r"got '40M samples' \(samples are counted under samples:\)"):
        units.parse_amount("40M samples", "tokens")
    with pytest.raises(ValueError, match=r"got '40 GB'$"):
        units.parse_amount("40 GB", "tokens")


@pytest.mark.parametrize("written", ["50k images", "50k sequences", "50 k examples", "50000 samples", "50k"])
def test_samples_take_the_words_a_dataset_counts_them_in(written):
    # a dataset card counts images, sequences or examples: each is a sample
    from planner.model import units

    assert units.parse_amount(written, "samples") == 50_000


def test_a_misspelt_unit_gets_the_unit_meant():
    from planner.model import units

    with pytest.raises(ValueError, match=r"got '1 mnth' \(did you mean 'month'"):
        units.parse_duration_h("1 mnth")
    with pytest.raises(ValueError, match=r"got '5 GB' \(a size\)$"):  # another kind of quantity says which
        units.parse_duration_h("5 GB")


def test_a_cnn_job_needs_the_flops_of_a_sample(tmp_path):
    out = bad(tmp_path, "family: cnn\nparams: 25M\nreference_gpu: a100-80gb", "samples: 1M")
    assert "a CNN job needs the FLOPs of one sample: name its workload.model (resnet-50)" in out


def test_estimate_lists_every_device_from_the_reference_hours(load, catalog):
    out = CliRunner().invoke(main, ["estimate", str(ROOT / "scenarios" / "alpaca.yaml"), "--format", "json", "--today",
                                    TODAY.isoformat()])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    ref = next(r for r in rows if r["device"] == "a100-80gb")
    s = load((ROOT / "scenarios" / "alpaca.yaml").read_text(encoding="utf-8"))
    assert ref["gpu_hours"] == pytest.approx(s.phases[0].gpu_hours_per_run, abs=0.01)
    assert ref["hours_from"] == "job" and ref["utilisation"] == 0.30
    for r in rows:  # at the speed the work runs at: its fit's slowdown against the reference's counted
        if r["runs_at"]:
            assert r["gpu_hours"] == pytest.approx(ref["gpu_hours"] / r["runs_at"], rel=1e-2, abs=0.01)
        elif r["relative_speed"]:  # one that cannot hold the model: at its speed, as if it could
            assert r["verdict"] == "does-not-fit"
            assert r["gpu_hours"] == pytest.approx(ref["gpu_hours"] / r["relative_speed"], rel=1e-2, abs=0.01)
    assert {r["device"] for r in rows} == set(catalog.devices["id"])


def test_estimate_gives_each_device_the_hours_a_plan_on_it_counts(load, catalog, tmp_path):
    """40 GB of activations at batch 32 fit the A100 80GB the 10 hours a run were timed on; the
    RTX 3090 (24 GB) runs 2 micro-batches of 16, 5 % slower (one halving). `planner estimate`
    gave it 10 h / its speed, 5 % fewer hours than any plan on it counts; it now gives the
    plan's, and says the speed the work runs at, which `planner fit` gives too."""
    import planner

    text = """\
name: a batch that one card holds and another does not
start: 2027-01-04
workload: {family: cnn, params: 25M, activation_memory: 40 GB, reference_gpu: a100-80gb}
phases:
  a: {gpu_hours: 10, runs: 2, deadline: 2027-03-31, checkpoint_every: 1 h, checkpoint_size: 0.1 GB}
consider: {buy: [], rent: ["box"], free: []}
catalog:
  rent:
    - {id: box, device: rtx-3090, price: 0.60 USD/h, billing: 1 s, startup: 0 min, setup: 0 min}
"""
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    out = CliRunner().invoke(main, ["estimate", str(path), "--format", "json", "--today", TODAY.isoformat()])
    assert out.exit_code == 0, out.output
    row = next(r for r in json.loads(out.output) if r["device"] == "rtx-3090")
    s = load(text)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, alternatives=False, breakevens=False)
    (q,) = [q for q in p.quotes.itertuples() if q.option == "box"]
    assert row["gpu_hours"] == pytest.approx(q.device_hours / 2, rel=1e-3)  # a run's, as the plan counts it
    assert row["runs_at"] == pytest.approx(row["relative_speed"] / 1.05, abs=0.001)
    fit = CliRunner().invoke(main, ["fit", str(path), "--format", "json", "--today", TODAY.isoformat()])
    assert next(r for r in json.loads(fit.output) if r["device"] == "rtx-3090")["runs_at"] == row["runs_at"]
    # the other way round: hours timed on the 3090, which accumulated, hold that cost; the A100 does not pay it
    back = text.replace("reference_gpu: a100-80gb", "reference_gpu: rtx-3090").replace("device: rtx-3090",
                                                                                       "device: a100-80gb")
    path.write_text(back, encoding="utf-8")
    out = CliRunner().invoke(main, ["estimate", str(path), "--format", "json", "--today", TODAY.isoformat()])
    rows = {r["device"]: r for r in json.loads(out.output)}
    assert rows["rtx-3090"]["runs_at"] == 1.0 and rows["rtx-3090"]["gpu_hours"] == 10.0
    assert rows["a100-80gb"]["runs_at"] == pytest.approx(rows["a100-80gb"]["relative_speed"] * 1.05, abs=0.001)
    s = load(back)
    p = planner.plan(s, catalog.with_entries(s.catalog_entries), trials=0, alternatives=False, breakevens=False)
    (q,) = [q for q in p.quotes.itertuples() if q.option == "box"]
    assert rows["a100-80gb"]["gpu_hours"] == pytest.approx(q.device_hours / 2, rel=1e-3)


def test_device_classes():
    from pricing.ids import DeviceSpec

    assert job.device_class("rtx-4090", DeviceSpec("gpu", "ada", 82.6, 165)) == "consumer"
    assert job.device_class("l40s", DeviceSpec("gpu", "ada", 91.6, 362)) == "consumer"
    assert job.device_class("h100-sxm", DeviceSpec("gpu", "hopper", 67, 989)) == "hopper"
    assert job.device_class("a100-80gb", DeviceSpec("gpu", "ampere", 19.5, 312)) == "data-centre"
    assert job.device_class("tpu-v5e-8", DeviceSpec("tpu", "v5e", None, 197)) == "tpu"


def test_fp8_trains_the_job_faster_on_fp8_cards_only(load):
    base = "model: gpt2\nmethod: pretrain\nreference_gpu: {ref}\nprecision: {p}"
    for ref, gain in (("h100-sxm", 1.25), ("a100-80gb", 1.0)):
        mixed = load_job(load, base.format(ref=ref, p="mixed"), "tokens: 1B").phases[0].job_estimate
        fp8 = load_job(load, base.format(ref=ref, p="fp8"), "tokens: 1B").phases[0].job_estimate
        assert mixed.hours_typical / fp8.hours_typical == pytest.approx(gain)
    assert not math.isnan(mixed.peak_tflops)


def test_job_errors_raise_input_errors(load):
    with pytest.raises(InputError):
        load_job(load, "family: cnn\nparams: 25M\nreference_gpu: a100-80gb", "tokens: 1M")


def test_epochs_take_the_word(load):
    one = load_job(load, GPT2, "tokens: 1B\nepochs: 3 epochs").phases[0].job_estimate
    assert one.tokens == 3e9


def test_a_phase_with_nothing_in_it_is_a_located_error(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("name: x\nstart: 2027-01-04\nworkload: {family: cnn, params: 25M, reference_gpu: a100-80gb}\n"
                 "phases:\n  p0:\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["validate", str(f), "--today", TODAY.isoformat()])
    assert out.exit_code == 2 and "phases.p0: missing required key 'phases.p0.gpu_hours'" in out.output, out.output


def test_a_t4s_share_of_its_peak_is_capped_by_the_a100s_measured_rate_times_the_speed_model(load, catalog):
    """The data-centre utilisation was measured on A100s. A T4 (70 W) reaches less of its 65
    TFLOPS than an A100 of its 312: its usable peak is the A100's rate times the speed model's
    T4 over A100 on large work, the lower of the two estimates. So one job gives an A100 the same
    hours whether a T4 or the A100 is its reference (hours on the T4 x the T4's speed over it)."""
    from planner.model import workload

    t4 = load_job(load, GPT2.replace("a100-80gb", "t4"), "tokens: 1B").phases[0].job_estimate
    a100 = load_job(load, GPT2, "tokens: 1B").phases[0].job_estimate
    ratio = float(workload.relative_speed(catalog.devices, catalog.throughput, "a100-80gb", "transformer",
                                          "mixed").at["t4", "relative_speed"])
    assert 312.0 * ratio < 65.0  # the cap binds: the T4 is slower than its peak says
    assert t4.measured_on == "a100-80gb" and t4.peak_tflops == pytest.approx(65.0)
    assert t4.hours_typical == pytest.approx(t4.flops / (312e12 * ratio * 0.40) / 3600, rel=1e-9)
    assert t4.hours_typical * ratio == pytest.approx(a100.hours_typical, rel=1e-9)
    assert a100.measured_on is None and a100.usable_tflops is None  # the card it was measured on


def test_a_card_without_tensor_cores_runs_at_the_speed_models_rate_up_to_its_own_peak(load, catalog):
    """A P100 has no tensor cores: the utilisation's share is of a tensor-core peak, and a card
    without them reaches far more of its own. Its rate is the A100's times the speed model's
    estimate of it, bounded so that at the utilisation's high end (60 %) it reaches no more than
    its own peak. Taking the share of its own peak instead made it 4.5x too slow on a CNN in fp32."""
    from planner.model import workload

    p100 = load_job(load, GPT2.replace("a100-80gb", "p100"), "tokens: 1B").phases[0].job_estimate
    ratio = float(workload.relative_speed(catalog.devices, catalog.throughput, "a100-80gb", "transformer",
                                          "mixed").at["p100", "relative_speed"])
    assert 312.0 * ratio > p100.peak_tflops / 0.60  # the bound binds
    assert p100.measured_on == "a100-80gb" and p100.usable_tflops == pytest.approx(p100.peak_tflops / 0.60)
    assert p100.hours_typical == pytest.approx(p100.flops / (p100.peak_tflops / 0.60 * 1e12 * 0.40) / 3600, rel=1e-9)
    assert p100.flops / (p100.hours_at(p100.mfu_high) * 3600) == pytest.approx(p100.peak_tflops * 1e12, rel=1e-9)


def test_validate_and_run_give_a_job_the_same_hours(tmp_path, load):
    """planner validate reads no tables but loads the speed model when a job asks: the hours it
    checks are the plan's."""
    import planner.api

    path = tmp_path / "t4.yaml"
    path.write_text(text(GPT2.replace("a100-80gb", "t4"), "tokens: 1B"), encoding="utf-8")
    quick = planner.api.check_scenario(path, today=TODAY).phases[0]
    full = load(path.read_text(encoding="utf-8")).phases[0]
    assert quick.job_estimate.measured_on == "a100-80gb"
    assert quick.gpu_hours_per_run == pytest.approx(full.gpu_hours_per_run, rel=1e-12)


def test_the_speed_model_sets_the_rate_and_the_cards_own_peak_bounds_it(load, catalog):
    """A V100 and the A100 the data-centre utilisation was measured on are both in the throughput
    table: the V100 runs at the A100's rate times their measured ratio, so the A100's hours are the
    same whichever of the two is the reference. The rule by hand (312 TFLOPS on the A100, 125 on
    the V100): the ratio, measured or estimated, counts, past the card's own peak too, until at the
    utilisation's high end the card would run past its peak."""
    from planner.model import workload

    full = "model: gpt2\nmethod: full\nreference_gpu: {ref}"
    v100 = load_job(load, full.format(ref="v100-32gb"), "tokens: 1B").phases[0].job_estimate
    a100 = load_job(load, full.format(ref="a100-80gb"), "tokens: 1B").phases[0].job_estimate
    speed = workload.relative_speed(catalog.devices, catalog.throughput, "a100-80gb", "transformer", "mixed")
    assert speed.at["v100-32gb", "speed_source"] == "measured"
    ratio = float(speed.at["v100-32gb", "relative_speed"])
    assert v100.measured_on == "a100-80gb" and v100.usable_tflops == pytest.approx(312.0 * ratio)
    assert v100.hours_typical * ratio == pytest.approx(a100.hours_typical, rel=1e-9)

    s = load_job(load, full.format(ref="v100-32gb"), "tokens: 1B")
    specs = catalog.job_facts().device_specs
    spec = specs["v100-32gb"]
    peak = job.usable_peak
    assert peak(s.workload, spec, specs, lambda *_: (0.5, True), 0.5) == (pytest.approx(156.0), "a100-80gb")
    assert peak(s.workload, spec, specs, lambda *_: (0.5, False), 0.5) == (pytest.approx(156.0), "a100-80gb")
    assert peak(s.workload, spec, specs, lambda *_: (0.5, True), 0.9) == (pytest.approx(125.0 / 0.9), "a100-80gb")
    assert peak(s.workload, spec, specs, lambda *_: (0.2, False), 0.8) == (pytest.approx(62.4), "a100-80gb")
    assert peak(s.workload, spec, specs, lambda *_: None, 0.8) == (125.0, None)


def test_a_job_with_no_reference_gpu_is_estimated_on_the_a100_and_the_answer_says_so(load, catalog):
    """Who describes the job has timed nothing, on no card: phases that give tokens or samples
    alone need no reference GPU, and take the A100 80GB, on which the data-centre utilisation was
    measured. The scenario and its plan equal those of a file that names it; the answer says the
    reference was taken."""
    import planner

    given = load_job(load, GPT2, "tokens: 1B")
    taken = load_job(load, "model: gpt2\nmethod: pretrain", "tokens: 1B")
    assert taken.reference_gpu_is_default and not given.reference_gpu_is_default
    assert (taken.workload, taken.phases) == (given.workload, given.phases)
    plans = [planner.plan(s, catalog, trials=0, alternatives=False) for s in (given, taken)]
    assert plans[1].total_usd == plans[0].total_usd
    said = [a for a in plans[1].assumed_figures if "reference_gpu" in a]
    assert len(said) == 1 and said[0].startswith("workload.reference_gpu not given: the jobs' hours are estimated on "
                                                 "a100-80gb")
    assert not any("reference_gpu" in a for a in plans[0].assumed_figures)
    from planner.cli import _estimate_header

    assert "on a100-80gb (workload.reference_gpu not given) at" in _estimate_header(taken, taken.phases[0])
    assert "on a100-80gb at" in _estimate_header(given, given.phases[0])


@pytest.mark.parametrize("phase", ["gpu_hours: 50", "gpu_hours: 50\ntokens: 1B"])
def test_hours_with_no_card_they_were_measured_on_are_a_located_error(tmp_path, phase):
    out = bad(tmp_path, "family: transformer\nparams: 100M\nsequence_length: 512", phase)
    assert ("s.yaml:4:1: workload: missing required key 'workload.reference_gpu': the card the phases' gpu_hours "
            in out), out


def test_a_job_that_cannot_end_in_time_says_to_cut_its_data_not_its_gpu_hours(load, catalog):
    """Who gave tokens gave no GPU-hours: what would fix a phase that cannot end in time names
    what they wrote (fewer tokens or epochs), where hours they measured read 'fewer GPU-hours'."""
    import planner

    short = text(GPT2, "tokens: 200B").replace("deadline: 2027-03-31", "deadline: 2027-01-06")
    said = planner.plan(load(short), catalog, trials=0, alternatives=False).phases[0].shortfall
    assert said is not None and said.endswith("fewer tokens or epochs or a lower you.confidence (now 90 %) would fix it.")
    timed = short.replace("tokens: 200B", "gpu_hours: 400")
    said = planner.plan(load(timed), catalog, trials=0, alternatives=False).phases[0].shortfall
    assert said is not None and "fewer GPU-hours" in said and "tokens" not in said
