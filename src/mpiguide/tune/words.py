"""How tuning.md and verify.md say what they found: a tuned point, a speedup with its bounds and
their levels, a verify outcome, and where the method is explained. Words a person uses, never
a verdict word whose meaning flips with the guideline's direction."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import PurePosixPath

from mpiguide.analysis.comparisons import BLOCK_SIGNED_RANK, PAIRED_T, PAIRED_TESTS
from mpiguide.core.paths import RESULTS_ROOT, TUNING_MD, TUNING_TREE, VERIFY_MD

# verify's outcome for a tuned point: the gain found again (the re-measured test violated in
# the same direction as when tuned), gone (not faster by analysis.tuning.v_thres now, or
# slower), or these runs cannot tell; a point without a test now is not measured.
CONFIRMED = "confirmed"
NOT_CONFIRMED = "not confirmed"
CANNOT_TELL = "cannot tell"
NOT_MEASURED = "not measured"
OUTCOMES = (CONFIRMED, NOT_CONFIRMED, CANNOT_TELL, NOT_MEASURED)

# How a comparison was made: both sides in the same launches, or each in launches of its own.
WITHIN = "within one launch"
ACROSS = "across launches"
# How tests.csv's `test` pairs the two sides (analysis.comparisons).
_PAIRING = {PAIRED_T: "paired run by run", BLOCK_SIGNED_RANK: "paired block by block"}

# The method, in the repository's docs/tuning.md, linked from the notes below results/<campaign>/
# (tuning.md one directory further down).
DOC = "docs/tuning.md"
CHOICE_SECTION = "tune-the-settings-that-choose-the-faster-algorithm"
VERIFY_SECTION = "verify"


def doc_link(note: PurePosixPath, section: str) -> str:
    """A markdown link from `note` (its path below the directory the workflow runs in) to a
    section of docs/tuning.md."""
    up = "../" * (len(note.parts) - 1)
    return f"[{DOC}]({up}{DOC}#{section})"


TUNING_NOTE = PurePosixPath(RESULTS_ROOT, "<campaign>", TUNING_TREE, TUNING_MD)
VERIFY_NOTE = PurePosixPath(RESULTS_ROOT, "<campaign>-verify", VERIFY_MD)


def size_text(size: int) -> str:
    """A message size exactly: `8 B`, `64 KiB`, `1 MiB`; in bytes where no unit divides it."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def sizes_text(lo: int, hi: int) -> str:
    """The sizes a mock-up rule covers: `8 B`, or `8 B to 64 KiB`."""
    return size_text(lo) if lo == hi else f"{size_text(lo)} to {size_text(hi)}"


def point_text(entry: str, op: str, ranks: int, sizes: str | None) -> str:
    """`openmpi allreduce, 2 ranks, 8 B`: a tuned point as the decision lines name it."""
    where = f"{entry} {op}, {ranks} rank{'s' if ranks != 1 else ''}"
    return where if sizes is None else f"{where}, {sizes}"


def number(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3g}"


def speedup_text(speedup: float, low: float, high: float) -> str:
    """`1.06 [1.03, 1.08]`: a speedup and its bounds."""
    return f"{number(speedup)} [{number(low)}, {number(high)}]"


# The multiplication sign of `1.06x faster` as people write it (U+00D7).
TIMES = "\u00d7"


def times(factor: float) -> str:
    """`1.06x` with TIMES: a factor as people write it."""
    return f"{number(factor)}{TIMES}"


def faster_text(speedup: float, low: float, high: float) -> str:
    """`1.06x faster [1.03, 1.08]` (with TIMES): a speedup a choice rests on."""
    return f"{times(speedup)} faster [{number(low)}, {number(high)}]"


def percent(level: float) -> str:
    """`99.9`: a level as a percentage, without the float's noise."""
    return f"{100 * level:.6g}"


def _percent(levels: set[float]) -> str:
    shown = sorted({percent(level) for level in levels}, key=float)
    return f"{shown[0]} %" if len(shown) == 1 else f"{shown[0]} to {shown[-1]} %"


def levels_text(levels: Iterable[tuple[float, float]]) -> str:
    """`lower bound one-sided at 99.9 %, upper at 95 %`: the levels of the intervals a note
    shows (low, high per interval; NaN where not recorded), a range where they differ (a
    correction for multiple tests gives each test its own); empty if none is recorded."""
    lows, highs = set(), set()
    for low, high in levels:
        if not math.isnan(low):
            lows.add(low)
        if not math.isnan(high):
            highs.add(high)
    parts = []
    if lows:
        parts.append(f"lower bound one-sided at {_percent(lows)}")
    if highs:
        parts.append(f"upper at {_percent(highs)}" if lows else f"upper bound one-sided at "
                     f"{_percent(highs)}")  # fmt: skip
    return ", ".join(parts)


def own_launches_text(tests: Iterable[str]) -> str:
    """`across launches: measured in launches of its own, paired block by block`: how a setting
    that runs as an mpi entry of its own (an Intel MPI preset) was compared with the default,
    from the `test` of the tests behind it; the pairing left out where none is recorded."""
    found = sorted({test for test in tests if test})
    how = f"{ACROSS}: measured in launches of its own"
    if not found:
        return how
    if len(found) == 1 and found[0] in _PAIRING:
        return f"{how}, {_PAIRING[found[0]]}"
    paired = [test for test in found if test in PAIRED_TESTS]
    which = "paired in some tests only" if paired else "not paired"
    return f"{how}, {which} ({', '.join(found)})"
