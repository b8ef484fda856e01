"""Time `make demo` after set-up and the edit → re-run loop, on a fresh copy of the checkout.

Prints, does not assert. Goals on 2 cores: the demo (snakemake + its --report) ≤ 60 s; the loop
≤ 6 s on an idle machine. The copy holds the checkout without results/ or .snakemake/, so the
kernel is built and every run measured as on a fresh clone; then:

1. `snakemake --profile profiles/local --report … --report-after-run`, then `snakemake --profile
   profiles/local` again (which re-makes the page to link the report), as the Makefile's demo
   target runs them, each timed; the PNGs and the report's size after them;
2. the loop: `v_thres` changed in the copy's config.yaml, `snakemake --profile profiles/local`
   again, timed, with the jobs it ran and the PNGs before and after; beside it a dry run after
   the same edit (`-n`: the workflow read and the DAG built, no job run), the part of the loop
   that comes before the first job.

The load average is printed beside every figure: the machine may be shared. Run with the venv's
Python: `.venv/bin/python benchmarks/demo.py [--config FILE] [--repeat N] [--keep]
[--no-bytecode]`; `--config` measures another campaign file in place of config/config.yaml;
`--no-bytecode` runs snakemake with PYTHONDONTWRITEBYTECODE=1, as a sandbox may.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

from _common import REPO, snakemake_env, timed_snakemake
from mpiguide.core.paths import (
    GUIDELINES_TREE,
    RESULTS_ROOT,
    SNAKEMAKE_REPORT,
    VERDICT_LINES_CSV,
    campaign_results,
)

DEMO_CONFIG = Path("config") / "config.yaml"
# What a fresh clone does not have: results, Snakemake's state, local environments and caches.
NOT_COPIED = shutil.ignore_patterns(
    RESULTS_ROOT, ".snakemake", ".venv", ".git", ".ci", "build", "__pycache__", "*.egg-info"
)
V_THRES = re.compile(r"^(\s+v_thres:\s*)(\S+)", re.MULTILINE)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f} (1 min), {five:.2f} (5 min)"


# Python writes the bytecode of the modules it compiles unless PYTHONDONTWRITEBYTECODE is set;
# a sandbox may set it, and then every job compiles the copy's package again.
BYTECODE = "PYTHONDONTWRITEBYTECODE"


def snakemake(project: Path, *args: str, bytecode: bool = True) -> tuple[float, str]:
    """Run the venv's snakemake in `project` as `make demo` does, with the copy's own package,
    writing bytecode as Python does by default (unless `bytecode` is False); seconds and
    stdout."""
    env = {name: value for name, value in snakemake_env(project).items() if name != BYTECODE}
    if not bytecode:
        env[BYTECODE] = "1"
    seconds, result = timed_snakemake(
        project, "--profile", "profiles/local", *args, env=env, shown=" ".join(args),
    )  # fmt: skip
    return seconds, result.stdout + result.stderr


def jobs_run(log: str) -> str:
    """The job counts of Snakemake's 'Job stats' table, as `rule n, …`."""
    table = re.search(r"^job\s+count\n[-\s]+\n(.*?)^total\s+(\d+)", log, re.DOTALL | re.MULTILINE)
    if not table:
        return "none"
    rows = [line.split() for line in table[1].splitlines() if line.strip()]
    return ", ".join(f"{name} {count}" for name, count in rows if name != "all")


def pngs(results: Path) -> int:
    return sum(1 for _ in results.rglob("*.png"))


def verdicts(results: Path) -> list[str]:
    """The demo's verdict per guideline, as its report's front page counts them."""
    lines = []
    with (results / GUIDELINES_TREE / VERDICT_LINES_CSV).open(newline="") as table:
        for row in csv.DictReader(table):
            lines.append(
                f"{row['guideline']}: groups {row['holds_groups']} hold, {row['violated_groups']} "
                f"violated, {row['undecided_groups']} undecided of {row['groups']}; median "
                f"detectable ratio {float(row['median_detectable_ratio']):.3f}"
            )
    return lines


def change_v_thres(config: Path) -> tuple[str, str]:
    text = config.read_text()
    match = V_THRES.search(text)
    if not match:
        sys.exit(f"{config}: no analysis.v_thres line to change")
    before = match[2]
    after = f"{float(before) + 0.02:g}"
    config.write_text(V_THRES.sub(rf"\g<1>{after}", text, count=1))
    return before, after


def measure(config: Path, keep: bool, bytecode: bool) -> tuple[float, float]:
    workdir = Path(tempfile.mkdtemp(prefix="mpiguide-demo-"))
    project = workdir / "checkout"
    shutil.copytree(REPO, project, ignore=NOT_COPIED)
    shutil.copyfile(config, project / DEMO_CONFIG)
    campaign = yaml.safe_load(config.read_text())["campaign"]
    results = project / campaign_results(campaign)
    report = results / SNAKEMAKE_REPORT
    try:
        print(f"before the demo: {load()}")
        shown = str(report.relative_to(project))
        run_seconds, _ = snakemake(
            project, "--report", shown, "--report-after-run", bytecode=bytecode
        )
        print(f"  snakemake --report {shown} --report-after-run: {run_seconds:.1f} s; {load()}")
        page_seconds, _ = snakemake(project, bytecode=bytecode)
        demo = run_seconds + page_seconds
        print(f"  snakemake again (the page): {page_seconds:.1f} s; {load()}")
        size = report.stat().st_size / 1e6
        print(f"make demo after set-up: {demo:.1f} s (goal ≤ 60 s); {pngs(results)} PNGs, "
              f"report {size:.1f} MB")  # fmt: skip

        for line in verdicts(results):
            print(f"  {line}")

        before_pngs = pngs(results)
        old, new = change_v_thres(project / DEMO_CONFIG)
        reading, _ = snakemake(project, "-n", bytecode=bytecode)
        loop, log = snakemake(project, bytecode=bytecode)
        print(f"edit → re-run (v_thres {old} → {new}): {loop:.1f} s (goal ≤ 6 s idle); {load()}")
        print(f"  before the first job (snakemake -n after the edit): {reading:.1f} s")
        print(f"  jobs: {jobs_run(log)}; PNGs before {before_pngs}, after {pngs(results)}")
        return demo, loop
    finally:
        if keep:
            print(f"kept: {project}")
        else:
            shutil.rmtree(workdir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        type=Path,
        default=REPO / DEMO_CONFIG,
        help="campaign file measured as the demo (default: config/config.yaml)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="fresh copies measured one after the other (default: 1)",
    )
    parser.add_argument("--keep", action="store_true", help="keep each copy and say where")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help=f"run snakemake with {BYTECODE}=1, every module compiled in every process (default:"
        " bytecode written, as Python does unless told not to)",
    )
    args = parser.parse_args()  # fmt: skip
    print(f"bytecode: {'not written' if args.no_bytecode else 'written'} "
          f"({BYTECODE} here: {os.environ.get(BYTECODE, 'unset')})")  # fmt: skip
    demos, loops = [], []
    for number in range(1, args.repeat + 1):
        print(f"-- copy {number} of {args.repeat}")
        demo, loop = measure(args.config.resolve(), args.keep, not args.no_bytecode)
        demos.append(demo)
        loops.append(loop)
    if args.repeat > 1:
        print(f"median over {args.repeat}: make demo {statistics.median(demos):.1f} s, "
              f"edit → re-run {statistics.median(loops):.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
