"""A reduced self-test campaign through the workflow: identical entries, a reference under
libmpiguide-inject planting nothing and a copy slowed down fourfold; the `selftest` target builds
the library, proves every slowed run was slowed and writes the power table and its plot. The
copy is compared across launches (rank-sum over 5 runs), so its signal must stand above whole
launches running 2-3x slower than others while other jobs share the cores: twofold was missed in
up to half of the resamples under such load, fourfold is not.

Lives with the fault tests for their seeded projects; the full campaign is
config/campaigns/selftest.yaml, run by a user (docs/selftest.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from workflow_project import ROOT_ENV, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.timing]


LIBRARY = "build/inject/openmpi/libmpiguide-inject.so"
OPS = ("MPI_Allreduce", "MPI_Bcast")


def entry(fraction: float | None) -> dict[str, Any]:
    env = dict(ROOT_ENV)
    if fraction is not None:
        env["LD_PRELOAD"] = LIBRARY
        env["MPIGUIDE_INJECT"] = ", ".join(f"{op}:fraction={fraction}" for op in OPS)
    return {"mpicc": "mpicc.openmpi", "launcher": "mpirun.openmpi", "env": env, "modules": []}


def compare(name: str, lhs: str, rhs: str) -> dict[str, Any]:
    return {"id": name, "source": "test", "text": f"{lhs} ≼ {rhs}", "relation": "le",
            "lhs": {"mpi": lhs}, "rhs": {"mpi": rhs}}  # fmt: skip


# 7 runs, resampled to 5: with 5 runs against 5 the smallest p-value is 1/252, so p_thres is
# 0.01 here (the campaign default 0.001 needs 7 runs for any verdict;
# docs/selftest.md).
REDUCED_SELFTEST: dict[str, Any] = {
    "campaign": "selftest",
    "seed": 3,
    "runs": 7,
    "nrep": 20,
    "mpi": {"a": entry(None), "b": entry(None), "ref": entry(0), "slow300": entry(3.0)},
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [{"op": ["allreduce", "bcast"], "msg_size": [16384, 65536]}],
    "guidelines": [
        compare("NULL-B-A", "b", "a"),
        compare("NULL-A-B", "a", "b"),
        compare("SLOW300", "slow300", "ref"),
    ],
    "analysis": {"varied": "msg_size", "p_thres": 0.01, "v_thres": 1.03},
}


def test_reduced_selftest_detects_the_planted_slowdown(
    make_project: Callable[[dict[str, Any]], Path],
) -> None:
    project = make_project(REDUCED_SELFTEST)
    # One invocation builds the library (rule build_inject_*), measures and self-tests.
    snakemake(project, "--profile", "profiles/local", "--cores", "2", "selftest")

    results = project / "results" / "selftest"
    table = pd.read_csv(results / "selftest.csv")
    assert set(table["test"]) == {"auto", "ranksum"}
    # Entries compared across launches: the papers' rank-sum, beside the default.
    overall = table[(table["op"] == "all") & (table["test"] == "ranksum")]
    overall = overall.set_index("slowdown_pct")
    assert set(overall["launches"]) == {"different"}
    assert list(overall["runs"]) == [5, 5] and list(overall["resamples"]) == [100, 100]
    assert overall.loc[0.0, "tests"] == 8 and overall.loc[300.0, "groups"] == 2
    assert overall.loc[300.0, "detected_group_rate"] >= 0.9, table
    # Loose on purpose: 8 null tests at p <= 0.01 on a machine shared with other jobs.
    assert overall.loc[0.0, "flagged_test_rate"] <= 0.1, table
    assert (results / "selftest.png").read_bytes().startswith(b"\x89PNG")
    # a planted 300 % is never cleared, and the verdict shares are in the Markdown tables too
    assert overall.loc[300.0, "holds_test_rate"] == 0.0, table
    assert "`analysis.test: auto`" in (results / "selftest.md").read_text()
