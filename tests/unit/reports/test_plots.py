"""plot(): a forest plot of every group per guideline and deployment, overview and focus plots
exactly for the groups `plots:` selects (capped), always a heatmap; what the plots print (sizes,
side names, verdict marks) and that an undecided mark is not drawn in the colour of a pass."""

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from matplotlib.cbook import boxplot_stats
from matplotlib.colors import to_rgb

from mpiguide.analysis.analysis_types import AnalysisOptions, Decisions
from mpiguide.analysis.catalogue import resolve
from mpiguide.analysis.guidelines import check
from mpiguide.analysis.tables import parameter_columns
from mpiguide.core.errors import ConfigError, DataError
from mpiguide.core.paths import forest_plot_path, group_plot_name, labels_of_plot, safe_name
from mpiguide.reports import forest
from mpiguide.reports.figure_drawing import FigureJob, figure_drawer
from mpiguide.reports.figure_style import (
    VERDICT_COLOURS,
    deciding_tests,
    side_labels,
    size_label,
)
from mpiguide.reports.forest import DPI, FIGURE_INCHES, forest_pages, forest_plot
from mpiguide.reports.plots import (
    PlotOptions,
    _repetitions,
    box_statistics,
    cell_annotations,
    heatmap_cells,
    plot,
    ratio_ticks,
    read_tests,
)
from mpiguide.store.aggregate import aggregate
from synthetic import Deployment, neighbor_grid, write_campaign

GUIDELINES = {
    "GL4": {"source": "s", "text": "t", "relation": "le",
            "lhs": {"op": "neighbor_allgather"}, "rhs": {"op": "neighbor_alltoall"}},
    "GL12": {"source": "s", "text": "t", "relation": "le",
             "lhs": {"reorder": 1}, "rhs": {"reorder": 0}},
}  # fmt: skip
OPTIONS = AnalysisOptions.with_defaults()
DECISIONS = Decisions(OPTIONS)


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """A campaign where allgather is 1.6x slower than alltoall at 1024 bytes only."""
    root = tmp_path_factory.mktemp("campaign")
    grid = neighbor_grid()
    typical = 1e-6 * grid["msg_size"].astype(float).to_numpy()
    planted = (grid["op"] == "neighbor_allgather") & (grid["msg_size"] == 1024)
    typical[planted.to_numpy()] *= 1.6
    raw = write_campaign(root, grid, typical, [Deployment("openmpi", 1, 2)], runs=8,
                         sigma=0.02, seed=9)  # fmt: skip
    aggregate(root / "grid.csv", raw, root / "raw", root / "inputs", root / "timings.parquet",
              root / "medians.parquet")  # fmt: skip
    guidelines = resolve(list(GUIDELINES), GUIDELINES, "c")
    check(root / "medians.parquet", guidelines, OPTIONS, root / "guidelines")
    plot(root / "timings.parquet", root / "guidelines" / "tests.csv", DECISIONS, root / "plots")
    return root


def plotted_groups(tests: pd.DataFrame, verdicts: tuple[str, ...]) -> list[str]:
    shown = tests.loc[tests["group_verdict"].isin(verdicts)]
    return sorted(
        group_plot_name(g, int(n), verdict)
        for g, n, verdict in shown[["guideline", "group", "group_verdict"]]
        .drop_duplicates()
        .itertuples(index=False)
    )


def test_violated_groups_get_overview_and_focus_by_default(analysed):
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv")
    violated = tests.loc[tests["violated"]]
    assert set(violated["guideline"]) == {"GL4"}
    assert set(violated["msg_size"]) == {1024}
    expected = plotted_groups(tests, ("violated",))
    assert len(expected) == 2  # reorder 0 and 1
    for sub in ("overview", "focus"):
        assert sorted(p.name for p in (analysed / "plots" / sub).iterdir()) == expected
        for png in (analysed / "plots" / sub).iterdir():
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (analysed / "plots" / "heatmap.png").stat().st_size > 1000


