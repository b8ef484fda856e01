"""The types the analysis shares: a guideline and its comparisons, the analysis options, and the
keys that name a deployment.

Catalogue loading (catalogue.py), testing (guidelines.py), tables, plots and the config checks all
use them; this module imports no statistics and nothing of theirs, so any of them may import it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from mpiguide.core.atomic import atomic_path
from mpiguide.core.columns import HEAP
from mpiguide.core.errors import ConfigError, DataError
from mpiguide.core.package_data import CONFIG_SCHEMA
from mpiguide.core.strict_yaml import load_package_yaml
from mpiguide.core.values import canonical_value
from mpiguide.plan.grid import PARAMETERS as GRID_PARAMETERS

if TYPE_CHECKING:
    from mpiguide.analysis.stats import Correction

Relation = Literal["le", "approx", "monotone"]
Selector = dict[str, tuple[str, ...]]
# Which thresholds decide a guideline: the campaign's `analysis:` block, or `analysis.tuning`
# (the guidelines mpiguide adds to tune and verify: two experiments of one entry's launches).
DecidedBy = Literal["analysis", "analysis.tuning"]
DECIDED_BY_ANALYSIS: Final = "analysis"
DECIDED_BY_TUNING: Final = "analysis.tuning"

DEPLOYMENT_KEYS = ("mpi", "nodes", "ppn")
# heap: the allocator setting of the mpi entry's launches, a column of medians.parquet.
SELECTABLE_KEYS = (*DEPLOYMENT_KEYS, *GRID_PARAMETERS, HEAP)
# Process counts that may be the varied parameter; nprocs = nodes x ppn is derived, not stored.
PROCESS_COUNT_KEYS = ("nprocs", "nodes", "ppn")
VARIED_KEYS = (*GRID_PARAMETERS, *PROCESS_COUNT_KEYS)


def selector_of(raw: Mapping[str, Any]) -> Selector:
    """A selector as written (a value or a list per key) as canonical texts per key."""
    return {
        key: tuple(canonical_value(v) for v in (value if isinstance(value, list) else [value]))
        for key, value in raw.items()
    }


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
    decided_by: DecidedBy = DECIDED_BY_ANALYSIS


@cache
def analysis_schema() -> dict[str, Any]:
    """The campaign schema's `analysis:` keys: the one owner of their defaults, allowed values
    and ranges."""
    properties: dict[str, Any] = load_package_yaml(CONFIG_SCHEMA)["properties"]["analysis"]
    return properties["properties"]


def analysis_defaults() -> dict[str, Any]:
    """The default of every `analysis:` key, as the campaign schema states it."""
    return {key: spec["default"] for key, spec in analysis_schema().items()}


def tuning_defaults() -> dict[str, Any]:
    """The default of every `analysis.tuning` key, as the campaign schema states it."""
    return {key: spec["default"] for key, spec in _tuning_schema().items()}


def _tuning_schema() -> dict[str, Any]:
    tuning: dict[str, Any] = analysis_schema()["tuning"]["properties"]
    return tuning


# The test of a guideline mpiguide adds to tune and verify: both sides share the launches, so
# `auto` pairs them run by run (the paired t-test).
TUNING_TEST = "auto"


@dataclass(frozen=True)
class TuningThresholds:
    """`analysis.tuning`: the levels of the guidelines mpiguide adds to tune and verify."""

    p_thres: float
    v_thres: float

    @classmethod
    def from_mapping(cls, tuning: Any, source: str) -> TuningThresholds:
        if not isinstance(tuning, Mapping):
            raise ConfigError(f"{source}: analysis.tuning must be a mapping of p_thres, v_thres")
        _refuse_unknown(tuning, cls, "analysis.tuning", source)
        thresholds = cls(**{**tuning_defaults(), **tuning})
        checks = _schema_checks(_tuning_schema(), thresholds)
        _refuse_invalid(checks, thresholds, "analysis.tuning", source)
        return thresholds


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
    tuning: TuningThresholds

    def decided_by(self, decided_by: DecidedBy) -> AnalysisOptions:
        """The options a guideline is decided with (Guideline.decided_by): the campaign's, or
        the paired test at `analysis.tuning`'s levels."""
        return self.for_tuning() if decided_by == DECIDED_BY_TUNING else self

    def for_tuning(self) -> AnalysisOptions:
        """The options of the guidelines mpiguide adds to tune and verify."""
        return replace(
            self, test=TUNING_TEST, p_thres=self.tuning.p_thres, v_thres=self.tuning.v_thres
        )

    @classmethod
    def with_defaults(cls, **changes: Any) -> AnalysisOptions:
        """The schema's defaults, `changes` applied (validated like a config's block)."""
        return cls.from_mapping(changes, "analysis options")

    @classmethod
    def from_mapping(cls, analysis: Mapping[str, Any], source: str) -> AnalysisOptions:
        """Options from the config's `analysis:` block, defaults for missing keys."""
        _refuse_unknown(analysis, cls, "analysis", source)
        tuning = TuningThresholds.from_mapping(analysis.get("tuning", {}), source)
        options = cls(**{**analysis_defaults(), **analysis, "variability": (), "tuning": tuning})
        # `varied` names a grid parameter or a process count: the grid owns that list.
        checks = [
            ("varied", isinstance(options.varied, str) and options.varied in VARIED_KEYS,
             f"one of {', '.join(VARIED_KEYS)}"),
            *_schema_checks(analysis_schema(), options),
        ]  # fmt: skip
        _refuse_invalid(checks, options, "analysis", source)
        selectors = _variability_selectors(analysis.get("variability", []), source)
        return replace(options, variability=selectors)

    def write_record(
        self,
        path: Path,
        guidelines: Sequence[str],
        verdicts: Mapping[str, int],
        looks: Sequence[int] = (),
        by_tuning: Sequence[str] = (),
        selection: Sequence[object] = (),
    ) -> None:
        """check's record beside its verdicts (decided_with.json), the campaign's one store of
        its `analysis:` block: these options, the config's guideline `selection` and the ids it
        resolved to, those of them `analysis.tuning` decided (`by_tuning`), the verdict counts
        and an adaptive campaign's looks. A report built later states the options its tables
        were computed with; the workflow compares it with the config (decided_with_differs)."""
        record: dict[str, Any] = {
            "analysis": dataclasses.asdict(self),
            "selection": list(selection),
            "guidelines": list(guidelines),
            "decided_by_tuning": list(by_tuning),
            "verdicts": dict(verdicts),
        }
        if looks:
            record["looks"] = list(looks)
        with atomic_path(path) as temporary:
            temporary.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


