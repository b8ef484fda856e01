"""The guideline catalogue and the campaign's selection of guidelines (the types they are made
of: analysis_types.py).

Light on imports (yaml, jsonschema) so that config checks at workflow parse time stay fast;
the analysis itself lives in guidelines.py.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from mpiguide.analysis.analysis_types import (
    DECIDED_BY_ANALYSIS,
    SELECTABLE_KEYS,
    Comparison,
    Guideline,
    selector_of,
)
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINES_SCHEMA
from mpiguide.core.schema_messages import describe, readable_pattern
from mpiguide.core.strict_yaml import load_package_yaml, load_yaml


@cache
def _schema() -> dict[str, Any]:
    return load_package_yaml(GUIDELINES_SCHEMA)


@cache
def _entry_validator() -> jsonschema.Validator:
    """Validator of one catalogue entry (the schema's `guideline` definition)."""
    return jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/guideline", "$defs": _schema()["$defs"]}
    )


def _most_helpful(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    """A missing field of an entry or comparison first: the rules that combine lhs, rhs, pairs
    and select depend on `relation`, and their failures would hide that it is missing."""
    missing = [e for e in errors if e.validator == "required" and "properties" in e.schema]
    return missing[0] if missing else jsonschema.exceptions.best_match(errors)


def _describe(error: jsonschema.ValidationError) -> str:
    if not error.absolute_path and error.validator in ("oneOf", "not"):
        return (
            "needs `lhs` and `rhs`, or `pairs` (relation le or approx), or only `select` "
            "(relation monotone)"
        )
    return describe(error)


def _validate_entry(entry: Any, where: str) -> None:
    errors = list(_entry_validator().iter_errors(entry))
    if errors:
        error = _most_helpful(errors)
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise ConfigError(f"{where}{path}: {_describe(error)}")
    selectors = [(name, entry.get(name)) for name in ("lhs", "rhs", "select")]
    selectors += [
        (f"pairs[{i}].{side}", pair[side])
        for i, pair in enumerate(entry.get("pairs", []))
        for side in ("lhs", "rhs")
    ]
    for name, selector in selectors:
        for key in selector or {}:
            if key not in SELECTABLE_KEYS:
                raise ConfigError(
                    f"{where}.{name}.{key}: not a parameter; allowed: {', '.join(SELECTABLE_KEYS)}"
                )
    sides = [("", entry)] if "lhs" in entry else []
    sides += [(f"pairs[{i}].", pair) for i, pair in enumerate(entry.get("pairs", []))]
    for prefix, pair in sides:
        if _same_selection(pair["lhs"], pair["rhs"]):
            raise ConfigError(
                f"{where}.{prefix}lhs: lhs and rhs select the same experiments; the guideline "
                "can produce no test"
            )


def _same_selection(lhs: Mapping[str, Any], rhs: Mapping[str, Any]) -> bool:
    """Whether two selectors allow the same values of the same keys (in any order)."""

    def allowed(selector: Mapping[str, Any]) -> dict[str, frozenset[str]]:
        return {key: frozenset(values) for key, values in selector_of(selector).items()}

    return allowed(lhs) == allowed(rhs)


def load_catalogue(path: str | Path, used: Iterable[object] | None = None) -> dict[str, Any]:
    """The catalogue YAML, validated against the schema; ConfigError names file and key (or
    line: syntax errors, text that is not UTF-8, an id given twice). With `used` (a campaign's
    `guidelines:`: its ids; inline entries are resolve's to validate), only the entries it names
    are validated against the schema (every id is checked): a job reads no other, and each
    entry costs a couple of milliseconds of jsonschema. Without it every entry is: `validate`
    and the workflow, as it is read before any job, so that a mistake in a catalogue file stops
    the campaign whichever guidelines it selects. A file read before and unchanged since (same
    inode, size and change times) is not parsed again: one `validate` reads the shipped
    catalogue twice."""
    path = Path(path)
    names = None if used is None else frozenset(item for item in used if isinstance(item, str))
    try:
        stat = path.stat()
    except OSError:
        return _load_catalogue(path, names)  # load_yaml says what is wrong with the path
    version = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    return copy.deepcopy(_load_catalogue_once(path, version, names))


@lru_cache(maxsize=8)
def _load_catalogue_once(
    path: Path, version: tuple[int, ...], names: frozenset[str] | None
) -> dict[str, Any]:
    return _load_catalogue(path, names)


def _load_catalogue(path: Path, names: frozenset[str] | None = None) -> dict[str, Any]:
    catalogue = load_yaml(path, "the guideline catalogue")
    if not isinstance(catalogue, dict) or not catalogue:
        raise ConfigError(f"{path}: must map guideline ids to guidelines")
    id_pattern = re.compile(_schema()["propertyNames"]["pattern"])
    for guideline_id, entry in catalogue.items():
        if not isinstance(guideline_id, str) or not id_pattern.match(guideline_id):
            raise ConfigError(
                f"{path}: guideline id {guideline_id!r} must match "
                f"{readable_pattern(id_pattern.pattern)}"
            )
        if names is None or guideline_id in names:
            _validate_entry(entry, f"{path}: {guideline_id}")
    return catalogue


def _guideline(guideline_id: str, entry: Mapping[str, Any]) -> Guideline:
    comparisons: tuple[Comparison, ...]
    if entry["relation"] == "monotone":
        select = selector_of(entry["select"])
        comparisons = (Comparison(select, select),)
    else:
        raw_pairs = entry.get("pairs") or [{"lhs": entry["lhs"], "rhs": entry["rhs"]}]
        comparisons = tuple(
            Comparison(selector_of(p["lhs"]), selector_of(p["rhs"])) for p in raw_pairs
        )
    return Guideline(
        guideline_id,
        entry["source"],
        entry["text"],
        entry["relation"],
        comparisons,
        entry.get("decided_by", DECIDED_BY_ANALYSIS),
    )


def resolve(
    selection: Sequence[str | Mapping[str, Any]], catalogue: Mapping[str, Any], source: str
) -> list[Guideline]:
    """The campaign's `guidelines:` list: catalogue ids, or inline entries `{id: NAME, ...}`."""
    resolved: list[Guideline] = []
    for i, item in enumerate(selection):
        where = f"{source}: guidelines[{i}]"
        if isinstance(item, str):
            if item not in catalogue:
                # as for unknown operations: the closest id, case aside (gl4 -> GL4)
                folded = {str(key).lower(): str(key) for key in catalogue}
                close = difflib.get_close_matches(item.lower(), folded, n=1)
                hint = f" (did you mean '{folded[close[0]]}'?)" if close else ""
                raise ConfigError(
                    f"{where}: unknown guideline {item!r}{hint}; "
                    f"the catalogue has {', '.join(catalogue)}"
                )
            resolved.append(_guideline(item, catalogue[item]))
        elif isinstance(item, Mapping) and isinstance(item.get("id"), str):
            entry = {key: value for key, value in item.items() if key != "id"}
            _validate_entry(entry, where)
            resolved.append(_guideline(item["id"], entry))
        else:
            raise ConfigError(f"{where}: must be a guideline id or a mapping with a string 'id'")
    ids = [guideline.id for guideline in resolved]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"{source}: guidelines: {duplicates[0]!r} selected twice")
    return resolved
