"""A campaign with `interleave: 3` through the workflow: the inputs hold a row per chunk, and
aggregation gives every experiment of every run all its repetitions and a median."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import pandas as pd
import pytest

from workflow_project import N_EXPERIMENTS, TINY_CAMPAIGN, new_project, snakemake

pytestmark = pytest.mark.workflow

NREP = 7  # in chunks of 3, 2, 2


def test_an_interleaved_campaign_aggregates_every_repetition(tmp_path: Path) -> None:
    config = copy.deepcopy(TINY_CAMPAIGN)
    config["nrep"] = NREP
    config["experiments"][0]["interleave"] = 3
    project = new_project(tmp_path / "project", config)
    results = project / "results" / config["campaign"]
    snakemake(project, "--profile", "profiles/local", "--cores", "2",
              f"results/{config['campaign']}/medians.parquet")  # fmt: skip
    runs = len(config["mpi"]) * config["runs"]
    inputs = sorted((results / "inputs").glob("*/*/run*.csv"))
    assert len(inputs) == runs
    for input_csv in inputs:
        with input_csv.open(newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 3 * N_EXPERIMENTS
        assert sorted(row["chunk"] for row in rows) == sorted(["0", "1", "2"] * N_EXPERIMENTS)
    timings = pd.read_parquet(results / "timings.parquet")
    per_experiment = timings.groupby(["mpi", "run", "exp_id"], observed=True)["rep"]
    assert (per_experiment.nunique() == NREP).all() and (per_experiment.max() == NREP - 1).all()
    medians = pd.read_parquet(results / "medians.parquet")
    assert len(medians) == N_EXPERIMENTS * runs
    assert (medians["n_kept"] + medians["n_invalid"] <= NREP).all()
    assert (medians["n_kept"] >= NREP // 2).all() and set(medians["interleave"]) == {3}
