"""The guideline catalogue (src/mpiguide/data/guidelines.yaml) as data: every entry parses with
the analysis package's loader, names existing operations and parameters with values they can
take, its selectors pair real experiments of a grid, and docs/guidelines.md lists it.

Run as a script to rewrite docs/guidelines.md from the catalogue:
    .venv/bin/python tests/unit/analysis/test_catalogue.py
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, SELECTABLE_KEYS, Guideline, Selector
from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.analysis.pairing import Experiments, Pairs, pair_comparison
from mpiguide.core.package_data import CONFIG_SCHEMA, GUIDELINE_CATALOGUE
from mpiguide.plan.grid import BY_TOPOLOGY, TOPOLOGIES, build_grid
from mpiguide.plan.grid import PARAMETERS as GRID_PARAMETERS
from mpiguide.plan.operations import load_operations

REPO = Path(__file__).resolve().parents[3]
CATALOGUE_PATH = GUIDELINE_CATALOGUE
DOCS_PATH = REPO / "docs" / "guidelines.md"

# Families of ids: Lübbe's GL1-GL12 (and GL11-*/GL12-* as the paper tests them), the others by
# paper or kind.
ID_PREFIXES = ("GL", "MONO", "TGT-", "MPINPC-", "MK-", "PARKER-", "GROPP-", "NBH-", "XLIB-",
               "BLOCKING-")  # fmt: skip
SIZES = (8, 64)
KEYS = [*DEPLOYMENT_KEYS, *GRID_PARAMETERS]


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects a mapping key given twice (plain YAML keeps the last silently)."""


def _mapping_without_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    keys = [loader.construct_object(key, deep=True) for key, _ in node.value]
    duplicates = sorted({str(k) for k in keys if keys.count(k) > 1})
    if duplicates:
        raise yaml.constructor.ConstructorError(
            None, None, f"duplicate key {duplicates[0]!r}", node.start_mark
        )
    return loader.construct_mapping(node, deep=True)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
)


@pytest.fixture(scope="module")
def catalogue() -> dict[str, Any]:
    return load_catalogue(CATALOGUE_PATH)


@pytest.fixture(scope="module")
def guidelines(catalogue: dict[str, Any]) -> list[Guideline]:
    return resolve(list(catalogue), catalogue, str(CATALOGUE_PATH))


def _selectors(guideline: Guideline) -> list[tuple[str, Selector]]:
    """(where, selector) of every side of every comparison."""
    if guideline.relation == "monotone":
        return [("select", guideline.comparisons[0].lhs)]
    return [
        (f"comparison {i} {side}", getattr(comparison, side))
        for i, comparison in enumerate(guideline.comparisons)
        for side in ("lhs", "rhs")
    ]


def _schema_values() -> dict[str, set[str]]:
    """Allowed values of the enumerated grid parameters, from the campaign config schema."""
    defs = yaml.safe_load(CONFIG_SCHEMA.read_text())["$defs"]
    return {
        name: {str(value) for value in defs[name]["enum"]}
        for name in ("dtype", "topology", "ordering", "constructor", "sync")
    } | {"reorder": {"0", "1"}}


# --- the file itself ---------------------------------------------------------------------------


def test_catalogue_file_has_no_duplicate_ids() -> None:
    # A second entry under an existing id would silently replace the first.
    yaml.load(CATALOGUE_PATH.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)


def test_every_entry_parses_and_resolves(catalogue: dict[str, Any], guidelines) -> None:
    assert [g.id for g in guidelines] == list(catalogue)
    for guideline in guidelines:
        assert guideline.source.strip(), guideline.id
        assert guideline.text.strip(), guideline.id
        assert guideline.comparisons, guideline.id


def test_ids_belong_to_a_known_family(catalogue: dict[str, Any]) -> None:
    unknown = [gid for gid in catalogue if not gid.startswith(ID_PREFIXES)]
    assert not unknown, f"ids outside the families {ID_PREFIXES}: {unknown}"


def test_neighbourhood_paper_guidelines_are_kept(catalogue: dict[str, Any]) -> None:
    assert {f"GL{n}" for n in range(1, 13)} <= set(catalogue)


