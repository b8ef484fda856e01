"""Command line of mpiguide: the steps the Snakemake rules run, plus `validate` for users.

Every subcommand validates its arguments before any work; an MpiguideError is printed as
`mpiguide: error: <message>` and exits 2, as argparse does for bad flags. A file that cannot be
read or written (OSError) is printed as `mpiguide: error: <file>: <reason>` and exits 1. The
analysis modules are imported inside their subcommands, so `grid`, `inputs` and `validate` start
fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiguide.core.errors import MpiguideError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE, MODEL_CATALOGUE

if TYPE_CHECKING:
    from mpiguide.analysis.sequential import Looks

NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _integer(minimum: int) -> Callable[[str], int]:
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


def _name(text: str) -> str:
    if not NAME.fullmatch(text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"{text!r} is not a name (letters, digits, _ . -)")
    return text


def _existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


def _existing_directory(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"no such directory: {text}")
    return path


def _json(text: str, flag: str, kind: type[dict] | type[list]) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MpiguideError(f"{flag}: invalid JSON: {exc}") from None
    if not isinstance(value, kind):
        expected = "object" if kind is dict else "array"
        raise MpiguideError(f"{flag}: expected a JSON {expected}, got {text!r}")
    return value


def _refuse_overwriting(
    reads: Sequence[tuple[str, Path]],
    writes: Sequence[tuple[str, Path]],
    read_dirs: Sequence[tuple[str, Path]] = (),
    write_dirs: Sequence[tuple[str, Path]] = (),
) -> None:
    """Stops before any work when an output would replace an input, lie in a directory of
    inputs, or an output directory holds an input: `--timings` pointing at a raw CSV would
    destroy a measurement that took hours."""
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


def _raw_and_provenance(raw: Sequence[Path]) -> list[tuple[str, Path]]:
    return [("RAW.csv", path) for path in raw] + [
        ("RAW.json", path.with_suffix(".json")) for path in raw
    ]


def cmd_validate(args: argparse.Namespace) -> None:
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.campaign.config import load_campaign
    from mpiguide.campaign.summary import summarise

    config = load_campaign(args.config, args.catalogue, args.scale)
    print(f"{args.config}: ok")
    catalogue = load_catalogue(args.catalogue or GUIDELINE_CATALOGUE)
    summary = summarise(config, resolve(config["guidelines"], catalogue, str(args.config)))
    for line in summary.lines():
        print(f"  {line}")
    for warning in summary.warnings:
        print(f"mpiguide: warning: {args.config}: {warning}", file=sys.stderr)


def cmd_grid(args: argparse.Namespace) -> None:
    from mpiguide.campaign.config import validate_grid_spec
    from mpiguide.plan.grid import build_grid, write_grid

    _refuse_overwriting([], [("--out", args.out)])
    spec = _json(args.config_json, "--config-json", dict)
    validate_grid_spec(spec, "--config-json")
    write_grid(build_grid(spec, "--config-json"), args.out)


def cmd_inputs(args: argparse.Namespace) -> None:
    from mpiguide.plan.inputs import write_run_input

    _refuse_overwriting([("--grid", args.grid)], [("--out", args.out)])
    exp_ids = None
    if args.plan is not None:
        from mpiguide.analysis.rounds import planned_exp_ids, read_plan

        plan = read_plan(args.plan)
        exp_ids = planned_exp_ids(plan, args.mpi, args.nodes, args.ppn)
    write_run_input(
        args.grid, args.seed, args.mpi, args.nodes, args.ppn, args.run, args.out, exp_ids
    )


def cmd_aggregate(args: argparse.Namespace) -> None:
    from mpiguide.store.aggregate import aggregate

    _refuse_overwriting(
        [("--grid", args.grid), *_raw_and_provenance(args.raw)],
        [("--timings", args.timings), ("--medians", args.medians)],
        [("--raw-root", args.raw_root), ("--inputs-root", args.inputs_root)],
    )
    aggregate(
        args.grid,
        args.raw,
        args.raw_root,
        args.inputs_root,
        args.timings,
        args.medians,
        args.blocks_root,
    )


def cmd_check(args: argparse.Namespace) -> None:
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.analysis.guidelines import check

    _refuse_overwriting(
        [("--medians", args.medians), ("--catalogue", args.catalogue)],
        [],
        write_dirs=[("--outdir", args.outdir)],
    )
    selection = _json(args.guidelines_json, "--guidelines-json", list)
    analysis = _json(args.analysis_json, "--analysis-json", dict)
    catalogue = load_catalogue(args.catalogue)
    resolved = resolve(selection, catalogue, "--guidelines-json")
    looks = _looks(args.runs_json)
    tests = check(args.medians, resolved, analysis, args.outdir, "--analysis-json", looks)
    from mpiguide.analysis.analysis_types import AnalysisOptions
    from mpiguide.core.paths import JUNIT_XML
    from mpiguide.reports.junit import verdict_counts, write_junit

    varied = AnalysisOptions.from_mapping(analysis, "--analysis-json").varied
    texts = {guideline.id: guideline.text for guideline in resolved}
    write_junit(tests, texts, varied, args.fail_on, args.outdir / JUNIT_XML)
    if not args.exit_zero:
        _exit_on_failing_verdicts(verdict_counts(tests), args.fail_on)


def _looks(runs_json: str | None) -> Looks | None:
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


def cmd_plan_round(args: argparse.Namespace) -> None:
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.analysis.rounds import plan_round

    _refuse_overwriting(
        [("--medians", args.medians), ("--catalogue", args.catalogue)], [("--out", args.out)]
    )
    selection = _json(args.guidelines_json, "--guidelines-json", list)
    analysis = _json(args.analysis_json, "--analysis-json", dict)
    resolved = resolve(selection, load_catalogue(args.catalogue), "--guidelines-json")
    looks = _looks(args.runs_json)
    if looks is None or not looks.adaptive:
        raise MpiguideError(f"--runs-json {args.runs_json}: not a range of runs; nothing to plan")
    if args.round >= looks.count:
        raise MpiguideError(f"--round {args.round}: the runs plan {looks.count} rounds")
    plan = plan_round(
        args.medians, resolved, analysis, looks, args.round, args.entry, args.blocking,
        args.out, "--analysis-json",
    )  # fmt: skip
    stops = ", ".join(f"{count} {stop}" for stop, count in plan["stops"].items())
    first, stop = plan["next_runs"] or (0, 0)
    after = "done" if plan["done"] else f"next: runs {first}-{stop - 1}"
    print(f"mpiguide plan-round {args.round}: {plan['tests']} tests: {stops}; {after}")


class FailingVerdicts(Exception):
    """A `--fail-on` verdict was found: main() exits with FAILED_STATUS."""


def _exit_on_failing_verdicts(counts: dict[str, int], fail_on: str) -> None:
    from mpiguide.reports.junit import failing_verdicts, fails

    if fails(counts, fail_on):
        found = ", ".join(f"{counts[v]} {v}" for v in failing_verdicts(fail_on) if counts[v])
        print(f"mpiguide: failing: --fail-on {fail_on}: {found}", file=sys.stderr)
        raise FailingVerdicts


def cmd_gate(args: argparse.Namespace) -> None:
    from mpiguide.core.atomic import atomic_path
    from mpiguide.reports.junit import read_tests, verdict_counts

    _refuse_overwriting([("--tests", args.tests)], [("--out", args.out)])
    counts = verdict_counts(read_tests(args.tests))
    line = f"{sum(counts.values())} tests: " + ", ".join(f"{n} {v}" for v, n in counts.items())
    print(f"mpiguide gate: {line}")
    _exit_on_failing_verdicts(counts, args.fail_on)
    if args.out is not None:
        with atomic_path(args.out) as temporary:
            temporary.write_text(f"fail_on {args.fail_on}: passed; {line}\n")


def cmd_diff(args: argparse.Namespace) -> None:
    from mpiguide.reports.diff import NEW_VIOLATION, counts, diff_campaigns, write_diff

    sources = [("RESULTS_A", args.results_a), ("RESULTS_B", args.results_b)]
    _refuse_overwriting(sources, [(f, p) for f, p in (("--csv", args.csv), ("--md", args.md)) if p])
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


def cmd_plot(args: argparse.Namespace) -> None:
    from mpiguide.reports.plots import plot

    analysis = _json(args.analysis_json, "--analysis-json", dict)
    _refuse_overwriting(
        [("--timings", args.timings), ("--tests", args.tests)],
        [],
        write_dirs=[("--outdir", args.outdir)],
    )
    plot(args.timings, args.tests, analysis, args.outdir, source="--analysis-json")


def cmd_fit(args: argparse.Namespace) -> None:
    from mpiguide.campaign.config import validate_models_selection
    from mpiguide.reports.model_fit import fit

    selection = _json(args.models_json, "--models-json", list)
    validate_models_selection(selection, "--models-json")
    analysis = _json(args.analysis_json, "--analysis-json", dict)
    fit(args.medians, args.models, selection, analysis, args.out, source="--models-json")


def cmd_variability(args: argparse.Namespace) -> None:
    from mpiguide.reports.variability import variability

    analysis = _json(args.analysis_json, "--analysis-json", dict)
    variability(args.medians, args.timings, args.tests, analysis, args.outdir,
                source="--analysis-json")  # fmt: skip


def cmd_library_table(args: argparse.Namespace) -> None:
    from mpiguide.reports.library_table import write_library_table

    write_library_table(args.tests, args.varied, args.outdir)


def cmd_report_tables(args: argparse.Namespace) -> None:
    from mpiguide.reports.report_tables import write_report_tables

    write_report_tables(args.tests, args.decided_with, args.outdir)


def cmd_cost(args: argparse.Namespace) -> None:
    from mpiguide.reports.cost import write_cost

    looks = _looks(args.runs_json)
    if looks is None or not looks.adaptive:
        raise MpiguideError(
            f"--runs-json {args.runs_json}: not a range of runs; no cost to compare"
        )
    write_cost(args.timings, args.tests, looks, args.outdir)


def cmd_tune(args: argparse.Namespace) -> None:
    from mpiguide.campaign.config import load_campaign
    from mpiguide.tune.outputs import tune
    from mpiguide.tune.sweep import kernel_entry, settings_from_marks, settings_in

    entries = args.entries
    if args.settings_json is not None:
        settings = settings_from_marks(_json(args.settings_json, "--settings-json", dict))
    else:
        config = load_campaign(args.config, None, args.scale)
        settings = settings_in(config)
        if entries is None:
            entries = [name for name in config["mpi"] if kernel_entry(config, name) == name]
    tuned = tune(args.tests, args.decided_with, settings, args.outdir, entries)
    import pandas as pd

    from mpiguide.core.paths import ALGORITHMS_CSV, ALGORITHMS_PNG
    from mpiguide.tune.plot import plot_algorithms

    plot_algorithms(pd.read_csv(args.outdir / ALGORITHMS_CSV), args.outdir / ALGORITHMS_PNG)
    print(
        f"{args.outdir}: {len(tuned.algorithms)} tuned (entry, op, ranks, msg_size), "
        f"{len(tuned.mockups)} libmpiguide-tune rule(s)"
    )


def cmd_partners(args: argparse.Namespace) -> None:
    from mpiguide.reports.partners import Grid, nodecart_note, parse_dims, partners_table

    dims = parse_dims(args.dims)
    grid = Grid(dims, (args.periodic,) * len(dims), args.node_size)
    note = nodecart_note(grid, bool(args.reorder))
    if note is not None:
        print(f"mpiguide: note: {note}", file=sys.stderr)
    partners_table(grid, bool(args.reorder), args.null_off).to_csv(sys.stdout, index=False)


def cmd_slowdown_plot(args: argparse.Namespace) -> None:
    from mpiguide.analysis.slowdown import read_slowdown
    from mpiguide.reports.slowdown_plot import plot_overview

    plot_overview(read_slowdown(args.slowdown), args.out)


def cmd_run_block(args: argparse.Namespace) -> None:
    from mpiguide.campaign.blocks import main

    status = main(args.spec_json)
    if status:
        raise SystemExit(status)


def cmd_selftest(args: argparse.Namespace) -> None:
    from mpiguide.selftest.power import run

    run(args)


def _version() -> str:
    """The installed distribution's version: pyproject.toml owns it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mpiguide")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _fail_on_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--fail-on",
        choices=("never", "violated", "undecided"),
        default="never",
        help="exit 3 when a test is violated (violated), or violated or undecided (undecided);"
        " these tests are junit.xml's failures, other undecided ones skipped (default: never)",
    )


