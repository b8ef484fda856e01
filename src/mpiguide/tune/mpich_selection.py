"""MPICH 4.0's JSON collective-selection file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE): what
it must contain and how a cvar algorithm is named in it.

MPICH reads the file at MPI_Init in place of its built-in tree (src/mpi/coll/src/coll_impl.c),
and every collective whose cvar is `auto` looks its algorithm up there
(MPIR_<Op>_allcomm_auto, which asserts that the lookup found one): the file must hold a tree for
every collective, not only the tuned ones. So a written file is MPICH's own default tree with
the tuned collectives' branches replaced. That tree, `data/mpich-4.0.2-coll-selection.json`, is
MPICH v4.0.2's maint/tuning/coll/mpir/generic.json, the text compiled into the library
(identical to the string in Debian's libmpich.so.12.2.2; tests/kernel/test_tuning_rules.py
holds the two equal).

Sources of the tables below, all of MPICH v4.0.2: the keys and their meaning from
src/mpi/coll/src/csel.c (parse_json_tree, MPIR_Csel_search, get_avg_msgsize,
get_total_msgsize); the algorithm names from maint/gen_coll.py, which names the function a
container selects `MPIR_<Op>_<intra|allcomm>_<cvar value>` (allcomm for `nb` and for the
algorithms that src/mpi/coll/coll_algorithms.txt marks `allcomm: 1`), the names
src/mpi/coll/src/csel_container.c accepts (any other stops MPI_Init: "unrecognized key");
the restrictions from coll_algorithms.txt, which the cvar path checks before forcing an
algorithm and the JSON path does not, so the file checks them itself.
"""

from __future__ import annotations

import json
from typing import Any

from mpiguide.core.package_data import data_file

DEFAULT_TREE = data_file("mpich-4.0.2-coll-selection.json")
JSON_FILE_CVAR = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"
VERSION = "4.0.2"

# How MPICH measures a call's message size for the tree (csel.c), in terms of the kernel's
# msg_size (bytes, docs/kernel.md): avg_msg_size is count x datatype size, the whole buffer
# (alltoall: the per-destination block, the kernel's per-process msg_size); total_msg_size of
# allgather and reduce_scatter_block is the per-process block x ranks. The other collectives
# are left out: their total depends on count patterns (the v variants, reduce_scatter) or,
# for gather and scatter, MPICH 4.0.2 drops the datatype size from it.
SIZE_KEYS = {
    "allreduce": "avg_msg_size",
    "bcast": "avg_msg_size",
    "reduce": "avg_msg_size",
    "alltoall": "avg_msg_size",
    "allgather": "total_msg_size",
    "reduce_scatter_block": "total_msg_size",
}
_TIMES_RANKS = frozenset({"allgather", "reduce_scatter_block"})
# Collectives without a message size: one algorithm per communicator size.
SIZELESS = frozenset({"barrier"})
# coll_algorithms.txt: blocking algorithms named MPIR_<Op>_allcomm_<name>.
_ALLCOMM = frozenset({("gatherv", "linear"), ("scatterv", "linear"), ("*", "nb")})
# coll_algorithms.txt's restrictions of the blocking intra algorithms, as tree keys: (key the
# call must match, the key of every other call). size-ge-pof2 is `count<pow2` failing.
_PARENT = ("comm_hierarchy=parent", "comm_hierarchy=any")
_POW2 = ("comm_size=pow2", "comm_size=any")
_COMMUTATIVE = ("is_commutative=yes", "is_commutative=no")
_BUILTIN = ("is_op_built_in=yes", "is_op_built_in=no")
_NOT_INPLACE = ("is_sendbuf_inplace=no", "is_sendbuf_inplace=yes")
_INPLACE = ("is_sendbuf_inplace=yes", "is_sendbuf_inplace=no")
_COUNT_GE_POF2 = ("count<pow2", "count=any")  # reversed below: the algorithm is the failure path
_NODE_CONSECUTIVE = ("is_node_consecutive=yes", "is_node_consecutive=no")
RESTRICTIONS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("barrier", "smp"): (_PARENT,),
    ("bcast", "smp"): (_PARENT,),
    ("allgather", "recursive_doubling"): (_POW2,),
    ("allgatherv", "recursive_doubling"): (_POW2,),
    ("alltoall", "brucks"): (_NOT_INPLACE,),
    ("alltoall", "pairwise"): (_NOT_INPLACE,),
    ("alltoall", "pairwise_sendrecv_replace"): (_INPLACE,),
    ("alltoall", "scattered"): (_NOT_INPLACE,),
    ("reduce", "smp"): (_COMMUTATIVE, _PARENT),
    ("reduce", "reduce_scatter_gather"): (_COUNT_GE_POF2, _BUILTIN),
    ("allreduce", "smp"): (_COMMUTATIVE, _PARENT),
    ("allreduce", "reduce_scatter_allgather"): (_COUNT_GE_POF2, _BUILTIN),
    ("reduce_scatter", "pairwise"): (_COMMUTATIVE,),
    ("reduce_scatter", "recursive_halving"): (_COMMUTATIVE,),
    ("reduce_scatter_block", "noncommutative"): (_POW2,),
    ("reduce_scatter_block", "pairwise"): (_COMMUTATIVE,),
    ("reduce_scatter_block", "recursive_halving"): (_COMMUTATIVE,),
    ("scan", "smp"): (_COMMUTATIVE, _NODE_CONSECUTIVE),
}


def default_tree() -> dict[str, Any]:
    """MPICH 4.0.2's built-in selection tree."""
    tree: dict[str, Any] = json.loads(DEFAULT_TREE.read_text(encoding="utf-8"))
    return tree


def container_name(op: str, algorithm: str) -> str:
    """The function MPICH's tree names for the cvar value `algorithm` of collective `op`."""
    allcomm = (op, algorithm) in _ALLCOMM or ("*", algorithm) in _ALLCOMM
    return f"MPIR_{op.capitalize()}_{'allcomm' if allcomm else 'intra'}_{algorithm}"


def lookup_size(op: str, msg_size: int | None, ranks: int) -> int | None:
    """The size MPICH's tree compares for a measurement; None where the collective has none."""
    if msg_size is None or op not in SIZE_KEYS:
        return None
    return msg_size * ranks if op in _TIMES_RANKS else msg_size


def leaf(op: str, algorithm: str, default: Any) -> dict[str, Any]:
    """The branch that runs `algorithm` where its restrictions hold and `default` elsewhere."""
    node: dict[str, Any] = {f"algorithm={container_name(op, algorithm)}": {}}
    for guard in reversed(RESTRICTIONS.get((op, algorithm), ())):
        if guard is _COUNT_GE_POF2:
            node = {guard[0]: default, guard[1]: node}
        else:
            node = {guard[0]: node, guard[1]: default}
    return node
