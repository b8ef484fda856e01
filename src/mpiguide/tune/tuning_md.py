"""tuning.md: what `tune` replaced where, the expected gain with its bounds, what it kept, and
what could not be tuned and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.core.paths import ALGORITHMS_CSV
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.tune.choose import Choice, Untunable
from mpiguide.tune.mockup_rules import NotReplaced, Replacement, library_chosen


def _ratio(choice: Choice) -> str:
    return f"{choice.speedup:.3g} [{choice.low:.3g}, {choice.high:.3g}]"


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


def mockup_lines(
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
    tuning = options.tuning
    lines = [
        "# Tuning",
        "",
        "Written by `mpiguide tune` from the guidelines `ALGO.<entry>.<op>.<algorithm>` "
        "(the library's own choice ≼ that algorithm, in the same launches, Hunold 2023 §4) "
        "and `<op> ≼ "
        "<op>_as_<how>` (the collective against its own mock-up). A collective is tuned at "
        "a number of ranks and a message size only where an algorithm or a mock-up beats the "
        "default in "
        "every test there (verdict violated: for an algorithm the paired test at "
        f"`analysis.tuning`'s p ≤ {tuning.p_thres} and ratio ≥ {tuning.v_thres}; for a "
        f"mock-up the campaign's test `{options.test}` at p ≤ {options.p_thres} and "
        f"ratio ≥ {options.v_thres}); the fastest such algorithm or mock-up by its "
        "smallest speedup is chosen, and the default stays everywhere else. Expected gain: the "
        "default's time over the algorithm's or mock-up's, with the bounds that decided its "
        "verdict (tests.csv's ratio_low, one-sided at 1 - that p after any correction, and "
        f"ratio_high, one-sided at {options.confidence}).",
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
        f"{ALGORITHMS_CSV}: holds = the default is not slower by {tuning.v_thres}, undecided = "
        "the runs cannot tell)."
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
            "- Violations of the other guidelines, with the library's own choice of algorithm "
            "(another library, operation or parameter beats the collective; nothing here "
            "replaces one by the other); tests.csv has each under every swept algorithm "
            "(column `algorithm`), which shows whether one of the library's own removes it:"
        )
        lines += [f"  - {g} ({mpi}, {op}): {n} test(s)" for (g, mpi, op), n in grouped.items()]
    if not untunable and other.empty:
        lines.append("Nothing.")
    lines += ["", f"All algorithms against the default: {ALGORITHMS_CSV} (Figure 5's view).", ""]
    return "\n".join(lines)
