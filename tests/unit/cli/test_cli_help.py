"""The command line explains itself: --version, help for every option with its real default,
and `validate`'s account of a campaign."""

from __future__ import annotations

import argparse
import copy
import json
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.campaign import summary
from mpiguide.campaign.config import load_campaign
from mpiguide.campaign.summary import count_tests, summarise, warnings
from mpiguide.cli import build_parser, main
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.plan.grid import build_grid
from mpiguide.selftest.power import RESAMPLES

REPO = Path(__file__).resolve().parents[3]


def options_of(config: dict) -> AnalysisOptions:
    return AnalysisOptions.from_mapping(config["analysis"], "config")


def options() -> list[tuple[str, argparse.Action]]:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [
        (name, action)
        for name, sub in commands.choices.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction)
    ]


def test_every_option_has_help_with_its_real_default() -> None:
    for name, action in options():
        assert action.help, f"{name} {action.option_strings or action.dest}: no help"
        if action.default not in (None, False):
            shown = re.search(r"\(default: ([^)]*)\)", action.help)
            assert shown, f"{name} {action.option_strings}: default {action.default!r} not shown"
            assert shown[1].startswith(str(action.default)) or str(action.default) in shown[1]
    (resamples,) = [a for n, a in options() if n == "selftest" and a.dest == "resamples"]
    assert f"(default: {RESAMPLES})" in (resamples.help or "")


def test_version_is_the_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"mpiguide {version('mpiguide')}\n"


def campaign(path: str) -> dict:
    return load_campaign(REPO / path)