def with_undecided_group(analysed, tmp_path) -> tuple[pd.DataFrame, int]:
    """tests.csv with GL12's first group undecided at 64 B (its other tests hold)."""
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv")
    first = (tests["guideline"] == "GL12") & (tests["group"] == tests["group"].min())
    tests.loc[first, "group_verdict"] = "undecided"
    tests.loc[first & (tests["msg_size"] == 64), "verdict"] = "undecided"
    tests.to_csv(tmp_path / "tests.csv", index=False)
    return tests, int(tests.loc[first, "group"].iloc[0])


def test_undecided_groups_are_plotted_on_request(analysed, tmp_path):
    tests, group = with_undecided_group(analysed, tmp_path)
    plot(analysed / "timings.parquet", tmp_path / "tests.csv", DECISIONS, tmp_path / "plots",
         PlotOptions.from_mapping({"focus": "undecided"}, "test"))  # fmt: skip
    expected = plotted_groups(tests, ("violated", "undecided"))
    assert group_plot_name("GL12", group, "undecided") in expected
    for sub in ("overview", "focus"):
        assert sorted(p.name for p in (tmp_path / "plots" / sub).iterdir()) == expected


def test_focus_plots_are_capped_violated_first(analysed, tmp_path):
    tests, _ = with_undecided_group(analysed, tmp_path)
    options = PlotOptions.from_mapping({"focus": "undecided", "max": 2}, "test")
    plot(analysed / "timings.parquet", tmp_path / "tests.csv", DECISIONS, tmp_path / "a", options)
    for sub in ("overview", "focus"):
        assert sorted(p.name for p in (tmp_path / "a" / sub).iterdir()) == plotted_groups(
            tests, ("violated",)
        )  # fmt: skip
    none = PlotOptions.from_mapping({"focus": "none"}, "test")
    plot(analysed / "timings.parquet", tmp_path / "tests.csv", DECISIONS, tmp_path / "b", none)
    assert not list((tmp_path / "b" / "focus").iterdir())
    assert (tmp_path / "b" / "heatmap.png").is_file()


@pytest.mark.parametrize(
    ("plots", "message"),
    [({"focus": "all"}, r"plots\.focus is 'all'"), ({"max": -1}, r"plots\.max is -1"),
     ({"mx": 3}, r"plots\.mx is not an option")],
)  # fmt: skip
def test_plot_options_are_checked(plots, message):
    with pytest.raises(ConfigError, match=message):
        PlotOptions.from_mapping(plots, "c")


def test_one_forest_plot_per_guideline_and_deployment_with_every_group(analysed):
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    forests = sorted((analysed / "plots" / "forest").rglob("*.png"))
    expected = sorted(
        analysed / "plots" / forest_plot_path(g, mpi, f"{nodes}x{ppn}")
        for g, mpi, nodes, ppn in tests[["guideline", "mpi", "nodes", "ppn"]]
        .drop_duplicates()
        .itertuples(index=False)
    )
    assert forests == expected and len(forests) == 2  # GL4, GL12 in openmpi 1x2
    numeric = pd.read_csv(analysed / "guidelines" / "tests.csv")
    rows = deciding_tests(numeric.assign(_effect=numeric["violation_ratio"]))
    # every group one row, its deciding test of the group's verdict
    assert len(rows) == numeric[["guideline", "group"]].drop_duplicates().shape[0]
    assert (rows["verdict"] == rows["group_verdict"]).all()
    assert (rows.loc[rows["group_verdict"] == "violated", "msg_size"] == 1024).all()
    assert labels_of_plot(forest_plot_path("GL4", "openmpi", "1x2").removesuffix(".png")) == {
        "guideline": "GL4", "plot": "forest", "deployment": "openmpi 1x2", "group": "all",
        "verdict": "all",
    }  # fmt: skip


