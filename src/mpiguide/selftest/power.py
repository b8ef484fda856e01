"""The self-test: how often the guideline check cries wolf, and how small a slowdown it sees.

A self-test campaign (config/campaigns/selftest.yaml) measures one MPI entry, an identical copy
of it, and copies slowed down by libmpiguide-inject (src/inject) by a planted fraction of some
or all calls' durations. Its guidelines compare entries by `mpi` selectors, optionally fixing
an operation (or any other parameter): a guideline whose lhs operation is not slowed is a null
comparison, and any test it flags is a false positive; a guideline whose lhs operation is slowed
should be flagged, and the share of its groups that are is the power to detect that slowdown.
The planted slowdown of a guideline is read from its lhs entry's MPIGUIDE_INJECT (for the MPI
function of its lhs operation, MPI_<Op>, when it fixes one), so the campaign config alone
defines the experiment. A guideline whose two sides are one mpi entry compares measurements of
the same launches; one between two entries compares different launches.

Each rate is computed as the campaign's own analysis computes verdicts (guidelines.evaluate,
same thresholds), once with each test (`analysis.test` auto, the default, and ranksum), on
subsets of the runs: for every run count of the power table, the runs of each deployment are
drawn without replacement, the same run indices from every entry, many times, and the rates are
averaged over the draws. A draw numbers its runs 0, 1, ... in drawn order: the runs of one entry
stay paired with themselves, and launches of one block (`blocking: run`) with each other.
Besides the violated shares, each row gives the shares of tests and groups that hold and that
stay undecided: a test of a planted slowdown that holds is a false all-clear.

An adaptive campaign (`runs: {min, max, step}`) measures each experiment in a number of runs of
its own, so there are no runs every experiment shares to draw from: its rates are those of its
own decisions, each test as it stopped at its looks (guidelines.evaluate_looks, as the
campaign's check decides), with the campaign's own test only, since the runs were measured
until that test decided.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import DEPLOYMENT_KEYS, AnalysisOptions, Guideline
from mpiguide.analysis.catalogue import resolve
from mpiguide.analysis.sequential import FUTILE, LOOK_RUNS, STOP, Looks
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import ConfigError, DataError
from mpiguide.core.paths import run_path
from mpiguide.selftest.inject import ANNOUNCEMENT, INJECT_VARIABLE, mpi_function, planted_fraction

RUN_COUNTS = (5, 10, 20, 30)
RESAMPLES = 100
ALL_OPS = "all"
# The tests compared side by side (values of analysis.test).
TESTS = ("auto", "ranksum")
# Values of the `launches` column: both sides of a guideline measured in the same launches or not.
SAME_LAUNCHES, DIFFERENT_LAUNCHES = "same", "different"
COLUMNS = [
    "slowdown_pct", "launches", "test", "op", "runs", "resamples", "guidelines", "tests",
    "groups", "significant_test_rate", "flagged_test_rate", "detected_group_rate",
    "holds_test_rate", "undecided_test_rate", "holds_group_rate", "undecided_group_rate",
    "futile_test_rate", "runs_used", "looks",
]  # fmt: skip


@dataclass(frozen=True)
class PlantedGuideline:
    """A guideline of the self-test and the slowdown its lhs entry carries (0 for the null)."""

    guideline: Guideline
    lhs_mpi: str
    rhs_mpi: str
    slowdown: float

    @property
    def launches(self) -> str:
        return SAME_LAUNCHES if self.lhs_mpi == self.rhs_mpi else DIFFERENT_LAUNCHES


def _single_value(guideline: Guideline, side: str, key: str) -> set[str]:
    return {
        value
        for comparison in guideline.comparisons
        for value in getattr(comparison, side).get(key, ())
    }


def _single_mpi(guideline: Guideline, side: str, entries: Mapping[str, Any], source: str) -> str:
    names = _single_value(guideline, side, "mpi")
    if len(names) != 1 or not names <= set(entries):
        raise ConfigError(
            f"{source}: guideline {guideline.id}: the self-test needs {side}: {{mpi: NAME}} "
            f"naming one mpi entry of the campaign, not {sorted(names) or 'none'}"
        )
    return names.pop()


def _side_fraction(
    guideline: Guideline, side: str, mpi: str, entries: Mapping[str, Any], source: str
) -> float:
    """The fraction planted in what one side of a guideline measures: in the MPI function of
    the operation it fixes (or in the whole entry), for the dtype it fixes."""
    fixed = {}
    for key in ("op", "dtype"):
        values = _single_value(guideline, side, key)
        if len(values) > 1:
            raise ConfigError(
                f"{source}: guideline {guideline.id}: {side} selects {key} {sorted(values)}; the "
                f"self-test needs one {key} per side (or none), so that it knows what is slowed"
            )
        fixed[key] = values.pop() if values else None
    function = mpi_function(fixed["op"]) if fixed["op"] else None
    return planted_fraction(mpi, entries[mpi], source, function, fixed["dtype"])


def planted_guidelines(config: Mapping[str, Any], source: str) -> list[PlantedGuideline]:
    """The campaign's guidelines with the slowdown each one plants (checked: rhs is clean)."""
    entries = config["mpi"]
    selection = config.get("guidelines", [])
    catalogue_ids = [item for item in selection if isinstance(item, str)]
    if catalogue_ids:
        raise ConfigError(
            f"{source}: guidelines: {catalogue_ids[0]!r}: a self-test compares mpi entries with "
            "inline guidelines ({id: ..., lhs: {mpi: ...}, rhs: {mpi: ...}}), not catalogue ids"
        )
    planted = []
    for guideline in resolve(selection, {}, source):
        if guideline.relation != "le":
            raise ConfigError(f"{source}: guideline {guideline.id}: the self-test needs le")
        lhs = _single_mpi(guideline, "lhs", entries, source)
        rhs = _single_mpi(guideline, "rhs", entries, source)
        if _side_fraction(guideline, "rhs", rhs, entries, source) != 0.0:
            raise ConfigError(
                f"{source}: guideline {guideline.id}: rhs entry {rhs!r} is slowed down; the "
                "reference of a self-test comparison must be a clean entry (or operation)"
            )
        slowdown = _side_fraction(guideline, "lhs", lhs, entries, source)
        planted.append(PlantedGuideline(guideline, lhs, rhs, slowdown))
    if not any(p.slowdown == 0.0 for p in planted):
        raise ConfigError(f"{source}: guidelines: no null comparison between two clean entries")
    return planted


