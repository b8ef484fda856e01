"""The campaign page, results/<campaign>/index.html: what to open first.

It opens with the answer: one line per guideline in words (violated where, by how much and
how sure; holds to within v_thres; or cannot tell yet, and how many runs might tell), from
tests.csv and verdict_lines.csv as check wrote them; beside them what
qualifies them (deployments with more ranks than this machine's cores, runs slow or fast as a
whole from variability's runs.csv); the method in one sentence with a link to
docs/analysis.md, and the options the verdicts were decided with (decided_with.json) folded
below it; where the campaign measured two versions of one library, per guideline which verdicts
changed from one to the next (reports.versions). Then the counts per guideline, the campaign's
figures, per guideline its counts per MPI library and deployment (summary.csv), its figures and
its tests by group (tests.csv, cells as written); at the end links to the tables and what the
page knows of Snakemake's report. The workflow re-makes it whenever any of these changes.

One HTML file that reads from disk without a server: inline style, no script, every link
relative to the page (the figures are the files beside it, not copies), so that
results/<campaign>/ can be copied elsewhere whole (the link to the docs then leads nowhere).
Every text from the data is escaped. Snakemake's provenance report (`snakemake --report`) is
made only when asked for: the page says whether it is older than the tables.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import math
import os
import re
import struct
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd

from mpiguide.analysis.analysis_types import (
    AnalysisOptions,
    Decisions,
    Guideline,
    TuningThresholds,
)
from mpiguide.analysis.tables import FUTILE_COLUMNS, futile_note, parameter_columns
from mpiguide.analysis.verdicts import (
    BEYOND_REACH,
    HOLDS,
    UNDECIDED,
    VERDICTS,
    VIOLATED,
    as_number,
    runs_needed_text,
)
from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import (
    FOREST,
    PLOT_SUFFIX,
    deployment_name,
    labels_of_plot,
    run_number,
    safe_name,
)
from mpiguide.reports.diff import ARROW, CHANGE_WORDS, CHANGES, FIXED, NEW_VIOLATION
from mpiguide.reports.figure_style import FigureCaptions
from mpiguide.reports.report_tables import decided_with_rst, read_tests, read_text_table
from mpiguide.reports.versions import VersionChanges, VersionPair, version_changes

# The columns the page reads of verdict_lines.csv, summary.csv and variability's runs.csv.
COUNT_COLUMNS = (*VERDICTS, "groups", *(f"{verdict}_groups" for verdict in VERDICTS))
LINE_COLUMNS = ("guideline", "relation", "tests", *COUNT_COLUMNS, "median_detectable_ratio")
SUMMARY_COLUMNS = ("guideline", "mpi", "nodes", "ppn", "tests", *COUNT_COLUMNS,
                   "median_detectable_ratio")  # fmt: skip
RUN_COLUMNS = ("mpi", "nodes", "ppn", "run", "experiments", "outside", "run_ratio", "flagged")
# Group verdicts in the order a guideline's tests are listed: what needs a reader first.
GROUP_ORDER = (VIOLATED, UNDECIDED, HOLDS)
# tests.csv's result columns the page shows, those present, in this order; the interval of
# ratio_low and ratio_high in one cell after violation_ratio, and any column that states the
# level of a bound after it.
RESULT_COLUMNS = ("verdict", "violation_ratio", "p_value", "p_adjusted", "test",
                  "detectable_ratio", "runs_needed")  # fmt: skip
BOUNDS = ("ratio_low", "ratio_high")
LEVELS = ("low_level", "high_level")
# Columns of a guideline's tests table said once above it when every row holds the same value.
SAID_ONCE = ("mpi", "deployment", "test", *LEVELS)
# The options that decide a verdict on this page (and run_band, which flags the runs it
# lists); the others (layout, variability, models) shape tables and figures it does not show,
# and stay in decided_with.json. `tuning` only where it decided some guideline.
DECIDING_OPTIONS = ("varied", "p_thres", "v_thres", "correction", "confidence", "test",
                    "run_band")  # fmt: skip
TUNING_OPTION = "tuning"
# Significant digits: ratios as junit.xml prints them; p-values and detectable ratios as the
# report's verdict lines.
RATIO_DIGITS, OTHER_DIGITS = 4, 3
# A row of a table read as text (DataFrame.to_dict's records).
Row = Mapping[Hashable, Any]
# Figures that belong to no guideline (the heatmap, slowdown.png): a section of their own.
CAMPAIGN_WIDE = ""
# Where docs/analysis.md states the three verdicts.
VERDICTS_ANCHOR = "verdicts-violated-holds-undecided"
# The varied parameter whose values are bytes.
MSG_SIZE = "msg_size"
APPROX = "approx"
# How the page writes a factor (1.044 TIMES slower) and a range of runs (25 TO 41).
TIMES, TO = "\N{MULTIPLICATION SIGN}", "\N{EN DASH}"

# The verdicts' tints are those of the figures' marks (reports.figure_style.VERDICT_COLOURS:
# red, purple, green), lightened for a table cell, so a verdict has one colour everywhere.
# Tables wrap their headers and scroll inside their box: the page never scrolls sideways; a
# figure is shown at its own size, never wider than the page.
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 78em;
       padding: 0 1em; color: #1a1a1a; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; }
th, td { border: 1px solid #d0d0d0; padding: 0.2em 0.55em; text-align: left;
         vertical-align: top; }
thead th { background: #f0f0f0; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.tests { font-size: 0.9em; }
table.verdict-lines td, table.deployments td { white-space: nowrap; }
.scroll { overflow-x: auto; max-width: 100%; }
td.violated { background: #f8d0cc; color: #7a1208; font-weight: 600; }
td.undecided { background: #e9d8f2; color: #4b1a63; }
td.holds { background: #d8efd4; color: #17481a; }
.made, .source, .what, .said-once { color: #555; font-size: 0.9em; }
ul.verdicts { list-style: none; padding: 0; }
ul.verdicts li { border-left: 6px solid #bbb; padding: 0.35em 0.7em; margin: 0.3em 0;
                 background: #fafafa; }
ul.verdicts li.violated { border-color: #d62728; }
ul.verdicts li.undecided { border-color: #7b3294; }
ul.verdicts li.holds { border-color: #1a9850; }
.what { display: block; }
a.warn { color: #8a4b00; font-weight: 600; }
.notice { border-left: 4px solid #888; background: #f5f5f5; padding: 0.5em 0.8em; }
.notice.warn { border-color: #e08a00; background: #fff4e0; }
.notice.stale { border-color: #c0392b; background: #fbe9e7; }
.notice ul { margin: 0.3em 0; }
details { margin: 0.8em 0; }
summary { cursor: pointer; color: #333; }
code { background: #f2f2f2; padding: 0 0.2em; overflow-wrap: anywhere; }
figure { display: inline-block; margin: 0.4em 0.4em 1em 0; vertical-align: top;
         max-width: 100%; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.85em; color: #444; }
"""


