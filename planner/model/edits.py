"""A what-if's typed edits of a parsed scenario: its quantities (checked by the validator, as
the file is) and its catalog figures."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pricing.errors import InputError, Problem
from pricing.ids import CatalogIds
from pricing.yamldoc import parse_document

from .scenario import Scenario
from .schema import PHASE, SCHEMA, WORKLOAD, YOU, _Context, phase_days_problems, too_much_work
from .validate import _replace, _show, _Validator


@dataclass(frozen=True)
class CatalogEdit:
    """A what-if's change of one catalog figure, typed: ``table`` (rent, buy, free), the row's
    ``id``, the catalog ``column`` (usd_per_hour, price_usd, resale_usd, interruptions_per_h,
    quota_h_per_week) and its ``value`` in the catalog's unit (USD, per hour). What ``--set
    catalog.rent[ID].price=...`` does, without writing the number out and reading it back."""

    table: str
    id: str
    column: str
    value: float


def with_catalog_edits(s: Scenario, edits: Sequence[CatalogEdit]) -> Scenario:
    """The scenario with each edit in its own catalog entries (dataclasses.replace): the row the
    scenario gives, or a partial row over the catalog's (its other fields kept), as a --set does."""
    if not edits:
        return s
    entries = {table: list(rows) for table, rows in s.catalog_entries.items()}
    for e in edits:
        rows = entries.setdefault(e.table, [])
        at = next((i for i, r in enumerate(rows) if r.get("id") == e.id), None)
        if at is None:
            rows.append({"id": e.id, e.column: e.value})
        else:
            rows[at] = {**rows[at], e.column: e.value}
    return dataclasses.replace(s, catalog_entries={t: tuple(rows) for t, rows in entries.items()})


#: Keys a what-if sets on the parsed scenario (:func:`with_value`) instead of reading the file
#: again: quantities no other key is checked against, beyond ``gpu_hours`` x ``runs`` and a
#: deadline against its phase's days (schema.phase_days_problems). ``*`` is each phase.
EDITABLE = ("electricity", "horizon", "workload.params", "workload.batch_size", "workload.activation_memory",
            "phases.*.gpu_hours", "phases.*.runs", "phases.*.checkpoint_every", "phases.*.dataset_size",
            "phases.*.deadline",
            "you.host_power", "you.time_value", "you.attention", "you.budget")


def editable(path: str) -> bool:
    """Whether :func:`with_value` sets the key at ``path`` (else a what-if sets it as --set text)."""
    parts = path.split(".")
    return (".".join(["phases", "*", *parts[2:]]) if len(parts) == 3 and parts[0] == "phases" else path) in EDITABLE


def with_value(s: Scenario, path: str, raw: Any, ids: CatalogIds) -> Scenario | None:
    """``s`` with the key at ``path`` (an :data:`EDITABLE` key, 'phases.final.gpu_hours') set to
    ``raw``, a value as a --set writes it ('240 h', 3), by dataclasses.replace: the key's own
    converter reads it in the scenario's currency, with the same checks and the same errors as
    ``--set path=raw``, so the scenario equals the one read with that --set, without reading the
    file again. None where the key is not one to set so (a phase the scenario does not have)."""
    parts = path.split(".")
    if not editable(path) or (parts[0] == "phases" and parts[1] not in {ph.name for ph in s.phases}):
        return None
    if parts[0] == "workload" and any(ph.hours_from_job for ph in s.phases):
        return None  # a job's hours follow from the workload: the file is read again with the --set
    section = {"workload": WORKLOAD, "you": YOU, "phases": PHASE}.get(parts[0], SCHEMA)
    key = parts[-1]
    f = section[key]
    v = _Validator(parse_document("null", "--set"), _Context(ids, s.read_on or s.start, currency=s.currency))
    where = tuple(parts)

    def refused(message: str) -> InputError:
        return InputError([Problem("--set", 0, 0, path, message)])

    try:
        value = v.convert(f, raw, where) if raw is not None else None
    except ValueError as exc:
        raise refused(str(exc)) from None
    if value is None:
        if f.required:
            raise refused("a value is required here")
        value = f.default
    attr = f.attr or key
    ranges = {k: r for k, r in s.ranges.items() if k != path} | v.ranges  # a range only where one is written
    change = f"{path}: {_show(_value_at(s, parts, attr))} -> {_show(raw)} (--set)"
    read_as = (*((k, n) for k, n in s.read_as if k != path), *v.read_as)  # as the file with this --set reads
    changed = _replace(s, ranges=ranges, read_as=read_as, overrides=(*s.overrides, change))
    if parts[0] == "phases":
        ph = s.phase(parts[1])
        moved = _replace(ph, **{attr: value}, **({"hours_from_job": False} if key == "gpu_hours" else {}))
        if (problem := too_much_work(moved.gpu_hours_per_run, moved.runs)) is not None:
            raise refused(problem)
        for _, why in phase_days_problems(s.start, moved.start, moved.deadline) if key == "deadline" else ():
            raise refused(why)
        return _replace(changed, phases=tuple(moved if p.name == ph.name else p for p in s.phases))
    if parts[0] in ("workload", "you"):
        return _replace(changed, **{parts[0]: _replace(getattr(s, parts[0]), **{attr: value})})
    extra = ({"electricity_is_default": False, "electricity_region": None} if key == "electricity" else
             {"horizon_is_default": False} if key == "horizon" else {})
    return _replace(changed, **{attr: value}, **extra)


def _value_at(s: Scenario, parts: list[str], attr: str) -> Any:
    if parts[0] == "phases":
        return getattr(s.phase(parts[1]), attr)
    if parts[0] in ("workload", "you"):
        return getattr(getattr(s, parts[0]), attr)
    return getattr(s, attr)
