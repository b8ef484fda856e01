"""The operation table (data/operations.tsv, printed byte for byte by `mpiguide-bench --list-ops`).

It is the one source of truth for op names and for which parameters apply to an op; reading the
packaged copy lets the analysis run on a machine without a kernel build.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache

from mpiguide.core.errors import MpiguideError
from mpiguide.core.package_data import OPERATIONS_TABLE

TABLE = OPERATIONS_TABLE.name
COLUMNS = (
    "op",
    "family",
    "msg_size",
    "root",
    "work",
    "topology",
    "reduction",
    "counts",
    "node_vectors",
    "algorithm_of",
)
MSG_SIZE_KINDS = frozenset({"none", "per_neighbor", "per_process", "per_pair", "buffer"})
TOPOLOGY_NEEDS = frozenset({"required", "optional"})
FLAGS = {"0": False, "1": True}


@dataclass(frozen=True)
class Operation:
    """One row of the operation table."""

    name: str
    family: str
    msg_size: str  # what msg_size counts; "none": the op moves no data
    root: bool  # the `root` parameter applies
    work: bool  # nonblocking: the `work` parameter applies
    topology_required: bool  # needs topology != none
    reduction: bool
    counts: bool  # a v-operation: the `counts` parameter (per-process count pattern) applies
    # a node leader holds the per-process vectors of every rank of its node (OP_NODE_VECTORS):
    # one buffer holds node size x the op's blocks
    node_vectors: bool
    # the MPI collective the op's measured call is, whose library algorithms the `algorithm`
    # parameter chooses; "none" for an op that is not one call of a blocking collective
    algorithm_of: str

    @property
    def has_msg_size(self) -> bool:
        return self.msg_size != "none"


def _parse_row(row: dict[str, str], where: str) -> Operation:
    def choice(column: str, allowed: frozenset[str] | dict[str, bool]) -> str:
        value = row[column]
        if value not in allowed:
            raise MpiguideError(
                f"{where}: column '{column}': '{value}' is not one of {', '.join(sorted(allowed))}"
            )
        return value

    return Operation(
        name=row["op"],
        family=row["family"],  # the table's own grouping: any name the kernel gives
        msg_size=choice("msg_size", MSG_SIZE_KINDS),
        root=FLAGS[choice("root", FLAGS)],
        work=FLAGS[choice("work", FLAGS)],
        topology_required=choice("topology", TOPOLOGY_NEEDS) == "required",
        reduction=FLAGS[choice("reduction", FLAGS)],
        counts=FLAGS[choice("counts", FLAGS)],
        node_vectors=FLAGS[choice("node_vectors", FLAGS)],
        algorithm_of=row["algorithm_of"],
    )


@cache
def load_operations() -> dict[str, Operation]:
    """All operations of the kernel by name, in table order."""
    text = OPERATIONS_TABLE.read_text(encoding="utf-8")
    reader = csv.DictReader(text.splitlines(), delimiter="\t")
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise MpiguideError(f"{TABLE}: header must be {' '.join(COLUMNS)}")
    operations: dict[str, Operation] = {}
    for line, row in enumerate(reader, start=2):
        operation = _parse_row(row, f"{TABLE}:{line}")
        if operation.name in operations:
            raise MpiguideError(f"{TABLE}:{line}: duplicate op '{operation.name}'")
        operations[operation.name] = operation
    return operations
