"""mpiguide tune, by mock-up: where a collective is significantly slower than its own mock-up in
every test at a number of ranks and message size, the tuning file of libmpiguide-tune replaces
it there (tests/tune/test_tune_file.py runs the library on a file written here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.core.errors import DataError
from mpiguide.tune.mockup_rules import NOT_REPLACEABLE, REPLACEMENTS, ROOT_IN_PLACE
from mpiguide.tune.outputs import tune

ANALYSIS = {"p_thres": 0.001, "v_thres": 1.03, "confidence": 0.95}


def row(
    mockup: str, size: int, verdict: str, ratio: float, *, ppn: int = 2, dtype: str = "int",
    guideline: str = "G", mpi: str = "openmpi", op: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    collective = mockup.split("_as_")[0]
    return {
        "guideline": guideline,
        "relation": "le",
        "mpi": mpi,
        "nodes": "1",
        "ppn": str(ppn),
        "op": op or f"{collective}|{mockup}",
        "msg_size": str(size),
        "dtype": dtype,
        "group": "0",
        "median_lhs": str(1e-5 * ratio),
        "median_rhs": "1e-05",
        "violation_ratio": str(ratio),
        "ratio_low": str(ratio * 0.9),
        "ratio_high": str(ratio * 1.1),
        "verdict": verdict,
    }


def run_tune(tmp_path: Path, rows: list[dict[str, Any]], entries: list[str] | None = None):
    tests = tmp_path / "tests.csv"
    pd.DataFrame(rows).to_csv(tests, index=False)
    decided = tmp_path / "decided_with.json"
    decided.write_text(json.dumps({"analysis": ANALYSIS}))
    return tune(tests, decided, {}, tmp_path / "tuning", entries)


def rules(path: Path) -> list[str]:
    """The rules of a tuning file, comments stripped."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def test_each_replacement_replaces_its_own_collective() -> None:
    """The mock-ups `tune` may name (the built library's table: tests/tune/test_mockup_table.py)
    each replace the collective they are a mock-up of, and none is also left out."""
    assert all(name.startswith(f"{op}_as_") for name, op in REPLACEMENTS.items())
    assert not set(NOT_REPLACEABLE) & set(REPLACEMENTS)


def test_rules_where_every_test_is_violated_merged_over_consecutive_sizes(tmp_path: Path) -> None:
    rsa, rb = "allreduce_as_reduce_scatter_allgather", "allreduce_as_reduce_bcast"
    agb = "allgather_as_gather_bcast"
    rows = [
        # 8 B: reduce+bcast violated in every test
        row(rb, 8, "violated", 1.5), row(rb, 8, "violated", 1.3, dtype="double"),
        row(rsa, 8, "holds", 1.0),
        # 1 KiB and 64 KiB: reduce_scatter+allgather; at 64 KiB both are violated, rsa faster
        row(rsa, 1024, "violated", 1.4), row(rb, 1024, "undecided", 1.2),
        row(rsa, 65536, "violated", 2.0), row(rb, 65536, "violated", 1.5),
        # 1 MiB: violated for ints only, so no rule covers it
        row(rsa, 1 << 20, "violated", 2.5), row(rsa, 1 << 20, "holds", 1.0, dtype="double"),
        # 4 MiB: violated again, a rule of its own (1 MiB between them was not)
        row(rsa, 4 << 20, "violated", 1.8),
        # 4 ranks: a rule of its own
        row(rb, 8, "violated", 1.2, ppn=4),
        # a rooted mock-up the library leaves out, and a mock-up it does not have
        row("reduce_as_allreduce", 8, "violated", 1.3, guideline="R"),
        row("alltoall_as_alltoallv", 8, "violated", 1.1, guideline="A"),
        # the mock-up ≼ collective (Manwade & Kulkarni's row 4) and across entries: no rules
        row(agb, 8, "violated", 3.0, op=f"{agb}|allgather"),
        row(rb, 8, "violated", 3.0, mpi="openmpi|mpich", op=rb),
    ]  # fmt: skip
    tuned = run_tune(tmp_path, rows)
    assert rules(tmp_path / "tuning" / "openmpi.tune") == [
        f"{rb} ranks=2 bytes=8-8",
        f"{rsa} ranks=2 bytes=1024-65536",
        f"{rsa} ranks=2 bytes=4194304-4194304",
        f"{rb} ranks=4 bytes=8-8",
    ]
    assert [(r.speedup, r.sizes) for r in tuned.mockups][:2] == [(1.3, (8,)), (1.4, (1024, 65536))]
    assert sorted(p.name for p in (tmp_path / "tuning").iterdir()) == [
        "algorithms.csv", "openmpi.tune", "tuning.md",
    ]  # fmt: skip
    note = (tmp_path / "tuning" / "tuning.md").read_text()
    assert (
        f"| openmpi | allreduce | 2 | 1024-65536 | {rsa} | 1.4 [1.26, 1.54] | openmpi.tune |"
        in note
    )
    assert (
        "- R (openmpi, reduce as reduce_as_allreduce): 1 test(s): "
        f"libmpiguide-tune does not run it: {ROOT_IN_PLACE}." in note
    )
    assert (
        "- A (openmpi, alltoall as alltoall_as_alltoallv): 1 test(s): "
        "libmpiguide-tune does not implement" in note
    )
    assert f"- G (openmpi, allreduce as {rsa}): 1 test(s): not violated in every test" in note
    assert f"- G (openmpi, allreduce as {rb}): 1 test(s): another mock-up is faster there." in note


