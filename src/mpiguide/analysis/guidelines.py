"""The check of guidelines on run medians (the catalogue itself: catalogue.py).

`check` pairs experiments for every guideline (pairing.py), tests every pair on the run
medians (comparisons.py), applies the violation rule with the analysis options and writes
tests.csv plus the tables (tables.py).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from mpiguide.analysis.analysis_types import (
    DECIDED_BY_TUNING,
    DEPLOYMENT_KEYS,
    AnalysisOptions,
    Guideline,
)
from mpiguide.analysis.comparisons import (
    LOST_PAIRS,
    MODEL_COLUMNS,
    NO_PAIRING,
    PAIR_BLOCKS,
    PAIR_RUNS,
    RANK_TESTS,
    RANKSUM,
    TEST_COLUMN,
    VIOLATION_BOUNDS,
    WELCH_T,
    RunMedians,
    compare,
    rank_violation_bounds,
)
from mpiguide.analysis.pairing import (
    Experiments,
    combined_keys,
    combined_values,
    group_ids,
    pair_comparison,
    pair_monotone,
)
from mpiguide.analysis.sequential import LOOK_RUNS, OPEN, STOP, Looks, look_table, stops
from mpiguide.analysis.stats import Alternative, adjust_pvalues
from mpiguide.analysis.tables import write_tables
from mpiguide.analysis.verdicts import (
    VERDICTS,
    Thresholds,
    decide,
    group_verdicts,
    uncorrected_tail,
    violation_tails,
)
from mpiguide.core.atomic import atomic_path
from mpiguide.core.columns import BLOCK_ATTEMPT_COLUMN, MEDIAN_VALUES, PAGE_FAULT_VALUES
from mpiguide.core.csv_table import write_csv_table
from mpiguide.core.errors import ConfigError, DataError
from mpiguide.core.paths import DECIDED_WITH_JSON, LOOKS_CSV, TESTS_CSV
from mpiguide.core.values import LIBRARY_CHOICE
from mpiguide.plan.inputs import ALGORITHM
from mpiguide.plan.operations import load_operations

MEDIAN_COLUMNS = ("exp_id", "run", "median_s", "n_kept")
# tests.csv's columns around the keys (deployment and parameters): the guideline before them,
# the group and the paired experiments after (docs/analysis.md).
TEST_LEADING_COLUMNS = ("guideline", "relation")
TEST_PAIR_COLUMNS = ("group", "lhs_exp_id", "rhs_exp_id")
# tests.csv's columns after the keys, group and experiments (docs/analysis.md).
TEST_RESULT_COLUMNS = [
    "n_lhs",
    "n_rhs",
    "median_lhs",
    "median_rhs",
    "violation_ratio",
    "ratio_low",
    "ratio_high",
    "low_level",
    "high_level",
    "p_value",
    "p_adjusted",
    TEST_COLUMN,
    "verdict",
    "violated",
    "group_verdict",
    "detectable_ratio",
    "runs_needed",
    "hl_ratio",
    "hl_low",
    "hl_high",
    "page_faults",
]
# Columns of medians.parquet that are not parameters of the experiment.
NOT_PARAMETERS = ("exp_id", "run", *MEDIAN_VALUES)


def read_medians(medians_parquet: Path) -> pd.DataFrame:
    if not medians_parquet.is_file():
        raise DataError(f"{medians_parquet}: no such file (written by `mpiguide aggregate`)")
    try:
        # Arrow's columns handed to pandas one by one, each freed once converted: pandas'
        # read_parquet consolidates them into 2-D blocks, fresh memory the kernel must zero.
        table = pq.read_table(medians_parquet)
        medians = table.to_pandas(split_blocks=True, self_destruct=True)
    except (OSError, ValueError) as error:
        raise DataError(f"{medians_parquet}: cannot read the run medians: {error}") from None
    missing = [c for c in (*MEDIAN_COLUMNS, *DEPLOYMENT_KEYS) if c not in medians.columns]
    if missing:
        raise DataError(f"{medians_parquet}: column {missing[0]!r} missing")
    if medians.empty:
        raise DataError(f"{medians_parquet}: holds no run medians")
    times = pd.to_numeric(medians["median_s"], errors="coerce")
    bad = ~(times >= 0)  # NaN, missing or negative: not a duration
    if bad.any():
        row = medians.loc[bad].iloc[0]
        where = ", ".join(f"{key}={row[key]}" for key in (*DEPLOYMENT_KEYS, "run", "exp_id"))
        raise DataError(
            f"{medians_parquet}: median_s {row['median_s']} at {where} is not a duration "
            f"({int(bad.sum())} such rows); was the file written by `mpiguide aggregate`?"
        )
    return medians


def with_nprocs(medians: pd.DataFrame) -> pd.DataFrame:
    """`medians` with the derived column nprocs = nodes x ppn after ppn."""
    if "nprocs" in medians.columns:
        return medians
    frame = medians.copy()
    nprocs = frame["nodes"].astype("int64") * frame["ppn"].astype("int64")
    frame.insert(frame.columns.get_loc("ppn") + 1, "nprocs", nprocs)
    return frame


def _experiments(medians: pd.DataFrame) -> tuple[Experiments, np.ndarray, np.ndarray]:
    """One experiment per (mpi, nodes, ppn, exp_id), keyed by every column that is not a
    measured value; its exp_id; the experiment of every median."""
    keys = [c for c in medians.columns if c not in NOT_PARAMETERS]
    rows = medians.groupby([*DEPLOYMENT_KEYS, "exp_id"], sort=True, observed=True).ngroup()
    rows = rows.to_numpy()
    first = np.unique(rows, return_index=True)[1]
    experiments = Experiments.from_frame(medians.iloc[first], keys)
    return experiments, medians["exp_id"].to_numpy()[first], rows


def _may_pair(
    experiments: Experiments, lhs_rows: np.ndarray, rhs_rows: np.ndarray, options: AnalysisOptions
) -> np.ndarray:
    """Per test: how `analysis.test` lets it be paired (NO_PAIRING, PAIR_RUNS, PAIR_BLOCKS;
    compare pairs it only if both sides hold the same runs, and block by block only the runs
    whose launches share their block's attempt). `auto`: run by run where both sides were
    measured in the same launches, i.e. share mpi entry and deployment (a run index names one
    launch of each); block by block where they share the deployment but not the entry (run i
    of two entries is one block under `blocking: run`; without blocks compare finds no
    attempts to share and decides the test unpaired)."""
    if options.test != "auto":
        return np.full(lhs_rows.size, PAIR_RUNS if options.test == "paired" else NO_PAIRING)
    same = np.ones(lhs_rows.size, dtype=bool)
    for key in DEPLOYMENT_KEYS:
        if key != "mpi":
            codes = experiments.codes[:, experiments.column(key)]
            same &= codes[lhs_rows] == codes[rhs_rows]
    mpi = experiments.codes[:, experiments.column("mpi")]
    same_entry = mpi[lhs_rows] == mpi[rhs_rows]
    return np.where(same, np.where(same_entry, PAIR_RUNS, PAIR_BLOCKS), NO_PAIRING)


# Tests are decided in blocks of this many, spread over the cores: most of a block's time goes
# to numpy sorts and scipy statistics that release the GIL, and equal blocks keep every core busy
# whatever the sizes of the guidelines (one guideline per thread left a core idle).
TESTS_PER_BLOCK = 4096


@dataclass(frozen=True)
class _Pairs:
    """The tests of one guideline: the experiment row of each side, and which comparison."""

    lhs_rows: np.ndarray
    rhs_rows: np.ndarray
    comparison: np.ndarray


def _pairs_of(guideline: Guideline, experiments: Experiments, options: AnalysisOptions) -> _Pairs:
    pairs = [
        pair_monotone(experiments, comparison.lhs, options.varied)
        if guideline.relation == "monotone"
        else pair_comparison(experiments, comparison.lhs, comparison.rhs)
        for comparison in guideline.comparisons
    ]
    return _Pairs(
        np.concatenate([lhs for lhs, _ in pairs]),
        np.concatenate([rhs for _, rhs in pairs]),
        np.repeat(np.arange(len(pairs)), [lhs.size for lhs, _ in pairs]),
    )


def _compare_in_blocks(
    pool: ThreadPoolExecutor,
    guideline: Guideline,
    pairs: _Pairs,
    experiments: Experiments,
    run_medians: RunMedians,
    options: AnalysisOptions,
) -> list[Future[pd.DataFrame]]:
    """The statistics of a guideline's tests, a block at a time on the pool (at least one block,
    so that a guideline without tests gets its empty statistics)."""
    may_pair = _may_pair(experiments, pairs.lhs_rows, pairs.rhs_rows, options)
    starts = range(0, max(pairs.lhs_rows.size, 1), TESTS_PER_BLOCK)
    blocks = [slice(begin, begin + TESTS_PER_BLOCK) for begin in starts]
    # Before a correction moves it (_corrected_rank_bounds), every p-value is held to p_thres.
    tail = uncorrected_tail(guideline.relation == "approx", options.p_thres)
    return [
        pool.submit(
            compare,
            run_medians,
            pairs.lhs_rows[block],
            pairs.rhs_rows[block],
            _alternative(guideline),
            options.confidence,
            may_pair[block],
            tail,
            RANKSUM if options.test == "ranksum" else WELCH_T,
        )
        for block in blocks
    ]


def _alternative(guideline: Guideline) -> Alternative:
    return "two-sided" if guideline.relation == "approx" else "greater"


def _corrected_rank_bounds(
    tests: pd.DataFrame,
    guideline: Guideline,
    pairs: _Pairs,
    run_medians: RunMedians,
    options: AnalysisOptions,
) -> None:
    """The rank tests' violation bounds read again at their corrected tails (a correction
    holds each p-value to its own level; the t-tests' bounds come from their model in
    verdicts.decide, the rank tests' need their data)."""
    rank = np.flatnonzero(tests[TEST_COLUMN].isin(RANK_TESTS).to_numpy())
    if options.correction == "none" or rank.size == 0:
        return
    tails = violation_tails(
        guideline.relation == "approx",
        tests["p_value"].to_numpy(),
        tests["p_adjusted"].to_numpy(),
        options.p_thres,
    )
    bounds = rank_violation_bounds(
        run_medians,
        pairs.lhs_rows[rank],
        pairs.rhs_rows[rank],
        tests[TEST_COLUMN].to_numpy()[rank],
        tails[rank],
    )
    for column, values in zip(VIOLATION_BOUNDS, bounds, strict=True):
        tests.loc[tests.index[rank], column] = values


