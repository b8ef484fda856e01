"""Fixtures for the workflow tests: a tiny campaign run once per session with the local profile
and real MPI, and throw-away copies of it for the re-run tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workflow_project import (
    TINY_CAMPAIGN,
    measured_once,
    new_project,
    read_config,
    snakemake,
    write_config,
)


@pytest.fixture(scope="session")
def completed_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny campaign, run to completion once per session (the expensive part)."""

    def measure(project: Path) -> None:
        new_project(project, TINY_CAMPAIGN)
        snakemake(project, "--profile", "profiles/local", "--cores", "2")

    return measured_once(tmp_path_factory, "tiny", measure)


@pytest.fixture
def campaign_copy(completed_campaign: Path, project_copy: Callable[[Path], Path]) -> Path:
    """A private copy of the completed campaign."""
    return project_copy(completed_campaign)


@pytest.fixture
def edit_config(campaign_copy: Path) -> Callable[[Callable[[dict[str, Any]], None]], None]:
    def edit(change: Callable[[dict[str, Any]], None]) -> None:
        config = read_config(campaign_copy)
        change(config)
        write_config(campaign_copy, config)

    return edit