@dataclass(frozen=True)
class Figure:
    """A PNG the page shows, and what it shows in words."""

    path: Path
    caption: str


@dataclass(frozen=True)
class ReportAge:
    """Snakemake's report beside the page: where `snakemake --report` writes it, when it was
    written (None: not there), when the tables it would show were, and whether it holds
    these tables, byte for byte (an analysis run again on the same runs and options writes
    them anew, the same)."""

    path: Path
    written: datetime | None
    tables_written: datetime
    holds_tables: bool = False

    @property
    def stale(self) -> bool:
        return (
            self.written is not None
            and self.written < self.tables_written
            and not self.holds_tables
        )


def report_holds(report: Path, tables: Iterable[Path]) -> bool:
    """Whether Snakemake's report `report` holds each of `tables` as it is now: Snakemake
    embeds a file of the report in base64. False when the report or a table is not there."""
    try:
        embedded = report.read_bytes()
        encoded = [base64.b64encode(table.read_bytes()) for table in tables]
    except FileNotFoundError:
        return False
    return bool(encoded) and all(table in embedded for table in encoded)


@dataclass(frozen=True)
class Campaign:
    """What the page shows, read from the campaign's files."""

    name: str
    decisions: Decisions  # decided_with.json
    lines: pd.DataFrame  # verdict_lines.csv
    summary: pd.DataFrame  # summary.csv
    tests: pd.DataFrame  # tests.csv, cells as written
    guidelines: Mapping[str, Guideline]
    figures: Mapping[str, Sequence[Figure]]  # by guideline id; CAMPAIGN_WIDE: the others
    tests_csv: Path
    tables: Sequence[Path]
    report: ReportAge
    runs: pd.DataFrame | None = None  # variability's runs.csv, cells as written
    runs_csv: Path | None = None
    # deployment name -> why its timings measure time slices (campaign.summary.Oversubscription)
    oversubscribed: Mapping[str, str] = dataclasses.field(default_factory=dict)
    analysis_doc: Path | None = None  # docs/analysis.md, where it is
    versions: Sequence[VersionChanges] = ()  # per pair of versions of one library

    @property
    def options(self) -> AnalysisOptions:
        return self.decisions.options


def _escape(value: object) -> str:
    return html.escape(str(value), quote=True)


def _href(path: Path, page_dir: Path) -> str:
    """`path` as a link from a page in `page_dir`: relative, percent-encoded, escaped."""
    relative = Path(os.path.relpath(path.absolute(), page_dir.absolute())).as_posix()
    return _escape(quote(relative))


def _link(path: Path, page_dir: Path, text: str | None = None) -> str:
    return f'<a href="{_href(path, page_dir)}">{_escape(text or path.name)}</a>'


def _number(text: str, digits: int) -> str:
    """A numeric cell to `digits` significant digits; any other text as written."""
    try:
        value = float(text)
    except ValueError:
        return text
    return "" if math.isnan(value) else f"{value:.{digits}g}"


def _count(text: str) -> str:
    """A count as an integer (pandas may have written `12.0`); any other text as written."""
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() else text


def _int(text: object) -> int:
    """A count cell as a number (0 where empty or not a number)."""
    value = as_number(text)
    return 0 if math.isnan(value) else int(value)


def _percent(fraction: float) -> str:
    """A level or a fraction in percent: 0.999 is `99.9 %`, 0.03 `3 %`."""
    return f"{100 * fraction:.6g} %"


def _time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _modified(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _anchor(index: int, guideline: str) -> str:
    """The id of a guideline's section: unique by position, readable by name."""
    return f"guideline-{index}-{safe_name(guideline)}"


RST_INLINE = re.compile(r"``(.+?)``|\*\*(.+?)\*\*|\*(.+?)\*|\\(.)")


def rst_inline_html(text: str) -> str:
    """The inline markup of report_tables' sentences (``literal``, **strong**, *emphasis*,
    backslash escapes) as HTML, every text escaped: the page states the options in the words
    the report uses."""
    parts: list[str] = []
    last = 0
    for match in RST_INLINE.finditer(text):
        parts.append(_escape(text[last : match.start()]))
        literal, strong, emphasis, escaped = match.groups()
        if literal is not None:
            parts.append(f"<code>{_escape(literal)}</code>")
        elif strong is not None:
            parts.append(f"<strong>{_escape(strong)}</strong>")
        elif emphasis is not None:
            parts.append(f"<em>{_escape(emphasis)}</em>")
        else:
            parts.append(_escape(escaped))
        last = match.end()
    parts.append(_escape(text[last:]))
    return "".join(parts).strip()


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], classes: str = "") -> str:
    """An HTML table of `header` (texts, escaped here) and rows of ready HTML cells."""
    head = "".join(f"<th>{_escape(name).replace('_', '_<wbr>')}</th>" for name in header)
    body = "\n".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    attribute = f' class="{classes}"' if classes else ""
    return f"<table{attribute}><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"


def _scrolling(table: str) -> str:
    """A table in a box that scrolls sideways when it is wider than the page."""
    return f'<div class="scroll">{table}</div>'


def _cell(text: str, css: str = "") -> str:
    attribute = f' class="{css}"' if css else ""
    return f"<td{attribute}>{_escape(text)}</td>"


def _verdict_cell(verdict: str) -> str:
    return _cell(verdict, verdict if verdict in VERDICTS else "")


