"""tuning.md: one decision line per point `tune` looked at — the algorithm or mock-up it chose,
with its speedup and the file that applies it, or the default kept and whether that is settled
— then what could not be tuned and why. A point whose algorithms ran each in an mpi entry of
its own (Intel MPI's presets) says so, and how its tests paired the launches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.paths import ALGORITHMS_CSV, ALGORITHMS_PNG
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.tune.choose import MIXED, Choice, Untunable
from mpiguide.tune.library_algorithms import swept_per_launch
from mpiguide.tune.mockup_rules import NotReplaced, Replacement, library_chosen
from mpiguide.tune.words import (
    CHOICE_SECTION,
    TUNING_NOTE,
    doc_link,
    faster_text,
    levels_text,
    own_launches_text,
    point_text,
    size_text,
    sizes_text,
    times,
)


def other_violations(
    tests: pd.DataFrame, algo_ids: set[str], mockups: pd.DataFrame
) -> pd.DataFrame:
    """The violated tests of the campaign's other guidelines: neither ALGO nor a collective
    against its own mock-up, with the library's own choice of algorithm on both sides (a test
    under a forced algorithm is not what an application runs)."""
    other = ~tests["guideline"].isin(algo_ids) & ~tests.index.isin(mockups.index)
    if ALGORITHM in tests.columns:
        other &= library_chosen(tests[ALGORITHM])
    return tests[other & (tests["verdict"] == "violated")]


def rule_gain(rule: Replacement) -> str:
    """A rule's speedup: the least over the sizes it was measured at."""
    least = f", the least over its tests at {len(rule.sizes)} sizes" if len(rule.sizes) > 1 else ""
    return f"{faster_text(rule.speedup, rule.low, rule.high)}{least}"


def _others(choice: Choice, options: AnalysisOptions) -> str:
    """What the point's algorithms other than the chosen one say: those undecided or faster in
    some tests only by name (they leave the point open), those not faster by count."""
    chosen = choice.setting.algorithm.name if choice.setting else None
    others = [(name, verdict) for name, verdict in choice.verdicts if name != chosen]
    by = {v: [n for n, verdict in others if verdict == v] for v in (VIOLATED, UNDECIDED, MIXED)}
    bar = times(options.tuning.v_thres)
    if chosen:
        parts = [
            f"{what}: {', '.join(by[verdict])}"
            for verdict, what in ((VIOLATED, "also faster"), (UNDECIDED, "undecided"),
                                  (MIXED, "faster in some tests only"))
            if by[verdict]
        ]  # fmt: skip
        return "".join(f"; {part}" for part in parts)
    if not by[UNDECIDED] and not by[MIXED]:
        return f"settled: none of the {len(others)} algorithms is {bar} faster"
    parts = []
    if by[UNDECIDED]:
        parts.append(f"{len(by[UNDECIDED])} of {len(others)} algorithms undecided "
                     f"({', '.join(by[UNDECIDED])})")  # fmt: skip
    if by[MIXED]:
        parts.append(f"{len(by[MIXED])} faster in some tests only ({', '.join(by[MIXED])})")
    slower = sum(verdict == HOLDS for _, verdict in others)
    if slower:
        parts.append(f"{slower} not {bar} faster")
    return "not settled: " + ", ".join(parts)


def _algorithm_line(
    choice: Choice, applied: set[Choice], files: Mapping[tuple[str, str], str],
    options: AnalysisOptions, library: str | None,
) -> str:  # fmt: skip
    """`library`: the entry's; where it runs each algorithm in an entry of its own, the line
    names the setting that entry ran with and says the comparison was across launches."""
    size = None if choice.msg_size is None else size_text(choice.msg_size)
    where = point_text(choice.base, choice.op, choice.ranks, size)
    across = own_launches_text(choice.tests) if swept_per_launch(library) else ""
    if choice.setting is None:
        return f"- {where}: keep the default — {_others(choice, options)}" + (
            f" ({across})" if across else ""
        )
    name = choice.setting.algorithm.name
    gain = faster_text(choice.speedup, choice.low, choice.high)
    how = ""  # how the preset ran: the setting of its entry, and the comparison
    if across:
        name = f"preset {choice.setting.algorithm.number} {name}"
        env = ", ".join(f"{key}={value}" for key, value in choice.setting.env().items())
        how = f"{env}, {across}"
    if choice not in applied:
        return (
            f"- {where}: keep the default — {name} is {gain}{f' ({how})' if how else ''}, but "
            "no settings file can choose it here (Not tuned, below)"
        )
    file = files[(choice.base, choice.op)]
    detail = f"; {how}" if how else ""
    return f"- {where}: use {name} ({gain}{_others(choice, options)}{detail}) — {file}"


