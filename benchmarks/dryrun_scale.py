"""Time `snakemake -n` on benchmarks/dryrun_scale.yaml (goal: ≤ 10 s) and print the figures.

Run from anywhere: `.venv/bin/python benchmarks/dryrun_scale.py`. Plans only; nothing is built,
run or written under results/.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

from _common import REPO, SNAKEMAKE

CONFIG = REPO / "benchmarks" / "dryrun_scale.yaml"
REPEATS = 3


def dry_run() -> tuple[float, int]:
    start = time.perf_counter()
    result = subprocess.run(
        [str(SNAKEMAKE), "-n", "--nolock", "--cores", "1", "--configfile", str(CONFIG)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"snakemake -n failed:\n{result.stdout}\n{result.stderr}")
    total = re.search(r"^total\s+(\d+)$", result.stdout, re.MULTILINE)
    return seconds, int(total[1]) if total else 0


def main() -> None:
    timings = []
    for _ in range(REPEATS):
        seconds, jobs = dry_run()
        timings.append(seconds)
    print(f"snakemake -n on {CONFIG.relative_to(REPO)}: {jobs} jobs planned")
    print(f"wall time: best {min(timings):.2f} s, worst {max(timings):.2f} s over {REPEATS} runs")


if __name__ == "__main__":
    main()
