"""What a campaign's entries add to it, in one place: an entry's `algorithms:` as values of the
experiment parameter `algorithm` with a guideline per setting, and at `verify: true` the campaign
that re-measures it with its tuning. The result (Expansion) rides on the checked Campaign: the
settings and the entries a verify campaign adds are typed there, never hidden in the config.

`algorithms: {allreduce: all}` in entry `openmpi` (with `library: openmpi`) gives every experiment
of an op that calls MPI_Allreduce (operations.tsv's `algorithm_of`) a sibling per algorithm the
installed library offers, the same experiment with `algorithm` naming it: the kernel runs it in the
same launch, in the same shuffled order, as the library's own choice (`algorithm` empty, named
`library-default` where guidelines select and pair it). No entry and no launch is added. Each
setting brings the guideline `ALGO.<entry>.<op>.<algorithm>`: within the entry, the op with the
library's choice is not slower than with that algorithm (relation le), paired by every other
parameter, so a violation is an algorithm of the library's own that beats its choice, with the
paired test's bounds. The campaign's other guidelines pair an op with an algorithm against one
without (a mock-up) as any parameter that applies to one side only: they are evaluated under
every algorithm.

The grid is the campaign's, run by every entry: when one entry sweeps, every entry sweeps the same
library's same algorithms (the kernel refuses a name its library does not list). What a
library offers is listed once and saved beside the campaign's results (mpiguide.campaign.listings).

A library that selects its algorithm only per launch (Intel MPI's presets, swept_per_launch)
leaves the grid alone: each setting adds an mpi entry named as the setting
(`<entry>.<op>.<algorithm>`), the entry with the setting's environment over its own, which runs the
entry's kernel build on the experiments of the ops that call the collective
(Campaign.ops_of), in the same blocks as the entry; its guideline `ALGO.<entry>.<op>.<algorithm>`
compares the library's choice in the two entries, across launches.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mpiguide.analysis.analysis_types import DECIDED_BY_TUNING
from mpiguide.core.errors import ConfigError
from mpiguide.core.paths import (
    ALGORITHMS_CSV,
    TUNE_LIBRARY,
    TUNING_TREE,
    campaign_results,
    mockup_tuning_name,
    tune_library_file,
)
from mpiguide.core.values import LIBRARY_CHOICE, UNTUNED
from mpiguide.plan.grid import APPLIES_WHEN, DEFAULTS, INTERLEAVE_KEY, applies, expand
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.plan.operations import load_operations
from mpiguide.selftest.inject import LD_PRELOAD_SEPARATORS
from mpiguide.tune.applied import (
    APPLIED_SUFFIX,
    applied_guidelines,
    applied_name,
    default_guideline_id,
    runs_guideline_id,
    settings_env,
)
from mpiguide.tune.choose import chosen_algorithms
from mpiguide.tune.intelmpi_presets import preset_text
from mpiguide.tune.library_algorithms import (
    GUIDELINE_SOURCE,
    INFO_PROGRAMS,
    AlgorithmSetting,
    Choices,
    settings_of,
    swept_per_launch,
)
from mpiguide.tune.mockup_rules import (
    REPLACEMENTS,
    TUNE_GUIDELINE_SOURCE,
    rule_lines,
    tune_guideline_id,
)

# Guideline ids are at most 64 characters (the catalogue's schema).
GUIDELINE_ID_MAX = 64
# `verify: true`: the campaign re-measured with its tuning, in results/<campaign>-verify/.
VERIFY_SUFFIX = "-verify"
# Snakemake reads the campaign, the verify campaign too, before any job runs: verify cannot
# follow `tune` in one invocation.
VERIFY_STEPS = (
    "run the target `tune` first, in an invocation of its own: `snakemake tune --configfile "
    "FILE`, then `snakemake verify --configfile FILE --config verify=True`"
)
TUNED_SUFFIX = ".tuned"
# Names of mpi entries that would clash with a name the workflow makes: verify's tuned entry, and
# the rules the workflow names after an entry (`run_<entry>`, `build_<entry>`) beside its own
# `run_block`, `build_inject_<N>` and `build_tune_<N>` (tests hold these to the rule files).
RESERVED_ENTRY_NAMES = (
    (re.compile(rf".*{re.escape(TUNED_SUFFIX)}$"), "the name `verify` gives an entry it tunes"),
    (
        re.compile(rf".*{re.escape(APPLIED_SUFFIX)}$"),
        "the name `verify` gives an entry it runs with its settings file",
    ),
    (re.compile(r"block$"), "its rule run_block would be the rule that runs blocks"),
    (re.compile(r"(inject|tune)_[0-9]+$"), "its rule build_<name> would be a library's build"),
)
# (entry, library, program, key_path) -> what the library offers (Listings.choices)
Discover = Callable[[str, str, str, str], Choices]


@dataclass(frozen=True)
class Expansion:
    """A campaign's config as its entries expand it, the algorithm settings its entries sweep,
    and per entry added to run another's kernel build (verify's `<entry>.tuned` and
    `<entry>.applied`, a preset entry of a sweep per launch) that entry."""

    config: dict[str, Any]
    settings: tuple[AlgorithmSetting, ...] = ()
    kernel_of: Mapping[str, str] = field(default_factory=dict)


def check_entry_names(config: Mapping[str, Any], source: str) -> None:
    """No mpi entry is named as one the workflow makes, or makes a rule of that name."""
    for name in config["mpi"]:
        for pattern, reason in RESERVED_ENTRY_NAMES:
            if pattern.match(name):
                raise ConfigError(f"{source}: mpi.{name}: a reserved name: {reason}; rename it")


def _ops(block: Mapping[str, Any]) -> list[str]:
    op = block["op"]
    return list(op) if isinstance(op, list) else [op]


def _swept_collectives(config: Mapping[str, Any]) -> set[str]:
    """The MPI collectives the campaign's ops call (operations.tsv's `algorithm_of`)."""
    operations = load_operations()
    return {
        operations[op].algorithm_of
        for block in config["experiments"]
        for op in _ops(block)
        if op in operations
    } - {"none"}


def _check_shared_grid(
    config: Mapping[str, Any], source: str, kernel_of: Mapping[str, str]
) -> None:
    """Every entry that runs its own kernel sweeps what the first entry that sweeps inside its
    launches sweeps (a sweep per launch leaves the grid alone)."""
    entries = {n: e for n, e in config["mpi"].items() if n not in kernel_of}
    swept = {
        n: e
        for n, e in entries.items()
        if e.get("algorithms") and not swept_per_launch(e.get("library"))
    }
    if not swept:
        return
    first, model = next(iter(swept.items()))
    for name, entry in entries.items():
        same = (entry.get("library"), entry.get("algorithms")) == (
            model.get("library"),
            model["algorithms"],
        )
        if not same:
            raise ConfigError(
                f"{source}: mpi.{name}: every entry of a campaign runs its grid, so when "
                f"mpi.{first} sweeps {model.get('library')}'s algorithms {model['algorithms']} "
                f"every entry must have the same `library` and `algorithms`; measure other "
                "libraries or sweeps in a campaign of their own"
            )


def algorithm_settings(
    config: Mapping[str, Any],
    source: str,
    discover: Discover,
    kernel_of: Mapping[str, str] | None = None,
) -> list[AlgorithmSetting]:
    """Every setting the config's entries ask for, checked against what their libraries offer
    (`discover(entry, library, program, key_path)`, e.g. Listings.choices); `kernel_of`: the
    entries added to run another's kernel (verify's tuned entries), which sweep nothing."""
    measured = _swept_collectives(config)
    settings: list[AlgorithmSetting] = []
    ranks = frozenset(d["nodes"] * d["ppn"] for d in config["deployments"])
    for name, entry in config["mpi"].items():
        asked = entry.get("algorithms")
        if not asked:
            continue
        where = f"{source}: mpi.{name}"
        library = entry.get("library")
        if library is None:
            raise ConfigError(
                f"{where}.algorithms: needs the entry's `library` ({', '.join(INFO_PROGRAMS)}): "
                "it says how the algorithms are listed and selected"
            )
        program = entry.get("info") or INFO_PROGRAMS[library]
        choices = discover(name, library, program, f"{where}.info")
        for op in asked:
            if op not in measured:
                raise ConfigError(
                    f"{where}.algorithms.{op}: the campaign measures no {op!r} (the collectives "
                    f"its ops call: {', '.join(sorted(measured)) or 'none'})"
                )
        settings.extend(settings_of(name, asked, choices, f"{where}.algorithms", ranks))
    _check_shared_grid(config, source, kernel_of or {})
    for setting in settings:
        if len(setting.guideline) > GUIDELINE_ID_MAX:
            raise ConfigError(
                f"{source}: mpi.{setting.base}: name too long for the guideline "
                f"{setting.guideline!r} (at most {GUIDELINE_ID_MAX} characters); shorten it"
            )
    return settings


def ops_calling(config: Mapping[str, Any], collective: str) -> list[str]:
    """The campaign's ops that call `collective` (operations.tsv's `algorithm_of`), sorted."""
    operations = load_operations()
    measured = {op for block in config["experiments"] for op in _ops(block)}
    return sorted(op for op in measured if operations[op].algorithm_of == collective)


def _guideline(setting: AlgorithmSetting, ops: Sequence[str]) -> dict[str, Any]:
    call = f"MPI_{setting.op.capitalize()}"
    own = {"mpi": setting.base, "op": list(ops), ALGORITHM: LIBRARY_CHOICE}
    if swept_per_launch(setting.library):
        number = setting.algorithm.number
        variable, value = next(iter(setting.env().items()))
        text = (
            f"{call} as {setting.base} chooses ≼ with Intel MPI preset {number} "
            f"({preset_text(setting.op, number or 0)}), {variable}={value}, across launches"
        )
        rhs = {"mpi": setting.name, "op": list(ops), ALGORITHM: LIBRARY_CHOICE}
    else:
        text = (
            f"{call} as {setting.base} chooses ≼ with its {setting.library} algorithm "
            f"{setting.algorithm.name}, in the same launches"
        )
        rhs = {"mpi": setting.base, "op": list(ops), ALGORITHM: setting.algorithm.name}
    return {
        "id": setting.guideline,
        "source": GUIDELINE_SOURCE,
        "text": text,
        "relation": "le",
        "lhs": own,
        "rhs": rhs,
        "decided_by": DECIDED_BY_TUNING,
    }


def preset_kernels(settings: Sequence[AlgorithmSetting]) -> dict[str, str]:
    """The entries the settings swept per launch add, each with the entry whose kernel build it
    runs (its base: the same mpicc)."""
    return {s.name: s.base for s in settings if swept_per_launch(s.library)}


def _preset_entries(
    config: Mapping[str, Any], settings: Sequence[AlgorithmSetting], source: str
) -> dict[str, dict[str, Any]]:
    """Per setting swept per launch, its entry: the base entry without `algorithms`, with the
    setting's environment over the base's own."""
    entries: dict[str, dict[str, Any]] = {}
    for setting in settings:
        if not swept_per_launch(setting.library):
            continue
        base = config["mpi"][setting.base]
        where = f"{source}: mpi.{setting.base}"
        if setting.name in config["mpi"]:
            raise ConfigError(
                f"{source}: mpi.{setting.name}: the name of the entry that {where}.algorithms "
                f"adds for {setting.library}'s {setting.op} {setting.algorithm.name}; rename it"
            )
        env = setting.env()
        own = base.get("env", {})
        clash = sorted(env.keys() & own.keys())
        if clash:
            raise ConfigError(
                f"{where}.env.{clash[0]}: set by each entry of its sweep of {setting.op} "
                f"({where}.algorithms); the entry itself measures the library's own choice, "
                "so leave it out"
            )
        entry = copy.deepcopy(dict(base))
        entry.pop("algorithms", None)
        entry["env"] = {**own, **env}
        entries[setting.name] = entry
    return entries


def _swept_block(block: Mapping[str, Any], op: str, names: Sequence[str]) -> dict[str, Any]:
    """The block's experiments of `op` again, each with `algorithm` naming one of `names`: the
    block's keys that can apply to `op` on one of the block's topologies, `op`, `algorithm`."""
    operation = load_operations()[op]
    topology = block.get("topology", DEFAULTS["topology"])
    topologies = topology if isinstance(topology, list) else [topology]
    kept = {
        key: value
        for key, value in block.items()
        if key not in APPLIES_WHEN or any(applies(key, operation, t) for t in topologies)
    }
    return {**kept, "op": op, ALGORITHM: list(names)}


def _untuned_only(block: Mapping[str, Any]) -> bool:
    """Whether a block asks for the library's own call untouched by libmpiguide-tune alone
    (`algorithm: untuned`, verify adds such blocks): no other algorithm is swept in it."""
    algorithm = block.get(ALGORITHM)
    names = algorithm if isinstance(algorithm, list) else [algorithm]
    return bool(names) and all(name == UNTUNED for name in names)


def swept_experiments(
    config: Mapping[str, Any], sweep: Mapping[str, Sequence[str]], source: str
) -> list[dict[str, Any]]:
    """The config's experiment blocks, and per block and op that calls a swept collective
    (`sweep`: collective -> algorithm names) the block's experiments of that op with each
    algorithm; a block of `algorithm: untuned` alone is not swept. Rows that two blocks give
    collapse in the grid."""
    operations = load_operations()
    blocks = [dict(block) for block in config["experiments"]]
    added = []
    for index, block in enumerate(blocks):
        swept = [op for op in _ops(block) if operations[op].algorithm_of in sweep]
        if not swept or _untuned_only(block):
            continue
        if ALGORITHM in block:
            raise ConfigError(
                f"{source}: experiments[{index}].{ALGORITHM}: the mpi entries' `algorithms` "
                f"(or verify's `{UNTUNED}`) set it for {', '.join(swept)}; leave it out of this "
                "block"
            )
        # a block's `where` may drop every experiment of an op
        alone = {key: config[key] for key in ("nrep", INTERLEAVE_KEY) if key in config}
        kept = {row["op"] for row in expand({**alone, "experiments": [block]})}
        added += [
            _swept_block(block, op, sweep[operations[op].algorithm_of])
            for op in swept
            if op in kept
        ]
    return [*blocks, *added]


def with_algorithm_sweeps(
    config: Mapping[str, Any], settings: Sequence[AlgorithmSetting], source: str = "config"
) -> dict[str, Any]:
    """The config with the algorithms swept inside launches as experiments, those swept per
    launch as entries (preset_kernels), and a guideline per setting (`config` is not
    modified)."""
    expanded = copy.deepcopy(dict(config))
    if not settings:
        return expanded
    sweep: dict[str, list[str]] = {}
    for setting in settings:
        if swept_per_launch(setting.library):
            continue
        names = sweep.setdefault(setting.op, [])
        if setting.algorithm.name not in names:
            names.append(setting.algorithm.name)
    if sweep:
        expanded["experiments"] = swept_experiments(config, sweep, source)
    expanded["mpi"].update(_preset_entries(config, settings, source))
    ids = {g if isinstance(g, str) else g["id"] for g in expanded["guidelines"]}
    expanded["guidelines"] = [
        *expanded["guidelines"],
        *(_guideline(s, ops_calling(config, s.op)) for s in settings if s.guideline not in ids),
    ]
    return expanded


def _replaced_collectives(path: Path, where: str) -> list[str]:
    """The collectives a libmpiguide-tune file replaces (its rules' mock-ups), in file order;
    [] when there is no file or it has no rule."""
    if not path.is_file():
        return []
    found: list[str] = []
    for line in rule_lines(path.read_text(encoding="utf-8")):
        mockup = line.split()[0]
        if mockup not in REPLACEMENTS:
            raise ConfigError(
                f"{where}: {path}: {mockup!r} is not a mock-up libmpiguide-tune runs "
                f"({', '.join(REPLACEMENTS)})"
            )
        if REPLACEMENTS[mockup] not in found:
            found.append(REPLACEMENTS[mockup])
    return found


def _tune_guideline(entry: str, collective: str, ops: Sequence[str]) -> dict[str, Any]:
    """Within `<entry>.tuned`: the call libmpiguide-tune replaces ≼ the library's own call
    (`algorithm: untuned`, on a communicator the library exempts), paired run by run."""
    tuned = f"{entry}{TUNED_SUFFIX}"
    return {
        "id": tune_guideline_id(entry, collective),
        "source": TUNE_GUIDELINE_SOURCE,
        "text": (
            f"MPI_{collective.capitalize()} as libmpiguide-tune runs it for {entry} ≼ the "
            "library's own call, in the same launches"
        ),
        "relation": "le",
        "lhs": {"mpi": tuned, "op": list(ops), ALGORITHM: LIBRARY_CHOICE},
        "rhs": {"mpi": tuned, "op": list(ops), ALGORITHM: UNTUNED},
        "decided_by": DECIDED_BY_TUNING,
    }


def _preload_env(env: Mapping[str, str], library: str, tuning_file: Path) -> dict[str, str]:
    """libmpiguide-tune first, before any library the entry preloads already (libmpiguide-inject
    of a planted slowdown): the mock-ups' MPI calls then still reach those."""
    preload = ":".join(part for part in (library, env.get("LD_PRELOAD", "")) if part)
    return {"LD_PRELOAD": preload, "MPIGUIDE_TUNE": str(tuning_file.resolve())}


def _tuned_algorithms(
    config: Mapping[str, Any], tuning: Path, where: str
) -> dict[tuple[str, str], list[str]]:
    """Per (swept entry, collective), the algorithms `tune` chose for it somewhere (ranks and
    message size), from its algorithms.csv; {} when no entry sweeps."""
    if not any(entry.get("algorithms") for entry in config["mpi"].values()):
        return {}
    path = tuning / ALGORITHMS_CSV
    if not path.is_file():
        raise ConfigError(f"{where}: {path} does not exist: {VERIFY_STEPS}")
    return chosen_algorithms(pd.read_csv(path))


def _check_id(source: str, entry: str, guideline: str) -> None:
    if len(guideline) > GUIDELINE_ID_MAX:
        raise ConfigError(
            f"{source}: mpi.{entry}: name too long for the guideline {guideline!r} (at most "
            f"{GUIDELINE_ID_MAX} characters); shorten it"
        )


def _applied_entries(
    config: Mapping[str, Any],
    chosen: Mapping[tuple[str, str], list[str]],
    tuning: Path,
    source: str,
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Per swept entry `tune` chose an algorithm for, `<entry>.applied`: the entry (its kernel,
    blocks and grid) with the settings file `tune` wrote for it in its environment; and the
    APPLIED guidelines of each collective chosen (mpiguide.tune.applied)."""
    entries: dict[str, dict[str, Any]] = {}
    guidelines: list[dict[str, Any]] = []
    for name in dict.fromkeys(base for base, _ in chosen):
        entry = config["mpi"][name]
        try:
            env, _ = settings_env(entry["library"], tuning, name)
        except FileNotFoundError as missing:
            raise ConfigError(
                f"{source}: verify: {missing} does not exist: {VERIFY_STEPS}"
            ) from None
        applied = copy.deepcopy(dict(entry))
        applied.pop("algorithms", None)
        applied["env"] = {**entry["env"], **env}
        entries[applied_name(name)] = applied
        for (base, op), algorithms in chosen.items():
            if base != name:
                continue
            for guideline in (default_guideline_id(name, op),
                              *(runs_guideline_id(name, op, a) for a in algorithms)):  # fmt: skip
                _check_id(source, name, guideline)
            guidelines += applied_guidelines(
                name, entry["library"], op, algorithms, ops_calling(config, op)
            )
    return entries, guidelines


def tuned_algorithms_csv(verify_campaign_name: str) -> str:
    """The algorithms.csv of the campaign a verify campaign re-measures (relative to the
    directory the workflow runs in)."""
    tuned = verify_campaign_name.removesuffix(VERIFY_SUFFIX)
    return f"{campaign_results(tuned)}/{TUNING_TREE}/{ALGORITHMS_CSV}"


def verify_campaign(
    config: Mapping[str, Any], source: str, results: Path
) -> tuple[dict[str, Any], dict[str, str]]:
    """The campaign re-measured with its tuning (`verify: true`), results in
    `<campaign>-verify`. Each swept entry sweeps only the algorithms `tune` chose
    (results/<campaign>/tuning/algorithms.csv), so its ALGO guidelines compare, on new runs, each
    choice with the library's own in the same launches. Each entry whose libmpiguide-tune file
    replaces a collective by a mock-up runs beside `<entry>.tuned`, which preloads the library
    with that file, in the same blocks; the experiments of the ops that call a replaced
    collective get a sibling with `algorithm: untuned`, which runs on a communicator the library
    leaves alone, and the guideline `TUNE.<entry>.<collective>` compares, within `<entry>.tuned`
    and the same launches, the replaced call with the library's own. In `<entry>` (nothing
    preloaded) the untuned siblings are the library's call twice. Each swept entry `tune` chose
    an algorithm for runs beside `<entry>.applied`, the entry with the settings file `tune`
    wrote in its environment, and its APPLIED guidelines (mpiguide.tune.applied). `mpiguide
    diff` of `<entry>` and `<entry>.tuned` stays the across-launch before / after of everything
    else. The campaign's other entries and guidelines stay as they are. Returns the config and,
    per tuned or applied entry, its base entry (whose kernel build it runs: the same mpicc)."""
    tuning = results / str(config["campaign"]) / TUNING_TREE
    campaign = f"{config['campaign']}{VERIFY_SUFFIX}"
    where = f"{source}: verify"
    verified = copy.deepcopy(dict(config))
    verified["campaign"] = campaign
    chosen = _tuned_algorithms(config, tuning, where)
    tuned: dict[str, list[str]] = {}
    for (_, op), names in chosen.items():
        tuned[op] = sorted({*tuned.get(op, []), *names})
    tuned = dict(sorted(tuned.items()))
    replaced: dict[str, list[str]] = {}
    kernel_of: dict[str, str] = {}
    for name in list(config["mpi"]):
        entry = verified["mpi"][name]
        if entry.pop("algorithms", None) and tuned:
            entry["algorithms"] = copy.deepcopy(tuned)
        mockups = tuning / mockup_tuning_name(name)
        collectives = _replaced_collectives(mockups, where)
        if not collectives:
            continue
        tuned_name = f"{name}{TUNED_SUFFIX}"
        for collective in collectives:
            _check_id(source, name, tune_guideline_id(name, collective))
        replaced[name] = collectives
        preloaded = copy.deepcopy(entry)
        preloaded.pop("algorithms", None)
        kernel_of[tuned_name] = name
        # libmpiguide-tune beside its base entry's kernel, built with the same mpicc; relative
        # to the directory the workflow runs in, as the runs start there
        library = tune_library_file(campaign_results(campaign), name)
        preloaded["env"] = {**entry["env"], **_preload_env(entry["env"], library, mockups)}
        verified["mpi"][tuned_name] = preloaded
    if not tuned and not replaced:
        raise ConfigError(
            f"{where}: nothing was tuned to verify: `tune` chose none of the library's "
            f"algorithms (algorithms.csv in {tuning}) and no tuning file of libmpiguide-tune "
            f"there replaces a collective ({VERIFY_STEPS})"
        )
    applied, guidelines = _applied_entries(config, chosen, tuning, source)
    verified["mpi"].update(applied)
    kernel_of.update({name: name.removesuffix(APPLIED_SUFFIX) for name in applied})
    ids = {g if isinstance(g, str) else g["id"] for g in verified["guidelines"]}
    verified["guidelines"] += [g for g in guidelines if g["id"] not in ids]
    if replaced:
        untuned = {c: [UNTUNED] for collectives in replaced.values() for c in collectives}
        verified["experiments"] = swept_experiments(config, untuned, where)
        ids = {g if isinstance(g, str) else g["id"] for g in verified["guidelines"]}
        verified["guidelines"] = [
            *verified["guidelines"],
            *(
                _tune_guideline(name, collective, ops_calling(config, collective))
                for name, collectives in replaced.items()
                for collective in collectives
                if tune_guideline_id(name, collective) not in ids
            ),
        ]
    return verified, kernel_of


def expand_entries(
    config: dict[str, Any], source: str, results_root: Path, discover: Discover
) -> Expansion:
    """The scaled config as its entries expand it: at `verify: true` the campaign that
    re-measures it with the tuning found below `results_root`/<campaign>/tuning/, and the
    algorithms its entries sweep (listed by `discover`) as experiments, or entries (a sweep per
    launch), with a guideline each."""
    kernel_of: dict[str, str] = {}
    if config["verify"]:
        config, kernel_of = verify_campaign(config, source, results_root)
    settings = algorithm_settings(config, source, discover, kernel_of)
    expanded = with_algorithm_sweeps(config, settings, source)
    return Expansion(expanded, tuple(settings), {**kernel_of, **preset_kernels(settings)})


def tune_libraries(config: Mapping[str, Any], kernel_of: Mapping[str, str]) -> dict[str, str]:
    """libmpiguide-tune builds a verify campaign needs: path -> the entry whose mpicc builds it
    (the tuned entry's base; `kernel_of`: Expansion.kernel_of)."""
    libraries: dict[str, str] = {}
    for name, base in kernel_of.items():
        entry = config["mpi"][name]
        for path in preloaded_paths(entry.get("env", {}).get("LD_PRELOAD", "")):
            if Path(path).name == TUNE_LIBRARY:
                libraries[path] = base
    return libraries


def tuned_pairs(kernel_of: Mapping[str, str]) -> list[tuple[str, str]]:
    """(entry, `<entry>.tuned`) of a verify campaign (`kernel_of`: Expansion.kernel_of, which
    also holds the `<entry>.applied` entries)."""
    return [(base, name) for name, base in kernel_of.items() if name.endswith(TUNED_SUFFIX)]


def preloaded_paths(value: str) -> list[str]:
    """The paths of an LD_PRELOAD value."""
    return [path for path in re.split(f"[{''.join(LD_PRELOAD_SEPARATORS)}]", value) if path]
