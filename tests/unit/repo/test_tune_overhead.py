"""benchmarks/tune_overhead.py: a repetition's round from the kernel's provenance, the ratios
paired round by round, their interval and the goal's verdict (synthetic, no timing)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import tune_overhead  # noqa: E402  (found through the sys.path entry above)

IDS = {pair: exp_id for exp_id, pair in tune_overhead.experiments().items()}


def test_a_repetition_belongs_to_the_chunk_its_rep_falls_in(tmp_path: Path) -> None:
    # exp 0 in chunks of 3, 2, 2 reps, exp 1 of 2, 2, run in an order that is not rep order
    out = tmp_path / "out.csv"
    out.write_text(
        "exp_id,rep,time_s\n"
        + "".join(f"1,{rep},{rep}\n" for rep in (0, 1))
        + "".join(f"0,{rep},{rep}\n" for rep in (0, 1, 2))
        + "".join(f"1,{rep},{rep}\n" for rep in (2, 3))
        + "".join(f"0,{rep},{rep}\n" for rep in (3, 4, 5, 6))
    )
    chunks = [(1, 0, 0, 2), (0, 0, 0, 3), (1, 1, 2, 2), (0, 1, 3, 2), (0, 2, 5, 2)]
    out.with_suffix(".json").write_text(
        json.dumps(
            {
                "experiments": [
                    {"exp_id": e, "op": "x", "chunk": c, "first_rep": f, "reps_done": n}
                    for e, c, f, n in chunks
                ]
            }
        )
    )
    frame = tune_overhead.rounds(out).sort_values(["exp_id", "time_s"])
    assert list(frame.columns) == ["exp_id", "round", "time_s"]
    assert frame["round"].tolist() == [0, 0, 0, 1, 1, 2, 2, 0, 0, 1, 1]


def test_rounds_refuse_repetitions_the_provenance_does_not_count(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    out.write_text("exp_id,rep,time_s\n0,0,1\n0,1,1\n0,2,1\n")
    entries = [{"exp_id": 0, "chunk": c, "first_rep": c, "reps_done": 1} for c in (0, 1)]
    out.with_suffix(".json").write_text(json.dumps({"experiments": entries}))
    with pytest.raises(SystemExit, match="reps_done"):
        tune_overhead.rounds(out)


def repetitions(seconds: dict[str, np.ndarray], outlier: float = 1.0) -> pd.DataFrame:
    """One launch: at every size, per side and round three repetitions of that side's time in
    that round (`seconds`), the mock-up's first of every chunk `outlier` times slower."""
    rows = []
    for size in tune_overhead.SIZES:
        for side, times in seconds.items():
            slowest = outlier if side == "mockup" else 1.0
            for round_, time_s in enumerate(times):
                rows += [(IDS[(side, size)], round_, t) for t in (slowest * time_s, time_s, time_s)]
    return pd.DataFrame(rows, columns=["exp_id", "round", "time_s"])


def launches(*frames: pd.DataFrame) -> pd.DataFrame:
    return pd.concat(frames, keys=range(len(frames)), names=["launch"]).reset_index("launch")


def test_pairing_by_round_cancels_a_drift_the_sides_share() -> None:
    # tuned 5 % slower in every round, the machine 3x slower in the launch's second half, on
    # the sides' chunks of a round alike; one slow repetition per chunk the median ignores
    drift = 1e-6 * np.array([1.0, 1.0, 3.0, 3.0])
    first = {"tuned": 1.05 * drift, "mockup": drift, "null": drift}
    second = {side: 2 * times[::-1] for side, times in first.items()}
    ratios = tune_overhead.round_ratios(launches(repetitions(first, 50.0), repetitions(second)))
    assert ratios.index.names == ["size", "launch", "round"]
    assert len(ratios) == len(tune_overhead.SIZES) * 2 * len(drift)
    np.testing.assert_allclose(ratios["tuned"], 1.05)
    np.testing.assert_allclose(ratios["null"], 1.0)


def test_a_change_of_state_inside_a_round_moves_that_round_alone() -> None:
    # the machine turns 3x slower in round 2, after its tuned chunk and before its mock-up
    # chunk: each side's median over all its repetitions would give 1.05 / 3; the paired
    # ratios give 1.05 in every other round
    state = 1e-6 * np.array([1.0, 1.0, 1.0, 3.0, 3.0])
    seconds = {"tuned": 1.05 * state, "mockup": state.copy(), "null": state.copy()}
    seconds["mockup"][2] = seconds["null"][2] = 3e-6
    ratios = tune_overhead.round_ratios(launches(repetitions(seconds)))
    per_launch, _ = tune_overhead.paired(ratios.loc[8, "tuned"], np.random.default_rng(0))
    np.testing.assert_allclose(per_launch, [1.05])


def test_every_round_at_the_same_ratio_gives_that_ratio_and_a_point_interval() -> None:
    index = pd.MultiIndex.from_product([range(3), range(4)], names=["launch", "round"])
    per_launch, (low, high) = tune_overhead.paired(
        pd.Series(1.05, index=index), np.random.default_rng(0)
    )
    np.testing.assert_allclose(per_launch, [1.05, 1.05, 1.05])
    assert low == pytest.approx(1.05) and high == pytest.approx(1.05)


def test_each_launch_pools_its_rounds_by_their_median() -> None:
    ratios = [[1.0, 1.01, 1.5, 1.02], [0.9, 1.0, 1.0, 1.1]]
    index = pd.MultiIndex.from_product([range(2), range(4)], names=["launch", "round"])
    series = pd.Series(np.ravel(ratios), index=index)
    per_launch, (low, high) = tune_overhead.paired(series, np.random.default_rng(0))
    np.testing.assert_allclose(per_launch, [np.sqrt(1.01 * 1.02), 1.0])
    assert 0.9 <= low <= high <= 1.5


def test_launches_that_disagree_widen_the_interval() -> None:
    # rounds agree closely within each launch, the launches lie 10 % apart: drawing rounds
    # alone would give a narrow interval around 1.05, drawing launches first may not
    rng = np.random.default_rng(0)
    index = pd.MultiIndex.from_product([range(4), range(20)], names=["launch", "round"])
    level = np.repeat([1.0, 1.1, 1.0, 1.1], 20)
    series = pd.Series(level * np.exp(rng.normal(0, 0.001, 80)), index=index)
    _, (low, high) = tune_overhead.paired(series, np.random.default_rng(1))
    assert low < 1.01 and high > 1.09


@pytest.mark.parametrize(
    ("low", "high", "said"),
    [
        (0.99, 1.02, "≤ 1.02"),
        (1.0201, 1.05, "> 1.02"),
        (1.01, 1.03, "cannot tell"),
        (1.02, 1.021, "cannot tell"),
    ],
)
def test_the_verdict_claims_only_what_the_whole_interval_says(
    low: float, high: float, said: str
) -> None:
    assert tune_overhead.verdict(low, high) == said
