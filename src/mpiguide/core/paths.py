"""Names below results/<campaign>/: the trees, the run layout
`<tree>/<mpi>/<nodes>x<ppn>/run<NN>.<suffix>`, the files the rules write and the plots' names.

One owner for every path below results/<campaign>/: the workflow's rules and input functions,
the package (aggregation parses raw paths back, the self-test reads run logs, the raw guard moves
runs aside) and the benchmarks import them from here; tests/unit/test_results_paths_owner.py
finds a tree spelled anywhere else in src/ or workflow/. Trees: `inputs` (shuffled kernel
inputs), `raw` (kernel output and provenance), `blocks` (one record per block of launches:
`blocks/<nodes>x<ppn>/run<NN>.json`, with the finished launches of a failed block kept in
`run<NN>.stash/` beside it), `logs` (the jobs' logs: `logs/<rule>.log`, `logs/run`,
`logs/blocks`, `logs/inputs`, `logs/build`, ...), `build` (the kernel and libraries built per
entry), `rounds`, `guidelines`, `plots`, `models`, `variability`, `tuning`, `verify`, `options`,
`superseded` and `library_algorithms`. Runs are zero-based with at least two digits. Also the C
components' folders of a checkout and the sources whose change rebuilds one.
"""

from __future__ import annotations

import re
from pathlib import Path


def deployment_name(nodes: int | str, ppn: int | str) -> str:
    """`<nodes>x<ppn>`: a deployment's directory and label (from numbers, or from them as the
    text tables hold them)."""
    return f"{nodes}x{ppn}"


# A run's path below a tree's mpi entry, and below the tree, as Snakemake wildcard patterns.
DEPLOYMENT_RUN_PATTERN = deployment_name("{nodes}", "{ppn}") + "/run{run}"
RUN_PATTERN = "{mpi}/" + DEPLOYMENT_RUN_PATTERN
# The same path parsed back: named groups mpi, nodes, ppn, run.
RUN_PATH = re.compile(
    "^(?P<mpi>[^/]+)/"
    + deployment_name("(?P<nodes>[0-9]+)", "(?P<ppn>[0-9]+)")
    + "/run(?P<run>[0-9]{2,})$"
)


def run_number(run: int) -> str:
    """The `{run}` of RUN_PATTERN: zero-based, at least two digits."""
    return f"{run:02d}"


def run_path(mpi: str, nodes: int, ppn: int, run: int) -> str:
    """`<mpi>/<nodes>x<ppn>/run<NN>`, below any tree; add the suffix."""
    return RUN_PATTERN.format(mpi=mpi, nodes=nodes, ppn=ppn, run=run_number(run))


# The trees of runs, each `<mpi>/<nodes>x<ppn>/run<NN>.<suffix>`: the shuffled kernel inputs
# (.csv), the kernel's output and its provenance (.csv, .json), and the run jobs' logs (.log).
INPUTS_TREE = "inputs"
RAW_TREE = "raw"
# Every job's log: `logs/<rule>.log`, or below a folder named after the tree or job it is of
# (`logs/inputs/...`, `logs/blocks/...`, `logs/build/<entry>.log`, `logs/verify/...`).
LOGS_TREE = "logs"
RUN_LOGS_TREE = f"{LOGS_TREE}/run"


def run_file(results: str, tree: str, mpi: str, nodes: int, ppn: int, run: int, suffix: str) -> str:
    """`<results>/<tree>/<mpi>/<nodes>x<ppn>/run<NN>.<suffix>`: a run's file in a tree of runs
    (INPUTS_TREE, RAW_TREE, RUN_LOGS_TREE)."""
    return f"{results}/{tree}/{run_path(mpi, nodes, ppn, run)}.{suffix}"


def run_file_pattern(results: str, tree: str, suffix: str, mpi: str = "{mpi}") -> str:
    """run_file as a Snakemake pattern: wildcards nodes, ppn and run, and mpi unless given."""
    return f"{results}/{tree}/{mpi}/{DEPLOYMENT_RUN_PATTERN}.{suffix}"


def block_path(nodes: int, ppn: int, run: int) -> str:
    """`<nodes>x<ppn>/run<NN>`: a block below `blocks/` (the run-NN launches of every entry of
    one deployment); add the suffix."""
    return DEPLOYMENT_RUN_PATTERN.format(nodes=nodes, ppn=ppn, run=run_number(run))


