"""The campaign page (reports/page.py): its verdict lines, the options it states, its tables,
figures and links, what it says of Snakemake's report, and that it escapes every text."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from html_support import read_page
from mpiguide.analysis.analysis_types import AnalysisOptions, Comparison, Decisions, Guideline
from mpiguide.analysis.tables import summarise
from mpiguide.cli import main
from mpiguide.core.paths import (
    CAMPAIGN_PAGE,
    DECIDED_WITH_JSON,
    SNAKEMAKE_REPORT,
    SUMMARY_CSV,
    TESTS_CSV,
    VERDICT_LINES_CSV,
    group_plot_name,
)
from mpiguide.reports.page import PageSources, rst_inline_html, write_page
from mpiguide.reports.report_tables import write_report_tables

OPTIONS = AnalysisOptions.with_defaults(v_thres=1.5, p_thres=0.001, confidence=0.9)
MADE = datetime(2026, 11, 27, 4, 0, tzinfo=UTC)
# GL_A: group 0 violated, group 1 undecided, group 2 holds (openmpi 1x2), group 0 again on 2x2;
# GL*B (approx): one group that holds.
ROWS = [
    # guideline, relation, nodes, msg_size, group, ratio, low, high, p, verdict, group_verdict,
    # detectable, runs_needed
    ("GL_A", "le", 1, 8, 0, 1.9, 1.7, 2.1, 1e-5, "violated", "violated", 1.1, ""),
    ("GL_A", "le", 1, 64, 0, 1.2, 0.9, 1.6, 0.02, "undecided", "violated", 1.3, "40"),
    ("GL_A", "le", 1, 8, 1, 1.3, 1.05, 1.62, 0.01, "undecided", "undecided", 1.2, "25340"),
    ("GL_A", "le", 1, 64, 1, 1.0, 0.95, 1.04, 0.5, "holds", "undecided", 1.05, ""),
    ("GL_A", "le", 1, 8, 2, 0.9, 0.85, 0.97, 0.9, "holds", "holds", 1.1, ""),
    ("GL_A", "le", 2, 8, 0, 1.01, 0.99, 1.03, 0.3, "holds", "holds", 1.02, ""),
    ("GL*B", "approx", 1, 8, 0, 1.0, 0.98, 1.02, 0.4, "holds", "holds", 1.1, ""),
]
GUIDELINES = [
    Guideline("GL_A", "source of A", "allgather ≼ alltoall", "le", (Comparison({}, {}),)),
    Guideline("GL*B", "source of B", "bcast ≈ scatter + allgather", "approx",
              (Comparison({}, {}),)),
]  # fmt: skip


def frame_of_tests(rows: list[tuple] = ROWS) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[
        "guideline", "relation", "nodes", "msg_size", "group", "violation_ratio", "ratio_low",
        "ratio_high", "p_value", "verdict", "group_verdict", "detectable_ratio", "runs_needed",
    ])  # fmt: skip
    frame.insert(2, "mpi", "openmpi")
    frame.insert(4, "ppn", 2)
    frame.insert(5, "op", "neighbor_allgather|neighbor_alltoall")
    frame.insert(8, "lhs_exp_id", range(len(frame)))
    frame.insert(9, "rhs_exp_id", range(100, 100 + len(frame)))
    frame["p_adjusted"] = frame["p_value"]
    frame["test"] = "paired_t"
    frame["violated"] = frame["verdict"] == "violated"
    frame["hl_ratio"], frame["hl_low"], frame["hl_high"] = 1.0, 0.9, 1.1
    return frame


def write_campaign(
    root: Path, tests: pd.DataFrame, options: AnalysisOptions = OPTIONS
) -> PageSources:
    """A campaign's guidelines/ as check and report-tables write them, and a plot or two."""
    guidelines = root / "guidelines"
    guidelines.mkdir(parents=True, exist_ok=True)
    tests.to_csv(guidelines / TESTS_CSV, index=False)
    summarise(tests).to_csv(guidelines / SUMMARY_CSV, index=False)
    options.write_record(guidelines / DECIDED_WITH_JSON, ["GL_A", "GL*B"], {})
    write_report_tables(guidelines / TESTS_CSV, Decisions(options), guidelines)
    plots = root / "plots"
    for kind in ("overview", "focus"):
        (plots / kind).mkdir(parents=True, exist_ok=True)
        (plots / kind / group_plot_name("GL_A", 0, "violated")).write_bytes(b"\x89PNG")
    (plots / "heatmap.png").write_bytes(b"\x89PNG")
    (guidelines / "slowdown.png").write_bytes(b"\x89PNG")
    return PageSources(
        campaign="tiny",
        tests_csv=guidelines / TESTS_CSV,
        summary_csv=guidelines / SUMMARY_CSV,
        verdict_lines_csv=guidelines / VERDICT_LINES_CSV,
        decided_with=guidelines / DECIDED_WITH_JSON,
        guidelines=GUIDELINES,
        plots=plots,
        figures=[guidelines / "slowdown.png"],
        tables=[guidelines / TESTS_CSV, guidelines / SUMMARY_CSV],
        report=root / SNAKEMAKE_REPORT,
    )


