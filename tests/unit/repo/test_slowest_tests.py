"""scripts/slowest_tests.py, the last step of `make test`: one table of the slowest tests of
both pytest runs' JUnit files, and never a failure of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "slowest_tests.py"


def junit(path: Path, cases: list[tuple[str, str, float]]) -> Path:
    """A JUnit file as pytest writes it (xunit2): one testcase per (classname, name, seconds)."""
    rows = "".join(f'<testcase classname="{c}" name="{n}" time="{t}" />' for c, n, t in cases)
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
        f'<testsuite name="pytest" tests="{len(cases)}">{rows}</testsuite></testsuites>'
    )
    return path


def slowest(*args: str | Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, SCRIPT, *map(str, args)], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_both_runs_in_one_table_slowest_first(tmp_path: Path) -> None:
    suite = junit(
        tmp_path / "suite.xml",
        [
            ("tests.unit.repo.test_slowest_tests", "test_a", 0.5),
            ("tests.unit.repo.test_slowest_tests.TestGroup", "test_b[x]", 3.0),
            ("tests.elsewhere.test_gone", "test_c", 1.0),
        ],
    )
    timing = junit(tmp_path / "timing.xml", [("tests.kernel.test_t", "test_d", 2.0)])

    lines = slowest("--count", "3", suite, timing)

    assert lines[0] == "== 3 slowest of 4 tests (6 s of test time) =="
    assert [line.split() for line in lines[1:]] == [
        ["3.00s", "suite", "tests/unit/repo/test_slowest_tests.py::TestGroup::test_b[x]"],
        ["2.00s", "timing", "tests.kernel.test_t::test_d"],
        ["1.00s", "suite", "tests.elsewhere.test_gone::test_c"],
    ]


def test_a_missing_or_broken_file_is_named_and_skipped(tmp_path: Path) -> None:
    suite = junit(tmp_path / "suite.xml", [("tests.x", "test_a", 0.25)])
    broken = tmp_path / "broken.xml"
    broken.write_text("<testsuites><testsuite>")

    lines = slowest(suite, tmp_path / "timing.xml", broken)

    assert lines[0].startswith(f"slowest tests: {tmp_path / 'timing.xml'} skipped")
    assert lines[1].startswith(f"slowest tests: {broken} skipped")
    assert lines[2:] == [
        "== 1 slowest of 1 tests (0 s of test time) ==",
        "     0.25s  suite    tests.x::test_a",
    ]
