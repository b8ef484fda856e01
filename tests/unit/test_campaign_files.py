"""config/campaigns/selftest-interleave.yaml is the self-test with interleaved repetitions: the
campaign of selftest.yaml but for its name and `interleave: 5`, so that the two measure the
comparisons within a launch side by side (README.md#interleaved-repetitions-within-a-launch)."""

from __future__ import annotations

from pathlib import Path

import yaml

from mpiguide.campaign.config import load_campaign
from mpiguide.plan.grid import expand

CAMPAIGNS = Path(__file__).resolve().parents[2] / "config" / "campaigns"
SELFTEST = CAMPAIGNS / "selftest.yaml"
INTERLEAVED = CAMPAIGNS / "selftest-interleave.yaml"


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
