"""The bad-input catalogue: every case file below this directory is one mistake a
user can make, run through the real entry point, and must end with a clear message naming the file
and the key or line (or the flag), the case's exit code, no Python traceback and no MPI abort.

Case files: `config/*.yaml` (campaign configs), `catalogue/*.yaml` (guideline catalogues),
`kernel_csv/*.csv` (kernel inputs), `cli/*.args` (command lines). Each starts with `#` lines:

    # what the mistake is                  (first line, free text)
    # run: validate | catalogue | kernel | kernel-cli | mpiguide   (default: by directory)
    # expect: a fragment of stderr         (one or more; placeholders below)
    # exit: 2                              (default 2)
    # also: snakemake                      (configs: also `snakemake -n --configfile FILE`)
    # defect: why it fails today           (known defect: strict xfail of the case)
    # snakemake-defect: why                (the same, for the snakemake run only)

How each kind runs (placeholders in expectations and argument lines: {file} the case's input
as passed, {in} a valid kernel input, {out} an output path, {missing} a path that does not
exist, {config} good_campaign.yaml, {data} cli/data, {tmp} the case's own directory):

- validate:   python -m mpiguide validate --configfile FILE
- catalogue:  python -m mpiguide validate --configfile good_campaign.yaml --catalogue FILE
- kernel:     mpirun -n 2 mpiguide-bench IN.csv OUT.csv, IN.csv = the case without its `#` lines
- kernel-cli: mpirun -n 2 mpiguide-bench ARGS   (ARGS: the case's last line, split like a shell)
- mpiguide:   python -m mpiguide ARGS

The python -m mpiguide cases run its main in this process (run_mpiguide), one at a time.

Every case runs once, in threads (Python start-up is mostly waiting on this shared machine; MPI
launches two at a time), before the parametrised test inspects the outcomes. The kernel cases carry
the `kernel` marker and the Snakemake runs the `workflow` marker; the rest runs without MPI.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from mpi_support import OPENMPI_ROOT_ENV
from mpiguide import cli
from workflow_project import after_profile_notice, new_project, snakemake

if TYPE_CHECKING:
    from mpi_support import Kernel

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
GOOD_CONFIG = HERE / "good_campaign.yaml"
CLI_DATA = HERE / "cli" / "data"
PYTHON = sys.executable
PWNED = Path("/tmp/mpiguide-pwned")  # what the hostile strings of the cases try to create
DEFAULT_RUN = {"config": "validate", "catalogue": "catalogue", "kernel_csv": "kernel"}
PATTERNS = {"config": "*.yaml", "catalogue": "*.yaml", "kernel_csv": "*.csv", "cli": "*.args"}
RUNS = ("validate", "catalogue", "kernel", "kernel-cli", "mpiguide")
KERNEL_NPROCS = 2
GOOD_KERNEL_INPUT = "exp_id,op,nrep\n0,empty,2\n"
DEFAULT_CONFIG = "config/config.yaml"
DUPLICATE_KEY_CASE = HERE / "config" / "duplicate_mpi_name.yaml"  # its second `openmpi`: line 10


@dataclass(frozen=True)
class Case:
    path: Path
    run: str
    what: str
    expect: tuple[str, ...]
    exit: int
    snakemake: bool
    defect: str | None
    snakemake_defect: str | None
    body: bytes  # the file without its `#` header lines

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"

    @classmethod
    def parse(cls, path: Path) -> Case:
        lines = path.read_bytes().splitlines(keepends=True)
        size = next((i for i, line in enumerate(lines) if not line.startswith(b"#")), len(lines))
        header = [line.decode("utf-8").rstrip("\n") for line in lines[:size]]
        body = b"".join(lines[size:])
        fields: dict[str, list[str]] = {}
        for line in header[1:]:
            key, sep, value = line.removeprefix("# ").partition(": ")
            assert sep, f"{path}: header line {line!r} is not '# key: value'"
            fields.setdefault(key, []).append(value)
        unknown = set(fields) - {"run", "expect", "exit", "also", "defect", "snakemake-defect"}
        assert not unknown, f"{path}: unknown header keys {sorted(unknown)}"
        run = fields.get("run", [DEFAULT_RUN.get(path.parent.name, "")])[0]
        assert run in RUNS, f"{path}: '# run:' must be one of {RUNS}"
        assert fields.get("expect"), f"{path}: no '# expect:' line"
        return cls(
            path=path,
            run=run,
            what=header[0].removeprefix("# "),
            expect=tuple(fields["expect"]),
            exit=int(fields.get("exit", ["2"])[0]),
            snakemake="snakemake" in fields.get("also", []),
            defect=fields.get("defect", [None])[0],
            snakemake_defect=fields.get("snakemake-defect", [None])[0],
            body=body,
        )


CASES = [
    Case.parse(path)
    for category, pattern in PATTERNS.items()
    for path in sorted((HERE / category).glob(pattern))
]
SNAKEMAKE_CASES = [case for case in CASES if case.snakemake]


def params(cases: list[Case], defect: Callable[[Case], str | None]) -> list[Any]:
    return [
        pytest.param(
            case,
            id=case.id,
            marks=[
                *([pytest.mark.xfail(strict=True, reason=why)] if (why := defect(case)) else []),
                *([pytest.mark.kernel] if uses_mpi(case) else []),
            ],
        )
        for case in cases
    ]


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    places: dict[str, str]  # placeholder -> value
    leftovers: list[str]  # files in the case's directory after the run, its input excepted

    def fill(self, text: str) -> str:
        return fill(text, self.places)


def fill(text: str, places: dict[str, str]) -> str:
    """`text` with every `{name}` of `places` replaced (str.format would trip on JSON braces)."""
    for name, value in places.items():
        text = text.replace("{" + name + "}", value)
    return text


def run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, errors="replace", timeout=120,
        check=False,
    )  # fmt: skip


def run_mpiguide(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m mpiguide ARGV` run in `cwd` without starting an interpreter per case: the
    entry point's main with stdout and stderr of its own (an escaping exception is printed as
    the interpreter would print it). Start-up cost ten times the check itself; the entry point
    as a process is tested in tests/unit/cli/test_cli.py."""
    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exit_:  # argparse's usage errors
                code = exit_.code if isinstance(exit_.code, int) else 1
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        os.chdir(previous)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


