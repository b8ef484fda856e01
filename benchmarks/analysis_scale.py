"""Analysis at the neighbourhood paper's scale: aggregate → medians → tests → tables.

Synthesises raw kernel output for 3 deployments x 30 runs x 3360 experiments x 50 repetitions
(15.1 M timings, lognormal noise, planted violations), then times, each in a fresh process
so that peak RSS is its own, each the median of --repeat runs:

- the pipeline: aggregate() (timings.parquet + medians.parquet) and check() (tests.csv,
  summary.csv, summary.md, slowdown.csv) — plots excluded;
- the plot job as the workflow runs it, `python -m mpiguide plot` on that tests.csv with the
  schema's `plots:` defaults and the CLI's drawing processes, as many as the plot rule's threads
  (interpreter start and imports included), beside check; the load average is printed with it
  (the machine may be shared);
- a bare `pyarrow.parquet.read_table` of timings.parquet: the honest limit of any analysis
  that reads the timings once;
- one plain `pd.read_parquet` of timings.parquet, what a user opening the data pays;
- a bare `pyarrow.csv.read_csv` of every raw file: what bounds aggregate.

Goals: pipeline ≤ 3 times the bare pyarrow read, peak RSS ≤ 2 GB, `pd.read_parquet` of the
timings ≤ 3 s and ≤ 1.5 GB, the plot job ≤ check + 30 s, on 2 cores.
`--reference DIR` compares the tables written (guidelines/tests.csv, summary.csv, summary.md,
slowdown.csv) byte for byte with those of an earlier run kept in DIR (e.g. before a change).

`--components` (with `--workdir DIR --reuse`) instead times, in one fresh process, the
hand-written fast path of check beside the libraries it stands in for, on the table check writes,
interleaved, medians of max(--repeat, 5) (docs/analysis.md §6 keeps the figures): tests.csv by
csv_table.write_csv_table, pandas' DataFrame.to_csv and pyarrow.csv.write_csv; one Holm
adjustment of the largest guideline's p-values by analysis.stats.adjust_pvalues and by
statsmodels' multipletests; and check itself as shipped and with pandas' writer swapped in (its
output is the same).
`--plot-only` (with `--workdir DIR --reuse`) times only check and the plot job on the kept
campaign; `--plot-baseline SRC` also runs the plot job of another checkout's src/ (e.g. the
commit before a change, `git worktree add`) in turn with this one's, on the same data, and
prints their ratio: the figure to trust while other work shares the machine.
Usage: python benchmarks/analysis_scale.py [--workdir DIR [--reuse]] [--runs 30] [--repeat 3]
       [--keep] [--reference DIR] [--components] [--plot-only [--plot-baseline SRC]]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from _common import REPO
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.core.paths import (
    GRID_CSV,
    GUIDELINES_TREE,
    INPUTS_TREE,
    MEDIANS_PARQUET,
    PLOTS_TREE,
    RAW_TREE,
    SLOWDOWN_CSV,
    SUMMARY_CSV,
    SUMMARY_MD,
    TESTS_CSV,
    TIMINGS_PARQUET,
)

# The synthetic campaign writer is test support (tests/synthetic.py), shared with this benchmark.
sys.path.insert(0, str(REPO / "tests"))
from synthetic import Deployment, grid_frame, write_campaign

OPS = ("neighbor_allgather", "neighbor_alltoall", "neighbor_allgatherv", "neighbor_alltoallv")
SIZES = tuple(2**k for k in range(3, 13))
DEPLOYMENTS = tuple(Deployment("openmpi", nodes, 8) for nodes in (4, 8, 16))
NREP = 50
GUIDELINES = ["GL4", "GL5", "GL6", "GL9", "GL10", "GL11", "GL12"]
CATALOGUE = GUIDELINE_CATALOGUE


def topologies() -> list[dict]:
    """84 topology settings: 12 Cartesian, 72 von Neumann (r = 1) distributed graphs."""
    settings = []
    for ndim in (1, 2, 3):
        for nfin, reorder in itertools.product((0, ndim), (0, 1)):
            common = dict(ndim=ndim, nfin=nfin, reorder=reorder)
            settings.append(dict(topology="cart", radius=None, ordering=None,
                                 constructor="cart", **common))  # fmt: skip
            for ordering, constructor in itertools.product(("FMAJ", "LMAJ", "RAND"),
                                                           ("graph", "graph_adj")):  # fmt: skip
                settings.append(dict(topology="vonneumann", radius=1, ordering=ordering,
                                     constructor=constructor, **common))  # fmt: skip
    return settings


def campaign_grid():
    rows = [
        dict(op=op, msg_size=size, dtype="char", nrep=NREP, work=None, root=None,
             sync="dissemination", max_time=0.0, **topology)
        for op in OPS for topology in topologies() for size in SIZES
    ]  # fmt: skip
    return grid_frame(rows)


def typical_times(grid) -> np.ndarray:
    """Latency + bandwidth per neighbour; planted: allgather 1.3x slower from 1 KiB on,
    RAND ordering 1.1x slower in 3-D."""
    neighbours = 2 * grid["ndim"].astype(float).to_numpy()
    size = grid["msg_size"].astype(float).to_numpy()
    typical = 2e-6 + neighbours * (1e-6 + size * 2e-10)
    typical[((grid["op"] == "neighbor_allgather") & (grid["msg_size"] >= 1024)).to_numpy()] *= 1.3
    typical[((grid["ordering"] == "RAND") & (grid["ndim"] == 3)).to_numpy()] *= 1.1
    return typical


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stage_pipeline(workdir: Path) -> dict:
    from mpiguide.analysis.analysis_types import AnalysisOptions
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.analysis.guidelines import check
    from mpiguide.store.aggregate import aggregate

    raw = sorted((workdir / RAW_TREE).rglob("run*.csv"))
    start = time.perf_counter()
    aggregate(workdir / GRID_CSV, raw, workdir / RAW_TREE, workdir / INPUTS_TREE,
              workdir / TIMINGS_PARQUET, workdir / MEDIANS_PARQUET)  # fmt: skip
    aggregated = time.perf_counter()
    guidelines = resolve(GUIDELINES, load_catalogue(CATALOGUE), str(CATALOGUE))
    check(workdir / MEDIANS_PARQUET, guidelines, AnalysisOptions.with_defaults(),
          workdir / GUIDELINES_TREE)  # fmt: skip
    checked = time.perf_counter()
    return {
        "aggregate_s": aggregated - start,
        "check_s": checked - aggregated,
        "total_s": checked - start,
        "peak_rss_mb": peak_rss_mb(),
    }


def stage_check(workdir: Path) -> dict:
    """check() alone on the campaign's medians.parquet, as a change of analysis options runs."""
    from mpiguide.analysis.analysis_types import AnalysisOptions
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.analysis.guidelines import check

    guidelines = resolve(GUIDELINES, load_catalogue(CATALOGUE), str(CATALOGUE))
    start = time.perf_counter()
    check(workdir / MEDIANS_PARQUET, guidelines, AnalysisOptions.with_defaults(),
          workdir / GUIDELINES_TREE)  # fmt: skip
    return {"check_s": time.perf_counter() - start, "peak_rss_mb": peak_rss_mb()}


