"""The CLI the rules call: argument checks, exit codes, one-line errors without traceback."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mpiguide.cli import COMMANDS, main
from mpiguide.cli.arguments import Role, existing_directory, existing_file
from mpiguide.core.package_data import GUIDELINE_CATALOGUE

REPO = Path(__file__).resolve().parents[3]
CATALOGUE = GUIDELINE_CATALOGUE
SPEC = {"nrep": 4, "experiments": [{"op": ["allgather", "bcast"], "msg_size": [8, 64]}]}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_prints_ok(capsys: pytest.CaptureFixture[str]) -> None:
    config = REPO / "config" / "config.yaml"
    code, out, _ = run(["validate", "--config", str(config)], capsys)
    assert code == 0
    assert out.splitlines()[-1].startswith(f"{config}: ok")


def test_gate_on_a_results_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What a CI job after the campaign types: the campaign's results, not its tests.csv."""
    results = tmp_path / "results" / "demo"
    (results / "guidelines").mkdir(parents=True)
    tests = results / "guidelines" / "tests.csv"
    tests.write_text("guideline,group,verdict\nGL4,0,violated\nGL4,1,holds\nGL7,0,undecided\n")
    gate = ["gate", "--results", str(results)]
    code, out, err = run([*gate, "--fail-on", "violated"], capsys)
    assert (code, out) == (3, "mpiguide gate: 3 tests: 1 violated, 1 holds, 1 undecided\n")
    assert err == "mpiguide: failing: --fail-on violated: 1 violated\n"
    assert run([*gate, "--fail-on", "never"], capsys)[0] == 0
    # the results' guidelines/ names the same file; --tests stays as it was
    assert (
        run(["gate", "--results", str(results / "guidelines"), "--fail-on", "violated"], capsys)[0]
        == 3
    )
    assert run(["gate", "--tests", str(tests), "--fail-on", "violated"], capsys)[0] == 3
    code, _, err = run([*gate, "--fail-on", "never", "--out", str(tests)], capsys)
    assert (code, err) == (
        2,
        f"mpiguide: error: --out {tests}: lies in --results {results}, a directory of inputs; "
        "refusing to write there\n",
    )
    code, _, err = run(
        ["gate", "--results", str(tests), "--fail-on", "never", "--out", str(tests)], capsys
    )
    assert (code, err) == (
        2,
        f"mpiguide: error: --out {tests}: is the input --results {tests}; "
        "refusing to overwrite it\n",
    )
    code, _, err = run(["gate", "--results", str(tmp_path), "--fail-on", "violated"], capsys)
    assert (code, err) == (
        2,
        f"mpiguide: error: {tmp_path}: no tests.csv (written by `mpiguide check`)\n",
    )
    code, _, err = run([*gate, "--tests", str(tests)], capsys)
    assert code == 2 and "not allowed with argument" in err
    code, _, err = run(["gate", "--fail-on", "violated"], capsys)
    assert code == 2 and "one of the arguments --tests --results is required" in err


def test_grid_then_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "grid.csv"
    assert run(["grid", "--config-json", json.dumps(SPEC), "--out", str(grid)], capsys)[0] == 0
    assert len(grid.read_text().splitlines()) == 1 + 4
    out = tmp_path / "inputs" / "openmpi" / "1x2" / "run00.csv"
    argv = ["inputs", "--grid", str(grid), "--seed", "3", "--mpi", "openmpi", "--nodes", "1",
            "--ppn", "2", "--run", "00", "--out", str(out)]  # fmt: skip
    assert run(argv, capsys) == (0, "", "")
    # the grid's rows; without interleaved, warmed-up or algorithm experiments the input leaves
    # `interleave`, `warmup` and `algorithm` (the last columns, 1, 0 and empty on every row) to
    # the kernel's defaults
    rows = [line.removesuffix(",interleave,warmup,algorithm").removesuffix(",1,0,")
            for line in grid.read_text().splitlines()]  # fmt: skip
    assert sorted(out.read_text().splitlines()) == sorted(rows)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["grid", "--config-json", "{nrep: 1}", "--out", "g.csv"],
         "mpiguide: error: --config-json: invalid JSON"),
        (["grid", "--config-json", "[]", "--out", "g.csv"],
         "mpiguide: error: --config-json: expected a JSON object"),
        (["grid", "--config-json", '{"nrep": 1, "experiments": [{"op": "bcats"}]}', "--out", "g"],
         "mpiguide: error: --config-json: experiments[0].op: unknown operation 'bcats'"),
        (["grid", "--config-json", '{"nrep": 0, "experiments": []}', "--out", "g.csv"],
         "mpiguide: error: --config-json: experiments: [] should be non-empty"),
        (["check", "--medians", __file__, "--catalogue", __file__, "--guidelines-json", "{}",
          "--analysis-json", "{}", "--outdir", "d"],
         "mpiguide: error: --guidelines-json: expected a JSON array"),
        (["validate", "--config", "missing.yaml"], "mpiguide: error: missing.yaml: cannot read"),
        # a bad analysis option names the flag it came from (the rules pass the config's values)
        (["check", "--medians", __file__, "--catalogue", str(CATALOGUE), "--guidelines-json",
          "[]", "--analysis-json", '{"p_thres": 2}', "--outdir", "d"],
         "mpiguide: error: --analysis-json: analysis.p_thres is 2; allowed: a number in (0, 1)"),
        (["fit", "--medians", __file__, "--models-json", "[]",
          "--analysis-json", '{"varied": "colour"}', "--out", "d"],
         "mpiguide: error: --analysis-json: analysis.varied is 'colour'; allowed: one of op,"),
    ],
)  # fmt: skip
def test_errors_exit_2_with_one_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(message)
    assert "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["inputs", "--grid", __file__, "--seed", "1", "--mpi", "a;b", "--nodes", "1",
          "--ppn", "2", "--run", "0", "--out", "x"], "argument --mpi: 'a;b' is not a name"),
        (["inputs", "--grid", __file__, "--seed", "1", "--mpi", "a", "--nodes", "0", "--ppn", "2",
          "--run", "0", "--out", "x"], "argument --nodes: 0 is less than 1"),
        (["inputs", "--grid", __file__, "--seed", "x", "--mpi", "a", "--nodes", "1", "--ppn", "2",
          "--run", "0", "--out", "x"], "argument --seed: 'x' is not an integer"),
        (["inputs", "--grid", "missing.csv", "--seed", "1", "--mpi", "a", "--nodes", "1",
          "--ppn", "2", "--run", "0", "--out", "x.csv"],
         "argument --grid: no such file: missing.csv"),
        (["aggregate", "--grid", __file__, "--raw-root", "nowhere", "--inputs-root", ".",
          "--timings", "t", "--medians", "m", __file__],
         "argument --raw-root: no such directory: nowhere"),
        (["plot", "--timings", "t.parquet", "--tests", __file__, "--analysis-json", "{}",
          "--outdir", "d"], "argument --timings: no such file: t.parquet"),
        (["grid", "--out", "x"], "the following arguments are required: --config-json"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)  # fmt: skip
