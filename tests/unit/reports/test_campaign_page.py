"""The campaign page (reports/page.py): the answer per guideline in words, what qualifies it
(oversubscribed deployments, flagged runs), the method and the options it states, its tables,
figures and links, what it says of Snakemake's report, and that it escapes every text."""

from __future__ import annotations

import base64
import os
import re
import struct
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
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
    forest_plot_path,
    group_plot_name,
)
from mpiguide.reports.page import (
    TIMES,
    TO,
    PageSources,
    png_size,
    rst_inline_html,
    write_page,
)
from mpiguide.reports.report_tables import write_report_tables
from mpiguide.reports.versions import VersionPair

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
    # the bounds' levels as check states them: for le the violation level and confidence,
    # for an approx test that holds confidence on both sides
    approx = frame["relation"] == "approx"
    frame["low_level"] = np.where(approx, OPTIONS.confidence, 1 - OPTIONS.p_thres)
    frame["high_level"] = OPTIONS.confidence
    return frame


def write_campaign(
    root: Path, tests: pd.DataFrame, options: AnalysisOptions = OPTIONS
) -> PageSources:
    """A campaign's guidelines/ as check writes them, and a plot or two."""
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


def sentence(text: str) -> str:
    """An element's text as a browser shows it: html_support joins the text of its elements
    with a space, also before the punctuation that follows one."""
    return re.sub(r" ([,.;:)])", r"\1", text)


def made_page(tmp_path: Path, tests: pd.DataFrame | None = None) -> tuple[Path, str]:
    sources = write_campaign(tmp_path, frame_of_tests() if tests is None else tests)
    page = write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE)
    return page, page.read_text(encoding="utf-8")


def test_every_guideline_has_its_answer_first(tmp_path: Path) -> None:
    page = read_page(made_page(tmp_path)[1])
    # violated: in how many groups, and where the largest violation is, how much, how sure
    assert page.by_id["verdict-GL_A"] == (
        f"GL_A violated in 1 of 4 groups (largest: openmpi 1x2 group 0, 8 B: 1.9{TIMES} slower "
        "[1.7, 2.1] (lower 99.9 %, upper 90 %)) allgather ≼ alltoall"
    )
    # holds: to within v_thres, and the largest upper bound (approx: both sides)
    assert page.by_id["verdict-GL_B"] == (
        "GL*B holds in its only group, equal to within 50 % either way (every interval within "
        "[0.98, 1.02], one-sided 90 %) bcast ≈ scatter + allgather"
    )
    # verdicts first, the counts after them
    assert page.text.index("GL_A violated") < page.text.index("Counts per guideline")
    # each line leads to its guideline's section
    sections = [a["href"] for tag, a in page.tags if tag == "a" and a.get("href", "")[:1] == "#"]
    assert sections[:2] == ["#guideline-0-GL_A", "#guideline-1-GL_B"]
    assert page.by_id["guideline-1-GL_B"].startswith("GL*B: bcast ≈ scatter + allgather")


def undecided_rows(runs_needed: list[str], runs: int = 10) -> pd.DataFrame:
    """GL_A with one group, every test undecided, needing these runs per side."""
    rows = [
        ("GL_A", "le", 1, 8 * 2**k, 0, 1.02, 0.9, 1.1, 0.3, "undecided", "undecided", 1.2, needed)
        for k, needed in enumerate(runs_needed)
    ]
    return frame_of_tests(rows).assign(n_lhs=runs, n_rhs=runs)


@pytest.mark.parametrize(
    ("runs_needed", "more"),
    [
        (["40", "25", "31"], f"its 3 undecided tests would need 25{TO}40 runs per side (now 10)"),
        (["40", ""], "1 of its 2 undecided tests would need about 40 runs per side (now 10) "
                     "for even odds of a decision; 1 is beyond reach"),
        (["40"], "its undecided test would need about 40 runs per side (now 10)"),
        (["2000", ""], "more runs of this campaign would hardly decide its 2 undecided tests: "
                       "their effects sit too close to 1.5"),
    ],
)  # fmt: skip
def test_an_undecided_guideline_says_what_more_runs_might_do(
    tmp_path: Path, runs_needed: list[str], more: str
) -> None:
    page = read_page(made_page(tmp_path, undecided_rows(runs_needed))[1])
    line = page.by_id["verdict-GL_A"]
    assert line.startswith(f"GL_A cannot tell yet in its only group: {more}"), line


