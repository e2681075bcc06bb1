"""Write a report directory: Markdown, HTML, charts, CSV and JSON. I/O lives here.

Safety: everything is written into a fresh temporary directory next to the
target first; only when all files exist is the old report swapped out (a
directory rename), so a failure part-way leaves the previous report intact.
A target that holds files the planner did not write is refused unless
``force``, in which case the planner's files are moved in one by one and
the other files are left alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from pricing.errors import InputError, Problem

from ..decide.result import Plan, to_dict
from . import charts, view
from . import page as report

MARKER = ".planner-report"


def report_files(plan: Plan) -> dict[str, bytes]:
    """Every file of the report, by name (no I/O)."""
    files: dict[str, bytes] = {}
    page = report.plan_page(plan, figures=True)
    for fig in page.figures():  # the charts the page shows
        files.update(figure_files(fig.name, charts.CHARTS[fig.name](plan)))
    files["report.md"] = view.to_markdown(page).encode("utf-8")
    files["report.html"] = view.to_html(page, _svgs(files)).encode("utf-8")
    files["result.json"] = report.render_json(plan).encode("utf-8")
    files["plan.csv"] = report.render_csv(plan).encode("utf-8")
    d = to_dict(plan)
    files["schedule.csv"] = view.csv_text(pd.DataFrame(d["schedule"], columns=[
        "phase", "option", "week_start", "gpu_hours", "wall_hours"])).encode("utf-8")
    files["breakeven.csv"] = view.csv_text(pd.DataFrame(d["breakeven"], columns=[
        "buy", "rent", "gpu_hours", "date", "why_not"])).encode("utf-8")
    return files


def _svgs(files: dict[str, bytes]) -> dict[str, str]:
    """Each chart's SVG text by chart name, for pages that embed them."""
    return {n[:-4]: data.decode("utf-8") for n, data in files.items() if n.endswith(".svg")}


def whatif_files(df: pd.DataFrame, table: view.Page, charts: dict) -> dict[str, bytes]:
    """A what-if table's report files (no I/O): the page (``table``, report.whatif_page, its
    charts first: the decision before the rows that make it) as Markdown and self-contained HTML,
    the table as CSV, JSON and Markdown, and each chart (``charts``: name -> (title, Figure))."""
    files: dict[str, bytes] = {}
    for name, (_, fig) in charts.items():
        files.update(figure_files(name, fig))
    figures = tuple(view.Figure(name, chart_title) for name, (chart_title, _) in charts.items())
    page = view.Page(table.title, ((view.section(None, *figures),) if figures else ()) + table.sections)
    files["table.csv"] = report.render_table(df, "csv").encode("utf-8")
    files["table.json"] = report.render_table(df, "json").encode("utf-8")
    files["table.md"] = view.to_markdown(table).encode("utf-8")
    files["report.md"] = view.to_markdown(page).encode("utf-8")
    files["report.html"] = view.to_html(page, _svgs(files)).encode("utf-8")
    return files


def write_report(plan: Plan, directory: str | Path, force: bool = False) -> list[str]:
    """Write the plan's report into ``directory`` safely; return the file names written."""
    return write_files(report_files(plan), directory, force)


def figure_files(name: str, fig: Any) -> dict[str, bytes]:
    """A figure as PNG and SVG, byte for byte the same for the same plan: SVG ids come from a
    fixed hash salt instead of a random one, and no file carries the date it was drawn."""
    import matplotlib
    import matplotlib.pyplot as plt

    out = {}
    with matplotlib.rc_context({"svg.hashsalt": f"planner-{name}"}):
        for fmt in ("png", "svg"):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, dpi=110, metadata={"Date": None} if fmt == "svg" else {"Software": None})
            out[f"{name}.{fmt}"] = buf.getvalue()
    plt.close(fig)
    return out


def write_files(files: dict[str, bytes], directory: str | Path, force: bool = False) -> list[str]:
    """Write ``files`` into ``directory`` safely (see the module docstring); return their names."""
    files = {**files, MARKER: json.dumps(sorted([*files, MARKER]), indent=1).encode("utf-8")}
    target, foreign = check_target(directory, force)
    try:
        return _write_files(files, target, foreign)
    except PermissionError as exc:
        where = exc.filename or target
        raise InputError([Problem(str(target), 0, 0, "--report", f"no permission to write {where}; choose a "
                                  "directory you can write to")]) from None
    except OSError as exc:  # a full disk, a read-only file system: the previous report stays
        raise InputError([Problem(str(target), 0, 0, "--report", f"cannot write the report ({exc.strerror or exc}); "
                                  "the previous report, if any, is unchanged")]) from None


