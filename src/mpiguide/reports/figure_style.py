"""What every figure of the verdicts shares: one colour and marker per verdict (undecided is
its own category, never drawn as a pass), their legend, the footer that says which campaign,
library, deployment and thresholds a figure shows, so that it stands alone on a slide, and how
figures write what they show: message sizes in bytes (`8 B`, `1 KiB`), the two sides of a test
named by what tells them apart, a group by the keys its sides differ in and those it fixes."""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, PROCESS_COUNT_KEYS, AnalysisOptions
from mpiguide.analysis.pairing import LINKED_KEYS, PAIR_SEPARATOR, split_pair
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.paths import ALL_DEPLOYMENTS, deployment_name
from mpiguide.core.values import TUNING_GUIDELINES

VERDICTS = (VIOLATED, UNDECIDED, HOLDS)
# Red for a violation, purple for "these runs cannot tell", green for a pass: purple is in
# neither the heatmap's red-blue ratio scale nor the slowdown overview's warm severities.
VERDICT_COLOURS = {VIOLATED: "#d62728", UNDECIDED: "#7b3294", HOLDS: "#1a9850"}
# Shapes as well as colours, for readers and printers that lose the colour.
VERDICT_MARKERS = {VIOLATED: "X", UNDECIDED: "D", HOLDS: "o"}
VERDICT_LEGEND = {
    VIOLATED: "violated",
    UNDECIDED: "undecided (these runs cannot tell)",
    HOLDS: "holds",
}


def verdict_handles(verdicts: tuple[str, ...] = VERDICTS) -> list[Line2D]:
    """Legend entries of the verdict marks, every verdict whether or not a figure has one."""
    return [
        Line2D([], [], linestyle="none", marker=VERDICT_MARKERS[verdict], markersize=7,
               color=VERDICT_COLOURS[verdict], label=VERDICT_LEGEND[verdict])
        for verdict in verdicts
    ]  # fmt: skip


def thresholds(options: AnalysisOptions) -> str:
    """The options every verdict of a figure was decided with."""
    return (
        f"p_thres {options.p_thres:g} ({options.correction} correction), v_thres "
        f"{options.v_thres:g}, confidence {options.confidence:g}, test {options.test}"
    )


def provenance(
    campaign: str, options: AnalysisOptions, where: str = "", tuning_too: bool = False
) -> str:
    """`campaign X · openmpi 1x2 · p_thres ...`: what a figure pasted alone must say; with
    `tuning_too` (a figure of the campaign's guidelines and of those mpiguide adds to tune and
    verify) the latter's options too."""
    tuning = f"{TUNING_GUIDELINES}: {thresholds(options.for_tuning())}" if tuning_too else ""
    parts = [f"campaign {campaign}" if campaign else "", where, thresholds(options), tuning]
    return " · ".join(part for part in parts if part)


def below_drawn(figure: plt.Figure, gap_inches: float = 0.08) -> float:
    """A height, in figure coordinates, just under everything the figure draws so far (tick
    labels, axis labels): saved with a tight bounding box, the file grows to hold what goes
    there. It lays the figure out once more: for a figure or two, not for each of many."""
    drawn = figure.get_tightbbox()  # inches
    return float((drawn.y0 - gap_inches) / figure.get_size_inches()[1])


def with_provenance(provenance_line: str, title: str) -> str:
    """A figure's title under its provenance line: inside the title, the layout that keeps the
    title clear of the axes keeps it clear too."""
    return f"{provenance_line}\n{title}" if provenance_line else title


# zlib's level 3: faster than its default 6 and, for these flat-coloured figures, no larger.
PNG_COMPRESSION = 3


def save_figure(figure: plt.Figure, path: Path, tight: bool = True) -> None:
    """Write `figure` as a PNG at its own size, or (`tight`) grown or cropped to what it draws,
    which lays every text out once more."""
    box = None
    if tight:
        # measured once, as savefig's "tight" measures after a draw of its own
        drawn = figure.get_tightbbox(figure.canvas.get_renderer())  # type: ignore[attr-defined]
        box = drawn.padded(plt.rcParams["savefig.pad_inches"])
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=100, bbox_inches=box,
                       pil_kwargs={"compress_level": PNG_COMPRESSION})  # fmt: skip
    plt.close(figure)


class FigureJob(NamedTuple):
    """A figure to draw: `draw(*args)` writes it."""

    draw: Callable[..., None]
    args: tuple[Any, ...]


