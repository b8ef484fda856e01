"""`analyse`: a campaign's analysis in one process, as the workflow's rule of that name runs it:
the verdicts and their tables (`check`), an adaptive campaign's cost (`cost`), every figure
(`figures`) and the campaign page (`page`), each also a command of its own. One process imports
pandas once, where a job per step imported it per step, and loads matplotlib while a forked
process decides the verdicts; what that saves is in docs/measurements/workflow.md."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from pathlib import Path

from mpiguide.cli import decide, report
from mpiguide.cli.arguments import Command, ExitStatus, Option


def _options(command_name: str, commands: tuple[Command, ...], *flags: str) -> tuple[Option, ...]:
    """The options `flags` as the command `command_name` declares them."""
    (command,) = (command for command in commands if command.name == command_name)
    declared = {option.flag: option for option in command.options}
    return tuple(declared[flag] for flag in flags)


def page_tables(outdir: Path, adaptive: bool) -> list[Path]:
    """The tables the page links to, in its order: every CSV the analysis writes into
    `outdir`."""
    from mpiguide.core.paths import (
        COST_FILES,
        GUIDELINE_FILES,
        LIBRARY_TABLE_FILES,
        LOOKS_CSV,
        REPORT_TABLE_FILES,
    )

    names = (
        *GUIDELINE_FILES,
        *((LOOKS_CSV,) if adaptive else ()),
        *REPORT_TABLE_FILES,
        *LIBRARY_TABLE_FILES,
        *(COST_FILES if adaptive else ()),
    )
    return [outdir / name for name in names if name.endswith(".csv")]


def _decided_in_child(args: argparse.Namespace) -> None:
    """`check`'s outputs written by a process forked from this one, while this one imports
    matplotlib and the figures' modules. The child reports its errors as any command does
    (main()'s status); where fork is missing, this process decides them."""
    if not hasattr(os, "fork"):
        decide.write_verdicts(args)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        status = 1
        try:
            status = _child_status(args)
        except BaseException:  # a bug: its traceback, as the interpreter would print it
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    for module in ("mpiguide.reports.figures", "mpiguide.reports.page"):
        importlib.import_module(module)  # beside the child's work
    _, wait_status = os.waitpid(child, 0)
    status = os.waitstatus_to_exitcode(wait_status)
    if status != 0:
        raise ExitStatus(status)


def _child_status(args: argparse.Namespace) -> int:
    """`check`'s work in the forked process, its errors reported as main() reports them."""
    from mpiguide.cli import status_of

    def work() -> None:
        decide.write_verdicts(args)

    return status_of(work)


# Collections of the youngest generation every GENERATION_0 allocations (Python's default: 700):
# pandas' imports and work allocate millions of objects in this short-lived process and its
# forks, and each collection walks the young ones again (the gain: docs/measurements/workflow.md).
GENERATION_0 = 100_000


def analyse(args: argparse.Namespace) -> None:
    gc.set_threshold(GENERATION_0, *gc.get_threshold()[1:])
    from mpiguide.core.paths import (
        DECIDED_WITH_JSON,
        RUNS_CSV,
        SLOWDOWN_CSV,
        SUMMARY_CSV,
        TESTS_CSV,
        VERDICT_LINES_CSV,
    )

    looks = decide.looks_of(args.runs_json)
    adaptive = looks is not None and looks.adaptive
    outdir = args.outdir
    # What each step reads of those before it, by the names its own command takes.
    steps = argparse.Namespace(
        **vars(args),
        tests=outdir / TESTS_CSV,
        summary=outdir / SUMMARY_CSV,
        verdict_lines=outdir / VERDICT_LINES_CSV,
        decided_with=outdir / DECIDED_WITH_JSON,
        slowdown=outdir / SLOWDOWN_CSV,
        figures=[args.slowdown_png],
        runs=args.variability / RUNS_CSV,
        tables=page_tables(outdir, adaptive),
    )
    _decided_in_child(steps)
    if looks is not None and adaptive:
        from mpiguide.reports.cost import write_cost

        write_cost(args.timings, steps.tests, looks, outdir)
    report.figures(steps)
    report.page(steps)
    if not args.exit_zero:
        from mpiguide.reports.junit import read_tests, verdict_counts

        decide.exit_on_failing_verdicts(verdict_counts(read_tests(steps.tests)), args.fail_on)


COMMANDS = (
    Command(
        "analyse",
        "the workflow's analysis in one process: check, an adaptive campaign's cost, figures"
        " and page, their outputs as theirs",
        analyse,
        (
            *_options("check", decide.COMMANDS, "--medians", "--catalogue", "--guidelines-json",
                      "--analysis-json", "--outdir", "--runs-json", "--fail-on", "--exit-zero"),
            *_options("figures", report.CAMPAIGN_REPORTS, "--timings", "--plots-json",
                      "--plots", "--slowdown-png", "--variability", "--processes"),
            *_options("page", report.CAMPAIGN_REPORTS, "--campaign", "--report",
                      "--oversubscribed-json", "--versions-json", "--analysis-doc", "--out"),
        ),
    ),
)  # fmt: skip
