"""Two campaigns' verdicts side by side (`mpiguide diff A B`): per guideline which verdicts
changed, and per group the new violations, the fixed ones and the ratios that moved beyond
their confidence intervals.

A test of A and a test of B are the same test when they agree on the guideline and on every key
of tests.csv (deployment and parameters). Two campaigns whose tests cannot all be matched so are
refused, naming the first key whose values differ: a verdict compared with nothing would read
as fixed or new. With `mpi_a`/`mpi_b`, only the tests of that entry are taken from each side and
the entries are compared with each other (a library built from a change against the main build,
measured in one campaign); a guideline that selects one of the two entries by name (an
algorithm sweep's `ALGO.<entry>.…`) has tests on that side only: it is not compared, and the
markdown names it. Every guideline both entries have must match test for test.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from mpiguide.analysis.verdicts import VERDICTS, VIOLATED
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import GUIDELINES_TREE, TESTS_CSV
from mpiguide.reports.junit import case_name, key_columns, read_tests

# Per test: what changed from A to B, in the order the tables list them.
NEW_VIOLATION, FIXED, SLOWER, FASTER, SAME = "new_violation", "fixed", "slower", "faster", "same"
CHANGES = (NEW_VIOLATION, FIXED, SLOWER, FASTER, SAME)
VALUES = ("verdict", "violation_ratio", "ratio_low", "ratio_high", "p_adjusted")


def tests_csv_of(results: Path) -> Path:
    """A campaign's tests.csv: `results` is results/<campaign>/, its guidelines/ or the file."""
    for candidate in (results / GUIDELINES_TREE / TESTS_CSV, results / TESTS_CSV, results):
        if candidate.is_file():
            return candidate
    raise DataError(f"{results}: no {TESTS_CSV} (written by `mpiguide check`)")


def _side(tests: pd.DataFrame, mpi: str | None, name: str, source: Path) -> pd.DataFrame:
    if mpi is None:
        return tests
    chosen = tests.loc[tests["mpi"] == mpi]
    if chosen.empty:
        entries = ", ".join(sorted(set(tests["mpi"])))
        raise DataError(
            f"{source}: --mpi-{name} {mpi!r}: no test of that entry; entries: {entries}"
        )
    return chosen


def _first_difference(a: pd.DataFrame, b: pd.DataFrame, keys: list[str]) -> str:
    for key in ["guideline", *keys]:
        only_a = sorted(set(a[key]) - set(b[key]))
        only_b = sorted(set(b[key]) - set(a[key]))
        if only_a or only_b:
            shown = "; ".join(
                f"only in {side}: {', '.join(map(repr, values[:5]))}"
                for side, values in (("A", only_a), ("B", only_b))
                if values
            )
            return f"{key} differs ({shown})"
    return "the combinations of the keys differ"


@dataclass(frozen=True)
class Diff:
    """Per matched test its keys, group, both sides' values and `change`."""

    tests: pd.DataFrame
    keys: list[str]
    # entry pairs: per side (A, B) the guidelines only that entry has, not compared
    one_sided: tuple[list[str], list[str]] = ([], [])


