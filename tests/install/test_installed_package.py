"""The package installed as users install it (a wheel built by pip, outside any checkout) finds
its own schemas and catalogues: `validate`, `aggregate`, `check` and `fit` run from a directory
that holds nothing of the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.plan.grid import build_grid
from synthetic import Deployment, write_campaign

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN = {
    "campaign": "installed",
    "mpi": {"openmpi": {"mpicc": "mpicc.openmpi", "launcher": "mpirun.openmpi"}},
    "deployments": [{"nodes": 1, "ppn": 4}],
    "runs": 6,
    "nrep": 20,
    "interleave": 1,  # the synthetic runs (tests/synthetic.py) are written back to back
    "experiments": [
        {"op": ["neighbor_allgather", "neighbor_alltoall"], "topology": "cart", "ndim": 2,
         "msg_size": [8, 64, 512]},
        {"op": ["allreduce"], "msg_size": [8, 64, 512]},
    ],
    "guidelines": ["GL4"],
    "models": [{"model": "hockney", "ops": ["allreduce"]}],
}  # fmt: skip


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """site-packages of a wheel built from a copy of the package's sources (not the checkout)."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    (source / "src").mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(
        REPO / "src" / "mpiguide",
        source / "src" / "mpiguide",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(source)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return site


def mpiguide(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-m", "mpiguide", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_runs_the_installed_copy(installed: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(installed)}
    where = subprocess.run(
        [sys.executable, "-c", "import mpiguide; print(mpiguide.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert Path(where.strip()).is_relative_to(installed)
    assert (installed / "mpiguide" / "data" / "schemas" / "config.schema.yaml").is_file()


def test_validate_aggregate_check_and_fit_outside_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    config_file = tmp_path / "campaign.yaml"
    config_file.write_text(yaml.safe_dump(CAMPAIGN))
    validated = mpiguide(installed, tmp_path, "validate", "--config", str(config_file))
    assert validated.returncode == 0, validated.stderr

    config = json.loads(json.dumps(CAMPAIGN))
    validate_schema(config, load_schema(), "campaign.yaml")
    grid = build_grid(config)
    typical = np.where(grid["op"] == "allreduce", 2e-6 + grid["msg_size"] * 1e-9, 5e-6)
    raw = write_campaign(
        tmp_path, grid, typical.astype(float), [Deployment("openmpi", 1, 4)], 6, 0.02, 1
    )
    aggregated = mpiguide(
        installed, tmp_path, "aggregate", "--grid", "grid.csv", "--raw-root", "raw",
        "--inputs-root", "inputs", "--timings", "timings.parquet",
        "--medians", "medians.parquet", *(str(path.relative_to(tmp_path)) for path in raw),
    )  # fmt: skip
    assert aggregated.returncode == 0, aggregated.stderr

    checked = mpiguide(
        installed, tmp_path, "check", "--medians", "medians.parquet",
        "--guidelines-json", json.dumps(CAMPAIGN["guidelines"]),
        "--analysis-json", json.dumps(config["analysis"]), "--outdir", "guidelines",
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert (tmp_path / "guidelines" / "tests.csv").read_text().count("\n") > 1

    fitted = mpiguide(
        installed, tmp_path, "fit", "--medians", "medians.parquet",
        "--models-json", json.dumps(CAMPAIGN["models"]), "--out", "models",
    )  # fmt: skip
    assert fitted.returncode == 0, fitted.stderr
    assert (tmp_path / "models" / "models.csv").is_file()
