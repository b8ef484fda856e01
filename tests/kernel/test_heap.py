"""Page faults per experiment and the launch's allocator setting (--heap): counted, applied
and recorded in the provenance, and refused when unknown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kernel_files import read_provenance, write_input

if TYPE_CHECKING:
    from mpi_support import Kernel

pytestmark = pytest.mark.kernel

NREP = 20
# A reduction of 1 MiB: both libraries take a temporary buffer of about that size per call.
ROWS = [
    {"exp_id": 0, "op": "allreduce", "msg_size": 1 << 20, "nrep": NREP},
    {"exp_id": 1, "op": "reduce", "msg_size": 8, "nrep": NREP},
    {"exp_id": 2, "op": "barrier", "nrep": NREP},
]
# glibc maps every allocation of 4 KiB or more on its own and unmaps it when freed: under
# `default`, each call's temporary buffer is faulted in again.
MMAP_EVERYTHING = {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4096"}
KEYS = ("minor_max", "minor_sum", "major_max", "major_sum")


def measure(kernel: Kernel, tmp_path: Path, heap: str, nprocs: int = 2) -> dict[str, Any]:
    infile = write_input(tmp_path / "in.csv", ROWS)
    outfile = tmp_path / f"out-{heap}.csv"
    result = kernel.run(nprocs, "--heap", heap, infile, outfile, env=MMAP_EVERYTHING)
    assert result.returncode == 0, result.stderr
    return read_provenance(outfile)


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_page_faults_are_counted_and_fixed_heap_avoids_them(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, mpi: str
) -> None:
    kernel = kernel_for(mpi)
    default = measure(kernel, tmp_path, "default")
    fixed = measure(kernel, tmp_path, "fixed")
    for provenance in (default, fixed):
        for entry in provenance["experiments"]:
            faults = entry["page_faults"]
            assert set(faults) == set(KEYS)
            assert all(isinstance(faults[k], int) and faults[k] >= 0 for k in KEYS)
            for kind in ("minor", "major"):
                most, total = faults[f"{kind}_max"], faults[f"{kind}_sum"]
                assert most <= total <= most * provenance["nprocs"]
            assert isinstance(entry["mmapped_allocations_max"], int)
    by_id = {e["exp_id"]: e for e in default["experiments"]}
    fixed_by_id = {e["exp_id"]: e for e in fixed["experiments"]}
    # default: the 1 MiB temporary is mapped and faulted in on every call
    assert by_id[0]["page_faults"]["minor_max"] >= NREP
    # fixed: it comes from the touched reserve, whatever GLIBC_TUNABLES asked for
    assert fixed_by_id[0]["page_faults"]["minor_max"] < NREP
    # the setting read back: no allocation has a mapping of its own under `fixed`
    assert all(e["mmapped_allocations_max"] == 0 for e in fixed["experiments"])
    assert any(e["mmapped_allocations_max"] > 0 for e in default["experiments"])


def test_the_provenance_records_the_heap_setting(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    kernel = kernel_for("openmpi")
    default = measure(kernel, tmp_path, "default")["heap"]
    fixed = measure(kernel, tmp_path, "fixed")["heap"]
    assert default["setting"] == "default" and default["mallopt"] is None
    assert default["reserve_bytes"] == 0
    assert fixed["setting"] == "fixed"
    assert fixed["mallopt"] == {"M_ARENA_MAX": 1, "M_MMAP_MAX": 0, "M_TRIM_THRESHOLD": -1}
    assert fixed["reserve_bytes"] == 64 << 20
    for heap in (default, fixed):
        assert heap["glibc_tunables"] == MMAP_EVERYTHING["GLIBC_TUNABLES"]
        assert isinstance(heap["glibc"], str) and heap["glibc"][0].isdigit()


def test_without_heap_option_the_setting_is_default(
    kernel_for: Callable[[str], Kernel], tmp_path: Path
) -> None:
    infile = write_input(tmp_path / "in.csv", ROWS[1:])
    outfile = tmp_path / "out.csv"
    result = kernel_for("openmpi").run(2, infile, outfile)
    assert result.returncode == 0, result.stderr
    assert read_provenance(outfile)["heap"]["setting"] == "default"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--heap", "sometimes"],
            "--heap: 'sometimes' is not a heap setting; allowed: default, fixed",
        ),
        (["--heap=FIXED"], "--heap: 'FIXED' is not a heap setting"),
        (["--heap="], "--heap: '' is not a heap setting"),
    ],
)
def test_an_unknown_heap_setting_is_refused(
    kernel_for: Callable[[str], Kernel], tmp_path: Path, args: list[str], message: str
) -> None:
    infile = write_input(tmp_path / "in.csv", ROWS[1:])
    outfile = tmp_path / "out.csv"
    result = kernel_for("openmpi").run(2, *args, infile, outfile)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.count("is not a heap setting") == 1  # rank 0 only
    assert not outfile.exists()
