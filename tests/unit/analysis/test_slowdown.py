"""slowdown.csv in the shape of Hunold 2023 (MPINPC), Figure 2, with every row's verdict;
severities of its §4; the Figure 3-like overview plot, where an undecided collective is not drawn
as a pass and no violation in the pass colour, for colour-blind readers too."""

from __future__ import annotations

import io
import itertools
import re
from contextlib import redirect_stderr
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import rgb_to_hsv, to_rgb

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.slowdown import (
    SEVERITY_LABELS,
    competitor,
    read_slowdown,
    severity,
    slowdown_table,
    write_slowdown,
)
from mpiguide.cli import main
from mpiguide.core.errors import DataError
from mpiguide.reports.slowdown_plot import (
    CLASS_COLOURS,
    CLASS_LABELS,
    NO_TEST_LABEL,
    SEVERITY_TITLE,
    UNDECIDED_HATCH,
    overview_classes,
    overview_figure,
    plot_overview,
)

KEYS = ["mpi", "nodes", "ppn", "op", "msg_size", "dtype"]


def row_of(
    guideline: str, op: str, size: int, lhs: float, rhs: float, violated: bool, **extra: str
) -> dict:
    return {
        "guideline": guideline, "relation": "le", "mpi": "openmpi", "nodes": "32", "ppn": "32",
        "op": op, "msg_size": str(size), "dtype": "char", "group": 0, "lhs_exp_id": size,
        "rhs_exp_id": size + 1, "n_lhs": 5000, "n_rhs": 5000, "median_lhs": lhs,
        "median_rhs": rhs, "violated": violated, "verdict": "violated" if violated else "holds",
        **extra,
    }  # fmt: skip


# Hunold 2023, Figure 2: MPI_Allreduce of Open MPI on 32 x 32 processes, n = 5000; faster
# competitors at 8 B (hier) and 8000 B (lane), none elsewhere.
FIGURE_2 = [
    ("MPI_Allreduce", 8, 0.023603, 1.112355, "allreduce_as_hier", 0.021219),
    ("MPI_Allreduce", 80, 0.027895, None, "", None),
    ("MPI_Allreduce", 800, 0.032663, None, "", None),
    ("MPI_Allreduce", 8000, 0.135422, 2.547088, "allreduce_as_lane", 0.053167),
    ("MPI_Allreduce", 80000, 0.222206, None, "", None),
]


def figure_2_tests() -> pd.DataFrame:
    rows = []
    for _, size, default, _, fastest, mockup in FIGURE_2:
        # Every size has both competitors; only Figure 2's are significantly faster, and a
        # faster-looking but not significant competitor is not reported.
        hier = mockup if fastest == "allreduce_as_hier" else default * 1.2
        lane = mockup if fastest == "allreduce_as_lane" else default * 0.9
        rows.append(row_of("MPINPC-HIER", "allreduce|allreduce_as_hier", size, default,
                                  hier, fastest == "allreduce_as_hier"))  # fmt: skip
        rows.append(row_of("MPINPC-LANE", "allreduce|allreduce_as_lane", size, default,
                                  lane, fastest == "allreduce_as_lane"))  # fmt: skip
    return pd.DataFrame(rows)


def test_figure_2() -> None:
    table = slowdown_table(figure_2_tests(), KEYS)
    assert list(table.columns) == [
        "mpi", "collective", "count", "N", "ppn", "n", "default_median", "slowdown",
        "fastest_mockup", "mockup_median", "verdict", "severity",
    ]  # fmt: skip
    assert (table["N"] == "32").all() and (table["ppn"] == "32").all()
    assert (table["n"] == 5000).all()
    for (_, row), expected in zip(table.iterrows(), FIGURE_2, strict=True):
        collective, size, default, slowdown, fastest, mockup = expected
        assert (row["collective"], row["count"], row["default_median"]) == (
            collective, str(size), default
        )  # fmt: skip
        assert row["fastest_mockup"] == fastest
        if slowdown is None:
            assert pd.isna(row["slowdown"]) and pd.isna(row["mockup_median"])
            assert row["severity"] == ""
        else:
            # the paper divides unrounded medians and prints them to 6 decimals
            assert row["slowdown"] == pytest.approx(slowdown, rel=2e-5)
            assert row["mockup_median"] == mockup
    assert table["severity"].tolist() == ["medium", "", "", "high", ""]
    # the rows Figure 2 leaves blank: every test of each holds
    assert table["verdict"].tolist() == ["violated", "holds", "holds", "violated", "holds"]


