"""Measured runs are never replaced by an edit of the config: checked while the workflow is read.

Every run's kernel input is planned from the grid keys (`nrep`, `experiments`) and the `seed`;
the options records `options/grid.json` and `options/seed.json` hold the values the existing
inputs, and so the runs measured from them, were planned with (mpiguide.campaign.options_record).
When the config now says otherwise, the workflow would plan every input again and measure every
run again over its raw files. Where measured runs exist, that stops the workflow before any job
runs, naming the campaign, each changed key and the ways out, unless the config opts in with
`remeasure: true`: then the measured runs, and what was planned or computed from them alone,
are first moved aside below `superseded/<time>/`, kept as they were.

The records hold what the runs were planned with whatever an invocation measured: a missing one
is written with the current values when an invocation starts, before its first job (the runs it
measures are planned with them), and a changed one is rewritten only after the inputs were
planned again from the new values; a run measured from those before the record job ran stops
the next invocation all the same, which `remeasure` then moves aside. A missing record is not
compared, as for results made before records existed. This runs in common.smk, once, in the
Snakemake the user started.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.executor import CommandLine
from mpiguide.campaign.options_record import canonical_json, record_path, recorded_text
from mpiguide.campaign.schema import key_path
from mpiguide.core.errors import ConfigError
from mpiguide.core.paths import (
    BLOCKS_TREE,
    GRID_CSV,
    INPUTS_TREE,
    MEDIANS_PARQUET,
    OPTIONS_TREE,
    RAW_TREE,
    ROUNDS_TREE,
    RUN_PATH,
    SUPERSEDED_TREE,
    TIMINGS_PARQUET,
)

# The options records every run's kernel input is planned from (workflow/rules/options.smk).
GRID_RECORD = "grid"
SEED_RECORD = "seed"
PLANNING_RECORDS = (GRID_RECORD, SEED_RECORD)
RAW_SUFFIXES = (".csv", ".json")
# What the measured runs are, and what was planned (inputs, grid, rounds' plans) or computed
# (medians, block records) from them alone: moved together, so that a superseded folder
# aggregates as it did. The raw runs go last: a move cut short leaves them where this check
# finds them again.
KEPT_WITH_RUNS = (
    INPUTS_TREE,
    BLOCKS_TREE,
    ROUNDS_TREE,
    GRID_CSV,
    TIMINGS_PARQUET,
    MEDIANS_PARQUET,
)
SHOWN_CHARACTERS = 60


class _Marker:
    """A value a record or config does not give."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


NOT_SET: Any = _Marker("not set")  # the key is absent
UNREADABLE: Any = _Marker("unreadable")  # the record is not JSON


@dataclass(frozen=True)
class Change:
    """One config key whose value differs from the one the measured runs were planned with."""

    key: str  # its path in the config: `nrep`, `experiments[0].sync`
    before: Any  # NOT_SET: the key was absent; UNREADABLE: its record is not JSON
    after: Any

    def __str__(self) -> str:
        return f"{self.key} {_shown(self.before)} → {_shown(self.after)}"


@dataclass(frozen=True)
class Superseded:
    """Measured runs that a run planned from the current options would replace, and why."""

    changes: tuple[Change, ...]
    runs: tuple[Path, ...]  # raw files, csv and json

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(change.key for change in self.changes)

    @property
    def count(self) -> int:
        """The measured runs (a run's csv and json count once)."""
        return len({path.with_suffix("") for path in self.runs})


def planned_from(campaign: Campaign) -> dict[str, tuple[tuple[str, ...], Any]]:
    """Per record every run's input is planned from: the config key path of its value (the
    grid record's keys are top-level keys themselves) and the value the config now gives."""
    return {
        GRID_RECORD: ((), campaign.grid_spec()),
        SEED_RECORD: (("seed",), campaign.config["seed"]),
    }


def planning_changes(results: Path, campaign: Campaign) -> list[Change]:
    """How the campaign's grid keys and seed differ from their records below `results`."""
    changes: list[Change] = []
    for name, (path, value) in planned_from(campaign).items():
        text = recorded_text(record_path(str(results), name))
        planned = canonical_json(value)
        if text is None or text == planned:
            continue
        try:
            recorded = json.loads(text)
        except ValueError:
            recorded = UNREADABLE
        current = json.loads(planned)
        found = [] if recorded is UNREADABLE else list(_changes(recorded, current, path))
        changes.extend(found or _whole_record(recorded, current, path))
    return changes


def _whole_record(recorded: Any, current: Any, path: tuple[str, ...]) -> list[Change]:
    """Every key of a record that cannot be read, or differs only as text (not written by
    canonical_json): the workflow rewrites it and re-plans all the same."""
    if path:
        return [Change(key_path(path), recorded, current)]
    return [
        Change(
            key,
            recorded.get(key, NOT_SET) if isinstance(recorded, dict) else recorded,
            current[key],
        )
        for key in sorted(current)
    ]


def measured_runs(results: Path) -> list[Path]:
    """Every raw run file below `results`/raw (`<mpi>/<nodes>x<ppn>/run<NN>.csv`, `.json`),
    those of entries and deployments the config no longer names included: a run measured
    from an input of the old plan would be measured again if its deployment came back."""
    raw = results / RAW_TREE
    return sorted(
        path
        for path in raw.glob("*/*/run*")
        if path.suffix in RAW_SUFFIXES
        and path.is_file()
        and RUN_PATH.match(path.relative_to(raw).with_suffix("").as_posix())
    )


