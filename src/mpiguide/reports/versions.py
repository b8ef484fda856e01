"""Versions compared: per guideline, which verdicts changed between two versions of one MPI
library measured in one campaign (the campaign page's section of that name).

The versions of a library are the campaign's mpi entries with the same `library` (given, or by
their `install`) built apart: a different `mpicc` or `modules`. Entries of one build that differ
only in `env`, `heap` or the like are settings of one version, represented by the first of
them. A library's versions are paired in the order the campaign lists them, each with the next:
list them older first. Each pair is `mpiguide diff` of the campaign's tests.csv with itself,
one entry per side (reports.diff.diff_tests), summed up per guideline
(reports.diff.guideline_changes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pandas as pd

from mpiguide.core.errors import DataError
from mpiguide.reports.diff import diff_tests, guideline_changes


@dataclass(frozen=True)
class VersionPair:
    """Two versions of one library: entry `older` listed before entry `newer`."""

    library: str
    older: str
    newer: str


def version_pairs(entries: Mapping[str, Mapping[str, Any]]) -> list[VersionPair]:
    """The pairs of versions among a campaign's mpi entries (its `mpi:`, installs filled in),
    library by library in the order of their first entries."""
    builds: dict[str, dict[tuple[str, tuple[str, ...]], str]] = {}
    for name, entry in entries.items():
        library = entry.get("library")
        if library is None:
            continue
        build = (str(entry.get("mpicc", "")), tuple(entry.get("modules") or ()))
        builds.setdefault(str(library), {}).setdefault(build, name)
    pairs = []
    for library, versions in builds.items():
        names = list(versions.values())
        pairs += [VersionPair(library, a, b) for a, b in pairwise(names)]
    return pairs


def pairs_as_json(pairs: Sequence[VersionPair]) -> list[dict[str, str]]:
    """The pairs as `mpiguide page --versions-json` reads them."""
    return [{"library": p.library, "older": p.older, "newer": p.newer} for p in pairs]


def pairs_from_json(value: Any, source: str) -> list[VersionPair]:
    """pairs_as_json read back; a DataError names what is wrong."""
    keys = ("library", "older", "newer")
    if not isinstance(value, list) or not all(
        isinstance(item, dict) and sorted(item) == sorted(keys) for item in value
    ):
        raise DataError(f"{source}: expected a list of {{library, older, newer}}")
    return [VersionPair(*(str(item[key]) for key in keys)) for item in value]


@dataclass(frozen=True)
class VersionChanges:
    """What changed from one version to the next: per guideline (GUIDELINE_COLUMNS of
    reports.diff), the guidelines tested on one side only, or why the pair was not compared."""

    pair: VersionPair
    guidelines: pd.DataFrame
    one_sided: tuple[list[str], list[str]] = ([], [])
    problem: str = ""


def version_changes(
    tests: pd.DataFrame, pairs: Sequence[VersionPair], source: Path = Path("tests.csv")
) -> list[VersionChanges]:
    """Each pair's changes in a campaign's tests.csv (read from `source`). A pair whose tests
    cannot be matched (an entry without tests, grids that differ) is kept with the reason, not
    raised: the page says it beside the others."""
    found = []
    measured = set(tests["mpi"]) if "mpi" in tests else set()
    for pair in pairs:
        absent = [name for name in (pair.older, pair.newer) if name not in measured]
        if absent:
            problem = f"{source}: no tests of {' and '.join(absent)}"
            found.append(VersionChanges(pair, pd.DataFrame(), problem=problem))
            continue
        try:
            result = diff_tests(tests, tests, pair.older, pair.newer, (source, source))
        except DataError as error:
            found.append(VersionChanges(pair, pd.DataFrame(), problem=str(error)))
            continue
        found.append(VersionChanges(pair, guideline_changes(result), result.one_sided))
    return found
