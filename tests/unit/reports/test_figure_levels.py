"""Every level a figure prints is a level tests.csv states for the tests it draws (`low_level`,
`high_level`), and every figure names the statistic its tests computed: the figures of a campaign
analysed at non-default p_thres and confidence, read back from the figures before they are
saved, against tests.csv; and the captions the campaign page shows, against the same."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from mpiguide.analysis.analysis_types import AnalysisOptions, Decisions
from mpiguide.analysis.catalogue import resolve
from mpiguide.analysis.guidelines import check
from mpiguide.analysis.slowdown import SEVERITY_LABELS
from mpiguide.analysis.tables import effect_ratio
from mpiguide.cli import main
from mpiguide.core.package_data import MODEL_CATALOGUE
from mpiguide.core.paths import PLOT_SUFFIX, safe_name
from mpiguide.reports.figure_style import (
    deciding_tests,
    deployment_of,
    figure_caption,
    figure_footer,
    level_text,
)
from mpiguide.reports.forest import axis_label, row_notes
from mpiguide.reports.plots import PlotOptions, plot, read_tests
from mpiguide.reports.variability import variability
from mpiguide.selftest.power import ALL_OPS, plot_power
from mpiguide.store.aggregate import aggregate
from synthetic import Deployment, neighbor_grid, write_campaign

CAMPAIGN = "levels"
GUIDELINES = {
    "GL4": {"source": "s", "text": "t", "relation": "le",
            "lhs": {"op": "neighbor_allgather"}, "rhs": {"op": "neighbor_alltoall"}},
    "SAME": {"source": "s", "text": "t", "relation": "approx",
             "lhs": {"reorder": 1}, "rhs": {"reorder": 0}},
    "LIBS": {"source": "s", "text": "t", "relation": "le",
             "lhs": {"mpi": "mpich"}, "rhs": {"mpi": "openmpi"}},
}  # fmt: skip
# Analyses at levels other than the defaults (p_thres 0.001, confidence 0.95): the paired and
# Welch tests without a correction, and the rank-sum with Holm's, which gives every test a
# level of its own.
ANALYSES = {
    "auto": AnalysisOptions.with_defaults(p_thres=0.01, confidence=0.9),
    "ranksum-holm": AnalysisOptions.with_defaults(
        p_thres=0.02, confidence=0.8, correction="holm", test="ranksum"
    ),
}
# Words that name each test's effect (analysis/comparisons.py).
STATISTIC_WORDS = {
    "paired_t": "geometric mean of the per-run ratios",
    "block_signed_rank": "Hodges-Lehmann estimate of the per-block ratios",
    "welch_t": "ratio of the geometric means of the run medians",
    "ranksum": "ratio of the medians of the run medians",
}
# A level as a figure prints it, `99.9 %`, or a range of levels, `99.7 to 99.9 %`.
PERCENT = re.compile(r"(?:(\d+(?:\.\d+)?) to )?(\d+(?:\.\d+)?) %")


@contextmanager
def recorded_texts() -> Iterator[dict[str, list[str]]]:
    """Every figure saved in the block: its path (as asked for, not the temporary beside it)
    and every text it draws (titles, axis and tick labels, legends, annotations)."""
    texts: dict[str, list[str]] = {}
    original = Figure.savefig

    def savefig(figure: Figure, fname, *args, **kwargs):  # type: ignore[no-untyped-def]
        path = Path(fname)
        final = path.with_name(path.name.split(".tmp-")[0])
        texts[final.as_posix()] = [t.get_text() for t in figure.findobj(Text) if t.get_text()]
        return original(figure, fname, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", savefig)
        yield texts


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two libraries on 1x2: allgather 1.6x slower than alltoall at 1 KiB, MPICH 1.3x slower
    than Open MPI throughout."""
    root = tmp_path_factory.mktemp("measured")
    grid = neighbor_grid()
    typical = 1e-6 * grid["msg_size"].astype(float).to_numpy()
    typical[((grid["op"] == "neighbor_allgather") & (grid["msg_size"] == 1024)).to_numpy()] *= 1.6
    raw = []
    for seed, (mpi, factor) in enumerate((("openmpi", 1.0), ("mpich", 1.3))):
        raw += write_campaign(root, grid, typical * factor, [Deployment(mpi, 1, 2)], runs=8,
                              sigma=0.02, seed=seed)  # fmt: skip
    aggregate(root / "grid.csv", raw, root / "raw", root / "inputs", root / "timings.parquet",
              root / "medians.parquet")  # fmt: skip
    return root


