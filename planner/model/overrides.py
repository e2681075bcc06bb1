"""Changes to a scenario file: ``--set KEY.PATH=VALUE`` and variants parsed and placed on the
file's data before it is validated."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pricing.errors import InputError, Problem, did_you_mean
from pricing.ids import CatalogIds
from pricing.yamldoc import Document, dotted, parse_document

from .schema import Field, ListOf, MapOf, _Any


@dataclass(frozen=True)
class Override:
    """One ``key.path = value`` change, with where it was written."""

    path: tuple
    value: Any
    file: str
    line: int
    column: int
    label: str  # "variant 'cheap-power'" or "--set"


def printable(text: str) -> str:
    """``text`` with its control characters written as escapes (ESC as \\x1b): safe to show."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def parse_set(option: str) -> tuple[str, Any]:
    """Split ``key.path=value``; the value is read as YAML, as in a file."""
    if "=" not in option:
        raise InputError([Problem("--set", 0, 0, printable(option), "expected key.path=value, e.g. workload.params=300M")])
    key, text = option.split("=", 1)
    key = key.strip()
    if printable(key) != key:  # an escape sequence would reach the terminal and the report's title
        raise InputError([Problem("--set", 0, 0, printable(key), "a key holds letters, digits, '.', '_', '-' and "
                                  "[ID], not control characters")])
    try:
        doc = parse_document(text if text.strip() else "null", "--set " + option)
    except InputError as exc:
        raise InputError([Problem("--set", 0, 0, key, p.message) for p in exc.problems]) from None
    return key, doc.data


def parse_flag_value(text: str, flag: str) -> Any:
    """A command-line flag's value read as YAML, as in a file; errors name the flag."""
    if not text.strip():
        return text
    return parse_document(text, flag).data


_PATH_PART = re.compile(r"([^.\[\]]+)((?:\[[^\]]*\])*)(?:\.|$)")


def _split_path(key: str) -> tuple:
    """``catalog.rent[aws:g5.xlarge].price`` -> ('catalog', 'rent', 'aws:g5.xlarge', 'price'):
    dotted parts, with an id in brackets kept whole (ids contain dots and colons)."""
    if not key:
        return ()
    out: list = []
    pos = 0
    while pos < len(key):
        m = _PATH_PART.match(key, pos)
        if not m or m.end() == pos:
            return tuple(int(p) if p.isdigit() else p for p in key.split("."))  # let the resolver say what is wrong
        name, brackets = m.group(1), m.group(2)
        out.append(int(name) if name.isdigit() else name)
        out += re.findall(r"\[([^\]]*)\]", brackets)
        pos = m.end()
    return tuple(out)


def _catalog_entry_for(path: tuple, data: dict, ids: CatalogIds) -> None:
    """``catalog.KIND[ID]...`` names a row of the shipped catalog (or a catalog file) that the
    scenario's own ``catalog:`` does not list yet: add ``{id: ID}`` there, so that the override
    changes that row field by field (docs/scenario.md: an entry whose id exists overrides the row)."""
    if len(path) < 4 or path[0] != "catalog" or path[1] not in ("buy", "rent", "free") or isinstance(path[2], int):
        return
    kind, offer = path[1], path[2]
    section = data.setdefault("catalog", {}) if isinstance(data.get("catalog", {}), dict) else None
    if section is None:
        return
    entries = section.get(kind)
    if entries is None:
        entries = section[kind] = []
    if not isinstance(entries, list) or any(isinstance(e, dict) and e.get("id") == offer for e in entries):
        return
    known = getattr(ids, kind)
    if offer in known:
        entries.append({"id": offer})
    else:
        raise ValueError(f"no {kind} offer '{offer}' in the catalog or the scenario"
                         f"{did_you_mean(str(offer), sorted(known | {e.get('id') for e in entries if isinstance(e, dict)}))}")


def _within_a_section(key: str, schema: dict) -> str:
    """' (did you mean 'you.budget'?)' for a key written without its section (--set budget=300),
    phases' keys under a phase ('phases.<name>.deadline'); '' where no section has it."""
    places = [f"{name}.{key}" for name, section in schema.items() if isinstance(section, dict) and key in section]
    places += [f"{name}.<name>.{key}" for name, section in schema.items()
               if isinstance(section, MapOf) and key in section.item]
    return " (did you mean " + " or ".join(f"'{p}'" for p in places) + "?)" if places else ""


def _resolve_path(path: tuple, data: Any, schema: Any, where: str) -> tuple:
    """Check ``path`` against the schema (and the data for phase names / list ids).

    Returns the path with list ids turned into indices. Raises ValueError with
    a did-you-mean when a part does not exist.
    """
    out: list = []
    node, value = schema, data
    for i, part in enumerate(path):
        shown = dotted(path[: i + 1])
        if isinstance(node, Field) or isinstance(node, _Any):
            raise ValueError(f"'{dotted(path[:i])}' takes a single value; '{shown}' does not exist")
        if isinstance(node, dict):
            if part not in node:
                hint = did_you_mean(str(part), node) or (_within_a_section(str(part), node) if i == 0 else "")
                raise ValueError(f"unknown key '{shown}'{hint}")
            out.append(part)
            node, value = node[part], (value or {}).get(part) if isinstance(value, dict) else None
        elif isinstance(node, MapOf):
            # a phase by its name as text: the path reads the part 2028 as a number (a list's index)
            names = {str(k): k for k in value} if isinstance(value, dict) else {}
            if str(part) not in names:
                raise ValueError(f"no phase named '{part}' in {where}{did_you_mean(str(part), list(names))}")
            out.append(names[str(part)])
            node, value = node.item, value[names[str(part)]]
        elif isinstance(node, ListOf):
            items = value if isinstance(value, list) else []
            if isinstance(part, int):
                if not 0 <= part < len(items):
                    raise ValueError(f"'{dotted(path[:i])}' has {len(items)} entries; no entry {part}")
                idx = part
            else:
                ids = [str(e.get("id")) for e in items if isinstance(e, dict)]
                if part not in ids:
                    raise ValueError(f"no entry with id '{part}' in '{dotted(path[:i])}'{did_you_mean(str(part), ids)}")
                idx = ids.index(part)
            out.append(idx)
            node, value = node.item, items[idx]
    return tuple(out)


def _flatten(value: Any, prefix: tuple, doc: Document, doc_path: tuple, schema: Any, out: list) -> None:
    """Flatten a variant body into (path, value, doc_path) leaves, following the schema."""
    if isinstance(value, dict) and not isinstance(schema, (Field, _Any)) and value:
        for key, sub in value.items():
            parts = _split_path(key)
            sub_schema = schema
            for p in parts:
                if isinstance(sub_schema, dict):
                    sub_schema = sub_schema.get(p, _Any())
                elif isinstance(sub_schema, (MapOf, ListOf)):
                    sub_schema = sub_schema.item
                else:
                    sub_schema = _Any()
            _flatten(sub, prefix + parts, doc, doc_path + (key,), sub_schema, out)
    else:
        out.append((prefix, value, doc_path))


def _set_in(data: dict, path: tuple, value: Any) -> Any:
    """Set ``data[path] = value``, creating mappings on the way; return the old value."""
    node: dict | list = data
    for part in path[:-1]:
        nxt = node[part] if isinstance(node, list) else node.get(part)
        if not isinstance(nxt, (dict, list)):
            nxt = {}
            node[part] = nxt
        node = nxt
    old = node[path[-1]] if isinstance(node, list) else node.get(path[-1])
    node[path[-1]] = value
    return old
