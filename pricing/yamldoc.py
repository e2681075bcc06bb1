"""YAML text to plain data plus the position of every key and value.

Scalars are built with ``yaml.SafeLoader`` rules only (no object construction).
Unlike ``yaml.safe_load``, a key that appears twice in one mapping is an
error, and the 1-based line:column of each key and value is kept so that
validation can point at the exact spot. Keys are text as written (YAML 1.1
would read ``on``, ``yes``, ``~`` and ``010`` as true, null and 8); ``<<``
merge keys are supported; aliases may not expand past MAX_VALUES values or
MAX_DEPTH levels (a few hundred bytes of nested anchors can otherwise grow to
gigabytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import InputError, Problem

Path = tuple  # of str (mapping keys) and int (list indices)

#: Limits on what a document may expand to (a scenario has a few hundred values).
MAX_VALUES = 100_000
MAX_DEPTH = 50


@dataclass
class Document:
    """Plain YAML data with positions; ``marks[path] = (key_pos, value_pos)``."""

    file: str
    data: Any
    marks: dict[Path, tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)

    def position(self, path: Path, at_key: bool = False) -> tuple[int, int]:
        """Best known (line, column) for ``path``: its own, else its nearest parent's."""
        p = tuple(path)
        while p:
            if p in self.marks:
                key_pos, value_pos = self.marks[p]
                return key_pos if at_key else value_pos
            p = p[:-1]
        return self.marks.get((), ((1, 1), (1, 1)))[1] if self.marks else (0, 0)

    def problem(self, path: Path, message: str, at_key: bool = False) -> Problem:
        line, col = self.position(path, at_key)
        return Problem(self.file, line, col, dotted(path), message)


def dotted(path: Path) -> str:
    """('phases', 'final', 'deadline') -> 'phases.final.deadline'; a part that holds dots or
    colons (a catalog id) in brackets, as it is written: 'catalog.rent[aws:g5.xlarge].price'."""
    out = ""
    for p in path:
        text = str(p)
        out += f"[{text}]" if out and ("." in text or ":" in text) else ("." if out else "") + text
    return out


#: libyaml's parser where PyYAML has it (ten times faster), else the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_NUMBER_TAGS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


def _mark(m: yaml.Mark) -> tuple[int, int]:
    return (m.line + 1, m.column + 1)


def _too_deep(text: str, file: str) -> Problem | None:
    """The first place ``text`` nests deeper than MAX_DEPTH, read from its tokens (the scanner
    does not recurse; the composer does, and 25,000 brackets crash it, segfault and all)."""
    starts = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken,
              yaml.FlowSequenceStartToken)
    ends = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    message = f"nested too deeply (more than {MAX_DEPTH} levels)"
    depth = 0
    try:
        for token in yaml.scan(text, Loader=_LOADER):
            if isinstance(token, starts):
                depth += 1
                if depth > MAX_DEPTH + 1:  # the document's own mapping is a level
                    return Problem(file, *_mark(token.start_mark), "", message)
            elif isinstance(token, ends):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        # PyYAML 6.0.4 and newer stop at their own depth (1,000) while scanning ahead of a flow
        # collection's tokens, before the loop above sees the 51st level: the same answer, at its mark
        if "nesting depth" not in str(exc.problem):
            return None  # any other syntax error is the composer's to report, with its context
        return Problem(file, *(_mark(exc.problem_mark) if exc.problem_mark else (0, 0)), "", message)
    return None


