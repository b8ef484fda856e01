"""Process counts as the varied parameter: grouping, monotone series and checks across
deployments, on synthetic run medians."""

import numpy as np
import pandas as pd
import pytest

from config_support import check_config
from mpiguide.analysis.analysis_types import AnalysisOptions, Decisions
from mpiguide.analysis.catalogue import resolve
from mpiguide.analysis.guidelines import evaluate
from mpiguide.core.errors import ConfigError
from mpiguide.core.paths import group_plot_name
from mpiguide.reports.plots import plot

RUNS = 10
NODES = (16, 32, 64, 128, 256)


def medians_over_nodes(latency_us: dict[tuple[str, int], float], seed: int = 0) -> pd.DataFrame:
    """medians.parquet-like frame: one experiment per op at 1 MiB, one deployment per node
    count (1 process per node), RUNS run medians around the given latency."""
    rng = np.random.default_rng(seed)
    ops = sorted({op for op, _ in latency_us})
    frames = []
    for nodes in NODES:
        for run in range(RUNS):
            frame = pd.DataFrame(
                {
                    "exp_id": np.arange(len(ops)),
                    "op": ops,
                    "msg_size": 1 << 20,
                    "root": 0,
                    "mpi": "cray",
                    "nodes": nodes,
                    "ppn": 1,
                    "run": run,
                    "n_kept": 30,
                }
            )
            typical = np.array([latency_us[op, nodes] for op in ops]) * 1e-6
            frame["median_s"] = typical * np.exp(rng.normal(0, 0.01, len(ops)))
            frames.append(frame)
    medians = pd.concat(frames, ignore_index=True)
    medians["root"] = medians["root"].astype("Int64")
    for column in ("op", "mpi"):
        medians[column] = medians[column].astype("category")
    return medians


def gather_with_spike() -> pd.DataFrame:
    """Parker's Figure 12 shape: allgather grows steadily with the node count; gather grows too
    but spikes at 64 nodes (then falls back)."""
    latency = {("allgather", n): 100.0 * n for n in NODES}
    latency |= {("gather", n): 50.0 * n for n in NODES}
    latency["gather", 64] = 50.0 * 256
    return medians_over_nodes(latency)


def guideline(**entry):
    entry = {"source": "test", "text": "test", **entry}
    return resolve([{"id": "G", **entry}], {}, "test.yaml")[0]


@pytest.mark.parametrize("varied", ["nodes", "nprocs"])
def test_monotone_along_process_count_reports_the_spike_with_its_group(varied):
    mono = guideline(relation="monotone", select={})
    tests = evaluate(gather_with_spike(), [mono], AnalysisOptions.with_defaults(varied=varied), "t")
    assert len(tests) == 2 * (len(NODES) - 1)  # one series per op, neighbouring counts
    assert tests.groupby("op")["group"].nunique().tolist() == [1, 1]  # a series is a group
    violated = tests.loc[tests["violated"]]
    # the drop after the spike: gather at 64 nodes slower than at 128
    assert violated["op"].tolist() == ["gather"]
    assert violated["nodes"].tolist() == ["64|128"]
    assert violated[varied].tolist() == ["64|128"]


def test_comparison_along_nodes_groups_tests_of_every_deployment():
    le = guideline(relation="le", lhs={"op": "gather"}, rhs={"op": "allgather"})
    tests = evaluate(gather_with_spike(), [le], AnalysisOptions.with_defaults(varied="nodes"), "t")
    assert len(tests) == len(NODES)  # paired within each deployment only
    assert tests["nodes"].tolist() == [str(n) for n in NODES]
    assert tests["group"].nunique() == 1
    assert tests.loc[tests["violated"], "nodes"].tolist() == ["64"]


def test_nprocs_is_derived_from_nodes_and_ppn():
    mono = guideline(relation="monotone", select={})
    tests = evaluate(
        gather_with_spike(), [mono], AnalysisOptions.with_defaults(varied="nprocs"), "t"
    )
    columns = list(tests.columns)
    assert columns[columns.index("ppn") + 1] == "nprocs"


def test_overview_plot_along_nodes(tmp_path):
    medians = gather_with_spike()
    mono = guideline(relation="monotone", select={})
    options = AnalysisOptions.with_defaults(varied="nodes")
    tests = evaluate(medians, [mono], options, "t")
    tests.to_csv(tmp_path / "tests.csv", index=False)
    timings = medians.rename(columns={"median_s": "time_s"})
    timings.to_parquet(tmp_path / "timings.parquet")
    plot(tmp_path / "timings.parquet", tmp_path / "tests.csv", Decisions(options), tmp_path)
    names = [p.name for p in (tmp_path / "overview").iterdir()]
    assert names == [group_plot_name("G", 1, "violated")]  # gather


def campaign(deployments, varied):
    return {
        "campaign": "c",
        "mpi": {"openmpi": {"mpicc": "mpicc", "launcher": "mpirun", "srun": "srun", "env": {}}},
        "deployments": deployments,
        "experiments": [{"op": ["gather", "allgather"], "msg_size": [1024]}],
        "nrep": 10,
        "guidelines": [],
        "analysis": {"varied": varied},
        "models": [],
    }


def test_config_accepts_a_process_count_that_varies():
    config = campaign([{"nodes": 1, "ppn": 2}, {"nodes": 2, "ppn": 2}], "nprocs")
    check_config(config, {}, "c.yaml")


@pytest.mark.parametrize(
    ("deployments", "varied", "message"),
    [
        ([{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4}], "nodes",
         r"c\.yaml: analysis\.varied: 'nodes' takes one value only .*\(1\)"),
        ([{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4}, {"nodes": 2, "ppn": 2}], "nprocs",
         r"'nprocs' is ambiguous: deployments 1x4, 2x2 have the same number"),
    ],
)  # fmt: skip
def test_config_refuses_a_process_count_it_cannot_vary(deployments, varied, message):
    with pytest.raises(ConfigError, match=message):
        check_config(campaign(deployments, varied), {}, "c.yaml")
