"""Campaign config: loading, schema validation (defaults filled in) and the semantic checks a
schema cannot express. Every error names the config file and the key path and says what is
allowed.

The schema is the package's data/schemas/config.schema.yaml (mpiguide.core.package_data); the
workflow checks its config with workflow_campaign, once per invocation.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mpiguide.analysis.analysis_types import (
    PROCESS_COUNT_KEYS,
    AnalysisOptions,
    Guideline,
    Selector,
)
from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.analysis.sequential import Looks
from mpiguide.analysis.verdicts import Thresholds
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.expansion import (
    VERIFY_SUFFIX,
    Expansion,
    check_entry_names,
    expand_entries,
    tune_libraries,
)
from mpiguide.campaign.installs import CHECKOUT, SETUP_COMMAND, entry_install, with_installs
from mpiguide.campaign.launch import command_words
from mpiguide.campaign.listings import Listing, Listings
from mpiguide.campaign.scale import LOCAL_MPI, apply_scale
from mpiguide.campaign.schema import load_schema, read_campaign_file, validate_schema
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE, MODEL_CATALOGUE
from mpiguide.core.paths import RESULTS_ROOT, deployment_name
from mpiguide.core.strict_yaml import load_yaml
from mpiguide.core.values import LIBRARY_CHOICE, TUNING_GUIDELINE_PREFIXES, canonical_value
from mpiguide.plan.grid import GRID_KEYS, INTERLEAVE_KEY, PARAMETERS, STENCIL_TOPOLOGIES, expand
from mpiguide.plan.grid import describe as describe_row
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.plan.limits import kernel_limits
from mpiguide.plan.operations import load_operations
from mpiguide.reports.models import Model, load_models, resolve_models
from mpiguide.selftest.inject import LD_PRELOAD_SEPARATORS, inject_libraries
from mpiguide.tune.library_algorithms import INFO_PROGRAMS

# Characters of a library path the workflow builds: it reaches make as BUILD, and make expands
# `$` and its recipes' shell the rest.
BUILT_PATH = re.compile(r"[A-Za-z0-9_./+-]+")


def find_repository_file(relative: Path, start: Path) -> Path:
    """`relative` in the nearest checkout holding `start` (a file or directory), else in the
    package's checkout."""
    package_root = Path(__file__).resolve().parents[3]
    start = start.resolve()
    for directory in (start, *start.parents, package_root):
        if (directory / relative).is_file():
            return directory / relative
    raise ConfigError(
        f"cannot find {relative} above {start} nor in the mpiguide checkout {package_root}"
    )


def validate_runs(runs: Any, source: str) -> None:
    """Validate a campaign's `runs:` value given alone (e.g. on the command line): its part of
    the schema, and a range's min <= max."""
    schema = load_schema()
    part = {
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "type": "object",
        "required": ["runs"],
        "properties": {"runs": schema["properties"]["runs"]},
    }
    validate_schema({"runs": runs}, part, source)
    _check_run_range(runs, source)


def _check_run_range(runs: Any, source: str) -> None:
    if isinstance(runs, Mapping) and runs["min"] > runs["max"]:
        raise ConfigError(
            f"{source}: runs.min {runs['min']} is above runs.max {runs['max']}; allowed: min <= max"
        )


def _check_runs(config: Mapping[str, Any], options: AnalysisOptions, source: str) -> None:
    """A range of runs: min <= max, and a first look at which the chosen test can decide: two
    runs per side for the t-tests; for the rank-sum, a smallest p-value 1/C(2n, n) at or below
    the level each look decides at (p_thres / looks)."""
    runs = config["runs"]
    if not isinstance(runs, Mapping):
        return
    _check_run_range(runs, source)
    looks = Looks.of(runs)
    if options.test == "ranksum":
        level = looks.spent(Thresholds(options.p_thres, options.v_thres, options.confidence))
        smallest = next(n for n in itertools.count(1) if 1 / math.comb(2 * n, n) <= level.p_thres)
        if runs["min"] < smallest:
            raise ConfigError(
                f"{source}: runs.min {runs['min']}: the rank-sum's smallest p-value at that many "
                f"runs is above {level.p_thres:.3g}, p_thres over the {looks.count} looks: no "
                f"test could be violated at the first look; allowed: min >= {smallest}"
            )
    elif runs["min"] < 2:
        raise ConfigError(
            f"{source}: runs.min {runs['min']}: the t-tests need at least 2 runs per side to "
            "decide anything; allowed: min >= 2"
        )


