"""check's decided_with.json, the campaign's one store of `analysis:` and the guideline
selection: what it holds, and when the workflow takes the verdicts beside it for stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpiguide.analysis.analysis_types import (
    AnalysisOptions,
    Decisions,
    decided_with_differs,
    without_decided_with,
)

ANALYSIS = {"varied": "msg_size", "v_thres": 1.2}
SELECTION = ["GL4", {"id": "MINE", "lhs": {"op": "bcast"}, "rhs": {"op": "allgather"}}]


@pytest.fixture
def record(tmp_path: Path) -> Path:
    path = tmp_path / "decided_with.json"
    options = AnalysisOptions.from_mapping(ANALYSIS, "test")
    options.write_record(path, ["GL4", "MINE"], {}, selection=SELECTION)
    return path


def test_the_record_holds_the_selection_as_given(record: Path) -> None:
    assert json.loads(record.read_text())["selection"] == SELECTION
    assert Decisions.read(record).selection == tuple(SELECTION)


def test_the_same_options_and_selection_do_not_differ(record: Path) -> None:
    assert not decided_with_differs(record, ANALYSIS, SELECTION)
    # Written out or left to its default, a value is the same option.
    with_default = {**ANALYSIS, "p_thres": AnalysisOptions.from_mapping({}, "t").p_thres}
    assert not decided_with_differs(record, with_default, SELECTION)


@pytest.mark.parametrize(
    ("analysis", "selection"),
    [
        pytest.param({**ANALYSIS, "v_thres": 1.5}, SELECTION, id="an option"),
        pytest.param(ANALYSIS, ["GL4"], id="the selection"),
        pytest.param(
            ANALYSIS,
            [SELECTION[0], {**SELECTION[1], "rhs": {"op": "alltoall"}}],
            id="an inline guideline",
        ),
    ],
)
def test_another_option_or_selection_differs(
    record: Path, analysis: dict[str, object], selection: list[object]
) -> None:
    assert decided_with_differs(record, analysis, selection)


def test_a_missing_record_is_not_compared(tmp_path: Path) -> None:
    assert not decided_with_differs(tmp_path / "decided_with.json", ANALYSIS, SELECTION)


@pytest.mark.parametrize("text", ["not json", '{"analysis": []}', '{"analysis": {"p_thres": 7}}'])
def test_a_record_the_reader_refuses_differs(tmp_path: Path, text: str) -> None:
    path = tmp_path / "decided_with.json"
    path.write_text(text)
    assert decided_with_differs(path, ANALYSIS, SELECTION)


def test_a_record_made_before_it_held_the_selection_differs(record: Path) -> None:
    older = json.loads(record.read_text())
    del older["selection"]
    record.write_text(json.dumps(older))
    assert decided_with_differs(record, ANALYSIS, SELECTION)


def test_jobs_that_read_the_record_are_handed_the_rest_of_the_config() -> None:
    config = {"campaign": "c", "analysis": ANALYSIS, "guidelines": SELECTION, "runs": 3}
    assert without_decided_with(config) == {"campaign": "c", "runs": 3}
