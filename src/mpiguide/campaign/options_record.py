"""Options recorded in files: what a rule's outputs were made with, kept beside the results.

A rule's params re-run it when they change only through Snakemake's metadata in `.snakemake/`;
a fresh clone, results copied from another machine or a deleted `.snakemake/` lose it, and
verdicts would then outlive the p_thres (or nrep, or deployments) they were computed with. So
`results/<campaign>/options/<name>.json` holds the options a set of rules (its consumers) were
last run with, and the workflow compares it with the config when it is read: a record that
differs makes the workflow force its consumers, and what Snakemake runs after them follows.

The workflow only reads records while it is read. A job writes each one (workflow/rules/
records.smk), after its consumers succeeded, so that a consumer that failed leaves the old record
and is forced again by the next invocation. Nothing takes a record as an input: writing one
never re-runs a job, and results that lack their records (made before records existed, or with
`options/` deleted) re-run nothing but the record jobs. A missing record is not compared; it is
written with the current options when an invocation starts, before any job runs, so that the
runs it measures are guarded (mpiguide.campaign.raw_guard) whatever its targets.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import OPTIONS_TREE


def record_path(results: str, name: str) -> str:
    """`<results>/options/<name>.json`: where the options `name` are recorded."""
    return f"{results}/{OPTIONS_TREE}/{name}.json"


def canonical_json(value: Any) -> str:
    """Canonical JSON of a config value: stable across runs, so that a record changes only with
    the value. The text of the records (and of the param of the job that writes one) and of the
    params of grid and run_block, which plan and measure runs: measured runs were planned with
    this text, and a param in another would re-run its job. None of these jobs' outputs is in
    Snakemake's report; every other param is as_json."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# Snakemake's report (`--report`) embeds the params of the jobs that made its items, as they are,
# in an inline <script>: a "</script>" in one would end that element, and markup after it would
# be parsed as the page's own. JSON's escapes of the three characters keep the value and make
# the text inert; without them the text is canonical_json's, so a config without them changes
# no param, and re-runs nothing.
HTML_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def as_json(value: Any) -> str:
    """A config value as a rule's param: canonical_json with `<`, `>` and `&` written as JSON
    escapes (json.loads reads the same value back), so that no text of the config becomes
    markup where Snakemake shows the param."""
    return canonical_json(value).translate(HTML_ESCAPES)


@dataclass(frozen=True)
class OptionRecord:
    """The options some rules' outputs are made from, and those rules."""

    name: str  # options/<name>.json
    text: str  # the options now, canonical_json
    consumers: tuple[str, ...]  # the rules that read them

    @classmethod
    def of(cls, name: str, value: Any, consumers: Iterable[str]) -> OptionRecord:
        return cls(name, canonical_json(value), tuple(consumers))


def recorded_text(path: str | os.PathLike[str]) -> str | None:
    """The options a record holds, as written; None when there is no record."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def changed_records(results: str, records: Iterable[OptionRecord]) -> list[OptionRecord]:
    """The records below `results` that hold other options than `records` give now (an
    unreadable one too); a missing record has not changed."""
    changed = []
    for record in records:
        text = recorded_text(record_path(results, record.name))
        if text is not None and text != record.text:
            changed.append(record)
    return changed


def forced_rules(changed: Iterable[OptionRecord]) -> list[str]:
    """Every rule whose outputs a changed record makes stale, once, sorted."""
    return sorted({rule for record in changed for rule in record.consumers})


def write_record(path: str | os.PathLike[str], text: str) -> None:
    """Record `text` at `path`, atomically: a reader sees the old record or the new."""
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_missing_records(results: str, records: Iterable[OptionRecord]) -> list[str]:
    """Write each record that does not exist below `results` with the options it holds now;
    returns the paths written. Existing records are left alone, changed or not: those wait
    for their consumers."""
    written = []
    for record in records:
        path = record_path(results, record.name)
        if not os.path.exists(path):
            write_record(path, record.text)
            written.append(path)
    return written
