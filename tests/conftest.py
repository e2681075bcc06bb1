"""Shared fixtures: the frozen test catalog (loaded once) and scenario helpers.

Every test runs on ``tests/catalog``, a frozen copy of the catalog, so that a
price update in ``pricing/data`` changes no test; the user's data directory
(where ``planner pricing refresh`` writes its layer) is an empty temporary
directory, so a developer's own refreshed prices never reach a test.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from hypothesis import settings

import planner.api
import pricing
from planner.model.validate import load_scenario_text

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
TODAY = dt.date(2026, 11, 22)
TEST_CATALOG = Path(__file__).resolve().parent / "catalog"
FROZEN = pricing.load_catalog(TEST_CATALOG)

#: Property tests run a twentieth of their examples by default, so that ``pytest -q`` stays quick
#: while a developer works; CI (``CI`` set, as on the CI machine, or ``PLANNER_TESTS=full``, as
#: .ci/run sets it) runs every example, derandomised so that a red run can be replayed.
FULL = os.environ.get("PLANNER_TESTS", "full" if os.environ.get("CI") else "fast") == "full"
settings.register_profile("full", derandomize=True, print_blob=True)
settings.register_profile("fast", derandomize=True)
settings.load_profile("full" if FULL else "fast")


def examples(full: int) -> int:
    """A property test's example count: ``full`` under CI, a twentieth (at least 5) by default."""
    return full if FULL else max(5, full // 20)


def pytest_configure(config):
    """Before any test: the frozen catalog is the base catalog, and the user data dir is empty."""
    import os
    import tempfile

    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="planner-test-data-")
    planner.api.shipped_catalog = lambda: FROZEN
    # the quick reader's ids as planner.api.shipped_ids gives them, read from the frozen catalog
    # (the speed model loaded when a job asks: over the frozen tables, which shipped_catalog gives)
    planner.api.shipped_ids = lambda: planner.api.with_shipped_speeds(FROZEN.ids())


@pytest.fixture(scope="session")
def catalog():
    return FROZEN


@pytest.fixture(scope="session")
def thesis_text() -> str:
    return (SCENARIOS / "thesis.yaml").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def load(catalog):
    """load(text, **kw) -> Scenario, validated against the shipped catalog."""

    def _load(text: str, **kw):
        kw.setdefault("today", TODAY)
        kw.setdefault("file", "s.yaml")
        return load_scenario_text(text, planner.api.scenario_ids(catalog), **kw)

    return _load


MINIMAL = """\
name: minimal
start: 2027-01-04
electricity: 0.20 USD/kWh
workload:
  family: transformer
  params: 100M
  reference_gpu: rtx-3090
phases:
  train:
    gpu_hours: 100
    deadline: 2027-03-01
"""
