"""config/campaigns/tune-mockup-example.yaml, shrunk: from verdict to fix by mock-up, end to end.
A slowdown planted in MPI_Allreduce by libmpiguide-inject is detected (MK-T1-R10: Allreduce ≼
Reduce_scatter + Allgather violated), `tune` writes the libmpiguide-tune file that replaces the
collective there, and `verify` measures the entry with the library preloaded before the
injector: the violation is gone and none is new."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workflow_project import REPO, new_project, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.timing]

CAMPAIGN = "config/campaigns/tune-mockup-example.yaml"


def test_a_planted_slowdown_is_tuned_away(tmp_path: Path) -> None:
    config = yaml.safe_load((REPO / CAMPAIGN).read_text())
    # The planted slowdown doubles every MPI_Allreduce: a 20 % bar at p 0.05 finds it in 4 runs
    # and keeps two runs of the same mock-up from looking like a violation.
    config.update(runs=4, nrep=10)
    config["analysis"] = {"varied": "msg_size", "p_thres": 0.05, "v_thres": 1.2}
    project = new_project(tmp_path / "project", {})
    (project / CAMPAIGN).parent.mkdir(parents=True, exist_ok=True)
    (project / CAMPAIGN).write_text(yaml.safe_dump(config, sort_keys=False))
    args = ("--profile", "local", "--cores", "2", "--configfile", CAMPAIGN)

    snakemake(project, "tune", *args)
    rules = project / "results" / "tune-mockup-example" / "tuning" / "openmpi.tune"
    lines = [line for line in rules.read_text().splitlines() if not line.startswith("#")]
    # one rule up to 64 KiB (from 8 B too where 8 B was found violated as well)
    assert len(lines) == 1, lines
    assert lines[0].startswith("allreduce_as_reduce_scatter_allgather ranks=2 bytes="), lines
    assert lines[0].split("  #")[0].endswith("-65536"), lines

    snakemake(project, "verify", *args, "--config", "verify=True")
    verify = project / "results" / "tune-mockup-example-verify"
    logs = sorted((verify / "logs" / "run" / "openmpi.tuned").rglob("*.log"))
    assert logs and all(
        "mpiguide-tune: active:" in log.read_text()
        and "mpiguide-inject: active:" in log.read_text()
        for log in logs
    )
    note = (verify / "verify" / "openmpi.md").read_text()
    assert "2 tests matched: 0 new violation," in note, note
    assert "| msg_size=65536 | fixed | violated" in note, note
