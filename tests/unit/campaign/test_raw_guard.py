"""Measured runs are never replaced by an edit of the grid keys or the seed: the check the
workflow makes while it is read, against the options records of the measured runs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from snakemake.cli import get_profile_dir, parse_args

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.executor import read_command_line
from mpiguide.campaign.options_record import (
    OptionRecord,
    canonical_json,
    changed_records,
    record_path,
    write_missing_records,
    write_record,
)
from mpiguide.campaign.raw_guard import (
    GRID_RECORD,
    SEED_RECORD,
    SUPERSEDED_TREE,
    check_measured,
    measured_runs,
    planned_from,
    planning_changes,
    superseded_runs,
)
from mpiguide.core.errors import ConfigError

CONFIG: dict[str, Any] = {
    "campaign": "c",
    "seed": 7,
    "nrep": 5,
    "experiments": [
        {"op": ["neighbor_allgather", "neighbor_alltoall"], "topology": ["cart"]},
        {"op": ["allgather"], "msg_size": [8]},
    ],
    "remeasure": False,
}
RESULTS = Path("results") / "c"
RUNS = ("openmpi/1x2/run00", "openmpi/1x2/run01", "mpich/2x1/run00")


def campaign(**changes: Any) -> Campaign:
    config = copy.deepcopy(CONFIG)
    config.update(changes)
    return Campaign(config, AnalysisOptions.with_defaults(), "c.yaml")


def edited(edit: Any) -> Campaign:
    changed = campaign()
    edit(changed.config)
    return changed


@pytest.fixture
def measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[Path, bytes]:
    """A campaign's results as a complete invocation leaves them, in the working directory:
    the records of CONFIG, raw runs, their inputs, grid.csv and medians. Returns the bytes of
    every file below the results."""
    monkeypatch.chdir(tmp_path)
    planned = campaign()
    write_record(record_path(str(RESULTS), GRID_RECORD), canonical_json(planned.grid_spec()))
    write_record(record_path(str(RESULTS), SEED_RECORD), canonical_json(planned.config["seed"]))
    for run in RUNS:
        for tree, suffixes in (("raw", (".csv", ".json")), ("inputs", (".csv",))):
            for suffix in suffixes:
                path = RESULTS / tree / f"{run}{suffix}"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"{tree} {run}{suffix}\n")
    (RESULTS / "grid.csv").write_text("exp_id,op\n")
    (RESULTS / "medians.parquet").write_bytes(b"PAR1")
    return files_below(RESULTS)


def files_below(folder: Path) -> dict[Path, bytes]:
    return {
        path.relative_to(folder): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def keys(changed: Campaign) -> list[str]:
    return [change.key for change in planning_changes(RESULTS, changed)]


# -- which keys changed --------------------------------------------------------------------------


def test_the_config_the_runs_were_planned_with_changes_nothing(measured: dict) -> None:
    assert keys(campaign()) == []
    assert superseded_runs(campaign()) is None
    assert check_measured(campaign(), dry_run=False, announce=print) == ()
    assert files_below(RESULTS) == measured


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(lambda c: c.update(nrep=7), ["nrep"], id="nrep"),
        pytest.param(lambda c: c.update(seed=6), ["seed"], id="seed"),
        pytest.param(
            lambda c: c["experiments"][0]["op"].append("ineighbor_allgather"),
            ["experiments[0].op"],
            id="an op added",
        ),
        pytest.param(
            lambda c: c["experiments"][1].update(sync="barrier"),
            ["experiments[1].sync"],
            id="sync set",
        ),
        pytest.param(
            lambda c: c["experiments"].append({"op": ["bcast"]}), ["experiments[2]"], id="a block"
        ),
        pytest.param(lambda c: c["experiments"].pop(), ["experiments[1]"], id="a block removed"),
        pytest.param(lambda c: c.update(nrep=6, seed=1), ["nrep", "seed"], id="nrep and seed"),
    ],
)
def test_each_changed_key_is_named(measured: dict, edit: Any, expected: list[str]) -> None:
    assert keys(edited(edit)) == expected


def test_a_number_written_otherwise_is_a_change(measured: dict) -> None:
    # 8 and 8.0 are equal in Python, not as the record's text: the grid would be re-planned.
    changed = edited(lambda c: c["experiments"][1].update(msg_size=[8.0]))
    assert [str(change) for change in planning_changes(RESULTS, changed)] == [
        "experiments[1].msg_size [8] → [8.0]"
    ]


def test_a_where_with_markup_characters_is_planned_as_recorded(measured: dict) -> None:
    # The text a grid record has always held for such a `where` (published campaigns have one):
    # its runs are neither replaced nor stopped for.
    where = edited(lambda c: c["experiments"][1].update(where="msg_size < 16 and op != 'a&b'"))
    Path(record_path(str(RESULTS), GRID_RECORD)).write_text(
        '{"experiments":[{"op":["neighbor_allgather","neighbor_alltoall"],"topology":["cart"]},'
        '{"msg_size":[8],"op":["allgather"],"where":"msg_size < 16 and op != \'a&b\'"}],"nrep":5}'
    )
    assert keys(where) == []
    assert (
        changed_records(str(RESULTS), [OptionRecord.of(GRID_RECORD, where.grid_spec(), ())]) == []
    )


def test_options_that_do_not_plan_inputs_are_not_compared(measured: dict) -> None:
    changed = campaign(runs=20, deployments=[{"nodes": 4, "ppn": 2}], analysis={"p_thres": 0.1})
    assert keys(changed) == []


def test_a_missing_record_compares_nothing(measured: dict) -> None:
    Path(record_path(str(RESULTS), SEED_RECORD)).unlink()
    assert keys(campaign(seed=6, nrep=7)) == ["nrep"]


def test_an_unreadable_record_names_each_of_its_keys(measured: dict) -> None:
    Path(record_path(str(RESULTS), GRID_RECORD)).write_text("{not json")
    changes = planning_changes(RESULTS, campaign())
    assert [change.key for change in changes] == ["experiments", "nrep"]
    assert str(changes[1]) == "nrep unreadable → 5"


# -- which runs it would replace -------------------------------------------------------------


def test_measured_runs_are_the_raw_runs_only(measured: dict) -> None:
    (RESULTS / "raw" / "openmpi" / "1x2" / "run02.csv.tmp-123").write_text("partial")
    (RESULTS / "raw" / "notes.txt").write_text("")
    found = measured_runs(RESULTS)
    assert [path.relative_to(RESULTS / "raw").as_posix() for path in found] == sorted(
        f"{run}{suffix}" for run in RUNS for suffix in (".csv", ".json")
    )


def test_a_change_with_nothing_measured_just_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_record(record_path(str(RESULTS), GRID_RECORD), canonical_json(campaign().grid_spec()))
    assert superseded_runs(campaign(nrep=7)) is None
    assert check_measured(campaign(nrep=7), dry_run=False, announce=print) == ()


def started(planned: Campaign) -> list[str]:
    """What an invocation of `planned` writes as it starts, before its first job: the planning
    records that are missing (workflow/rules/options.smk)."""
    records = [
        OptionRecord.of(name, value, ()) for name, (_, value) in planned_from(planned).items()
    ]
    return write_missing_records(str(RESULTS), records)


def test_runs_measured_before_any_record_job_ran_are_guarded(measured: dict) -> None:
    # An invocation cut short, or one with other targets (`--until`, a single run), never runs
    # the record jobs: the records its start wrote guard the runs it measured.
    for name in (GRID_RECORD, SEED_RECORD):
        Path(record_path(str(RESULTS), name)).unlink()
    assert started(campaign()) == [
        record_path(str(RESULTS), GRID_RECORD),
        record_path(str(RESULTS), SEED_RECORD),
    ]
    with pytest.raises(ConfigError, match="seed 7 → 6"):
        check_measured(campaign(seed=6), dry_run=False, announce=print)


def test_runs_measured_again_after_remeasure_are_guarded_by_the_new_values(
    measured: dict,
) -> None:
    check_measured(campaign(seed=6, remeasure=True), False, print)
    started(campaign(seed=6))
    (RESULTS / "raw" / "openmpi" / "1x2").mkdir(parents=True)
    (RESULTS / "raw" / "openmpi" / "1x2" / "run00.csv").write_text("seed 6\n")
    assert check_measured(campaign(seed=6), dry_run=False, announce=print) == ()
    with pytest.raises(ConfigError, match="seed 6 → 5"):
        check_measured(campaign(seed=5), dry_run=False, announce=print)


def test_a_changed_record_waits_for_its_job_and_stops_until_then(measured: dict) -> None:
    # Runs measured from inputs planned again with a new seed, the invocation cut short before
    # the seed's record job ran: the old record stops the next invocation rather than let it
    # plan anything again; `remeasure` moves them aside.
    assert started(campaign(seed=6)) == []
    with pytest.raises(ConfigError, match="seed 7 → 6"):
        check_measured(campaign(seed=6), dry_run=False, announce=print)


def test_one_deleted_run_still_counts_the_others(measured: dict) -> None:
    (RESULTS / "raw" / "openmpi" / "1x2" / "run00.csv").unlink()
    superseded = superseded_runs(campaign(nrep=7))
    assert superseded is not None and superseded.count == 3


# -- the stop and the opt-in ---------------------------------------------------------------------


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_change_stops_naming_campaign_keys_and_choices(measured: dict, dry_run: bool) -> None:
    changed = edited(lambda c: (c.update(nrep=7), c["experiments"][0].update(sync="barrier")))
    with pytest.raises(ConfigError) as stop:
        check_measured(changed, dry_run=dry_run, announce=print)
    message = str(stop.value)
    assert message.startswith("c.yaml: campaign 'c' has 3 measured runs in results/c/raw/")
    assert 'experiments[0].sync not set → "barrier"; nrep 5 → 7. With' in message
    assert "give the changed campaign a new name (`campaign:`, or campaign=NAME" in message
    assert "keeping them in results/c/superseded/<UTC time>/" in message
    assert "\n        snakemake --config remeasure=True\n" in message
    assert "revert the change (experiments[0].sync: not set, nrep: 5)" in message
    assert files_below(RESULTS) == measured


def stop_message(changed: Campaign, argv: list[str], environment: dict[str, str]) -> str:
    """The stop of check_measured for Snakemake started with `argv` in `environment`."""
    command_line = read_command_line(argv, parse_args, get_profile_dir, environment)
    with pytest.raises(ConfigError) as stop:
        check_measured(changed, False, print, command_line)
    return str(stop.value)


def test_a_change_made_with_config_is_named_so(measured: dict) -> None:
    """Snakemake keeps only the last --config: the command shown keeps the entries given."""
    changed = edited(lambda c: (c.update(nrep=7), c["experiments"][0].update(sync="barrier")))
    argv = ["-j", "1", "--config", "nrep=7", "fail_on=never", "--cores", "2"]
    message = stop_message(changed, argv, {})
    assert message.startswith("c.yaml and --config: campaign 'c' has 3 measured runs")
    assert 'experiments[0].sync not set → "barrier"; nrep 5 → 7 (--config). With' in message
    assert (
        "\n        snakemake -j 1 --cores 2 --config nrep=7 fail_on=never remeasure=True\n"
    ) in message
    assert "revert the change (experiments[0].sync: not set, drop nrep=7 from --config)" in message


def test_a_make_demo_user_is_shown_a_make_command(measured: dict) -> None:
    """make cannot pass --config itself: the Makefile's demo target says how it is typed again
    (MPIGUIDE_COMMAND), and its SNAKEMAKE_ARGS reach both snakemake lines."""
    make = {"MPIGUIDE_COMMAND": "make demo SNAKEMAKE_ARGS="}
    message = stop_message(campaign(nrep=7), ["--cores", "2"], make)
    assert message.startswith("c.yaml: campaign 'c'")
    assert "\n        make demo SNAKEMAKE_ARGS='--config remeasure=True'\n" in message
    message = stop_message(campaign(nrep=7), ["--cores", "2", "--config", "nrep=7"], make)
    assert "\n        make demo SNAKEMAKE_ARGS='--config nrep=7 remeasure=True'\n" in message


def test_the_makefile_s_demo_target_says_how_it_is_typed() -> None:
    makefile = (Path(__file__).parents[3] / "Makefile").read_text()
    assert "demo: export MPIGUIDE_COMMAND = make demo SNAKEMAKE_ARGS=\n" in makefile
    demo = makefile.split("\ndemo: setup\n", 1)[1].split("\n\n", 1)[0]
    lines = [line for line in demo.splitlines() if "/snakemake " in line]
    assert len(lines) == 2 and all(line.endswith(" $(SNAKEMAKE_ARGS)") for line in lines)


def test_remeasure_moves_the_measured_runs_aside_kept(measured: dict) -> None:
    said: list[str] = []
    assert check_measured(campaign(seed=6, remeasure=True), False, said.append) == ("seed",)
    (kept,) = (RESULTS / SUPERSEDED_TREE).iterdir()
    assert said == [
        f"mpiguide: seed 7 → 6: moved the 3 measured runs of campaign 'c' to {kept}/ "
        "(remeasure); measuring them again"
    ]
    # Everything moved as it was, and the records the runs were planned with copied.
    assert files_below(kept) == measured
    assert not (RESULTS / "raw").exists() and not (RESULTS / "inputs").exists()
    assert not (RESULTS / "grid.csv").exists() and not (RESULTS / "medians.parquet").exists()
    # The planning records went with the runs: the invocation records the current values as it
    # starts, and the runs it measures again are guarded by them.
    assert not (RESULTS / "options" / "seed.json").exists()
    assert not (RESULTS / "options" / "grid.json").exists()


def test_remeasure_twice_keeps_both(measured: dict) -> None:
    check_measured(campaign(seed=6, remeasure=True), False, print)
    write_record(record_path(str(RESULTS), SEED_RECORD), "6")
    (RESULTS / "raw" / "openmpi" / "1x2").mkdir(parents=True)
    (RESULTS / "raw" / "openmpi" / "1x2" / "run00.csv").write_text("seed 6\n")
    check_measured(campaign(seed=5, remeasure=True), False, print)
    kept = sorted((RESULTS / SUPERSEDED_TREE).iterdir())
    assert len(kept) == 2
    assert {(folder / "options" / "seed.json").read_text() for folder in kept} == {"7", "6"}


def test_remeasure_in_a_dry_run_moves_nothing(measured: dict) -> None:
    said: list[str] = []
    assert check_measured(campaign(nrep=7, remeasure=True), True, said.append) == ("nrep",)
    assert files_below(RESULTS) == measured
    assert said == [
        "mpiguide: nrep 5 → 7: without -n, the 3 measured runs of campaign 'c' would move to "
        "results/c/superseded/<UTC time>/ (remeasure) and be measured again"
    ]


def test_remeasure_without_a_change_does_nothing(measured: dict) -> None:
    assert check_measured(campaign(remeasure=True), False, print) == ()
    assert files_below(RESULTS) == measured
