"""The subcommands that decide the guidelines' verdicts and act on them: `check`, an adaptive
campaign's `plan-round`, CI's `gate`, and `diff` of two campaigns."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mpiguide.cli.arguments import (
    ANALYSIS_JSON,
    CATALOGUE,
    FAIL_ON,
    GUIDELINES_JSON,
    MEDIANS,
    OUT,
    OUTDIR,
    RUNS_JSON,
    TESTS,
    Command,
    FailingVerdicts,
    Option,
    Role,
    integer,
    name,
    parse_json,
    refuse_overwriting,
)
from mpiguide.core.errors import MpiguideError

if TYPE_CHECKING:
    from mpiguide.analysis.sequential import Looks


def looks_of(runs_json: str | None) -> Looks | None:
    """The looks of `--runs-json` (a config's `runs`, validated as the schema does), or None."""
    if runs_json is None:
        return None
    from mpiguide.analysis.sequential import Looks
    from mpiguide.campaign.config import validate_runs

    try:
        runs = json.loads(runs_json)
    except json.JSONDecodeError as exc:
        raise MpiguideError(f"--runs-json: invalid JSON: {exc}") from None
    validate_runs(runs, "--runs-json")
    return Looks.of(runs)


def exit_on_failing_verdicts(counts: dict[str, int], fail_on: str) -> None:
    from mpiguide.reports.junit import failing_verdicts, fails

    if fails(counts, fail_on):
        found = ", ".join(f"{counts[v]} {v}" for v in failing_verdicts(fail_on) if counts[v])
        print(f"mpiguide: failing: --fail-on {fail_on}: {found}", file=sys.stderr)
        raise FailingVerdicts


def check(args: argparse.Namespace) -> None:
    counts = write_verdicts(args)
    if not args.exit_zero:
        exit_on_failing_verdicts(counts, args.fail_on)


def write_verdicts(args: argparse.Namespace) -> dict[str, int]:
    """`check`'s outputs written; the tests per verdict."""
    from mpiguide.analysis.analysis_types import AnalysisOptions, Decisions
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.analysis.guidelines import check
    from mpiguide.core.paths import DECIDED_WITH_JSON, JUNIT_XML, TESTS_CSV
    from mpiguide.reports.junit import verdict_counts, write_junit
    from mpiguide.reports.library_table import write_library_table
    from mpiguide.reports.report_tables import write_report_tables

    selection = parse_json(args.guidelines_json, "--guidelines-json", list)
    analysis = parse_json(args.analysis_json, "--analysis-json", dict)
    catalogue = load_catalogue(args.catalogue, selection)
    resolved = resolve(selection, catalogue, "--guidelines-json")
    looks = looks_of(args.runs_json)
    options = AnalysisOptions.from_mapping(analysis, "--analysis-json")
    tests = check(args.medians, resolved, options, args.outdir, looks, selection)
    texts = {guideline.id: guideline.text for guideline in resolved}
    write_junit(tests, texts, options.varied, args.fail_on, args.outdir / JUNIT_XML)
    # The tables read from tests.csv and the record as written, as any later reader would:
    # here, in the process that has pandas loaded already, rather than in jobs of their own.
    tests_csv = args.outdir / TESTS_CSV
    write_report_tables(tests_csv, Decisions.read(args.outdir / DECIDED_WITH_JSON), args.outdir)
    write_library_table(tests_csv, options.varied, args.outdir)
    return verdict_counts(tests)


def plan_round(args: argparse.Namespace) -> None:
    from mpiguide.analysis.analysis_types import AnalysisOptions
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.analysis.rounds import plan_round

    selection = parse_json(args.guidelines_json, "--guidelines-json", list)
    analysis = parse_json(args.analysis_json, "--analysis-json", dict)
    resolved = resolve(selection, load_catalogue(args.catalogue, selection), "--guidelines-json")
    looks = looks_of(args.runs_json)
    if looks is None or not looks.adaptive:
        raise MpiguideError(f"--runs-json {args.runs_json}: not a range of runs; nothing to plan")
    if args.round >= looks.count:
        raise MpiguideError(f"--round {args.round}: the runs plan {looks.count} rounds")
    options = AnalysisOptions.from_mapping(analysis, "--analysis-json")
    plan = plan_round(
        args.medians, resolved, options, looks, args.round, args.entry, args.blocking, args.out
    )
    stops = ", ".join(f"{count} {stop}" for stop, count in plan["stops"].items())
    first, stop = plan["next_runs"] or (0, 0)
    after = "done" if plan["done"] else f"next: runs {first}-{stop - 1}"
    print(f"mpiguide plan-round {args.round}: {plan['tests']} tests: {stops}; {after}")


def gate(args: argparse.Namespace) -> None:
    from mpiguide.core.atomic import atomic_path
    from mpiguide.reports.diff import tests_csv_of
    from mpiguide.reports.junit import read_tests, verdict_counts

    tests = args.tests
    if tests is None:
        tests = tests_csv_of(args.results)
        if args.out is not None:  # --results may name tests.csv itself
            refuse_overwriting([("--results", tests)], [("--out", args.out)])
    counts = verdict_counts(read_tests(tests))
    line = f"{sum(counts.values())} tests: " + ", ".join(f"{n} {v}" for v, n in counts.items())
    print(f"mpiguide gate: {line}")
    exit_on_failing_verdicts(counts, args.fail_on)
    if args.out is not None:
        with atomic_path(args.out) as temporary:
            temporary.write_text(f"fail_on {args.fail_on}: passed; {line}\n")


def diff(args: argparse.Namespace) -> None:
    from mpiguide.reports.diff import NEW_VIOLATION, counts, diff_campaigns, write_diff

    result = diff_campaigns(args.results_a, args.results_b, args.mpi_a, args.mpi_b)
    names = (
        f"{args.results_a}" + (f" ({args.mpi_a})" if args.mpi_a else ""),
        f"{args.results_b}" + (f" ({args.mpi_b})" if args.mpi_b else ""),
    )
    text = write_diff(result, names, args.csv, args.md)
    if args.md is None:
        print(text, end="")
    new = counts(result)[NEW_VIOLATION]
    if args.fail_on == "new" and new:
        print(f"mpiguide: failing: --fail-on new: {new} new violations", file=sys.stderr)
        raise FailingVerdicts


COMMANDS = (
    Command("check", "test the selected guidelines on the run medians; write tests.csv and the"
            " tables made from it", check, (
        MEDIANS,
        CATALOGUE,
        GUIDELINES_JSON,
        ANALYSIS_JSON,
        OUTDIR,
        RUNS_JSON,
        FAIL_ON,
        Option("--exit-zero",
               "exit 0 whatever the verdicts; --fail-on then shapes junit.xml only (the"
               " workflow's analyse rule: its `fail_on` rule fails instead: the tables stay)",
               settings={"action": "store_true"}),
    )),
    Command(
        "plan-round",
        "adaptive campaigns: decide every test after a round, write what the next one measures",
        plan_round,
        (
            MEDIANS.but(help="the run medians of every run measured through the round"),
            CATALOGUE,
            GUIDELINES_JSON,
            ANALYSIS_JSON,
            RUNS_JSON.but(required=True),
            Option("--round", "the round just measured (zero-based)",
                   settings={"type": integer(0), "required": True}),
            Option("--entry", "an mpi entry of the campaign (repeat for each)",
                   settings={"type": name, "action": "append", "required": True,
                             "metavar": "NAME"}),
            Option("--blocking",
                   "blocking: run: every entry of a deployment measures the deployment's needs",
                   settings={"action": "store_true"}),
            OUT.but(help="the round's plan (JSON) to write"),
        ),
    ),
    Command(
        "gate",
        "exit 3 when tests.csv holds a verdict that --fail-on names (the workflow's `fail_on`)",
        gate,
        (
            TESTS.but(required=False, one_of=True),
            Option("--results",
                   "results/<campaign>/ (or its guidelines/): its tests.csv, e.g. in a CI job"
                   " after the campaign ran",
                   Role.READS_DIR, {"type": Path, "metavar": "DIR"}, one_of=True),
            FAIL_ON,
            OUT.but(help="written with the counts when the gate passes (default: none written)",
                    required=False),
        ),
    ),
    Command(
        "diff",
        "compare two campaigns' verdicts: new violations, fixed ones, ratios that moved beyond"
        " their confidence intervals, per guideline and group",
        diff,
        (
            Option("results_a", "results/<campaign>/ or its tests.csv", Role.READS,
                   {"type": Path, "metavar": "RESULTS_A"}),
            Option("results_b", "the same, compared with RESULTS_A", Role.READS,
                   {"type": Path, "metavar": "RESULTS_B"}),
            Option("--mpi-a", "take only this mpi entry's tests of A (default: all)",
                   settings={"metavar": "ENTRY"}),
            Option("--mpi-b", "take only this mpi entry's tests of B (default: all)",
                   settings={"metavar": "ENTRY"}),
            Option("--csv", "one row per test (default: none)", Role.WRITES,
                   {"type": Path, "metavar": "FILE"}),
            Option("--md", "the markdown tables (default: standard output)", Role.WRITES,
                   {"type": Path, "metavar": "FILE"}),
            FAIL_ON.but(help="exit 3 when B has a violation that A has not (default: never)",
                        choices=("never", "new")),
        ),
    ),
)  # fmt: skip
