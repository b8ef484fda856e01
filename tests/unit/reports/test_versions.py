"""Versions compared (reports/versions.py): which entries of a campaign are versions of one
library, and per guideline which verdicts changed from one to the next, on synthetic tests.csv
frames."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mpiguide.campaign.installs import INSTALLS
from mpiguide.core.errors import DataError
from mpiguide.reports.diff import GUIDELINE_COLUMNS, diff_tests, guideline_changes
from mpiguide.reports.versions import (
    VersionPair,
    pairs_as_json,
    pairs_from_json,
    version_changes,
    version_pairs,
)

OPENMPI5 = INSTALLS["openmpi-5.0.11"].entry()
MPICH5 = INSTALLS["mpich-5.0.2"].entry()
INTELMPI = INSTALLS["intelmpi-2021.19"].entry()


def test_versions_are_entries_of_one_library_built_apart_in_the_order_listed() -> None:
    entries = {
        "openmpi": {"library": "openmpi", "mpicc": "mpicc.openmpi", "modules": []},
        # the same build with another heap: a setting of openmpi, not a version
        "openmpi-fixed": {"library": "openmpi", "mpicc": "mpicc.openmpi", "heap": "fixed"},
        "mpich": {"library": "mpich", "mpicc": "mpicc.mpich"},
        "openmpi-5.0.11": OPENMPI5,
        "mpich-5.0.2": MPICH5,
        "intelmpi-2021.19": INTELMPI,  # one version only: no pair
        "site": {"mpicc": "mpicc"},  # no library: never paired
    }
    assert version_pairs(entries) == [
        VersionPair("openmpi", "openmpi", "openmpi-5.0.11"),
        VersionPair("mpich", "mpich", "mpich-5.0.2"),
    ]


def test_three_versions_make_two_pairs_and_modules_tell_builds_apart() -> None:
    entries = {
        name: {"library": "openmpi", "mpicc": "mpicc", "modules": [f"openmpi/{name}"]}
        for name in ("v3", "v4", "v5")
    }
    assert version_pairs(entries) == [
        VersionPair("openmpi", "v3", "v4"),
        VersionPair("openmpi", "v4", "v5"),
    ]


def test_pairs_round_trip_through_json_and_refuse_other_shapes() -> None:
    pairs = [VersionPair("mpich", "mpich", "mpich-5.0.2")]
    assert pairs_from_json(pairs_as_json(pairs), "--versions-json") == pairs
    for bad in ({"library": "x"}, [{"library": "x", "older": "a"}], ["a"]):
        with pytest.raises(DataError, match="--versions-json: expected a list"):
            pairs_from_json(bad, "--versions-json")


def rows(mpi: str, verdicts: dict[tuple[str, int], tuple[str, float, float, float]]) -> list:
    """(guideline, msg_size) -> (verdict, ratio, low, high): rows of tests.csv for one entry."""
    return [
        dict(guideline=guideline, relation="le", mpi=mpi, nodes="1", ppn="2", op="a|b",
             msg_size=str(size), group="0", lhs_exp_id="0", rhs_exp_id="1",
             violation_ratio=str(ratio), ratio_low=str(low), ratio_high=str(high),
             p_adjusted="0.5", verdict=verdict, group_verdict=verdict)
        for (guideline, size), (verdict, ratio, low, high) in verdicts.items()
    ]  # fmt: skip


OLDER = {
    ("G1", 8): ("holds", 0.9, 0.85, 0.95),
    ("G1", 64): ("violated", 1.5, 1.4, 1.6),
    ("G1", 512): ("undecided", 1.0, 0.9, 1.1),
    ("G2", 8): ("holds", 0.5, 0.45, 0.55),
    ("G2", 64): ("holds", 0.6, 0.55, 0.65),
}
NEWER = {
    ("G1", 8): ("violated", 1.3, 1.2, 1.4),  # holds -> violated: a new violation
    ("G1", 64): ("holds", 0.95, 0.9, 1.0),  # violated -> holds: fixed
    ("G1", 512): ("holds", 0.8, 0.75, 0.85),  # undecided -> holds, and faster
    ("G2", 8): ("holds", 0.8, 0.7, 0.9),  # same verdict, slower beyond both intervals
    ("G2", 64): ("holds", 0.6, 0.55, 0.65),  # the same
}


def campaign_tests() -> pd.DataFrame:
    """Two versions of openmpi and an intelmpi entry, as one campaign's tests.csv."""
    intel = rows("intelmpi", OLDER)
    swept = rows("openmpi5", {("ALGO.openmpi5.bcast.ring", 8): ("holds", 1.0, 0.9, 1.02)})
    return pd.DataFrame([*rows("openmpi", OLDER), *rows("openmpi5", NEWER), *intel, *swept])


def test_per_guideline_which_verdicts_changed() -> None:
    tests = campaign_tests()
    changes = guideline_changes(diff_tests(tests, tests, "openmpi", "openmpi5"))
    assert list(changes.columns) == list(GUIDELINE_COLUMNS)
    by_guideline = changes.set_index("guideline")
    assert by_guideline.loc["G1"].to_dict() == {
        "tests": 3, "verdicts_changed": 3,
        "verdict_changes": "violated → holds 1, holds → violated 1, undecided → holds 1",
        "new_violation": 1, "fixed": 1, "slower": 0, "faster": 1,
    }  # fmt: skip
    assert by_guideline.loc["G2"].to_dict() == {
        "tests": 2, "verdicts_changed": 0, "verdict_changes": "",
        "new_violation": 0, "fixed": 0, "slower": 1, "faster": 0,
    }  # fmt: skip


def test_version_changes_per_pair_name_one_sided_guidelines_and_unmatched_pairs() -> None:
    tests = campaign_tests()
    pairs = [
        VersionPair("openmpi", "openmpi", "openmpi5"),
        VersionPair("mpich", "mpich", "mpich5"),
        VersionPair("intelmpi", "intelmpi", "openmpi"),
    ]
    source = Path("results/c/guidelines/tests.csv")
    # intelmpi lost a test (G2 at 64 B); openmpi5's sweep is left out
    lost = tests.index[(tests["mpi"] == "intelmpi") & (tests["msg_size"] == "64")][-1:]
    compared, missing, unmatched = version_changes(
        tests.drop(index=[*lost, tests.index[-1]]), pairs, source
    )
    assert compared.pair == pairs[0] and not compared.problem
    assert list(compared.guidelines["guideline"]) == ["G1", "G2"]
    assert compared.one_sided == ([], [])
    # entries without tests (not measured, or renamed): said, not raised
    assert missing.guidelines.empty
    assert missing.problem == f"{source}: no tests of mpich and mpich5"
    # tests that cannot be matched: diff's reason
    assert unmatched.problem.startswith(f"{source} and {source}: the grids cannot be matched")
    one_sided = version_changes(tests, pairs[:1], source)[0]
    assert one_sided.one_sided == ([], ["ALGO.openmpi5.bcast.ring"])