class Runner:
    """Runs one case in its own directory below `root`."""

    def __init__(self, root: Path, kernel: Kernel | None) -> None:
        self.root = root
        self.kernel = kernel
        self.good_input = root / "good.csv"
        self.good_input.write_text(GOOD_KERNEL_INPUT)
        self.mpi_slots = threading.Semaphore(2)  # two launches of 2 ranks at a time

    def __call__(self, case: Case) -> Outcome:
        tmp = self.root / case.id.replace("/", "-")
        tmp.mkdir()
        places = {
            "tmp": str(tmp), "in": str(self.good_input), "out": str(tmp / "OUT.csv"),
            "missing": str(tmp / "missing"), "config": str(GOOD_CONFIG), "data": str(CLI_DATA),
            "file": str(case.path),
        }  # fmt: skip
        if case.run == "kernel":
            places["file"] = str(tmp / f"{case.path.stem}.csv")
            Path(places["file"]).write_bytes(case.body)
            argv = [places["file"], places["out"]]
        elif case.run in ("kernel-cli", "mpiguide"):
            argv = shlex.split(fill(case.body.decode("utf-8").strip(), places))
        elif case.run == "validate":
            argv = ["validate", "--configfile", places["file"]]
        else:
            argv = ["validate", "--configfile", str(GOOD_CONFIG), "--catalogue", places["file"]]

        if uses_mpi(case):
            assert self.kernel is not None, f"{case.id} runs the kernel"
            with self.mpi_slots:
                result = run(
                    self.kernel.command(KERNEL_NPROCS, argv),
                    tmp,
                    self.kernel.mpi.environment(KERNEL_NPROCS),
                )
        else:
            result = run_mpiguide(argv, tmp)
        leftovers = sorted(p.name for p in tmp.iterdir() if str(p) != places["file"])
        return Outcome(result.returncode, result.stdout, result.stderr, places, leftovers)