def test_every_entry_asked_for_gets_a_file_and_no_other(tmp_path: Path) -> None:
    swept = "openmpi.scan.linear"
    rows = [
        row("bcast_as_allgatherv", 8, "holds", 1.0),
        row("scan_as_exscan_reduce_local", 8, "violated", 2.0, mpi=swept, guideline="S"),
    ]
    tuned = run_tune(tmp_path, rows, entries=["openmpi", "mpich"])
    assert tuned.mockups == []
    assert rules(tmp_path / "tuning" / "mpich.tune") == []
    assert rules(tmp_path / "tuning" / "openmpi.tune") == []
    assert not (tmp_path / "tuning" / f"{swept}.tune").exists()
    note = (tmp_path / "tuning" / "tuning.md").read_text()
    assert "Nothing: no collective is significantly slower" in note
    assert (
        f"- S ({swept}, scan as scan_as_exscan_reduce_local): 1 test(s): the entry gets no" in note
    )
    assert "Violations of the other guidelines" not in note


def test_nothing_to_tune_from(tmp_path: Path) -> None:
    other = row("bcast_as_allgatherv", 8, "violated", 2.0, op="bcast|allgather")
    with pytest.raises(DataError, match="no guideline compares a collective with its own mock-up"):
        run_tune(tmp_path, [other])


def test_a_collective_under_a_forced_algorithm_is_not_replaced(tmp_path: Path) -> None:
    """A sweep checks the mock-up guidelines under every algorithm (tests.csv's `algorithm`:
    `ring|`); an application runs the library's choice, so only its tests (empty) decide a rule,
    and a violation under a forced algorithm is neither a rule nor an untuned violation."""
    mockup = "allreduce_as_reduce_bcast"
    chosen = {**row(mockup, 8, "holds", 1.0), "algorithm": ""}
    forced = {**row(mockup, 8, "violated", 2.0), "algorithm": "ring|"}
    tuned = run_tune(tmp_path, [chosen, forced])
    assert tuned.mockups == []
    note = (tmp_path / "tuning" / "tuning.md").read_text()
    assert "Violations of the other guidelines" not in note
    chosen["verdict"] = "violated"
    assert [r.mockup for r in run_tune(tmp_path, [chosen, forced]).mockups] == [mockup]