def _tests_of(
    guideline: Guideline,
    pairs: _Pairs,
    statistics: list[Future[pd.DataFrame]],
    experiments: Experiments,
    exp_ids: np.ndarray,
    run_medians: RunMedians,
    options: AnalysisOptions,
) -> pd.DataFrame:
    """One row per test of the guideline: its keys, group, experiments and statistics."""
    lhs_rows, rhs_rows = pairs.lhs_rows, pairs.rhs_rows
    combined = combined_keys(experiments, lhs_rows, rhs_rows)
    tests = pd.DataFrame(combined_values(combined))
    tests["group"] = group_ids(combined, pairs.comparison, options.varied)
    tests["lhs_exp_id"] = exp_ids[lhs_rows]
    tests["rhs_exp_id"] = exp_ids[rhs_rows]
    stats = pd.concat([block.result() for block in statistics], ignore_index=True)
    tests = pd.concat([tests, stats], axis=1)
    tests["p_adjusted"] = adjust_pvalues(tests["p_value"].to_numpy(), options.correction)
    _corrected_rank_bounds(tests, guideline, pairs, run_medians, options)
    decide(guideline.relation == "approx", tests, _levels(options))
    tests["group_verdict"] = group_verdicts(tests["verdict"].to_numpy(), tests["group"].to_numpy())
    tests = tests.drop(columns=list(MODEL_COLUMNS))
    tests.insert(0, "relation", guideline.relation)
    tests.insert(0, "guideline", guideline.id)
    return tests


