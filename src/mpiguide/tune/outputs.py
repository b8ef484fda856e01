"""From verdict to fix: the library's own algorithms that beat its default, as settings it reads.

Input: tests.csv (the guidelines `ALGO.<entry>.<op>.<algorithm>` that mpiguide.campaign.expansion
adds: the library's choice ≼ that algorithm, in the same launches; an Intel MPI preset across
launches, paired block by block) and the settings behind them. A collective is tuned at a
communicator size and message size only where an algorithm beats the default significantly — its
ALGO test is `violated` (at `analysis.tuning`'s p_thres and v_thres) in every test at that size —
and then the fastest such algorithm is chosen; everywhere else the default stays.

Outputs (mpiguide.core.paths names them):
- algorithms.csv: Hunold 2023 (MPINPC) Figure 5's view, each algorithm's median against the
  default per collective, deployment and size, with its test's ratio, bounds and verdict;
- per Open MPI entry an Open MPI 4.1 dynamic rules file (coll_tuned_dynamic_rules_filename);
- per Intel MPI entry its I_MPI_ADJUST_<OP> variables, one preset per collective for every call
  (mpiguide.tune.intelmpi_settings);
- per MPICH entry the cvar settings (MPICH reads one algorithm per collective for every size)
  and, where something is tuned, MPICH 4.0.2's JSON collective selection, which chooses per
  communicator size and message-size range (mpiguide.tune.mpich_selection);
- per mpi entry a tuning file for libmpiguide-tune, where a mock-up beats the collective
  (mpiguide.tune.mockup_rules);
- tuning.md: one decision line per point measured and per mock-up rule (the choice, its
  speedup with its bounds and their levels, the file; or the default kept, settled or not),
  then what could not be tuned and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mpiguide.analysis.analysis_types import Decisions
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import DataError
from mpiguide.core.paths import (
    ALGORITHMS_CSV,
    TUNING_MD,
    mockup_tuning_name,
    mpich_env_name,
    mpich_selection_name,
)
from mpiguide.reports.junit import read_tests
from mpiguide.tune.applied import settings_file
from mpiguide.tune.choose import Choice, Untunable, algorithm_rows, choices
from mpiguide.tune.intelmpi_settings import intelmpi_env
from mpiguide.tune.library_algorithms import AlgorithmSetting
from mpiguide.tune.mockup_rules import (
    Replacement,
    mockup_tests,
    not_replaced,
    replacements,
    tuning_file,
)
from mpiguide.tune.mpich_settings import mpich_env, mpich_selection_file, selection_use
from mpiguide.tune.ompi_rules import ompi_rules
from mpiguide.tune.tuning_md import other_violations, tuning_md


@dataclass(frozen=True)
class Tuned:
    """What `tune` applied: library algorithms (rules files, cvars) and mock-ups
    (libmpiguide-tune)."""

    algorithms: list[Choice]
    mockups: list[Replacement]


def _write(path: Path, text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


# The libraries whose settings are one file (applied.settings_file names it): what writes it,
# returning its text, the choices it applies and the ones it cannot.
_SettingsWriter = Callable[[str, Sequence[Choice]], tuple[str, list[Choice], list[Untunable]]]
_ONE_FILE: dict[str, _SettingsWriter] = {"openmpi": ompi_rules, "intelmpi": intelmpi_env}


def _library_tuning(
    outdir: Path, base: str, library: str, picks: Sequence[Choice]
) -> tuple[list[Choice], list[Untunable], dict[tuple[str, str], str]]:
    """Write one swept entry's settings for its library; return the choices they apply, what
    none of them can, and per (entry, op) the files that apply it."""
    if library in _ONE_FILE:
        name = settings_file(library, base)
        text, done, cannot = _ONE_FILE[library](base, picks)
        _write(outdir / name, text)
        return done, cannot, {(c.base, c.op): name for c in done}
    env_name, json_name = mpich_env_name(base), mpich_selection_name(base)
    text, by_cvar, cannot_cvar = mpich_env(base, picks)
    selection, by_size, cannot_json = mpich_selection_file(base, picks)
    (outdir / json_name).unlink(missing_ok=True)
    if selection is not None:
        _write(outdir / json_name, selection)
        text += selection_use(json_name, by_size, by_cvar)
    _write(outdir / env_name, text)
    files = {(c.base, c.op): json_name for c in by_size}
    for c in by_cvar:
        files[(c.base, c.op)] = env_name if (c.base, c.op) not in files else (
            f"{env_name} or {json_name}"
        )  # fmt: skip
    by_cvar_ops = {(c.base, c.op) for c in by_cvar}
    applied = [*by_cvar, *(c for c in by_size if (c.base, c.op) not in by_cvar_ops)]
    cannot = [u for u in [*cannot_cvar, *cannot_json] if (u.base, u.op) not in files]
    return applied, cannot, files


def tune(
    tests_csv: str | Path,
    decided_with: str | Path,
    settings: Mapping[str, AlgorithmSetting],
    outdir: str | Path,
    entries: Sequence[str] | None = None,
) -> Tuned:
    """Write algorithms.csv, a rules, cvar or I_MPI_ADJUST file per swept entry, a
    libmpiguide-tune file per entry of `entries` (default: every entry with a mock-up test) and
    tuning.md; return what was applied."""
    tests = read_tests(Path(tests_csv))
    options = Decisions.read(Path(decided_with)).options
    mockups = mockup_tests(tests)
    if not settings and mockups.empty:
        raise DataError(
            "no mpi entry of this campaign sweeps its library's algorithms (`algorithms:` in an "
            "mpi entry, docs/config.md), and no guideline compares a collective with its own "
            "mock-up: there is nothing to tune from"
        )
    figure5 = algorithm_rows(tests, settings)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    with atomic_path(outdir / ALGORITHMS_CSV) as temporary:
        figure5.to_csv(temporary, index=False)
    picks = choices(figure5, settings)
    applied: list[Choice] = []
    untunable: list[Untunable] = []
    files: dict[tuple[str, str], str] = {}
    for base, library in sorted({(s.base, s.library) for s in settings.values()}):
        done, cannot, written = _library_tuning(outdir, base, library, [
            c for c in picks if c.base == base
        ])  # fmt: skip
        applied += done
        untunable += cannot
        files.update(written)
    if entries is None:
        entries = sorted(set(mockups["entry"]))
    replaced = replacements(mockups[mockups["entry"].isin(entries)])
    mockup_files = {entry: mockup_tuning_name(entry) for entry in entries}
    for entry, name in mockup_files.items():
        _write(outdir / name, tuning_file(entry, replaced))
    algo_ids = {s.guideline for s in settings.values()}
    other = other_violations(tests, algo_ids, mockups)
    missed = not_replaced(mockups, replaced, entries)
    libraries = {s.base: s.library for s in settings.values()}
    note = tuning_md(picks, applied, untunable, files, replaced, missed, mockup_files,
                     not mockups.empty, other, options, libraries)  # fmt: skip
    _write(outdir / TUNING_MD, note)
    return Tuned(applied, replaced)