def test_bad_flags_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2 and message in err


def test_an_unwritable_output_exits_1_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where the output's directory should be
    argv = ["grid", "--config-json", json.dumps(SPEC), "--out", str(blocker / "grid.csv")]
    code, out, err = run(argv, capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"mpiguide: error: {blocker}") and err.count("\n") == 1


def test_python_dash_m_entry_point(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mpiguide", "grid", "--config-json", '{"nrep": 1}', "--out", "g"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        "mpiguide: error: --config-json: (top level): 'experiments' is a required property\n"
    )


def test_an_output_whose_temporary_cannot_be_created_names_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / ("g" * 250)  # a valid name; "<name>.tmp-<pid>" is too long
    argv = ["grid", "--config-json", json.dumps(SPEC), "--out", str(out)]
    code, _, err = run(argv, capsys)
    assert (code, err) == (1, f"mpiguide: error: {out}: File name too long\n")


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full")
def test_a_full_disk_for_the_messages_keeps_the_exit_status() -> None:
    """stderr (a job's log) or stdout on a full disk: the exit status still tells, and no
    traceback about the stream itself."""
    config = str(REPO / "config" / "config.yaml")
    with open("/dev/full", "w") as full:
        refused = subprocess.run(
            [sys.executable, "-m", "mpiguide", "validate", "--config", "/nonexistent.yaml"],
            stderr=full, stdout=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
        valid = subprocess.run(
            [sys.executable, "-m", "mpiguide", "validate", "--config", config],
            stdout=full, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    assert (refused.returncode, refused.stdout) == (2, "")
    assert valid.returncode == 1
    assert (
        valid.stderr.startswith("mpiguide: error: ") and "No space left on device" in valid.stderr
    )
    assert "Traceback" not in valid.stderr


def test_an_output_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An atomic write renames over its output: a device or a directory would be replaced."""
    spec = json.dumps({"nrep": 5, "experiments": [{"op": "allgather", "msg_size": 8}]})
    code, _, err = run(["grid", "--config-json", spec, "--out", str(tmp_path)], capsys)
    assert code == 2
    assert err == f"mpiguide: error: --out {tmp_path}: exists and is not a regular file\n"


def test_every_path_a_command_takes_is_declared_read_or_written() -> None:
    """The guard against writing over an input works from the declarations: a path option
    declared as neither input nor output would escape it."""
    paths = (Path, existing_file, existing_directory)
    undeclared = [
        (command.name, option.flag)
        for command in COMMANDS
        for option in command.options
        if option.settings.get("type") in paths and option.role is Role.NONE
    ]
    assert undeclared == []


def test_an_output_directory_whose_files_are_named_may_hold_the_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cost writes its files beside tests.csv in the workflow: only those files are guarded."""
    (tmp_path / "tests.csv").write_text("guideline\n")
    (tmp_path / "timings.parquet").write_text("")
    code, _, err = run(["cost", "--timings", str(tmp_path / "timings.parquet"),
                        "--tests", str(tmp_path / "tests.csv"), "--runs-json", "5",
                        "--outdir", str(tmp_path)], capsys)  # fmt: skip
    assert code == 2
    assert "not a range of runs" in err
