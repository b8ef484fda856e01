"""CI mode: --fail-on exit status of `check` and `gate`, and guidelines/junit.xml."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from junit_schema import assert_valid_junit, skipped_cases
from mpiguide.cli import main
from mpiguide.reports.junit import FAILED_STATUS, fails, junit_tree, verdict_counts


def synthetic_tests(verdicts_by_group: dict[int, list[str]]) -> pd.DataFrame:
    """tests.csv-like rows of guideline G: per group, one test per msg_size with these
    verdicts (ratio 1.5 for violated, 1.0 otherwise)."""
    rows = []
    for group, verdicts in verdicts_by_group.items():
        group_verdict = (
            "violated" if "violated" in verdicts
            else "holds" if set(verdicts) == {"holds"} else "undecided"
        )  # fmt: skip
        for index, verdict in enumerate(verdicts):
            ratio = 1.5 if verdict == "violated" else 1.0
            rows.append(
                dict(
                    guideline="G", relation="le", mpi="openmpi", nodes=1, ppn=2,
                    op="allgather|alltoall", msg_size=8 * 4**index, dtype="char",
                    reorder=group, group=group, lhs_exp_id=index, rhs_exp_id=10 + index,
                    n_lhs=5, n_rhs=5, median_lhs=ratio, median_rhs=1.0, violation_ratio=ratio,
                    ratio_low=ratio * 0.9, ratio_high=ratio * 1.1, p_value=1e-4,
                    p_adjusted=1e-4 if verdict == "violated" else 0.5, test="paired_t",
                    verdict=verdict, violated=verdict == "violated",
                    group_verdict=group_verdict, detectable_ratio=1.1, runs_needed=np.nan,
                    hl_ratio=ratio, hl_low=ratio, hl_high=ratio,
                )
            )  # fmt: skip
    return pd.DataFrame(rows)


MIXED = {0: ["holds", "violated"], 1: ["holds", "undecided"], 2: ["holds", "holds"]}


def counts(root: ET.Element) -> tuple[str | None, str | None, int]:
    """The document's tests, failures and skipped cases."""
    return root.get("tests"), root.get("failures"), skipped_cases(root)


@pytest.mark.parametrize(
    ("counts", "fail_on", "expected"),
    [
        ({"violated": 1, "holds": 3, "undecided": 0}, "never", False),
        ({"violated": 1, "holds": 3, "undecided": 0}, "violated", True),
        ({"violated": 0, "holds": 3, "undecided": 2}, "violated", False),
        ({"violated": 0, "holds": 3, "undecided": 2}, "undecided", True),
        ({"violated": 0, "holds": 3, "undecided": 0}, "undecided", False),
    ],
)
def test_fail_on_names_the_failing_verdicts(counts, fail_on, expected) -> None:
    assert fails(counts, fail_on) is expected


def test_one_case_per_group_violated_fails_undecided_skipped() -> None:
    root = junit_tree(synthetic_tests(MIXED), {"G": "a ≼ b"}, "msg_size", "violated").getroot()
    assert counts(root) == ("3", "1", 1)
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [case.get("classname") for case in cases] == ["mpiguide.G"] * 3
    # deployment and the parameters that tell groups apart, never the varied one
    assert cases[0].get("name") == "openmpi 1x2 reorder=0 (group 0)"
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == "violated"
    message = failure.get("message") or ""
    assert message.startswith("violated: msg_size=32: violated, ratio 1.5 (interval 1.35 to 1.65)")
    assert "p 0.0001" in message
    assert "msg_size=8: holds" in (failure.text or "")
    assert cases[1].find("skipped") is not None and cases[1].find("failure") is None
    assert list(cases[2]) == []


def test_case_names_leave_out_what_was_measured() -> None:
    """A CI service follows a test case by its name from run to run: `page_faults`, measured,
    varies between runs and stays out of it."""
    tests = synthetic_tests(MIXED)
    tests["page_faults"] = [index % 2 == 0 for index in range(len(tests))]
    root = junit_tree(tests, {}, "msg_size", "violated").getroot()
    names = [case.get("name") or "" for case in root.iter("testcase")]
    assert names and not any("page_faults" in name for name in names)


def test_fail_on_undecided_makes_undecided_groups_failures() -> None:
    root = junit_tree(synthetic_tests(MIXED), {}, "msg_size", "undecided").getroot()
    assert counts(root)[1:] == ("2", 0)
    case = root.findall("testsuite/testcase")[1]
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "undecided"