def stage_read(workdir: Path) -> dict:
    import pandas as pd

    start = time.perf_counter()
    timings = pd.read_parquet(workdir / TIMINGS_PARQUET)
    return {"total_s": time.perf_counter() - start, "rows": len(timings),
            "peak_rss_mb": peak_rss_mb()}  # fmt: skip


def stage_arrow_read(workdir: Path) -> dict:
    import pyarrow.parquet as pq

    start = time.perf_counter()
    timings = pq.read_table(workdir / TIMINGS_PARQUET)
    return {"total_s": time.perf_counter() - start, "rows": timings.num_rows,
            "peak_rss_mb": peak_rss_mb()}  # fmt: skip


def stage_raw_read(workdir: Path) -> dict:
    """What bounds aggregate: parsing every raw CSV once (pyarrow, multi-threaded)."""
    import pyarrow.csv as pacsv

    start = time.perf_counter()
    rows = sum(
        pacsv.read_csv(path).num_rows for path in sorted((workdir / RAW_TREE).rglob("*.csv"))
    )
    return {"total_s": time.perf_counter() - start, "rows": rows, "peak_rss_mb": peak_rss_mb()}


def plot_job(workdir: Path, source: Path | None = None) -> dict:
    """Seconds of one `python -m mpiguide plot` on the campaign's tests.csv with the CLI's
    defaults, as the plot rule runs it, and what it drew; `source`: the src/ of another
    checkout of mpiguide to run instead (e.g. before a change)."""
    plots = workdir / (PLOTS_TREE if source is None else f"{PLOTS_TREE}-baseline")
    shutil.rmtree(plots, ignore_errors=True)
    env = None if source is None else {**os.environ, "PYTHONPATH": str(source)}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mpiguide", "plot", "--timings", str(workdir / TIMINGS_PARQUET),
         "--tests", str(workdir / GUIDELINES_TREE / TESTS_CSV), "--analysis-json", "{}",
         "--campaign", "analysis_scale", "--outdir", str(plots)], check=True, env=env,
    )  # fmt: skip
    return {"total_s": time.perf_counter() - start,
            "pngs": float(len(list(plots.rglob("*.png"))))}  # fmt: skip


