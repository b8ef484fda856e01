"""Options recorded in files whose names carry a digest of the options.

A rule's params re-run it when they change only through Snakemake's metadata in `.snakemake/`;
a fresh clone, results copied from another machine or a deleted `.snakemake/` lose it, and
verdicts would then outlive the p_thres (or nrep, or deployments) they were computed with. The
record of a value, `<name>-<digest>.json`, is a rule input: a changed value names a record that
does not exist yet, made by its own job (rule record_options), which re-runs the rules that read
it with or without metadata. Every record is also a target of `all`: Snakemake makes a missing
file only for a job that needs it, and outputs that exist need nothing. Nothing is written while
the workflow is read.

Writing a record removes the other records of its name: a value changed back then names a
missing record again, newer than what the changed value made, rather than an old one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from mpiguide.core.atomic import atomic_path

DIGEST_LENGTH = 12
NAME = re.compile(r"[a-z_]+")
DIGEST = re.compile(f"[0-9a-f]{{{DIGEST_LENGTH}}}")


def as_json(value: Any) -> str:
    """Canonical JSON of a config value: stable across runs, so that params triggers and
    records change only with the value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


class OptionRecords:
    """The records below one directory: the path of each named value, and the text its record
    holds, for the rule that writes it."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._texts: dict[tuple[str, str], str] = {}

    @property
    def pattern(self) -> str:
        """The records' path with the wildcards {name} and {digest}."""
        return f"{self.directory}/{{name}}-{{digest}}.json"

    def path(self, name: str, value: Any) -> str:
        """The record of `value` under `name`; one name holds one value per workflow."""
        if not NAME.fullmatch(name):
            raise ValueError(f"option record name {name!r}: allowed: {NAME.pattern}")
        text = as_json(value)
        key = (name, digest(text))
        others = [other for (named, _), other in self._texts.items() if named == name]
        if key not in self._texts and others:
            raise ValueError(f"option record {name!r} is given two values: {others[0]}, {text}")
        self._texts[key] = text
        return f"{self.directory}/{name}-{key[1]}.json"

    def paths(self) -> list[str]:
        """Every record named so far."""
        return [f"{self.directory}/{name}-{hexdigest}.json" for name, hexdigest in self._texts]

    def text(self, name: str, digest: str) -> str:
        """What the record `<name>-<digest>.json` holds (KeyError: no such record)."""
        return self._texts[name, digest]


def write_record(path: str | os.PathLike[str], text: str) -> None:
    """Write the record at `path` (`<name>-<digest>.json`) and remove its name's others."""
    target = Path(path)
    name = target.name.rsplit("-", 1)[0]
    with atomic_path(target) as temporary:
        temporary.write_text(text, encoding="utf-8")
    same_name = re.compile(re.escape(name) + "-" + DIGEST.pattern + r"\.json")
    for other in target.parent.iterdir():
        if other != target and same_name.fullmatch(other.name):
            other.unlink()