def test_an_adaptive_campaign_s_futile_tests_are_named(tmp_path: Path) -> None:
    tests = undecided_rows(["40", "", ""]).assign(look_runs=10, stop=["open", "futile", "futile"])
    page = read_page(made_page(tmp_path, tests)[1])
    assert page.by_id["verdict-GL_A"].startswith(
        "GL_A cannot tell yet in its only group: 1 of its 3 undecided tests would need about 40 "
        "runs per side (now 10) for even odds of a decision; 2 are beyond reach; 2 tests "
        "stopped as futile at 10 runs"
    )


def test_an_undecided_guideline_names_its_groups_that_hold(tmp_path: Path) -> None:
    rows = [row for row in ROWS if row[0] == "GL_A" and row[4] != 0]  # groups 1 and 2
    page = read_page(made_page(tmp_path, frame_of_tests(rows).assign(n_lhs=10, n_rhs=10))[1])
    assert page.by_id["verdict-GL_A"].startswith(
        "GL_A cannot tell yet in 1 of 2 groups, 1 holds to within 50 %: more runs of this "
        "campaign would hardly decide its undecided test: its effect sits too close to 1.5"
    )
    # a selected guideline without tests says so
    assert page.by_id["verdict-GL_B"].startswith("GL*B no tests: no experiments of this")


def test_the_method_in_one_sentence_with_a_link_to_the_docs(tmp_path: Path) -> None:
    tests = frame_of_tests().assign(low_level=0.999)
    sources = write_campaign(tmp_path, tests)
    doc = tmp_path / "docs" / "analysis.md"
    doc.parent.mkdir()
    doc.write_text("# Analysis\n")
    page = read_page(
        write_page(replace(sources, analysis_doc=doc), tmp_path / CAMPAIGN_PAGE, MADE).read_text()
    )
    method = sentence(page.by_id["method"])
    assert method == (
        "Each test compares two sides' timings as v = lhs / rhs (the paired_t test): violated "
        "when v ≥ 1.5 "
        "and p ≤ 0.001, holds when v and its upper bound (one-sided 90 %) are below 1.5 "
        "(≈ guidelines: either way, inside 1/1.5 … 1.5), else undecided, which is not a pass; "
        "intervals are one-sided bounds, lower 99.9 %, upper 90 % — how and why: "
        "docs/analysis.md."
    )
    assert ("a", {"href": "docs/analysis.md#verdicts-violated-holds-undecided"}) in page.tags
    # the levels said once, the lines give their intervals bare
    assert f"1.9{TIMES} slower [1.7, 2.1])" in page.by_id["verdict-GL_A"]
    # where the docs are not (results copied elsewhere), they are named, not linked
    page = read_page(made_page(tmp_path / "elsewhere")[1])
    assert sentence(page.by_id["method"]).endswith("how and why: docs/analysis.md of mpiguide.")
    assert page.broken_links(tmp_path / "elsewhere" / CAMPAIGN_PAGE) == []


def test_the_options_the_verdicts_were_decided_with_are_folded_below(tmp_path: Path) -> None:
    text = made_page(tmp_path)[1]
    page = read_page(text)
    decided = page.by_id["decided-with"]
    assert "p ≤ 0.001" in decided and "v ≥ 1.5" in decided  # in the report's words
    for option, value in (("v_thres", "1.5"), ("p_thres", "0.001"), ("confidence", "0.9"),
                          ("correction", OPTIONS.correction), ("run_band", "0.1")):  # fmt: skip
        assert page.by_id[f"option-{option}"] == value
    # options that decide nothing on this page are left out, tuning's unless it decided some
    for option in ("layout", "variability", "model_tolerance", "model_weighting", "tuning"):
        assert f"option-{option}" not in page.by_id
    # folded, after the verdicts
    assert '<details id="decided-with">' in text
    assert page.text.index("GL_A violated") < page.text.index("Decided with")


