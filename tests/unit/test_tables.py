"""Table 3 layout, summary counts, severities and the MPINPC-style slowdown table."""

import pandas as pd
import pytest

from mpiguide.guidelines import resolve
from mpiguide.tables import (
    UNTESTED_NOTE,
    severity,
    slowdowns,
    summarise,
    table3_markdown,
    write_tables,
)

KEYS = ["op", "msg_size", "mpi", "nodes", "ppn"]


def row_of(guideline, op, size, ppn, group, violated, ratio=1.0, rhs_median=1.0, relation="le"):
    return dict(
        guideline=guideline, relation=relation, op=op, msg_size=str(size), mpi="openmpi",
        nodes="1", ppn=str(ppn), group=group, lhs_exp_id=size, rhs_exp_id=size + 1,
        median_lhs=ratio * rhs_median, median_rhs=rhs_median, violation_ratio=ratio,
        hl_ratio=ratio, hl_low=ratio * 0.9, hl_high=ratio * 1.1, violated=violated,
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
    assert summary.loc[("GL4", "4"), ["violated", "tests", "violated_groups"]].tolist() == [0, 1, 0]
    # approx: a lhs twice as fast is as far from the relation as twice as slow
    assert summary.loc[("GL11", "2"), "worst_ratio"] == 2.0


def test_table3_layout():
    markdown = table3_markdown(summarise(TESTS), ["GL4", "GL9", "GL11"])
    assert "## openmpi" in markdown
    table = markdown[markdown.index("| Guideline") :].splitlines()
    assert table == [
        "| Guideline | 1x2 | 1x4 |",
        "|---|---|---|",
        "| GL4 | 3/4 (2/2) | 0/1 (0/1) |",
        "| GL9 | - | - |",
        "| GL11 | 1/1 (1/1) | - |",
        "",
        f"{UNTESTED_NOTE}: GL9",  # reported, not silently dropped
    ]


def test_severity_bins():
    ratios = pd.Series([0.9, 1.09, 1.1, 1.49, 1.5, 1.99, 2.0, 4.99, 5.0, 12.0])
    assert severity(ratios).tolist() == [
        "low", "low", "medium", "medium", "medium-high", "medium-high",
        "high", "high", "very high", "very high",
    ]  # fmt: skip


def test_slowdown_takes_the_fastest_alternative():
    tests = pd.DataFrame([
        row_of("GL4", GL4_OP, 8, 2, 0, True, 3.0, rhs_median=1.0),
        row_of("BLOCKING-NEIGHBOR-ALLGATHER", "neighbor_allgather|ineighbor_allgather", 8, 2, 0,
             True, 6.0, rhs_median=0.5),
        row_of("GL11", "neighbor_allgather", 8, 2, 0, True, 10.0, relation="approx"),
    ])  # fmt: skip
    table = slowdowns(tests, KEYS)
    assert len(table) == 1  # one lhs experiment; approx guidelines offer no alternative
    row = table.iloc[0]
    assert row["op"] == "neighbor_allgather"
    assert row["alternative"] == "BLOCKING-NEIGHBOR-ALLGATHER: op=ineighbor_allgather"
    assert row["slowdown"] == pytest.approx(6.0)
    assert row["severity"] == "very high"
    assert row["violated"]


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


def test_slowdown_shows_the_lhs_experiments_own_parameters():
    allgather = row_of("GL7", "allgather|neighbor_allgather", 8, 2, 0, True, 1.4)
    allgather |= {"topology": "none|full", "ordering": "|LINEAR"}
    table = slowdowns(pd.DataFrame([allgather]), [*KEYS, "topology", "ordering"])
    row = table.iloc[0]
    assert (row["op"], row["topology"], row["ordering"]) == ("allgather", "none", "")
    assert row["alternative"] == "GL7: op=neighbor_allgather topology=full ordering=LINEAR"


def test_table3_escapes_a_compared_deployment():
    compared = row_of("GLN", "neighbor_alltoall", 8, 2, 0, False) | {"nodes": "1|2"}
    markdown = table3_markdown(summarise(pd.DataFrame([compared])), ["GLN"])
    assert "| Guideline | 1\\|2x2 |" in markdown
    assert "| GLN | 0/1 (0/1) |" in markdown
