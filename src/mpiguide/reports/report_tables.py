"""What `snakemake --report` shows of the verdicts, from tests.csv.

- verdict_lines.csv and verdict_lines.rst: one line per guideline over every MPI library and
  deployment: the tests (and groups) that hold, are violated and are undecided, and the median
  detectable ratio. The RST is included on the report's front page (workflow/report/workflow.rst),
  so that a reader sees first how much the campaign could decide, not only what it flagged.
- violated_undecided.csv: the tests of every violated or undecided group, the columns a reader
  needs to judge them first (verdicts, effect and bounds, the deciding test, what the test could
  have seen), parameter columns that are empty in every row left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import AnalysisOptions, Decisions
from mpiguide.analysis.tables import (
    FUTILE_COLUMNS,
    SUMMARY_KEYS,
    futile_counts,
    futile_note,
    parameter_columns,
)
from mpiguide.analysis.verdicts import UNDECIDED, VERDICTS, VIOLATED, runs_needed_text
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import VERDICT_LINES_CSV, VERDICT_LINES_RST, VIOLATED_UNDECIDED_CSV
from mpiguide.core.values import TUNING_GUIDELINES

NEEDED = ("guideline", "relation", "group", "verdict", "group_verdict", "detectable_ratio")
# violated_undecided.csv: these first, then the parameters, then these.
LEADING = ("guideline", "relation", "group", "group_verdict", "verdict")
TRAILING = (
    "violation_ratio", "ratio_low", "ratio_high", "low_level", "high_level", "test", "p_value",
    "p_adjusted",
    "detectable_ratio", "runs_needed", "n_lhs", "n_rhs", "median_lhs", "median_rhs",
    "lhs_exp_id", "rhs_exp_id", "hl_ratio", "hl_low", "hl_high",
)  # fmt: skip
# Group verdicts in the order violated_undecided.csv lists them.
SHOWN_GROUPS = (VIOLATED, UNDECIDED)


def read_text_table(path: Path, needed: Sequence[str], what: str) -> pd.DataFrame:
    """A table as text, cells as written; DataError names the file and a missing column."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise DataError(f"{path}: cannot read {what}: {error}") from None
    missing = [column for column in needed if column not in table]
    if missing:
        raise DataError(f"{path}: column {missing[0]!r} missing")
    return table


def read_tests(tests_csv: Path) -> pd.DataFrame:
    """tests.csv as text, cells as written (so that the tables repeat its numbers exactly)."""
    tests = read_text_table(tests_csv, NEEDED, "the tests")
    unknown = ~tests["verdict"].isin(VERDICTS) | ~tests["group_verdict"].isin(VERDICTS)
    if unknown.any():
        line = int(unknown.to_numpy().argmax()) + 2  # the header is line 1
        raise DataError(f"{tests_csv}:{line}: a verdict is not one of {', '.join(VERDICTS)}")
    return tests


def verdict_lines(tests: pd.DataFrame) -> pd.DataFrame:
    """Per guideline, in tests.csv's order: tests and groups that hold, are violated and are
    undecided (for an adaptive campaign, and of them the futile ones: FUTILE_COLUMNS), and the
    median detectable ratio of its tests. A group is one per guideline, mpi and deployment, as
    in summary.csv."""
    columns = ["guideline", "relation", "tests", *VERDICTS]
    futile = futile_counts(tests, ["guideline"])
    columns += [] if futile is None else list(FUTILE_COLUMNS)
    columns += ["groups", *(f"{verdict}_groups" for verdict in VERDICTS)]
    columns += ["median_detectable_ratio"]
    if tests.empty:
        return pd.DataFrame(columns=columns)
    detectable = pd.to_numeric(tests["detectable_ratio"], errors="coerce")
    frame = tests.assign(_detectable=detectable)
    by_guideline = frame.groupby("guideline", sort=False)
    lines = by_guideline.agg(relation=("relation", "first"), tests=("verdict", "size"))
    for verdict in VERDICTS:
        lines[verdict] = by_guideline["verdict"].agg(lambda v, want=verdict: int((v == want).sum()))
    groups = frame.drop_duplicates([*SUMMARY_KEYS, "group"]).groupby("guideline", sort=False)
    lines["groups"] = groups.size()
    for verdict in VERDICTS:
        lines[f"{verdict}_groups"] = groups["group_verdict"].agg(
            lambda v, want=verdict: int((v == want).sum())
        )
    lines["median_detectable_ratio"] = by_guideline["_detectable"].median()
    if futile is not None:
        lines = lines.join(futile)
    return lines.reset_index()[columns]


def _rst_text(text: str) -> str:
    """Text as RST shows it literally: inline markup characters escaped."""
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text)