def test_lubbe_entries_cite_their_guideline(catalogue: dict[str, Any]) -> None:
    """Each GL entry cites "Lübbe 2017, GLn" for its own n; none of the Lübbe, blocking,
    TGT, NBH, XLIB or MONO entries rests on a reconstruction or an issue instead of a paper."""
    own = ("GL", "BLOCKING-", "TGT-", "NBH-", "XLIB-", "MONO")
    for guideline_id, entry in catalogue.items():
        if guideline_id.startswith(own):
            assert not re.search(r"reconstructed|issue \d", entry["source"]), guideline_id
        match = re.fullmatch(r"GL(\d+)(-.*)?", guideline_id)
        if match:
            assert f"Lübbe 2017, GL{match[1]} " in entry["source"], guideline_id


def test_lubbe_constructor_and_collective_guidelines(guidelines: list[Guideline]) -> None:
    """GL1-GL3 compare the constructors (topo_create on both sides); GL4-GL12 compare
    communication operations, never topo_create; the directions are the paper's."""
    by_id = {g.id: g for g in guidelines}
    for n in range(1, 4):
        for comparison in by_id[f"GL{n}"].comparisons:
            assert comparison.lhs["op"] == comparison.rhs["op"] == ("topo_create",)
    lubbe = [g for g in guidelines if re.fullmatch(r"GL([4-9]|1[0-2])(-.*)?", g.id)]
    for guideline in lubbe:
        for comparison in guideline.comparisons:
            for side in (comparison.lhs, comparison.rhs):
                assert "op" in side and "topo_create" not in side["op"], guideline.id
    assert by_id["GL3"].comparisons[0].lhs["reorder"] == ("0",)
    assert by_id["GL12"].comparisons[0].lhs["reorder"] == ("1",)
    assert [c.lhs["op"] for c in by_id["GL6"].comparisons] == [
        ("neighbor_alltoall",),
        ("neighbor_alltoallv",),
    ]


def test_lubbe_constructor_guidelines_pair_topo_create(guidelines: list[Guideline]) -> None:
    """GL1: Cart_create with the von Neumann r = 1 graph (FMAJ) of the same ndim, nfin,
    reorder; GL2: adjacent with Dist_graph_create of the same neighbourhood; GL3: reorder 0
    with 1 of the same constructor. Nothing but topo_create is paired."""
    block = {"topology": ["cart", "vonneumann", "moore"], "ndim": [1, 2], "nfin": [0, 1],
             "ordering": ["FMAJ", "RAND"], "reorder": [0, 1],
             "constructor": ["cart", "graph", "graph_adj"]}  # fmt: skip
    experiments = _experiments(
        [{"op": ["topo_create"], **block}, {"op": ["neighbor_alltoall"], "msg_size": [8], **block}],
        ["openmpi"],
    )
    by_id = {g.id: g for g in guidelines}
    differing = {"GL1": {"topology", "radius", "ordering", "constructor"},
                 "GL2": {"constructor"}, "GL3": {"reorder"}}  # fmt: skip
    for guideline_id, allowed in differing.items():
        (comparison,) = by_id[guideline_id].comparisons
        pairs = pair_comparison(experiments, comparison.lhs, comparison.rhs)
        lhs, rhs = _frame(experiments, pairs[0]), _frame(experiments, pairs[1])
        assert len(pairs[0]) and set(lhs["op"]) == set(rhs["op"]) == {"topo_create"}
        differ = {key for key in GRID_PARAMETERS if (lhs[key] != rhs[key]).any()}
        assert differ <= allowed, (guideline_id, differ)
    # GL1: one test per Cartesian experiment (2 ndim x 2 nfin x 2 reorder)
    (gl1,) = by_id["GL1"].comparisons
    assert len(pair_comparison(experiments, gl1.lhs, gl1.rhs)[0]) == 8


def test_lubbe_entries_pair_like_with_like(guidelines: list[Guideline]) -> None:
    """On a grid holding topo_create and every neighbourhood collective on every graph
    topology, ordering, constructor and reorder flag, an entry whose both sides list the same
    operations pairs each operation with itself, and no GL4-GL12 entry pairs topo_create."""
    neighbour_ops = ["neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
                     "neighbor_alltoallv", "neighbor_alltoallw"]  # fmt: skip
    block = {"topology": ["cart", "vonneumann", "full"], "ndim": [2],
             "ordering": ["FMAJ", "LMAJ", "LINEAR", "RAND"], "reorder": [0, 1],
             "constructor": ["cart", "graph", "graph_adj"]}  # fmt: skip
    experiments = _experiments(
        [{"op": neighbour_ops, "msg_size": [8], **block}, {"op": ["topo_create"], **block}],
        ["openmpi"],
    )
    lubbe = [g for g in guidelines if re.fullmatch(r"GL([4-9]|1[0-2])(-.*)?", g.id)]
    for guideline in lubbe:
        for comparison in guideline.comparisons:
            pairs = pair_comparison(experiments, comparison.lhs, comparison.rhs)
            lhs = experiments.strings("op")[pairs[0]]
            rhs = experiments.strings("op")[pairs[1]]
            assert "topo_create" not in {*lhs, *rhs}, guideline.id
            if comparison.lhs["op"] == comparison.rhs["op"]:
                assert len(pairs[0]) and (lhs == rhs).all(), guideline.id


