"""What an adaptive campaign spent against the same campaign at a fixed `runs: max`, from
synthetic timings and tests."""

from __future__ import annotations

import pandas as pd
import pytest
from docutils.core import publish_parts

from mpiguide.analysis.sequential import Looks
from mpiguide.core.paths import CAMPAIGN_COST_CSV, COST_CSV, COST_RST
from mpiguide.reports.cost import ALL, campaign_cost, cost_rst, guideline_cost, write_cost

LOOKS = Looks.planned(2, 6, 2)


def timings() -> pd.DataFrame:
    """openmpi 1x2: experiment 0 (2 reps of 1 s) in runs 0-5, experiment 1 (2 reps of 3 s) in
    runs 0-1 only; mpich 1x2: experiment 0 (2 reps of 2 s) in runs 0-3."""
    rows = []
    for mpi, exp_id, rep_s, runs in (("openmpi", 0, 1.0, 6), ("openmpi", 1, 3.0, 2),
                                     ("mpich", 0, 2.0, 4)):  # fmt: skip
        key = {"mpi": mpi, "nodes": 1, "ppn": 2, "exp_id": exp_id, "time_s": rep_s}
        rows += [{**key, "run": run, "rep": rep} for run in range(runs) for rep in range(2)]
    return pd.DataFrame(rows)


def test_launches_and_kernel_time_against_a_fixed_campaign():
    cost = campaign_cost(timings(), LOOKS).set_index("mpi")
    openmpi = cost.loc["openmpi"]
    assert (openmpi["launches"], openmpi["launches_fixed"]) == (6, 6)
    # 6 runs of experiment 0 (2 s each) and 2 of experiment 1 (6 s each); at 6 runs both.
    assert (openmpi["kernel_s"], openmpi["kernel_fixed_s"]) == (24.0, 48.0)
    assert openmpi["kernel_share"] == 0.5
    mpich = cost.loc["mpich"]
    assert (mpich["launches"], mpich["kernel_s"], mpich["kernel_fixed_s"]) == (4, 16.0, 24.0)
    assert mpich["launches_share"] == pytest.approx(4 / 6)
    total = cost.loc[ALL]
    assert (total["launches"], total["launches_fixed"]) == (10, 12)
    assert (total["kernel_s"], total["kernel_fixed_s"]) == (40.0, 72.0)
    assert pd.isna(total["nodes"]) and pd.isna(total["ppn"])
    line = cost_rst(cost.reset_index(), LOOKS)
    assert "10 launches and 40 s of kernel time" in line
    assert "12 launches and an estimated 72 s" in line and "``runs: 6``" in line
    # The line is included on the report's front page (workflow/report/workflow.rst).
    html = publish_parts(line, writer="html")["body"]
    assert "System Message" not in html


def test_runs_used_per_guideline():
    tests = pd.DataFrame({"guideline": ["B", "B", "A"], "look_runs": [2, 6, 4]})
    cost = guideline_cost(tests, LOOKS).set_index("guideline")
    assert list(cost.index) == ["B", "A"]  # tests.csv's order
    assert cost.loc["B", ["tests", "runs_used", "runs_fixed", "mean_runs"]].tolist() == [
        2, 8, 12, 4,
    ]  # fmt: skip
    assert cost.loc["A", "runs_share"] == pytest.approx(4 / 6)


def test_write_cost_writes_the_three_files(tmp_path):
    timings().to_parquet(tmp_path / "timings.parquet")
    pd.DataFrame({"guideline": ["A"], "look_runs": [2], "stop": ["decided"]}).to_csv(
        tmp_path / "tests.csv", index=False
    )
    paths = write_cost(tmp_path / "timings.parquet", tmp_path / "tests.csv", LOOKS, tmp_path)
    assert [p.name for p in paths] == [COST_CSV, CAMPAIGN_COST_CSV, COST_RST]
    assert pd.read_csv(tmp_path / CAMPAIGN_COST_CSV)["mpi"].tolist() == ["mpich", "openmpi", ALL]