def check_injection_logs(
    config: Mapping[str, Any], medians: pd.DataFrame, run_logs: Path, source: str
) -> None:
    """Every run of an entry with MPIGUIDE_INJECT announced the injection, and no other run did.

    LD_PRELOAD of a missing library is only a warning of the dynamic loader: without this check
    a misplaced library would turn a planted slowdown into a silent null comparison.
    """
    unknown = sorted(set(medians["mpi"].astype(str)) - set(config["mpi"]))
    if unknown:
        raise DataError(
            f"the run medians hold mpi entries {unknown} that {source} does not define: "
            "medians and config come from different campaigns"
        )
    runs = medians[[*DEPLOYMENT_KEYS, "run"]].drop_duplicates()
    for row in runs.itertuples(index=False):
        log = run_logs / f"{run_path(str(row.mpi), row.nodes, row.ppn, int(row.run))}.log"
        try:
            announced = ANNOUNCEMENT in log.read_text(errors="replace")
        except OSError as error:
            raise DataError(f"{log}: cannot read the run's log: {error}") from None
        injected = INJECT_VARIABLE in config["mpi"][row.mpi].get("env", {})
        if injected and not announced:
            raise DataError(
                f"{log}: mpi entry {row.mpi!r} sets {INJECT_VARIABLE} but libmpiguide-inject did "
                "not announce itself in this run: is env.LD_PRELOAD the built library "
                "(make -C src/inject)? The run measured an unslowed library."
            )
        if announced and not injected:
            raise DataError(f"{log}: libmpiguide-inject was active in clean entry {row.mpi!r}")


