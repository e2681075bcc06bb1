"""House rules that keep the core pure and the CLI documented."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main

ROOT = Path(__file__).resolve().parents[1]
CORE = ["decide/options", "model/workload", "model/sessions", "decide/quotes", "decide/milp", "decide/optimize",
        "decide/breakeven", "model/costs", "decide/result", "model/units", "decide/uncertainty", "model/records"]
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


#: planner/ in wings, each importing only from wings of its rank or below (docs/model.md): the
#: model (the world as given), decide (options, quotes, the program, the plan), what people
#: read (report) beside the library's door (api), the lab-meeting tools (whatif), the CLI on top.
RANK = {"model": 0, "decide": 1, "report": 2, "api": 2, "executors": 2, "whatif": 3, "cli": 4, "__init__": 5}


def _module(path: Path) -> str:
    """'decide.milp', 'api', ... for a file of planner/."""
    return ".".join(path.relative_to(ROOT / "planner").with_suffix("").parts).removesuffix(".__init__") or "__init__"


def _wing(module: str) -> str:
    return module.split(".")[0]


def _planner_imports(path: Path, here: str | None = None) -> set[str]:
    """The planner modules a planner module (``here``: its name, else from its path) imports, at
    any depth of its code, as 'wing.module' (or 'wing' for a wing itself, 'api' for the door),
    resolving relative imports."""
    here = here or _module(path)
    package = here.split(".")[:-1] if path.name != "__init__.py" else here.split(".")
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            prefix = [*base, *(node.module.split(".") if node.module else [])]
            if node.module:
                out.add(".".join(prefix))
            else:
                out |= {".".join([*prefix, a.name]) for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("planner."):
            out.add(node.module.removeprefix("planner."))
    return {m for m in out if m and m != "__version__"}


PLANNER_FILES = sorted((ROOT / "planner").rglob("*.py"))


@pytest.mark.parametrize("path", PLANNER_FILES, ids=lambda p: str(p.relative_to(ROOT / "planner")))
def test_no_wing_imports_a_wing_above_it(path):
    """The model never imports decide, decide never the report or the what-ifs, and so on: the
    package reads in layers (issue 41). One wrong import fails here, e.g. model/ importing decide/."""
    _check_wings(_module(path), _planner_imports(path))


def _check_wings(module: str, imports: set[str]) -> None:
    for imported in imports:
        assert RANK[_wing(imported)] <= RANK[_wing(module)], f"{module} imports {imported}, a wing above it"


def test_an_import_from_a_wing_above_is_caught(tmp_path):
    """The rule's own check: a model module importing from decide (lazily, inside a function) is found."""
    bad = tmp_path / "probe.py"
    bad.write_text("def f():\n    from ..decide.milp import Calendar\n", encoding="utf-8")
    imports = _planner_imports(bad, "model.probe")
    assert imports == {"decide.milp"}
    with pytest.raises(AssertionError, match="a wing above it"):
        _check_wings("model.probe", imports)


def test_the_core_imports_in_one_direction():
    """No import circle among the model's and decide's modules (the CLI, api and the what-if
    layer above them may import lazily): each stage builds on the ones below it."""
    core = {_module(p): p for wing in ("model", "decide") for p in sorted((ROOT / "planner" / wing).glob("*.py"))
            if p.name != "__init__.py"}
    graph = {m: _planner_imports(p) & set(core) for m, p in core.items()}
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


def _cli_in_a_fresh_python(args: list[str], then: str) -> list[str]:
    """The lines a new Python prints running ``planner ARGS`` on the thesis (which must exit 0)
    and then the expression ``then``: what a command leaves in the process."""
    import subprocess
    import sys

    code = ("import gc, sys; from planner.cli import main\n"
            f"try: main({args!r} + [sys.argv[1]])\n"
            "except SystemExit as e: assert e.code in (0, None), e.code\n"
            f"print({then})")
    return subprocess.run([sys.executable, "-c", code, str(ROOT / "scenarios" / "thesis.yaml")], capture_output=True,
                          text=True, check=True, cwd=ROOT).stdout.splitlines()


def test_validating_a_scenario_of_gpu_hours_loads_no_numerical_library():
    """`planner validate` answers in about the time of importing yaml and click (bench/startup.py):
    a scenario whose phases give gpu_hours is read and checked without numpy or pandas, which
    only a phase described by its job needs (its speed model). A module-level import of either
    on the way (planner.model.job did, via the speed model) made it 4.7x that import."""
    out = _cli_in_a_fresh_python(["validate"], "sorted(m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules)")
    assert out == ["ok", "[]"]


def test_a_plan_runs_with_the_garbage_collector_on_and_the_imported_engine_frozen():
    """`planner run` imports pandas, numpy and highspy with the cyclic collector paused and
    freezes what they made (cli._load_engine): every full collection, and the one at exit, would
    walk those hundred thousand objects again, a tenth of the command's time (bench/run_time.py).
    The collector must be on again for the plan, or a long sweep would keep every cycle it makes."""
    out = _cli_in_a_fresh_python(["run", "--today", "2026-12-07"], "gc.isenabled(), gc.get_freeze_count() > 50_000")
    assert out[-1] == "True True"