def test_the_counts_per_guideline(tmp_path: Path) -> None:
    text = made_page(tmp_path)[1]
    lines = read_page(text).by_id["verdict-lines"]
    # tests and groups by verdict; the median detectable ratio
    assert (
        "GL_A le 3 hold 1 violated 2 undecided of 6 2 holds, 1 violated, 1 undecided of 4 1.1"
    ) in lines
    assert "GL*B approx 1 hold 0 violated 0 undecided of 1" in lines
    # a count in its verdict's colour, undecided never in the colour of holds; none uncoloured
    assert '<td class="undecided">2 undecided</td>' in text
    assert '<td class="holds">3 hold</td>' in text and "<td>0 violated</td>" in text


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
    violated, undecided, holds = (rows.index(f"{group} {verdict} 1x2") for group, verdict in (
        ("0", "violated"), ("1", "undecided"), ("2", "holds")))  # fmt: skip
    assert violated < undecided < holds
    # effect, interval, verdict, p, detectable ratio and runs needed as tests.csv has them
    assert "0 violated 1x2 8 violated 1.9 [1.7, 2.1] 1e-05 1.1" in rows
    assert "1 undecided 1x2 8 undecided 1.3 [1.05, 1.62] 0.01 1.2 25340" in rows
    # what is the same in every row is said once above the table, p_adjusted where it equals
    # p_value, the parameter every test shares left out, the varied one kept
    assert read_page(section).by_id["said-once-0-GL_A"] == (
        "In every test here: mpi openmpi; test paired_t; low_level 99.9 %; high_level 90 %; "
        "p_adjusted = p_value."
    )
    assert "neighbor_allgather|neighbor_alltoall" not in rows
    table = section[section.index('class="tests"') :]
    assert "<th>msg_<wbr>size</th>" in table and "<th>mpi</th>" not in table


def test_a_column_stating_a_bound_s_level_is_shown(tmp_path: Path) -> None:
    tests = frame_of_tests()
    tests["ratio_low_level"] = 0.999
    text = made_page(tmp_path, tests)[1]
    assert "<th>ratio_<wbr>low_<wbr>level</th>" in text
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
    assert page.by_id["tables"].startswith("Tables tests.csv summary.csv No Snakemake report")


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


def test_a_report_that_holds_the_tables_anew_is_not_stale(tmp_path: Path) -> None:
    """The analysis run again on the same runs and options writes the same tables anew, after
    the report: the report holds them, byte for byte (embedded in base64), so it is current;
    one table that differs makes it stale."""
    sources = write_campaign(tmp_path, frame_of_tests())
    embedded = b" ".join(base64.b64encode(table.read_bytes()) for table in sources.tables)
    sources.report.write_bytes(b"<html>" + embedded + b"</html>")
    tables = sources.tests_csv.stat().st_mtime
    os.utime(sources.report, (tables - 60, tables - 60))
    page = read_page(write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE).read_text())
    notice = page.by_id["snakemake-report"]
    assert notice.startswith("Snakemake's provenance report of these results: report.html")
    assert notice.endswith("it holds these tables).")
    with sources.tables[-1].open("a") as table:
        table.write("\n")
    page = read_page(write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE).read_text())
    assert page.by_id["snakemake-report"].startswith("The Snakemake report is older than")


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
        "--runs", str(write_runs(tmp_path)),
        "--oversubscribed-json", '{"1x2": "deployment 1x2: 2 ranks on 1 core"}',
        "--analysis-doc", str(tmp_path / "docs" / "analysis.md"),
    ]  # fmt: skip
    out = tmp_path / CAMPAIGN_PAGE
    assert main([*argv, "--out", str(out)]) == 0
    text = out.read_text()
    assert '<span class="what">t &lt;x&gt;</span>' in text
    page = read_page(text)
    assert "deployment 1x2: 2 ranks on 1 core. Its tests: 3 hold" in page.by_id["oversubscribed"]
    assert page.by_id["flagged-runs"].startswith("1 of 2 runs were slow or fast as a whole")
    before = sources.tests_csv.read_bytes()
    assert main([*argv, "--out", str(sources.tests_csv)]) == 2
    assert "refusing to overwrite it" in capsys.readouterr().err
    assert sources.tests_csv.read_bytes() == before
    assert main([*argv, "--out", str(sources.plots / "index.html")]) == 2
    assert "a directory of inputs" in capsys.readouterr().err
    # the pairs of versions the workflow found, and a pair the tests do not have
    versions = '[{"library": "mpich", "older": "mpich", "newer": "mpich-5.0.2"}]'
    assert main([*argv, "--versions-json", versions, "--out", str(out)]) == 0
    assert "Not compared: " in read_page(out.read_text()).by_id["versions"]
    assert main([*argv, "--versions-json", '[{"library": "mpich"}]', "--out", str(out)]) == 2
    assert "--versions-json: expected a list of {library, older, newer}" in capsys.readouterr().err


