"""mpiguide tune and verify for Intel MPI, whose presets ran each in an mpi entry of its own: the
env file of I_MPI_ADJUST_<OP> variables (one preset for every call, written only where it won at
every point measured, as Intel MPI 2021.19 does not apply the documented per-size conditions:
tests/kernel/test_intelmpi_env_file.py), its comments, nothing where the default stays, the
environment verify applies from it, the APPLIED guidelines that compare it with the preset's own
entry, and tuning.md's and verify.md's lines, which say the comparison was across launches. The
variables are named by AlgorithmSetting.env(), read here from the settings rather than spelt
again."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.tune.applied import (
    applied_guidelines,
    forced_within_launch,
    honours_forced,
    settings_env,
    settings_file,
)
from mpiguide.tune.intelmpi_settings import USE
from mpiguide.tune.library_algorithms import Algorithm, AlgorithmSetting, swept_per_launch
from mpiguide.tune.outputs import tune
from mpiguide.tune.verify_report import ACROSS, FILE_BEATS, FILE_RUNS, FORCED, write_verify_report
from mpiguide.tune.words import TIMES, own_launches_text

ENTRY = "intel"
INTEL = {
    setting.guideline: setting
    for setting in (
        AlgorithmSetting(ENTRY, "intelmpi", op, Algorithm(name, number))
        for op, name, number in [
            ("allreduce", "recursive_doubling", 1),
            ("allreduce", "rabenseifner", 2),
            ("allreduce", "reduce_bcast", 3),
            ("allgatherv", "ring", 3),
            ("bcast", "binomial", 1),
            ("barrier", "dissemination", 1),
        ]
    )
}
RD, RAB, RB = (INTEL[f"ALGO.{ENTRY}.allreduce.{name}"] for name in
               ("recursive_doubling", "rabenseifner", "reduce_bcast"))  # fmt: skip
RING = INTEL[f"ALGO.{ENTRY}.allgatherv.ring"]
BINOMIAL = INTEL[f"ALGO.{ENTRY}.bcast.binomial"]
BARRIER = INTEL[f"ALGO.{ENTRY}.barrier.dissemination"]
ANALYSIS = {"p_thres": 0.001, "v_thres": 1.03, "confidence": 0.95}
SAID = re.compile(
    r"^# (\w+): preset (\d+) \((\w+)\) for every call; it beat Intel MPI's selection at every "
    r"point measured: (.+)$"
)


def _line(setting: AlgorithmSetting) -> str:
    (line,) = (f"{key}={value}" for key, value in setting.env().items())
    return line


def _row(
    setting: AlgorithmSetting, size: int | None, verdict: str, ratio: float, ppn: int = 2,
    test: str = "block_signed_rank",
) -> dict[str, Any]:  # fmt: skip
    """An ALGO test of a preset as compare writes it: the swept entry's library-default call
    against the preset entry's, whose names differ (`mpi` is lhs|rhs)."""
    return {
        "guideline": setting.guideline, "relation": "le",
        "mpi": f"{setting.base}|{setting.name}", "algorithm": "library-default",
        "nodes": "1", "ppn": str(ppn), "op": setting.op,
        "msg_size": "" if size is None else str(size), "dtype": "int", "group": "0",
        "median_lhs": str(1e-5 * ratio), "median_rhs": "1e-05", "violation_ratio": str(ratio),
        "ratio_low": str(ratio * 0.9), "ratio_high": str(ratio * 1.1), "low_level": "0.999",
        "high_level": "0.95", "test": test, "verdict": verdict,
    }  # fmt: skip


