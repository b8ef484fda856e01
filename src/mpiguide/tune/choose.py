"""From verdict to choice: per swept entry, collective, ranks and message size, the library's own
algorithm that beats its default significantly, if any.

Input: tests.csv's guidelines `ALGO.<entry>.<op>.<algorithm>` (mpiguide.tune.sweep adds them:
the library's choice ≼ that algorithm) and the settings behind them. A collective is tuned at a
communicator size and message size only where an algorithm beats the default significantly —
its ALGO test is `violated` (paired test, p ≤ p_thres and ratio ≥ v_thres) in every test at that
size — and then the fastest such algorithm is chosen; everywhere else the default stays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from mpiguide.plan.grid import PARAMETERS
from mpiguide.tune.library_algorithms import AlgorithmSetting

_TUNE_VERDICT = "violated"
FIGURE5_COLUMNS = (
    "mpi",
    "library",
    "op",
    "nodes",
    "ppn",
    "msg_size",
    "algorithm",
    "number",
    "median_s",
    "default_median_s",
    "speedup",
    "speedup_low",
    "speedup_high",
    "verdict",
)


@dataclass(frozen=True)
class Choice:
    """The decision at one (entry, collective, ranks, msg_size): an algorithm, or None (default)."""

    base: str
    op: str
    ranks: int
    msg_size: int | None
    setting: AlgorithmSetting | None
    speedup: float = 1.0
    low: float = 1.0
    high: float = 1.0


def _number(text: str) -> float:
    return float(text) if text not in ("", "nan") else float("nan")


def algorithm_rows(tests: pd.DataFrame, settings: Mapping[str, AlgorithmSetting]) -> pd.DataFrame:
    """Figure 5's view: one row per ALGO test; `speedup` is the default's time over the
    algorithm's (the test's violation_ratio), `verdict` the test's (violated: the algorithm is
    faster than the default by the paired test)."""
    by_guideline = {setting.guideline: setting for setting in settings.values()}
    mine = tests[tests["guideline"].isin(by_guideline)]
    rows = []
    for record in mine.to_dict("records"):
        setting = by_guideline[record["guideline"]]
        rows.append(
            {
                "mpi": setting.base,
                "library": setting.library,
                "op": setting.op,
                "nodes": int(record["nodes"]),
                "ppn": int(record["ppn"]),
                "msg_size": _size(record.get("msg_size", "")),
                "algorithm": setting.algorithm.name,
                "number": "" if setting.algorithm.number is None else setting.algorithm.number,
                "median_s": _number(record["median_rhs"]),
                "default_median_s": _number(record["median_lhs"]),
                "speedup": _number(record["violation_ratio"]),
                "speedup_low": _number(record["ratio_low"]),
                "speedup_high": _number(record["ratio_high"]),
                "verdict": record["verdict"],
                **{
                    p: record[p]
                    for p in PARAMETERS
                    if p not in ("op", "msg_size") and p in record and record[p] != ""
                },
            }
        )
    frame = pd.DataFrame(rows, columns=list(FIGURE5_COLUMNS))
    if rows:
        extra = [c for c in pd.DataFrame(rows).columns if c not in FIGURE5_COLUMNS]
        frame = pd.DataFrame(rows)[[*FIGURE5_COLUMNS, *extra]]
    frame["msg_size"] = frame["msg_size"].astype("Int64")
    order = ["mpi", "op", "nodes", "ppn", "msg_size", "algorithm"]
    return frame.sort_values(order, kind="stable").reset_index(drop=True)


def _size(value: Any) -> int | None:
    """A msg_size cell as an integer; None where it does not apply (barrier)."""
    if value is None or pd.isna(value) or value == "":
        return None
    return int(value)


def choices(figure5: pd.DataFrame, settings: Mapping[str, AlgorithmSetting]) -> list[Choice]:
    """Per entry, collective, ranks and msg_size: the fastest algorithm that beats the default
    in every test there (all deployments of that many ranks, every other parameter), judged by
    its smallest speedup; None where none does."""
    by_name = {(s.base, s.op, s.algorithm.name): s for s in settings.values()}
    found = []
    frame = figure5.assign(ranks=figure5["nodes"] * figure5["ppn"])
    for (base, op, ranks, size), group in frame.groupby(
        ["mpi", "op", "ranks", "msg_size"], sort=True, dropna=False
    ):
        best: Choice | None = None
        for algorithm, tests in group.groupby("algorithm", sort=True):
            if not (tests["verdict"] == _TUNE_VERDICT).all():
                continue
            worst = tests.loc[tests["speedup"].idxmin()]
            if best is None or worst["speedup"] > best.speedup:
                best = Choice(
                    str(base), str(op), int(ranks), _size(size),
                    by_name[(str(base), str(op), str(algorithm))],
                    float(worst["speedup"]), float(worst["speedup_low"]),
                    float(worst["speedup_high"]),
                )  # fmt: skip
        found.append(best or Choice(str(base), str(op), int(ranks), _size(size), None))
    return found


@dataclass(frozen=True)
class Untunable:
    base: str
    op: str
    ranks: int | None
    reason: str


RuleSize = Callable[[str, int | None, int], int | None]


def msg_rules(
    op: str, ranks: int, picks: Sequence[Choice], rule_size: RuleSize
) -> list[tuple[int, Choice | None]]:
    """(rule size, choice) from size 0 up: each measured size's choice holds from it up to the
    next measured size, the default below the smallest and above the largest. `rule_size`
    turns a measurement into the size the library looks up."""
    rules: list[tuple[int, Choice | None]] = [(0, None)]
    ordered = sorted(picks, key=lambda c: rule_size(op, c.msg_size, ranks) or 0)
    for pick in ordered:
        size = rule_size(op, pick.msg_size, ranks) or 0
        chosen = pick if pick.setting else None
        if rules[-1][0] == size:
            rules[-1] = (size, chosen)
        elif not _same(rules[-1][1], chosen):
            rules.append((size, chosen))
    if rules[-1][1] is not None:
        rules.append(((rule_size(op, ordered[-1].msg_size, ranks) or 0) + 1, None))
    return rules


def _same(a: Choice | None, b: Choice | None) -> bool:
    name_a = a.setting.algorithm.name if a and a.setting else None
    name_b = b.setting.algorithm.name if b and b.setting else None
    return name_a == name_b
