"""The run layout below results/<campaign>/: `<tree>/<mpi>/<nodes>x<ppn>/run<NN>.<suffix>`.

One owner for how a deployment and a run are named in paths: the workflow's rules and input
functions (common.smk, plan.smk, run.smk), aggregation (which parses raw paths back) and the
self-test (which reads run logs) all go through here. Trees: `inputs` (shuffled kernel inputs),
`raw` (kernel output and provenance), `logs/run` and `logs/inputs` (the jobs' logs). Runs are
zero-based with at least two digits.
"""

from __future__ import annotations

import re

# A run's path below a tree's mpi entry, and below the tree, as Snakemake wildcard patterns.
DEPLOYMENT_RUN_PATTERN = "{nodes}x{ppn}/run{run}"
RUN_PATTERN = "{mpi}/" + DEPLOYMENT_RUN_PATTERN
# The same path parsed back: named groups mpi, nodes, ppn, run.
RUN_PATH = re.compile(r"^(?P<mpi>[^/]+)/(?P<nodes>[0-9]+)x(?P<ppn>[0-9]+)/run(?P<run>[0-9]{2,})$")


def deployment_name(nodes: int, ppn: int) -> str:
    """`<nodes>x<ppn>`: a deployment's directory."""
    return f"{nodes}x{ppn}"


def run_number(run: int) -> str:
    """The `{run}` of RUN_PATTERN: zero-based, at least two digits."""
    return f"{run:02d}"


def run_path(mpi: str, nodes: int, ppn: int, run: int) -> str:
    """`<mpi>/<nodes>x<ppn>/run<NN>`, below any tree; add the suffix."""
    return RUN_PATTERN.format(mpi=mpi, nodes=nodes, ppn=ppn, run=run_number(run))
