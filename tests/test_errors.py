"""Bad input is normal input: each mistake gets file:line:column, key path,
what was expected, a did-you-mean where one fits, and exit status 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from planner.cli import main

from .conftest import SCENARIOS


def run(args, text=None, tmp_path=None):
    """Run the CLI; with ``text``, on a file 's.yaml' holding it."""
    runner = CliRunner()
    if text is not None:
        path = tmp_path / "s.yaml"
        path.write_text(text, encoding="utf-8")
        args = [a.replace("{file}", str(path)) for a in args]
    return runner.invoke(main, args)


def mutate(thesis: str, old: str, new: str) -> str:
    assert old in thesis, old
    return thesis.replace(old, new, 1)


CASES = [
    # (id, old text, new text, expected message after 'FILE:')
    ("unknown-key", "    checkpoint_every: 1 h", "    chekpoint_every: 1 h",
     "36:5: phases.final.chekpoint_every: unknown key (did you mean 'checkpoint_every' or 'checkpoint_size'?)"),
    ("wrong-unit-kind", "gpu_hours: 180 ", "gpu_hours: 3 GB ",
     "32:16: phases.final.gpu_hours: expected a duration such as 30 min or 2 h, got '3 GB' (a size)"),
    ("months-as-size", "horizon: 24 months ", "horizon: 24 GB ",
     "10:10: horizon: expected a duration such as 6 months or 2 years, got '24 GB' (a size)"),
    ("count-as-size", "params: 86M ", "params: 86 GB ",
     "16:11: workload.params: expected a count such as 86M, got '86 GB' (a size)"),
    ("negative-hours", "gpu_hours: 250 ", "gpu_hours: -5 ",
     "25:16: phases.prototyping.gpu_hours: expected a value above zero, got -5"),
    ("zero-hours", "gpu_hours: 250 ", "gpu_hours: 0 ",
     "25:16: phases.prototyping.gpu_hours: expected a value above zero, got 0"),
    ("deadline-before-from", "deadline: 2027-08-15", "deadline: 2027-05-15",
     "35:15: phases.final.deadline: deadline 2027-05-15 is before the phase's start 2027-06-01; "
     "move the deadline later or 'from' earlier"),
    ("unknown-device-id", "reference_gpu: rtx-3060-12gb", "reference_gpu: rtx-3060-12g",
     "21:18: workload.reference_gpu: unknown device 'rtx-3060-12g' (did you mean 'rtx-3060-12gb'"),
    ("unknown-offer-pattern", "rtx-3090-used, ", "rtx-3090-usd, ",
     "consider.buy: 'rtx-3090-usd' matches no buy offer (did you mean 'rtx-3090-used'"),
    ("missing-required", "  family: transformer          # cnn | transformer | rnn\n", "",
     "14:1: workload: missing required key 'workload.family'"),
    ("wrong-type", "  batch_size: 64", "  batch_size: big",
     "19:15: workload.batch_size: expected a whole number of at least 1, got 'big'"),
    ("wrong-enum", "  family: transformer", "  family: transformr",
     "15:11: workload.family: expected one of cnn, transformer, rnn, got 'transformr' (did you mean 'transformer'?)"),
    # words people write for a choice under another name: refused with the choice that reads
    ("bf16-precision", "precision: mixed ", "precision: BF16 ",
     "17:14: workload.precision: expected one of fp32, mixed, fp8, got 'BF16' (training in bf16 or fp16 with fp32 "
     "master weights, as autocast and AMP do, is 'mixed')"),
    ("4-bit-precision", "precision: mixed ", "precision: 4-bit ",
     "17:14: workload.precision: expected one of fp32, mixed, fp8, got '4-bit' (a base model quantized to 4 or 8 "
     "bits under adapters is workload.method: qlora, its adapters trained in 'mixed')"),
    ("vit-family", "  family: transformer", "  family: ViT",
     "15:11: workload.family: expected one of cnn, transformer, rnn, got 'ViT' (a transformer, vision or language, "
     "is 'transformer')"),
    ("diffusion-family", "  family: transformer", "  family: Stable Diffusion",
     "15:11: workload.family: expected one of cnn, transformer, rnn, got 'Stable Diffusion' (a diffusion model's "
     "U-Net, mostly convolutions, is 'cnn'; a diffusion transformer (DiT) is 'transformer')"),
    ("fine-tune-method", "  family: transformer", "  family: transformer\n  method: fine_tune",
     "16:11: workload.method: expected one of full, pretrain, lora, qlora, got 'fine_tune' (a fine-tune of every "
     "weight is 'full')"),
    ("bad-date", "deadline: 2027-08-15", "deadline: 2027-02-30",
     "35:15: phases.final.deadline: expected a date such as 2027-05-31, got '2027-02-30' (February 2027 has 28 days)"),
    ("duplicate-key", "  runs: 3 ", "  runs: 3\n    runs: 4 ",
     "34:5: phases.final.runs: duplicate key (first given at line 33); keep one"),
    ("yaml-syntax", "  buy: [rtx-4060-ti-16gb,", "  buy: [rtx-4060-ti-16gb,,",
     "YAML syntax error"),
    ("unknown-top-key", "horizon: 24 months", "horizn: 24 months",
     "10:1: horizn: unknown key (did you mean 'horizon'?)"),
    ("key-in-the-wrong-section", "    checkpoint_size: 1 GB", "    checkpoint_size: 1 GB\n    method: lora",
     "38:5: phases.final.method: unknown key (it belongs under workload: workload.method)"),
    ("phase-key-in-workload", "  batch_size: 64", "  batch_size: 64\n  deadline: 2027-08-15",
     "20:3: workload.deadline: unknown key (it belongs under a phase: phases.<name>.deadline)"),
    ("adapters-of-a-cnn", "  family: transformer ", "  method: qlora\n  family: cnn ",
     "15:11: workload.method: qlora's default adapters are a transformer's (rank on its attention and MLP "
     "matrices); for a cnn give workload.trainable_params, or use method: full"),
    # a credit's keys as people write them: every credit's at once, with the key each stands for
    ("credit-keys", "  own: [gtx-1060-6gb]", "  credits:\n    - {provider: gcp, amount: 1000 USD, expires: 2027-06-30}\n"
     "    - {provider: aws, amount: 300 USD}\n  own: [gtx-1060-6gb]",
     "42:5: you.credits: credit 1: unknown keys 'expires' (did you mean 'until'?) and 'provider' (did you mean "
     "'providers'?); credit 2: unknown key 'provider' (did you mean 'providers'?); expected amount, providers, from, "
     "until, name"),
    # a yearly change as people write it
    ("trend-per-year", "horizon: 24 months ", "price_trend: -20% per year\nhorizon: 24 months ",
     "10:14: price_trend: expected flat, a yearly change from -90%/year to +100%/year such as -25%/year, or dated "
     "levels such as {2027-06-30: -10%}, got '-20% per year' (did you mean '-20%/year'?)"),
    ("grid-as-a-country-name", "  own: [gtx-1060-6gb]", "  grid: Germany\n  own: [gtx-1060-6gb]",
     "41:9: you.grid: unknown grid 'Germany' (did you mean 'de'?): a country (de, us)"),
    ("runs-as-a-word", "  runs: 3 ", "  runs: three ",
     "33:11: phases.final.runs: expected a whole number of at least 1, got 'three' (did you mean 3?)"),
    ("cards-counted", "own: [gtx-1060-6gb]", "own: [2x gtx-1060-6gb]",
     "41:8: you.own: unknown device '2x gtx-1060-6gb': one id per card; 2 of them are [gtx-1060-6gb, gtx-1060-6gb]"),
    ("unknown-currency", "currency: USD ", "currency: USDD ",
     "9:11: currency: expected a currency code the catalog has a rate for (AUD, CAD, CHF, CNY, EUR, GBP, INR, JPY, "
     "KRW, SEK, USD), got 'USDD' (did you mean 'USD'?)"),
]


@pytest.mark.parametrize("old, new, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scenario_mistakes(thesis_text, tmp_path, old, new, expected):
    result = run(["validate", "{file}"], mutate(thesis_text, old, new), tmp_path)
    assert result.exit_code == 2, result.output
    if expected[0].isdigit():
        assert f"s.yaml:{expected}" in result.output
    else:
        assert expected in result.output and "s.yaml:" in result.output
    assert "Traceback" not in result.output


def test_an_entrys_device_written_as_gpu_is_one_mistake_with_its_price_and_condition(thesis_text, tmp_path):
    # 'gpu:' was told twice (an unknown key, and a new offer lacking its device), 'cost:' was told
    # "did you mean 'count'", and 'second-hand' no choice at all
    text = mutate(thesis_text, "  spot: true\n", "  spot: true\ncatalog:\n  rent:\n    - {id: uni, gpu: a100-80gb, "
                  "cost: 1.2 USD/h}\n  buy:\n    - {id: my-4090, device: rtx-4090, price: 1500 USD, condition: second-hand}\n")
    out = run(["validate", "{file}"], text, tmp_path).output
    assert "catalog.rent[uni].gpu: unknown key (did you mean 'device'?)" in out
    assert "catalog.rent[uni].cost: unknown key (did you mean 'price'?)" in out
    assert "needs a 'device'" not in out
    assert ("catalog.buy[my-4090].condition: expected one of new, used, got 'second-hand' (a card someone owned "
            "before, refurbished or not, is 'used')") in out
    tier = mutate(thesis_text, "  spot: true\n", "  spot: true\ncatalog:\n  free:\n    - {id: uni-jupyter, device: t4, "
                  "weekly_quota: 20 h, session_length: 4 h}\n")
    out = run(["validate", "{file}"], tier, tmp_path).output
    assert "catalog.free[uni-jupyter].weekly_quota: unknown key (did you mean 'quota'?)" in out
    assert "catalog.free[uni-jupyter].session_length: unknown key (did you mean 'session_limit'?)" in out


def test_a_day_past_its_months_end_is_reported_with_every_other_mistake(thesis_text, tmp_path):
    """YAML itself cannot read 2027-02-30 as a date; it was an error of the file's syntax, which
    stopped every other check: one mistake a run. It is read as the text it is, for the
    scenario's reader of dates to refuse with the rest."""
    text = mutate(mutate(thesis_text, "deadline: 2027-08-15", "deadline: 2027-04-31"), "params: 86M ", "params: 86 GB ")
    out = run(["validate", "{file}"], text, tmp_path).output
    assert "16:11: workload.params: expected a count such as 86M, got '86 GB' (a size)" in out
    assert "35:15: phases.final.deadline: expected a date such as 2027-05-31, got '2027-04-31' (April 2027 has 30 " \
           "days)" in out