# Values that a shell would act on if they reached it unquoted; each names its own marker file.
HOSTILE_ENV = {
    "MPIGUIDE_SUBST": "$(touch {pwned}-subst)",
    "MPIGUIDE_TICKS": "`touch {pwned}-ticks`",
    "MPIGUIDE_SEMI": "x; touch {pwned}-semi",
    "MPIGUIDE_QUOTES": "'\"; touch {pwned}-quotes; echo \"'",
    "MPIGUIDE_NEWLINE": "x\ntouch {pwned}-newline",
}
HOSTILE_LAUNCHER = "env 'MPIGUIDE_LAUNCHER=$(touch {pwned}-launcher)' mpirun.openmpi"


@dataclass(frozen=True)
class Hostile:
    """A valid campaign whose env values and launcher are hostile strings."""

    project: Path
    pwned: Path  # prefix of the marker files the strings try to create
    env: dict[str, str]  # the hostile part of the entry's env

    @classmethod
    def create(cls, root: Path) -> Hostile:
        pwned = root / "pwned"
        env = {key: value.replace("{pwned}", str(pwned)) for key, value in HOSTILE_ENV.items()}
        config = yaml.safe_load(GOOD_CONFIG.read_text())
        config.update(runs=8, nrep=2)
        config["mpi"]["openmpi"] = {
            "mpicc": "mpicc.openmpi",
            "launcher": HOSTILE_LAUNCHER.replace("{pwned}", str(pwned)),
            "env": {**OPENMPI_ROOT_ENV, **env},
        }
        return cls(new_project(root / "project", config), pwned, env)


def uses_mpi(case: Case) -> bool:
    return case.run.startswith("kernel")


def run_cases(runner: Runner, cases: list[Case], workers: int) -> dict[str, Any]:
    """The outcome of each case, and whether any hostile string of theirs ran a command."""
    PWNED.unlink(missing_ok=True)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = dict(zip([c.id for c in cases], pool.map(runner, cases), strict=True))
    return {"cases": outcomes, "pwned": PWNED.exists()}


# The cases run by kind, so that a selection without the kernel or workflow markers starts neither
# MPI nor Snakemake: python -m mpiguide cases, kernel cases, Snakemake dry runs.
@pytest.fixture(scope="module")
def cli_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bad_inputs_cli")
    runner = Runner(root, kernel=None)
    # one at a time: run_mpiguide changes the working directory and redirects output
    return run_cases(runner, [case for case in CASES if not uses_mpi(case)], workers=1)


