"""Guideline catalogue, selection of guidelines for a campaign, and the check itself.

`check` pairs experiments for every guideline (pairing.py), tests every pair on the run
medians (verdicts.py), applies the violation rule with the analysis options and writes
tests.csv plus the tables (tables.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jsonschema
import numpy as np
import pandas as pd
import yaml

from mpiguide.atomic import atomic_path
from mpiguide.errors import ConfigError, DataError
from mpiguide.pairing import (
    DEPLOYMENT_KEYS,
    canonical_strings,
    canonical_value,
    combined_values,
    group_ids,
    pair_comparison,
    pair_monotone,
)
from mpiguide.stats import Correction, adjust_pvalues
from mpiguide.tables import write_tables
from mpiguide.verdicts import STAT_COLUMNS, RunMedians, compare

Relation = Literal["le", "approx", "monotone"]
Selector = dict[str, tuple[str, ...]]

SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "guidelines.schema.yaml"
GRID_PARAMETERS = (
    "op", "msg_size", "dtype", "nrep", "work", "topology", "ndim", "nfin", "radius",
    "ordering", "constructor", "reorder", "root", "sync", "max_time",
)  # fmt: skip
SELECTABLE_KEYS = (*DEPLOYMENT_KEYS, *GRID_PARAMETERS)
MEDIAN_COLUMNS = ("exp_id", "run", "median_s", "n_kept")
CORRECTIONS = ("none", "holm", "bh")


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


@dataclass(frozen=True)
class AnalysisOptions:
    varied: str = "msg_size"
    p_thres: float = 0.001
    v_thres: float = 1.03
    correction: Correction = "none"
    confidence: float = 0.95

    @classmethod
    def from_mapping(cls, analysis: Mapping[str, Any], source: str) -> AnalysisOptions:
        """Options from the config's `analysis:` block, defaults for missing keys."""
        unknown = set(analysis) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(
                f"{source}: analysis.{sorted(unknown)[0]} is not an option; allowed: "
                f"{', '.join(cls.__dataclass_fields__)}"
            )
        options = cls(**analysis)
        checks = [
            ("varied", isinstance(options.varied, str) and options.varied in GRID_PARAMETERS,
             f"one of {', '.join(GRID_PARAMETERS)}"),
            ("p_thres", _is_number(options.p_thres) and 0 < options.p_thres < 1,
             "a number in (0, 1)"),
            ("v_thres", _is_number(options.v_thres) and options.v_thres >= 1, "a number >= 1"),
            ("correction", options.correction in CORRECTIONS, f"one of {', '.join(CORRECTIONS)}"),
            ("confidence", _is_number(options.confidence) and 0 < options.confidence < 1,
             "a number in (0, 1)"),
        ]  # fmt: skip
        for key, valid, allowed in checks:
            if not valid:
                raise ConfigError(
                    f"{source}: analysis.{key} is {getattr(options, key)!r}; allowed: {allowed}"
                )
        return options


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _schema() -> dict[str, Any]:
    return yaml.safe_load(SCHEMA.read_text())


def _validate_entry(entry: Any, where: str, validator: jsonschema.Validator) -> None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(entry))
    if error is not None:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        message = error.message
        if not error.absolute_path and error.validator in ("oneOf", "not"):
            message = (
                "needs `lhs` and `rhs`, or `pairs` (relation le or approx), or only `select` "
                "(relation monotone)"
            )
        raise ConfigError(f"{where}{path}: {message}")
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


def load_catalogue(path: str | Path) -> dict[str, Any]:
    """The catalogue YAML, validated against the schema; ConfigError names file and key."""
    path = Path(path)
    try:
        catalogue = yaml.safe_load(path.read_text())
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the guideline catalogue: {error}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(catalogue, dict) or not catalogue:
        raise ConfigError(f"{path}: must map guideline ids to guidelines")
    schema = _schema()
    id_pattern = re.compile(schema["propertyNames"]["pattern"])
    entry_validator = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/guideline", "$defs": schema["$defs"]}
    )
    for guideline_id, entry in catalogue.items():
        if not isinstance(guideline_id, str) or not id_pattern.match(guideline_id):
            raise ConfigError(
                f"{path}: guideline id {guideline_id!r} must match {id_pattern.pattern}"
            )
        _validate_entry(entry, f"{path}: {guideline_id}", entry_validator)
    return catalogue


def _selector(raw: Mapping[str, Any]) -> Selector:
    return {
        key: tuple(canonical_value(v) for v in (value if isinstance(value, list) else [value]))
        for key, value in raw.items()
    }


def _guideline(guideline_id: str, entry: Mapping[str, Any]) -> Guideline:
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
    entry_validator = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/guideline", "$defs": _schema()["$defs"]}
    )
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
            _validate_entry(entry, where, entry_validator)
            resolved.append(_guideline(item["id"], entry))
        else:
            raise ConfigError(f"{where}: must be a guideline id or a mapping with a string 'id'")
    ids = [guideline.id for guideline in resolved]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"{source}: guidelines: {duplicates[0]!r} selected twice")
    return resolved


