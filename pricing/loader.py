"""Load and validate the catalog tables against ``columns.csv``.

Each table is a pandas DataFrame, one row per device, offer, tier, rate or
region, with the columns and canonical units that ``columns.csv`` lists.
A broken row is reported like a scenario error: file:line:column, the
row's id and column, what is wrong (:class:`pricing.errors.InputError`).

Layers, lowest first: the shipped catalog < ``extra`` catalog files < a
scenario's ``catalog:`` entries (:meth:`Catalog.with_entries`). A later
layer overrides an earlier one row by row, field by field, by ``id``.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import pandas as pd

from . import DATA_DIR
from .errors import InputError, Problem, did_you_mean
from .ids import CatalogIds, DeviceSpec, JobFacts, ModelCard, Utilisation, tiers_in_units, usd_per_kwh_by_region
from .memo import Kept, frozen
from .yamldoc import parse_document

TABLE_FILES = {
    "devices": "devices.csv",
    "buy": "buy.csv",
    "rent": "rent.csv",
    "free": "free.yaml",
    "rates": "rates.csv",
    "electricity": "electricity.csv",
    "throughput": "throughput.csv",
    "interruptions": "interruptions.csv",
    "trends": "trends.csv",
    "models": "models.csv",
    "utilisation": "utilisation.csv",
    "grid": "grid.csv",
    "pue": "pue.csv",
    "embodied": "embodied.csv",
}
KEY = {"devices": "id", "buy": "id", "rent": "id", "free": "id", "rates": "currency", "electricity": "region",
       "throughput": "device", "interruptions": "id", "trends": "id",
       "models": "id", "utilisation": "device_class", "grid": "id", "pue": "id", "embodied": "id"}
#: Tables of defaults dated when they were chosen: they do not date the catalog's facts.
DEFAULT_TABLES = ("interruptions", "trends", "utilisation", "grid", "pue", "embodied")
#: Columns whose values together identify a row.
UNIQUE = {**{t: (k,) for t, k in KEY.items()}, "throughput": ("device", "model", "precision", "framework"),
          "utilisation": ("device_class", "family", "methods", "params_from")}
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._:+-]*$")


#: The catalog's tables by name (what the integrity checks read).
Tables = Mapping[str, pd.DataFrame]
#: A job's facts (named models, device peaks, utilisation) as records, once per set of tables in a
#: process (pricing.memo): a what-if that edits a price keeps these tables and reuses them.
_JOB_FACTS = Kept()


@dataclass(frozen=True)
class Catalog:
    """The catalog tables (DataFrames) and the schema they were checked against."""

    tables: Mapping[str, pd.DataFrame]
    columns: pd.DataFrame
    files: Mapping[str, str] = field(default_factory=dict)
    #: Column numbers (1-based) of each CSV table's header, to locate a cell.
    column_numbers: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    #: The layers applied on top of the shipped tables, lowest first (name, as_of, source).
    layers: tuple[tuple[str, dt.date | None, str], ...] = ()

    def column_number(self, table: str, column: str) -> int:
        return self.column_numbers.get(table, {}).get(column, 1)

    # -- tables
    @property
    def devices(self) -> pd.DataFrame:
        return self.tables["devices"]

    @property
    def buy(self) -> pd.DataFrame:
        return self.tables["buy"]

    @property
    def rent(self) -> pd.DataFrame:
        return self.tables["rent"]

    @property
    def free(self) -> pd.DataFrame:
        return self.tables["free"]

    @property
    def throughput(self) -> pd.DataFrame:
        return self.tables["throughput"]

    @property
    def interruptions(self) -> pd.DataFrame:
        return self.tables["interruptions"]

    @property
    def trends(self) -> pd.DataFrame:
        return self.tables["trends"]

    @property
    def rates(self) -> pd.DataFrame:
        return self.tables["rates"]

    @property
    def electricity(self) -> pd.DataFrame:
        return self.tables["electricity"]

    # -- derived facts (each made once per catalog: a catalog and its tables are never changed)
    def usd_per_unit(self) -> dict[str, float]:
        """USD value of one unit of each currency, from the ECB per-EUR rates."""
        return dict(self._usd_per_unit)

    @cached_property
    def _usd_per_unit(self) -> dict[str, float]:
        per_eur = dict(zip(self.rates["currency"], self.rates["units_per_eur"]))
        return {code: per_eur["USD"] / rate for code, rate in per_eur.items()}

    def default_electricity_usd_per_kwh(self) -> float:
        return self._default_electricity_usd_per_kwh

    @cached_property
    def _default_electricity_usd_per_kwh(self) -> float:
        row = self.electricity[self.electricity["default"]].iloc[0]
        return float(row["price"]) * self._usd_per_unit[row["currency"]]

    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    @cached_property
    def _aliases(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for device_id, names in zip(self.devices["id"], self.devices["aliases"]):
            for name in names:
                out[name] = device_id
        return out

    def as_of(self) -> dt.date:
        """The newest ``as_of`` among the rows of facts (the interruption, trend and utilisation
        defaults, dated when they were chosen, are not facts of the catalog's date)."""
        return self._as_of

    @cached_property
    def _as_of(self) -> dt.date:
        dates = [d for name, t in self.tables.items() if name not in DEFAULT_TABLES
                 for d in t["as_of"] if isinstance(d, dt.date)]
        return max(dates)

    def job_facts(self) -> JobFacts:
        """The named models, the devices' peaks and the utilisation table as records, once per set
        of tables in a process."""
        return _JOB_FACTS.get(
            (self.tables["models"], self.devices, self.tables["utilisation"]), (), lambda: JobFacts(
                {str(r["id"]): ModelCard.of(r) for r in self.tables["models"].to_dict("records")},
                {str(r["id"]): DeviceSpec.of(r) for r in self.devices.to_dict("records")},
                tuple(Utilisation.of(r) for r in self.tables["utilisation"].to_dict("records"))))

    def ids(self) -> CatalogIds:
        """What a scenario is checked against (:class:`CatalogIds`), read once per catalog: a
        what-if that edits the scenario checks each edit against it."""
        return self._catalog_ids

    @cached_property
    def _catalog_ids(self) -> CatalogIds:
        models, specs, utilisation = self.job_facts()
        read = [c for c in ("id", "units_per_hour", "usd_per_unit", "units_per_month", "usd_per_month") if c in self.free]
        in_units, by_the_month = tiers_in_units(cast(list[dict[str, Any]], self.free[read].to_dict("records")))
        return CatalogIds(
            devices=frozenset(self.devices["id"]),
            aliases=self.aliases(),
            buy=frozenset(self.buy["id"]),
            rent=frozenset(self.rent["id"]),
            free=frozenset(self.free["id"]),
            free_in_units=in_units,
            free_by_the_month=by_the_month,
            usd_per_unit=self.usd_per_unit(),
            electricity_default_usd_per_kwh=self.default_electricity_usd_per_kwh(),
            models=models, device_specs=specs, utilisation=utilisation,
            grid_zones=frozenset(self.tables["grid"]["id"]),
            electricity_usd_per_kwh_by_region=usd_per_kwh_by_region(
                zip(self.electricity["region"], self.electricity["price"], self.electricity["currency"]),
                self._usd_per_unit),
        )

    def row(self, table: str, key: str) -> pd.Series:
        t = self.tables[table]
        hit = t[t[KEY[table]] == key]
        if hit.empty:
            raise KeyError(key)
        return hit.iloc[0]

    def defaults_for(self, table: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """The documented defaults a new ``row`` of ``table`` takes for the fields it omits, and
        what it takes from its provider's rows (:func:`_of_provider`)."""
        if row.get("id") in self._ids[table]:
            return {}
        taken = {c: v for c, v in self._defaults_of(table).items() if c not in row and v != ()}
        return {**taken, **_of_provider(self.tables[table], table, {**_derive_new(table, row), **row})}

    @cached_property
    def _ids(self) -> dict[str, frozenset[str]]:
        """Each table's row ids."""
        return {name: frozenset(t["id"]) for name, t in self.tables.items() if "id" in t}

    @cached_property
    def _table_defaults(self) -> dict[str, dict[str, Any]]:
        return {}

    def _defaults_of(self, table: str) -> dict[str, Any]:
        """The documented defaults of ``table``'s columns (:func:`_defaults`), read once per
        catalog: a what-if that edits a price overlays the scenario's rows on it each plan.
        Read-only."""
        if table not in self._table_defaults:
            self._table_defaults[table] = _defaults(self.columns, table)
        return self._table_defaults[table]

    def with_entries(self, entries: Mapping[str, Sequence[Mapping[str, Any]]], layer: str = "scenario",
                     as_of: dt.date | None = None, source: str = "") -> Catalog:
        """Overlay canonical rows (a scenario's, a user's or a refreshed layer's), field by field by id.

        Every row the overlay touches records ``layer`` (its ``layer`` column: where its price now
        comes from); the layer itself is appended to :attr:`layers` when it changed anything.
        """
        tables = dict(self.tables)
        for table, rows in entries.items():
            if rows:  # a table the entries leave alone is the very table it was
                tables[table] = _OVERLAID.get((tables[table], self.columns), (table, frozen(rows), layer),
                                              functools.partial(self._overlaid, table, rows, layer))
        touched = any(rows for rows in entries.values())
        layers = self.layers + ((layer, as_of, source),) if touched else self.layers
        return Catalog(tables, self.columns, self.files, self.column_numbers, layers)

    def _overlaid(self, table: str, rows: Sequence[Mapping[str, Any]], layer: str) -> pd.DataFrame:
        """Table ``table`` with ``rows`` overlaid (:meth:`with_entries`): a function of that
        table, the schema's defaults, the rows and the layer alone, kept per process for them
        (:data:`_OVERLAID`)."""
        t = self.tables[table].copy()
        at: dict[Any, tuple[str, Any]] = {row_id: ("row", i) for i, row_id in zip(t.index, t["id"])}  # not a scan a row
        defaults = self._defaults_of(table)
        added: list[dict[str, Any]] = []
        for row in rows:
            where, hit = at.get(row["id"], ("new", -1))
            if where == "row":
                for col, value in row.items():
                    if col == "source":
                        value = f"{value} (overrides the catalog row: {t.at[hit, 'source']!s})"
                    t.at[hit, col] = value
                t.at[hit, "layer"] = layer
                t.at[hit, "_line"] = row.get("_line", float("nan"))
            elif where == "added":  # a new row given twice: the later one's fields win
                added[hit].update(row)
            else:
                new = dict(defaults)
                new.update(_derive_new(table, row))
                new.update(_of_provider(t, table, {**_derive_new(table, row), **row}))
                new.update(row)
                new["layer"] = layer
                at[row["id"]] = ("added", len(added))
                added.append(new)
        if added:
            t = pd.concat([t, pd.DataFrame(added)], ignore_index=True)
        return _finish(table, t)


#: Tables with a scenario's, a user's or a layer's rows overlaid (:meth:`Catalog.with_entries`), by
#: the table and schema they were made from and the rows and layer: a what-if that edits one
#: rent price overlays the scenario's own boxes on the buy table again and finds that table as
#: it was, so what is kept under the tables (the options, pricing.memo) finds the buy table
#: unchanged (a lab-box plan of an edited price spent 2.6-3.1 ms overlaying its rows).
_OVERLAID = Kept()


#: Rent fields a new offer of a known provider takes from its rows, where they all give one value:
#: what the provider charges for every instance (data out, a disk kept), not what the instance is.
PROVIDER_FIELDS = ("egress_usd_per_gb", "storage_usd_per_gb_month", "sign_up", "long_runs")


def _of_provider(rows: pd.DataFrame, table: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """What a new rent ``row`` omits of :data:`PROVIDER_FIELDS` and every row of its provider
    gives alike: a refreshed layer's instance the catalog does not ship ('aws:p6-b200.48xlarge')
    or a scenario's own ('aws:my-reserved') downloads at AWS's 0.09 USD/GB, as the provider
    publishes, where a blank would say no price is known, and needs what an account of the
    provider needs (AWS: a quota for GPU instances)."""
    if table != "rent" or "provider" not in rows:
        return {}
    same = rows[rows["provider"] == row.get("provider")]
    out = {}
    for col in PROVIDER_FIELDS:
        values = {v for v in same[col] if not _blank_cell(v)} if col in same and col not in row else set()
        if len(values) == 1 and not any(_blank_cell(v) for v in same[col]):
            out[col] = values.pop()
    return out


def _derive_new(table: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """Fields a user's new offer lacks that follow from its id."""
    out: dict[str, Any] = {"as_of": None}
    if table == "rent":
        provider, _, instance = str(row["id"]).partition(":")
        out.update(provider=provider if instance else "user", instance=instance or row["id"])
    if table == "free":
        out.update(name=row["id"])
    return out


# --------------------------------------------------------------------------- loading


def load_catalog(data_dir: Path | str = DATA_DIR) -> Catalog:
    """Read and validate every table; raise InputError listing all problems."""
    data_dir = Path(data_dir)
    columns = pd.read_csv(data_dir / "columns.csv", dtype=str, keep_default_na=False)
    problems: list[Problem] = []
    tables: dict[str, pd.DataFrame] = {}
    files = {}
    column_numbers = {}
    specs = _specs(columns)
    for table, name in TABLE_FILES.items():
        path = data_dir / name
        files[table] = str(path)
        if name.endswith(".csv"):
            raw, positions = _read_csv(path)
            column_numbers[table] = positions[0][1] if positions else {}
        else:
            raw, positions = _read_yaml(path, problems)
        tables[table] = _typed(table, raw, positions, specs.get(table, _Spec({}, frozenset(), {})), str(path), problems)
        tables[table]["layer"] = "shipped"
    problems += check_unique(tables, files)
    problems += check_references(tables, files)
    problems += check_subscriptions(tables, files)
    problems += check_price_ranges(tables, files)
    problems += check_rates(tables, files)
    problems += check_defaults(tables, files)
    problems += check_trends(tables, files)
    problems += check_variants(tables, files)
    problems += check_utilisation(tables, files)
    problems += check_carbon(tables, files)
    if problems:
        raise InputError(problems)
    return Catalog({t: _finish(t, df) for t, df in tables.items()}, columns, files, column_numbers)


def _read_csv(path: Path) -> tuple[list[dict[str, Any]], list[tuple[int, dict[str, int]]]]:
    """A table's rows as text, with each row's line and its columns' numbers (the csv module: a
    fifth of pandas' time for the same strings)."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f, restkey="(a field past the header)")
        rows: list[dict[str, Any]] = [dict(r) for r in reader]
        header = reader.fieldnames or []
    cols = {c: i + 1 for i, c in enumerate(header)}
    return rows, [(i + 2, cols) for i in range(len(rows))]  # line 1 is the header


def _read_yaml(path: Path, problems: list[Problem]) -> tuple[list[dict[str, Any]], list]:
    doc = parse_document(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(doc.data, list):
        problems.append(Problem(str(path), 1, 1, "", "expected a list of entries"))
        return [], []
    rows, positions = [], []
    for i, entry in enumerate(doc.data):
        line, _ = doc.position((i,))
        if not isinstance(entry, dict):
            problems.append(Problem(str(path), line, 1, str(i), "expected a mapping of column: value"))
            continue
        rows.append(entry)
        positions.append((line, {k: doc.position((i, k), at_key=True)[0] for k in entry}))
    return rows, positions


#: Devices in a machine, instances at once: no catalog row counts more.
MAX_COUNT = 100_000


def _convert(kind: str, value: Any, path: str) -> Any:
    """Convert one raw cell to its column type; raise ValueError saying what was expected."""
    if kind in ("str", "id") or kind.startswith("ref:"):
        text = str(value).strip()
        if kind == "id" and not ID_PATTERN.match(text):
            raise ValueError(f"expected a lowercase id (letters, digits, - . _ : +), got {text!r}")
        return text
    if kind in ("float", "signed"):  # signed: a change that may be negative (a trend)
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"expected a number, got {str(value)[:40]!r}") from None
        if not math.isfinite(x) or (x < 0 and kind == "float"):
            raise ValueError(f"expected a number of zero or more, got {value!r}")
        return x
    if kind == "int":
        try:
            x = int(str(value))
        except ValueError:
            raise ValueError(f"expected a whole number, got {value!r}") from None
        if x < 1:
            raise ValueError(f"expected a whole number of at least 1, got {value!r}")
        if x > MAX_COUNT:
            raise ValueError(f"expected a whole number of at most {MAX_COUNT:,}, got {str(value)[:40]!r}")
        return x
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
        raise ValueError(f"expected true or false, got {value!r}")
    if kind == "date":
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value).strip())
        except ValueError:
            raise ValueError(f"expected a date YYYY-MM-DD, got {value!r}") from None
    if kind.startswith("enum:"):
        choices = kind[5:].split("|")
        if str(value) not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}{did_you_mean(str(value), choices)}")
        return str(value)
    if kind == "list":
        items = value if isinstance(value, list) else str(value).split(";")
        return tuple(str(x).strip() for x in items if str(x).strip())
    if kind == "mapping":
        if not isinstance(value, dict):
            raise ValueError(f"expected a mapping such as {{t4: 1.86}}, got {value!r}")
        return {str(k): _convert("float", v, path) for k, v in value.items()}
    raise ValueError(f"columns.csv names an unknown type {kind!r}")


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


@dataclass(frozen=True)
class _Spec:
    """What columns.csv says of one table: each column's type, the required ones, and the
    typed defaults of those that have one (list columns: an empty tuple)."""

    kinds: dict[str, str]
    required: frozenset[str]
    defaults: dict[str, Any]


def _specs(columns: pd.DataFrame) -> dict[str, _Spec]:
    """Each table's :class:`_Spec`, read off columns.csv in one pass."""
    rows: dict[str, list[tuple[str, str, str, str]]] = {}
    for table, column, kind, required, default in zip(columns["table"], columns["column"], columns["type"],
                                                       columns["required"], columns["default"]):
        rows.setdefault(table, []).append((column, kind, required, default))
    return {table: _Spec({c: k for c, k, _, _ in spec}, frozenset(c for c, _, r, _ in spec if r == "yes"),
                         _column_defaults((c, k, d) for c, k, _, d in spec))
            for table, spec in rows.items()}


def _typed(table: str, raw: list[dict[str, Any]], positions: list, spec: _Spec, file: str,
           problems: list[Problem]) -> pd.DataFrame:
    kinds, required, defaults = spec.kinds, spec.required, spec.defaults
    out = []
    for row, (line, cols) in zip(raw, positions):
        key = str(row.get(KEY[table], "?"))
        typed: dict[str, Any] = {}
        for col, value in row.items():  # (a cell's place, table.key.column, is written only for a problem)
            if col not in kinds:
                problems.append(Problem(file, line, cols.get(col, 1), f"{table}.{key}.{col}",
                                        f"unknown column{did_you_mean(col, kinds)}; columns.csv lists the columns"))
                continue
            if _blank(value):
                if col in required:
                    problems.append(Problem(file, line, cols.get(col, 1), f"{table}.{key}.{col}",
                                            "required (every row needs it)"))
                continue
            try:
                typed[col] = _convert(kinds[col], value, col)
            except ValueError as exc:
                problems.append(Problem(file, line, cols.get(col, 1), f"{table}.{key}.{col}", str(exc)))
        for col in required - set(row):
            problems.append(Problem(file, line, 1, f"{table}.{key}.{col}", "required column is missing"))
        typed["_line"] = line
        out.append(typed)
    df = pd.DataFrame(out, columns=list(kinds) + ["_line"])
    for col, default in defaults.items():  # a blank cell takes its column's default
        cells = df[col].tolist()
        if any(_blank_cell(v) for v in cells):
            df[col] = [default if _blank_cell(v) else v for v in cells]
    return df


def _blank_cell(v: Any) -> bool:
    if isinstance(v, (tuple, dict, list)):
        return False
    return v is None or (isinstance(v, float) and math.isnan(v))


def _column_defaults(spec: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    """Typed defaults from columns.csv's (column, type, default); list columns default to an
    empty tuple."""
    out: dict[str, Any] = {}
    for col, kind, default in spec:
        if default != "":
            out[col] = _convert(kind, default, col)
        elif kind == "list":
            out[col] = ()
    return out


def _defaults(columns: pd.DataFrame, table: str) -> dict[str, Any]:
    spec = columns[columns["table"] == table]
    return _column_defaults(zip(spec["column"], spec["type"], spec["default"]))


def _finish(table: str, df: pd.DataFrame) -> pd.DataFrame:
    """Object columns of optional numbers become float with NaN for blanks."""
    df = df.reset_index(drop=True)
    for col in df.columns:
        if df[col].dtype != object:
            continue
        cells = df[col].tolist()
        if all(isinstance(v, (int, float)) or _blank_cell(v) for v in cells) \
                and not all(isinstance(v, bool) for v in cells if not _blank_cell(v)):
            df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


# --------------------------------------------------------------------------- checks


def check_unique(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """Every id (or currency, region) appears once per table."""
    out = []
    for table, df in tables.items():
        cols = [c for c in UNIQUE[table] if c in df]  # an optional key column a table may leave out
        first: dict[tuple, Any] = {}
        what = "id" if cols == ["id"] else " + ".join(cols)
        for row, line in zip(zip(*(df[c].astype(object).tolist() for c in cols)), df["_line"].tolist()):
            key = tuple("" if _blank_cell(v) else v for v in row)  # a blank key (no family) equals a blank one
            if key in first:
                out.append(Problem(files[table], int(line), 1, f"{table}.{key[0]}",
                                   f"duplicate {what} (first at line {first[key]}); rows must be unique"))
            else:
                first[key] = line
    return out


def check_references(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """Every offer's and alias's device exists; aliases do not shadow ids."""
    out = []
    devices = set(tables["devices"]["id"].dropna())
    for table in ("buy", "rent", "free", "throughput"):
        df = tables[table]
        for device, key, line in zip(df["device"], df[KEY[table]], df["_line"]):
            if isinstance(device, str) and device not in devices:
                out.append(Problem(files[table], int(line), 1, f"{table}.{key}.device",
                                   f"unknown device {device!r}{did_you_mean(device, devices)}"))
    seen: dict[str, str] = {}
    d = tables["devices"]
    for device, aliases, line in zip(d["id"], d["aliases"], d["_line"]):
        for alias in aliases if isinstance(aliases, tuple) else ():
            if alias in devices or alias in seen:
                other = alias if alias in devices else seen[alias]
                out.append(Problem(files["devices"], int(line), 1, f"devices.{device}.aliases",
                                   f"alias {alias!r} already names {other}"))
            seen[alias] = device
    return out


def check_price_ranges(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """A card's price range holds its price (low <= price <= high), both ends given, with a source."""
    out = []
    for _, r in tables["buy"].iterrows():
        low, high = r.get("price_low_usd"), r.get("price_high_usd")
        if _blank_cell(low) and _blank_cell(high):
            continue
        where = f"buy.{r['id']}.price_low_usd"
        if _blank_cell(low) or _blank_cell(high):
            out.append(Problem(files["buy"], int(r["_line"]), 1, where, "a price range needs both price_low_usd and "
                               "price_high_usd"))
        elif not float(cast(float, low)) <= float(r["price_usd"]) <= float(cast(float, high)):
            out.append(Problem(files["buy"], int(r["_line"]), 1, where,
                               f"the range {float(cast(float, low)):g}-{float(cast(float, high)):g} "
                               f"does not hold the price {float(r['price_usd']):g}"))
        elif _blank_cell(r.get("price_range_source")):
            out.append(Problem(files["buy"], int(r["_line"]), 1, f"buy.{r['id']}.price_range_source",
                               "a price range needs its source"))
    return out


def check_subscriptions(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """A tier priced in compute units names known devices and a unit price; a tier with a monthly
    fee says the units the fee buys and what its GPUs burn (the planner prices a subscription by
    its months' units: a fee without them would plan as free); packs of units (``units_per_pack``)
    have a unit price and burn rates to price them by, and only packs last ``pack_days``."""
    out = []
    devices = set(tables["devices"]["id"].dropna())
    for _, r in tables["free"].iterrows():
        fee = r.get("usd_per_month")
        if not _blank_cell(fee) and float(cast(float, fee)) > 0 and (
                _blank_cell(r.get("units_per_month")) or not isinstance(r.get("units_per_hour"), dict)):
            out.append(Problem(files["free"], int(r["_line"]), 1, f"free.{r['id']}.usd_per_month",
                               "a tier with a monthly fee needs units_per_month and units_per_hour (the compute "
                               "units the fee buys and its GPUs burn): without them it would plan as free"))
        burn = r.get("units_per_hour")
        pack, pack_days = r.get("units_per_pack"), r.get("pack_days")
        if not _blank_cell(pack) and (not isinstance(burn, dict) or _blank_cell(r.get("usd_per_unit"))):
            out.append(Problem(files["free"], int(r["_line"]), 1, f"free.{r['id']}.units_per_pack",
                               "a tier that sells its compute units in packs needs units_per_hour and usd_per_unit "
                               "(what its GPUs burn and a unit's price: a pack's price is usd_per_unit x "
                               "units_per_pack)"))
        if not _blank_cell(pack) and not _blank_cell(fee) and float(cast(float, fee)) > 0:
            out.append(Problem(files["free"], int(r["_line"]), 1, f"free.{r['id']}.units_per_pack",
                               "a tier sells its units by the month (usd_per_month) or in packs, not both: its "
                               "units would be paid twice"))
        if not _blank_cell(pack_days) and _blank_cell(pack):
            out.append(Problem(files["free"], int(r["_line"]), 1, f"free.{r['id']}.pack_days",
                               "pack_days says how long a pack's units last: it needs units_per_pack"))
        if not isinstance(burn, dict):
            continue
        where = f"free.{r['id']}.units_per_hour"
        for device in burn:
            if device not in devices:
                out.append(Problem(files["free"], int(r["_line"]), 1, where,
                                   f"unknown device {device!r}{did_you_mean(device, devices)}"))
        if _blank_cell(r.get("usd_per_unit")):
            out.append(Problem(files["free"], int(r["_line"]), 1, f"free.{r['id']}.usd_per_unit",
                               "a tier with units_per_hour needs usd_per_unit to derive its hourly price"))
    return out


def check_defaults(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """Blank is never zero: interruptions.csv ends each kind's defaults (rent spot rows, free
    tiers) with a row matching every offer ('*'), so that no interruptible offer is left without
    a sourced rate (it would read as never interrupted)."""
    table = tables["interruptions"]
    out = []
    for kind in ("rent", "free"):
        if not ((table["kind"] == kind) & (table["match"] == "*")).any():
            out.append(Problem(files["interruptions"], 1, 1, f"interruptions.{kind}",
                               f"no default for every {kind} offer (a row of kind {kind} matching '*'): an "
                               "interruptible offer no row matches would be planned as never interrupted"))
    return out


def check_variants(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """A device's ``variant_of`` names another card of its chip (planner.model.workload takes the
    measured one's miss for the other): another id, of the same architecture and compute
    capability; a card of another chip would hand its miss to a card that runs other kernels."""
    devices = tables["devices"]
    if "variant_of" not in devices:
        return []
    by_id = {r["id"]: r for r in devices.to_dict("records")}
    out = []
    for r in by_id.values():
        other = by_id.get(r["variant_of"]) if isinstance(r["variant_of"], str) else None
        if other is None:
            continue  # blank, or an unknown id (check_references says so)
        same = (other["id"] != r["id"] and other["architecture"] == r["architecture"]
                and str(other.get("compute_capability")) == str(r.get("compute_capability")))
        if not same:
            out.append(Problem(files["devices"], int(r["_line"]), 1, f"devices.{r['id']}.variant_of",
                               f"'{other['id']}' is not another card of this chip (another id, the same "
                               f"architecture and compute capability: {r['architecture']} "
                               f"{r.get('compute_capability')}, it is {other['architecture']} "
                               f"{other.get('compute_capability')})"))
    return out


def check_trends(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """Blank is never zero: trends.csv ends with a row matching every device ('*'), and each
    row's central trend lies in its range."""
    table = tables["trends"]
    out = []
    if not (table["match"] == "*").any():
        out.append(Problem(files["trends"], 1, 1, "trends.*", "no trend for every device (a row matching '*'): "
                           "a rent price no row matches would be planned as if it never moved"))
    for r in table.to_dict("records"):
        if not r["low_per_year"] <= r["trend_per_year"] <= r["high_per_year"]:
            out.append(Problem(files["trends"], int(r["_line"]), 1, f"trends.{r['id']}.trend_per_year",
                               f"the central trend {r['trend_per_year']:g} is outside its range "
                               f"{r['low_per_year']:g} to {r['high_per_year']:g}"))
    return out


#: The kinds of device and methods a job's utilisation must cover (planner.model.job).
UTILISATION_CLASSES = ("data-centre", "hopper", "consumer", "tpu")
UTILISATION_METHODS = ("pretrain", "full", "adapters")
#: The model sizes the rows of each kind and method must tile, without a gap [parameters].
UTILISATION_SPAN = (0.0, 1e13)


def check_utilisation(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """Blank is never zero: for every kind of device and method, the utilisation rows tile every
    model size from 0 to 10^13 parameters without a gap or an overlap, and each row's typical
    figure lies in its range, which lies in (0, 1]."""
    table = tables["utilisation"]
    out: list[Problem] = []
    if table.empty:
        return out
    records = table.to_dict("records")
    tiles: dict[tuple[str, Any, Any], list[dict[Any, Any]]] = {}  # (family, kind, method) -> its rows, in order
    for r in records:
        if not 0 < r["mfu_low"] <= r["mfu"] <= r["mfu_high"] <= 1:
            out.append(Problem(files["utilisation"], int(r["_line"]), 1, f"utilisation.{r['device_class']}.mfu",
                               f"expected 0 < mfu_low <= mfu <= mfu_high <= 1, got {r['mfu_low']:g}, {r['mfu']:g}, "
                               f"{r['mfu_high']:g}"))
        fam = "" if _blank_cell(r.get("family")) else str(r["family"])
        tiles.setdefault((fam, r["device_class"], r["methods"]), []).append(r)
    for fam in sorted({f for f, _, _ in tiles}):  # the rows for every family (blank) and each family's own, if any
        for cls in UTILISATION_CLASSES:
            for method in UTILISATION_METHODS:
                rows = sorted(tiles.get((fam, cls, method), []), key=lambda r: r["params_from"])
                if fam and not rows:  # a family's own rows need not cover every kind: the blank ones do
                    continue
                what = f"{method} on {cls} devices" + (f" for {fam}" if fam else "")
                at = UTILISATION_SPAN[0]
                for r in rows:
                    if r["params_from"] != at:
                        out.append(Problem(files["utilisation"], int(r["_line"]), 1, f"utilisation.{cls}.params_from",
                                           f"{what}: expected a row from {at:g} parameters, got one from "
                                           f"{r['params_from']:g} (a gap or an overlap)"))
                    at = r["params_to"]
                if at != UTILISATION_SPAN[1]:
                    out.append(Problem(files["utilisation"], 1, 1, f"utilisation.{cls}",
                                       f"{what}: no utilisation from {at:g} to {UTILISATION_SPAN[1]:g} "
                                       "parameters: a job of that size would have no hours"))
    return out


def check_carbon(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """Blank is never zero: the grid table has the world average (a grid not known), the PUE
    table a row for any other operator, the embodied table ends with a row matching every
    device; each figure lies in its range; a free tier's grid zone exists."""
    out = []
    checks = (("grid", "g_co2e_per_kwh", "world"), ("pue", "pue", "other"), ("embodied", "kg_co2e", None))
    for table, column, fallback in checks:
        t = tables[table]
        if t.empty:
            continue
        if fallback is not None and fallback not in set(t["id"]):
            out.append(Problem(files[table], 1, 1, f"{table}.{fallback}", f"no '{fallback}' row: an offer whose "
                               f"{table} the catalog does not know would have none"))
        if fallback is None and t["match"].iloc[-1] != "*":
            out.append(Problem(files[table], int(t["_line"].iloc[-1]), 1, f"{table}.match",
                               "the last row must match every device ('*')"))
        for r in t.to_dict("records"):
            if not 0 <= r["low"] <= r[column] <= r["high"]:
                out.append(Problem(files[table], int(r["_line"]), 1, f"{table}.{r['id']}.{column}",
                                   f"{r[column]:g} is outside its range {r['low']:g} to {r['high']:g}"))
    zones = set(tables["grid"]["id"]) if not tables["grid"].empty else set()
    if zones and "grid" in tables["free"]:
        for r in tables["free"].to_dict("records"):
            z = r.get("grid")
            if isinstance(z, str) and z and z not in zones:
                out.append(Problem(files["free"], int(r["_line"]), 1, f"free.{r['id']}.grid",
                                   f"unknown zone {z!r}{did_you_mean(z, sorted(zones))}"))
    return out


def check_rates(tables: Tables, files: Mapping[str, str]) -> list[Problem]:
    """USD has a rate (money is kept in USD) and exactly one default electricity region."""
    out = []
    if "USD" not in set(tables["rates"]["currency"]):
        out.append(Problem(files["rates"], 1, 1, "rates.USD", "USD needs a rate: money is kept in USD inside"))
    elec = tables["electricity"]
    n_default = int(sum(bool(v) for v in elec["default"]))
    if n_default != 1:
        out.append(Problem(files["electricity"], 1, 1, "electricity.default",
                           f"exactly one region must be the default, found {n_default}"))
    for _, r in elec.iterrows():
        if r["currency"] not in set(tables["rates"]["currency"]):
            out.append(Problem(files["electricity"], int(r["_line"]), 1, f"electricity.{r['region']}.currency",
                               f"no exchange rate for {r['currency']!r}"))
    return out
