"""An mpi entry's `algorithms:` as entries of their own (mpiguide.tune.library_algorithms).

`algorithms: {allreduce: all}` in entry `openmpi` (with `library: openmpi`) adds one entry per
algorithm the installed library offers for MPI_Allreduce, `openmpi.allreduce.<algorithm>`: a copy
of `openmpi` whose env forces that algorithm, measured in the same blocks as `openmpi`, which keeps
the library's own choice. Each added entry brings the guideline `ALGO.<entry>`: the library's
choice is not slower than that algorithm (relation le), so a violation is an algorithm of the
library's own that beats its default, with the paired test's bounds.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mpiguide.core.errors import ConfigError
from mpiguide.core.paths import (
    RESULTS_ROOT,
    TUNING_TREE,
    mockup_tuning_name,
    mpich_env_name,
    ompi_rules_name,
)
from mpiguide.selftest.inject import LD_PRELOAD_SEPARATORS
from mpiguide.tune.library_algorithms import (
    GUIDELINE_SOURCE,
    INFO_PROGRAMS,
    Algorithm,
    AlgorithmSetting,
    Choices,
    installed_choices,
    settings_of,
)

# Keys of an added entry (not config keys: the expansion writes them, the schema refuses them in
# a config file): which setting it runs, and whose kernel build it runs (the same mpicc).
SETTING_KEY = "algorithm_setting"
KERNEL_KEY = "kernel_of"
# Guideline ids are at most 64 characters (the catalogue's schema).
GUIDELINE_ID_MAX = 64
# `verify: true`: the campaign re-measured with its tuning, in results/<campaign>-verify/, where
# each swept entry runs beside `<entry>.tuned`.
VERIFY_SUFFIX = "-verify"
# Snakemake reads the campaign, the verify campaign too, before any job runs: verify cannot
# follow `tune` in one invocation.
VERIFY_STEPS = (
    "run the target `tune` first, in an invocation of its own: `snakemake tune --configfile "
    "FILE`, then `snakemake verify --configfile FILE --config verify=True`"
)
TUNED_SUFFIX = ".tuned"
# libmpiguide-tune (src/tune), as the workflow builds it for a tuned entry: beside its base
# entry's kernel, with the same mpicc.
TUNE_LIBRARY = "libmpiguide-tune.so"

Discover = Callable[[str, str, str], Choices]


def _measured_ops(config: Mapping[str, Any]) -> set[str]:
    ops: set[str] = set()
    for block in config["experiments"]:
        op = block["op"]
        ops.update(op if isinstance(op, list) else [op])
    return ops


def algorithm_settings(
    config: Mapping[str, Any], source: str, discover: Discover | None = None
) -> list[AlgorithmSetting]:
    """Every setting the config's entries ask for, checked against the installed libraries
    (`discover(library, program, key_path)` lists them, by default installed_choices; each
    program is run once)."""
    discover = discover or installed_choices
    listed: dict[tuple[str, str], Choices] = {}
    measured = _measured_ops(config)
    settings: list[AlgorithmSetting] = []
    for name, entry in config["mpi"].items():
        asked = entry.get("algorithms")
        if not asked:
            continue
        where = f"{source}: mpi.{name}"
        library = entry.get("library")
        if library is None:
            raise ConfigError(
                f"{where}.algorithms: needs the entry's `library` (openmpi or mpich): it says "
                "how the algorithms are listed and selected"
            )
        program = entry.get("info") or INFO_PROGRAMS[library]
        key = (library, program)
        if key not in listed:
            listed[key] = discover(library, program, f"{where}.info")
        for op in asked:
            if op not in measured:
                raise ConfigError(
                    f"{where}.algorithms.{op}: the campaign measures no {op!r} (its ops: "
                    f"{', '.join(sorted(measured))})"
                )
        settings.extend(settings_of(name, asked, listed[key], f"{where}.algorithms"))
    taken = set(config["mpi"])
    for setting in settings:
        if setting.entry in taken:
            raise ConfigError(
                f"{source}: mpi.{setting.base}.algorithms.{setting.op}: adds the entry "
                f"{setting.entry!r}, which the config already has; rename that entry"
            )
        if len(setting.guideline) > GUIDELINE_ID_MAX:
            raise ConfigError(
                f"{source}: mpi.{setting.base}: name too long for the guideline "
                f"{setting.guideline!r} (at most {GUIDELINE_ID_MAX} characters); shorten it"
            )
    return settings


def _guideline(setting: AlgorithmSetting) -> dict[str, Any]:
    return {
        "id": setting.guideline,
        "source": GUIDELINE_SOURCE,
        "text": (
            f"MPI_{setting.op.capitalize()} as {setting.base} chooses ≼ with its "
            f"{setting.library} algorithm {setting.algorithm.name}"
        ),
        "relation": "le",
        "lhs": {"mpi": setting.base, "op": setting.op},
        "rhs": {"mpi": setting.entry, "op": setting.op},
    }


def with_algorithm_entries(
    config: Mapping[str, Any], settings: list[AlgorithmSetting]
) -> dict[str, Any]:
    """The config with an entry and a guideline per setting (`config` is not modified)."""
    expanded = copy.deepcopy(dict(config))
    for setting in settings:
        entry = copy.deepcopy(config["mpi"][setting.base])
        entry.pop("algorithms", None)
        entry["env"] = {**entry["env"], **setting.env()}
        entry[KERNEL_KEY] = setting.base
        entry[SETTING_KEY] = {
            "base": setting.base,
            "library": setting.library,
            "op": setting.op,
            "algorithm": setting.algorithm.name,
            "number": setting.algorithm.number,
            "device_override": setting.device_override,
            "faninout": setting.faninout,
            "segsize": setting.segsize,
        }
        expanded["mpi"][setting.entry] = entry
    ids = {g if isinstance(g, str) else g["id"] for g in expanded["guidelines"]}
    expanded["guidelines"] = [
        *expanded["guidelines"],
        *(_guideline(s) for s in settings if s.guideline not in ids),
    ]
    return expanded


def setting_marks(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What each added entry of an expanded config runs, by entry, as plain JSON values."""
    return {
        name: dict(entry[SETTING_KEY])
        for name, entry in config["mpi"].items()
        if entry.get(SETTING_KEY)
    }


