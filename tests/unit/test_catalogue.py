"""The guideline catalogue (config/guidelines.yaml) as data: every entry parses with the analysis
package's loader, names existing operations and parameters with values they can take, its
selectors pair real experiments of a grid, and docs/guidelines.md lists it.

Run as a script to rewrite docs/guidelines.md from the catalogue:
    .venv/bin/python tests/unit/test_catalogue.py
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

from mpiguide.catalogue import (
    DEPLOYMENT_KEYS,
    GRID_PARAMETERS,
    SELECTABLE_KEYS,
    Guideline,
    Selector,
    load_catalogue,
    resolve,
)
from mpiguide.grid import BY_TOPOLOGY, TOPOLOGIES, build_grid
from mpiguide.operations import load_operations
from mpiguide.pairing import canonical_strings, pair_comparison

REPO = Path(__file__).resolve().parents[2]
CATALOGUE_PATH = REPO / "config" / "guidelines.yaml"
DOCS_PATH = REPO / "docs" / "guidelines.md"
CONFIG_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

# Families of ids (issue 5); GL1-GL12 and MONO predate them.
ID_PREFIXES = ("GL", "MONO", "TGT-", "MPINPC-", "MK-", "PARKER-", "GROPP-", "NBH-", "XLIB-")
SIZES = (8, 64)


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


def test_contradicting_claims_are_both_recorded(guidelines: list[Guideline]) -> None:
    """Träff et al.: Allgather ≼ Gather + Bcast; Manwade & Kulkarni: the opposite. Both stay,
    each with its source: the catalogue records claims."""
    by_id = {g.id: g for g in guidelines}
    tgt, mk = by_id["TGT-ALLGATHER-AS-GATHER-BCAST"], by_id["MK-ALLGATHER-GATHER-BCAST"]
    assert tgt.comparisons[0].lhs == mk.comparisons[0].rhs == {"op": ("allgather",)}
    assert tgt.comparisons[0].rhs == mk.comparisons[0].lhs == {"op": ("allgather_as_gather_bcast",)}
    assert "Träff" in tgt.source and "Manwade" in mk.source


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


def _experiments(blocks: list[dict[str, Any]], mpis: list[str]) -> pd.DataFrame:
    """Grid rows of the blocks, once per MPI library, as canonical strings with a `row` index."""
    grid = build_grid({"nrep": 5, "experiments": blocks}, "test")
    frames = [grid.assign(mpi=mpi, nodes=1, ppn=4) for mpi in mpis]
    experiments = pd.concat(frames, ignore_index=True).drop(columns="exp_id")
    for key in experiments.columns:
        experiments[key] = canonical_strings(experiments[key])
    experiments["row"] = np.arange(len(experiments))
    return experiments


def _pairs(guideline: Guideline, index: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    comparison = guideline.comparisons[index]
    mpis = sorted({*comparison.lhs.get("mpi", ()), *comparison.rhs.get("mpi", ())}) or ["openmpi"]
    if "op" in comparison.lhs and "op" in comparison.rhs:
        blocks = [_block(comparison.lhs), _block(comparison.rhs)]
    else:  # a selector on the library or deployment only: any operation will do
        blocks = [{"op": ["allgather", "bcast"], "msg_size": list(SIZES)}]
    experiments = _experiments(blocks, mpis)
    keys = [*DEPLOYMENT_KEYS, *GRID_PARAMETERS]
    return experiments, pair_comparison(experiments, keys, comparison.lhs, comparison.rhs)


def _comparisons_to_pair() -> list[tuple[str, int]]:
    """(guideline id, comparison index) of every le/approx comparison of the issue-5 entries
    whose operations exist. GL1-GL12 and MONO are left out: several select on topology or
    constructor alone, which `_block` does not build; the campaigns' dry-runs check them."""
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
    assert len(pairs) > 0, f"{guideline_id} comparison {index} pairs nothing"
    lhs = experiments.iloc[pairs["lhs_row"].to_numpy()].reset_index(drop=True)
    rhs = experiments.iloc[pairs["rhs_row"].to_numpy()].reset_index(drop=True)
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
    lhs = experiments.iloc[pairs["lhs_row"].to_numpy()]
    rhs = experiments.iloc[pairs["rhs_row"].to_numpy()]
    assert sorted(lhs["msg_size"]) == sorted(str(s) for s in SIZES)
    assert set(lhs["op"]) == {"gather"} and set(lhs["root"]) == {"0"}
    assert set(rhs["op"]) == {"allgather"} and set(rhs["root"]) == {""}
    assert list(lhs["msg_size"]) == list(rhs["msg_size"])


def test_cross_library_entry_pairs_each_experiment_across_libraries() -> None:
    catalogue = load_catalogue(CATALOGUE_PATH)
    (guideline,) = resolve(["XLIB-OPENMPI-MPICH"], catalogue, "catalogue")
    experiments, pairs = _pairs(guideline, 0)
    lhs = experiments.iloc[pairs["lhs_row"].to_numpy()].reset_index(drop=True)
    rhs = experiments.iloc[pairs["rhs_row"].to_numpy()].reset_index(drop=True)
    per_library = len(experiments) // 2
    assert len(pairs) == per_library  # every experiment once, against itself on the other library
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
        "Every entry of [`config/guidelines.yaml`](../config/guidelines.yaml), in file order.",
        "A campaign selects entries by id under `guidelines:` (docs/config.md); `le` means",
        "lhs ≼ rhs (lhs not slower), `approx` neither slower, `monotone` not faster with more",
        "data. The `source` column says where each claim comes from and how far it was verified.",
        "",
        "This file is generated: after editing the catalogue run",
        "`.venv/bin/python tests/unit/test_catalogue.py` (tests/unit/test_catalogue.py checks",
        "that the two agree).",
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
## What is not (yet) in the catalogue

- **Manwade & Kulkarni, Table 1**: the paper could not be retrieved while the catalogue was
  written. Only the row that mpiguide issue 5 quotes ("Gather + Bcast ≤ Allgather",
  `MK-ALLGATHER-GATHER-BCAST`) is catalogued; the other 16 collective rows (their wording,
  direction and which are `≈`) need the paper. Their five point-to-point guidelines (eq. 3-7)
  are catalogued as `MK-P2P-*` with the operations issue 5 names; which operation pairs with
  which is a reconstruction, said so in each `source`.
- **Parker et al.**: catalogued as issue 5 lists them; wording not verified.
- **MPINPC** (Hunold 2023): the paper lists no complete set of mock-ups (its artifact's input
  files do). Missing from the kernel, so not catalogued: the circulant algorithms (its [12]) and
  hierarchical and lane decompositions of Scan.
- **Träff/Gropp/Thakur 2010**: entries name the rule they instantiate, not the paper's
  guideline numbers; fourteen of the mock-ups were checked against PGMPI's default catalogue
  (Hunold et al., "PGMPI: Verifying Self-Consistent MPI Performance Guidelines",
  arXiv:1606.00215; github.com/hunsa/pgmpi).
"""


def test_docs_table_lists_every_entry(catalogue: dict[str, Any]) -> None:
    assert DOCS_PATH.read_text(encoding="utf-8") == render_docs(catalogue), (
        "docs/guidelines.md is out of date: run .venv/bin/python tests/unit/test_catalogue.py"
    )


if __name__ == "__main__":
    DOCS_PATH.write_text(render_docs(load_catalogue(CATALOGUE_PATH)), encoding="utf-8")
    print(f"wrote {DOCS_PATH}", file=sys.stderr)