def test_a_forest_of_too_many_groups_is_drawn_in_pages(analysed, tmp_path, monkeypatch):
    assert [(p.start, p.stop) for p in forest_pages(500)] == [(0, 500)]
    assert [(p.start, p.stop) for p in forest_pages(501)] == [(0, 250), (250, 501)]
    assert len(forest_pages(1000)) == 2 and len(forest_pages(1001)) == 3
    monkeypatch.setattr(forest, "FOREST_PAGE_ROWS", 1)
    plot(analysed / "timings.parquet", analysed / "guidelines" / "tests.csv", DECISIONS,
         tmp_path / "plots")  # fmt: skip
    pages = sorted((tmp_path / "plots" / "forest").rglob("*.png"))
    expected = [
        tmp_path / "plots" / forest_plot_path(guideline, "openmpi", "1x2", page)
        for guideline in ("GL12", "GL4")
        for page in (1, 2)
    ]
    assert pages == expected  # every group on a page, no page left over
    assert (
        expected[1].relative_to(tmp_path / "plots").as_posix()
        == "forest/openmpi/1x2/GL12/page2.png"
    )
    assert labels_of_plot("forest/openmpi/1x2/GL12/page2") == {
        "guideline": "GL12", "plot": "forest page 2", "deployment": "openmpi 1x2", "group": "all",
        "verdict": "all",
    }  # fmt: skip


def test_two_processes_draw_the_same_figures(analysed, tmp_path):
    plot(analysed / "timings.parquet", analysed / "guidelines" / "tests.csv", DECISIONS,
         tmp_path / "plots", processes=2)  # fmt: skip
    drawn = sorted(p.relative_to(tmp_path / "plots") for p in (tmp_path / "plots").rglob("*.png"))
    alone = sorted(p.relative_to(analysed / "plots") for p in (analysed / "plots").rglob("*.png"))
    assert drawn == alone and len(drawn) == 7  # 2 forests, 2 overview, 2 focus, the heatmap


def failing_figure(path: Path) -> None:
    raise DataError(f"{path}: cannot draw")


def test_a_figure_failing_in_a_process_fails_the_plot_job(tmp_path):
    with pytest.raises(DataError, match=r"a\.png: cannot draw"), figure_drawer(2) as draw:
        for name in ("a.png", "b.png"):
            draw(FigureJob(failing_figure, (tmp_path / name,)))


