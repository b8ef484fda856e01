"""What the benchmarks share: the checkout they measure, the load average they print beside
their figures (the machine may be shared), and the venv's snakemake with the environment it runs
in. The benchmarks run as `python benchmarks/<name>.py`, which puts this directory on sys.path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The snakemake of the venv whose Python runs the benchmark.
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def load(label: str = "load") -> str:
    """The 1, 5 and 15 min load averages after `label`: `load 0.52 / 0.61 / 0.70`."""
    one, five, fifteen = os.getloadavg()
    return f"{label} {one:.2f} / {five:.2f} / {fifteen:.2f}"


def snakemake_env(project: Path | None = None) -> dict[str, str]:
    """The environment snakemake runs in: the venv's programs first on PATH and, with `project`,
    that checkout's own package on PYTHONPATH, whatever the venv has installed."""
    env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if project is not None:
        env["PYTHONPATH"] = str(project / "src")
    return env


def run_snakemake(project: Path, *args: str, own_package: bool = True) -> None:
    """Run the venv's snakemake with `args` in `project` (with that checkout's own package, or
    the venv's), its output passed through; stop the benchmark if it fails."""
    env = snakemake_env(project if own_package else None)
    subprocess.run([str(SNAKEMAKE), *args], cwd=project, env=env, check=True)


def timed_snakemake(
    project: Path, *args: str, env: dict[str, str] | None, shown: str
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run the venv's snakemake with `args` in `project` (in `env`; None: this process's), its
    output captured; the seconds it took and its result. If it fails, stop the benchmark with
    its output, naming it `snakemake <shown>`."""
    start = time.perf_counter()
    result = subprocess.run(
        [str(SNAKEMAKE), *args], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"snakemake {shown} failed:\n{result.stdout}\n{result.stderr}")
    return seconds, result
