"""Helpers of the workflow tests: tiny campaign projects and snakemake runs in them.

A project is a directory holding what the workflow reads relative to its working directory
(Snakefile, workflow/, profiles/, config/local-mpi.yaml, the kernel sources) plus a campaign
config; the mpiguide package comes from the venv running the tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from mpiguide import cli
from mpiguide.campaign.installs import INSTALLS, SETUP_COMMAND
from mpiguide.campaign.scale import DEFAULT_LOCAL_MPI, LOCAL_MPI

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
PROJECT_FILES = (
    "Snakefile",
    "workflow",
    "profiles",
    # `--profile local` and `--profile slurm` by name: links to profiles/ (README, Layout)
    "local",
    "slurm",
    "config/local-mpi.yaml",
    "src/kernel",
    "src/mockups",
    "src/common",
    "src/inject",
    "src/tune",
)
# Kernel builds inside src/kernel are not part of a project.
IGNORED = shutil.ignore_patterns("build", "__pycache__", "*.o")

# The jobs that rebuild the analysis from the raw runs, one per analysis rule behind `all`:
# what any change to the measured data re-runs (the expectation of every re-run test).
ANALYSIS_JOBS = {"aggregate": 1, "analyse": 1, "all": 1}

ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# Two MPI entries so that rules generated per entry are exercised; 2 ranks each (MPICH ≤ 2).
TINY_CAMPAIGN: dict[str, Any] = {
    "campaign": "tiny",
    "seed": 7,
    "runs": 2,
    "nrep": 5,
    "mpi": {
        "openmpi": {
            "mpicc": "mpicc.openmpi",
            "launcher": "mpirun.openmpi --oversubscribe",
            "env": {**ROOT_ENV, "OMPI_MCA_mpi_yield_when_idle": "1"},
            "modules": [],
        },
        "mpich": {
            "mpicc": "mpicc.mpich",
            "launcher": "mpiexec.mpich",
            "env": {},
            "modules": [],
        },
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [
        {
            "op": ["neighbor_allgather", "neighbor_alltoall"],
            "topology": ["cart"],
            "ndim": [1],
            "reorder": [0, 1],
            "msg_size": [8, 1024],
        }
    ],
    "guidelines": ["GL4"],
    "analysis": {"varied": "msg_size", "p_thres": 0.5, "v_thres": 1.0},
    # One job per launch, as the tests of run jobs, re-runs and failures expect; blocks (the
    # default for two entries) have tests of their own (test_run_jobs, tests/faults/test_blocks).
    "blocking": "none",
}
N_EXPERIMENTS = 8
DEPLOYMENT = "1x2"


def run_jobs(mpi: Any, runs: int, deployments: list, blocking: str | None = None) -> dict[str, int]:
    """The launch jobs a campaign schedules: one `run_block` per deployment and run under
    `blocking: run` (the default with two or more entries), else one `run_<mpi>` per launch."""
    names = list(mpi)
    if (blocking or ("run" if len(names) >= 2 else "none")) == "run":
        return {"run_block": runs * len(deployments)}
    return {f"run_{name}": runs * len(deployments) for name in names}


# Job summary of `snakemake -n`: "job  count" header, dashes, one "<rule> <count>" line per rule.
JOB_LINE = re.compile(r"^(\S+)\s+(\d+)$")


# Snakemake's first line on stderr in every invocation: the profiles that set its defaults,
# profiles/default always (it names the demo config), a --profile too when one is given.
PROFILE_NOTICE = re.compile(
    r"Using (profiles? .+? and )?workflow specific profile profiles/default "
    r"for setting default command line arguments\.\n"
)


def after_profile_notice(stderr: str) -> str:
    """What follows Snakemake's profile notice on stderr (which must come first)."""
    notice = PROFILE_NOTICE.match(stderr)
    assert notice is not None, f"no profile notice first:\n{stderr}"
    return stderr[notice.end() :]