class Analysed:
    """One analysis of the measured campaign: its tests.csv, decisions and every figure's
    texts."""

    def __init__(self, root: Path, options: AnalysisOptions, measured: Path) -> None:
        self.root = root
        self.decisions = Decisions(options)
        guidelines = resolve(list(GUIDELINES), GUIDELINES, "c")
        check(measured / "medians.parquet", guidelines, options, root / "guidelines")
        self.tests_csv = root / "guidelines" / "tests.csv"
        with recorded_texts() as texts:
            # four groups get overview and focus plots (of 16 violated): every kind drawn
            plot(measured / "timings.parquet", self.tests_csv, self.decisions, root / "plots",
                 PlotOptions.from_mapping({"max": 4}, "test"), campaign=CAMPAIGN)  # fmt: skip
        self.texts = {Path(path).relative_to(root / "plots").as_posix(): drawn
                      for path, drawn in texts.items()}  # fmt: skip
        tests = read_tests(self.tests_csv)
        self.tests = tests.assign(_effect=effect_ratio(tests))

    def figures(self, kind: str) -> dict[str, list[str]]:
        """The texts of every figure below plots/<kind>/ (or plots/<kind>.png)."""
        return {name: texts for name, texts in self.texts.items()
                if name.split("/")[0].removesuffix(PLOT_SUFFIX) == kind}  # fmt: skip


@pytest.fixture(scope="module", params=list(ANALYSES))
def analysed(request: pytest.FixtureRequest, measured: Path, tmp_path_factory) -> Analysed:
    return Analysed(tmp_path_factory.mktemp(request.param), ANALYSES[request.param], measured)


def same_level(printed: str, level: float) -> bool:
    """Whether a level printed in percent is `level` (a one-sided level from tests.csv) to the
    three significant digits of what it leaves out."""
    tail = 100 * (1 - level)
    return abs((100 - float(printed)) - tail) <= 0.006 * tail


def levels_of(tests: pd.DataFrame) -> list[float]:
    return sorted({*tests["low_level"].dropna(), *tests["high_level"].dropna()})


def assert_only_levels_of(texts: list[str], tests: pd.DataFrame) -> None:
    """Every percentage the texts print (a level, or the ends of a range of levels) is a level
    of these tests, and each of their levels is printed or inside a printed range."""
    levels = levels_of(tests)
    assert levels, "these tests have bounds"
    printed = [match for text in texts for match in PERCENT.findall(text)]
    for low, high in printed:
        for number in (low, high) if low else (high,):
            assert any(same_level(number, level) for level in levels), (number, levels, texts)
    for level in levels:
        assert any(
            same_level(high, level) or (low and float(low) <= 100 * level <= float(high))
            for low, high in printed
        ), (level, printed)


def assert_names_statistics(text: str, tests: pd.DataFrame) -> None:
    for test in tests["test"].unique():
        assert STATISTIC_WORDS[test] in text, (test, text)
    for test in set(STATISTIC_WORDS) - set(tests["test"]):
        assert STATISTIC_WORDS[test] not in text, (test, text)


def in_deployment(tests: pd.DataFrame, mpi: str, deployment: str) -> pd.DataFrame:
    """The tests of a forest plot's directory (`safe_name` of the entry, the deployment)."""
    places = tests["mpi"].map(safe_name) + " " + tests["nodes"] + "x" + tests["ppn"]
    return tests.loc[places == f"{mpi} {deployment}"]


