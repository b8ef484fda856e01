"""The command line explains itself: --version, help for every option with its real default,
and `validate`'s account of a campaign."""

from __future__ import annotations

import argparse
import copy
import re
from importlib.metadata import version
from pathlib import Path

import pytest

from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.campaign.config import load_campaign
from mpiguide.campaign.summary import count_tests, summarise, warnings
from mpiguide.cli import build_parser, main
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.plan.grid import build_grid
from mpiguide.selftest.power import RESAMPLES

REPO = Path(__file__).resolve().parents[2]


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
    path = REPO / "config" / "campaigns" / "ci-example.yaml"
    assert main(["validate", "--config", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: ok"
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
    assert main(["validate", "--config", str(path)]) == 0
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
    counts = count_tests(config, grid, guidelines)
    # GL4: allgather vs alltoall per topology, ordering and size (cart 3, vonneumann 2 x 3)
    assert counts["GL4"] == 9
    assert sum(summarise(config, guidelines).tests.values()) == sum(counts.values())


def test_warnings_oversubscription_and_too_few_runs() -> None:
    config = campaign("config/config.yaml")
    config["deployments"] = [{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 4}]
    found = warnings(config, cores=2)
    assert len(found) == 1 and found[0].startswith("deployment 1x4: 4 ranks on 2 cores")
    assert warnings(config, cores=4) == []
    slurm = copy.deepcopy(config) | {"launch": "slurm"}
    assert warnings(slurm, cores=2) == []
    ranksum = copy.deepcopy(config)
    ranksum["analysis"] = {**config["analysis"], "test": "ranksum", "p_thres": 0.001}
    ranksum["runs"] = 5  # 1/C(10,5) = 1/252 > 0.001
    (found,) = warnings(ranksum, cores=8)
    assert "1/C(2n,n) = 0.00397" in found and "p_thres 0.001" in found
    ranksum["runs"] = 7  # 1/C(14,7) = 1/3432 < 0.001
    assert warnings(ranksum, cores=8) == []
    single = copy.deepcopy(config) | {"runs": 1}
    (found,) = warnings(single, cores=8)
    assert "at least 2 runs" in found
