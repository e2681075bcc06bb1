"""The library entry points: load a scenario file, plan it. I/O lives here."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pricing
from pricing.errors import InputError, Problem
from pricing.memo import Kept, frozen

from .model.scenario import Scenario
from .model.validate import load_catalog_text, load_scenario_text

if TYPE_CHECKING:
    from .decide.result import Plan

__all__ = ["default_catalog", "load_scenario", "plan", "to_dict"]


@lru_cache(maxsize=1)
def shipped_catalog() -> pricing.Catalog:
    """The shipped catalog, loaded and validated once per process."""
    return pricing.load_catalog()


def refreshed_rows() -> Any:
    """The rows (a DataFrame) of the user's last ``planner pricing refresh``, or None."""
    from pricing.refresh import read_layer

    layer = read_layer()
    return None if layer is None else layer[0]


def default_catalog() -> pricing.Catalog:
    """The shipped catalog with the user's refreshed layer on top (rows the layer saw later
    than the shipped row's date, and offers the shipped catalog lacks)."""
    from pricing.refresh import describe, name_of, newer_rows, read_layer

    base = shipped_catalog()
    layer = read_layer()
    if layer is None:
        return base
    rows, info = layer
    return _layered(base, newer_rows(rows, base.rent), name_of(info), info.get("fetched_on"), describe(info))


def _layered(base: pricing.Catalog, rows: Any, name: str, as_of: dt.date | None, source: str) -> pricing.Catalog:
    """The base catalog with the refreshed rows on top, made once per process for these very
    rows (kept by value: a layer refreshed meanwhile is a new key, never a stale hit)."""
    entries = tuple(tuple((k, v) for k, v in r.items() if not (isinstance(v, float) and v != v))
                    for r in rows.to_dict("records"))

    def make() -> pricing.Catalog:
        on = dt.date.fromisoformat(as_of) if isinstance(as_of, str) else as_of
        return base.with_entries({"rent": [dict(e) for e in entries]}, layer=name, as_of=on, source=source)

    return _LAYERED.get((base.rent,), (name, as_of, source, entries), make)


_LAYERED = Kept(size=2)  # the shipped catalog with the last refreshed layer or two


#: A scenario or catalog file is kilobytes; anything this large is not one.
MAX_FILE_BYTES = 1_000_000