@dataclass(frozen=True)
class Decisions:
    """What check's record (decided_with.json) says the verdicts were decided with: the
    campaign's options, and the guidelines `analysis.tuning` decided."""

    options: AnalysisOptions
    by_tuning: frozenset[str] = frozenset()
    selection: tuple[object, ...] = ()  # the config's `guidelines:`, as given

    def for_guideline(self, guideline_id: str) -> AnalysisOptions:
        """The options the guideline's tests were decided with."""
        return self.options.for_tuning() if guideline_id in self.by_tuning else self.options

    def any_by_tuning(self, guideline_ids: Iterable[object]) -> bool:
        """Whether some of these guidelines were decided by `analysis.tuning`: a text or
        figure over them must name its levels too."""
        return any(str(guideline_id) in self.by_tuning for guideline_id in guideline_ids)

    @classmethod
    def read(cls, path: Path) -> Decisions:
        """check's record (AnalysisOptions.write_record); an option the record lacks takes its
        default."""
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            analysis = record["analysis"]
            by_tuning = record.get("decided_by_tuning", [])
            selection = record.get("selection", [])
            if not isinstance(analysis, Mapping):
                raise TypeError(f"analysis is {analysis!r}, not a mapping")
            for key, value in (("decided_by_tuning", by_tuning), ("selection", selection)):
                if not isinstance(value, list):
                    raise TypeError(f"{key} is {value!r}, not a list")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise DataError(
                f"{path}: cannot read what the verdicts were decided with: {error}"
            ) from None
        options = AnalysisOptions.from_mapping(analysis, str(path))
        return cls(options, frozenset(map(str, by_tuning)), tuple(selection))


