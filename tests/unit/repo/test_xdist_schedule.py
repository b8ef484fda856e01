"""The xdist scheduler of `make test` (tests/xdist_schedule.py), driven with two fake workers:
every SLURM test goes to one worker as one unit, other files stay whole, longest units first."""

from __future__ import annotations

from typing import Any

import pytest

from xdist_schedule import (
    SLURM_PACKAGE,
    TESTED_XDIST,
    rank,
    scheduler,
    xdist_changed_message,
    xdist_changes,
)

pytest.importorskip("xdist")

COLLECTION = [
    "tests/unit/test_a.py::test_one",
    "tests/unit/test_a.py::test_two",
    "tests/slurm/test_cluster.py::test_start",
    "tests/slurm/test_cluster.py::test_job",
    "tests/kernel/test_k.py::test_k",
    "tests/slurm/test_campaign.py::test_runs",
    "tests/workflow/test_w.py::test_w",
    "tests/slurm/test_failures.py::test_timeout",
]


class Config:
    """What the scheduler reads of pytest's config: two local workers."""

    option = type("Option", (), {"loadscopereorder": True})()

    def getvalue(self, name: str) -> Any:
        return {"tx": ["2*popen"]}[name]


class Worker:
    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_slurm_tests_are_one_unit_and_go_first() -> None:
    schedule = scheduler(Config(), None)
    workers = [Worker("gw0"), Worker("gw1")]
    for worker in workers:
        schedule.add_node(worker)
        schedule.add_node_collection(worker, COLLECTION)
    schedule.schedule()
    # All SLURM tests, in collection order, and nothing else while they run.
    assert [COLLECTION[i] for i in workers[0].sent] == [
        nodeid for nodeid in COLLECTION if nodeid.startswith(SLURM_PACKAGE)
    ]
    # A worker with at most two tests to go gets the next unit: here at once.
    assert [COLLECTION[i] for i in workers[1].sent] == [
        "tests/workflow/test_w.py::test_w",
        "tests/kernel/test_k.py::test_k",
    ]
    for index in list(workers[1].sent):
        schedule.mark_test_complete(workers[1], index)
    assert [COLLECTION[i] for i in workers[1].sent[2:]] == [
        "tests/unit/test_a.py::test_one",
        "tests/unit/test_a.py::test_two",
    ]


def test_rank_orders_the_directories_longest_first() -> None:
    order = ["tests/slurm/", "tests/workflow/t.py", "tests/faults/t.py", "tests/unit/t.py"]
    assert sorted(reversed(order), key=rank) == order


def test_xdist_has_what_the_scheduler_overrides() -> None:
    """The private names of xdist's LoadFileScheduling the scheduler relies on (the test above
    proves what it does with them)."""
    from xdist.scheduler import LoadFileScheduling

    changed = xdist_changes(LoadFileScheduling, LoadFileScheduling(Config(), None))
    assert not changed, xdist_changed_message(changed)


def test_a_changed_xdist_is_named_with_the_version_tested() -> None:
    class Gone:
        def _split_scope(self, scope: str) -> str:
            return scope

    (split, assign, queue) = xdist_changes(Gone, Gone())
    assert split == "LoadFileScheduling._split_scope(nodeid)"
    assert assign == "LoadFileScheduling._assign_work_unit(node)"
    assert queue == "LoadFileScheduling.workqueue (an OrderedDict)"
    assert f"tested with pytest-xdist {TESTED_XDIST}" in xdist_changed_message([split])