def decided_with_rst(options: AnalysisOptions, tuning_too: bool = False) -> str:
    """How the verdicts were decided, from check's own record: a report built after the options
    changed, without re-running check, still states the options its tables were computed with;
    with `tuning_too` (the campaign has guidelines mpiguide adds to tune and verify) how those
    were."""
    v_thres = options.v_thres
    tuning = options.tuning
    return (
        f"Decided with ``analysis.test: {options.test}`` (``auto``: where both sides were"
        " measured in the same launches, a paired t-test on the per-run log-ratios; where two"
        " mpi entries of one deployment were launched back to back in blocks, the signed-rank"
        " test on the per-block log-ratios; otherwise Welch's t-test on the log run medians;"
        " ``paired``: the paired t-test wherever both sides hold the same runs, else Welch's;"
        " ``ranksum``: Lübbe's rank-sum everywhere; tests.csv's ``test`` names each test's),"
        " correction"
        f" ``{options.correction}``: a test is **violated** when its effect v ≥ {v_thres:g}"
        " and its lower bound at the violation level (one-sided at 1 - p_thres after the"
        f" correction: the same as p ≤ {options.p_thres:g}) is above 1; it **holds** when v"
        f" and its upper bound (one-sided at {options.confidence:g}) are below {v_thres:g}"
        f" (``approx``: both bounds within 1/{v_thres:g} … {v_thres:g}); otherwise it is"
        " **undecided**: these runs can neither show nor rule out a violation, which is not a"
        " pass. The interval beside a verdict is the one that decided it (tests.csv's"
        " ``low_level``, ``high_level``: the level of each bound). (Recorded by ``check`` in"
        " decided_with.json beside the tables.)\n"
        + (
            f"The guidelines mpiguide adds to tune and verify ({TUNING_GUIDELINES}) are decided"
            f" with ``test: auto`` at ``analysis.tuning``'s p_thres {tuning.p_thres:g} and"
            f" v_thres {tuning.v_thres:g}, whatever the above says of ``test``, p_thres and"
            " v_thres: by the paired t-test where both sides were measured in the same launches"
            " (an algorithm forced per experiment, libmpiguide-tune's replacement), across"
            " launches as above where they were not (Intel MPI's presets, each an entry of its"
            " own; the old default beside the settings file).\n"
            if tuning_too
            else ""
        )
    )


def verdict_lines_rst(lines: pd.DataFrame, decisions: Decisions) -> str:
    """The front page's lines: how the verdicts were decided, then a bullet per guideline (no
    title, so that it can be included anywhere in a document)."""
    text = [
        decided_with_rst(decisions.options, decisions.any_by_tuning(lines["guideline"])),
        "**Verdicts per guideline**, over every MPI library and deployment: a test is "
        "*violated* when the data show a violation, *holds* when they rule one out, "
        "*undecided* when they can do neither (more runs, or a quieter machine, may decide "
        "it). The detectable ratio is the smallest true ratio a test would have flagged with "
        "80 % power.",
        "",
    ]
    if lines.empty:
        return "\n".join([*text, "No tests: no guideline paired any experiments.", ""])
    adaptive = FUTILE_COLUMNS[0] in lines
    for line in lines.itertuples(index=False):
        detectable = line.median_detectable_ratio
        detectable_text = "n/a" if pd.isna(detectable) else f"{detectable:.3g}"
        futile = futile_note(*(getattr(line, c) for c in FUTILE_COLUMNS)) if adaptive else ""
        text.append(
            f"- **{_rst_text(str(line.guideline))}** ({_rst_text(str(line.relation))}): "
            f"{line.holds} hold, {line.violated} violated, {line.undecided} undecided{futile} "
            f"of {line.tests} tests; groups: {line.holds_groups} hold, "
            f"{line.violated_groups} violated, {line.undecided_groups} undecided "
            f"of {line.groups}; median detectable ratio {detectable_text}"
        )
    return "\n".join(text) + "\n"


def violated_undecided(tests: pd.DataFrame) -> pd.DataFrame:
    """The tests of violated groups, then of undecided ones (guidelines in tests.csv's order
    within each), verdicts and the varied parameters first; parameter columns empty in every
    row left out."""
    shown = tests.loc[tests["group_verdict"].isin(SHOWN_GROUPS)]
    order = {verdict: index for index, verdict in enumerate(SHOWN_GROUPS)}
    guidelines = {guideline: index for index, guideline in enumerate(tests["guideline"].unique())}
    shown = shown.assign(
        _verdict=shown["group_verdict"].map(order), _guideline=shown["guideline"].map(guidelines)
    ).sort_values(["_verdict", "_guideline"], kind="stable")
    parameters = [key for key in parameter_columns(tests) if (shown[key] != "").any()]
    columns = [c for c in (*LEADING, *parameters, *TRAILING) if c in tests]
    shown = shown[columns].reset_index(drop=True)
    if "runs_needed" in shown:
        # A person reads this table: a number of runs out of reach is said in words.
        # runs per side (unknown without the n_ columns: the text then says no more)
        unknown = pd.Series(np.nan, index=shown.index)
        runs = np.fmin(*(pd.to_numeric(shown[side], errors="coerce") if side in shown
                         else unknown for side in ("n_lhs", "n_rhs")))  # fmt: skip
        shown["runs_needed"] = [
            runs_needed_text(needed, have, verdict)
            for needed, have, verdict in zip(
                shown["runs_needed"], runs, shown["verdict"], strict=True
            )
        ]
    return shown


def write_report_tables(
    tests_csv: str | Path, decisions: Decisions, outdir: str | Path
) -> Sequence[Path]:
    """Read tests.csv, write verdict_lines.csv, verdict_lines.rst (stating `decisions`, what
    the verdicts were decided with) and violated_undecided.csv into outdir."""
    tests_csv, outdir = Path(tests_csv), Path(outdir)
    tests = read_tests(tests_csv)
    lines = verdict_lines(tests)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = [
        outdir / name for name in (VERDICT_LINES_CSV, VERDICT_LINES_RST, VIOLATED_UNDECIDED_CSV)
    ]
    with atomic_path(paths[0]) as temporary:
        lines.to_csv(temporary, index=False)
    with atomic_path(paths[1]) as temporary:
        Path(temporary).write_text(verdict_lines_rst(lines, decisions), encoding="utf-8")
    with atomic_path(paths[2]) as temporary:
        violated_undecided(tests).to_csv(temporary, index=False)
    return paths
