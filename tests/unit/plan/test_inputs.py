"""Shuffled run inputs: reproducible, independent per (mpi, deployment, run), complete."""

import csv
import hashlib
import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mpiguide.core.errors import DataError
from mpiguide.plan.grid import COLUMNS, INPUT_COLUMNS, build_grid, write_grid
from mpiguide.plan.inputs import PLAIN_COLUMNS, run_seed, write_run_input

SPEC = {
    "nrep": 3,
    "experiments": [
        {"op": ["allgather", "alltoall", "bcast"], "msg_size": [8, 64, 512, 4096], "root": [0, 1]}
    ],
}


@pytest.fixture
def grid_csv(tmp_path: Path) -> Path:
    path = tmp_path / "grid.csv"
    write_grid(build_grid(SPEC), path)
    return path


def make_input(grid_csv: Path, out: Path, mpi: str = "openmpi", nodes: int = 1, ppn: int = 2,
               run: int = 0) -> bytes:  # fmt: skip
    write_run_input(grid_csv, 1, mpi, nodes, ppn, run, out)
    return out.read_bytes()


def test_seed_is_a_stable_digest_not_pythons_hash() -> None:
    digest = hashlib.sha256(b'[1, "openmpi", 1, 2, 0]').digest()
    assert run_seed(1, "openmpi", 1, 2, 0) == int.from_bytes(digest[:16], "little")
    assert run_seed(1, "openmpi", 1, 2, 0) == 117326638355173977750705122786502463535


def test_same_grid_twice_gives_identical_grid_and_inputs(tmp_path: Path, grid_csv: Path) -> None:
    again = tmp_path / "again.csv"
    write_grid(build_grid(SPEC), again)
    assert again.read_bytes() == grid_csv.read_bytes()
    assert make_input(grid_csv, tmp_path / "a.csv") == make_input(again, tmp_path / "b.csv")


def test_each_run_holds_every_experiment_once_in_its_own_order(
    tmp_path: Path, grid_csv: Path
) -> None:
    with grid_csv.open() as f:
        # interleave, warmup and algorithm, the last columns, are 1, 0 and empty everywhere: the
        # inputs leave them to the kernel
        grid_rows = sorted(line.removesuffix(",1,0,") for line in f.read().splitlines()[1:])
    orders = []
    for run in range(3):
        lines = make_input(grid_csv, tmp_path / f"run{run}.csv", run=run).decode().splitlines()
        assert lines[0] == ",".join(PLAIN_COLUMNS)
        assert sorted(lines[1:]) == grid_rows
        orders.append(lines[1:])
    assert len({tuple(order) for order in orders}) == 3


def test_adding_runs_or_deployments_keeps_existing_inputs(tmp_path: Path, grid_csv: Path) -> None:
    # a campaign of 2 runs on 1x2 ...
    before = {run: make_input(grid_csv, tmp_path / f"x{run}.csv", run=run) for run in range(2)}
    # ... grows to 4 runs and a second deployment: the first inputs are byte for byte the same
    after = {run: make_input(grid_csv, tmp_path / f"y{run}.csv", run=run) for run in range(4)}
    make_input(grid_csv, tmp_path / "z.csv", nodes=1, ppn=4)
    assert {run: after[run] for run in before} == before
    assert make_input(grid_csv, tmp_path / "other.csv", mpi="mpich") != before[0]


def test_columns_come_out_in_kernel_order_whatever_the_grid_order(
    tmp_path: Path, grid_csv: Path
) -> None:
    with grid_csv.open(newline="") as f:
        rows = list(csv.DictReader(f))
    shuffled = tmp_path / "shuffled.csv"
    with shuffled.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(reversed(COLUMNS)))
        writer.writeheader()
        writer.writerows(rows)
    assert make_input(shuffled, tmp_path / "a.csv") == make_input(grid_csv, tmp_path / "b.csv")