# A block's record below results/<campaign>/, and where a failed block keeps its finished
# launches until the next attempt (`<stash>/<mpi>.csv`, `.json`, `.launch.json`).
BLOCKS_TREE = "blocks"
BLOCK_RECORD_SUFFIX = ".json"
BLOCK_STASH_SUFFIX = ".stash"


# An adaptive campaign's rounds below results/<campaign>/: round NN's run medians
# (`rounds/round<NN>/medians.parquet`, all runs measured through it) and its plan
# (`rounds/round<NN>.json`, written by `mpiguide plan-round`: what the next round measures).
ROUNDS_TREE = "rounds"
ROUND_PATTERN = "round{round}"


def round_number(number: int) -> str:
    """The `{round}` of ROUND_PATTERN: zero-based, at least two digits."""
    return f"{number:02d}"


def round_name(number: int) -> str:
    """`round<NN>`."""
    return ROUND_PATTERN.format(round=round_number(number))


# results/<campaign>/: the grid every run's input is planned from (`mpiguide grid`), and every
# repetition and run median of the raw runs (`mpiguide aggregate`; a round's below
# `rounds/round<NN>/`).
GRID_CSV = "grid.csv"
TIMINGS_PARQUET = "timings.parquet"
MEDIANS_PARQUET = "medians.parquet"
# results/<campaign>/: a self-test campaign's rates, their plot and tables (`mpiguide selftest`).
SELFTEST_CSV = "selftest.csv"
SELFTEST_PNG = "selftest.png"
SELFTEST_MD = "selftest.md"

# guidelines/: written by `mpiguide check` (guidelines.py, tables.py), read by later rules.
GUIDELINES_TREE = "guidelines"
TESTS_CSV = "tests.csv"
SUMMARY_CSV = "summary.csv"
SUMMARY_MD = "summary.md"
SLOWDOWN_CSV = "slowdown.csv"
# What check decided with: its analysis options, guidelines and verdict counts, written with the
# tables, so that a text about them never quotes options the tables were not computed with.
DECIDED_WITH_JSON = "decided_with.json"
# written by `mpiguide check` for an adaptive campaign: per guideline and look, the tests that
# stopped there (analysis/sequential.py)
LOOKS_CSV = "looks.csv"
# written by `mpiguide check` from the tests (reports/junit.py), for CI services
JUNIT_XML = "junit.xml"
GUIDELINE_FILES = (TESTS_CSV, SUMMARY_CSV, SUMMARY_MD, SLOWDOWN_CSV, DECIDED_WITH_JSON, JUNIT_XML)
# written by `mpiguide gate` when the campaign sets `fail_on`: the verdict counts that passed
GATE_TXT = "fail_on.txt"

# guidelines/: MPINPC's overview of the slowdowns (`mpiguide figures`, or `slowdown-plot`).
SLOWDOWN_PNG = "slowdown.png"
# guidelines/: written by `mpiguide check` (reports/report_tables.py) for the report:
# one line per guideline on its front page (.rst, and the same counts as a table), and the tests
# of every violated or undecided group.
VERDICT_LINES_CSV = "verdict_lines.csv"
VERDICT_LINES_RST = "verdict_lines.rst"
VIOLATED_UNDECIDED_CSV = "violated_undecided.csv"
REPORT_TABLE_FILES = (VERDICT_LINES_CSV, VERDICT_LINES_RST, VIOLATED_UNDECIDED_CSV)
# guidelines/: written by `mpiguide cost` (reports/cost.py) for an adaptive campaign: what it
# spent against the same campaign at a fixed `runs: max`, per guideline (the runs its tests
# used) and per entry and deployment (launches, kernel time), and the report's line about it.
COST_CSV = "cost.csv"
CAMPAIGN_COST_CSV = "campaign_cost.csv"
COST_RST = "cost.rst"
COST_FILES = (COST_CSV, CAMPAIGN_COST_CSV, COST_RST)
# guidelines/: written by `mpiguide check` (reports/library_table.py): Manwade &
# Kulkarni's Table 2 layout, long (.csv) and wide (.md).
LIBRARY_TABLE_CSV = "library_table.csv"
LIBRARY_TABLE_MD = "library_table.md"
LIBRARY_TABLE_FILES = (LIBRARY_TABLE_CSV, LIBRARY_TABLE_MD)

