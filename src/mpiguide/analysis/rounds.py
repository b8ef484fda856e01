"""The rounds of an adaptive campaign (docs/workflow.md, "Adaptive campaigns").

Round 0 measures every experiment in the first look's runs; round r (r >= 1) the runs from look
r - 1 up to look r, of only the experiments that some open test still needs. After each round
every test is decided at its looks from all runs measured so far (guidelines.evaluate_looks),
and the round's plan names what the next round measures; the campaign ends when no test is open
or the last look is reached.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mpiguide.analysis.analysis_types import AnalysisOptions, Guideline
from mpiguide.analysis.guidelines import evaluate_looks, read_medians
from mpiguide.analysis.pairing import split_pair
from mpiguide.analysis.sequential import OPEN, STOP, STOPS, Looks
from mpiguide.analysis.verdicts import VERDICTS
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import deployment_name


def round_runs(looks: Looks, round_number: int) -> range:
    """The run indices round `round_number` measures (0-based, below the look it ends at)."""
    start = 0 if round_number == 0 else looks.runs[round_number - 1]
    return range(start, looks.runs[round_number])


def needed_experiments(
    tests: pd.DataFrame, entries: Sequence[str], blocking: bool
) -> list[dict[str, Any]]:
    """The experiments of every open test, both sides, as `{mpi, nodes, ppn, exp_ids}` per
    entry and deployment (sorted). Under blocking every entry of a deployment measures the
    union of the deployment's needs: a block launches every entry on the same input rows."""
    open_tests = tests[tests[STOP] == OPEN]
    needs: dict[tuple[str, int, int], set[int]] = {}
    for side, exp_column in ((0, "lhs_exp_id"), (1, "rhs_exp_id")):
        sides = {
            key: open_tests[key].astype(str).map(lambda cell, s=side: split_pair(cell)[s])
            for key in ("mpi", "nodes", "ppn")
        }
        frame = pd.DataFrame({**sides, "exp_id": open_tests[exp_column].astype(int)})
        for (mpi, nodes, ppn), part in frame.groupby(["mpi", "nodes", "ppn"], sort=False):
            needs.setdefault((mpi, int(nodes), int(ppn)), set()).update(part["exp_id"].tolist())
    if blocking:
        by_deployment: dict[tuple[int, int], set[int]] = {}
        for (_, nodes, ppn), exp_ids in needs.items():
            by_deployment.setdefault((nodes, ppn), set()).update(exp_ids)
        needs = {
            (mpi, nodes, ppn): exp_ids
            for (nodes, ppn), exp_ids in by_deployment.items()
            for mpi in entries
        }
    return [
        {"mpi": mpi, "nodes": nodes, "ppn": ppn, "exp_ids": sorted(exp_ids)}
        for (mpi, nodes, ppn), exp_ids in sorted(needs.items())
    ]


def plan_round(
    medians_parquet: str | Path,
    guidelines: Sequence[Guideline],
    options: AnalysisOptions,
    looks: Looks,
    round_number: int,
    entries: Sequence[str],
    blocking: bool,
    out: str | Path,
) -> dict[str, Any]:
    """Decide every test from the runs measured through round `round_number` and write the
    round's plan (JSON): the verdict and stop counts, whether the campaign is done, and what
    the next round measures (`next_runs`, `measure`)."""
    tests = evaluate_looks(
        read_medians(Path(medians_parquet)), guidelines, options, looks, str(medians_parquet)
    )
    last = round_number >= looks.count - 1
    measure = [] if last else needed_experiments(tests, entries, blocking)
    next_runs = None if not measure else round_runs(looks, round_number + 1)
    plan = {
        "round": round_number,
        "tests": len(tests),
        "verdicts": {v: int((tests["verdict"] == v).sum()) for v in VERDICTS},
        "stops": {stop: int((tests[STOP] == stop).sum()) for stop in STOPS},
        "done": not measure,
        "next_runs": None if next_runs is None else [next_runs.start, next_runs.stop],
        "measure": measure,
    }
    with atomic_path(out) as temporary:
        temporary.write_text(json.dumps(plan, indent=1) + "\n")
    return plan


def read_plan(path: str | Path) -> dict[str, Any]:
    """A round's plan as plan_round wrote it."""
    result: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return result


def planned_exp_ids(plan: Mapping[str, Any], mpi: str, nodes: int, ppn: int) -> list[int]:
    """The experiments a round's plan has the next round measure for one entry and deployment."""
    for item in plan["measure"]:
        if (item["mpi"], item["nodes"], item["ppn"]) == (mpi, nodes, ppn):
            return list(item["exp_ids"])
    raise DataError(
        f"round {plan['round']}'s plan measures nothing of {mpi} on "
        f"{deployment_name(nodes, ppn)} in the next round"
    )
