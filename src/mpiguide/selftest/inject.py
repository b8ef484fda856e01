"""libmpiguide-inject (src/inject) as a campaign config uses it: the library an entry preloads,
the spec its MPIGUIDE_INJECT holds, and what the library prints when it is active.

The workflow reads this while it parses a campaign (which injectors it builds, whether an
entry's LD_PRELOAD exists); the self-test reads the planted slowdowns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from mpiguide.core.errors import ConfigError

INJECT_VARIABLE = "MPIGUIDE_INJECT"
INJECT_LIBRARY = "libmpiguide-inject.so"
MAX_FRACTION = 100.0
# ld.so splits LD_PRELOAD into libraries at these (ld.so(8)).
LD_PRELOAD_SEPARATORS = (" ", ":")
# What libmpiguide-inject prints (rank 0, stderr: the run's log) when it is active.
ANNOUNCEMENT = "mpiguide-inject: active:"


def mpi_function(op: str) -> str:
    """The MPI function a kernel operation measures: neighbor_alltoall -> MPI_Neighbor_alltoall."""
    return f"MPI_{op.capitalize()}"


def mpi_datatype(dtype: str) -> str:
    """A kernel dtype as a spec's `datatype=` filter names it: int -> MPI_INT."""
    return f"MPI_{dtype.upper()}"


@dataclass(frozen=True)
class PlantedRule:
    """One NAME:fraction=F[:datatype=TYPE] entry of a spec."""

    function: str
    fraction: float
    datatype: str | None


def _parse_rules(spec: str, where: str) -> list[PlantedRule]:
    """The entries of a spec, in the shape the self-test needs; libmpiguide-inject itself
    validates the spec in full when the runs start."""
    rules = []
    for item in spec.split(","):
        name, *fields = (field.strip() for field in item.split(":"))
        key, _, value = (fields[0] if fields else "").partition("=")
        if key.strip() != "fraction":
            raise ConfigError(
                f"{where}: {item.strip()!r}: the self-test plants fractions of each call "
                "(NAME:fraction=F), so that every operation is slowed by the same relative amount"
            )
        try:
            fraction = float(value)
        except ValueError:
            raise ConfigError(f"{where}: {item.strip()!r}: {value!r} is not a number") from None
        # The bounds of libmpiguide-inject (INJECT_MAX_FRACTION in src/inject/spec.h): a NaN or a
        # negative fraction would otherwise label a null comparison as a planted slowdown.
        if not 0.0 <= fraction <= MAX_FRACTION:
            raise ConfigError(
                f"{where}: {item.strip()!r}: fraction must be a number from 0 to {MAX_FRACTION:g}"
            )
        datatype = None
        for field in fields[1:]:
            filter_key, _, filter_value = field.partition("=")
            if filter_key.strip() != "datatype":
                raise ConfigError(
                    f"{where}: {item.strip()!r}: unknown field {field!r}; the only one after the "
                    "fraction is datatype=TYPE"
                )
            datatype = filter_value.strip()
        rules.append(PlantedRule(name, fraction, datatype))
    return rules


def planted_fraction(
    mpi: str,
    entry: Mapping[str, Any],
    source: str,
    function: str | None = None,
    dtype: str | None = None,
) -> float:
    """The fraction an entry's MPIGUIDE_INJECT plants in calls of `function` with kernel dtype
    `dtype` (0 if no rule applies), or, without a function, in every function it names (then they
    must agree); 0 without a spec. A rule filtered to one datatype (`:datatype=MPI_INT`) slows
    only those calls: a side that fixes no dtype would mix slowed and unslowed calls."""
    spec = entry.get("env", {}).get(INJECT_VARIABLE)
    if spec is None:
        return 0.0
    where = f"{source}: mpi.{mpi}.env.{INJECT_VARIABLE}"
    rules = _parse_rules(spec, where)
    if function is not None:
        rules = [rule for rule in rules if rule.function == function]
        if not rules:
            return 0.0
    fractions = set()
    for rule in rules:
        if rule.datatype is not None and dtype is None:
            raise ConfigError(
                f"{where}: slows {rule.function} for {rule.datatype} only; a self-test guideline "
                "comparing this entry must fix the dtype of its side"
            )
        applies = rule.datatype is None or rule.datatype == mpi_datatype(str(dtype))
        fractions.add(rule.fraction if applies else 0.0)
    if len(fractions) != 1:
        raise ConfigError(
            f"{where}: plants different fractions {sorted(fractions)}; use one, "
            "or fix the operation of the guidelines that compare this entry"
        )
    return fractions.pop()


def inject_libraries(entries: Mapping[str, Mapping[str, Any]], source: str) -> dict[str, str]:
    """LD_PRELOAD path -> the mpi entry whose mpicc builds it, for every entry that preloads a
    libmpiguide-inject at a relative path: one the workflow builds (an absolute path, or several
    libraries, is the user's to build)."""
    libraries: dict[str, str] = {}
    for name, entry in entries.items():
        path = entry.get("env", {}).get("LD_PRELOAD", "")
        several = any(separator in path for separator in LD_PRELOAD_SEPARATORS)
        if PurePath(path).name != INJECT_LIBRARY or PurePath(path).is_absolute() or several:
            continue
        builder = libraries.setdefault(path, name)
        if entries[builder].get("mpicc") != entry.get("mpicc"):
            raise ConfigError(
                f"{source}: mpi.{name}.env.LD_PRELOAD: {path} is built with "
                f"{entries[builder].get('mpicc')} for mpi.{builder}; give each mpicc its own path"
            )
    return libraries
