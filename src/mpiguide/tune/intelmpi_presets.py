"""Intel MPI's algorithm presets: what `I_MPI_ADJUST_<COLLECTIVE>=<preset>` selects, read at
`MPI_Init` for the whole launch (an MPI_T write inside a launch reads back but changes nothing).

The names are the shipped table data/intelmpi-presets.tsv (Intel's numbered lists of its 2021.12
Developer Reference; its header says where each list comes from and why 2021.19's own reference
gives no numbers); how many presets a collective has is the installed library's to say: `impi_info
-v I_MPI_ADJUST_<COLLECTIVE>` prints its range (mpiguide.tune.library_algorithms lists them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from mpiguide.core.errors import MpiguideError
from mpiguide.core.package_data import INTELMPI_PRESETS

TABLE = INTELMPI_PRESETS.name
COLUMNS = ("collective", "preset", "name", "text")
# The environment variable that selects a collective's preset.
ADJUST_PREFIX = "I_MPI_ADJUST_"
# The name of a preset the table does not name, by its number.
UNNAMED_PREFIX = "preset_"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Preset:
    """One numbered preset of a collective as Intel's reference names it."""

    collective: str
    number: int
    name: str
    text: str


def adjust_variable(collective: str) -> str:
    """`I_MPI_ADJUST_<COLLECTIVE>`: the variable that selects `collective`'s preset."""
    return f"{ADJUST_PREFIX}{collective.upper()}"


def unnamed(number: int) -> str:
    """The name of a preset the table does not name."""
    return f"{UNNAMED_PREFIX}{number}"


@cache
def documented_presets() -> dict[str, tuple[Preset, ...]]:
    """The table's presets by collective, in preset order; MpiguideError naming the line of a
    malformed row."""
    lines = INTELMPI_PRESETS.read_text(encoding="utf-8").splitlines()
    rows = [(n, line.split("\t")) for n, line in enumerate(lines, 1) if not line.startswith("#")]
    if not rows or tuple(rows[0][1]) != COLUMNS:
        raise MpiguideError(f"{TABLE}: header must be {' '.join(COLUMNS)}")
    found: dict[str, list[Preset]] = {}
    for line, cells in rows[1:]:
        where = f"{TABLE}:{line}"
        if len(cells) != len(COLUMNS):
            raise MpiguideError(f"{where}: {len(cells)} cells, the header has {len(COLUMNS)}")
        collective, number, name, text = cells
        if not (number.isdigit() and int(number) >= 1):
            raise MpiguideError(f"{where}: preset {number!r} is not a number from 1")
        if not _NAME.match(name) or name.startswith(UNNAMED_PREFIX):
            raise MpiguideError(
                f"{where}: name {name!r} is not [a-z][a-z0-9_]* or starts with {UNNAMED_PREFIX}"
            )
        known = found.setdefault(collective, [])
        if any(p.number == int(number) or p.name == name for p in known):
            raise MpiguideError(f"{where}: {collective} preset {number} {name} repeats one")
        known.append(Preset(collective, int(number), name, text))
    return {c: tuple(sorted(p, key=lambda preset: preset.number)) for c, p in found.items()}


def preset_text(collective: str, number: int) -> str:
    """Intel's text of a preset, or what says that its reference names none."""
    for preset in documented_presets().get(collective, ()):
        if preset.number == number:
            return preset.text
    return "not named in Intel's reference"
