"""slowdown.csv in the shape of Hunold 2023 (MPINPC), Figure 2; severities of its §4; the
Figure 3-like overview plot, where an undecided collective is not drawn as a pass."""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.slowdown import (
    competitor,
    read_slowdown,
    severity,
    slowdown_table,
    write_slowdown,
)
from mpiguide.cli import main
from mpiguide.reports.slowdown_plot import (
    CLASS_COLOURS,
    NO_VIOLATION,
    overview_classes,
    plot_overview,
    undecided_cells,
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
        "fastest_mockup", "mockup_median", "severity",
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


def test_no_le_tests_give_the_header_only(tmp_path: Path) -> None:
    tests = pd.DataFrame([row_of("GL11", "allgather", 8, 1.0, 1.0, True)])
    tests["relation"] = "approx"
    write_slowdown(tests, KEYS, tmp_path / "slowdown.csv")
    assert read_slowdown(tmp_path / "slowdown.csv").empty
    plot_overview(read_slowdown(tmp_path / "slowdown.csv"), undecided_cells(tests),
                  tmp_path / "slowdown.png")  # fmt: skip
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
    classes = overview_classes(table, undecided_cells(tests))
    assert classes.tolist() == ["medium", "undecided", NO_VIOLATION, "high", NO_VIOLATION]
    out = tmp_path / "slowdown.png"
    assert main(slowdown_argv(tmp_path, tests, out)) == 0
    assert CLASS_COLOURS["undecided"] != CLASS_COLOURS[NO_VIOLATION]
    # one undecided cell, two passing ones: cells are far larger than the legend's patches
    cell = colour_pixels(out, CLASS_COLOURS["undecided"])
    assert cell > 2000
    assert colour_pixels(out, CLASS_COLOURS[NO_VIOLATION]) > 1.5 * cell
    assert main(slowdown_argv(tmp_path, figure_2_tests(), tmp_path / "holds.png")) == 0
    assert colour_pixels(tmp_path / "holds.png", CLASS_COLOURS["undecided"]) < cell / 10


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
