"""The futility stop of adaptive campaigns on simulated tests: how many of the tests that `max`
runs decide it stops as futile (lost decisions), how many of the others it stops before `max`,
and the mean runs per side a test uses; for the predictive rule at several thresholds and for
the earlier rule (futile when `runs_needed` exceeds `max`).

Simulates `{min: 5, max: 30, step: 5}` at the default levels with
tests/unit/analysis/test_sequential.py's `simulate`: paired, unpaired and `approx` tests, true
ratios 1.00-1.20, per-run noise 0.02-0.30.

Usage: python benchmarks/futility.py [--tests 400] [--thresholds 0.02 0.05 0.1]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from _common import REPO

sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "unit")]

import test_sequential  # noqa: E402

from mpiguide.analysis import sequential  # noqa: E402
from mpiguide.analysis.verdicts import UNDECIDED  # noqa: E402

CASES = [(1.0, 0.09), (1.0, 0.05), (1.02, 0.09), (1.05, 0.09), (1.08, 0.09), (1.0, 0.15),
         (1.03, 0.3), (1.10, 0.2), (1.2, 0.2), (1.0, 0.02)]  # fmt: skip


def runs_needed_stops(tests, look, looks, spent):
    """The earlier rule: futile when runs_needed (at the point estimates) is beyond max."""
    needed = tests["runs_needed"].to_numpy(dtype=float, na_value=np.nan)
    futile = ~(needed <= looks.last)
    undecided = np.where(futile, sequential.FUTILE, sequential.OPEN)
    if look == looks.count - 1:
        undecided = sequential.MAX_RUNS
    return np.where(tests["verdict"].to_numpy() != UNDECIDED, sequential.DECIDED, undecided)


def measure(tests: int) -> tuple[int, int, int, int, float]:
    lost = decidable = hopeless = stopped = 0
    runs = []
    for paired in (True, False):
        for approx in (False, True):
            if approx and not paired:
                continue
            for ratio, noise in CASES:
                outcome = test_sequential.simulate(ratio, noise, test_sequential.DEFAULTS,
                                                   tests, paired, approx, seed=12)  # fmt: skip
                can = (outcome.by_look != UNDECIDED).any(axis=0)
                futile = outcome.stop == sequential.FUTILE
                lost += int((futile & can).sum())
                decidable += int(can.sum())
                hopeless += int((~can).sum())
                stopped += int((futile & ~can).sum())
                runs.extend(np.asarray(test_sequential.LOOKS.runs)[outcome.look])
    return lost, decidable, stopped, hopeless, float(np.mean(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=400)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.02, 0.05, 0.1])
    args = parser.parse_args()
    rules = [(f"predictive < {t:g}", t) for t in args.thresholds] + [("runs_needed > max", None)]
    print(f"{'rule':20} {'lost decisions':>20} {'hopeless stopped':>20} {'mean runs':>10}")
    for name, threshold in rules:
        if threshold is None:
            test_sequential.stops = runs_needed_stops
        else:
            sequential.FUTILE_BELOW = threshold
        lost, decidable, stopped, hopeless, runs = measure(args.tests)
        print(f"{name:20} {f'{lost}/{decidable} {lost / decidable:.1%}':>20} "
              f"{f'{stopped}/{hopeless} {stopped / hopeless:.0%}':>20} {runs:>10.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
