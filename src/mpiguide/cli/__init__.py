"""Command line of mpiguide: the steps the Snakemake rules run, plus `validate` for users.

Every subcommand is declared (arguments.Command) with its options and what it reads and writes;
before any work, main() refuses a command whose output would replace one of its inputs, then
runs it. An MpiguideError is printed as `mpiguide: error: <message>` and exits 2, as argparse
does for bad flags. A file that cannot be read or written (OSError) is printed as
`mpiguide: error: <file>: <reason>` and exits 1. The commands import the analysis, pandas and
matplotlib inside themselves, so that --help, `grid`, `inputs` and `validate` start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from mpiguide.cli import analyse, decide, prepare, records, report, selftest, tune
from mpiguide.cli.arguments import Command, ExitStatus, FailingVerdicts
from mpiguide.core.errors import MpiguideError

# Every subcommand, in the order --help lists them.
COMMANDS: tuple[Command, ...] = (
    *prepare.COMMANDS,
    *decide.COMMANDS,
    *report.CAMPAIGN_REPORTS,
    *analyse.COMMANDS,
    *tune.COMMANDS,
    *report.OVERVIEWS,
    *selftest.COMMANDS,
    *records.COMMANDS,
)


def _version() -> str:
    """The installed distribution's version: pyproject.toml owns it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mpiguide")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


class _Version(argparse.Action):
    """--version: the version is looked up only when asked for (importlib.metadata is slow)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"mpiguide {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpiguide", description="Verify self-consistent MPI performance guidelines."
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(commands)
    return parser


def _report(message: str) -> None:
    """The error on stderr. A log on a full disk cannot take it: then the exit status alone
    tells (Snakemake names the rule and its log), never a second traceback about stderr."""
    with contextlib.suppress(OSError):
        print(f"mpiguide: error: {message}", file=sys.stderr, flush=True)


def status_of(work: Callable[[], None]) -> int:
    """main()'s status for `work`: 0, or its error reported and the status that tells it."""
    try:
        work()
    except MpiguideError as exc:
        _report(str(exc))
        return 2
    except FailingVerdicts:
        from mpiguide.reports.junit import FAILED_STATUS

        return FAILED_STATUS
    except ExitStatus as exc:  # reported where it arose
        return exc.status
    except OSError as exc:  # e.g. an output directory that cannot be created or written
        where = f"{exc.filename}: " if exc.filename is not None else ""
        _report(f"{where}{exc.strerror or exc}")
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command: Command = args.subcommand

    def work() -> None:
        command.refuse_overwriting(args)
        command.run(args)

    status = status_of(work)
    if status != 0:
        return status
    try:
        sys.stdout.flush()  # e.g. `validate > FILE` on a full disk: an error, not a silent loss
    except OSError as exc:
        _report(f"<stdout>: {exc.strerror or exc}")
        # what could not be written stays buffered; the interpreter's last flush must not
        # fail again with a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def run() -> NoReturn:
    """The process's entry point (`python -m mpiguide`, the `mpiguide` script): main()'s status
    as the exit status, without the interpreter's teardown. By then every output is written (or
    removed) and stdout flushed; the teardown would only free what the process holds, a cost
    every job of the workflow paid (docs/measurements/workflow.md). Under a profiler or a tracer
    (cProfile, coverage) a command that succeeded exits as usual, so that they write what they
    recorded. A failed command is spared the teardown always: Arrow's thread pool, torn down
    then, can abort the process ("terminate called without an active exception",
    apache/arrow#34314; seen here in about 1 of 100 refused aggregates), and a clear error's
    status would read as a crash."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):
            stream.flush()
    if code == 0 and (sys.getprofile() is not None or sys.gettrace() is not None):
        sys.exit(code)
    os._exit(code)