def test_contradicting_claims_are_both_recorded(guidelines: list[Guideline]) -> None:
    """Träff et al.: Allgather ≼ Gather + Bcast; Manwade & Kulkarni: the opposite. Both stay,
    each with its source: the catalogue records claims."""
    by_id = {g.id: g for g in guidelines}
    tgt, mk = by_id["TGT-ALLGATHER-AS-GATHER-BCAST"], by_id["MK-T1-R04"]
    assert tgt.comparisons[0].lhs == mk.comparisons[0].rhs == {"op": ("allgather",)}
    assert tgt.comparisons[0].rhs == mk.comparisons[0].lhs == {"op": ("allgather_as_gather_bcast",)}
    assert "Träff" in tgt.source and "Manwade" in mk.source


MK_EQUATIONS = range(3, 8)
MK_TABLE1_ROWS = range(1, 18)
MK_APPROX_ROWS = {12, 13}  # written with ≈ in their Table 2 and case studies 3 and 4


def test_manwade_kulkarni_is_complete_and_cited_by_line(guidelines: list[Guideline]) -> None:
    by_id = {g.id: g for g in guidelines if g.id.startswith("MK-")}
    expected = {f"MK-EQ{n}": f"Manwade & Kulkarni 2018, eq. {n} " for n in MK_EQUATIONS} | {
        f"MK-T1-R{n:02d}": f"Manwade & Kulkarni 2018, Table 1, row {n} " for n in MK_TABLE1_ROWS
    }
    assert set(by_id) == set(expected)
    for gid, citation in expected.items():
        assert by_id[gid].source.startswith(citation), gid
    approx = {int(gid[-2:]) for gid, g in by_id.items() if g.relation == "approx"}
    assert approx == MK_APPROX_ROWS
    assert by_id["MK-EQ3"].comparisons[0].lhs == {"op": ("isend_wait",)}  # printed direction
    starred = {gid for gid, g in by_id.items() for c in g.comparisons if "counts" in c.rhs}
    assert starred == {"MK-T1-R08", "MK-T1-R14", "MK-T1-R15", "MK-T1-R16", "MK-T1-R17"}


def test_every_mockup_operation_has_a_guideline(guidelines: list[Guideline]) -> None:
    """Each `<op>_as_<how>` of the operation table appears on the rhs of an `le` entry whose
    lhs is <op> (or a hierarchical/lane variant of it)."""
    compared = {
        (comparison.lhs.get("op", ("",))[0], rhs_op)
        for g in guidelines
        if g.relation == "le"
        for comparison in g.comparisons
        for rhs_op in comparison.rhs.get("op", ())
    }
    mockups = [name for name in load_operations() if "_as_" in name]
    missing = [m for m in mockups if (m.split("_as_")[0], m) not in compared]
    assert not missing, f"mock-ups without an 'op ≼ op_as_…' guideline: {missing}"


# --- selectors name existing operations, parameters and values --------------------------------


def test_selectors_name_existing_parameters(guidelines: list[Guideline]) -> None:
    for guideline in guidelines:
        for where, selector in _selectors(guideline):
            unknown = set(selector) - set(SELECTABLE_KEYS)
            assert not unknown, f"{guideline.id} {where}: not parameters: {unknown}"


def test_selectors_name_existing_operations(guidelines: list[Guideline]) -> None:
    operations = load_operations()
    missing = sorted(
        {
            f"{guideline.id}: {op}"
            for guideline in guidelines
            for _, selector in _selectors(guideline)
            for op in selector.get("op", ())
            if op not in operations
        }
    )
    assert not missing, f"operations not in src/mpiguide/data/operations.tsv: {missing}"


