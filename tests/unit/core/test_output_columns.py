"""The public column contracts of docs/analysis.md (and /work/shared's design), spelled out once
here; every other test imports the owners (mpiguide.core.columns, comparisons, tables). The grid's
parameters (grid.csv, and every table after `ppn`) are mpiguide.plan.grid's, held to the kernel and
the config schema in test_grid_parameters.py."""

from __future__ import annotations

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.guidelines import evaluate
from mpiguide.core.columns import MEDIAN_VALUES, RAW_COLUMNS, TIMING_KEYS
from mpiguide.plan.grid import COLUMNS, PARAMETERS
from synthetic import grid_frame


def test_kernel_output_timings_and_medians() -> None:
    assert RAW_COLUMNS == ("exp_id", "rep", "time_s")
    assert TIMING_KEYS == ("mpi", "nodes", "ppn", "run", "exp_id", "rep")
    assert MEDIAN_VALUES == (
        "median_s", "n_kept", "n_invalid", "launch_factor", "minor_faults_max",
        "minor_faults_sum", "major_faults_max", "major_faults_sum", "block", "block_attempt",
        "load_before", "other_cpu_fraction", "steal_s",
    )  # fmt: skip


def test_tests_csv() -> None:
    blank = dict.fromkeys(c for c in COLUMNS if c != "exp_id")
    grid = grid_frame([{**blank, "op": "allgather", "msg_size": 8, "nrep": 5}])
    # medians.parquet's order: exp_id, deployment, run, values, heap, then every parameter
    medians = grid.assign(mpi="openmpi", nodes=1, ppn=2, run=0, median_s=1e-5, n_kept=5,
                          n_invalid=0, launch_factor=1.0, minor_faults_max=0,
                          minor_faults_sum=0, major_faults_max=0, major_faults_sum=0,
                          block="", block_attempt=0, load_before=float("nan"),
                          other_cpu_fraction=float("nan"), steal_s=float("nan"),
                          heap="default")  # fmt: skip
    medians = medians[["exp_id", "mpi", "nodes", "ppn", "run", *MEDIAN_VALUES, "heap", *PARAMETERS]]
    tests = evaluate(medians, [], AnalysisOptions.with_defaults(), "c.yaml")
    assert list(tests.columns) == [
        "guideline", "relation", "mpi", "nodes", "ppn", "heap", *PARAMETERS, "group", "lhs_exp_id",
        "rhs_exp_id", "n_lhs", "n_rhs", "median_lhs", "median_rhs", "violation_ratio",
        "ratio_low", "ratio_high", "low_level", "high_level", "p_value", "p_adjusted", "test",
        "verdict", "violated",
        "group_verdict", "detectable_ratio", "runs_needed", "hl_ratio", "hl_low", "hl_high",
        "page_faults",
    ]  # fmt: skip
