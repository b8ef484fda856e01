"""The guidelines of an algorithm sweep on run medians: ALGO tests pair the library's choice with
each algorithm within the entry's launches (the paired test), and the campaign's other
guidelines pair a collective under every algorithm with a mock-up, which takes none."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.analysis.comparisons import PAIRED_T, RANKSUM, TEST_COLUMN
from mpiguide.analysis.guidelines import evaluate, evaluate_looks
from mpiguide.analysis.sequential import DECIDED, STOP, Looks
from mpiguide.campaign.expansion import with_algorithm_sweeps
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.tune.library_algorithms import Algorithm, AlgorithmSetting

RUNS = 10
RING = AlgorithmSetting("openmpi", "openmpi", "allreduce", Algorithm("ring", 4), False, 4, 0)
# exp_id -> (op, msg_size, algorithm; None: the library's choice or not applicable)
EXPERIMENTS = {
    0: ("allreduce", 8, None),
    1: ("allreduce", 8, "ring"),
    2: ("allreduce", 1024, None),
    3: ("allreduce", 1024, "ring"),
    4: ("allreduce_as_reduce_bcast", 8, None),
    5: ("allreduce_as_reduce_bcast", 1024, None),
}


def _medians(factor: dict[int, float], launch_spread: float, seed: int = 0) -> pd.DataFrame:
    """RUNS run medians per experiment of one entry, each run one launch: a launch's factor
    (spread `launch_spread`) multiplies every experiment of it, as on a shared machine."""
    rng = np.random.default_rng(seed)
    frames = []
    for run in range(RUNS):
        launch = np.exp(rng.normal(0, launch_spread))
        for exp_id, (op, size, algorithm) in EXPERIMENTS.items():
            time = 1e-3 * factor.get(exp_id, 1.0) * launch * np.exp(rng.normal(0, 0.005))
            frames.append(
                {"exp_id": exp_id, "mpi": "openmpi", "nodes": 1, "ppn": 2, "run": run,
                 "median_s": time, "n_kept": 30, "op": op, "msg_size": size,
                 "algorithm": algorithm}
            )  # fmt: skip
    medians = pd.DataFrame(frames)
    for column in ("op", "mpi", "algorithm"):
        medians[column] = medians[column].astype("category")
    return medians


def _guidelines() -> list:
    config = {
        "mpi": {"openmpi": {"library": "openmpi"}},
        "nrep": 10,
        "experiments": [{"op": ["allreduce", "allreduce_as_reduce_bcast"], "msg_size": [8, 1024]}],
        "guidelines": ["TGT-ALLREDUCE-AS-REDUCE-BCAST"],
    }
    expanded = with_algorithm_sweeps(config, [RING])
    catalogue = load_catalogue(GUIDELINE_CATALOGUE)
    return resolve(expanded["guidelines"], catalogue, "t.yaml")


def test_algo_tests_pair_the_librarys_choice_with_the_algorithm_in_the_same_launches() -> None:
    """A ring 20 % faster than the library's choice, under a launch-to-launch spread of 30 %: the
    paired test finds it at both sizes."""
    guidelines = _guidelines()
    tests = evaluate(
        _medians({1: 0.8, 3: 0.8}, launch_spread=0.3),
        guidelines,
        AnalysisOptions.with_defaults(),
        "t",
    )
    algo = tests[tests["guideline"] == "ALGO.openmpi.allreduce.ring"]
    assert sorted(zip(algo["lhs_exp_id"], algo["rhs_exp_id"], strict=True)) == [(0, 1), (2, 3)]
    assert set(algo[TEST_COLUMN]) == {PAIRED_T}
    assert set(algo["algorithm"]) == {"library-default|ring"}
    assert set(algo["verdict"]) == {"violated"}


def test_the_other_guidelines_are_evaluated_under_every_algorithm() -> None:
    """The mock-up takes no algorithm: it pairs with allreduce under the library's choice and
    under ring, per size."""
    tests = evaluate(_medians({}, 0.01), _guidelines(), AnalysisOptions.with_defaults(), "t")
    mockup = tests[tests["guideline"] == "TGT-ALLREDUCE-AS-REDUCE-BCAST"]
    pairs = sorted(zip(mockup["lhs_exp_id"], mockup["rhs_exp_id"], strict=True))
    assert pairs == [(0, 4), (1, 4), (2, 5), (3, 5)]
    assert sorted(mockup["algorithm"]) == ["library-default|"] * 2 + ["ring|"] * 2


def test_the_librarys_choice_pairs_only_with_itself() -> None:
    """Two entries compared on the same op: the library's choice of one with that of the other,
    ring with ring, never the library's choice with a forced algorithm (as an empty cell of a
    parameter that does not apply would)."""
    medians = pd.concat(
        [_medians({}, 0.01, seed=1), _medians({}, 0.01, seed=2).assign(mpi="other")]
    )
    medians["mpi"] = medians["mpi"].astype("category")
    lhs, rhs = {"mpi": "openmpi", "op": "allreduce"}, {"mpi": "other", "op": "allreduce"}
    entries = resolve(
        [{"id": "E", "source": "t", "text": "t", "relation": "le", "lhs": lhs, "rhs": rhs}],
        {},
        "t.yaml",
    )
    tests = evaluate(medians, entries, AnalysisOptions.with_defaults(), "t")
    assert sorted(zip(tests["lhs_exp_id"], tests["rhs_exp_id"], strict=True)) == [
        (0, 0), (1, 1), (2, 2), (3, 3),
    ]  # fmt: skip
    assert sorted(set(tests["algorithm"])) == ["library-default", "ring"]


def test_algo_tests_are_decided_by_analysis_tuning_whatever_the_campaigns_test() -> None:
    """A campaign decided as MPINPC decides (the rank-sum, v_thres 1.0): its own guidelines keep
    that test, while an ALGO test is the paired test at `analysis.tuning`'s levels, so a tie
    (ring as fast as the library's choice) holds to within its 3 % margin; at a margin of 1.0
    no tie can hold."""
    medians = _medians({}, launch_spread=0.3)
    campaign = {"test": "ranksum", "v_thres": 1.0}
    tests = evaluate(medians, _guidelines(), AnalysisOptions.with_defaults(**campaign), "t")
    algo = tests[tests["guideline"] == "ALGO.openmpi.allreduce.ring"]
    mockup = tests[tests["guideline"] == "TGT-ALLREDUCE-AS-REDUCE-BCAST"]
    assert set(algo[TEST_COLUMN]) == {PAIRED_T}
    assert set(algo["verdict"]) == {"holds"}
    assert set(mockup[TEST_COLUMN]) == {RANKSUM}
    no_margin = AnalysisOptions.with_defaults(**campaign, tuning={"v_thres": 1.0})
    tests = evaluate(medians, _guidelines(), no_margin, "t")
    algo = tests[tests["guideline"] == "ALGO.openmpi.allreduce.ring"]
    assert set(algo["verdict"]) == {"undecided"}


def test_adaptive_looks_spend_analysis_tuning_levels_for_algo_tests() -> None:
    """At planned looks an ALGO test is decided at `analysis.tuning`'s spent levels: a ring 20 %
    faster is violated at its first look whatever the campaign's v_thres (here 1.5, which no
    test of this data reaches), and the campaign's own guideline is decided at its own."""
    medians = _medians({1: 0.8, 3: 0.8}, launch_spread=0.3)
    options = AnalysisOptions.with_defaults(v_thres=1.5)
    tests = evaluate_looks(medians, _guidelines(), options, Looks.planned(5, RUNS, 5), "t")
    algo = tests[tests["guideline"] == "ALGO.openmpi.allreduce.ring"]
    assert set(algo["verdict"]) == {"violated"}
    assert set(algo[STOP]) == {DECIDED}
    mockup = tests[tests["guideline"] == "TGT-ALLREDUCE-AS-REDUCE-BCAST"]
    assert "violated" not in set(mockup["verdict"])


