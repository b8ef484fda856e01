"""The settings file `tune` wrote for a swept entry, applied to a whole launch: verify's entry
`<entry>.applied`, and the guidelines that ask whether, under that file, the library's own call
runs the chosen algorithm and beats its old default.

Every library reads the file at MPI_Init, so it is in the whole launch or not at all. Where the
chosen algorithm forced runs beside the file's call:

- MPICH: in the same launch. A forced algorithm is written as MPI_T cvars around the experiment
  and overrides the cvars and the JSON selection file of the environment (docs/kernel.md).
- Open MPI: in `<entry>`'s launches (across launches). Open MPI 4.1's coll/tuned looks the rules
  file up before a forced algorithm (coll_tuned_decision_dynamic.c: a rule with an algorithm
  other than 0 wins), so in `<entry>.applied` a forced experiment at a tuned point would run
  the file's choice under another label (docs/measurements/tuning.md shows it): that entry runs
  none (honours_forced).
- Intel MPI: in the preset's own entry `<entry>.<op>.<algorithm>` (across launches), where the
  sweep measured it: Intel MPI reads I_MPI_ADJUST_<OP> at MPI_Init, so a preset is forced for a
  whole launch, never per experiment (library_algorithms.swept_per_launch).

No library can name its old default as an algorithm to force (Open MPI's fixed decision
and MPICH's device selection are not values of the algorithm cvars), so the old default is the
library's own call in `<entry>`, across launches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mpiguide.analysis.analysis_types import DECIDED_BY_TUNING
from mpiguide.core.paths import (
    intelmpi_env_name,
    mpich_env_name,
    mpich_selection_name,
    ompi_rules_name,
)
from mpiguide.core.values import APPLIED_GUIDELINE_PREFIX, LIBRARY_CHOICE
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.tune import intelmpi_settings
from mpiguide.tune.library_algorithms import Algorithm, AlgorithmSetting, swept_per_launch
from mpiguide.tune.mpich_settings import applied_env
from mpiguide.tune.ompi_rules import rules_env

APPLIED_SUFFIX = ".applied"
APPLIED_GUIDELINE_SOURCE = (
    "mpiguide verify: the settings file `tune` wrote makes the library's own call run the "
    "algorithm `tune` chose, and that call beats the library's old default"
)


def applied_name(entry: str) -> str:
    """The verify campaign's entry that runs `entry` with its settings file applied."""
    return f"{entry}{APPLIED_SUFFIX}"


def forced_within_launch(library: str | None) -> bool:
    """Whether a chosen algorithm forced runs as forced in a launch with the settings file
    applied (module docstring): MPICH yes, Open MPI and Intel MPI no."""
    return library != "openmpi" and not swept_per_launch(library)


def honours_forced(entry: str, library: str | None) -> bool:
    """Whether `entry`'s experiments that force one of the library's algorithms run it: not in
    an Open MPI `<entry>.applied`, where the rules file wins over the forced algorithm (module
    docstring). Such an entry measures none of them, so no row of it, and no guideline that
    pairs its rows, bears an algorithm the library did not run; the APPLIED guidelines take the
    forced choice from `<entry>`."""
    return not entry.endswith(APPLIED_SUFFIX) or forced_within_launch(library)


def _forced_side(
    entry: str, library: str, collective: str, algorithm: str, ops: list[str]
) -> dict[str, Any]:
    """The experiments that run `algorithm` forced, to compare with the file's call: the
    library's own call in the preset's entry where the sweep ran one (its name, the setting's),
    else `algorithm` in the launches of `<entry>.applied` or `<entry>` (module docstring)."""
    if swept_per_launch(library):
        preset = AlgorithmSetting(entry, library, collective, Algorithm(algorithm, None)).name
        return {"mpi": preset, "op": list(ops), ALGORITHM: LIBRARY_CHOICE}
    forced = applied_name(entry) if forced_within_launch(library) else entry
    return {"mpi": forced, "op": list(ops), ALGORITHM: algorithm}


def settings_file(library: str, entry: str) -> str:
    """The name of the settings file `tune` writes for a swept entry (MPICH: its env file, which
    says how to use the JSON selection file beside it)."""
    if library == "openmpi":
        return ompi_rules_name(entry)
    return intelmpi_env_name(entry) if library == "intelmpi" else mpich_env_name(entry)


def settings_env(library: str, tuning: Path, entry: str) -> tuple[dict[str, str], Path]:
    """The environment that applies what `tune` wrote for `entry` in `tuning`, and the file it
    reads (the rules file; MPICH's and Intel MPI's env file); FileNotFoundError where `tune`
    wrote none."""
    path = tuning / settings_file(library, entry)
    if not path.is_file():
        raise FileNotFoundError(path)
    if library == "openmpi":
        return rules_env(path), path
    if library == "intelmpi":
        return intelmpi_settings.applied_env(path.read_text(encoding="utf-8")), path
    env = path
    selection = tuning / mpich_selection_name(entry)
    chosen = selection if selection.is_file() else None
    return applied_env(env.read_text(encoding="utf-8"), chosen), env


def default_guideline_id(entry: str, collective: str) -> str:
    """`APPLIED.<entry>.<collective>`: the old default ≼ the file's call."""
    return f"{APPLIED_GUIDELINE_PREFIX}.{entry}.{collective}"


def runs_guideline_id(entry: str, collective: str, algorithm: str) -> str:
    """`APPLIED.<entry>.<collective>.<algorithm>`: the algorithm forced ≈ the file's call."""
    return f"{default_guideline_id(entry, collective)}.{algorithm}"


def applied_guidelines(
    entry: str, library: str, collective: str, algorithms: list[str], ops: list[str]
) -> list[dict[str, Any]]:
    """The guidelines of one collective `tune` chose `algorithms` for: per algorithm, forced ≈
    the library's own call under the file (relation approx; holds: the file runs it), and the
    old default ≼ the call under the file (relation le; violated: the file beats the default).
    Both are decided by analysis.tuning: paired run by run where the two sides share their
    launches, else block by block."""
    applied = applied_name(entry)
    own = {"mpi": applied, "op": list(ops), ALGORITHM: LIBRARY_CHOICE}
    call = f"MPI_{collective.capitalize()}"
    runs = []
    for algorithm in algorithms:
        forced = _forced_side(entry, library, collective, algorithm, ops)
        # a preset is set for a whole launch of its own entry, an algorithm per call
        where = "set for the launches of" if swept_per_launch(library) else "forced in"
        runs.append({
            "id": runs_guideline_id(entry, collective, algorithm),
            "source": APPLIED_GUIDELINE_SOURCE,
            "text": f"{call} with {algorithm} {where} {forced['mpi']} ≈ as {applied} chooses",
            "relation": "approx",
            "lhs": forced,
            "rhs": own,
            "decided_by": DECIDED_BY_TUNING,
        })  # fmt: skip
    beats = {
        "id": default_guideline_id(entry, collective),
        "source": APPLIED_GUIDELINE_SOURCE,
        "text": f"{call} as {entry} chooses ≼ as {applied} chooses under its settings file",
        "relation": "le",
        "lhs": {"mpi": entry, "op": list(ops), ALGORITHM: LIBRARY_CHOICE},
        "rhs": own,
        "decided_by": DECIDED_BY_TUNING,
    }
    return [*runs, beats]
