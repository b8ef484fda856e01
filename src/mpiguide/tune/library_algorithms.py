"""A library's own algorithms for one collective, as a campaign factor (Hunold 2023, §4, Fig. 5).

The choices are read from the installed library, never typed by the user: Open MPI lists every
`coll_tuned_<op>_algorithm` with its numbered enumerators (`ompi_info --param coll tuned --level 9
--parsable`), MPICH every `MPIR_CVAR_<OP>_INTRA_ALGORITHM` with its named choices in the
description `mpivars` prints. A setting is one of them for one collective: the kernel runs it per
experiment (the experiment parameter `algorithm`, in the same launch as the library's own
choice, docs/kernel.md#algorithms-per-experiment), and `env()` is what selects it for a whole
launch of an application (Open MPI's forced algorithm with `coll_tuned_use_dynamic_rules`,
MPICH's MPIR-level algorithm with the device's override of that collective switched off).

Each setting is a value of `algorithm` of the swept entry's ops that call the collective, and
the generated guideline `ALGO.<entry>.<op>.<algorithm>` compares it with the library's choice
within the entry's launches (mpiguide.campaign.expansion).

Intel MPI selects a collective's algorithm only per launch: `I_MPI_ADJUST_<OP>=<preset>`, read at
`MPI_Init` (mpiguide.tune.intelmpi_presets). `impi_info` lists each collective's range of
numbered presets, named where Intel's reference numbers them. A setting is one preset, measured by
an mpi entry of its own with `env()` in its environment (swept_per_launch), and its guideline
compares it with the library's choice across launches.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mpiguide.core.errors import ConfigError
from mpiguide.core.values import ALGORITHM_GUIDELINE_PREFIX
from mpiguide.tune.intelmpi_presets import (
    ADJUST_PREFIX,
    UNNAMED_PREFIX,
    adjust_variable,
    documented_presets,
    unnamed,
)

# What lists the choices, by library; an entry's `info` replaces the program (e.g. a full path).
INFO_PROGRAMS = {"openmpi": "ompi_info", "mpich": "mpivars", "intelmpi": "impi_info"}
INFO_ARGUMENTS = {
    "openmpi": ("--param", "coll", "tuned", "--level", "9", "--parsable"),
    "mpich": (),
    "intelmpi": (),
}
# Intel MPI describes one variable a call: `impi_info` names them, then `impi_info -v NAME` each.
_IMPI_DESCRIBE = "-v"
# The libraries whose algorithm is chosen once per launch, in its environment: each setting is
# an mpi entry of its own, compared with the library's choice across launches.
PER_LAUNCH = frozenset({"intelmpi"})
ALL = "all"
# Algorithms the library offers that the kernel cannot force inside one launch
# (docs/kernel.md, "Algorithms per experiment"): `all` leaves them out, naming one is an error.
NOT_FORCEABLE: dict[str, dict[str, str]] = {
    "mpich": {
        "smp": (
            "its calls on the node communicators read the same global choice again and fail "
            "under MPIR_CVAR_COLLECTIVE_FALLBACK=error"
        ),
        "pairwise_sendrecv_replace": "it serves MPI_IN_PLACE only, which the kernel never passes",
    },
}
# Algorithms for exactly two processes (Open MPI 4.1's coll_base_*_intra_two_procs return
# MPI_ERR_UNSUPPORTED_OPERATION on any other size): swept only where every deployment has 2.
TWO_PROCESSES_ONLY: dict[str, frozenset[str]] = {"openmpi": frozenset({"two_proc"})}
INFO_TIMEOUT_S = 60
GUIDELINE_SOURCE = (
    "Hunold 2023 (MPINPC), §4: a library should select the fastest of its own algorithms; "
    "Figure 5 compares them per collective and size"
)

_OMPI_ENUMERATOR = re.compile(
    r"^mca:coll:tuned:param:coll_tuned_([a-z_]+)_algorithm:enumerator:value:(\d+):(\S+)$"
)
_OMPI_VALUE = re.compile(
    r"^mca:coll:tuned:param:coll_tuned_([a-z_]+)_algorithm_(segmentsize|tree_fanout|chain_fanout)"
    r":value:(\d+)$"
)
# The fan-in/out a forced algorithm runs with (coll_tuned_decision_dynamic.c of Open MPI 4.1):
# these collectives pass their chain fan-out, the others their tree fan-out.
_OMPI_CHAIN_FANOUT = frozenset(
    {"bcast", "reduce", "reduce_scatter", "reduce_scatter_block", "scatter"}
)
_MPICH_CVAR = re.compile(r"^\s*MPIR_CVAR_([A-Z_]+)_INTRA_ALGORITHM\s*=[^\t]*\t(.*)$")
_MPICH_DEVICE = re.compile(r"^\s*MPIR_CVAR_([A-Z_]+)_DEVICE_COLLECTIVE\s*=")
# MPICH's description glues its lines together: "Variable to select bcast algorithm" then per
# choice "<name> <padding>- <Description>". Every description starts with a capital letter
# ("Internal ...", "Force ..."), so the text splits at " - <Capital>", and each piece ends with
# the next choice's name glued to the last word of the previous description.
_MPICH_SPLIT = re.compile(r"\s+-\s+(?=[A-Z])")
_MPICH_HEAD = re.compile(r"^Variable to select \S+ algorithm")
# The last words of MPICH 4's choice descriptions, to which the next name is glued.
_MPICH_TAILS = (
    "algorithms",
    "algorithm",
    "JSON_FILE)",
    "Allgather",
    "allgatherv",
    "receives",
    "phase",
    "Tree",
    "Ring",
)
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_MPICH_SCHEDULE_PREFIXES = ("sched_", "tsp_")
# `impi_info`'s table row of a variable, and `impi_info -v NAME`'s head line and range.
_IMPI_ROW = re.compile(rf"^\s*\|\s*({ADJUST_PREFIX}[A-Z_]+?)\s*\|")
_IMPI_HEAD = re.compile(rf"^{ADJUST_PREFIX}([A-Z_]+?)\s*$")
_IMPI_RANGE = re.compile(r"^\s*range:\s*(\d+)-(\d+)\s*$")
_IMPI_LIST_SUFFIX = "_LIST"


def swept_per_launch(library: str | None) -> bool:
    """Whether the library's algorithms are swept by an entry per setting (PER_LAUNCH), not per
    experiment inside the swept entry's launches."""
    return library in PER_LAUNCH


