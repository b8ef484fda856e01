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
"""

from __future__ import annotations

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

    return SlurmOnceLoadFile(config, log)