def test_a_workload_key_refused_is_not_asked_for_again_by_a_phases_job(tmp_path):
    """A phase described by its samples needs the sequence length; one given as '2k' is refused
    where it is written, and the phase does not add 'set workload.sequence_length' for it."""
    text = ("name: s\nstart: 2027-02-01\nworkload: {model: llama-3.1-8b, method: qlora, sequence_length: 2k}\n"
            "phases:\n  a: {samples: 5k, deadline: 2027-03-01}\n  b: {samples: 9k, from: 2027-05-01, deadline: 2027-04-30}\n")
    out = run(["validate", "{file}"], text, tmp_path).output.strip().splitlines()
    f = tmp_path / "s.yaml"
    # the second phase's days are checked in the same run, though its job cannot be read
    assert out == [f"{f}:3:65: workload.sequence_length: expected a whole number of at least 1, got '2k' (write it "
                   "out, e.g. 2048: a 'k' could mean 1,000 or 1,024)",
                   f"{f}:6:48: phases.b.deadline: deadline 2027-04-30 is before the phase's start 2027-05-01; move "
                   "the deadline later or 'from' earlier"]


@pytest.mark.parametrize("typo", ["gpu-hours", "GPU_hours", "gpuhours"])
def test_a_misspelt_work_key_is_one_mistake_not_also_a_missing_key(thesis_text, tmp_path, typo):
    """'gpu-hours: 180' is refused with the key it was meant to be; the phase is not also told
    it lacks gpu_hours (two lines for one slip)."""
    out = run(["validate", "{file}"], mutate(thesis_text, "    gpu_hours: 180 ", f"    {typo}: 180 "), tmp_path).output
    assert f"phases.final.{typo}: unknown key (did you mean 'gpu_hours'" in out
    assert "missing required key" not in out


