"""The command line: parse arguments, call the library, print. Nothing else.

Exit status: 0 ok; 2 bad input (scenario, catalog, arguments); 3 a plan was
printed but some phase cannot meet its deadline.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
import traceback

import click

from . import __version__
from .errors import InputError

EXIT_INPUT = 2
EXIT_INFEASIBLE = 3


def _today(ctx, param, value):
    if value is None:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"expected a date YYYY-MM-DD, got {value!r}") from None


def scenario_options(f):
    """--variant, --set and --today, shared by every command that reads a scenario."""
    f = click.option("--today", callback=_today, metavar="YYYY-MM-DD",
                     help="Date used as the scenario's start when it gives none (default: today).")(f)
    f = click.option("--set", "sets", multiple=True, metavar="KEY.PATH=VALUE",
                     help="Override a scenario value, e.g. --set workload.params=300M (repeatable).")(f)
    f = click.option("--variant", metavar="NAME", help="Apply a named variant from the scenario's 'variants'.")(f)
    return f


def handle_errors(f):
    """Input errors become messages and exit 2; bugs say how to see the traceback."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        debug = click.get_current_context().find_root().params.get("debug")
        try:
            return f(*args, **kwargs)
        except InputError as exc:
            for p in exc.problems:
                click.echo(str(p), err=True)
            sys.exit(EXIT_INPUT)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except Exception as exc:  # a bug in the planner, not the user's input
            if debug:
                traceback.print_exc()
            else:
                click.echo(f"planner: internal error: {type(exc).__name__}: {exc} "
                           "(rerun with --debug for the traceback and please report it)", err=True)
            sys.exit(1)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="planner")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for internal errors.")
def main(debug):
    """Where should your GPU hours run: a card you buy, rented GPUs, or free tiers?

    Describe the work in a scenario file (see scenarios/thesis.yaml) and run
    `planner run FILE`.
    """


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@scenario_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="What to print.")
@handle_errors
def run(scenario, variant, sets, today, fmt):
    """Plan SCENARIO: the cheapest way to meet every deadline."""
    from .api import load_scenario, plan
    from .report import RENDERERS

    s = load_scenario(scenario, variant=variant, sets=sets, today=today)
    p = plan(s)
    click.echo(RENDERERS[fmt](p), nl=False)
    if not p.feasible:
        sys.exit(EXIT_INFEASIBLE)


@main.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@scenario_options
@handle_errors
def validate(scenario, variant, sets, today):
    """Check SCENARIO and print 'ok' or every problem found."""
    from .api import load_scenario

    load_scenario(scenario, variant=variant, sets=sets, today=today)
    click.echo("ok")


if __name__ == "__main__":  # pragma: no cover
    main()
