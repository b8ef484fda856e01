"""The campaign page, results/<campaign>/index.html: what to open first.

It opens with the options the verdicts were decided with (check's record, decided_with.json)
and one line per guideline: what it compares, in the catalogue's words; its tests and groups
that hold, are violated and are undecided; the median detectable ratio (verdict_lines.csv, as
report_tables wrote it). Then per guideline its counts per MPI library and deployment
(summary.csv), its figures, and its tests by group with effect and interval (tests.csv, cells
as written); at the end, links to the tables. The workflow re-makes it whenever any of these
changes.

One HTML file that reads from disk without a server: inline style, no script, every link
relative to the page (the figures are the files beside it, not copies), so that
results/<campaign>/ can be copied elsewhere whole. Every text from the data is escaped.
Snakemake's provenance report (`snakemake --report`) is made only when asked for: the page
says whether it is older than the tables.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import os
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
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
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VERDICTS, VIOLATED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import PLOT_SUFFIX, deployment_name, labels_of_plot, safe_name
from mpiguide.reports.report_tables import decided_with_rst, read_tests, read_text_table

# The columns the page reads of verdict_lines.csv and summary.csv.
COUNT_COLUMNS = (*VERDICTS, "groups", *(f"{verdict}_groups" for verdict in VERDICTS))
LINE_COLUMNS = ("guideline", "relation", "tests", *COUNT_COLUMNS, "median_detectable_ratio")
SUMMARY_COLUMNS = ("guideline", "mpi", "nodes", "ppn", "tests", *COUNT_COLUMNS,
                   "median_detectable_ratio")  # fmt: skip
# Group verdicts in the order a guideline's tests are listed: what needs a reader first.
GROUP_ORDER = (VIOLATED, UNDECIDED, HOLDS)
# tests.csv's result columns the page shows, those present, in this order; the interval of
# ratio_low and ratio_high in one cell after violation_ratio, and any column that states the
# level of a bound after it.
RESULT_COLUMNS = ("verdict", "violation_ratio", "p_value", "p_adjusted", "test",
                  "detectable_ratio", "runs_needed")  # fmt: skip
BOUNDS = ("ratio_low", "ratio_high")
# Significant digits: ratios as junit.xml prints them; p-values and detectable ratios as the
# report's verdict lines.
RATIO_DIGITS, OTHER_DIGITS = 4, 3
# A row of a table read as text (DataFrame.to_dict's records).
Row = Mapping[Hashable, Any]
# Figures that belong to no guideline (the heatmap, slowdown.png): a section of their own.
CAMPAIGN_WIDE = ""

# The verdicts' tints are those of the figures' marks (reports.figure_style.VERDICT_COLOURS:
# red, purple, green), lightened for a table cell, so a verdict has one colour everywhere.
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
.scroll { overflow-x: auto; }
.violated { background: #f8d0cc; color: #7a1208; font-weight: 600; }
.undecided { background: #e9d8f2; color: #4b1a63; }
.holds { background: #d8efd4; color: #17481a; }
.made, .source { color: #555; font-size: 0.9em; }
.notice { border-left: 4px solid #888; background: #f5f5f5; padding: 0.5em 0.8em; }
.notice.stale { border-color: #c0392b; background: #fbe9e7; }
code { background: #f2f2f2; padding: 0 0.2em; }
figure { display: inline-block; margin: 0.4em; vertical-align: top; max-width: 46%; }
figure img { max-width: 100%; border: 1px solid #ddd; }
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
    written (None: not there) and when the tables it would show were."""

    path: Path
    written: datetime | None
    tables_written: datetime

    @property
    def stale(self) -> bool:
        return self.written is not None and self.written < self.tables_written


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

    @property
    def options(self) -> AnalysisOptions:
        return self.decisions.options


def _escape(value: object) -> str:
    return html.escape(str(value), quote=True)