def test_run_checks_like_validate(thesis_text, tmp_path):
    result = run(["run", "{file}"], mutate(thesis_text, "params: 86M ", "params: 86 GB "), tmp_path)
    assert result.exit_code == 2
    assert "workload.params: expected a count such as 86M, got '86 GB' (a size)" in result.output


def test_every_problem_is_reported_sorted(thesis_text, tmp_path):
    text = mutate(mutate(thesis_text, "params: 86M ", "params: 86 GB "), "gpu_hours: 180 ", "gpu_hours: 3 GB ")
    lines = run(["validate", "{file}"], text, tmp_path).output.strip().splitlines()
    assert [line.split(":")[1] for line in lines] == ["16", "32"]


def test_empty_file(tmp_path):
    result = run(["validate", "{file}"], "", tmp_path)
    assert result.exit_code == 2
    assert "s.yaml:1:1: the file is empty: expected a scenario mapping with 'name', 'workload' and 'phases'" \
        in result.output


@pytest.mark.parametrize("text, kind", [("- a\n- b\n", "a list"), ("just words\n", "a str")])
def test_not_a_mapping(tmp_path, text, kind):
    result = run(["validate", "{file}"], text, tmp_path)
    assert result.exit_code == 2
    assert f"expected a mapping of keys such as 'name:', 'workload:', 'phases:' at the top of the file, got {kind}" \
        in result.output