def _read_medians(medians_parquet: Path) -> pd.DataFrame:
    try:
        medians = pd.read_parquet(medians_parquet)
    except (OSError, ValueError) as error:
        raise DataError(f"{medians_parquet}: cannot read the run medians: {error}") from None
    missing = [c for c in (*MEDIAN_COLUMNS, *DEPLOYMENT_KEYS) if c not in medians.columns]
    if missing:
        raise DataError(f"{medians_parquet}: column {missing[0]!r} missing")
    return medians


def _experiments(medians: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """One row per (mpi, nodes, ppn, exp_id) as canonical strings; row of every median."""
    keys = [c for c in medians.columns if c not in MEDIAN_COLUMNS]
    rows = medians.groupby([*DEPLOYMENT_KEYS, "exp_id"], sort=True, observed=True).ngroup()
    rows = rows.to_numpy()
    first = np.unique(rows, return_index=True)[1]
    experiments = medians.iloc[first][[*keys, "exp_id"]].reset_index(drop=True)
    for key in keys:
        experiments[key] = canonical_strings(experiments[key])
    experiments["row"] = np.arange(len(experiments))
    return experiments, rows, keys


def _tests_of(
    guideline: Guideline,
    experiments: pd.DataFrame,
    keys: list[str],
    run_medians: RunMedians,
    options: AnalysisOptions,
) -> pd.DataFrame:
    pieces = []
    for index, comparison in enumerate(guideline.comparisons):
        if guideline.relation == "monotone":
            pairs = pair_monotone(experiments, keys, comparison.lhs, options.varied)
        else:
            pairs = pair_comparison(experiments, keys, comparison.lhs, comparison.rhs)
        pieces.append(pairs.assign(comparison=index))
    pairs = pd.concat(pieces, ignore_index=True)
    lhs_rows = pairs["lhs_row"].to_numpy(dtype=np.int64)
    rhs_rows = pairs["rhs_row"].to_numpy(dtype=np.int64)
    tests = combined_values(experiments, lhs_rows, rhs_rows, keys)
    tests.insert(0, "comparison", pairs["comparison"].to_numpy())
    tests["group"] = group_ids(tests, keys, options.varied) if len(tests) else []
    exp_ids = experiments["exp_id"].to_numpy()
    tests["lhs_exp_id"] = exp_ids[lhs_rows]
    tests["rhs_exp_id"] = exp_ids[rhs_rows]
    alternative = "two-sided" if guideline.relation == "approx" else "greater"
    stats = compare(run_medians, lhs_rows, rhs_rows, alternative, options.confidence)
    tests = pd.concat([tests, stats], axis=1)
    tests["p_adjusted"] = adjust_pvalues(tests["p_value"].to_numpy(), options.correction)
    ratio = tests["violation_ratio"]
    if guideline.relation == "approx":
        ratio = np.maximum(ratio, 1 / ratio)
    tests["violated"] = (tests["p_adjusted"] <= options.p_thres) & (ratio >= options.v_thres)
    tests.insert(0, "relation", guideline.relation)
    tests.insert(0, "guideline", guideline.id)
    return tests


def evaluate(
    medians: pd.DataFrame, guidelines: Sequence[Guideline], options: AnalysisOptions, source: str
) -> pd.DataFrame:
    """One row per test of every guideline (columns: see docs/analysis.md)."""
    experiments, rows, keys = _experiments(medians)
    if options.varied not in keys:
        raise ConfigError(f"{source}: analysis.varied {options.varied!r} is not in the data")
    for guideline in guidelines:
        for comparison in guideline.comparisons:
            for key in (*comparison.lhs, *comparison.rhs):
                if key not in keys:
                    raise ConfigError(
                        f"{source}: guideline {guideline.id} selects on {key!r}, which the "
                        f"data lack; parameters: {', '.join(keys)}"
                    )
    run_medians = RunMedians.from_frame(rows, medians["median_s"].to_numpy(), len(experiments))
    tests = [_tests_of(g, experiments, keys, run_medians, options) for g in guidelines]
    columns = ["guideline", "relation", *keys, "group", "lhs_exp_id", "rhs_exp_id"]
    columns += [*STAT_COLUMNS[:6], "p_adjusted", *STAT_COLUMNS[6:], "violated"]
    if not tests:
        return pd.DataFrame(columns=columns)
    return pd.concat(tests, ignore_index=True)[columns]


def check(
    medians_parquet: str | Path,
    guidelines: Sequence[Guideline],
    analysis: Mapping[str, Any],
    outdir: str | Path,
    source: str = "config",
) -> None:
    """Test every guideline on the run medians; write tests.csv and the tables into outdir.

    `source` names the config the analysis options come from, for error messages.
    """
    medians_parquet, outdir = Path(medians_parquet), Path(outdir)
    options = AnalysisOptions.from_mapping(analysis, source)
    medians = _read_medians(medians_parquet)
    tests = evaluate(medians, guidelines, options, str(medians_parquet))
    outdir.mkdir(parents=True, exist_ok=True)
    with atomic_path(outdir / "tests.csv") as temporary:
        tests.to_csv(temporary, index=False)
    write_tables(tests, guidelines, outdir)
