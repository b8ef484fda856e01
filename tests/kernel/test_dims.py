"""The kernel's MPI_Dims_create replacement: the neighbourhood paper's Table 1, and the
specification (balanced, non-increasing) against a brute-force search."""

from __future__ import annotations

import itertools
import math
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_files import KERNEL_SOURCES

pytestmark = pytest.mark.kernel

TABLE_1 = {
    (160, 2): (16, 10),
    (160, 3): (8, 5, 4),
    (160, 4): (5, 4, 4, 2),
    (320, 2): (20, 16),
    (320, 3): (8, 8, 5),
    (320, 4): (5, 4, 4, 4),
    (560, 2): (28, 20),
    (560, 3): (10, 8, 7),
    (560, 4): (7, 5, 4, 4),
}
EDGE_CASES = [(1, 1), (1, 3), (7, 2), (12, 2), (36, 3), (64, 6), (97, 2), (2, 4), (360, 5)]


@pytest.fixture(scope="module")
def dims_create(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    binary = tmp_path_factory.mktemp("dims") / "dims_driver"
    subprocess.run(
        [
            compiler,
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{KERNEL_SOURCES}",
            "-o",
            binary,
            Path(__file__).with_name("dims_driver.c"),
            KERNEL_SOURCES / "topology" / "dims.c",
        ],
        check=True,
    )
    return binary


def run_dims(binary: Path, cases: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    args = [str(v) for case in cases for v in case]
    out = subprocess.run([binary, *args], capture_output=True, text=True, check=True).stdout
    return [tuple(int(d) for d in line.split()) for line in out.splitlines()]


def brute_force(nnodes: int, ndims: int) -> tuple[int, ...]:
    """Every non-increasing factorisation; the balanced one is the lexicographically smallest."""
    divisors = [d for d in range(1, nnodes + 1) if nnodes % d == 0]
    candidates = [
        combo
        for combo in itertools.combinations_with_replacement(sorted(divisors, reverse=True), ndims)
        if math.prod(combo) == nnodes
    ]
    return min(candidates)


def test_table_1_of_the_neighbourhood_paper(dims_create: Path) -> None:
    cases = list(TABLE_1)
    assert dict(zip(cases, run_dims(dims_create, cases), strict=True)) == TABLE_1


def test_specification_against_brute_force(dims_create: Path) -> None:
    cases = EDGE_CASES + [(n, d) for n in (2, 6, 24, 30, 48, 100, 128) for d in (1, 2, 3, 4)]
    for case, dims in zip(cases, run_dims(dims_create, cases), strict=True):
        assert dims == brute_force(*case), case
        assert list(dims) == sorted(dims, reverse=True)
        assert math.prod(dims) == case[0]