def test_set_path_that_does_not_exist():
    result = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"),
                                       "--set", "phases.final.dedline=2027-09-01"])
    assert result.exit_code == 2
    assert result.output.strip() == \
        "--set: phases.final.dedline: unknown key 'phases.final.dedline' (did you mean 'deadline'?)"


@pytest.mark.parametrize("option, key, meant", [("--set", "budget=300 USD", "you.budget"),
                                                ("--set", "family=cnn", "workload.family"),
                                                ("--set", "deadline=2027-09-01", "phases.<name>.deadline")])
def test_a_set_key_without_its_section_is_told_where_it_belongs(option, key, meant):
    """--set budget=300 was 'unknown key' with no hint: the key is you.budget."""
    result = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"), option, key])
    assert result.exit_code == 2
    name = key.split("=")[0]
    assert result.output.strip() == f"--set: {name}: unknown key '{name}' (did you mean '{meant}'?)"


def test_a_swept_key_without_its_section_is_told_where_it_belongs():
    result = CliRunner().invoke(main, ["sweep", str(SCENARIOS / "thesis.yaml"), "--vary", "budget=100,200"])
    assert result.exit_code == 2
    assert "--vary: budget: unknown key 'budget' (did you mean 'you.budget'?)" in result.output


def test_set_unknown_phase():
    result = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"), "--set", "phases.finl.runs=2"])
    assert result.exit_code == 2
    assert "no phase named 'finl' in the scenario (did you mean 'final'?)" in result.output


def test_set_value_is_validated_like_the_file():
    result = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"), "--set", "workload.params=86 GB"])
    assert result.exit_code == 2
    assert result.output.strip() == "--set: workload.params: expected a count such as 86M, got '86 GB' (a size)"


def test_set_without_equals():
    result = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"), "--set", "workload.params"])
    assert result.exit_code == 2
    assert "expected key.path=value" in result.output


@pytest.mark.parametrize(("written", "hint"), [("07/12/2026", "(did you mean 2026-07-12 or 2026-12-07?)"),
                                               ("Dec 7 2026", "(did you mean 2026-12-07?)"),
                                               ("2026-02-30", "(February 2026 has 28 days)")])