def selects_algorithm(guidelines: Sequence[Guideline]) -> bool:
    """Whether some side of some guideline selects on `algorithm`."""
    return any(
        ALGORITHM in side
        for guideline in guidelines
        for comparison in guideline.comparisons
        for side in (comparison.lhs, comparison.rhs)
    )


def with_library_choice(medians: pd.DataFrame, selected: bool = False) -> pd.DataFrame:
    """`medians` with the library's own choice of algorithm named (LIBRARY_CHOICE) where the
    column `algorithm` (present only where some experiment names an algorithm) is empty and
    applies: an empty cell of a parameter that does not apply matches any value in a pairing,
    the library's choice only itself. Where no experiment names one but a guideline selects on
    it (`selected`: an Intel MPI preset's ALGO guideline, whose preset is an entry's, not an
    experiment's), every row that it applies to is the library's choice."""
    if ALGORITHM not in medians.columns:
        if not selected:
            return medians
        medians = medians.assign(**{ALGORITHM: pd.Categorical([None] * len(medians))})
    operations = load_operations()
    ops = medians["op"].astype(str)
    applies = ops.map({op: operations[op].algorithm_of != "none" for op in ops.unique()})
    chosen = medians[ALGORITHM].isna() & applies.astype(bool)
    if not chosen.any():
        return medians
    frame = medians.copy()
    algorithm = frame[ALGORITHM].astype(object)
    algorithm[chosen] = LIBRARY_CHOICE
    frame[ALGORITHM] = algorithm.astype("category")
    return frame