def _runs_option(sub: argparse.ArgumentParser, required: bool = False) -> None:
    sub.add_argument(
        "--runs-json",
        required=required,
        metavar="JSON",
        help="the campaign's `runs`: a range {min, max, step} decides every test at its looks"
        " (docs/analysis.md, Adaptive campaigns); default: one look at the runs measured",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpiguide", description="Verify self-consistent MPI performance guidelines."
    )
    parser.add_argument("--version", action="version", version=f"mpiguide {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Callable[[argparse.Namespace], None], text: str) -> Any:
        sub = commands.add_parser(name, help=text, description=text)
        sub.set_defaults(handler=handler)
        return sub

    sub = command("validate", cmd_validate, "check a campaign config (schema and semantics)")
    sub.add_argument("--config", type=Path, required=True, metavar="FILE")
    sub.add_argument(
        "--catalogue",
        type=Path,
        metavar="FILE",
        help=f"guideline catalogue (default: the package's, {GUIDELINE_CATALOGUE})",
    )
    sub.add_argument(
        "--scale",
        choices=("paper", "local"),
        help="check the campaign at this scale (default: the file's `scale:`, else paper)",
    )

    sub = command("grid", cmd_grid, "write grid.csv from the grid keys of a config")
    sub.add_argument(
        "--config-json", required=True, metavar="JSON", help='{"nrep": N, "experiments": [...]}'
    )
    sub.add_argument("--out", type=Path, required=True, metavar="FILE")

    sub = command("inputs", cmd_inputs, "write the shuffled kernel input of one run")
    sub.add_argument("--grid", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--seed", type=_integer(0), required=True)
    sub.add_argument("--mpi", type=_name, required=True, metavar="NAME")
    sub.add_argument("--nodes", type=_integer(1), required=True)
    sub.add_argument("--ppn", type=_integer(1), required=True)
    sub.add_argument("--run", type=_integer(0), required=True)
    sub.add_argument("--out", type=Path, required=True, metavar="FILE")
    sub.add_argument(
        "--plan",
        type=_existing_file,
        metavar="FILE",
        help="a round's plan (plan-round): only the experiments it has this run measure",
    )

    sub = command(
        "run-block",
        cmd_run_block,
        "launch one block: run NN of every mpi entry of a deployment, back to back",
    )
    sub.add_argument(
        "--spec-json",
        required=True,
        metavar="JSON",
        help="the block: seed, nodes, ppn, run, node_size, record and its entries"
        " (mpi, launcher, env, modules, kernel, input, output, log)",
    )

    sub = command("aggregate", cmd_aggregate, "join raw kernel outputs with the grid")
    sub.add_argument("--grid", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--raw-root", type=_existing_directory, required=True, metavar="DIR")
    sub.add_argument("--inputs-root", type=_existing_directory, required=True, metavar="DIR")
    sub.add_argument("--timings", type=Path, required=True, metavar="OUT")
    sub.add_argument("--medians", type=Path, required=True, metavar="OUT")
    sub.add_argument(
        "--blocks-root",
        type=Path,
        metavar="DIR",
        help="the block records (blocks/<nodes>x<ppn>/run<NN>.json) of blocked runs",
    )
    sub.add_argument("raw", type=_existing_file, nargs="+", metavar="RAW.csv")

    sub = command("check", cmd_check, "test the selected guidelines on the run medians")
    sub.add_argument("--medians", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--catalogue", type=_existing_file, default=GUIDELINE_CATALOGUE,
                     metavar="FILE",
                     help=f"guideline catalogue (default: {GUIDELINE_CATALOGUE})")  # fmt: skip
    sub.add_argument("--guidelines-json", required=True, metavar="JSON")
    sub.add_argument("--analysis-json", required=True, metavar="JSON")
    sub.add_argument("--outdir", type=Path, required=True, metavar="DIR")
    _runs_option(sub)
    _fail_on_option(sub)
    sub.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 whatever the verdicts; --fail-on then shapes junit.xml only (the workflow's"
        " check rule: its `gate` rule fails instead, so that the tables stay)",
    )

    sub = command(
        "plan-round",
        cmd_plan_round,
        "adaptive campaigns: decide every test after a round, write what the next one measures",
    )
    sub.add_argument("--medians", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--catalogue", type=_existing_file, default=GUIDELINE_CATALOGUE,
                     metavar="FILE",
                     help=f"guideline catalogue (default: {GUIDELINE_CATALOGUE})")  # fmt: skip
    sub.add_argument("--guidelines-json", required=True, metavar="JSON")
    sub.add_argument("--analysis-json", required=True, metavar="JSON")
    _runs_option(sub, required=True)
    sub.add_argument("--round", type=_integer(0), required=True,
                     help="the round just measured (zero-based)")  # fmt: skip
    sub.add_argument(
        "--entry", type=_name, action="append", required=True, metavar="NAME",
        help="an mpi entry of the campaign (repeat for each)",
    )  # fmt: skip
    sub.add_argument(
        "--blocking", action="store_true",
        help="blocking: run: every entry of a deployment measures the deployment's needs",
    )  # fmt: skip
    sub.add_argument("--out", type=Path, required=True, metavar="FILE")

    sub = command(
        "gate",
        cmd_gate,
        "exit 3 when tests.csv holds a verdict that --fail-on names (the workflow's `fail_on`)",
    )
    sub.add_argument("--tests", type=_existing_file, required=True, metavar="CSV")
    _fail_on_option(sub)
    sub.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="written with the counts when the gate passes (default: none written)",
    )

    sub = command(
        "diff",
        cmd_diff,
        "compare two campaigns' verdicts: new violations, fixed ones, ratios that moved beyond"
        " their confidence intervals, per guideline and group",
    )
    sub.add_argument(
        "results_a", type=Path, metavar="RESULTS_A", help="results/<campaign>/ or its tests.csv"
    )
    sub.add_argument(
        "results_b", type=Path, metavar="RESULTS_B", help="the same, compared with RESULTS_A"
    )
    sub.add_argument(
        "--mpi-a", metavar="ENTRY", help="take only this mpi entry's tests of A (default: all)"
    )
    sub.add_argument(
        "--mpi-b", metavar="ENTRY", help="take only this mpi entry's tests of B (default: all)"
    )
    sub.add_argument("--csv", type=Path, metavar="FILE", help="one row per test (default: none)")
    sub.add_argument(
        "--md", type=Path, metavar="FILE", help="the markdown tables (default: standard output)"
    )
    sub.add_argument(
        "--fail-on",
        choices=("never", "new"),
        default="never",
        help="exit 3 when B has a violation that A has not (default: never)",
    )

    sub = command("plot", cmd_plot, "plot violated groups and the overview heatmap")
    sub.add_argument("--timings", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--tests", type=_existing_file, required=True, metavar="CSV")
    sub.add_argument("--analysis-json", required=True, metavar="JSON")
    sub.add_argument("--outdir", type=Path, required=True, metavar="DIR")

    sub = command("fit", cmd_fit, "fit latency models to the run medians")
    sub.add_argument("--medians", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--models", type=_existing_file, default=MODEL_CATALOGUE, metavar="FILE",
                     help=f"model catalogue (default: {MODEL_CATALOGUE})")  # fmt: skip
    sub.add_argument("--models-json", required=True, metavar="JSON",
                     help='the campaign\'s models: [{"model": ID, "ops": [OP]}, ...]')  # fmt: skip
    sub.add_argument("--analysis-json", default="{}", metavar="JSON",
                     help="the campaign's analysis: (model_tolerance) (default: {})")  # fmt: skip
    sub.add_argument("--out", type=Path, required=True, metavar="DIR")

    sub = command("variability", cmd_variability, "run-to-run spread, slow runs, Figure 10 plots")
    sub.add_argument("--medians", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--timings", type=_existing_file, required=True, metavar="FILE")
    sub.add_argument("--tests", type=_existing_file, required=True, metavar="CSV")
    sub.add_argument("--analysis-json", required=True, metavar="JSON")
    sub.add_argument("--outdir", type=Path, required=True, metavar="DIR")

    sub = command(
        "library-table",
        cmd_library_table,
        "write Manwade & Kulkarni's Table 2 layout (guideline x mpi x size) from tests.csv",
    )
    sub.add_argument("--tests", type=_existing_file, required=True, metavar="CSV")
    sub.add_argument("--varied", required=True, metavar="PARAMETER")
    sub.add_argument("--outdir", type=Path, required=True, metavar="DIR")

    sub = command(
        "report-tables",
        cmd_report_tables,
        "write the report's verdict lines per guideline and the tests of violated and undecided"
        " groups from tests.csv",
    )
    sub.add_argument("--tests", type=_existing_file, required=True, metavar="CSV")
    sub.add_argument(
        "--decided-with",
        type=_existing_file,
        required=True,
        metavar="JSON",
        help="check's decided_with.json: the options the verdicts were decided with",
    )
    sub.add_argument("--outdir", type=Path, required=True, metavar="DIR")

    sub = command(
        "cost",
        cmd_cost,
        "write what an adaptive campaign spent against the same campaign at a fixed runs: max"
        " (cost.csv, campaign_cost.csv, cost.rst)",
    )
    sub.add_argument("--timings", type=_existing_file, required=True, metavar="PARQUET")
    sub.add_argument("--tests", type=_existing_file, required=True, metavar="CSV")
    _runs_option(sub, required=True)
    sub.add_argument("--outdir", type=Path, required=True, metavar="DIR")

    sub = command(
        "tune",
        cmd_tune,
        "from tests.csv, choose per collective, ranks and message size the fastest of the "
        "library's own algorithms, or of the mock-ups libmpiguide-tune runs, where it beats the "
        "collective significantly; write Figure 5's algorithms.csv and .png, an Open MPI rules "
        "file or MPICH cvars per swept entry, a libmpiguide-tune file per entry, and tuning.md",
    )
    sub.add_argument("--tests", type=_existing_file, required=True, metavar="CSV")
    sub.add_argument(
        "--decided-with",
        type=_existing_file,
        required=True,
        metavar="JSON",
        help="check's decided_with.json: the options the verdicts were decided with",
    )
    settings = sub.add_mutually_exclusive_group(required=True)
    settings.add_argument(
        "--config",
        type=_existing_file,
        metavar="FILE",
        help="the campaign: its entries' `algorithms:` are listed from the installed libraries",
    )
    settings.add_argument(
        "--settings-json",
        metavar="JSON",
        help="the added entries' settings as the workflow holds them (entry -> setting)",
    )
    sub.add_argument(
        "--scale", choices=("paper", "local"), default=None, help="as for validate (with --config)"
    )
    sub.add_argument(
        "--entries",
        nargs="*",
        metavar="ENTRY",
        help="the mpi entries that get a libmpiguide-tune file <entry>.tune (default: with "
        "--config its entries, else every entry of a mock-up test not added by a sweep)",
    )
    sub.add_argument("--outdir", type=Path, required=True, metavar="DIR")

    sub = command(
        "slowdown-plot",
        cmd_slowdown_plot,
        "severity overview of slowdown.csv: collectives by message size (Hunold 2023, Figure 3)",
    )
    sub.add_argument("--slowdown", type=_existing_file, required=True, metavar="CSV")
    sub.add_argument("--out", type=Path, required=True, metavar="PNG")

    sub = command(
        "partners",
        cmd_partners,
        "on-/off-node partners of cart and nodecart grids (Gropp 2018, Table 3), as CSV",
    )
    sub.add_argument("--dims", required=True, metavar="D1,D2,...", help="e.g. 128,128")
    sub.add_argument("--node-size", type=_integer(1), required=True, metavar="K")
    sub.add_argument("--periodic", action="store_true", help="every dimension periodic")
    sub.add_argument(
        "--null-off",
        action="store_true",
        help="count a missing partner (MPI_PROC_NULL at a non-periodic border) off-node, as "
        "Gropp 2018 counts (on + off = 2 ndim); default: not at all, as the kernel's provenance",
    )
    sub.add_argument(
        "--reorder", type=int, choices=(0, 1), default=1, help="reorder flag (default: 1)"
    )
    sub = command(
        "selftest",
        cmd_selftest,
        "false-positive and detection rates of a self-test campaign (docs/selftest.md)",
    )
    sub.add_argument(
        "--config-json",
        required=True,
        metavar="JSON",
        help="the campaign config, defaults filled in (the workflow's `config`)",
    )
    sub.add_argument("--medians", type=Path, required=True, metavar="PARQUET")
    sub.add_argument(
        "--run-logs",
        type=Path,
        required=True,
        metavar="DIR",
        help="logs/run of the campaign: <mpi>/<nodes>x<ppn>/run<NN>.log",
    )
    sub.add_argument("--csv", type=Path, required=True, metavar="FILE")
    sub.add_argument("--plot", type=Path, required=True, metavar="FILE")
    sub.add_argument(
        "--markdown",
        type=Path,
        required=True,
        metavar="FILE",
        help="the verdict shares as Markdown tables, as docs/selftest.md shows them",
    )
    sub.add_argument(
        "--resamples",
        type=int,
        metavar="N",
        help="draws of runs per run count (default: 100)",
    )
    _document(parser)
    return parser


# Help of the options that the rules pass (the same meaning in every subcommand unless the
# subcommand's own entry says otherwise); each is required, so there is no default to show.
OPTION_HELP = {
    "--config": "the campaign config file",
    "--out": "the file to write",
    "--outdir": "the directory to write the outputs into",
    "--grid": "grid.csv (written by `mpiguide grid`)",
    "--seed": "the campaign's seed",
    "--mpi": "the mpi entry of the run",
    "--nodes": "nodes of the run's deployment",
    "--ppn": "processes per node of the run's deployment",
    "--run": "the run's number (zero-based)",
    "--raw-root": "results/<campaign>/raw: the kernel outputs below <mpi>/<nodes>x<ppn>/",
    "--inputs-root": "results/<campaign>/inputs: the run inputs, mirroring --raw-root",
    "--timings": "timings.parquet (written by `mpiguide aggregate`)",
    "--medians": "medians.parquet (written by `mpiguide aggregate`)",
    "--guidelines-json": "the campaign's guidelines: list of ids or inline entries, as JSON",
    "--analysis-json": "the campaign's analysis: mapping, as JSON",
    "--tests": "tests.csv (written by `mpiguide check`)",
    "--varied": "the campaign's analysis.varied",
    "--slowdown": "slowdown.csv (written by `mpiguide check`)",
    "--node-size": "ranks per node",
    "--csv": "the CSV file to write",
    "--plot": "the PNG file to write",
    "raw": "the kernel outputs of every run (RAW.json beside each)",
}
COMMAND_OPTION_HELP = {
    ("aggregate", "--timings"): "timings.parquet to write",
    ("aggregate", "--medians"): "medians.parquet to write",
    ("grid", "--out"): "grid.csv to write",
    ("inputs", "--out"): "the run's kernel input (CSV) to write",
    ("fit", "--out"): "the directory to write models.csv, residuals.csv and plots/ into",
    ("slowdown-plot", "--out"): "the PNG file to write",
    ("selftest", "--medians"): "medians.parquet of the self-test campaign",
    ("plan-round", "--medians"): "the run medians of every run measured through the round",
    ("plan-round", "--out"): "the round's plan (JSON) to write",
}


def _document(parser: argparse.ArgumentParser) -> None:
    """Fills in the help of the options whose meaning OPTION_HELP holds."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for option in sub._actions:
                    if option.help or isinstance(option, argparse._HelpAction):
                        continue
                    flag = option.option_strings[0] if option.option_strings else option.dest
                    option.help = COMMAND_OPTION_HELP.get((name, flag), OPTION_HELP.get(flag))


def _report(message: str) -> None:
    """The error on stderr. A log on a full disk cannot take it: then the exit status alone
    tells (Snakemake names the rule and its log), never a second traceback about stderr."""
    with contextlib.suppress(OSError):
        print(f"mpiguide: error: {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except MpiguideError as exc:
        _report(str(exc))
        return 2
    except FailingVerdicts:
        from mpiguide.reports.junit import FAILED_STATUS

        return FAILED_STATUS
    except OSError as exc:  # e.g. an output directory that cannot be created or written
        where = f"{exc.filename}: " if exc.filename is not None else ""
        _report(f"{where}{exc.strerror or exc}")
        return 1
    try:
        sys.stdout.flush()  # e.g. `validate > FILE` on a full disk: an error, not a silent loss
    except OSError as exc:
        _report(f"<stdout>: {exc.strerror or exc}")
        # what could not be written stays buffered; the interpreter's last flush must not
        # fail again with a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
