"""Manwade & Kulkarni's Table 2 layout from tests.csv, without Snakemake."""

from pathlib import Path

import pandas as pd
import pytest

from mpiguide.core.errors import DataError
from mpiguide.reports.library_table import markdown, verdicts, write_library_table


def a_test(guideline, mpi, size, ppn, violated, relation="le", verdict="holds"):
    return dict(guideline=guideline, relation=relation, mpi=mpi, nodes=1, ppn=ppn,
                msg_size=size, group=0, violated=violated,
                verdict="violated" if violated else verdict)  # fmt: skip


TESTS = pd.DataFrame([
    # MK-T1-R03 violated by Open MPI at 1 MiB on one of two deployments: the cell is violated
    a_test("MK-T1-R03", "openmpi", 1048576, 2, True),
    a_test("MK-T1-R03", "openmpi", 1048576, 4, False),
    a_test("MK-T1-R03", "openmpi", 1024, 2, False),
    a_test("MK-T1-R03", "mpich", 1024, 2, False),
    # MK-T1-R13 (approx) violated everywhere it was tested; no MPICH 1 MiB test
    a_test("MK-T1-R13", "openmpi", 1024, 2, True, "approx"),
    a_test("MK-T1-R13", "openmpi", 1048576, 2, True, "approx"),
    a_test("MK-T1-R13", "mpich", 1024, 2, True, "approx"),
    # the cross-library entry pairs two libraries
    a_test("XLIB-OPENMPI-MPICH", "openmpi|mpich", 1024, 2, False),
])  # fmt: skip


def test_a_cell_is_violated_when_any_of_its_tests_is() -> None:
    table = verdicts(TESTS, "msg_size").set_index(["guideline", "mpi", "msg_size"])
    assert table.loc[("MK-T1-R03", "openmpi", 1048576), ["tests", "violated", "verdict"]].tolist() \
        == [2, 1, "violated"]  # fmt: skip
    assert table.loc[("MK-T1-R03", "openmpi", 1024), "verdict"] == "holds"
    assert table.loc[("MK-T1-R13", "mpich", 1024), "relation"] == "approx"
    assert len(table) == 7


def test_markdown_has_the_papers_layout(tmp_path: Path) -> None:
    tests_csv = tmp_path / "tests.csv"
    TESTS.to_csv(tests_csv, index=False)
    csv_path, md_path = write_library_table(tests_csv, "msg_size", tmp_path / "out")
    lines = md_path.read_text().splitlines()
    header = (
        "| guideline | relation | mpich 1024 | openmpi 1024 | openmpi 1048576 "
        "| openmpi\\|mpich 1024 |"
    )
    assert header in lines
    assert "| MK-T1-R03 | le | holds | holds | violated (1/2) | - |" in lines
    assert "| MK-T1-R13 | approx | violated (1/1) | violated (1/1) | violated (1/1) | - |" in lines
    assert "| XLIB-OPENMPI-MPICH | le | - | - | - | holds |" in lines
    written = pd.read_csv(csv_path)
    assert list(written.columns) == [
        "guideline", "relation", "mpi", "msg_size", "tests", "violated", "holds", "undecided",
        "verdict",
    ]  # fmt: skip
    assert sorted(p.name for p in csv_path.parent.iterdir()) == [
        "library_table.csv", "library_table.md"
    ]  # fmt: skip


def test_a_cell_holds_only_when_every_test_holds() -> None:
    tests = pd.DataFrame([
        a_test("GL4", "openmpi", 8, 2, False),
        a_test("GL4", "openmpi", 8, 4, False, verdict="undecided"),
        a_test("GL4", "openmpi", 64, 2, False),
        a_test("GL4", "openmpi", 64, 4, False),
    ])  # fmt: skip
    table = verdicts(tests, "msg_size").set_index("msg_size")
    assert table.loc[8, ["tests", "holds", "undecided", "verdict"]].tolist() == [
        2, 1, 1, "undecided",
    ]  # fmt: skip
    assert table.loc[64, "verdict"] == "holds"
    lines = markdown(table.reset_index(), "msg_size").splitlines()
    assert "| GL4 | le | undecided (1/2) | holds |" in lines


def test_missing_columns_name_the_file(tmp_path: Path) -> None:
    tests_csv = tmp_path / "tests.csv"
    TESTS.drop(columns="msg_size").to_csv(tests_csv, index=False)
    with pytest.raises(DataError, match=r"tests\.csv: tests\.csv lacks the columns msg_size"):
        write_library_table(tests_csv, "msg_size", tmp_path / "out")


def test_empty_tests_give_an_empty_table(tmp_path: Path) -> None:
    tests_csv = tmp_path / "tests.csv"
    TESTS.iloc[:0].to_csv(tests_csv, index=False)
    csv_path, md_path = write_library_table(tests_csv, "msg_size", tmp_path)
    assert pd.read_csv(csv_path).empty
    assert md_path.read_text().splitlines()[-1] == "|---|---|"