def evaluate(
    medians: pd.DataFrame, guidelines: Sequence[Guideline], options: AnalysisOptions, source: str
) -> pd.DataFrame:
    """One row per test of every guideline (columns: see docs/analysis.md)."""
    medians = with_library_choice(medians, selects_algorithm(guidelines))
    if options.varied == "nprocs":
        medians = with_nprocs(medians)
    experiments, exp_ids, rows = _experiments(medians)
    keys = list(experiments.keys)
    if options.varied not in keys:
        raise ConfigError(f"{source}: analysis.varied {options.varied!r} is not in the data")
    for guideline in guidelines:
        for comparison in guideline.comparisons:
            for key in (*comparison.lhs, *comparison.rhs):
                if key not in keys:
                    raise ConfigError(
                        f"{source}: guideline {guideline.id} selects on {key!r}, which the "
                        f"data lack; parameters: {', '.join(keys)}"
                    )
    attempts = medians.get(BLOCK_ATTEMPT_COLUMN)
    run_medians = RunMedians.from_frame(
        rows,
        medians["run"].to_numpy(),
        medians["median_s"].to_numpy(),
        len(experiments),
        None if attempts is None else attempts.to_numpy(dtype=np.int64),
    )
    pairs = [_pairs_of(guideline, experiments, options) for guideline in guidelines]
    decided_with = [options.decided_by(guideline.decided_by) for guideline in guidelines]
    # The statistics run on the pool while this thread builds the tables' key columns.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        statistics = [
            _compare_in_blocks(pool, guideline, guideline_pairs, experiments, run_medians, own)
            for guideline, guideline_pairs, own in zip(guidelines, pairs, decided_with, strict=True)
        ]
        tests = [
            _tests_of(guideline, guideline_pairs, blocks, experiments, exp_ids, run_medians, own)
            for guideline, guideline_pairs, blocks, own in zip(
                guidelines, pairs, statistics, decided_with, strict=True
            )
        ]
    faulted = _faulted(medians, rows, len(experiments))
    for frame, guideline_pairs in zip(tests, pairs, strict=True):
        frame["page_faults"] = faulted[guideline_pairs.lhs_rows] | faulted[guideline_pairs.rhs_rows]
    lost = sum(int(frame[LOST_PAIRS].sum()) for frame in tests)
    if lost:
        print(
            f"mpiguide: warning: {lost} pair(s) of runs left out of block-paired tests: their "
            "launches ran in different attempts of their block (a re-measured entry does not "
            "share the block's conditions)",
            file=sys.stderr,
        )
    columns = [*TEST_LEADING_COLUMNS, *keys, *TEST_PAIR_COLUMNS, *TEST_RESULT_COLUMNS]
    if not tests:
        return pd.DataFrame(columns=columns)
    return pd.concat(tests, ignore_index=True)[columns]


