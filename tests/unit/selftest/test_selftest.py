"""The self-test's rates on synthetic run medians, where the truth is known: identical entries
are drawn from one distribution, slowed entries from one shifted by the planted fraction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.guidelines import evaluate_looks
from mpiguide.analysis.sequential import Looks
from mpiguide.core.errors import ConfigError, DataError
from mpiguide.plan.grid import COLUMNS
from mpiguide.selftest.inject import ANNOUNCEMENT, mpi_function, planted_fraction
from mpiguide.selftest.power import check_injection_logs, planted_guidelines, power_table, selftest
from synthetic import grid_frame

CLEAN: dict[str, Any] = {"mpicc": "mpicc", "launcher": "mpirun", "env": {}}
OPS = ("allreduce", "bcast", "alltoall")
SIZES = (8, 1024, 65536)


def slowed(fraction: float) -> dict[str, Any]:
    spec = ", ".join(f"MPI_{op.capitalize()}:fraction={fraction}" for op in OPS)
    return {**CLEAN, "env": {"LD_PRELOAD": "libmpiguide-inject.so", "MPIGUIDE_INJECT": spec}}


def guideline(
    name: str, lhs: str, rhs: str, lhs_op: str | None = None, rhs_op: str | None = None
) -> dict[str, Any]:
    return {
        "id": name,
        "source": "test",
        "text": name,
        "relation": "le",
        "lhs": {"mpi": lhs, **({"op": lhs_op} if lhs_op else {})},
        "rhs": {"mpi": rhs, **({"op": rhs_op} if rhs_op else {})},
    }


# Only MPI_Alltoall slowed: alltoall against bcast of the same launches is a planted 20 %.
ALLTOALL_SLOWED = {
    **CLEAN,
    "env": {
        "LD_PRELOAD": "libmpiguide-inject.so",
        "MPIGUIDE_INJECT": "MPI_Alltoall:fraction=0.2, MPI_Bcast:fraction=0",
    },
}


CONFIG: dict[str, Any] = {
    "campaign": "selftest",
    "seed": 3,
    "mpi": {
        "a": CLEAN,
        "b": CLEAN,
        "slow2": slowed(0.02),
        "slow20": slowed(0.20),
        "alltoall20": ALLTOALL_SLOWED,
    },
    "guidelines": [
        guideline("NULL-B-A", "b", "a"),
        guideline("NULL-A-B", "a", "b"),
        guideline("NULL-BCAST-ALLREDUCE", "a", "a", "bcast", "allreduce"),
        guideline("SLOW2", "slow2", "a"),
        guideline("SLOW20", "slow20", "a"),
        guideline("SLOW20-ALLTOALL-BCAST", "alltoall20", "alltoall20", "alltoall", "bcast"),
    ],
    "analysis": {"varied": "msg_size", "p_thres": 0.001, "v_thres": 1.03},
}
OPTIONS = AnalysisOptions.with_defaults()


def synthetic_medians(runs: int, seed: int = 0, launch_noise: float = 0.0) -> pd.DataFrame:
    """Run medians with 1 % lognormal noise around 10 µs x size factor, per operation slowed by
    its entry's planted fraction; with `launch_noise`, each run's medians share one lognormal
    factor of that spread (a fast or slow launch)."""
    rng = np.random.default_rng(seed)
    blank = dict.fromkeys(c for c in COLUMNS if c != "exp_id")
    grid = grid_frame(
        [
            {**blank, "op": op, "msg_size": size, "dtype": "char", "nrep": 40, "topology": "none"}
            for op in OPS
            for size in SIZES
        ]
    )
    frames = []
    for mpi, entry in CONFIG["mpi"].items():
        planted = {op: planted_fraction(mpi, entry, "test", mpi_function(op)) for op in OPS}
        factor = 1 + grid["op"].map(planted).to_numpy(dtype=float)
        for run in range(runs):
            typical = 1e-5 * (1 + np.log2(grid["msg_size"].to_numpy(dtype=float)))
            noise = rng.lognormal(0.0, 0.01, size=len(grid)) * rng.lognormal(0.0, launch_noise)
            frames.append(
                grid.assign(
                    mpi=mpi, nodes=1, ppn=2, run=run, median_s=typical * factor * noise, n_kept=40
                )
            )
    return pd.concat(frames, ignore_index=True)


def test_planted_guidelines_know_their_slowdown() -> None:
    planted = {p.guideline.id: p.slowdown for p in planted_guidelines(CONFIG, "c.yaml")}
    assert planted == {
        "NULL-B-A": 0.0,
        "NULL-A-B": 0.0,
        "NULL-BCAST-ALLREDUCE": 0.0,
        "SLOW2": 0.02,
        "SLOW20": 0.2,
        "SLOW20-ALLTOALL-BCAST": 0.2,
    }


@pytest.mark.parametrize(
    ("guidelines", "message"),
    [
        ([guideline("G", "slow2", "a")], "no null comparison"),
        ([guideline("N", "a", "b"), guideline("G", "a", "slow2")], "rhs entry 'slow2' is slowed"),
        ([guideline("N", "a", "b"), guideline("G", "a", "c")], "naming one mpi entry"),
        ([guideline("N", "a", "b"), "GL4"], "'GL4': a self-test compares mpi entries"),
        (
            [guideline("N", "a", "b"), {**guideline("G", "a", "b"), "lhs": {"op": "bcast"}}],
            "needs lhs: {mpi: NAME}",
        ),
        (
            [guideline("N", "a", "b"), guideline("G", "a", "alltoall20", "bcast", "alltoall")],
            "rhs entry 'alltoall20' is slowed",
        ),
        (
            [guideline("N", "a", "b"), guideline("G", "alltoall20", "a")],
            "plants different fractions",
        ),
    ],
)
def test_planted_guidelines_refuse_what_is_not_a_self_test(
    guidelines: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        planted_guidelines({**CONFIG, "guidelines": guidelines}, "c.yaml")


def test_power_table_separates_null_from_planted_slowdowns() -> None:
    table = power_table(
        synthetic_medians(runs=12),
        planted_guidelines(CONFIG, "c"),
        OPTIONS,
        run_counts=(5, 10, 20),
        resamples=8,
    )
    overall = table[table["op"] == "all"].set_index(["launches", "test", "slowdown_pct", "runs"])
    # 20 runs were not measured; 10 of 12 are resampled.
    assert sorted(overall.index.get_level_values("runs").unique()) == [5, 10]
    assert set(overall.index.get_level_values("test")) == {"auto", "ranksum"}
    assert (overall["resamples"] == 8).all()
    rates = ["holds_test_rate", "undecided_test_rate", "holds_group_rate", "undecided_group_rate"]
    assert ((overall[rates] >= 0) & (overall[rates] <= 1)).all().all()
    # a test is violated, holds or undecided: the shares add up
    shares = overall["flagged_test_rate"] + overall["holds_test_rate"]
    assert (shares + overall["undecided_test_rate"]).to_numpy() == pytest.approx(1.0)
    for test in ("auto", "ranksum"):
        across = overall.loc[("different", test)]
        assert across.loc[(0.0, 10), "flagged_test_rate"] == 0.0
        assert across.loc[(0.0, 10), "tests"] == 2 * len(OPS) * len(SIZES)
        # 2 % is below v_thres 1.03: never a verdict, however clear the shift.
        assert across.loc[(2.0, 10), "detected_group_rate"] == 0.0
        assert across.loc[(2.0, 10), "significant_test_rate"] > 0.0
        assert across.loc[(20.0, 10), "detected_group_rate"] == 1.0
        # a planted 20 % is never cleared: no false all-clear
        assert across.loc[(20.0, 10), "holds_test_rate"] == 0.0
        assert across.loc[(20.0, 10), "groups"] == len(OPS)
        assert across.loc[(20.0, 10), "guidelines"] == "SLOW20"
        within = overall.loc[("same", test)]
        assert within.loc[(0.0, 10), "flagged_test_rate"] == 0.0
        assert within.loc[(20.0, 10), "detected_group_rate"] == 1.0
        assert within.loc[(20.0, 10), "guidelines"] == "SLOW20-ALLTOALL-BCAST"
    per_op = table[(table["op"] != "all") & (table["runs"] == 10)]
    assert set(per_op["op"]) == set(OPS)


def test_paired_test_sees_within_a_launch_what_launch_noise_hides_from_the_rank_sum() -> None:
    # launches vary by 30 %, experiments within a launch by 1 %: a planted 20 % between two
    # operations of the same launches is plain run by run, and drowned across runs
    table = power_table(
        synthetic_medians(runs=10, launch_noise=0.3),
        planted_guidelines(CONFIG, "c"),
        OPTIONS,
        run_counts=(10,),
    )
    overall = table[table["op"] == "all"].set_index(["launches", "test", "slowdown_pct"])
    assert overall.loc[("same", "auto", 20.0), "detected_group_rate"] == 1.0
    assert overall.loc[("same", "ranksum", 20.0), "detected_group_rate"] < 0.5
    assert overall.loc[("same", "auto", 0.0), "flagged_test_rate"] == 0.0
    # the null within a launch, measured to 1 %: the paired test clears most of it
    assert overall.loc[("same", "auto", 0.0), "holds_test_rate"] > 0.5


def test_power_table_corrects_within_each_draw() -> None:
    """Fully separated 10 vs 10 runs give p = 9.1e-5 per test; Holm over one draw's 9 tests of
    a guideline gives 8.2e-4 <= 0.001, a detection. Over 4 draws stacked into one family it
    would give 3.3e-3: nothing detected."""
    table = power_table(
        synthetic_medians(runs=12),
        planted_guidelines(CONFIG, "c"),
        AnalysisOptions.with_defaults(correction="holm"),
        run_counts=(10,),
        resamples=4,
    )
    overall = table[table["op"] == "all"].set_index(["launches", "test", "slowdown_pct"])
    assert overall.loc[("different", "ranksum", 20.0), "detected_group_rate"] == 1.0
    assert overall.loc[("different", "ranksum", 0.0), "flagged_test_rate"] == 0.0


def test_power_table_at_the_measured_runs_is_the_campaign_verdict() -> None:
    table = power_table(
        synthetic_medians(runs=5), planted_guidelines(CONFIG, "c"), OPTIONS, resamples=20
    )
    assert set(table["runs"]) == {5}
    assert (table["resamples"] == 1).all()


def test_power_table_needs_enough_runs() -> None:
    with pytest.raises(DataError, match="measured 3 runs per entry"):
        power_table(synthetic_medians(runs=3), planted_guidelines(CONFIG, "c"), OPTIONS)


def write_logs(root: Path, medians: pd.DataFrame, announced: set[str]) -> Path:
    for mpi, run in medians[["mpi", "run"]].drop_duplicates().itertuples(index=False):
        log = root / mpi / "1x2" / f"run{run:02d}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(
            f"{ANNOUNCEMENT} MPI_Bcast +10% of its duration\n" if mpi in announced else ""
        )
    return root


def test_injection_logs_prove_every_slowed_run(tmp_path: Path) -> None:
    medians = synthetic_medians(runs=2)
    logs = write_logs(tmp_path, medians, {"slow2", "slow20", "alltoall20"})
    check_injection_logs(CONFIG, medians, logs, "c")

    (logs / "slow20" / "1x2" / "run01.log").write_text("ERROR: ld.so: object cannot be preloaded")
    with pytest.raises(
        DataError, match=r"slow20/1x2/run01.log: mpi entry 'slow20' sets MPIGUIDE_INJECT"
    ):
        check_injection_logs(CONFIG, medians, logs, "c")


def test_injection_logs_catch_a_leak_into_a_clean_entry(tmp_path: Path) -> None:
    medians = synthetic_medians(runs=1)
    logs = write_logs(tmp_path, medians, {"slow2", "slow20", "alltoall20", "b"})
    with pytest.raises(DataError, match="active in clean entry 'b'"):
        check_injection_logs(CONFIG, medians, logs, "c")


def test_selftest_writes_table_plot_and_markdown(tmp_path: Path) -> None:
    medians = synthetic_medians(runs=5)
    medians.to_parquet(tmp_path / "medians.parquet")
    logs = write_logs(tmp_path / "logs", medians, {"slow2", "slow20", "alltoall20"})
    csv, plot = tmp_path / "selftest.csv", tmp_path / "selftest.png"
    markdown = tmp_path / "selftest.md"

    options = AnalysisOptions.from_mapping(CONFIG["analysis"], "c")
    selftest(CONFIG, options, tmp_path / "medians.parquet", logs, csv, plot, markdown, resamples=5)

    written = pd.read_csv(csv)
    assert list(written.columns[:5]) == ["slowdown_pct", "launches", "test", "op", "runs"]
    assert set(written["slowdown_pct"]) == {0.0, 2.0, 20.0}
    assert plot.read_bytes().startswith(b"\x89PNG")
    lines = markdown.read_text().splitlines()
    assert "**Within a launch, `analysis.test: auto`** — tests violated / holds / undecided, %" \
        " (groups violated, %):" in lines  # fmt: skip
    assert "| planted | 5 runs |" in lines
    null = next(line for line in lines if line.startswith("| 0 % (null) |"))
    shares = [float(x) for x in null.split("|")[2].split("(")[0].split("/")]
    assert sum(shares) == pytest.approx(100.0, abs=0.2)
    assert sorted(p.name for p in tmp_path.iterdir() if "tmp" in p.name) == []


def test_an_adaptive_self_test_reports_its_own_decisions(tmp_path: Path) -> None:
    # The planted 20 % across launches is decided at the first look: as the rounds of an
    # adaptive campaign would, its slowed entry is not measured again.
    adaptive = {**CONFIG, "runs": {"min": 5, "max": 10, "step": 5}}
    measured = synthetic_medians(runs=10, seed=4)
    first = evaluate_looks(
        measured[measured["run"] < 5],
        [p.guideline for p in planted_guidelines(adaptive, "c")],
        OPTIONS,
        Looks.of(adaptive["runs"]),
        "c",
    )
    assert set(first.loc[first["guideline"] == "SLOW20", "stop"]) == {"decided"}
    medians = measured[(measured["run"] < 5) | (measured["mpi"] != "slow20")]
    medians.to_parquet(tmp_path / "medians.parquet")
    logs = write_logs(tmp_path / "logs", medians, {"slow2", "slow20", "alltoall20"})
    csv, plot, markdown = tmp_path / "s.csv", tmp_path / "s.png", tmp_path / "s.md"

    options = AnalysisOptions.from_mapping(adaptive["analysis"], "c")
    table = selftest(adaptive, options, tmp_path / "medians.parquet", logs, csv, plot, markdown)

    assert (table["runs"] == 10).all() and (table["resamples"] == 1).all()
    assert set(table["test"]) == {"auto"}  # the test the rounds were measured for
    assert set(table["looks"]) == {"5 10"}
    assert table["runs_used"].between(5, 10).all()
    overall = table[table["op"] == "all"].set_index(["launches", "slowdown_pct"])
    assert (overall.loc[(slice(None), 0.0), "flagged_test_rate"] == 0).all()
    assert overall.loc[("different", 20.0), "detected_group_rate"] == 1.0
    assert overall.loc[("different", 20.0), "runs_used"] == 5.0  # decided at the first look
    assert ((overall["futile_test_rate"] >= 0) & (overall["futile_test_rate"] <= 1)).all()
    lines = markdown.read_text().splitlines()
    assert any(line.startswith("| planted | adaptive, looks at 5, 10 runs (stopped at ")
               for line in lines), lines  # fmt: skip
    assert list(pd.read_csv(csv).columns[-3:]) == ["futile_test_rate", "runs_used", "looks"]


def test_a_fixed_self_test_used_its_runs_and_stopped_nothing_as_futile() -> None:
    table = power_table(
        synthetic_medians(runs=6), planted_guidelines(CONFIG, "c"), OPTIONS, run_counts=(5, 6),
        resamples=3,
    )  # fmt: skip
    assert (table["runs_used"] == table["runs"]).all()
    assert (table["looks"] == table["runs"].astype(str)).all()
    assert (table["futile_test_rate"] == 0).all()


def test_selftest_refuses_medians_of_another_campaign(tmp_path: Path) -> None:
    medians = synthetic_medians(runs=5)
    logs = write_logs(tmp_path, medians, {"slow2", "slow20", "alltoall20"})
    with pytest.raises(DataError, match=r"entries \['other'\] that c does not define"):
        check_injection_logs(CONFIG, medians.replace({"mpi": {"b": "other"}}), logs, "c")
    with pytest.raises(DataError, match=r"no runs of mpi entries \['slow20'\]"):
        power_table(medians[medians["mpi"] != "slow20"], planted_guidelines(CONFIG, "c"), OPTIONS)
