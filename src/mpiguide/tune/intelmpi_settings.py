"""Intel MPI's settings of one swept entry: per tuned collective the I_MPI_ADJUST_<OP> variable
that selects, for every call, the preset `tune` chose at every point measured.

Intel MPI reads these variables at MPI_Init, so a preset holds for a whole launch: the sweep ran
each preset as an mpi entry of its own (mpiguide.tune.library_algorithms), compared with the
library's own selection across launches.

Intel's Developer Reference for Linux OS, "I_MPI_ADJUST Family Environment Variables"
(https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-13/i-mpi-adjust-family-environment-variables.html),
documents conditions per message size and number of processes,

    I_MPI_ADJUST_<opname>="<presetid>[:<conditions>][;<presetid>:<conditions>[...]]"

with `<l>-<m>@<p>-<q>` holding for messages of <l> to <m> bytes on <p> to <q> processes, inclusive,
each collective's message size given by the table on that page, and preset 0 the library's own
selection. Intel MPI 2021.19 does not apply them so (tests/kernel/test_intelmpi_env_file.py, on
MPI_Allreduce with 2 ranks; docs/measurements/tuning.md): a range's lower bound is ignored, a size
above every range takes the last range's preset rather than Intel's selection, conditions on the
number of processes do not select as documented either (a range with one held at sizes and
process counts outside it, or nowhere), and preset 0 runs otherwise than the library with the
variable unset. So a condition cannot keep Intel's own
selection anywhere, and this module writes none: a collective's variable names one preset, for
every call of every communicator, and is written only where that preset beat Intel's selection at
every message size and number of ranks measured (as an MPICH cvar, mpiguide.tune.mpich_settings).
Everywhere the default stays nothing is written: the variable unset is Intel's own selection.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from mpiguide.tune import words
from mpiguide.tune.choose import Choice, Untunable, one_for_all

USE = "set -a; . <this file>; set +a"
# The Intel MPI whose handling of the conditions was measured (module docstring).
VERSION = "2021.19"


def where_measured(picks: Sequence[Choice]) -> str:
    """`2 ranks at 8 B, 64 B; 4 ranks at 8 B`: the points a choice rests on (a collective
    without a message size: `2 ranks`)."""
    by_ranks: dict[int, list[str]] = {}
    for pick in sorted(picks, key=lambda c: (c.ranks, c.msg_size or 0)):
        sizes = by_ranks.setdefault(pick.ranks, [])
        if pick.msg_size is not None:
            sizes.append(words.size_text(pick.msg_size))
    return "; ".join(
        f"{ranks} ranks" + (f" at {', '.join(sizes)}" if sizes else "")
        for ranks, sizes in by_ranks.items()
    )


def intelmpi_env(base: str, picks: Sequence[Choice]) -> tuple[str, list[Choice], list[Untunable]]:
    """The env file for one entry: per collective whose one preset beat Intel's selection at
    every point measured, its I_MPI_ADJUST_<OP> line, preceded by what it sets and on what it
    rests; and the choices it holds and the ones it cannot."""
    found, untunable = one_for_all(base, picks, lambda names: (
        f"Intel MPI {VERSION} does not apply I_MPI_ADJUST's per-size conditions as documented, "
        "so the file can set only one preset for every call, and no preset beats Intel's "
        f"selection at every measured size and number of ranks ({names})"
    ))  # fmt: skip
    lines: list[str] = []
    for setting, mine in found:
        lines += [
            f"# {setting.op}: preset {setting.algorithm.number} ({setting.algorithm.name}) for "
            f"every call; it beat Intel MPI's selection at every point measured: "
            f"{where_measured(mine)}",
            *(f"{key}={value}" for key, value in setting.env().items()),
        ]
    applied = [pick for _, mine in found for pick in mine]
    head = [f"# Intel MPI collective presets for mpi entry {base}, written by mpiguide tune."]
    if lines:
        head += [
            f"# Use: `{USE}` in the shell that runs mpiexec (Intel MPI reads",
            "# I_MPI_ADJUST_* at MPI_Init, for the whole launch). Each variable names one preset",
            f"# for every message size and communicator: Intel MPI {VERSION} does not apply the",
            "# per-size conditions (<preset>:<l>-<m>@<p>-<q>) its Developer Reference documents.",
        ]
    else:
        head.append("# No collective is tuned: Intel MPI selects as without this file (tuning.md).")
    unwritten = [f"# Not written: {u.op}, as {u.reason}." for u in untunable]
    return "\n".join([*head, *lines, *unwritten]) + "\n", applied, untunable


def applied_env(env_text: str) -> dict[str, str]:
    """The environment an env file (intelmpi_env) sets: its variable lines, read as the shell
    reads them."""
    env = {}
    for line in env_text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            for word in shlex.split(line):
                key, _, value = word.partition("=")
                env[key] = value
    return env