def validate_grid_spec(spec: Any, source: str) -> None:
    """Validate the grid keys of a config (GRID_KEYS, and the campaign's interleave where the
    spec gives it: Campaign.grid_spec) against their part of the schema."""
    schema = load_schema()
    # Without its default: a spec without the key means the kernel's default.
    interleave = {k: v for k, v in schema["properties"][INTERLEAVE_KEY].items() if k != "default"}
    spec_schema = {
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "type": "object",
        "additionalProperties": False,
        "required": list(GRID_KEYS),
        "properties": {key: schema["properties"][key] for key in GRID_KEYS}
        | {INTERLEAVE_KEY: interleave},
    }
    validate_schema(spec, spec_schema, source)


def validate_models_selection(selection: Any, source: str) -> None:
    """Validate a campaign's `models:` value (given alone, e.g. on the command line) against
    its part of the schema."""
    schema = load_schema()
    part = {
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "type": "object",
        "properties": {"models": schema["properties"]["models"]},
    }
    validate_schema({"models": selection}, part, source)


def _check_commands(config: Mapping[str, Any], source: str) -> None:
    for name, entry in config["mpi"].items():
        for key in ("mpicc", "launcher", "srun"):
            command_words(entry[key], f"{source}: mpi.{name}.{key}")


def _check_installs(config: Mapping[str, Any], source: str) -> None:
    """Before the algorithms are listed: an entry's install is in place where the campaign
    builds and runs, and an entry sweeps only a library whose algorithms mpiguide can list."""
    for name, entry in config["mpi"].items():
        install = entry_install(entry)
        if install is not None and not config["analysis_only"] and not install.installed():
            raise ConfigError(
                f"{source}: mpi.{name}.install: {install.name} is not installed in "
                f"{install.prefix}; run `{SETUP_COMMAND}` in {CHECKOUT}"
            )
        library = entry.get("library")
        if entry.get("algorithms") and library is not None and library not in INFO_PROGRAMS:
            raise ConfigError(
                f"{source}: mpi.{name}.algorithms: sweeping {library}'s algorithms is not yet "
                f"supported (libraries whose algorithms can be swept: "
                f"{', '.join(INFO_PROGRAMS)}); measure it without `algorithms`"
            )


def _check_deployments(config: Mapping[str, Any], source: str) -> None:
    seen: dict[tuple[int, int], int] = {}
    for index, deployment in enumerate(config["deployments"]):
        nodes, ppn = deployment["nodes"], deployment["ppn"]
        name = deployment_name(nodes, ppn)
        if nodes * ppn > kernel_limits()["max_ranks"]:
            raise ConfigError(
                f"{source}: deployments[{index}]: {name} is {nodes * ppn} ranks; the "
                f"kernel runs at most {kernel_limits()['max_ranks']}"
            )
        if nodes * ppn < 2:
            raise ConfigError(
                f"{source}: deployments[{index}]: {name} is {nodes * ppn} rank; "
                "a measurement needs at least 2 ranks (nodes x ppn >= 2)"
            )
        node_size = deployment.get("node_size")
        if node_size is not None and node_size > nodes * ppn:
            raise ConfigError(
                f"{source}: deployments[{index}].node_size: {node_size} is more than the "
                f"deployment's {nodes * ppn} ranks; allowed: 1 to {nodes * ppn}"
            )
        if (nodes, ppn) in seen:
            raise ConfigError(
                f"{source}: deployments[{index}]: {name} repeats deployments[{seen[nodes, ppn]}]"
            )
        seen[nodes, ppn] = index


def _check_roots(config: Mapping[str, Any], source: str) -> None:
    ranks = min(d["nodes"] * d["ppn"] for d in config["deployments"])
    for index, block in enumerate(config["experiments"]):
        roots = block.get("root", [])
        for root in roots if isinstance(roots, list) else [roots]:
            if root >= ranks:
                raise ConfigError(
                    f"{source}: experiments[{index}].root: {root} is not a rank of the smallest "
                    f"deployment ({ranks} ranks: 0 to {ranks - 1})"
                )


