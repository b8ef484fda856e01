"""An adaptive campaign replayed on a fixed campaign's runs: what `runs: {min, max, step}` would
have decided and spent, from runs already measured.

For each draw the runs of every deployment are put in a random order (the same order for every
mpi entry, so that blocks stay paired; selftest's `_draws`), and every test is decided at its
looks on the first runs of that order (guidelines.evaluate_looks), as the adaptive campaign
would have seen them. Prints, per planted slowdown of a self-test campaign (or over all tests
of any other campaign), the shares violated / holds / undecided and futile, the mean runs per
side the tests stopped at, and how many of the tests the fixed campaign (all runs) decides were
decided the same way; and the kernel time an adaptive campaign would have spent against the
fixed one, estimated from each experiment's run medians x repetitions kept and the runs it would
have been measured in (under blocking, every entry of a deployment measures the union of the
deployment's needs). A replay, not a measurement of an adaptive campaign: its runs were measured
all at once, and a round's launches would run fewer experiments each.

Then an oracle, the least kernel time any adaptive campaign on these looks could spend: each
test stops at the first look at which the fixed-n analysis at the campaign's own levels (not
split over the looks, so more willing to decide than any valid sequential test) gives the
verdict the fixed campaign gives at max runs; a test the fixed campaign leaves undecided stops
at the first look for free. Printed for all decisions repeated and with the
latest-stopping 5 % of them given up (the issue's 95 % agreement).

Usage: python benchmarks/adaptive_replay.py RESULTS_DIR CONFIG [--min 5] [--max 30] [--step 5]
       [--draws 20] [--seed 1]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.analysis.guidelines import evaluate, evaluate_looks
from mpiguide.analysis.sequential import FUTILE, LOOK_RUNS, STOP, Looks
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.core.paths import MEDIANS_PARQUET
from mpiguide.core.strict_yaml import load_yaml
from mpiguide.selftest.power import _draws, planted_guidelines

KEYS = ["mpi", "nodes", "ppn", "exp_id"]


def experiment_runs(tests: pd.DataFrame, blocking: bool) -> pd.Series:
    """Per experiment (mpi, nodes, ppn, exp_id): the runs it would have been measured in, the
    most runs per side of the looks its tests stopped at."""
    sides = []
    for side, column in ((0, "lhs_exp_id"), (1, "rhs_exp_id")):
        frame = pd.DataFrame({
            key: tests[key].astype(str).str.split("|").str[side].where(
                tests[key].astype(str).str.contains("|", regex=False), tests[key].astype(str))
            for key in ("mpi", "nodes", "ppn")
        })  # fmt: skip
        frame["exp_id"] = tests[column].astype(int)
        frame["runs"] = tests[LOOK_RUNS].astype(int)
        sides.append(frame)
    runs = pd.concat(sides).groupby(KEYS)["runs"].max()
    if blocking:
        by_deployment = runs.groupby(level=["nodes", "ppn", "exp_id"]).transform("max")
        runs = by_deployment
    return runs


def kernel_share(runs: pd.Series, per_run: pd.Series, looks: Looks, offset: int) -> float:
    """The kernel time of experiments measured in `runs` runs each (a draw's exp_ids, offset per
    draw) over that of every experiment measured in max runs."""
    runs.index = runs.index.set_levels(
        [level.astype(str) if name != "exp_id" else level % offset
         for name, level in zip(runs.index.names, runs.index.levels, strict=True)]
    )  # fmt: skip
    runs = runs.groupby(level=KEYS).max()
    return float((runs * per_run.reindex(runs.index)).sum() / (looks.last * per_run.sum()))


def oracle_runs(verdicts: list[np.ndarray], looks: Looks, keep: float) -> np.ndarray:
    """Per test, from its verdicts at each look (evaluate at the campaign's own levels on the
    first runs of each look; the last is the fixed campaign's): the runs per side an oracle
    needs to repeat the max-runs verdict, see the module docstring. `keep`: the share of the
    fixed decisions repeated, the latest-stopping others stop at the first look."""
    final = verdicts[-1]
    # The first look whose verdict is the final one: no valid test, deciding at levels no
    # looser than these, could repeat the final verdict any earlier.
    same = np.array([verdict == final for verdict in verdicts])
    stop = np.asarray(looks.runs)[same.argmax(axis=0)]
    decided = final != "undecided"
    stop = np.where(decided, stop, looks.runs[0])
    order = np.argsort(np.where(decided, stop, -1), kind="stable")[::-1]
    dropped = order[: round((1 - keep) * int(decided.sum()))]
    stop[dropped] = looks.runs[0]
    return stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("config", type=Path)
    parser.add_argument("--min", type=int, default=5)
    parser.add_argument("--max", type=int, default=30)
    parser.add_argument("--step", type=int, default=5)
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    config = load_yaml(args.config)
    options = AnalysisOptions.from_mapping(config.get("analysis", {}), str(args.config))
    looks = Looks.planned(args.min, args.max, args.step)
    medians = pd.read_parquet(args.results / MEDIANS_PARQUET)
    medians = medians[medians["run"] < looks.last]
    try:
        planted = planted_guidelines(config, str(args.config))
        guidelines = [p.guideline for p in planted]
        slowdown = {p.guideline.id: round(100 * p.slowdown, 6) for p in planted}
        launches = {p.guideline.id: p.launches for p in planted}
    except ConfigError:  # not a self-test: every test in one row
        guidelines = resolve(config["guidelines"], load_catalogue(GUIDELINE_CATALOGUE), "config")
        slowdown, launches = {}, {}
    blocking = config.get("blocking", "run" if len(config["mpi"]) > 1 else "none") == "run"
    mpis = sorted(medians["mpi"].astype(str).unique())
    # Kernel time of one run of an experiment: its median times the repetitions kept.
    per_run = (
        (medians["median_s"] * medians["n_kept"])
        .groupby([medians[k].astype(str) if k != "exp_id" else medians[k] for k in KEYS])
        .mean()
    )
    offset = int(medians["exp_id"].max()) + 1
    rng = np.random.default_rng(args.seed)
    rows, shares = [], []
    oracle: dict[float, list[float]] = {1.0: [], 0.95: []}
    for draw in range(args.draws):
        sample = _draws(medians, mpis, looks.last, range(draw, draw + 1), rng)
        fixed = evaluate(sample, guidelines, options, "replay")
        adaptive = evaluate_looks(sample, guidelines, options, looks, "replay")
        tests = adaptive.assign(
            fixed=fixed["verdict"].to_numpy(),
            slowdown=adaptive["guideline"].map(slowdown).fillna(-1),
            launches=adaptive["guideline"].map(launches).fillna("all"),
        )
        rows.append(tests[["slowdown", "launches", "verdict", STOP, LOOK_RUNS, "fixed"]])
        shares.append(kernel_share(experiment_runs(adaptive, blocking), per_run, looks, offset))
        # Each look's verdicts once, for every share the oracle keeps; the last look's are the
        # fixed campaign's.
        verdicts = [
            evaluate(sample[sample["run"] < n], guidelines, options, "oracle")["verdict"].to_numpy()
            for n in looks.runs[:-1]
        ]
        verdicts.append(fixed["verdict"].to_numpy())
        for keep, spent in oracle.items():
            stops = oracle_runs(verdicts, looks, keep)
            oracle_tests = adaptive.assign(**{LOOK_RUNS: stops})
            spent.append(
                kernel_share(experiment_runs(oracle_tests, blocking), per_run, looks, offset)
            )
    tests = pd.concat(rows, ignore_index=True)
    decided = tests["fixed"] != "undecided"
    tests = tests.assign(
        violated=tests["verdict"] == "violated",
        holds=tests["verdict"] == "holds",
        undecided=tests["verdict"] == "undecided",
        futile=tests[STOP] == FUTILE,
        fixed_decided=decided,
        same=decided & (tests["verdict"] == tests["fixed"]),
        flipped=decided & (tests["verdict"] != "undecided") & (tests["verdict"] != tests["fixed"]),
    )
    table = tests.groupby(["launches", "slowdown"]).agg(
        tests=("verdict", "size"), violated=("violated", "mean"), holds=("holds", "mean"),
        undecided=("undecided", "mean"), futile=("futile", "mean"),
        mean_runs=(LOOK_RUNS, "mean"), fixed_decided=("fixed_decided", "sum"),
        same=("same", "sum"), flipped=("flipped", "sum"),
    )  # fmt: skip
    table["same_share"] = table["same"] / table["fixed_decided"].where(table["fixed_decided"] > 0)
    print(f"{args.results}: looks {list(looks.runs)}, {args.draws} draws, analysis {options.test}")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    total_same = tests["same"].sum() / max(int(tests["fixed_decided"].sum()), 1)
    fixed_decided = int(tests["fixed_decided"].sum())
    print(f"\nof the tests the fixed campaign decides, decided the same way: {total_same:.1%}, "
          f"the other way: {tests['flipped'].sum()} of {fixed_decided}")  # fmt: skip
    print(f"kernel time against the fixed campaign (estimate): mean {np.mean(shares):.2f}, "
          f"range {min(shares):.2f}-{max(shares):.2f}")  # fmt: skip
    for keep, spent in oracle.items():
        print(f"oracle repeating {keep:.0%} of the fixed decisions: kernel time mean "
              f"{np.mean(spent):.2f}, range {min(spent):.2f}-{max(spent):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
