"""The subcommands that report on the verdicts and the runs: figures (plots, run-to-run
variability, the slowdown overview: each alone, or all at once), model fits, the campaign page,
an adaptive campaign's cost, and Gropp 2018's partners."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mpiguide.cli.arguments import (
    ANALYSIS_JSON,
    CATALOGUE,
    DECIDED_WITH,
    GUIDELINES_JSON,
    MEDIANS,
    OUT,
    OUTDIR,
    RUNS_JSON,
    TESTS,
    TIMINGS,
    Command,
    Option,
    Role,
    existing_directory,
    existing_file,
    integer,
    parse_json,
)
from mpiguide.cli.decide import looks_of
from mpiguide.core.errors import MpiguideError
from mpiguide.core.package_data import MODEL_CATALOGUE
from mpiguide.core.paths import COST_FILES

if TYPE_CHECKING:
    from mpiguide.reports.plots import PlotOptions

# Processes drawing the figures: the analyse rule's threads (workflow/rules/analyse.smk).
PLOT_PROCESSES = 2
# What a figure pasted alone into a slide names first.
CAMPAIGN_NAME = Option("--campaign", "the campaign's name, for the figures' titles (default: none)",
                       settings={"metavar": "NAME"})  # fmt: skip
PLOTS_JSON = Option(
    "--plots-json",
    "the campaign's plots: {focus, max}, as JSON (default: {}, the schema's defaults)",
    settings={"default": "{}", "metavar": "JSON"},
)
SLOWDOWN = Option(
    "--slowdown",
    "slowdown.csv (written by `mpiguide check`)",
    Role.READS,
    {"type": existing_file, "required": True, "metavar": "CSV"},
)
PROCESSES = Option(
    "--processes",
    f"draw the figures in N processes (default: {PLOT_PROCESSES},"
    " as the workflow's analyse rule reserves)",
    settings={"type": integer(1), "default": PLOT_PROCESSES, "metavar": "N"},
)


def plot_options(args: argparse.Namespace) -> PlotOptions:
    from mpiguide.reports.plots import PlotOptions

    return PlotOptions.from_mapping(parse_json(args.plots_json, "--plots-json", dict),
                                    "--plots-json")  # fmt: skip


def plot(args: argparse.Namespace) -> None:
    from mpiguide.analysis.analysis_types import Decisions
    from mpiguide.reports.plots import plot

    decisions = Decisions.read(args.decided_with)
    plot(args.timings, args.tests, decisions, args.outdir, plot_options(args), args.campaign or "",
         args.processes)  # fmt: skip


def figures(args: argparse.Namespace) -> None:
    from mpiguide.analysis.analysis_types import Decisions
    from mpiguide.reports.figures import figures

    decisions = Decisions.read(args.decided_with)
    figures(args.timings, args.medians, args.tests, args.slowdown, decisions, plot_options(args),
            (args.plots, args.slowdown_png, args.variability), args.campaign or "",
            args.processes)  # fmt: skip


def fit(args: argparse.Namespace) -> None:
    from mpiguide.analysis.analysis_types import AnalysisOptions
    from mpiguide.campaign.config import validate_models_selection
    from mpiguide.reports.model_fit import fit

    selection = parse_json(args.models_json, "--models-json", list)
    validate_models_selection(selection, "--models-json")
    analysis = parse_json(args.analysis_json, "--analysis-json", dict)
    options = AnalysisOptions.from_mapping(analysis, "--analysis-json")
    fit(args.medians, args.models, selection, options, args.out, source="--models-json",
        campaign=args.campaign or "")  # fmt: skip


def variability(args: argparse.Namespace) -> None:
    from mpiguide.analysis.analysis_types import Decisions
    from mpiguide.reports.variability import variability

    options = Decisions.read(args.decided_with).options
    variability(args.medians, args.timings, args.tests, options, args.outdir, args.campaign or "")


def page(args: argparse.Namespace) -> None:
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.reports.page import PageSources, write_page
    from mpiguide.reports.versions import pairs_from_json

    selection = parse_json(args.guidelines_json, "--guidelines-json", list)
    guidelines = resolve(selection, load_catalogue(args.catalogue, selection), "--guidelines-json")
    sources = PageSources(
        campaign=args.campaign,
        tests_csv=args.tests,
        summary_csv=args.summary,
        verdict_lines_csv=args.verdict_lines,
        decided_with=args.decided_with,
        guidelines=guidelines,
        plots=args.plots,
        figures=args.figures or [],
        tables=args.tables or [],
        report=args.report,
        runs_csv=args.runs,
        oversubscribed={
            str(deployment): str(warning)
            for deployment, warning in parse_json(
                args.oversubscribed_json, "--oversubscribed-json", dict
            ).items()
        },
        analysis_doc=args.analysis_doc,
        versions=pairs_from_json(
            parse_json(args.versions_json, "--versions-json", list), "--versions-json"
        ),
    )
    write_page(sources, args.out)


def cost(args: argparse.Namespace) -> None:
    from mpiguide.reports.cost import write_cost

    looks = looks_of(args.runs_json)
    if looks is None or not looks.adaptive:
        raise MpiguideError(
            f"--runs-json {args.runs_json}: not a range of runs; no cost to compare"
        )
    write_cost(args.timings, args.tests, looks, args.outdir)


def slowdown_plot(args: argparse.Namespace) -> None:
    from mpiguide.analysis.analysis_types import Decisions
    from mpiguide.reports.slowdown_plot import overview_job

    job = overview_job(args.slowdown, args.tests, Decisions.read(args.decided_with),
                       args.campaign or "", args.out)  # fmt: skip
    job.draw(*job.args)


def partners(args: argparse.Namespace) -> None:
    from mpiguide.reports.partners import Grid, nodecart_note, parse_dims, partners_table

    dims = parse_dims(args.dims)
    grid = Grid(dims, (args.periodic,) * len(dims), args.node_size)
    note = nodecart_note(grid, bool(args.reorder))
    if note is not None:
        print(f"mpiguide: note: {note}", file=sys.stderr)
    partners_table(grid, bool(args.reorder), args.null_off).to_csv(sys.stdout, index=False)


# The reports of a campaign's verdicts and runs, in the order --help lists them.
CAMPAIGN_REPORTS = (
    Command("figures", "draw every figure of the verdicts and runs in one process: those of"
            " plot, slowdown-plot and variability, with variability's tables", figures, (
        TIMINGS,
        MEDIANS,
        TESTS,
        SLOWDOWN,
        DECIDED_WITH,
        PLOTS_JSON,
        CAMPAIGN_NAME,
        Option("--plots", "the directory to write plot's figures into", Role.WRITES_DIR,
               {"type": Path, "required": True, "metavar": "DIR"}),
        Option("--slowdown-png", "the slowdown overview's PNG file to write", Role.WRITES,
               {"type": Path, "required": True, "metavar": "PNG"}),
        Option("--variability", "the directory to write variability's tables and plots into",
               Role.WRITES_DIR, {"type": Path, "required": True, "metavar": "DIR"}),
        PROCESSES,
    )),
    Command("plot", "plot every group per guideline and deployment, the groups `plots` selects,"
            " and the overview heatmap", plot, (
        TIMINGS,
        TESTS,
        DECIDED_WITH,
        PLOTS_JSON,
        CAMPAIGN_NAME,
        OUTDIR,
        PROCESSES,
    )),
    Command("fit", "fit latency models to the run medians", fit, (
        MEDIANS,
        Option("--models", f"model catalogue (default: {MODEL_CATALOGUE})", Role.READS,
               {"type": existing_file, "default": MODEL_CATALOGUE, "metavar": "FILE"}),
        Option("--models-json", 'the campaign\'s models: [{"model": ID, "ops": [OP]}, ...]',
               settings={"required": True, "metavar": "JSON"}),
        ANALYSIS_JSON.but(help="the campaign's analysis: (model_tolerance) (default: {})",
                          required=False, default="{}"),
        OUT.but(help="the directory to write models.csv, residuals.csv and plots/ into",
                role=Role.WRITES_DIR, metavar="DIR"),
        CAMPAIGN_NAME,
    )),
    Command("variability", "run-to-run spread, slow runs, Figure 10 plots", variability, (
        MEDIANS,
        TIMINGS,
        TESTS,
        DECIDED_WITH,
        OUTDIR,
        CAMPAIGN_NAME,
    )),
    Command(
        "page",
        "write the campaign page: a line per guideline saying its verdict, what qualifies it,"
        " the options decided with, its tests, figures and tables, as one HTML file that reads"
        " from disk",
        page,
        (
            Option("--campaign", "the campaign's name", settings={"required": True,
                                                                  "metavar": "NAME"}),
            TESTS,
            Option("--summary", "summary.csv (written by `mpiguide check`)", Role.READS,
                   {"type": existing_file, "required": True, "metavar": "CSV"}),
            Option("--verdict-lines", "verdict_lines.csv (written by `mpiguide check`)",
                   Role.READS, {"type": existing_file, "required": True, "metavar": "CSV"}),
            DECIDED_WITH,
            CATALOGUE,
            GUIDELINES_JSON,
            Option("--plots", "the plots (written by `mpiguide plot`): every PNG below it, by"
                   " the guideline its name labels", Role.READS_DIR,
                   {"type": existing_directory, "metavar": "DIR"}),
            Option("--figures", "figures of the whole campaign (slowdown.png)", Role.READS,
                   {"type": existing_file, "nargs": "+", "metavar": "PNG"}),
            Option("--tables", "the tables to link to", Role.READS,
                   {"type": existing_file, "nargs": "+", "metavar": "FILE"}),
            Option("--report", "where `snakemake --report` writes Snakemake's report: the page"
                   " says whether it is there and older than tests.csv", Role.READS,
                   {"type": Path, "required": True, "metavar": "HTML"}),
            Option("--runs", "variability's runs.csv (written by `mpiguide variability`): the"
                   " page lists the runs it flags", Role.READS,
                   {"type": existing_file, "metavar": "CSV"}),
            Option("--oversubscribed-json", "the deployments with more ranks than this"
                   " machine's cores, each with its warning: mapping, as JSON (default: {}, none)",
                   settings={"default": "{}", "metavar": "JSON"}),
            Option("--versions-json", "the pairs of versions of one library whose verdicts the"
                   " page compares: [{library, older, newer}], older and newer mpi entries, as"
                   " JSON (default: [], none)", settings={"default": "[]", "metavar": "JSON"}),
            Option("--analysis-doc", "docs/analysis.md, which the page links to for the method"
                   " (named, not linked, where it is not there)", Role.READS,
                   {"type": Path, "metavar": "MD"}),
            OUT.but(help="the page to write (its links are relative to its directory)",
                    metavar="HTML"),
        ),
    ),
    Command(
        "cost",
        "write what an adaptive campaign spent against the same campaign at a fixed runs: max"
        " (cost.csv, campaign_cost.csv, cost.rst)",
        cost,
        (
            TIMINGS.but(metavar="PARQUET"),
            TESTS,
            RUNS_JSON.but(required=True),
            OUTDIR.but(role=Role.WRITES_INTO, files=COST_FILES),
        ),
    ),
)  # fmt: skip

# Overviews that stand apart from the campaign's reports, in the order --help lists them.
OVERVIEWS = (
    Command(
        "slowdown-plot",
        "severity overview of slowdown.csv: collectives by message size (Hunold 2023, Figure 3)",
        slowdown_plot,
        (
            SLOWDOWN,
            TESTS.but(help="tests.csv (written by `mpiguide check`): its guidelines, whose"
                      " options the footer states"),
            DECIDED_WITH,
            CAMPAIGN_NAME,
            OUT.but(help="the PNG file to write", metavar="PNG"),
        ),
    ),
    Command(
        "partners",
        "on-/off-node partners of cart and nodecart grids (Gropp 2018, Table 3), as CSV",
        partners,
        (
            Option("--dims", "e.g. 128,128", settings={"required": True, "metavar": "D1,D2,..."}),
            Option("--node-size", "ranks per node",
                   settings={"type": integer(1), "required": True, "metavar": "K"}),
            Option("--periodic", "every dimension periodic", settings={"action": "store_true"}),
            Option("--null-off",
                   "count a missing partner (MPI_PROC_NULL at a non-periodic border) off-node, as"
                   " Gropp 2018 counts (on + off = 2 ndim); default: not at all, as the kernel's"
                   " provenance",
                   settings={"action": "store_true"}),
            Option("--reorder", "reorder flag (default: 1)",
                   settings={"type": int, "choices": (0, 1), "default": 1}),
        ),
    ),
)  # fmt: skip