def check_target(directory: str | Path, force: bool = False) -> tuple[Path, list[str]]:
    """Where a report into ``directory`` goes (through a symbolic link) and the files there
    the planner did not write; an InputError if it cannot go there. The CLI asks this before
    planning, so a wrong DIR costs no waiting."""
    target = Path(directory)
    if target.is_symlink():  # write through the link: the link stays, its directory gets the report
        if not target.exists():
            raise InputError([Problem(str(target), 0, 0, "--report", f"is a symbolic link to {os.readlink(target)}, "
                                      "which does not exist; create that directory or choose another")])
        target = target.resolve()
    if target.exists() and not target.is_dir():
        raise InputError([Problem(str(target), 0, 0, "--report", "exists and is not a directory")])
    _check_writable(target)
    for _ in range(CONSISTENT_READS):  # the marker and the listing of one and the same directory
        before = _identity(target)
        ours = _planner_files(target)
        names = sorted(p.name for p in target.iterdir()) if target.exists() else []
        if _identity(target) == before:
            break  # else another writer put its report there meanwhile (made or swapped the directory)
    foreign = [name for name in names if name not in ours]
    if foreign and not force:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise InputError([Problem(str(target), 0, 0, "--report",
                                  f"holds files the planner did not write ({shown}); choose another directory "
                                  "or add --force to write the report among them")])
    return target, foreign


#: How often :func:`check_target` reads a directory again that another writer replaced while it
#: read it. Six processes writing one directory at once: a reader saw no directory, hence no
#: marker, then the first writer's report, and took its files for somebody else's.
CONSISTENT_READS = 20


def _identity(target: Path) -> tuple[int, int] | None:
    """The directory at ``target`` as the file system knows it (device, inode); None where none is.
    A writer swaps a whole directory in, so a new one means a new report."""
    try:
        st = target.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _check_writable(target: Path) -> None:
    """Before any planning: the report can be written where asked (its nearest existing
    ancestor is a directory this process can create files in), so a wrong DIR costs no waiting
    and no answer is followed by an error."""
    ancestor = target.parent  # where the report is written first (then swapped in): never inside it
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError([Problem(str(target), 0, 0, "--report", f"{ancestor} is a file, not a directory: a "
                                  "report cannot go under it")])
    try:
        probe = Path(tempfile.mkdtemp(prefix=".planner-probe-", dir=ancestor))
        probe.rmdir()
    except PermissionError:
        raise InputError([Problem(str(target), 0, 0, "--report", f"no permission to write {ancestor}; choose a "
                                  "directory you can write to")]) from None
    except OSError as exc:
        raise InputError([Problem(str(target), 0, 0, "--report", f"cannot write in {ancestor} "
                                  f"({exc.strerror or exc}); choose a directory you can write to")]) from None


def _started(pid: int | str) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None where unknown."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _process_tag() -> str:
    """This process, as no later process can be: its PID and its start time (a reused PID
    starts later). Names the temporary directories of a write."""
    return f"{os.getpid()}-{_started(os.getpid()) or '0'}"


def _alive(tag: str) -> bool:
    """Whether the process that wrote a directory tagged ``tag`` (PID-START) still runs."""
    pid, _, start = tag.partition("-")
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    now = _started(pid)
    return now is None or now == start


