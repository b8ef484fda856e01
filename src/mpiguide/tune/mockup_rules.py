"""From verdict to fix by mock-up: where a collective is significantly slower than its own
mock-up, the tuning file of libmpiguide-tune (src/tune), which runs the collective as that
mock-up — the kernel's code, so what was measured and checked under --verify is what runs.

Input: tests.csv rows of guidelines `<op> ≼ <op>_as_<how>` (relation le, lhs the collective, rhs
its mock-up, within one mpi entry and deployment, the collective as the library chooses its
algorithm). A mock-up replaces the collective of an entry
at a number of ranks and a message size only where its test is `violated` (paired test,
p ≤ p_thres and ratio ≥ v_thres) in every test there (all datatypes, roots, deployments of that
many ranks, every other parameter); of several, the one with the largest smallest speedup. The
chosen sizes, merged where consecutive measured sizes chose the same mock-up, are the rules of
`<entry>.tune` (format: docs/tuning.md, "The tuning file of libmpiguide-tune").
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from mpiguide.analysis.pairing import split_pair
from mpiguide.core.values import LIBRARY_CHOICE, TUNE_GUIDELINE_PREFIX
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.tune.words import percent

# The mock-ups libmpiguide-tune can run, by the collective each replaces: a copy of the table of
# src/tune/replacements.c, held equal to what the built library lists by
# tests/tune/test_mockup_table.py.
REPLACEMENTS = {
    "bcast_as_allgatherv": "bcast",
    "bcast_as_scatter_allgather": "bcast",
    "allgather_as_alltoall": "allgather",
    "allgather_as_gather_bcast": "allgather",
    "allreduce_as_reduce_bcast": "allreduce",
    "allreduce_as_reduce_scatter_block_allgather": "allreduce",
    "allreduce_as_reduce_scatter_allgather": "allreduce",
    "scan_as_exscan_reduce_local": "scan",
}
# Why a mock-up the kernel measures is not among them.
ROOT_IN_PLACE = (
    "its collective allows MPI_IN_PLACE at the root alone, so the root would leave a call to "
    "the library while the other ranks ran the mock-up"
)
NOT_REPLACEABLE = {
    "reduce_as_allreduce": ROOT_IN_PLACE,
    "reduce_as_reduce_scatter_block_gather": ROOT_IN_PLACE,
    "reduce_as_reduce_scatter_gather": ROOT_IN_PLACE,
    "gather_as_allgather": ROOT_IN_PLACE,
    "gather_as_reduce": ROOT_IN_PLACE,
    "scatter_as_bcast": ROOT_IN_PLACE,
}
# verify's guideline per collective a tuning file replaces: within `<entry>.tuned`, the call
# libmpiguide-tune replaces is not slower than the library's own.
TUNE_GUIDELINE_SOURCE = (
    "mpiguide verify: a collective libmpiguide-tune runs as a faster mock-up (Hunold 2023, "
    "MPINPC: mock-ups as self-consistent performance guidelines) is not slower than the "
    "library's own call"
)


def tune_guideline_id(entry: str, collective: str) -> str:
    """The TUNE guideline of a collective an entry's libmpiguide-tune file replaces."""
    return f"{TUNE_GUIDELINE_PREFIX}.{entry}.{collective}"


OTHER_MOCKUP = "libmpiguide-tune does not implement this mock-up (src/tune/replacements.c)"
_PAIRED = ("mpi", "nodes", "ppn", "msg_size")
# tests.csv's one-sided levels of ratio_low and ratio_high
_LEVELS = ("low_level", "high_level")
_VIOLATED = "violated"


@dataclass(frozen=True)
class Replacement:
    """A rule of a tuning file: the collective `op` of `entry` runs as `mockup` on `ranks` ranks
    for message sizes lo..hi (bytes, the kernel's msg_size), measured at `sizes`; the gain is
    the smallest speedup among those tests with its bounds, one-sided at `low_level` and
    `high_level` (NaN: a rule read from a file that does not say)."""

    entry: str
    op: str
    mockup: str
    ranks: int
    lo: int
    hi: int
    sizes: tuple[int, ...]
    speedup: float
    low: float
    high: float
    low_level: float = float("nan")
    high_level: float = float("nan")

    def line(self) -> str:
        sizes = ", ".join(map(str, self.sizes))
        levels = (
            ""
            if math.isnan(self.low_level) or math.isnan(self.high_level)
            else f", bounds one-sided at {percent(self.low_level)} % and "
            f"{percent(self.high_level)} %"
        )
        return (
            f"{self.mockup} ranks={self.ranks} bytes={self.lo}-{self.hi}"
            f"  # speedup >= {self.speedup:.3g} [{self.low:.3g}, {self.high:.3g}]{levels}, "
            f"measured at {sizes} B"
        )


