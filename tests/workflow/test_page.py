"""The campaign page as a browser shows it: headless Chromium opens results/<campaign>/index.html
from disk (no server). The page follows the workflow (a new Snakemake report and a changed
threshold re-make it); the demo, made as `make demo` makes it, leaves a page that answers first,
fits a 1280-pixel window and links the report it made; an oversubscribed campaign's page and
log say so."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.image import imread

from html_support import Page, read_page
from mpiguide.campaign.summary import available_cores
from mpiguide.core.paths import CAMPAIGN_PAGE, SNAKEMAKE_REPORT
from workflow_project import (
    REPO,
    ROOT_ENV,
    SNAKEMAKE,
    TINY_CAMPAIGN,
    measured_once,
    new_project,
    scheduled_jobs,
    snakemake,
)

pytestmark = pytest.mark.workflow

RESULTS = Path("results") / TINY_CAMPAIGN["campaign"]
SCREEN = (1280, 1600)
# The demo as `make demo` runs it, with fewer runs and repetitions: what the page says of it is
# tested, not the demo's verdicts.
DEMO_CONFIG = REPO / "config" / "config.yaml"
DEMO_RESULTS = Path("results") / "demo"
SMALLER = {"runs": 3, "nrep": 20}
# The verdict words a line starts with (reports.page.headline).
ANSWERS = ("violated", "holds", "cannot tell yet", "no tests")
# The notices' tints (reports.page.STYLE): the oversubscription warning's background.
WARNING_TINT = (0xFF, 0xF4, 0xE0)


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


# A page beside the campaign page that loads it in a frame SCREEN[0] pixels wide and writes
# what Chromium laid out: whether the page is wider than the frame, each box that scrolls
# sideways, and each image's natural and shown width.
LAYOUT_PROBE = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="page" src="%s" style="width:%dpx;height:1000px;border:0"></iframe>
<pre id="layout">not laid out</pre>
<script>
document.getElementById("page").onload = function () {
  var doc = this.contentDocument, root = doc.documentElement;
  var width = function (element) { return element.getBoundingClientRect().width; };
  var scrolling = Array.prototype.filter.call(doc.querySelectorAll(".scroll"),
    function (box) { return box.scrollWidth > box.clientWidth; }).length;
  var images = Array.prototype.map.call(doc.images, function (img) {
    return {src: img.getAttribute("src"), natural: img.naturalWidth, shown: width(img)};
  });
  document.getElementById("layout").textContent = JSON.stringify({
    page: root.scrollWidth, window: root.clientWidth, content: width(doc.querySelector("h1")),
    scrolling: scrolling, images: images});
};
</script></body></html>"""


def layout(page: Path, profile: Path) -> dict[str, Any]:
    """How Chromium lays the page out in a window SCREEN[0] pixels wide (LAYOUT_PROBE)."""
    probe = page.with_name("layout-probe.html")
    probe.write_text(LAYOUT_PROBE % (page.name, SCREEN[0]))
    try:
        dom = chromium(profile, "--allow-file-access-from-files", "--virtual-time-budget=20000",
                       "--dump-dom", probe.as_uri())  # fmt: skip
    finally:
        probe.unlink()
    return json.loads(read_page(dom).by_id["layout"])


def assert_fits_the_window(page: Path, profile: Path) -> None:
    """No sideways scrolling of the page, nor inside it; every figure at its own size or the
    page's width, whichever is less (a thumbnail cannot be read)."""
    laid_out = layout(page, profile)
    assert laid_out["page"] <= laid_out["window"] == SCREEN[0], laid_out
    assert laid_out["scrolling"] == 0, laid_out
    assert laid_out["images"], laid_out
    for image in laid_out["images"]:
        readable = min(image["natural"], laid_out["content"])
        assert image["natural"] > 0 and image["shown"] >= 0.95 * readable, image


def screenshot(page: Path, profile: Path, path: Path) -> np.ndarray:
    """The first SCREEN of the page as Chromium draws it, RGB in 0..255."""
    chromium(profile, f"--screenshot={path}", f"--window-size={SCREEN[0]},{SCREEN[1]}",
             page.as_uri())  # fmt: skip
    pixels = imread(path)
    assert pixels.shape[:2] == (SCREEN[1], SCREEN[0])
    colours = np.unique(pixels[..., :3].reshape(-1, 3), axis=0)
    ink = (pixels[..., :3] < 0.5).any(axis=-1).mean()
    assert len(colours) > 16 and ink > 0.01, (len(colours), ink)
    return np.rint(pixels[..., :3] * 255).astype(int)


def verdict_lines(dom: Page) -> dict[str, str]:
    """Each guideline's line at the top of the page, by guideline."""
    lines = {}
    for tag, attributes in dom.tags:
        element = attributes.get("id", "")
        if tag == "li" and element.startswith("verdict-"):
            text = dom.by_id[element]
            lines[text.split(" ", 1)[0]] = text
    return lines