def diff_tests(
    a: pd.DataFrame,
    b: pd.DataFrame,
    mpi_a: str | None = None,
    mpi_b: str | None = None,
    sources: tuple[Path, Path] = (Path("A"), Path("B")),
) -> Diff:
    """Match the tests of A and B and classify each (CHANGES)."""
    if (mpi_a is None) != (mpi_b is None):
        raise DataError("--mpi-a and --mpi-b go together: the entry of A compared with B's")
    a = _side(a, mpi_a, "a", sources[0])
    b = _side(b, mpi_b, "b", sources[1])
    one_sided: tuple[list[str], list[str]] = ([], [])
    if mpi_a is not None:
        only_a = sorted(set(a["guideline"]) - set(b["guideline"]))
        only_b = sorted(set(b["guideline"]) - set(a["guideline"]))
        one_sided = (only_a, only_b)
        a = a.loc[~a["guideline"].isin(only_a)]
        b = b.loc[~b["guideline"].isin(only_b)]
        # the two entries are the same side of each test: one label for both
        a, b = a.assign(mpi=f"{mpi_a}→{mpi_b}"), b.assign(mpi=f"{mpi_a}→{mpi_b}")
    keys = key_columns(a)
    if key_columns(b) != keys:
        missing = [k for k in keys if k not in b.columns] + [k for k in b.columns if k not in a]
        raise DataError(
            f"{sources[0]} and {sources[1]}: the grids cannot be matched: the keys differ "
            f"({', '.join(missing) or 'in order'})"
        )
    index = ["guideline", *keys]
    for side, frame, source in (("A", a, sources[0]), ("B", b, sources[1])):
        repeated = frame.duplicated(index)
        if repeated.any():
            raise DataError(f"{source}: a test is listed twice ({side}); not a tests.csv?")
    # A's order (tests.csv's: its guidelines as the campaign lists them), not the merge's
    ordered = a[[*index, "group", *VALUES]].assign(_order=range(len(a)))
    merged = ordered.merge(
        b[[*index, *VALUES]], on=index, how="outer", suffixes=("_a", "_b"), indicator=True
    )
    if (merged["_merge"] != "both").any():
        raise DataError(
            f"{sources[0]} and {sources[1]}: the grids cannot be matched: "
            + _first_difference(a, b, keys)
        )
    merged = merged.sort_values("_order", kind="stable").drop(columns=["_merge", "_order"])
    merged = merged.reset_index(drop=True)
    for side in ("a", "b"):
        for value in VALUES[1:]:
            merged[f"{value}_{side}"] = pd.to_numeric(merged[f"{value}_{side}"], errors="coerce")
    violated_a = merged["verdict_a"] == VIOLATED
    violated_b = merged["verdict_b"] == VIOLATED
    slower = merged["ratio_low_b"] > merged["ratio_high_a"]
    faster = merged["ratio_high_b"] < merged["ratio_low_a"]
    change = pd.Series(SAME, index=merged.index, dtype=object)
    change[faster] = FASTER
    change[slower] = SLOWER
    change[~violated_a & violated_b] = NEW_VIOLATION
    change[violated_a & ~violated_b] = FIXED
    merged["change"] = change
    return Diff(merged, keys, one_sided)


def counts(result: Diff) -> dict[str, int]:
    found = result.tests["change"].value_counts()
    return {change: int(found.get(change, 0)) for change in CHANGES}


# Per guideline (guideline_changes): its tests matched, how many changed verdict, each change
# of verdict with its count, then the count of each of CHANGES but `same`.
GUIDELINE_COLUMNS = ("guideline", "tests", "verdicts_changed", "verdict_changes",
                     *CHANGES[:-1])  # fmt: skip
ARROW = "→"
# CHANGES but `same` as the tables' headers say them
CHANGE_WORDS = tuple(change.replace("_", " ") for change in CHANGES[:-1])


def verdict_changes(tests: pd.DataFrame) -> str:
    """Each change of verdict among matched tests with its count, in VERDICTS order: `holds →
    violated 2, undecided → holds 1`; "" when none changed."""
    moved = tests.loc[tests["verdict_a"] != tests["verdict_b"]]
    found = moved.groupby(["verdict_a", "verdict_b"]).size()
    order = {verdict: index for index, verdict in enumerate(VERDICTS)}
    pairs = sorted(found.index, key=lambda pair: (order[pair[0]], order[pair[1]]))
    return ", ".join(f"{a} {ARROW} {b} {found[(a, b)]}" for a, b in pairs)


def guideline_changes(result: Diff) -> pd.DataFrame:
    """One row per guideline of a diff, in its order (A's: GUIDELINE_COLUMNS)."""
    rows = []
    for guideline, tests in result.tests.groupby("guideline", sort=False):
        found = tests["change"].value_counts()
        rows.append(
            {
                "guideline": guideline,
                "tests": len(tests),
                "verdicts_changed": int((tests["verdict_a"] != tests["verdict_b"]).sum()),
                "verdict_changes": verdict_changes(tests),
                **{change: int(found.get(change, 0)) for change in CHANGES[:-1]},
            }
        )
    return pd.DataFrame(rows, columns=list(GUIDELINE_COLUMNS))


