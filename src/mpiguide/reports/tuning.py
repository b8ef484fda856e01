"""From verdict to fix: the library's own algorithms that beat its default, as settings it reads.

Input: tests.csv (the guidelines `ALGO.<entry>.<op>.<algorithm>` that mpiguide.campaign.algorithms
adds: the library's choice ≼ that algorithm) and the settings behind them. A collective is tuned
at a communicator size and message size only where an algorithm beats the default significantly
— its ALGO test is `violated` (paired test, p ≤ p_thres and ratio ≥ v_thres) in every test at that
size — and then the fastest such algorithm is chosen; everywhere else the default stays.

Outputs (mpiguide.core.paths names them):
- algorithms.csv: Hunold 2023 (MPINPC) Figure 5's view, each algorithm's median against the
  default per collective, deployment and size, with the paired test's ratio, bounds and verdict;
- per Open MPI entry an Open MPI 4.1 dynamic rules file (coll_tuned_dynamic_rules_filename);
- per MPICH entry the cvar settings (MPICH reads one algorithm per collective for every size)
  and, where something is tuned, MPICH 4.0.2's JSON collective selection, which chooses per
  communicator size and message-size range (mpiguide.reports.mpich_selection);
- per mpi entry a tuning file for libmpiguide-tune, where a mock-up beats the collective
  (mpiguide.reports.mockup_tuning);
- tuning.md: what is replaced where, the expected gain with its bounds, what could not be tuned
  and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import (
    ALGORITHMS_CSV,
    TUNING_MD,
    mockup_tuning_name,
    mpich_env_name,
    mpich_selection_name,
    ompi_rules_name,
)
from mpiguide.plan.algorithms import DEFAULT, AlgorithmSetting
from mpiguide.plan.grid import PARAMETERS
from mpiguide.reports import mpich_selection
from mpiguide.reports.junit import read_tests
from mpiguide.reports.mockup_tuning import (
    NotReplaced,
    Replacement,
    mockup_tests,
    not_replaced,
    replacements,
    tuning_file,
)

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
_TUNE_VERDICT = "violated"
FIGURE5_COLUMNS = (
    "mpi",
    "library",
    "op",
    "nodes",
    "ppn",
    "msg_size",
    "algorithm",
    "number",
    "median_s",
    "default_median_s",
    "speedup",
    "speedup_low",
    "speedup_high",
    "verdict",
)


@dataclass(frozen=True)
class Choice:
    """The decision at one (entry, collective, ranks, msg_size): an algorithm, or None (default)."""

    base: str
    op: str
    ranks: int
    msg_size: int | None
    setting: AlgorithmSetting | None
    speedup: float = 1.0
    low: float = 1.0
    high: float = 1.0


def _number(text: str) -> float:
    return float(text) if text not in ("", "nan") else float("nan")


def algorithm_rows(tests: pd.DataFrame, settings: Mapping[str, AlgorithmSetting]) -> pd.DataFrame:
    """Figure 5's view: one row per ALGO test; `speedup` is the default's time over the
    algorithm's (the test's violation_ratio), `verdict` the test's (violated: the algorithm is
    faster than the default by the paired test)."""
    by_guideline = {setting.guideline: setting for setting in settings.values()}
    mine = tests[tests["guideline"].isin(by_guideline)]
    rows = []
    for record in mine.to_dict("records"):
        setting = by_guideline[record["guideline"]]
        rows.append(
            {
                "mpi": setting.base,
                "library": setting.library,
                "op": setting.op,
                "nodes": int(record["nodes"]),
                "ppn": int(record["ppn"]),
                "msg_size": _size(record.get("msg_size", "")),
                "algorithm": setting.algorithm.name,
                "number": "" if setting.algorithm.number is None else setting.algorithm.number,
                "median_s": _number(record["median_rhs"]),
                "default_median_s": _number(record["median_lhs"]),
                "speedup": _number(record["violation_ratio"]),
                "speedup_low": _number(record["ratio_low"]),
                "speedup_high": _number(record["ratio_high"]),
                "verdict": record["verdict"],
                **{
                    p: record[p]
                    for p in PARAMETERS
                    if p not in ("op", "msg_size") and p in record and record[p] != ""
                },
            }
        )
    frame = pd.DataFrame(rows, columns=list(FIGURE5_COLUMNS))
    if rows:
        extra = [c for c in pd.DataFrame(rows).columns if c not in FIGURE5_COLUMNS]
        frame = pd.DataFrame(rows)[[*FIGURE5_COLUMNS, *extra]]
    frame["msg_size"] = frame["msg_size"].astype("Int64")
    order = ["mpi", "op", "nodes", "ppn", "msg_size", "algorithm"]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)


def _size(value: Any) -> int | None:
    """A msg_size cell as an integer; None where it does not apply (barrier)."""
    if value is None or pd.isna(value) or value == "":
        return None
    return int(value)


def choices(figure5: pd.DataFrame, settings: Mapping[str, AlgorithmSetting]) -> list[Choice]:
    """Per entry, collective, ranks and msg_size: the fastest algorithm that beats the default
    in every test there (all deployments of that many ranks, every other parameter), judged by
    its smallest speedup; None where none does."""
    by_name = {(s.base, s.op, s.algorithm.name): s for s in settings.values()}
    found = []
    frame = figure5.assign(ranks=figure5["nodes"] * figure5["ppn"])
    for (base, op, ranks, size), group in frame.groupby(
        ["mpi", "op", "ranks", "msg_size"], sort=True, dropna=False
    ):
        best: Choice | None = None
        for algorithm, tests in group.groupby("algorithm", sort=True):
            if not (tests["verdict"] == _TUNE_VERDICT).all():
                continue
            worst = tests.loc[tests["speedup"].idxmin()]
            if best is None or worst["speedup"] > best.speedup:
                best = Choice(
                    str(base), str(op), int(ranks), _size(size),
                    by_name[(str(base), str(op), str(algorithm))],
                    float(worst["speedup"]), float(worst["speedup_low"]),
                    float(worst["speedup_high"]),
                )  # fmt: skip
        found.append(best or Choice(str(base), str(op), int(ranks), _size(size), None))
    return found


def _rule_size(op: str, msg_size: int | None, ranks: int) -> int | None:
    """The size Open MPI 4.1 looks up for this measurement; None where it ignores the count."""
    if msg_size is None or op not in _OMPI_BUFFER | _OMPI_TOTAL:
        return None
    return msg_size * ranks if op in _OMPI_TOTAL else msg_size


@dataclass(frozen=True)
class Tuned:
    """What `tune` applied: library algorithms (rules files, cvars) and mock-ups
    (libmpiguide-tune)."""

    algorithms: list[Choice]
    mockups: list[Replacement]


@dataclass(frozen=True)
class Untunable:
    base: str
    op: str
    ranks: int | None
    reason: str


RuleSize = Callable[[str, int | None, int], int | None]


def _msg_rules(
    op: str, ranks: int, picks: Sequence[Choice], rule_size: RuleSize | None = None
) -> list[tuple[int, Choice | None]]:
    """(rule size, choice) from size 0 up: each measured size's choice holds from it up to the
    next measured size, the default below the smallest and above the largest. `rule_size`
    turns a measurement into the size the library looks up (default: Open MPI 4.1's)."""
    size_of = rule_size or _rule_size
    rules: list[tuple[int, Choice | None]] = [(0, None)]
    ordered = sorted(picks, key=lambda c: size_of(op, c.msg_size, ranks) or 0)
    for pick in ordered:
        size = size_of(op, pick.msg_size, ranks) or 0
        chosen = pick if pick.setting else None
        if rules[-1][0] == size:
            rules[-1] = (size, chosen)
        elif not _same(rules[-1][1], chosen):
            rules.append((size, chosen))
    if rules[-1][1] is not None:
        rules.append(((size_of(op, ordered[-1].msg_size, ranks) or 0) + 1, None))
    return rules


def _same(a: Choice | None, b: Choice | None) -> bool:
    name_a = a.setting.algorithm.name if a and a.setting else None
    name_b = b.setting.algorithm.name if b and b.setting else None
    return name_a == name_b


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
                _msg_rules(op, ranks, at) if by_count else [(0, at[0])]
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
        "# Algorithm 0 is the library's own decision.",
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


def mpich_env(base: str, picks: Sequence[Choice]) -> tuple[str, list[Choice], list[Untunable]]:
    """MPICH's cvars for one entry: a collective's algorithm is one setting for every size and
    communicator, so it is set only where one algorithm beats the default at every measured
    size and number of ranks."""
    lines = [f"# MPICH cvars for mpi entry {base}, written by mpiguide tune (one per line)."]
    applied: list[Choice] = []
    untunable: list[Untunable] = []
    for op in sorted({c.op for c in picks}):
        mine = [c for c in picks if c.op == op]
        names = {c.setting.algorithm.name if c.setting else DEFAULT for c in mine}
        if names == {DEFAULT}:
            continue
        if len(names) > 1:
            untunable.append(Untunable(
                base, op, None,
                "an MPICH cvar sets one algorithm for every size and communicator, and no "
                f"algorithm beats the default at every measured size ({', '.join(sorted(names))})",
            ))  # fmt: skip
            continue
        setting = mine[0].setting
        assert setting is not None
        lines += [f"{key}={value}" for key, value in setting.env().items()]
        applied.extend(mine)
    return "\n".join(lines) + "\n", applied, untunable


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
                "mpiguide.reports.mpich_selection",
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
                rules = _msg_rules(op, ranks, at, mpich_selection.lookup_size)
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


def _write(path: Path, text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def _ratio(choice: Choice) -> str:
    return f"{choice.speedup:.3g} [{choice.low:.3g}, {choice.high:.3g}]"


def _other_violations(
    tests: pd.DataFrame, algo_ids: set[str], mockups: pd.DataFrame
) -> pd.DataFrame:
    """The violated tests of the campaign's other guidelines: neither ALGO nor a collective
    against its own mock-up."""
    other = ~tests["guideline"].isin(algo_ids) & ~tests.index.isin(mockups.index)
    return tests[other & (tests["verdict"] == "violated")]


def _mockup_lines(
    replaced: Sequence[Replacement], missed: Sequence[NotReplaced], mockup_files: Mapping[str, str]
) -> list[str]:
    lines = ["", "## Replaced by mock-ups (libmpiguide-tune)", ""]
    if replaced:
        lines += [
            "| mpi | op | ranks | msg_size | mock-up | expected gain [bounds] | file |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in replaced:
            sizes = str(r.lo) if r.lo == r.hi else f"{r.lo}-{r.hi}"
            gain = f"{r.speedup:.3g} [{r.low:.3g}, {r.high:.3g}]"
            lines.append(
                f"| {r.entry} | {r.op} | {r.ranks} | {sizes} | {r.mockup} | {gain} | "
                f"{mockup_files.get(r.entry, '')} |"
            )
        lines += [
            "",
            "A rule covers the measured sizes it names and the sizes between them; the "
            "collective stays the library's at every other size and number of ranks, and for "
            "every call the mock-up does not handle (MPI_IN_PLACE, derived datatypes, "
            "user-defined ops, inter-communicators, counts that do not split into equal parts "
            "where the mock-up splits the buffer). Gain: the smallest speedup over the rule's "
            "tests, with its bounds. Apply: `LD_PRELOAD=libmpiguide-tune.so "
            "MPIGUIDE_TUNE=<file>`.",
        ]
    else:
        lines.append(
            "Nothing: no collective is significantly slower than a mock-up that "
            "libmpiguide-tune runs, in every test at a number of ranks and message size."
        )
    if missed:
        lines += ["", "Violated mock-up guidelines that no rule covers:", ""]
        lines += [
            f"- {m.guideline} ({m.entry}, {m.op} as {m.mockup}): {m.tests} test(s): {m.reason}."
            for m in missed
        ]
    return lines


def tuning_md(
    applied: Sequence[Choice],
    untunable: Sequence[Untunable],
    picks: Sequence[Choice],
    other: pd.DataFrame,
    options: AnalysisOptions,
    files: Mapping[tuple[str, str], str],
    mockup_lines: Sequence[str] = (),
) -> str:
    lines = [
        "# Tuning",
        "",
        "Written by `mpiguide tune` from the guidelines `ALGO.<entry>.<op>.<algorithm>` "
        "(the library's own choice ≼ that algorithm, Hunold 2023 §4) and `<op> ≼ "
        "<op>_as_<how>` (the collective against its own mock-up). A collective is tuned at "
        "a number of ranks and a message size only where an algorithm or a mock-up beats the "
        "default in "
        f"every test there (verdict violated: paired test, p ≤ {options.p_thres}, "
        f"ratio ≥ {options.v_thres}); the fastest such algorithm or mock-up by its "
        "smallest speedup is chosen, and the default stays everywhere else. Expected gain: the "
        "default's time over the algorithm's or mock-up's, with its one-sided confidence "
        "bounds at "
        f"{options.confidence} (tests.csv's ratio_low, ratio_high).",
        "",
        "## Replaced",
        "",
    ]
    if applied:
        lines += [
            "| mpi | op | ranks | msg_size | algorithm | expected gain [bounds] | file |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in sorted(applied, key=lambda c: (c.base, c.op, c.ranks, c.msg_size or 0)):
            assert c.setting is not None
            size = "" if c.msg_size is None else c.msg_size
            lines.append(
                f"| {c.base} | {c.op} | {c.ranks} | {size} | {c.setting.algorithm.name} | "
                f"{_ratio(c)} | {files[(c.base, c.op)]} |"
            )
        lines += [
            "",
            "Each measured size's choice holds in the rules file (Open MPI) or the JSON "
            "selection file (MPICH) from that size up to the next measured size; below the "
            "smallest and above the largest measured size, and at every number of ranks not "
            "measured, the library decides as before. An MPICH cvar (`.mpich.env`) sets one "
            "algorithm for every size and is written only where one algorithm wins at every "
            "measured size. The JSON file needs the tuned collectives' "
            "`MPIR_CVAR_<OP>_DEVICE_COLLECTIVE=0` (as the sweep measured them), so there "
            "MPICH's own MPIR-level tree, not the device's, decides where nothing is tuned.",
        ]
    else:
        lines.append("Nothing: no algorithm beats the default anywhere it was measured.")
    kept = [c for c in picks if c.setting is None]
    lines += ["", "## Kept", ""]
    lines.append(
        f"{len(kept)} of {len(picks)} (entry, op, ranks, msg_size) keep the default: no "
        "algorithm is significantly faster there in every test (verdicts per algorithm in "
        f"{ALGORITHMS_CSV}: holds = the default is not slower by v_thres, undecided = the runs "
        "cannot tell)."
    )
    lines += list(mockup_lines)
    lines += ["", "## Not tuned", ""]
    if untunable:
        for u in untunable:
            ranks = "" if u.ranks is None else f" at {u.ranks} ranks"
            lines.append(f"- {u.base} {u.op}{ranks}: {u.reason}.")
    if not other.empty:
        grouped = other.groupby(["guideline", "mpi", "op"], sort=True).size()
        lines.append(
            "- Violations of the other guidelines (another library, operation or parameter "
            "beats the collective; nothing here replaces one by the other): re-run them with "
            "the tuned algorithms as an entry to see which the library's own algorithms remove:"
        )
        lines += [f"  - {g} ({mpi}, {op}): {n} test(s)" for (g, mpi, op), n in grouped.items()]
    if not untunable and other.empty:
        lines.append("Nothing.")
    lines += ["", f"All algorithms against the default: {ALGORITHMS_CSV} (Figure 5's view).", ""]
    return "\n".join(lines)


def _selection_use(name: str, picks: Sequence[Choice]) -> str:
    """The env file's note on the JSON selection file: how to apply it instead of the cvars."""
    device = sorted({c.op for c in picks if c.setting and c.setting.device_override})
    lines = [
        f"# Per communicator and message size instead (MPICH {mpich_selection.VERSION}): drop the",
        "# cvar lines above and set",
        f"#   {mpich_selection.JSON_FILE_CVAR}=<path of {name}>",
        *(f"#   MPIR_CVAR_{op.upper()}_DEVICE_COLLECTIVE=0" for op in device),
        "# (the device's own selection otherwise runs before MPICH's tree is consulted).",
    ]
    return "\n".join(lines) + "\n"


def _library_tuning(
    outdir: Path, base: str, library: str, picks: Sequence[Choice]
) -> tuple[list[Choice], list[Untunable], dict[tuple[str, str], str]]:
    """Write one swept entry's settings for its library; return the choices they apply, what
    none of them can, and per (entry, op) the files that apply it."""
    if library == "openmpi":
        name = ompi_rules_name(base)
        text, done, cannot = ompi_rules(base, picks)
        _write(outdir / name, text)
        return done, cannot, {(c.base, c.op): name for c in done}
    env_name, json_name = mpich_env_name(base), mpich_selection_name(base)
    text, by_cvar, cannot_cvar = mpich_env(base, picks)
    selection, by_size, cannot_json = mpich_selection_file(base, picks)
    (outdir / json_name).unlink(missing_ok=True)
    if selection is not None:
        _write(outdir / json_name, selection)
        text += _selection_use(json_name, by_size)
    _write(outdir / env_name, text)
    files = {(c.base, c.op): json_name for c in by_size}
    for c in by_cvar:
        files[(c.base, c.op)] = env_name if (c.base, c.op) not in files else (
            f"{env_name} or {json_name}"
        )  # fmt: skip
    by_cvar_ops = {(c.base, c.op) for c in by_cvar}
    applied = [*by_cvar, *(c for c in by_size if (c.base, c.op) not in by_cvar_ops)]
    cannot = [u for u in [*cannot_cvar, *cannot_json] if (u.base, u.op) not in files]
    return applied, cannot, files


def tune(
    tests_csv: str | Path,
    decided_with: str | Path,
    settings: Mapping[str, AlgorithmSetting],
    outdir: str | Path,
    entries: Sequence[str] | None = None,
) -> Tuned:
    """Write algorithms.csv, a rules or cvar file per swept entry, a libmpiguide-tune file per
    entry of `entries` (default: every entry with a mock-up test, other than those an algorithm
    sweep added) and tuning.md; return what was applied."""
    tests = read_tests(Path(tests_csv))
    options = AnalysisOptions.read_record(Path(decided_with))
    mockups = mockup_tests(tests)
    if not settings and mockups.empty:
        raise DataError(
            "no mpi entry of this campaign sweeps its library's algorithms (`algorithms:` in an "
            "mpi entry, docs/config.md), and no guideline compares a collective with its own "
            "mock-up: there is nothing to tune from"
        )
    figure5 = algorithm_rows(tests, settings)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    with atomic_path(outdir / ALGORITHMS_CSV) as temporary:
        figure5.to_csv(temporary, index=False)
    picks = choices(figure5, settings)
    applied: list[Choice] = []
    untunable: list[Untunable] = []
    files: dict[tuple[str, str], str] = {}
    for base, library in sorted({(s.base, s.library) for s in settings.values()}):
        done, cannot, written = _library_tuning(outdir, base, library, [
            c for c in picks if c.base == base
        ])  # fmt: skip
        applied += done
        untunable += cannot
        files.update(written)
    if entries is None:
        entries = sorted(set(mockups["entry"]) - set(settings))
    replaced = replacements(mockups[mockups["entry"].isin(entries)])
    mockup_files = {entry: mockup_tuning_name(entry) for entry in entries}
    for entry, name in mockup_files.items():
        _write(outdir / name, tuning_file(entry, replaced))
    algo_ids = {s.guideline for s in settings.values()}
    other = _other_violations(tests, algo_ids, mockups)
    lines = _mockup_lines(replaced, not_replaced(mockups, replaced, entries), mockup_files)
    _write(
        outdir / TUNING_MD,
        tuning_md(applied, untunable, picks, other, options, files, lines),
    )
    return Tuned(applied, replaced)
