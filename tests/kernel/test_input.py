"""Bad input: exit 2 before anything is measured, `INPUT.csv:LINE: message` from rank 0 only, no
output file. Tolerated input variants. Command-line mistakes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import read_provenance, read_times

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

HEADER = "exp_id,op,msg_size,dtype,nrep,topology,ndim,nfin,radius,ordering,constructor,reorder,root"
GOOD = "1,allgather,64,char,3,none,,,,,,,"
MOORE = "2,neighbor_alltoall,64,int,3,moore,2,0,1,FMAJ,graph_adj,0,"


def rows(*lines: str, header: str = HEADER) -> str:
    return "\n".join([header, *lines]) + "\n"


# (case id, file content, line, message)
BAD_INPUTS = [
    ("empty-file", "", 1, "empty file"),
    ("header-only", HEADER + "\n", 1, "no experiments"),
    (
        "unknown-column",
        rows("1,empty,3", header="exp_id,op,nrep,colour"),
        1,
        "unknown column 'colour'",
    ),
    ("missing-nrep", "exp_id,op\n1,empty\n", 1, "missing column 'nrep'"),
    (
        "column-twice",
        rows("1,empty,3,3", header="exp_id,op,nrep,nrep"),
        1,
        "column 'nrep' appears twice",
    ),
    (
        "unknown-op",
        rows(GOOD, "2,neighbour_alltoall,64,char,3,cart,1,0,,,,,"),
        3,
        "column 'op': unknown operation 'neighbour_alltoall' (mpiguide-bench --list-ops)",
    ),
    (
        "unknown-topology",
        rows("2,neighbor_alltoall,64,char,3,ring,,,,,,,"),
        2,
        "column 'topology': unknown value 'ring'",
    ),
    (
        "unknown-ordering",
        rows("2,neighbor_alltoall,64,char,3,moore,2,0,1,ZIGZAG,,,"),
        2,
        "column 'ordering': unknown value 'ZIGZAG'",
    ),
    (
        "unknown-constructor",
        rows("2,neighbor_alltoall,64,char,3,moore,2,0,1,,graphs,,"),
        2,
        "column 'constructor': unknown value 'graphs'",
    ),
    (
        "unknown-dtype",
        rows("2,allgather,64,long,3,none,,,,,,,"),
        2,
        "column 'dtype': unknown value 'long'",
    ),
    (
        "unknown-sync",
        rows("2,empty,3,clock", header="exp_id,op,nrep,sync"),
        2,
        "column 'sync': unknown value 'clock'",
    ),
    (
        "non-integer",
        rows(GOOD, MOORE, "3,allgather,64,char,ten,none,,,,,,,"),
        4,
        "column 'nrep': 'ten' is not an integer (allowed: 1 to 10000000)",
    ),
    (
        "negative",
        rows("2,allgather,-8,char,3,none,,,,,,,"),
        2,
        "column 'msg_size': -8 is negative (allowed: 0 to 2147483647)",
    ),
    (
        "overflow",
        rows("99999999999999999999,empty,,,3,none,,,,,,,"),
        2,
        "column 'exp_id': 99999999999999999999 is too large",
    ),
    (
        "not-a-multiple",
        rows("2,allgather,10,int,3,none,,,,,,,"),
        2,
        "column 'msg_size': 10 is not a multiple of the size of int (4)",
    ),
    (
        "nfin-above-ndim",
        rows("2,neighbor_alltoall,64,char,3,cart,2,3,,,,,"),
        2,
        "column 'nfin': 3 exceeds ndim (2)",
    ),
    (
        "ndim-zero",
        rows("2,neighbor_alltoall,64,char,3,cart,0,0,,,,,"),
        2,
        "column 'ndim': 0 is too small",
    ),
    (
        "radius-zero",
        rows("2,neighbor_alltoall,64,char,3,moore,2,0,0,,,,"),
        2,
        "column 'radius': 0 is too small",
    ),
    (
        "ordering-of-other-topology",
        rows("2,neighbor_alltoall,64,char,3,moore,2,0,1,LINEAR,,,"),
        2,
        "column 'ordering': LINEAR does not exist for topology moore",
    ),
    (
        "ordering-not-applicable",
        rows("2,neighbor_alltoall,64,char,3,cart,2,0,,FMAJ,,,"),
        2,
        "column 'ordering' does not apply to topology cart",
    ),
    (
        "constructor-misfit",
        rows("2,neighbor_alltoall,64,char,3,cart,2,0,,,graph,,"),
        2,
        "column 'constructor': graph does not fit topology cart",
    ),
    (
        "root-not-a-rank",
        rows(GOOD, "2,bcast,64,char,3,none,,,,,,,2"),
        3,
        "column 'root': 2 is not a rank (the run has 2 ranks)",
    ),
    ("nrep-zero", rows("2,empty,,,0,none,,,,,,,"), 2, "column 'nrep': 0 is too small"),
    (
        "duplicate-exp-id",
        rows(GOOD, MOORE, "1,empty,,,3,none,,,,,,,"),
        4,
        "duplicate exp_id 1 (first on line 2)",
    ),
    (
        "root-not-applicable",
        rows("2,allgather,64,char,3,none,,,,,,,0"),
        2,
        "column 'root' does not apply to op allgather",
    ),
    (
        "msg-size-not-applicable",
        rows("2,empty,64,,3,none,,,,,,,"),
        2,
        "column 'msg_size' does not apply to op empty",
    ),
    (
        "msg-size-missing",
        rows("2,allgather,,,3,none,,,,,,,"),
        2,
        "column 'msg_size' is required for op allgather",
    ),
    (
        "needs-topology",
        rows("2,neighbor_alltoall,64,char,3,none,,,,,,,"),
        2,
        "op neighbor_alltoall needs a topology",
    ),
    ("field-count", rows(GOOD, "2,allgather,64,char,3"), 3, "5 fields, but the header has 13"),
    ("blank-line-inside", rows(GOOD, "", MOORE), 3, "empty line"),
    (
        "max-time",
        rows("2,empty,3,soon", header="exp_id,op,nrep,max_time"),
        2,
        "column 'max_time': 'soon' is not a number of seconds",
    ),
    (
        "radius-too-large",
        rows("2,neighbor_alltoall,8,char,3,moore,3,0,100,,,,"),
        2,
        "column 'radius': radius 100 in 3 dimensions gives more than 1048576 offsets",
    ),
    (
        "buffer-too-large",
        rows("2,alltoall,2000000000,char,3,none,,,,,,,"),
        2,
        "column 'msg_size': 2000000000 bytes x 2 blocks exceeds 2147483647 bytes",
    ),
    (
        "reorder-two",
        rows("2,neighbor_alltoall,64,char,3,cart,1,0,,,,2,"),
        2,
        "column 'reorder': 2 is too large (at most 1)",
    ),
    # 2 ranks on one node: the leader gathers 2 x 2 blocks. Once valid (2 blocks), then an
    # MPI_Abort at setup (its int counts overflowed) that ended the whole run.
    (
        "hier-leader-buffer",
        rows("2,alltoall_as_hier,600000000,char,3,none,,,,,,,"),
        2,
        "column 'msg_size': 600000000 bytes x 4 blocks exceeds 2147483647 bytes (a node leader "
        "holds the blocks of its whole node)",
    ),
    # Everything after the NUL was once silently ignored: this row ran as nrep 3.
    (
        "nul-byte",
        rows(GOOD, "2,empty,,,3\0,none,,,,,,,"),
        3,
        "NUL byte in the line (not a text file?)",
    ),
    # Once unbounded: a row could ask for 2^63 - 1 iterations of spinning per repetition.
    (
        "work-too-large",
        rows(
            "2,ineighbor_alltoall,8,3,cart,1,100000000001",
            header="exp_id,op,msg_size,nrep,topology,ndim,work",
        ),
        2,
        "column 'work': 100000000001 is too large (at most 100000000000)",
    ),
    (
        "buffer-offset-too-large",
        rows("2,bcast,8,3,2000000", header="exp_id,op,msg_size,nrep,buffer_offset"),
        2,
        "column 'buffer_offset': 2000000 is too large (at most 1048576)",
    ),
    (
        "buffer-offset-negative",
        rows("2,bcast,8,3,-64", header="exp_id,op,msg_size,nrep,buffer_offset"),
        2,
        "column 'buffer_offset': -64 is negative",
    ),
    (
        "buffer-offset-no-buffer",
        rows("2,barrier,3,0", header="exp_id,op,nrep,buffer_offset"),
        2,
        "column 'buffer_offset' does not apply to op barrier",
    ),
]


@pytest.mark.parametrize(
    ("content", "line", "message"), [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_bad_input_exits_2_naming_the_line(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, content: str, line: int, message: str
) -> None:
    infile = tmp_path / "INPUT.csv"
    infile.write_text(content)
    outfile = tmp_path / "OUTPUT.csv"

    result = kernel_for("mpich").run(2, infile, outfile)

    assert result.returncode == 2, result.stderr
    expected = f"{infile}:{line}: {message}"
    assert expected in result.stderr
    assert result.stderr.count(f"{infile}:") == 1  # rank 0 only
    assert "MPI_Abort" not in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["INPUT.csv"]


def test_bad_input_exits_cleanly_on_openmpi(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    infile = tmp_path / "INPUT.csv"
    infile.write_text(rows(GOOD, "2,neighbor_alltoall,64,char,3,cart,2,3,,,,,"))
    result = kernel_for("openmpi").run(2, infile, tmp_path / "OUTPUT.csv")
    assert result.returncode == 2
    assert result.stderr.startswith(f"{infile}:3: column 'nfin': 3 exceeds ndim (2)\n")
    assert result.stderr.count(f"{infile}:") == 1
    assert not (tmp_path / "OUTPUT.csv").exists()


def test_tolerated_variants_and_defaults(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """CRLF line ends, trailing empty lines, columns in any order, optional columns missing:
    defaults radius 1, nfin 0, FMAJ, graph_adj, dtype char, sync dissemination apply. A path
    with a space and a quote reaches the provenance intact."""
    infile = tmp_path / 'IN "a b".csv'
    infile.write_bytes(
        b"nrep,topology,op,exp_id,ndim,msg_size\r\n"
        b"4,moore,neighbor_alltoall,5,2,64\r\n"
        b"2,none,empty,6,,\r\n"
        b"\r\n\r\n"
    )
    outfile = tmp_path / "OUTPUT.csv"

    result = kernel_for("openmpi").run(2, "--verify", infile, outfile)

    assert result.returncode == 0, result.stderr
    assert {k: len(v) for k, v in read_times(outfile).items()} == {5: 4, 6: 2}
    moore = next(e for e in read_provenance(outfile)["experiments"] if e["exp_id"] == 5)
    # Radius 1, all dimensions periodic: 8 neighbours (on dims 2x1, several are the same rank).
    assert moore["neighbours"]["on_node"] == {"min": 8, "max": 8, "mean": 8}
    assert moore["dims"] == [2, 1]
    assert read_provenance(outfile)["input"] == str(infile)


def test_provenance_is_json_whatever_the_path_bytes(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """A path is bytes: one that is not UTF-8 (Latin-1 'é' = 0xE9) once went raw into
    OUTPUT.json, which then no JSON reader accepted. UTF-8 ('ü') stays as it is."""
    infile = tmp_path / ("in-\udce9-\u00fc.csv")  # the byte 0xE9 (surrogate escape), then ü
    infile.write_text(rows(GOOD))
    outfile = tmp_path / "out.csv"
    result = kernel_for("mpich").run(2, infile, outfile)
    assert result.returncode == 0, result.stderr
    prov = json.loads(outfile.with_suffix(".json").read_bytes())
    assert prov["input"] == str(tmp_path / "in-\u00e9-\u00fc.csv")


def test_missing_input_file_exits_2(kernel_for: Callable[[str], Kernel], tmp_path: Path) -> None:
    result = kernel_for("mpich").run(2, tmp_path / "absent.csv", tmp_path / "out.csv")
    assert result.returncode == 2
    assert f"{tmp_path / 'absent.csv'}: cannot open: No such file or directory" in result.stderr


def test_unreadable_input_is_no_empty_file(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    """A directory opens but does not read: once reported as an empty file."""
    infile = tmp_path / "INPUT.csv"
    infile.mkdir()
    result = kernel_for("mpich").run(2, infile, tmp_path / "out.csv")
    assert result.returncode == 2
    assert f"{infile}:1: read error: Is a directory" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["INPUT.csv"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frobnicate"], "unknown option '--frobnicate'"),
        (["--nprocs"], "--nprocs needs a value"),
        (["--nprocs", "two"], "--nprocs: 'two' is not a positive integer"),
        (["--node-size", "0"], "--node-size: '0' is not a positive integer"),
        ([], "expected INPUT.csv and OUTPUT.csv, got 1 argument"),
    ],
    ids=[
        "unknown-option",
        "nprocs-without-value",
        "nprocs-not-a-number",
        "node-size-zero",
        "output-missing",
    ],
)
def test_command_line_mistakes_exit_2(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, args: list[str], message: str
) -> None:
    infile = tmp_path / "INPUT.csv"
    infile.write_text(rows(GOOD))
    result = kernel_for("mpich").run(2, infile, *args)
    assert result.returncode == 2
    assert result.stderr.count(message) == 1 and "usage:" in result.stderr


def test_wrong_nprocs_exits_1(kernel_for: Callable[[str], Kernel], tmp_path: Path) -> None:
    infile = tmp_path / "INPUT.csv"
    infile.write_text(rows(GOOD))
    result = kernel_for("openmpi").run(2, "--nprocs", "3", infile, tmp_path / "OUTPUT.csv")
    assert result.returncode == 1
    assert "--nprocs 3, but MPI_COMM_WORLD has 2 ranks" in result.stderr
    assert not (tmp_path / "OUTPUT.csv").exists()


@pytest.mark.parametrize(
    ("built_with", "launched_by"), [("mpich", "openmpi"), ("openmpi", "mpich")]
)
def test_other_librarys_launcher_is_caught_by_nprocs(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, built_with: str, launched_by: str
) -> None:
    """Started by the wrong launcher, each process is a one-rank job: --nprocs notices."""
    kernel = kernel_for(built_with)
    infile = tmp_path / "INPUT.csv"
    infile.write_text(rows(GOOD))
    result = kernel.run(
        2, "--nprocs", "2", infile, tmp_path / "OUTPUT.csv", launcher=kernel_for(launched_by).mpi
    )
    assert result.returncode == 1
    assert "--nprocs 2, but MPI_COMM_WORLD has 1 rank" in result.stderr
    assert not (tmp_path / "OUTPUT.csv").exists()
