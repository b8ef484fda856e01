"""report_tables: the report's verdict lines per guideline and its table of the tests of violated
and undecided groups, from a tests.csv."""

from pathlib import Path

import pandas as pd
import pytest
from docutils.core import publish_parts

from mpiguide.analysis.analysis_types import AnalysisOptions, Decisions
from mpiguide.core.errors import DataError
from mpiguide.core.paths import (
    SUMMARY_CSV,
    VERDICT_LINES_CSV,
    VERDICT_LINES_RST,
    VIOLATED_UNDECIDED_CSV,
)
from mpiguide.reports.library_table import OUTPUTS as LIBRARY_TABLE_FILES
from mpiguide.reports.report_tables import (
    verdict_lines,
    verdict_lines_rst,
    violated_undecided,
    write_report_tables,
)

# Two guidelines: GL_A with a violated group (0), an undecided one (1) and a holding one (2) in
# one deployment, and group 0 again in another deployment (a group of its own, as in
# summary.csv); GL*B with one holding group.
ROWS = [
    # guideline, relation, nodes, op, reorder, group, verdict, group_verdict, detectable
    ("GL_A", "le", "1", "a|b", "", "0", "violated", "violated", "1.1"),
    ("GL_A", "le", "1", "a|b", "", "0", "undecided", "violated", "1.3"),
    ("GL_A", "le", "1", "a|b", "", "1", "undecided", "undecided", "1.2"),
    ("GL_A", "le", "1", "a|b", "", "1", "holds", "undecided", "1.05"),
    ("GL_A", "le", "1", "a|b", "", "2", "holds", "holds", "1.04"),
    ("GL_A", "le", "2", "a|b", "", "0", "holds", "holds", ""),
    ("GL*B", "approx", "1", "a", "1|0", "0", "holds", "holds", "1.1"),
]
COLUMNS = ["guideline", "relation", "nodes", "op", "reorder", "group", "verdict",
           "group_verdict", "detectable_ratio"]  # fmt: skip


def campaign_tests() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=COLUMNS)
    frame.insert(2, "mpi", "openmpi")
    frame.insert(4, "ppn", "2")
    frame.insert(7, "ordering", "")  # not applicable anywhere
    frame["violation_ratio"] = "1.2"
    frame["test"] = "paired_t"
    frame["violated"] = (frame["verdict"] == "violated").astype(str)
    return frame


def test_one_line_per_guideline_counts_tests_and_groups():
    lines = verdict_lines(campaign_tests()).set_index("guideline")
    a = lines.loc["GL_A"]
    assert (a["tests"], a["holds"], a["violated"], a["undecided"]) == (6, 3, 1, 2)
    # groups per guideline, mpi and deployment: (1, 0), (1, 1), (1, 2), (2, 0)
    assert (a["groups"], a["holds_groups"], a["violated_groups"], a["undecided_groups"]) == (
        4, 2, 1, 1,
    )  # fmt: skip
    assert a["median_detectable_ratio"] == pytest.approx(1.1)  # the empty cell left out
    assert list(lines.index) == ["GL_A", "GL*B"]  # tests.csv's order
    assert lines.loc["GL*B", "relation"] == "approx"


DECIDED_WITH = Decisions(AnalysisOptions.with_defaults(v_thres=1.5))


def decided_with_json(tmp_path: Path) -> Path:
    path = tmp_path / "decided_with.json"
    DECIDED_WITH.options.write_record(path, [], {})
    return path


def test_the_lines_are_rst_that_renders_each_guideline():
    text = verdict_lines_rst(verdict_lines(campaign_tests()), DECIDED_WITH)
    html = publish_parts(text, writer="html")["body"]
    assert "<strong>GL_A</strong> (le): 3 hold, 1 violated, 2 undecided of 6 tests" in html
    # the id's markup characters are shown, not interpreted
    assert "<strong>GL*B</strong> (approx): 1 hold, 0 violated, 0 undecided of 1 tests" in html
    assert "median detectable ratio 1.1" in html
    assert "System Message" not in html
    # the thresholds the verdicts were decided with, not today's config
    assert "v ≥ 1.5" in html and "below 1.5" in html


def test_the_lines_say_how_algo_and_tune_tests_were_decided_where_there_are_some():
    """A campaign that sweeps algorithms: its ALGO tests were decided at `analysis.tuning`'s
    levels, not the campaign's, and the lines say so; without such tests they say nothing of
    them."""
    tests = campaign_tests()
    tests.loc[tests["guideline"] == "GL*B", "guideline"] = "ALGO.openmpi.bcast.chain"
    options = AnalysisOptions.with_defaults(test="ranksum", v_thres=1.0, tuning={"v_thres": 1.05})
    decisions = Decisions(options, frozenset({"ALGO.openmpi.bcast.chain"}))
    text = verdict_lines_rst(verdict_lines(tests), decisions)
    assert "(ALGO.…, TUNE.…, APPLIED.…)" in text
    assert "with ``test: auto`` at ``analysis.tuning``'s p_thres 0.001 and v_thres 1.05" in text
    # paired where both sides share launches, not where they cannot (Intel MPI's presets)
    assert "paired t-test where both sides were measured in the same launches" in text
    assert "across launches as above where they were not" in text
    assert "System Message" not in publish_parts(text, writer="html")["body"]
    plain = verdict_lines_rst(verdict_lines(campaign_tests()), decisions)
    assert "analysis.tuning" not in plain
    # what check recorded says which guidelines analysis.tuning decided, not their ids
    assert "analysis.tuning" not in verdict_lines_rst(verdict_lines(tests), Decisions(options))


