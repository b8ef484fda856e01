"""An adaptive campaign against the same campaign at a fixed number of runs, side by side.

Runs one campaign twice with the local profile, in two fresh project copies: with
`runs: {min, max, step}` and with `runs: max`, the same seed, experiments, guidelines and
analysis. Prints per variant the launches, the kernel time (the sum of every repetition's
time_s in timings.parquet), Snakemake's wall time and the verdicts; per guideline the tests
stopped at each look; and how many of the tests the fixed campaign decides the adaptive one
decided the same way. A self-test campaign (config/campaigns/selftest.yaml) runs its `selftest`
target too, and both self-test tables are printed: false positives, false all-clears and
undecided shares of the adaptive campaign's own decisions beside the fixed campaign's at max
runs (the fixed table's other columns are subsets of its runs).

With --workdir, a variant whose project is already there (an interrupted run) is finished, not
started again; its wall time is then not known.

Usage: python benchmarks/adaptive.py [--config config/config.yaml] [--scale paper|local]
       [--min 5] [--max 30] [--step 5] [--cores 2] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from _common import REPO

sys.path.insert(0, str(REPO / "tests"))

from mpiguide.analysis.sequential import LOOK_RUNS, STOP
from mpiguide.core.errors import MpiguideError
from mpiguide.core.paths import (
    GUIDELINES_TREE,
    RAW_TREE,
    SELFTEST_MD,
    TESTS_CSV,
    TIMINGS_PARQUET,
    campaign_results,
)
from mpiguide.core.strict_yaml import load_yaml
from mpiguide.selftest.power import planted_guidelines
from workflow_project import SNAKEMAKE, new_project, snakemake, snakemake_env

# The columns that name a test in both campaigns' tests.csv.
RESULTS_START = "n_lhs"


def is_selftest(config: dict[str, Any]) -> bool:
    try:
        planted_guidelines(config, "config")
    except MpiguideError:
        return False
    return True


def run_variant(root: Path, config: dict[str, Any], runs: Any, cores: int) -> dict[str, Any]:
    """Run the campaign with `runs`; its launches, kernel and wall time, its tests and, for a
    self-test, its selftest.md."""
    config = {**config, "runs": runs}
    resumed = root.is_dir()
    if resumed:  # a kept project of an interrupted benchmark: finish it, measure nothing again
        snakemake(root, "--unlock")
    project = root if resumed else new_project(root, config)
    targets = ["all", "selftest"] if is_selftest(config) else []
    begin = time.monotonic()
    # No time limit: a self-test campaign takes many minutes per variant.
    subprocess.run(
        [str(SNAKEMAKE), "--profile", "profiles/local", "--cores", str(cores), *targets],
        cwd=project, env=snakemake_env(), check=True, capture_output=True,
    )  # fmt: skip
    wall = time.monotonic() - begin
    results = project / campaign_results(config["campaign"])
    selftest = results / SELFTEST_MD
    timings = pd.read_parquet(results / TIMINGS_PARQUET, columns=["time_s"])
    return {
        "launches": sum(1 for _ in (results / RAW_TREE).rglob("run*.csv")),
        "kernel_s": float(timings["time_s"].sum()),
        "wall_s": float("nan") if resumed else wall,
        "tests": pd.read_csv(results / GUIDELINES_TREE / TESTS_CSV),
        "selftest": selftest.read_text() if selftest.exists() else None,
    }


def identity(tests: pd.DataFrame) -> list[str]:
    columns = list(tests.columns[: tests.columns.get_loc(RESULTS_START)])
    return [c for c in columns if c not in ("relation", "group")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    parser.add_argument("--scale", choices=("paper", "local"), default=None)
    parser.add_argument("--min", type=int, default=5)
    parser.add_argument("--max", type=int, default=30)
    parser.add_argument("--step", type=int, default=5)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path, help="keep both projects here")
    args = parser.parse_args()

    config = load_yaml(args.config)
    if args.scale is not None:
        config["scale"] = args.scale
    if config.get("scale") == "local":
        # The local block's runs would replace the ones compared here.
        config.get("local", {}).pop("runs", None)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mpiguide-adaptive-"))
    adaptive_runs = {"min": args.min, "max": args.max, "step": args.step}
    variants = {
        "adaptive": run_variant(workdir / "adaptive", config, adaptive_runs, args.cores),
        "fixed": run_variant(workdir / "fixed", config, args.max, args.cores),
    }
    print(f"campaign {config['campaign']} ({args.config}), projects in {workdir}")
    print(f"adaptive runs {yaml.safe_dump(adaptive_runs, default_flow_style=True).strip()}, "
          f"fixed runs {args.max}")  # fmt: skip
    print(f"{'':10} {'launches':>9} {'kernel s':>10} {'wall s':>8}  verdicts")
    for name, variant in variants.items():
        counts = variant["tests"]["verdict"].value_counts()
        verdicts = ", ".join(f"{int(counts.get(v, 0))} {v}" for v in ("violated", "holds",
                                                                         "undecided"))  # fmt: skip
        print(f"{name:10} {variant['launches']:>9} {variant['kernel_s']:>10.2f} "
              f"{variant['wall_s']:>8.1f}  {verdicts}")  # fmt: skip
    adaptive, fixed = variants["adaptive"], variants["fixed"]
    print(f"adaptive / fixed: launches {adaptive['launches'] / fixed['launches']:.2f}, kernel "
          f"time {adaptive['kernel_s'] / fixed['kernel_s']:.2f}")  # fmt: skip

    tests = adaptive["tests"]
    print("\ntests stopped per guideline and look (runs per side):")
    table = tests.groupby(["guideline", LOOK_RUNS, STOP]).size().unstack(STOP, fill_value=0)
    print(table.to_string())

    keys = identity(fixed["tests"])
    both = fixed["tests"][[*keys, "verdict"]].merge(
        tests[[*keys, "verdict"]], on=keys, suffixes=("_fixed", "_adaptive")
    )
    decided = both[both["verdict_fixed"] != "undecided"]
    same = (decided["verdict_fixed"] == decided["verdict_adaptive"]).sum()
    flipped = (
        (decided["verdict_adaptive"] != "undecided")
        & (decided["verdict_fixed"] != decided["verdict_adaptive"])
    ).sum()
    share = same / max(len(decided), 1)
    print(f"\nof the {len(decided)} tests the fixed campaign decides, the adaptive one decides "
          f"{same} the same way ({share:.1%}) and {flipped} the other way")  # fmt: skip
    for name, variant in variants.items():
        if variant["selftest"] is not None:
            print(f"\nself-test, {name}:\n{variant['selftest']}")


if __name__ == "__main__":
    main()