# The config keys check's record holds for the whole campaign: no other job is handed them.
DECIDED_WITH_KEYS = ("analysis", "guidelines")


def without_decided_with(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config without the keys check's record holds (DECIDED_WITH_KEYS): what a job that
    also reads the record is handed."""
    return {key: value for key, value in config.items() if key not in DECIDED_WITH_KEYS}


def decided_with_differs(
    path: Path, analysis: Mapping[str, Any], selection: Sequence[object]
) -> bool:
    """Whether check's record at `path` holds other options (defaults filled in on both sides,
    so a changed default counts) or another guideline selection than the config's `analysis`
    and `selection` now: the verdicts beside it are stale. A missing record is not compared:
    check has not made its outputs yet. A record the reader refuses differs."""
    if not path.exists():
        return False
    try:
        decisions = Decisions.read(path)
    except (DataError, ConfigError):
        return True
    now = AnalysisOptions.from_mapping(analysis, "analysis")
    as_recorded = json.loads(json.dumps(list(selection)))
    return decisions.options != now or list(decisions.selection) != as_recorded


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
    return tuple(selector_of(selector) for selector in raw)


def _refuse_unknown(given: Mapping[str, Any], options: type, where: str, source: str) -> None:
    """ConfigError naming the first key of `given` that is no field of the dataclass
    `options` (the block `where` of the config)."""
    fields = [field.name for field in dataclasses.fields(options)]
    unknown = set(given) - set(fields)
    if unknown:
        raise ConfigError(
            f"{source}: {where}.{sorted(unknown)[0]} is not an option; allowed: {', '.join(fields)}"
        )


def _refuse_invalid(
    checks: Sequence[tuple[str, bool, str]], options: object, where: str, source: str
) -> None:
    """ConfigError naming the first of `checks` (key, valid, what is allowed) that failed, with
    the value `options` has for it."""
    for key, valid, allowed in checks:
        if not valid:
            raise ConfigError(
                f"{source}: {where}.{key} is {getattr(options, key)!r}; allowed: {allowed}"
            )


def _schema_checks(properties: Mapping[str, Any], options: object) -> list[tuple[str, bool, str]]:
    """(key, valid, what is allowed) of every field of `options` whose schema property bounds a
    number or lists the allowed values, in the schema's order."""
    checks = []
    for key, spec in properties.items():
        value: Any = getattr(options, key, None)
        if "enum" in spec:
            allowed = spec["enum"]
            checks.append((key, value in allowed, f"one of {', '.join(map(str, allowed))}"))
        elif spec.get("type") == "number":
            checks.append((key, _is_number(value) and _in_range(value, spec), _range_text(spec)))
    return checks


def _in_range(value: float, spec: Mapping[str, Any]) -> bool:
    return (
        ("minimum" not in spec or value >= spec["minimum"])
        and ("exclusiveMinimum" not in spec or value > spec["exclusiveMinimum"])
        and ("maximum" not in spec or value <= spec["maximum"])
        and ("exclusiveMaximum" not in spec or value < spec["exclusiveMaximum"])
    )


def _range_text(spec: Mapping[str, Any]) -> str:
    """A schema number's range as messages state it: "a number in (0, 1)", "a number >= 1"."""
    low = "[" if "minimum" in spec else "(" if "exclusiveMinimum" in spec else ""
    high = "]" if "maximum" in spec else ")" if "exclusiveMaximum" in spec else ""
    lowest = spec.get("minimum", spec.get("exclusiveMinimum"))
    highest = spec.get("maximum", spec.get("exclusiveMaximum"))
    if low and high:
        return f"a number in {low}{lowest:g}, {highest:g}{high}"
    if low:
        return f"a number {'>=' if low == '[' else '>'} {lowest:g}"
    if high:
        return f"a number {'<=' if high == ']' else '<'} {highest:g}"
    return "a number"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
