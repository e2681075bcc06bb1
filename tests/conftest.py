"""Shared fixtures: the shipped catalog (loaded once) and scenario helpers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from planner.api import default_catalog
from planner.scenario import load_scenario_text

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
TODAY = dt.date(2026, 11, 22)


@pytest.fixture(scope="session")
def catalog():
    return default_catalog()


@pytest.fixture(scope="session")
def thesis_text() -> str:
    return (SCENARIOS / "thesis.yaml").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def load(catalog):
    """load(text, **kw) -> Scenario, validated against the shipped catalog."""

    def _load(text: str, **kw):
        kw.setdefault("today", TODAY)
        kw.setdefault("file", "s.yaml")
        return load_scenario_text(text, catalog.ids(), **kw)

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