def _counts(row: Row) -> list[str]:
    """Cells of a verdict line or summary row: tests that hold, are violated, are undecided
    (and of them the futile ones, in an adaptive campaign), of how many; the same of groups;
    the median detectable ratio."""
    groups = ", ".join(
        f"{_count(row[f'{verdict}_groups'])} {verdict}" for verdict in (HOLDS, VIOLATED, UNDECIDED)
    )
    return [
        _count_cell(row[HOLDS], "hold", HOLDS),
        _count_cell(row[VIOLATED], "violated", VIOLATED),
        _count_cell(row[UNDECIDED], f"undecided{_futile(row)}", UNDECIDED),
        _cell(f"of {_count(row['tests'])}", "number"),
        _cell(f"{groups} of {_count(row['groups'])}"),
        _cell(_number(row["median_detectable_ratio"], OTHER_DIGITS) or "n/a", "number"),
    ]


def _futile(row: Row) -> str:
    """An adaptive campaign's futile tests among the undecided ones of `row`, or nothing."""
    if FUTILE_COLUMNS[0] not in row:
        return ""
    return futile_note(_int(row[FUTILE_COLUMNS[0]]), *(row[c] for c in FUTILE_COLUMNS[1:]))


def _count_cell(count: str, words: str, verdict: str) -> str:
    """`<count> <words>`, in the verdict's colour unless the count is 0."""
    return _cell(f"{_count(count)} {words}", verdict if _count(count) != "0" else "")


COUNT_HEADER = ("holds", "violated", "undecided", "tests", "groups", "median detectable ratio")


# --- the verdicts in words ---------------------------------------------------------------------


def _runs(test: Row) -> float:
    """The runs per side a test had (the fewer of its two sides; NaN where not recorded)."""
    sides = [as_number(test.get(side)) for side in ("n_lhs", "n_rhs")]
    known = [runs for runs in sides if not math.isnan(runs)]
    return min(known) if known else math.nan


def _effect(test: Row, approx: bool) -> float:
    """How far a test is from its relation: v, or for approx max(v, 1/v)."""
    ratio = as_number(test["violation_ratio"])
    return max(ratio, 1 / ratio) if approx and ratio > 0 else ratio


def _point(test: Row, varied: str) -> str:
    """Where a test is: `openmpi 1x2 group 3, 1024 B`."""
    value = test.get(varied, "")
    at = f"{value} B" if varied == MSG_SIZE else f"{varied} {value}"
    deployment = deployment_name(test["nodes"], test["ppn"])
    return f"{test['mpi']} {deployment} group {_count(test['group'])}, {at}"


def _levels(test: Row) -> str:
    """The one-sided levels of a test's bounds as tests.csv states them."""
    low, high = (as_number(test.get(level)) for level in LEVELS)
    if math.isnan(low) or math.isnan(high):
        return ""
    return f"lower {_percent(low)}, upper {_percent(high)}"


def _interval(test: Row, levels_said: bool) -> str:
    """`[low, high]`, with its levels unless the page says them once for every test."""
    low, high = (_number(test[bound], RATIO_DIGITS) for bound in BOUNDS)
    levels = "" if levels_said else _levels(test)
    return f"[{low}, {high}]" + (f" ({levels})" if levels else "")


def _slowdown(test: Row, levels_said: bool) -> str:
    """A violated test's effect in words: `1.044 TIMES slower [1.024, 1.053]`, or for a faster
    lhs (approx) `1.05 TIMES faster (ratio 0.952 [0.931, 0.972])`."""
    ratio = as_number(test["violation_ratio"])
    interval = _interval(test, levels_said)
    if ratio >= 1:
        return f"{ratio:.{RATIO_DIGITS}g}{TIMES} slower {interval}"
    inverse = f"{1 / ratio:.{RATIO_DIGITS}g}{TIMES}"
    return f"{inverse} faster (ratio {ratio:.{RATIO_DIGITS}g} {interval})"


def _groups_phrase(count: int, total: int) -> str:
    if count == total:
        return "in its only group" if total == 1 else f"in all {total} groups"
    return f"in {count} of {total} groups"


def _within(options: AnalysisOptions, approx: bool) -> str:
    """What `holds` rules out, in percent of v_thres: `to within 3 %`."""
    margin = _percent(options.v_thres - 1)
    return f"equal to within {margin} either way" if approx else f"to within {margin}"


def _undecided_runs(tests: pd.DataFrame, options: AnalysisOptions) -> str:
    """What more runs might do for a guideline's undecided tests (runs_needed: the runs per
    side at which a decision is about as likely as not)."""
    undecided = tests.loc[tests["verdict"] == UNDECIDED].to_dict("records")
    if not undecided:
        return ""
    needed = [runs_needed_text(t.get("runs_needed"), _runs(t), UNDECIDED) for t in undecided]
    reachable = sorted(int(text) for text in needed if text != BEYOND_REACH)
    beyond = len(needed) - len(reachable)
    subject = "its undecided test" if len(needed) == 1 else f"its {len(needed)} undecided tests"
    if not reachable:
        effects = "its effect sits" if len(needed) == 1 else "their effects sit"
        return (
            f"more runs of this campaign would hardly decide {subject}: {effects} too close "
            f"to {options.v_thres:g}"
        )
    runs = sorted({int(r) for r in map(_runs, undecided) if not math.isnan(r)})
    now = (
        "" if not runs else f" (now {runs[0]}" + (f"{TO}{runs[-1]}" if len(runs) > 1 else "") + ")"
    )
    low, high = reachable[0], reachable[-1]
    span = f"about {low}" if low == high else f"{low}{TO}{high}"
    text = (
        f"{f'{len(reachable)} of ' if beyond else ''}{subject} would need {span} runs per side"
        f"{now} for even odds of a decision"
    )
    return text + (f"; {beyond} {'is' if beyond == 1 else 'are'} beyond reach" if beyond else "")


@dataclass(frozen=True)
class Headline:
    """A guideline's answer in words: its verdict (a VERDICTS value, "" without tests) and the
    sentence that says it, HTML."""

    verdict: str
    html: str


