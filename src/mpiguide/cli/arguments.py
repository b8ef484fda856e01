"""What the subcommands share: argument types, the options declared once each, a command's
declaration (its options, and of them what it reads and writes), and the guard that stops a
command before it writes over one of its inputs."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from mpiguide.core.errors import MpiguideError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE

NAME = re.compile(r"[A-Za-z0-9_.-]+")


def integer(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def name(text: str) -> str:
    if not NAME.fullmatch(text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"{text!r} is not a name (letters, digits, _ . -)")
    return text


def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


def existing_directory(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"no such directory: {text}")
    return path


def parse_json(text: str, flag: str, kind: type[dict] | type[list]) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MpiguideError(f"{flag}: invalid JSON: {exc}") from None
    if not isinstance(value, kind):
        expected = "object" if kind is dict else "array"
        raise MpiguideError(f"{flag}: expected a JSON {expected}, got {text!r}")
    return value


class FailingVerdicts(Exception):
    """A `--fail-on` verdict was found: main() exits with FAILED_STATUS."""


class ExitStatus(Exception):
    """A step that ran apart (a forked process) failed and reported why: main() exits with
    its status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class Role(Enum):
    """What a command does with the path an option names."""

    NONE = "none"  # not a path, or a path of neither kind (e.g. a directory of logs read)
    READS = "reads"  # an input file
    READS_DIR = "reads_dir"  # a directory of inputs: no output may lie in it
    WRITES = "writes"  # an output file
    WRITES_DIR = "writes_dir"  # a directory the command fills: it may hold no input
    WRITES_INTO = "writes_into"  # a directory the command writes its `files` into


# Declarations are named tuples, not dataclasses: --help need not import dataclasses (and
# inspect).
class Option(NamedTuple):
    """One option (a flag, or a positional argument's name) as argparse takes it, its help and
    what the command does with the path it names."""

    flag: str
    help: str
    role: Role = Role.NONE
    settings: Mapping[str, Any] = {}  # never changed: but() makes a new one
    # WRITES_INTO: the names of the files written into the directory
    files: tuple[str, ...] = ()
    # READS: the suffixes of the files read beside each (a raw CSV's provenance JSON)
    companions: tuple[str, ...] = ()
    # one of the command's options of which exactly one must be given
    one_of: bool = False

    def but(self, **changes: Any) -> Option:
        """This option with `changes`: to its fields (help, role, files, ...) or else to its
        argparse settings."""
        fields = {key: changes.pop(key) for key in list(changes) if key in OPTION_FIELDS}
        return self._replace(**fields, settings={**self.settings, **changes})

    @property
    def positional(self) -> bool:
        return not self.flag.startswith("-")

    @property
    def dest(self) -> str:
        return self.flag if self.positional else self.flag.lstrip("-").replace("-", "_")

    @property
    def label(self) -> str:
        """How errors name it: the flag, or a positional argument's metavar."""
        return str(self.settings.get("metavar", self.flag)) if self.positional else self.flag


OPTION_FIELDS = ("help", "role", "files", "companions", "one_of")