def test_every_row_that_is_no_violation_says_whether_it_holds_or_is_undecided() -> None:
    """A row's verdict over its competitors' tests: violated if one is (an undecided one beside
    it does not matter), holds if all hold, else undecided; blank slowdown and severity on the
    last two, and no row without a verdict."""
    tests = figure_2_tests()
    verdict_of = {("MPINPC-HIER", "8"): "undecided",  # the lane test holds: undecided
                  ("MPINPC-LANE", "80"): "undecided",  # the hier test holds: undecided
                  ("MPINPC-HIER", "8000"): "undecided"}  # lane is faster: violated  # fmt: skip
    for (guideline, size), verdict in verdict_of.items():
        which = (tests["guideline"] == guideline) & (tests["msg_size"] == size)
        tests.loc[which, ["verdict", "violated"]] = [verdict, False]
    table = slowdown_table(tests, KEYS)
    assert table["verdict"].tolist() == ["undecided", "undecided", "holds", "violated", "holds"]
    assert table["severity"].tolist() == ["", "", "", "high", ""]
    quiet = table["verdict"] != "violated"
    assert table.loc[quiet, "slowdown"].isna().all()
    assert (table.loc[quiet, "fastest_mockup"] == "").all()


def test_severity_classes_of_section_4() -> None:
    """low < 10 % slower; medium, medium high, high up to 50 %, 100 %, 400 %; very high above."""
    slowdowns = pd.Series([1.0, 1.0999, 1.1, 1.5, 1.5001, 2.0, 2.0001, 5.0, 5.0001, float("nan")])
    assert severity(slowdowns).tolist() == [
        "low", "low", "medium", "medium", "medium high", "medium high", "high", "high",
        "very high", "",
    ]  # fmt: skip


def test_rhs_differing_in_other_parameters_is_named_with_them() -> None:
    tests = pd.DataFrame([
        row_of("GROPP-NODECART", "halo", 1024, 2.0, 1.0, True,
                      constructor="cart|nodecart", ndim="2", root=""),
        row_of("GROPP-NODECART", "halo", 1024, 2.0, 1.9, False,
                      constructor="cart|nodecart", ndim="3", root="") | {"lhs_exp_id": 7},
    ])  # fmt: skip
    bcast = row_of("MPINPC-GL1", "bcast|bcast_as_allgatherv", 8, 1.0, 1.0, False, root="0",
                   ndim="", constructor="")  # fmt: skip
    tests = pd.concat([tests, pd.DataFrame([bcast])])
    table = slowdown_table(tests, [*KEYS, "root", "ndim", "constructor"])
    # ndim differs between the rows, so it is a column; constructor is the same on every lhs,
    # and root is either 0 or not applicable: neither tells rows apart.
    assert list(table.columns[:5]) == ["mpi", "collective", "count", "ndim", "N"]
    table = table[table["collective"] == "halo"]
    assert table["collective"].tolist() == ["halo", "halo"]
    assert table["fastest_mockup"].tolist() == ["halo (constructor=nodecart)", ""]
    assert table["severity"].tolist() == ["medium high", ""]  # 2x: 100 % slower
    assert table["verdict"].tolist() == ["violated", "holds"]


def test_no_le_tests_give_the_header_only(tmp_path: Path) -> None:
    tests = pd.DataFrame([row_of("GL11", "allgather", 8, 1.0, 1.0, True)])
    tests["relation"] = "approx"
    write_slowdown(tests, KEYS, tmp_path / "slowdown.csv")
    assert read_slowdown(tmp_path / "slowdown.csv").empty
    plot_overview(read_slowdown(tmp_path / "slowdown.csv"), tmp_path / "slowdown.png")
    assert (tmp_path / "slowdown.png").read_bytes().startswith(b"\x89PNG")


def slowdown_argv(tmp_path: Path, tests: pd.DataFrame, out: Path) -> list[str]:
    """`mpiguide slowdown-plot` of `tests`, with what check writes beside slowdown.csv."""
    tests.to_csv(tmp_path / "tests.csv", index=False)
    AnalysisOptions.with_defaults().write_record(tmp_path / "decided_with.json", ["GL"], {})
    return ["slowdown-plot", "--slowdown", str(tmp_path / "slowdown.csv"), "--tests",
            str(tmp_path / "tests.csv"), "--decided-with", str(tmp_path / "decided_with.json"),
            "--campaign", "mpinpc", "--out", str(out)]  # fmt: skip


def test_overview_plot(tmp_path: Path) -> None:
    write_slowdown(figure_2_tests(), KEYS, tmp_path / "slowdown.csv")
    out = tmp_path / "slowdown.png"
    assert main(slowdown_argv(tmp_path, figure_2_tests(), out)) == 0
    assert out.read_bytes().startswith(b"\x89PNG")


def colour_pixels(png: Path, colour: str) -> int:
    image = mpimg.imread(png)[..., :3]
    return int((np.abs(image - np.array(to_rgb(colour))) <= 0.01).all(axis=-1).sum())