def test_a_forest_plot_widens_for_long_row_labels(analysed, tmp_path):
    """No row label, heading or legend is cut off: the figure's width is measured from them."""
    numeric = pd.read_csv(analysed / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    tests = read_tests(analysed / "guidelines" / "tests.csv")
    rows = deciding_tests(tests.assign(_effect=tests["violation_ratio"]))
    rows = rows.loc[rows["guideline"] == "GL4"]
    keys = parameter_columns(numeric)
    plain, wide = tmp_path / "plain.png", tmp_path / "wide.png"
    forest_plot(rows, keys, OPTIONS, "GL4", "footer", plain)
    forest_plot(rows.assign(dtype=[f"type{i}_" + "x" * 200 for i in range(len(rows))]), keys,
                OPTIONS, "GL4", "footer", wide)  # fmt: skip
    assert mpimg.imread(plain).shape[1] == FIGURE_INCHES * DPI
    assert mpimg.imread(wide).shape[1] > FIGURE_INCHES * DPI + 500  # 200 more characters
    for png in (plain, wide):
        # text and marks from the left margin to the legend, none cut at an edge
        drawn = np.flatnonzero((mpimg.imread(png)[..., :3] < 0.5).any(axis=(0, 2)))
        assert 5 <= drawn.min() <= 15 and drawn.max() < mpimg.imread(png).shape[1] - 5


def test_box_statistics_are_matplotlibs():
    rng = np.random.default_rng(1)
    times = np.concatenate([rng.lognormal(size=49), [40.0], rng.lognormal(size=50)])
    boxes = pd.DataFrame({"run": np.repeat([0, 1], 50), "side": "lhs", "time": times})
    stats = box_statistics(boxes)
    for run, part in boxes.groupby("run"):
        expected = boxplot_stats(part["time"].to_numpy())[0]
        ours = stats.loc[(run, "lhs"), ["q1", "median", "q3", "whisker_low", "whisker_high"]]
        theirs = [expected[key] for key in ("q1", "med", "q3", "whislo", "whishi")]
        assert np.allclose(ours.to_numpy(dtype=float), theirs)


def pixels_near(png, colour: str, tolerance: float = 0.04) -> np.ndarray:
    """(row, column) of every pixel of `png` within `tolerance` of `colour` in each channel."""
    image = mpimg.imread(png)[..., :3]
    return np.argwhere((np.abs(image - np.array(to_rgb(colour))) <= tolerance).all(axis=-1))


def test_an_undecided_mark_is_not_drawn_as_a_pass(analysed, tmp_path):
    """In GL12's forest plot the undecided group's row is purple and the holding one's green,
    read back from the PNG: the undecided mark lies above (its group comes first)."""
    tests, _ = with_undecided_group(analysed, tmp_path)
    plot(analysed / "timings.parquet", tmp_path / "tests.csv", DECISIONS, tmp_path / "plots")
    png = tmp_path / "plots" / forest_plot_path("GL12", "openmpi", "1x2")
    undecided = pixels_near(png, VERDICT_COLOURS["undecided"])
    holds = pixels_near(png, VERDICT_COLOURS["holds"])
    assert VERDICT_COLOURS["undecided"] != VERDICT_COLOURS["holds"]
    assert len(undecided) > 30 and len(holds) > 30
    width = mpimg.imread(png).shape[1]
    # the marks and intervals, left of the legend at the right edge
    in_axes = [p[p[:, 1] < 0.7 * width] for p in (undecided, holds)]
    assert in_axes[0][:, 0].mean() < in_axes[1][:, 0].mean()
    # the heatmap frames the undecided cell in the undecided colour; none when all hold
    framed = len(pixels_near(tmp_path / "plots" / "heatmap.png", VERDICT_COLOURS["undecided"]))
    tests["verdict"] = tests["group_verdict"] = "holds"
    tests["violated"] = False
    tests.to_csv(tmp_path / "tests.csv", index=False)
    plot(analysed / "timings.parquet", tmp_path / "tests.csv", DECISIONS, tmp_path / "holds")
    legend_only = len(pixels_near(tmp_path / "holds" / "heatmap.png", VERDICT_COLOURS["undecided"]))
    assert framed > legend_only + 100


def test_no_violated_or_undecided_group_still_writes_the_heatmap(analysed, tmp_path):
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv")
    tests["violated"] = False
    tests["verdict"] = tests["group_verdict"] = "holds"
    tests.to_csv(tmp_path / "tests.csv", index=False)
    plot(analysed / "timings.parquet", tmp_path / "tests.csv", DECISIONS, tmp_path / "plots")
    assert not list((tmp_path / "plots" / "overview").iterdir())
    assert (tmp_path / "plots" / "heatmap.png").exists()


def test_heatmap_cells_carry_their_verdict(analysed):
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    tests["violation_ratio"] = pd.to_numeric(tests["violation_ratio"])
    gl12 = tests["guideline"] == "GL12"
    tests.loc[gl12 & (tests["msg_size"] == "64"), "verdict"] = "undecided"
    tests.loc[gl12 & (tests["msg_size"] != "64"), "verdict"] = "holds"
    table, cells, marks = heatmap_cells(tests, "msg_size")
    assert list(table.columns) == [64, 1024, 16384]  # numeric order, not text order
    text = cell_annotations(table, marks)
    gl4 = "GL4 neighbor_allgather vs neighbor_alltoall"
    assert cells.loc[gl4, 1024] == "violated"
    assert text.loc[gl4, 1024].endswith("\n✗ 2/2")  # reorder 0 and 1, both violated
    gl12 = "GL12 neighbor_allgather"
    assert cells.loc[gl12, 64] == "undecided" and text.loc[gl12, 64].endswith("\n? 1/1")
    assert cells.loc[gl12, 1024] == "holds" and "\n" not in text.loc[gl12, 1024]


def test_sizes_are_printed_with_their_unit():
    assert [size_label(s) for s in (0, 8, 1023, 1024, 1536, 2**20, 3 * 2**30)] == [
        "0 B", "8 B", "1023 B", "1 KiB", "1.5 KiB", "1 MiB", "3 GiB",
    ]  # fmt: skip


def test_sides_are_named_by_what_differs():
    keys = ["mpi", "op", "msg_size", "ordering", "reorder"]
    base = {"mpi": "openmpi", "op": "neighbor_allgather|neighbor_alltoall", "msg_size": "8",
            "ordering": "|LINEAR", "reorder": "0"}  # fmt: skip
    assert side_labels(pd.Series(base), keys) == ("neighbor_allgather", "neighbor_alltoall")
    reorder = pd.Series({**base, "op": "allgather", "reorder": "1|0"})
    assert side_labels(reorder, keys) == ("reorder=1", "reorder=0")
    monotone = pd.Series({**base, "op": "allgather", "msg_size": "256|1024", "ordering": ""})
    assert side_labels(monotone, keys) == ("msg_size=256 B", "msg_size=1 KiB")
    alike = pd.Series({**base, "op": "allgather", "ordering": ""})
    assert side_labels(alike, keys) == ("lhs", "rhs")


def test_plot_names_and_report_labels_round_trip():
    name = group_plot_name("GL 4", 3, "undecided")
    assert name == "GL_4-group0003-undecided.png"
    assert labels_of_plot("overview/" + name.removesuffix(".png")) == {
        "guideline": "GL_4", "plot": "overview", "deployment": "", "group": "0003",
        "verdict": "undecided",
    }  # fmt: skip
    assert labels_of_plot("heatmap")["verdict"] == "all"


def test_safe_names():
    assert safe_name("GL 4/x;rm", "group0001") == "GL_4_x_rm-group0001"


def test_missing_inputs_are_named(analysed, tmp_path):
    with pytest.raises(DataError, match=r"tests.csv: no such file \(written by `mpiguide check`\)"):
        plot(analysed / "timings.parquet", tmp_path / "tests.csv", DECISIONS, tmp_path / "plots")
    with pytest.raises(DataError, match=r"timings.parquet: no such file"):
        plot(tmp_path / "timings.parquet", analysed / "guidelines" / "tests.csv", DECISIONS,
             tmp_path)  # fmt: skip
    with pytest.raises(DataError, match=r"medians.parquet: no such file"):
        check(tmp_path / "medians.parquet", [], OPTIONS, tmp_path)


def test_a_damaged_tests_csv_is_named_by_line(analysed, tmp_path):
    lines = (analysed / "guidelines" / "tests.csv").read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[3].split(",")
    cells[header.index("p_value")] = "0.0o1"
    lines[3] = ",".join(cells)
    damaged = tmp_path / "tests.csv"
    damaged.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"tests\.csv:4: p_value '0\.0o1' is not a number"):
        plot(analysed / "timings.parquet", damaged, DECISIONS, tmp_path / "plots")