ROWS = [
    # allreduce: reduce_bcast beats Intel's selection at every point measured
    _row(RB, 8, "violated", 1.5), _row(RD, 8, "holds", 1.0), _row(RAB, 8, "holds", 1.0),
    _row(RB, 64, "violated", 1.3), _row(RD, 64, "holds", 1.0), _row(RAB, 64, "holds", 1.0),
    _row(RB, 8, "violated", 1.4, ppn=4), _row(RD, 8, "holds", 1.0, ppn=4),
    # allgatherv: ring at 100 B, the default at 1000 B: no one preset for every call
    _row(RING, 100, "violated", 1.1), _row(RING, 1000, "holds", 1.0),
    # bcast: nothing beats the default, and these tests were not paired
    _row(BINOMIAL, 8, "holds", 1.0, test="welch_t"),
    # barrier: no message size, one point
    _row(BARRIER, None, "violated", 1.4),
]  # fmt: skip
# Per collective written, where its preset won: as the comment must say it
WON_AT = {"allreduce": "2 ranks at 8 B, 64 B; 4 ranks at 8 B", "barrier": "2 ranks"}


def _tune(tmp_path: Path, rows: list[dict[str, Any]] = ROWS) -> tuple[Path, Any]:
    tmp_path.mkdir(exist_ok=True)
    tests, decided = tmp_path / "tests.csv", tmp_path / "decided_with.json"
    pd.DataFrame(rows).to_csv(tests, index=False)
    decided.write_text(json.dumps({"analysis": ANALYSIS}))
    tuning = tmp_path / "tuning"
    return tuning, tune(tests, decided, INTEL, tuning)


def test_the_env_file_sets_a_preset_only_where_it_won_everywhere(tmp_path: Path) -> None:
    tuning, tuned = _tune(tmp_path)
    path = tuning / settings_file("intelmpi", ENTRY)
    assert path.name == "intel.intelmpi.env"
    text = path.read_text()
    # one line per collective whose preset won at every point, as AlgorithmSetting.env() sets it
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        _line(RB), _line(BARRIER),
    ]  # fmt: skip
    assert {(c.op, c.ranks, c.msg_size) for c in tuned.algorithms} == {
        ("allreduce", 2, 8), ("allreduce", 2, 64), ("allreduce", 4, 8), ("barrier", 2, None),
    }  # fmt: skip
    # where the default stays nothing is written, not even preset 0 (which is not Intel's own
    # selection); where no one preset won everywhere neither, and the file says why
    assert _line(BINOMIAL).split("=")[0] not in text
    assert _line(RING).split("=")[0] not in text
    assert "# Not written: allgatherv, as Intel MPI 2021.19 does not apply I_MPI_ADJUST's " in text
    assert "(library-default, ring)." in text
    # how to use it, when Intel reads it, and why it sets no condition
    assert f"# Use: `{USE}` in the shell that runs mpiexec (Intel MPI reads\n" in text
    assert "# I_MPI_ADJUST_* at MPI_Init, for the whole launch). Each variable names one " in text
    assert (
        "per-size conditions (<preset>:<l>-<m>@<p>-<q>) its Developer Reference documents" in text
    )


def test_the_env_files_comments_say_exactly_what_its_lines_set(tmp_path: Path) -> None:
    tuning, _ = _tune(tmp_path)
    lines = (tuning / "intel.intelmpi.env").read_text().splitlines()
    variables = [i for i, line in enumerate(lines) if not line.startswith("#")]
    assert len(variables) == len(WON_AT)
    for index in variables:
        said = SAID.match(lines[index - 1])
        assert said, lines[index - 1]
        op, number, name, where = said.groups()
        setting = INTEL[f"ALGO.{ENTRY}.{op}.{name}"]
        assert lines[index] == _line(setting)
        assert int(number) == setting.algorithm.number
        assert where == WON_AT[op]
    # nothing tuned: the file says so and sets nothing
    none = [_row(RB, 8, "holds", 1.0), _row(RD, 8, "holds", 1.0)]
    tuning, tuned = _tune(tmp_path / "none", none)
    text = (tuning / "intel.intelmpi.env").read_text()
    assert tuned.algorithms == []
    assert [line for line in text.splitlines() if not line.startswith("#")] == []
    assert "# No collective is tuned: Intel MPI selects as without this file" in text
    assert "Use:" not in text