def first_runs(medians: pd.DataFrame, runs: int) -> pd.DataFrame:
    """The run medians of a look: the first `runs` runs (by run index) of every experiment that
    has at least that many."""
    keys = [*DEPLOYMENT_KEYS, "exp_id"]
    ordered = medians.sort_values([*keys, "run"], kind="stable")
    by_experiment = ordered.groupby(keys, sort=False, observed=True)["run"]
    position = by_experiment.cumcount().to_numpy()
    count = by_experiment.transform("size").to_numpy()
    return ordered[(position < runs) & (count >= runs)]


def _levels(options: AnalysisOptions) -> Thresholds:
    return Thresholds(options.p_thres, options.v_thres, options.confidence)


def _spent(options: AnalysisOptions, looks: Looks) -> AnalysisOptions:
    """The options every look decides at: each error budget, the campaign's and
    `analysis.tuning`'s, spent a K-th at a time (Looks.spent)."""
    levels = looks.spent(_levels(options))
    tuning = looks.spent(_levels(options.for_tuning()))
    return dataclasses.replace(
        options,
        p_thres=levels.p_thres,
        confidence=levels.confidence,
        tuning=dataclasses.replace(options.tuning, p_thres=tuning.p_thres),
    )


def _stops(
    frame: pd.DataFrame,
    look: int,
    looks: Looks,
    spent: AnalysisOptions,
    tuning_ids: Sequence[str],
) -> np.ndarray:
    """`stops` of a look's tests, each at the spent levels of its guideline (`tuning_ids`: the
    guidelines `analysis.tuning` decides)."""
    tuning = frame["guideline"].isin(tuning_ids).to_numpy(dtype=bool)
    stopped = stops(frame, look, looks, _levels(spent))
    if tuning.any():
        stopped[tuning] = stops(frame[tuning], look, looks, _levels(spent.for_tuning()))
    return stopped


def evaluate_looks(
    medians: pd.DataFrame,
    guidelines: Sequence[Guideline],
    options: AnalysisOptions,
    looks: Looks,
    source: str,
) -> pd.DataFrame:
    """One row per test of every guideline, decided at the planned looks (docs/analysis.md,
    "Adaptive campaigns"): each look sees every experiment's first runs up to its number and
    decides at the spent levels; a test's row is that of the look it stopped at (its first look
    that is not OPEN, else the last look its runs reach), with `look_runs` and `stop`. A test
    whose runs reach no look yet is open and undecided."""
    tests = evaluate(medians, guidelines, options, source)
    identity = [c for c in tests.columns[: tests.columns.get_loc("rhs_exp_id") + 1]
                if c not in ("relation", "group")]  # fmt: skip
    spent = _spent(options, looks)
    tuning_ids = [g.id for g in guidelines if g.decided_by == DECIDED_BY_TUNING]
    at_looks = []
    for look, runs in enumerate(looks.runs):
        capped = first_runs(medians, runs)
        if capped.empty:
            break
        frame = evaluate(capped, guidelines, spent, source)
        frame[LOOK_RUNS] = runs
        frame[STOP] = _stops(frame, look, looks, spent, tuning_ids)
        at_looks.append(frame.drop(columns=["group", "group_verdict"]))
    tests[LOOK_RUNS] = 0
    tests[STOP] = OPEN
    if at_looks:
        # Two comparisons of a guideline may pair the same experiments: the k-th such test of
        # a look is the k-th of all tests.
        occurrence = "_occurrence"
        every = tests[identity].assign(
            **{occurrence: tests.groupby(identity, sort=False, dropna=False).cumcount()}
        )
        frames = pd.concat(at_looks, ignore_index=True)
        frames[occurrence] = frames.groupby(
            [*identity, LOOK_RUNS], sort=False, dropna=False
        ).cumcount()
        identity = [*identity, occurrence]
        looked = every.reset_index().merge(frames, on=identity, how="inner")
        stopped_at = np.where(looked[STOP].to_numpy() != OPEN, looked[LOOK_RUNS], looks.last + 1)
        by_test = looked.assign(_stopped_at=stopped_at).groupby("index")
        chosen = np.minimum(
            by_test["_stopped_at"].transform("min"), by_test[LOOK_RUNS].transform("max")
        )
        looked = looked[looked[LOOK_RUNS] == chosen].set_index("index")
        columns = [c for c in looked.columns if c not in identity]
        tests.loc[looked.index, columns] = looked[columns]
    unlooked = tests[LOOK_RUNS].to_numpy() == 0
    tests.loc[unlooked, "verdict"] = VERDICTS[2]
    tests.loc[unlooked, "violated"] = False
    tests.loc[unlooked, "runs_needed"] = pd.NA
    groups = tests.groupby(["guideline", "group"], sort=False).ngroup().to_numpy()
    tests["group_verdict"] = group_verdicts(tests["verdict"].to_numpy(), groups)
    return tests


