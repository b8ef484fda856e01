"""`mpiguide analyse`: what `check`, `figures` and `page` write, in one process, the verdicts
decided in a forked one; a failed check stops it with check's own error and status."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mpiguide.cli import main
from mpiguide.reports.junit import FAILED_STATUS
from mpiguide.store.aggregate import aggregate
from synthetic import Deployment, neighbor_grid, write_campaign

GUIDELINES = json.dumps(["GL4", "GL7"])
ANALYSIS = json.dumps({"v_thres": 1.05, "variability": [{"op": "neighbor_alltoall"}]})
PLOTS = json.dumps({"focus": "undecided", "max": 3})
# When a file was written: the page's "made at" and the report's age, junit.xml's timestamp.
WRITTEN_AT = re.compile(rb"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?( UTC)?")


@pytest.fixture(scope="module")
def medians(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A campaign's timings.parquet and medians.parquet, in the folder of the latter."""
    folder = tmp_path_factory.mktemp("campaign")
    grid = neighbor_grid()
    typical = 1e-6 * grid["msg_size"].astype(float).to_numpy()
    typical[((grid["op"] == "neighbor_allgather") & (grid["msg_size"] == 1024)).to_numpy()] *= 1.6
    raw = write_campaign(folder, grid, typical, [Deployment("openmpi", 1, 2)], runs=6,
                         sigma=0.02, seed=3)  # fmt: skip
    aggregate(folder / "grid.csv", raw, folder / "raw", folder / "inputs",
              folder / "timings.parquet", folder / "medians.parquet")  # fmt: skip
    return folder / "medians.parquet"


def files_below(folder: Path) -> dict[str, bytes]:
    """Each file below `folder`, with the times it was written at and the folder's own path
    (the page names where report.html goes) left out."""
    return {
        path.relative_to(folder).as_posix(): WRITTEN_AT.sub(
            b"<time>", path.read_bytes().replace(bytes(folder), b"<folder>")
        )
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def analyse_arguments(medians: Path, results: Path, guidelines: str = GUIDELINES) -> list[str]:
    return [
        "analyse", "--medians", str(medians), "--guidelines-json", guidelines,
        "--analysis-json", ANALYSIS, "--outdir", str(results / "guidelines"), "--exit-zero",
        "--timings", str(medians.with_name("timings.parquet")), "--plots-json", PLOTS,
        "--plots", str(results / "plots"), "--slowdown-png", str(results / "slowdown.png"),
        "--variability", str(results / "variability"), "--processes", "2",
        "--campaign", "c", "--report", str(results / "report.html"),
        "--out", str(results / "index.html"),
    ]  # fmt: skip


def test_analyse_writes_what_check_figures_and_page_write(medians: Path, tmp_path: Path) -> None:
    alone, together = tmp_path / "alone", tmp_path / "together"
    tables = alone / "guidelines"
    assert (
        main(
            [
                "check",
                "--medians",
                str(medians),
                "--guidelines-json",
                GUIDELINES,
                "--analysis-json",
                ANALYSIS,
                "--outdir",
                str(tables),
                "--exit-zero",
            ]
        )
        == 0
    )
    shared = [
        "--tests",
        str(tables / "tests.csv"),
        "--decided-with",
        str(tables / "decided_with.json"),
        "--campaign",
        "c",
    ]
    assert (
        main(
            [
                "figures",
                "--timings",
                str(medians.with_name("timings.parquet")),
                "--medians",
                str(medians),
                *shared,
                "--slowdown",
                str(tables / "slowdown.csv"),
                "--plots-json",
                PLOTS,
                "--plots",
                str(alone / "plots"),
                "--slowdown-png",
                str(alone / "slowdown.png"),
                "--variability",
                str(alone / "variability"),
                "--processes",
                "1",
            ]
        )
        == 0
    )
    linked = [
        tables / name
        for name in (
            "tests.csv",
            "summary.csv",
            "slowdown.csv",
            "verdict_lines.csv",
            "violated_undecided.csv",
            "library_table.csv",
        )
    ]
    assert main(["page", *shared, "--summary", str(tables / "summary.csv"),
                 "--verdict-lines", str(tables / "verdict_lines.csv"),
                 "--guidelines-json", GUIDELINES, "--plots", str(alone / "plots"),
                 "--figures", str(alone / "slowdown.png"), "--tables", *map(str, linked),
                 "--report", str(alone / "report.html"),
                 "--runs", str(alone / "variability" / "runs.csv"),
                 "--out", str(alone / "index.html")]) == 0  # fmt: skip

    assert main(analyse_arguments(medians, together)) == 0
    written = files_below(together)
    assert written == files_below(alone)
    assert {"index.html", "guidelines/tests.csv", "slowdown.png", "plots/heatmap.png",
            "variability/runs.csv"} <= set(written)  # fmt: skip


def test_a_failed_check_stops_the_analysis_with_its_error(medians: Path, tmp_path: Path) -> None:
    """The forked check's error, as `check` reports it, once; its status; no figure or page."""
    results = tmp_path / "results"
    arguments = analyse_arguments(medians, results, guidelines=json.dumps(["GL4", "NO-SUCH"]))
    ran = subprocess.run([sys.executable, "-m", "mpiguide", *arguments], capture_output=True,
                         text=True, check=False)  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("mpiguide: error:") == 1 and "NO-SUCH" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (results / "index.html").exists() and not (results / "plots").exists()


def test_fail_on_fails_once_every_output_is_written(medians: Path, tmp_path: Path) -> None:
    """Without --exit-zero, a verdict that --fail-on names exits 3 as `check` does, after the
    figures and the page are written."""
    arguments = [arg for arg in analyse_arguments(medians, tmp_path) if arg != "--exit-zero"]
    assert main([*arguments, "--fail-on", "violated"]) == FAILED_STATUS
    assert (tmp_path / "index.html").is_file() and (tmp_path / "plots" / "heatmap.png").is_file()