def settings_from_marks(marks: Mapping[str, Mapping[str, Any]]) -> dict[str, AlgorithmSetting]:
    """The settings that setting_marks wrote, by entry."""
    try:
        return {
            name: AlgorithmSetting(
                mark["base"],
                mark["library"],
                mark["op"],
                Algorithm(mark["algorithm"], mark["number"]),
                mark["device_override"],
                mark["faninout"],
                mark["segsize"],
            )
            for name, mark in marks.items()
        }
    except (KeyError, TypeError) as error:
        raise ConfigError(f"algorithm settings: missing or malformed {error}") from None


def settings_in(config: Mapping[str, Any]) -> dict[str, AlgorithmSetting]:
    """The settings of an expanded config, by the entry that runs each."""
    return settings_from_marks(setting_marks(config))


def kernel_entry(config: Mapping[str, Any], name: str) -> str:
    """The entry whose kernel build an entry runs: an added entry runs its base's (same mpicc)."""
    return str(config["mpi"][name].get(KERNEL_KEY, name))


def _tuned_env(library: str, tuning: Path, name: str, where: str) -> dict[str, str]:
    """The environment that applies what `tune` wrote for entry `name`."""
    path = tuning / (ompi_rules_name(name) if library == "openmpi" else mpich_env_name(name))
    if not path.is_file():
        raise ConfigError(f"{where}: {path} does not exist: {VERIFY_STEPS}")
    if library == "openmpi":
        return {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(path.resolve()),
        }
    env = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            key, equals, value = line.partition("=")
            if not equals or not key.startswith("MPIR_CVAR_"):
                raise ConfigError(f"{path}:{number}: expected MPIR_CVAR_NAME=value")
            env[key] = value
    return env


def _has_rules(path: Path) -> bool:
    """Whether a libmpiguide-tune file replaces anything (a line besides comments)."""
    if not path.is_file():
        return False
    lines = path.read_text(encoding="utf-8").splitlines()
    return any(line.split("#", 1)[0].strip() for line in lines)