def headline(
    line: Row, tests: pd.DataFrame, options: AnalysisOptions, levels_said: bool
) -> Headline:
    """The answer for one guideline over every MPI library and deployment, the answer first:
    violated (in how many groups, and its largest violation: where, how much, its interval),
    holds (to within v_thres), or cannot tell yet (and how many runs might tell)."""
    approx = line["relation"] == APPROX
    total = _int(line["groups"])
    violated, holds, undecided = (_int(line[f"{v}_groups"]) for v in (VIOLATED, HOLDS, UNDECIDED))
    if total == 0:
        return Headline("", "no tests: no experiments of this campaign paired for it")
    if violated:
        shown = tests.loc[tests["verdict"] == VIOLATED].to_dict("records")
        worst = max(shown, key=lambda test: _effect(test, approx))
        where = _point(worst, options.varied)
        return Headline(
            VIOLATED,
            f"<strong>violated</strong> {_groups_phrase(violated, total)} (largest: "
            f"{_escape(where)}: {_escape(_slowdown(worst, levels_said))})",
        )
    if holds == total:
        highs = pd.to_numeric(tests["ratio_high"], errors="coerce")
        lows = pd.to_numeric(tests["ratio_low"], errors="coerce")
        bounds = (
            f"every interval within [{lows.min():.{RATIO_DIGITS}g}, {highs.max():.{RATIO_DIGITS}g}]"
            if approx
            else f"largest upper bound {highs.max():.{RATIO_DIGITS}g}"
        )
        levels = "" if levels_said else _level_values(tests, LEVELS if approx else LEVELS[1:])
        bounds += f", one-sided {levels}" if levels else ""
        return Headline(
            HOLDS,
            f"<strong>holds</strong> {_groups_phrase(holds, total)}, "
            f"{_escape(_within(options, approx))} ({_escape(bounds)})",
        )
    parts = [_groups_phrase(undecided, total)]
    if holds:
        parts.append(f"{holds} {'holds' if holds == 1 else 'hold'} {_within(options, approx)}")
    more = [text for text in (_undecided_runs(tests, options), _stopped(line)) if text]
    return Headline(
        UNDECIDED,
        f"<strong>cannot tell yet</strong> {_escape(', '.join(parts))}"
        + (f": {_escape('; '.join(more))}" if more else ""),
    )


def _stopped(line: Row) -> str:
    """An adaptive campaign's undecided tests of a guideline that stopped as futile: more runs
    would most likely not have decided them."""
    count = _int(line.get(FUTILE_COLUMNS[0]))
    if not count:
        return ""
    fewest, most = (_count(line[column]) for column in FUTILE_COLUMNS[1:])
    runs = fewest if fewest == most else f"{fewest}{TO}{most}"
    return f"{count} {'test' if count == 1 else 'tests'} stopped as futile at {runs} runs"


def _level_values(tests: pd.DataFrame, columns: Sequence[str]) -> str:
    """The distinct levels in these columns of tests.csv: `95 %`, or `95 % or 97.5 %`; ""
    where it states none."""
    present = [tests[column] for column in columns if column in tests]
    if not present:
        return ""
    levels = pd.to_numeric(pd.concat(present), errors="coerce").dropna().unique()
    return " or ".join(_percent(level) for level in sorted(levels))


def _uniform_levels(tests: pd.DataFrame) -> str:
    """The levels of every interval on the page when all tests share them, else ""."""
    if tests.empty or not all(level in tests for level in LEVELS):
        return ""
    pairs = tests[list(LEVELS)].drop_duplicates()
    return _levels(pairs.iloc[0].to_dict()) if len(pairs) == 1 else ""


def _verdicts_section(campaign: Campaign, page_dir: Path) -> str:
    """One line per guideline, the answer first; what qualifies the answers; the method in one
    sentence; the options folded below."""
    levels = _uniform_levels(campaign.tests)
    items = []
    for index, line in enumerate(campaign.lines.to_dict("records")):
        guideline = line["guideline"]
        tests = campaign.tests.loc[campaign.tests["guideline"] == guideline]
        found = headline(line, tests, campaign.decisions.for_guideline(guideline), bool(levels))
        warning = _oversubscribed_mark(campaign, tests)
        items.append(
            f'<li class="{found.verdict}" id="verdict-{_escape(safe_name(guideline))}">'
            f'<a href="#{_escape(_anchor(index, guideline))}"><strong>{_escape(guideline)}'
            f"</strong></a> {found.html}{warning}"
            f'<span class="what">{_escape(_text_of(campaign, guideline))}</span></li>'
        )
    listed = set(campaign.lines["guideline"])
    for guideline in campaign.guidelines:
        if guideline not in listed:
            items.append(
                f'<li id="verdict-{_escape(safe_name(guideline))}"><strong>'
                f"{_escape(guideline)}</strong> no tests: no experiments of this campaign "
                f'paired for it<span class="what">{_escape(_text_of(campaign, guideline))}'
                "</span></li>"
            )
    body = (
        f'<ul class="verdicts">\n{chr(10).join(items)}\n</ul>'
        if items
        else "<p>No tests: no guideline paired any experiments.</p>"
    )
    parts = [
        '<section id="verdicts">',
        "<h2>Verdicts</h2>",
        body,
        _oversubscribed_notice(campaign),
        _flagged_runs(campaign, page_dir),
        _method(campaign, levels, page_dir),
        _options_details(
            campaign.options, campaign.decisions.any_by_tuning(campaign.lines["guideline"])
        ),
        "</section>",
    ]
    return "\n".join(part for part in parts if part)


# A count of the versions table in the tint of the verdict it leads to, where not 0.
CHANGE_TINTS = {NEW_VIOLATION: VIOLATED, FIXED: HOLDS}


def _version_table(changes: VersionChanges) -> str:
    """Per guideline of one pair: its tests, which verdicts changed, and the changes of
    reports.diff counted."""
    rows = []
    for row in changes.guidelines.to_dict("records"):
        moved = str(row["verdict_changes"])
        counts = [
            _cell(str(row[change]), CHANGE_TINTS.get(change, "") if row[change] else "")
            for change in CHANGES[:-1]
        ]
        rows.append(
            [
                _cell(row["guideline"]),
                _cell(str(row["tests"]), "number"),
                _cell(f"{row['verdicts_changed']}" + (f": {moved}" if moved else "")),
                *counts,
            ]
        )
    header = ("guideline", "tests", "verdicts changed", *CHANGE_WORDS)
    return _scrolling(_table(header, rows, "versions"))