def _neighbours(row: Mapping[str, Any], ranks: int) -> int:
    """The kernel's bound on a row's neighbour count (topology.c topology_max_degree)."""
    if row["topology"] in STENCIL_TOPOLOGIES:
        return (2 * row["radius"] + 1) ** row["ndim"] - 1
    match row["topology"]:
        case "cart":
            return 2 * row["ndim"]
        case "full":
            return ranks
    return 0


def _check_kernel_limits(
    config: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], source: str
) -> None:
    """What the kernel refuses for a run's shape (input_row.c check_limits), in every deployment:
    a stencil's offsets, and the bytes of one buffer."""
    operations = load_operations()
    max_offsets = kernel_limits()["max_stencil_offsets"]
    max_bytes = kernel_limits()["max_buffer_bytes"]
    for deployment in config["deployments"]:
        ranks = deployment["nodes"] * deployment["ppn"]
        node = deployment.get("node_size") or deployment["ppn"]
        shape = deployment_name(deployment["nodes"], deployment["ppn"])
        for row in rows:
            where = f"{source}: experiments (exp_id {row['exp_id']}: {describe_row(row)})"
            degree = _neighbours(row, ranks)
            if row["topology"] in STENCIL_TOPOLOGIES and degree > max_offsets:
                raise ConfigError(
                    f"{where}: radius {row['radius']} in {row['ndim']} dimensions gives more "
                    f"than {max_offsets} neighbours, the kernel's limit"
                )
            kind = operations[row["op"]].msg_size
            if kind == "none":
                continue
            blocks = {"per_neighbor": degree, "per_process": ranks}.get(kind, 1)
            if operations[row["op"]].node_vectors:
                blocks *= node
            if blocks and row["msg_size"] * blocks > max_bytes:
                raise ConfigError(
                    f"{where}: msg_size {row['msg_size']} x {blocks} blocks ({shape}) exceeds "
                    f"the kernel's {max_bytes} bytes per buffer"
                )


def _check_preload(config: Mapping[str, Any], source: str, tuning: Mapping[str, str]) -> None:
    """Every library an entry preloads exists, or is one the workflow builds at a path that
    reaches make and a shell as plain characters (inject.inject_libraries; `tuning`: the
    libmpiguide-tune builds, expansion.tune_libraries)."""
    built = {**inject_libraries(config["mpi"], source), **tuning}
    for name, entry in config["mpi"].items():
        value = entry["env"].get("LD_PRELOAD")
        if value is None:
            continue
        where = f"{source}: mpi.{name}.env.LD_PRELOAD"
        if value in built:
            if not BUILT_PATH.fullmatch(value):
                raise ConfigError(
                    f"{where}: {value!r}: a library the workflow builds needs a path of "
                    "letters, digits and _ . / + - only"
                )
            continue
        for library in re.split(f"[{''.join(LD_PRELOAD_SEPARATORS)}]", value):
            if library and library not in built and not Path(library).is_file():
                raise ConfigError(
                    f"{where}: {library!r}: no such file (relative paths are taken from the "
                    "directory snakemake runs in)"
                )