def snakemake_env() -> dict[str, str]:
    env = dict(os.environ)
    # The SLURM executor plugin runs `scontrol show config` whenever Snakemake starts; with a
    # slurm.conf but no controller (SLURM installed for the slurm tests, cluster stopped) that
    # waits 9 s per call. These tests run locally and never need the answer.
    env.setdefault("SLURM_CONF", os.devnull)
    env["PATH"] = f"{SNAKEMAKE.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def snakemake(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run snakemake in `project`; on failure the assertion shows its output."""
    result = subprocess.run(
        [str(SNAKEMAKE), *args],
        cwd=project,
        env=snakemake_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        command = " ".join(args)
        assert result.returncode == 0, f"snakemake {command}:\n{result.stdout}\n{result.stderr}"
    return result


def scheduled_jobs(project: Path, *args: str) -> dict[str, int]:
    """Rule -> number of jobs `snakemake -n` would run ({} when nothing is to be done)."""
    result = snakemake(project, "--profile", "profiles/local", "-n", *args)
    return job_counts(result.stdout + result.stderr)


def job_counts(output: str) -> dict[str, int]:
    """Rule -> number of jobs in the job stats of a `snakemake -n` output."""
    if "Nothing to be done" in output:
        return {}
    summary = output.split("Job stats:", 1)[1].splitlines()
    jobs: dict[str, int] = {}
    for line in summary[3:]:
        match = JOB_LINE.match(line.strip())
        if match is None or match[1] == "total":
            break
        jobs[match[1]] = int(match[2])
    return jobs


def write_config(project: Path, config: dict[str, Any]) -> None:
    (project / "config").mkdir(exist_ok=True)
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def read_config(project: Path) -> dict[str, Any]:
    return yaml.safe_load((project / "config" / "config.yaml").read_text())


def new_project(root: Path, config: dict[str, Any]) -> Path:
    """A fresh clone: project files and a config, no results, no .snakemake."""
    root.mkdir(parents=True)
    for name in PROJECT_FILES:
        source = REPO / name
        if source.is_symlink():
            (root / name).symlink_to(source.readlink())
        elif source.is_dir():
            shutil.copytree(source, root / name, ignore=IGNORED)
        else:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    write_config(root, config)
    return root


def measured_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, measure: Callable[[Path], None]
) -> Path:
    """The campaign project `measure(project)` runs, measured once per test session for every
    test that reads it (tests change copies of it: copy_project). Under pytest-xdist the workers
    share it: the first to ask measures while the others wait, so that a campaign read by test
    files on both workers is not measured twice. A failed measurement is tried again by the next
    test that asks."""
    root = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        root = root.parent  # the session's directory, above each worker's own
    directory = root / f"measured-{name}"
    directory.mkdir(exist_ok=True)
    project, measured = directory / "project", directory / "measured"
    with (directory / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not measured.exists():
            shutil.rmtree(project, ignore_errors=True)
            measure(project)
            measured.touch()
    return project


def copy_project(project: Path, destination: Path) -> Path:
    """A private copy of a measured campaign project for a test to change: results with their
    mtimes and .snakemake's metadata as they are, links as links, so that Snakemake finds the
    copy exactly as complete as the original."""
    shutil.copytree(project, destination, symlinks=True)
    return destination


def skip_unless_installed(path: Path, scale: str) -> None:
    """Skip a test of the campaign at `path` whose entries at `scale` (the `local:` block's
    entries of config/local-mpi.yaml at `local`) name a library `make setup-mpi` has not
    installed in this checkout: the workflow and `validate` refuse such a campaign."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    entries = config["mpi"]
    if scale == "local":
        local = yaml.safe_load((REPO / LOCAL_MPI).read_text(encoding="utf-8"))["mpi"]
        names = config.get("local", {}).get("mpi", DEFAULT_LOCAL_MPI)
        entries = {name: local[name] for name in names}
    _skip_missing(entries, f"{path.name} at scale {scale}")


def _skip_missing(entries: dict[str, Any], what: str) -> None:
    """Skip where one of `entries` names a library `make setup-mpi` has not installed here."""
    missing = [
        INSTALLS[entry["install"]]
        for entry in entries.values()
        if "install" in entry and not INSTALLS[entry["install"]].installed()
    ]
    if missing:
        where = ", ".join(f"{install.name} (not in {install.prefix})" for install in missing)
        pytest.skip(f"{what} needs {where}: `{SETUP_COMMAND}`")


def campaign_project(root: Path, campaign: str, config: dict[str, Any]) -> Path:
    """A fresh project (new_project) with the campaign config `config` at `campaign`, relative
    to it; skipped where an entry names a library `make setup-mpi` has not installed here."""
    _skip_missing(config["mpi"], campaign)
    new_project(root, {})
    (root / campaign).parent.mkdir(parents=True, exist_ok=True)
    (root / campaign).write_text(yaml.safe_dump(config, sort_keys=False))
    return root


def validate_campaign(path: Path, scale: str) -> None:
    """`mpiguide validate --configfile path --config scale=SCALE` accepts the campaign (its main,
    in this process: the validation is what is tested, not Python's start-up); at the paper's
    scale, for the cluster it was written for (--elsewhere: its commands are not looked up).
    Skipped where it names a library not installed here (skip_unless_installed)."""
    skip_unless_installed(path, scale)
    elsewhere = ["--elsewhere"] if scale == "paper" else []
    argv = ["validate", "--configfile", str(path), "--config", f"scale={scale}", *elsewhere]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(REPO), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    assert status == 0, err.getvalue()
    assert out.getvalue().splitlines()[-1].startswith(f"{path}: ok")


def algo_tests(
    guideline: str,
    mpi: str,
    algorithm: str,
    verdicts: Sequence[tuple[int, float, str]],
    **more: str,
) -> list[dict[str, str]]:
    """tests.csv rows of one ALGO guideline on 1x2, allreduce of chars: per (msg_size, ratio,
    verdict) the library's choice `ratio` times slower than the algorithm, bounds ±10 %;
    `mpi` and `algorithm` as the cells have them (`lhs|rhs`, or one value for both sides),
    `more`: further columns (the test's name)."""
    return [
        {
            "guideline": guideline, "relation": "le", "mpi": mpi, "algorithm": algorithm,
            "nodes": "1", "ppn": "2", "heap": "default", "op": "allreduce",
            "msg_size": str(size), "dtype": "char", "group": "0",
            "median_lhs": str(1e-5 * ratio), "median_rhs": "1e-05",
            "violation_ratio": str(ratio), "ratio_low": str(ratio * 0.9),
            "ratio_high": str(ratio * 1.1), "low_level": "0.999", "high_level": "0.95",
            "verdict": verdict, **more,
        }
        for size, ratio, verdict in verdicts
    ]  # fmt: skip


def run_tune(project: Path, rows: list[dict[str, str]], campaign: str, outdir: Path) -> None:
    """`python -m mpiguide tune` of the campaign config `campaign` (relative to `project`) on a
    tests.csv of `rows`, written for the purpose (algo_tests), into `outdir`: which algorithm a
    measured campaign chooses is the machine's to say, and on a loaded machine it may be none."""
    tests, decided = project / "tune-input" / "tests.csv", project / "tune-input" / "d.json"
    tests.parent.mkdir()
    pd.DataFrame(rows).to_csv(tests, index=False)
    analysis = {"p_thres": 0.5, "v_thres": 1.0, "confidence": 0.95}
    decided.write_text(json.dumps({"analysis": analysis}))
    done = subprocess.run(
        [sys.executable, "-m", "mpiguide", "tune", "--tests", str(tests), "--decided-with",
         str(decided), "--config", campaign, "--outdir", str(outdir)],
        cwd=project, env=snakemake_env(), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def sides(cell: str) -> list[str]:
    """A tests.csv cell as (lhs, rhs): `lhs|rhs`, or one value for both sides."""
    parts = cell.split("|")
    return parts if len(parts) == 2 else parts * 2


def block_entries(output: str) -> list[dict[str, Any]]:
    """The entries of every `mpiguide run-block` command a snakemake invocation ran (its shell
    commands, printed by the profile's printshellcmds): each launch's entry, env, input and
    output."""
    entries = []
    for line in output.splitlines():
        if "mpiguide run-block --spec-json" in line:
            words = shlex.split(line)
            spec = json.loads(words[words.index("--spec-json") + 1])
            entries += spec["entries"]
    return entries
