"""Measured runs are never replaced by an edit: nrep, the grid, the seed or a block's sync
changed after the tiny campaign was measured stop the workflow before any job runs, naming the
key, and leave every file as it was; `--config remeasure=True` moves the measured runs aside,
kept, and measures again."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workflow_project import (
    ANALYSIS_JOBS,
    TINY_CAMPAIGN,
    read_config,
    run_jobs,
    scheduled_jobs,
    snakemake,
)

pytestmark = pytest.mark.workflow

EditConfig = Callable[[Callable[[dict[str, Any]], None]], None]
RESULTS = Path("results") / TINY_CAMPAIGN["campaign"]
LOCAL = ("--profile", "profiles/local", "--cores", "2")


def files_below(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and modification time, by its path below `folder`."""
    return {
        path.relative_to(folder).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def measured_bytes(raw: Path) -> dict[str, bytes]:
    return {path: data for path, (data, _) in files_below(raw).items()}


CHANGES = [
    pytest.param(lambda c: c.update(nrep=6), "nrep 5 → 6", id="nrep"),
    pytest.param(
        lambda c: c["experiments"][0]["op"].append("ineighbor_allgather"),
        "experiments[0].op",
        id="an op added",
    ),
    pytest.param(lambda c: c.update(seed=8), "seed 7 → 8", id="seed"),
    pytest.param(
        lambda c: c["experiments"][0].update(sync="barrier"),
        'experiments[0].sync not set → "barrier"',
        id="sync",
    ),
]


@pytest.mark.parametrize(("change", "named"), CHANGES)
def test_a_changed_input_stops_before_any_job_and_keeps_every_file(
    campaign_copy: Path, edit_config: EditConfig, change: Callable[[dict], None], named: str
) -> None:
    before = files_below(campaign_copy / RESULTS)
    edit_config(change)
    for dry_run in (("-n",), ()):
        result = snakemake(campaign_copy, *LOCAL, *dry_run, check=False)
        output = result.stdout + result.stderr
        assert result.returncode != 0, output
        assert "campaign 'tiny' has 4 measured runs in results/tiny/raw/" in output
        assert named in output
        # the command to type again is the one typed, with remeasure=True in its --config
        typed = " ".join(["snakemake", *LOCAL, *dry_run, "--config", "remeasure=True"])
        assert f"\n        {typed}\n" in output and "a new name (`campaign:`" in output
        assert "Traceback" not in output
        # Stopped while the rules were read: no job, no log, no record rewritten.
        assert "Job stats" not in output and "localrule" not in output
        assert files_below(campaign_copy / RESULTS) == before


def test_remeasure_in_a_dry_run_lists_every_run_and_moves_nothing(
    campaign_copy: Path, edit_config: EditConfig
) -> None:
    before = files_below(campaign_copy / RESULTS)
    edit_config(lambda config: config.update(nrep=6))
    runs, mpi = TINY_CAMPAIGN["runs"], TINY_CAMPAIGN["mpi"]
    assert scheduled_jobs(campaign_copy, "--config", "remeasure=True") == {
        "grid": 1,
        "inputs": runs * len(mpi),
        **run_jobs(mpi, runs, TINY_CAMPAIGN["deployments"], TINY_CAMPAIGN["blocking"]),
        **ANALYSIS_JOBS,
        "options_record": 1,  # grid.json, once grid.csv is planned again
    }
    assert files_below(campaign_copy / RESULTS) == before


def test_remeasure_moves_the_measured_runs_aside_and_measures_again(
    campaign_copy: Path, edit_config: EditConfig
) -> None:
    results = campaign_copy / RESULTS
    raw, inputs = measured_bytes(results / "raw"), measured_bytes(results / "inputs")
    edit_config(lambda config: config.update(nrep=6))
    snakemake(campaign_copy, *LOCAL, "--config", "remeasure=True")

    (kept,) = (results / "superseded").iterdir()
    assert measured_bytes(kept / "raw") == raw
    assert measured_bytes(kept / "inputs") == inputs
    assert json.loads((kept / "options" / "grid.json").read_text())["nrep"] == 5
    assert (kept / "grid.csv").is_file() and (kept / "medians.parquet").is_file()
    assert set(measured_bytes(results / "raw")) == set(raw)
    for provenance in (results / "raw").glob("*/*/*.json"):
        # an interleaved experiment has an entry per chunk: its repetitions add up
        reps: dict[int, int] = {}
        for entry in json.loads(provenance.read_text())["experiments"]:
            reps[entry["exp_id"]] = reps.get(entry["exp_id"], 0) + entry["reps_done"]
        assert set(reps.values()) == {6}, provenance
    # Measured with the new options, the campaign is complete; the option has nothing to do.
    assert scheduled_jobs(campaign_copy) == {}
    assert scheduled_jobs(campaign_copy, "--config", "remeasure=True") == {}


def test_an_invocation_with_other_targets_records_what_it_plans_with(
    campaign_copy: Path, edit_config: EditConfig
) -> None:
    # Results without records (made before them, or options/ deleted), then an invocation that
    # never reaches the record jobs: what it plans, and so any run it measures, is recorded as
    # it starts, and an edit of the seed afterwards stops as above.
    results = campaign_copy / RESULTS
    shutil.rmtree(results / "options")
    (results / "grid.csv").unlink()
    snakemake(campaign_copy, *LOCAL, "--until", "grid")
    assert json.loads((results / "options" / "seed.json").read_text()) == TINY_CAMPAIGN["seed"]
    assert json.loads((results / "options" / "grid.json").read_text())["nrep"] == 5
    edit_config(lambda config: config.update(seed=8))
    result = snakemake(campaign_copy, *LOCAL, "-n", check=False)
    assert result.returncode != 0 and "seed 7 → 8" in result.stdout + result.stderr


def test_analysis_only_is_not_checked(campaign_copy: Path, edit_config: EditConfig) -> None:
    edit_config(lambda config: config.update(seed=8))
    planned = scheduled_jobs(campaign_copy, "--config", "analysis_only=True")
    assert planned["inputs"] == TINY_CAMPAIGN["runs"] * len(read_config(campaign_copy)["mpi"])
