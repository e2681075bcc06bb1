"""The command line: parse arguments, call the library, print. Nothing else.

Exit status: 0 ok; 2 bad input (scenario, catalog, arguments); 3 a plan was
printed but some phase cannot meet its deadline.
"""

from __future__ import annotations

import atexit
import dataclasses
import datetime as dt
import functools
import gc
import json
import os
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pricing.errors import InputError, LayerWarning, Problem, SolverError, did_you_mean

from . import __version__

if TYPE_CHECKING:
    import pandas as pd

EXIT_INPUT = 2
EXIT_INFEASIBLE = 3
EXIT_BROKEN_PIPE = 141  # as a shell reports a process ended by SIGPIPE (128 + 13)


def _today(ctx: click.Context, param: click.Parameter, value: Any) -> dt.date:
    if value is None:
        return dt.date.today()
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        from .model.schema import date_hint  # as a scenario's dates are refused

        raise click.BadParameter(f"expected a date YYYY-MM-DD, got {value!r}{date_hint(value)}") from None
    if not dt.date(1990, 1, 1) <= day <= dt.date(2100, 12, 31):  # planner.model.scenario's calendar
        raise click.BadParameter(f"expected a date between 1990-01-01 and 2100-12-31, got {value}")
    return day


def catalog_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--catalog FILE (repeatable): a user's or lab's offers layered over the shipped catalog."""
    return click.option("--catalog", "catalog_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
                        metavar="FILE", help="Your own catalog file (buy/rent/free lists as in a scenario's "
                        "'catalog:'); overrides shipped rows by id. Repeatable.")(f)


def format_option(*choices: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=choices[0], show_default=True,
                        help="What to print.")


def scenario_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--variant, --set, --today and --catalog, shared by every command that reads a scenario."""
    f = catalog_option(f)
    f = click.option("--today", callback=_today, metavar="YYYY-MM-DD",
                     help="Date used as the scenario's start when it gives none (default: today).")(f)
    f = click.option("--set", "sets", multiple=True, metavar="KEY.PATH=VALUE",
                     help="Override a scenario value, e.g. --set workload.params=300M (repeatable).")(f)
    f = click.option("--variant", metavar="NAME", multiple=True, callback=_one_variant,
                     help="Apply a named variant from the scenario's 'variants'.")(f)
    return f


def _one_variant(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    """One --variant: given twice, click would keep the last without a word and plan another
    scenario than the one asked for."""
    if len(value) > 1:
        hint = ("; compare puts variants side by side with --variants " + ",".join(value)
                if ctx.info_name == "compare" else "")
        raise click.BadParameter(f"given {len(value)} times ({', '.join(value)}): one variant at a time{hint}")
    return value[0] if value else None


def _one_line_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    """A warning the user can act on, in one line (a bad refreshed layer), without Python's source line."""
    click.echo(f"planner: warning: {message}", err=True)


def handle_errors(f: Callable[..., Any]) -> Callable[..., Any]:
    """Input errors become messages and exit 2; bugs say how to see the traceback."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = click.get_current_context().find_root().params.get("debug")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default", LayerWarning)
                warnings.showwarning = _one_line_warning
                return f(*args, **kwargs)
        except InputError as exc:
            for p in exc.problems:
                click.echo(str(p), err=True)
            sys.exit(EXIT_INPUT)
        except SolverError as exc:
            click.echo(f"planner: {exc}", err=True)
            sys.exit(1)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError:  # the reader stopped (`planner ... | head`): stop quietly, as cat does
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit must not fail again
            sys.exit(EXIT_BROKEN_PIPE)
        except Exception as exc:  # a bug in the planner, not the user's input
            if debug:
                import traceback

                traceback.print_exc()
            else:
                click.echo(f"planner: internal error: {type(exc).__name__}: {exc} "
                           "(rerun with --debug for the traceback and please report it)", err=True)
            sys.exit(1)

    return wrapper


class _Command(click.Command):
    """A command whose refusal of an extra argument after a --set or --vary value says what the
    shell did: '--set phases.final.gpu_hours=300 hours' unquoted is two arguments."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes its list
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if "unexpected extra argument" in exc.message:
                for i, arg in enumerate(given[:-2]):
                    if arg in ("--set", "--vary") and "=" in given[i + 1] and not given[i + 2].startswith("-"):
                        raise click.UsageError(f"{exc.message} (the shell split a value at its space: quote it, "
                                               f"{arg} '{given[i + 1]} {given[i + 2]}')", exc.ctx) from None
            raise


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="planner")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for internal errors.")
def main(debug: bool) -> None:
    """Where should your GPU hours run: a card you buy, rented GPUs, or free tiers?

    Describe the work in a scenario file (see scenarios/thesis.yaml) and run
    `planner run FILE`.
    """
    atexit.register(gc.freeze)  # see _load_engine: the collection at exit walks every object, to free nothing


main.command_class = _Command  # every command of main: what an unquoted --set value became


def _load_engine() -> None:
    """Import the planning engine (pandas, numpy, HiGHS through highspy, the catalog's loader)
    with Python's cyclic garbage collector paused, then freeze what the imports made.

    The imports make about a hundred thousand objects that live as long as the process. Each
    full collection while they load walks all of them (30 ms here), and so does the one Python
    runs at exit, which :func:`main` skips the same way: together about a tenth of a second of
    `planner run`'s wall time (bench/run_time.py), for no memory, as imports make next to no
    garbage. The collector runs as usual on what a plan makes, so a long sweep frees its cycles."""
    gc.disable()
    try:
        import highspy  # noqa: F401  (the solver: milp.highs imports it when a plan is solved)

        from pricing import loader  # noqa: F401  (pandas, numpy)

        from .decide import optimize  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()