def test_the_analyses_are_at_non_default_levels(analysed: Analysed) -> None:
    """What the other tests check against: tests.csv's levels are those of the analysis, not
    the defaults' 99.9 % and 95 %."""
    options = analysed.decisions.options
    tests = analysed.tests
    le = tests.loc[tests["relation"] == "le"]
    assert (le["high_level"] == options.confidence).all()
    if options.correction == "none":
        assert le["low_level"].to_numpy() == pytest.approx(1 - options.p_thres)
    else:  # each test its own level, none below 1 - p_thres
        assert le["low_level"].nunique() > 1 and (le["low_level"] >= 1 - options.p_thres).all()
    assert not set(levels_of(tests)) & {0.999, 0.95}


def test_forest_plots_print_the_levels_and_statistic_of_their_rows(analysed: Analysed) -> None:
    forests = analysed.figures("forest")
    # GL4 and SAME in each library, LIBS across both
    assert len(forests) == 5
    for name, texts in forests.items():
        _, mpi, deployment, guideline = name.removesuffix(PLOT_SUFFIX).split("/")
        rows = deciding_tests(
            in_deployment(
                analysed.tests.loc[analysed.tests["guideline"] == guideline], mpi, deployment
            )
        )
        assert len(rows)
        label = next(text for text in texts if text.startswith("violation_ratio ("))
        assert_names_statistics(label, rows)
        assert "lhs / rhs median of run medians" not in label
        assert_only_levels_of(texts, rows)
        pairs = set(zip(rows["low_level"], rows["high_level"], strict=True))
        if len(pairs) == 1:
            ((low, high),) = pairs
            printed = re.search(r"lower (\S+) %, upper (\S+) %, one-sided", label)
            assert printed and same_level(printed[1], low) and same_level(printed[2], high)
        else:  # each row's label ends with its own levels, lower|upper
            assert "at the levels lower|upper after each row's label" in label
            for _, row in rows.iterrows():
                mine = [t for t in texts if t.startswith(f"#{int(row['group'])} ")]
                assert len(mine) == 1
                printed = re.search(r"(\S+)\|(\S+) %$", mine[0])
                assert printed, mine
                assert same_level(printed[1], row["low_level"])
                assert same_level(printed[2], row["high_level"])


def test_forest_rows_decided_by_different_tests_name_theirs(analysed: Analysed) -> None:
    """Rows of a paired test and of Welch's (auto) or all of the rank-sum: where the tests
    differ, the axis names each test's effect and every row's label its test; else the axis
    names the one."""
    tests = analysed.tests
    rows = deciding_tests(tests.loc[tests["guideline"].isin(["GL4", "LIBS"])])
    label, notes = axis_label(rows), row_notes(rows)
    assert_names_statistics(label, rows)
    mixed = rows["test"].nunique() > 1
    assert mixed == (analysed.decisions.options.test == "auto")
    assert ("the row's test after its label" in label) == mixed
    for note, test in zip(notes, rows["test"], strict=True):
        assert note.startswith(test) == mixed


def test_focus_plots_print_their_tests_bounds_with_each_level(analysed: Analysed) -> None:
    focus = analysed.figures("focus")
    assert focus
    for name, texts in focus.items():
        guideline, group = re.match(r"focus/(.+)-group(\d+)-", name).groups()
        mine = analysed.tests.loc[(analysed.tests["guideline"] == guideline)
                                  & (analysed.tests["group"] == int(group))]  # fmt: skip
        test = deciding_tests(mine).iloc[0]
        title = "\n".join(texts)
        printed = re.search(r"lower (\S+) at (\S+) %, upper (\S+) at (\S+) %", title)
        assert printed, title
        assert float(printed[1]) == pytest.approx(test["ratio_low"], rel=5e-3)
        assert float(printed[3]) == pytest.approx(test["ratio_high"], rel=5e-3)
        assert same_level(printed[2], test["low_level"])
        assert same_level(printed[4], test["high_level"])
        assert_only_levels_of(texts, test.to_frame().T)
        assert_names_statistics(title, test.to_frame().T)
        assert f"campaign {CAMPAIGN}" in title and deployment_of(test, "msg_size") in title