def _href(path: Path, page_dir: Path) -> str:
    """`path` as a link from a page in `page_dir`: relative, percent-encoded, escaped."""
    relative = Path(os.path.relpath(path.absolute(), page_dir.absolute())).as_posix()
    return _escape(quote(relative))


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
    head = "".join(f"<th>{_escape(name)}</th>" for name in header)
    body = "\n".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    attribute = f' class="{classes}"' if classes else ""
    return f"<table{attribute}><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"


def _cell(text: str, css: str = "") -> str:
    attribute = f' class="{css}"' if css else ""
    return f"<td{attribute}>{_escape(text)}</td>"


def _verdict_cell(verdict: str) -> str:
    return _cell(verdict, verdict if verdict in VERDICTS else "")


def _counts(row: Row) -> list[str]:
    """Cells of a verdict line or summary row: tests that hold, are violated, are undecided
    (and of them the futile ones, in an adaptive campaign), of how many; the same of groups;
    the median detectable ratio."""
    futile = (
        futile_note(int(row[FUTILE_COLUMNS[0]] or 0), *(row[c] for c in FUTILE_COLUMNS[1:]))
        if FUTILE_COLUMNS[0] in row
        else ""
    )
    groups = ", ".join(
        f"{_count(row[f'{verdict}_groups'])} {verdict}" for verdict in (HOLDS, VIOLATED, UNDECIDED)
    )
    return [
        _count_cell(row[HOLDS], "hold", HOLDS),
        _count_cell(row[VIOLATED], "violated", VIOLATED),
        _count_cell(row[UNDECIDED], f"undecided{futile}", UNDECIDED),
        _cell(f"of {_count(row['tests'])}", "number"),
        _cell(f"{groups} of {_count(row['groups'])}"),
        _cell(_number(row["median_detectable_ratio"], OTHER_DIGITS) or "n/a", "number"),
    ]


def _count_cell(count: str, words: str, verdict: str) -> str:
    """`<count> <words>`, in the verdict's colour unless the count is 0."""
    return _cell(f"{_count(count)} {words}", verdict if _count(count) != "0" else "")


COUNT_HEADER = ("holds", "violated", "undecided", "tests", "groups", "median detectable ratio")


def _options_section(options: AnalysisOptions, tuning_too: bool) -> str:
    """How the verdicts were decided, in the report's words, then every option."""
    names, values = [], []
    for option in dataclasses.fields(options):
        value = getattr(options, option.name)
        if option.name == "variability":
            value = json.dumps([dict(selector) for selector in value]) if value else "none"
        elif isinstance(value, TuningThresholds):
            value = json.dumps(dataclasses.asdict(value))
        names.append(option.name)
        values.append(f'<td id="option-{option.name}"><code>{_escape(value)}</code></td>')
    return (
        '<section id="decided-with">\n<h2>Decided with</h2>\n'
        f"<p>{rst_inline_html(decided_with_rst(options, tuning_too))}</p>\n"
        f"{_table(names, [values], 'options')}\n</section>"
    )


def _lines_section(campaign: Campaign) -> str:
    """One line per guideline over every MPI library and deployment."""
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
                _cell(_text_of(campaign, line["guideline"])),
                _cell(line["relation"]),
                *_counts(line),
            ]
            for index, line in enumerate(campaign.lines.to_dict("records"))
        ]
        header = ("guideline", "what it compares", "relation", *COUNT_HEADER)
        body = _table(header, rows, "verdict-lines")
    title = "<h2>Verdicts per guideline</h2>"
    return f'<section id="verdict-lines">\n{title}\n{intro}\n{body}\n</section>'


def _text_of(campaign: Campaign, guideline: str) -> str:
    found = campaign.guidelines.get(guideline)
    return found.text if found is not None else "(not among the campaign's guidelines)"


def _deployments_table(summary: pd.DataFrame) -> str:
    rows = [
        [_cell(row["mpi"]), _cell(deployment_name(row["nodes"], row["ppn"])), *_counts(row)]
        for row in summary.to_dict("records")
    ]
    return _table(("mpi", "deployment", *COUNT_HEADER), rows, "deployments")