def test_an_undecided_collective_is_not_drawn_as_a_pass(tmp_path: Path) -> None:
    """At 80 B a competitor's test is undecided: its cell has the undecided class and colour,
    read back from the PNG, and 800 B, where every test holds, the pass colour."""
    tests = figure_2_tests()
    undecided = (tests["msg_size"] == "80") & (tests["guideline"] == "MPINPC-HIER")
    tests.loc[undecided, "verdict"] = "undecided"
    write_slowdown(tests, KEYS, tmp_path / "slowdown.csv")
    table = read_slowdown(tmp_path / "slowdown.csv")
    classes = overview_classes(table)
    assert classes.tolist() == ["medium", "undecided", "holds", "high", "holds"]
    out = tmp_path / "slowdown.png"
    assert main(slowdown_argv(tmp_path, tests, out)) == 0
    assert CLASS_COLOURS["undecided"] != CLASS_COLOURS["holds"]
    # one undecided cell (hatched: its colour between the lines), two passing ones: cells are
    # far larger than the legend's patches
    cell = colour_pixels(out, CLASS_COLOURS["undecided"])
    assert cell > 2000
    assert colour_pixels(out, CLASS_COLOURS["holds"]) > 2.5 * cell
    write_slowdown(figure_2_tests(), KEYS, tmp_path / "slowdown.csv")
    assert main(slowdown_argv(tmp_path, figure_2_tests(), tmp_path / "holds.png")) == 0
    assert colour_pixels(tmp_path / "holds.png", CLASS_COLOURS["undecided"]) < cell / 10


def every_class_table(holds: bool = True) -> pd.DataFrame:
    """slowdown.csv's rows of one panel: a collective per severity at 8 B and 80 B, and (with
    `holds`) one that holds and one undecided."""
    quiet = [("holds", ""), ("undecided", "")] if holds else []
    rows = [
        {"mpi": "openmpi", "collective": f"MPI_{index}", "count": count, "N": 1, "ppn": 2,
         "n": 10, "default_median": 1.0, "slowdown": "", "fastest_mockup": "",
         "mockup_median": "", "verdict": verdict, "severity": label}
        for index, (verdict, label) in enumerate(
            [*quiet, *(("violated", label) for label in SEVERITY_LABELS)]
        )
        for count in (8, 80)
    ]  # fmt: skip
    return pd.DataFrame(rows)


GREEN_HUES = (75, 170)  # degrees: yellow-green to the bluish greens


def hue_degrees(rgb: np.ndarray) -> np.ndarray:
    return rgb_to_hsv(np.clip(rgb, 0, 1))[..., 0] * 360


def test_no_violation_is_drawn_in_the_pass_colour_family() -> None:
    """The pass is green; every severity is warm (red to yellow, away from green), darker the
    more severe; undecided is grey, no colour of a verdict. Read back from the drawn figure: a
    panel of violations only has no green pixel, and a row that holds brings them."""
    assert GREEN_HUES[0] <= hue_degrees(np.array(to_rgb(CLASS_COLOURS["holds"]))) <= GREEN_HUES[1]
    severities = np.array([to_rgb(CLASS_COLOURS[label]) for label in SEVERITY_LABELS])
    hues = hue_degrees(severities)
    assert ((hues <= 55) | (hues >= 330)).all(), hues
    lightness = [lab_of(colour)[0] for colour in severities]
    assert lightness == sorted(lightness, reverse=True)
    grey = rgb_to_hsv(np.array(to_rgb(CLASS_COLOURS["undecided"])))
    assert grey[1] < 0.05  # no saturation: not a pass, not a violation
    assert green_pixels(every_class_table(holds=False)) == 0
    assert green_pixels(every_class_table()) > 2000


def green_pixels(table: pd.DataFrame) -> int:
    """Saturated green pixels of the overview's panel of `table`, drawn at its own size (the
    legend, which shows every class, left out)."""
    figure = overview_figure(table)
    try:
        figure.canvas.draw()
        image = np.asarray(figure.canvas.buffer_rgba())[..., :3] / 255  # type: ignore[attr-defined]
        (ax,) = figure.axes
        box = ax.get_window_extent()
        height = image.shape[0]
        panel = image[int(height - box.y1) : int(height - box.y0), int(box.x0) : int(box.x1)]
    finally:
        plt.close(figure)
    hues = hue_degrees(panel)
    green = (rgb_to_hsv(panel)[..., 1] > 0.3) & (hues >= GREEN_HUES[0]) & (hues <= GREEN_HUES[1])
    return int(green.sum())


