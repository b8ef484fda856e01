"""mpiguide tune, by mock-up: where a collective is significantly slower than its own mock-up in
every test at a number of ranks and message size, the tuning file of libmpiguide-tune replaces
it there (tests/tune/test_tune_file.py runs the library on a file written here)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.core.errors import DataError
from mpiguide.tune.mockup_rules import (
    NOT_REPLACEABLE,
    REPLACEMENTS,
    ROOT_IN_PLACE,
    Replacement,
    read_replacements,
    tuning_file,
)
from mpiguide.tune.outputs import tune
from mpiguide.tune.words import TIMES

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
        "low_level": "0.999",
        "high_level": "0.95",
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
    # one decision line per rule: the sizes it covers, its least speedup, the file
    assert (
        f"- openmpi allreduce, 2 ranks, 1 KiB to 64 KiB: replace by the mock-up {rsa} (1.4{TIMES} "
        "faster [1.26, 1.54], the least over its tests at 2 sizes) — openmpi.tune" in note
    )
    assert f"- openmpi allreduce, 4 ranks, 8 B: replace by the mock-up {rb} (1.2{TIMES}" in note
    missed = "a violated mock-up guideline in 1 test(s)"
    assert (
        f"- R (openmpi, reduce as reduce_as_allreduce), {missed}: "
        f"libmpiguide-tune does not run it: {ROOT_IN_PLACE}." in note
    )
    assert (
        f"- A (openmpi, alltoall as alltoall_as_alltoallv), {missed}: "
        "libmpiguide-tune does not implement" in note
    )
    assert f"- G (openmpi, allreduce as {rsa}), {missed}: not violated in every test" in note
    assert f"- G (openmpi, allreduce as {rb}), {missed}: another mock-up is faster there." in note
    # the rule's comment says what its bounds are and at which levels (tests.csv's)
    written = (tmp_path / "tuning" / "openmpi.tune").read_text()
    assert (
        "bytes=1024-65536  # speedup >= 1.4 [1.26, 1.54], bounds one-sided at 99.9 % and 95 %"
        in (written)
    )


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
    assert "- No collective is replaced by a mock-up: none is significantly slower" in note
    # a file without rules says so in its comments
    assert (
        "# No rules: libmpiguide-tune replaces nothing"
        in (tmp_path / "tuning" / "mpich.tune").read_text()
    )
    assert (
        f"- S ({swept}, scan as scan_as_exscan_reduce_local), a violated mock-up guideline in 1 "
        "test(s): the entry gets no" in note
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


def test_a_rule_read_back_with_its_levels_and_one_written_before_them() -> None:
    rule = Replacement("openmpi", "allreduce", "allreduce_as_reduce_bcast", 2, 8, 64, (8, 64),
                       1.4, 1.2, 1.5, 0.999, 0.95)  # fmt: skip
    older = (
        "allreduce_as_reduce_bcast ranks=4 bytes=8-8  # speedup >= 1.3 [1.1, 1.4], measured at 8 B"
    )
    written, other = read_replacements("openmpi", tuning_file("openmpi", [rule]) + older + "\n")
    assert other == []
    assert written[0] == rule
    # a file written before the levels were: its rule still read, its levels not known
    assert (written[1].speedup, written[1].ranks) == (1.3, 4)
    assert math.isnan(written[1].low_level) and math.isnan(written[1].high_level)