def test_selector_values_are_allowed(guidelines: list[Guideline]) -> None:
    allowed = _schema_values()
    for guideline in guidelines:
        for where, selector in _selectors(guideline):
            for key, values in selector.items():
                if key in allowed:
                    bad = set(values) - allowed[key]
                    assert not bad, f"{guideline.id} {where}.{key}: {bad} not in {allowed[key]}"
                elif key in ("msg_size", "nrep", "work", "ndim", "nfin", "radius", "root"):
                    assert all(v.isdigit() for v in values), f"{guideline.id} {where}.{key}"


def test_selector_parameters_apply_to_the_selected_operations(guidelines) -> None:
    """A selector fixing a parameter that never applies to its op(s) could match nothing."""
    operations = load_operations()
    for guideline in guidelines:
        for where, selector in _selectors(guideline):
            for name in selector.get("op", ()):
                op = operations.get(name)
                if op is None:
                    continue  # reported by test_selectors_name_existing_operations
                checks = {"msg_size": op.has_msg_size, "dtype": op.has_msg_size,
                          "root": op.root, "work": op.work}  # fmt: skip
                for key, applies in checks.items():
                    assert applies or key not in selector, (
                        f"{guideline.id} {where}: {key} does not apply to op {name}"
                    )
                topologies = selector.get("topology", TOPOLOGIES)
                assert not (op.topology_required and set(topologies) == {"none"}), (
                    f"{guideline.id} {where}: op {name} needs a topology"
                )
            for key in BY_TOPOLOGY:  # ordering / constructor must suit a selected topology
                if key in selector and "topology" in selector:
                    suited = {
                        value
                        for topology in selector["topology"]
                        for value in BY_TOPOLOGY[key].get(topology, ())
                    }
                    assert set(selector[key]) <= suited, (
                        f"{guideline.id} {where}: {key} {selector[key]} never suits "
                        f"topology {selector['topology']}"
                    )


def test_le_and_approx_sides_differ(guidelines: list[Guideline]) -> None:
    for guideline in guidelines:
        if guideline.relation != "monotone":
            for i, comparison in enumerate(guideline.comparisons):
                assert comparison.lhs != comparison.rhs, f"{guideline.id} comparison {i}"


# --- selectors pair experiments of a real grid -------------------------------------------------


def _block(selector: Selector) -> dict[str, Any]:
    """A minimal experiments block matching `selector` (its op must be fixed)."""
    operations = load_operations()
    block: dict[str, Any] = {
        key: [int(v) if v.isdigit() else v for v in values]
        for key, values in selector.items()
        if key in GRID_PARAMETERS
    }
    ops = [operations[name] for name in block["op"]]
    if any(op.has_msg_size for op in ops) and "msg_size" not in block:
        block["msg_size"] = list(SIZES)
    if any(op.topology_required for op in ops) and "topology" not in block:
        block["topology"] = ["cart"]
    if set(block.get("topology", [])) & {"cart", "vonneumann", "moore"} and "ndim" not in block:
        block["ndim"] = [2]
    return block


def _experiments(blocks: list[dict[str, Any]], mpis: list[str]) -> Experiments:
    """Grid rows of the blocks, once per MPI library."""
    grid = build_grid({"nrep": 5, "experiments": blocks}, "test")
    frames = [grid.assign(mpi=mpi, nodes=1, ppn=4) for mpi in mpis]
    return Experiments.from_frame(pd.concat(frames, ignore_index=True), KEYS)


def _frame(experiments: Experiments, rows: np.ndarray) -> pd.DataFrame:
    """The experiments of `rows` as canonical strings, a row each."""
    return pd.DataFrame({key: experiments.strings(key)[rows] for key in experiments.keys})


def _pairs(guideline: Guideline, index: int) -> tuple[Experiments, Pairs]:
    comparison = guideline.comparisons[index]
    mpis = sorted({*comparison.lhs.get("mpi", ()), *comparison.rhs.get("mpi", ())}) or ["openmpi"]
    if "op" in comparison.lhs and "op" in comparison.rhs:
        blocks = [_block(comparison.lhs), _block(comparison.rhs)]
    else:  # a selector on the library or deployment only: any operation will do
        blocks = [{"op": ["allgather", "bcast"], "msg_size": list(SIZES)}]
    experiments = _experiments(blocks, mpis)
    return experiments, pair_comparison(experiments, comparison.lhs, comparison.rhs)