def test_a_today_written_another_way_is_refused_as_a_scenarios_date_is(written, hint):
    # --today told only "expected a date YYYY-MM-DD", where a scenario's date says what it can mean
    result = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"), "--today", written])
    assert result.exit_code == 2
    assert f"expected a date YYYY-MM-DD, got {written!r} {hint}" in result.output


def test_a_set_value_the_shell_split_at_its_space_is_told_to_be_quoted():
    # '--set phases.final.gpu_hours=300 hours' unquoted is two arguments: click said only
    # "unexpected extra argument (hours)"
    result = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"), "--set", "phases.final.gpu_hours=300",
                                       "hours"])
    assert result.exit_code == 2
    assert ("unexpected extra argument (hours) (the shell split a value at its space: quote it, "
            "--set 'phases.final.gpu_hours=300 hours')") in result.output
    other = CliRunner().invoke(main, ["validate", str(SCENARIOS / "thesis.yaml"), "extra"])
    assert other.exit_code == 2 and "quote it" not in other.output  # an extra argument of another kind


def test_unknown_variant():
    path = SCENARIOS / "thesis.yaml"
    result = CliRunner().invoke(main, ["validate", str(path), "--variant", "cheap-pwer"])
    assert result.exit_code == 2
    assert result.output.strip().endswith(
        "variants: no variant named 'cheap-pwer' (did you mean 'cheap-power'?) "
        "(variants: cheap-power, bigger-model, later-deadline, no-free-tiers)")
    assert f"{path}:" in result.output


def test_the_base_named_as_a_variant_is_told_it_is_the_file_as_written():
    """compare --variants base,cheap-power: 'base' is no variant; the refusal says the file
    without one is its base, and to leave it out."""
    result = CliRunner().invoke(main, ["compare", str(SCENARIOS / "thesis.yaml"), "--variants", "base,cheap-power"])
    assert result.exit_code == 2
    assert "no variant named 'base' (the file as written, without a variant, is its base: leave it out of " \
           "--variant and --variants)" in result.output


def test_bad_value_inside_a_variant_points_at_the_variant(thesis_text, tmp_path):
    text = mutate(thesis_text, "cheap-power: {electricity: 0.10 USD/kWh}", "cheap-power: {electricity: 0.10 USD/GB}")
    result = run(["validate", "{file}", "--variant", "cheap-power"], text, tmp_path)
    assert result.exit_code == 2
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "cheap-power:" in t)
    assert f"s.yaml:{line}:" in result.output and "electricity: expected a price such as 0.40 USD/kWh" in result.output


def test_missing_file():
    result = CliRunner().invoke(main, ["run", "no/such/file.yaml"])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_not_utf8(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert "not UTF-8 text" in result.output


def test_yaml_tags_do_not_construct_objects(tmp_path):
    result = run(["validate", "{file}"], "name: !!python/object/apply:os.system ['echo hi']\n", tmp_path)
    assert result.exit_code == 2
    assert "s.yaml:1:7: name: unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'" in result.output


def test_provider_pattern_gets_a_did_you_mean(thesis_text, tmp_path):
    result = run(["validate", "{file}"], mutate(thesis_text, '"lambda:*"', '"lamda:*"'), tmp_path)
    assert result.exit_code == 2
    assert "consider.rent: 'lamda:*' matches no rent offer (did you mean 'lambda:*'" in result.output


def test_a_set_key_with_an_escape_sequence_is_a_located_error_shown_escaped(tmp_path):
    # issue 39 item 2: an escape sequence in a --set key reached the terminal and the report's title
    from .conftest import SCENARIOS

    result = CliRunner().invoke(main, ["run", str(SCENARIOS / "thesis.yaml"), "--set", "electricity\x1b[31m=0.2 USD/kWh"])
    assert result.exit_code == 2 and "\x1b" not in result.output
    assert "electricity\\x1b[31m" in result.output and "not control characters" in result.output


def test_a_reader_that_stops_early_gets_no_error():
    """`planner ... | head -1`: the command stops quietly when its reader does, as cat does."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "planner.cli", "estimate", str(SCENARIOS / "alpaca.yaml"), "--all"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader is gone before the second table is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (0, 141) and "internal error" not in err and "Traceback" not in err, err
