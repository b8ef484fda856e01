"""Options recorded in files that change only when the options do.

A rule's params re-run it when they change only through Snakemake's metadata in `.snakemake/`;
a fresh clone, results copied from another machine or a deleted `.snakemake/` lose it, and
verdicts would then outlive the p_thres (or nrep, or deployments) they were computed with. A
record file used as a rule input re-runs the rule by its modification time alone.

A record created for the first time gets the oldest possible modification time: introducing it
into finished results must not re-run anything; only a later change of the options does.

A dry run writes nothing below the results: a changed record is staged in the system's
temporary directory instead, and the rule names that copy, so that the dry run still lists the
jobs the change will re-run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from mpiguide.core.atomic import atomic_path

OPTIONS_TREE = "options"


def record_path(results: str, name: str) -> str:
    """`<results>/options/<name>.json`: where the options `name` are recorded."""
    return f"{results}/{OPTIONS_TREE}/{name}.json"


def as_json(value: Any) -> str:
    """Canonical JSON of a config value: stable across runs, so that params triggers and
    records change only with the value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def record(path: str | os.PathLike[str], text: str, dry_run: bool = False) -> str:
    """Write `text` to `path` unless it holds it already; returns the path the rule reads:
    `path` (as given), or in a dry run with a changed record its staged copy."""
    target = Path(path)
    try:
        if target.read_text(encoding="utf-8") == text:
            return str(path)
        first = False
    except FileNotFoundError:
        first = True
    if dry_run:
        target = _staged(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        first = False
    with atomic_path(target) as temporary:
        temporary.write_text(text, encoding="utf-8")
        if first:
            os.utime(temporary, (0, 0))
    return str(target) if dry_run else str(path)


def _staged(target: Path) -> Path:
    """Where a dry run stages the record at `target`: one folder per results path."""
    key = hashlib.sha256(str(target.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "mpiguide-dry-run" / key / target.name