def _comparisons_to_pair() -> list[tuple[str, int]]:
    """(guideline id, comparison index) of every le/approx comparison outside Lübbe's GL*
    whose operations exist. GL* and MONO are left out: they select on topology, ordering or
    reorder, which `_block` does not build; test_lubbe_entries_pair_like_with_like and the
    published campaigns (tests/unit/analysis/test_paper_tables.py) check them."""
    catalogue = load_catalogue(CATALOGUE_PATH)
    operations = load_operations()
    cases = []
    for guideline in resolve(list(catalogue), catalogue, "catalogue"):
        if guideline.relation == "monotone" or guideline.id.startswith(("GL", "MONO")):
            continue
        for index, comparison in enumerate(guideline.comparisons):
            ops = {*comparison.lhs.get("op", ()), *comparison.rhs.get("op", ())}
            if ops <= set(operations):
                cases.append((guideline.id, index))
    return cases


@pytest.mark.parametrize(("guideline_id", "index"), _comparisons_to_pair())
def test_comparison_pairs_experiments_of_a_grid(guidelines, guideline_id: str, index: int) -> None:
    """On a grid holding what both selectors ask for, the comparison yields tests, and every
    test pairs an lhs experiment with an rhs experiment agreeing on all free parameters."""
    guideline = next(g for g in guidelines if g.id == guideline_id)
    comparison = guideline.comparisons[index]
    experiments, pairs = _pairs(guideline, index)
    assert len(pairs[0]) > 0, f"{guideline_id} comparison {index} pairs nothing"
    lhs, rhs = _frame(experiments, pairs[0]), _frame(experiments, pairs[1])
    for key in ("msg_size", "mpi", "nodes", "ppn", "ndim", "topology"):
        if key in comparison.lhs or key in comparison.rhs:
            continue
        both = (lhs[key] != "") & (rhs[key] != "")
        assert (lhs[key][both] == rhs[key][both]).all(), f"{guideline_id}: {key} differs"


def test_rooted_and_unrooted_operations_pair_by_wildcard() -> None:
    """gather (root 0) ≼ allgather (no root): not-applicable root matches, one test per size."""
    catalogue = load_catalogue(CATALOGUE_PATH)
    (guideline,) = resolve(["PARKER-GATHER-ALLGATHER"], catalogue, "catalogue")
    experiments, pairs = _pairs(guideline, 0)
    lhs, rhs = _frame(experiments, pairs[0]), _frame(experiments, pairs[1])
    assert sorted(lhs["msg_size"]) == sorted(str(s) for s in SIZES)
    assert set(lhs["op"]) == {"gather"} and set(lhs["root"]) == {"0"}
    assert set(rhs["op"]) == {"allgather"} and set(rhs["root"]) == {""}
    assert list(lhs["msg_size"]) == list(rhs["msg_size"])


def test_cross_library_entry_pairs_each_experiment_across_libraries() -> None:
    catalogue = load_catalogue(CATALOGUE_PATH)
    (guideline,) = resolve(["XLIB-OPENMPI-MPICH"], catalogue, "catalogue")
    experiments, pairs = _pairs(guideline, 0)
    lhs, rhs = _frame(experiments, pairs[0]), _frame(experiments, pairs[1])
    per_library = len(experiments) // 2
    assert (
        len(pairs[0]) == per_library
    )  # every experiment once, against itself on the other library
    assert set(lhs["mpi"]) == {"openmpi"} and set(rhs["mpi"]) == {"mpich"}
    assert lhs[list(GRID_PARAMETERS)].equals(rhs[list(GRID_PARAMETERS)])


# --- docs/guidelines.md ------------------------------------------------------------------------


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().replace("|", "\\|")