def _versions_section(campaign: Campaign) -> str:
    """Per pair of versions of one library, per guideline which verdicts changed from the
    older to the newer (reports.versions); nothing when the campaign has no such pair."""
    if not campaign.versions:
        return ""
    parts = [
        '<section id="versions">',
        "<h2>Versions compared</h2>",
        "<p>Per guideline, how many tests changed verdict from one version of a library to "
        "the next, and how: the entries of one <code>library</code> built apart, each compared "
        "with the next the campaign lists. Then, as <code>mpiguide diff</code> counts them, the "
        "tests newly violated, fixed, and those whose interval moved wholly above (slower) or "
        "below (faster) the older version's.</p>",
    ]
    for changes in campaign.versions:
        pair = changes.pair
        parts.append(
            f"<h3>{_escape(pair.library)}: {_escape(pair.older)} {ARROW} {_escape(pair.newer)}</h3>"
        )
        if changes.problem:
            parts.append(f'<p class="notice warn">Not compared: {_escape(changes.problem)}</p>')
            continue
        parts.append(_version_table(changes))
        for name, guidelines in zip((pair.older, pair.newer), changes.one_sided, strict=True):
            if guidelines:
                parts.append(
                    f'<p class="said-once">Tested for {_escape(name)} only, not compared: '
                    f"{_escape(', '.join(guidelines))}.</p>"
                )
    parts.append("</section>")
    return "\n".join(parts)


def _method(campaign: Campaign, levels: str, page_dir: Path) -> str:
    """How a test is decided, in one sentence, with a link to where docs/analysis.md says it
    in full."""
    options = campaign.options
    doc = campaign.analysis_doc
    where = (
        f'<a href="{_href(doc, page_dir)}#{VERDICTS_ANCHOR}">docs/analysis.md</a>'
        if doc is not None and doc.is_file()
        else "docs/analysis.md of mpiguide"
    )
    used = sorted(set(campaign.tests["test"])) if "test" in campaign.tests else []
    by = f"the {', '.join(used)} test{'s' if len(used) > 1 else ''}" if used else "its test"
    correction = "" if options.correction == "none" else f" after {options.correction}"
    either_way = (
        f" (≈ guidelines: either way, inside 1/{options.v_thres:g} … {options.v_thres:g})"
        if (campaign.lines["relation"] == APPROX).any()
        else ""
    )
    tuning = (
        f" (tuning guidelines at analysis.tuning's p ≤ {options.tuning.p_thres:g}, "
        f"v ≥ {options.tuning.v_thres:g})"
        if campaign.decisions.any_by_tuning(campaign.lines["guideline"])
        else ""
    )
    intervals = f"; intervals are one-sided bounds, {levels}" if levels else ""
    return (
        f'<p class="method" id="method">Each test compares two sides\' timings as v = lhs / '
        f"rhs ({_escape(by)}): <strong>violated</strong> when "
        f"v ≥ {options.v_thres:g} and p ≤ {options.p_thres:g}{_escape(correction)}, "
        f"<strong>holds</strong> when v and its upper bound (one-sided "
        f"{_percent(options.confidence)}) are below {options.v_thres:g}{_escape(either_way)}, "
        f"else <strong>undecided</strong>, which is not a pass{_escape(tuning)}"
        f"{_escape(intervals)} &mdash; how and why: {where}.</p>"
    )


def _options_details(options: AnalysisOptions, tuning_too: bool) -> str:
    """How the verdicts were decided, in the report's words, then the options that decide
    them: folded, for whoever wants to check."""
    names, values = [], []
    shown = (*DECIDING_OPTIONS, *([TUNING_OPTION] if tuning_too else []))
    for name in shown:
        value = getattr(options, name)
        if isinstance(value, TuningThresholds):
            value = json.dumps(dataclasses.asdict(value))
        names.append(name)
        values.append(f'<td id="option-{name}"><code>{_escape(value)}</code></td>')
    return (
        '<details id="decided-with">\n<summary>Decided with: the options, in full</summary>\n'
        f"<p>{rst_inline_html(decided_with_rst(options, tuning_too))}</p>\n"
        f"{_scrolling(_table(names, [values], 'options'))}\n"
        "<p>The other analysis options shape tables and figures this page does not show "
        "(decided_with.json holds them all).</p>\n</details>"
    )


# --- what qualifies the verdicts ---------------------------------------------------------------


def _deployments_of(frame: pd.DataFrame) -> list[str]:
    if frame.empty:
        return []
    names = [deployment_name(n, p) for n, p in zip(frame["nodes"], frame["ppn"], strict=True)]
    return list(dict.fromkeys(names))


def _oversubscribed_mark(campaign: Campaign, tests: pd.DataFrame) -> str:
    """A warning beside a verdict that rests on oversubscribed deployments."""
    found = [name for name in _deployments_of(tests) if name in campaign.oversubscribed]
    if not found:
        return ""
    return (
        f' <a class="warn" href="#oversubscribed">⚠ {_escape(", ".join(found))} oversubscribed</a>'
    )


def _oversubscribed_notice(campaign: Campaign) -> str:
    """Each deployment with more ranks than this machine's cores, why its timings measure time
    slices, and the verdicts that rest on it."""
    if not campaign.oversubscribed:
        return ""
    summary = campaign.summary
    names = [deployment_name(n, p) for n, p in zip(summary["nodes"], summary["ppn"], strict=True)]
    items = []
    for deployment, warning in campaign.oversubscribed.items():
        rows = summary.loc[[name == deployment for name in names]]
        counts = {column: sum(map(_int, rows[column])) for column in ("tests", *VERDICTS)}
        verdicts = (
            f" Its tests: {counts[HOLDS]} hold, {counts[VIOLATED]} violated, "
            f"{counts[UNDECIDED]} undecided of {counts['tests']}."
            if counts["tests"]
            else ""
        )
        items.append(f"<li>{_escape(warning)}.{_escape(verdicts)}</li>")
    return (
        '<div class="notice warn" id="oversubscribed"><p><strong>⚠ Oversubscribed: more ranks '
        "than this machine has cores.</strong> Ranks that share a core run in turns: their "
        "timings measure time slices, not the library alone, and spread widely, which leaves "
        "tests undecided.</p>\n"
        f"<ul>{''.join(items)}</ul></div>"
    )


