"""config/campaigns/tune-example.yaml, shrunk: an entry's `algorithms:` become experiments of that
entry, run with real ranks in its own launches (the kernel switches the algorithm per experiment),
their ALGO guidelines reach tests.csv as within-launch paired tests, the target `tune` writes
Figure 5's algorithms.csv, an Open MPI rules file that Open MPI runs with, and tuning.md, and
`verify` compares the chosen algorithms with the library's choice within its launches."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from mpiguide.core.paths import mockup_tuning_name
from mpiguide.tune.words import size_text
from workflow_project import REPO, SNAKEMAKE, new_project, snakemake, snakemake_env

CAMPAIGN = "config/campaigns/tune-example.yaml"
# The kernel's option that lists the library's algorithms; a kernel without it cannot run an
# algorithm per experiment (docs/kernel.md#algorithms-per-experiment).
LIST_ALGORITHMS = "--list-algorithms"


def _kernel_lists_algorithms() -> bool:
    return any(
        LIST_ALGORITHMS in path.read_text(errors="replace")
        for path in (REPO / "src" / "kernel").rglob("*.c")
    )


pytestmark = [
    pytest.mark.workflow,
    pytest.mark.timing,
    pytest.mark.skipif(
        not _kernel_lists_algorithms(),
        reason=f"the kernel (src/kernel) has no {LIST_ALGORITHMS}: it cannot run an algorithm "
        "per experiment",
    ),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = yaml.safe_load((REPO / CAMPAIGN).read_text())
    config["mpi"]["openmpi"]["algorithms"] = {
        "allreduce": ["ring", "recursive_doubling"],
        "scan": "all",
    }
    # one block of both sizes, at the shrunk nrep below (the campaign's sizes have their own)
    config["experiments"] = [{"op": config["experiments"][0]["op"], "msg_size": [8, 1000]}]
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
    # one entry, one kernel build: every algorithm ran in the entry's own launches
    assert sorted(p.name for p in (results / "raw").iterdir()) == ["openmpi"]
    assert sorted(p.name for p in (results / "build").iterdir()) == ["openmpi"]
    assert len(list((results / "raw" / "openmpi" / "1x2").glob("run*.csv"))) == 2
    swept = [
        "openmpi.allreduce.recursive_doubling",
        "openmpi.allreduce.ring",
        "openmpi.scan.linear",
        "openmpi.scan.recursive_doubling",
    ]
    tests = pd.read_csv(results / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    algo = tests[tests["guideline"].str.startswith("ALGO.")]
    assert sorted(set(algo["guideline"])) == [f"ALGO.{name}" for name in swept]
    assert set(algo["op"]) == {"allreduce", "scan"}
    assert set(algo["mpi"]) == {"openmpi"}
    # paired run by run: both sides ran in the same launches
    assert set(algo["test"]) == {"paired_t"}
    assert set(algo["algorithm"]) == {
        f"library-default|{name}" for name in ("ring", "recursive_doubling", "linear")
    }
    # the campaign's own guidelines are checked under every algorithm too
    mockup = tests[tests["guideline"] == "TGT-ALLREDUCE-AS-REDUCE-BCAST"]
    assert set(mockup["algorithm"]) == {"library-default|", "ring|", "recursive_doubling|"}

    tuning = results / "tuning"
    figure5 = pd.read_csv(tuning / "algorithms.csv")
    assert len(figure5) == 4 * 2  # 4 algorithms x 2 sizes, one deployment
    assert set(figure5["algorithm"]) == {"ring", "recursive_doubling", "linear"}
    assert (tuning / "algorithms.png").stat().st_size > 0
    note = (tuning / "tuning.md").read_text()
    # one decision line per point; each "use <algorithm>" rests on a violated ALGO test there
    violated = figure5[figure5["verdict"] == "violated"]
    uses = {(v.op, size_text(v.msg_size), v.algorithm) for v in violated.itertuples()}
    lines = [
        line
        for line in note.splitlines()
        if line.startswith("- openmpi ") and "replace by the mock-up" not in line
    ]
    assert len(lines) == 2 * 2, note  # allreduce and scan at 2 sizes
    for line in lines:
        used = re.match(r"- openmpi (\w+), 2 ranks, (.+?): use (\w+) \(", line)
        assert used is None or used.groups() in uses, line
        assert used or ": keep the default — " in line, line

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


def test_the_library_is_listed_once_and_analysis_only_starts_no_mpi(
    project: Path, tmp_path: Path
) -> None:
    """After `tune` (test_tune_target) the listing `ompi_info` printed is saved beside the
    results; an analysis-only reading of the campaign takes it from there. An `ompi_info` that
    leaves a mark and fails stands first on PATH: it is never started, and without the saved
    listing the invocation stops naming the file to copy."""
    listing = project / "results" / "tune-example" / "library_algorithms" / "openmpi.json"
    assert "coll_tuned_allreduce_algorithm" in json.loads(listing.read_text())["output"]
    stub = tmp_path / "bin"
    stub.mkdir()
    mark = tmp_path / "started"
    (stub / "ompi_info").write_text(f'#!/bin/sh\ntouch "{mark}"\nexit 1\n')
    (stub / "ompi_info").chmod(0o755)
    env = {**snakemake_env(), "PATH": f"{stub}{os.pathsep}{snakemake_env()['PATH']}"}
    command = [str(SNAKEMAKE), "-n", "--profile", "local", "--configfile", CAMPAIGN,
               "--config", "analysis_only=True"]  # fmt: skip
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    listing.rename(tmp_path / "openmpi.json")
    try:
        done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                              timeout=300, check=False)  # fmt: skip
    finally:
        (tmp_path / "openmpi.json").rename(listing)
    assert done.returncode != 0
    assert "library_algorithms/openmpi.json is missing" in done.stdout + done.stderr
    assert not mark.exists()


def test_verify_target(project: Path) -> None:
    """After `tune` (test_tune_target): the campaign again, the chosen algorithms beside the
    library's choice in the entry's own launches, and where libmpiguide-tune replaces a
    collective the entry beside `<entry>.tuned` across launches; verify.md says which. What
    `tune` chose is the machine's to say: each outcome is checked for what it must give."""
    if not (project / "results" / "tune-example" / "tuning" / "openmpi.ompi-rules.conf").exists():
        test_tune_target(project)
    tuning = project / "results" / "tune-example" / "tuning"
    chosen = (pd.read_csv(tuning / "algorithms.csv")["verdict"] == "violated").any()
    mockup_rules = [
        line
        for line in (tuning / mockup_tuning_name("openmpi")).read_text().splitlines()
        if line.split("#", 1)[0].strip()
    ]
    args = ("--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)
    if not chosen and not mockup_rules:
        result = snakemake(project, "verify", *args, "--config", "verify=True", check=False)
        assert result.returncode != 0 and "nothing was tuned to verify" in result.stderr
        return
    snakemake(project, "verify", *args, "--config", "verify=True")
    verify = project / "results" / "tune-example-verify"
    entries = ["openmpi", *(["openmpi.applied"] if chosen else []),
               *(["openmpi.tuned"] if mockup_rules else [])]  # fmt: skip
    assert sorted(p.name for p in (verify / "raw").iterdir()) == entries
    assert sorted(p.name for p in (verify / "build").iterdir()) == ["openmpi"]
    note = (verify / "verify.md").read_text()
    checks = pd.read_csv(verify / "verify.csv")
    if chosen:
        assert "within one launch" in note
        assert (checks["verify_tests"] > 0).all()
        # Open MPI's rules file overrides a forced algorithm: the file's call (openmpi.applied)
        # meets the choice forced and the old default in `openmpi`'s launches
        comparisons = checks.groupby("check")["comparison"].agg(set).to_dict()
        assert comparisons["forced"] == {"within one launch"}
        assert (
            comparisons["file_runs_choice"]
            == comparisons["file_beats_default"]
            == {"across launches"}
        )
        assert "## The settings file `tune` wrote, applied" in note
        # each point's outcome in words, as its decision line says it
        for row in checks.itertuples():
            assert row.outcome in ("confirmed", "not confirmed", "cannot tell"), row
            choice = f"use {row.algorithm}" if pd.isna(row.rule_bytes) else row.algorithm
            assert choice in note and f"verify: {row.outcome} (" in note, row
    else:
        # only the mock-ups' rows, each a point one of the rules replaces
        assert "`tune` chose none of the library's algorithms." in note
        rows = set(checks["algorithm"]) if len(checks) else set()
        assert rows <= {line.split()[0] for line in mockup_rules}
    if mockup_rules:
        assert (verify / "verify" / "openmpi.md").read_text().startswith("# mpiguide diff")