@dataclass(frozen=True)
class Algorithm:
    """One choice of the library: its name, and Open MPI's number (None for MPICH, set by name)."""

    name: str
    number: int | None


@dataclass(frozen=True)
class AlgorithmSetting:
    """Collective `op` of the entry `base` forced to `algorithm`."""

    base: str
    library: str
    op: str
    algorithm: Algorithm
    device_override: bool = False  # MPICH: the collective has MPIR_CVAR_<OP>_DEVICE_COLLECTIVE
    # Open MPI: the fan-in/out and segment size the forced algorithm ran with (the library's
    # values of coll_tuned_<op>_algorithm_{tree,chain}_fanout and _segmentsize), which a rules
    # file must repeat to select the same algorithm
    faninout: int = 0
    segsize: int = 0

    @property
    def name(self) -> str:
        """`<entry>.<op>.<algorithm>`: the setting's name in the guideline id and tuning.md."""
        return f"{self.base}.{self.op}.{self.algorithm.name}"

    @property
    def guideline(self) -> str:
        return f"{ALGORITHM_GUIDELINE_PREFIX}.{self.name}"

    def env(self) -> dict[str, str]:
        """The environment that selects the algorithm for a whole launch (of an application)."""
        if self.library == "intelmpi":
            return {adjust_variable(self.op): str(self.algorithm.number)}
        if self.library == "openmpi":
            return {
                "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                f"OMPI_MCA_coll_tuned_{self.op}_algorithm": str(self.algorithm.number),
            }
        env = {f"MPIR_CVAR_{self.op.upper()}_INTRA_ALGORITHM": self.algorithm.name}
        if self.device_override:
            env[f"MPIR_CVAR_{self.op.upper()}_DEVICE_COLLECTIVE"] = "0"
        return env