def test_verify_applies_the_env_file_as_the_shell_reads_it(tmp_path: Path) -> None:
    tuning, _ = _tune(tmp_path)
    env, path = settings_env("intelmpi", tuning, ENTRY)
    assert path == tuning / "intel.intelmpi.env"
    assert env == {**RB.env(), **BARRIER.env()}
    sourced = subprocess.run(
        ["bash", "-c", f'{USE.replace("<this file>", str(path))}; env -0'],
        env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    shell = dict(item.partition("=")[::2] for item in sourced.split("\0") if item)
    assert {key: shell[key] for key in env} == env
    with pytest.raises(FileNotFoundError):
        settings_env("intelmpi", tuning, "other")


def test_the_applied_guidelines_compare_the_file_with_the_presets_own_entry() -> None:
    assert swept_per_launch("intelmpi") and not swept_per_launch("openmpi")
    assert not forced_within_launch("intelmpi")
    assert forced_within_launch("mpich") and not forced_within_launch("openmpi")
    ops = ["allreduce"]
    runs, beats = applied_guidelines(ENTRY, "intelmpi", "allreduce", ["reduce_bcast"], ops)
    # the forced side: the preset's entry (the setting's name), its library-default call
    assert runs["id"] == "APPLIED.intel.allreduce.reduce_bcast"
    assert runs["lhs"] == {"mpi": RB.name, "op": ops, "algorithm": "library-default"}
    assert runs["rhs"] == {"mpi": "intel.applied", "op": ops, "algorithm": "library-default"}
    assert runs["relation"] == "approx"
    assert f"set for the launches of {RB.name} ≈ as intel.applied chooses" in runs["text"]
    assert beats["lhs"] == {"mpi": ENTRY, "op": ops, "algorithm": "library-default"}
    assert beats["rhs"] == runs["rhs"] and beats["relation"] == "le"
    # an Intel MPI `.applied` entry forces nothing per experiment, as it never could
    assert not honours_forced("intel.applied", "intelmpi")


def test_tuning_md_says_each_intel_comparison_was_across_launches(tmp_path: Path) -> None:
    tuning, _ = _tune(tmp_path)
    note = (tuning / "tuning.md").read_text()
    paired = "across launches: measured in launches of its own, paired block by block"
    env = ", ".join(f"{k}={v}" for k, v in RB.env().items())
    assert (
        f"- intel allreduce, 2 ranks, 8 B: use preset 3 reduce_bcast (1.5{TIMES} faster "
        f"[1.35, 1.65]; {env}, {paired}) — intel.intelmpi.env" in note
    )
    assert (
        f"- intel allgatherv, 2 ranks, 1000 B: keep the default — settled: none of the 1 "
        f"algorithms is 1.03{TIMES} faster ({paired})" in note
    )
    # the pairing is what the tests say, not what was meant
    assert (
        f"- intel bcast, 2 ranks, 8 B: keep the default — settled: none of the 1 algorithms is "
        f"1.03{TIMES} faster (across launches: measured in launches of its own, not paired "
        "(welch_t))" in note
    )
    ring = ", ".join(f"{k}={v}" for k, v in RING.env().items())
    assert (
        f"- intel allgatherv, 2 ranks, 100 B: keep the default — preset 3 ring is 1.1{TIMES} "
        f"faster [0.99, 1.21] ({ring}, {paired}), but no settings file can choose it here "
        "(Not tuned, below)" in note
    )
    assert "- intel allgatherv: Intel MPI 2021.19 does not apply I_MPI_ADJUST's per-size " in note
    assert "- intel barrier, 2 ranks: use preset 1 dissemination (" in note
    figure5 = pd.read_csv(tuning / "algorithms.csv")
    assert set(figure5["test"]) == {"block_signed_rank", "welch_t"}
    assert set(figure5.loc[figure5["algorithm"] == "reduce_bcast", "number"]) == {3}


def test_own_launches_text_says_how_the_tests_paired_them() -> None:
    assert own_launches_text([]) == f"{ACROSS}: measured in launches of its own"
    assert own_launches_text(["block_signed_rank"]).endswith(", paired block by block")
    assert own_launches_text(["block_signed_rank", "welch_t"]).endswith(
        ", paired in some tests only (block_signed_rank, welch_t)"
    )
    assert own_launches_text(["ranksum"]).endswith(", not paired (ranksum)")


FIGURE5 = (
    "mpi,library,op,nodes,ppn,msg_size,algorithm,number,median_s,default_median_s,speedup,"
    "speedup_low,speedup_high,low_level,high_level,verdict,test\n"
    "intel,intelmpi,allreduce,1,2,8,reduce_bcast,3,1e-5,2e-5,2.0,1.5,2.5,0.999,0.95,violated,"
    "block_signed_rank\n"
    "intel,intelmpi,allreduce,1,2,8,recursive_doubling,1,1e-5,1e-5,1.0,0.9,1.1,0.999,0.95,holds,"
    "block_signed_rank\n"
)


def test_verify_md_says_the_intel_presets_were_compared_across_launches(tmp_path: Path) -> None:
    algorithms = tmp_path / "algorithms.csv"
    algorithms.write_text(FIGURE5)
    rows = [
        ("ALGO.intel.allreduce.reduce_bcast", f"intel|{RB.name}", "1.8", "1.4", "2.2", "violated"),
        ("APPLIED.intel.allreduce.reduce_bcast", f"{RB.name}|intel.applied", "1.0", "0.98",
         "1.02", "holds"),
        ("APPLIED.intel.allreduce", "intel|intel.applied", "1.7", "1.3", "2.1", "violated"),
    ]  # fmt: skip
    tests = tmp_path / "tests.csv"
    pd.DataFrame(
        [
            {"guideline": g, "relation": "le", "mpi": mpi, "nodes": "1", "ppn": "2",
             "op": "allreduce", "msg_size": "8", "algorithm": "library-default", "group": "0",
             "violation_ratio": ratio, "ratio_low": low, "ratio_high": high,
             "low_level": "0.999", "high_level": "0.95", "test": "block_signed_rank",
             "verdict": verdict}
            for g, mpi, ratio, low, high, verdict in rows
        ]
    ).to_csv(tests, index=False)  # fmt: skip
    decided = tmp_path / "decided_with.json"
    decided.write_text(json.dumps({"analysis": {"tuning": {"p_thres": 0.001, "v_thres": 1.03}}}))
    md, csv = tmp_path / "verify.md", tmp_path / "verify.csv"
    checks = write_verify_report(tests, decided, algorithms, [], md, csv)
    assert checks[["check", "comparison", "outcome", "verify_test_names"]].values.tolist() == [
        [FORCED, ACROSS, "confirmed", "block_signed_rank"],
        [FILE_RUNS, ACROSS, "confirmed", "block_signed_rank"],
        [FILE_BEATS, ACROSS, "confirmed", "block_signed_rank"],
    ]
    note = md.read_text()
    lines = note.split("\n\n")[2].splitlines()
    assert lines[0] == (
        f"- intel allreduce, 2 ranks, 8 B: use reduce_bcast (2{TIMES} faster [1.5, 2.5]; across "
        "launches: measured in launches of its own, paired block by block) — verify: confirmed "
        "(1.8 [1.4, 2.2])"
    )
    assert lines[1].startswith(
        "- intel allreduce, 2 ranks, 8 B: its settings file applied runs reduce_bcast (across "
        "launches)"
    )
    # no section calls an Intel comparison within one launch
    assert f"## The library's algorithms `tune` chose: {ACROSS}" in note
    assert "within one launch" not in note.split("## libmpiguide-tune")[0]
    assert "An Intel MPI preset, which the library reads at MPI_Init, ran in an mpi entry" in note
    assert (
        f"| {FORCED} | {ACROSS} | intel | allreduce | 2 | 8 | reduce_bcast | 2 [1.5, 2.5] | "
        "1.8 [1.4, 2.2] | 1 | confirmed |" in note
    )
