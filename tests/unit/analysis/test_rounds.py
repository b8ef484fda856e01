"""Adaptive campaigns without Snakemake: tests decided at their looks from the runs measured so
far, and the plan of the next round naming only the experiments of open tests."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.guidelines import check, evaluate_looks, first_runs
from mpiguide.analysis.rounds import needed_experiments, plan_round, planned_exp_ids, round_runs
from mpiguide.analysis.sequential import DECIDED, LOOK_RUNS, OPEN, STOP, Looks
from mpiguide.core.errors import DataError
from unit.analysis.test_guidelines import GL4_LIKE, experiment, guideline

LOOKS = Looks.planned(5, 15, 5)
SIZES = (8, 64, 512)
# lhs/rhs per size: a twofold gap, an even ratio, and a 5 % slowdown too noisy for 5 runs.
FACTORS = {0: 2.0, 1: 1.0, 2: 1.05}
NOISE = {0: 0.01, 1: 0.002, 2: 0.03}


def rows() -> list[dict]:
    lhs = [experiment(i, "neighbor_allgather", size) for i, size in enumerate(SIZES)]
    rhs = [experiment(10 + i, "neighbor_alltoall", size) for i, size in enumerate(SIZES)]
    return lhs + rhs


def measure(exp_ids: list[int], runs: range, seed: int) -> pd.DataFrame:
    """Run medians of `exp_ids` in `runs`: lhs (exp_id < 10) FACTORS slower than rhs."""
    rng = np.random.default_rng(seed)
    grid = pd.DataFrame([row for row in rows() if row["exp_id"] in exp_ids])
    frames = []
    for run in runs:
        size = grid["exp_id"] % 10
        factor = np.where(grid["exp_id"] < 10, size.map(FACTORS), 1.0)
        noise = size.map(NOISE).to_numpy()
        frame = grid.assign(mpi="openmpi", nodes=1, ppn=2, run=run, n_kept=30)
        frame["median_s"] = 1e-3 * factor * np.exp(rng.normal(0, noise))
        frames.append(frame)
    medians = pd.concat(frames, ignore_index=True)
    for column in ("work", "ndim", "nfin", "radius", "reorder", "root"):
        medians[column] = medians[column].astype("Int64")
    return medians


def decide(medians: pd.DataFrame) -> pd.DataFrame:
    options = AnalysisOptions.with_defaults()
    return evaluate_looks(medians, [guideline(**GL4_LIKE)], options, LOOKS, "test")


def by_size(tests: pd.DataFrame) -> pd.DataFrame:
    return tests.set_index(tests["msg_size"].astype(int))


def test_rounds_measure_the_runs_between_looks():
    assert [list(round_runs(LOOKS, r)) for r in range(3)] == [
        [0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14],
    ]  # fmt: skip


def test_first_runs_keep_experiments_with_enough_runs():
    medians = pd.concat([measure([0, 10], range(5), 1), measure([0], range(5, 8), 2)])
    looked = first_runs(medians, 6)
    assert looked["exp_id"].unique().tolist() == [0]
    assert sorted(looked["run"]) == [0, 1, 2, 3, 4, 5]
    assert len(first_runs(medians, 5)) == 10


def test_clear_tests_stop_at_the_first_look_and_only_open_ones_are_measured_again():
    everything = [row["exp_id"] for row in rows()]
    first = measure(everything, round_runs(LOOKS, 0), 1)
    tests = by_size(decide(first))
    assert tests.loc[8, "verdict"] == "violated"
    assert tests.loc[64, "verdict"] == "holds"
    assert tests.loc[512, "verdict"] == "undecided"
    assert tests[STOP].tolist() == [DECIDED, DECIDED, OPEN]
    assert (tests[LOOK_RUNS] == 5).all()
    needs = needed_experiments(tests, ["openmpi"], blocking=False)
    assert needs == [{"mpi": "openmpi", "nodes": 1, "ppn": 2, "exp_ids": [2, 12]}]
    # The next round measures those two only; the decided tests keep their first look's rows.
    second = pd.concat([first, measure([2, 12], round_runs(LOOKS, 1), 2)], ignore_index=True)
    again = by_size(decide(second))
    assert again.loc[[8, 64], LOOK_RUNS].tolist() == [5, 5]
    assert again.loc[[8, 64], "verdict"].tolist() == ["violated", "holds"]
    assert again.loc[[8, 64], "n_lhs"].tolist() == [5, 5]
    assert again.loc[512, LOOK_RUNS] == 10
    assert again.loc[512, "n_lhs"] == 10


def test_each_look_decides_at_the_spent_levels():
    everything = [row["exp_id"] for row in rows()]
    medians = measure(everything, round_runs(LOOKS, 0), 1)
    tests = by_size(decide(medians))
    fixed = AnalysisOptions.with_defaults()
    # The upper bound of the even test is the one-sided bound at 1 - 0.05 / 3.
    lhs = medians[medians["exp_id"] == 1].sort_values("run")["median_s"].to_numpy()
    rhs = medians[medians["exp_id"] == 11].sort_values("run")["median_s"].to_numpy()
    d = np.log(lhs) - np.log(rhs)
    quantile = stats.t.ppf(1 - (1 - fixed.confidence) / LOOKS.count, d.size - 1)
    high = np.exp(d.mean() + quantile * d.std(ddof=1) / np.sqrt(d.size))
    assert tests.loc[64, "ratio_high"] == pytest.approx(high)


def test_under_blocking_every_entry_of_a_deployment_measures_its_needs():
    tests = pd.DataFrame(
        {
            "mpi": ["a|b", "a"], "nodes": ["1", "2"], "ppn": ["2", "2"],
            "lhs_exp_id": [3, 4], "rhs_exp_id": [3, 5], STOP: [OPEN, OPEN],
        }
    )  # fmt: skip
    assert needed_experiments(tests, ["a", "b"], blocking=False) == [
        {"mpi": "a", "nodes": 1, "ppn": 2, "exp_ids": [3]},
        {"mpi": "a", "nodes": 2, "ppn": 2, "exp_ids": [4, 5]},
        {"mpi": "b", "nodes": 1, "ppn": 2, "exp_ids": [3]},
    ]
    assert needed_experiments(tests, ["a", "b"], blocking=True) == [
        {"mpi": "a", "nodes": 1, "ppn": 2, "exp_ids": [3]},
        {"mpi": "a", "nodes": 2, "ppn": 2, "exp_ids": [4, 5]},
        {"mpi": "b", "nodes": 1, "ppn": 2, "exp_ids": [3]},
        {"mpi": "b", "nodes": 2, "ppn": 2, "exp_ids": [4, 5]},
    ]


def test_plan_round_writes_what_the_next_round_measures(tmp_path):
    everything = [row["exp_id"] for row in rows()]
    medians = tmp_path / "medians.parquet"
    measure(everything, round_runs(LOOKS, 0), 1).to_parquet(medians)
    out = tmp_path / "round00.json"
    options = AnalysisOptions.with_defaults()
    plan = plan_round(medians, [guideline(**GL4_LIKE)], options, LOOKS, 0, ["openmpi"], False, out)
    assert json.loads(out.read_text()) == plan
    assert plan["done"] is False
    assert plan["next_runs"] == [5, 10]
    assert plan["stops"][DECIDED] == 2
    assert planned_exp_ids(plan, "openmpi", 1, 2) == [2, 12]
    with pytest.raises(DataError, match="measures nothing of openmpi on 2x2"):
        planned_exp_ids(plan, "openmpi", 2, 2)
    last = plan_round(medians, [guideline(**GL4_LIKE)], options, LOOKS, 2, ["openmpi"], False, out)
    assert last["done"] is True and last["measure"] == []


def test_check_of_an_adaptive_campaign_writes_the_stop_columns(tmp_path):
    everything = [row["exp_id"] for row in rows()]
    medians = tmp_path / "medians.parquet"
    measure(everything, round_runs(LOOKS, 0), 1).to_parquet(medians)
    options = AnalysisOptions.with_defaults()
    tests = check(medians, [guideline(**GL4_LIKE)], options, tmp_path / "out", LOOKS)
    written = pd.read_csv(tmp_path / "out" / "tests.csv")
    assert written.columns[-2:].tolist() == [LOOK_RUNS, STOP]
    assert written[STOP].tolist() == tests[STOP].tolist()
    record = json.loads((tmp_path / "out" / "decided_with.json").read_text())
    assert record["looks"] == [5, 10, 15]
    looks = pd.read_csv(tmp_path / "out" / "looks.csv")
    assert looks.to_dict("records") == [
        {"guideline": "G", LOOK_RUNS: 5, "tests": 3, "violated": 1, "holds": 1, "futile": 0,
         "max_runs": 0, "open": 1},
    ]  # fmt: skip
