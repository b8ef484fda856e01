"""Run-to-run variability on synthetic run medians: spread, slow runs, Figure 10 plots."""

import json

import numpy as np
import pandas as pd
import pytest

from config_support import check_config
from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import resolve
from mpiguide.analysis.guidelines import evaluate
from mpiguide.cli import main
from mpiguide.core.errors import ConfigError
from mpiguide.reports.variability import runs, spread

RUNS = 8
REPS = 5


def campaign_medians(slow_run: int | None = None, factor: float = 1.3) -> pd.DataFrame:
    """Two experiments (allgather; alltoall, ppn/2 times as slow as on 1x2) at 1 KiB on 1x2 and
    1x4; every experiment of run `slow_run` takes `factor` times as long (a congested launch);
    ±1 % noise elsewhere."""
    rng = np.random.default_rng(3)
    rows = []
    for ppn in (2, 4):
        for run in range(RUNS):
            for exp_id, (op, typical) in enumerate((("allgather", 1e-4), ("alltoall", ppn * 1e-4))):
                slow = factor if run == slow_run else 1.0
                median = typical * slow * (1 + rng.uniform(-0.01, 0.01))
                rows.append((exp_id, op, 1024, "openmpi", 1, ppn, run, median, REPS))
    columns = ["exp_id", "op", "msg_size", "mpi", "nodes", "ppn", "run", "median_s", "n_kept"]
    return pd.DataFrame(rows, columns=columns)


def test_spread_per_experiment():
    table = spread(campaign_medians(slow_run=5), band=0.1)
    assert len(table) == 4  # 2 experiments x 2 deployments
    assert (table["runs"] == RUNS).all()
    assert (table["runs_outside"] == 1).all()  # run 5 in every experiment
    allgather = table.loc[(table["exp_id"] == 0) & (table["ppn"] == 2)].iloc[0]
    assert allgather["max_s"] == pytest.approx(1.3e-4, rel=0.02)
    assert allgather["min_s"] == pytest.approx(0.99e-4, rel=0.01)
    assert allgather["median_of_medians_s"] == pytest.approx(1e-4, rel=0.01)
    values = np.array([1.0] * (RUNS - 1) + [1.3])
    assert allgather["cv"] == pytest.approx(values.std(ddof=1) / values.mean(), rel=0.1)


def test_a_slow_launch_is_flagged_as_a_whole_run():
    table = runs(campaign_medians(slow_run=5), band=0.1)
    assert len(table) == 2 * RUNS
    flagged = table.loc[table["flagged"]]
    assert flagged["run"].tolist() == [5, 5]
    assert flagged["run_ratio"].to_numpy() == pytest.approx(1.3, rel=0.02)
    assert (flagged["outside"] == 2).all()
    assert table["launch_factor"].isna().all()  # medians without the column


def test_launch_factor_is_carried_when_present():
    medians = campaign_medians().assign(launch_factor=lambda f: 1 + f["run"] / 100)
    table = runs(medians, band=0.1)
    assert table["launch_factor"].tolist() == [1 + r / 100 for r in range(RUNS)] * 2
    assert not table["flagged"].any()


def write_campaign(tmp_path, medians):
    medians.to_parquet(tmp_path / "medians.parquet")
    timings = medians.loc[medians.index.repeat(REPS)].rename(columns={"median_s": "time_s"})
    timings.to_parquet(tmp_path / "timings.parquet")
    le = resolve([{"id": "G", "source": "s", "text": "t", "relation": "le",
                   "lhs": {"op": "alltoall"}, "rhs": {"op": "allgather"}}], {}, "t")  # fmt: skip
    evaluate(medians, le, AnalysisOptions.with_defaults(varied="ppn"), "t").to_csv(
        tmp_path / "tests.csv"
    )


