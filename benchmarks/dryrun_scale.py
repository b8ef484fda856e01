"""Time `snakemake -n` on benchmarks/dryrun_scale.yaml (goal: ≤ 10 s) and print the figures.

Run from anywhere: `.venv/bin/python benchmarks/dryrun_scale.py`. Plans only; nothing is built,
run or written under results/.
"""

from __future__ import annotations

import re

from _common import REPO, timed_snakemake

CONFIG = REPO / "benchmarks" / "dryrun_scale.yaml"
REPEATS = 3


def dry_run() -> tuple[float, int]:
    seconds, result = timed_snakemake(
        REPO, "-n", "--nolock", "--cores", "1", "--configfile", str(CONFIG), env=None, shown="-n"
    )
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
