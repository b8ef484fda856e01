"""MPICH's settings of one swept entry: the cvars (one algorithm per collective for every size)
and, where something is tuned, MPICH 4.0.2's JSON collective selection, which chooses per
communicator size and message-size range (mpiguide.tune.mpich_selection)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mpiguide.tune import mpich_selection
from mpiguide.tune.choose import Choice, Untunable, msg_rules, one_for_all

# The env file's comment lines on the JSON file (selection_use) that name a cvar to set with it.
_SELECTION_CVAR = re.compile(r"^#\s+(MPIR_CVAR_[A-Z_]+_DEVICE_COLLECTIVE)=0$")
_OP_CVAR = re.compile(r"^MPIR_CVAR_([A-Z_]+?)_(INTRA_ALGORITHM|DEVICE_COLLECTIVE)$")


def mpich_env(base: str, picks: Sequence[Choice]) -> tuple[str, list[Choice], list[Untunable]]:
    """MPICH's cvars for one entry: a collective's algorithm is one setting for every size and
    communicator, so it is set only where one algorithm beats the default at every measured
    size and number of ranks."""
    found, untunable = one_for_all(base, picks, lambda names: (
        "an MPICH cvar sets one algorithm for every size and communicator, and no algorithm "
        f"beats the default at every measured size ({names})"
    ))  # fmt: skip
    lines = [f"{key}={value}" for setting, _ in found for key, value in setting.env().items()]
    applied = [pick for _, mine in found for pick in mine]
    head = (
        f"# MPICH cvars for mpi entry {base}, written by mpiguide tune (one per line)."
        if lines
        else f"# MPICH cvars for mpi entry {base}, written by mpiguide tune: none, as no algorithm "
        "beats the default at every measured size and number of ranks (tuning.md)."
    )
    return "\n".join([head, *lines]) + "\n", applied, untunable


def _size_branch(op: str, rules: Sequence[tuple[int, Choice | None]], default: Any) -> Any:
    """One communicator size's branch: `rules` (from _msg_rules) as MPICH's `<key><N` chain,
    each choice holding below the next rule's size, the last one for any size."""
    key = mpich_selection.SIZE_KEYS[op]
    chain: dict[str, Any] = {}
    for (_, choice), (upper, _) in zip(rules, [*rules[1:], (None, None)], strict=True):
        branch = default
        if choice is not None and choice.setting is not None:
            branch = mpich_selection.leaf(op, choice.setting.algorithm.name, default)
        chain[f"{key}<{upper}" if upper is not None else f"{key}=any"] = branch
    return chain


def mpich_selection_file(
    base: str, picks: Sequence[Choice]
) -> tuple[str | None, list[Choice], list[Untunable]]:
    """MPICH 4.0.2's JSON collective selection for one entry: its default tree with, per tuned
    collective and communicator size measured, the chosen algorithm per message-size range
    (the default everywhere else); None where nothing is tuned."""
    tree = mpich_selection.default_tree()
    applied: list[Choice] = []
    untunable: list[Untunable] = []
    for op in sorted({c.op for c in picks}):
        mine = [c for c in picks if c.op == op]
        if not any(c.setting for c in mine):
            continue
        collective = tree.get(f"collective={op}")
        if collective is None or (
            op not in mpich_selection.SIZE_KEYS and op not in mpich_selection.SIZELESS
        ):
            untunable.append(Untunable(
                base, op, None,
                f"MPICH {mpich_selection.VERSION}'s selection file measures its message size "
                "other than the kernel's msg_size (or has no tree for it): see "
                "mpiguide.tune.mpich_selection",
            ))  # fmt: skip
            continue
        default = collective["comm_type=intra"]
        chain: dict[str, Any] = {}
        for ranks in sorted({c.ranks for c in mine}):
            at = [c for c in mine if c.ranks == ranks]
            if not any(c.setting for c in at):
                continue
            if op in mpich_selection.SIZELESS:
                (pick,) = at
                assert pick.setting is not None
                branch = mpich_selection.leaf(op, pick.setting.algorithm.name, default)
            else:
                rules = msg_rules(op, ranks, at, mpich_selection.lookup_size)
                branch = _size_branch(op, rules, default)
            chain[f"comm_size<{ranks}"] = default
            chain[f"comm_size<={ranks}"] = branch
            applied.extend(c for c in at if c.setting)
        if chain:
            chain["comm_size=any"] = default
            tree[f"collective={op}"] = {**collective, "comm_type=intra": chain}
    if not applied:
        return None, applied, untunable
    return json.dumps(tree, indent=1) + "\n", applied, untunable


def selection_use(name: str, by_size: Sequence[Choice], by_cvar: Sequence[Choice]) -> str:
    """The env file's note on the JSON selection file: how to apply it beside the cvar lines of
    `by_cvar`. A cvar line of a collective the JSON file tunes would override the file (MPICH
    runs a cvar's algorithm before it consults the tree), so those lines are to be dropped; the
    cvar lines of the collectives the file does not tune stay, as only they tune those."""
    tuned = sorted({c.op for c in by_size if c.setting})
    device = sorted({c.op for c in by_size if c.setting and c.setting.device_override})
    cvar_ops = sorted({c.op for c in by_cvar})
    dropped = ", ".join(op for op in cvar_ops if op in tuned)
    kept = ", ".join(op for op in cvar_ops if op not in tuned)
    version = mpich_selection.VERSION
    if not cvar_ops:
        how = [f"# Per communicator and message size (MPICH {version}): set"]
    elif not dropped:
        how = [
            f"# Per communicator and message size for {', '.join(tuned)} (MPICH {version}), beside",
            f"# the cvar lines above ({kept}: the file does not tune them): set",
        ]
    else:
        keep = f", keep those of {kept} (only a cvar tunes them)," if kept else ","
        how = [
            f"# Per communicator and message size instead (MPICH {version}): drop the cvar "
            f"lines of {dropped}",
            f"# above (a cvar line overrides the file){keep} and set",
        ]
    lines = [
        *how,
        f"#   {mpich_selection.JSON_FILE_CVAR}=<path of {name}>",
        *(f"#   MPIR_CVAR_{op.upper()}_DEVICE_COLLECTIVE=0" for op in device),
        "# (the device's own selection otherwise runs before MPICH's tree is consulted).",
    ]
    return "\n".join(lines) + "\n"


def applied_env(env_text: str, selection: Path | None) -> dict[str, str]:
    """The environment that applies an env file (mpich_env) and, where written, its JSON
    selection file at `selection`: the file's choices per communicator and message size for
    the collectives the JSON file tunes (their cvar lines dropped, as the env file's note says,
    and their device selection switched off), the cvar lines for the others."""
    cvars: dict[str, str] = {}
    device: dict[str, str] = {}
    for line in env_text.splitlines():
        found = _SELECTION_CVAR.match(line)
        if found:
            device[found.group(1)] = "0"
        elif line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            cvars[key.strip()] = value.strip()
    if selection is None:
        return cvars
    tree = json.loads(selection.read_text(encoding="utf-8"))
    default = mpich_selection.default_tree()
    by_json = {
        key.removeprefix("collective=").upper()
        for key, branch in tree.items()
        if key.startswith("collective=") and branch != default.get(key)
    }
    kept = {
        key: value
        for key, value in cvars.items()
        if not ((op := _OP_CVAR.match(key)) and op.group(1) in by_json)
    }
    return {**kept, mpich_selection.JSON_FILE_CVAR: str(selection.resolve()), **device}