def _flagged_runs(campaign: Campaign, page_dir: Path) -> str:
    """The runs that were slow or fast as a whole (variability's `flagged`), per MPI library
    and deployment, with a link to runs.csv; or that there were none."""
    runs, runs_csv = campaign.runs, campaign.runs_csv
    if runs is None or runs_csv is None:
        return ""
    band = campaign.options.run_band
    link = _link(runs_csv, page_dir, f"{runs_csv.parent.name}/{runs_csv.name}")
    rule = (
        f"the median over its experiments of run median / median of run medians "
        f"(run_ratio) outside 1 ± {band:g}"
    )
    flagged = runs.loc[runs["flagged"].str.lower() == "true"]
    if flagged.empty:
        return (
            f'<p id="flagged-runs">No run was slow or fast as a whole: for none of the '
            f"{len(runs)} runs is {_escape(rule)} ({link}).</p>"
        )
    items = []
    for (mpi, nodes, ppn), group in flagged.groupby(["mpi", "nodes", "ppn"], sort=False):
        every = runs.loc[(runs["mpi"] == mpi) & (runs["nodes"] == nodes) & (runs["ppn"] == ppn)]
        listed = ", ".join(
            f"run{run_number(_int(run['run']))} ({_number(run['run_ratio'], 3)}{TIMES}, "
            f"{_count(run['outside'])} of {_count(run['experiments'])} experiments outside)"
            for run in group.to_dict("records")
        )
        items.append(
            f"<li>{_escape(mpi)} {_escape(deployment_name(nodes, ppn))}: {len(group)} of "
            f"{len(every)} runs: {_escape(listed)}</li>"
        )
    return (
        f'<div class="notice warn" id="flagged-runs"><p><strong>{len(flagged)} of {len(runs)} '
        f"runs were slow or fast as a whole</strong> ({_escape(rule)}): a run slow in every "
        "experiment points at the machine (load, a noisy neighbour), not at the library; "
        f"{link} has every run.</p>\n<ul>{''.join(items)}</ul></div>"
    )


# --- counts, figures, tests --------------------------------------------------------------------


def _lines_section(campaign: Campaign) -> str:
    """The counts per guideline over every MPI library and deployment."""
    intro = (
        "<p>Per guideline, over every MPI library and deployment: a test is <em>violated</em> "
        "when the data show a violation, <em>holds</em> when they rule one out, "
        "<em>undecided</em> when they can do neither &mdash; which is not a pass: more runs, "
        "or a quieter machine, may decide it. The detectable ratio is the smallest true ratio "
        "a test would have flagged with 80 % power.</p>"
    )
    if campaign.lines.empty:
        body = "<p>No tests: no guideline paired any experiments.</p>"
    else:
        rows = [
            [
                f'<th><a href="#{_escape(_anchor(index, line["guideline"]))}">'
                f"{_escape(line['guideline'])}</a></th>",
                _cell(line["relation"]),
                *_counts(line),
            ]
            for index, line in enumerate(campaign.lines.to_dict("records"))
        ]
        header = ("guideline", "relation", *COUNT_HEADER)
        body = _scrolling(_table(header, rows, "verdict-lines"))
    title = "<h2>Counts per guideline</h2>"
    return f'<section id="verdict-lines">\n{title}\n{intro}\n{body}\n</section>'


def _text_of(campaign: Campaign, guideline: str) -> str:
    found = campaign.guidelines.get(guideline)
    return found.text if found is not None else "(not among the campaign's guidelines)"


def _deployments_table(summary: pd.DataFrame, oversubscribed: Mapping[str, str]) -> str:
    rows = []
    for row in summary.to_dict("records"):
        name = deployment_name(row["nodes"], row["ppn"])
        deployment = _cell(name)
        if name in oversubscribed:
            deployment = (
                f'<td>{_escape(name)} <a class="warn" href="#oversubscribed" '
                f'title="{_escape(oversubscribed[name])}">⚠ oversubscribed</a></td>'
            )
        rows.append([_cell(row["mpi"]), deployment, *_counts(row)])
    return _scrolling(_table(("mpi", "deployment", *COUNT_HEADER), rows, "deployments"))


def png_size(path: Path) -> tuple[int, int] | None:
    """A PNG's width and height in pixels from its header; None when it is no PNG."""
    try:
        with path.open("rb") as png:
            head = png.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def _figures_html(figures: Sequence[Figure], page_dir: Path) -> str:
    """Each figure at its own size (sized from its header, so that the page does not jump
    while it loads), scaled down to the page's width where wider, linked to the file."""
    shown = []
    for figure in figures:
        href = _href(figure.path, page_dir)
        caption = _escape(figure.caption)
        size = png_size(figure.path)
        dimensions = "" if size is None else f' width="{size[0]}" height="{size[1]}"'
        shown.append(
            f'<figure><a href="{href}"><img src="{href}" alt="{caption}"{dimensions} '
            f'loading="lazy"></a><figcaption>{caption}</figcaption></figure>'
        )
    return "\n".join(shown)


def _shown_keys(tests: pd.DataFrame, varied: str) -> list[str]:
    """The parameters a guideline's tests differ in (and the varied one): the others are the
    same in every row and tell no test from another."""
    keys = [key for key in parameter_columns(tests) if key not in ("mpi", "nodes", "ppn")]
    return [key for key in keys if key == varied or tests[key].nunique() > 1]


def _said_once(tests: pd.DataFrame) -> dict[str, str]:
    """The columns of SAID_ONCE that hold one value in every test of a guideline (with the
    deployment as one column), and that value: said above the table instead of in each row."""
    columns = {
        "mpi": tests["mpi"],
        "deployment": pd.Series(
            [deployment_name(n, p) for n, p in zip(tests["nodes"], tests["ppn"], strict=True)],
            dtype=object,
        ),
        **{name: tests[name] for name in SAID_ONCE[2:] if name in tests},
    }
    return {
        name: str(values.iloc[0])
        for name, values in columns.items()
        if len(values) and values.nunique() == 1
    }


