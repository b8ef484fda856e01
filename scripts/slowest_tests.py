"""Print the slowest tests of one or more pytest JUnit XML files, slowest first, as one table.

`make test` runs the suite twice (the timing tests alone, after the rest) and calls this last,
so that the slowest tests of both runs end its output. A test's time is the JUnit file's:
setup, call and teardown together. A file that is missing or unreadable is named and skipped;
the exit status is 0 whatever the files hold (the pytest runs own the target's status).
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

DEFAULT_COUNT = 15


class Case(NamedTuple):
    seconds: float
    node_id: str
    run: str  # the JUnit file's name without suffix (suite, timing)


def node_id(classname: str, name: str, root: Path) -> str:
    """pytest's node id of a test case when its module is found below `root` (classname is the
    module's dotted path, then any classes), else `classname::name`."""
    parts = classname.split(".")
    for split in range(len(parts), 0, -1):
        module = Path(*parts[:split]).with_suffix(".py")
        if (root / module).is_file():
            return "::".join([module.as_posix(), *parts[split:], name])
    return f"{classname}::{name}"


def one_line(text: str) -> str:
    """A parametrised test's id may hold newlines (its YAML, say): written as \\n."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def read_cases(path: Path, root: Path) -> list[Case]:
    """The test cases of one JUnit XML file; raises OSError, ET.ParseError or ValueError."""
    tree = ET.parse(path)
    return [
        Case(
            float(case.get("time") or 0),
            node_id(case.get("classname", ""), case.get("name", ""), root),
            path.stem,
        )
        for case in tree.iter("testcase")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="pytest --junitxml files")
    parser.add_argument(
        "--count", type=int, default=DEFAULT_COUNT, help=f"tests to list (default {DEFAULT_COUNT})"
    )
    parser.add_argument(
        "--root", type=Path, default=Path.cwd(), help="where pytest ran (default: here)"
    )
    args = parser.parse_args(argv)

    cases: list[Case] = []
    for path in args.files:
        try:
            cases += read_cases(path, args.root)
        except (OSError, ET.ParseError, ValueError) as error:
            print(f"slowest tests: {path} skipped ({error})")
    cases.sort(key=lambda case: -case.seconds)
    total = sum(case.seconds for case in cases)
    shown = min(args.count, len(cases))
    print(f"== {shown} slowest of {len(cases)} tests ({total:.0f} s of test time) ==")
    for case in cases[: args.count]:
        print(f"{case.seconds:9.2f}s  {case.run:<8} {one_line(case.node_id)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