def made_page(tmp_path: Path, tests: pd.DataFrame | None = None) -> tuple[Path, str]:
    sources = write_campaign(tmp_path, frame_of_tests() if tests is None else tests)
    page = write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE)
    return page, page.read_text(encoding="utf-8")


def test_every_guideline_has_its_line(tmp_path: Path) -> None:
    text = made_page(tmp_path)[1]
    page = read_page(text)
    lines = page.by_id["verdict-lines"]
    # what it compares, in words; tests and groups by verdict; the median detectable ratio
    assert (
        "GL_A allgather ≼ alltoall le 3 hold 1 violated 2 undecided of 6 "
        "2 holds, 1 violated, 1 undecided of 4 1.1"
    ) in lines
    assert "GL*B bcast ≈ scatter + allgather approx 1 hold 0 violated 0 undecided of 1" in lines
    # a count in its verdict's colour, undecided never in the colour of holds; none uncoloured
    assert '<td class="undecided">2 undecided</td>' in text
    assert '<td class="holds">3 hold</td>' in text and "<td>0 violated</td>" in text
    # each line leads to its guideline's section
    sections = [a["href"] for tag, a in page.tags if tag == "a" and a.get("href", "")[:1] == "#"]
    assert sections[:2] == ["#guideline-0-GL_A", "#guideline-1-GL_B"]
    assert page.by_id["guideline-1-GL_B"].startswith("GL*B: bcast ≈ scatter + allgather")


def test_the_options_the_verdicts_were_decided_with_are_stated(tmp_path: Path) -> None:
    page = read_page(made_page(tmp_path)[1])
    decided = page.by_id["decided-with"]
    assert "p ≤ 0.001" in decided and "v ≥ 1.5" in decided  # in the report's words
    for option, value in (("v_thres", "1.5"), ("p_thres", "0.001"), ("confidence", "0.9"),
                          ("correction", OPTIONS.correction), ("variability", "none")):  # fmt: skip
        assert page.by_id[f"option-{option}"] == value
    # decided_with.json, not the options the page would be made with today
    assert page.text.index("Decided with") < page.text.index("Verdicts per guideline")


def test_the_thresholds_come_from_check_s_record(tmp_path: Path) -> None:
    sources = write_campaign(tmp_path, frame_of_tests())
    AnalysisOptions.with_defaults(v_thres=1.25).write_record(sources.decided_with, [], {})
    text = write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE).read_text()
    page = read_page(text)
    assert "v ≥ 1.25" in page.by_id["decided-with"] and page.by_id["option-v_thres"] == "1.25"


def test_a_guideline_s_tests_violated_groups_first_with_their_intervals(tmp_path: Path) -> None:
    text = made_page(tmp_path)[1]
    section = text[text.index('id="guideline-0-GL_A"') : text.index('id="guideline-1-GL_B"')]
    rows = read_page(section[section.index('class="tests"') :]).text
    violated, undecided, holds = (rows.index(f"{group} {verdict} openmpi") for group, verdict in (
        ("0", "violated"), ("1", "undecided"), ("2", "holds")))  # fmt: skip
    assert violated < undecided < holds
    # effect, interval, verdict, p, detectable ratio and runs needed as tests.csv has them
    assert "0 violated openmpi 1x2 8 violated 1.9 [1.7, 2.1] 1e-05 1e-05 paired_t 1.1" in rows
    assert (
        "1 undecided openmpi 1x2 8 undecided 1.3 [1.05, 1.62] 0.01 0.01 paired_t 1.2 25340" in rows
    )
    # the parameter every test shares is left out, the varied one kept
    assert "neighbor_allgather|neighbor_alltoall" not in rows
    assert "msg_size" in section


def test_a_column_stating_a_bound_s_level_is_shown(tmp_path: Path) -> None:
    tests = frame_of_tests()
    tests["ratio_low_level"] = 0.999
    text = made_page(tmp_path, tests)[1]
    assert "<th>ratio_low_level</th>" in text
    assert '[1.7, 2.1]</td><td class="number">0.999</td>' in text


def test_figures_sit_with_their_guideline_and_every_link_resolves(tmp_path: Path) -> None:
    page_path, text = made_page(tmp_path)
    page = read_page(text)
    assert page.broken_links(page_path) == []
    images = [attributes["src"] for tag, attributes in page.tags if tag == "img"]
    assert sorted(images) == sorted([
        "plots/focus/GL_A-group0000-violated.png", "plots/overview/GL_A-group0000-violated.png",
        "plots/heatmap.png", "guidelines/slowdown.png",
    ])  # fmt: skip
    section = text[text.index('id="guideline-0-GL_A"') : text.index('id="guideline-1-GL_B"')]
    assert 'src="plots/overview/GL_A-group0000-violated.png"' in section
    wide = text[text.index('id="figures"') : text.index('id="guideline-0-GL_A"')]
    assert 'src="plots/heatmap.png"' in wide and 'src="guidelines/slowdown.png"' in wide
    tables = page.by_id["tables"]
    assert tables == "Tables tests.csv summary.csv"


