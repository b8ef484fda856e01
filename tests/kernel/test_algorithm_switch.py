"""A collective's algorithm chosen per experiment (docs/kernel.md, "Algorithms per experiment"),
proven with real ranks and without timing: what each call of the op did inside the library is
recorded by a PMPI library preloaded into the kernel (algorithm_fingerprint.c, built here with
the matching mpicc), by nothing a transport decides:

- every library, reductions: a user-defined sum in place of MPI_SUM that counts its invocations
  and elements per rank and hashes the code path inside the MPI library that invoked it (the
  return addresses on the stack): the algorithms differ in where they reduce;
- Open MPI: the coll/base algorithm function coll/tuned entered (ompi_coll_base_bcast_intra_*,
  ompi_coll_base_allgather_intra_*: one per algorithm, exported by 4.1 and 5.0);
- MPICH: the values of MPIR_CVAR_<COLL>_INTRA_ALGORITHM and MPIR_CVAR_DEVICE_COLLECTIVES when
  each call starts, and, where the transport is UCX (Debian's MPICH is ch4:ucx alone), the
  messages each rank sent through UCX's exported ucp_tag_send_nbx during the call, their bytes
  and how many a nonblocking schedule sent: a broadcast leaves no other trace outside MPICH, so
  MPICH's broadcasts are swept only there. Two algorithms (reduce_scatter_allgather,
  reduce_scatter_gather) refuse a user-defined operation: they run on MPI_DOUBLE with MPI_SUM,
  told apart by their messages where UCX carries them, elsewhere only by the value read back.
  `smp` is left out: its nested calls on node communicators re-read the global choice and fail
  under MPIR_CVAR_COLLECTIVE_FALLBACK=error, which the kernel sets (docs/kernel.md).

The proof: an experiment forced by the kernel, among others in one launch in shuffled order,
leaves exactly the fingerprint the same experiment leaves in a launch where the library itself
was told the algorithm for the whole launch (its own environment variable, by name); and an
experiment with the library's choice, between forced ones, leaves the fingerprint of a launch in
which nothing is forced."""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kernel_files import operations, write_input

from fingerprint_support import (
    FINGERPRINT_SOURCE,
    Fingerprint,
    functions_entered,
    read_fingerprints,
)
from mpi_support import MPI_LIBRARIES
from preload_support import build_test_library

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

RANKS = {"openmpi": 4, "mpich": 2}  # by MpiLibrary.library
# Algorithms these runs cannot force: Open MPI's two_proc needs 2 ranks (it refuses 4 with
# MPI_ERR_UNSUPPORTED_OPERATION); MPICH's smp fails under FALLBACK=error (module docstring).
UNUSABLE_HERE = {"openmpi": {"two_proc"}, "mpich": {"smp"}}  # by MpiLibrary.library
# Algorithms whose fingerprints coincide at these runs' ranks, a pair each: at 2 ranks MPICH's
# two scatter-allgather broadcasts both send half the buffer each way after the scatter.
ALIKE_HERE = {
    ("mpich", "bcast"): [("scatter_recursive_doubling_allgather", "scatter_ring_allgather")]
}
# MPICH's algorithms restricted to built-in operations (src/mpi/coll/coll_algorithms.txt).
MPICH_BUILTIN_OP_ONLY = {"reduce_scatter_allgather", "reduce_scatter_gather"}
# Open MPI 5's launches are slow (PRRTE): two collectives there, one seen by its counting sum,
# one by the function entered.
SWEPT = [
    *(("openmpi", collective) for collective in ("allreduce", "reduce", "bcast", "allgather")),
    ("openmpi-5.0.11", "allreduce"),
    ("openmpi-5.0.11", "bcast"),
    *((mpi, collective) for mpi in ("mpich", "mpich-5.0.2")
      for collective in ("allreduce", "reduce")),
    ("mpich", "bcast"),  # seen through UCX only (module docstring)
]  # fmt: skip
# Every fingerprinted launch: MPICH's shared-memory (ch4 posix) collectives take over a node's
# calls once it has made more than this many, so the library's own choice would depend on how
# many calls came before (in MPICH 5; Debian's ch4:ucx has none): from the first call instead.
LAUNCH_ENV = {"mpich": {"MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD": "0"}, "openmpi": {}}
BASE_COUNT = 4096  # elements of the first experiment; each next one 16 more
NREP = 3


