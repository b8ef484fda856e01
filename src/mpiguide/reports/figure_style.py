"""What every figure of the verdicts shares: one colour and marker per verdict (undecided is
its own category, never drawn as a pass), their legend, the footer that says which campaign,
library, deployment and thresholds a figure shows and at which levels its bounds are, read from
tests.csv, so that it stands alone on a slide (and the same words as a caption, for a page that
shows it), and how figures write what they show: message sizes in bytes (`8 B`, `1 KiB`), the
two sides of a test named by what tells them apart, a group by the keys its sides differ in and
those it fixes, an effect by the statistic its test computes."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import (
    DEPLOYMENT_KEYS,
    PROCESS_COUNT_KEYS,
    AnalysisOptions,
    Decisions,
)
from mpiguide.analysis.comparisons import BLOCK_SIGNED_RANK, PAIRED_T, RANKSUM, TEST_COLUMN, WELCH_T
from mpiguide.analysis.pairing import LINKED_KEYS, PAIR_SEPARATOR, split_pair
from mpiguide.analysis.tables import effect_ratio
from mpiguide.analysis.verdicts import HOLDS, UNDECIDED, VIOLATED, as_number
from mpiguide.core.errors import DataError
from mpiguide.core.paths import (
    ALL_DEPLOYMENTS,
    FOREST,
    HEATMAP,
    SLOWDOWN_CSV,
    deployment_name,
    labels_of_plot,
    safe_name,
)
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


def thresholds(options: AnalysisOptions) -> str:
    """The options every verdict of a figure was decided with."""
    return (
        f"p_thres {options.p_thres:g} ({options.correction} correction), v_thres "
        f"{options.v_thres:g}, confidence {options.confidence:g}, test {options.test}"
    )


def provenance(
    campaign: str,
    options: AnalysisOptions,
    where: str = "",
    tuning_too: bool = False,
    label: str = "",
) -> str:
    """`campaign X · openmpi 1x2 · p_thres ...`: the options a figure's verdicts were decided
    with (after `label`, which says whose they are); with `tuning_too` (a figure of the
    campaign's guidelines and of those mpiguide adds to tune and verify) the latter's options
    too. figure_footer adds the levels of the figure's tests."""
    tuning = f"{TUNING_GUIDELINES}: {thresholds(options.for_tuning())}" if tuning_too else ""
    return _joined(_campaign(campaign), where, label + thresholds(options), tuning)


def provenance_of_runs(campaign: str, where: str, run_band: float) -> str:
    """What a figure of one experiment's runs pasted alone must say: the campaign, the library
    and deployment, and the band outside which runs.csv flags a run."""
    band = (f"analysis.run_band {run_band:g}: runs.csv flags a run whose median ratio to the "
            f"median of medians is outside ±{100 * run_band:g} %")  # fmt: skip
    return _joined(_campaign(campaign), where, band)


def provenance_of_fit(campaign: str, where: str, options: AnalysisOptions, level: float) -> str:
    """What a figure of a fitted model pasted alone must say: the campaign, the library and the
    deployments the fit spans, the fit's options and the level of its coefficients' intervals
    (in models.csv)."""
    fit = (f"analysis.model_weighting {options.model_weighting}, model_tolerance "
           f"{options.model_tolerance:g}; the coefficients' {level_text(level)} % confidence "
           "intervals in models.csv")  # fmt: skip
    return f"{_joined(_campaign(campaign), where)}\n{fit}"


def _campaign(campaign: str) -> str:
    return f"campaign {campaign}" if campaign else ""


def _joined(*parts: str) -> str:
    return " · ".join(part for part in parts if part)


# What each test's `violation_ratio` is (analysis/comparisons.py), as a figure names it.
STATISTICS = {
    PAIRED_T: "geometric mean of the per-run ratios lhs/rhs",
    BLOCK_SIGNED_RANK: "Hodges-Lehmann estimate of the per-block ratios lhs/rhs",
    WELCH_T: "ratio of the geometric means of the run medians lhs/rhs",
    RANKSUM: "ratio of the medians of the run medians lhs/rhs",
}
# tests.csv's columns of the one-sided level of ratio_low and of ratio_high.
LEVEL_COLUMNS = ("low_level", "high_level")


def level_text(level: float) -> str:
    """A one-sided level in percent, to three significant digits of what it leaves out: 0.999
    is `99.9`, 0.95 `95`, 0.99995 `99.995`, 1 - 0.001/3 `99.9667`; never rounded up to 100."""
    tail = 100 * (1 - level)
    if not tail > 0:
        return f"{100 * level:g}"
    decimals = max(0, 2 - math.floor(math.log10(tail)))
    text = f"{100 * level:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _levels_of(values: pd.Series) -> list[str]:
    """The distinct levels of a column of tests.csv as level_text writes them, lowest first."""
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return sorted({level_text(float(level)) for level in numbers}, key=float)


def bound_levels(tests: pd.DataFrame) -> str:
    """The one-sided levels of the bounds of `tests` (tests.csv rows), as tests.csv states them
    (low_level, high_level): `lower 99.9 %, upper 95 %, one-sided`; a range and that they
    differ where the tests' levels do (a multiple-testing correction gives every test its own,
    an approx guideline's depend on the verdict)."""
    lows, highs = (_levels_of(tests[column]) for column in LEVEL_COLUMNS)
    if not lows and not highs:
        return "none (too few runs)"

    def side(levels: list[str]) -> str:
        if not levels:
            return "none"
        return f"{levels[0]} %" if len(levels) == 1 else f"{levels[0]} to {levels[-1]} %"

    text = f"lower {side(lows)}, upper {side(highs)}, one-sided"
    return text + (" (levels differ by test)" if len(lows) > 1 or len(highs) > 1 else "")


def levels_of_test(test: Mapping[str, Any]) -> tuple[str, str]:
    """One test's levels of its lower and upper bound (level_text), `n/a` for one it lacks."""
    low, high = (as_number(test[column]) for column in LEVEL_COLUMNS)
    texts = ["n/a" if math.isnan(level) else level_text(level) for level in (low, high)]
    return texts[0], texts[1]


def row_levels(test: Mapping[str, Any]) -> str:
    """One test's levels, `99.9|95 %` (lower|upper)."""
    low, high = levels_of_test(test)
    return f"{low}|{high} %"


def tests_used(tests: pd.DataFrame) -> list[str]:
    """The tests (tests.csv's `test`) that decided these rows, in STATISTICS' order."""
    present = set(tests[TEST_COLUMN].astype(str))
    return [test for test in (*STATISTICS, *sorted(present - set(STATISTICS))) if test in present]


def statistic_text(tests: pd.DataFrame) -> str:
    """What `violation_ratio` is for these rows, named by their tests: `geometric mean of the
    per-run ratios lhs/rhs (paired_t)`, or each test's where several decided them."""
    used = tests_used(tests)
    if len(used) == 1:
        return f"{STATISTICS.get(used[0], used[0])} ({used[0]})"
    return "; ".join(f"{test}: {STATISTICS.get(test, test)}" for test in used)


def figure_footer(
    campaign: str,
    decisions: Decisions,
    tests: pd.DataFrame,
    where: str = "",
    levels: bool = True,
) -> str:
    """What a figure of `tests` (tests.csv rows) pasted alone must say: the campaign, `where`
    (library and deployment), the options its tests were decided with, and (`levels`) the
    one-sided levels of their bounds and what their effect is, from tests.csv. Where
    `analysis.tuning` decided some of the tests and the campaign's options others, each set of
    options with the levels of its own tests."""
    by_tuning = tests["guideline"].astype(str).isin(decisions.by_tuning)
    sets = [
        (mine, options, label)
        for mine, options, label in (
            (~by_tuning, decisions.options, ""),
            (by_tuning, decisions.options.for_tuning(), f"{TUNING_GUIDELINES} (analysis.tuning): "),
        )
        if mine.any()
    ] or [(by_tuning, decisions.options, "")]
    lines = []
    for index, (mine, options, label) in enumerate(sets):
        lines.append(provenance(campaign, options, where, label=label) if index == 0
                     else label + thresholds(options))  # fmt: skip
        if levels and mine.any() and set(FOOTER_LEVEL_COLUMNS) <= set(tests.columns):
            lines.append(f"bounds: {bound_levels(tests[mine])} · effect: "
                         f"{statistic_text(tests[mine])}")  # fmt: skip
    return "\n".join(lines)


def deciding_tests(tests: pd.DataFrame) -> pd.DataFrame:
    """One row per group: the test farthest from its relation (`_effect`) among those whose
    verdict is the group's, with the group's counts of violated and undecided tests — what a
    forest plot's row shows and what the group's focus plot shows."""
    flags = pd.DataFrame({
        "guideline": tests["guideline"], "group": tests["group"], "n_tests": 1,
        "n_violated": (tests["verdict"] == VIOLATED).astype(int),
        "n_undecided": (tests["verdict"] == UNDECIDED).astype(int),
    })  # fmt: skip
    counts = flags.groupby(["guideline", "group"], sort=False).sum()
    own = tests.loc[tests["verdict"] == tests["group_verdict"]]
    chosen = own.sort_values("_effect", ascending=False, kind="stable")
    chosen = chosen.drop_duplicates(["guideline", "group"]).sort_values(["guideline", "group"])
    return chosen.join(counts, on=["guideline", "group"])


# tests.csv's numbers a caption reads, wherever the frame it is given holds them as text.
_CAPTION_NUMBERS = ("group", "violation_ratio", "ratio_low", "ratio_high", *LEVEL_COLUMNS)
# The campaign's figure beside tests.csv that draws its `le` tests (analysis/slowdown.py).
SLOWDOWN_FIGURE = Path(SLOWDOWN_CSV).stem


def slowdown_tests(tests: pd.DataFrame) -> pd.DataFrame:
    """The rows of tests.csv the slowdown overview draws: its `le` tests."""
    return tests.loc[tests["relation"] == "le"]


# What figure_footer reads of tests.csv; the test and levels where it has them.
FOOTER_COLUMNS = ("guideline", "relation")
FOOTER_LEVEL_COLUMNS = (TEST_COLUMN, *LEVEL_COLUMNS)


def read_footer_tests(tests_csv: Path) -> pd.DataFrame:
    """The columns of tests.csv a figure's footer reads (figure_footer), as text, for a figure
    drawn from other tables (the slowdown overview)."""
    if not tests_csv.is_file():
        raise DataError(f"{tests_csv}: no such file (written by `mpiguide check`)")
    try:
        header = pd.read_csv(tests_csv, nrows=0).columns
        missing = [column for column in FOOTER_COLUMNS if column not in header]
        if missing:
            raise DataError(f"{tests_csv}: column {missing[0]!r} missing")
        columns = [*FOOTER_COLUMNS, *(c for c in FOOTER_LEVEL_COLUMNS if c in header)]
        return pd.read_csv(tests_csv, usecols=columns, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as error:
        raise DataError(f"{tests_csv}: cannot read the tests: {error}") from None


def figure_caption(name: str, campaign: str, decisions: Decisions, tests: pd.DataFrame) -> str:
    """A figure's caption in plain text (for a page's figcaption and alt text): what it shows,
    then the words of its footer (figure_footer: campaign, deployment, options, the levels of
    its bounds and what its effect is), from the rows of tests.csv it draws.

    `name` is the figure's path below plots/ without its suffix (`forest/openmpi/1x2/GL4`,
    `forest/openmpi/1x2/GL4/page2`, `overview/GL4-group0003-violated`, `focus/...`,
    `heatmap`), or, for a figure of the whole campaign, its file's stem (`slowdown`); `tests`
    is tests.csv, its cells as numbers or as written. For many figures of one tests.csv,
    FigureCaptions reads it once."""
    return FigureCaptions(campaign, decisions, tests).caption(name)


class FigureCaptions:
    """figure_caption of every figure of one campaign: tests.csv read as numbers, split by
    guideline and each guideline's forest rows found once, not once per figure (a campaign
    page captions every figure it shows)."""

    def __init__(self, campaign: str, decisions: Decisions, tests: pd.DataFrame) -> None:
        self.campaign = campaign
        self.decisions = decisions
        tests = tests.assign(**{
            column: pd.to_numeric(tests[column], errors="coerce")
            for column in _CAPTION_NUMBERS if column in tests
        })  # fmt: skip
        self.tests = tests.assign(_effect=effect_ratio(tests))
        names = self.tests["guideline"].astype(str).map(safe_name)
        self._guidelines = dict(list(self.tests.groupby(names, sort=False)))
        self._forests: tuple[pd.DataFrame, np.ndarray, np.ndarray] | None = None

    def caption(self, name: str) -> str:
        """figure_caption of the figure `name`."""
        what, shown, where = self._what_it_shows(labels_of_plot(name))
        footer = figure_footer(self.campaign, self.decisions, shown, where)
        return f"{what} — {'; '.join(footer.splitlines())}."

    def _of_guideline(self, guideline: str) -> pd.DataFrame:
        """The tests of the guideline whose name, made safe for a file, is `guideline`."""
        return self._guidelines.get(guideline, self.tests.iloc[:0])

    def _forest(self, guideline: str, deployment: str) -> pd.DataFrame:
        """The rows of a forest plot: of every guideline's (deciding_tests: a group's rows are
        its guideline's alone, so found once for all), those of `guideline` in `deployment`,
        as a forest plot's path names them (`openmpi 1x2`)."""
        if self._forests is None:
            rows = deciding_tests(self.tests)
            varied = self.decisions.options.varied
            places = np.array([" ".join(map(safe_name, group_deployment(row, varied)))
                               for row in rows.to_dict("records")], dtype=object)  # fmt: skip
            names = rows["guideline"].astype(str).map(safe_name).to_numpy(dtype=object)
            self._forests = rows, names, places
        rows, names, places = self._forests
        return rows.loc[(names == guideline) & (places == deployment)]

    def _what_it_shows(self, labels: Mapping[str, str]) -> tuple[str, pd.DataFrame, str]:
        """A figure's description, the rows of tests.csv it draws and their deployment, from
        its labels (paths.labels_of_plot)."""
        kind, guideline = labels["plot"], labels["guideline"]
        varied = self.decisions.options.varied
        if kind.startswith(FOREST):
            rows = self._forest(guideline, labels["deployment"])
            where = _where(rows, varied)
            page = kind.removeprefix(FOREST).strip()
            return (f"Forest plot of {_named(rows, guideline)} in {where}"
                    f"{f', {page}' if page else ''}: per group, the violation_ratio of its test"
                    " farthest from its relation among those with the group's verdict, with its"
                    " bounds [ratio_low, ratio_high]", rows, where)  # fmt: skip
        if labels["group"] != "all":
            mine = self._of_guideline(guideline)
            group = mine.loc[mine["group"] == int(labels["group"])]
            where = _where(group, varied)
            title = f"{_named(group, guideline)} group {int(labels['group'])} ({labels['verdict']})"
            if kind != "focus":
                return (f"Overview of {title} in {where}: the median of run medians of both sides"
                        f" by {varied}", group, where)  # fmt: skip
            shown = deciding_tests(group)
            what = f"Focus plot of {title} in {where}: every run's repetitions of both sides"
            for _, test in shown.iterrows():
                what += (f" at {varied}={value_label(varied, test[varied])}, violation_ratio "
                         f"{number_text(test['violation_ratio'])} "
                         f"[{number_text(test['ratio_low'])}, "
                         f"{number_text(test['ratio_high'])}]")  # fmt: skip
            return what, shown, where
        if kind == SLOWDOWN_FIGURE:
            what = (
                "Slowdown overview: per library and deployment, each collective by message size, "
                "coloured by its slowdown against the fastest significantly faster alternative"
            )
            return what, slowdown_tests(self.tests), ""
        if kind == HEATMAP:
            return (f"Heatmap: the median effect ratio per guideline and operations by {varied},"
                    " each cell marked with its tests' verdict", self.tests, "")  # fmt: skip
        return kind, self.tests, ""


def _named(tests: pd.DataFrame, guideline: str) -> str:
    """`GL4 (le)`: the guideline as tests.csv names it, with its relation."""
    if tests.empty:
        return guideline
    return f"{tests['guideline'].iloc[0]} ({tests['relation'].iloc[0]})"


def _where(tests: pd.DataFrame, varied: str) -> str:
    return "no tests" if tests.empty else deployment_of(tests.iloc[0], varied)


def deployment_of(test: Mapping[str, Any], varied: str) -> str:
    """The mpi entry and deployment a test's group is in, as its figures' footers name them
    (the mpi entry alone where the group spans the deployments)."""
    mpi, deployment = group_deployment(test, varied)
    return mpi if deployment == ALL_DEPLOYMENTS else f"{mpi} {deployment}"


def with_provenance(provenance_line: str, title: str) -> str:
    """A figure's title under its provenance line: inside the title, the layout that keeps the
    title clear of the axes keeps it clear too."""
    return f"{provenance_line}\n{title}" if provenance_line else title


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