def test_the_page_in_a_browser_follows_the_workflow(
    campaign_copy: Path,
    edit_config: Callable[[Callable[[dict[str, Any]], None]], None],
    tmp_path: Path,
) -> None:
    page = campaign_copy / RESULTS / CAMPAIGN_PAGE
    profile = tmp_path / "chromium"
    dom = rendered(page, profile)

    # one line per guideline, the answer first, then what it compares in the catalogue's words
    (line,) = verdict_lines(dom).values()
    assert line.startswith("GL4 ") and line.split(" ", 1)[1].startswith(ANSWERS), line
    assert "Neigh_allgather ≼ Neigh_alltoall" in line
    # its counts, adding up to GL4's tests over both libraries
    counts = re.search(
        r"GL4 le (\d+) hold (\d+) violated (\d+) undecided of (\d+)", dom.by_id["verdict-lines"]
    )
    assert counts is not None, dom.by_id["verdict-lines"]
    holds, violated, undecided, tests = map(int, counts.groups())
    assert holds + violated + undecided == tests == 4 * len(TINY_CAMPAIGN["mpi"])
    # the thresholds the verdicts were decided with, folded below the method
    assert (dom.by_id["option-p_thres"], dom.by_id["option-v_thres"]) == ("0.5", "1.0")
    assert dom.text.index("Verdicts") < dom.text.index("Decided with")
    assert dom.by_id["snakemake-report"].startswith("No Snakemake report yet")
    # every link and figure is a file beside the page; every figure of the campaign is shown
    assert dom.broken_links(page) == []
    plots = [str(png.relative_to(page.parent)) for png in (page.parent / "plots").rglob("*.png")]
    images = sorted(attributes["src"] for tag, attributes in dom.tags if tag == "img")
    assert images == sorted([*plots, "guidelines/slowdown.png"])
    screenshot(page, profile, tmp_path / "page.png")

    # Snakemake's report, once written, is an input of the page: it is re-made to say so
    report = RESULTS / SNAKEMAKE_REPORT
    snakemake(campaign_copy, "--profile", "profiles/local", "--report", str(report))
    assert scheduled_jobs(campaign_copy) == {"analyse": 1, "all": 1}

    # a new threshold: new tables, and the page re-made with them
    before, made = page.read_text(), page.stat().st_mtime_ns
    edit_config(lambda config: config["analysis"].update(v_thres=1.5))
    snakemake(campaign_copy, "--profile", "profiles/local", "--cores", "2")
    assert page.stat().st_mtime_ns > made and page.read_text() != before
    dom = rendered(page, profile)
    assert "v ≥ 1.5" in dom.by_id["decided-with"] and "v ≥ 1.5" in dom.by_id["method"]
    assert (dom.by_id["option-p_thres"], dom.by_id["option-v_thres"]) == ("0.5", "1.5")
    # the report was made before the tables changed: the page says so, and how to remake it
    assert dom.by_id["snakemake-report"].startswith(
        f"The Snakemake report is older than these tables: re-run snakemake --report {report}"
    )
    assert dom.broken_links(page) == []
    assert scheduled_jobs(campaign_copy) == {}


# --- the demo, as `make demo` makes it ---------------------------------------------------------


