"""Table 3 layout and summary counts (slowdown.csv: tests/unit/analysis/test_slowdown.py)."""

import pandas as pd
import pytest

from mpiguide.analysis.catalogue import resolve
from mpiguide.analysis.tables import (
    FUTILE_COLUMNS,
    FUTILE_NOTE,
    TABLE3_NOTE,
    THREE_WAY_NOTE,
    UNTESTED_NOTE,
    summarise,
    table3_markdown,
    write_tables,
)

KEYS = ["op", "msg_size", "mpi", "nodes", "ppn"]


def row_of(guideline, op, size, ppn, group, violated, ratio=1.0, rhs_median=1.0, relation="le"):
    return dict(
        guideline=guideline, relation=relation, op=op, msg_size=str(size), mpi="openmpi",
        nodes="1", ppn=str(ppn), group=group, lhs_exp_id=size, rhs_exp_id=size + 1, n_lhs=10,
        median_lhs=ratio * rhs_median, median_rhs=rhs_median, violation_ratio=ratio,
        ratio_low=ratio * 0.95, ratio_high=ratio * 1.05, hl_ratio=ratio, hl_low=ratio * 0.9,
        hl_high=ratio * 1.1, violated=violated, verdict="violated" if violated else "holds",
        group_verdict="violated" if violated else "holds", detectable_ratio=1.1,
    )  # fmt: skip


GL4_OP = "neighbor_allgather|neighbor_alltoall"
TESTS = pd.DataFrame([
    # GL4 on 1x2: 3 of 4 tests violated, in both of its 2 groups
    row_of("GL4", GL4_OP, 8, 2, 0, True, 1.5),
    row_of("GL4", GL4_OP, 64, 2, 0, True, 2.5),
    row_of("GL4", GL4_OP, 8, 2, 1, True, 1.2),
    row_of("GL4", GL4_OP, 64, 2, 1, False),
    # GL4 on 1x4: nothing violated
    row_of("GL4", GL4_OP, 8, 4, 0, False),
    # GL11 only on 1x2
    row_of("GL11", "neighbor_alltoall", 8, 2, 0, True, 0.5, relation="approx"),
])  # fmt: skip


def test_summary_counts_tests_and_groups():
    summary = summarise(TESTS).set_index(["guideline", "ppn"])
    assert summary.loc[("GL4", "2"), ["violated", "tests", "violated_groups", "groups"]].tolist() \
        == [3, 4, 2, 2]  # fmt: skip
    assert summary.loc[("GL4", "2"), "worst_ratio"] == 2.5
    assert summary.loc[("GL4", "2"), "worst_hl_low"] == pytest.approx(2.25)
    assert summary.loc[("GL4", "2"), "worst_ratio_low"] == pytest.approx(2.375)
    assert summary.loc[("GL4", "2"), ["holds", "undecided", "holds_groups"]].tolist() == [1, 0, 0]
    assert summary.loc[("GL4", "4"), ["holds", "holds_groups"]].tolist() == [1, 1]
    assert summary.loc[("GL4", "4"), ["violated", "tests", "violated_groups"]].tolist() == [0, 1, 0]
    # approx: a lhs twice as fast is as far from the relation as twice as slow
    assert summary.loc[("GL11", "2"), "worst_ratio"] == 2.0


def test_table3_layout():
    """The three-way verdicts first, then Table 3's violated/tests counts."""
    markdown = table3_markdown(summarise(TESTS), ["GL4", "GL9", "GL11"])
    table = markdown[markdown.index("## openmpi") :].splitlines()
    assert table == [
        "## openmpi",
        "",
        THREE_WAY_NOTE,
        "",
        "| Guideline | 1x2 | 1x4 |",
        "|---|---|---|",
        "| GL4 | 1/3/0 (0/2/0) | 1/0/0 (1/0/0) |",
        "| GL9 | - | - |",
        "| GL11 | 0/1/0 (0/1/0) | - |",
        "",
        TABLE3_NOTE,
        "",
        "| Guideline | 1x2 | 1x4 |",
        "|---|---|---|",
        "| GL4 | 3/4 (2/2) | 0/1 (0/1) |",
        "| GL9 | - | - |",
        "| GL11 | 1/1 (1/1) | - |",
        "",
        f"{UNTESTED_NOTE}: GL9",  # reported, not silently dropped
    ]