# A rule as Replacement.line writes it (files written before the levels were: without them).
_WRITTEN = re.compile(
    r"^(?P<mockup>\w+) ranks=(?P<ranks>\d+) bytes=(?P<lo>\d+)-(?P<hi>\d+)  # speedup >= "
    r"(?P<speedup>\S+) \[(?P<low>\S+), (?P<high>\S+)\]"
    r"(?:, bounds one-sided at (?P<low_level>\S+) % and (?P<high_level>\S+) %)?"
    r", measured at (?P<sizes>\d+(?:, \d+)*) B$"
)


def rule_lines(text: str) -> list[str]:
    """The rules of a tuning file as libmpiguide-tune reads them: each line without its comment,
    blank ones left out."""
    return [rule for line in text.splitlines() if (rule := line.split("#", 1)[0].strip())]


def read_replacements(entry: str, text: str) -> tuple[list[Replacement], list[str]]:
    """The rules of `entry`'s tuning file that `tuning_file` wrote, and its other rule lines
    (written or edited by hand: no measured sizes or gain) as they are."""
    written, other = [], []
    for line in text.splitlines():
        if not line.split("#", 1)[0].strip():
            continue
        match = _WRITTEN.match(line.strip())
        if not match or match["mockup"] not in REPLACEMENTS:
            other.append(line.strip())
            continue
        written.append(
            Replacement(
                entry, REPLACEMENTS[match["mockup"]], match["mockup"], int(match["ranks"]),
                int(match["lo"]), int(match["hi"]),
                tuple(int(size) for size in match["sizes"].split(", ")),
                float(match["speedup"]), float(match["low"]), float(match["high"]),
                _level(match["low_level"]), _level(match["high_level"]),
            )
        )  # fmt: skip
    return written, other


def _level(written: str | None) -> float:
    return float("nan") if written is None else round(float(written) / 100, 12)


@dataclass(frozen=True)
class NotReplaced:
    entry: str
    guideline: str
    op: str
    mockup: str
    tests: int
    reason: str


def library_chosen(algorithm: pd.Series) -> pd.Series:
    """Per test (tests.csv's `algorithm` cells): whether neither side forces an algorithm."""
    cells = algorithm.fillna("").astype(str)
    return cells.map(lambda cell: all(side in ("", LIBRARY_CHOICE) for side in split_pair(cell)))


def mockup_tests(tests: pd.DataFrame) -> pd.DataFrame:
    """The tests of a collective against its own mock-up within one entry and deployment, with
    columns entry, collective, mockup, ranks, msg_size (ints) besides tests.csv's."""
    if tests.empty or "op" not in tests.columns:
        return tests.iloc[0:0].assign(entry="", collective="", mockup="", ranks=0)
    parts = tests["op"].str.split("|", n=1, expand=True)
    if parts.shape[1] < 2:
        return tests.iloc[0:0].assign(entry="", collective="", mockup="", ranks=0)
    lhs, rhs = parts[0], parts[1].fillna("")
    single = pd.Series(True, index=tests.index)
    for column in _PAIRED:
        if column in tests.columns:
            single &= ~tests[column].astype(str).str.contains("|", regex=False)
    if ALGORITHM in tests.columns:
        # the library's own choice, what a call of the application runs, not a forced algorithm
        single &= library_chosen(tests[ALGORITHM])
    mine = (
        (tests["relation"] == "le")
        & single
        & (tests["msg_size"].astype(str) != "")
        & pd.Series(
            [str(r).startswith(f"{op}_as_") for op, r in zip(lhs, rhs, strict=True)],
            index=tests.index,
        )
    )
    frame = tests[mine].copy()
    frame["entry"] = frame["mpi"]
    frame["collective"] = lhs[mine]
    frame["mockup"] = rhs[mine]
    frame["ranks"] = frame["nodes"].astype(int) * frame["ppn"].astype(int)
    frame["msg_size"] = frame["msg_size"].astype(int)
    for column in ("violation_ratio", "ratio_low", "ratio_high", *_LEVELS):
        frame[column] = pd.to_numeric(frame.get(column, ""), errors="coerce")
    return frame