# plots/: `overview/<guideline>-group<NNNN>-<verdict>.png` and
# `focus/<guideline>-group<NNNN>-<verdict>.png` (for the groups the campaign's `plots.focus`
# selects), `forest/<mpi>/<nodes>x<ppn>/<guideline>.png` (every group of a guideline in one
# deployment; `all` for the deployment where the varied parameter is a process count; one
# `<guideline>/page<k>.png` per page where the groups are too many for one file) and
# `heatmap.png` (each part made safe for a file name).
PLOTS_TREE = "plots"
GROUP_PLOT_KINDS = ("overview", "focus")
FOREST = "forest"
FOREST_PAGE = "page"
ALL_DEPLOYMENTS = "all"
HEATMAP = "heatmap"
PLOT_SUFFIX = ".png"


def safe_name(*parts: object) -> str:
    """A file name of letters, digits, '_', '.', '-' only: the parts joined by '-'."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", "-".join(str(part) for part in parts))


def group_plot_name(guideline: str, group: int, verdict: str) -> str:
    """The file name of a group's overview or focus plot; the group's verdict is in the name so
    that a listing (and the report's labels) tell violated from undecided groups."""
    return safe_name(guideline, f"group{group:04d}", verdict) + PLOT_SUFFIX


def forest_plot_path(guideline: str, mpi: str, deployment: str, page: int | None = None) -> str:
    """`forest/<mpi>/<deployment>/<guideline>.png` below plots/: a guideline's groups in one
    deployment (`deployment_name(...)`, or ALL_DEPLOYMENTS); `.../<guideline>/page<k>.png`,
    k from 1, for page k of a forest too long for one file."""
    stem = f"{FOREST}/{safe_name(mpi)}/{safe_name(deployment)}/{safe_name(guideline)}"
    return stem + (PLOT_SUFFIX if page is None else f"/{FOREST_PAGE}{page}{PLOT_SUFFIX}")


def labels_of_plot(name: str) -> dict[str, str]:
    """Labels of a plot below plots/, its suffix removed (`overview/GL4-group0003-violated`,
    `forest/openmpi/1x2/GL4`, `forest/openmpi/1x2/GL4/page2`, `heatmap`): the guideline, the
    kind of plot (`forest page 2`), the deployment, the group and its verdict (`all` where the
    plot shows several)."""
    parts = name.split("/")
    if parts[0] == FOREST and len(parts) in (4, 5):
        _, mpi, deployment, guideline, *page = parts
        plot = f"{FOREST} {page[0].replace(FOREST_PAGE, 'page ')}" if page else FOREST
        return {"guideline": guideline, "plot": plot, "deployment": f"{mpi} {deployment}",
                "group": "all", "verdict": "all"}  # fmt: skip
    kind, _, stem = name.rpartition("/")
    if not kind:
        return {"guideline": "all", "plot": stem, "deployment": "all", "group": "all",
                "verdict": "all"}  # fmt: skip
    guideline, _, group_verdict = stem.rpartition("-group")
    group, _, verdict = group_verdict.partition("-")
    # the group's deployment is in its title: a name holds only guideline, group and verdict
    return {"guideline": guideline, "plot": kind, "deployment": "", "group": group,
            "verdict": verdict}  # fmt: skip


# models/ (`mpiguide fit`, reports/model_fit.py): the fitted coefficients, the residuals and a
# plot per model below `plots/`; variability/ (`mpiguide variability`, reports/variability.py):
# the spread per experiment, the runs, interference against the launch factor and plots/.
MODELS_TREE = "models"
MODELS_CSV = "models.csv"
RESIDUALS_CSV = "residuals.csv"
VARIABILITY_TREE = "variability"
SPREAD_CSV = "spread.csv"
RUNS_CSV = "runs.csv"
INTERFERENCE_CSV = "interference.csv"


# What each swept entry's library offers (`ompi_info`, `mpivars`), listed the first time the
# campaign is planned and read from here ever after (`library_algorithms/<entry>.json`): jobs,
# later invocations and analysis-only mode start no MPI program to learn it again.
LIBRARY_ALGORITHMS_TREE = "library_algorithms"


def library_listing_name(entry: str) -> str:
    """An entry's saved listing below LIBRARY_ALGORITHMS_TREE."""
    return f"{entry}.json"


# Every campaign's results are below results/<campaign>/ in the directory the workflow runs in.
RESULTS_ROOT = "results"


def campaign_results(campaign: str) -> str:
    """`results/<campaign>`, relative to the directory the workflow runs in."""
    return f"{RESULTS_ROOT}/{campaign}"


# results/<campaign>/options/<name>.json: the options a set of rules were last run with
# (campaign/options_record.py).
OPTIONS_TREE = "options"
# results/<campaign>/superseded/<UTC time>/: measured runs moved aside by `remeasure: true`
# (campaign/raw_guard.py).
SUPERSEDED_TREE = "superseded"
# results/<campaign>/build/<entry>/: the entry's kernel and, for the base of verify's tuned
# entry, libmpiguide-tune below `tune/` (the names their Makefiles give them); a build's log is
# `logs/build/<entry>.log`.
BUILD_TREE = "build"
KERNEL_BINARY = "mpiguide-bench"
TUNE_LIBRARY = "libmpiguide-tune.so"


def kernel_binary_file(results: str, entry: str) -> str:
    """An entry's kernel build below `results` (results/<campaign>)."""
    return f"{results}/{BUILD_TREE}/{entry}/{KERNEL_BINARY}"


def tune_library_file(results: str, entry: str) -> str:
    """libmpiguide-tune built with `entry`'s mpicc below `results` (results/<campaign>)."""
    return f"{results}/{BUILD_TREE}/{entry}/tune/{TUNE_LIBRARY}"


# results/<campaign>/: the campaign page (`mpiguide page`, reports/page.py), re-made with the
# tables and figures it shows, and where `snakemake --report` is told to write Snakemake's
# report, whose age against the tables the page states.
CAMPAIGN_PAGE = "index.html"
SNAKEMAKE_REPORT = "report.html"
# results/<campaign>/tuning/ (mpiguide tune): Figure 5's view of the library's algorithms, the
# tuning note, and per swept mpi entry the file its library reads.
TUNING_TREE = "tuning"
ALGORITHMS_CSV = "algorithms.csv"
ALGORITHMS_PNG = "algorithms.png"
TUNING_MD = "tuning.md"
# results/<campaign>-verify/verify/ (`verify: true`): per entry libmpiguide-tune tuned the
# before / after, `mpiguide diff` of the entry and <entry>.tuned, as <entry>.md and <entry>.csv.
VERIFY_TREE = "verify"
# results/<campaign>-verify/ (`mpiguide verify-report`): the algorithms `tune` chose, compared
# with the library's choice within one launch, and which comparison was across launches, why.
VERIFY_MD = "verify.md"
VERIFY_CSV = "verify.csv"


def ompi_rules_name(entry: str) -> str:
    """An Open MPI entry's dynamic rules file (coll_tuned_dynamic_rules_filename)."""
    return f"{entry}.ompi-rules.conf"


def mockup_tuning_name(entry: str) -> str:
    """An entry's tuning file for libmpiguide-tune (MPIGUIDE_TUNE): where a mock-up replaces a
    collective."""
    return f"{entry}.tune"


def mpich_env_name(entry: str) -> str:
    """An MPICH entry's cvar settings, one `NAME=value` per line."""
    return f"{entry}.mpich.env"


def intelmpi_env_name(entry: str) -> str:
    """An Intel MPI entry's I_MPI_ADJUST_<OP> settings, one `NAME="value"` per line."""
    return f"{entry}.intelmpi.env"


def mpich_selection_name(entry: str) -> str:
    """An MPICH entry's JSON collective selection (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)."""
    return f"{entry}.mpich-selection.json"


# The C components below src/ of a checkout, and the shared build code each one links.
C_SOURCE_PATTERNS = ("*.c", "*.h", "*.def", "*.mk", "Makefile")
C_COMMON = "common"


def c_component(checkout: str, component: str) -> str:
    """src/<component> of `checkout` (kernel, mockups, inject, tune, common)."""
    return str(Path(checkout, "src", component))


def c_sources(checkout: str, *components: str) -> list[str]:
    """Every file the build of `components` reads, src/common included: a change to any of
    them rebuilds it."""
    return sorted(
        str(path)
        for component in (*components, C_COMMON)
        for pattern in C_SOURCE_PATTERNS
        for path in Path(c_component(checkout, component)).rglob(pattern)
    )