@pytest.fixture(scope="module")
def fingerprint_library(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    built: dict[str, Path] = {}

    def build(mpi: str) -> Path:
        if mpi not in built:
            library = tmp_path_factory.mktemp(f"fingerprint-{mpi}") / "fingerprint.so"
            built[mpi] = build_test_library(MPI_LIBRARIES[mpi], FINGERPRINT_SOURCE, library)
        return built[mpi]

    return build


def list_algorithms(kernel: Kernel) -> dict[str, dict[str, int]]:
    """--list-algorithms, started as a singleton: algorithm values by collective."""
    listed = subprocess.run(
        [kernel.binary, "--list-algorithms"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=kernel.mpi.environment(1),
    ).stdout
    rows = list(csv.DictReader(io.StringIO(listed), delimiter="\t"))
    table: dict[str, dict[str, int]] = defaultdict(dict)
    for row in rows:
        table[row["collective"]][row["algorithm"]] = int(row["value"])
    return dict(table)


def run_fingerprinted(
    kernel: Kernel,
    library: Path,
    rows: list[dict[str, object]],
    workdir: Path,
    env: dict[str, str] | None = None,
) -> dict[tuple[str, int], Fingerprint]:
    """Runs the kernel on rows under the fingerprint library: per (collective, count), what
    every rank's calls did, each rank's calls of one experiment alike."""
    workdir.mkdir()
    infile = write_input(workdir / "in.csv", rows)
    nprocs = RANKS[kernel.mpi.library]
    result = kernel.run(
        nprocs,
        infile,
        workdir / "out.csv",
        env={
            "LD_PRELOAD": str(library),
            "FINGERPRINT_DIR": str(workdir),
            **LAUNCH_ENV[kernel.mpi.library],
            **(env or {}),
        },
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return read_fingerprints(workdir, nprocs)


def experiment(exp_id: int, collective: str, count: int, dtype: str, algorithm: str = "") -> dict:
    size = {"float": 4, "double": 8}[dtype]
    return {"exp_id": exp_id, "op": collective, "msg_size": count * size, "dtype": dtype,
            "nrep": NREP, "algorithm": algorithm}  # fmt: skip


def _per_element(total: str, count: int) -> str:
    return "-" if total == "-1" else f"{int(total) / count:g}"


def shape(fingerprint: Fingerprint, count: int) -> tuple[tuple[str, ...], ...]:
    """A fingerprint whatever the count: per rank the invocations, the elements they combined
    per element of the call, the function entered, the messages sent, their bytes per element
    of the call, those a schedule sent, and the reductions' code path."""
    return tuple(
        (invocations, _per_element(elements, count), function, sends,
         _per_element(sent_bytes, count), scheduled, path)
        for invocations, elements, _, function, _, sends, sent_bytes, scheduled, path
        in fingerprint
    )  # fmt: skip


def forcing_environment(library: str, collective: str, algorithm: str) -> dict[str, str]:
    """The library's own way to force an algorithm for a whole launch, by name."""
    if library == "openmpi":
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                f"OMPI_MCA_coll_tuned_{collective}_algorithm": algorithm}  # fmt: skip
    return {f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM": algorithm,
            "MPIR_CVAR_DEVICE_COLLECTIVES": "none"}  # fmt: skip


@pytest.mark.parametrize(("mpi", "collective"), SWEPT)
def test_a_forced_algorithm_runs_as_the_library_runs_it_when_told_for_the_launch(
    kernel_for: Callable[[str], Kernel],
    fingerprint_library: Callable[[str], Path],
    tmp_path: Path,
    mpi: str,
    collective: str,
) -> None:
    kernel = kernel_for(mpi)
    family = kernel.mpi.library
    library = fingerprint_library(mpi)
    algorithms = {
        name: value
        for name, value in list_algorithms(kernel)[collective].items()
        if name not in UNUSABLE_HERE[family]
    }

    def dtype(name: str) -> str:
        return "double" if family == "mpich" and name in MPICH_BUILTIN_OP_ONLY else "float"

    # Each forced experiment beside one with the library's choice, in shuffled order.
    forced, chosen = {}, {}
    rows: list[dict[str, object]] = []
    for i, name in enumerate(algorithms):
        forced[name] = experiment(2 * i, collective, BASE_COUNT + 32 * i, dtype(name), name)
        chosen[name] = experiment(2 * i + 1, collective, BASE_COUNT + 32 * i + 16, "float")
        rows += [forced[name], chosen[name]]
    random.Random(35).shuffle(rows)
    switched = run_fingerprinted(kernel, library, rows, tmp_path / "switched")

    def key(row: dict) -> tuple[str, int]:
        size = {"float": 4, "double": 8}[row["dtype"]]
        return collective, row["msg_size"] // size

    unforced = run_fingerprinted(kernel, library, list(chosen.values()), tmp_path / "unforced")
    for name, row in chosen.items():
        assert switched[key(row)] == unforced[key(row)], f"the library's choice after {name}"

    shapes = set()
    for name, row in forced.items():
        reference = run_fingerprinted(
            kernel,
            library,
            [row | {"algorithm": ""}],
            tmp_path / f"reference-{name}",
            env=forcing_environment(family, collective, name),
        )
        assert switched[key(row)] == reference[key(row)], name
        if family == "mpich":
            # The value read back in each call is the algorithm's, and the library's own
            # reading of the name (the environment) agrees with the kernel's.
            assert {observed[2] for observed in switched[key(row)]} == {str(algorithms[name])}
            assert {observed[2] for observed in reference[key(row)]} == {str(algorithms[name])}
        shapes.add(shape(switched[key(row)], key(row)[1]))
    if family == "mpich":
        # Between forced experiments the choice is the library's again.
        assert all(o[2] == "0" for row in chosen.values() for o in switched[key(row)])
    # The fingerprints tell algorithms apart, so a switch that failed would show: all of them
    # but those ALIKE_HERE.
    assert len(shapes) == len(algorithms) - len(ALIKE_HERE.get((mpi, collective), ()))


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_list_algorithms_is_what_the_library_reports(
    kernel_for: Callable[[str], Kernel], mpi: str
) -> None:
    """One row per algorithm of each collective an op is, the library's own choice left out."""
    table = list_algorithms(kernel_for(mpi))
    reserved = {"openmpi": "ignore", "mpich": "auto"}[mpi]
    assert all(reserved not in names for names in table.values())
    assert all(value > 0 for names in table.values() for value in names.values())
    expected = {
        "openmpi": {"basic_linear": 1, "nonoverlapping": 2, "recursive_doubling": 3, "ring": 4,
                    "segmented_ring": 5, "rabenseifner": 6},
        "mpich": {"nb": 1, "smp": 2, "recursive_doubling": 3, "reduce_scatter_allgather": 4},
    }[mpi]  # fmt: skip
    assert table["allreduce"] == expected
    assert {"allreduce", "reduce", "bcast", "allgather", "alltoall", "barrier"} <= set(table)
    assert set(table) <= {op["algorithm_of"] for op in operations()} - {"none"}


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_the_provenance_records_what_was_forced(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    algorithm = {"openmpi": "ring", "mpich": "recursive_doubling"}[mpi]
    rows = [
        experiment(0, "allreduce", 64, "float", algorithm),
        experiment(1, "allreduce", 64, "float"),
    ]
    infile = write_input(tmp_path / "in.csv", rows)
    result = kernel_for(mpi).run(2, "--verify", infile, tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    provenance = json.loads((tmp_path / "out.json").read_text())
    value = list_algorithms(kernel_for(mpi))["allreduce"][algorithm]
    assert provenance["algorithms"]["library"] == {"openmpi": "Open MPI", "mpich": "MPICH"}[mpi]
    assert provenance["algorithms"]["forced"] == [
        {"collective": "allreduce", "algorithm": algorithm,
         "cvar": {"openmpi": "coll_tuned_allreduce_algorithm",
                  "mpich": "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"}[mpi],
         "value": value}
    ]  # fmt: skip
    entries = {e["exp_id"]: e for e in provenance["experiments"]}
    assert (entries[0]["algorithm"], entries[0]["algorithm_value"]) == (algorithm, value)
    assert "algorithm" not in entries[1]


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_nothing_forced_records_no_algorithms(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    infile = write_input(tmp_path / "in.csv", [experiment(0, "allreduce", 64, "float")])
    result = kernel_for(mpi).run(2, infile, tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    assert "algorithms" not in json.loads((tmp_path / "out.json").read_text())


def refused(
    kernel: Kernel, tmp_path: Path, rows: list[dict[str, object]], env: dict[str, str] | None = None
) -> str:
    """The kernel's message for an input it refuses before measuring (exit 2, no abort)."""
    infile = write_input(tmp_path / "in.csv", rows)
    result = kernel.run(2, infile, tmp_path / "out.csv", env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "MPI_Abort" not in result.stderr and "MPI_ABORT" not in result.stderr
    assert not (tmp_path / "out.csv").exists()
    return result.stderr


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_an_unknown_algorithm_is_refused_with_the_allowed_names(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    kernel = kernel_for(mpi)
    allowed = ", ".join(list_algorithms(kernel)["allreduce"])
    library = {"openmpi": "Open MPI", "mpich": "MPICH"}[mpi]
    stderr = refused(kernel, tmp_path, [experiment(0, "allreduce", 64, "float", "foo")])
    assert (
        f"{tmp_path / 'in.csv'}:2: algorithm 'foo' is not an algorithm of MPI_Allreduce in "
        f"{library}; allowed: {allowed}; or untuned (the library's own call, past "
        "libmpiguide-tune)\n"
    ) in stderr


@pytest.mark.parametrize(("mpi", "reserved"), [("openmpi", "ignore"), ("mpich", "auto")])
def test_the_reserved_name_is_refused(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str, reserved: str
) -> None:
    stderr = refused(kernel_for(mpi), tmp_path, [experiment(0, "bcast", 64, "float", reserved)])
    assert f"algorithm '{reserved}' is not an algorithm of MPI_Bcast" in stderr
    assert "leave the cell empty" in stderr


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_algorithm_where_it_does_not_apply_is_refused(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    row = experiment(0, "allreduce_as_reduce_bcast", 64, "float", "ring")
    stderr = refused(kernel_for(mpi), tmp_path, [row])
    assert "column 'algorithm' does not apply to op allreduce_as_reduce_bcast" in stderr


@pytest.mark.parametrize(
    ("mpi", "setting", "said"),
    [
        ("openmpi", {"OMPI_MCA_coll_tuned_use_dynamic_rules": "0"},
         ["needs Open MPI's coll/tuned dynamic rules", "OMPI_MCA_coll_tuned_use_dynamic_rules=0"]),
        ("openmpi-5.0.11", {"OMPI_MCA_coll_tuned_priority": "-1"},
         ["coll_tuned_priority is -1: coll/tuned declines every communicator"]),
    ],
)  # fmt: skip
def test_open_mpi_settings_that_leave_coll_tuned_nothing_to_switch_are_errors(
    kernel_for: Callable[[str], Kernel],
    tmp_path: Path,
    mpi: str,
    setting: dict[str, str],
    said: list[str],
) -> None:
    """Open MPI switches only with coll/tuned's dynamic rules, which the user turned off, and
    only where coll/tuned serves: a negative priority leaves it out of every communicator."""
    row = experiment(0, "allreduce", 64, "float", "ring")
    stderr = refused(kernel_for(mpi), tmp_path, [row], env=setting)
    assert all(text in stderr for text in said), stderr


@pytest.mark.parametrize("verify", [True, False])
def test_an_unusable_choice_is_the_librarys_error_never_a_fallback(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, verify: bool
) -> None:
    """MPICH's reduce_scatter_allgather needs a count of at least the power of two below the
    communicator's size: with one element the forced choice fails (the library's check lies in
    that algorithm's own branch), where a silent fallback would have measured another. Under
    --verify the kernel reports it like wrong data (exit 1, every rank finalises); without, the
    failed call ends the job."""
    row = experiment(0, "allreduce", 1, "float", "reduce_scatter_allgather")
    infile = write_input(tmp_path / "in.csv", [row])
    options = ["--verify"] if verify else []
    result = kernel_for("mpich").run(2, *options, infile, tmp_path / "out.csv")
    if verify:
        assert result.returncode == 1
        assert (
            "--verify failed: exp_id 0 (line 2) op allreduce: algorithm "
            "'reduce_scatter_allgather' of allreduce forced: rank 0: the library refused the call"
        ) in result.stderr
        assert "User set collective algorithm is not usable" in result.stderr
        assert "MPI_Abort" not in result.stderr
    else:
        # The job is aborted; its status, and whether the ranks' messages reach the launcher's
        # stderr before it kills them (MPICH's hydra sometimes drops them), are the launcher's.
        assert result.returncode != 0
    assert not (tmp_path / "out.csv").exists()


def test_the_kernels_own_broadcasts_keep_the_librarys_choice(
    kernel_for: Callable[[str], Kernel],
    fingerprint_library: Callable[[str], Path],
    tmp_path: Path,
) -> None:
    """MPICH's choice is global, and the repetition loop broadcasts too (the max_time budget's
    decision, the round-time start): a forced algorithm is written around the op's calls only,
    so every broadcast of the kernel's own sees MPICH's own choice (0) and the launch's device
    setting, and every call of the experiment the forced ones."""
    kernel = kernel_for("mpich")
    values = list_algorithms(kernel)["bcast"]
    rows = [
        experiment(0, "bcast", BASE_COUNT, "float", "scatter_ring_allgather")
        | {"max_time": 100, "sync": "hca3_roundtime"},
        experiment(1, "bcast", BASE_COUNT + 16, "float", "binomial") | {"max_time": 100},
        experiment(2, "allreduce", BASE_COUNT, "float", "recursive_doubling")
        | {"max_time": 100, "sync": "barrier"},
        experiment(3, "bcast", BASE_COUNT + 32, "float") | {"max_time": 100},
    ]
    fingerprints = run_fingerprinted(kernel, fingerprint_library("mpich"), rows, tmp_path / "run")
    (launch_device,) = {o[4] for o in fingerprints["bcast", BASE_COUNT + 32]}
    own = {key: fp for key, fp in fingerprints.items() if key[0] == "own_bcast"}
    assert own
    assert {(o[2], o[4]) for fp in own.values() for o in fp} == {("0", launch_device)}
    assert {o[4] for o in fingerprints["allreduce", BASE_COUNT]} != {launch_device}
    assert {o[2] for o in fingerprints["bcast", BASE_COUNT]} == {
        str(values["scatter_ring_allgather"])
    }
    assert {o[2] for o in fingerprints["bcast", BASE_COUNT + 16]} == {str(values["binomial"])}


def test_a_topologys_communicator_runs_the_forced_algorithm(
    kernel_for: Callable[[str], Kernel],
    fingerprint_library: Callable[[str], Path],
    tmp_path: Path,
) -> None:
    """Open MPI: an experiment on a topology runs on a duplicate of the topology's communicator
    made under the algorithm (its neighbours and rank order kept); beside it, one without an
    algorithm runs the library's choice on the topology's own."""
    topology = {"topology": "cart", "ndim": 2, "reorder": 1}
    rows = [
        experiment(0, "bcast", BASE_COUNT, "float", "chain") | topology,
        experiment(1, "bcast", BASE_COUNT + 16, "float") | topology,
        experiment(2, "allgather", BASE_COUNT // 4, "float", "ring") | topology,
    ]
    fingerprints = run_fingerprinted(
        kernel_for("openmpi"), fingerprint_library("openmpi"), rows, tmp_path / "run"
    )
    functions = functions_entered(fingerprints)
    assert functions["bcast", BASE_COUNT] == {"ompi_coll_base_bcast_intra_chain"}
    assert functions["bcast", BASE_COUNT + 16] != {"ompi_coll_base_bcast_intra_chain"}
    assert functions["allgather", BASE_COUNT // 4] == {"ompi_coll_base_allgather_intra_ring"}


@pytest.mark.parametrize("mpi", ["openmpi", "openmpi-5.0.11"])
def test_a_component_ranked_above_coll_tuned_does_not_take_a_forced_call(
    kernel_for: Callable[[str], Kernel],
    fingerprint_library: Callable[[str], Path],
    tmp_path: Path,
    mpi: str,
) -> None:
    """Open MPI: coll/adapt raised above coll/tuned answers MPI_Bcast on the library's own
    communicators (no coll/base function entered), yet the forced algorithm runs: its duplicate
    prefers coll/tuned. coll/han, above coll/tuned by default in Open MPI 5 (35 > 30), declines
    every communicator within one node, so adapt stands in for it here."""
    rows = [
        experiment(0, "bcast", BASE_COUNT, "float", "chain"),
        experiment(1, "bcast", BASE_COUNT + 16, "float"),
    ]
    fingerprints = run_fingerprinted(
        kernel_for(mpi),
        fingerprint_library(mpi),
        rows,
        tmp_path / "run",
        env={"OMPI_MCA_coll_adapt_priority": "40"},
    )
    functions = functions_entered(fingerprints)
    assert functions["bcast", BASE_COUNT] == {"ompi_coll_base_bcast_intra_chain"}
    assert functions["bcast", BASE_COUNT + 16] == {"-"}