def test_overview_plots_and_the_heatmap_state_their_tests_levels(analysed: Analysed) -> None:
    overviews = analysed.figures("overview")
    assert overviews
    for name, texts in overviews.items():
        guideline, group = re.match(r"overview/(.+)-group(\d+)-", name).groups()
        mine = analysed.tests.loc[(analysed.tests["guideline"] == guideline)
                                  & (analysed.tests["group"] == int(group))]  # fmt: skip
        assert_only_levels_of(texts, mine)
        assert_names_statistics("\n".join(texts), mine)
    (texts,) = analysed.figures("heatmap").values()
    assert_only_levels_of(texts, analysed.tests)
    assert_names_statistics("\n".join(texts), analysed.tests)
    options = analysed.decisions.options
    assert f"p_thres {options.p_thres:g} ({options.correction} correction)" in "\n".join(texts)


def test_the_slowdown_overview_states_the_levels_of_its_le_tests(analysed: Analysed) -> None:
    out = analysed.root / "slowdown.png"
    guidelines = analysed.root / "guidelines"
    with recorded_texts() as texts:
        status = main(["slowdown-plot", "--slowdown", str(guidelines / "slowdown.csv"),
                       "--tests", str(analysed.tests_csv), "--decided-with",
                       str(guidelines / "decided_with.json"), "--campaign", CAMPAIGN,
                       "--out", str(out)])  # fmt: skip
    assert status == 0
    (drawn,) = texts.values()
    # the legend's severity classes are slowdowns in percent, not levels
    drawn = [text for text in drawn if not text.startswith(SEVERITY_LABELS)]
    le = analysed.tests.loc[analysed.tests["relation"] == "le"]
    assert_only_levels_of(drawn, le)
    assert_names_statistics("\n".join(drawn), le)


def test_the_page_captions_say_what_the_figures_say(analysed: Analysed) -> None:
    """Each figure's caption names the campaign, its deployment, the options and the levels
    its footer states, from tests.csv read as the page reads it (cells as written)."""
    as_written = pd.read_csv(analysed.tests_csv, dtype=str, keep_default_na=False)
    options = analysed.decisions.options
    names = [name.removesuffix(PLOT_SUFFIX) for name in analysed.texts]
    assert {name.split("/")[0] for name in names} == {"forest", "overview", "focus", "heatmap"}
    for name in names:
        caption = figure_caption(name, CAMPAIGN, analysed.decisions, as_written)
        assert "\n" not in caption
        assert f"campaign {CAMPAIGN}" in caption
        assert f"confidence {options.confidence:g}" in caption
        assert f"p_thres {options.p_thres:g} ({options.correction} correction)" in caption
        drawn = analysed.texts[name + PLOT_SUFFIX]
        footer_levels = [t for text in drawn for t in re.findall(r"bounds: [^·\n]+", text)]
        if name.startswith("focus/"):
            # the focus plot's title states its one test's bounds; the caption states them too
            assert re.search(r"bounds: lower (\S+) %, upper (\S+) %, one-sided", caption)
        else:
            assert footer_levels and all(level in caption for level in footer_levels)
        if not name.startswith("heatmap"):
            assert re.search(r" in (openmpi|mpich|mpich\|openmpi) 1x2", caption), caption
    slowdown = figure_caption("slowdown", CAMPAIGN, analysed.decisions, as_written)
    le = analysed.tests.loc[analysed.tests["relation"] == "le"]
    assert_only_levels_of([slowdown], le)


def test_a_figure_of_campaign_and_tuning_guidelines_states_both_sets_of_levels(
    analysed: Analysed,
) -> None:
    """Where analysis.tuning decided some of a figure's tests, its footer gives those options
    and those tests' levels apart from the campaign's."""
    tests = analysed.tests
    decisions = Decisions(analysed.decisions.options, frozenset({"SAME"}))
    footer = figure_footer(CAMPAIGN, decisions, tests, "all").splitlines()
    assert len(footer) == 4
    assert footer[0].startswith(f"campaign {CAMPAIGN} · all · p_thres")
    assert footer[2].startswith("ALGO.…, TUNE.…, APPLIED.… (analysis.tuning): p_thres 0.001")
    own, tuning = tests.loc[tests["guideline"] != "SAME"], tests.loc[tests["guideline"] == "SAME"]
    assert_only_levels_of([footer[1]], own)
    assert_only_levels_of([footer[3]], tuning)


