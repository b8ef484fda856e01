"""What the workflow's parse and its cheapest jobs import stays light.

Every invocation of the workflow reads it (the Snakefile and the rule files) before any job
starts, and every analysis job is a Python start of its own: an import of scipy.stats costs about
a second each time, seaborn another, statsmodels half of one. Checked in a fresh interpreter,
as the workflow and a job start:

- the modules the Snakefile and workflow/rules/*.smk import: nothing that draws or tests.
  numpy and pandas are left out of the check: Snakemake imports both itself, before it reads
  the rules (its SLURM executor plugin, loaded with every installed plugin), and the parse
  builds the grid with pandas to estimate the runs' times.
- `record`, the command of the options records' jobs: nothing of the analysis (numpy,
  pandas, pyarrow, yaml, jsonschema and the above).
- the commands that only read tables (page, slowdown-plot): nothing that tests, and but for
  slowdown-plot nothing that draws (page captions the figures in their footers' words,
  reports.figure_style, without matplotlib).
- the commands that draw the verdicts and the runs (figures, plot, variability): matplotlib
  alone, not seaborn and nothing that tests.
- check, with the tables it writes from tests.csv: the t-tests and every bound take Student's
  t from scipy.special; scipy.stats is imported by the rank tests alone, when a campaign has
  them; nothing draws.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SNAKEFILES = [REPO / "Snakefile", *sorted((REPO / "workflow").rglob("*.smk"))]
IMPORT = re.compile(r"^\s*(?:from\s+(mpiguide[\w.]*)\s+import|import\s+(mpiguide[\w.]*))", re.M)

TESTING = ("scipy", "statsmodels")
DRAWING = ("matplotlib", "seaborn")
TABLES = ("numpy", "pandas", "pyarrow")


def workflow_modules() -> list[str]:
    """The mpiguide modules the workflow's files import, in the order of their first import."""
    found: dict[str, None] = {}
    for path in SNAKEFILES:
        for match in IMPORT.finditer(path.read_text()):
            found[match[1] or match[2]] = None
    return list(found)


def imported(modules: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after importing `modules`."""
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(result.stdout))


def test_the_workflow_names_the_modules_it_imports() -> None:
    modules = workflow_modules()
    assert "mpiguide.campaign.config" in modules
    assert "mpiguide.campaign.options_record" in modules


# What a fresh interpreter imports, and the packages it must not hold afterwards.
LIGHT: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "the workflow's parse": (workflow_modules(), TESTING + DRAWING),
    "record": (["mpiguide.cli", "mpiguide.campaign.options_record"],
               (*TESTING, *DRAWING, *TABLES, "yaml", "jsonschema")),
    "page": (["mpiguide.cli", "mpiguide.analysis.catalogue", "mpiguide.reports.page"],
             TESTING + DRAWING),
    "slowdown-plot": (["mpiguide.cli", "mpiguide.analysis.slowdown",
                       "mpiguide.reports.figure_style", "mpiguide.reports.slowdown_plot"],
                      (*TESTING, "seaborn")),
    "figures": (["mpiguide.cli", "mpiguide.reports.figures"], (*TESTING, "seaborn")),
    "analyse, beside its forked check": (["mpiguide.cli", "mpiguide.reports.figures",
                                          "mpiguide.reports.page"], (*TESTING, "seaborn")),
    "plot": (["mpiguide.cli", "mpiguide.reports.plots"], (*TESTING, "seaborn")),
    "variability": (["mpiguide.cli", "mpiguide.reports.variability"], (*TESTING, "seaborn")),
    "check": (["mpiguide.cli", "mpiguide.analysis.guidelines", "mpiguide.reports.junit",
               "mpiguide.reports.report_tables", "mpiguide.reports.library_table"],
              ("scipy.stats", "statsmodels", *DRAWING)),
}  # fmt: skip


@pytest.mark.parametrize("what", LIGHT)
def test_imports_stay_light(what: str) -> None:
    modules, forbidden = LIGHT[what]
    heavy = imported(modules) & set(forbidden)
    assert not heavy, f"{what} imports {sorted(heavy)}"


def test_t_tests_are_decided_without_scipy_stats() -> None:
    """check's work for paired and Welch t-tests, at both alternatives: p-values, bounds,
    verdicts, detectable ratios and runs needed, in an interpreter that never loads
    scipy.stats."""
    script = """
import sys
import numpy as np
from mpiguide.analysis.comparisons import RunMedians, compare
from mpiguide.analysis.verdicts import Thresholds, decide, uncorrected_tail

thresholds = Thresholds(p_thres=0.001, v_thres=1.03, confidence=0.95)
rng = np.random.default_rng(1)
tests, runs = 20, 6
values = 1e-5 * np.exp(rng.normal(0, 0.05, 2 * tests * runs))
medians = RunMedians.from_frame(
    np.repeat(np.arange(2 * tests), runs), np.tile(np.arange(runs), 2 * tests), values, 2 * tests
)
for approx in (False, True):
    frame = compare(
        medians, np.arange(tests), np.arange(tests, 2 * tests),
        "two-sided" if approx else "greater", thresholds.confidence,
        np.arange(tests) % 2 == 0, uncorrected_tail(approx, thresholds.p_thres),
    )
    frame["p_adjusted"] = frame["p_value"]
    decide(approx, frame, thresholds)
    assert set(frame["test"]) == {"paired_t", "welch_t"}, set(frame["test"])
    assert frame["p_value"].notna().all() and frame["verdict"].notna().all()
print("scipy.stats" in sys.modules)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
