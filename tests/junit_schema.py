"""The JUnit XML schema that CI services' test reports are held to: Jenkins' junit-10.xsd
(tests/schemas, vendored with its source and licence), the schema most readers accept, and the
check of a document against it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import xmlschema

JUNIT_XSD = Path(__file__).resolve().parent / "schemas" / "junit-10.xsd"


@cache
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(JUNIT_XSD))


def assert_valid_junit(document: Path | ET.Element) -> None:
    """`document` (a file or a parsed root) is valid against junit-10.xsd; the assertion names
    every violation."""
    source = str(document) if isinstance(document, Path) else document
    errors = [str(error) for error in junit_schema().iter_errors(source)]
    assert not errors, "\n\n".join(errors)


def skipped_cases(root: ET.Element) -> int:
    """The skipped cases of a document, summed over its suites: junit-10.xsd gives `testsuites`
    no `skipped` attribute."""
    return sum(int(suite.get("skipped") or 0) for suite in root.findall("testsuite"))
