"""Names below results/<campaign>/: the run layout `<tree>/<mpi>/<nodes>x<ppn>/run<NN>.<suffix>`,
the files of guidelines/ and the plots' names.

One owner for how a deployment and a run are named in paths: the workflow's rules and input
functions (common.smk, plan.smk, run.smk), aggregation (which parses raw paths back) and the
self-test (which reads run logs) all go through here. Trees: `inputs` (shuffled kernel inputs),
`raw` (kernel output and provenance), `blocks` (one record per block of launches:
`blocks/<nodes>x<ppn>/run<NN>.json`, with the finished launches of a failed block kept in
`run<NN>.stash/` beside it), `logs/run`, `logs/blocks` and `logs/inputs` (the jobs' logs). Runs
are zero-based with at least two digits.
"""

from __future__ import annotations

import re


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


def block_path(nodes: int, ppn: int, run: int) -> str:
    """`<nodes>x<ppn>/run<NN>`: a block below `blocks/` (the run-NN launches of every entry of
    one deployment); add the suffix."""
    return DEPLOYMENT_RUN_PATTERN.format(nodes=nodes, ppn=ppn, run=run_number(run))


# A block's record below results/<campaign>/, and where a failed block keeps its finished
# launches until the next attempt (`<stash>/<mpi>.csv`, `.json`, `.launch.json`).
BLOCKS_TREE = "blocks"
BLOCK_RECORD_SUFFIX = ".json"
BLOCK_STASH_SUFFIX = ".stash"


# guidelines/: written by `mpiguide check` (guidelines.py, tables.py), read by later rules.
TESTS_CSV = "tests.csv"
SUMMARY_CSV = "summary.csv"
SUMMARY_MD = "summary.md"
SLOWDOWN_CSV = "slowdown.csv"
GUIDELINE_FILES = (TESTS_CSV, SUMMARY_CSV, SUMMARY_MD, SLOWDOWN_CSV)

# plots/: `overview/<guideline>-group<NNNN>.png`, `focus/<guideline>-group<NNNN>.png` and
# `heatmap.png` (`<guideline>` made safe for a file name).
GROUP_PLOT_KINDS = ("overview", "focus")
HEATMAP = "heatmap"
PLOT_SUFFIX = ".png"


def safe_name(*parts: object) -> str:
    """A file name of letters, digits, '_', '.', '-' only: the parts joined by '-'."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", "-".join(str(part) for part in parts))


def group_plot_name(guideline: str, group: int) -> str:
    """The file name of a group's overview or focus plot."""
    return safe_name(guideline, f"group{group:04d}") + PLOT_SUFFIX


def labels_of_plot(name: str) -> dict[str, str]:
    """Labels of a plot below plots/, its suffix removed (`overview/GL4-group0003`, `heatmap`):
    the guideline, the kind of plot and the group (`all` for the heatmap)."""
    kind, _, stem = name.rpartition("/")
    guideline, _, group = stem.rpartition("-group")
    if not kind:
        return {"guideline": "all", "plot": stem, "group": "all"}
    return {"guideline": guideline, "plot": kind, "group": group}
