"""From verdict to choice: per swept entry, collective, ranks and message size, the library's own
algorithm that beats its default significantly, if any.

Input: tests.csv's guidelines `ALGO.<entry>.<op>.<algorithm>` (mpiguide.campaign.expansion adds
them: the library's choice ≼ that algorithm, both measured in the same launches; Intel MPI's
preset in an mpi entry of its own, the library's choice in that entry's launches against the
swept entry's, paired block by block) and the settings behind them. A test's medians are its two
sides', whichever rows they pair. A collective is tuned at a communicator size and message size
only where an algorithm beats the default significantly — its ALGO test is `violated` (at
`analysis.tuning`'s p_thres and v_thres) in every test at that size — and then the fastest such
algorithm is chosen; everywhere else the default stays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from mpiguide.analysis.verdicts import UNDECIDED, VIOLATED
from mpiguide.core.values import LIBRARY_CHOICE
from mpiguide.plan.grid import PARAMETERS
from mpiguide.tune.library_algorithms import Algorithm, AlgorithmSetting

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
    "low_level",
    "high_level",
    "verdict",
    "test",
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
    # the one-sided levels of `low` and `high` (tests.csv's low_level, high_level); NaN where
    # algorithms.csv does not record them
    low_level: float = float("nan")
    high_level: float = float("nan")
    # every algorithm measured there with its verdict over the point's tests (point_verdict)
    verdicts: tuple[tuple[str, str], ...] = ()
    # the tests that decided them there (tests.csv's `test`); empty where not recorded
    tests: tuple[str, ...] = ()


def _number(text: object) -> float:
    return float(str(text)) if str(text) not in ("", "nan") else float("nan")


def algorithm_rows(tests: pd.DataFrame, settings: Mapping[str, AlgorithmSetting]) -> pd.DataFrame:
    """Figure 5's view: one row per ALGO test; `speedup` is the default's time over the
    algorithm's (the test's violation_ratio), `verdict` the test's (violated: the algorithm is
    faster than the default by its test)."""
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
                "low_level": _number(record.get("low_level", "")),
                "high_level": _number(record.get("high_level", "")),
                "verdict": record["verdict"],
                "test": record.get("test", ""),
                **{
                    p: record[p]
                    for p in PARAMETERS
                    if p not in ("op", "msg_size", "algorithm") and p in record and record[p] != ""
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


# An algorithm's verdict over the tests at one point, where they disagree: violated in some
# tests and holds in the others (none undecided).
MIXED = "mixed"


def point_verdict(verdicts: pd.Series) -> str:
    """One algorithm's verdict over its tests at one (entry, collective, ranks, msg_size): theirs
    where they agree, undecided where one is, else MIXED."""
    found = set(verdicts)
    if len(found) == 1:
        return str(found.pop())
    return UNDECIDED if UNDECIDED in found else MIXED


def _fastest(group: pd.DataFrame) -> tuple[str, pd.Series] | None:
    """Of the ALGO tests at one (entry, collective, ranks, msg_size): the algorithm that beats
    the default in every test there with the largest smallest speedup, and that test."""
    best: tuple[str, pd.Series] | None = None
    for algorithm, tests in group.groupby("algorithm", sort=True):
        if point_verdict(tests["verdict"]) != VIOLATED:
            continue
        worst = tests.loc[tests["speedup"].idxmin()]
        if best is None or worst["speedup"] > best[1]["speedup"]:
            best = (str(algorithm), worst)
    return best


def _points(figure5: pd.DataFrame) -> Iterator[tuple[tuple[Any, ...], pd.DataFrame]]:
    """Figure 5's rows by (entry, collective, ranks, msg_size)."""
    frame = figure5.assign(ranks=figure5["nodes"] * figure5["ppn"])
    yield from frame.groupby(["mpi", "op", "ranks", "msg_size"], sort=True, dropna=False)


