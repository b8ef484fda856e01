"""The tuning file `mpiguide tune` writes is the one libmpiguide-tune reads: from tests where
MPI_Allreduce and MPI_Scan are significantly slower than their mock-ups, the written file makes
the library replace exactly those calls of the probe (2 ranks, both MPI libraries)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mpiguide.tune.outputs import tune

from .conftest import TuneBuild
from .test_tune import COUNT, RANKS, REPEATS, left, replaced

pytestmark = pytest.mark.kernel


def test_the_written_file_replaces_what_was_violated(tune_build: TuneBuild, tmp_path: Path) -> None:
    def violated(op: str, mockup: str, size: int) -> dict[str, str]:
        return {
            "guideline": "G", "relation": "le", "mpi": "openmpi", "nodes": "1", "ppn": "2",
            "op": f"{op}|{mockup}", "msg_size": str(size), "dtype": "double", "group": "0",
            "violation_ratio": "2.0", "ratio_low": "1.8", "ratio_high": "2.2",
            "verdict": "violated",
        }  # fmt: skip

    # The probe's allreduces move 512 B (doubles) and 256 B (ints), its scan 256 B.
    rows = [
        violated("allreduce", "allreduce_as_reduce_scatter_allgather", 256),
        violated("allreduce", "allreduce_as_reduce_scatter_allgather", 512),
        violated("scan", "scan_as_exscan_reduce_local", 256),
    ]
    tests = tmp_path / "tests.csv"
    pd.DataFrame(rows).to_csv(tests, index=False)
    decided = tmp_path / "decided_with.json"
    decided.write_text(json.dumps({"analysis": {"p_thres": 0.05, "v_thres": 1.03}}))
    tune(tests, decided, {}, tmp_path / "tuning", ["openmpi"])
    rules = tmp_path / "tuning" / "openmpi.tune"
    result = tune_build.launch(RANKS, [tune_build.probe, "replaceable", str(COUNT)], rules)
    assert result.returncode == 0, result.stderr
    assert "probe ok" in result.stdout
    # the file's first rule is on line 4, after three lines of comments
    assert replaced(result.stderr) == {4: {2 * REPEATS}, 5: {REPEATS}}, result.stderr
    assert left(result.stderr) == {"MPI_Allreduce": {0}, "MPI_Scan": {0}}
