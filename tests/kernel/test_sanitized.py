"""The kernel under the sanitizers: every op on every topology (the v-operations with every count
pattern) under --verify with ASan and UBSan (no out-of-bounds access, no undefined arithmetic in
the ops, their setups and --verify), and the context of an experiment at the size limits
validation allows (no int overflow)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import test_count_patterns
import test_derived_ops
import test_measure
from kernel_files import KERNEL_SOURCES, write_input

from mpi_support import MPI_LIBRARIES
from mpiguide.plan.grid import CHUNK, INPUT_COLUMNS

pytestmark = pytest.mark.kernel
# The mock-ups the kernel shares with libmpiguide-tune (its Makefile links them as an archive).
MOCKUP_SOURCES = KERNEL_SOURCES.parent / "mockups"
# How every C component fails (its Makefile compiles it with the kernel's own sources).
COMMON_SOURCES = KERNEL_SOURCES.parent / "common"

OPENMPI = MPI_LIBRARIES["openmpi"]


@pytest.fixture(scope="module")
def context_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not OPENMPI.available():
        pytest.skip(f"{OPENMPI.mpicc} not installed")
    sources = [p for p in sorted(KERNEL_SOURCES.rglob("*.c")) if p != KERNEL_SOURCES / "main.c"]
    sources += sorted(MOCKUP_SOURCES.glob("*.c"))
    sources.append(COMMON_SOURCES / "fail.c")
    binary = tmp_path_factory.mktemp("ubsan") / "context_driver"
    subprocess.run(
        [
            OPENMPI.mpicc,
            "-std=c11",
            "-D_POSIX_C_SOURCE=200809L",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsanitize=undefined",
            "-fno-sanitize-recover=undefined",
            f"-I{KERNEL_SOURCES}",
            f"-I{MOCKUP_SOURCES}",
            f"-I{COMMON_SOURCES}",
            "-o",
            binary,
            Path(__file__).with_name("context_driver.c"),
            *sources,
        ],
        check=True,
    )
    return binary


@pytest.mark.skipif(shutil.which("mpirun.openmpi") is None, reason="no mpirun.openmpi")
def test_equal_count_vectors_do_not_overflow(context_driver: Path) -> None:
    """bcast of 2^30 bytes on 3 ranks is valid (one buffer per rank); the v/w variants'
    displacement vector once had an entry per rank even for it: 2 x 2^30 elements overflowed."""
    result = subprocess.run(
        OPENMPI.command(3, [context_driver, "bcast", str(2**30)]),
        env=OPENMPI.environment(3),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "runtime error" not in result.stderr
    assert result.stdout.count("ok") == 3


SANITIZE = "-fsanitize=address,undefined"
# The MPI libraries' own allocations outlive MPI_Finalize: leak reports would be theirs.
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
# (library, ranks, --node-size): hier/lane/nodecart do real work on 2 nodes of 2.
SANITIZED_LAUNCHES = [("mpich", 2, 0), ("openmpi", 4, 2)]


@pytest.mark.parametrize(
    ("mpi", "nprocs", "node_size"),
    SANITIZED_LAUNCHES,
    ids=[f"{m}-{n}" for m, n, _ in SANITIZED_LAUNCHES],
)
def test_every_op_verifies_under_asan_and_ubsan(
    tmp_path: Path, mpi: str, nprocs: int, node_size: int
) -> None:
    library = MPI_LIBRARIES[mpi]
    if not library.available():
        pytest.skip(f"{library.mpicc} or {library.launcher} not installed")
    build = tmp_path / "build"
    subprocess.run(
        [
            "make",
            "-s",
            "-C",
            KERNEL_SOURCES,
            f"MPICC={library.mpicc}",
            f"BUILD={build}",
            f"CFLAGS=-O1 -g -fno-omit-frame-pointer {SANITIZE} -fno-sanitize-recover=undefined",
            f"LDFLAGS={SANITIZE}",
        ],
        check=True,
    )
    rows = test_measure.experiments(nprocs)
    rows += test_derived_ops.numbered(
        test_derived_ops.batch(nprocs, test_derived_ops.new_ops(), test_derived_ops.TOPOLOGIES)
        + test_derived_ops.remainders(nprocs),
        5000,
    )
    # clock synchronisation, round-time starts and offset buffers run under the sanitizers too
    rows += [
        {"exp_id": 9000 + i, "op": "allreduce", "msg_size": 8, "nrep": 3, "sync": sync,
         "buffer_offset": 100}
        for i, sync in enumerate(("hca3_roundtime", "jk_roundtime"))
    ]  # fmt: skip
    rows += test_derived_ops.numbered(test_count_patterns.rows(nprocs), 9100)
    # chunks of interleaved experiments (their check, warm-up and numbering), between others
    rows[1:1] = [{"exp_id": 9200, "op": "allgather", "msg_size": 24, "nrep": 5, "interleave": 3,
                  CHUNK: chunk} for chunk in (2, 0)]  # fmt: skip
    rows.append({"exp_id": 9200, "op": "allgather", "msg_size": 24, "nrep": 5, "interleave": 3,
                 CHUNK: 1})  # fmt: skip
    infile = write_input(tmp_path / "in.csv", rows, list(INPUT_COLUMNS))
    options = ["--node-size", str(node_size)] if node_size else []
    result = subprocess.run(
        library.command(
            nprocs, [build / "mpiguide-bench", "--verify", *options, infile, tmp_path / "out.csv"]
        ),
        env=library.environment(nprocs, SANITIZER_ENV),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "runtime error" not in result.stderr
    assert "AddressSanitizer" not in result.stderr