def test_the_legend_says_what_each_class_is() -> None:
    """Holds, undecided (hatched, as its cells) and no test first; the severities with §4's
    bounds under a title that says they are violations."""
    table = every_class_table()
    low = table.iloc[0].to_dict() | {"count": 800, "verdict": "violated", "severity": "low"}
    table = pd.concat([table, pd.DataFrame([low])], ignore_index=True)  # MPI_0 has no 80 B
    figure = overview_figure(table)
    try:
        quiet, severities = figure.legends
        assert [t.get_text() for t in quiet.get_texts()] == [
            CLASS_LABELS["holds"], CLASS_LABELS["undecided"], NO_TEST_LABEL,
        ]  # fmt: skip
        assert quiet.legend_handles[1].get_hatch() == UNDECIDED_HATCH
        assert severities.get_title().get_text() == SEVERITY_TITLE
        assert [t.get_text() for t in severities.get_texts()] == [
            "low: < 10 %", "medium: ≤ 50 %", "medium high: ≤ 100 %", "high: ≤ 400 %",
            "very high: > 400 %",
        ]  # fmt: skip
        # the undecided cells are hatched as their legend entry is
        (ax,) = figure.axes
        hatched = [p for p in ax.patches if p.get_hatch() == UNDECIDED_HATCH]
        assert len(hatched) == 2
    finally:
        plt.close(figure)


# Machado, Oliveira & Fernandes (2009), severity 1: linear-RGB matrices of full protanopia,
# deuteranopia and tritanopia.
COLOUR_BLINDNESS = {
    "typical": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}  # fmt: skip


def lab_of(rgb: object, vision: np.ndarray = COLOUR_BLINDNESS["typical"]) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour as `vision` sees it."""
    srgb = np.asarray(to_rgb(rgb))  # type: ignore[arg-type]
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    linear = np.clip(vision @ linear, 0, 1)
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                       [0.0193, 0.1192, 0.9505]])  # fmt: skip
    xyz = to_xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_every_class_stays_apart_for_colour_blind_readers() -> None:
    """Under simulated full protanopia, deuteranopia and tritanopia every two classes differ by
    at least 15 ΔE (CIE76; about 2.3 is a just noticeable difference): a pass never looks like
    a violation, nor two severities alike."""
    for vision, matrix in COLOUR_BLINDNESS.items():
        for a, b in itertools.combinations(CLASS_COLOURS, 2):
            distance = np.linalg.norm(
                lab_of(CLASS_COLOURS[a], matrix) - lab_of(CLASS_COLOURS[b], matrix)
            )
            assert distance >= 15, (vision, a, b, distance)


def test_overview_plot_refuses_a_table_without_figure_2_columns(tmp_path: Path) -> None:
    bad = tmp_path / "slowdown.csv"
    bad.write_text("mpi,op\nopenmpi,bcast\n")
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(slowdown_argv(tmp_path, figure_2_tests(), tmp_path / "x.png")) == 2
    assert f"{bad}: column 'collective' missing" in err.getvalue()


def test_overview_plot_refuses_an_unknown_severity(tmp_path: Path) -> None:
    table = tmp_path / "slowdown.csv"
    write_slowdown(figure_2_tests(), KEYS, table)
    table.write_text(table.read_text().replace(",medium\n", ",mild\n"))
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(slowdown_argv(tmp_path, figure_2_tests(), tmp_path / "x.png")) == 2
    assert f"{table}: severity 'mild': one of low, medium" in err.getvalue()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ((",holds,\n", ",pass,\n"), "verdict 'pass': one of violated, holds, undecided"),
        ((",violated,medium\n", ",holds,medium\n"), ":2: a severity belongs to a violated row"),
        ((",holds,\n", ",violated,\n"), ":3: a severity belongs to a violated row"),
    ],
)
def test_read_slowdown_refuses_a_verdict_its_severity_contradicts(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    table = tmp_path / "slowdown.csv"
    write_slowdown(figure_2_tests(), KEYS, table)
    text = table.read_text()
    assert edit[0] in text
    table.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(DataError, match=re.escape(message)):
        read_slowdown(table)


def test_competitor_names_the_rhs_op_and_its_differing_values_in_key_order() -> None:
    tests = pd.DataFrame(
        {
            "op": ["bcast|bcast_as_hier", "bcast|bcast_as_lane", "halo", "halo"],
            "ordering": ["FMAJ|RAND", "FMAJ", "|LINEAR", "RAND"],
            "constructor": ["cart|nodecart", "cart", "cart", "cart"],
            "msg_size": ["8", "8", "64", "64"],
        },
        index=[10, 11, 12, 13],
    )
    keys = ["op", "ordering", "constructor", "msg_size"]
    assert competitor(tests, keys).to_dict() == {
        10: "bcast_as_hier (ordering=RAND constructor=nodecart)",
        11: "bcast_as_lane",
        12: "halo (ordering=LINEAR)",
        13: "halo",
    }
