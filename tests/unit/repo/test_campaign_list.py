"""config/README.md lists every campaign of config/campaigns/: a campaign added without a line
there is one a user cannot find."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CAMPAIGNS = sorted((REPO / "config" / "campaigns").glob("*.yaml"))
README = REPO / "config" / "README.md"


def test_there_are_campaigns() -> None:
    assert CAMPAIGNS


@pytest.mark.parametrize("campaign", CAMPAIGNS, ids=lambda path: path.name)
def test_config_readme_names_the_campaign(campaign: Path) -> None:
    named = re.compile(rf"`campaigns/{re.escape(campaign.name)}`")
    assert named.search(README.read_text(encoding="utf-8")), (
        f"config/README.md does not name `campaigns/{campaign.name}`"
    )
