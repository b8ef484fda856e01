"""Where a run was launched: its block and the block's attempt, and the interference the block
record measured (`blocks/<nodes>x<ppn>/run<NN>.json`, written by mpiguide.campaign.blocks)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiguide.core.columns import INTERFERENCE_COLUMNS
from mpiguide.core.errors import DataError
from mpiguide.core.paths import BLOCK_RECORD_SUFFIX, block_path
from mpiguide.store.provenance import RunFile

# Block record keys (written by mpiguide.campaign.blocks, `blocks/<nodes>x<ppn>/run<NN>.json`).
BLOCK_LAUNCHES = "launches"
BLOCK_ATTEMPT = "attempt"
BLOCK_INTERFERENCE = "interference"


@dataclass(frozen=True)
class BlockLaunch:
    """Where a run was launched: its block (empty: its own job) and the block's attempt
    (0: no block), and the interference its block record measured (NaN: unknown)."""

    block: str = ""
    attempt: int = 0
    interference: tuple[float, ...] = (np.nan,) * len(INTERFERENCE_COLUMNS)


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return np.nan
    return float(value)


def read_block_launches(runs: Sequence[RunFile], blocks_root: Path | None) -> list[BlockLaunch]:
    """Per run, its block and attempt from `blocks_root/<nodes>x<ppn>/run<NN>.json` when that
    record exists. DataError on a record that is not JSON or does not list the run's entry with
    a positive integer attempt."""
    launches = []
    records: dict[Path, dict] = {}
    for run in runs:
        if blocks_root is None:
            launches.append(BlockLaunch())
            continue
        name = block_path(run.nodes, run.ppn, run.run)
        path = blocks_root / f"{name}{BLOCK_RECORD_SUFFIX}"
        if path not in records:
            try:
                records[path] = json.loads(path.read_text())
            except FileNotFoundError:
                records[path] = {}
            except (OSError, ValueError) as error:
                raise DataError(f"{path}: not a readable block record: {error}") from None
        record = records[path]
        if not record:
            launches.append(BlockLaunch())
            continue
        listed = record.get(BLOCK_LAUNCHES) if isinstance(record, dict) else None
        launch = listed.get(run.mpi) if isinstance(listed, dict) else None
        launch = launch if isinstance(launch, dict) else {}
        attempt = launch.get(BLOCK_ATTEMPT)
        if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
            raise DataError(
                f"{path}: '{BLOCK_LAUNCHES}' must hold entry {run.mpi!r} with a positive integer "
                f"'{BLOCK_ATTEMPT}' (the block record of {run.raw_csv})"
            )
        measured = launch.get(BLOCK_INTERFERENCE)
        measured = measured if isinstance(measured, dict) else {}
        loadavg = measured.get("loadavg_before")
        values = (
            _number(loadavg[0]) if isinstance(loadavg, list) and loadavg else np.nan,
            _number(measured.get("other_cpu_fraction")),
            _number(measured.get("steal_s")),
        )
        launches.append(BlockLaunch(name, attempt, values))
    return launches
