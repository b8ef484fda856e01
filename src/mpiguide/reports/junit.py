"""Verdicts for continuous integration: which verdicts fail a job (`--fail-on`), and
guidelines/junit.xml, one test case per guideline x group for the test reports of CI services.

JUnit XML has no standard; what is written here is valid against the schema that Jenkins,
GitLab, GitHub test-report actions and most other readers accept, Jenkins' junit-10.xsd (the
tests validate against a copy of it): `testsuites` > `testsuite` (one per guideline) >
`testcase`, each with at most one `failure` or `skipped` child. The schema gives `testsuites` no
`skipped` attribute: the skipped cases are counted per suite.
"""

from __future__ import annotations

import math
import socket
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from mpiguide.analysis.guidelines import (
    TEST_LEADING_COLUMNS,
    TEST_PAIR_COLUMNS,
    TEST_RESULT_COLUMNS,
)
from mpiguide.analysis.verdicts import (
    HOLDS,
    UNDECIDED,
    VERDICTS,
    VIOLATED,
    as_number,
    runs_needed_text,
)
from mpiguide.core.atomic import atomic_path

# `--fail-on`: none, the violations, or the violations and the undecided tests.
FAIL_ON = ("never", "violated", "undecided")
# The exit status of `mpiguide check --fail-on` (and `diff --fail-on`) when a failing verdict
# is found: apart from 1 (a file could not be read or written) and 2 (a usage or data error),
# so a CI job can tell "the library broke a guideline" from "the job is broken".
FAILED_STATUS = 3
# Columns of tests.csv that are not the keys of a test (docs/analysis.md): what was measured,
# such as `page_faults`, differs between two measurements of one test.
NOT_KEYS = frozenset((*TEST_LEADING_COLUMNS, *TEST_PAIR_COLUMNS, *TEST_RESULT_COLUMNS))


