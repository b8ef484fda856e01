"""The demo campaign (config/config.yaml) is sized for the 2-core machine its header names: no
deployment oversubscribes it, so every verdict it counts was measured with a core per rank."""

from __future__ import annotations

import shlex
from pathlib import Path

from mpiguide.analysis.catalogue import load_catalogue
from mpiguide.campaign.config import load_campaign
from mpiguide.core.package_data import GUIDELINE_CATALOGUE

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "config" / "config.yaml"
# The machine the demo is sized and timed for (its header): a laptop or a CI runner may have
# more cores, but the demo must not need them.
DEMO_CORES = 2


def test_no_demo_deployment_has_more_ranks_than_the_target_cores() -> None:
    config = load_campaign(DEMO)
    ranks = {f"{d['nodes']}x{d['ppn']}": d["nodes"] * d["ppn"] for d in config["deployments"]}
    assert ranks and all(n <= DEMO_CORES for n in ranks.values()), ranks


def test_no_demo_launcher_allows_oversubscription() -> None:
    """Were a machine short of cores, mpirun must refuse rather than time-slice the ranks."""
    config = load_campaign(DEMO)
    for name, entry in config["mpi"].items():
        assert "--oversubscribe" not in shlex.split(entry["launcher"]), name
        assert "OMPI_MCA_mpi_yield_when_idle" not in entry["env"], name


def test_the_demo_checks_catalogued_guidelines_only() -> None:
    """Every guideline the demo decides is a catalogue entry citing its source."""
    config = load_campaign(DEMO)
    catalogue = load_catalogue(GUIDELINE_CATALOGUE)
    assert config["guidelines"]
    for guideline in config["guidelines"]:
        assert isinstance(guideline, str) and guideline in catalogue, guideline
