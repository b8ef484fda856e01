"""mpiguide.plan.grid owns the grid's parameters for the Python side: their names and order, values,
defaults and when each applies. The campaign schema restates names and values (a YAML file cannot
import them); these tests hold it to grid.py. The kernel's --list-params prints its names,
defaults and applicability rules; tests/kernel/test_ops_table.py holds them to grid.COLUMNS,
grid.DEFAULTS and grid.APPLIES_WHEN / grid.applies()."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from mpiguide.campaign.schema import load_schema
from mpiguide.plan.grid import (
    APPLIES_WHEN,
    BY_TOPOLOGY,
    DEFAULTS,
    DTYPE_SIZES,
    PARAMETERS,
    TOPOLOGIES,
    applies,
)
from mpiguide.plan.operations import load_operations

SCHEMA_DEFS: dict[str, Any] = load_schema()["$defs"]


def test_an_experiment_block_has_the_grid_parameters_in_grid_order() -> None:
    assert list(SCHEMA_DEFS["block"]["properties"]) == [*PARAMETERS, "where"]


@pytest.mark.parametrize(
    ("parameter", "values"),
    [
        ("dtype", tuple(DTYPE_SIZES)),
        ("topology", TOPOLOGIES),
        *((name, by_topology) for name, by_topology in BY_TOPOLOGY.items()),
    ],
)
def test_the_schema_allows_the_values_grid_knows(parameter: str, values: Any) -> None:
    if isinstance(values, dict):
        assert set(values) <= set(TOPOLOGIES)
        values = {value for per_topology in values.values() for value in per_topology}
    assert set(SCHEMA_DEFS[parameter]["enum"]) == set(values)


@pytest.mark.parametrize("parameter", DEFAULTS)
def test_every_default_is_a_value_the_schema_allows(parameter: str) -> None:
    block = {"$defs": SCHEMA_DEFS, "$ref": "#/$defs/block"}
    jsonschema.Draft202012Validator(block).validate(
        {"op": "barrier", parameter: DEFAULTS[parameter]}
    )


def test_the_parameters_said_not_to_apply_somewhere_are_those_that_do_not() -> None:
    """APPLIES_WHEN (the messages) names exactly the parameters applies() leaves empty for
    some op and topology."""
    operations = load_operations().values()
    conditional = {
        parameter
        for parameter in PARAMETERS
        for op in operations
        for topology in TOPOLOGIES
        if not applies(parameter, op, topology)
    }
    assert conditional == set(APPLIES_WHEN)
    assert set(DEFAULTS) <= set(PARAMETERS)
