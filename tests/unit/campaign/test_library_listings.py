"""What a swept entry's library offers is listed once and saved beside the campaign's results:
later readings, the workflow's jobs and analysis-only mode read the saved listing and start no
MPI program; the entry names the workflow makes are refused."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest

from mpiguide.analysis.analysis_types import DecidedBy
from mpiguide.campaign.expansion import RESERVED_ENTRY_NAMES, check_entry_names
from mpiguide.campaign.listings import Listing, Listings, workflow_listing
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINES_SCHEMA
from mpiguide.core.strict_yaml import load_package_yaml

LISTINGS = Path(__file__).parents[1] / "tune" / "algorithm_listings"
RULES = Path(__file__).resolve().parents[3] / "workflow" / "rules"


def fake_ompi_info(tmp_path: Path) -> tuple[str, Path]:
    """A listing program that prints Open MPI 4.1.4's listing and counts its calls."""
    calls = tmp_path / "calls"
    program = tmp_path / "ompi_info"
    listing = LISTINGS / "ompi_info-4.1.4.txt"
    program.write_text(f'#!/bin/sh\necho >> "{calls}"\ncat "{listing}"\n')
    program.chmod(0o755)
    return str(program), calls


def test_the_listing_is_saved_once_and_read_ever_after(tmp_path: Path) -> None:
    program, calls = fake_ompi_info(tmp_path)
    results = tmp_path / "results" / "c"
    saving = Listings.of(results, Listing.SAVE)
    listed = saving.choices("openmpi", "openmpi", program, "c.yaml: mpi.openmpi.info")
    saved = json.loads((results / "library_algorithms" / "openmpi.json").read_text())
    assert (saved["library"], saved["program"]) == ("openmpi", program)
    assert saved["command"][1:] == ["--param", "coll", "tuned", "--level", "9", "--parsable"]
    assert calls.read_text().count("\n") == 1
    for listing in Listing:
        again = Listings.of(results, listing).choices("openmpi", "openmpi", program, "k")
        assert again == listed
    assert calls.read_text().count("\n") == 1  # never run again


def test_a_dry_run_lists_without_saving(tmp_path: Path) -> None:
    program, calls = fake_ompi_info(tmp_path)
    results = tmp_path / "results" / "c"
    Listings.of(results, Listing.RUN).choices("openmpi", "openmpi", program, "k")
    assert calls.exists()
    assert not (results / "library_algorithms").exists()


def test_analysis_only_and_jobs_never_start_the_listing_program(tmp_path: Path) -> None:
    program, calls = fake_ompi_info(tmp_path)
    results = tmp_path / "results" / "c"
    with pytest.raises(ConfigError) as error:
        Listings.of(results, Listing.SAVED_ONLY).choices("openmpi", "openmpi", program, "k")
    assert "library_algorithms/openmpi.json is missing" in str(error.value)
    assert "start no MPI program" in str(error.value)
    assert not calls.exists()


def test_another_program_lists_again_where_it_may(tmp_path: Path) -> None:
    program, calls = fake_ompi_info(tmp_path)
    results = tmp_path / "results" / "c"
    Listings.of(results, Listing.SAVE).choices("openmpi", "openmpi", program, "k")
    other = tmp_path / "other_ompi_info"
    other.write_text(Path(program).read_text())
    other.chmod(0o755)
    with pytest.raises(
        ConfigError, match=r"holds what '.*/ompi_info' listed, not '.*/other_ompi_info'"
    ):
        Listings.of(results, Listing.SAVED_ONLY).choices("openmpi", "openmpi", str(other), "k")
    Listings.of(results, Listing.SAVE).choices("openmpi", "openmpi", str(other), "k")
    assert calls.read_text().count("\n") == 2
    saved = json.loads((results / "library_algorithms" / "openmpi.json").read_text())
    assert saved["program"] == str(other)


def test_a_damaged_listing_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "library_algorithms" / "openmpi.json"
    path.parent.mkdir()
    path.write_text('{"library": "openmpi"')
    with pytest.raises(ConfigError, match=r"openmpi\.json: cannot read the saved listing"):
        Listings(path.parent, Listing.SAVE).choices("openmpi", "openmpi", "ompi_info", "k")
    path.write_text('{"library": "openmpi"}')
    with pytest.raises(ConfigError, match=r"openmpi\.json: not a saved listing"):
        Listings(path.parent, Listing.SAVE).choices("openmpi", "openmpi", "ompi_info", "k")


def test_only_the_invocation_a_user_started_saves() -> None:
    assert workflow_listing(main_process=True, dry_run=False) is Listing.SAVE
    assert workflow_listing(main_process=True, dry_run=True) is Listing.RUN
    assert workflow_listing(main_process=False, dry_run=False) is Listing.SAVED_ONLY


@pytest.mark.parametrize("name", ["openmpi.tuned", "block", "inject_0", "tune_12"])
def test_an_entry_named_as_the_workflow_names_one_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"c\.yaml: mpi\.{re.escape(name)}: a reserved name"):
        check_entry_names({"mpi": {name: {}}}, "c.yaml")
    check_entry_names({"mpi": {"openmpi": {}, "tuned": {}, "blocks": {}, "inject": {}}}, "c")


def test_the_reserved_names_cover_every_rule_the_workflow_names_itself() -> None:
    """Rules named `run_<X>` or `build_<X>` that are not an entry's: an entry named X would
    clash with them."""
    text = "\n".join(path.read_text() for path in RULES.glob("*.smk"))
    fixed = re.findall(r"^\s*rule (?:run|build)_(\w+):", text, re.MULTILINE)
    formatted = re.findall(r'f"(?:run|build)_(\w+)_\{\w+\}"', text)
    examples = [*fixed, *(f"{stem}_0" for stem in formatted)]
    assert examples, "no rule names found: the pattern of the rule files changed"
    for example in examples:
        assert any(pattern.match(example) for pattern, _ in RESERVED_ENTRY_NAMES), example


def test_decided_by_allows_what_the_analysis_types_name() -> None:
    schema = load_package_yaml(GUIDELINES_SCHEMA)
    allowed = schema["$defs"]["guideline"]["properties"]["decided_by"]["enum"]
    assert allowed == list(typing.get_args(DecidedBy))