def render_docs(catalogue: Mapping[str, Any]) -> str:
    """docs/guidelines.md: a table of every catalogue entry (id, relation, text, source)."""
    lines = [
        "# Guideline catalogue",
        "",
        "Every entry of [`src/mpiguide/data/guidelines.yaml`]"
        "(../src/mpiguide/data/guidelines.yaml), in file order.",
        "A campaign selects entries by id under `guidelines:` (docs/config.md); `le` means",
        "lhs ≼ rhs (lhs not slower), `approx` neither slower, `monotone` not faster with more",
        "data. The `source` column says where each claim comes from and how far it was verified.",
        "",
        "This file is generated: after editing the catalogue run",
        "`.venv/bin/python tests/unit/analysis/test_catalogue.py` (which checks that the two",
        "agree).",
        "",
        "| id | relation | guideline | source |",
        "|---|---|---|---|",
    ]
    for guideline_id, entry in catalogue.items():
        cells = [
            f"`{guideline_id}`",
            entry["relation"],
            _cell(entry["text"]),
            _cell(entry["source"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n" + DOCS_NOTES


DOCS_NOTES = """
## Lübbe 2017: the guidelines and the rows of Tables 3 and 4

`GL1`-`GL12` are §2's formulas in the printed direction. GL1-GL3 are about the constructors
and are measured by `topo_create`; GL4-GL12 by the neighbourhood collectives and, in GL7/GL8,
the global collectives they are compared with (their selectors
list the operations on both sides, so `topo_create` is never paired with them). The paper tests
some of them in another form (§4), catalogued beside them; the published campaigns
`config/campaigns/nbhcoll-*.yaml` and `full-jupiter.yaml` select exactly the rows of its tables,
and `analysis.layout: lubbe-table3` / `lubbe-table4` prints summary.md with the paper's labels:

| row of Table 3 / Table 4 | entry | tests (groups) per deployment |
|---|---|---|
| Neigh_allgather ≼ Neigh_alltoall | `GL4` | 1680 (112) / 60 (4) |
| Cart ≼ Vneum (§4: "refers to GL9") | `GL9` | 480 (32) / - |
| FMAJ ≼ RAND, LMAJ ≼ RAND (§4) | `GL11-FMAJ-RAND`, `GL11-LMAJ-RAND` | 960 (64) / - |
| Allgather ≼ Neigh_allgather | `GL7` | - / 30 (2) |
| Alltoall ≼ Neigh_alltoall | `GL8` | - / 30 (2) |
| LINEAR ≼ RAND | `GL11-LINEAR-RAND` | - / 60 (4) |
| reorder=1 ≼ reorder=0 (§4: "refers to GL12") | `GL12-AS-TESTED` | 1680 (112) / 90 (6) |

tests/unit/analysis/test_paper_tables.py derives every count from the campaigns' grids and the
pairing.
Where the paper is not self-consistent: Table 4 counts 90 tests in 6 groups for reorder=1 ≼
reorder=0, which includes Allgather and Alltoall run on the full topology; GL12 as §2 states it
("shall not slow down any neighborhood collective") has 60 tests in 4 groups there. `GL12` is
the statement, `GL12-AS-TESTED` the wider form the table counts. Also left open by the paper:
which neighbour order of the von Neumann neighbourhood its Cart ≼ Vneum tests used (one, by
the counts; FMAJ here), and the one message size where cutting and rounding 256·√2^k differ
(5792 vs 5793 B; the campaigns cut).

## What is not (yet) in the catalogue

- **Manwade & Kulkarni 2018**: complete (eq. 3-7 as `MK-EQ3`-`MK-EQ7`, Table 1 rows 1-17 as
  `MK-T1-R01`-`MK-T1-R17`). The paper gives no process counts P and no figures survive in its
  text; its Table 2 lost most cell positions in the text extraction (each `source` says what
  the text states, and where a mark's row is ambiguous).
- **Parker et al.**: checked against the CUG 2018 paper; each entry's source quotes it.
- **MPINPC** (Hunold 2023): the paper lists no complete set of mock-ups (its artifact's input
  files do). Missing from the kernel, so not catalogued: the circulant algorithms (its [12]) and
  hierarchical and lane decompositions of Scan.
- **Träff/Gropp/Thakur 2010** is not among the project's papers: its entries name the rule they
  instantiate, never a guideline number. The mock-ups whose `source` says "listed in PGMPI's
  default catalogue" were checked against it (github.com/hunsa/pgmpi,
  lib/default_config/guideline_catalog.json at commit 6afcbcd6).
"""


def test_docs_table_lists_every_entry(catalogue: dict[str, Any]) -> None:
    assert DOCS_PATH.read_text(encoding="utf-8") == render_docs(catalogue), (
        "docs/guidelines.md is out of date: run"
        " .venv/bin/python tests/unit/analysis/test_catalogue.py"
    )


if __name__ == "__main__":
    DOCS_PATH.write_text(render_docs(load_catalogue(CATALOGUE_PATH)), encoding="utf-8")
    print(f"wrote {DOCS_PATH}", file=sys.stderr)
