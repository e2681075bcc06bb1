"""Scenario files read and checked: parse, apply the variant and ``--set`` overrides, validate
every section against the schema, and build the Scenario record. All problems are collected,
then raised together as one :class:`~pricing.errors.InputError` sorted by position."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pricing.errors import InputError, Problem, close_matches, did_you_mean
from pricing.ids import CatalogIds
from pricing.yamldoc import Document, dotted, parse_document

from . import units
from .overrides import Override, _catalog_entry_for, _flatten, _resolve_path, _set_in, _split_path, parse_set
from .scenario import Consider, Phase, Scenario, Workload, You
from .schema import (
    CONSIDER,
    DEFAULT_REFERENCE_GPU,
    ENTRY_COLUMNS,
    MAX_GPU_HOURS,
    MAX_PHASES,
    MIN_HOURS,
    PHASE,
    REQUIRED_SECTIONS,
    SCHEMA,
    WORKLOAD,
    YOU,
    Field,
    _Context,
    _currency,
    build,
    grid_of_region,
    phase_days_problems,
    section_values,
    synonym_of,
    too_much_work,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: A frozen record (dataclasses.replace keeps its type).
T = TypeVar("T", bound="DataclassInstance")


def load_scenario_text(
    text: str,
    ids: CatalogIds,
    *,
    file: str = "<scenario>",
    today: dt.date,
    variant: str | None = None,
    sets: Sequence[str] = (),
) -> Scenario:
    """Parse and validate a scenario text. Raises InputError listing every problem.

    ``today`` is the default ``start`` (the core never reads the clock).
    ``variant`` names an entry of ``variants``; ``sets`` are ``key.path=value``.
    """
    v, data, applied, variant_names = _overridden(text, ids, file, today, variant, sets)
    scenario = v.scenario(data)
    if v.problems or scenario is None:
        raise InputError(v.problems)
    return _replace(scenario, variant=variant, overrides=tuple(applied), file=file, variant_names=variant_names)


def overridden_data(text: str, ids: CatalogIds, *, file: str = "<scenario>", today: dt.date,
                    variant: str | None = None, sets: Sequence[str] = ()) -> dict:
    """The scenario file's parsed data as the variant and ``--set`` leave it (before the schema
    types it): what a what-if reads for the file's own numbers. Raises InputError as
    :func:`load_scenario_text` does for the overrides."""
    return _overridden(text, ids, file, today, variant, sets)[1]


def _overridden(text: str, ids: CatalogIds, file: str, today: dt.date, variant: str | None,
                sets: Sequence[str]) -> tuple[_Validator, dict, list[str], tuple[str, ...]]:
    """The file parsed, with the variant's and --set changes applied: (its validator, the data,
    what changed, the variants' names)."""
    doc = parse_document(text, file)
    if doc.data is None:
        raise InputError([Problem(file, 1, 1, "", "the file is empty: expected a scenario mapping with "
                                  "'name', 'workload' and 'phases' (see scenarios/thesis.yaml)")])
    if not isinstance(doc.data, dict):
        kind = type(doc.data).__name__ if not isinstance(doc.data, list) else "list"
        raise InputError([doc.problem((), f"expected a mapping of keys such as 'name:', 'workload:', "
                                      f"'phases:' at the top of the file, got a {kind}")])
    v = _Validator(doc, _Context(ids, today))
    data = doc.data
    variants_raw = _variants(v, data)
    variant_names = tuple(variants_raw or ())
    overrides = _variant_overrides(doc, file, variants_raw, variant) if variant is not None else []
    for option in sets:
        key, value = parse_set(option)
        overrides.append(Override(_split_path(key), value, "--set", 0, 0, "--set"))
    applied = _apply_overrides(v, data, overrides, ids)
    if v.problems:
        raise InputError(v.problems)
    return v, data, applied, variant_names


def _variants(v: _Validator, data: dict) -> dict | None:
    """The file's ``variants`` (None when absent or not a mapping, which is a problem noted)."""
    variants_raw = data.get("variants")
    if variants_raw is not None and not isinstance(variants_raw, dict):
        v.add(("variants",), "expected a mapping of variant names to changes")
        return None
    for name, body in (variants_raw or {}).items():
        if not isinstance(body, dict):
            v.add(("variants", name), "expected a mapping of key.path: value changes, e.g. {electricity: 0.10 USD/kWh}")
    return variants_raw


