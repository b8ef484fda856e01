"""The self-test's variants are the campaign of selftest.yaml but for their name and one key:
selftest-interleave.yaml `interleave: 5`, so that the two measure the comparisons within a
launch side by side (docs/selftest.md#interleaved-repetitions-within-a-launch);
selftest-adaptive.yaml `runs: {min: 5, max: 30, step: 5}`, the adaptive campaign against the
fixed one."""

from __future__ import annotations

from pathlib import Path

import yaml

from mpiguide.campaign.config import load_campaign
from mpiguide.plan.grid import expand

CAMPAIGNS = Path(__file__).resolve().parents[2] / "config" / "campaigns"
SELFTEST = CAMPAIGNS / "selftest.yaml"
INTERLEAVED = CAMPAIGNS / "selftest-interleave.yaml"
ADAPTIVE = CAMPAIGNS / "selftest-adaptive.yaml"


def test_the_interleaved_selftest_is_the_selftest_with_interleave_5() -> None:
    plain = yaml.safe_load(SELFTEST.read_text())
    interleaved = yaml.safe_load(INTERLEAVED.read_text())
    assert interleaved["campaign"] == "selftest-interleave"
    assert [block.pop("interleave") for block in interleaved["experiments"]] == [5] * len(
        plain["experiments"]
    )
    interleaved["campaign"] = plain["campaign"]
    assert interleaved == plain


def test_the_interleaved_selftest_validates_and_interleaves_every_experiment() -> None:
    config = load_campaign(INTERLEAVED)
    rows = expand(config, str(INTERLEAVED))
    assert len(rows) == len(expand(load_campaign(SELFTEST), str(SELFTEST)))
    assert {row["interleave"] for row in rows} == {5}


def test_the_adaptive_selftest_is_the_selftest_with_runs_5_to_30() -> None:
    plain = yaml.safe_load(SELFTEST.read_text())
    adaptive = yaml.safe_load(ADAPTIVE.read_text())
    assert adaptive.pop("campaign") == "selftest-adaptive"
    assert adaptive.pop("runs") == {"min": 5, "max": 30, "step": 5}
    assert plain.pop("runs") == 30
    plain.pop("campaign")
    assert adaptive == plain
    load_campaign(ADAPTIVE)
