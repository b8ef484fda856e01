"""Open MPI 4.1's dynamic rules file (coll_tuned_dynamic_rules_filename) of one swept entry: per
tuned collective and communicator size, the chosen algorithm per message-size range."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mpiguide.tune.choose import Choice, Untunable, msg_rules

# Open MPI 4.1's collective ids in a rules file (COLLTYPE_T of
# ompi/mca/coll/base/coll_base_functions.h).
OMPI_COLLECTIVE_IDS = {
    "allgather": 0,
    "allgatherv": 1,
    "allreduce": 2,
    "alltoall": 3,
    "alltoallv": 4,
    "alltoallw": 5,
    "barrier": 6,
    "bcast": 7,
    "exscan": 8,
    "gather": 9,
    "gatherv": 10,
    "reduce": 11,
    "reduce_scatter": 12,
    "reduce_scatter_block": 13,
    "scan": 14,
    "scatter": 15,
    "scatterv": 16,
}
# The message size Open MPI 4.1 looks a rule up by (coll_tuned_decision_dynamic.c), in terms of
# the kernel's msg_size (bytes, docs/kernel.md): the whole buffer; msg_size x ranks (the op's
# total: per-process blocks times the communicator size, or reduce_scatter's sum of counts); or
# nothing that depends on the count (alltoallv and barrier look up size 0; scan and exscan the
# datatype size x ranks), so one algorithm must serve every size.
_OMPI_BUFFER = frozenset({"allreduce", "bcast", "reduce", "allgatherv"})
_OMPI_TOTAL = frozenset(
    {"allgather", "alltoall", "gather", "scatter", "reduce_scatter", "reduce_scatter_block"}
)


def rules_env(path: Path) -> dict[str, str]:
    """The environment in which Open MPI 4.1 reads the rules file at `path`."""
    return {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(path.resolve()),
    }


def _rule_size(op: str, msg_size: int | None, ranks: int) -> int | None:
    """The size Open MPI 4.1 looks up for this measurement; None where it ignores the count."""
    if msg_size is None or op not in _OMPI_BUFFER | _OMPI_TOTAL:
        return None
    return msg_size * ranks if op in _OMPI_TOTAL else msg_size


def ompi_rules(base: str, picks: Sequence[Choice]) -> tuple[str, list[Choice], list[Untunable]]:
    """An Open MPI 4.1 dynamic rules file for one entry: per collective, a rule per
    communicator size measured with a tuned choice (the default for every other size), per
    message-size range the choice; and the choices it holds and the ones it cannot."""
    applied: list[Choice] = []
    untunable: list[Untunable] = []
    collectives: list[str] = []
    ops = sorted({c.op for c in picks}, key=lambda op: OMPI_COLLECTIVE_IDS.get(op, 99))
    for op in ops:
        mine = [c for c in picks if c.op == op]
        if not any(c.setting for c in mine):
            continue
        if op not in OMPI_COLLECTIVE_IDS:
            untunable.append(
                Untunable(base, op, None, "Open MPI 4.1's rules file has no id for it")
            )
            continue
        com_rules: list[tuple[int, list[tuple[int, Choice | None]]]] = [(0, [(0, None)])]
        for ranks in sorted({c.ranks for c in mine}):
            at = [c for c in mine if c.ranks == ranks]
            if not any(c.setting for c in at):
                continue
            by_count = _rule_size(op, at[0].msg_size, ranks) is not None
            if (
                not by_count
                and len({c.setting.algorithm.name if c.setting else "" for c in at}) > 1
            ):
                untunable.append(Untunable(
                    base, op, ranks,
                    "the fastest algorithm differs between message sizes, and Open MPI 4.1 "
                    "selects it for this collective by something other than the message size "
                    "(alltoallv and barrier: size 0; scan and exscan: datatype size x ranks)",
                ))  # fmt: skip
                continue
            rules: list[tuple[int, Choice | None]] = (
                msg_rules(op, ranks, at, _rule_size) if by_count else [(0, at[0])]
            )
            if com_rules[-1][0] == ranks:
                com_rules[-1] = (ranks, rules)
            else:
                com_rules.append((ranks, rules))
            com_rules.append((ranks + 1, [(0, None)]))
            applied.extend(c for c in at if c.setting)
        if len(com_rules) > 1:
            collectives.append(_collective_text(op, com_rules))
    head = [
        f"# Open MPI 4.1 dynamic rules for mpi entry {base}, written by mpiguide tune.",
        "# Use: OMPI_MCA_coll_tuned_use_dynamic_rules=1",
        "#      OMPI_MCA_coll_tuned_dynamic_rules_filename=<this file>",
        "# Algorithm 0 is the library's own decision."
        if collectives
        else "# No collective is tuned: Open MPI decides as without this file (see tuning.md).",
        str(len(collectives)),
    ]
    return "\n".join([*head, *collectives]) + "\n", applied, untunable


def _collective_text(op: str, com_rules: Sequence[tuple[int, Sequence[Any]]]) -> str:
    # Consecutive communicator sizes may collide (a rule at P + 1 that is itself measured):
    # keep the last rule given for each size.
    merged: dict[int, Sequence[tuple[int, Choice | None]]] = {}
    for ranks, rules in com_rules:
        merged[ranks] = rules
    lines = [f"{OMPI_COLLECTIVE_IDS[op]} # {op}", f"{len(merged)} # communicator sizes"]
    for ranks, rules in sorted(merged.items()):
        lines += [f"{ranks} # ranks", f"{len(rules)} # message sizes"]
        for size, choice in rules:
            if choice is None or choice.setting is None:
                lines.append(f"{size} 0 0 0 # library default")
            else:
                s = choice.setting
                lines.append(
                    f"{size} {s.algorithm.number} {s.faninout} {s.segsize} # {s.algorithm.name}"
                )
    return "\n".join(lines)
