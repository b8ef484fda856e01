"""Campaign configs for tests that check one semantic rule: schema-validated first, defaults
filled in, as Snakemake and `mpiguide validate` hand them to check_campaign."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mpiguide.campaign.config import check_campaign
from mpiguide.campaign.schema import load_schema, validate_schema

REPO = Path(__file__).resolve().parents[1]


def check_config(config: dict[str, Any], catalogue: dict[str, Any], source: str) -> None:
    """validate_schema, then check_campaign, as every real caller does."""
    validate_schema(config, load_schema(), source)
    check_campaign(config, catalogue, source)