def test_tests_naming_experiments_absent_from_the_timings_are_refused(analysed, tmp_path):
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv", dtype=str, keep_default_na=False)
    tests.loc[2, "rhs_exp_id"] = "999"
    foreign = tmp_path / "tests.csv"
    tests.to_csv(foreign, index=False)
    with pytest.raises(DataError, match=r"tests\.csv: names experiments that .*timings\.parquet "
                       r"lacks \(exp_id 999\)"):  # fmt: skip
        plot(analysed / "timings.parquet", foreign, DECISIONS, tmp_path / "plots")
    assert not (tmp_path / "plots").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.iloc[0:0], r"holds no run medians"),
        (lambda m: m.assign(median_s=m["median_s"].where(m.index != 3)), r"median_s nan at mpi="),
        (lambda m: m.assign(median_s=m["median_s"].where(m.index != 5, -1.0)), r"median_s -1\.0"),
    ],
    ids=["empty", "nan", "negative"],
)
def test_check_refuses_medians_that_are_not_durations(analysed, tmp_path, change, message):
    medians = change(pd.read_parquet(analysed / "medians.parquet"))
    damaged = tmp_path / "medians.parquet"
    medians.to_parquet(damaged)
    guidelines = resolve(list(GUIDELINES), GUIDELINES, "c")
    with pytest.raises(DataError, match=rf"medians\.parquet: {message}"):
        check(damaged, guidelines, OPTIONS, tmp_path / "guidelines")
    assert not (tmp_path / "guidelines").exists()


