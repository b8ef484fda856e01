"""What the workflow and the self-test read of libmpiguide-inject's use in a campaign config:
planted fractions from MPIGUIDE_INJECT, and the injector builds that LD_PRELOAD asks for."""

from __future__ import annotations

from typing import Any

import pytest

from mpiguide.core.errors import ConfigError
from mpiguide.selftest.inject import inject_libraries, planted_fraction

CLEAN: dict[str, Any] = {"mpicc": "mpicc", "launcher": "mpirun", "env": {}}


def slowed(fraction: float) -> dict[str, Any]:
    return {**CLEAN, "env": {"MPIGUIDE_INJECT": f"MPI_Bcast:fraction={fraction}"}}


def test_planted_fraction_reads_the_spec() -> None:
    assert planted_fraction("a", CLEAN, "c.yaml") == 0.0
    assert planted_fraction("s", slowed(0.1), "c.yaml") == pytest.approx(0.1)


def test_planted_fraction_follows_a_datatype_filter() -> None:
    entry = {
        **CLEAN,
        "env": {
            "MPIGUIDE_INJECT": "MPI_Bcast:fraction=0.1:datatype=MPI_INT, "
            "MPI_Scan:fraction=0.1:datatype=MPI_INT"
        },
    }
    assert planted_fraction("s", entry, "c.yaml", "MPI_Bcast", "int") == pytest.approx(0.1)
    assert planted_fraction("s", entry, "c.yaml", "MPI_Bcast", "char") == 0.0
    assert planted_fraction("s", entry, "c.yaml", None, "int") == pytest.approx(0.1)
    assert planted_fraction("s", entry, "c.yaml", None, "double") == 0.0
    assert planted_fraction("s", entry, "c.yaml", "MPI_Allreduce", None) == 0.0
    with pytest.raises(ConfigError, match=r"slows MPI_Bcast for MPI_INT only; .* fix the dtype"):
        planted_fraction("s", entry, "c.yaml", "MPI_Bcast")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("MPI_Bcast:usec=5", "the self-test plants fractions"),
        ("MPI_Bcast:fraction=0.1:type=MPI_INT", "unknown field 'type=MPI_INT'"),
        ("MPI_Bcast:fraction=0.1, MPI_Scan:fraction=0.2", "plants different fractions"),
        ("MPI_Bcast:fraction=ten", "'ten' is not a number"),
        ("MPI_Bcast:fraction=nan", "fraction must be a number from 0 to 100"),
        ("MPI_Bcast:fraction=-0.1", "fraction must be a number from 0 to 100"),
        ("MPI_Bcast:fraction=inf", "fraction must be a number from 0 to 100"),
    ],
)
def test_planted_fraction_rejects_other_specs(spec: str, message: str) -> None:
    entry = {**CLEAN, "env": {"MPIGUIDE_INJECT": spec}}
    with pytest.raises(ConfigError, match=message) as error:
        planted_fraction("s", entry, "c.yaml")
    assert "c.yaml: mpi.s.env.MPIGUIDE_INJECT" in str(error.value)


def test_inject_libraries_the_workflow_builds() -> None:
    def preloading(path: str, mpicc: str = "mpicc.openmpi") -> dict[str, Any]:
        return {"mpicc": mpicc, "env": {"LD_PRELOAD": path, "MPIGUIDE_INJECT": "x"}}

    relative = "build/inject/openmpi/libmpiguide-inject.so"
    entries = {
        "a": CLEAN,
        "ref": preloading(relative),
        "slow": preloading(relative),
        "mine": preloading("/opt/lib/libmpiguide-inject.so"),  # the user's to build
        "other": preloading("build/libother.so"),
        # ld.so splits LD_PRELOAD at blanks and colons: several libraries, the user's to build
        "pair": preloading(f"build/libother.so:{relative}".replace("openmpi", "pair")),
        "pair2": preloading(f"build/libother.so {relative}".replace("openmpi", "pair2")),
    }
    assert inject_libraries(entries, "c.yaml") == {relative: "ref"}
    with pytest.raises(ConfigError, match=r"c.yaml: mpi.mpich.env.LD_PRELOAD: .* built with"):
        inject_libraries({**entries, "mpich": preloading(relative, "mpicc.mpich")}, "c.yaml")