class _Measured:
    """What a campaign measures, in the canonical form of selector values
    (mpiguide.core.values.canonical_value): experiments, and deployments, on every mpi entry."""

    def __init__(self, config: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
        self.experiments = [
            {p: None if row[p] is None else canonical_value(row[p]) for p in PARAMETERS}
            | ({ALGORITHM: LIBRARY_CHOICE} if row[ALGORITHM] == "" else {})
            for row in rows
        ]
        self.deployments = [
            {"nodes": canonical_value(d["nodes"]), "ppn": canonical_value(d["ppn"])}
            for d in config["deployments"]
        ]
        self.values: dict[str, set[str]] = {
            p: {value for e in self.experiments if (value := e[p]) is not None} for p in PARAMETERS
        }
        self.values["mpi"] = set(config["mpi"])
        for key in ("nodes", "ppn"):
            self.values[key] = {d[key] for d in self.deployments}

    def unmatched(self, selector: Selector, where: str) -> str | None:
        """Why the selector matches nothing measured, or None if it matches."""
        for parameter, allowed in selector.items():
            if not self.values[parameter].intersection(allowed):
                present = ", ".join(sorted(self.values[parameter])) or "none, it never applies"
                wanted = allowed[0] if len(allowed) == 1 else list(allowed)
                return (
                    f"{where}.{parameter}: {wanted!r} is not in this campaign "
                    f"(its values of {parameter}: {present})"
                )
        # each value occurs somewhere; do they occur together in one experiment / deployment?
        kinds = (
            ("experiment", PARAMETERS, self.experiments),
            ("deployment", ("nodes", "ppn"), self.deployments),
        )
        for kind, keys, candidates in kinds:
            fixed = {k: v for k, v in selector.items() if k in keys}
            if fixed and not any(
                all(candidate[k] in allowed for k, allowed in fixed.items())
                for candidate in candidates
            ):
                wanted = ", ".join(f"{k}={'|'.join(v)}" for k, v in fixed.items())
                return f"{where}: no {kind} of this campaign has {wanted}"
        return None


def _comparison_sides(guideline: Guideline) -> Iterator[dict[str, Selector]]:
    """Each comparison of a guideline as key path inside its catalogue entry → selector."""
    for index, comparison in enumerate(guideline.comparisons):
        if guideline.relation == "monotone":
            yield {"select": comparison.lhs}
        elif len(guideline.comparisons) > 1:
            yield {f"pairs[{index}].lhs": comparison.lhs, f"pairs[{index}].rhs": comparison.rhs}
        else:
            yield {"lhs": comparison.lhs, "rhs": comparison.rhs}


def _check_own_guideline_ids(selection: Sequence[Any], source: str) -> None:
    """The campaign's guidelines do not take the names of those mpiguide adds to tune and
    verify (`ALGO.<entry>.<op>.<algorithm>`, `TUNE.<entry>.<collective>`,
    `APPLIED.<entry>.<collective>[.<algorithm>]`): one of them could
    clash with a campaign's own, now or once it sweeps more."""
    reserved = tuple(f"{prefix}." for prefix in TUNING_GUIDELINE_PREFIXES)
    named = f"{', '.join(reserved[:-1])} or {reserved[-1]}"
    for index, item in enumerate(selection):
        name = item.get("id") if isinstance(item, Mapping) else item
        if isinstance(name, str) and name.startswith(reserved):
            raise ConfigError(
                f"{source}: guidelines[{index}]: {name!r}: ids beginning {named} name the "
                "guidelines mpiguide adds to tune and verify; give this one another id"
            )


def _check_guidelines(
    config: Mapping[str, Any],
    catalogue: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    source: str,
) -> None:
    """Ids, inline entries and selector keys are checked by guidelines.resolve; here every
    selected guideline needs a comparison whose selectors may all match (a family such as
    GL11 may hold comparisons that this campaign does not measure)."""
    measured = _Measured(config, rows)
    for index, guideline in enumerate(resolve(config["guidelines"], catalogue, source)):
        where = f"{source}: guidelines[{index}] ({guideline.id})"
        reasons = [
            [measured.unmatched(selector, f"{where}.{side}") for side, selector in sides.items()]
            for sides in _comparison_sides(guideline)
        ]
        if all(any(comparison) for comparison in reasons):
            first = next(reason for reason in reasons[0] if reason)
            raise ConfigError(f"{first}; the guideline matches no experiment of this campaign")


def _check_analysis(
    config: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    options: AnalysisOptions,
    source: str,
) -> None:
    """Variability selectors and a varied parameter that vary in this campaign."""
    _check_variability_selectors(config, rows, options.variability, source)
    varied = config["analysis"]["varied"]
    if varied in PROCESS_COUNT_KEYS:
        _check_process_count(config["deployments"], varied, source)
        return
    varying = [p for p in PARAMETERS if len({row[p] for row in rows} - {None}) > 1]
    if varied not in varying:
        raise ConfigError(
            f"{source}: analysis.varied: '{varied}' takes one value only in this campaign; "
            f"parameters that vary: {', '.join(varying) or 'none'}"
        )


def _check_variability_selectors(
    config: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    selectors: Sequence[Selector],
    source: str,
) -> None:
    """Each selector of analysis.variability picks something this campaign measures: a typo
    would otherwise plot nothing without a word."""
    measured = _Measured(config, rows)
    counts = {canonical_value(d["nodes"] * d["ppn"]) for d in config["deployments"]}
    for index, selector in enumerate(selectors):
        where = f"{source}: analysis.variability[{index}]"
        if "nprocs" in selector and not counts.intersection(selector["nprocs"]):
            raise ConfigError(
                f"{where}.nprocs: {list(selector['nprocs'])} is not in this campaign (its "
                f"process counts: {', '.join(sorted(counts, key=int))})"
            )
        reason = measured.unmatched({k: v for k, v in selector.items() if k != "nprocs"}, where)
        if reason:
            raise ConfigError(reason)


def _check_process_count(
    deployments: Sequence[Mapping[str, Any]], varied: str, source: str
) -> None:
    """A process count to vary along must take two values among the deployments; along nprocs,
    two deployments with the same count (1x4, 2x2) would be two points at one x."""
    counts = [d["nodes"] * d["ppn"] if varied == "nprocs" else d[varied] for d in deployments]
    if len(set(counts)) < 2:
        raise ConfigError(
            f"{source}: analysis.varied: '{varied}' takes one value only in this campaign's "
            f"deployments ({counts[0]}); list deployments with at least two"
        )
    if varied == "nprocs" and len(set(counts)) < len(counts):
        same = [
            deployment_name(d["nodes"], d["ppn"])
            for d, c in zip(deployments, counts, strict=True)
            if counts.count(c) > 1
        ]
        raise ConfigError(
            f"{source}: analysis.varied: 'nprocs' is ambiguous: deployments "
            f"{', '.join(same)} have the same number of processes; vary nodes or ppn instead"
        )


def _check_models(
    config: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], source: str
) -> None:
    """Each selected model exists and each of its ops is measured, with a msg_size where the
    model depends on n."""
    if not config["models"]:
        return
    catalogue = load_models(MODEL_CATALOGUE)
    measured = {row["op"]: row["msg_size"] is not None for row in rows}
    for index, selection in enumerate(resolve_models(config["models"], catalogue, source)):
        for position, op in enumerate(selection.ops):
            where = f"{source}: models[{index}].ops[{position}]"
            if op not in measured:
                raise ConfigError(
                    f"{where}: {op!r} is not measured in this campaign "
                    f"(its ops: {', '.join(sorted(measured))})"
                )
            if selection.model.uses_n and not measured[op]:
                raise ConfigError(
                    f"{where}: {selection.model.id} depends on the message size n, which "
                    f"{op!r} does not have"
                )
            _check_determined(selection.model, op, rows, config["deployments"], where)