def _common_runs(medians: pd.DataFrame) -> dict[tuple[Any, Any], np.ndarray]:
    """Per deployment (nodes, ppn): the run indices every mpi entry of it measured."""
    common = {}
    for deployment, part in medians.groupby(["nodes", "ppn"], observed=True):
        per_entry = [set(runs) for runs in part.groupby("mpi", observed=True)["run"].unique()]
        common[deployment] = np.array(sorted(set.intersection(*per_entry)))
    return common


def _draws(
    medians: pd.DataFrame,
    mpis: Iterable[str],
    n_runs: int,
    draw_ids: range,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Subsets of the medians, one per draw id, each with `n_runs` runs of every deployment
    drawn without replacement — the same run indices for every mpi entry of it, so that runs
    measured in one block stay paired — and numbered 0 .. n_runs-1 in drawn order, stacked for
    one evaluate call: the `draw` column is a parameter, so tests pair experiments of the same
    draw only, and exp_ids are offset per draw, so that each draw's experiments are experiments
    of their own."""

    medians = medians[medians["mpi"].isin(list(mpis))]
    offset = int(medians["exp_id"].max()) + 1
    common = _common_runs(medians)
    pieces = []
    for draw in draw_ids:
        for deployment, part in medians.groupby(["nodes", "ppn"], observed=True):
            chosen = rng.choice(common[deployment], size=n_runs, replace=False)
            piece = part[part["run"].isin(chosen)]
            position = pd.Series(np.arange(n_runs), index=chosen)
            pieces.append(
                piece.assign(
                    draw=draw,
                    exp_id=piece["exp_id"] + draw * offset,
                    run=position[piece["run"].to_numpy()].to_numpy(),
                )
            )
    return pd.concat(pieces, ignore_index=True)


def _rates(
    tests: pd.DataFrame, planted: Sequence[PlantedGuideline], options: AnalysisOptions
) -> pd.DataFrame:
    """Per slowdown, kind of comparison (same or different launches) and op (and over all ops):
    the share of tests significant (p alone), of tests flagged and of groups with a flagged
    test, averaged over the draws."""

    from mpiguide.analysis.pairing import lhs_side

    by_id = {p.guideline.id: p for p in planted}
    tests = tests.assign(
        slowdown=tests["guideline"].map({i: p.slowdown for i, p in by_id.items()}),
        launches=tests["guideline"].map({i: p.launches for i, p in by_id.items()}),
        op=lhs_side(tests["op"]),
        significant=tests["p_adjusted"] <= options.p_thres,
        holds=tests["verdict"] == HOLDS,
        undecided=tests["verdict"] == UNDECIDED,
        futile=tests[STOP] == FUTILE if STOP in tests else False,
    )
    levels = ["slowdown", "launches"]
    groups = tests.groupby([*levels, "draw", "guideline", "group"], observed=True).agg(
        op=("op", "first"),
        detected=("violated", "any"),
        holds=("group_verdict", lambda verdicts: verdicts.iloc[0] == HOLDS),
        undecided=("group_verdict", lambda verdicts: verdicts.iloc[0] == UNDECIDED),
    )
    rows = []
    for op_filter in (None, *sorted(tests["op"].unique())):
        chosen_tests = tests if op_filter is None else tests[tests["op"] == op_filter]
        chosen_groups = groups if op_filter is None else groups[groups["op"] == op_filter]
        per_draw = chosen_tests.groupby([*levels, "draw"]).agg(
            size=("violated", "size"),
            significant=("significant", "mean"),
            flagged=("violated", "mean"),
            holds=("holds", "mean"),
            undecided=("undecided", "mean"),
            futile=("futile", "mean"),
            runs_used=("runs_used", "mean"),
        )
        per_group = chosen_groups.groupby([*levels, "draw"]).agg(
            size=("detected", "size"),
            mean=("detected", "mean"),
            holds=("holds", "mean"),
            undecided=("undecided", "mean"),
        )
        per_group = per_group.groupby(levels)
        for level, test_counts in per_draw.groupby(levels):
            group_counts = per_group.get_group(level)
            rows.append(
                {
                    "slowdown_pct": round(100 * level[0], 6),
                    "launches": level[1],
                    "op": op_filter or ALL_OPS,
                    "tests": int(test_counts["size"].iloc[0]),
                    "groups": int(group_counts["size"].iloc[0]),
                    "significant_test_rate": test_counts["significant"].mean(),
                    "flagged_test_rate": test_counts["flagged"].mean(),
                    "detected_group_rate": group_counts["mean"].mean(),
                    "holds_test_rate": test_counts["holds"].mean(),
                    "undecided_test_rate": test_counts["undecided"].mean(),
                    "holds_group_rate": group_counts["holds"].mean(),
                    "undecided_group_rate": group_counts["undecided"].mean(),
                    "futile_test_rate": test_counts["futile"].mean(),
                    "runs_used": test_counts["runs_used"].mean(),
                }
            )
    return pd.DataFrame(rows)


def power_table(
    medians: pd.DataFrame,
    planted: Sequence[PlantedGuideline],
    options: AnalysisOptions,
    run_counts: Sequence[int] = RUN_COUNTS,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """selftest.csv: false-positive and detection rates per slowdown, kind of comparison, test,
    op and number of runs.

    A run count above the runs measured is left out; at exactly the runs measured there is one
    possible draw, so the rates are those of the campaign's own verdicts.
    """
    import dataclasses

    from mpiguide.analysis.guidelines import evaluate

    mpis, guidelines, label = _measured_guidelines(medians, planted)
    # Runs every entry of a deployment measured: a draw takes the same ones from each entry.
    common = _common_runs(medians[medians["mpi"].isin(list(mpis))])
    measured = min(runs.size for runs in common.values())
    rng = np.random.default_rng(seed)
    tables = []
    for n_runs in (n for n in run_counts if n <= measured):
        draws = 1 if n_runs == measured else resamples
        # A multiple-testing correction spans the tests of one evaluation: then one draw each.
        batch = draws if options.correction == "none" else 1
        samples = [
            _draws(medians, mpis, n_runs, range(first, min(first + batch, draws)), rng)
            for first in range(0, draws, batch)
        ]
        for test in TESTS:
            test_options = dataclasses.replace(options, test=test)
            tests = [evaluate(sample, guidelines, test_options, label) for sample in samples]
            decided = pd.concat(tests, ignore_index=True).assign(runs_used=n_runs)
            rates = _rates(decided, planted, options)
            tables.append(rates.assign(runs=n_runs, resamples=draws, test=test, looks=str(n_runs)))
    if not tables:
        raise DataError(
            f"the campaign measured {measured} runs per entry; the power table needs at least "
            f"{min(run_counts)}"
        )
    return _finish(pd.concat(tables, ignore_index=True), planted)


def adaptive_table(
    medians: pd.DataFrame, planted: Sequence[PlantedGuideline], options: AnalysisOptions,
    looks: Looks,
) -> pd.DataFrame:  # fmt: skip
    """selftest.csv of an adaptive campaign: the rates of its own decisions at its looks (one
    realisation, `resamples` 1), with its own test; `runs` is the last look, `runs_used` the
    mean runs per side the tests stopped at, `looks` the planned looks."""
    from mpiguide.analysis.guidelines import evaluate_looks

    mpis, guidelines, label = _measured_guidelines(medians, planted)
    chosen = medians[medians["mpi"].isin(list(mpis))]
    tests = evaluate_looks(chosen, guidelines, options, looks, label)
    decided = tests.assign(draw=0, runs_used=tests[LOOK_RUNS])
    rates = _rates(decided, planted, options).assign(
        runs=looks.last, resamples=1, test=options.test, looks=" ".join(map(str, looks.runs))
    )
    return _finish(rates, planted)


def _measured_guidelines(
    medians: pd.DataFrame, planted: Sequence[PlantedGuideline]
) -> tuple[set[str], list[Guideline], str]:
    """The mpi entries the guidelines compare (checked: each has runs), the guidelines and
    their label for error messages."""
    mpis = {p.lhs_mpi for p in planted} | {p.rhs_mpi for p in planted}
    # An entry without runs would silently drop its guidelines' rows from the table.
    unmeasured = sorted(mpis - set(medians["mpi"].astype(str)))
    if unmeasured:
        raise DataError(f"the run medians hold no runs of mpi entries {unmeasured}")
    return mpis, [p.guideline for p in planted], ",".join(p.guideline.id for p in planted)


def _finish(table: pd.DataFrame, planted: Sequence[PlantedGuideline]) -> pd.DataFrame:
    """The rates with the guidelines of each row, in the table's order and columns."""
    ids = {
        (round(100 * level, 6), launches): ",".join(
            p.guideline.id for p in planted if (p.slowdown, p.launches) == (level, launches)
        )
        for level, launches in {(p.slowdown, p.launches) for p in planted}
    }
    table["guidelines"] = [
        ids[key] for key in zip(table["slowdown_pct"], table["launches"], strict=True)
    ]
    order = ["launches", "test", "slowdown_pct", "op", "runs"]
    return table.sort_values(order, ignore_index=True)[COLUMNS]


LAUNCHES_TITLES = {SAME_LAUNCHES: "Within a launch", DIFFERENT_LAUNCHES: "Across launches"}


def verdict_tables(table: pd.DataFrame) -> str:
    """Per kind of comparison and test, over all ops: a row per planted slowdown, a column per
    number of runs, each cell the shares of tests violated / holding / undecided (percent) and
    of groups violated in brackets."""
    overall = table[table["op"] == ALL_OPS]
    runs = sorted(overall["runs"].unique())
    headers = {n: _runs_header(overall[overall["runs"] == n]) for n in runs}
    lines: list[str] = []
    for (launches, test), part in overall.groupby(["launches", "test"], sort=True):
        lines += [
            f"**{LAUNCHES_TITLES.get(launches, launches)}, `analysis.test: {test}`** — tests "
            "violated / holds / undecided, % (groups violated, %):",
            "",
            "| planted | " + " | ".join(headers[n] for n in runs) + " |",
            "|---|" + "---|" * len(runs),
        ]
        cells = part.set_index(["slowdown_pct", "runs"])
        for slowdown in sorted(part["slowdown_pct"].unique()):
            label = f"{slowdown:g} %" + (" (null)" if slowdown == 0 else "")
            row = [
                _verdict_cell(cells.loc[(slowdown, n)]) if (slowdown, n) in cells.index else "-"
                for n in runs
            ]
            lines.append(f"| {label} | " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def _runs_header(rows: pd.DataFrame) -> str:
    """`N runs`, or for an adaptive campaign its looks and the runs its tests used."""
    looks = str(rows["looks"].iloc[0])
    if looks == str(rows["runs"].iloc[0]):
        return f"{looks} runs"
    used = rows["runs_used"].mean()
    return f"adaptive, looks at {looks.replace(' ', ', ')} runs (stopped at {used:.1f} on average)"


def _verdict_cell(row: pd.Series) -> str:
    shares = (row["flagged_test_rate"], row["holds_test_rate"], row["undecided_test_rate"])
    tests = " / ".join(f"{100 * share:.1f}" for share in shares)
    return f"{tests} ({100 * row['detected_group_rate']:.0f})"


def plot_power(
    table: pd.DataFrame, options: AnalysisOptions, path: Path, campaign: str = ""
) -> None:
    """Detected share of groups against the planted slowdown, one line per number of runs; one
    panel per test (columns) and kind of comparison (rows), under a title that names the
    campaign, the options and what flags a group: a violated test, its lower one-sided bound
    at the violation level above 1 (the self-test's guidelines are all `le`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    overall = table[table["op"] == ALL_OPS]
    panels = overall.groupby(["launches", "test"], sort=True)
    rows = sorted(overall["launches"].unique())
    figure, axes = plt.subplots(
        len(rows), len(TESTS), figsize=(6.0 * len(TESTS), 3.6 * len(rows)), squeeze=False
    )
    for (launches, test), panel in panels:
        ax = axes[rows.index(launches), TESTS.index(test)]
        for looks, lines in panel.groupby("looks"):
            ax.plot(lines["slowdown_pct"], 100 * lines["detected_group_rate"], marker="o",
                    label=looks)  # fmt: skip
        ax.axhline(95, color="grey", linestyle=":", linewidth=1)
        ax.annotate("95 % of groups", (1.0, 95), xycoords=("axes fraction", "data"),
                    xytext=(-2, -2), textcoords="offset points", ha="right", va="top",
                    fontsize=7, color="grey")  # fmt: skip
        ax.set_title(f"{test}, {launches} launches")
        ax.set_xlabel("planted slowdown (%); 0 = nothing planted (false positives)")
        ax.set_ylabel("groups flagged (%)")
        ax.set_ylim(-3, 103)
        ax.legend(title="runs per entry")
    figure.suptitle(_flagged_rule(options, campaign), fontsize=10)
    figure.tight_layout()
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format=path.suffix.lstrip(".") or "png", dpi=120)
    plt.close(figure)


def _flagged_rule(options: AnalysisOptions, campaign: str) -> str:
    """The suptitle: whose self-test, and when a test counts as violated (verdicts.decide):
    its lower bound one-sided at 1 - alpha above 1, alpha = p_thres without a correction and
    the correction's level for that test with one, and its ratio at least v_thres."""
    from mpiguide.reports.figure_style import level_text

    level = f"{level_text(1 - options.p_thres)} %"
    if options.correction != "none":
        level = f"1 - alpha (alpha <= p_thres: the {options.correction} correction's for the test)"
    whose = f" of campaign {campaign}" if campaign else ""
    return (f"self-test{whose}: p_thres {options.p_thres:g} ({options.correction} correction), "
            f"v_thres {options.v_thres:g}, confidence {options.confidence:g}\n"
            f"a group is flagged when a test is violated: its lower one-sided bound at {level} "
            f"above 1 and its ratio ≥ {options.v_thres:g}")  # fmt: skip


def selftest(
    config: Mapping[str, Any],
    options: AnalysisOptions,
    medians_parquet: Path,
    run_logs: Path,
    csv_path: Path,
    plot_path: Path,
    markdown_path: Path,
    resamples: int = RESAMPLES,
    source: str = "config",
) -> pd.DataFrame:
    """Check the injection took effect, compute the power table, write the CSV, the plot and
    the Markdown tables. `source` names the campaign, for error messages."""
    planted = planted_guidelines(config, source)
    try:
        medians = pd.read_parquet(medians_parquet)
    except (OSError, ValueError) as error:
        raise DataError(f"{medians_parquet}: cannot read the run medians: {error}") from None
    check_injection_logs(config, medians, run_logs, source)
    looks = Looks.of(config.get("runs", 1))
    if looks.adaptive:
        table = adaptive_table(medians, planted, options, looks)
    else:
        seed = config.get("seed", 0)
        table = power_table(medians, planted, options, resamples=resamples, seed=seed)
    with atomic_path(csv_path) as temporary:
        table.to_csv(temporary, index=False, float_format="%.4f")
    plot_power(table, options, plot_path, str(config.get("campaign", "")))
    with atomic_path(markdown_path) as temporary:
        temporary.write_text(verdict_tables(table), encoding="utf-8")
    return table
