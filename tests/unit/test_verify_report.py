"""`mpiguide verify-report`: per point `tune` chose an algorithm for, the verify campaign's
within-launch ALGO tests of it; the note says which comparison was within a launch, which across,
and why."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

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


def test_each_tuned_point_with_its_within_launch_test_and_the_across_launch_pairs(
    tmp_path: Path,
) -> None:
    tuned = tmp_path / "algorithms.csv"
    tuned.write_text(FIGURE5)
    md, csv = tmp_path / "verify.md", tmp_path / "verify.csv"
    checks = write_verify_report(
        _verify_tests(tmp_path / "tests.csv"), tuned, [("openmpi", "openmpi.tuned")], md, csv
    )
    # ring was chosen at 8 B only; scan's linear was chosen but not re-measured (no test)
    assert checks[["op", "msg_size", "algorithm", "verify_tests"]].values.tolist() == [
        ["allreduce", "8", "ring", 1],
        ["scan", "8", "linear", 0],
    ]
    assert set(checks["comparison"]) == {WITHIN}
    assert checks.iloc[0]["verify_verdicts"] == "violated"
    assert float(checks.iloc[0]["verify_speedup"]) == 1.8
    assert pd.read_csv(csv).shape[0] == 2
    note = md.read_text()
    assert f"## The library's algorithms `tune` chose: {WITHIN}" in note
    assert f"## libmpiguide-tune's mock-ups: {ACROSS}" in note
    assert (
        "| openmpi | allreduce | 2 | 8 | ring | 2 [1.5, 2.5] | 1.8 [1.4, 2.2] | 1 | violated |"
        in (note)
    )
    assert "| openmpi | scan | 2 | 8 | linear | 1.3 [1.1, 1.5] | not measured | 0 |  |" in note
    assert "[verify/openmpi.md](verify/openmpi.md)" in note
    assert "Not measured: the rules file" in note
