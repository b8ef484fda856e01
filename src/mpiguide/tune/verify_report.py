"""What a verify campaign found about the tuning `tune` wrote, and how it compared it.

Input: the verify campaign's tests.csv and the tuned campaign's tuning directory (its
algorithms.csv, whose choices name the (entry, collective, ranks, message size) points each
algorithm was chosen for, and its libmpiguide-tune files `<entry>.tune`, whose rules name the
points a mock-up replaces the collective at, with the gain measured when tuned). Every row is a
comparison within one launch, but for Intel MPI's presets:

- a chosen algorithm: its guideline `ALGO.<entry>.<op>.<algorithm>` compares it, forced per
  experiment (MPICH: the cvar written around the experiment; Open MPI: a communicator created
  under the forced cvar), with the library's choice in the same launches; an Intel MPI preset,
  which the library reads at MPI_Init, ran in an entry of its own (`<entry>.<op>.<algorithm>`),
  across launches, paired block by block where the blocks allow (`verify_test_names`);
- a mock-up: its guideline `TUNE.<entry>.<op>` compares, within `<entry>.tuned` (libmpiguide-tune
  preloaded), the call the library replaces with the library's own call on a communicator it
  leaves alone (`algorithm: untuned`) in the same launches;

so launch-to-launch spread cancels in the paired test. And with the settings file `tune` wrote
applied (verify's `<entry>.applied`, mpiguide.tune.applied), per tuned point: the library's own
call under the file against the chosen algorithm forced (`APPLIED.<entry>.<op>.<algorithm>`,
approx: confirmed where it holds, the file runs the choice; in one launch on MPICH, across
launches on Open MPI, whose rules file overrides a forced algorithm, and on Intel MPI, against
the preset's own entry) and against the old default,
the library's own call in `<entry>` (`APPLIED.<entry>.<op>`, across launches: confirmed where
violated, the file beats it). Each point's outcome: `confirmed` where
every test there shows the tuned call significantly faster again (an ALGO test violated; a TUNE
test, whose lhs is the tuned call, read the other way round: its t-interval at the same levels,
mirrored about the effect, decided as a violation of `own ≼ tuned`), `not confirmed` where one
shows it not faster by analysis.tuning.v_thres (or slower), else `cannot tell`. Not compared
inside one launch either: libmpiguide-tune's effect on everything but the replaced calls
(`mpiguide diff` of `<entry>` and `<entry>.tuned`, verify/<entry>.md), as a preloaded library is
in the whole process or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import Decisions
from mpiguide.analysis.comparisons import RANK_TESTS, TEST_COLUMN
from mpiguide.analysis.verdicts import HOLDS, VIOLATED, Bounds, Thresholds, verdicts
from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import VERIFY_TREE, mockup_tuning_name
from mpiguide.reports.junit import read_tests
from mpiguide.tune import words
from mpiguide.tune.applied import (
    APPLIED_SUFFIX,
    default_guideline_id,
    forced_within_launch,
    runs_guideline_id,
)
from mpiguide.tune.choose import choices, figure5_settings
from mpiguide.tune.library_algorithms import swept_per_launch
from mpiguide.tune.mockup_rules import read_replacements, tune_guideline_id
from mpiguide.tune.words import (
    ACROSS,
    CANNOT_TELL,
    CONFIRMED,
    NOT_CONFIRMED,
    NOT_MEASURED,
    WITHIN,
)

# What a verify.csv row checks: a chosen algorithm forced per experiment (ALGO), the settings
# file applied running it (APPLIED ... approx) and beating the old default (APPLIED ... le), a
# mock-up (TUNE).
FORCED = "forced"
FILE_RUNS = "file_runs_choice"
FILE_BEATS = "file_beats_default"
MOCKUP = "mockup"
COLUMNS = (
    "comparison",
    "check",
    "mpi",
    "op",
    "ranks",
    "msg_size",
    "algorithm",
    "tuned_speedup",
    "tuned_low",
    "tuned_high",
    "tuned_low_level",
    "tuned_high_level",
    "verify_tests",
    "verify_speedup",
    "verify_low",
    "verify_high",
    "verify_low_level",
    "verify_high_level",
    "verify_verdicts",
    "verify_test_names",
    "outcome",
    "rule_bytes",
)
# An ALGO test's verdict as an outcome: its lhs is the library's own call, so violated is the
# tuned one significantly faster again.
_OUTCOME = {VIOLATED: CONFIRMED, HOLDS: NOT_CONFIRMED}
# An approx test's verdict (the forced choice ≈ the file's call): holds is the same call.
_SAME_OUTCOME = {HOLDS: CONFIRMED, VIOLATED: NOT_CONFIRMED}
# A point's verify_* columns: its least speedup's test.
_SHOWN = ("speedup", "low", "high", "low_level", "high_level")


def _ranks(tests: pd.DataFrame) -> pd.Series:
    return pd.to_numeric(tests["nodes"]) * pd.to_numeric(tests["ppn"])


def _numbers(tests: pd.DataFrame, column: str) -> np.ndarray:
    values = tests[column] if column in tests.columns else pd.Series("", index=tests.index)
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)


def speedups(
    tests: pd.DataFrame,
    lhs_is_tuned: bool,
    thresholds: Thresholds,
    outcome_of: Mapping[str, str] = _OUTCOME,
) -> pd.DataFrame:
    """Per test: the tuned call's speedup over the library's own with its bounds, their levels,
    and the outcome. ALGO (`lhs_is_tuned` false: violation_ratio = own / tuned): as tests.csv
    has it. TUNE (violation_ratio = tuned / own, its verdict whether the tuned call is slower):
    the t-interval of a t-test is symmetric about the effect on the log scale, so the bound at
    each level is mirrored (the speedup's lower bound at low_level = ratio_low / ratio², its
    upper at high_level = ratio_high / ratio²) and the speedup decided as the test's own
    verdicts decide a violation; a rank test's interval is not symmetric: its bounds are only
    inverted, and it confirms nothing. `outcome_of`: the outcome of a verdict where the lhs is
    not the tuned call."""
    ratio = _numbers(tests, "violation_ratio")
    low, high = _numbers(tests, "ratio_low"), _numbers(tests, "ratio_high")
    low_level, high_level = _numbers(tests, "low_level"), _numbers(tests, "high_level")
    verdict = tests["verdict"].to_numpy(dtype=object)
    if not lhs_is_tuned:
        outcome = [outcome_of.get(v, CANNOT_TELL) for v in verdict]
        speedup = ratio
    else:
        rank = tests.get(TEST_COLUMN, pd.Series("", index=tests.index)).isin(RANK_TESTS)
        rank = rank.to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            speedup = 1 / ratio
            mirrored = (low / ratio**2, high / ratio**2)
            inverted = (1 / high, 1 / low)
        decided = verdicts(
            False, speedup, Bounds(mirrored[0], mirrored[1]), Bounds(mirrored[0], mirrored[1]),
            thresholds,
        )  # fmt: skip
        outcome = [
            (NOT_CONFIRMED if v == VIOLATED else CANNOT_TELL) if r else _OUTCOME.get(d, CANNOT_TELL)
            for v, r, d in zip(verdict, rank, decided, strict=True)
        ]
        low = np.where(rank, inverted[0], mirrored[0])
        high = np.where(rank, inverted[1], mirrored[1])
        low_level, high_level = (
            np.where(rank, high_level, low_level),
            np.where(rank, low_level, high_level),
        )
    return pd.DataFrame(
        {"speedup": speedup, "low": low, "high": high, "low_level": low_level,
         "high_level": high_level, "outcome": outcome},
        index=tests.index,
    )  # fmt: skip


def point_outcome(outcomes: Sequence[str]) -> str:
    """A point's outcome over its tests: confirmed by all, not confirmed by one, else cannot
    tell; not measured without a test."""
    if not outcomes:
        return NOT_MEASURED
    if all(outcome == CONFIRMED for outcome in outcomes):
        return CONFIRMED
    return NOT_CONFIRMED if NOT_CONFIRMED in outcomes else CANNOT_TELL


def _check(
    verify_tests: pd.DataFrame,
    thresholds: Thresholds,
    guideline: str,
    point: tuple[str, str, int, str, str],
    tuned: tuple[float, float, float, float, float],
    *,
    lhs_is_tuned: bool,
    check: str,
    comparison: str = WITHIN,
    outcome_of: Mapping[str, str] = _OUTCOME,
) -> dict[str, object]:
    """One row: at `point` (entry, op, ranks, msg_size, algorithm or mock-up), the gain `tuned`
    (speedup, low, high and their levels) and the verify tests of `guideline` there: the least
    speedup among them with its bounds, their verdicts and the point's outcome."""
    mpi, op, ranks, size, algorithm = point
    mine = verify_tests.iloc[0:0]
    if not verify_tests.empty:
        mine = verify_tests[
            (verify_tests["guideline"] == guideline)
            & (_ranks(verify_tests) == ranks)
            & (verify_tests["msg_size"].fillna("").astype(str) == size)
        ]
    found = speedups(mine, lhs_is_tuned, thresholds, outcome_of)
    names = mine[TEST_COLUMN] if TEST_COLUMN in mine.columns else pd.Series(dtype=str)
    shown: dict[str, object] = dict.fromkeys(_SHOWN, "")
    if found["speedup"].notna().any():
        shown = found.loc[found["speedup"].idxmin()].to_dict()
    return {
        "comparison": comparison,
        "check": check,
        "mpi": mpi,
        "op": op,
        "ranks": ranks,
        "msg_size": size,
        "algorithm": algorithm,
        **dict(zip(COLUMNS[7:12], tuned, strict=True)),
        "verify_tests": len(mine),
        **{f"verify_{key}": shown[key] for key in _SHOWN},
        "verify_verdicts": " ".join(sorted(set(mine["verdict"]))),
        "verify_test_names": " ".join(sorted(set(names.dropna()))),
        "outcome": point_outcome(list(found["outcome"])),
        "rule_bytes": "",
    }


