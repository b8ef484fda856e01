"""`mpiguide verify-report`: per point `tune` chose an algorithm for, the verify campaign's
within-launch ALGO tests of it; per point a libmpiguide-tune rule was measured at, the
within-launch TUNE tests of the replaced call against the library's own; the note says which
comparison was within a launch, which across, and why."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mpiguide.tune.mockup_rules import Replacement, tuning_file
from mpiguide.tune.verify_report import ACROSS, WITHIN, write_verify_report

FIGURE5 = (
    "mpi,library,op,nodes,ppn,msg_size,algorithm,number,median_s,default_median_s,speedup,"
    "speedup_low,speedup_high,verdict\n"
    "openmpi,openmpi,allreduce,1,2,8,ring,4,1e-5,2e-5,2.0,1.5,2.5,violated\n"
    "openmpi,openmpi,allreduce,1,2,1024,ring,4,1e-5,1e-5,1.0,0.9,1.1,holds\n"
    "openmpi,openmpi,scan,1,2,8,linear,1,1e-5,1.3e-5,1.3,1.1,1.5,violated\n"
)


def _verify_tests(path: Path) -> Path:
    rows = [
        ("ALGO.openmpi.allreduce.ring", "8", "1.8", "1.4", "2.2", "violated"),
        ("ALGO.openmpi.allreduce.ring", "1024", "1.0", "0.9", "1.1", "holds"),
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
             "violation_ratio": ratio, "ratio_low": low, "ratio_high": high, "verdict": verdict}
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


def test_each_tuned_point_with_its_within_launch_test_and_the_across_launch_pairs(
    tmp_path: Path,
) -> None:
    tuned = _tuning(tmp_path)
    md, csv = tmp_path / "verify.md", tmp_path / "verify.csv"
    checks = write_verify_report(
        _verify_tests(tmp_path / "tests.csv"), tuned, [("openmpi", "openmpi.tuned")], md, csv
    )
    # ring was chosen at 8 B only; scan's linear was chosen but not re-measured (no test); the
    # mock-up's rule was measured at 64, 1024 and 4096 B, of which 4096 B has no test now
    assert checks[["op", "msg_size", "algorithm", "verify_tests"]].values.tolist() == [
        ["allreduce", "8", "ring", 1],
        ["scan", "8", "linear", 0],
        ["allreduce", "64", "allreduce_as_reduce_bcast", 1],
        ["allreduce", "1024", "allreduce_as_reduce_bcast", 2],
        ["allreduce", "4096", "allreduce_as_reduce_bcast", 0],
    ]
    assert set(checks["comparison"]) == {WITHIN}
    assert checks.iloc[0]["verify_verdicts"] == "violated"
    assert float(checks.iloc[0]["verify_speedup"]) == 1.8
    # the TUNE test's ratio is the replaced call over the library's own: inverted, bounds too
    mockup = checks.iloc[2]
    assert (mockup["verify_speedup"], mockup["verify_low"], mockup["verify_high"]) == (
        2.0, 1.6, 2.5,
    )  # fmt: skip
    assert (mockup["tuned_speedup"], mockup["tuned_low"], mockup["tuned_high"]) == (1.6, 1.3, 2.0)
    smallest = checks.iloc[3]
    assert smallest["verify_speedup"] == pytest.approx(1 / 0.9)
    assert smallest["verify_verdicts"] == "holds undecided"
    assert pd.read_csv(csv).shape[0] == 5
    note = md.read_text()
    assert f"## The library's algorithms `tune` chose: {WITHIN}" in note
    assert f"## libmpiguide-tune's mock-ups: {WITHIN}" in note
    assert f"## Everything else under libmpiguide-tune: {ACROSS}" in note
    assert "it is not the verdict on the replaced collective" in note
    assert "the groups `algorithm=untuned|` compare the library's own call" in note
    assert (
        "| openmpi | allreduce | 2 | 8 | ring | 2 [1.5, 2.5] | 1.8 [1.4, 2.2] | 1 | violated |"
        in (note)
    )
    assert "| openmpi | scan | 2 | 8 | linear | 1.3 [1.1, 1.5] | not measured | 0 |  |" in note
    assert (
        "| openmpi | allreduce | 2 | 64 | allreduce_as_reduce_bcast | 1.6 [1.3, 2] | "
        "2 [1.6, 2.5] | 1 | holds |"
    ) in note
    assert (
        "| openmpi | allreduce | 2 | 4096 | allreduce_as_reduce_bcast | 1.6 [1.3, 2] | "
        "not measured | 0 |  |"
    ) in note
    # a rule written by hand has no measured points: named, not silently left out
    assert "`openmpi.tune: bcast_as_allgatherv ranks=2 bytes=8`" in note
    assert "[verify/openmpi.md](verify/openmpi.md)" in note
    assert "Not measured: the rules file" in note


def test_without_a_tuned_entry_there_is_no_across_launch_section(tmp_path: Path) -> None:
    tuned = _tuning(tmp_path)
    md, csv = tmp_path / "verify.md", tmp_path / "verify.csv"
    checks = write_verify_report(_verify_tests(tmp_path / "tests.csv"), tuned, [], md, csv)
    assert len(checks) == 2
    note = md.read_text()
    assert "No libmpiguide-tune file replaces a collective." in note
    assert ACROSS not in note
