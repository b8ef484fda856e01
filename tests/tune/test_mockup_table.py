"""The mock-ups libmpiguide-tune can run are its own table, src/tune/replacements.c; the Python
side (mpiguide.tune.mockup_rules.REPLACEMENTS) is a copy that `tune` uses without building the
library, and is held equal here to what the built library lists when a tuning file names an
unknown mock-up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mpiguide.tune.mockup_rules import NOT_REPLACEABLE, REPLACEMENTS

from .conftest import TuneBuild

pytestmark = pytest.mark.kernel

LISTED = re.compile(r"unknown mock-up 'listing_probe': a rule starts with one of (.+)$", re.M)


def test_replacements_are_the_library_s_table(tune_build: TuneBuild, tmp_path: Path) -> None:
    rules = tmp_path / "unknown.tune"
    rules.write_text("listing_probe ranks=1 bytes=8\n")
    result = tune_build.launch(1, [tune_build.probe, "replaceable", "64"], rules, launcher=False)
    assert result.returncode == 2, result.stderr
    listed = LISTED.search(result.stderr)
    assert listed, result.stderr
    names = listed[1].split(", ")
    assert names == list(REPLACEMENTS), (
        "src/tune/replacements.c's table differs from REPLACEMENTS of "
        "src/mpiguide/tune/mockup_rules.py"
    )
    assert not set(NOT_REPLACEABLE) & set(names)