def _choice(point: pd.DataFrame) -> tuple[str, pd.Series] | None:
    """At one (entry, collective, ranks, msg_size): the replaceable mock-up violated in every
    test there with the largest smallest speedup, and that test; None if there is none."""
    best: tuple[str, pd.Series] | None = None
    for mockup, tests in point.groupby("mockup", sort=True):
        if mockup not in REPLACEMENTS or not (tests["verdict"] == _VIOLATED).all():
            continue
        worst = tests.loc[tests["violation_ratio"].idxmin()]
        if best is None or worst["violation_ratio"] > best[1]["violation_ratio"]:
            best = (str(mockup), worst)
    return best


def replacements(frame: pd.DataFrame) -> list[Replacement]:
    """The rules: per entry, collective and ranks, runs of consecutive measured sizes that chose
    the same mock-up, each one rule from its first to its last size."""
    found: list[Replacement] = []
    for (entry, op, ranks), tests in frame.groupby(["entry", "collective", "ranks"], sort=True):
        run: list[tuple[int, str, pd.Series]] = []
        for size, point in tests.groupby("msg_size", sort=True):
            chosen = _choice(point)
            if chosen and run and run[-1][1] == chosen[0]:
                run.append((int(size), *chosen))
                continue
            if run:
                found.append(_rule(str(entry), str(op), int(ranks), run))
            run = [(int(size), *chosen)] if chosen else []
        if run:
            found.append(_rule(str(entry), str(op), int(ranks), run))
    return found


def _rule(
    entry: str, op: str, ranks: int, run: Sequence[tuple[int, str, pd.Series]]
) -> Replacement:
    worst = min(run, key=lambda item: float(item[2]["violation_ratio"]))[2]
    sizes = tuple(size for size, _, _ in run)
    return Replacement(
        entry, op, run[0][1], ranks, sizes[0], sizes[-1], sizes,
        float(worst["violation_ratio"]), float(worst["ratio_low"]), float(worst["ratio_high"]),
        float(worst["low_level"]), float(worst["high_level"]),
    )  # fmt: skip


def not_replaced(
    frame: pd.DataFrame, done: Sequence[Replacement], entries: Sequence[str]
) -> list[NotReplaced]:
    """The violated tests no rule covers, per entry, guideline and mock-up, with the reason
    (`entries`: those that get a tuning file)."""
    covered = {(r.entry, r.op, r.ranks, size, r.mockup) for r in done for size in r.sizes}
    chosen = {(r.entry, r.op, r.ranks, size) for r in done for size in r.sizes}
    missed: dict[tuple[str, str, str, str], tuple[int, str]] = {}
    for row in frame[frame["verdict"] == _VIOLATED].to_dict("records"):
        point = (row["entry"], row["collective"], row["ranks"], row["msg_size"])
        if (*point, row["mockup"]) in covered:
            continue
        if row["entry"] not in entries:
            reason = (
                "the entry gets no tuning file (a verify campaign's `.tuned` entry is measured, "
                "not tuned: its base entry is)"
            )
        elif row["mockup"] in NOT_REPLACEABLE:
            reason = f"libmpiguide-tune does not run it: {NOT_REPLACEABLE[row['mockup']]}"
        elif row["mockup"] not in REPLACEMENTS:
            reason = OTHER_MOCKUP
        elif point in chosen:
            reason = "another mock-up is faster there"
        else:
            reason = (
                "not violated in every test at its number of ranks and message size (datatypes, "
                "roots, deployments), so no rule replaces the collective there"
            )
        key = (row["entry"], row["guideline"], row["collective"], row["mockup"])
        count, _ = missed.get(key, (0, reason))
        missed[key] = (count + 1, reason)
    return [
        NotReplaced(entry, guideline, op, mockup, count, reason)
        for (entry, guideline, op, mockup), (count, reason) in sorted(missed.items())
    ]


def tuning_file(entry: str, done: Sequence[Replacement]) -> str:
    mine = [r.line() for r in done if r.entry == entry]
    lines = [
        f"# libmpiguide-tune rules for mpi entry {entry}, written by mpiguide tune.",
        "# Use: LD_PRELOAD=libmpiguide-tune.so MPIGUIDE_TUNE=<this file>",
        "# <mock-up> ranks=<communicator size> bytes=<lo>-<hi> (the kernel's msg_size)"
        if mine
        else "# No rules: libmpiguide-tune replaces nothing with this file (see tuning.md).",
    ]
    return "\n".join([*lines, *mine]) + "\n"