def _figures_html(figures: Sequence[Figure], page_dir: Path) -> str:
    shown = []
    for figure in figures:
        href = _href(figure.path, page_dir)
        caption = _escape(figure.caption)
        shown.append(
            f'<figure><a href="{href}"><img src="{href}" alt="{caption}" loading="lazy"></a>'
            f"<figcaption>{caption}</figcaption></figure>"
        )
    return "\n".join(shown)


def _shown_keys(tests: pd.DataFrame, varied: str) -> list[str]:
    """The parameters a guideline's tests differ in (and the varied one): the others are the
    same in every row and tell no test from another."""
    keys = [key for key in parameter_columns(tests) if key not in ("mpi", "nodes", "ppn")]
    return [key for key in keys if key == varied or tests[key].nunique() > 1]


def _tests_table(tests: pd.DataFrame, varied: str) -> str:
    """A guideline's tests, violated groups first, then undecided ones, then those that hold;
    within them by MPI library, deployment and group."""
    rank = {verdict: index for index, verdict in enumerate(GROUP_ORDER)}
    libraries = {mpi: index for index, mpi in enumerate(pd.unique(tests["mpi"]))}
    ordered = tests.assign(
        _rank=tests["group_verdict"].map(rank),
        _mpi=tests["mpi"].map(libraries),
        _nodes=pd.to_numeric(tests["nodes"], errors="coerce"),
        _ppn=pd.to_numeric(tests["ppn"], errors="coerce"),
        _group=pd.to_numeric(tests["group"], errors="coerce"),
    ).sort_values(["_rank", "_mpi", "_nodes", "_ppn", "_group"], kind="stable")
    keys = _shown_keys(tests, varied)
    shown = [column for column in RESULT_COLUMNS if column in tests]
    split = shown.index("violation_ratio") + 1 if "violation_ratio" in shown else len(shown)
    before, after = shown[:split], shown[split:]
    results = tests.columns[tests.columns.get_loc("group") + 1 :]
    levels = [column for column in results if "level" in column]
    has_bounds = all(bound in tests for bound in BOUNDS)
    header = ["group", "group verdict", "mpi", "deployment", *keys, *before]
    header += ["interval [ratio_low, ratio_high]"] if has_bounds else []
    header += [*levels, *after]
    rows = [
        [
            _cell(row["group"], "number"),
            _verdict_cell(row["group_verdict"]),
            _cell(row["mpi"]),
            _cell(deployment_name(row["nodes"], row["ppn"])),
            *(_cell(row[key]) for key in keys),
            *(_result_cell(column, row[column]) for column in before),
            *_interval_cells(row, has_bounds, levels),
            *(_result_cell(column, row[column]) for column in after),
        ]
        for row in ordered.to_dict("records")
    ]
    return _table(header, rows, "tests")


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
        _deployments_table(summary),
    ]
    if figures:
        parts += ["<h3>Figures</h3>", _figures_html(figures, page_dir)]
    parts += [
        f"<h3>Tests ({len(tests)})</h3>",
        "<p>Violated groups first, then undecided, then those that hold. A group is the tests "
        "of one MPI library and deployment that differ only in "
        f"<code>{_escape(campaign.options.varied)}</code>.</p>",
        f'<div class="scroll">{_tests_table(tests, campaign.options.varied)}</div>',
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
    link = f'<a href="{_href(report.path, page_dir)}">{_escape(report.path.name)}</a>'
    if report.stale:
        return (
            f'<p class="notice stale" id="snakemake-report">The Snakemake report is older than '
            f"these tables: re-run {command} ({options}). When this page was made "
            f"({_time(made)}), {link} dated from {_time(report.written)}, tests.csv from "
            f"{_time(report.tables_written)}.</p>"
        )
    return (
        f'<p class="notice" id="snakemake-report">Snakemake\'s provenance report of these '
        f"results: {link} (written {_time(report.written)}, after tests.csv).</p>"
    )


def _tables_section(tables: Sequence[Path], page_dir: Path) -> str:
    items = "\n".join(
        f'<li><a href="{_href(path, page_dir)}">{_escape(path.name)}</a></li>' for path in tables
    )
    return f'<section id="tables">\n<h2>Tables</h2>\n<ul>\n{items}\n</ul>\n</section>'


def page_html(campaign: Campaign, page_dir: Path, made: datetime) -> str:
    """The page of `campaign`, its links relative to `page_dir`, made at `made`."""
    guidelines = list(campaign.lines["guideline"])
    contents = "".join(
        f'<li><a href="#{_escape(_anchor(index, guideline))}">{_escape(guideline)}</a></li>'
        for index, guideline in enumerate(guidelines)
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>mpiguide: campaign {_escape(campaign.name)}</title>",
        f"<style>{STYLE}</style></head>",
        "<body>",
        f"<h1>Campaign {_escape(campaign.name)}</h1>",
        f'<p class="made">Made by <code>mpiguide page</code> at {_time(made)} from '
        f'<a href="{_href(campaign.tests_csv, page_dir)}">tests.csv</a> of '
        f"{_time(campaign.report.tables_written)}.</p>",
        _report_notice(campaign.report, page_dir, made),
        _options_section(campaign.options, campaign.decisions.any_by_tuning(campaign.guidelines)),
        _lines_section(campaign),
    ]
    if contents:
        parts.append(f'<nav><ul class="contents">{contents}</ul></nav>')
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
    parts += [_tables_section(campaign.tables, page_dir), "</body>", "</html>", ""]
    return "\n".join(parts)


def find_figures(
    plots: Path | None, figures: Sequence[Path], guidelines: Iterable[str]
) -> dict[str, list[Figure]]:
    """Every PNG below `plots` by the guideline its name labels (paths.labels_of_plot), and
    `figures` (of the whole campaign) under CAMPAIGN_WIDE with the plots of no guideline."""
    by_name = {safe_name(guideline): guideline for guideline in guidelines}
    found: dict[str, list[Figure]] = {CAMPAIGN_WIDE: [Figure(path, path.name) for path in figures]}
    pngs = (
        [] if plots is None else [(p, p.relative_to(plots)) for p in plots.rglob(f"*{PLOT_SUFFIX}")]
    )
    for png, name in sorted(pngs):
        labels = labels_of_plot(name.with_suffix("").as_posix())
        owner = by_name.get(labels["guideline"], CAMPAIGN_WIDE)
        caption = ", ".join(f"{key} {value}" for key, value in labels.items() if value != "all")
        found.setdefault(owner, []).append(Figure(png, caption))
    return found


@dataclass(frozen=True)
class PageSources:
    """The files the page is made from (as `mpiguide page` names them)."""

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


def read_campaign(sources: PageSources) -> Campaign:
    lines = read_text_table(sources.verdict_lines_csv, LINE_COLUMNS, "the verdict lines")
    report_written = _modified(sources.report) if sources.report.is_file() else None
    return Campaign(
        name=sources.campaign,
        decisions=Decisions.read(sources.decided_with),
        lines=lines,
        summary=read_text_table(sources.summary_csv, SUMMARY_COLUMNS, "the summary"),
        tests=read_tests(sources.tests_csv),
        guidelines={guideline.id: guideline for guideline in sources.guidelines},
        figures=find_figures(sources.plots, sources.figures, lines["guideline"]),
        tests_csv=sources.tests_csv,
        tables=sources.tables,
        report=ReportAge(sources.report, report_written, _modified(sources.tests_csv)),
    )


def write_page(sources: PageSources, out: Path, made: datetime | None = None) -> Path:
    """Read the campaign's files, write its page to `out` (links relative to its directory)."""
    campaign = read_campaign(sources)
    text = page_html(campaign, out.parent, made or datetime.now(UTC))
    with atomic_path(out) as temporary:
        temporary.write_text(text, encoding="utf-8")
    return out