def algorithm_checks(
    verify_tests: pd.DataFrame, tuned_figure5: pd.DataFrame, thresholds: Thresholds
) -> pd.DataFrame:
    """Per tuned point: its choice when tuned and the verify campaign's ALGO tests of that
    algorithm at the same entry, collective, ranks and message size; then, with the settings
    file applied, its APPLIED tests there: the file's call against the choice forced and
    against the old default."""
    picked = [c for c in choices(tuned_figure5, figure5_settings(tuned_figure5)) if c.setting]
    rows = []
    for choice in picked:
        setting = choice.setting
        assert setting is not None
        size = "" if choice.msg_size is None else str(choice.msg_size)
        point = (choice.base, choice.op, choice.ranks, size, setting.algorithm.name)
        gain = (choice.speedup, choice.low, choice.high, choice.low_level, choice.high_level)
        forced = ACROSS if swept_per_launch(setting.library) else WITHIN
        rows.append(_check(verify_tests, thresholds, setting.guideline, point, gain,
                           lhs_is_tuned=False, check=FORCED, comparison=forced))  # fmt: skip
        runs = runs_guideline_id(choice.base, choice.op, setting.algorithm.name)
        across = WITHIN if forced_within_launch(setting.library) else ACROSS
        rows.append(_check(verify_tests, thresholds, runs, point, gain, lhs_is_tuned=False,
                           check=FILE_RUNS, comparison=across,
                           outcome_of=_SAME_OUTCOME))  # fmt: skip
        beats = default_guideline_id(choice.base, choice.op)
        rows.append(_check(verify_tests, thresholds, beats, point, gain, lhs_is_tuned=False,
                           check=FILE_BEATS, comparison=ACROSS))  # fmt: skip
    return pd.DataFrame(rows, columns=list(COLUMNS))


