"""Grid expansion: applicability, defaults, where, collapse, deterministic exp_id, errors."""

import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpiguide.core.errors import ConfigError
from mpiguide.plan.grid import COLUMNS, MAX_BLOCK_PRODUCT, build_grid, expand, write_grid
from mpiguide.plan.operations import load_operations

DESIGN_EXAMPLE = yaml.safe_load("""
nrep: 50
experiments:
  - op: [neighbor_allgather, neighbor_alltoall]
    topology: [cart, vonneumann, moore]
    ndim: [1, 2]
    nfin: [0, 1, 2]
    ordering: [FMAJ, LMAJ, RAND]
    constructor: [graph_adj]
    reorder: [0, 1]
    msg_size: [256, 1024, 4096]
    where: "nfin == 0 or nfin == ndim"
""")


def spec(*blocks: dict[str, Any], nrep: int = 5) -> dict[str, Any]:
    return {"nrep": nrep, "experiments": list(blocks)}


def test_design_example_block() -> None:
    rows = expand(DESIGN_EXAMPLE)
    # (ndim, nfin) after where: (1,0) (1,1) (2,0) (2,2); x 2 ops x 2 reorder x 3 sizes = 48
    per_topology = Counter(row["topology"] for row in rows)
    assert per_topology == {"cart": 48, "vonneumann": 144, "moore": 144}
    assert {(r["ndim"], r["nfin"]) for r in rows} == {(1, 0), (1, 1), (2, 0), (2, 2)}
    cart = [row for row in rows if row["topology"] == "cart"]
    # cart has no ordering; graph_adj is no cart constructor, so cart takes its default
    assert {(r["ordering"], r["constructor"], r["radius"]) for r in cart} == {(None, "cart", None)}
    stencil = [row for row in rows if row["topology"] != "cart"]
    assert {r["constructor"] for r in stencil} == {"graph_adj"}
    assert {r["radius"] for r in stencil} == {1}
    assert {(r["nrep"], r["dtype"], r["sync"], r["max_time"]) for r in rows} == {
        (50, "char", "dissemination", 0.0)
    }
    assert all(r["root"] is None and r["work"] is None for r in rows)
    assert [row["exp_id"] for row in rows] == list(range(336))
    # sorted by the parameters in column order, empty first: the first and last experiment
    assert rows[0] == {
        "exp_id": 0, "op": "neighbor_allgather", "msg_size": 256, "dtype": "char", "nrep": 50,
        "work": None, "topology": "cart", "ndim": 1, "nfin": 0, "radius": None,
        "ordering": None, "constructor": "cart", "reorder": 0, "root": None,
        "sync": "dissemination", "max_time": 0.0, "buffer_offset": 0, "counts": None,
        "interleave": 1, "warmup": 0, "algorithm": None,
    }  # fmt: skip
    last = [rows[-1][p] for p in ("op", "msg_size", "topology", "ndim", "nfin", "ordering")]
    assert last == ["neighbor_alltoall", 4096, "vonneumann", 2, 2, "RAND"]


def test_not_applicable_parameters_are_emptied_and_collapse() -> None:
    rows = expand(spec({
        "op": ["topo_create", "neighbor_alltoall"],
        "topology": ["cart", "moore"], "ndim": 2, "msg_size": [8, 64],
        "ordering": ["FMAJ", "RAND"],
    }))  # fmt: skip
    topo_create = [r for r in rows if r["op"] == "topo_create"]
    # msg_size and dtype do not apply to topo_create: 2 sizes collapse; cart has no ordering
    assert {(r["topology"], r["ordering"], r["msg_size"], r["dtype"]) for r in topo_create} == {
        ("cart", None, None, None), ("moore", "FMAJ", None, None), ("moore", "RAND", None, None),
    }  # fmt: skip
    assert len(topo_create) == 3
    assert len(rows) == 3 + 2 * 3


def test_duplicates_collapse_across_blocks_and_ids_ignore_block_order() -> None:
    first = {"op": "allgather", "msg_size": [8, 16]}
    second = {"op": ["allgather", "bcast"], "msg_size": [16, 32]}
    rows = expand(spec(first, second))
    assert len(rows) == 3 + 2
    assert expand(spec(second, first)) == rows
    assert expand(spec(first, second)) == rows


