"""The launches of a campaign, (mpi, nodes, ppn, run) each, and the files the workflow keeps per
launch and per block.

A fixed campaign launches every run at once. An adaptive one (`runs: {min, max, step}`)
measures in rounds: round 0 is the first look's runs of every entry and deployment, each later
round what the plan of the round before had it measure, until a plan ends the campaign. The
plans exist only once their rounds ran (Snakemake's checkpoints): `plan_of(number)` reads the
plan round `number` ends with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mpiguide.analysis.rounds import round_runs
from mpiguide.campaign.checked import Campaign
from mpiguide.core.paths import (
    BLOCK_RECORD_SUFFIX,
    BLOCKS_TREE,
    RAW_TREE,
    ROUNDS_TREE,
    RUN_PATH,
    block_path,
    round_name,
    run_file,
)

Launch = tuple[str, int, int, int]
PlanOf = Callable[[int], Mapping[str, Any]]


def last_round(campaign: Campaign) -> int:
    """The last round a campaign can have (0 for a fixed campaign)."""
    return campaign.looks.count - 1


def campaign_launches(campaign: Campaign, through: int, plan_of: PlanOf) -> list[Launch]:
    """Every launch through round `through` (or the round whose plan ends the campaign).

    Through the last round, an adaptive campaign also keeps the runs measured before that its
    plans no longer name: a plan re-decided after an analysis change may end the campaign sooner
    or leave an entry out, and the verdicts use those runs too.
    """
    launches = [
        (mpi, d["nodes"], d["ppn"], run)
        for mpi in campaign.mpi
        for d in campaign.config["deployments"]
        for run in round_runs(campaign.looks, 0)
    ]
    for number in range(1, through + 1):
        plan = plan_of(number - 1)
        if plan["done"]:
            break
        launches += [
            (item["mpi"], item["nodes"], item["ppn"], run)
            for item in plan["measure"]
            for run in range(*plan["next_runs"])
        ]
    if campaign.looks.adaptive and through == last_round(campaign):
        named = set(launches)
        launches += [launch for launch in measured_launches(campaign) if launch not in named]
    return launches


def measured_launches(campaign: Campaign) -> list[Launch]:
    """Every raw run with its provenance on disk, of an entry and a deployment of the campaign."""
    raw = Path(campaign.results, RAW_TREE)
    deployments = {(d["nodes"], d["ppn"]) for d in campaign.config["deployments"]}
    found = []
    for provenance in sorted(raw.glob("*/*/run*.json")):
        match = RUN_PATH.match(provenance.relative_to(raw).with_suffix("").as_posix())
        if match is None or not provenance.with_suffix(".csv").is_file():
            continue
        launch = (match["mpi"], int(match["nodes"]), int(match["ppn"]), int(match["run"]))
        if launch[0] in campaign.mpi and launch[1:3] in deployments:
            found.append(launch)
    return found


def launch_files(
    campaign: Campaign, tree: str, suffix: str, launches: Iterable[Launch]
) -> list[str]:
    """Each launch's file of `tree` (INPUTS_TREE, RAW_TREE) below the campaign's results."""
    return [run_file(campaign.results, tree, *launch, suffix) for launch in launches]


def blocks_dir(campaign: Campaign) -> str:
    return f"{campaign.results}/{BLOCKS_TREE}"


def block_record(campaign: Campaign, nodes: int, ppn: int, run: int) -> str:
    """The record of one block: its launches, attempts and interference."""
    return f"{blocks_dir(campaign)}/{block_path(nodes, ppn, run)}{BLOCK_RECORD_SUFFIX}"


def block_records(campaign: Campaign, launches: Iterable[Launch]) -> list[str]:
    """The record of every block the launches make up (none without blocking)."""
    if campaign.blocking != "run":
        return []
    blocks = dict.fromkeys((nodes, ppn, run) for _, nodes, ppn, run in launches)
    return [block_record(campaign, *block) for block in blocks]


def round_plan(campaign: Campaign, number: int) -> str:
    """The plan round `number` of an adaptive campaign ends with."""
    return f"{campaign.results}/{ROUNDS_TREE}/{round_name(number)}.json"


def plan_round_of_run(campaign: Campaign, run: int) -> int | None:
    """The round whose plan a run's input takes its experiments from: the round before the
    run's; None for a run of round 0 or of a fixed campaign."""
    if not campaign.looks.adaptive:
        return None
    before = int(campaign.looks.reached(np.asarray(run)))
    return None if before < 0 else before
