"""An algorithm sweep on MPICH, end to end with real ranks: `algorithms:` of an entry with
`library: mpich` become experiments of that entry (the kernel writes MPIR_CVAR_<COLL>_INTRA_
ALGORITHM around each one), the ALGO guidelines are within-launch paired tests, the target
`tune` writes MPICH's cvars and JSON selection file, MPICH runs with that file, and `verify`
compares the chosen algorithms with the library's choice within its launches."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from mpiguide.tune.mpich_selection import JSON_FILE_CVAR
from workflow_project import new_project, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.timing]

CAMPAIGN = "config/campaigns/tune-mpich.yaml"
SWEPT = {"allreduce": ["recursive_doubling", "reduce_scatter_allgather"], "bcast": ["binomial"]}
CONFIG: dict[str, Any] = {
    "campaign": "tune-mpich",
    "seed": 3,
    "runs": 2,
    "nrep": 5,
    "mpi": {
        "mpich": {
            "mpicc": "mpicc.mpich",
            "launcher": "mpiexec.mpich",
            "env": {},
            "library": "mpich",
            "algorithms": SWEPT,
        }
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [
        {"op": ["allreduce", "allreduce_as_reduce_bcast", "bcast"], "msg_size": [8, 4096]}
    ],
    "guidelines": ["TGT-ALLREDUCE-AS-REDUCE-BCAST"],
    # Two runs at a loose threshold: cheap, and some algorithm may be chosen; which one is the
    # machine's to say, so the test checks what each outcome must give.
    "analysis": {"varied": "msg_size", "p_thres": 0.5, "v_thres": 1.0},
}
ARGS = ("--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = new_project(tmp_path_factory.mktemp("tune-mpich") / "project", {})
    (root / CAMPAIGN).parent.mkdir(parents=True, exist_ok=True)
    (root / CAMPAIGN).write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    snakemake(root, "tune", *ARGS)
    return root


def test_mpich_sweep_is_paired_within_the_entrys_launches(project: Path) -> None:
    results = project / "results" / "tune-mpich"
    assert sorted(p.name for p in (results / "raw").iterdir()) == ["mpich"]
    assert len(list((results / "raw" / "mpich" / "1x2").glob("run*.csv"))) == 2
    tests = pd.read_csv(results / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    algo = tests[tests["guideline"].str.startswith("ALGO.")]
    assert sorted(set(algo["guideline"])) == sorted(
        f"ALGO.mpich.{op}.{name}" for op, names in SWEPT.items() for name in names
    )
    assert set(algo["test"]) == {"paired_t"}
    assert set(algo["algorithm"]) == {
        f"library-default|{name}" for names in SWEPT.values() for name in names
    }
    figure5 = pd.read_csv(results / "tuning" / "algorithms.csv")
    assert set(figure5["library"]) == {"mpich"}
    assert len(figure5) == 3 * 2  # 3 algorithms x 2 sizes, one deployment


def test_mpich_runs_with_the_selection_file_tune_wrote(project: Path) -> None:
    tuning = project / "results" / "tune-mpich" / "tuning"
    selection = tuning / "mpich.mpich-selection.json"
    chosen = (pd.read_csv(tuning / "algorithms.csv")["verdict"] == "violated").any()
    if not chosen:
        assert not selection.exists() or "mpich" not in (tuning / "tuning.md").read_text()
        return
    kernel = project / "results" / "tune-mpich" / "build" / "mpich" / "mpiguide-bench"
    probe = project / "probe.csv"
    probe.write_text("exp_id,op,msg_size,nrep\n0,allreduce,4096,3\n1,bcast,8,3\n")
    done = subprocess.run(
        ["mpiexec.mpich", "-n", "2", "-env", JSON_FILE_CVAR, str(selection), str(kernel),
         "--verify", str(probe), str(project / "o.csv")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_mpich_verify_compares_within_one_launch(project: Path) -> None:
    tuning = project / "results" / "tune-mpich" / "tuning"
    chosen = (pd.read_csv(tuning / "algorithms.csv")["verdict"] == "violated").any()
    if not chosen:
        result = snakemake(project, "verify", *ARGS, "--config", "verify=True", check=False)
        assert result.returncode != 0 and "nothing was tuned to verify" in result.stderr
        return
    snakemake(project, "verify", *ARGS, "--config", "verify=True")
    verify = project / "results" / "tune-mpich-verify"
    # the entry again with the settings `tune` wrote in its environment, in the same blocks
    assert sorted(p.name for p in (verify / "raw").iterdir()) == ["mpich", "mpich.applied"]
    checks = pd.read_csv(verify / "verify.csv")
    assert (checks["verify_tests"] > 0).all()
    # MPICH honours a forced algorithm over the file: the file's call and the choice forced
    # in one launch; the old default, its own call in `mpich`, across launches
    comparison = dict(zip(checks["check"], checks["comparison"], strict=True))
    assert comparison == {
        "forced": "within one launch",
        "file_runs_choice": "within one launch",
        "file_beats_default": "across launches",
    }
    tests = pd.read_csv(verify / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    runs = tests[tests["guideline"].str.match(r"APPLIED\.mpich\.[a-z]+\.")]
    assert set(runs["mpi"]) == {"mpich.applied"} and set(runs["test"]) == {"paired_t"}
    note = (verify / "verify.md").read_text()
    assert "## The settings file `tune` wrote, applied" in note
    assert "not measured" not in note.split("## The library's algorithms")[1]