def write_runs(root: Path, ratios: tuple[float, ...] = (1.0, 1.3), mpi: str = "openmpi") -> Path:
    """variability's runs.csv for one deployment, a run per ratio, flagged outside ±0.1."""
    runs = pd.DataFrame({
        "mpi": mpi, "nodes": 1, "ppn": 2, "run": range(len(ratios)), "experiments": 6,
        "outside": [0 if abs(r - 1) <= 0.1 else 5 for r in ratios], "run_ratio": ratios,
        "launch_factor": ratios, "flagged": [abs(r - 1) > 0.1 for r in ratios],
    })  # fmt: skip
    path = root / "variability" / "runs.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    runs.to_csv(path, index=False)
    return path


def page_with(
    tmp_path: Path, tests: pd.DataFrame | None = None, **changes: object
) -> tuple[Path, str]:
    tested = frame_of_tests() if tests is None else tests
    sources = replace(write_campaign(tmp_path, tested), **changes)
    page = write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE)
    return page, page.read_text(encoding="utf-8")


def test_oversubscribed_deployments_are_warned_about_beside_their_verdicts(
    tmp_path: Path,
) -> None:
    warning = "deployment 2x2: 4 ranks on 2 cores (launch: local): its timings measure time"
    page_path, text = page_with(tmp_path, oversubscribed={"2x2": warning})
    page = read_page(text)
    # what, why, and the verdicts that rest on it
    assert page.by_id["oversubscribed"] == (
        "⚠ Oversubscribed: more ranks than this machine has cores. Ranks that share a core run "
        "in turns: their timings measure time slices, not the library alone, and spread "
        f"widely, which leaves tests undecided. {warning}. Its tests: 1 hold, 0 violated, "
        "0 undecided of 1."
    )
    # beside the line of the guideline with tests there, not the other's
    assert page.by_id["verdict-GL_A"].endswith("⚠ 2x2 oversubscribed allgather ≼ alltoall")
    assert "oversubscribed" not in page.by_id["verdict-GL_B"]
    # and beside the deployment in the guideline's counts
    section = read_page(text[text.index('id="guideline-0-GL_A"') :]).text
    assert "openmpi 2x2 ⚠ oversubscribed 1 hold" in section
    assert page.broken_links(page_path) == []
    # no oversubscription, no notice
    assert "oversubscribed" not in read_page(made_page(tmp_path / "fits")[1]).by_id


def test_flagged_runs_are_listed_with_a_link_to_the_variability_table(tmp_path: Path) -> None:
    runs = write_runs(tmp_path, (1.0, 1.3, 0.8, 1.05))
    page_path, text = page_with(tmp_path, runs_csv=runs)
    page = read_page(text)
    assert page.by_id["flagged-runs"] == (
        "2 of 4 runs were slow or fast as a whole (the median over its experiments of run "
        "median / median of run medians (run_ratio) outside 1 ± 0.1): a run slow in every "
        "experiment points at the machine (load, a noisy neighbour), not at the library; "
        f"variability/runs.csv has every run. openmpi 1x2: 2 of 4 runs: run01 (1.3{TIMES}, 5 of "
        f"6 experiments outside), run02 (0.8{TIMES}, 5 of 6 experiments outside)"
    )
    assert ("a", {"href": "variability/runs.csv"}) in page.tags
    assert page.broken_links(page_path) == []
    # none flagged: said, with the link
    quiet = write_runs(tmp_path / "quiet", (1.0, 1.05))
    page = read_page(page_with(tmp_path / "quiet", runs_csv=quiet)[1])
    assert page.by_id["flagged-runs"].startswith(
        "No run was slow or fast as a whole: for none of the 2 runs is the median"
    )


