"""Campaigns interleave in 5 chunks unless they say otherwise: the top-level `interleave` (a
schema default) fills the blocks that do not set theirs, bounded by each row's nrep; a campaign
that pins 1 plans, and records, exactly what it planned before the key existed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.options_record import canonical_json, record_path
from mpiguide.campaign.raw_guard import GRID_RECORD, NOT_SET, planning_changes
from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.plan.grid import expand

BLOCKS = [
    {"op": ["allgather"], "msg_size": [8, 64]},
    {"op": ["bcast"], "msg_size": [8], "nrep": [3]},
    {"op": ["alltoall"], "msg_size": [8], "interleave": 2},
]


def filled(**config: Any) -> dict[str, Any]:
    """A minimal campaign through the schema step, defaults filled in."""
    full = {
        "campaign": "c",
        "mpi": {"openmpi": {"mpicc": "mpicc.openmpi", "launcher": "mpirun.openmpi"}},
        "deployments": [{"nodes": 1, "ppn": 2}],
        "experiments": BLOCKS,
        "guidelines": [],
        "nrep": 10,
    } | config
    validate_schema(full, load_schema(), "c.yaml")
    return full


def interleaves(config: dict[str, Any]) -> dict[str, set[int]]:
    rows = expand(config)
    return {op: {r["interleave"] for r in rows if r["op"] == op} for op in {r["op"] for r in rows}}


def test_blocks_without_interleave_take_the_campaign_default_bounded_by_nrep() -> None:
    config = filled()
    assert config["interleave"] == 5
    assert interleaves(config) == {"allgather": {5}, "bcast": {3}, "alltoall": {2}}


def test_a_pinned_campaign_measures_back_to_back() -> None:
    assert interleaves(filled(interleave=1)) == {"allgather": {1}, "bcast": {1}, "alltoall": {2}}


def test_the_grid_spec_leaves_out_interleave_1_and_names_any_other() -> None:
    options = AnalysisOptions.with_defaults()
    pinned = Campaign(filled(interleave=1), options, "c.yaml").grid_spec()
    assert "interleave" not in pinned
    assert expand(pinned) == expand(filled(interleave=1))
    default = Campaign(filled(), options, "c.yaml").grid_spec()
    assert default["interleave"] == 5
    assert expand(default) == expand(filled())


def test_every_block_interleaving_on_its_own_keeps_the_spec() -> None:
    own = [{**block, "interleave": 2} for block in BLOCKS]
    spec = Campaign(filled(experiments=own), AnalysisOptions.with_defaults(), "c.yaml").grid_spec()
    assert "interleave" not in spec


@pytest.mark.parametrize(("interleave", "changed"), [(1, False), (5, True)])
def test_runs_planned_before_the_key_existed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interleave: int, changed: bool
) -> None:
    """Results whose grid record predates the key: a campaign pinning 1 is unchanged; one taking
    the new default is a change of `interleave`, named as such."""
    monkeypatch.chdir(tmp_path)
    campaign = Campaign(filled(interleave=interleave), AnalysisOptions.with_defaults(), "c.yaml")
    before = {"nrep": campaign.config["nrep"], "experiments": campaign.config["experiments"]}
    path = Path(record_path(campaign.results, GRID_RECORD))
    path.parent.mkdir(parents=True)
    path.write_text(canonical_json(before), encoding="utf-8")
    changes = planning_changes(Path(campaign.results), campaign)
    if changed:
        assert [(c.key, c.before, c.after) for c in changes] == [("interleave", NOT_SET, 5)]
    else:
        assert changes == []