class Command(NamedTuple):
    """A subcommand: its name, what it does, the function that runs it and its options in the
    order --help lists them."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], None]
    options: tuple[Option, ...]

    def add_to(self, commands: Any) -> None:
        """Adds the subcommand to the parser's subcommands (add_subparsers' result)."""
        parser = commands.add_parser(self.name, help=self.help, description=self.help)
        parser.set_defaults(subcommand=self)
        group = None
        for option in self.options:
            target = parser
            if option.one_of:
                group = group or parser.add_mutually_exclusive_group(required=True)
                target = group
            target.add_argument(option.flag, help=option.help, **option.settings)

    def refuse_overwriting(self, args: argparse.Namespace) -> None:
        """Stops before any work when an output would replace an input, lie in a directory of
        inputs, or an output directory holds an input: `--timings` pointing at a raw CSV
        would destroy a measurement that took hours."""
        reads: list[tuple[str, Path]] = []
        read_dirs: list[tuple[str, Path]] = []
        writes: list[tuple[str, Path]] = []
        write_dirs: list[tuple[str, Path]] = []
        for option in self.options:
            value = getattr(args, option.dest)
            if value is None or option.role is Role.NONE:
                continue
            paths = [Path(path) for path in (value if isinstance(value, list) else [value])]
            named = [(option.label, path) for path in paths]
            if option.role is Role.READS:
                reads += named
                for suffix in option.companions:
                    label = Path(option.label).with_suffix(suffix).name
                    reads += [(label, path.with_suffix(suffix)) for path in paths]
            elif option.role is Role.READS_DIR:
                read_dirs += named
            elif option.role is Role.WRITES:
                writes += named
            elif option.role is Role.WRITES_DIR:
                write_dirs += named
            else:
                writes += [(label, path / file) for label, path in named for file in option.files]
        refuse_overwriting(reads, writes, read_dirs, write_dirs)


def refuse_overwriting(
    reads: Sequence[tuple[str, Path]],
    writes: Sequence[tuple[str, Path]],
    read_dirs: Sequence[tuple[str, Path]] = (),
    write_dirs: Sequence[tuple[str, Path]] = (),
) -> None:
    """The guard of Command.refuse_overwriting on (flag, path) pairs."""
    for flag, out in writes:
        target = out.resolve()
        if target.exists() and not target.is_file():
            # an atomic write renames over it: a device such as /dev/null would be replaced
            raise MpiguideError(f"{flag} {out}: exists and is not a regular file")
        for source, path in reads:
            if path.resolve() == target:
                raise MpiguideError(
                    f"{flag} {out}: is the input {source} {path}; refusing to overwrite it"
                )
        for source, directory in read_dirs:
            if directory.resolve() in target.parents:
                raise MpiguideError(
                    f"{flag} {out}: lies in {source} {directory}, a directory of inputs; "
                    "refusing to write there"
                )
    for flag, directory in write_dirs:
        for source, path in reads:
            if directory.resolve() in path.resolve().parents:
                raise MpiguideError(
                    f"{flag} {directory}: holds the input {source} {path}; refusing to write there"
                )
    targets = [(flag, out.resolve()) for flag, out in writes]
    for index, (flag, target) in enumerate(targets):
        for other, same in targets[index + 1 :]:
            if same == target:
                raise MpiguideError(f"{flag} and {other} name the same file {target}")


# The options several subcommands take, declared once each: the same meaning everywhere unless a
# command's declaration changes it with Option.but.
CONFIG = Option("--config", "the campaign config file", Role.READS,
                {"type": Path, "required": True, "metavar": "FILE"})  # fmt: skip
OUT = Option("--out", "the file to write", Role.WRITES,
             {"type": Path, "required": True, "metavar": "FILE"})  # fmt: skip
OUTDIR = Option("--outdir", "the directory to write the outputs into", Role.WRITES_DIR,
                {"type": Path, "required": True, "metavar": "DIR"})  # fmt: skip
GRID = Option("--grid", "grid.csv (written by `mpiguide grid`)", Role.READS,
              {"type": existing_file, "required": True, "metavar": "FILE"})  # fmt: skip
TIMINGS = Option("--timings", "timings.parquet (written by `mpiguide aggregate`)", Role.READS,
                 {"type": existing_file, "required": True, "metavar": "FILE"})  # fmt: skip
MEDIANS = Option("--medians", "medians.parquet (written by `mpiguide aggregate`)", Role.READS,
                 {"type": existing_file, "required": True, "metavar": "FILE"})  # fmt: skip
TESTS = Option("--tests", "tests.csv (written by `mpiguide check`)", Role.READS,
               {"type": existing_file, "required": True, "metavar": "CSV"})  # fmt: skip
CATALOGUE = Option("--catalogue", f"guideline catalogue (default: {GUIDELINE_CATALOGUE})",
                   Role.READS, {"type": existing_file, "default": GUIDELINE_CATALOGUE,
                                "metavar": "FILE"})  # fmt: skip
GUIDELINES_JSON = Option(
    "--guidelines-json", "the campaign's guidelines: list of ids or inline entries, as JSON",
    settings={"required": True, "metavar": "JSON"},
)  # fmt: skip
ANALYSIS_JSON = Option("--analysis-json", "the campaign's analysis: mapping, as JSON",
                       settings={"required": True, "metavar": "JSON"})  # fmt: skip
DECIDED_WITH = Option(
    "--decided-with", "check's decided_with.json: the options the verdicts were decided with",
    Role.READS, {"type": existing_file, "required": True, "metavar": "JSON"},
)  # fmt: skip
RUNS_JSON = Option(
    "--runs-json",
    "the campaign's `runs`: a range {min, max, step} decides every test at its looks"
    " (docs/analysis.md, Adaptive campaigns); default: one look at the runs measured",
    settings={"required": False, "metavar": "JSON"},
)  # fmt: skip
FAIL_ON = Option(
    "--fail-on",
    "exit 3 when a test is violated (violated), or violated or undecided (undecided);"
    " these tests are junit.xml's failures, other undecided ones skipped (default: never)",
    settings={"choices": ("never", "violated", "undecided"), "default": "never"},
)  # fmt: skip
SCALE = Option("--scale", "as for validate (with --config)",
               settings={"choices": ("paper", "local"), "default": None})  # fmt: skip
