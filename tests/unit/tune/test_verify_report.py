"""`mpiguide verify-report`: per point `tune` chose an algorithm for, the verify campaign's
within-launch ALGO tests of it; per point a libmpiguide-tune rule was measured at, the
within-launch TUNE tests of the replaced call against the library's own; one decision line per
point says whether the new runs confirm the gain, never with a verdict word whose meaning flips
with the guideline's direction."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mpiguide.analysis.verdicts import Thresholds
from mpiguide.tune.mockup_rules import Replacement, tuning_file
from mpiguide.tune.verify_report import (
    ACROSS,
    FILE_BEATS,
    FILE_RUNS,
    FORCED,
    MOCKUP,
    WITHIN,
    point_outcome,
    speedups,
    write_verify_report,
)
from mpiguide.tune.words import CANNOT_TELL, CONFIRMED, NOT_CONFIRMED, NOT_MEASURED, TIMES

FIGURE5 = (
    "mpi,library,op,nodes,ppn,msg_size,algorithm,number,median_s,default_median_s,speedup,"
    "speedup_low,speedup_high,low_level,high_level,verdict\n"
    "openmpi,openmpi,allreduce,1,2,8,ring,4,1e-5,2e-5,2.0,1.5,2.5,0.999,0.95,violated\n"
    "openmpi,openmpi,allreduce,1,2,1024,ring,4,1e-5,1e-5,1.0,0.9,1.1,0.999,0.95,holds\n"
    "openmpi,openmpi,scan,1,2,8,linear,1,1e-5,1.3e-5,1.3,1.1,1.5,0.999,0.95,violated\n"
)
THRESHOLDS = Thresholds(0.001, 1.03, 0.95)


def _verify_tests(path: Path) -> Path:
    rows = [
        ("ALGO.openmpi.allreduce.ring", "8", "1.8", "1.4", "2.2", "violated"),
        ("ALGO.openmpi.allreduce.ring", "1024", "1.0", "0.9", "1.1", "holds"),
        # the settings file applied: ring forced is 1.3 times the file's call (approx violated:
        # the file does not run ring), and the file's call beats the old default
        ("APPLIED.openmpi.allreduce.ring", "8", "1.3", "1.2", "1.4", "violated"),
        ("APPLIED.openmpi.allreduce", "8", "1.7", "1.3", "2.1", "violated"),
        ("TGT-ALLREDUCE-AS-REDUCE-BCAST", "8", "1.5", "1.2", "1.8", "violated"),
        # the replaced call over the library's own: 0.5 at 64 B (twice as fast), 0.8 and 0.9
        # at 1024 B (the smaller speedup, 1/0.9, is the row's)
        ("TUNE.openmpi.allreduce", "64", "0.5", "0.4", "0.625", "holds"),
        ("TUNE.openmpi.allreduce", "1024", "0.8", "0.5", "1", "holds"),
        ("TUNE.openmpi.allreduce", "1024", "0.9", "0.8", "1.25", "undecided"),
    ]
    frame = pd.DataFrame(
        [
            {"guideline": g, "relation": "le", "mpi": "openmpi", "nodes": "1", "ppn": "2",
             "op": "allreduce", "msg_size": size, "algorithm": "|ring", "group": "0",
             "violation_ratio": ratio, "ratio_low": low, "ratio_high": high,
             "low_level": "0.999", "high_level": "0.95", "test": "paired_t", "verdict": verdict}
            for g, size, ratio, low, high, verdict in rows
        ]
    )  # fmt: skip
    frame.to_csv(path, index=False)
    return path


RULE = Replacement(
    "openmpi", "allreduce", "allreduce_as_reduce_bcast", 2, 64, 4096, (64, 1024, 4096),
    1.6, 1.3, 2.0,
)  # fmt: skip


def _tuning(tmp_path: Path) -> Path:
    tuned = tmp_path / "algorithms.csv"
    tuned.write_text(FIGURE5)
    (tmp_path / "openmpi.tune").write_text(
        tuning_file("openmpi", [RULE]) + "bcast_as_allgatherv ranks=2 bytes=8\n"
    )
    return tuned


def _decided(tmp_path: Path) -> Path:
    path = tmp_path / "decided_with.json"
    path.write_text(json.dumps({"analysis": {"tuning": {"p_thres": 0.001, "v_thres": 1.03}}}))
    return path


def test_each_tuned_point_with_its_within_launch_test_and_the_across_launch_pairs(
    tmp_path: Path,
) -> None:
    tuned = _tuning(tmp_path)
    md, csv = tmp_path / "verify.md", tmp_path / "verify.csv"
    checks = write_verify_report(
        _verify_tests(tmp_path / "tests.csv"), _decided(tmp_path), tuned,
        [("openmpi", "openmpi.tuned")], md, csv,
    )  # fmt: skip
    # ring was chosen at 8 B only; scan's linear was chosen but not re-measured (no test); the
    # mock-up's rule was measured at 64, 1024 and 4096 B, of which 4096 B has no test now
    # each chosen point thrice: forced, the settings file running it, the file against the old
    # default (Open MPI: across launches, its rules file overrides a forced algorithm)
    shown = ["check", "comparison", "op", "msg_size", "algorithm", "verify_tests", "outcome"]
    assert checks[shown].values.tolist() == [
        [FORCED, WITHIN, "allreduce", "8", "ring", 1, CONFIRMED],
        [FILE_RUNS, ACROSS, "allreduce", "8", "ring", 1, NOT_CONFIRMED],
        [FILE_BEATS, ACROSS, "allreduce", "8", "ring", 1, CONFIRMED],
        [FORCED, WITHIN, "scan", "8", "linear", 0, NOT_MEASURED],
        [FILE_RUNS, ACROSS, "scan", "8", "linear", 0, NOT_MEASURED],
        [FILE_BEATS, ACROSS, "scan", "8", "linear", 0, NOT_MEASURED],
        [MOCKUP, WITHIN, "allreduce", "64", "allreduce_as_reduce_bcast", 1, CONFIRMED],
        [MOCKUP, WITHIN, "allreduce", "1024", "allreduce_as_reduce_bcast", 2, CANNOT_TELL],
        [MOCKUP, WITHIN, "allreduce", "4096", "allreduce_as_reduce_bcast", 0, NOT_MEASURED],
    ]
    assert checks.iloc[0]["verify_verdicts"] == "violated"
    assert float(checks.iloc[0]["verify_speedup"]) == 1.8
    assert float(checks.iloc[2]["verify_speedup"]) == 1.7
    # the TUNE test's ratio is the replaced call over the library's own: inverted, its
    # t-interval mirrored about it at the same levels (the lower bound at the violation level)
    mockup = checks.iloc[6]
    assert (mockup["verify_speedup"], mockup["verify_low"], mockup["verify_high"]) == (
        pytest.approx(2.0), pytest.approx(0.4 / 0.25), pytest.approx(0.625 / 0.25),
    )  # fmt: skip
    assert (mockup["verify_low_level"], mockup["verify_high_level"]) == (0.999, 0.95)
    assert (mockup["tuned_speedup"], mockup["tuned_low"], mockup["tuned_high"]) == (1.6, 1.3, 2.0)
    assert mockup["rule_bytes"] == "64-4096"
    smallest = checks.iloc[7]
    assert smallest["verify_speedup"] == pytest.approx(1 / 0.9)
    assert smallest["verify_verdicts"] == "holds undecided"
    assert pd.read_csv(csv).shape[0] == 9
    note = md.read_text()
    x = TIMES
    # the answer first: one line per point, in words
    lines = note.split("\n\n")[2].splitlines()
    assert lines == [
        f"- openmpi allreduce, 2 ranks, 8 B: use ring (2{x} faster [1.5, 2.5]) — verify: "
        "confirmed (1.8 [1.4, 2.2])",
        "- openmpi allreduce, 2 ranks, 8 B: its settings file applied runs ring (across "
        "launches) — verify: not confirmed (1.3 [1.2, 1.4])",
        "- openmpi allreduce, 2 ranks, 8 B: its settings file applied beats the old default "
        "(across launches) — verify: confirmed (1.7 [1.3, 2.1])",
        f"- openmpi scan, 2 ranks, 8 B: use linear (1.3{x} faster [1.1, 1.5]) — verify: not "
        "measured (no test at this point)",
        "- openmpi scan, 2 ranks, 8 B: its settings file applied runs linear (across "
        "launches) — verify: not measured (no test at this point)",
        "- openmpi scan, 2 ranks, 8 B: its settings file applied beats the old default "
        "(across launches) — verify: not measured (no test at this point)",
        "- openmpi allreduce, 2 ranks, 64 B: replace by the mock-up allreduce_as_reduce_bcast "
        f"(its rule for 64 B to 4 KiB: 1.6{x} faster [1.3, 2]) — verify: confirmed (2 [1.6, 2.5])",
        "- openmpi allreduce, 2 ranks, 1 KiB: replace by the mock-up allreduce_as_reduce_bcast "
        f"(its rule for 64 B to 4 KiB: 1.6{x} faster [1.3, 2]) — verify: cannot tell "
        "(1.11 [0.988, 1.54])",
        "- openmpi allreduce, 2 ranks, 4 KiB: replace by the mock-up allreduce_as_reduce_bcast "
        f"(its rule for 64 B to 4 KiB: 1.6{x} faster [1.3, 2]) — verify: not measured (no test "
        "at this point)",
    ]
    # the intro: one sentence, the levels of every interval shown, the method linked
    intro = note.split("\n\n")[1]
    assert intro.count(". ") == 0 and intro.endswith(".")
    assert "[lower bound one-sided at 99.9 %, upper at 95 %]" in intro
    assert "(../../docs/tuning.md#verify)" in intro
    assert f"{NOT_CONFIRMED} (not 1.03{x} faster now, or slower)" in intro
    # no verdict word stands for an outcome
    for word in ("violated", "holds", "undecided"):
        assert word not in note
    assert f"## The library's algorithms `tune` chose: {WITHIN}" in note
    assert f"## libmpiguide-tune's mock-ups: {WITHIN}" in note
    assert f"## Everything else under libmpiguide-tune: {ACROSS}" in note
    assert "not the verdict on a replaced collective" in note
    assert "the groups `algorithm=untuned|` compare the library's own call" in note
    assert "speedup now (least over its tests)" in note
    assert (
        "| openmpi | allreduce | 2 | 8 | ring | 2 [1.5, 2.5] | 1.8 [1.4, 2.2] | 1 | confirmed |"
        in (note)
    )
    assert (
        "| openmpi | scan | 2 | 8 | linear | 1.3 [1.1, 1.5] | not measured | 0 | not measured |"
        in (note)
    )
    assert (
        "| openmpi | allreduce | 2 | 64 | allreduce_as_reduce_bcast | 1.6 [1.3, 2] | "
        "2 [1.6, 2.5] | 1 | confirmed |"
    ) in note
    # a rule written by hand has no measured points: named, not silently left out
    assert "`openmpi.tune: bcast_as_allgatherv ranks=2 bytes=8`" in note
    assert "[verify/openmpi.md](verify/openmpi.md)" in note
    assert "not measured" not in note.split("## The library's algorithms")[1].split("|")[0]
    assert "## The settings file `tune` wrote, applied" in note
    assert (
        f"| {FILE_RUNS} | {ACROSS} | openmpi | allreduce | 2 | 8 | ring | 2 [1.5, 2.5] | "
        "1.3 [1.2, 1.4] | 1 | not confirmed |"
    ) in note


def test_without_a_tuned_entry_there_is_no_across_launch_section(tmp_path: Path) -> None:
    tuned = _tuning(tmp_path)
    md, csv = tmp_path / "verify.md", tmp_path / "verify.csv"
    checks = write_verify_report(
        _verify_tests(tmp_path / "tests.csv"), _decided(tmp_path), tuned, [], md, csv
    )
    assert len(checks) == 6
    note = md.read_text()
    assert "No libmpiguide-tune file replaces a collective." in note
    assert f"under libmpiguide-tune: {ACROSS}" not in note


def _rows(*rows: tuple[str, str, str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"violation_ratio": ratio, "ratio_low": low, "ratio_high": high, "low_level": "0.999",
             "high_level": "0.95", "test": test, "verdict": verdict}
            for ratio, low, high, test, verdict in rows
        ]
    )  # fmt: skip


def test_an_algo_test_confirms_where_violated_a_tune_test_read_the_other_way() -> None:
    algo = speedups(
        _rows(("1.5", "1.2", "1.6", "paired_t", "violated"),
              ("1.0", "0.9", "1.02", "paired_t", "holds"),
              ("1.05", "0.98", "1.09", "paired_t", "undecided")),
        False, THRESHOLDS,
    )  # fmt: skip
    assert list(algo["outcome"]) == [CONFIRMED, NOT_CONFIRMED, CANNOT_TELL]
    assert list(algo["low"]) == [1.2, 0.9, 0.98]
    tune = speedups(
        _rows(
            # twice as fast, the mirrored lower bound 1.6 at 99.9 %: the gain again
            ("0.5", "0.4", "0.625", "paired_t", "holds"),
            # as fast: not 1.03x faster (the mirrored upper bound 1.01 at 95 %)
            ("1.0", "0.99", "1.01", "paired_t", "holds"),
            # slower now (the TUNE test violated)
            ("1.2", "1.1", "1.3", "paired_t", "violated"),
            # the runs cannot tell
            ("0.9", "0.6", "1.2", "paired_t", "undecided"),
            # a rank test's interval is not symmetric: its bounds inverted, nothing confirmed
            ("0.5", "0.4", "0.625", "block_signed_rank", "holds"),
        ),
        True, THRESHOLDS,
    )  # fmt: skip
    assert list(tune["outcome"]) == [
        CONFIRMED, NOT_CONFIRMED, NOT_CONFIRMED, CANNOT_TELL, CANNOT_TELL,
    ]  # fmt: skip
    assert tune["low"].tolist() == pytest.approx([1.6, 0.99, 1.1 / 1.44, 0.6 / 0.81, 1.6])
    assert tune["high"].tolist() == pytest.approx([2.5, 1.01, 1.3 / 1.44, 1.2 / 0.81, 2.5])
    # the mirrored bounds keep their levels; the inverted ones swap them
    assert tune["low_level"].tolist() == [0.999, 0.999, 0.999, 0.999, 0.95]


def test_a_point_is_confirmed_only_by_all_its_tests() -> None:
    assert point_outcome([CONFIRMED, CONFIRMED]) == CONFIRMED
    assert point_outcome([CONFIRMED, CANNOT_TELL]) == CANNOT_TELL
    assert point_outcome([CONFIRMED, CANNOT_TELL, NOT_CONFIRMED]) == NOT_CONFIRMED
    assert point_outcome([]) == NOT_MEASURED
