"""`mpiguide validate` reads a campaign from the options snakemake takes (--configfile, --config
KEY=VALUE as Snakemake reads it; --config FILE as before), and checks what its runs need on this
machine, as the workflow does before its first job."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mpiguide.campaign import executor
from mpiguide.cli import main

REPO = Path(__file__).resolve().parents[3]
GOOD = REPO / "tests" / "bad_inputs" / "good_campaign.yaml"  # this machine's Open MPI
MPINPC = REPO / "config" / "campaigns" / "mpinpc.yaml"  # has a `local:` block


def validate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    try:
        code = main(["validate", *argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def campaign_file(folder: Path, name: str = "c.yaml", **changes: object) -> Path:
    config = yaml.safe_load(GOOD.read_text()) | changes
    path = folder / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_the_words_snakemake_takes_and_the_older_ones_read_the_same_campaign(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    mpinpc = str(MPINPC.relative_to(REPO))
    paper = validate(capsys, "--configfile", mpinpc, "--elsewhere")
    local = validate(capsys, "--configfile", mpinpc, "--config", "scale=local")
    assert paper[0] == local[0] == 0
    assert paper[1] != local[1]
    for older in (["--config", mpinpc, "--config", "scale=local"], ["--config", mpinpc,
                  "--scale", "local"], ["--config", mpinpc, "scale=local"]):  # fmt: skip
        assert validate(capsys, *older) == local, older


def test_entries_replace_the_file_s_values_as_snakemake_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = campaign_file(tmp_path)
    code, out, _ = validate(capsys, "--configfile", str(path), "--config", "runs=3", "nrep=7")
    assert code == 0 and out[2] == "  runs: 3 per mpi entry and deployment; launches: 3"
    # Snakemake reads a value in braces as YAML whose scalars stay strings: the schema refuses
    # the string "4" where the file's `runs: {min: 4, ...}` would be an integer
    code, _, err = validate(capsys, "--configfile", str(path), "--config", "runs={min: 4, max: 8}")
    assert code == 2 and err[0].startswith(f"mpiguide: error: {path}: runs")
    # a mapping is merged into the file's, key by key: the entry keeps its mpicc
    nested = "mpi={openmpi: {launcher: mpirun.gone}}"
    code, out, err = validate(capsys, "--configfile", str(path), "--config", nested)
    assert (code, out) == (2, [])
    assert err[0] == (
        f"mpiguide: error: {path}: mpi.openmpi.launcher: 'mpirun.gone': not on PATH; install "
        "it, give its path, or load it with the entry's `modules:`"
    )


def test_several_files_merge_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = campaign_file(tmp_path)
    (tmp_path / "more.yaml").write_text("runs: 4\nnrep: 3\n")
    code, out, _ = validate(capsys, "--configfile", str(base), str(tmp_path / "more.yaml"))
    assert code == 0
    assert out[0] == f"{base}, {tmp_path / 'more.yaml'}:"
    assert out[2] == "  runs: 4 per mpi entry and deployment; launches: 4"
    (tmp_path / "list.yaml").write_text("- runs\n")
    code, _, err = validate(capsys, "--configfile", str(base), str(tmp_path / "list.yaml"))
    assert code == 2 and err[0].startswith(f"mpiguide: error: {tmp_path / 'list.yaml'}: ")


def test_a_word_that_names_a_file_is_a_campaign_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = campaign_file(tmp_path, "runs=2.yaml")
    code, out, _ = validate(capsys, "--config", str(odd), "runs=3")
    assert code == 0 and out[2] == "  runs: 3 per mpi entry and deployment; launches: 3"


def test_entries_after_two_configs_are_refused_as_snakemake_would_drop_some(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(campaign_file(tmp_path))
    code, out, err = validate(capsys, "--config", path, "runs=3", "--config", "nrep=7")
    assert (code, out) == (2, [])
    assert err == [
        "mpiguide: error: --config runs=3 ... --config nrep=7: Snakemake keeps only the last "
        "--config; give every KEY=VALUE after one: --config runs=3 nrep=7"
    ]
    code, _, err = validate(capsys, "--config", "runs=3")
    assert (code, err) == (
        2,
        ["mpiguide: error: validate: name the campaign file: --configfile FILE"],
    )


def test_a_missing_mpicc_is_refused_unless_the_campaign_runs_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mpi = {"intel": {"mpicc": "mpicc.intelmpi", "launcher": "env I_MPI_X=1 mpirun.openmpi"}}
    path = campaign_file(tmp_path, mpi=mpi)
    code, out, err = validate(capsys, "--configfile", str(path))
    assert (code, out) == (2, [])
    assert err == [
        f"mpiguide: error: {path}: mpi.intel.mpicc: 'mpicc.intelmpi': not on PATH; install it, "
        "give its path, or load it with the entry's `modules:`",
        "(a campaign that runs on another machine: validate --elsewhere)",
    ]
    code, out, err = validate(capsys, "--configfile", str(path), "--elsewhere")
    assert (code, err, out[-1]) == (0, [], f"{path}: ok")
    modules = {"intel": {**mpi["intel"], "modules": ["intel-mpi/2021"]}}
    code, out, _ = validate(capsys, "--configfile", str(campaign_file(tmp_path, mpi=modules)))
    assert code == 0  # a module brings its commands: nothing to look up before it is loaded


def test_under_launch_slurm_a_controller_must_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(campaign_file(tmp_path))
    monkeypatch.setattr(executor, "controller_problem", lambda: "no SLURM controller answers")
    code, out, err = validate(capsys, "--configfile", path, "--config", "launch=slurm")
    assert (code, out) == (2, [])
    assert err[0] == f"mpiguide: error: {path}: launch: slurm: no SLURM controller answers"
    assert validate(capsys, "--configfile", path, "--config", "launch=slurm", "--elsewhere")[0] == 0
    assert validate(capsys, "--configfile", path)[0] == 0  # launch: local asks no controller
    monkeypatch.setattr(executor, "controller_problem", lambda: None)
    assert validate(capsys, "--configfile", path, "--config", "launch=slurm")[0] == 0