def failing_verdicts(fail_on: str) -> tuple[str, ...]:
    """The verdicts that fail under `fail_on` (never, violated, undecided)."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on {fail_on!r} is not one of {', '.join(FAIL_ON)}")
    return {"never": (), "violated": (VIOLATED,), "undecided": (VIOLATED, UNDECIDED)}[fail_on]


def verdict_counts(tests: pd.DataFrame) -> dict[str, int]:
    """Tests per verdict, every verdict present (0 when none)."""
    counts = tests["verdict"].value_counts()
    return {verdict: int(counts.get(verdict, 0)) for verdict in VERDICTS}


def fails(counts: Mapping[str, int], fail_on: str) -> bool:
    """Whether a job with these verdict counts fails under `fail_on`."""
    return any(counts.get(verdict, 0) > 0 for verdict in failing_verdicts(fail_on))


def key_columns(tests: pd.DataFrame) -> list[str]:
    """The columns of tests.csv that identify a test (deployment and parameters), in order."""
    return [column for column in tests.columns if column not in NOT_KEYS]


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _number(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return "nan" if math.isnan(number) else f"{number:.4g}"


def case_name(row: Mapping[str, object], keys: Sequence[str], varied: str) -> str:
    """`<mpi> <nodes>x<ppn> k=v ...`: a group's deployment and its fixed parameters among `keys`
    (the varied one and those that do not apply left out)."""
    deployment = f"{_text(row['mpi'])} {_text(row['nodes'])}x{_text(row['ppn'])}"
    fixed = [
        f"{key}={_text(row[key])}"
        for key in keys
        if key not in ("mpi", "nodes", "ppn", varied) and _text(row[key])
    ]
    return " ".join([deployment, *fixed])


def _lines(tests: pd.DataFrame, varied: str) -> list[str]:
    """Per test: `<varied>=v: verdict, ratio r (interval low to high), p p, runs n/m`, and for an
    undecided test `, runs needed k` (or that they are beyond reach: runs_needed_text)."""
    values = [_text(v) for v in tests[varied]] if varied else [""] * len(tests)
    columns = [
        tests[c].tolist()
        for c in ("verdict", "violation_ratio", "ratio_low", "ratio_high", "p_adjusted")
    ]
    runs = zip(tests["n_lhs"].tolist(), tests["n_rhs"].tolist(), strict=True)
    needed = tests["runs_needed"].tolist() if "runs_needed" in tests else [math.nan] * len(tests)
    return [
        f"{varied}={value}: {verdict}, ratio {_number(ratio)} (interval {_number(low)} to "
        f"{_number(high)}), p {_number(p)}, runs {_text(n_lhs)}/{_text(n_rhs)}"
        + _needed(runs_to_decide, min(as_number(n_lhs), as_number(n_rhs)), verdict)
        for value, verdict, ratio, low, high, p, (n_lhs, n_rhs), runs_to_decide in zip(
            values, *columns, runs, needed, strict=True
        )
    ]


def _needed(runs_needed: object, runs: float, verdict: object) -> str:
    text = runs_needed_text(runs_needed, runs, verdict)
    return f", runs needed {text}" if text else ""


def junit_tree(
    tests: pd.DataFrame, texts: Mapping[str, str], varied: str, fail_on: str
) -> ET.ElementTree:
    """The JUnit document of tests.csv: a suite per guideline, a case per group. A group with a
    violated test is a failure; an undecided group is skipped, or a failure when `fail_on` is
    undecided; a group that holds passes. `texts`: guideline id -> its text, for the suite.

    Built from plain lists in one pass over the tests sorted by guideline and group: a campaign
    has up to millions of tests, and per-group pandas calls would take minutes."""
    failing = failing_verdicts(fail_on)
    if varied not in tests.columns:
        varied = ""
    # Parameters that are the same in every test (defaults such as dtype=char) tell no case
    # from another: the names keep the deployment and the parameters that vary.
    keys = [key for key in key_columns(tests) if tests[key].astype(str).nunique() > 1]
    order = {gid: index for index, gid in enumerate(pd.unique(tests["guideline"]))}
    tests = tests.assign(_order=tests["guideline"].map(order)).sort_values(
        ["_order", "group"], kind="stable"
    )
    lines = _lines(tests, varied)
    guidelines = tests["guideline"].astype(str).tolist()
    groups = tests["group"].tolist()
    verdicts = tests["verdict"].tolist()
    group_verdicts = tests["group_verdict"].astype(str).tolist()
    ratios = pd.to_numeric(tests["violation_ratio"], errors="coerce").fillna(-1.0).tolist()
    # the deployment first, once: mpi, nodes or ppn may be among the keys that vary too
    named = tests[
        list(dict.fromkeys(k for k in ("mpi", "nodes", "ppn", *keys) if k in tests.columns))
    ]
    records = named.to_dict("records")
    timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    hostname = socket.gethostname() or "localhost"
    root = ET.Element("testsuites", name="mpiguide")
    totals = {"tests": 0, "failures": 0}
    suite: ET.Element | None = None
    counts: dict[str, int] = {}

    def close(suite: ET.Element | None) -> None:
        if suite is None:
            return
        for key in ("tests", "failures"):
            suite.set(key, str(counts[key]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", "0")
        suite.set("timestamp", timestamp)
        suite.set("hostname", hostname)
        ET.SubElement(suite, "system-out")
        ET.SubElement(suite, "system-err")
        for key in totals:
            totals[key] += counts[key]

    begin = 0
    while begin < len(lines):
        end = begin + 1
        while end < len(lines) and (guidelines[end], groups[end]) == (
            guidelines[begin],
            groups[begin],
        ):
            end += 1
        guideline = guidelines[begin]
        if suite is None or suite.get("name") != guideline:
            close(suite)
            suite = ET.SubElement(root, "testsuite", name=guideline, id=str(len(root)))
            properties = ET.SubElement(suite, "properties")
            ET.SubElement(properties, "property", name="text", value=texts.get(guideline, ""))
            ET.SubElement(properties, "property", name="fail_on", value=fail_on)
            counts = {"tests": 0, "failures": 0, "skipped": 0}
        verdict = group_verdicts[begin]
        case = ET.SubElement(
            suite,
            "testcase",
            name=f"{case_name(records[begin], keys, varied)} (group {_text(groups[begin])})",
            classname=f"mpiguide.{guideline}",
            time="0",
        )
        counts["tests"] += 1
        members = range(begin, end)
        text = "\n".join(lines[begin:end])
        if verdict in failing or verdict == VIOLATED:
            chosen = [i for i in members if verdicts[i] == verdict] or list(members)
            top = max(chosen, key=lambda i: ratios[i])
            failure = ET.SubElement(
                case, "failure", message=f"{verdict}: {lines[top]}", type=verdict
            )
            failure.text = text
            counts["failures"] += 1
        elif verdict != HOLDS:
            undecided = sum(verdicts[i] == UNDECIDED for i in members)
            skipped = ET.SubElement(
                case, "skipped", message=f"{UNDECIDED}: {undecided} of {len(members)} tests"
            )
            skipped.text = text
            counts["skipped"] += 1
        begin = end
    close(suite)
    for key, total in totals.items():
        root.set(key, str(total))
    root.set("errors", "0")
    root.set("time", "0")
    tree = ET.ElementTree(root)
    ET.indent(tree)
    return tree


def write_junit(
    tests: pd.DataFrame, texts: Mapping[str, str], varied: str, fail_on: str, path: Path
) -> None:
    """guidelines/junit.xml (junit_tree), written atomically."""
    tree = junit_tree(tests, texts, varied, fail_on)
    with atomic_path(path) as temporary:
        tree.write(temporary, encoding="utf-8", xml_declaration=True)


def read_tests(tests_csv: Path) -> pd.DataFrame:
    """tests.csv as `mpiguide check` wrote it; a DataError names what is wrong."""
    from mpiguide.core.errors import DataError

    try:
        tests = pd.read_csv(tests_csv, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise DataError(f"{tests_csv}: cannot read the tests: {error}") from None
    for column in ("guideline", "group", "verdict"):
        if column not in tests.columns:
            raise DataError(f"{tests_csv}: column {column!r} missing; written by `mpiguide check`?")
    unknown = set(tests["verdict"]) - set(VERDICTS)
    if unknown:
        raise DataError(f"{tests_csv}: unknown verdict {sorted(unknown)[0]!r}")
    return tests