def _check_determined(
    model: Model,
    op: str,
    rows: Sequence[Mapping[str, Any]],
    deployments: Sequence[Mapping[str, Any]],
    where: str,
) -> None:
    """The sizes and process counts the campaign measures `op` at can determine every
    coefficient of `model` — known before anything is measured."""
    sizes = sorted({row["msg_size"] or 0 for row in rows if row["op"] == op})
    counts = sorted({d["nodes"] * d["ppn"] for d in deployments})
    n, p = (grid.ravel() for grid in np.meshgrid(sizes, counts))
    if not model.determined_by(n, p):
        measured = f"p in {counts}" + (f" and n in {sizes}" if model.uses_n else "")
        raise ConfigError(
            f"{where}: {model.id} ({model.text}) cannot be fitted to {op} measured at "
            f"{measured}: too few process counts or message sizes for its "
            f"{len(model.terms)} coefficients"
        )


def check_campaign(
    config: dict[str, Any],
    catalogue: dict[str, Any],
    source: str,
    tuning: Mapping[str, str] | None = None,
) -> AnalysisOptions:
    """Semantic checks of a schema-valid config (defaults filled in); `source` is the config
    file named in every ConfigError. Returns the analysis options as the analysis reads them
    (AnalysisOptions, its range checks)."""
    _check_commands(config, source)
    _check_deployments(config, source)
    if not config["analysis_only"]:
        _check_preload(config, source, tuning or {})
    rows = expand(config, source)
    _check_roots(config, source)
    _check_kernel_limits(config, rows, source)
    _check_guidelines(config, catalogue, rows, source)
    options = AnalysisOptions.from_mapping(config["analysis"], source)
    _check_analysis(config, rows, options, source)
    _check_runs(config, options, source)
    _check_models(config, rows, source)
    return options