def test_the_page_needs_no_server_and_loads_nothing_from_elsewhere(tmp_path: Path) -> None:
    page = read_page(made_page(tmp_path)[1])
    assert {tag for tag, _ in page.tags} & {"script", "link", "iframe"} == set()
    assert all("://" not in link for link in page.links)


def test_every_text_from_the_data_is_escaped(tmp_path: Path) -> None:
    tests = frame_of_tests().astype({"msg_size": str})
    tests["guideline"] = tests["guideline"].replace("GL_A", "GL<i>A")
    tests.loc[0, "op"] = '<img src=x onerror="alert(1)">'
    tests.loc[0, "msg_size"] = "8&amp;"
    evil = Guideline("GL<i>A", "<b>source</b>", "<script>alert('x')</script> & more", "le",
                     (Comparison({}, {}),))  # fmt: skip
    sources = replace(
        write_campaign(tmp_path, tests), guidelines=[evil, GUIDELINES[1]], campaign="c<b>"
    )
    text = write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE).read_text()
    page = read_page(text)
    tags = {tag for tag, _ in page.tags}
    assert tags & {"script", "i", "b"} == set()
    assert [a["src"] for tag, a in page.tags if tag == "img" and a["src"] == "x"] == []
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more" in text
    assert "<script>alert('x')</script> & more" in page.text  # shown as text
    assert "Campaign c<b>" in page.text and "8&amp;" in page.text
    assert '<img src=x onerror="alert(1)">' in page.text


def test_rst_inline_markup_becomes_html_and_text_stays_text() -> None:
    assert rst_inline_html("``a<b`` **x & y** *e* \\* 1 < 2") == (
        "<code>a&lt;b</code> <strong>x &amp; y</strong> <em>e</em> * 1 &lt; 2"
    )


def test_no_snakemake_report_yet(tmp_path: Path) -> None:
    page = read_page(made_page(tmp_path)[1])
    notice = page.by_id["snakemake-report"]
    assert notice.startswith("No Snakemake report yet:")
    assert f"snakemake --report {tmp_path / SNAKEMAKE_REPORT}" in notice


def test_a_report_older_than_the_tables_is_called_stale(tmp_path: Path) -> None:
    sources = write_campaign(tmp_path, frame_of_tests())
    sources.report.write_text("<html></html>")
    tables = sources.tests_csv.stat().st_mtime
    os.utime(sources.report, (tables - 60, tables - 60))
    page = read_page(write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE).read_text())
    notice = page.by_id["snakemake-report"]
    assert notice.startswith(
        "The Snakemake report is older than these tables: re-run snakemake --report "
    )
    assert "When this page was made (2026-11-27 04:00:00 UTC), report.html dated from" in notice
    assert ("a", {"href": "report.html"}) in page.tags


def test_a_report_newer_than_the_tables_is_linked(tmp_path: Path) -> None:
    sources = write_campaign(tmp_path, frame_of_tests())
    sources.report.write_text("<html></html>")
    tables = sources.tests_csv.stat().st_mtime
    os.utime(sources.report, (tables + 60, tables + 60))
    page = read_page(write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE).read_text())
    notice = page.by_id["snakemake-report"]
    assert notice.startswith("Snakemake's provenance report of these results: report.html")
    assert "older" not in notice


def test_a_campaign_without_tests_says_so(tmp_path: Path) -> None:
    page = read_page(made_page(tmp_path, frame_of_tests().iloc[0:0])[1])
    assert "No tests: no guideline paired any experiments." in page.by_id["verdict-lines"]


def test_the_command_writes_the_page_and_never_over_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = write_campaign(tmp_path, frame_of_tests())
    argv = [
        "page", "--campaign", "tiny", "--tests", str(sources.tests_csv),
        "--summary", str(sources.summary_csv), "--verdict-lines", str(sources.verdict_lines_csv),
        "--decided-with", str(sources.decided_with),
        "--guidelines-json", '["GL4", {"id": "GL_A", "source": "s", "text": "t <x>",'
        ' "relation": "le", "lhs": {"op": "bcast"}, "rhs": {"op": "scatter"}}]',
        "--plots", str(sources.plots), "--figures", *map(str, sources.figures),
        "--tables", *map(str, sources.tables), "--report", str(sources.report),
    ]  # fmt: skip
    out = tmp_path / CAMPAIGN_PAGE
    assert main([*argv, "--out", str(out)]) == 0
    text = out.read_text()
    assert "GL_A</a></th><td>t &lt;x&gt;</td>" in text
    before = sources.tests_csv.read_bytes()
    assert main([*argv, "--out", str(sources.tests_csv)]) == 2
    assert "refusing to overwrite it" in capsys.readouterr().err
    assert sources.tests_csv.read_bytes() == before
    assert main([*argv, "--out", str(sources.plots / "index.html")]) == 2
    assert "a directory of inputs" in capsys.readouterr().err