def check(
    medians_parquet: str | Path,
    guidelines: Sequence[Guideline],
    options: AnalysisOptions,
    outdir: str | Path,
    looks: Looks | None = None,
    selection: Sequence[object] = (),
) -> pd.DataFrame:
    """Test every guideline on the run medians; write tests.csv, the tables and the record of
    the options and of the config's guideline `selection` (decided_with.json) into outdir;
    return the tests (tests.csv's rows).

    With the looks of an adaptive campaign, every test is decided at its looks (evaluate_looks).
    """
    medians_parquet, outdir = Path(medians_parquet), Path(outdir)
    medians = read_medians(medians_parquet)
    if looks is not None and looks.adaptive:
        tests = evaluate_looks(medians, guidelines, options, looks, str(medians_parquet))
    else:
        tests = evaluate(medians, guidelines, options, str(medians_parquet))
    outdir.mkdir(parents=True, exist_ok=True)
    # tests.csv is written on a thread of its own, beside the tables: most of its time goes to
    # Arrow's cast and writer, which release the GIL.
    with ThreadPoolExecutor(max_workers=1) as writer:
        tests_written = writer.submit(write_csv_table, tests, outdir / TESTS_CSV)
        tested = set(tests["guideline"].unique())
        for guideline in guidelines:
            if guideline.id not in tested:
                print(
                    f"mpiguide: warning: {guideline.id}: no test; no lhs experiment pairs with "
                    f"an rhs one in {medians_parquet} (summary.md lists it)",
                    file=sys.stderr,
                )
        write_tables(tests, guidelines, outdir, options.layout)
        tests_written.result()
    if looks is not None and looks.adaptive:
        with atomic_path(outdir / LOOKS_CSV) as temporary:
            look_table(tests).to_csv(temporary, index=False)
    counts = tests["verdict"].value_counts()
    options.write_record(
        outdir / DECIDED_WITH_JSON,
        [guideline.id for guideline in guidelines],
        {verdict: int(counts.get(verdict, 0)) for verdict in VERDICTS},
        looks.runs if looks is not None and looks.adaptive else (),
        [guideline.id for guideline in guidelines if guideline.decided_by == DECIDED_BY_TUNING],
        selection,
    )
    print(
        f"mpiguide check: {len(tests)} tests: "
        + ", ".join(f"{int(counts.get(verdict, 0))} {verdict}" for verdict in VERDICTS)
    )
    return tests


def _faulted(medians: pd.DataFrame, rows: np.ndarray, count: int) -> np.ndarray:
    """Per experiment: whether a rank page-faulted during its repetitions in some run (False
    where medians.parquet has no page-fault counts: written before the kernel counted them)."""
    faults = [medians[c] for c in PAGE_FAULT_VALUES if c.endswith("_max") and c in medians]
    faulted = np.zeros(count, dtype=bool)
    for column in faults:
        np.logical_or.at(faulted, rows, pd.to_numeric(column).fillna(0).to_numpy() > 0)
    return faulted
