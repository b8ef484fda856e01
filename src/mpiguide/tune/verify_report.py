"""What a verify campaign found about the algorithms `tune` chose, and how it compared them.

Input: the verify campaign's tests.csv, whose guidelines `ALGO.<entry>.<op>.<algorithm>` compare
on new runs each chosen algorithm with the library's own choice within the same launches
(mpiguide.tune.sweep.verify_campaign), and the tuned campaign's algorithms.csv, whose choices
name the (entry, collective, ranks, message size) points each algorithm was chosen for. Per
point: the choice's speedup when it was chosen, and the verify tests' now. The comparison is
within one launch: the kernel runs the forced algorithm per experiment (MPICH: the cvar written
around the experiment; Open MPI: a communicator created under the forced cvar), beside the
library's choice, so launch-to-launch spread cancels in the paired test. The rules file or
cvars that `tune` wrote select the same algorithm for a whole launch of an application: a
library reads them at MPI_Init, so they themselves can only be compared across launches, which
verify does not do. libmpiguide-tune's mock-ups are verified across launches (`<entry>.tuned`,
`mpiguide diff`): a preloaded library replaces the call for the whole process.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import VERIFY_TREE
from mpiguide.reports.junit import read_tests
from mpiguide.tune.choose import choices, figure5_settings

WITHIN = "within one launch"
WITHIN_WHY = (
    "the kernel runs the chosen algorithm per experiment beside the library's own choice in the "
    "same launches (docs/kernel.md#algorithms-per-experiment), so the paired test compares "
    "them run by run"
)
ACROSS = "across launches"
ACROSS_WHY = (
    "libmpiguide-tune is preloaded and replaces the collective for the whole process, so "
    "`<entry>.tuned` runs in launches of its own, in the same blocks as `<entry>`"
)
NOT_MEASURED_WHY = (
    "the rules file / cvars `tune` wrote are read at MPI_Init and select the algorithm for a "
    "whole launch; verify measures the algorithm they select, forced per experiment, not the "
    "file itself"
)
COLUMNS = (
    "comparison",
    "mpi",
    "op",
    "ranks",
    "msg_size",
    "algorithm",
    "tuned_speedup",
    "tuned_low",
    "tuned_high",
    "verify_tests",
    "verify_speedup",
    "verify_low",
    "verify_high",
    "verify_verdicts",
)


def _ranks(tests: pd.DataFrame) -> pd.Series:
    return pd.to_numeric(tests["nodes"]) * pd.to_numeric(tests["ppn"])


def algorithm_checks(verify_tests: pd.DataFrame, tuned_figure5: pd.DataFrame) -> pd.DataFrame:
    """One row per tuned point: its choice when tuned and the verify campaign's ALGO tests of
    that algorithm at the same entry, collective, ranks and message size (the smallest
    speedup among them, with its bounds, and their verdicts)."""
    picked = [c for c in choices(tuned_figure5, figure5_settings(tuned_figure5)) if c.setting]
    ranks = _ranks(verify_tests) if not verify_tests.empty else pd.Series(dtype="int64")
    rows = []
    for choice in picked:
        assert choice.setting is not None
        size = "" if choice.msg_size is None else str(choice.msg_size)
        mine = verify_tests[
            (verify_tests["guideline"] == choice.setting.guideline)
            & (ranks == choice.ranks)
            & (verify_tests["msg_size"].fillna("").astype(str) == size)
        ]
        ratios = pd.to_numeric(mine["violation_ratio"], errors="coerce")
        worst = mine.loc[ratios.idxmin()] if ratios.notna().any() else None
        rows.append(
            {
                "comparison": WITHIN,
                "mpi": choice.base,
                "op": choice.op,
                "ranks": choice.ranks,
                "msg_size": size,
                "algorithm": choice.setting.algorithm.name,
                "tuned_speedup": choice.speedup,
                "tuned_low": choice.low,
                "tuned_high": choice.high,
                "verify_tests": len(mine),
                "verify_speedup": "" if worst is None else worst["violation_ratio"],
                "verify_low": "" if worst is None else worst["ratio_low"],
                "verify_high": "" if worst is None else worst["ratio_high"],
                "verify_verdicts": " ".join(sorted(set(mine["verdict"]))),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _number(value: object) -> str:
    try:
        return f"{float(str(value)):.3g}"
    except ValueError:
        return ""


def verify_md(checks: pd.DataFrame, tuned_pairs: Sequence[tuple[str, str]]) -> str:
    lines = ["# Verify: the tuning on new runs", ""]
    lines += [
        f"## The library's algorithms `tune` chose: {WITHIN}",
        "",
        f"Why {WITHIN}: {WITHIN_WHY}. A chosen algorithm holds up where its ALGO test is "
        "`violated` again (it still beats the library's choice significantly); `holds` means "
        "these runs do not show it faster, `undecided` that they cannot tell.",
        "",
        f"Not measured: {NOT_MEASURED_WHY}.",
        "",
    ]
    if checks.empty:
        lines += ["`tune` chose none of the library's algorithms.", ""]
    else:
        lines += [
            "| entry | op | ranks | msg_size | algorithm | speedup when tuned | "
            "speedup now (smallest) | tests | verdicts |",
            "|---|---|---:|---:|---|---|---|---:|---|",
        ]
        for row in checks.to_dict("records"):
            tuned = (
                f"{_number(row['tuned_speedup'])} [{_number(row['tuned_low'])}, "
                f"{_number(row['tuned_high'])}]"
            )
            now = (
                f"{_number(row['verify_speedup'])} [{_number(row['verify_low'])}, "
                f"{_number(row['verify_high'])}]"
                if row["verify_tests"]
                else "not measured"
            )
            lines.append(
                f"| {row['mpi']} | {row['op']} | {row['ranks']} | {row['msg_size']} | "
                f"{row['algorithm']} | {tuned} | {now} | {row['verify_tests']} | "
                f"{row['verify_verdicts']} |"
            )
        lines.append("")
    lines += [f"## libmpiguide-tune's mock-ups: {ACROSS}", "", f"Why {ACROSS}: {ACROSS_WHY}.", ""]
    if tuned_pairs:
        lines += [
            f"- `{entry}` vs `{tuned}`: [{VERIFY_TREE}/{entry}.md]({VERIFY_TREE}/{entry}.md)"
            for entry, tuned in tuned_pairs
        ]
    else:
        lines.append("No libmpiguide-tune file replaces a collective.")
    return "\n".join(lines) + "\n"


def write_verify_report(
    verify_tests_csv: Path,
    tuned_algorithms_csv: Path,
    tuned_pairs: Sequence[tuple[str, str]],
    md: Path,
    csv: Path,
) -> pd.DataFrame:
    """Write the verify note (md) and the per-point checks (csv); return the checks."""
    checks = algorithm_checks(read_tests(verify_tests_csv), pd.read_csv(tuned_algorithms_csv))
    with atomic_path(csv) as temporary:
        checks.to_csv(temporary, index=False)
    with atomic_path(md) as temporary:
        temporary.write_text(verify_md(checks, tuned_pairs), encoding="utf-8")
    return checks
