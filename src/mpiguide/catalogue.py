"""The guideline catalogue and the campaign's selection of guidelines.

Light on imports (yaml, jsonschema) so that config checks at workflow parse time stay fast;
the analysis itself lives in guidelines.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import jsonschema

from mpiguide.errors import ConfigError
from mpiguide.grid import PARAMETERS as GRID_PARAMETERS
from mpiguide.paper_tables import LAYOUTS
from mpiguide.schema_messages import describe, readable_pattern
from mpiguide.strict_yaml import load_package_yaml, load_yaml

if TYPE_CHECKING:
    from mpiguide.stats import Correction

Relation = Literal["le", "approx", "monotone"]
Selector = dict[str, tuple[str, ...]]

SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "guidelines.schema.yaml"
CONFIG_SCHEMA = SCHEMA.with_name("config.schema.yaml")
DEPLOYMENT_KEYS = ("mpi", "nodes", "ppn")
SELECTABLE_KEYS = (*DEPLOYMENT_KEYS, *GRID_PARAMETERS)
# Process counts that may be the varied parameter; nprocs = nodes x ppn is derived, not stored.
PROCESS_COUNT_KEYS = ("nprocs", "nodes", "ppn")
VARIED_KEYS = (*GRID_PARAMETERS, *PROCESS_COUNT_KEYS)
CORRECTIONS = ("none", "holm", "bh")
TESTS = ("paired", "ranksum", "auto")
# absolute: least squares of the latencies; relative: of the relative errors (weights 1/l²)
MODEL_WEIGHTINGS = ("absolute", "relative")


@dataclass(frozen=True)
class Comparison:
    lhs: Selector
    rhs: Selector


@dataclass(frozen=True)
class Guideline:
    """One guideline; a monotone guideline has one comparison with lhs == rhs == its select."""

    id: str
    source: str
    text: str
    relation: Relation
    comparisons: tuple[Comparison, ...]


@cache
def analysis_defaults() -> dict[str, Any]:
    """The default of every `analysis:` key, as the campaign schema states it (its one owner)."""
    properties = load_package_yaml(CONFIG_SCHEMA)["properties"]["analysis"]["properties"]
    return {key: spec["default"] for key, spec in properties.items()}


@dataclass(frozen=True)
class AnalysisOptions:
    """The campaign's `analysis:` options; every default is the campaign schema's."""

    varied: str
    p_thres: float
    v_thres: float
    correction: Correction
    confidence: float
    test: str
    layout: str
    variability: tuple[Selector, ...]
    run_band: float
    model_tolerance: float
    model_weighting: str

    @classmethod
    def with_defaults(cls, **changes: Any) -> AnalysisOptions:
        """The schema's defaults, `changes` applied (validated like a config's block)."""
        return cls.from_mapping(changes, "analysis options")

    @classmethod
    def from_mapping(cls, analysis: Mapping[str, Any], source: str) -> AnalysisOptions:
        """Options from the config's `analysis:` block, defaults for missing keys."""
        unknown = set(analysis) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(
                f"{source}: analysis.{sorted(unknown)[0]} is not an option; allowed: "
                f"{', '.join(cls.__dataclass_fields__)}"
            )
        options = cls(**{**analysis_defaults(), **analysis, "variability": ()})
        checks = [
            ("varied", isinstance(options.varied, str) and options.varied in VARIED_KEYS,
             f"one of {', '.join(VARIED_KEYS)}"),
            ("p_thres", _is_number(options.p_thres) and 0 < options.p_thres < 1,
             "a number in (0, 1)"),
            ("v_thres", _is_number(options.v_thres) and options.v_thres >= 1, "a number >= 1"),
            ("correction", options.correction in CORRECTIONS, f"one of {', '.join(CORRECTIONS)}"),
            ("confidence", _is_number(options.confidence) and 0 < options.confidence < 1,
             "a number in (0, 1)"),
            ("test", options.test in TESTS, f"one of {', '.join(TESTS)}"),
            ("layout", options.layout in LAYOUTS, f"one of {', '.join(LAYOUTS)}"),
            ("run_band", _is_number(options.run_band) and 0 < options.run_band < 1,
             "a number in (0, 1)"),
            ("model_tolerance",
             _is_number(options.model_tolerance) and options.model_tolerance > 0,
             "a number > 0"),
            ("model_weighting", options.model_weighting in MODEL_WEIGHTINGS,
             f"one of {', '.join(MODEL_WEIGHTINGS)}"),
        ]  # fmt: skip
        for key, valid, allowed in checks:
            if not valid:
                raise ConfigError(
                    f"{source}: analysis.{key} is {getattr(options, key)!r}; allowed: {allowed}"
                )
        selectors = _variability_selectors(analysis.get("variability", []), source)
        return replace(options, variability=selectors)


def _variability_selectors(raw: Any, source: str) -> tuple[Selector, ...]:
    """analysis.variability: a list of selectors (mappings of selectable keys or nprocs)."""
    allowed_keys = (*SELECTABLE_KEYS, "nprocs")
    if not isinstance(raw, list) or not all(isinstance(item, Mapping) for item in raw):
        raise ConfigError(f"{source}: analysis.variability must be a list of selectors")
    for index, selector in enumerate(raw):
        for key in selector:
            if key not in allowed_keys:
                raise ConfigError(
                    f"{source}: analysis.variability[{index}].{key}: not a parameter; "
                    f"allowed: {', '.join(allowed_keys)}"
                )
    return tuple(_selector(selector) for selector in raw)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@cache
def _schema() -> dict[str, Any]:
    return load_package_yaml(SCHEMA)


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
        return {key: frozenset(values) for key, values in _selector(selector).items()}

    return allowed(lhs) == allowed(rhs)


def load_catalogue(path: str | Path) -> dict[str, Any]:
    """The catalogue YAML, validated against the schema; ConfigError names file and key (or
    line: syntax errors, text that is not UTF-8, an id given twice)."""
    path = Path(path)
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
        _validate_entry(entry, f"{path}: {guideline_id}")
    return catalogue


def canonical_value(value: object) -> str:
    """A selector value as the text pairing compares with (integral floats without ".0")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _selector(raw: Mapping[str, Any]) -> Selector:
    return {
        key: tuple(canonical_value(v) for v in (value if isinstance(value, list) else [value]))
        for key, value in raw.items()
    }


def _guideline(guideline_id: str, entry: Mapping[str, Any]) -> Guideline:
    comparisons: tuple[Comparison, ...]
    if entry["relation"] == "monotone":
        select = _selector(entry["select"])
        comparisons = (Comparison(select, select),)
    else:
        raw_pairs = entry.get("pairs") or [{"lhs": entry["lhs"], "rhs": entry["rhs"]}]
        comparisons = tuple(Comparison(_selector(p["lhs"]), _selector(p["rhs"])) for p in raw_pairs)
    return Guideline(guideline_id, entry["source"], entry["text"], entry["relation"], comparisons)


def resolve(
    selection: Sequence[str | Mapping[str, Any]], catalogue: Mapping[str, Any], source: str
) -> list[Guideline]:
    """The campaign's `guidelines:` list: catalogue ids, or inline entries `{id: NAME, ...}`."""
    resolved: list[Guideline] = []
    for i, item in enumerate(selection):
        where = f"{source}: guidelines[{i}]"
        if isinstance(item, str):
            if item not in catalogue:
                raise ConfigError(
                    f"{where}: unknown guideline {item!r}; the catalogue has {', '.join(catalogue)}"
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