def test_a_guideline_without_any_test_is_reported(analysed, tmp_path, capsys):
    never_pairs = {
        "NEVER": {"source": "s", "text": "t", "relation": "le",
                  "lhs": {"op": "neighbor_allgather"},
                  "rhs": {"op": "neighbor_alltoall", "msg_size": 999}},
    }  # fmt: skip
    guidelines = resolve(["GL4", "NEVER"], {**GUIDELINES, **never_pairs}, "c")
    check(analysed / "medians.parquet", guidelines, OPTIONS, tmp_path)
    assert "mpiguide: warning: NEVER: no test" in capsys.readouterr().err
    summary = (tmp_path / "summary.md").read_text()
    assert summary.rstrip().endswith(": NEVER")
    assert "| GL4 |" in summary


def test_focus_plots_show_valid_repetitions_only(analysed, tmp_path):
    timings = pd.read_parquet(analysed / "timings.parquet")
    timings["status"] = timings["status"].cat.add_categories(["late"])
    timings.loc[timings["rep"] == 0, "status"] = "late"
    timings.to_parquet(tmp_path / "timings.parquet")
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv")
    violated = tests.loc[tests["violated"]]
    every = _repetitions(analysed / "timings.parquet", violated)
    shown = _repetitions(tmp_path / "timings.parquet", violated)
    assert len(every) and len(shown) == len(every) * 9 // 10  # 10 repetitions, rep 0 late


def test_colour_bar_ticks_are_ratios_that_do_not_crowd():
    assert ratio_ticks(np.log(4)) == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert ratio_ticks(np.log(1.1)) == [0.95, 1.0, 1.05, 1.1]


def test_a_forest_of_an_algo_guideline_draws_and_states_analysis_tuning(analysed, tmp_path):
    """An ALGO test was decided at `analysis.tuning`'s levels: its forest's v_thres line and
    footer are those, the campaign's other forests keep the campaign's."""
    tests = pd.read_csv(analysed / "guidelines" / "tests.csv")
    tests["guideline"] = tests["guideline"].replace({"GL12": "ALGO.openmpi.allreduce.ring"})
    tests = tests.assign(_effect=tests["violation_ratio"])
    options = AnalysisOptions.with_defaults(test="ranksum", v_thres=1.2)
    decisions = Decisions(options, frozenset({"ALGO.openmpi.allreduce.ring"}))
    jobs = forest.forest_figures(tests, parameter_columns(tests), decisions, "c", tmp_path)
    drawn = {str(job.args[3]).split(" ", 1)[0]: job.args for job in jobs}
    algo, campaign = drawn["ALGO.openmpi.allreduce.ring"], drawn["GL4"]
    assert (algo[2].v_thres, algo[2].test) == (1.03, "auto")
    assert "v_thres 1.03" in algo[4] and "test auto" in algo[4]
    assert (campaign[2].v_thres, campaign[2].test) == (1.2, "ranksum")
    assert "v_thres 1.2," in campaign[4]