def _rule_line(rule: Replacement, mockup_files: Mapping[str, str]) -> str:
    where = point_text(rule.entry, rule.op, rule.ranks, sizes_text(rule.lo, rule.hi))
    return (
        f"- {where}: replace by the mock-up {rule.mockup} ({rule_gain(rule)}) — "
        f"{mockup_files.get(rule.entry, '')}"
    )


def tuning_md(
    picks: Sequence[Choice],
    applied: Sequence[Choice],
    untunable: Sequence[Untunable],
    files: Mapping[tuple[str, str], str],
    replaced: Sequence[Replacement],
    missed: Sequence[NotReplaced],
    mockup_files: Mapping[str, str],
    mockup_tested: bool,
    other: pd.DataFrame,
    options: AnalysisOptions,
    libraries: Mapping[str, str] | None = None,
) -> str:
    """The note; `mockup_tested`: some guideline compares a collective with its own mock-up;
    `libraries`: the swept entries' libraries."""
    done = set(applied)
    library = dict(libraries or {})
    decisions = [
        (
            (c.base, c.op, c.ranks, c.msg_size or 0),
            _algorithm_line(c, done, files, options, library.get(c.base)),
        )
        for c in picks
    ]
    decisions += [((r.entry, r.op, r.ranks, r.lo), _rule_line(r, mockup_files)) for r in replaced]
    shown = [c for c in picks if c.setting is not None]
    levels = levels_text(
        [(c.low_level, c.high_level) for c in shown]
        + [(r.low_level, r.high_level) for r in replaced]
    )
    speedup = ""
    if shown or replaced:
        bounds = f" [{levels}]" if levels else ""
        speedup = f"; a speedup is the default's time over the choice's{bounds}"
    lines = [
        "# Tuning",
        "",
        "One line per point measured (mpi entry, collective, ranks, message size) and per "
        "libmpiguide-tune rule: what `tune` chose and the file that applies it, or why the "
        f"default stays{speedup} (method: {doc_link(TUNING_NOTE, CHOICE_SECTION)}).",
        "",
    ]
    lines += [line for _, line in sorted(decisions, key=lambda item: item[0])]
    if mockup_tested and not replaced:
        lines.append(
            "- No collective is replaced by a mock-up: none is significantly slower than a "
            "mock-up libmpiguide-tune runs in every test at a number of ranks and message size."
        )
    lines += ["", "## Not tuned", ""]
    lines += [
        f"- {u.base} {u.op}{'' if u.ranks is None else f' at {u.ranks} ranks'}: {u.reason}."
        for u in untunable
    ]
    lines += [
        f"- {m.guideline} ({m.entry}, {m.op} as {m.mockup}), a violated mock-up guideline in "
        f"{m.tests} test(s): {m.reason}."
        for m in missed
    ]
    if not other.empty:
        grouped = other.groupby(["guideline", "mpi", "op"], sort=True).size()
        lines.append(
            "- Violations of the other guidelines, with the library's own choice of algorithm "
            "(another library, operation or parameter beats the collective; nothing here "
            "replaces one by the other; tests.csv has each under every swept algorithm, "
            "column `algorithm`):"
        )
        lines += [f"  - {g} ({mpi}, {op}): {n} test(s)" for (g, mpi, op), n in grouped.items()]
    if not untunable and not missed and other.empty:
        lines.append("Nothing.")
    if picks:
        lines += [
            "",
            f"Every algorithm against the default, test by test: {ALGORITHMS_CSV} and "
            f"{ALGORITHMS_PNG} (Hunold 2023, Figure 5's view).",
        ]
    return "\n".join([*lines, ""])