def scaled_campaign(
    config: dict[str, Any], schema: Mapping[str, Any], source: str, start: Path
) -> dict[str, Any]:
    """The schema-valid config to run: its `local:` block applied at `scale: local`
    (mpiguide.campaign.scale), and schema-validated again, so the local MPI entries get their
    defaults."""
    # This machine's MPI entries (config/local-mpi.yaml) are site configuration: looked up
    # beside the campaign only when the campaign runs at local scale.
    local_mpi = find_repository_file(LOCAL_MPI, start) if config["scale"] == "local" else LOCAL_MPI
    scaled = apply_scale(config, local_mpi, source)
    if scaled["scale"] == "local":
        with_installs(scaled)
        validate_schema(scaled, schema, source)
    return scaled


def expanded_campaign(
    config: dict[str, Any], source: str, start: Path, listing: Listing = Listing.RUN
) -> Expansion:
    """The scaled config with the algorithms its entries sweep as experiments and a guideline
    per algorithm (mpiguide.campaign.expansion; what the libraries offer as saved below
    `start`'s results/<campaign>/, else listed as `listing` allows); at `verify: true` that of
    the campaign that re-measures it with the tuning found below `start`'s
    results/<campaign>/tuning/."""
    check_entry_names(config, source)
    results = start / RESULTS_ROOT
    campaign = f"{config['campaign']}{VERIFY_SUFFIX if config['verify'] else ''}"
    mode = Listing.SAVED_ONLY if config["analysis_only"] else listing
    return expand_entries(config, source, results, Listings.of(results / campaign, mode).choices)


def checked_campaign(
    config: Any,
    source: str,
    local_start: Path,
    cwd: Path,
    catalogue: Path = GUIDELINE_CATALOGUE,
    listing: Listing = Listing.RUN,
) -> Campaign:
    """Every check of a campaign config, once: the schema (first the keys of the installs its
    entries name, then the defaults filled in; its integers are integers as written), its
    `local:` scale (config/local-mpi.yaml looked up above `local_start`), its entries' installs
    in place, its algorithm or verify entries (results below `cwd`; `listing`: whether
    a library's algorithms not yet saved there may be listed, and saved), and what a schema
    cannot express (op names, where expressions, guideline ids, selectors, the varied
    parameter, ranks >= 2). `config` is filled in place; the Campaign holds the final config.
    """
    schema = load_schema()
    with_installs(config)
    validate_schema(config, schema, source)
    _check_own_guideline_ids(config["guidelines"], source)
    scaled = scaled_campaign(config, schema, source, local_start)
    _check_installs(scaled, source)
    expansion = expanded_campaign(scaled, source, cwd, listing)
    tuning = tune_libraries(expansion.config, expansion.kernel_of)
    options = check_campaign(expansion.config, load_catalogue(catalogue), source, tuning)
    return Campaign(
        expansion.config, options, source, expansion.settings, dict(expansion.kernel_of)
    )


def load_campaign(
    path: Path, catalogue_path: Path | None = None, scale: str | None = None
) -> dict[str, Any]:
    """Read, schema-validate (defaults filled in), scale (`scale` overrides the file's
    `scale:`) and check a campaign config file."""
    config = read_campaign_file(path, scale)
    catalogue = catalogue_path or GUIDELINE_CATALOGUE
    return checked_campaign(config, str(path), path, Path.cwd(), catalogue).config


def workflow_campaign(
    config: dict[str, Any],
    config_files: Sequence[str],
    cwd: Path,
    listing: Listing = Listing.RUN,
) -> Campaign:
    """The campaign of a Snakemake invocation: `config` as Snakemake read it from
    `config_files` (and --config), checked once (checked_campaign; `listing`: Listing.SAVE in
    the invocation a user started, SAVED_ONLY in the jobs it spawns, RUN in a dry run).

    Snakemake's YAML reader keeps the last of two equal keys (a second `mpi` entry of the same
    name replaces the first); the files are read again with the package's strict loader, which
    refuses that, naming the line. Syntax errors never get here: Snakemake stops on them first.
    """
    for config_file in config_files:
        load_yaml(Path(config_file))
    return checked_campaign(config, ", ".join(config_files), cwd, cwd, listing=listing)