def choices(figure5: pd.DataFrame, settings: Mapping[str, AlgorithmSetting]) -> list[Choice]:
    """Per entry, collective, ranks and msg_size: the fastest algorithm that beats the default
    in every test there (all deployments of that many ranks, every other parameter), judged by
    its smallest speedup; None where none does."""
    by_name = {(s.base, s.op, s.algorithm.name): s for s in settings.values()}
    found = []
    for (base, op, ranks, size), group in _points(figure5):
        point = (str(base), str(op), int(ranks), _size(size))
        verdicts = tuple(
            (str(algorithm), point_verdict(tests["verdict"]))
            for algorithm, tests in group.groupby("algorithm", sort=True)
        )
        tests = _tests(group)
        best = _fastest(group)
        if best is None:
            found.append(Choice(*point, None, verdicts=verdicts, tests=tests))
            continue
        algorithm, worst = best
        found.append(
            Choice(
                *point, by_name[(str(base), str(op), algorithm)],
                float(worst["speedup"]), float(worst["speedup_low"]),
                float(worst["speedup_high"]),
                _number(worst.get("low_level", "")), _number(worst.get("high_level", "")),
                verdicts, tests,
            )
        )  # fmt: skip
    return found


def _tests(group: pd.DataFrame) -> tuple[str, ...]:
    """The tests that decided a point's rows (an algorithms.csv without the column: none)."""
    if "test" not in group.columns:
        return ()
    return tuple(sorted({str(test) for test in group["test"].dropna() if str(test)}))


def figure5_settings(figure5: pd.DataFrame) -> dict[str, AlgorithmSetting]:
    """The settings behind algorithms.csv read back, by guideline id: what names an algorithm
    (not its fan-in/out and segment size, which a rules file needs)."""
    settings = {}
    for row in figure5[["mpi", "library", "op", "algorithm", "number"]].to_dict("records"):
        number = None if pd.isna(row["number"]) or row["number"] == "" else int(row["number"])
        setting = AlgorithmSetting(
            str(row["mpi"]), str(row["library"]), str(row["op"]),
            Algorithm(str(row["algorithm"]), number),
        )  # fmt: skip
        settings[setting.guideline] = setting
    return settings


def chosen_algorithms(figure5: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """Per (entry, collective): the algorithms `choices` picks somewhere (algorithms.csv read
    back), sorted; only pairs with a choice."""
    chosen: dict[tuple[str, str], set[str]] = {}
    for (base, op, _, _), group in _points(figure5):
        best = _fastest(group)
        if best is not None:
            chosen.setdefault((str(base), str(op)), set()).add(best[0])
    return {key: sorted(names) for key, names in sorted(chosen.items())}


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


def one_for_all(
    base: str, picks: Sequence[Choice], why: Callable[[str], str]
) -> tuple[list[tuple[AlgorithmSetting, list[Choice]]], list[Untunable]]:
    """For a setting that selects one algorithm for every call of a collective (an MPICH cvar,
    an Intel MPI preset): per collective of one entry's `picks` the algorithm chosen at every
    point measured, with those points; and the collectives chosen for somewhere but not
    everywhere, untunable for `why(names chosen, the default among them)`."""
    found: list[tuple[AlgorithmSetting, list[Choice]]] = []
    untunable: list[Untunable] = []
    for op in sorted({c.op for c in picks}):
        mine = [c for c in picks if c.op == op]
        names = sorted({c.setting.algorithm.name if c.setting else LIBRARY_CHOICE for c in mine})
        if names == [LIBRARY_CHOICE]:
            continue
        setting = mine[0].setting
        if len(names) > 1 or setting is None:
            untunable.append(Untunable(base, op, None, why(", ".join(names))))
        else:
            found.append((setting, mine))
    return found, untunable


def _same(a: Choice | None, b: Choice | None) -> bool:
    name_a = a.setting.algorithm.name if a and a.setting else None
    name_b = b.setting.algorithm.name if b and b.setting else None
    return name_a == name_b