def _variant_overrides(doc: Document, file: str, variants_raw: dict | None, variant: str) -> list[Override]:
    """The changes a named variant makes, each located in the file (an unknown name is an error)."""
    if variant not in (variants_raw or {}):
        hint = did_you_mean(variant, variants_raw or {})
        if variant.strip().lower() in ("base", "default", "none") and not hint:  # the file as written is no variant
            hint = " (the file as written, without a variant, is its base: leave it out of --variant and --variants)"
        known = ", ".join(variants_raw or {}) or "none are defined"
        line, col = doc.position(("variants",), at_key=True) if variants_raw else (0, 0)
        raise InputError([Problem(file, line, col, "variants",
                                  f"no variant named '{variant}'{hint} (variants: {known})")])
    body = (variants_raw or {})[variant]
    overrides: list[Override] = []
    if isinstance(body, dict):
        leaves: list = []
        _flatten(body, (), doc, ("variants", variant), SCHEMA, leaves)
        for path, value, doc_path in leaves:
            line, col = doc.position(doc_path, at_key=True)
            overrides.append(Override(path, value, file, line, col, f"variant '{variant}'"))
    return overrides


def _apply_overrides(v: _Validator, data: dict, overrides: list[Override], ids: CatalogIds) -> list[str]:
    """Set each override (a variant's change, a --set) into the parsed file, where the schema
    has its key; a problem for each that cannot be set. Returns what changed, as said in the
    answer ('key: old -> new (origin)')."""
    applied: list[str] = []
    for o in overrides:
        try:
            _catalog_entry_for(o.path, data, ids)
            path = _resolve_path(o.path, data, SCHEMA, "the scenario")
            if not path or path[0] == "variants":
                raise ValueError("cannot override 'variants'")
            _no_bare_catalog_money(o.path, o.value, data.get("currency", "USD"))
        except ValueError as exc:
            v.problems.append(Problem(o.file, o.line, o.column, dotted(o.path), str(exc)))
            continue
        old = _set_in(data, path, o.value)
        v.origin[path] = o
        by_id = len(o.path) >= 4 and o.path[0] == "catalog" and not isinstance(o.path[2], int)
        shown = (f"catalog.{o.path[1]}[{o.path[2]}].{dotted(o.path[3:])}" if by_id else dotted(path))
        was = "(the catalog's)" if by_id and old is None else _show(old)
        applied.append(f"{shown}: {was} -> {_show(o.value)} ({o.label})")
    return applied


#: Catalog fields in money: a bare number there is ambiguous when the scenario's currency is not
#: the catalog's (USD): read as the scenario's, it is not the figure the catalog row shows.
CATALOG_MONEY_FIELDS = {"price", "resale", "storage", "egress"}


def _no_bare_catalog_money(path: tuple, value: Any, currency: Any) -> None:
    """Refuse a bare number for a catalog row's money (``catalog.rent[ID].price=0.40``) in a
    scenario whose currency is not USD: the catalog lists the row in USD, a bare number would be
    read in the scenario's currency, and the same "0.40" would price another plan than the row."""
    if (len(path) < 4 or path[0] != "catalog" or isinstance(path[2], int) or path[-1] not in CATALOG_MONEY_FIELDS
            or str(currency).strip().upper() == "USD"):
        return
    bare = (isinstance(value, (int, float)) and not isinstance(value, bool)) or (
        isinstance(value, str) and re.fullmatch(r"\s*[-+]?[\d.]+(e[-+]?\d+)?\s*", value, re.I) is not None)
    if bare:
        unit = "/h" if path[1] == "rent" and path[-1] == "price" else ""
        raise ValueError(f"a bare {value} would be read in {currency}, while the catalog lists this row in USD: "
                         f"write the currency ({value} USD{unit} or {value} {currency}{unit})")


def _show(value: Any) -> str:
    return "(unset)" if value is None else str(value)


