"""RunMedians: every experiment's run medians in run order, and their median."""

from __future__ import annotations

import numpy as np

from mpiguide.analysis.comparisons import RunMedians


def test_run_medians_by_experiment_and_their_median() -> None:
    rng = np.random.default_rng(5)
    counts = rng.integers(1, 7, 40)  # odd and even numbers of runs, one run included
    rows = np.repeat(np.arange(40), counts)
    runs = np.concatenate([rng.permutation(count) for count in counts])
    values = rng.lognormal(-12, 0.5, rows.size)
    shuffle = rng.permutation(rows.size)
    medians = RunMedians.from_frame(rows[shuffle], runs[shuffle], values[shuffle], 40)
    for row in range(40):
        mine = rows == row
        expected = values[mine][np.argsort(runs[mine])]
        start, count = medians.start[row], medians.count[row]
        assert medians.values[start : start + count].tolist() == expected.tolist()
        assert medians.runs[start : start + count].tolist() == list(range(count))
        assert medians.median[row] == np.median(values[mine])