def test_values_that_suit_no_topology_drop_the_row_when_another_suits() -> None:
    rows = expand(spec({
        "op": "neighbor_alltoall", "msg_size": 8, "topology": ["cart", "moore"], "ndim": 2,
        "constructor": ["nodecart", "graph_adj"],
    }))  # fmt: skip
    assert {(r["topology"], r["constructor"]) for r in rows} == {
        ("cart", "nodecart"),
        ("moore", "graph_adj"),
    }


def test_ops_that_need_a_topology_skip_topology_none() -> None:
    rows = expand(spec({
        "op": ["allgather", "neighbor_allgather"], "topology": ["none", "full"], "msg_size": 8,
    }))  # fmt: skip
    assert {(r["op"], r["topology"]) for r in rows} == {
        ("allgather", "none"), ("allgather", "full"), ("neighbor_allgather", "full"),
    }  # fmt: skip
    full = next(r for r in rows if r["topology"] == "full")
    assert (full["ordering"], full["constructor"], full["ndim"]) == ("LINEAR", "graph_adj", None)


def test_block_values_override_top_level_nrep_and_floats_normalise() -> None:
    rows = expand(spec({"op": "bcast", "msg_size": 1024.0, "nrep": [7], "root": 1}, nrep=50))
    assert [(r["nrep"], r["msg_size"], r["root"]) for r in rows] == [(7, 1024, 1)]
    assert isinstance(rows[0]["msg_size"], int)