def _write_files(files: dict[str, bytes], target: Path, foreign: list[str]) -> list[str]:
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_leftovers(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-{_process_tag()}-", dir=target.parent))
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; a report is for reading
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        if foreign:  # --force: ours among theirs
            _force_in(tmp, target, foreign)
        elif target.exists():
            _swap_in(tmp, target)
        else:
            try:
                os.replace(tmp, target)
            except OSError as exc:  # another writer created it meanwhile: replace theirs
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.EISDIR):
                    raise
                _swap_in(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(files)


def _force_in(tmp: Path, target: Path, foreign: list[str]) -> None:
    """Put the report in ``tmp`` into ``target`` among files the planner did not write, in one
    step where the system allows: ``tmp`` gets a hard link to each of those files (the same file,
    not a copy), then the two directories are exchanged atomically, so a kill leaves ``target``
    wholly old or wholly new; an entry another process added meanwhile is moved over after. Where
    that cannot be had (a directory among them, a file system without hard links, no exchange),
    the report's files are moved in one by one, theirs left as they are."""
    theirs = [target / name for name in foreign]
    linked = False
    if all(not p.is_dir() or p.is_symlink() for p in theirs):
        try:
            for p in theirs:
                os.link(p, tmp / p.name, follow_symlinks=False)
            linked = True
        except OSError:
            pass
    if linked and _exchange(tmp, target):
        ours_before = _planner_files(tmp)  # tmp holds the previous directory now
        for p in sorted(tmp.iterdir()):
            if p.name not in ours_before and p.name != MARKER and not (target / p.name).exists() \
                    and not (target / p.name).is_symlink():
                os.replace(p, target / p.name)  # theirs, added between the links and the exchange
        shutil.rmtree(tmp, ignore_errors=True)
        return
    for p in tmp.iterdir():
        if p.name not in foreign:
            os.replace(p, target / p.name)
    shutil.rmtree(tmp, ignore_errors=True)


_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one step (Linux renameat2 RENAME_EXCHANGE); False where the
    system or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0


def _swap_in(new: Path, target: Path) -> None:
    """Put ``new`` where ``target`` is, never leaving ``target`` missing: an atomic exchange
    where the system has one; else two renames, the old report put back if the second fails
    (and found again by :func:`recover_leftovers` if the process dies between them)."""
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # now holds the previous report
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{_process_tag()}-", dir=target.parent))
    os.rmdir(old)
    os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def recover_leftovers(target: Path) -> None:
    """Undo what a killed earlier write left beside ``target``: a previous report moved aside
    (``.NAME.old-PID-START-*``) comes back when ``target`` is missing; half-written
    ``.NAME.new-PID-START-*`` directories and stale copies are removed. A directory whose writer
    still runs (the same PID with the same start time: a PID reused after a reboot is another
    process) is another write under way, and left alone. Names are matched literally."""
    parent = target.parent
    if not parent.is_dir():
        return

    def dead(p: Path) -> bool:
        rest = p.name[len(target.name) + 6:]  # after ".NAME.old-" / ".NAME.new-": PID-START-random
        pid, _, more = rest.partition("-")
        start = more.partition("-")[0]
        if pid.isdigit() and int(pid) == os.getpid():
            return True  # our own leftovers are dead too
        return not _alive(f"{pid}-{start}")

    def named(kind: str) -> list[Path]:  # the names taken literally: 'r?' is no pattern
        prefix = f".{target.name}.{kind}-"
        return [p for p in parent.iterdir() if p.name.startswith(prefix)]

    def mtime(p: Path) -> float:  # another writer may remove it meanwhile
        try:
            return p.stat().st_mtime
        except OSError:
            return -1.0

    olds = sorted((p for p in named("old") if dead(p) and mtime(p) >= 0), key=mtime)
    if olds and not target.exists():
        with contextlib.suppress(OSError):  # another writer put one back first
            os.replace(olds.pop(), target)
    news = [p for p in named("new") if dead(p)]
    for leftover in news:  # a --force write killed after its exchange holds the directory before it:
        _keep_theirs(leftover, target)  # what another process added meanwhile goes back, never lost
    for leftover in [*olds, *news]:
        shutil.rmtree(leftover, ignore_errors=True)


def _keep_theirs(leftover: Path, target: Path) -> None:
    """Move into ``target`` each entry of ``leftover`` that the planner did not write (by its
    marker) and that ``target`` lacks: files of others, never deleted with a leftover."""
    if not target.is_dir():
        return
    ours = _planner_files(leftover) | {MARKER}
    if len(ours) == 1:  # no marker: a half-written report of ours, nothing of theirs
        return
    with contextlib.suppress(OSError):
        for p in sorted(leftover.iterdir()):
            if p.name not in ours and not (target / p.name).exists() and not (target / p.name).is_symlink():
                os.replace(p, target / p.name)


def _planner_files(target: Path) -> set[str]:
    """Names the planner wrote into ``target`` last time (from its marker file)."""
    marker = target / MARKER
    if not marker.exists():
        return set()
    try:
        return set(json.loads(marker.read_text(encoding="utf-8")))
    except (ValueError, OSError):
        return set()
