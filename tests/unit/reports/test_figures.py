"""`mpiguide figures`: the files of `plot`, `slowdown-plot` and `variability` in one process,
the same bytes as each command writes alone."""

from __future__ import annotations

import json
from pathlib import Path

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import resolve
from mpiguide.analysis.guidelines import check
from mpiguide.cli import main
from mpiguide.store.aggregate import aggregate
from synthetic import Deployment, neighbor_grid, write_campaign

GUIDELINES = {
    "GL4": {"source": "s", "text": "t", "relation": "le",
            "lhs": {"op": "neighbor_allgather"}, "rhs": {"op": "neighbor_alltoall"}},
}  # fmt: skip
SELECTOR = {"op": "neighbor_alltoall", "msg_size": 64, "reorder": 0}


def files_below(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_figures_writes_what_the_three_commands_write(tmp_path: Path) -> None:
    grid = neighbor_grid()
    typical = 1e-6 * grid["msg_size"].astype(float).to_numpy()
    typical[((grid["op"] == "neighbor_allgather") & (grid["msg_size"] == 1024)).to_numpy()] *= 1.6
    raw = write_campaign(tmp_path, grid, typical, [Deployment("openmpi", 1, 2)], runs=6,
                         sigma=0.02, seed=3)  # fmt: skip
    timings, medians = tmp_path / "timings.parquet", tmp_path / "medians.parquet"
    aggregate(tmp_path / "grid.csv", raw, tmp_path / "raw", tmp_path / "inputs", timings, medians)
    options = AnalysisOptions.from_mapping({"variability": [SELECTOR]}, "test")
    guidelines = tmp_path / "guidelines"
    check(medians, resolve(list(GUIDELINES), GUIDELINES, "c"), options, guidelines)
    shared = ["--tests", str(guidelines / "tests.csv"), "--decided-with",
              str(guidelines / "decided_with.json"), "--campaign", "c"]  # fmt: skip
    plots = json.dumps({"focus": "undecided", "max": 3})
    alone, together = tmp_path / "alone", tmp_path / "together"
    assert main(["plot", "--timings", str(timings), *shared, "--plots-json", plots,
                 "--outdir", str(alone / "plots"), "--processes", "1"]) == 0  # fmt: skip
    assert main(["slowdown-plot", "--slowdown", str(guidelines / "slowdown.csv"), *shared,
                 "--out", str(alone / "slowdown.png")]) == 0  # fmt: skip
    assert main(["variability", "--medians", str(medians), "--timings", str(timings), *shared,
                 "--outdir", str(alone / "variability")]) == 0  # fmt: skip
    assert main(["figures", "--timings", str(timings), "--medians", str(medians), *shared,
                 "--slowdown", str(guidelines / "slowdown.csv"), "--plots-json", plots,
                 "--plots", str(together / "plots"),
                 "--slowdown-png", str(together / "slowdown.png"),
                 "--variability", str(together / "variability"),
                 "--processes", "2"]) == 0  # fmt: skip
    written = files_below(together)
    assert written == files_below(alone)
    kinds = {name.split("/")[0] + "/" + name.split("/")[1] for name in written if "/" in name}
    assert {"plots/forest", "plots/overview", "plots/focus", "variability/plots"} <= kinds
    assert {"slowdown.png", "variability/runs.csv", "plots/heatmap.png"} <= set(written)