@contextmanager
def figure_drawer(processes: int = 1) -> Iterator[Callable[[FigureJob], None]]:
    """A function drawing a figure: at once, or handed to one of `processes` processes forked
    from this one (they inherit what it has read and imported) while it goes on, say reading
    what the next figures show; every figure is drawn when the block ends, the first error of
    a job raised there. Hand the largest figures first: the processes finish together."""
    if processes <= 1:
        yield lambda job: job.draw(*job.args)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    futures: list[Future[None]] = []
    with ProcessPoolExecutor(processes, mp_context=context) as pool:
        try:
            yield lambda job: futures.append(pool.submit(job.draw, *job.args))
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
        for future in futures:
            future.result()


SIDES = ("lhs", "rhs")
MSG_SIZE = "msg_size"  # bytes (docs/architecture.md, the operation table)


def size_label(size: float) -> str:
    """A message size in bytes as people write it: `8 B`, `1 KiB`, `1.5 MiB`."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= factor:
            return f"{size / factor:.4g} {unit}"
    return f"{size:.4g} B"


def value_label(key: str, value: object) -> str:
    """A parameter's value for an axis or a title: sizes with their unit, others as they are."""
    if key == MSG_SIZE:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return str(value)
        if not math.isnan(number):
            return size_label(number)
    return str(value)


def number_text(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.3g}"


def side_labels(test: pd.Series, keys: list[str], exclude: Collection[str] = ()) -> tuple[str, str]:
    """What tells a test's two sides apart, as two legend labels: the operations, or `key=value`
    of the other keys where lhs and rhs differ (`reorder=1`, `msg_size=1 KiB`). A key that
    applies to one side only (`ordering` = `|LINEAR`) is left out unless nothing else differs;
    `lhs`/`rhs` when even that is the same."""
    differing = [
        key for key in keys if key not in exclude and PAIR_SEPARATOR in str(test[key])
    ]  # fmt: skip
    both_sides = [key for key in differing if all(split_pair(str(test[key])))]
    labels: list[list[str]] = [[], []]
    for key in both_sides or differing:
        for index, value in enumerate(split_pair(str(test[key]))):
            shown = value_label(key, value) if value else "n/a"
            labels[index].append(shown if key == "op" else f"{key}={shown}")
    lhs, rhs = (" ".join(parts) or side for parts, side in zip(labels, SIDES, strict=True))
    return (f"{lhs} (lhs)", f"{rhs} (rhs)") if lhs == rhs else (lhs, rhs)


def varied_keys(varied: str) -> tuple[str, ...]:
    """The varied parameter and the keys that vary with it."""
    return (varied, *LINKED_KEYS.get(varied, ()))


def pair_labels(key: str, cell: str) -> list[str]:
    return [value_label(key, value) if value else "n/a" for value in split_pair(cell)]


@dataclass(frozen=True)
class GroupKey:
    """A key of a group's description and its value: `a vs b` where lhs and rhs differ, the
    value's label where the group fixes it."""

    key: str
    value: str
    differing: bool

    @property
    def text(self) -> str:
        """`op: a vs b` where the sides differ, `ndim=2` where fixed."""
        return f"{self.key}: {self.value}" if self.differing else f"{self.key}={self.value}"


def group_keys(
    test: Mapping[str, Any], keys: list[str], varied: str
) -> tuple[list[GroupKey], list[GroupKey]]:
    """A group's description from one of its tests: the keys where lhs and rhs differ and the
    fixed ones, the varied and deployment keys left out."""
    differing = [
        GroupKey(key, " vs ".join(pair_labels(key, test[key])), differing=True)
        for key in keys
        if key not in varied_keys(varied) and PAIR_SEPARATOR in test[key]
    ]  # fmt: skip
    fixed = [
        GroupKey(key, value_label(key, test[key]), differing=False)
        for key in keys
        if key not in (varied, *DEPLOYMENT_KEYS, *PROCESS_COUNT_KEYS)
        and test[key]
        and PAIR_SEPARATOR not in test[key]
    ]
    return differing, fixed


def group_deployment(test: Mapping[str, Any], varied: str) -> tuple[str, str]:
    """The mpi entry and deployment a test's group is in: where the varied parameter is a
    process count a group spans the deployments (ALL_DEPLOYMENTS)."""
    if varied in PROCESS_COUNT_KEYS:
        return str(test["mpi"]), ALL_DEPLOYMENTS
    return str(test["mpi"]), deployment_name(test["nodes"], test["ppn"])
