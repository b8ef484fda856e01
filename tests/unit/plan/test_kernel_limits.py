"""The kernel's limits (data/limits.tsv, the kernel's --list-limits: tests/kernel holds the two
equal) are the schema's maxima: a value the schema accepts is one the kernel runs."""

from __future__ import annotations

import pytest

from mpiguide.campaign.schema import load_schema
from mpiguide.plan.limits import kernel_limits

# Each limit and the schema places that repeat it (JSON pointers into the config schema).
SCHEMA_MAXIMA = {
    "max_ranks": [("properties", "deployments", "items", "properties", "node_size")],
    "max_buffer_bytes": [("$defs", "size")],
    "max_nrep": [("$defs", "nrep")],
    "max_work": [("$defs", "work")],
    "max_dims": [("$defs", "ndim")],
    "max_buffer_offset": [("$defs", "buffer_offset")],
    "max_interleave": [("$defs", "interleave")],
    "max_warmup": [("$defs", "warmup")],
}


def _at(schema: dict, pointer: tuple[str, ...]) -> dict:
    for key in pointer:
        schema = schema[key]
    return schema


def test_every_limit_is_known() -> None:
    assert set(kernel_limits()) == {*SCHEMA_MAXIMA, "max_stencil_offsets"}


@pytest.mark.parametrize("limit", sorted(SCHEMA_MAXIMA))
def test_schema_maximum_is_the_kernels_limit(limit: str) -> None:
    schema = load_schema()
    for pointer in SCHEMA_MAXIMA[limit]:
        assert _at(schema, pointer)["maximum"] == kernel_limits()[limit], pointer