def setting_marks(settings: Sequence[AlgorithmSetting]) -> dict[str, dict[str, Any]]:
    """Settings as plain JSON values by guideline id, as the workflow hands them to `tune`."""
    return {
        setting.guideline: {
            "base": setting.base,
            "library": setting.library,
            "op": setting.op,
            "algorithm": setting.algorithm.name,
            "number": setting.algorithm.number,
            "device_override": setting.device_override,
            "faninout": setting.faninout,
            "segsize": setting.segsize,
        }
        for setting in settings
    }


def settings_from_marks(marks: Mapping[str, Mapping[str, Any]]) -> dict[str, AlgorithmSetting]:
    """The settings of plain JSON marks (setting_marks), by the same keys."""
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


@dataclass(frozen=True)
class Choices:
    """What an installed library offers: per collective its algorithms (the default excluded),
    and (MPICH) the collectives whose device may override the MPIR-level choice."""

    library: str
    algorithms: Mapping[str, tuple[Algorithm, ...]]
    device_override: frozenset[str] = frozenset()
    # Open MPI: per collective the (fan-in/out, segment size) of its forced algorithms
    parameters: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    # Per collective the names `all` sweeps where that is not every algorithm (Intel MPI: the
    # presets its reference names, not those named by number)
    all_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def parse_ompi_info(text: str) -> Choices:
    """`ompi_info --param coll tuned --level 9 --parsable`: every numbered algorithm of every
    collective; number 0 (`ignore`) is the library's own decision, the default."""
    found: dict[str, list[Algorithm]] = {}
    values: dict[tuple[str, str], int] = {}
    for line in text.splitlines():
        match = _OMPI_ENUMERATOR.match(line.strip())
        if match and int(match.group(2)) != 0:
            op, number, name = match.group(1), int(match.group(2)), match.group(3)
            found.setdefault(op, []).append(Algorithm(name, number))
        value = _OMPI_VALUE.match(line.strip())
        if value:
            values[(value.group(1), value.group(2))] = int(value.group(3))
    parameters = {
        op: (
            values.get((op, "chain_fanout" if op in _OMPI_CHAIN_FANOUT else "tree_fanout"), 0),
            values.get((op, "segmentsize"), 0),
        )
        for op in found
    }
    return Choices(
        "openmpi", {op: tuple(algs) for op, algs in sorted(found.items())}, frozenset(), parameters
    )


def _mpich_name(piece: str) -> str | None:
    """The choice name at the end of one piece of a glued MPICH description: what follows a
    known last word of a description; of several readings the one naming a nonblocking
    schedule (`sched_`, `tsp_`) or else the longest ("algorithmsmp" is "algorithm" + "smp")."""
    words = piece.split()
    token = words[-1] if words else ""
    readings = []
    for tail in _MPICH_TAILS:
        at = token.find(tail)
        if at >= 0 and _NAME.match(token[at + len(tail) :]):
            readings.append(token[at + len(tail) :])
    if not readings:
        return token if _NAME.match(token) else None
    schedules = [r for r in readings if r.startswith(_MPICH_SCHEDULE_PREFIXES)]
    return max(schedules or readings, key=len)


def _mpich_names(description: str) -> tuple[str, ...] | None:
    """The choices of one cvar's description; None for a description of another layout (the
    device's own cvars, e.g. MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM), which this module does not
    offer."""
    head = _MPICH_HEAD.match(description)
    if not head:
        return None
    names = [_mpich_name(piece) for piece in _MPICH_SPLIT.split(description[head.end() :])[:-1]]
    if not names or any(name is None for name in names):
        return None
    return tuple(name for name in names if name is not None)


_MPICH_LINE_CHOICE = re.compile(r"^([a-z][a-z0-9_]*)\s+-\s")


def _mpivars_entries(text: str) -> list[tuple[str, list[str]]]:
    """Each line of `mpivars` that names a cvar (it starts with a tab), with the lines after it
    that do not: MPICH 5 prints a cvar's choices one a line below it, MPICH 4 glues them into
    the cvar's line."""
    entries: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("\t") or not entries:
            entries.append((line, []))
        else:
            entries[-1][1].append(line)
    return entries


