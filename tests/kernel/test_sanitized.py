"""The kernel's own arithmetic under UBSan: building the context of an experiment at the size
limits validation allows must not overflow an int."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_files import KERNEL_SOURCES

from conftest import MPI_LIBRARIES

pytestmark = pytest.mark.kernel

OPENMPI = MPI_LIBRARIES["openmpi"]


@pytest.fixture(scope="module")
def context_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not OPENMPI.available():
        pytest.skip(f"{OPENMPI.mpicc} not installed")
    sources = [p for p in sorted(KERNEL_SOURCES.glob("*.c")) if p.name != "main.c"]
    binary = tmp_path_factory.mktemp("ubsan") / "context_driver"
    subprocess.run(
        [
            OPENMPI.mpicc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-O1", "-Wall", "-Wextra",
            "-Werror", "-fsanitize=undefined", "-fno-sanitize-recover=undefined",
            f"-I{KERNEL_SOURCES}", "-o", binary, Path(__file__).with_name("context_driver.c"),
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
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "runtime error" not in result.stderr
    assert result.stdout.count("ok") == 3