def test_root_beyond_the_deployment_is_refused(tmp_path: Path, grid_csv: Path) -> None:
    grid_1rank_roots = tmp_path / "g.csv"
    text = grid_csv.read_text().replace(",1,dissemination", ",5,dissemination")
    grid_1rank_roots.write_text(text)
    with pytest.raises(DataError, match=r"g\.csv:\d+: root 5 is not a rank of 1x2"):
        make_input(grid_1rank_roots, tmp_path / "out.csv")
    assert not list(tmp_path.glob("out.csv*"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("exp_id,op\n0,bcast\n", r"bad\.csv:1: missing columns msg_size, dtype"),
        (",".join(COLUMNS) + "\n", r"bad\.csv: holds no experiment"),
        ("exp_id,op\n0,b\xe4st\n".encode("latin-1"), r"bad\.csv: not a grid\.csv: not UTF-8"),
    ],
)
def test_bad_grid_files(tmp_path: Path, content: str | bytes, message: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(DataError, match=message):
        make_input(bad, tmp_path / "out.csv")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # a row that lost or gained a cell would reach the kernel shifted by one column
        (lambda line: line.rsplit(",", 1)[0],
         rf"g\.csv:{{line}}: {len(COLUMNS) - 1} cells, the header has {len(COLUMNS)}"),
        (lambda line: line + ",x",
         rf"g\.csv:{{line}}: {len(COLUMNS) + 1} cells, the header has {len(COLUMNS)}"),
        (lambda line: line.replace(",1,dissemination", ",one,dissemination"),
         r"g\.csv:{line}: root one is not a rank of 1x2 \(0 to 1\)"),
    ],
)  # fmt: skip
def test_a_damaged_grid_row_is_named_by_its_line(
    tmp_path: Path, grid_csv: Path, edit: Callable[[str], str], message: str
) -> None:
    lines = grid_csv.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if ",1,dissemination" in line)  # root 1
    lines[index] = edit(lines[index])
    damaged = tmp_path / "g.csv"
    damaged.write_text("\n".join(lines) + "\n\n")  # a blank last line is fine
    with pytest.raises(DataError, match=message.replace("{line}", str(index + 1))):
        make_input(damaged, tmp_path / "out.csv")
    assert not list(tmp_path.glob("out.csv*"))


def test_missing_grid(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"nope\.csv: cannot read"):
        make_input(tmp_path / "nope.csv", tmp_path / "out.csv")


def test_without_interleaved_or_warmed_up_experiments_an_input_is_what_it_was(
    tmp_path: Path, grid_csv: Path
) -> None:
    """Byte for byte the input of before `interleave`, `warmup` and `algorithm` existed: the
    grid's rows in the order of the run's permutation, in the columns of then."""
    with grid_csv.open(newline="") as f:
        rows = list(csv.DictReader(f))
    order = np.random.default_rng(run_seed(1, "openmpi", 1, 2, 0)).permutation(len(rows))
    before = [c for c in COLUMNS if c not in ("interleave", "warmup", "algorithm")]
    lines = [",".join(before), *(",".join(rows[i][c] for c in before) for i in order)]
    assert make_input(grid_csv, tmp_path / "in.csv") == ("\n".join(lines) + "\n").encode()


def input_of(tmp_path: Path, run: int = 0, **keys: list[int] | int) -> tuple[list[str], list[dict]]:
    """The header and rows of a run's input, the experiment block of SPEC given `keys`."""
    grid_csv = tmp_path / "grid.csv"
    spec = {**SPEC, "experiments": [{**SPEC["experiments"][0], **keys}]}
    write_grid(build_grid(spec), grid_csv)
    text = make_input(grid_csv, tmp_path / f"in{run}.csv", run=run).decode()
    return text.splitlines()[0].split(","), list(csv.DictReader(text.splitlines()))


def interleaved_input(tmp_path: Path, interleave: list[int] | int, run: int = 0) -> list[dict]:
    header, rows = input_of(tmp_path, run, interleave=interleave)
    assert header == [c for c in INPUT_COLUMNS if c not in ("warmup", "algorithm")]
    return rows


def test_an_interleaved_experiment_is_one_row_per_chunk_spread_over_the_launch(
    tmp_path: Path,
) -> None:
    """3 chunks each: the launch is 3 rounds, each one chunk of every experiment in its own
    shuffled order, so no experiment's chunks are adjacent here."""
    rows = interleaved_input(tmp_path, 3)
    experiments = {row["exp_id"] for row in rows}
    n = len(experiments)
    assert len(rows) == 3 * n and n == 16
    rounds = [rows[i * n : (i + 1) * n] for i in range(3)]
    for chunk, round_rows in enumerate(rounds):
        assert {row["chunk"] for row in round_rows} == {str(chunk)}
        assert {row["exp_id"] for row in round_rows} == experiments
    assert [row["exp_id"] for row in rounds[0]] != [row["exp_id"] for row in rounds[1]]
    assert all(a["exp_id"] != b["exp_id"] for a, b in itertools.pairwise(rows))


