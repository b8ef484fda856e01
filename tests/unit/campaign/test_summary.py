"""`validate` counts the tests of every guideline as `check` forms them from the run medians,
the ALGO guidelines an entry's `algorithms:` adds and verify's TUNE guidelines included: the
count is held against `check`'s own evaluation of medians aggregated from synthetic runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.analysis.guidelines import evaluate, read_medians
from mpiguide.campaign.config import check_campaign
from mpiguide.campaign.expansion import (
    algorithm_settings,
    tune_libraries,
    verify_campaign,
    with_algorithm_sweeps,
)
from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.campaign.summary import count_tests
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.plan.grid import build_grid
from mpiguide.store.aggregate import aggregate
from mpiguide.store.provenance import PROV_HEAP
from mpiguide.tune.library_algorithms import Choices, parse_ompi_info
from synthetic import Deployment, write_campaign

LISTING = Path(__file__).parents[1] / "tune" / "algorithm_listings" / "ompi_info-4.1.4.txt"
SOURCE = "c.yaml"
CONFIG: dict[str, Any] = {
    "campaign": "t",
    "mpi": {
        "openmpi": {
            "mpicc": "mpicc.openmpi",
            "library": "openmpi",
            "algorithms": {"allreduce": "all"},
        }
    },
    "deployments": [{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4}],
    "nrep": 4,
    "experiments": [
        {"op": ["allreduce", "allreduce_as_reduce_bcast"], "msg_size": [8, 1024]},
        {"op": "bcast", "msg_size": 8},
    ],
    "guidelines": ["TGT-ALLREDUCE-AS-REDUCE-BCAST"],
    "analysis": {"varied": "msg_size"},
}


@pytest.fixture(scope="module")
def ompi() -> Choices:
    return parse_ompi_info(LISTING.read_text())


def checked_counts(
    root: Path, config: dict[str, Any], kernel_of: dict[str, str] | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """(validate's count, check's count) of every guideline of `config` (expanded; `kernel_of`:
    verify's tuned entries): check evaluates the medians that aggregate makes of synthetic runs
    of the campaign."""
    catalogue = load_catalogue(GUIDELINE_CATALOGUE)
    tuning = tune_libraries(config, kernel_of or {})
    options = check_campaign(copy.deepcopy(config), catalogue, SOURCE, tuning)
    guidelines = resolve(config["guidelines"], catalogue, SOURCE)
    grid = build_grid({"nrep": config["nrep"], "experiments": config["experiments"]}, SOURCE)
    deployments = [
        Deployment(mpi, d["nodes"], d["ppn"])
        for mpi in config["mpi"]
        for d in config["deployments"]
    ]
    typical = np.full(len(grid), 1e-5)
    raw = write_campaign(root, grid, typical, deployments, runs=3, sigma=0.1, seed=1)
    for path in raw:  # each run's --heap, as the kernel records it
        heap = config["mpi"][path.parents[1].name].get("heap", "default")
        provenance = json.loads(path.with_suffix(".json").read_text())
        provenance[PROV_HEAP] = {"setting": heap}
        path.with_suffix(".json").write_text(json.dumps(provenance))
    medians = root / "medians.parquet"
    aggregate(root / "grid.csv", raw, root / "raw", root / "inputs", root / "t.parquet", medians)
    tests = evaluate(read_medians(medians), guidelines, options, SOURCE)
    by_check = tests.groupby("guideline").size().to_dict()
    return count_tests(config, options, grid, guidelines), {
        g.id: by_check.get(g.id, 0) for g in guidelines
    }


def test_the_algo_guidelines_are_counted_as_check_pairs_them(ompi: Choices, tmp_path: Path) -> None:
    config = copy.deepcopy(CONFIG)
    validate_schema(config, load_schema(), SOURCE)
    expanded = with_algorithm_sweeps(config, algorithm_settings(config, SOURCE, lambda *_: ompi))
    counted, checked = checked_counts(tmp_path, expanded)
    assert counted == checked
    algo = {gid: n for gid, n in counted.items() if gid.startswith("ALGO.")}
    # six algorithms of MPI_Allreduce, each against the library's choice at 2 sizes x 2
    # deployments
    assert len(algo) == 6 and set(algo.values()) == {4}


def test_verify_s_tune_guidelines_are_counted_as_check_pairs_them(tmp_path: Path) -> None:
    config = copy.deepcopy(CONFIG)
    del config["mpi"]["openmpi"]["algorithms"]
    validate_schema(config, load_schema(), SOURCE)
    tuning = tmp_path / "results" / "t" / "tuning"
    tuning.mkdir(parents=True)
    (tuning / "openmpi.tune").write_text("allreduce_as_reduce_bcast ranks=2 bytes=8-8  # x\n")
    verified, kernel_of = verify_campaign(config, SOURCE, tmp_path / "results")
    counted, checked = checked_counts(tmp_path / "runs", verified, kernel_of)
    assert counted == checked
    # within openmpi.tuned: allreduce as tuned against the library's own, 2 sizes x 2 deployments
    assert counted["TUNE.openmpi.allreduce"] == 4


def test_a_campaign_without_algorithms_is_counted_as_check_pairs_it(tmp_path: Path) -> None:
    config = copy.deepcopy(CONFIG)
    del config["mpi"]["openmpi"]["algorithms"]
    config["mpi"]["mpich"] = {"mpicc": "mpicc.mpich", "heap": "fixed"}
    config["guidelines"] = [
        "TGT-ALLREDUCE-AS-REDUCE-BCAST",
        {
            "id": "ACROSS-ENTRIES",
            "source": "this test",
            "text": "openmpi not slower than mpich",
            "relation": "le",
            "lhs": {"mpi": "openmpi"},
            "rhs": {"mpi": "mpich"},
        },
    ]
    validate_schema(config, load_schema(), SOURCE)
    counted, checked = checked_counts(tmp_path, config)
    assert counted == checked
    assert counted["TGT-ALLREDUCE-AS-REDUCE-BCAST"] == 8
    # entries of different heaps pair only where a guideline fixes the heap on both sides
    assert counted["ACROSS-ENTRIES"] == 0
    config["mpi"]["mpich"]["heap"] = "default"
    counted, checked = checked_counts(tmp_path / "same_heap", config)
    assert counted == checked
    assert counted["ACROSS-ENTRIES"] == 10  # 5 experiments x 2 deployments
