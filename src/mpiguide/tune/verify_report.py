"""What a verify campaign found about the tuning `tune` wrote, and how it compared it.

Input: the verify campaign's tests.csv and the tuned campaign's tuning directory (its
algorithms.csv, whose choices name the (entry, collective, ranks, message size) points each
algorithm was chosen for, and its libmpiguide-tune files `<entry>.tune`, whose rules name the
points a mock-up replaces the collective at, with the gain measured when tuned). Every row is a
comparison within one launch:

- a chosen algorithm: its guideline `ALGO.<entry>.<op>.<algorithm>` compares it, forced per
  experiment (MPICH: the cvar written around the experiment; Open MPI: a communicator created
  under the forced cvar), with the library's choice in the same launches;
- a mock-up: its guideline `TUNE.<entry>.<op>` compares, within `<entry>.tuned` (libmpiguide-tune
  preloaded), the call the library replaces with the library's own call on a communicator it
  leaves alone (`algorithm: untuned`) in the same launches;

so launch-to-launch spread cancels in the paired test. What cannot be compared inside one launch:
the rules file or cvars `tune` wrote select an algorithm for a whole launch (a library reads them
at MPI_Init), and verify does not measure them; and libmpiguide-tune's effect on everything but
the replaced calls (`mpiguide diff` of `<entry>` and `<entry>.tuned`, verify/<entry>.md), as a
preloaded library is in the whole process or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import VERIFY_TREE, mockup_tuning_name
from mpiguide.reports.junit import read_tests
from mpiguide.tune.choose import choices, figure5_settings
from mpiguide.tune.mockup_rules import read_replacements, tune_guideline_id

WITHIN = "within one launch"
WITHIN_WHY = (
    "the kernel runs the chosen algorithm per experiment beside the library's own choice in the "
    "same launches (docs/kernel.md#algorithms-per-experiment), so the paired test compares "
    "them run by run"
)
MOCKUP_WHY = (
    "in `<entry>.tuned` the kernel runs each experiment of the replaced collective twice in the "
    "same launches: as the program calls it (libmpiguide-tune replaces it) and with `algorithm: "
    "untuned`, on a communicator libmpiguide-tune leaves to the library "
    "(docs/kernel.md#algorithms-per-experiment), so the paired test compares them run by run"
)
ACROSS = "across launches"
ACROSS_WHY = (
    "a preloaded library is in the whole process or not at all, so its effect on everything "
    "but the replaced calls (the other ops, the mock-ups' own calls, the kernel's bookkeeping) "
    "shows only between `<entry>` and `<entry>.tuned`, which run in launches of their own, in "
    "the same blocks; it is not the verdict on the replaced collective"
)
UNTUNED_GROUPS = (
    "In those diffs the groups `algorithm=untuned|` compare the library's own call in both "
    "entries (in `<entry>.tuned` passed through libmpiguide-tune): a change there is the "
    "preload's cost on a call it leaves alone, or the spread between launches, not the tuning"
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


def _check(
    verify_tests: pd.DataFrame,
    guideline: str,
    point: tuple[str, str, int, str, str],
    tuned: tuple[float, float, float],
    *,
    lhs_is_tuned: bool,
) -> dict[str, object]:
    """One row: at `point` (entry, op, ranks, msg_size, algorithm or mock-up), the gain `tuned`
    (speedup, low, high) and the verify tests of `guideline` there, as a speedup of the tuned
    call over the library's own: the smallest among them, with its bounds, and their verdicts.
    `lhs_is_tuned`: the guideline's lhs is the tuned call (TUNE: violation_ratio = tuned /
    own, inverted), else the library's own (ALGO: violation_ratio = own / tuned)."""
    mpi, op, ranks, size, algorithm = point
    mine = verify_tests.iloc[0:0]
    if not verify_tests.empty:
        mine = verify_tests[
            (verify_tests["guideline"] == guideline)
            & (_ranks(verify_tests) == ranks)
            & (verify_tests["msg_size"].fillna("").astype(str) == size)
        ]
    ratios = pd.to_numeric(mine["violation_ratio"], errors="coerce")
    speedup: object = ""
    low: object = ""
    high: object = ""
    if ratios.notna().any():
        worst = mine.loc[ratios.idxmax() if lhs_is_tuned else ratios.idxmin()]
        if lhs_is_tuned:
            speedup, low, high = (
                _inverse(worst["violation_ratio"]),
                _inverse(worst["ratio_high"]),
                _inverse(worst["ratio_low"]),
            )
        else:
            speedup, low, high = worst["violation_ratio"], worst["ratio_low"], worst["ratio_high"]
    return {
        "comparison": WITHIN,
        "mpi": mpi,
        "op": op,
        "ranks": ranks,
        "msg_size": size,
        "algorithm": algorithm,
        "tuned_speedup": tuned[0],
        "tuned_low": tuned[1],
        "tuned_high": tuned[2],
        "verify_tests": len(mine),
        "verify_speedup": speedup,
        "verify_low": low,
        "verify_high": high,
        "verify_verdicts": " ".join(sorted(set(mine["verdict"]))),
    }


def _inverse(value: object) -> object:
    try:
        number = float(str(value))
    except ValueError:
        return ""
    return 1 / number if number else float("inf")