def _remember_scheduler(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    ctx.meta["scheduler"] = value or None
    return value


scheduler_option = click.option(
    "--scheduler", metavar="ADDRESS", envvar="DASK_SCHEDULER_ADDRESS", expose_value=False, callback=_remember_scheduler,
    help="Run the plans on a Dask cluster (tcp://host:8786; default: DASK_SCHEDULER_ADDRESS, else this machine's "
    "processes). Needs pip install \"gpu-planner[cluster]\" here and on the workers.")


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@scenario_options
@format_option("text", "json", "markdown", "csv")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Also write report.md, report.html, charts (PNG, SVG), CSV and result.json into DIR.")
@click.option("--force", is_flag=True, help="Write the report into a DIR that holds other files.")
@click.option("--trials", type=click.IntRange(1, 1_000_000), default=2000, show_default=True,
              help="Monte Carlo trials for the P50/P90 spread.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="Monte Carlo seed: same seed, same report.")
@click.option("--pareto", is_flag=True, help="Also show total cost against the last phase's finish date.")
@click.option("--uncertainty", "samples", type=click.IntRange(10, 100_000), is_flag=False, flag_value=1000,
              default=None, metavar="[N]", help="How sure the answer is: each strategy's cost and finish over N "
              "draws of the uncertain inputs (default N 1000; the scenario's 'uncertainty' key does the same).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Processes that plan the uncertainty's flip values again.")
@scheduler_option
@handle_errors
def run(scenario: str, variant: str | None, sets: tuple[str, ...], today: dt.date, catalog_files: tuple[str, ...], fmt: str,
        report_dir: str | None, force: bool, trials: int, seed: int, pareto: bool, samples: int | None, workers: int) -> None:
    """Plan SCENARIO: the cheapest way to meet every deadline."""
    _load_engine()
    from .api import load_catalog, load_scenario, plan
    from .report.page import RENDERERS

    _check_report_dir(report_dir, force)
    catalog = load_catalog(catalog_files, today)
    s = load_scenario(scenario, catalog=catalog, variant=variant, sets=sets, today=today)
    p = plan(s, catalog, trials=trials, seed=seed, pareto=pareto or bool(report_dir), uncertainty=samples,
             workers=click.get_current_context().meta.get("scheduler") or workers)
    answer = RENDERERS[fmt](p)
    if report_dir:  # written first: an answer on stdout means its report is there too (a full disk: exit 2, no answer)
        from .report.writer import write_report

        names = write_report(p, report_dir, force=force)
        click.echo(f"report written to {report_dir}/ ({', '.join(n for n in names if not n.startswith('.'))})",
                   err=True)
    click.echo(answer, nl=False)
    if not p.feasible:
        sys.exit(EXIT_INFEASIBLE)


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@scenario_options
@handle_errors
def validate(scenario: str, variant: str | None, sets: tuple[str, ...], today: dt.date, catalog_files: tuple[str, ...]) -> None:
    """Check SCENARIO and print 'ok' or every problem found."""
    from .api import check_scenario

    check_scenario(scenario, catalog_files=catalog_files, variant=variant, sets=sets, today=today)
    click.echo("ok")


@main.command()
@format_option("text", "markdown", "json", "csv")
@handle_errors
def keys(fmt: str) -> None:
    """Every key a scenario file takes: its unit, default and what it means."""
    import pandas as pd

    from .api import shipped_catalog
    from .model.schema import schema_rows
    from .report.page import render_rows
    from .report.view import md_table

    df = pd.DataFrame(schema_rows(shipped_catalog().columns)).astype(str)
    if fmt == "markdown":
        click.echo("\n".join(md_table(list(df.columns), df.values.tolist())))
        return
    headers = {"keys": {"key": "Key", "unit": "Unit", "default": "Default", "doc": "Meaning"}}
    click.echo(render_rows({"keys": df}, headers, fmt), nl=False)


# --------------------------------------------------------------------------- fit

FIT_FLAGS = {  # flag -> workload key of docs/scenario.md
    "model": "model", "params": "params", "family": "family", "precision": "precision", "optimizer": "optimizer",
    "batch_size": "batch_size", "sequence_length": "sequence_length", "image_size": "image_size",
    "activation_memory": "activation_memory", "reference": "reference_gpu", "method": "method",
    "trainable_params": "trainable_params", "attention": "attention",
    "activation_checkpointing": "activation_checkpointing", "sharding": "sharding",
}
FIT_HEADERS = {"fit": {
    "device": "Device", "vram_gb": "VRAM [GB]", "need_gb": "Need [GB]", "verdict": "Verdict",
    "micro_batch": "Micro-batch", "relative_speed": "Speed [x ref]", "runs_at": "Runs at [x ref]",
    "speed_at_scale": "Large work [x ref]",
    "speed_source": "Source",
    "replica_vram_gb": "Per replica [GB]",
}}


@main.command()
@click.argument("scenario", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--model", metavar="ID", help="A named model (llama-3.1-8b, gpt2, resnet-50): its family, size and "
              "shape; 'planner pricing list --models' lists them.")
@click.option("--params", metavar="COUNT", help="Parameters, e.g. 350M.")
@click.option("--family", metavar="cnn|transformer|rnn")
@click.option("--precision", metavar="fp32|mixed|fp8")
@click.option("--optimizer", metavar="sgd|momentum|adam|adamw")
@click.option("--batch-size", "batch_size", metavar="N")
@click.option("--sequence-length", "sequence_length", metavar="N", help="Tokens per sample (transformer, rnn).")
@click.option("--image-size", "image_size", metavar="PX", help="Image side in pixels (cnn).")
@click.option("--activation-memory", "activation_memory", metavar="SIZE", help="Measured at the batch size, e.g. 6GB.")
@click.option("--reference", metavar="DEVICE", help="The GPU speeds are relative to (default: rtx-3090).")
@click.option("--method", metavar="full|lora|qlora", help="Full training, or adapters on a frozen (qlora: 4-bit) base.")
@click.option("--trainable-params", "trainable_params", metavar="COUNT", help="Adapter parameters (lora, qlora).")
@click.option("--attention", metavar="auto|eager|memory-efficient", help="Attention kernel (auto: per device).")
@click.option("--activation-checkpointing", "activation_checkpointing", metavar="auto|true|false")
@click.option("--sharding", metavar="none|zero2|zero3", help="Split states across the GPUs of one machine (--gpus).")
@click.option("--gpus", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Devices in one machine (data parallel; --sharding splits the states across them).")
@click.option("--kind", type=click.Choice(["gpu", "tpu"]), help="Only GPUs or only TPUs.")
@scenario_options
@format_option("text", "json", "csv")
@handle_errors
def fit(scenario: str, kind: str | None, gpus: int, variant: str | None, sets: tuple[str, ...], today: dt.date,
        catalog_files: tuple[str, ...], fmt: str, **flags: Any) -> None:
    """Will the model fit, and how fast is each device? One row per catalog device.

    Takes the workload of SCENARIO, or one given by flags (values are read as
    in scenario files); flags override a scenario's values.
    """
    from .api import load_catalog, load_scenario, scenario_ids
    from .model.job import step
    from .model.overrides import parse_flag_value
    from .model.validate import load_workload, workload_values
    from .model.workload import STEP_FIXED_S_PER_LAYER, UNKNOWN_STEP, fit_table
    from .report.page import render_rows

    catalog = load_catalog(catalog_files, today)
    values: dict = {}
    if scenario:
        values = workload_values(load_scenario(scenario, catalog=catalog, variant=variant, sets=sets,
                                               today=today).workload)
    values.setdefault("reference_gpu", "rtx-3090")
    for flag, key in FIT_FLAGS.items():
        if flags[flag] is not None:
            values[key] = parse_flag_value(flags[flag], "--" + flag.replace("_", "-"))
    ids = scenario_ids(catalog)
    w = load_workload(values, ids)
    at = step(w, ids)
    table = fit_table(w, catalog.devices, catalog.throughput, gpus, at)
    if kind:
        table = table[table["kind"] == kind]
    cols = list(FIT_HEADERS["fit"]) + ["slowdown", "reason", "assumptions"] + (["fixed_share"] if fmt != "text" else [])
    if at is not None and fmt == "text":  # what the speeds at this size rest on, once (not a column of equal cells)
        low, typical, high = (t * 1e3 for t in STEP_FIXED_S_PER_LAYER)
        click.echo(f"Speeds at this job's step ({at.flops / 1e12:.3g} TFLOP, {at.layers} layers): on average {at.share:.0%} "
                   f"of a step on {w.reference_gpu} is a fixed time that no GPU shortens ({low:g}-{high:g} ms a layer, "
                   f"typically {typical:g}); 'Large work' is each speed on large steps.\n")
    elif fmt == "text":
        click.echo(f"Speeds are those of large work: {UNKNOWN_STEP}, so cards faster than {w.reference_gpu} may gain "
                   "less over it on small steps than shown.\n")
    click.echo(render_rows({"fit": table[cols]}, FIT_HEADERS, fmt), nl=False)


ESTIMATE_HEADERS = {"estimate": {
    "device": "Device", "verdict": "Verdict", "relative_speed": "Speed [x ref]", "runs_at": "Runs at [x ref]",
    "speed_source": "Source",
    "gpu_hours": "Hours a run [h]", "gpu_hours_low": "Low [h]", "gpu_hours_high": "High [h]",
}}


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@click.option("--kind", type=click.Choice(["gpu", "tpu"]), help="Only GPUs or only TPUs.")
@click.option("--all", "show_all", is_flag=True, help="Also the devices the model does not fit (text).")
@scenario_options
@format_option("text", "json", "csv")
@handle_errors
def estimate(scenario: str, kind: str | None, show_all: bool, variant: str | None, sets: tuple[str, ...], today: dt.date,
             catalog_files: tuple[str, ...], fmt: str) -> None:
    """How long each phase's work takes on every device, and where the hours come from.

    A phase described as a job (tokens or samples) is estimated from its FLOPs and the
    reference GPU's utilisation at its size; gpu_hours you give are used as given. Check
    these before trusting a plan.
    """
    from .api import load_catalog, load_scenario, scenario_ids
    from .model.job import estimate_table, step
    from .report.page import render_rows

    catalog = load_catalog(catalog_files, today)
    s = load_scenario(scenario, catalog=catalog, variant=variant, sets=sets, today=today)
    table = estimate_table(s.phases, s.workload, catalog.devices, catalog.throughput, step(s.workload, scenario_ids(catalog)))
    if kind:
        table = table[table["kind"] == kind]
    if fmt != "text":
        click.echo(render_rows({"estimate": table}, ESTIMATE_HEADERS, fmt), nl=False)
        return
    for ph in s.phases:
        click.echo(_estimate_header(s, ph))
        rows = table[(table["phase"] == ph.name) & (show_all | (table["verdict"] != "does-not-fit"))]
        rows = rows.sort_values("gpu_hours", na_position="last")
        click.echo(render_rows({"estimate": rows}, ESTIMATE_HEADERS, "text"))
        if s.framework == "pytorch" and (rows["kind"] == "tpu").any():  # the hours hold; the plans leave them out
            from .model.workload import PYTORCH_ON_TPU

            click.echo(f"  TPUs: plans leave them out: {PYTORCH_ON_TPU}\n")


def _estimate_header(s: Any, ph: Any) -> str:
    """What a phase's hours rest on, in words (the text of ``planner estimate``)."""
    from .model import units
    from .model.job import data_words

    e = ph.job_estimate
    ref = s.workload.reference_gpu
    head = f"{ph.name}: "
    if e is None:
        return head + f"{ph.gpu_hours_per_run:,.4g} h a run on {ref}, as you give them (gpu_hours)"
    count = units.format_count
    data = data_words(e.tokens, ph.samples, ph.epochs)
    low, high = e.hours_range
    lines = [f"{data}, {e.flops:.3g} training FLOPs a run ({s.workload.method}, {count(s.workload.params)} parameters)",
             f"  on {ref}{' (workload.reference_gpu not given)' if s.reference_gpu_is_default else ''} at "
             f"{e.mfu_low:.1%}-{e.mfu_high:.1%} of {e.rate_basis_tflops:,.0f} TFLOPS (typical {e.mfu:.1%}, "
             f"{e.device_class} devices): {low:,.1f}-{high:,.1f} h, {e.hours_typical:,.1f} h at the typical "
             f"utilisation, {e.hours_planned:,.1f} h on average (what the plan counts on)",
             f"  utilisation from: {e.utilisation_source}",
             *(f"  {n}" for n in e.notes[:-1])]
    if not ph.hours_from_job:
        lines.append(f"  the plan uses your gpu_hours instead: {ph.gpu_hours_per_run:,.4g} h a run")
    return head + "\n".join(lines)


# --------------------------------------------------------------------------- what-if


def _job(scenario: str, variant: str | None, sets: tuple[str, ...], today: dt.date, catalog_files: tuple[str, ...]) -> Any:
    from .api import read_text
    from .whatif.tables import Job

    return Job(read_text(scenario), scenario, today, variant, tuple(sets), tuple(catalog_files))


def _workers(n: int | None, jobs: int) -> int | str:
    """Where the what-if's runs go: the Dask scheduler --scheduler names, else local processes
    (--workers, default every core, never more than the runs)."""
    import os

    scheduler = click.get_current_context().meta.get("scheduler")
    return scheduler or max(1, min(n or (os.cpu_count() or 1), jobs))





def _progress(total: int) -> Any:
    """A progress bar on a terminal; nothing when output is piped."""
    import contextlib

    if not sys.stderr.isatty() or total < 4:
        return contextlib.nullcontext(None)
    return click.progressbar(length=total, label="planning", file=sys.stderr)


def _emit_table(df: pd.DataFrame, fmt: str, title: str, report_dir: str | None, force: bool, charts: dict | None = None) -> None:
    """Print a what-if table; with --report, write its page (text, Markdown, HTML with the
    charts, CSV, JSON). ``charts``: name -> (title, Figure)."""
    from .report import view
    from .report.page import render_table, whatif_page

    page = whatif_page(df, title)
    table = render_table(df, fmt) if fmt in ("json", "csv") else (
        view.to_markdown(page) if fmt == "markdown" else view.to_text(page))
    if report_dir:  # written first, as run does: no table on stdout beside an exit 2
        from .report.writer import whatif_files, write_files

        names = write_files(whatif_files(df, page, charts or {}), report_dir, force)
        click.echo(f"written to {report_dir}/ ({', '.join(n for n in names if not n.startswith('.'))})", err=True)
    click.echo(table, nl=False)


def _check_report_dir(report_dir: str | None, force: bool) -> None:
    """Refuse a --report DIR that cannot take the report before planning, not after the wait."""
    if report_dir is not None and not str(report_dir).strip():
        raise InputError([Problem("--report", 0, 0, "", "expected a directory to write the report into, got ''")])
    if report_dir:
        from .report.writer import check_target

        check_target(report_dir, force)


def whatif_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--force", is_flag=True, help="Write into a DIR that holds other files.")(f)
    f = click.option("--report", "report_dir", type=click.Path(file_okay=False), metavar="DIR",
                     help="Write report.html (self-contained), report.md, the table (CSV, JSON, Markdown) and "
                     "its chart into DIR.")(f)
    f = click.option("--workers", type=click.IntRange(1, 64), help="Processes to use (default: every core).")(f)
    f = scheduler_option(f)
    f = format_option("text", "markdown", "json", "csv")(f)
    return f


@main.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--variants", "names", metavar="A,B,...", help="Variants to compare with each file's base "
              "(each file that defines them).")
@click.option("--all", "all_variants", is_flag=True, help="Compare every variant of every file.")
@click.option("--uncertainty", "samples", type=click.IntRange(10, 100_000), is_flag=False, flag_value=1000,
              default=None, metavar="[N]", help="Add each plan's cost P10/P90 and chance of being the cheapest over N "
              "draws of the uncertain inputs (default N 1000).")
@scenario_options
@whatif_options
@handle_errors
def compare(scenarios: tuple[str, ...], names: str | None, all_variants: bool, samples: int | None, variant: str | None,
            sets: tuple[str, ...], today: dt.date, catalog_files: tuple[str, ...], fmt: str, workers: int | None,
            report_dir: str | None, force: bool) -> None:
    """Scenario files and their variants side by side: plan, cost, finish, break-even.

    One file compares its base with its variants (all of them by default); several files
    compare their bases, plus the variants named with --variants or --all."""
    _check_report_dir(report_dir, force)
    _load_engine()
    from .api import check_scenario
    from .whatif.tables import compare as run_compare

    if variant is not None:  # each row is the file's base or one variant of it, never one on top of another
        raise InputError([Problem("--variant", 0, 0, variant, "compare puts a file's base and its variants side by "
                                  f"side: name the variants with --variants {variant}[,...] (--all for every one)")])
    wanted = [n.strip() for n in names.split(",")] if names else []
    jobs, labels, title = [], [], None
    for path in scenarios:
        s = check_scenario(path, catalog_files=catalog_files, variant=variant, sets=sets, today=today)
        title = title or s.name
        if all_variants or (len(scenarios) == 1 and not wanted):
            chosen = list(s.variant_names)
        else:
            chosen = [n for n in wanted if n in s.variant_names] if len(scenarios) > 1 else wanted
        for n in chosen:  # unknown names: the scenario loader's message
            check_scenario(path, catalog_files=catalog_files, variant=n, sets=sets, today=today)
        base = dataclasses.replace(_job(path, variant, sets, today, catalog_files), uncertainty=samples or 0,
                                   candidates=True)
        stem = Path(path).stem if len(scenarios) > 1 else None
        jobs += [base] + [dataclasses.replace(base, variant=n) for n in chosen]
        labels += [(stem, "(base)")] + [(stem, n) for n in chosen]
    missing = [n for n in wanted if len(scenarios) > 1 and not any(lab[1] == n for lab in labels)]
    if missing:
        raise InputError([Problem("--variants", 0, 0, n, "no file defines this variant") for n in missing])
    with _progress(len(jobs)) as bar:
        df = run_compare(jobs, labels, _workers(workers, len(jobs)), bar.update if bar else None)
    heading = f"Variants of {title}" if len(scenarios) == 1 else f"{len(scenarios)} scenarios compared"
    charts = {}
    if report_dir:
        from .report.charts import compare_chart

        charts = {"compare": ("Total cost and finish of each compared plan", compare_chart(df))}
    _emit_table(df, fmt, heading, report_dir, force, charts)


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@click.option("--vary", "vary", multiple=True, required=True, metavar="KEY.PATH=START:STOP:STEPS|a,b,c",
              help="Values for one key (repeat for a grid), e.g. electricity=0.1:0.5:5 USD/kWh.")
@scenario_options
@whatif_options
@handle_errors
def sweep(scenario: str, vary: tuple[str, ...], variant: str | None, sets: tuple[str, ...], today: dt.date,
          catalog_files: tuple[str, ...], fmt: str, workers: int | None, report_dir: str | None, force: bool) -> None:
    """Plan SCENARIO for each value of a parameter (or a grid of two): cost, plan and finish per value."""
    _check_report_dir(report_dir, force)
    _load_engine()
    from .api import check_scenario
    from .whatif.tables import parse_vary
    from .whatif.tables import sweep as run_sweep

    parsed = [parse_vary(v) for v in vary]
    seen = [key for key, _ in parsed]
    twice = sorted({k for k in seen if seen.count(k) > 1})
    if twice:  # one grid axis a key: two would set it twice in every run
        raise InputError([Problem("--vary", 0, 0, k, "given more than once; list every value in one --vary, "
                                  f"such as --vary '{k}=a,b,c'") for k in twice])
    s = check_scenario(scenario, catalog_files=catalog_files, variant=variant, sets=sets, today=today)
    for key, values in parsed:  # check every value the way --set would, before the long run
        for value in values:
            try:
                check_scenario(scenario, catalog_files=catalog_files, variant=variant, sets=(*sets, f"{key}={value}"),
                               today=today)
            except InputError as exc:  # a value of --vary: say so, not --set
                raise InputError([dataclasses.replace(p, file="--vary") if p.file == "--set" and p.path == key else p
                                  for p in exc.problems]) from None
    base = _job(scenario, variant, sets, today, catalog_files)
    total = 1
    for _, values in parsed:
        total *= len(values)
    with _progress(total) as bar:
        df = run_sweep(base, parsed, _workers(workers, total), bar.update if bar else None)
    charts = {}
    if report_dir and len(parsed) in (1, 2):
        from .api import load_catalog
        from .model.schema import key_unit
        from .report.charts import sweep_chart, sweep_map  # matplotlib: only for a report (half a second)

        columns = load_catalog(catalog_files, today).columns
        labels = []
        for key, values in parsed:  # the unit of bare numbers on the axis; values with units show theirs
            unit = key_unit(key, columns, s.currency)
            bare = all(re.fullmatch(r"\s*[-+0-9.eE]+\s*", str(v)) for v in values)
            labels.append(f"{key} [{unit}]" if unit and bare else key)
    if report_dir and len(parsed) == 1:
        charts = {"sweep": (f"Total cost and the plan chosen as {parsed[0][0]} varies",
                            sweep_chart(df, parsed[0][0], s.currency, labels[0]))}
    elif report_dir and len(parsed) == 2:
        charts = {"decision_map": (f"Which plan wins where, over {parsed[0][0]} and {parsed[1][0]}",
                                   sweep_map(df, (parsed[0][0], parsed[1][0]), s.currency, (labels[0], labels[1])))}
    _emit_table(df, fmt, f"Sweep of {', '.join(k for k, _ in parsed)} — {s.name}", report_dir, force, charts)


def _span(span: str, why: str = "") -> float:
    """--span as a share strictly between 0 and 1 (exit 2 with the flag named otherwise)."""
    from .model import units

    try:
        fraction = units.parse_fraction(span)
    except units.QuantityError as exc:
        raise InputError([Problem("--span", 0, 0, "", str(exc))]) from None
    if not 0 < fraction < 1:
        raise InputError([Problem("--span", 0, 0, "", f"expected a share above 0% and below 100%, got {span!r}{why}")])
    return fraction


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@click.option("--span", default="20%", show_default=True, metavar="PERCENT", help="How far each input moves.")
@scenario_options
@whatif_options
@handle_errors
def sensitivity(scenario: str, span: str, variant: str | None, sets: tuple[str, ...], today: dt.date,
                catalog_files: tuple[str, ...], fmt: str, workers: int | None, report_dir: str | None, force: bool) -> None:
    """Move each numeric input down and up by the span: how the cost moves, which inputs flip the decision."""
    _check_report_dir(report_dir, force)
    _load_engine()
    from .api import check_scenario
    from .whatif.tables import sensitivity as run_sensitivity
    from .whatif.tables import sensitivity_inputs

    fraction = _span(span, ": each input moves down and up by it, and down by all of it is nothing")
    s = check_scenario(scenario, catalog_files=catalog_files, variant=variant, sets=sets, today=today)
    base = _job(scenario, variant, sets, today, catalog_files)
    planned = sensitivity_inputs(base, fraction)  # plans the base: which offers are in play
    total = 2 * len(planned[1])
    with _progress(total) as bar:
        df = run_sensitivity(base, fraction, _workers(workers, total), bar.update if bar else None, planned)
    charts = {}
    if report_dir:
        from .report.charts import tornado  # matplotlib: only for a report

        charts = {"tornado": ("How far each input moves the total cost", tornado(df, s.currency, fraction))}
    _emit_table(df, fmt, f"Sensitivity (±{fraction:.0%}) — {s.name}", report_dir, force, charts)


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@click.option("--report", "report_dir", type=click.Path(file_okay=False), metavar="DIR", required=True,
              help="Write explore.html (one self-contained page) and explore.json into DIR.")
@click.option("--span", default="20%", show_default=True, metavar="PERCENT", help="How far each slider reaches.")
@click.option("--inputs", "n_inputs", type=click.IntRange(1, 3), default=3, show_default=True,
              help="Sliders: the inputs that change the plan first, then those that move the cost most.")
@click.option("--points", type=click.IntRange(3, 9), default=7, show_default=True, help="Positions per slider.")
@click.option("--force", is_flag=True, help="Write into a DIR that holds other files.")
@click.option("--workers", type=click.IntRange(1, 64), help="Processes to use (default: every core).")
@scheduler_option
@scenario_options
@handle_errors
def explore(scenario: str, report_dir: str, span: str, n_inputs: int, points: int, force: bool, workers: int | None,
            variant: str | None, sets: tuple[str, ...], today: dt.date, catalog_files: tuple[str, ...]) -> None:
    """One interactive page for a meeting: sliders over the inputs that matter most, every position planned."""
    _check_report_dir(report_dir, force)
    import json

    _load_engine()
    from .api import check_scenario
    from .report.writer import write_files
    from .whatif.explore import explore as run_explore
    from .whatif.explore import page

    fraction = _span(span)
    s = check_scenario(scenario, catalog_files=catalog_files, variant=variant, sets=sets, today=today)
    base = _job(scenario, variant, sets, today, catalog_files)
    data = run_explore(base, fraction, _workers(workers, points ** n_inputs), n_inputs, points)
    html_text = page(data, f"Explore — {s.name}")
    payload = {k: v for k, v in data.items() if k != "sensitivity"}
    names = write_files({"explore.html": html_text.encode("utf-8"),
                         "explore.json": (json.dumps(payload, indent=1, ensure_ascii=False) + "\n").encode("utf-8")},
                        report_dir, force)
    shown = ", ".join(f"{i['key']} ({len(i['values'])} values)" for i in data["inputs"])
    click.echo(f"{len(data['plans'])} plans over {shown}" if data["inputs"] else
               f"1 plan: no input moved by {fraction:.0%} changes the plan or its cost, so the page has no slider")
    click.echo(f"written to {report_dir}/ ({', '.join(n for n in names if not n.startswith('.'))})", err=True)


# --------------------------------------------------------------------------- pricing


@main.group()
def pricing() -> None:
    """Browse and check the catalog: devices, buy and rent offers, free tiers."""


@pricing.command("list")
@click.option("--devices", "table", flag_value="devices", help="Devices and their specs.")
@click.option("--buy", "table", flag_value="buy", help="Cards to buy (new and used, dated).")
@click.option("--rent", "table", flag_value="rent", help="Cloud and marketplace instances.")
@click.option("--free", "table", flag_value="free", help="Free and subscription notebook tiers.")
@click.option("--trends", "table", flag_value="trends",
              help="Where rent prices go from their date, by device (the default price_trend).")
@click.option("--grid", "table", flag_value="grid",
              help="Carbon intensity of electricity by country, cloud region and provider (you.grid).")
@click.option("--electricity", "table", flag_value="electricity",
              help="Electricity prices by region (the default where you.grid names one; else the default row).")
@click.option("--models", "table", flag_value="models",
              help="Named models a workload may give (workload.model): their shapes and sources.")
@click.option("--device", metavar="ID", help="Only this device (aliases work).")
@click.option("--min-vram", type=float, metavar="GB", help="Only devices with at least this much memory.")
@click.option("--provider", metavar="P", help="Only this provider (--rent).")
@click.option("--sort", metavar="COLUMN", help="Sort by a column (see --format json for the names).")
@catalog_option
@click.option("--today", callback=_today, metavar="YYYY-MM-DD", help="Date for reading catalog files.")
@format_option("text", "json", "csv")
@handle_errors
def pricing_list(table: str | None, device: str | None, min_vram: float | None, provider: str | None, sort: str | None,
                 catalog_files: tuple[str, ...], today: dt.date, fmt: str) -> None:
    """List catalog rows: one table, or every table when no flag is given."""
    from pricing.views import LISTINGS, NO_DEVICE, listing

    from .api import load_catalog
    from .report.page import render_rows

    catalog = load_catalog(catalog_files, today)
    # every table the filters apply to: --device and --min-vram pick devices and offers, not trends
    filtered = device is not None or min_vram is not None
    tables = [table] if table else (["rent"] if provider else [t for t in LISTINGS if not (filtered and t in NO_DEVICE)])
    frames = {t: listing(catalog, t, device, min_vram, provider, sort) for t in tables}
    click.echo(render_rows(frames, LISTINGS, fmt), nl=False)


@pricing.command("show")
@click.argument("offer_id", metavar="ID")
@click.option("--table", metavar="TABLE", help="The table to read the row from where several have the id "
                                                 "(de: grid or electricity); default: the first.")
@catalog_option
@click.option("--today", callback=_today, metavar="YYYY-MM-DD", help="Date for reading catalog files.")
@format_option("text", "json")
@handle_errors
def pricing_show(offer_id: str, table: str | None, catalog_files: tuple[str, ...], today: dt.date, fmt: str) -> None:
    """Every field of one catalog row (device, offer, tier, currency or region), with its date and source."""
    from pricing.views import details

    from .api import load_catalog
    from .model.costs import resale_rows
    from .report.page import render_fields

    table, fields, derived = details(load_catalog(catalog_files, today), offer_id, table)
    if table == "buy":
        derived += resale_rows(dict(fields))
    if derived:
        fields += [("--- derived", "")] + derived
    click.echo(render_fields(table, fields, fmt), nl=False)


@pricing.command("refresh")
@click.option("--provider", "providers", multiple=True, metavar="P",
              help="Only these gpuhunt providers (aws, azure, gcp, lambdalabs, runpod, oci, nebius, vastai, ...); "
                   "repeatable.")
@click.option("--clear", is_flag=True, help="Remove the refreshed layer: plans use the shipped catalog again.")
@click.option("--today", callback=_today, metavar="YYYY-MM-DD", help="The date the layer records (default: today).")
@format_option("text", "json")
def pricing_refresh(providers: tuple[str, ...], clear: bool, today: dt.date, fmt: str) -> None:
    """Fetch current rent prices from gpuhunt into a dated layer that every later plan uses.

    gpuhunt's offline catalogs (AWS, Azure, GCP, Lambda, RunPod, OCI, Nebius, ...) are read,
    GPU names mapped to catalog devices (unknown and ambiguous ones listed, never guessed), and
    locations aggregated (median, with min, max and count). Vast.ai's live one-GPU listings
    become one offer per device and kind at their median, with the 10th-90th percentile as its
    range and the listings at or below the median as its supply. The layer sits in the user's data
    directory between the shipped catalog and --catalog files; reports name it and its date.
    Set GPUHUNT_CATALOG_DIR to read a local copy of gpuhunt's catalogs instead of the network."""
    import importlib.metadata
    import shutil

    from pricing.checks import off_list
    from pricing.refresh import PROVIDERS, RefreshError, layer_dir, refresh

    from .api import shipped_catalog

    if clear:
        directory = layer_dir()
        if directory.exists():
            shutil.rmtree(directory)
            click.echo(f"removed the refreshed layer ({directory}); plans use the shipped catalog")
        else:
            click.echo("no refreshed layer to remove")
        return
    unknown = [p for p in providers if p not in PROVIDERS]
    if unknown:
        raise click.BadParameter(f"unknown provider {unknown[0]!r}{did_you_mean(unknown[0], PROVIDERS)} "
                                 f"(gpuhunt's offline providers: {', '.join(PROVIDERS)})", param_hint="--provider")
    shipped = shipped_catalog()
    version = importlib.metadata.version("gpuhunt")
    try:
        rows, unmapped, meta, fetched = refresh(providers, today, shipped.rent, version)
    except RefreshError as exc:
        click.echo(f"refresh failed: {exc}", err=True)
        sys.exit(EXIT_INPUT if exc.input_error else 1)
    directory = layer_dir()
    known = set(shipped.rent["id"])
    updated = int(rows["id"].isin(known).sum())
    off = off_list(shipped, rows)
    if fmt == "json":
        click.echo(json.dumps(dict(meta, directory=str(directory), updated=updated, new=len(rows) - updated,
                                   off_list=[str(f) for f in off],
                                   unmapped_offers=unmapped.to_dict("records")), indent=2))
        return
    _say_refreshed(rows, unmapped, fetched, off, updated, version, today, directory)


def _say_refreshed(rows: Any, unmapped: Any, fetched: Any, off: Any, updated: int, version: str, today: dt.date,
                   directory: Any) -> None:
    """What a refresh did, for people: counts, each provider's catalog date or why it is missing,
    the instances left out and the shipped prices far off the new list."""
    click.echo(f"refreshed {len(rows)} rent offer(s) from gpuhunt {version} on {today} into {directory}")
    click.echo(f"  {updated} shipped offer(s) get a newer price, {len(rows) - updated} offer(s) are new")
    for provider, v in sorted(fetched.versions.items()):
        click.echo(f"  {provider}: catalog {v}")
    for provider, why in sorted(fetched.missing.items()):
        click.echo(f"  {provider}: not refreshed ({why})")
    if len(unmapped):
        click.echo(f"  {len(unmapped)} instance(s) left out, their GPU not mapped to a catalog device:")
        for why, group in unmapped.groupby("why", sort=True):
            names = ", ".join(f"{p}:{i}" for p, i in zip(group["provider"], group["instance"]))
            click.echo(f"    {why}: {names[:160]}{'...' if len(names) > 160 else ''}")
    if off:
        click.echo(f"  {len(off)} shipped price(s) far off the refreshed list (the layer's price is used):")
        for f in off:
            click.echo(f"    {f.path}: {f.message}")


@pricing.command("check")
@catalog_option
@click.option("--today", callback=_today, metavar="YYYY-MM-DD",
              help="Judge dates and staleness as of this date (default: today).")
@click.option("--days", type=int, help="A price older than this many days is stale (default: the catalog's "
              "staleness limit, as for plans).")
def pricing_check(catalog_files: tuple[str, ...], today: dt.date, days: int) -> None:
    """Check the catalog: integrity and lint errors (exit 1, each at file:line:column), then stale prices.

    Errors: unreadable rows, spot priced at or above on-demand, an instance mapped to another GPU
    or form factor, dates after today. Warnings: shipped prices far off a refreshed provider list
    (plans use the list's), stale
    prices and old card prices (new or used) that scenarios starting today are not offered."""
    from pricing.checks import lint
    from pricing.views import FRESH_DAYS, OFFER_MAX_AGE_DAYS, STALE_AFTER_DAYS, fresh_shares, old_offers, stale

    from .api import load_catalog, refreshed_rows, shipped_catalog

    days = STALE_AFTER_DAYS if days is None else days
    try:
        catalog = load_catalog(catalog_files, today)
    except InputError as exc:
        for p in exc.problems:
            click.echo(str(p), err=True)
        click.echo(f"catalog check: {len(exc.problems)} integrity error(s)", err=True)
        sys.exit(1)
    sizes = ", ".join(f"{len(df)} {name}" for name, df in catalog.tables.items())
    click.echo(f"integrity: ok ({sizes}); catalog as of {catalog.as_of()}")
    for name, as_of, source in catalog.layers:
        click.echo(f"layer: {name}" + (f" ({as_of})" if as_of else "") + (f": {source}" if source else ""))
    findings = lint(catalog, today, shipped_catalog(), refreshed_rows())
    for f in findings:
        click.echo(str(f), err=True)
    old = stale(catalog, today, days)
    click.echo(f"stale: {len(old)} price row(s) older than {days} days on {today}")
    for table, group in old.groupby("table", sort=False):
        ids = list(group["id"])
        oldest = group.sort_values("age_days").iloc[-1]
        click.echo(f"  {table}: {len(ids)} rows, oldest {oldest['id']} ({oldest['as_of']}, {oldest['age_days']} days): "
                   + ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else ""))
    from pricing.refresh import delisted, read_layer

    layer = read_layer()
    if layer is not None:
        gone = delisted(shipped_catalog().rent, *layer)
        if gone:
            click.echo(f"not in the refreshed provider lists ({layer[1].get('fetched_on', '?')}): {len(gone)} shipped "
                       "offer(s), perhaps no longer sold that way (or under a GPU name the refresh leaves out): "
                       + ", ".join(gone[:8]) + (", ..." if len(gone) > 8 else ""))
    click.echo(f"dated within {FRESH_DAYS} days of {today}: " + "; ".join(
        f"{table} {fresh} of {total} rows ({fresh / total:.0%})" for table, fresh, total in fresh_shares(catalog, today)))
    launch = catalog.buy[old_offers(catalog.buy, today)]
    if not launch.empty:
        click.echo(f"old card prices: {len(launch)} buy offer(s) priced over {OFFER_MAX_AGE_DAYS} days before "
                   f"{today}, not offered to scenarios starting now: " + ", ".join(launch["id"][:8])
                   + (", ..." if len(launch) > 8 else ""))
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        click.echo(f"catalog check: {len(errors)} lint error(s)", err=True)
        sys.exit(1)
    warned = len(findings) - len(errors)
    click.echo("lint: ok" + (f" ({warned} warning(s) above)" if warned else ""))

if __name__ == "__main__":  # pragma: no cover
    main()