def print_plot_goal(plot: dict, check_s: float, load_before: str) -> None:
    goal = check_s + 30
    print(f"plot job (python -m mpiguide plot, {plot['pngs']:.0f} PNGs): "
          f"{plot['total_s']:.2f} s beside check {check_s:.2f} s; goal <= check + 30 s = "
          f"{goal:.2f} s: {'met' if plot['total_s'] <= goal else 'NOT met'}; load average "
          f"(1, 5, 15 min) {load_before} before the plot jobs, {load_average()} after")  # fmt: skip


def plot_only(workdir: Path, repeat: int, baseline: Path | None) -> None:
    """check and the plot job on a kept campaign, each the median of `repeat` fresh processes;
    with `baseline`, that checkout's plot job in turn with this one's, on the same data."""
    check_s = median_of("check", workdir, repeat)["check_s"]
    load_before = load_average()
    runs: dict[str, list[dict]] = {"this": [], "baseline": []}
    for _ in range(repeat):
        runs["this"].append(plot_job(workdir))
        if baseline is not None:
            runs["baseline"].append(plot_job(workdir, baseline))
    median = {name: {key: float(np.median([r[key] for r in results])) for key in results[0]}
              for name, results in runs.items() if results}  # fmt: skip
    print(f"medians of {repeat} fresh processes each")
    print_plot_goal(median["this"], check_s, load_before)
    if baseline is not None:
        this, before = median["this"]["total_s"], median["baseline"]["total_s"]
        print(f"plot job of {baseline} ({median['baseline']['pngs']:.0f} PNGs), in turn with "
              f"this one: {before:.2f} s; this / that: {this / before:.2f}")  # fmt: skip


