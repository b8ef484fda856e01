"""Options recorded in files that change only when the options do.

A rule's params re-run it when they change only through Snakemake's metadata in `.snakemake/`;
a fresh clone, results copied from another machine or a deleted `.snakemake/` lose it, and
verdicts would then outlive the p_thres (or nrep, or deployments) they were computed with. A
record file used as a rule input re-runs the rule by its modification time alone.

A record created for the first time gets the oldest possible modification time: introducing it
into finished results must not re-run anything; only a later change of the options does.
"""

from __future__ import annotations

import os
from pathlib import Path

from mpiguide.core.atomic import atomic_path


def record(path: str | os.PathLike[str], text: str) -> str:
    """Write `text` to `path` unless it holds it already; returns `path` (as given)."""
    target = Path(path)
    try:
        if target.read_text(encoding="utf-8") == text:
            return str(path)
        first = False
    except FileNotFoundError:
        first = True
    with atomic_path(target) as temporary:
        temporary.write_text(text, encoding="utf-8")
        if first:
            os.utime(temporary, (0, 0))
    return str(path)