def superseded_runs(campaign: Campaign) -> Superseded | None:
    """The measured runs of `campaign` that the changed options would measure again, with the
    changes; None when no option changed or nothing was measured."""
    results = Path(campaign.results)
    changes = planning_changes(results, campaign)
    runs = measured_runs(results) if changes else []
    return Superseded(tuple(changes), tuple(runs)) if runs else None


def check_measured(
    campaign: Campaign,
    dry_run: bool,
    announce: Callable[[str], None],
    command_line: CommandLine | None = None,
) -> tuple[str, ...]:
    """Stop (ConfigError) when a changed option would measure existing runs again, unless the
    config sets `remeasure`: then move them aside (a dry run only says it would) and return.
    The stop names the changes made with --config and shows the command to type again, as the
    user started Snakemake (`command_line`: executor.read_command_line's). Returns the changed
    keys; () when nothing measured would be replaced."""
    superseded = superseded_runs(campaign)
    if superseded is None:
        return ()
    if not campaign.config["remeasure"]:
        raise ConfigError(_stop_message(campaign, superseded, command_line or CommandLine()))
    results = Path(campaign.results)
    changed = "; ".join(map(str, superseded.changes))
    if dry_run:
        announce(
            f"mpiguide: {changed}: without -n, the {superseded.count} measured runs of "
            f"campaign {campaign.config['campaign']!r} would move to "
            f"{results / SUPERSEDED_TREE}/<UTC time>/ (remeasure) and be measured again"
        )
    else:
        kept = move_aside(results)
        announce(
            f"mpiguide: {changed}: moved the {superseded.count} measured runs of campaign "
            f"{campaign.config['campaign']!r} to {kept}/ (remeasure); measuring them again"
        )
    return superseded.keys


def move_aside(results: Path) -> Path:
    """Move the measured runs below `results` and what depends on them alone into a new
    `superseded/<UTC time>/`, with a copy of the options records they were planned with;
    returns that folder. The planning records are removed last (a move cut short leaves them
    with the raw runs): the runs measured again are planned with the current values, which
    the invocation records as it starts."""
    kept = _new_folder(results / SUPERSEDED_TREE)
    if (results / OPTIONS_TREE).is_dir():
        shutil.copytree(results / OPTIONS_TREE, kept / OPTIONS_TREE)
    for name in (*KEPT_WITH_RUNS, RAW_TREE):
        if (results / name).exists():
            (results / name).rename(kept / name)
    for name in PLANNING_RECORDS:
        Path(record_path(str(results), name)).unlink(missing_ok=True)
    return kept


def _new_folder(parent: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1000):
        folder = parent / (stamp if attempt == 0 else f"{stamp}-{attempt}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"{parent}: no free folder name for {stamp}")


def _changes(before: Any, after: Any, path: tuple[str | int, ...]) -> Iterator[Change]:
    """The leaves where `before` and `after` differ: keys of objects and blocks of lists of
    objects (the experiment blocks) apart, other values whole."""
    if isinstance(before, _Marker) or isinstance(after, _Marker):
        yield Change(key_path(path), before, after)
        return
    if canonical_json(before) == canonical_json(after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            yield from _changes(before.get(key, NOT_SET), after.get(key, NOT_SET), (*path, key))
    elif _objects(before) and _objects(after):
        for index in range(max(len(before), len(after))):
            yield from _changes(_item(before, index), _item(after, index), (*path, index))
    else:
        yield Change(key_path(path), before, after)


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _item(items: list[Any], index: int) -> Any:
    return items[index] if index < len(items) else NOT_SET


def _shown(value: Any) -> str:
    if isinstance(value, _Marker):
        return value.text
    text = canonical_json(value)
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 1] + "…"


def _top_key(key: str) -> str:
    """The top-level config key of a change's key path (`experiments` of `experiments[0].sync`)."""
    return re.split(r"[.\[]", key, maxsplit=1)[0]


def _stop_message(campaign: Campaign, superseded: Superseded, command_line: CommandLine) -> str:
    results = Path(campaign.results)
    name = campaign.config["campaign"]
    moved = ", ".join((RAW_TREE, *KEPT_WITH_RUNS))
    given = command_line.config_keys()
    from_config = [_top_key(change.key) in given for change in superseded.changes]
    changes = "; ".join(
        f"{change}{' (--config)' if by_config else ''}"
        for change, by_config in zip(superseded.changes, from_config, strict=True)
    )
    source = f"{campaign.source}{' and --config' if any(from_config) else ''}"
    return (
        f"{source}: campaign {name!r} has {superseded.count} measured runs in "
        f"{results / RAW_TREE}/ planned with other values: {changes}. With the changed values "
        "every run's input would be planned again and every run measured again over its raw "
        "files: nothing was run. Either\n"
        "  - keep them: give the changed campaign a new name (`campaign:`, or campaign=NAME in "
        "--config): its results go to results/<name>/;\n"
        f"  - measure again, keeping them in {results / SUPERSEDED_TREE}/<UTC time>/ ({moved} "
        f"of {results}/ are moved there first):\n"
        f"        {command_line.with_config('remeasure=True')}\n"
        f"  - or revert the change ({_reverted(superseded.changes, command_line)})."
    )


def _reverted(changes: tuple[Change, ...], command_line: CommandLine) -> str:
    """How to undo each change: drop its --config entry, or set its key back in the file."""
    given = command_line.config_keys()
    undo: list[str] = []
    for change in changes:
        key = _top_key(change.key)
        if key not in given:
            undo.append(f"{change.key}: {_shown(change.before)}")
            continue
        entries = [e for e in command_line.config_args if e.split("=", 1)[0] == key]
        dropped = f"drop {' '.join(entries) or key} from --config"
        if dropped not in undo:
            undo.append(dropped)
    return ", ".join(undo)