def _replace(obj: T, **changes: Any) -> T:
    return dataclasses.replace(obj, **changes)


def _tokens_at(card: Any, image_size: int | None) -> int:
    """A named model's tokens a sample; for a vision transformer (its card gives an image size and
    the patches plus a class token it makes of it: ViT-B/16, 197 at 224 px) at another image size,
    the patches of that size: (size / patch)^2 + 1, 577 at 384 px (Dosovitskiy et al. 2020, sec. 3.1
    and 3.2: fine-tuning at a higher resolution keeps the patch size, so the sequence grows)."""
    seq = int(card.sequence_length)
    if not image_size or not card.image_size or card.family != "transformer" or image_size == card.image_size:
        return seq
    side = round((seq - 1) ** 0.5)
    if side * side != seq - 1 or card.image_size % side:
        return seq  # not a grid of patches and a class token: the card's length stands
    patch = card.image_size // side
    return (int(image_size) // patch) ** 2 + 1


#: Keys a user writes for one the schema names otherwise: a dataset counted in images,
#: sequences or examples is samples; a phase's hours are GPU-hours on the reference GPU.
#: A catalog entry's device, price and count are written as a gpu, a cost or a number of gpus, a
#: tier's quota and session limit as a weekly quota or a session length.
SYNONYMS = {"images": "samples", "sequences": "samples", "examples": "samples", "hours": "gpu_hours",
            "gpu": "device", "card": "device", "accelerator": "device", "cost": "price", "rate": "price",
            "hourly": "price", "price_per_hour": "price", "gpus": "count", "num_gpus": "count", "quantity": "count",
            "weekly_quota": "quota", "quota_per_week": "quota", "hours_per_week": "quota", "weekly_hours": "quota",
            "max_session": "session_limit", "session_length": "session_limit", "timeout": "idle_timeout"}


def _meant(key: Any, schema: Mapping[str, Any]) -> str:
    """' (did you mean ...?)' for an unknown key: the key a synonym stands for (SYNONYMS), with
    what it means there, where ``schema`` has it (an entry's 'cost' is its price, not the 'count'
    it is spelt close to); else a close spelling of a key of ``schema``; else ''."""
    meant = synonym_of(key, schema, SYNONYMS)
    if meant is None:
        return did_you_mean(key, schema)
    return f" (did you mean '{meant}'? {key} are counted as {meant})" if meant == "samples" else \
        f" (did you mean '{meant}'?)"


def _work_given(body: Any) -> set[str]:
    """Which of the keys that give a phase's work (gpu_hours, or a job's tokens or samples) it
    wrote, a synonym (SYNONYMS) or a misspelling the unknown key's did-you-mean names counting
    as the key it stands for: a phase that wrote ``sequences`` or ``gpu-hours`` is told that
    once, not also that it lacks samples or gpu_hours."""
    if not isinstance(body, dict):
        return set()
    work = ("gpu_hours", "tokens", "samples")
    given = set()
    for k in body:
        if not isinstance(k, str):
            continue
        k = SYNONYMS.get(k.lower(), k)
        if k in work:
            given.add(k)
        elif k not in PHASE and (meant := close_matches(k, PHASE)) and meant[0] in work:
            given.add(meant[0])  # the first the refusal suggests (did_you_mean): the key it was meant to be
    return given


def _belongs_elsewhere(key: Any, path: tuple) -> str:
    """' (it belongs under workload: workload.method)' where a key unknown at ``path`` is a key of
    another section (a phase's `method`, a top-level `budget`), else ''."""
    places = [name for name, section in (("workload", WORKLOAD), ("you", YOU), ("consider", CONSIDER))
              if key in section] + (["phases.NAME"] if key in PHASE else []) + (
              [""] if key in SCHEMA and not isinstance(SCHEMA[key], Mapping) else [])
    here = dotted(path) if path else ""
    places = [p for p in places if p != here and not (p == "phases.NAME" and len(path) == 2 and path[0] == "phases")]
    if not places:
        return ""
    shown = {"phases.NAME": f"under a phase: phases.<name>.{key}", "": f"at the top level: {key}"}
    return " (it belongs " + " or ".join(shown.get(p, f"under {p}: {p}.{key}") for p in places) + ")"


class _Validator:
    """Walks raw data against the schema, collecting problems with positions."""

    def __init__(self, doc: Document, ctx: _Context):
        self.doc = doc
        self.ctx = ctx
        self.problems: list[Problem] = []
        self.origin: dict[tuple, Override] = {}
        self.ranges: dict[str, tuple[float, float]] = {}  # quantities given as ranges (docs/scenario.md)
        self.read_as: list[tuple[str, str]] = []  # (path, how a name several devices go by was read)

    # -- problems
    def add(self, path: tuple, message: str, at_key: bool = False) -> None:
        for n in range(len(path), 0, -1):
            o = self.origin.get(path[:n])
            if o is not None:
                self.problems.append(Problem(o.file, o.line, o.column, self.named(path), message))
                return
        line, column = self.doc.position(path, at_key)
        self.problems.append(Problem(self.doc.file, line, column, self.named(path), message))

    def named(self, path: tuple) -> str:
        """A key path as --set takes it: a catalog entry by its id where it has one, in a
        scenario ('catalog.buy[card].resale', not 'catalog.buy.0.resale') and in a catalog file
        given with --catalog ('rent[uni:a].price', not 'rent.0.price')."""
        head = 1 if path[:1] == ("catalog",) else 0  # a catalog file's lists are at the top
        if len(path) >= head + 2 and path[head] in ("buy", "rent", "free") and isinstance(path[head + 1], int):
            rows = self.doc.data.get("catalog") if head and isinstance(self.doc.data, dict) else self.doc.data
            rows = rows.get(path[head]) if isinstance(rows, dict) else None
            i = path[head + 1]
            row = rows[i] if isinstance(rows, list) and 0 <= i < len(rows) else None
            if isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"].strip():
                rest = dotted(path[head + 2:])
                return f"{dotted(path[:head + 1])}[{row['id']}]" + (f".{rest}" if rest else "")
        return dotted(path)

    # -- sections
    def convert(self, f: Field, value: Any, path: tuple) -> Any:
        """A field's canonical value; a quantity written as a range (``200..300``, ``250 h ± 20%``)
        gives its middle, and the range is kept for the uncertainty analysis."""
        ends = units.split_range(value)
        if ends is None:
            said = len(self.ctx.read_as)
            out = f.convert(value, self.ctx)
            self.read_as += [(dotted(path), note) for note in self.ctx.read_as[said:]]
            return out
        try:
            low, high = (f.convert(e, self.ctx) for e in ends)
        except ValueError as exc:  # say what was written, not the end the unit was carried to
            raise type(exc)(f"{exc} (in the range {value!r})") from None
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (low, high)):
            raise ValueError(f"a range is for quantities; got {value!r}")
        if low > high:
            raise ValueError(f"a range runs from low to high, got {value!r}")
        middle = (low + high) / 2
        if isinstance(low, int) and isinstance(high, int):
            middle = round(middle)
        self.ranges[dotted(path)] = (float(low), float(high))
        return middle  # both ends passed the field's checks, so the middle does too

    def section(self, raw: Any, path: tuple, schema: Mapping[str, Any], what: str) -> dict[str, Any]:
        """Validate a mapping; return {key: canonical value} for keys present and valid."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            self.add(path, f"expected a mapping of {what} keys ({', '.join(schema)}), got {_kind(raw)}")
            return {}
        out: dict[str, Any] = {}
        for key, value in raw.items():
            child = path + (key,)
            if key not in schema:
                self.add(child, f"unknown key{_meant(key, schema) or _belongs_elsewhere(key, path)}; "
                                f"expected one of: {', '.join(schema)}", at_key=True)
                continue
            f = schema[key]
            if isinstance(f, Field):
                if value is None:
                    if f.required:
                        self.add(child, "a value is required here")
                    continue
                try:
                    out[key] = self.convert(f, value, child)
                except units.QuantityError as exc:
                    self.add(child, str(exc))
                except ValueError as exc:
                    self.add(child, str(exc))
        for key, f in schema.items():
            if isinstance(f, Field) and f.required and key not in raw:
                self.add(path, f"missing required key '{dotted(path + (key,))}'", at_key=bool(path))
        return out

    def scenario(self, data: dict) -> Scenario | None:
        for key in data:
            if key not in SCHEMA:
                self.add((key,), f"unknown key{did_you_mean(key, SCHEMA) or _belongs_elsewhere(key, ())}; "
                                 f"expected one of: {', '.join(SCHEMA)}", at_key=True)
        for key in REQUIRED_SECTIONS:
            if key not in data or data[key] is None:
                self.add((key,) if key in data else (), f"missing required key '{key}'")
        top_fields = {k: f for k, f in SCHEMA.items() if isinstance(f, Field)}
        # currency first: money values depend on it.
        if "currency" in data and data["currency"] is not None:
            try:
                self.ctx.currency = _currency(data["currency"], self.ctx)
            except ValueError as exc:
                self.add(("currency",), str(exc))
        top = self.section({k: data[k] for k in top_fields if k in data}, (), top_fields, "scenario")
        start = top.get("start", self.ctx.today)
        self.ctx.start = start

        # user catalog entries come before 'consider' and 'you', whose ids may name them
        entries = self.catalog(data.get("catalog"))
        phases_raw = data.get("phases")
        timed = not isinstance(phases_raw, dict) or any(
            not isinstance(p, dict) or "gpu_hours" in (w := _work_given(p)) or not {"tokens", "samples"} & w
            for p in phases_raw.values())
        wl = self.workload(data.get("workload"), timed=timed) if "workload" in data else {}
        phases = self.phases(data.get("phases"), start, wl) if "phases" in data else ()
        you = self.section(data.get("you"), ("you",), YOU, "you")
        if "host_price" in you and "host_machine" not in you:
            # a price for a host computer means one is bought for the cards: host_machine false (the
            # default, true, left it unused, and buying a card came out the host's price too cheap)
            you["host_machine"] = False
        consider = self.section(data.get("consider"), ("consider",), CONSIDER, "consider")
        if self.problems or not wl or not phases:
            return None
        regional = self.ctx.ids.electricity_usd_per_kwh_by_region
        region = you.get("grid") if "electricity" not in top and you.get("grid") in regional else None
        if isinstance(you.get("grid"), str) and (country := grid_of_region(you["grid"], self.ctx.ids)) is not None:
            you["grid"] = country  # us-ca: the US grid's intensity, California's price (schema._grid)
        if "electricity" in top:
            elec, elec_default = top["electricity"], False
        elif region is not None:  # where you.grid says you are, the catalog's price there
            elec, elec_default = regional[region], True
        else:
            elec, elec_default = self.ctx.ids.electricity_default_usd_per_kwh, True
        currency = self.ctx.currency
        trend = top.get("price_trend", SCHEMA["price_trend"].default)
        buy_trend = top.get("buy_price_trend", SCHEMA["buy_price_trend"].default)
        return Scenario(
            name=top["name"],
            start=start,
            currency=currency,
            usd_per_currency=self.ctx.ids.usd_per_unit[currency],
            horizon_months=top.get("horizon", SCHEMA["horizon"].default),
            horizon_is_default="horizon" not in top,
            reference_gpu_is_default="reference_gpu" not in (data.get("workload") or {}),
            electricity_usd_per_kwh=elec,
            electricity_is_default=elec_default,
            electricity_region=region,
            framework=top.get("framework", SCHEMA["framework"].default),
            workload=workload_of(wl),
            phases=phases,
            you=build(You, YOU, you),
            consider=build(Consider, CONSIDER, consider),
            catalog_entries=entries,
            ranges=dict(self.ranges),
            read_as=tuple(dict.fromkeys(self.read_as)),
            uncertainty_samples=top.get("uncertainty", SCHEMA["uncertainty"].default),
            rent_trend_per_year=(trend if isinstance(trend, float) else 0.0 if isinstance(trend, tuple) else None),
            rent_price_points=trend if isinstance(trend, tuple) else (),
            read_on=self.ctx.today,
            buy_every_weeks=(max(1, round(top["buy_later"] * units.WEEKS_PER_MONTH)) if "buy_later" in top
                             else None),
            buy_trend_per_year=buy_trend if isinstance(buy_trend, float) else 0.0,
            buy_price_points=buy_trend if isinstance(buy_trend, tuple) else (),
        )

    def workload(self, raw: Any, timed: bool = True) -> dict[str, Any]:
        """The workload's values, a named model filling what it fixes (its family and parameters,
        and its sequence length or image size where the model fixes one) unless given.
        ``timed``: some phase gives gpu_hours (or no job), which are hours on ``reference_gpu``, so
        it is required; else a missing one is :data:`DEFAULT_REFERENCE_GPU`."""
        wl = self.section(raw, ("workload",), WORKLOAD, "workload")
        if isinstance(raw, dict) and "reference_gpu" not in raw:
            if timed or "measured_speed" in raw:
                self.add(("workload",), "missing required key 'workload.reference_gpu': the card the phases' gpu_hours "
                         "(and bare measured_speed factors) were measured on, e.g. 'reference_gpu: rtx-3090'; phases "
                         "that give tokens or samples instead need none", at_key=True)
            else:
                wl["reference_gpu"] = DEFAULT_REFERENCE_GPU
        card = self.ctx.ids.models.get(wl.get("model", ""))
        if card is not None:
            wl.setdefault("family", card.family)
            wl.setdefault("params", card.params)
            if card.sequence_length and "sequence_length" not in wl:
                wl["sequence_length"] = _tokens_at(card, wl.get("image_size"))
            if card.image_size and "image_size" not in wl and card.family == "cnn":
                wl["image_size"] = card.image_size
        elif isinstance(raw, dict) and "model" not in raw:
            for key in ("family", "params"):
                if key not in raw:
                    self.add(("workload",), f"missing required key 'workload.{key}'", at_key=True)
        if wl.get("method") in ("lora", "qlora") and wl.get("family") in ("cnn", "rnn") \
                and "trainable_params" not in wl:  # the adapters' default is a transformer's
            self.add(("workload", "method"), f"{wl['method']}'s default adapters are a transformer's (rank on its "
                     f"attention and MLP matrices); for a {wl['family']} give workload.trainable_params, or use "
                     "method: full")
        return wl

    def job(self, p: dict[str, Any], path: tuple, wl: Mapping[str, Any], given: Any = ()) -> Any:
        """A phase's job estimate (planner.model.job) where it gives tokens or samples, else None;
        its problems reported at the phase's keys. ``given``: the keys the phase wrote (tokens or
        samples it could not read are reported as such, not as missing)."""
        if "tokens" in p and "samples" in p:
            self.add(path + ("samples",), "give tokens or samples, not both")
            return None
        if "tokens" not in p and "samples" not in p:
            if "epochs" in p and not {"tokens", "samples"} & set(given):
                self.add(path + ("epochs",), "epochs multiply tokens or samples: give one of them")
            return None
        if not wl or "reference_gpu" not in wl or "params" not in wl \
                or any(q.path.startswith("workload") for q in self.problems):
            return None  # the workload's own problems are reported (a job read without a key refused there
            # would be refused again for the key's lack: 'set workload.sequence_length' where it was set)
        from . import job  # the speed model and pandas: only for a phase described by its job

        w = workload_of(wl)
        try:
            ids = self.ctx.ids
            return job.estimate(job.Job(p.get("tokens"), p.get("samples"), p.get("epochs", 1.0)), w,
                                ids.models.get(w.model or ""), ids.device_specs[w.reference_gpu], ids.utilisation,
                                ids.device_specs, ids.speed_ratio)
        except job.JobError as exc:
            self.add(path + ("tokens" if "tokens" in p else "samples",), str(exc))
            return None

    def phases(self, raw: Any, start: dt.date, wl: Mapping[str, Any] | None = None) -> tuple[Phase, ...]:
        if isinstance(raw, dict) and not raw:
            self.add(("phases",), "no phases: expected at least one, e.g. "
                     "'final: {gpu_hours: 180, deadline: 2027-08-15}'")
            return ()
        if not isinstance(raw, dict):
            self.add(("phases",), "expected a mapping of phase names to phases, e.g. "
                     "'final: {gpu_hours: 180, deadline: 2027-08-15}'")
            return ()
        out = []
        if len(raw) > MAX_PHASES:
            self.add(("phases",), f"{len(raw):,} phases; a scenario has at most {MAX_PHASES} (merge phases that "
                     "share a window: their hours add up)", at_key=True)
            return ()
        for name, body in raw.items():
            path = ("phases", name)
            if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
                self.add(path, "a phase name uses letters, digits, '-' and '_' only", at_key=True)
                continue
            p = self.section(body, path, PHASE, "phase")
            # its days first: checked whatever its work's problems (a job that cannot be read still
            # has a deadline before its start to say, in the same run)
            begin = p.get("from", start)
            for key, why in phase_days_problems(start, begin, p.get("deadline")):
                self.add(path + (key,), why)
            estimate = self.job(p, path, wl or {}, _work_given(body))
            if "gpu_hours" not in p and estimate is not None:
                p["gpu_hours"] = estimate.hours_planned  # the mean over the utilisation's range
                if not MIN_HOURS <= p["gpu_hours"] <= MAX_GPU_HOURS:
                    self.add(path + ("tokens" if "tokens" in p else "samples",),
                             f"the job comes to {p['gpu_hours']:,.4g} h on the reference GPU; a phase holds "
                             f"{MIN_HOURS:g} to {MAX_GPU_HOURS:,.0f} h")
                    continue
                p["hours_from_job"] = True
            if "gpu_hours" not in p:
                if body is None or (isinstance(body, dict) and not _work_given(body)):
                    self.add(path, f"missing required key '{dotted(path + ('gpu_hours',))}' (or describe the job: "
                             "tokens or samples)", at_key=True)
                continue
            if (problem := too_much_work(p["gpu_hours"], p.get("runs", 1))) is not None:
                self.add(path + ("runs",), problem)
                continue
            from_job = bool(p.pop("hours_from_job", False))
            out.append(build(Phase, PHASE, {**p, "from": begin}, name=name, job_estimate=estimate,
                             hours_from_job=from_job))
        return tuple(out)

    def _units_priced(self, values: Mapping[str, Any], path: tuple) -> bool:
        """Whether a free entry's fee and unit price, where it gives them, price a catalog tier
        priced in compute units (the tier's GPUs' burn rates are catalog data): a fee a tier paid
        by the month, a unit price any tier priced in units; refused (False) otherwise, as a fee
        on a tier without units would plan as free."""
        ids, tier = self.ctx.ids, str(values.get("id"))
        in_units = sorted(ids.free_in_units)
        if "fee" in values and tier not in ids.free_by_the_month:
            self.add(path + ("fee",), f"'{tier}' has no monthly fee to set: a fee prices a catalog tier paid by the "
                     f"month ({', '.join(sorted(ids.free_by_the_month)) or 'none in this catalog'}); a notebook "
                     "you pay by the hour is a rent offer (catalog.rent, with its price)")
            return False
        if "unit_price" in values and tier not in ids.free_in_units:
            self.add(path + ("unit_price",), f"'{tier}' is not priced in compute units: a unit price sets a catalog "
                     f"tier's ({', '.join(in_units) or 'none in this catalog'}); a notebook you pay by the hour is "
                     "a rent offer (catalog.rent, with its price)")
            return False
        return True

    def catalog(self, raw: Any, prefix: tuple = ("catalog",)) -> dict[str, tuple[dict, ...]]:
        out: dict[str, tuple[dict, ...]] = {"buy": (), "rent": (), "free": ()}
        if raw is None:
            return out
        if not isinstance(raw, dict):
            self.add(prefix, f"expected a mapping with buy, rent and/or free lists, got {_kind(raw)}")
            return out
        for kind, entries in raw.items():
            if kind not in ENTRY_COLUMNS:
                self.add(prefix + (kind,), f"unknown key{did_you_mean(kind, ENTRY_COLUMNS)}; expected buy, rent or free",
                         at_key=True)
                continue
            if entries is None:
                continue
            if not isinstance(entries, list):
                self.add(prefix + (kind,), f"expected a list of {kind} offers, each '- {{id: ..., ...}}'")
                continue
            known = getattr(self.ctx.ids, kind)
            columns = ENTRY_COLUMNS[kind]
            rows = []
            first_at: dict[str, int] = {}
            for i, entry in enumerate(entries):
                path = prefix + (kind, i)
                values = self.section(entry, path, {k: f for k, (_, f) in columns.items()}, f"catalog {kind}")
                if "id" not in values:
                    continue
                if values["id"] in first_at:
                    line = self.doc.position(prefix + (kind, first_at[values["id"]]))[0]
                    self.add(path + ("id",), f"duplicate id {values['id']!r} (first given at line {line}); "
                             "one entry per id")
                    continue
                first_at[values["id"]] = i
                if "as_of" in values and values["as_of"] > self.ctx.today:
                    self.add(path + ("as_of",), f"dated {values['as_of']}, after today ({self.ctx.today}): "
                             "a price cannot be known before it is seen")
                    continue
                wrote_device = isinstance(entry, dict) and any(  # 'gpu:' is told once, as a key meaning 'device'
                    synonym_of(k, ("device",), SYNONYMS) or close_matches(str(k), ["device"]) for k in entry)
                if values["id"] not in known and "device" not in values and not wrote_device:
                    self.add(path, f"new {kind} offer '{values['id']}' needs a 'device' "
                             f"(or an id of the catalog to override{did_you_mean(values['id'], sorted(known))})")
                    continue
                if kind == "free" and not self._units_priced(values, path):
                    continue
                row = {columns[k][0]: val for k, val in values.items()}
                if "resale" in row:
                    how, amount = row.pop("resale")
                    row[{"fraction": "resale_fraction", "model": "resale_model_factor"}.get(how, "resale_usd")] = amount
                    price = row.get("price_usd")
                    if how == "usd" and isinstance(price, (int, float)) and amount > price:
                        self.add(path + ("resale",), f"resale {amount:,.2f} USD is above the price {price:,.2f} "
                                 "USD: a card does not sell for more than it cost; give the resale as money or a %")
                row.setdefault("source", f"scenario file ({self.doc.file})")
                rows.append(row)
                self.ctx.user_ids[kind].add(values["id"])
            out[kind] = tuple(rows)
        return out


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)



def load_catalog_text(text: str, ids: CatalogIds, *, file: str, today: dt.date) -> dict[str, tuple[dict, ...]]:
    """A user's or lab's catalog file: buy/rent/free lists written as in a scenario's ``catalog:``.

    Returns canonical rows to overlay on the catalog (``Catalog.with_entries``).
    """
    doc = parse_document(text, file)
    if doc.data is None:
        raise InputError([Problem(file, 1, 1, "", "the file is empty: expected 'buy:', 'rent:' and/or 'free:' lists")])
    v = _Validator(doc, _Context(ids, today))
    if isinstance(doc.data, dict) and "currency" in doc.data:
        try:
            v.ctx.currency = _currency(doc.data.pop("currency"), v.ctx)
        except ValueError as exc:
            v.add(("currency",), str(exc))
    entries = v.catalog(doc.data, prefix=())
    if v.problems:
        raise InputError(v.problems)
    return entries


def workload_of(wl: Mapping[str, Any]) -> Workload:
    """A Workload from checked ``workload:`` values, with the documented defaults (docs/scenario.md)."""
    return build(Workload, WORKLOAD, wl)


def workload_values(w: Workload) -> dict[str, Any]:
    """The ``workload:`` keys of a Workload (the inverse of :func:`workload_of`), blanks left out."""
    return section_values(w, WORKLOAD)


def load_workload(values: Mapping[str, Any], ids: CatalogIds, *, source: str = "--flags") -> Workload:
    """A Workload from ``workload:`` keys given elsewhere (command-line flags), checked as in a file."""
    doc = Document(source, {"workload": dict(values)})
    v = _Validator(doc, _Context(ids, dt.date.min))  # dates play no part in a workload
    wl = v.workload(dict(values))  # a named model fills its family, size and shape, as in a file
    if v.problems:
        raise InputError(v.problems)
    return workload_of(wl)