@pytest.mark.parametrize("fail_on", ["violated", "undecided"])
def test_valid_against_the_jenkins_junit_schema(fail_on: str) -> None:
    """junit-10.xsd checks the elements and attributes; the counts it leaves free are checked
    here against the cases."""
    root = junit_tree(synthetic_tests(MIXED), {"G": "a ≼ b"}, "msg_size", fail_on).getroot()
    assert_valid_junit(ET.fromstring(ET.tostring(root, encoding="unicode")))
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests") or 0) == len(cases)
        assert int(suite.get("failures") or 0) == sum(len(c.findall("failure")) for c in cases)
        assert int(suite.get("skipped") or 0) == sum(len(c.findall("skipped")) for c in cases)
        assert all(len(case) <= 1 for case in cases)
    assert int(root.get("tests") or 0) == len(root.findall("testsuite/testcase"))
    assert int(root.get("failures") or 0) == len(root.findall("testsuite/testcase/failure"))


def test_the_schema_refuses_what_it_does_not_allow() -> None:
    """The vendored schema is really applied: an attribute it lacks is refused."""
    root = junit_tree(synthetic_tests(MIXED), {}, "msg_size", "violated").getroot()
    root.set("skipped", "1")
    with pytest.raises(AssertionError, match="skipped"):
        assert_valid_junit(root)


def write_medians(path: Path, lhs_factor: float) -> None:
    """Run medians of allgather and alltoall at two sizes, allgather `lhs_factor` x slower."""
    rng = np.random.default_rng(1)
    rows = []
    for run in range(8):
        for exp_id, (op, size) in enumerate(
            [("allgather", 8), ("allgather", 64), ("alltoall", 8), ("alltoall", 64)]
        ):
            factor = lhs_factor if op == "allgather" else 1.0
            rows.append(
                dict(
                    mpi="openmpi", nodes=1, ppn=2, run=run, exp_id=exp_id, op=op,
                    msg_size=size, median_s=1e-3 * factor * np.exp(rng.normal(0, 0.01)),
                    n_kept=30,
                )
            )  # fmt: skip
    pd.DataFrame(rows).to_parquet(path)


GUIDELINES = json.dumps(
    [{"id": "AG", "source": "t", "text": "allgather ≼ alltoall", "relation": "le",
      "lhs": {"op": "allgather"}, "rhs": {"op": "alltoall"}}]
)  # fmt: skip


@pytest.mark.parametrize(
    ("lhs_factor", "fail_on", "status"),
    [(1.5, "violated", FAILED_STATUS), (1.5, "never", 0), (0.8, "violated", 0)],
)
def test_check_exit_status_and_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lhs_factor, fail_on, status
) -> None:
    medians = tmp_path / "medians.parquet"
    write_medians(medians, lhs_factor)
    argv = ["check", "--medians", str(medians), "--guidelines-json", GUIDELINES,
            "--analysis-json", '{"p_thres": 0.01}', "--outdir", str(tmp_path / "out")]  # fmt: skip
    assert main([*argv, "--fail-on", fail_on]) == status
    out, err = capsys.readouterr()
    assert out.startswith("mpiguide check: 2 tests: ")
    assert ("--fail-on violated: 2 violated" in err) is (status != 0)
    tests = pd.read_csv(tmp_path / "out" / "tests.csv")
    assert verdict_counts(tests)["violated"] == (2 if lhs_factor > 1 else 0)
    assert ET.parse(tmp_path / "out" / "junit.xml").getroot().get("tests") == "1"
    # --exit-zero: the same junit.xml, exit 0; the gate fails instead
    assert main([*argv, "--fail-on", fail_on, "--exit-zero"]) == 0
    gate_out = tmp_path / "fail_on.txt"
    gate = ["gate", "--tests", str(tmp_path / "out" / "tests.csv"), "--out", str(gate_out)]
    assert main([*gate, "--fail-on", fail_on]) == status
    assert gate_out.is_file() is (status == 0)


def test_an_undecided_test_says_the_runs_it_needs_or_that_they_are_beyond_reach() -> None:
    tests = synthetic_tests({0: ["holds", "undecided", "undecided"]})
    tests["runs_needed"] = [np.nan, 40, 6779]
    root = junit_tree(tests, {}, "msg_size", "violated").getroot()
    skipped = root.find("testsuite/testcase/skipped")
    assert skipped is not None
    lines = (skipped.text or "").splitlines()
    assert not any("runs needed" in line for line in lines if ": holds," in line)
    assert lines[1].endswith("runs 5/5, runs needed 40")
    assert lines[2].endswith("runs 5/5, runs needed beyond reach")