def png_header(width: int, height: int) -> bytes:
    """The first bytes of a PNG: signature and IHDR, enough to tell its size."""
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", width, height) + bytes(5)


def test_figures_are_shown_at_their_own_size_forest_plots_first(tmp_path: Path) -> None:
    sources = write_campaign(tmp_path, frame_of_tests())
    assert sources.plots is not None
    forest = sources.plots / forest_plot_path("GL_A", "openmpi", "1x2")
    forest.parent.mkdir(parents=True)
    forest.write_bytes(png_header(1200, 252))
    assert png_size(forest) == (1200, 252) and png_size(sources.report) is None
    text = write_page(sources, tmp_path / CAMPAIGN_PAGE, MADE).read_text()
    section = text[text.index('id="guideline-0-GL_A"') : text.index('id="guideline-1-GL_B"')]
    images = [a for tag, a in read_page(section).tags if tag == "img"]
    alt = images[0].pop("alt")
    assert images[0] == {
        "src": "plots/forest/openmpi/1x2/GL_A.png", "width": "1200", "height": "252",
        "loading": "lazy",
    }  # fmt: skip
    # the alt text says what the figure's footer says: campaign, deployment, options, levels
    assert alt.startswith("Forest plot of GL_A (le) in openmpi 1x2")
    assert "p_thres 0.001" in alt and "bounds: lower 99.9 %, upper 90 %, one-sided" in alt
    assert [image["src"] for image in images[1:]] == [
        "plots/focus/GL_A-group0000-violated.png", "plots/overview/GL_A-group0000-violated.png",
    ]  # fmt: skip
    # never wider than the page, never a thumbnail
    assert "figure img { max-width: 100%; height: auto;" in text


def test_what_qualifies_the_verdicts_is_escaped_too(tmp_path: Path) -> None:
    runs = write_runs(tmp_path, (1.0, 1.3), mpi="<i>mpi</i>")
    _, text = page_with(
        tmp_path, runs_csv=runs, oversubscribed={"1x2": "<b onmouseover=alert(1)>x</b>"}
    )
    page = read_page(text)
    assert {tag for tag, _ in page.tags} & {"i", "b", "script"} == set()
    assert "<b onmouseover=alert(1)>x</b>." in page.by_id["oversubscribed"]
    assert "<i>mpi</i> 1x2: 1 of 2 runs" in page.by_id["flagged-runs"]


def test_versions_compared_say_per_guideline_which_verdicts_changed(tmp_path: Path) -> None:
    """Two versions of one library: per guideline the verdicts that changed from the older to
    the newer, escaped like every other text."""
    older = frame_of_tests()
    # a group per pair of ops, as a real grid has them: a test is one per guideline and keys
    older["op"] = [f"a{group}|b{group}" for group in older["group"]]
    newer = older.assign(mpi="openmpi-5.0.11")
    newer.loc[0, ["verdict", "violation_ratio", "ratio_low", "ratio_high"]] = (
        "holds", 0.9, 0.8, 0.95,
    )  # fmt: skip
    tests = pd.concat([older, newer], ignore_index=True)
    tests["guideline"] = tests["guideline"].replace("GL_A", "GL<i>A")
    pair = VersionPair("open<b>mpi", "openmpi", "openmpi-5.0.11")
    _, text = page_with(tmp_path, tests=tests, versions=[pair])
    page = read_page(text)
    assert {tag for tag, _ in page.tags} & {"i", "b"} == set()
    section = page.by_id["versions"]
    assert section.startswith("Versions compared Per guideline, how many tests changed verdict")
    assert "open<b>mpi: openmpi → openmpi-5.0.11" in section
    header = "guideline tests verdicts changed new violation fixed slower faster"
    assert f"{header} GL<i>A 6 1: violated → holds 1 0 1 0 0 GL*B 1 0 0 0 0 0" in section
    # the section comes after the verdicts, before the counts
    assert (
        text.index('id="verdicts"') < text.index('id="versions"') < text.index('id="verdict-lines"')
    )


def test_without_versions_of_one_library_there_is_no_such_section(tmp_path: Path) -> None:
    page = read_page(made_page(tmp_path)[1])
    assert "versions" not in page.by_id