def _number(value: float) -> str:
    return "" if pd.isna(value) else f"{value:.3g}"


def _cell(text: str) -> str:
    """Text for a markdown table cell (op pairs such as `a|b` hold the column separator)."""
    return text.replace("|", "\\|")


def guideline_table(result: Diff) -> list[str]:
    """The markdown table of guideline_changes: per guideline, which verdicts changed."""
    header = ["guideline", "tests", "verdicts changed", *CHANGE_WORDS]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for row in guideline_changes(result).to_dict("records"):
        changes = row["verdict_changes"]
        cells = [
            _cell(str(row["guideline"])),
            str(row["tests"]),
            f"{row['verdicts_changed']}" + (f": {changes}" if changes else ""),
            *(str(row[change]) for change in CHANGES[:-1]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(result: Diff, names: tuple[str, str]) -> str:
    """Per guideline which verdicts changed; then per guideline a row per group with a change:
    its tests that changed, A → B."""
    total = counts(result)
    lines = [
        f"# mpiguide diff: {names[0]} → {names[1]}",
        "",
        f"{len(result.tests)} tests matched: "
        + ", ".join(f"{total[change]} {change.replace('_', ' ')}" for change in CHANGES),
        "",
        *guideline_table(result),
        "",
        "A ratio moved (slower, faster) when its interval in B lies wholly above or below the"
        " one in A; each is the interval beside its verdict, the one that decided it (tests.csv's"
        " ratio_low, ratio_high).",
    ]
    for side, name, guidelines in zip("AB", names, result.one_sided, strict=True):
        if guidelines:
            lines += [
                "",
                f"Not compared, tested for {name} ({side}) only: " + ", ".join(guidelines) + ".",
            ]
    frame = result.tests
    keys = [k for k in result.keys if frame[k].astype(str).nunique() > 1]
    # the varied parameter: the keys that vary within a group name the test, the others the group
    within = frame.groupby(["guideline", "group"])[keys].nunique().max() if keys else None
    varied = [k for k in keys if within is not None and within[k] > 1]
    fixed = [k for k in keys if k not in varied]
    for guideline, rows in result.tests.groupby("guideline", sort=False):
        changed = rows.loc[rows["change"] != SAME]
        if changed.empty:
            continue
        lines += ["", f"## {guideline}", "", "| group | test | change | A | B |"]
        lines.append("|---|---|---|---|---|")
        for group, members in changed.groupby("group", sort=True):
            first = members.iloc[0].to_dict()
            label = _cell(f"{case_name(first, fixed, '')} (group {group})")
            for row in members.to_dict("records"):
                tested = _cell(", ".join(f"{k}={row[k]}" for k in varied))
                sides = [
                    f"{row[f'verdict_{s}']} {_number(row[f'violation_ratio_{s}'])}"
                    f" [{_number(row[f'ratio_low_{s}'])}, {_number(row[f'ratio_high_{s}'])}]"
                    for s in ("a", "b")
                ]
                lines.append(
                    f"| {label} | {tested or '-'} | {row['change']} | {sides[0]} | {sides[1]} |"
                )
                label = ""
    if all(n == 0 for change, n in total.items() if change != SAME):
        lines += ["", "No test changed."]
    return "\n".join(lines) + "\n"


def write_diff(result: Diff, names: tuple[str, str], csv: Path | None, md: Path | None) -> str:
    """Write the CSV (one row per matched test) and the markdown; return the markdown."""
    text = markdown(result, names)
    if csv is not None:
        with atomic_path(csv) as temporary:
            result.tests.to_csv(temporary, index=False)
    if md is not None:
        with atomic_path(md) as temporary:
            temporary.write_text(text)
    return text


def diff_campaigns(
    results_a: Path, results_b: Path, mpi_a: str | None = None, mpi_b: str | None = None
) -> Diff:
    """diff_tests of two campaigns' tests.csv (results/<campaign>/ or the files)."""
    csv_a, csv_b = tests_csv_of(results_a), tests_csv_of(results_b)
    return diff_tests(read_tests(csv_a), read_tests(csv_b), mpi_a, mpi_b, (csv_a, csv_b))
