"""`mpiguide diff` on synthetic tests.csv pairs with known changes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mpiguide.cli import main
from mpiguide.core.errors import DataError
from mpiguide.reports.diff import counts, diff_tests, markdown
from mpiguide.reports.junit import FAILED_STATUS


def frame_of(
    tests: dict[tuple[str, int], tuple[str, float, float, float]], mpi: str = "openmpi"
) -> pd.DataFrame:
    """(op pair, msg_size) -> (verdict, ratio, low, high): rows of tests.csv, as read back."""
    rows = []
    for (op, size), (verdict, ratio, low, high) in tests.items():
        rows.append(
            dict(
                guideline="G", relation="le", mpi=mpi, nodes="1", ppn="2", op=op,
                msg_size=str(size), group="0" if op == "a|b" else "1", lhs_exp_id="0",
                rhs_exp_id="1", violation_ratio=str(ratio), ratio_low=str(low),
                ratio_high=str(high), p_adjusted="0.5", verdict=verdict,
                group_verdict=verdict,
            )
        )  # fmt: skip
    return pd.DataFrame(rows)


BASE = {
    ("a|b", 8): ("holds", 0.9, 0.85, 0.95),
    ("a|b", 64): ("violated", 1.5, 1.4, 1.6),
    ("c|d", 8): ("undecided", 1.0, 0.9, 1.1),
    ("c|d", 64): ("holds", 0.5, 0.45, 0.55),
}


def test_new_fixed_and_moved() -> None:
    after = dict(BASE)
    after[("a|b", 8)] = ("violated", 1.3, 1.2, 1.4)  # new violation
    after[("a|b", 64)] = ("holds", 0.95, 0.9, 1.0)  # fixed
    after[("c|d", 8)] = ("undecided", 1.02, 0.95, 1.12)  # within the intervals: same
    after[("c|d", 64)] = ("holds", 0.8, 0.7, 0.9)  # slower beyond both intervals
    result = diff_tests(frame_of(BASE), frame_of(after))
    assert counts(result) == {
        "new_violation": 1, "fixed": 1, "slower": 1, "faster": 0, "same": 1
    }  # fmt: skip
    change = result.tests.set_index(["op", "msg_size"])["change"]
    assert change[("a|b", "8")] == "new_violation"
    assert change[("c|d", "64")] == "slower"
    text = markdown(result, ("A", "B"))
    assert "4 tests matched: 1 new violation, 1 fixed, 1 slower, 0 faster, 1 same" in text
    # per guideline, which verdicts changed
    header = "| guideline | tests | verdicts changed | new violation | fixed | slower | faster |"
    assert f"{header}\n|---|---|---|---|---|---|---|\n" in text
    assert "| G | 4 | 2: violated → holds 1, holds → violated 1 | 1 | 1 | 1 | 0 |" in text
    assert "| openmpi 1x2 op=a\\|b (group 0) | msg_size=" in text
    row = "| msg_size=8 | new_violation | holds 0.9 [0.85, 0.95] | violated 1.3 [1.2, 1.4] |"
    assert row in text
    faster = diff_tests(frame_of(after), frame_of(BASE))
    assert counts(faster)["faster"] == 1 and counts(faster)["new_violation"] == 1


def test_identical_campaigns_have_no_change() -> None:
    result = diff_tests(frame_of(BASE), frame_of(BASE))
    assert counts(result)["same"] == 4
    assert "No test changed." in markdown(result, ("A", "B"))


def test_what_was_measured_is_not_a_key() -> None:
    """Two measurements of one grid differ in `page_faults` (a rank faulted in one of them):
    still the same tests."""
    a = frame_of(BASE).assign(page_faults="False")
    b = frame_of(BASE).assign(page_faults=["False", "True", "False", "True"])
    result = diff_tests(a, b)
    assert counts(result)["same"] == 4
    assert "page_faults" not in result.keys


def test_grids_that_cannot_be_matched_are_refused_naming_the_key() -> None:
    other = {(op, 1024 if size == 64 else size): v for (op, size), v in BASE.items()}
    with pytest.raises(DataError, match=r"msg_size differs \(only in A: '64'; only in B: '1024'"):
        diff_tests(frame_of(BASE), frame_of(other))
    with pytest.raises(DataError, match=r"mpi differs \(only in A: 'openmpi'; only in B: 'mpich'"):
        diff_tests(frame_of(BASE), frame_of(BASE, mpi="mpich"))
    fewer = {key: value for key, value in BASE.items() if key != ("c|d", 8)}
    with pytest.raises(DataError, match="combinations of the keys differ"):
        diff_tests(frame_of(BASE), frame_of(fewer))
    with pytest.raises(DataError, match="the keys differ"):
        diff_tests(frame_of(BASE), frame_of(BASE).drop(columns="op"))


def test_two_entries_of_one_campaign() -> None:
    change = {key: ("violated", 2.0, 1.9, 2.1) for key in BASE}
    both = pd.concat([frame_of(BASE, "main"), frame_of(change, "change")], ignore_index=True)
    result = diff_tests(both, both, "main", "change")
    assert counts(result)["new_violation"] == 3
    with pytest.raises(DataError, match="--mpi-a 'nope': no test of that entry; entries: change"):
        diff_tests(both, both, "nope", "change")
    with pytest.raises(DataError, match="go together"):
        diff_tests(both, both, "main", None)


def test_two_entries_compare_the_guidelines_both_have_and_name_the_others() -> None:
    """An algorithm sweep's ALGO guidelines select their entry by name: the tuned entry beside
    it has none of them. They are listed, not compared; a shared guideline still has to match
    test for test."""
    swept = frame_of(BASE, "main").assign(guideline="ALGO.main.allreduce.ring")
    both = pd.concat(
        [frame_of(BASE, "main"), swept, frame_of(BASE, "main.tuned")], ignore_index=True
    )
    result = diff_tests(both, both, "main", "main.tuned")
    assert counts(result)["same"] == len(BASE)
    assert result.one_sided == (["ALGO.main.allreduce.ring"], [])
    text = markdown(result, ("main", "main.tuned"))
    assert "Not compared, tested for main (A) only: ALGO.main.allreduce.ring." in text
    partial = both.drop(index=both.index[-1])
    with pytest.raises(DataError, match="the grids cannot be matched"):
        diff_tests(partial, partial, "main", "main.tuned")


def test_page_faults_are_a_value_not_a_key() -> None:
    """Whether a rank page-faulted differs between launches; the tests still match."""
    faulted = frame_of(BASE).assign(page_faults=["True", "False", "False", "True"])
    result = diff_tests(frame_of(BASE).assign(page_faults="False"), faulted)
    assert counts(result)["same"] == 4


def test_cli_writes_csv_and_markdown_and_fails_on_new(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    after = dict(BASE)
    after[("a|b", 8)] = ("violated", 1.3, 1.2, 1.4)
    for name, tests in (("a", BASE), ("b", after)):
        (tmp_path / name / "guidelines").mkdir(parents=True)
        frame_of(tests).to_csv(tmp_path / name / "guidelines" / "tests.csv", index=False)
    argv = ["diff", str(tmp_path / "a"), str(tmp_path / "b"), "--csv", str(tmp_path / "d.csv")]
    assert main(argv) == 0
    assert "1 new violation" in capsys.readouterr().out
    assert len(pd.read_csv(tmp_path / "d.csv")) == 4
    assert main([*argv, "--fail-on", "new", "--md", str(tmp_path / "d.md")]) == FAILED_STATUS
    assert "--fail-on new: 1 new violations" in capsys.readouterr().err
    assert (tmp_path / "d.md").read_text().startswith("# mpiguide diff")
    assert main(["diff", str(tmp_path / "a"), str(tmp_path / "nowhere")]) == 2
    assert "no tests.csv" in capsys.readouterr().err