def parse_document(text: str, file: str) -> Document:
    """Parse YAML ``text``; syntax errors and duplicate keys raise InputError."""
    try:
        deep = _too_deep(text, file)
        if deep is not None:
            raise InputError([deep])
        root = yaml.compose(text, Loader=_LOADER)
    except RecursionError:
        raise InputError([Problem(file, 0, 0, "", f"nested too deeply (more than {MAX_DEPTH} levels)")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = _mark(mark) if mark else (0, 0)
        what = exc.problem or "invalid YAML"
        context = f" ({exc.context})" if exc.context else ""
        lines = text.splitlines()
        if mark is not None and mark.line < len(lines) and "\t" in lines[mark.line]:
            context += "; this line holds a tab: YAML indents with spaces only"
        raise InputError([Problem(file, line, col, "", f"YAML syntax error: {what}{context}")]) from None
    except yaml.YAMLError as exc:  # e.g. a reader error on control characters
        raise InputError([Problem(file, 0, 0, "", f"YAML syntax error: {exc}")]) from None
    doc = Document(file, None)
    if root is None:
        return doc
    constructor = yaml.SafeLoader("")
    problems: list[Problem] = []
    doc.marks[()] = (_mark(root.start_mark), _mark(root.start_mark))
    budget = [MAX_VALUES]
    try:
        doc.data = _build(root, (), doc, constructor, problems, 0, budget)
    except _TooBig:
        raise InputError([Problem(file, *_mark(root.start_mark), "", f"expands to more than {MAX_VALUES:,} values "
                                  "(nested YAML aliases?); a scenario has a few hundred")]) from None
    if problems:
        raise InputError(problems)
    return doc


class _TooBig(Exception):
    pass


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _key_text(key_node: yaml.Node, constructor: Any) -> str:
    """A mapping key as text, as written: YAML 1.1's booleans, nulls and octals stay words."""
    if key_node.tag == "tag:yaml.org,2002:str" or not key_node.style:  # plain: None (Python), "" (libyaml)
        return str(key_node.value)
    return str(constructor.construct_object(key_node))


def _merged(node: yaml.MappingNode, doc: Document, problems: list[Problem], path: tuple, budget: list[int],
            within: tuple = ()) -> list[tuple]:
    """The (key, value) node pairs of a mapping with its ``<<`` merges resolved: explicit keys
    first, then the merged mappings' keys they do not override (YAML merge key spec). Every
    pair a merge brings counts against the document's budget (a merge bomb multiplies them);
    a mapping that merges itself, directly or through others, is a problem."""
    own, merged = [], []
    within = (*within, id(node))
    if len(within) > MAX_DEPTH:
        raise _TooBig
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _MERGE_TAG:
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for src in sources:
                if isinstance(src, yaml.MappingNode) and id(src) in within:
                    line, col = _mark(src.start_mark)
                    problems.append(Problem(doc.file, line, col, dotted(path), "'<<' merges a mapping into itself"))
                elif isinstance(src, yaml.MappingNode):
                    pairs = _merged(src, doc, problems, path, budget, within)
                    budget[0] -= len(pairs)
                    if budget[0] < 0:
                        raise _TooBig
                    merged += pairs
                else:
                    line, col = _mark(src.start_mark)
                    problems.append(Problem(doc.file, line, col, dotted(path),
                                            "'<<' merges a mapping (or a list of mappings) only"))
        else:
            own.append((key_node, value_node))
    written = {k.value for k, _ in own if isinstance(k, yaml.ScalarNode)}
    seen: set = set()
    extra = []
    for k, v in merged:
        if isinstance(k, yaml.ScalarNode) and k.value not in written and k.value not in seen:
            seen.add(k.value)
            extra.append((k, v))
    return own + extra


def _build(node: yaml.Node, path: tuple, doc: Document, constructor: Any, problems: list[Problem], depth: int,
           budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if depth > MAX_DEPTH:
        problems.append(doc.problem(path, f"nested too deeply (more than {MAX_DEPTH} levels)"))
        return None
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in _PLAIN_TAGS:
        problems.append(doc.problem(path, f"unsupported YAML tag {node.tag!r}: plain mappings, lists and values only"))
        return None
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in _merged(node, doc, problems, path, budget):
            if not isinstance(key_node, yaml.ScalarNode):
                line, col = _mark(key_node.start_mark)
                problems.append(Problem(doc.file, line, col, dotted(path), "a key must be a plain word, not a list or mapping"))
                continue
            try:
                key = _key_text(key_node, constructor)
            except yaml.YAMLError as exc:
                key = key_node.value
                line, col = _mark(key_node.start_mark)
                problems.append(Problem(doc.file, line, col, dotted(path), f"bad key: {exc}"))
            child = path + (key,)
            key_pos = _mark(key_node.start_mark)
            if key in out:
                first = doc.marks[child][0]
                problems.append(Problem(doc.file, *key_pos, dotted(child),
                                        f"duplicate key (first given at line {first[0]}); keep one"))
                continue
            doc.marks[child] = (key_pos, _mark(value_node.start_mark))
            out[key] = _build(value_node, child, doc, constructor, problems, depth + 1, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            child = path + (i,)
            doc.marks[child] = (_mark(item.start_mark), _mark(item.start_mark))
            items.append(_build(item, child, doc, constructor, problems, depth + 1, budget))
        return items
    if node.tag in _NUMBER_TAGS and ":" in str(node.value) and not node.style:
        return node.value  # YAML 1.1 reads 1:30 as 90 (base 60): a clock's 1 h 30 min, kept as written
    try:
        return constructor.construct_object(node)
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        if node.tag == _TIMESTAMP_TAG:  # 2027-02-30: the text, which the reader of dates refuses with the rest
            return node.value
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]  # one line, not the parser's context
        problems.append(doc.problem(path, f"cannot read value {str(node.value)[:80]!r}: {what}"))
        return None