@pytest.mark.parametrize(
    ("analysis", "plots"),
    [
        # alltoall violates alltoall ≼ allgather, most (4x) on 1x4: both sides there
        ('{"varied": "ppn"}', ["openmpi-1x4-exp000000.png", "openmpi-1x4-exp000001.png"]),
        ('{"varied": "ppn", "variability": [{"nprocs": 2, "op": "allgather"}]}',
         ["openmpi-1x2-exp000000.png", "openmpi-1x4-exp000000.png",
          "openmpi-1x4-exp000001.png"]),
    ],
)  # fmt: skip
def test_command_plots_violated_and_selected_experiments(tmp_path, capsys, analysis, plots):
    write_campaign(tmp_path, campaign_medians(slow_run=2))
    decided_with = tmp_path / "decided_with.json"
    AnalysisOptions.from_mapping(json.loads(analysis), "t").write_record(decided_with, [], {})
    status = main(["variability", "--medians", str(tmp_path / "medians.parquet"),
                   "--timings", str(tmp_path / "timings.parquet"),
                   "--tests", str(tmp_path / "tests.csv"), "--decided-with", str(decided_with),
                   "--outdir", str(tmp_path / "variability")])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "variability" / "plots").iterdir()) == plots
    flagged = pd.read_csv(tmp_path / "variability" / "runs.csv").query("flagged")
    assert flagged["run"].tolist() == [2, 2]


@pytest.mark.parametrize(
    ("analysis", "message"),
    [({"variability": [{"colour": "red"}]}, r"analysis\.variability\[0\]\.colour: not a param"),
     ({"variability": {"op": "bcast"}}, r"analysis\.variability must be a list of selectors"),
     ({"run_band": 1.5}, r"analysis\.run_band is 1\.5; allowed: a number in \(0, 1\)")],
)  # fmt: skip
def test_bad_options_name_the_key(analysis, message):
    with pytest.raises(ConfigError, match=message):
        AnalysisOptions.from_mapping(analysis, "c.yaml")


@pytest.mark.parametrize(
    ("variability", "message"),
    [([{"op": "bcast"}], r"c\.yaml: analysis\.variability\[0\]\.op: 'bcast' is not in this camp"),
     ([{"nprocs": 8}], r"c\.yaml: analysis\.variability\[0\]\.nprocs: \['8'\] is not in this "
                       r"campaign \(its process counts: 2, 4\)"),
     ([{"op": "gather", "msg_size": 1024, "ppn": 4}], None)],
)  # fmt: skip
def test_config_checks_that_variability_selectors_match(variability, message):
    config = {
        "campaign": "c",
        "mpi": {"openmpi": {"mpicc": "mpicc", "launcher": "mpirun", "srun": "srun", "env": {}}},
        "deployments": [{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4}],
        "experiments": [{"op": ["gather", "allgather"], "msg_size": [1024, 4096]}],
        "nrep": 10,
        "guidelines": [],
        "analysis": {"varied": "msg_size", "variability": variability},
        "models": [],
    }
    if message is None:
        check_config(config, {}, "c.yaml")
    else:
        with pytest.raises(ConfigError, match=message):
            check_config(config, {}, "c.yaml")


def test_interference_is_correlated_with_the_launch_factor_per_deployment() -> None:
    from mpiguide.reports.variability import interference

    table = pd.DataFrame(
        {"nodes": 1, "ppn": 2, "launch_factor": [1.0, 1.2, 1.5, 0.9, 1.1],
         "load_before": [0.5, 2.0, 4.0, 0.1, 1.0], "other_cpu_fraction": 0.1,
         "steal_s": [0.0, float("nan"), 0.1, 0.0, 0.2]}
    )  # fmt: skip
    result = interference(table).set_index("measure")
    assert result.loc["load_before", "spearman"] == pytest.approx(1.0)
    assert result.loc["load_before", "runs"] == 5
    assert np.isnan(result.loc["other_cpu_fraction", "spearman"])  # constant
    assert result.loc["steal_s", "runs"] == 4