def test_an_undecided_cell_is_not_shown_as_a_pass():
    """A deployment whose tests are all undecided: Table 3's `0/2 (0/1)` alone would read as a
    pass; the table a reader meets first says `0/0/2`."""
    undecided = {"verdict": "undecided", "group_verdict": "undecided", "violated": False}
    tests = pd.DataFrame([row_of("GL4", GL4_OP, size, 2, 0, False) | undecided
                          for size in (8, 64)])  # fmt: skip
    markdown = table3_markdown(summarise(tests), ["GL4"])
    first_row = next(line for line in markdown.splitlines() if line.startswith("| GL4 |"))
    assert first_row == "| GL4 | 0/0/2 (0/0/1) |"
    assert markdown.index(THREE_WAY_NOTE) < markdown.index(TABLE3_NOTE)
    assert "a test that is not violated holds or is undecided" in TABLE3_NOTE


def test_write_tables_writes_every_file(tmp_path):
    guidelines = resolve(["GL4"], {"GL4": {
        "source": "s", "text": "t", "relation": "le",
        "lhs": {"op": "neighbor_allgather"}, "rhs": {"op": "neighbor_alltoall"},
    }}, "c")  # fmt: skip
    tests = TESTS.loc[TESTS["guideline"] == "GL4"]
    write_tables(tests, guidelines, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slowdown.csv", "summary.csv",
                                                           "summary.md"]  # fmt: skip
    assert "| GL4 | 3/4 (2/2) | 0/1 (0/1) |" in (tmp_path / "summary.md").read_text()


def test_table3_escapes_a_compared_deployment():
    compared = row_of("GLN", "neighbor_alltoall", 8, 2, 0, False) | {"nodes": "1|2"}
    markdown = table3_markdown(summarise(pd.DataFrame([compared])), ["GLN"])
    assert "| Guideline | 1\\|2x2 |" in markdown
    assert "| GLN | 0/1 (0/1) |" in markdown


def test_an_adaptive_summary_says_how_many_undecided_tests_stopped_as_futile():
    undecided = {"verdict": "undecided", "group_verdict": "undecided", "violated": False}
    tests = TESTS.assign(look_runs=5, stop="decided")
    tests = pd.concat([tests, pd.DataFrame([
        row_of("GL4", GL4_OP, 512, 2, 2, False) | undecided | {"look_runs": 10, "stop": "futile"},
        row_of("GL4", GL4_OP, 1024, 2, 2, False) | undecided | {"look_runs": 20, "stop": "futile"},
        row_of("GL4", GL4_OP, 2048, 2, 2, False) | undecided | {"look_runs": 30,
                                                                 "stop": "max_runs"},
        row_of("GL4", GL4_OP, 512, 4, 1, False) | undecided | {"look_runs": 15, "stop": "futile"},
    ])], ignore_index=True)  # fmt: skip
    summary = summarise(tests).set_index(["guideline", "ppn"])
    columns = ["undecided", *FUTILE_COLUMNS]
    assert summary.loc[("GL4", "2"), columns].tolist() == [3, 2, 10, 20]
    assert summary.loc[("GL4", "4"), columns].tolist() == [1, 1, 15, 15]
    assert summary.loc[("GL11", "2"), "futile"] == 0
    assert pd.isna(summary.loc[("GL11", "2"), "futile_min_runs"])
    markdown = table3_markdown(summarise(tests), ["GL4", "GL11"])
    table = markdown[markdown.index(FUTILE_NOTE) :].splitlines()
    assert table[2:] == [
        "| Guideline | 1x2 | 1x4 |",
        "|---|---|---|",
        "| GL4 | 3 (2 futile at 10-20 runs) | 1 (1 futile at 15 runs) |",
        "| GL11 | 0 | - |",
    ]
    # A fixed campaign's tables have no futile columns.
    assert "futile" not in summarise(TESTS)
    assert FUTILE_NOTE not in table3_markdown(summarise(TESTS), ["GL4"])