def algorithm_checks(verify_tests: pd.DataFrame, tuned_figure5: pd.DataFrame) -> pd.DataFrame:
    """One row per tuned point: its choice when tuned and the verify campaign's ALGO tests of
    that algorithm at the same entry, collective, ranks and message size (the smallest
    speedup among them, with its bounds, and their verdicts)."""
    picked = [c for c in choices(tuned_figure5, figure5_settings(tuned_figure5)) if c.setting]
    rows = []
    for choice in picked:
        assert choice.setting is not None
        size = "" if choice.msg_size is None else str(choice.msg_size)
        point = (choice.base, choice.op, choice.ranks, size, choice.setting.algorithm.name)
        gain = (choice.speedup, choice.low, choice.high)
        rows.append(_check(verify_tests, choice.setting.guideline, point, gain, lhs_is_tuned=False))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def mockup_checks(
    verify_tests: pd.DataFrame, tuning: Path, entries: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """One row per point a rule of an entry's libmpiguide-tune file (in `tuning`) was measured
    at: the rule's gain when tuned (the smallest speedup over its sizes) and the verify
    campaign's TUNE tests there; and the rule lines `tune` did not write (no measured points),
    as `<entry>.tune: <line>`."""
    rows, other = [], []
    for entry in entries:
        path = tuning / mockup_tuning_name(entry)
        written, unknown = read_replacements(entry, path.read_text(encoding="utf-8"))
        other += [f"{path.name}: {line}" for line in unknown]
        for rule in written:
            guideline = tune_guideline_id(entry, rule.op)
            gain = (rule.speedup, rule.low, rule.high)
            rows += [
                _check(
                    verify_tests, guideline, (entry, rule.op, rule.ranks, str(size), rule.mockup),
                    gain, lhs_is_tuned=True,
                )
                for size in rule.sizes
            ]  # fmt: skip
    return pd.DataFrame(rows, columns=list(COLUMNS)), other


def _number(value: object) -> str:
    try:
        return f"{float(str(value)):.3g}"
    except ValueError:
        return ""


def _table(checks: pd.DataFrame, what: str) -> list[str]:
    lines = [
        f"| entry | op | ranks | msg_size | {what} | speedup when tuned | "
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
    return [*lines, ""]


def verify_md(
    checks: pd.DataFrame,
    mockups: pd.DataFrame,
    tuned_pairs: Sequence[tuple[str, str]],
    unlisted_rules: Sequence[str] = (),
) -> str:
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
    lines += (
        ["`tune` chose none of the library's algorithms.", ""]
        if checks.empty
        else _table(checks, "algorithm")
    )
    lines += [
        f"## libmpiguide-tune's mock-ups: {WITHIN}",
        "",
        f"Why {WITHIN}: {MOCKUP_WHY}. Speedup: the library's own call's time over the replaced "
        "call's (the TUNE test's violation_ratio inverted, its bounds too: the lower one at the "
        "holds bound's level, the upper at the violation bound's). The TUNE test's verdict: "
        "`violated` means the replacement is significantly slower than the library's own call "
        "now; `holds` that it is not slower by `analysis.tuning.v_thres` or more (not that it is "
        "faster: the speedup's lower bound above 1 says that); `undecided` that these runs "
        "cannot tell. "
        "The gain when tuned is the rule's, the smallest over the sizes it was measured at.",
        "",
    ]
    if not tuned_pairs:
        lines += ["No libmpiguide-tune file replaces a collective.", ""]
    else:
        lines += (
            ["No rule of a libmpiguide-tune file was written by `tune` with its points.", ""]
            if mockups.empty
            else _table(mockups, "mock-up")
        )
        if unlisted_rules:
            lines += [
                "Rules not written by `tune` (no measured points; their TUNE tests are in "
                "tests.csv): " + "; ".join(f"`{rule}`" for rule in unlisted_rules) + ".",
                "",
            ]
        lines += [
            f"## Everything else under libmpiguide-tune: {ACROSS}",
            "",
            f"Why {ACROSS}: {ACROSS_WHY}. {UNTUNED_GROUPS}",
            "",
        ]
        lines += [
            f"- `{entry}` vs `{tuned}`: [{VERIFY_TREE}/{entry}.md]({VERIFY_TREE}/{entry}.md)"
            for entry, tuned in tuned_pairs
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_verify_report(
    verify_tests_csv: Path,
    tuned_algorithms_csv: Path,
    tuned_pairs: Sequence[tuple[str, str]],
    md: Path,
    csv: Path,
) -> pd.DataFrame:
    """Write the verify note (md) and the per-point checks (csv): the chosen algorithms', then
    the mock-ups' (their files beside algorithms.csv); return the checks."""
    tests = read_tests(verify_tests_csv)
    checks = algorithm_checks(tests, pd.read_csv(tuned_algorithms_csv))
    mockups, unlisted = mockup_checks(
        tests, tuned_algorithms_csv.parent, [entry for entry, _ in tuned_pairs]
    )
    every = pd.concat([checks, mockups], ignore_index=True) if len(mockups) else checks
    with atomic_path(csv) as temporary:
        every.to_csv(temporary, index=False)
    with atomic_path(md) as temporary:
        temporary.write_text(verify_md(checks, mockups, tuned_pairs, unlisted), encoding="utf-8")
    return every