def tune_library_path(campaign: str, entry: str) -> str:
    """Where the workflow builds libmpiguide-tune for a tuned entry of `entry` (relative to the
    directory the workflow runs in, as the runs start there)."""
    return f"{RESULTS_ROOT}/{campaign}/build/{entry}/tune/{TUNE_LIBRARY}"


def _preload_env(env: Mapping[str, str], library: str, tuning_file: Path) -> dict[str, str]:
    """libmpiguide-tune first, before any library the entry preloads already (libmpiguide-inject
    of a planted slowdown): the mock-ups' MPI calls then still reach those."""
    preload = ":".join(part for part in (library, env.get("LD_PRELOAD", "")) if part)
    return {"LD_PRELOAD": preload, "MPIGUIDE_TUNE": str(tuning_file.resolve())}


def verify_campaign(config: Mapping[str, Any], source: str, results: Path) -> dict[str, Any]:
    """The campaign re-measured with its tuning applied (`verify: true`): results in
    `<campaign>-verify`; each entry that `tune` tuned runs once as the library chooses (no
    sweep) and once as `<entry>.tuned`, in the same blocks, with what `tune` wrote below
    results/<campaign>/tuning/: the rules file or cvars of an entry that swept its library's
    algorithms, and libmpiguide-tune preloaded where the entry's tuning file replaces a
    collective by a mock-up. The campaign's other entries and guidelines stay as they are.
    `mpiguide diff` of the two entries is the before / after."""
    tuning = results / str(config["campaign"]) / TUNING_TREE
    campaign = f"{config['campaign']}{VERIFY_SUFFIX}"
    where = f"{source}: verify"
    verified = copy.deepcopy(dict(config))
    verified["campaign"] = campaign
    tuned_any = False
    for name in list(config["mpi"]):
        entry = copy.deepcopy(config["mpi"][name])
        swept = bool(entry.pop("algorithms", None))
        mockups = tuning / mockup_tuning_name(name)
        if not swept and not _has_rules(mockups):
            continue
        tuned_name = f"{name}{TUNED_SUFFIX}"
        if tuned_name in config["mpi"]:
            raise ConfigError(f"{source}: mpi.{tuned_name}: the name verify gives {name} tuned")
        env = dict(entry["env"])
        if swept:
            env.update(_tuned_env(entry["library"], tuning, name, where))
        if _has_rules(mockups):
            env.update(_preload_env(env, tune_library_path(campaign, name), mockups))
        tuned = copy.deepcopy(entry)
        tuned[KERNEL_KEY] = name
        tuned["env"] = env
        verified["mpi"][name] = entry
        verified["mpi"][tuned_name] = tuned
        tuned_any = True
    if not tuned_any:
        raise ConfigError(
            f"{where}: nothing was tuned to verify: no mpi entry sweeps its library's algorithms "
            f"(`algorithms:`) and no tuning file of libmpiguide-tune in {tuning} replaces a "
            f"collective ({VERIFY_STEPS})"
        )
    return verified


def tune_libraries(config: Mapping[str, Any]) -> dict[str, str]:
    """libmpiguide-tune builds a verify campaign needs: path -> the entry whose mpicc builds it
    (the tuned entry's base)."""
    libraries: dict[str, str] = {}
    for entry in config["mpi"].values():
        for path in preloaded_paths(entry.get("env", {}).get("LD_PRELOAD", "")):
            if KERNEL_KEY in entry and Path(path).name == TUNE_LIBRARY:
                libraries[path] = str(entry[KERNEL_KEY])
    return libraries


def preloaded_paths(value: str) -> list[str]:
    """The paths of an LD_PRELOAD value."""
    return [path for path in re.split(f"[{''.join(LD_PRELOAD_SEPARATORS)}]", value) if path]


def tuned_pairs(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(entry, entry.tuned) of a verify campaign."""
    return [
        (name[: -len(TUNED_SUFFIX)], name)
        for name in config["mpi"]
        if name.endswith(TUNED_SUFFIX) and name[: -len(TUNED_SUFFIX)] in config["mpi"]
    ]
