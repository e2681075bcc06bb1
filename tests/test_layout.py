"""House rules that keep the core pure and the CLI documented."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main

ROOT = Path(__file__).resolve().parents[1]
CORE = ["options", "workload", "sessions", "quotes", "milp", "optimize", "breakeven", "costs", "result", "units"]
FORBIDDEN = {"click", "yaml", "matplotlib", "pathlib", "os", "sys", "subprocess", "requests", "time"}


@pytest.mark.parametrize("module", CORE)
def test_core_modules_do_no_io(module):
    tree = ast.parse((ROOT / "planner" / f"{module}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {(node.module or "").split(".")[0]}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"open", "print", "input"}, f"{module} calls {node.func.id}()"
            continue
        elif isinstance(node, ast.Attribute) and node.attr in {"today", "now", "utcnow"}:
            raise AssertionError(f"{module} reads the clock ({node.attr})")
        else:
            continue
        assert not names & FORBIDDEN, f"{module} imports {names & FORBIDDEN}"


def test_every_command_has_help_and_is_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    runner = CliRunner()
    for name, command in main.commands.items():
        assert command.help, name
        assert runner.invoke(main, [name, "--help"]).exit_code == 0
        assert f"planner {name}" in readme, name


def _imports(path: Path) -> set[str]:
    """Top-level package names a module imports, at any depth of its code."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.add((node.module or "").split(".")[0])
    return out


@pytest.mark.parametrize("path", sorted((ROOT / "pricing").glob("*.py")), ids=lambda p: p.name)
def test_the_catalog_is_the_lower_layer(path):
    """pricing never imports planner: the planner builds on the catalog, not the other way."""
    assert "planner" not in _imports(path)


def _planner_imports(path: Path) -> set[str]:
    """The planner modules a planner module imports, at any depth of its code (relative imports)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out |= {a.name for a in node.names}
    return out


def test_the_core_imports_in_one_direction():
    """No import circle among the core's modules (the CLI, api and the what-if layer above them
    may import lazily): each stage builds on the ones below it."""
    graph = {m: _planner_imports(ROOT / "planner" / f"{m}.py") & set(CORE + ["uncertainty", "records", "scenario"])
             for m in CORE + ["uncertainty", "records", "scenario"]}
    state: dict[str, int] = {}

    def visit(m: str, path: tuple[str, ...]) -> None:
        if state.get(m) == 1:
            raise AssertionError("import circle: " + " -> ".join((*path, m)))
        if state.get(m) == 2:
            return
        state[m] = 1
        for n in sorted(graph[m]):
            visit(n, (*path, m))
        state[m] = 2

    for m in graph:
        visit(m, ())