def _said_once_text(said: Mapping[str, str]) -> str:
    texts = []
    for name, value in said.items():
        shown = _percent(as_number(value)) if name in LEVELS else value
        texts.append(f"{name} {shown}")
    return "; ".join(texts)


def _tests_table(tests: pd.DataFrame, varied: str, said_id: str) -> str:
    """A guideline's tests, violated groups first, then undecided ones, then those that hold;
    within them by MPI library, deployment and group. Columns with one value in every row are
    said once above it, p_adjusted where it equals p_value in every row left out."""
    rank = {verdict: index for index, verdict in enumerate(GROUP_ORDER)}
    libraries = {mpi: index for index, mpi in enumerate(pd.unique(tests["mpi"]))}
    order = pd.DataFrame({
        "_rank": tests["group_verdict"].map(rank).to_numpy(),
        "_mpi": tests["mpi"].map(libraries).to_numpy(),
        "_nodes": pd.to_numeric(tests["nodes"], errors="coerce").to_numpy(),
        "_ppn": pd.to_numeric(tests["ppn"], errors="coerce").to_numpy(),
        "_group": pd.to_numeric(tests["group"], errors="coerce").to_numpy(),
    }).sort_values(["_rank", "_mpi", "_nodes", "_ppn", "_group"], kind="stable").index  # fmt: skip
    said = _said_once(tests)
    keys = _shown_keys(tests, varied)
    shown = [column for column in RESULT_COLUMNS if column in tests and column not in said]
    if {"p_value", "p_adjusted"} <= set(shown) and tests["p_value"].equals(tests["p_adjusted"]):
        shown.remove("p_adjusted")
        said["p_adjusted"] = "= p_value"
    split = shown.index("violation_ratio") + 1 if "violation_ratio" in shown else len(shown)
    before, after = shown[:split], shown[split:]
    results = tests.columns[tests.columns.get_loc("group") + 1 :]
    levels = [column for column in results if "level" in column and column not in said]
    has_bounds = all(bound in tests for bound in BOUNDS)
    header = ["group", "group verdict"]
    header += [name for name in ("mpi", "deployment") if name not in said]
    header += [*keys, *before]
    header += ["interval [ratio_low, ratio_high]"] if has_bounds else []
    header += [*levels, *after]
    # only the columns the rows show, in the order above: tests.csv has dozens more
    needed = ["group", "group_verdict", "mpi", "nodes", "ppn", *keys, *before,
              *(BOUNDS if has_bounds else ()), *levels, *after]  # fmt: skip
    ordered = tests[list(dict.fromkeys(needed))].iloc[order]
    rows = [
        [
            _cell(row["group"], "number"),
            _verdict_cell(row["group_verdict"]),
            *([] if "mpi" in said else [_cell(row["mpi"])]),
            *([] if "deployment" in said else [_cell(deployment_name(row["nodes"], row["ppn"]))]),
            *(_cell(row[key]) for key in keys),
            *(_result_cell(column, row[column]) for column in before),
            *_interval_cells(row, has_bounds, levels),
            *(_result_cell(column, row[column]) for column in after),
        ]
        for row in ordered.to_dict("records")
    ]
    once = (
        f'<p class="said-once" id="{_escape(said_id)}">In every test here: '
        f"{_escape(_said_once_text(said))}.</p>"
        if said
        else ""
    )
    return once + _scrolling(_table(header, rows, "tests"))


def _interval_cells(row: Row, has_bounds: bool, levels: Sequence[str]) -> list[str]:
    cells: list[str] = []
    if has_bounds:
        low, high = (_number(row[bound], RATIO_DIGITS) for bound in BOUNDS)
        cells.append(_cell(f"[{low}, {high}]" if low or high else "", "number"))
    return cells + [_cell(_number(row[level], OTHER_DIGITS), "number") for level in levels]


def _result_cell(column: str, text: str) -> str:
    if column == "verdict":
        return _verdict_cell(text)
    if column == "runs_needed":
        return _cell(_count(text), "number")
    if column == "test":
        return _cell(text)
    digits = RATIO_DIGITS if column == "violation_ratio" else OTHER_DIGITS
    return _cell(_number(text, digits), "number")


def _guideline_section(campaign: Campaign, index: int, guideline: str, page_dir: Path) -> str:
    found = campaign.guidelines.get(guideline)
    source = f'<p class="source">{_escape(found.source)}</p>' if found is not None else ""
    summary = campaign.summary.loc[campaign.summary["guideline"] == guideline]
    tests = campaign.tests.loc[campaign.tests["guideline"] == guideline]
    figures = campaign.figures.get(guideline, ())
    parts = [
        f'<section id="{_escape(_anchor(index, guideline))}">',
        f"<h2>{_escape(guideline)}: {_escape(_text_of(campaign, guideline))}</h2>",
        source,
        "<h3>Per MPI library and deployment</h3>",
        _deployments_table(summary, campaign.oversubscribed),
    ]
    if figures:
        parts += ["<h3>Figures</h3>", _figures_html(figures, page_dir)]
    parts += [
        f"<h3>Tests ({len(tests)})</h3>",
        "<p>Violated groups first, then undecided, then those that hold. A group is the tests "
        "of one MPI library and deployment that differ only in "
        f"<code>{_escape(campaign.options.varied)}</code>.</p>",
        _tests_table(tests, campaign.options.varied, f"said-once-{index}-{safe_name(guideline)}"),
        "</section>",
    ]
    return "\n".join(part for part in parts if part)


def _report_notice(report: ReportAge, page_dir: Path, made: datetime) -> str:
    """Whether Snakemake's provenance report is there, and older than the tables."""
    command = f"<code>snakemake --report {_escape(report.path)}</code>"
    options = "with the campaign's <code>--profile</code> and <code>--configfile</code>"
    if report.written is None:
        return (
            f'<p class="notice" id="snakemake-report">No Snakemake report yet: {command} '
            f"({options}) writes Snakemake's provenance report of these results.</p>"
        )
    link = _link(report.path, page_dir)
    if report.stale:
        return (
            f'<p class="notice stale" id="snakemake-report">The Snakemake report is older than '
            f"these tables: re-run {command} ({options}). When this page was made "
            f"({_time(made)}), {link} dated from {_time(report.written)}, tests.csv from "
            f"{_time(report.tables_written)}.</p>"
        )
    when = "it holds these tables" if report.holds_tables else "after tests.csv"
    return (
        f'<p class="notice" id="snakemake-report">Snakemake\'s provenance report of these '
        f"results: {link} (written {_time(report.written)}, {when}).</p>"
    )