def test_where_sees_none_for_not_applicable_parameters() -> None:
    rows = expand(spec({
        "op": "neighbor_allgather", "msg_size": 8, "topology": ["cart", "full"], "ndim": [1, 2],
        "where": "ndim is None or ndim == 2",
    }))  # fmt: skip
    assert {(r["topology"], r["ndim"]) for r in rows} == {("cart", 2), ("full", None)}


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"op": ["allgather", "neigbor_alltoall"], "msg_size": 8},
         r"^c\.yaml: experiments\[0\]\.op\[1\]: unknown operation 'neigbor_alltoall' "
         r"\(did you mean 'neighbor_alltoall'\?\); allowed: "),
        ({"op": ["allgather", "neighbor_alltoall"], "msg_size": 8},
         r"experiments\[0\]\.op\[1\]: 'neighbor_alltoall' needs a topology \(cart, "),
        ({"op": "neighbor_alltoall", "msg_size": 8, "topology": "none"},
         r"experiments\[0\]\.op: 'neighbor_alltoall' suits no experiment .*needs a topology"),
        ({"op": "neighbor_alltoall", "msg_size": 8, "topology": "moore", "ndim": 1,
          "ordering": ["FMAJ", "LINEAR"]},
         r"experiments\[0\]\.ordering\[1\]: 'LINEAR' suits no experiment .*topology full"),
        ({"op": "allgather", "msg_size": 8, "ordering": "RAND"},
         r"experiments\[0\]\.ordering: applies to no experiment of this block"),
        ({"op": "barrier", "buffer_offset": 64},
         r"experiments\[0\]\.buffer_offset: applies to no experiment of this block "
         r"\(buffer_offset applies when the op moves data"),
        ({"op": "topo_create", "topology": "cart"},
         r"experiments\[0\]: 'ndim' is required for op topo_create on topology cart"),
        ({"op": "allgather"}, r"experiments\[0\]: 'msg_size' is required for op allgather"),
        ({"op": "topo_create", "topology": "cart", "ndim": 1, "nfin": 2},
         r"experiments\[0\]: nfin 2 exceeds ndim 1"),
        ({"op": "allgather", "msg_size": 12, "dtype": "double"},
         r"experiments\[0\]: msg_size 12 is not a multiple of the size of dtype double \(8"),
        ({"op": "allgather", "msg_size": [8, 16], "where": "msg_size > 16"},
         r"experiments\[0\]\.where: selects none of the block's 2 experiments"),
        ({"op": "allgather", "msg_size": list(range(1000)), "work": 0,
          "sync": ["barrier", "dissemination"], "max_time": list(range(101))},
         r"experiments\[0\]: expands to 202000 combinations"),
    ],
)  # fmt: skip
def test_errors_name_file_and_key(block: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        expand(spec(block), "c.yaml")


def test_broad_blocks_multiply_only_applicable_values() -> None:
    block = {
        "op": list(load_operations()), "topology": ["none", "cart", "vonneumann", "moore", "full"],
        "ndim": [1, 2], "radius": [1, 2], "ordering": ["FMAJ", "LMAJ", "RAND", "LINEAR"],
        "constructor": ["cart", "graph", "graph_adj"], "reorder": [0, 1], "msg_size": [8, 64],
        "dtype": "char", "work": [0, 10], "root": [0, 1],
        "sync": ["barrier", "dissemination"],
    }  # fmt: skip
    assert math.prod(len(values) for values in block.values()) > MAX_BLOCK_PRODUCT
    rows = expand(spec(block))
    assert len(rows) == len({tuple(row.values()) for row in rows})
    assert {row["op"] for row in rows} == set(load_operations())


def test_grid_csv_has_empty_cells_and_the_contract_column_order(tmp_path: Path) -> None:
    out = tmp_path / "grid.csv"
    write_grid(build_grid(spec({"op": ["bcast", "barrier"], "msg_size": 8, "max_time": 1.5})), out)
    assert out.read_text().splitlines() == [
        ",".join(COLUMNS),
        "0,barrier,,,5,,none,,,,,,,,dissemination,1.5,,,1,0,",
        "1,bcast,8,char,5,,none,,,,,,,0,dissemination,1.5,0,,1,0,",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["grid.csv"]  # no temporary left behind


def test_build_grid_types() -> None:
    grid = build_grid(DESIGN_EXAMPLE)
    assert list(grid.columns) == list(COLUMNS)
    assert str(grid["ndim"].dtype) == "Int64" and grid["root"].isna().all()


def test_buffer_offset_and_clock_synchronised_sync_expand_like_the_other_parameters() -> None:
    rows = expand(
        spec({"op": ["bcast", "barrier"], "msg_size": 8, "buffer_offset": [0, 64],
              "sync": ["dissemination", "hca3_roundtime", "jk_roundtime"]})
    )  # fmt: skip
    syncs = ["dissemination", "hca3_roundtime", "jk_roundtime"]
    assert sorted((r["op"], r["buffer_offset"], r["sync"]) for r in rows) == [
        *(("barrier", None, sync) for sync in syncs),
        *(("bcast", 0, sync) for sync in syncs),
        *(("bcast", 64, sync) for sync in syncs),
    ]


def test_warmup_applies_to_every_op_and_defaults_to_0() -> None:
    rows = expand(spec({"op": ["bcast", "barrier"], "msg_size": 8}))
    assert {r["warmup"] for r in rows} == {0}
    rows = expand(spec({"op": ["bcast", "barrier"], "msg_size": 8, "warmup": [0, 200]}))
    assert sorted((r["op"], r["warmup"]) for r in rows) == [
        ("barrier", 0), ("barrier", 200), ("bcast", 0), ("bcast", 200)
    ]  # fmt: skip


def test_counts_applies_to_v_operations_only_and_defaults_to_equal() -> None:
    rows = expand(spec({"op": ["gather", "gatherv", "reduce_scatter"], "msg_size": 8,
                        "counts": ["equal", "ramp"]}))  # fmt: skip
    pairs = sorted((r["op"], r["counts"]) for r in rows)
    assert pairs == [("gather", None), ("gatherv", "equal"), ("gatherv", "ramp"),
                     ("reduce_scatter", "equal"), ("reduce_scatter", "ramp")]  # fmt: skip
    assert expand(spec({"op": "allgatherv", "msg_size": 8}))[0]["counts"] == "equal"


def test_counts_on_no_v_operation_is_an_error() -> None:
    with pytest.raises(
        ConfigError,
        match=r"experiments\[0\]\.counts: applies to no experiment "
        r"of this block \(counts applies when the op is a v-operation",
    ):
        expand(spec({"op": ["gather", "alltoall_as_alltoallv"], "msg_size": 8, "counts": "ramp"}))


def test_algorithm_applies_to_the_ops_that_call_a_collective() -> None:
    """A blocking collective takes an algorithm (empty: the library's choice); a mock-up, whose
    calls are several, does not: its cell is empty, not applicable."""
    rows = expand(spec({"op": ["allreduce", "allreduce_as_reduce_bcast"], "msg_size": 8,
                        "algorithm": ["", "ring"]}))  # fmt: skip
    assert [(r["op"], r["algorithm"]) for r in rows] == [
        ("allreduce", ""), ("allreduce", "ring"), ("allreduce_as_reduce_bcast", None),
    ]  # fmt: skip
    with pytest.raises(ConfigError, match=r"experiments\[0\]\.algorithm: applies to no experiment"):
        expand(spec({"op": "allreduce_as_reduce_bcast", "msg_size": 8, "algorithm": "ring"}))