def parse_mpivars(text: str) -> Choices:
    """`mpivars`: the named choices of every MPIR_CVAR_<OP>_INTRA_ALGORITHM; `auto` (the
    library's own selection) is the default."""
    found: dict[str, tuple[Algorithm, ...]] = {}
    device: set[str] = set()
    for line, below in _mpivars_entries(text):
        cvar = _MPICH_CVAR.match(line)
        if cvar and below:
            matched = [_MPICH_LINE_CHOICE.match(choice) for choice in below]
            names = tuple(m.group(1) for m in matched if m) if all(matched) else None
        else:
            names = _mpich_names(cvar.group(2).split("\t")[-1]) if cvar else None
        if cvar and names:
            found[cvar.group(1).lower()] = tuple(Algorithm(n, None) for n in names if n != "auto")
        override = _MPICH_DEVICE.match(line)
        if override:
            device.add(override.group(1).lower())
    return Choices("mpich", dict(sorted(found.items())), frozenset(device))


def parse_impi_info(text: str) -> Choices:
    """What `impi_info -v I_MPI_ADJUST_<COLLECTIVE>` prints, for one collective or several one
    after the other: per collective its presets 1 to the top of the range it prints (0, the
    library's own selection, is the default), named as Intel's reference names them
    (mpiguide.tune.intelmpi_presets) or else `preset_<N>`; `all` sweeps the named ones."""
    found: dict[str, tuple[Algorithm, ...]] = {}
    named: dict[str, tuple[str, ...]] = {}
    collective: str | None = None
    for line in text.splitlines():
        head = _IMPI_HEAD.match(line)
        if head:
            name = head.group(1)
            collective = None if name.endswith(_IMPI_LIST_SUFFIX) else name.lower()
            continue
        top = _IMPI_RANGE.match(line)
        if top and collective is not None and collective not in found:
            names = {p.number: p.name for p in documented_presets().get(collective, ())}
            numbers = range(1, int(top.group(2)) + 1)
            found[collective] = tuple(Algorithm(names.get(n, unnamed(n)), n) for n in numbers)
            named[collective] = tuple(names[n] for n in numbers if n in names)
    return Choices("intelmpi", dict(sorted(found.items())), all_of=named)


PARSERS: dict[str, Callable[[str], Choices]] = {
    "openmpi": parse_ompi_info,
    "mpich": parse_mpivars,
    "intelmpi": parse_impi_info,
}


def listing_command(library: str, program: str) -> list[str]:
    """The words that list `library`'s algorithms with `program` (an entry's `info`); for Intel
    MPI the list of its variables, each of whose I_MPI_ADJUST_<COLLECTIVE> is then described
    (run_listing)."""
    return [*shlex.split(program), *INFO_ARGUMENTS[library]]


def run_listing(library: str, program: str, key_path: str) -> str:
    """What the library's listing program prints; `key_path` names the entry. Intel MPI: what
    `impi_info -v` prints of each I_MPI_ADJUST_<COLLECTIVE> `impi_info` lists, one after the
    other."""
    words = listing_command(library, program)
    printed = _printed(library, words, key_path)
    if library != "intelmpi":
        return printed
    variables = [
        match.group(1)
        for match in map(_IMPI_ROW.match, printed.splitlines())
        if match and not match.group(1).endswith(_IMPI_LIST_SUFFIX)
    ]
    return "".join(_printed(library, [*words, _IMPI_DESCRIBE, v], key_path) for v in variables)


