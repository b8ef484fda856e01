"""config/campaigns/tune-example.yaml, shrunk: an entry's `algorithms:` become entries measured in
the same blocks on one kernel build, their ALGO guidelines reach tests.csv, and the target `tune`
writes Figure 5's algorithms.csv, an Open MPI rules file that Open MPI runs with, and tuning.md."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from workflow_project import REPO, new_project, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.timing]

CAMPAIGN = "config/campaigns/tune-example.yaml"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = yaml.safe_load((REPO / CAMPAIGN).read_text())
    config["mpi"]["openmpi"]["algorithms"] = {
        "allreduce": ["ring", "recursive_doubling"],
        "scan": "all",
    }
    config["experiments"][0]["msg_size"] = [8, 1000]
    config["guidelines"] = ["TGT-ALLREDUCE-AS-REDUCE-BCAST", "TGT-SCAN-AS-EXSCAN-REDUCE-LOCAL"]
    # Two runs at a loose threshold: cheap, and some algorithm may be chosen; which one is the
    # machine's to say, so the test checks that every choice rests on violated tests.
    config.update(runs=2, nrep=5, deployments=[{"nodes": 1, "ppn": 2}])
    config["analysis"] = {"varied": "msg_size", "p_thres": 0.5, "v_thres": 1.0}
    root = new_project(tmp_path_factory.mktemp("tune") / "project", {})
    (root / CAMPAIGN).parent.mkdir(parents=True, exist_ok=True)
    (root / CAMPAIGN).write_text(yaml.safe_dump(config, sort_keys=False))
    return root


def test_tune_target(project: Path) -> None:
    snakemake(project, "tune", "--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)
    results = project / "results" / "tune-example"
    entries = sorted(p.name for p in (results / "raw").iterdir())
    assert entries == [
        "openmpi",
        "openmpi.allreduce.recursive_doubling",
        "openmpi.allreduce.ring",
        "openmpi.scan.linear",
        "openmpi.scan.recursive_doubling",
    ]
    assert sorted(p.name for p in (results / "build").iterdir()) == ["openmpi"]
    tests = pd.read_csv(results / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    algo = tests[tests["guideline"].str.startswith("ALGO.")]
    assert sorted(set(algo["guideline"])) == [f"ALGO.{e}" for e in entries[1:]]
    assert set(algo["op"]) == {"allreduce", "scan"}
    # the campaign's own guidelines are checked under every algorithm too
    assert set(tests[tests["guideline"] == "TGT-ALLREDUCE-AS-REDUCE-BCAST"]["mpi"]) == set(entries)

    tuning = results / "tuning"
    figure5 = pd.read_csv(tuning / "algorithms.csv")
    assert len(figure5) == 4 * 2  # 4 algorithms x 2 sizes, one deployment
    assert set(figure5["algorithm"]) == {"ring", "recursive_doubling", "linear"}
    assert (tuning / "algorithms.png").stat().st_size > 0
    note = (tuning / "tuning.md").read_text()
    violated = figure5[figure5["verdict"] == "violated"]
    for row in note.split("## Replaced", 1)[1].split("## Kept", 1)[0].splitlines():
        if row.startswith("| openmpi |"):
            _, _, op, _, size, algorithm, *_ = (cell.strip() for cell in row.split("|"))
            assert ((violated["op"] == op) & (violated["msg_size"] == int(size))
                    & (violated["algorithm"] == algorithm)).any(), row  # fmt: skip

    # Open MPI runs with the rules file the target wrote
    rules = tuning / "openmpi.ompi-rules.conf"
    kernel = results / "build" / "openmpi" / "mpiguide-bench"
    infile = project / "probe.csv"
    infile.write_text("exp_id,op,msg_size,nrep\n0,allreduce,1000,3\n1,scan,8,3\n")
    env = {
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(rules),
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        ["mpirun.openmpi", "-n", "2", str(kernel), "--verify", str(infile), str(project / "o.csv")],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_verify_target(project: Path) -> None:
    """After `tune` (test_tune_target): the campaign again with the tuning as an extra entry."""
    if not (project / "results" / "tune-example" / "tuning" / "openmpi.ompi-rules.conf").exists():
        test_tune_target(project)
    args = ("--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)
    snakemake(project, "verify", *args, "--config", "verify=True")
    verify = project / "results" / "tune-example-verify"
    assert sorted(p.name for p in (verify / "raw").iterdir()) == ["openmpi", "openmpi.tuned"]
    # one kernel build, and every launch of both entries in the same blocks
    assert sorted(p.name for p in (verify / "build").iterdir()) == ["openmpi"]
    assert len(list((verify / "blocks" / "1x2").glob("run*.json"))) == 2
    text = (verify / "verify" / "openmpi.md").read_text()
    assert "(openmpi.tuned)" in text
    rows = pd.read_csv(verify / "verify" / "openmpi.csv")
    assert len(rows) > 0