def test_an_adaptive_campaign_s_lines_say_which_undecided_tests_were_futile():
    tests = campaign_tests()
    tests["look_runs"] = ["5", "10", "15", "20", "5", "5", "5"]
    tests["stop"] = ["decided", "futile", "futile", "decided", "decided", "decided", "decided"]
    lines = verdict_lines(tests).set_index("guideline")
    assert lines.loc["GL_A", ["futile", "futile_min_runs", "futile_max_runs"]].tolist() == [
        2, 10, 15,
    ]  # fmt: skip
    html = publish_parts(verdict_lines_rst(lines.reset_index(), DECIDED_WITH), writer="html")
    assert "1 violated, 2 undecided (2 futile at 10-15 runs) of 6 tests" in html["body"]
    assert "0 violated, 0 undecided of 1 tests" in html["body"]
    assert "futile" not in verdict_lines(campaign_tests())


def test_no_tests_say_so():
    empty = campaign_tests().iloc[0:0]
    assert verdict_lines(empty).empty
    assert "No tests" in verdict_lines_rst(verdict_lines(empty), DECIDED_WITH)


def test_violated_then_undecided_groups_with_their_every_test():
    table = violated_undecided(campaign_tests())
    assert list(zip(table["group_verdict"], table["group"], table["verdict"], strict=True)) == [
        ("violated", "0", "violated"),
        ("violated", "0", "undecided"),
        ("undecided", "1", "undecided"),
        ("undecided", "1", "holds"),
    ]
    assert list(table.columns[:5]) == ["guideline", "relation", "group", "group_verdict", "verdict"]
    assert "ordering" not in table  # empty in every row shown
    assert "reorder" not in table  # only GL*B sets it, and none of its groups is shown
    assert {"op", "nodes", "violation_ratio", "test", "detectable_ratio"} <= set(table.columns)


def test_files_repeat_tests_csv_cells_exactly(tmp_path):
    tests = campaign_tests()
    tests.loc[0, "violation_ratio"] = "1.0742975832139652"
    tests.to_csv(tmp_path / "tests.csv", index=False)
    written = write_report_tables(
        tmp_path / "tests.csv",
        Decisions.read(decided_with_json(tmp_path)),
        tmp_path / "out",
    )
    names = [path.name for path in written]
    assert names == [VERDICT_LINES_CSV, VERDICT_LINES_RST, VIOLATED_UNDECIDED_CSV]
    table = (tmp_path / "out" / VIOLATED_UNDECIDED_CSV).read_text()
    assert ",1.0742975832139652," in table
    assert "**GL\\_A**" in (tmp_path / "out" / VERDICT_LINES_RST).read_text()


def test_a_tests_csv_without_verdicts_is_refused(tmp_path):
    campaign_tests().drop(columns="group_verdict").to_csv(tmp_path / "tests.csv", index=False)
    with pytest.raises(DataError, match=r"tests\.csv: column 'group_verdict' missing"):
        write_report_tables(tmp_path / "tests.csv", DECIDED_WITH, tmp_path / "out")
    tests = campaign_tests()
    tests.loc[2, "verdict"] = "maybe"
    tests.to_csv(tmp_path / "tests.csv", index=False)
    with pytest.raises(DataError, match=r"tests\.csv:4: a verdict is not one of"):
        write_report_tables(tmp_path / "tests.csv", DECIDED_WITH, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_record_reads_back_the_options_it_was_written_with(tmp_path):
    options = AnalysisOptions.with_defaults(
        v_thres=1.5, variability=[{"op": ["bcast", "reduce"], "msg_size": 8}]
    )
    options.write_record(
        tmp_path / "decided_with.json", ["GL1", "MINE"], {"holds": 3}, (), ["MINE"]
    )
    assert Decisions.read(tmp_path / "decided_with.json") == Decisions(options, frozenset({"MINE"}))


def test_an_unreadable_record_is_refused(tmp_path):
    (tmp_path / "decided_with.json").write_text("{}")
    with pytest.raises(DataError, match=r"decided_with\.json: cannot read what the verdicts"):
        Decisions.read(tmp_path / "decided_with.json")


def test_the_front_page_quotes_no_threshold_from_the_config():
    """The thresholds come from check's record with the tables (decided_with.json): a report
    built after the options changed, without re-running check, must not state the new ones."""
    report = Path(__file__).parents[3] / "workflow" / "report"
    for name in ("workflow.rst", "tests.rst"):
        text = (report / name).read_text()
        for option in ("p_thres", "v_thres", "confidence", '"test"'):
            assert f'["analysis"][{option}' not in text.replace("'", '"'), (name, option)
            assert f'["analysis"]["{option}"]' not in text, (name, option)


def test_the_front_page_names_the_files_paths_owns():
    """workflow.rst is Jinja and RST, not Python: it spells the names core/paths.py owns, so
    they are held to them here."""
    front_page = (Path(__file__).parents[3] / "workflow" / "report" / "workflow.rst").read_text()
    assert f'result.target == "{VERDICT_LINES_CSV}"' in front_page
    assert f"/{VERDICT_LINES_RST}\n" in front_page
    for link in (SUMMARY_CSV, VIOLATED_UNDECIDED_CSV, *LIBRARY_TABLE_FILES[:1]):
        assert f"{link}_" in front_page


def test_runs_needed_beyond_reach_is_said_in_words():
    """A reader of the table sees a number of runs only where it is within reach: at most
    1 000 and 10 times the runs the test has."""
    tests = campaign_tests()
    tests["n_lhs"], tests["n_rhs"] = "10", "12"
    tests["runs_needed"] = ["", "25340", "40", "", "", "", ""]
    table = violated_undecided(tests)
    assert table["runs_needed"].tolist() == ["", "beyond reach", "40", ""]
    tests.loc[2, "runs_needed"] = "120"  # 12 times the runs
    assert violated_undecided(tests)["runs_needed"].tolist()[2] == "beyond reach"
