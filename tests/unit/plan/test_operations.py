"""The packaged operation table: parsed completely, flags as the applicability rules need."""

import re

import pytest

from mpiguide.core.errors import MpiguideError
from mpiguide.plan.operations import _parse_row, load_operations


def test_every_op_has_a_kernel_name_and_table_order_is_kept() -> None:
    operations = load_operations()
    assert all(re.fullmatch(r"[a-z_]+", name) for name in operations)
    assert list(operations)[:2] == ["empty", "topo_create"]


def test_flags_match_the_kinds_of_operation() -> None:
    ops = load_operations()
    assert ops["neighbor_alltoall"].topology_required and not ops["neighbor_alltoall"].work
    assert ops["ineighbor_alltoall"].work
    assert ops["bcast"].root and ops["bcast"].msg_size == "buffer"
    assert not ops["topo_create"].has_msg_size
    assert ops["allreduce"].reduction and not ops["allgather"].reduction
    assert ops["gatherv"].counts and ops["reduce_scatter"].counts
    assert not ops["gather"].counts and not ops["alltoall_as_alltoallv"].counts
    assert ops["alltoall_as_hier"].node_vectors and not ops["alltoall_as_lane"].node_vectors


def test_a_bad_cell_names_the_line_and_column() -> None:
    row = dict(zip(
        ("op", "family", "msg_size", "root", "work", "topology", "reduction"),
        ("x", "neighbor", "per_neighbor", "2", "0", "required", "0"),
        strict=True,
    ))  # fmt: skip
    with pytest.raises(MpiguideError, match=r"operations.tsv:7: column 'root': '2' is not one of"):
        _parse_row(row, "operations.tsv:7")
