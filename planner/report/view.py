"""A report as one view model, written out by small exporters.

A :class:`Page` is sections of blocks: paragraphs (``**bold**`` and ```code```
allowed), bullet lists, tables of formatted cells (a cell of several lines is a
tuple: one line per phase keeps a plan column narrow) and figures. The plan
report and every what-if page are built once as a Page; :func:`to_text`,
:func:`to_markdown` and :func:`to_html` only lay it out, so the terminal, the
Markdown and the HTML say the same thing. HTML comes from markdown-it-py
(CommonMark), with figures embedded as inline SVG, so the page needs no other
file.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

Cell = str | tuple[str, ...]  # a tuple: the cell's lines


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    right: AbstractSet[int] = frozenset()  # columns of numbers (right-aligned in text)
    wrap: frozenset[int] = frozenset()  # columns of long text a page may break across lines (HTML)


def lines(cell: Cell) -> tuple[str, ...]:
    return cell if isinstance(cell, tuple) else (cell,)


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Figure:
    name: str  # the chart's files: NAME.png and NAME.svg
    title: str


Block = str | Table | Bullets | Figure


@dataclass(frozen=True)
class Section:
    title: str | None
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Page:
    title: str
    sections: tuple[Section, ...] = field(default_factory=tuple)

    def figures(self) -> list[Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]


def section(title: str | None, *blocks: Block | None) -> Section:
    """A section of the blocks given (None and empty ones left out)."""
    return Section(title, tuple(b for b in blocks if b is not None and b != "" and
                                not (isinstance(b, (Bullets, Table)) and not (b.items if isinstance(b, Bullets)
                                                                               else b.rows))))


# --------------------------------------------------------------------------- text


def _plain(text: str) -> str:
    """Inline Markdown as terminal text: no ** or backticks, no control characters."""
    return plain_text(re.sub(r"`([^`]*)`", r"\1", re.sub(r"\*\*(.+?)\*\*", r"\1", text)))


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: AbstractSet[int] = frozenset()) -> list[str]:
    """Columns padded to their widest line; numbers (``right``) right-aligned; a cell of several
    lines makes its row that many lines."""
    widths = [max([len(h), *(len(x) for r in rows for x in lines(r[i]))]) for i, h in enumerate(headers)]

    def line(cells: Sequence[Any]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    for r in rows:
        cells = [lines(c) for c in r]
        out += [line([c[k] if k < len(c) else "" for c in cells]) for k in range(max(map(len, cells), default=1))]
    return out


def to_text(page: Page) -> str:
    title = plain_text(page.title)
    out = [title, "=" * len(title)]
    for sec in page.sections:
        out.append("")
        if sec.title:
            out += [plain_text(sec.title), "-" * len(plain_text(sec.title))]
        for block in sec.blocks:
            if isinstance(block, str):
                out.append(_plain(block))
            elif isinstance(block, Bullets):
                out += [f"  - {_plain(item)}" for item in block.items]
            elif isinstance(block, Table):
                out += text_table([_plain(h) for h in block.headers],
                                  [[tuple(_plain(x) for x in lines(c)) for c in r] for r in block.rows], block.right)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- CSV

#: A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(df: pd.DataFrame) -> str:
    """A table as CSV for spreadsheets: a text cell that a spreadsheet would run as a formula
    (a name like ``=cmd|...``) starts with an apostrophe, as spreadsheet-safe CSV writers do;
    numbers stay numbers."""
    safe = df.map(lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_STARTS) else v)
    return safe.to_csv(index=False, lineterminator="\n")


# --------------------------------------------------------------------------- Markdown

#: Control characters other than tab and newline: terminal escapes in a name must not reach a terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain_text(text: str) -> str:
    """User text as it may reach a terminal: control characters (escape sequences) removed."""
    return _CONTROL.sub("", text)


def md_escape(text: str) -> str:
    """Page text as Markdown that no name can turn into a link, an image or HTML: outside code
    spans, a ']' that a '(', ':' or '[' follows (a link, a link definition, a reference) is
    broken with a backslash and '<' is an entity (no autolink, no tag); '[USD]' stays as it
    reads. Inside code spans text is literal anyway."""
    parts = plain_text(text).split("`")
    for i in range(0, len(parts), 2):  # outside code spans
        parts[i] = re.sub(r"\](?=[(:\[])", r"]\\", parts[i].replace("<", "&lt;"))
    return "`".join(parts)


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: AbstractSet[int] = frozenset()) -> list[str]:
    """A pipe table; numbers (``right``) right-aligned; a cell's lines joined by <br> (GitHub
    and most Markdown viewers break the line there)."""
    esc = [["<br>".join(md_escape(x).replace("|", "\\|") for x in lines(c)) for c in r] for r in rows]
    rule = "|" + "|".join(" ---: " if i in right else " --- " for i in range(len(headers))) + "|"
    return ["| " + " | ".join(md_escape(h) for h in headers) + " |", rule, *("| " + " | ".join(r) + " |" for r in esc)]


def _md_block(block: Block) -> list[str]:
    if isinstance(block, str):
        return [md_escape(block)]
    if isinstance(block, Bullets):
        return [f"- {md_escape(item)}" for item in block.items]
    if isinstance(block, Table):
        return md_table(block.headers, block.rows, block.right)
    return [f"![{block.title}]({block.name}.png)"]


def to_markdown(page: Page) -> str:
    out = [f"# {md_escape(page.title)}", ""]
    for sec in page.sections:
        if sec.title:
            out += [f"## {md_escape(sec.title)}", ""]
        for block in sec.blocks:
            out += [*_md_block(block), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- HTML

STYLE = ("body{font-family:system-ui,sans-serif;max-width:1360px;margin:2em auto;padding:0 1em;font-size:18px;"
         "line-height:1.45;color:#111}table{border-collapse:collapse;margin:.5em 0;font-size:16px;display:block;overflow-x:auto}"
         "th,td{border:1px solid #bbb;padding:.25em .6em;text-align:left}th{background:#eee}"
         "td:not(:last-child){white-space:nowrap}code{font-size:.9em;background:#f3f3f3;padding:0 .2em;white-space:nowrap}"
         "figure{margin:1em 0}figure svg{max-width:100%;height:auto}h1{font-size:1.7em}")


def _html_table(table: Table, md: Any) -> str:
    """A table with each cell's inline Markdown rendered (escaped: no raw HTML from a cell) and
    its lines broken with <br>."""
    def style(i: int) -> str:
        return (' style="text-align:right"' if i in table.right else
                ' style="white-space:normal;min-width:16em"' if i in table.wrap else "")

    def row(tag: str, cells: Sequence[Any]) -> str:
        return "<tr>" + "".join(
            f"<{tag}{style(i)}>" + "<br>".join(md.renderInline(md_escape(x)) for x in lines(c))
            + f"</{tag}>" for i, c in enumerate(cells)) + "</tr>"

    return ("<table>\n<thead>\n" + row("th", table.headers) + "\n</thead>\n<tbody>\n"
            + "\n".join(row("td", r) for r in table.rows) + "\n</tbody>\n</table>")


def to_html(page: Page, svgs: dict[str, str] | None = None) -> str:
    """One self-contained HTML page; ``svgs`` maps a figure's name to its SVG text (a figure
    without one is left out: the page must not ask for another file)."""
    from markdown_it import MarkdownIt

    # no link, image or raw HTML from any text: the page needs no network and calls nowhere
    md = MarkdownIt("commonmark", {"html": False}).disable(["link", "image", "autolink"])
    svgs = svgs or {}
    body = [f"<h1>{html.escape(page.title)}</h1>"]
    for sec in page.sections:
        if sec.title:
            body.append(f"<h2>{html.escape(sec.title)}</h2>")
        for block in sec.blocks:
            if isinstance(block, Figure):
                if block.name in svgs:
                    svg = svgs[block.name]
                    body.append(f"<figure>{svg[svg.index('<svg'):]}<figcaption>{html.escape(block.title)}"
                                "</figcaption></figure>")
            elif isinstance(block, Table):
                body.append(_html_table(block, md))
            else:
                body.append(md.render("\n".join(_md_block(block))).strip())
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(page.title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