def test_analysis_tuning_is_checked_like_the_campaigns_thresholds() -> None:
    with pytest.raises(ConfigError, match=r"analysis\.tuning\.v_thres is 0\.9; allowed: a number"):
        AnalysisOptions.with_defaults(tuning={"v_thres": 0.9})
    with pytest.raises(ConfigError, match=r"analysis\.tuning\.test is not an option"):
        AnalysisOptions.with_defaults(tuning={"test": "paired"})
    options = AnalysisOptions.with_defaults(test="ranksum", tuning={"p_thres": 0.01})
    assert options.decided_by("analysis") is options
    decided_with = options.decided_by("analysis.tuning")
    assert (decided_with.test, decided_with.p_thres, decided_with.v_thres) == (
        "auto", 0.01, 1.03,
    )  # fmt: skip


def test_a_guideline_is_decided_by_its_decided_by_never_by_its_id() -> None:
    """The thresholds follow the guideline's `decided_by`: an ALGO-looking id without it is the
    campaign's, any other id with `decided_by: analysis.tuning` is decided as a tuning one."""
    medians = _medians({}, launch_spread=0.3)
    lhs = {"mpi": "openmpi", "op": "allreduce", "algorithm": "library-default"}
    rhs = {**lhs, "algorithm": "ring"}
    entry = {"source": "t", "text": "t", "relation": "le", "lhs": lhs, "rhs": rhs}
    guidelines = resolve(
        [
            {"id": "ALGO.looks.like.one", **entry},
            {"id": "MINE", **entry, "decided_by": "analysis.tuning"},
        ],
        {},
        "t.yaml",
    )
    options = AnalysisOptions.with_defaults(test="ranksum", v_thres=1.0)
    tests = evaluate(medians, guidelines, options, "t")
    assert set(tests.loc[tests["guideline"] == "ALGO.looks.like.one", TEST_COLUMN]) == {RANKSUM}
    assert set(tests.loc[tests["guideline"] == "MINE", TEST_COLUMN]) == {PAIRED_T}
    assert set(tests.loc[tests["guideline"] == "MINE", "verdict"]) == {"holds"}