def mockup_checks(
    verify_tests: pd.DataFrame, thresholds: Thresholds, tuning: Path, entries: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """One row per point a rule of an entry's libmpiguide-tune file (in `tuning`) was measured
    at: the rule's gain when tuned (the least speedup over its sizes) and the verify
    campaign's TUNE tests there; and the rule lines `tune` did not write (no measured points),
    as `<entry>.tune: <line>`."""
    rows, other = [], []
    for entry in entries:
        path = tuning / mockup_tuning_name(entry)
        written, unknown = read_replacements(entry, path.read_text(encoding="utf-8"))
        other += [f"{path.name}: {line}" for line in unknown]
        for rule in written:
            guideline = tune_guideline_id(entry, rule.op)
            gain = (rule.speedup, rule.low, rule.high, rule.low_level, rule.high_level)
            for size in rule.sizes:
                row = _check(
                    verify_tests, thresholds, guideline,
                    (entry, rule.op, rule.ranks, str(size), rule.mockup), gain, lhs_is_tuned=True,
                    check=MOCKUP,
                )  # fmt: skip
                rows.append({**row, "rule_bytes": f"{rule.lo}-{rule.hi}"})
    return pd.DataFrame(rows, columns=list(COLUMNS)), other


def _number(value: object) -> float:
    try:
        return float(str(value))
    except ValueError:
        return float("nan")


def _tuned(row: dict[str, object]) -> tuple[float, float, float]:
    return (_number(row["tuned_speedup"]), _number(row["tuned_low"]), _number(row["tuned_high"]))


def _now(row: dict[str, object]) -> str:
    if not row["verify_tests"]:
        return NOT_MEASURED
    return words.speedup_text(_number(row["verify_speedup"]), _number(row["verify_low"]),
                        _number(row["verify_high"]))  # fmt: skip


def _size(row: dict[str, object]) -> str | None:
    return words.size_text(int(str(row["msg_size"]))) if str(row["msg_size"]) else None


def _own_launches(row: dict[str, object]) -> str:
    tests = str(row.get("verify_test_names", ""))
    return words.own_launches_text(tests.split() if tests != "nan" else [])


def decision_line(row: dict[str, object]) -> str:
    """`- openmpi allreduce, 2 ranks, 8 B: use ring (1.06x faster [1.03, 1.08]) — verify: not
    confirmed (1.06 [0.98, 1.09])` (with TIMES for the x)."""
    where = words.point_text(str(row["mpi"]), str(row["op"]), int(str(row["ranks"])), _size(row))
    gain = words.faster_text(*_tuned(row))
    if row["rule_bytes"]:
        lo, hi = (int(size) for size in str(row["rule_bytes"]).split("-"))
        sizes = words.sizes_text(lo, hi)
        choice = f"replace by the mock-up {row['algorithm']} (its rule for {sizes}: {gain})"
    elif row["check"] == FILE_RUNS:
        choice = f"its settings file applied runs {row['algorithm']} ({row['comparison']})"
    elif row["check"] == FILE_BEATS:
        choice = f"its settings file applied beats the old default ({row['comparison']})"
    elif row["comparison"] == ACROSS:  # a preset in an entry of its own (Intel MPI)
        choice = f"use {row['algorithm']} ({gain}; {_own_launches(row)})"
    else:
        choice = f"use {row['algorithm']} ({gain})"
    now = "no test at this point" if not row["verify_tests"] else _now(row)
    return f"- {where}: {choice} — verify: {row['outcome']} ({now})"


def _table(checks: pd.DataFrame, what: str, checked: bool = False) -> list[str]:
    """The rows as a table; `checked`: with their check and comparison."""
    head = "| check | comparison " if checked else ""
    lines = [
        f"{head}| entry | op | ranks | msg_size | {what} | speedup when tuned | "
        "speedup now (least over its tests) | tests | outcome |",
        f"{'|---|---' if checked else ''}|---|---|---:|---:|---|---|---|---:|---|",
    ]
    for row in checks.to_dict("records"):
        cells = f"| {row['check']} | {row['comparison']} " if checked else ""
        lines.append(
            f"{cells}| {row['mpi']} | {row['op']} | {row['ranks']} | {row['msg_size']} | "
            f"{row['algorithm']} | {words.speedup_text(*_tuned(row))} | {_now(row)} | "
            f"{row['verify_tests']} | {row['outcome']} |"
        )
    return [*lines, ""]


def _levels(checks: pd.DataFrame) -> list[tuple[float, float]]:
    pairs = []
    for row in checks.to_dict("records"):
        pairs.append((_number(row["tuned_low_level"]), _number(row["tuned_high_level"])))
        if row["verify_tests"]:
            pairs.append((_number(row["verify_low_level"]), _number(row["verify_high_level"])))
    return pairs


def _forced_section(forced: pd.DataFrame) -> list[str]:
    """The chosen algorithms forced, with how each was compared with the library's choice:
    per experiment in the same launches, or (an Intel MPI preset) in an entry of its own."""
    ways = set(forced["comparison"]) or {WITHIN}
    how = f": {next(iter(ways))}" if len(ways) == 1 else ""
    said = []
    if WITHIN in ways:
        said.append(
            "Each chosen algorithm ran per experiment beside the library's own choice in the "
            "same launches, its ALGO test pairing them run by run."
        )
    if ACROSS in ways:
        said.append(
            "An Intel MPI preset, which the library reads at MPI_Init, ran in an mpi entry of its "
            "own (`<entry>.<op>.<algorithm>`) in the same blocks as the entry: its ALGO test "
            f"compares the two {ACROSS}, paired block by block over the runs whose two "
            "launches ran in the same attempt of their block (`verify_test_names` "
            "block_signed_rank; unpaired without blocks)."
        )
    lines = [f"## The library's algorithms `tune` chose{how}", "", " ".join(said), ""]
    if forced.empty:
        return [*lines, "`tune` chose none of the library's algorithms.", ""]
    return [*lines, *_table(forced, "algorithm", checked=ACROSS in ways)]


def verify_md(
    checks: pd.DataFrame,
    mockups: pd.DataFrame,
    tuned_pairs: Sequence[tuple[str, str]],
    thresholds: Thresholds,
    unlisted_rules: Sequence[str] = (),
) -> str:
    every = pd.concat([checks, mockups], ignore_index=True) if len(mockups) else checks
    levels = words.levels_text(_levels(every))
    bounds = f" [{levels}]" if levels else ""
    method = words.doc_link(words.VERIFY_NOTE, words.VERIFY_SECTION)
    lines = [
        "# Verify: the tuning on new runs",
        "",
        "One line per point `tune` tuned: its choice and speedup then, and whether these runs "
        f"show it again — {CONFIRMED} (significantly faster again), {NOT_CONFIRMED} (not "
        f"{words.times(thresholds.v_thres)} faster now, or slower) or {CANNOT_TELL} (these runs "
        "cannot decide); a speedup is the library's own call's time over the tuned one's"
        f"{bounds} (method: {method}).",
        "",
    ]
    lines += [decision_line(row) for row in every.to_dict("records")] or ["Nothing was tuned."]
    forced = checks[checks["check"] == FORCED]
    lines += ["", *_forced_section(forced)]
    applied = checks[checks["check"] != FORCED]
    if not applied.empty:
        lines += [
            "## The settings file `tune` wrote, applied",
            "",
            f"`<entry>{APPLIED_SUFFIX}` ran in the same blocks with the entry's settings "
            f"file in its environment. `{FILE_RUNS}`: the chosen algorithm forced ≈ the library's "
            "own call under the file (relation approx; its speedup is the forced call's time "
            f"over the file's, {CONFIRMED} where the two are within "
            f"{words.times(thresholds.v_thres)}), in one launch on MPICH, across launches "
            "against the entry's on Open MPI (its rules file overrides a forced algorithm) and "
            "against the preset's own entry on Intel MPI (it reads a preset at MPI_Init). "
            f"`{FILE_BEATS}`: the library's own call in the entry ≼ under the file, across "
            "launches (no library can force its old default by name).",
            "",
            *_table(applied, "algorithm", checked=True),
        ]
    lines += [
        f"## libmpiguide-tune's mock-ups: {WITHIN}",
        "",
        "In `<entry>.tuned` each experiment of a replaced collective ran twice in the same "
        "launches, as the program calls it (replaced) and with `algorithm: untuned` (the "
        "library's own call), its TUNE test pairing them run by run and read the other way "
        "round for the outcome; the speedup when tuned is the rule's, the least over its sizes.",
        "",
    ]
    if not tuned_pairs:
        lines += ["No libmpiguide-tune file replaces a collective.", ""]
        return "\n".join(lines).rstrip("\n") + "\n"
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
        "`mpiguide diff` of each entry and `<entry>.tuned`, which ran in launches of their own: "
        "what the preload does to the calls it does not replace (the groups "
        "`algorithm=untuned|` compare the library's own call in both), not the verdict on a "
        "replaced collective.",
        "",
    ]
    lines += [
        f"- `{entry}` vs `{tuned}`: [{VERIFY_TREE}/{entry}.md]({VERIFY_TREE}/{entry}.md)"
        for entry, tuned in tuned_pairs
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_verify_report(
    verify_tests_csv: Path,
    decided_with: Path,
    tuned_algorithms_csv: Path,
    tuned_pairs: Sequence[tuple[str, str]],
    md: Path,
    csv: Path,
) -> pd.DataFrame:
    """Write the verify note (md) and the per-point checks (csv): the chosen algorithms', then
    the mock-ups' (their files beside algorithms.csv); return the checks."""
    tests = read_tests(verify_tests_csv)
    # ALGO and TUNE tests are decided by analysis.tuning's thresholds, in every campaign
    options = Decisions.read(decided_with).options.for_tuning()
    thresholds = Thresholds(options.p_thres, options.v_thres, options.confidence)
    checks = algorithm_checks(tests, pd.read_csv(tuned_algorithms_csv), thresholds)
    mockups, unlisted = mockup_checks(
        tests, thresholds, tuned_algorithms_csv.parent, [entry for entry, _ in tuned_pairs]
    )
    every = pd.concat([checks, mockups], ignore_index=True) if len(mockups) else checks
    with atomic_path(csv) as temporary:
        every.to_csv(temporary, index=False)
    note = verify_md(checks, mockups, tuned_pairs, thresholds, unlisted)
    with atomic_path(md) as temporary:
        temporary.write_text(note, encoding="utf-8")
    return every