def test_validate_tells_what_the_campaign_is(capsys: pytest.CaptureFixture[str]) -> None:
    """The CI example, sized before a CI runner that has its libraries runs it."""
    path = REPO / "config" / "campaigns" / "ci-example.yaml"
    assert main(["validate", "--configfile", str(path), "--elsewhere"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}:"
    assert out[1] == "  experiments: 16 (8 in the grid x 2 mpi entries x 1 deployment)"
    assert out[2] == "  runs: 4 per mpi entry and deployment; launches: 8"
    assert out[3] == "  tests: 12 (GL4 4, CHANGE-NOT-SLOWER 8)"
    assert out[4].startswith("  kernel time: about ") and "an estimate" in out[4]
    assert out[5].startswith("  a run: about ") and out[5].endswith(" s on any machine")


def test_validate_states_an_adaptive_campaigns_looks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (REPO / "config" / "campaigns" / "ci-example.yaml").read_text()
    path = tmp_path / "adaptive.yaml"
    path.write_text(re.sub(r"(?m)^runs: .*$", "runs: {min: 4, max: 12, step: 4}", text))
    assert main(["validate", "--configfile", str(path), "--elsewhere"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == (
        "  runs: adaptive, decided at 4, 8, 12 runs; at most 12 per mpi entry and deployment "
        "and 24 launches"
    )
    assert out[4].startswith("  kernel time: at most about ")


def test_tests_counted_as_check_pairs_them() -> None:
    config = campaign("config/config.yaml")
    grid = build_grid({"nrep": config["nrep"], "experiments": config["experiments"]}, "c")
    guidelines = resolve(config["guidelines"], load_catalogue(GUIDELINE_CATALOGUE), "c")
    counts = count_tests(config, options_of(config), grid, guidelines)
    # GL4: allgather vs alltoall per topology, ordering and size (cart 3, vonneumann 2 x 3)
    assert counts["GL4"] == 9
    assert sum(summarise(config, options_of(config), guidelines).tests.values()) == sum(
        counts.values()
    )


def test_warnings_oversubscription_and_too_few_runs() -> None:
    config = campaign("config/config.yaml")
    config["deployments"] = [{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4}]
    found = warnings(config, options_of(config), cores=2, seconds=60)
    assert len(found) == 1 and found[0].startswith("deployment 1x4: 4 ranks on 2 cores")
    assert warnings(config, options_of(config), cores=4, seconds=60) == []
    slurm = copy.deepcopy(config) | {"launch": "slurm"}
    assert warnings(slurm, options_of(slurm), cores=2, seconds=60) == []
    ranksum = copy.deepcopy(config)
    ranksum["analysis"] = {**config["analysis"], "test": "ranksum", "p_thres": 0.001}
    ranksum["runs"] = 5  # 1/C(10,5) = 1/252 > 0.001
    (found,) = warnings(ranksum, options_of(ranksum), cores=8, seconds=60)
    assert "1/C(2n,n) = 0.00397" in found and "p_thres 0.001" in found
    ranksum["runs"] = 7  # 1/C(14,7) = 1/3432 < 0.001
    assert warnings(ranksum, options_of(ranksum), cores=8, seconds=60) == []
    single = copy.deepcopy(config) | {"runs": 1}
    (found,) = warnings(single, options_of(single), cores=8, seconds=60)
    assert "at least 2 runs" in found


def test_warnings_a_multi_node_deployment_run_locally() -> None:
    """Under `launch: local` the launcher starts all nodes x ppn ranks on this machine."""
    config = campaign("config/config.yaml")
    config["deployments"] = [{"nodes": 1, "ppn": 2}, {"nodes": 16, "ppn": 4}]
    (found,) = warnings(config, options_of(config), cores=2, seconds=60)
    assert found.startswith("deployment 16x4: 64 ranks on 2 cores (16 nodes' ranks on this one")
    assert warnings(config | {"launch": "slurm"}, options_of(config), cores=2, seconds=60) == []


def test_warnings_a_local_campaign_over_a_day() -> None:
    config = campaign("config/config.yaml")
    (found,) = warnings(config, options_of(config), cores=8, seconds=1000 * 86400)
    assert found.startswith("kernel time: about 1000.0 days estimated (launch: local)")
    assert warnings(config, options_of(config), cores=8, seconds=86400) == []
    assert (
        warnings(config | {"launch": "slurm"}, options_of(config), cores=8, seconds=1000 * 86400)
        == []
    )


def edited(tmp_path: Path, source: str, *edits: tuple[str, str]) -> Path:
    """A copy of the config `source` with each (pattern, replacement) applied to its lines."""
    text = (REPO / source).read_text()
    for pattern, replacement in edits:
        text, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
        assert count == 1, pattern
    path = tmp_path / Path(source).name
    path.write_text(text)
    return path


def validate(
    capsys: pytest.CaptureFixture[str], path: Path, *flags: str
) -> tuple[int, list[str], list[str]]:
    try:
        code = main(["validate", "--configfile", str(path), *flags])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(summary, "available_cores", lambda: 2)


@pytest.mark.usefixtures("two_cores")
def test_validate_ends_ok_only_without_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = REPO / "config" / "campaigns" / "ci-example.yaml"  # 1x2: two ranks on two cores
    code, out, err = validate(capsys, path, "--elsewhere")
    assert (code, err) == (0, [])
    assert out[0] == f"{path}:" and out[-1] == f"{path}: ok"
    assert validate(capsys, path, "--elsewhere", "--strict")[0] == 0


@pytest.mark.usefixtures("two_cores")
def test_validate_64_ranks_on_2_cores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = edited(
        tmp_path, "config/config.yaml", (r"^  - \{nodes: 1, ppn: 2\}$", "  - {nodes: 1, ppn: 64}")
    )
    code, out, err = validate(capsys, path)
    assert code == 0
    assert err == [
        f"mpiguide: warning: {path}: deployment 1x64: 64 ranks on 2 cores (launch: local): "
        "ranks share cores and wait for each other; its timings measure the oversubscription too"
    ]
    assert out[-1] == f"{path}: ok, 1 warning"
    assert not any(line.endswith(": ok") for line in out)
    code, out, err = validate(capsys, path, "--strict")
    assert code == 1
    assert err[-1] == f"mpiguide: error: {path}: 1 warning (--strict)"
    assert not any(": ok" in line for line in out)


@pytest.mark.usefixtures("two_cores")
def test_validate_a_16x4_deployment_run_locally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = edited(
        tmp_path, "config/config.yaml", (r"^  - \{nodes: 1, ppn: 2\}$", "  - {nodes: 16, ppn: 4}")
    )
    code, out, err = validate(capsys, path)
    assert code == 0
    (warning,) = err
    assert warning.startswith(f"mpiguide: warning: {path}: deployment 16x4: 64 ranks on 2 cores")
    assert out[-1] == f"{path}: ok, 1 warning"
    assert validate(capsys, path, "--strict")[0] == 1
    slurm = edited(
        tmp_path,
        "config/config.yaml",
        (r"^runs: 10$", "runs: 10\nlaunch: slurm"),
        (r"^  - \{nodes: 1, ppn: 2\}$", "  - {nodes: 16, ppn: 4}"),
    )
    code, out, err = validate(capsys, slurm, "--strict", "--elsewhere")  # no cluster here
    assert (code, err, out[-1]) == (0, [], f"{slurm}: ok")


def test_validate_a_1000_day_campaign(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A campaign the kernel-time model puts at over 1 000 days on this machine."""
    path = edited(
        tmp_path,
        "config/campaigns/ci-example.yaml",
        (r"^runs: .*$", "runs: 1000"),
        (r"^nrep: .*$", "nrep: 10000000"),
        (r"msg_size: \[8, 4096\]", "msg_size: [8, 1048576]"),
    )
    code, out, err = validate(capsys, path, "--elsewhere")
    assert code == 0
    days = [line for line in err if "more than a day on this machine" in line]
    assert len(days) == 1
    figure = re.search(r"kernel time: about ([0-9.]+) days estimated", days[0])
    assert figure and float(figure[1]) > 1000
    assert f"kernel time: about {figure[1]} days" in "\n".join(out)  # the figure of the account
    assert out[-1] == f"{path}: ok, {len(err)} warning{'s' if len(err) > 1 else ''}"
    assert validate(capsys, path, "--elsewhere", "--strict")[0] == 1


HEAVY_LIBRARIES = ("numpy", "pandas", "scipy", "matplotlib")


def heavy_imports(*arguments: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`mpiguide ARGUMENTS` in a fresh interpreter, and the heavy libraries it imported."""
    program = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: print(json.dumps([m for m in {HEAVY_LIBRARIES!r}"
        " if m in sys.modules]), file=sys.stderr))\n"
        "from mpiguide.cli import main\n"
        f"sys.exit(main({list(arguments)!r}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False
    )
    *_, imported = result.stderr.splitlines()
    return result, json.loads(imported)


def test_validate_refuses_a_schema_error_before_loading_the_analysis(tmp_path: Path) -> None:
    """The schema step runs first: numpy, pandas, scipy and matplotlib are never imported."""
    path = edited(tmp_path, "config/config.yaml", (r"^campaign: demo$", "campaign: de/mo"))
    result, imported = heavy_imports("validate", "--config", str(path))
    assert (result.returncode, imported) == (2, [])
    assert result.stderr.startswith(f"mpiguide: error: {path}: campaign: ")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_load_no_heavy_library(flag: str) -> None:
    result, imported = heavy_imports(flag)
    assert (result.returncode, imported) == (0, [])
    assert result.stdout.startswith("usage: mpiguide" if flag == "--help" else "mpiguide ")