@pytest.fixture(scope="module")
def kernel_outcomes(
    kernel_for: Callable[[str], Kernel], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bad_inputs_kernel")
    runner = Runner(root, kernel_for("openmpi"))
    return run_cases(runner, [case for case in CASES if uses_mpi(case)], workers=8)


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    root = tmp_path_factory.mktemp("bad_inputs_good")
    return run_mpiguide(["validate", "--configfile", str(GOOD_CONFIG)], root)


@pytest.fixture(scope="module")
def snakemake_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every snakemake run of a config case, the hostile campaign's and the default config's."""
    PWNED.unlink(missing_ok=True)
    root = tmp_path_factory.mktemp("bad_inputs_snakemake")
    project = new_project(root / "project", yaml.safe_load(GOOD_CONFIG.read_text()))
    hostile = Hostile.create(root / "hostile")
    # the demo config a plain `snakemake` reads, with an `mpi` entry given twice
    default_config = new_project(root / "default_config", yaml.safe_load(GOOD_CONFIG.read_text()))
    (default_config / DEFAULT_CONFIG).write_bytes(DUPLICATE_KEY_CASE.read_bytes())
    with ThreadPoolExecutor(max_workers=8) as pool:
        hostile_dry_run = pool.submit(
            snakemake, hostile.project, "-n", "-p", "--cores", "2", check=False
        )
        sm = {
            case.id: pool.submit(snakemake, project, "-n", "--cores", "1", "--configfile",
                                 str(case.path), check=False)
            for case in SNAKEMAKE_CASES
        }  # fmt: skip
        default_dry_run = pool.submit(snakemake, default_config, "-n", "--cores", "1", check=False)
        return {
            "snakemake": {key: future.result() for key, future in sm.items()},
            "project": project,
            "hostile": (hostile, hostile_dry_run.result()),
            "default_config": default_dry_run.result(),
            "pwned": PWNED.exists(),
        }


def test_the_catalogue_covers_every_category() -> None:
    counts = {category: 0 for category in PATTERNS}
    for case in CASES:
        counts[case.path.parent.name] += 1
    assert len(CASES) >= 40 and all(counts.values()), counts
    assert {case.run for case in CASES} == set(RUNS)
    assert len(SNAKEMAKE_CASES) >= 3


def test_the_good_campaign_validates(good: subprocess.CompletedProcess[str]) -> None:
    """The catalogue cases fail for their catalogue's fault, not the campaign's."""
    assert good.returncode == 0, good.stderr
    assert good.stdout.splitlines()[-1].startswith(f"{GOOD_CONFIG}: ok")


@pytest.mark.parametrize("case", params(CASES, lambda case: case.defect))
def test_bad_input_is_refused_clearly(request: pytest.FixtureRequest, case: Case) -> None:
    outcomes = request.getfixturevalue("kernel_outcomes" if uses_mpi(case) else "cli_outcomes")
    out: Outcome = outcomes["cases"][case.id]
    shown = f"{case.what}\nexit {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert out.returncode == case.exit, shown
    for fragment in case.expect:
        assert out.fill(fragment) in out.stderr, shown
    for text in ("Traceback", "MPI_Abort", "MPI_ABORT"):
        assert text not in out.stdout + out.stderr, shown
    first = out.fill(case.expect[0])
    if case.run in ("validate", "catalogue"):
        # one message naming the file first, then the key path (or line)
        assert out.stderr.startswith(f"mpiguide: error: {out.places['file']}"), shown
        assert out.stdout == "", shown
    elif case.run == "kernel":
        assert first.startswith(f"{out.places['file']}:"), f"{case.path}: expect IN.csv:LINE:"
        assert out.stderr.count(f"{out.places['file']}:") == 1, shown  # rank 0 alone reports
    elif case.run == "kernel-cli":
        assert out.stderr.count(first) == 1, shown  # rank 0 alone reports
    else:
        assert out.stdout == "" and "error: " in out.stderr, shown
    assert out.leftovers == [], f"{shown}\nleft behind: {out.leftovers}"  # no OUT.csv


@pytest.mark.workflow
@pytest.mark.parametrize("case", params(SNAKEMAKE_CASES, lambda case: case.snakemake_defect))
def test_the_workflow_reports_a_bad_config_cleanly(
    snakemake_outcomes: dict[str, Any], case: Case
) -> None:
    outcomes = snakemake_outcomes
    result = outcomes["snakemake"][case.id]
    shown = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 1, shown
    assert "Traceback" not in result.stdout + result.stderr, shown
    named = os.path.relpath(case.path, outcomes["project"])
    assert after_profile_notice(result.stderr).startswith(named), shown
    for fragment in case.expect:
        assert fragment in result.stderr, shown


@pytest.mark.workflow
def test_a_key_given_twice_in_the_default_config_is_refused(
    snakemake_outcomes: dict[str, Any],
) -> None:
    """Without --configfile, Snakemake reads config/config.yaml (profiles/default's
    `configfiles`) with plain YAML as well; common.smk reads it again strictly."""
    result = snakemake_outcomes["default_config"]
    shown = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 1, shown
    assert after_profile_notice(result.stderr).startswith(
        f"{DEFAULT_CONFIG}:10: invalid YAML: key 'openmpi' is given twice\n"
    ), shown
    assert "Traceback" not in result.stdout + result.stderr, shown


@pytest.mark.parametrize(
    "outcomes",
    [
        "cli_outcomes",
        pytest.param("kernel_outcomes", marks=pytest.mark.kernel),
        pytest.param("snakemake_outcomes", marks=pytest.mark.workflow),
    ],
)
def test_no_hostile_string_ran_a_command(request: pytest.FixtureRequest, outcomes: str) -> None:
    assert not request.getfixturevalue(outcomes)["pwned"]


def run_commands(dry_run: str) -> list[str]:
    """The shell commands of the run jobs that `snakemake -n -p` prints."""
    commands = []
    for block in dry_run.split("\n\n"):
        if "rule run_openmpi:" in block:
            commands.append(block.split("Shell command: ", 1)[1])
    return commands


@pytest.mark.kernel
@pytest.mark.workflow
def test_env_and_launcher_values_reach_the_shell_quoted(
    kernel_for: Callable[[str], Kernel], snakemake_outcomes: dict[str, Any]
) -> None:
    """A campaign whose env values and launcher hold `$(…)`, backticks, `;`, quotes and newlines
    validates (values are not names), the dry run prints them quoted, and running the printed
    command with bash runs the kernel with every value intact and creates no marker file."""
    kernel = kernel_for("openmpi")
    hostile, dry = snakemake_outcomes["hostile"]
    project, pwned, env = hostile.project, hostile.pwned, hostile.env
    assert dry.returncode == 0, dry.stdout + dry.stderr
    commands = run_commands(dry.stdout)
    assert len(commands) == 8, dry.stdout
    command = commands[0]
    for key, value in env.items():
        assert shlex.quote(f"{key}={value}") in command
    assert shlex.quote(f"MPIGUIDE_LAUNCHER=$(touch {pwned}-launcher)") in command

    # What the job would run, first with a probe in place of the launcher and the kernel ...
    launcher_at = command.index(" mpirun.openmpi -n ")
    probe = (
        "import json, os; "
        "print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('MPIGUIDE_')}))"
    )
    seen = subprocess.run(
        ["bash", "-c", f"{command[:launcher_at]} {shlex.quote(PYTHON)} -c {shlex.quote(probe)}"],
        cwd=project, capture_output=True, text=True, check=True,
    )  # fmt: skip
    launcher_value = f"$(touch {pwned}-launcher)"
    assert json.loads(seen.stdout) == {**env, "MPIGUIDE_LAUNCHER": launcher_value}

    # ... then as printed, with the kernel and a tiny input where the job expects them.
    words = shlex.split(command.split(" > ", 1)[0])
    binary = Path(next(word for word in words if word.endswith("mpiguide-bench")))
    infile, outfile = Path(words[-2]), Path(words[-1])
    for path in (binary, infile, outfile):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
    (project / binary).symlink_to(kernel.binary)
    (project / infile).write_text(GOOD_KERNEL_INPUT)
    log = command.rsplit(" > ", 1)[1].split()[0]
    (project / log).parent.mkdir(parents=True, exist_ok=True)
    job = subprocess.run(["bash", "-c", command], cwd=project, timeout=120, check=False)
    assert job.returncode == 0, (project / log).read_text()
    assert (project / outfile).exists()
    assert sorted(pwned.parent.glob("pwned*")) == []
