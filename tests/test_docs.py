"""The project documents itself: the docs agree with the code, and point at nothing outside."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import planner
from planner.cli import main

from .conftest import SCENARIOS, TODAY

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_the_scenario_page_lists_every_key_as_planner_keys_does():
    """PLANNER_UPDATE_DOCS=1 rewrites the table from the command, on purpose."""
    path = DOCS / "scenario.md"
    page = path.read_text(encoding="utf-8")
    start, end = page.index("<!-- keys:start -->") + len("<!-- keys:start -->"), page.index("<!-- keys:end -->")
    result = CliRunner().invoke(main, ["keys", "--format", "markdown"])
    assert result.exit_code == 0
    if os.environ.get("PLANNER_UPDATE_DOCS") == "1":
        path.write_text(page[:start] + "\n" + result.output.strip() + "\n" + page[end:], encoding="utf-8")
        page = path.read_text(encoding="utf-8")
        start, end = page.index("<!-- keys:start -->") + len("<!-- keys:start -->"), page.index("<!-- keys:end -->")
    assert page[start:end].strip() == result.output.strip(), \
        "docs/scenario.md's key table differs from 'planner keys': PLANNER_UPDATE_DOCS=1 pytest tests/test_docs.py"


@pytest.mark.parametrize("name", ["thesis.yaml", "lab.yaml", "lora.yaml"])
def test_every_shipped_scenarios_answer_follows_the_schema(name):
    schema = json.loads((DOCS / "result.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    s = planner.load_scenario(SCENARIOS / name, today=TODAY)
    d = planner.to_dict(planner.plan(s, trials=50, pareto=True, uncertainty=50))
    assert "uncertainty" in d
    jsonschema.validate(json.loads(json.dumps(d)), schema)


def test_the_schema_catches_a_renamed_key():
    schema = json.loads((DOCS / "result.schema.json").read_text(encoding="utf-8"))
    d = planner.to_dict(planner.plan(planner.load_scenario(SCENARIOS / "thesis.yaml", today=TODAY), trials=0))
    d["phases"][0]["finish"] = d["phases"][0].pop("finish_expected")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(d, schema)


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:  # not a git checkout (an sdist): the files on disk
        return [p for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [ROOT / f for f in out.stdout.splitlines()]


def test_nothing_points_a_user_outside_the_repository():
    outside = re.compile(r"\.\./shared|(?<![\w/])(SCENARIO|OUTPUT|DESIGN)\.md")
    for path in _tracked():
        if path.suffix not in {".py", ".md", ".yaml", ".csv", ".json", ".toml", ".txt"} or path.name == "test_docs.py":
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not outside.search(text), f"{path.relative_to(ROOT)} points outside the repository"


def test_every_link_in_the_readme_and_the_docs_resolves():
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name}: {target}"