def test_interleaved_and_plain_experiments_share_a_launch(tmp_path: Path) -> None:
    rows = interleaved_input(tmp_path, [1, 3])
    chunks: dict[str, list[str]] = {}
    for row in rows:
        chunks.setdefault(row["exp_id"], []).append(row["chunk"])
    parts = {exp_id: len(found) for exp_id, found in chunks.items()}
    assert sorted(set(parts.values())) == [1, 3] and len(parts) == 2 * 16
    assert all(sorted(found) == [str(c) for c in range(len(found))] for found in chunks.values())


def test_a_later_round_holds_its_planned_experiments_in_the_runs_own_order(
    tmp_path: Path, grid_csv: Path
) -> None:
    make_input(grid_csv, tmp_path / "all.csv", run=5)
    with (tmp_path / "all.csv").open(newline="") as stream:
        order = [int(row["exp_id"]) for row in csv.DictReader(stream)]
    planned = [1, 4, 7, 12]
    write_run_input(grid_csv, 1, "openmpi", 1, 2, 5, tmp_path / "some.csv", planned)
    with (tmp_path / "some.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [int(row["exp_id"]) for row in rows] == [e for e in order if e in planned]
    assert tuple(rows[0]) == PLAIN_COLUMNS
    with pytest.raises(DataError, match="no experiment 99"):
        write_run_input(grid_csv, 1, "openmpi", 1, 2, 5, tmp_path / "bad.csv", [1, 99])


def test_warmup_is_a_column_only_when_some_experiment_has_warm_up_repetitions(
    tmp_path: Path,
) -> None:
    """warmup 0 (the default) everywhere leaves the column to the kernel's default; one
    experiment with warm-up repetitions gives every row its cell, and no chunk columns."""
    header, _ = input_of(tmp_path, warmup=0)
    assert tuple(header) == PLAIN_COLUMNS
    header, rows = input_of(tmp_path, warmup=[0, 50])
    assert header == [*PLAIN_COLUMNS, "warmup"]
    assert sorted({row["warmup"] for row in rows}) == ["0", "50"] and len(rows) == 2 * 16


def test_algorithm_is_a_column_only_when_some_experiment_names_one(tmp_path: Path) -> None:
    """The library's own choice (empty) everywhere leaves the column out; one experiment with an
    algorithm gives every row its cell, empty where the library chooses."""
    header, _ = input_of(tmp_path, algorithm="")
    assert tuple(header) == PLAIN_COLUMNS
    header, rows = input_of(tmp_path, op="bcast", algorithm=["", "binomial"])
    assert header == [*PLAIN_COLUMNS, "algorithm"]
    assert sorted(row["algorithm"] for row in rows) == [""] * 8 + ["binomial"] * 8


def test_an_entry_whose_library_overrides_a_forced_algorithm_runs_none(tmp_path: Path) -> None:
    """With `library_choice_only` (verify's Open MPI `<entry>.applied`, whose rules file wins over a
    forced algorithm) the input holds the library's own call and the untuned rows alone, in the
    order the run's permutation of the whole grid gives them, with the columns of every run."""
    grid_csv = tmp_path / "grid.csv"
    block = {**SPEC["experiments"][0], "op": "bcast", "algorithm": ["", "binomial", "untuned"]}
    write_grid(build_grid({**SPEC, "experiments": [block]}), grid_csv)
    make_input(grid_csv, tmp_path / "all.csv", run=3)
    write_run_input(grid_csv, 1, "openmpi", 1, 2, 3, tmp_path / "own.csv", library_choice_only=True)
    with (
        (tmp_path / "all.csv").open(newline="") as every,
        (tmp_path / "own.csv").open(newline="") as own,
    ):
        all_rows, own_rows = list(csv.DictReader(every)), list(csv.DictReader(own))
    assert own_rows == [row for row in all_rows if row["algorithm"] != "binomial"]
    assert sorted({row["algorithm"] for row in own_rows}) == ["", "untuned"]
    assert len(own_rows) == 2 * 8 and tuple(own_rows[0])[-1] == "algorithm"
