"""The self-test's variants are the campaign of selftest.yaml but for their name and one key:
selftest-back-to-back.yaml `interleave: 1` (the self-test interleaves by the campaign default),
so that the two measure the comparisons within a launch side by side
(docs/selftest.md#interleaved-repetitions-within-a-launch);
selftest-adaptive.yaml `runs: {min: 5, max: 30, step: 5}`, the adaptive campaign against the
fixed one."""

from __future__ import annotations

from pathlib import Path

import yaml

from mpiguide.campaign.config import load_campaign
from mpiguide.plan.grid import expand

CAMPAIGNS = Path(__file__).resolve().parents[3] / "config" / "campaigns"
SELFTEST = CAMPAIGNS / "selftest.yaml"
BACK_TO_BACK = CAMPAIGNS / "selftest-back-to-back.yaml"
ADAPTIVE = CAMPAIGNS / "selftest-adaptive.yaml"


def test_the_back_to_back_selftest_is_the_selftest_with_interleave_1() -> None:
    plain = yaml.safe_load(SELFTEST.read_text())
    back_to_back = yaml.safe_load(BACK_TO_BACK.read_text())
    assert back_to_back.pop("campaign") == "selftest-back-to-back"
    assert back_to_back.pop("interleave") == 1
    assert "interleave" not in plain
    plain.pop("campaign")
    assert back_to_back == plain


def test_the_selftest_interleaves_by_default_and_its_copy_does_not() -> None:
    interleaved = expand(load_campaign(SELFTEST), str(SELFTEST))
    back_to_back = expand(load_campaign(BACK_TO_BACK), str(BACK_TO_BACK))
    assert len(interleaved) == len(back_to_back)
    assert {row["interleave"] for row in interleaved} == {5}
    assert {row["interleave"] for row in back_to_back} == {1}


def test_the_adaptive_selftest_is_the_selftest_with_runs_5_to_30() -> None:
    plain = yaml.safe_load(SELFTEST.read_text())
    adaptive = yaml.safe_load(ADAPTIVE.read_text())
    assert adaptive.pop("campaign") == "selftest-adaptive"
    assert adaptive.pop("runs") == {"min": 5, "max": 30, "step": 5}
    assert plain.pop("runs") == 30
    plain.pop("campaign")
    assert adaptive == plain
    load_campaign(ADAPTIVE)