def _printed(library: str, words: list[str], key_path: str) -> str:
    """What one listing command prints; ConfigError where it cannot run or fails."""
    try:
        done = subprocess.run(
            words, capture_output=True, text=True, timeout=INFO_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(
            f"{key_path}: cannot list {library}'s algorithms with {shlex.join(words)}: {exc} "
            f"(set the entry's `info` to the program of the library it measures)"
        ) from None
    if done.returncode != 0:
        raise ConfigError(
            f"{key_path}: {shlex.join(words)} exited {done.returncode}: {done.stderr.strip()[:200]}"
        )
    return done.stdout


def choices_of(library: str, program: str, listing: str, key_path: str) -> Choices:
    """The choices in a listing `program` printed (run_listing)."""
    choices = PARSERS[library](listing)
    if not choices.algorithms:
        words = shlex.join(listing_command(library, program))
        raise ConfigError(f"{key_path}: {words} lists no collective's algorithms")
    return choices


def installed_choices(library: str, program: str, key_path: str) -> Choices:
    """Run the library's listing program and read its choices; `key_path` names the entry."""
    return choices_of(library, program, run_listing(library, program, key_path), key_path)


def _allowed(values: Sequence[str]) -> str:
    return ", ".join(values)


def _offered(offered: Sequence[Algorithm]) -> str:
    """The algorithms of a collective as an error lists them: `<number> <name>` (Open MPI,
    Intel MPI) or the name; Intel MPI's presets its reference does not name as their range."""
    listed = [a for a in offered if a.number is None or a.name != unnamed(a.number)]
    numbers = [a.number for a in offered if a.number is not None and a not in listed]
    names = [f"{a.number} {a.name}" if a.number else a.name for a in listed]
    if numbers:
        names.append(f"{min(numbers)} to {max(numbers)} ({UNNAMED_PREFIX}<N>)")
    return _allowed(names)


def _all_of(choices: Choices, op: str, offered: Sequence[Algorithm], where: str) -> list[Algorithm]:
    """What `all` sweeps of `op`: every algorithm, or those Choices.all_of names (an error where
    it names none)."""
    if op not in choices.all_of:
        return list(offered)
    names = choices.all_of[op]
    if not names:
        raise ConfigError(
            f"{where}: `{ALL}` sweeps the {choices.library} algorithms of {op} its reference "
            f"names, and it names none; list them by number: {_offered(offered)}"
        )
    return [a for a in offered if a.name in names]


def _setting(base: str, choices: Choices, op: str, algorithm: Algorithm) -> AlgorithmSetting:
    faninout, segsize = choices.parameters.get(op, (0, 0))
    return AlgorithmSetting(
        base, choices.library, op, algorithm, op in choices.device_override, faninout, segsize
    )


def _refused(library: str, ranks: frozenset[int]) -> dict[str, str]:
    """The algorithms `all` leaves out and a name may not ask for, with the reason, for a
    campaign whose deployments have `ranks` processes."""
    refused = dict(NOT_FORCEABLE.get(library, {}))
    if ranks != {2}:
        sizes = ", ".join(map(str, sorted(ranks)))
        for name in TWO_PROCESSES_ONLY.get(library, frozenset()):
            refused[name] = f"it runs on exactly 2 processes; the deployments have {sizes}"
    return refused


def settings_of(
    base: str,
    asked: Mapping[str, Any],
    choices: Choices,
    key_path: str,
    ranks: frozenset[int] = frozenset({2}),
) -> list[AlgorithmSetting]:
    """The settings an entry's `algorithms:` asks for, checked against what the library offers
    and what the kernel can force on deployments of `ranks` processes: per collective `all` or a
    list of algorithm names (Open MPI: or numbers)."""
    settings: list[AlgorithmSetting] = []
    refused = _refused(choices.library, ranks)
    for op, selection in asked.items():
        where = f"{key_path}.{op}"
        offered = choices.algorithms.get(op)
        if offered is None:
            raise ConfigError(
                f"{where}: {choices.library} offers no algorithm choice for {op!r}; allowed: "
                f"{_allowed(list(choices.algorithms))}"
            )
        if selection == ALL:
            settings.extend(
                _setting(base, choices, op, a)
                for a in _all_of(choices, op, offered, where)
                if a.name not in refused
            )
            continue
        by_key = {a.name: a for a in offered} | {str(a.number): a for a in offered if a.number}
        picked: dict[str, Algorithm] = {}
        for index, value in enumerate(selection):
            algorithm = by_key.get(str(value))
            if algorithm is None:
                raise ConfigError(
                    f"{where}[{index}]: {value!r} is not an algorithm of {choices.library}'s "
                    f"{op}; allowed: {ALL}, or of {_offered(offered)}"
                )
            if algorithm.name in refused:
                raise ConfigError(
                    f"{where}[{index}]: {choices.library}'s {algorithm.name!r} cannot be swept "
                    f"here: {refused[algorithm.name]} (docs/kernel.md)"
                )
            if algorithm.name in picked:
                raise ConfigError(f"{where}[{index}]: {algorithm.name!r} is named twice")
            picked[algorithm.name] = algorithm
        settings.extend(_setting(base, choices, op, a) for a in picked.values())
    return settings