def _tables_section(campaign: Campaign, page_dir: Path, made: datetime) -> str:
    items = "\n".join(f"<li>{_link(path, page_dir)}</li>" for path in campaign.tables)
    return (
        f'<section id="tables">\n<h2>Tables</h2>\n<ul>\n{items}\n</ul>\n'
        f"{_report_notice(campaign.report, page_dir, made)}\n</section>"
    )


def page_html(campaign: Campaign, page_dir: Path, made: datetime) -> str:
    """The page of `campaign`, its links relative to `page_dir`, made at `made`."""
    guidelines = list(campaign.lines["guideline"])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>mpiguide: campaign {_escape(campaign.name)}</title>",
        f"<style>{STYLE}</style></head>",
        "<body>",
        f"<h1>Campaign {_escape(campaign.name)}</h1>",
        f'<p class="made">Made by <code>mpiguide page</code> at {_time(made)} from '
        f'<a href="{_href(campaign.tests_csv, page_dir)}">tests.csv</a> of '
        f"{_time(campaign.report.tables_written)}.</p>",
        _verdicts_section(campaign, page_dir),
        _versions_section(campaign),
        _lines_section(campaign),
    ]
    wide = campaign.figures.get(CAMPAIGN_WIDE, ())
    if wide:
        parts += [
            '<section id="figures">\n<h2>Figures of the whole campaign</h2>',
            _figures_html(wide, page_dir),
            "</section>",
        ]
    parts += [
        _guideline_section(campaign, index, guideline, page_dir)
        for index, guideline in enumerate(guidelines)
    ]
    parts += [_tables_section(campaign, page_dir, made), "</body>", "</html>", ""]
    return "\n".join(parts)


def _figure_order(labels: Mapping[str, str]) -> int:
    """Forest plots first: one per deployment, every group of a guideline at a glance."""
    return 0 if labels["plot"].startswith(FOREST) else 1


def find_figures(
    plots: Path | None,
    figures: Sequence[Path],
    guidelines: Iterable[str],
    caption: Callable[[str], str] | None = None,
) -> dict[str, list[Figure]]:
    """Every PNG below `plots` by the guideline its name labels (paths.labels_of_plot), forest
    plots first, and `figures` (of the whole campaign) under CAMPAIGN_WIDE with the plots of
    no guideline; `caption(name)` says what a figure shows (its name below plots/ without the
    suffix, or a campaign figure's stem), by default its labels."""
    by_name = {safe_name(guideline): guideline for guideline in guidelines}

    def described(name: str, fallback: str) -> str:
        return caption(name) if caption is not None else fallback

    found: dict[str, list[Figure]] = {
        CAMPAIGN_WIDE: [Figure(path, described(path.stem, path.name)) for path in figures]
    }
    pngs = (
        [] if plots is None else [(p, p.relative_to(plots)) for p in plots.rglob(f"*{PLOT_SUFFIX}")]
    )
    labelled = [(labels_of_plot(name.with_suffix("").as_posix()), png) for png, name in pngs]
    for labels, png in sorted(labelled, key=lambda item: (_figure_order(item[0]), item[1])):
        owner = by_name.get(labels["guideline"], CAMPAIGN_WIDE)
        labelled_as = ", ".join(f"{key} {value}" for key, value in labels.items() if value != "all")
        name = png.relative_to(plots).with_suffix("").as_posix() if plots else png.stem
        found.setdefault(owner, []).append(Figure(png, described(name, labelled_as)))
    return found


@dataclass(frozen=True)
class PageSources:
    """The files the page is made from (as `mpiguide page` names them), and what the workflow
    knows of this machine: the deployments that oversubscribe it."""

    campaign: str
    tests_csv: Path
    summary_csv: Path
    verdict_lines_csv: Path
    decided_with: Path
    guidelines: Sequence[Guideline]
    plots: Path | None
    figures: Sequence[Path]
    tables: Sequence[Path]
    report: Path
    runs_csv: Path | None = None  # variability's runs.csv
    oversubscribed: Mapping[str, str] = dataclasses.field(default_factory=dict)
    analysis_doc: Path | None = None
    versions: Sequence[VersionPair] = ()  # the pairs of versions of one library to compare


def read_campaign(sources: PageSources) -> Campaign:
    lines = read_text_table(sources.verdict_lines_csv, LINE_COLUMNS, "the verdict lines")
    report_written = _modified(sources.report) if sources.report.is_file() else None
    runs = (
        None
        if sources.runs_csv is None
        else read_text_table(sources.runs_csv, RUN_COLUMNS, "the runs")
    )
    decisions = Decisions.read(sources.decided_with)
    tests = read_tests(sources.tests_csv)
    caption = FigureCaptions(sources.campaign, decisions, tests).caption
    return Campaign(
        name=sources.campaign,
        decisions=decisions,
        lines=lines,
        summary=read_text_table(sources.summary_csv, SUMMARY_COLUMNS, "the summary"),
        tests=tests,
        guidelines={guideline.id: guideline for guideline in sources.guidelines},
        figures=find_figures(sources.plots, sources.figures, lines["guideline"], caption),
        tests_csv=sources.tests_csv,
        tables=sources.tables,
        report=ReportAge(
            sources.report,
            report_written,
            _modified(sources.tests_csv),
            report_written is not None and report_holds(sources.report, sources.tables),
        ),
        runs=runs,
        runs_csv=sources.runs_csv,
        oversubscribed=dict(sources.oversubscribed),
        analysis_doc=sources.analysis_doc,
        versions=version_changes(tests, sources.versions, sources.tests_csv),
    )


def write_page(sources: PageSources, out: Path, made: datetime | None = None) -> Path:
    """Read the campaign's files, write its page to `out` (links relative to its directory)."""
    campaign = read_campaign(sources)
    text = page_html(campaign, out.parent, made or datetime.now(UTC))
    with atomic_path(out) as temporary:
        temporary.write_text(text, encoding="utf-8")
    return out
