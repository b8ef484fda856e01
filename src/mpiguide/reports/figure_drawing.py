"""How the figures of the verdicts are drawn and written: matplotlib on its file-only backend,
the legend of the verdict marks, room under what a figure draws, PNGs written whole at one
resolution, and figures drawn in parallel processes. The words and colours they share are
reports/figure_style.py's, which imports no matplotlib: a page or table that only says what a
figure shows does not pay for loading it."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import matplotlib

matplotlib.use("Agg")  # files only, no display; must precede pyplot

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from mpiguide.core.atomic import atomic_path
from mpiguide.reports.figure_style import VERDICT_COLOURS, VERDICT_LEGEND, VERDICT_MARKERS, VERDICTS


def verdict_handles(verdicts: tuple[str, ...] = VERDICTS) -> list[Line2D]:
    """Legend entries of the verdict marks, every verdict whether or not a figure has one."""
    return [
        Line2D([], [], linestyle="none", marker=VERDICT_MARKERS[verdict], markersize=7,
               color=VERDICT_COLOURS[verdict], label=VERDICT_LEGEND[verdict])
        for verdict in verdicts
    ]  # fmt: skip


def below_drawn(figure: plt.Figure, gap_inches: float = 0.08) -> float:
    """A height, in figure coordinates, just under everything the figure draws so far (tick
    labels, axis labels): saved with a tight bounding box, the file grows to hold what goes
    there. It lays the figure out once more: for a figure or two, not for each of many."""
    drawn = figure.get_tightbbox()  # inches
    return float((drawn.y0 - gap_inches) / figure.get_size_inches()[1])


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
