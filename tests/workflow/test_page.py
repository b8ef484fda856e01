"""The campaign page as a browser shows it: headless Chromium opens results/<campaign>/index.html
from disk (no server), and the page follows the workflow: a new Snakemake report and a changed
threshold re-make it."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread

from html_support import Page, read_page
from mpiguide.core.paths import CAMPAIGN_PAGE, SNAKEMAKE_REPORT
from workflow_project import TINY_CAMPAIGN, scheduled_jobs, snakemake

pytestmark = pytest.mark.workflow

RESULTS = Path("results") / TINY_CAMPAIGN["campaign"]
SCREEN = (1200, 1600)


def chromium(profile: Path, *args: str) -> str:
    """Headless Chromium's stdout for `args`; the test is skipped where it is not installed."""
    program = shutil.which("chromium")
    if program is None:
        pytest.skip("chromium is not installed (scripts/setup.sh slurm installs it as root)")
    result = subprocess.run(
        [program, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, f"chromium {' '.join(args)}:\n{result.stderr}"
    return result.stdout


def rendered(page: Path, profile: Path) -> Page:
    """The page's DOM as Chromium builds it from the file."""
    return read_page(chromium(profile, "--dump-dom", page.as_uri()))


def test_the_page_in_a_browser_follows_the_workflow(
    campaign_copy: Path,
    edit_config: Callable[[Callable[[dict[str, Any]], None]], None],
    tmp_path: Path,
) -> None:
    page = campaign_copy / RESULTS / CAMPAIGN_PAGE
    profile = tmp_path / "chromium"
    dom = rendered(page, profile)

    # one verdict line per guideline, its counts adding up to GL4's tests over both libraries
    line = re.search(
        r"GL4 (.+?) le (\d+) hold (\d+) violated (\d+) undecided of (\d+)",
        dom.by_id["verdict-lines"],
    )
    assert line is not None, dom.by_id["verdict-lines"]
    assert line[1].startswith("Neigh_allgather ≼ Neigh_alltoall")  # the catalogue's words
    holds, violated, undecided, tests = map(int, line.groups()[1:])
    assert holds + violated + undecided == tests == 4 * len(TINY_CAMPAIGN["mpi"])
    # the thresholds the verdicts were decided with
    assert (dom.by_id["option-p_thres"], dom.by_id["option-v_thres"]) == ("0.5", "1.0")
    assert dom.by_id["snakemake-report"].startswith("No Snakemake report yet")
    # every link and figure is a file beside the page; every figure of the campaign is shown
    assert dom.broken_links(page) == []
    plots = [str(png.relative_to(page.parent)) for png in (page.parent / "plots").rglob("*.png")]
    images = sorted(attributes["src"] for tag, attributes in dom.tags if tag == "img")
    assert images == sorted([*plots, "guidelines/slowdown.png"])

    screenshot = tmp_path / "page.png"
    chromium(profile, f"--screenshot={screenshot}", f"--window-size={SCREEN[0]},{SCREEN[1]}",
             page.as_uri())  # fmt: skip
    pixels = imread(screenshot)
    assert pixels.shape[:2] == (SCREEN[1], SCREEN[0])
    colours = np.unique(pixels[..., :3].reshape(-1, 3), axis=0)
    ink = (pixels[..., :3] < 0.5).any(axis=-1).mean()
    assert len(colours) > 16 and ink > 0.01, (len(colours), ink)

    # Snakemake's report, once written, is an input of the page: it is re-made to say so
    report = RESULTS / SNAKEMAKE_REPORT
    snakemake(campaign_copy, "--profile", "profiles/local", "--report", str(report))
    assert scheduled_jobs(campaign_copy) == {"page": 1, "all": 1}

    # a new threshold: new tables, and the page re-made with them
    before, made = page.read_text(), page.stat().st_mtime_ns
    edit_config(lambda config: config["analysis"].update(v_thres=1.5))
    snakemake(campaign_copy, "--profile", "profiles/local", "--cores", "2")
    assert page.stat().st_mtime_ns > made and page.read_text() != before
    dom = rendered(page, profile)
    assert "v ≥ 1.5" in dom.by_id["decided-with"]
    assert (dom.by_id["option-p_thres"], dom.by_id["option-v_thres"]) == ("0.5", "1.5")
    # the report was made before the tables changed: the page says so, and how to remake it
    assert dom.by_id["snakemake-report"].startswith(
        f"The Snakemake report is older than these tables: re-run snakemake --report {report}"
    )
    assert dom.broken_links(page) == []
    assert scheduled_jobs(campaign_copy) == {}
