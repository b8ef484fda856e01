"""The launches of a campaign, fixed or adaptive (plans read through a stand-in for Snakemake's
checkpoints), and the files the workflow keeps per launch and per block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.launches import (
    block_records,
    campaign_launches,
    last_round,
    launch_files,
    measured_launches,
    plan_round_of_run,
    round_plan,
)


def campaign(runs: Any, mpi: tuple[str, ...] = ("a", "b"), blocking: str | None = None) -> Campaign:
    config = {
        "campaign": "c",
        "runs": runs,
        "mpi": {name: {} for name in mpi},
        "deployments": [{"nodes": 1, "ppn": 2}, {"nodes": 2, "ppn": 2}],
        "blocking": blocking,
    }
    return Campaign(config, AnalysisOptions.with_defaults(), "c.yaml")


def no_plans(number: int) -> dict[str, Any]:
    raise AssertionError(f"a fixed campaign reads no plan (asked for round {number})")


ADAPTIVE = {"min": 2, "max": 6, "step": 2}  # looks at 2, 4, 6 runs: rounds 0, 1, 2


def test_a_fixed_campaign_launches_every_run_of_every_entry_and_deployment() -> None:
    fixed = campaign(2)
    assert last_round(fixed) == 0
    launches = campaign_launches(fixed, 0, no_plans)
    assert launches == [(mpi, nodes, 2, run) for mpi in "ab" for nodes in (1, 2) for run in (0, 1)]
    assert launch_files(fixed, "raw", "csv", launches[:1]) == ["results/c/raw/a/1x2/run00.csv"]


def test_an_adaptive_campaign_launches_what_each_plan_names_until_one_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    adaptive = campaign(ADAPTIVE)
    plans = {
        0: {"done": False, "next_runs": [2, 4], "measure": [{"mpi": "b", "nodes": 2, "ppn": 2}]},
        1: {"done": True, "next_runs": [4, 6], "measure": []},
    }
    asked: list[int] = []

    def plan_of(number: int) -> dict[str, Any]:
        asked.append(number)
        return plans[number]

    first = campaign_launches(adaptive, 0, plan_of)
    assert len(first) == 2 * 2 * 2 and asked == []
    assert campaign_launches(adaptive, 1, plan_of) == [*first, ("b", 2, 2, 2), ("b", 2, 2, 3)]
    assert campaign_launches(adaptive, last_round(adaptive), plan_of)[len(first) :] == [
        ("b", 2, 2, 2),
        ("b", 2, 2, 3),
    ]
    assert asked == [0, 0, 1]


def test_through_the_last_round_runs_measured_before_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan re-decided after an analysis change may no longer name runs measured before."""
    monkeypatch.chdir(tmp_path)
    adaptive = campaign(ADAPTIVE)
    raw = tmp_path / "results" / "c" / "raw"
    for path in ("a/1x2/run02", "a/1x2/run03", "zz/1x2/run02", "a/3x2/run02", "a/1x2/run04"):
        (raw / path).parent.mkdir(parents=True, exist_ok=True)
        (raw / f"{path}.json").write_text("{}")
        if path != "a/1x2/run04":  # provenance without its csv: not measured
            (raw / f"{path}.csv").write_text("")
    assert measured_launches(adaptive) == [("a", 1, 2, 2), ("a", 1, 2, 3)]
    done = {"done": True, "next_runs": [2, 4], "measure": []}
    launches = campaign_launches(adaptive, last_round(adaptive), lambda number: done)
    assert launches[-2:] == [("a", 1, 2, 2), ("a", 1, 2, 3)]
    assert ("a", 1, 2, 2) not in campaign_launches(adaptive, 1, lambda number: done)


def test_a_run_s_input_takes_its_experiments_from_the_round_before() -> None:
    adaptive = campaign(ADAPTIVE)
    assert [plan_round_of_run(adaptive, run) for run in range(6)] == [None, None, 0, 0, 1, 1]
    assert plan_round_of_run(campaign(6), 5) is None
    assert round_plan(adaptive, 1) == "results/c/rounds/round01.json"


def test_block_records_one_per_deployment_and_run_only_when_blocking() -> None:
    launches = [("a", 1, 2, 0), ("b", 1, 2, 0), ("a", 1, 2, 1)]
    assert block_records(campaign(2, blocking="none"), launches) == []
    assert block_records(campaign(2), launches) == [
        "results/c/blocks/1x2/run00.json",
        "results/c/blocks/1x2/run01.json",
    ]
    assert block_records(campaign(2, mpi=("a",)), launches) == []  # one entry: nothing to block
