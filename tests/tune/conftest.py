"""Fixtures for the tests of libmpiguide-tune: the library and its probe program built with each
MPI library (tests/conftest.py describes the libraries and builds the kernel)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from mpi_support import DEBIAN_MPI
from preload_support import PreloadBuild, build_with_probe

PROBE_SOURCE = Path(__file__).with_name("probe.c")


class TuneBuild(PreloadBuild):
    """libmpiguide-tune and the probe, built with one MPI library."""

    def launch(
        self,
        nprocs: int,
        program: Sequence[str | os.PathLike[str]],
        rules: Path | None,
        *,
        launcher: bool = True,
        preload: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Runs `program` under the library (PreloadBuild.run) with MPIGUIDE_TUNE=`rules`
        (unset if None) and MPIGUIDE_TUNE_REPORT=1; without `preload` the program must be
        linked with the library."""
        settings = {"MPIGUIDE_TUNE_REPORT": "1"}
        if rules is not None:
            settings["MPIGUIDE_TUNE"] = str(rules)
        return self.run(nprocs, program, settings, ("MPIGUIDE_TUNE",), launcher=launcher,
                        preload=preload, extra_env=extra_env)  # fmt: skip


@pytest.fixture(scope="session", params=DEBIAN_MPI)
def tune_build(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> TuneBuild:
    return TuneBuild(*build_with_probe(request, tmp_path_factory, "tune", PROBE_SOURCE))
