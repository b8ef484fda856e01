"""Every command line of the documentation runs as typed: the fenced ```sh blocks of README.md
and docs/*.md, each `mpiguide` line parsed by the real command line, each `snakemake` line by
Snakemake's own parser with its targets among the workflow's rules, each `make` line's targets
among its Makefile's. Parsed, not run: no campaign is measured here."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

from mpiguide.cli import build_parser
from mpiguide.core.paths import RESULTS_ROOT

REPO = Path(__file__).resolve().parents[3]
DOCUMENTS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
FENCE = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
SEPARATORS = {"&&", "||", ";", "|"}
# How a line names a value to fill in: `<campaign>`, `FILE`, `…`
PLACEHOLDER = re.compile(r"<[^<>]+>|\bFILE\b|…")


class Line(NamedTuple):
    """One command of a documented command line: where it is written and its words."""

    where: str
    words: list[str]

    def __str__(self) -> str:
        return f"{self.where}: {shlex.join(self.words)}"


def _commands(block: str) -> Iterator[list[str]]:
    """The commands of an sh block as the shell splits them: continued lines joined, a quote
    spanning lines kept whole, comments dropped, `&&`, `||`, `;` and `|` separating."""
    pending = ""
    for text in block.splitlines():
        pending += text
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # a quote open until a later line
            pending += "\n"
            continue
        pending = ""
        command: list[str] = []
        for word in [*words, ";"]:
            if word in SEPARATORS:
                if command:
                    yield command
                command = []
            else:
                command.append(word)
    assert not pending, f"unterminated command: {pending!r}"


def documented_lines() -> list[Line]:
    lines = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            number = text.count("\n", 0, block.start()) + 1
            where = f"{document.relative_to(REPO)}:{number}"
            lines += [Line(where, words) for words in _commands(block[1])]
    return lines


LINES = documented_lines()


def of_program(*programs: str) -> list[Line]:
    return [line for line in LINES if line.words[0] in programs]


def mpiguide_arguments(line: Line) -> list[str] | None:
    """The arguments of `python -m mpiguide …` or `mpiguide …`, else None."""
    words = line.words
    if words[0] == "mpiguide":
        return words[1:]
    if words[0] in ("python", "python3") and words[1:3] == ["-m", "mpiguide"]:
        return words[3:]
    return None


MPIGUIDE = [line for line in LINES if mpiguide_arguments(line) is not None]
SNAKEMAKE = of_program("snakemake")
MAKE = of_program("make")


@cache
def rule_names() -> frozenset[str]:
    """Every rule of the workflow, found in its source as `rule NAME:`."""
    sources = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    pattern = re.compile(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", re.MULTILINE)
    return frozenset(name for source in sources for name in pattern.findall(source.read_text()))


@cache
def make_targets(directory: Path) -> frozenset[str]:
    """The explicit targets of `directory`'s Makefile (rules `target ...:`, not `VAR := …`)."""
    pattern = re.compile(r"^([A-Za-z0-9_.-]+(?:[ \t]+[A-Za-z0-9_.-]+)*)[ \t]*:(?!=)", re.MULTILINE)
    text = (directory / "Makefile").read_text()
    return frozenset(
        target
        for targets in pattern.findall(text)
        for target in targets.split()
        if not target.startswith(".")
    )


def named_path(value: str) -> Path | None:
    """A path of this checkout that a documented line names, None for a placeholder or a path
    elsewhere."""
    if PLACEHOLDER.search(value) or value.startswith(("/", "$", "~")):
        return None
    return REPO / value


def test_the_documentation_has_commands_of_each_kind() -> None:
    assert len(MPIGUIDE) >= 3 and len(SNAKEMAKE) >= 10 and len(MAKE) >= 5, LINES


@pytest.mark.parametrize("line", MPIGUIDE, ids=str)
def test_a_documented_mpiguide_line_parses(line: Line) -> None:
    arguments = mpiguide_arguments(line)
    assert arguments is not None
    error = io.StringIO()
    try:
        with contextlib.redirect_stderr(error), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(arguments)
    except SystemExit as exit_:
        assert exit_.code == 0, f"{line}\n{error.getvalue()}"


@pytest.mark.parametrize("line", SNAKEMAKE, ids=str)
def test_a_documented_snakemake_line_parses_and_names_rules(line: Line) -> None:
    from snakemake.cli import get_argument_parser

    error = io.StringIO()
    try:
        with contextlib.redirect_stderr(error), contextlib.redirect_stdout(io.StringIO()):
            args = get_argument_parser().parse_args(line.words[1:])
    except SystemExit as exit_:
        pytest.fail(f"{line}: status {exit_.code}\n{error.getvalue()}")
    for target in args.targets:
        is_file = target.startswith(f"{RESULTS_ROOT}/")
        assert target in rule_names() or is_file, f"{line}: no rule or result {target!r}"
    for value in [*(args.configfile or []), *(args.profile or [])]:
        path = named_path(str(value))
        assert path is None or path.exists(), f"{line}: no such file or profile: {value}"


@pytest.mark.parametrize("line", MAKE, ids=str)
def test_a_documented_make_line_names_targets_of_its_makefile(line: Line) -> None:
    words = line.words[1:]
    directory = REPO
    targets = []
    while words:
        word = words.pop(0)
        if word == "-C":
            directory = directory / words.pop(0)
        elif "=" not in word and not word.startswith("-"):
            targets.append(word)
    assert (directory / "Makefile").is_file(), f"{line}: no Makefile in {directory}"
    unknown = set(targets) - make_targets(directory)
    assert not unknown, f"{line}: no target {sorted(unknown)} in {directory / 'Makefile'}"


def test_commands_are_split_as_the_shell_splits_them() -> None:
    block = (
        "git clone … x && cd x && make setup   # set up\n"
        "snakemake --profile local \\\n  --config a=1\n"
        "python -c '\nprint(1)\n'\n"
    )
    assert list(_commands(block)) == [
        ["git", "clone", "…", "x"],
        ["cd", "x"],
        ["make", "setup"],
        ["snakemake", "--profile", "local", "--config", "a=1"],
        ["python", "-c", "\nprint(1)\n"],
    ]
