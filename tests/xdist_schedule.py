"""How `pytest -n 2 --dist loadfile` (make check, make test) hands the suite to its workers: one
test file at a time, as xdist's loadfile does, except that the whole SLURM package is one unit
and that the longest units go first.

- tests/slurm/ is one unit: there is one test cluster (tests/slurm/cluster.sh) on this machine,
  its package fixture starts and stops it, and its tests must never run in two workers at once.
  The unit is chosen by path: tests/conftest.py refuses a `slurm` test outside tests/slurm/.
  (xdist's `--dist loadgroup` would be the natural tool, but xdist 3.8 tags a group onto
  `item._nodeid`, which pytest 9 no longer reads: the groups are silently ignored.)
- Units are handed out longest first (by directory, a static estimate), so that neither worker
  is left with the SLURM package or a Snakemake file when the other has run out of work; a
  worker gets its next unit when the one it runs is nearly done, so the short unit tests at the
  end fill the gaps.

Both override private names of xdist's LoadFileScheduling (XDIST_INTERNALS), which only this
file uses: tests/unit/test_xdist_schedule.py holds them against the installed xdist, and a run
whose xdist lacks one stops naming it and the version tested with (TESTED_XDIST).
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from importlib.metadata import version
from typing import Any

SLURM_PACKAGE = "tests/slurm/"
# Directories from longest per file (SLURM jobs and time limits, Snakemake campaigns, Snakemake
# with real ranks) to shortest; files elsewhere come after these.
LONGEST_FIRST = (
    SLURM_PACKAGE,
    "tests/workflow/",
    "tests/faults/",
    "tests/bad_inputs/",
    "tests/install/",
    "tests/kernel/",
    "tests/inject/",
)


# The pytest-xdist minor version the scheduler was tested with, and the private names of its
# LoadFileScheduling it relies on: the two methods it overrides (their parameters) and the queue
# of units it orders (scope -> tests, handed out from its front).
TESTED_XDIST = "3.8"
XDIST_INTERNALS = {
    "_split_scope": ("self", "nodeid"),
    "_assign_work_unit": ("self", "node"),
}
XDIST_QUEUE = "workqueue"


def xdist_changes(scheduling: Any, instance: Any) -> list[str]:
    """What of XDIST_INTERNALS the class `scheduling` and its `instance` lack or changed."""
    changed = []
    for name, parameters in XDIST_INTERNALS.items():
        method = getattr(scheduling, name, None)
        if method is None or tuple(inspect.signature(method).parameters) != parameters:
            changed.append(f"LoadFileScheduling.{name}({', '.join(parameters[1:])})")
    if not isinstance(getattr(instance, XDIST_QUEUE, None), OrderedDict):
        changed.append(f"LoadFileScheduling.{XDIST_QUEUE} (an OrderedDict)")
    return changed


def xdist_changed_message(changed: list[str]) -> str:
    return (
        f"tests/xdist_schedule.py: pytest-xdist {version('pytest-xdist')} changed "
        f"{', '.join(changed)}, which the `--dist loadfile` scheduler overrides (tested with "
        f"pytest-xdist {TESTED_XDIST}): run with another --dist mode, or adapt the scheduler"
    )


def rank(scope: str) -> int:
    for position, directory in enumerate(LONGEST_FIRST):
        if scope.startswith(directory):
            return position
    return len(LONGEST_FIRST)


def scheduler(config: Any, log: Any) -> Any:
    """xdist's loadfile scheduler with tests/slurm/ as one unit and the longest units first
    (xdist is imported here only: a run without it never gets here)."""
    from xdist.scheduler import LoadFileScheduling

    class SlurmOnceLoadFile(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(SLURM_PACKAGE):
                return SLURM_PACKAGE
            return super()._split_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # The queue is complete before the first unit leaves it: order it once, stably
            # (units of one directory keep xdist's order, most tests first).
            if not self.ordered:
                for scope in sorted(self.workqueue, key=rank):
                    self.workqueue.move_to_end(scope)
                self.ordered = True
            super()._assign_work_unit(node)

    schedule = SlurmOnceLoadFile(config, log)
    changed = xdist_changes(LoadFileScheduling, schedule)
    if changed:
        import pytest

        raise pytest.UsageError(xdist_changed_message(changed))
    return schedule