def load_average() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def _interleaved(variants: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of each variant, the variants run in turn `repeat` times."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, run in variants.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(seconds)) for name, seconds in times.items()}


@contextmanager
def _replaced(module: object, name: str, value: object) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


def _check_inputs(workdir: Path):
    """The guidelines of the benchmark and the tests check writes to tests.csv."""
    from mpiguide.analysis.analysis_types import AnalysisOptions
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.analysis.guidelines import evaluate, read_medians

    guidelines = resolve(GUIDELINES, load_catalogue(CATALOGUE), str(CATALOGUE))
    tests = evaluate(read_medians(workdir / MEDIANS_PARQUET), guidelines,
                     AnalysisOptions.from_mapping({}, "benchmark"), "benchmark")  # fmt: skip
    return guidelines, tests


def stage_components(workdir: Path, repeat: int) -> dict:
    """Seconds of the hand-written path of check and of its library alternatives."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pacsv
    from statsmodels.stats.multitest import multipletests

    from mpiguide.analysis import guidelines as guidelines_module
    from mpiguide.analysis.analysis_types import AnalysisOptions
    from mpiguide.analysis.guidelines import check
    from mpiguide.analysis.stats import adjust_pvalues
    from mpiguide.core.csv_table import write_csv_table

    guidelines, tests = _check_inputs(workdir)
    out = Path(tempfile.mkdtemp(prefix="mpiguide-components-"))
    figures: dict = {"tests": len(tests)}

    def pandas_writes(frame: pd.DataFrame, path: Path) -> None:
        frame.to_csv(path, index=False)

    def arrow_writes(frame: pd.DataFrame, path: Path) -> None:
        pacsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), path)

    writers = {"mpiguide": write_csv_table, "pandas": pandas_writes, "pyarrow": arrow_writes}
    figures["csv"] = _interleaved(
        {name: lambda w=writer, n=name: w(tests, out / f"{n}.csv") for name, writer in
         writers.items()}, repeat)  # fmt: skip
    figures["csv_same"] = {
        name: (out / f"{name}.csv").read_bytes() == (out / "pandas.csv").read_bytes()
        for name in writers
    }
    # One Holm adjustment of the largest guideline's family, in this process holding the
    # campaign's tables (statsmodels' Holm runs gc.collect(), whose cost grows with them).
    family = max((group.to_numpy() for _, group in tests.groupby("guideline")["p_value"]), key=len)
    figures["holm_size"] = len(family)
    figures["holm"] = _interleaved({
        "mpiguide": lambda: adjust_pvalues(family, "holm"),
        "statsmodels": lambda: multipletests(family, method="holm"),
    }, repeat)  # fmt: skip
    figures["holm_same"] = {
        "mpiguide": True,
        "statsmodels": bool(
            np.allclose(adjust_pvalues(family, "holm"), multipletests(family, method="holm")[1])
        ),
    }

    def check_writes(name: str) -> Callable[[], None]:
        options = AnalysisOptions.with_defaults()
        return lambda: check(workdir / MEDIANS_PARQUET, guidelines, options, out / name)

    def swapped(module: object, name: str, value: object, outdir: str) -> Callable[[], None]:
        def run() -> None:
            with _replaced(module, name, value):
                check_writes(outdir)()

        return run

    figures["check"] = _interleaved({
        "as shipped": check_writes("shipped"),
        "tests.csv by pandas": swapped(guidelines_module, "write_csv_table", pandas_writes,
                                       "pandas"),
    }, repeat)  # fmt: skip
    shipped = (out / "shipped" / TESTS_CSV).read_bytes()
    figures["check_same"] = {"pandas": (out / "pandas" / TESTS_CSV).read_bytes() == shipped}
    shutil.rmtree(out, ignore_errors=True)
    return figures


def print_components(figures: dict, repeat: int) -> None:
    check_s = figures["check"]["as shipped"]
    print(f"medians of {repeat}, interleaved, one process; check: {figures['tests']} tests; "
          f"check as shipped {check_s:.3f} s")  # fmt: skip
    sections = [
        ("tests.csv writer", f"{figures['tests']} rows", figures["csv"],
         {name: "bytes identical" if same else "bytes DIFFER"
          for name, same in figures["csv_same"].items()}),
        ("Holm adjustment", f"one family of {figures['holm_size']} p-values", figures["holm"],
         {name: "equal" if same else "DIFFER" for name, same in figures["holm_same"].items()}),
    ]  # fmt: skip
    print(f"{'component':24} {'workload':34} {'implementation':16} {'median s':>9} "
          f"{'/ mpiguide':>10} {'/ check':>8}  result")  # fmt: skip
    for component, workload, times, notes in sections:
        for name, seconds in times.items():
            print(f"{component:24} {workload:34} {name:16} {seconds:9.3f} "
                  f"{seconds / times['mpiguide']:9.1f}x {seconds / check_s:7.0%}  "
                  f"{notes.get(name, '')}")  # fmt: skip
    same = dict(zip(figures["check"], [True, *figures["check_same"].values()], strict=True))
    for name, seconds in figures["check"].items():
        print(f"check, {name}: {seconds:.3f} s ({seconds / check_s:.2f}x as shipped), tests.csv "
              f"{'identical' if same[name] else 'DIFFERS'}")  # fmt: skip


STAGES = {
    "pipeline": stage_pipeline,
    "check": stage_check,
    "read": stage_read,
    "arrow-read": stage_arrow_read,
    "raw-read": stage_raw_read,
}


def run_stage(stage: str, workdir: Path) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--stage", stage, "--workdir", str(workdir)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return json.loads(output.strip().splitlines()[-1])


def median_of(stage: str, workdir: Path, repeat: int) -> dict:
    """Every figure of `stage`, the median over `repeat` fresh processes."""
    results = [run_stage(stage, workdir) for _ in range(repeat)]
    return {key: float(np.median([r[key] for r in results])) for key in results[0]}


def median_plot_job(workdir: Path, repeat: int) -> dict:
    results = [plot_job(workdir) for _ in range(repeat)]
    return {key: float(np.median([r[key] for r in results])) for key in results[0]}


def compare_tables(written: Path, reference: Path) -> str:
    """Which of the tables in `written` are byte-identical to those in `reference`."""
    lines = []
    for name in (TESTS_CSV, SUMMARY_CSV, SUMMARY_MD, SLOWDOWN_CSV):
        same = (reference / name).is_file() and (
            (written / name).read_bytes() == (reference / name).read_bytes()
        )
        lines.append(f"{name} {'identical to' if same else 'DIFFERS from'} {reference / name}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where to synthesise (default: a temp dir)")
    parser.add_argument("--reuse", action="store_true",
                        help="time the campaign already synthesised in --workdir")  # fmt: skip
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3, help="processes per figure (median)")
    parser.add_argument("--keep", action="store_true", help="keep the synthesised campaign")
    parser.add_argument("--reference", type=Path,
                        help="holds guidelines/ tables of an earlier run")  # fmt: skip
    parser.add_argument("--components", action="store_true",
                        help="time check's hand-written paths against libraries")  # fmt: skip
    parser.add_argument(
        "--plot-only",
        action="store_true",
        help="time only check and the plot job (with --workdir --reuse)",
    )
    parser.add_argument(
        "--plot-baseline",
        type=Path,
        metavar="SRC",
        help="with --plot-only: also time the plot job of the mpiguide "
        "package in SRC (another checkout's src/), in turn with this one",
    )
    parser.add_argument("--stage", choices=[*STAGES, "components"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage == "components":
        print(json.dumps(stage_components(args.workdir, args.repeat)))
        return
    if args.stage:
        print(json.dumps(STAGES[args.stage](args.workdir)))
        return
    if args.reuse and args.workdir is None:
        parser.error("--reuse needs --workdir")
    if args.plot_only or args.plot_baseline:
        if not args.reuse:
            parser.error("--plot-only needs --workdir DIR --reuse (a synthesised campaign)")
        plot_only(args.workdir, args.repeat, args.plot_baseline)
        return
    if args.components:
        if not args.reuse:
            parser.error("--components needs --workdir DIR --reuse (a synthesised campaign)")
        repeat = max(args.repeat, 5)
        output = subprocess.run(
            [sys.executable, __file__, "--stage", "components", "--workdir", str(args.workdir),
             "--repeat", str(repeat)], check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        print_components(json.loads(output.strip().splitlines()[-1]), repeat)
        return

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mpiguide-scale-"))
    try:
        if not args.reuse:
            grid = campaign_grid()
            start = time.perf_counter()
            write_campaign(workdir, grid, typical_times(grid), DEPLOYMENTS, args.runs,
                           sigma=0.05, seed=1)  # fmt: skip
            timings = len(grid) * NREP * args.runs * len(DEPLOYMENTS)
            print(f"synthesised {len(DEPLOYMENTS)} deployments x {args.runs} runs x {len(grid)} "
                  f"experiments x {NREP} reps = {timings / 1e6:.1f} M timings "
                  f"in {time.perf_counter() - start:.1f} s")  # fmt: skip
        pipeline = median_of("pipeline", workdir, args.repeat)
        arrow_read = median_of("arrow-read", workdir, args.repeat)
        read = median_of("read", workdir, args.repeat)
        raw_read = median_of("raw-read", workdir, args.repeat)
        print(f"medians of {args.repeat} fresh processes each")
        print(f"pipeline: aggregate {pipeline['aggregate_s']:.2f} s + check "
              f"{pipeline['check_s']:.2f} s = {pipeline['total_s']:.2f} s, "
              f"peak RSS {pipeline['peak_rss_mb']:.0f} MB")  # fmt: skip
        print(f"bare pyarrow.parquet.read_table(timings.parquet): {arrow_read['total_s']:.2f} s "
              f"({arrow_read['rows'] / 1e6:.1f} M rows), peak RSS "
              f"{arrow_read['peak_rss_mb']:.0f} MB")  # fmt: skip
        print(f"plain pd.read_parquet(timings.parquet): {read['total_s']:.2f} s, peak RSS "
              f"{read['peak_rss_mb']:.0f} MB (goal <= 3 s, <= 1536 MB)")  # fmt: skip
        print(f"bare pyarrow.csv.read_csv of every raw file: {raw_read['total_s']:.2f} s; "
              f"aggregate / that: {pipeline['aggregate_s'] / raw_read['total_s']:.2f}")  # fmt: skip
        check_ratio = pipeline["check_s"] / arrow_read["total_s"]
        print(f"re-running only the analysis (check, as a change of analysis options does): "
              f"{check_ratio:.2f} x the bare pyarrow read")  # fmt: skip
        print(f"ratio pipeline / bare pyarrow read: "
              f"{pipeline['total_s'] / arrow_read['total_s']:.2f} (goal <= 3); "
              f"pipeline / pd.read_parquet: {pipeline['total_s'] / read['total_s']:.2f}; "
              "pipeline peak RSS goal <= 2048 MB")  # fmt: skip
        load_before = load_average()
        print_plot_goal(median_plot_job(workdir, args.repeat), pipeline["check_s"], load_before)
        tests = (workdir / GUIDELINES_TREE / TESTS_CSV).read_text().count("\n") - 1
        per_25k = pipeline["check_s"] * 25_000 / tests
        print(f"tests: {tests}; check per 25 000 tests: {per_25k:.2f} s (goal <= 1 s)")
        if args.reference:
            print(compare_tables(workdir / GUIDELINES_TREE, args.reference / GUIDELINES_TREE))
        print("summary:\n" + (workdir / GUIDELINES_TREE / SUMMARY_MD).read_text())
    finally:
        if not args.keep and not args.reuse:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