def read_text(path: str | Path) -> str:
    """A scenario or catalog file's text; unreadable files are input errors.

    Only regular files are read, and at most MAX_FILE_BYTES of them: /dev/zero, a FIFO or a
    huge file would otherwise hang or exhaust memory."""
    import stat

    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise InputError([Problem(str(path), 0, 0, "", "not a regular file (a device, FIFO or directory); "
                                      "give a scenario or catalog file")])
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)  # one cap, whatever the file claims its size is
        if len(data) > MAX_FILE_BYTES:
            raise InputError([Problem(str(path), 0, 0, "", f"more than {MAX_FILE_BYTES:,} bytes; a scenario or "
                                      f"catalog file is at most {MAX_FILE_BYTES:,} bytes")])
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError([Problem(str(path), 0, 0, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})")]) from None
    except OSError as exc:
        raise InputError([Problem(str(path), 0, 0, "", f"cannot read the file: {exc.strerror}")]) from None


def load_catalog(extra: Sequence[str | Path] = (), today: dt.date | None = None) -> pricing.Catalog:
    """The shipped catalog with the user's or lab's catalog files layered on top, in order."""
    catalog = default_catalog()
    for path in extra:
        entries = load_catalog_text(read_text(path), catalog.ids(), file=str(path), today=today or dt.date.today())
        catalog = catalog.with_entries(entries, layer=Path(path).name, source=str(path))
    return catalog


def scenario_ids(catalog: pricing.Catalog) -> pricing.CatalogIds:
    """What a scenario is checked against in a catalog: its ids, with the speed model over its
    tables, which a job described by its data needs (planner.model.job.usable_peak)."""
    import dataclasses

    from .model.job import speed_ratio_of

    return dataclasses.replace(catalog.ids(), speed_ratio=speed_ratio_of(catalog.devices, catalog.throughput))


def _shipped_speed_ratio(device: str, other: str, family: str, precision: str) -> tuple[float, bool] | None:
    """The speed model over the shipped catalog's tables, loaded only when a job asks (``planner
    validate`` reads no tables otherwise): the same tables, so the same hours, as a plan's."""
    from .model.job import speed_ratio_of

    catalog = default_catalog()
    return speed_ratio_of(catalog.devices, catalog.throughput)(device, other, family, precision)


def shipped_ids() -> pricing.CatalogIds:
    """The shipped catalog's ids, aliases and rates, read without pandas (pricing.ids)."""
    from pricing.ids import read_ids

    return with_shipped_speeds(read_ids())


def with_shipped_speeds(ids: pricing.CatalogIds) -> pricing.CatalogIds:
    """Quick ids with the speed model over the shipped catalog, loaded when a job asks."""
    import dataclasses

    return dataclasses.replace(ids, speed_ratio=_shipped_speed_ratio)


def catalog_ids(extra: Sequence[str | Path] = (), today: dt.date | None = None) -> pricing.CatalogIds:
    """What a scenario is checked against: the ids of the shipped catalog, the refreshed layer and
    the ``--catalog`` files, read without loading the tables (``planner validate`` is quick)."""
    from pricing.ids import layer_rent_ids

    ids = shipped_ids()
    ids = ids.with_entries({"rent": [{"id": i} for i in layer_rent_ids()]})
    for path in extra:
        entries = load_catalog_text(read_text(path), ids, file=str(path), today=today or dt.date.today())
        ids = ids.with_entries(entries)
    return ids


def check_scenario(path: str | Path, *, catalog_files: Sequence[str | Path] = (), variant: str | None = None,
                   sets: Sequence[str] = (), today: dt.date | None = None) -> Scenario:
    """Read, override and validate a scenario file against the catalog's ids (raises InputError)."""
    return load_scenario_text(read_text(path), catalog_ids(catalog_files, today), file=str(path),
                              today=today or dt.date.today(), variant=variant, sets=sets)


def load_scenario(
    path: str | Path,
    *,
    catalog: pricing.Catalog | None = None,
    variant: str | None = None,
    sets: Sequence[str] = (),
    today: dt.date | None = None,
) -> Scenario:
    """Read, override and validate a scenario file (raises InputError)."""
    catalog = catalog or default_catalog()
    return load_scenario_text(read_text(path), scenario_ids(catalog), file=str(path),
                              today=today or dt.date.today(), variant=variant, sets=sets)


def plan(scenario: Scenario, catalog: pricing.Catalog | None = None, *, trials: int | None = None,
         seed: int = 0, pareto: bool = False, alternatives: bool = True, detail: bool = True,
         breakevens: bool = True, uncertainty: int | None = None, workers: int | str = 1, start: tuple = ()) -> Plan:
    """The cheapest plan for a scenario, with its scenario's own catalog entries applied;
    ``uncertainty`` draws (default: the scenario's ``uncertainty`` key, 0 for none) add how sure
    the answer is (planner.decide.uncertainty; needs ``alternatives``); its flips are planned
    again on ``workers`` (local processes, or a Dask scheduler's address: planner.executors).
    ``start``: a plan by name to start the search from (``Plan.named_plan`` of a plan of another
    position of this scenario: a what-if's base)."""
    import dataclasses

    from .decide import optimize

    base = catalog or default_catalog()
    with solver_output_silenced():
        p = optimize.plan(scenario, with_entries(base, scenario.catalog_entries), base_catalog=base,
                          trials=optimize.DEFAULT_TRIALS if trials is None else trials, seed=seed, pareto=pareto,
                          alternatives=alternatives, detail=detail, breakevens=breakevens, start=start)
    n = scenario.uncertainty_samples if uncertainty is None else uncertainty
    if n and alternatives and p.alternatives:
        from .decide.uncertainty import analyse

        p = dataclasses.replace(p, uncertainty=analyse(p, n, seed))
        p = dataclasses.replace(p, uncertainty=replan_flips(p, base, workers))
    elif n and alternatives:  # asked for, and nothing to draw: said, not left out in silence
        p = dataclasses.replace(p, warnings=(*p.warnings, "no uncertainty analysis: it draws the inputs of the "
                                             "strategies' plans that meet every deadline, and no strategy has one "
                                             "(the plan's shortfall says what would fix it)"))
    return p


#: How far either side of a stated flip value the plan is planned again (a share of the value).
FLIP_SIDE = 0.02


def _named_plan(task: tuple[Scenario, pricing.Catalog]) -> str:
    """What a scenario's plan does, in words (what it buys, where it runs): one flip side."""
    from .decide import optimize

    s, catalog = task
    with solver_output_silenced():
        plan = optimize.plan(s, with_entries(catalog, s.catalog_entries), base_catalog=catalog, trials=0,
                             alternatives=False, detail=False, breakevens=False)
    bought = ", ".join(b.offer for b in plan.purchases)
    runs = sorted({a.option for ph in plan.phases for a in ph.assignments})
    return (f"buys {bought}" if bought else "buys nothing") + (f", runs on {', '.join(runs)}" if runs else "") + (
        "" if plan.feasible else ", misses a deadline")


def replan_flips(p: Plan, catalog: pricing.Catalog, workers: int | str = 1) -> Any:
    """The uncertainty analysis's drivers with each flip value checked by planning again: the
    flip is found on the strategies' plans with their assignments fixed, so a user who acts on
    it must see what a plain plan does there. For an input a scenario can set (your work, your
    electricity or time, a catalog price), the plan is made again FLIP_SIDE below and above the
    flip and each side's plan is named (what it buys, where each phase runs); other inputs
    (speeds, resale, default rates, trends) say they are re-priced, not re-planned."""
    import dataclasses

    from .model.edits import CatalogEdit, with_catalog_edits, with_value

    u = p.uncertainty
    s = p.scenario
    assert p.options is not None, "a plan with an uncertainty analysis keeps its options"
    kinds = dict(zip(p.options["option"], p.options["kind"]))

    def at(name: str, value: float) -> Scenario | None:
        if name.startswith("phases.") and name.endswith(".gpu_hours"):
            return with_value(s, name, f"{value!r} h", scenario_ids(catalog))
        if name in ("electricity", "you.time_value"):  # drawn in USD (uncertainty._range_unit)
            return with_value(s, name, f"{value!r} USD/{'kWh' if name == 'electricity' else 'h'}",
                              scenario_ids(catalog))
        if name.startswith("price "):
            offer = name[len("price "):]
            table, column = {"rent": ("rent", "usd_per_hour"), "buy": ("buy", "price_usd")}.get(
                kinds.get(offer, ""), ("", ""))
            if table:
                return with_catalog_edits(s, (CatalogEdit(table, offer, column, value * s.usd_per_currency),))
        return None

    from .executors import run_all

    tasks, where = [], []  # each flip's two sides, planned together (here, on processes or a cluster)
    for k, d in enumerate(u.drivers):
        if d.flips_at is not None:
            edited = [at(d.input, d.flips_at * (1 - FLIP_SIDE)), at(d.input, d.flips_at * (1 + FLIP_SIDE))]
            if all(e is not None for e in edited):
                tasks += [(e, catalog) for e in edited if e is not None]
                where.append(k)
    named = run_all(_named_plan, tasks, workers)
    sides = {k: (named[2 * i], named[2 * i + 1]) for i, k in enumerate(where)}
    drivers = [dataclasses.replace(d, replanned=sides.get(k)) for k, d in enumerate(u.drivers)]
    return dataclasses.replace(u, drivers=tuple(drivers))


def with_entries(base: pricing.Catalog, entries: Any) -> pricing.Catalog:
    """``base`` with a scenario's own catalog entries, made once per process for equal entries:
    what-if runs that change no entry share one catalog, so every table-keyed memo downstream
    (options, fits, quotes) finds its work done."""
    if not any(entries.values()):
        return base
    return _WITH_ENTRIES.get(tuple(base.tables.values()), (frozen(entries),),
                             lambda: base.with_entries(entries))


_WITH_ENTRIES = Kept(size=8)
_FD_LOCK = threading.Lock()


@contextlib.contextmanager
def solver_output_silenced() -> Iterator[None]:
    """Point file descriptor 1 at the null device while a plan is solved.

    HiGHS prints MIP progress lines (``HighsMipSolverData::...``) from C++ straight to the
    process's stdout, whatever its options say (its banner, once a process), which would corrupt ``--format json``;
    nothing but the answer may reach stdout. Python-level output is flushed around the swap."""
    with _FD_LOCK:
        sys.stdout.flush()
        try:
            saved = os.dup(1)
        except OSError:  # no stdout at all: nothing to protect
            yield
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)


def to_dict(plan: Plan) -> dict:
    """The JSON object of docs/output.md for a plan."""
    from .decide.result import to_dict as _to_dict

    return _to_dict(plan)