def make_demo_commands() -> list[list[str]]:
    """The snakemake commands of the Makefile's demo target, in order, as `make -n` prints them
    with this venv's bin directory (its setup is this test session's)."""
    result = subprocess.run(
        ["make", "-n", "-f", str(REPO / "Makefile"), f"BIN={SNAKEMAKE.parent}", "demo"],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    commands = [shlex.split(line) for line in result.stdout.splitlines()]
    found = [command[1:] for command in commands if command and command[0] == str(SNAKEMAKE)]
    assert found, result.stdout
    return found


def make_demo(project: Path) -> str:
    """Run the demo target's snakemake commands in `project`; their stderr."""
    return "".join(snakemake(project, *command).stderr for command in make_demo_commands())


def demo_project(project: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A fresh clone of the demo campaign (the checkout's config.yaml with SMALLER runs and
    `change` made to it) with the docs the page links to."""
    config = {**yaml.safe_load(DEMO_CONFIG.read_text()), **SMALLER}
    change(config)
    new_project(project, config)
    (project / "docs").mkdir()
    shutil.copy2(REPO / "docs" / "analysis.md", project / "docs")
    return project


def oversubscribed_ranks() -> int:
    """Ranks of one node that are more than this machine's cores (twice as many)."""
    cores = available_cores() or 1
    if cores > 4:
        pytest.skip(f"oversubscribing {cores} cores takes more ranks than this test should start")
    return 2 * cores


def oversubscribe(config: dict[str, Any]) -> None:
    """The demo on one node with more ranks than cores, the launcher allowing it."""
    config["deployments"] = [{"nodes": 1, "ppn": oversubscribed_ranks()}]
    openmpi = config["mpi"]["openmpi"]
    openmpi["launcher"] = "mpirun.openmpi --oversubscribe"
    openmpi["env"] = {**ROOT_ENV, "OMPI_MCA_mpi_yield_when_idle": "1"}


@pytest.fixture(scope="session")
def made_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo made as `make demo` makes it, once per session; its log beside it."""

    def make(project: Path) -> None:
        (demo_project(project, lambda config: None).parent / "make.log").write_text(
            make_demo(project)
        )

    return measured_once(tmp_path_factory, "page-demo", make)


@pytest.fixture(scope="session")
def oversubscribed_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo oversubscribing this machine, made as `make demo` makes it; its log beside it."""
    oversubscribed_ranks()

    def make(project: Path) -> None:
        (demo_project(project, oversubscribe).parent / "make.log").write_text(make_demo(project))

    return measured_once(tmp_path_factory, "page-oversubscribed", make)


def test_make_demo_leaves_a_page_that_answers_first_and_links_its_report(
    made_demo: Path, project_copy: Callable[[Path], Path], tmp_path: Path
) -> None:
    project = project_copy(made_demo)
    page = project / DEMO_RESULTS / CAMPAIGN_PAGE
    profile = tmp_path / "chromium"
    dom = rendered(page, profile)

    # a line per guideline of the demo, each the answer first
    guidelines = yaml.safe_load(DEMO_CONFIG.read_text())["guidelines"]
    lines = verdict_lines(dom)
    assert list(lines) == guidelines
    for guideline, line in lines.items():
        assert line.removeprefix(f"{guideline} ").startswith(ANSWERS), line
    # the method in one sentence, linked to where the docs say it in full
    method = re.sub(r" ([,.;:)])", r"\1", dom.by_id["method"])  # html_support's spaces
    assert method.count(". ") == 0 and method.endswith("how and why: docs/analysis.md."), method
    assert ("a", {"href": "../../docs/analysis.md#verdicts-violated-holds-undecided"}) in dom.tags
    # the runs the variability table flags, with a link to it
    runs = pd.read_csv(page.parent / "variability" / "runs.csv")
    flagged = int(runs["flagged"].sum())
    notice = dom.by_id["flagged-runs"]
    assert notice.startswith(
        f"{flagged} of {len(runs)} runs were slow or fast as a whole" if flagged
        else "No run was slow or fast as a whole"
    )  # fmt: skip
    assert ("a", {"href": "variability/runs.csv"}) in dom.tags
    assert dom.broken_links(page) == []
    # the report `make demo` made holds these tables (its second run wrote them anew, the same)
    assert dom.by_id["snakemake-report"].startswith(
        "Snakemake's provenance report of these results: report.html (written "
    )
    assert dom.by_id["snakemake-report"].endswith(", it holds these tables).")
    assert_fits_the_window(page, profile)
    screenshot(page, profile, tmp_path / "demo.png")

    # `make demo` again: nothing measured again; the report written anew re-runs the analysis,
    # which writes the same tables, and the page still right
    tables = {path.name: path.read_bytes() for path in (page.parent / "guidelines").glob("*.csv")}
    make_demo(project)
    again = {path.name: path.read_bytes() for path in (page.parent / "guidelines").glob("*.csv")}
    assert again == tables
    again = rendered(page, profile).by_id["snakemake-report"]
    assert again.startswith("Snakemake's provenance report of these results: report.html")
    assert "older" not in again
    assert scheduled_jobs(project) == {}


def test_an_oversubscribed_campaign_says_so_in_its_log_and_beside_its_verdicts(
    oversubscribed_demo: Path, tmp_path: Path
) -> None:
    page = oversubscribed_demo / DEMO_RESULTS / CAMPAIGN_PAGE
    ranks, cores = oversubscribed_ranks(), available_cores()
    deployment = f"1x{ranks}"
    warning = (
        f"deployment {deployment}: {ranks} ranks on {cores} cores (launch: local): ranks share "
        "cores and wait for each other; its timings measure the oversubscription too"
    )
    # the run's log says it when it starts, once per snakemake command
    log = (oversubscribed_demo.parent / "make.log").read_text().splitlines()
    said = f"mpiguide: config/config.yaml: {warning}"
    assert log.count(said) == len(make_demo_commands()), log
    assert log.index(said) < log.index("Building DAG of jobs...")

    profile = tmp_path / "chromium"
    dom = rendered(page, profile)
    summary = pd.read_csv(page.parent / "guidelines" / "summary.csv")
    notice = dom.by_id["oversubscribed"]
    assert notice.startswith("⚠ Oversubscribed: more ranks than this machine has cores.")
    assert (
        f"{warning}. Its tests: {summary['holds'].sum()} hold, {summary['violated'].sum()} "
        f"violated, {summary['undecided'].sum()} undecided of {summary['tests'].sum()}."
    ) in notice
    # beside every verdict that rests on it: the lines at the top, each deployment's counts
    for line in verdict_lines(dom).values():
        assert f"⚠ {deployment} oversubscribed" in line, line
    tables = [a for tag, a in dom.tags if tag == "table" and a.get("class") == "deployments"]
    marks = [a for tag, a in dom.tags if tag == "a" and a.get("href") == "#oversubscribed"]
    assert len(tables) == len(verdict_lines(dom)) and len(marks) == 2 * len(tables)
    assert dom.broken_links(page) == []
    assert_fits_the_window(page, profile)
    # the warning is on the first screen
    pixels = screenshot(page, profile, tmp_path / "oversubscribed.png")
    assert (pixels == WARNING_TINT).all(axis=-1).sum() > 1000
