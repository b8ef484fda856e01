"""Interleaved repetitions (docs/kernel.md, "Interleaved repetitions"): an experiment's rows, one
per chunk, measure its nrep repetitions between other experiments', numbered 0 … nrep - 1 in
the order measured, on Open MPI and MPICH (2 ranks); one chunk is the experiment as always."""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import COLUMNS, Row, read_provenance, write_input

from mpiguide.plan.grid import CHUNK, INPUT_COLUMNS

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

NREP = 10
# A clock-synchronised experiment gives the file its status and global_s columns.
EXPERIMENTS: list[Row] = [
    {"exp_id": 3, "op": "allreduce", "msg_size": 64, "nrep": NREP, "sync": "hca3_roundtime"},
    {"exp_id": 5, "op": "bcast", "msg_size": 1024, "nrep": NREP},
    {"exp_id": 8, "op": "alltoall", "msg_size": 96, "dtype": "int", "nrep": NREP},
]


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or ()), list(reader)


def chunks(experiments: list[Row], interleave: int, order: list[int]) -> list[Row]:
    """Every experiment's rows, chunk by chunk in `order`, one chunk of each per round."""
    return [e | {"interleave": interleave, CHUNK: c} for c in order for e in experiments]


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_three_chunks_give_every_repetition_once_with_its_status(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    """nrep 10 in chunks of 4, 3, 3, measured in the order 2, 0, 1: reps 0 … 9 once each,
    numbered in the order measured, under --verify."""
    infile = write_input(
        tmp_path / "in.csv", chunks(EXPERIMENTS, 3, [2, 0, 1]), list(INPUT_COLUMNS)
    )
    outfile = tmp_path / "out.csv"
    result = kernel_for(mpi).run(2, "--verify", infile, outfile, timeout=300)
    assert result.returncode == 0, result.stderr
    header, rows = read_rows(outfile)
    assert header == ["exp_id", "rep", "time_s", "status", "global_s"]
    reps: dict[int, list[int]] = defaultdict(list)
    for row in rows:
        reps[int(row["exp_id"])].append(int(row["rep"]))
        assert row["status"] in {"valid", "late"}
        assert (row["global_s"] != "") == (row["exp_id"] == "3")
        assert float(row["time_s"]) >= 0
    assert {e: sorted(r) for e, r in reps.items()} == {e["exp_id"]: list(range(NREP))
                                                       for e in EXPERIMENTS}  # fmt: skip
    # rows in the order measured: chunk 2 (3 reps) of every experiment first, numbered 0 … 2
    assert [int(row["rep"]) for row in rows[:3]] == [0, 1, 2]
    entries = read_provenance(outfile)["experiments"]
    assert [(e["exp_id"], e["chunk"]) for e in entries] == [
        (x["exp_id"], c) for c in (2, 0, 1) for x in EXPERIMENTS
    ]
    for entry in entries:
        size = {0: 4, 1: 3, 2: 3}[entry["chunk"]]
        assert entry["interleave"] == 3 and entry["nrep"] == NREP
        assert entry["reps_done"] == size
        assert entry["first_rep"] == {2: 0, 0: 3, 1: 7}[entry["chunk"]]
        assert entry["sync"]["invalid"] <= size
        assert set(entry["page_faults"]) == {"minor_max", "minor_sum", "major_max", "major_sum"}


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_one_chunk_is_the_experiment_as_before(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    """interleave 1, warmup 0, chunk 0 written out give what an input without the columns gives:
    the same rows (exp_id, rep) in the same order, the same provenance keys, no chunk or warmup
    keys."""
    outputs = []
    for name, columns, extra in (
        ("before", [c for c in COLUMNS if c not in ("interleave", "warmup")], {}),
        ("one", list(INPUT_COLUMNS), {"interleave": 1, "warmup": 0, CHUNK: 0}),
    ):
        infile = write_input(tmp_path / f"{name}.csv", [e | extra for e in EXPERIMENTS], columns)
        outfile = tmp_path / f"{name}-out.csv"
        result = kernel_for(mpi).run(2, infile, outfile, timeout=300)
        assert result.returncode == 0, result.stderr
        header, rows = read_rows(outfile)
        entries = read_provenance(outfile)["experiments"]
        # A repetition's status is timing (hca3_roundtime marks a rank that starts after the
        # round's start time `late`, as a loaded machine makes it): any, but not compared.
        assert {r["status"] for r in rows} <= {"valid", "late"}
        outputs.append((header, [(r["exp_id"], r["rep"]) for r in rows],
                        [list(e) for e in entries]))  # fmt: skip
    assert outputs[0] == outputs[1]
    assert "chunk" not in outputs[1][2][0] and "warmup" not in outputs[1][2][0]


def test_a_budget_is_shared_by_the_chunks(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """max_time 0.2 s in 2 chunks: each stops after its 0.1 s; the reps done still number
    0 … reps_done - 1."""
    budgeted = {"exp_id": 1, "op": "empty", "nrep": 10_000_000, "max_time": 0.2, "interleave": 2}
    rows = [budgeted | {CHUNK: 0}, {"exp_id": 2, "op": "barrier", "nrep": 4}, budgeted | {CHUNK: 1}]
    infile = write_input(tmp_path / "in.csv", rows, list(INPUT_COLUMNS))
    outfile = tmp_path / "out.csv"
    result = kernel_for("openmpi").run(2, infile, outfile)
    assert result.returncode == 0, result.stderr
    entries = read_provenance(outfile)["experiments"]
    done = [e["reps_done"] for e in entries if e["exp_id"] == 1]
    assert len(done) == 2 and all(0 < d < 5_000_000 for d in done)
    _, out_rows = read_rows(outfile)
    reps = sorted(int(r["rep"]) for r in out_rows if r["exp_id"] == "1")
    assert reps == list(range(sum(done)))