def test_levels_are_printed_to_what_they_leave_out() -> None:
    assert [level_text(level) for level in (0.999, 0.95, 0.9, 0.99, 0.9995, 0.99995)] == [
        "99.9", "95", "90", "99", "99.95", "99.995",
    ]  # fmt: skip
    assert level_text(1 - 0.001 / 3) == "99.9667"
    assert level_text(1 - 1e-9) != "100"


def test_variability_and_model_plots_name_campaign_deployment_and_options(
    measured: Path, tmp_path: Path
) -> None:
    # no group violated: the one experiment per library the selector picks is plotted
    holding = resolve(["SAME"], GUIDELINES, "c")
    check(measured / "medians.parquet", holding, ANALYSES["auto"], tmp_path / "guidelines")
    selector = {"op": "neighbor_allgather", "msg_size": 1024, "reorder": 0}
    options = AnalysisOptions.from_mapping(
        {"run_band": 0.2, "model_tolerance": 0.3, "variability": [selector]}, "test"
    )
    with recorded_texts() as texts:
        variability(measured / "medians.parquet", measured / "timings.parquet",
                    tmp_path / "guidelines" / "tests.csv", options, tmp_path / "variability",
                    CAMPAIGN)  # fmt: skip
    assert len(texts) == 2
    for path, drawn in texts.items():
        title = "\n".join(drawn)
        mpi, deployment = Path(path).name.split("-")[:2]
        assert f"campaign {CAMPAIGN} · {mpi} {deployment} · analysis.run_band 0.2" in title
        assert "outside ±20 %" in title
    selection = json.dumps([{"model": "hockney", "ops": ["neighbor_alltoall"]}])
    with recorded_texts() as texts:
        status = main(["fit", "--medians", str(measured / "medians.parquet"),
                       "--models", str(MODEL_CATALOGUE), "--models-json", selection,
                       "--analysis-json", json.dumps({"model_tolerance": 0.3}),
                       "--campaign", CAMPAIGN, "--out", str(tmp_path / "models")])  # fmt: skip
    assert status == 0
    assert len(texts) == 2  # hockney on each library
    for drawn in texts.values():
        title = "\n".join(drawn)
        assert re.search(rf"campaign {CAMPAIGN} · (openmpi|mpich), every deployment\n", title)
        assert "model_weighting absolute, model_tolerance 0.3" in title
        assert "95 % confidence intervals in models.csv" in title


@pytest.mark.parametrize("correction", ["none", "bh"])
def test_the_self_test_plot_states_its_options_and_violation_level(
    tmp_path: Path, correction: str
) -> None:
    options = AnalysisOptions.with_defaults(p_thres=0.01, confidence=0.9, correction=correction)
    table = pd.DataFrame({
        "slowdown_pct": [0.0, 3.0] * 2, "launches": "same",
        "test": np.repeat(["auto", "ranksum"], 2), "op": ALL_OPS, "looks": "10",
        "detected_group_rate": [0.0, 0.8, 0.0, 0.5],
    })  # fmt: skip
    with recorded_texts() as texts:
        plot_power(table, options, tmp_path / "selftest.png", CAMPAIGN)
    (drawn,) = texts.values()
    title = "\n".join(drawn)
    assert f"self-test of campaign {CAMPAIGN}: p_thres 0.01 ({correction} correction)" in title
    assert "confidence 0.9" in title and "ratio ≥ 1.03" in title
    if correction == "none":
        assert "lower one-sided bound at 99 % above 1" in title
    else:
        assert "at 1 - alpha (alpha <= p_thres: the bh correction's for the test)" in title
    assert "p ≤" not in title
