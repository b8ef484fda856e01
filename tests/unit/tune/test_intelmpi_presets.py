"""Intel MPI's algorithm presets as a campaign factor: the shipped table of their names, what
`impi_info` lists, the settings an entry asks for, and what a sweep adds to the campaign: no
experiment, an entry per preset (the base entry with I_MPI_ADJUST_<OP>=<preset>, running the base's
kernel build on the ops that call the collective) and a guideline comparing the two entries
across launches."""

from __future__ import annotations

import copy
import csv
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import load_catalogue, resolve
from mpiguide.analysis.comparisons import BLOCK_SIGNED_RANK, TEST_COLUMN, WELCH_T
from mpiguide.analysis.guidelines import evaluate
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.config import check_campaign
from mpiguide.campaign.expansion import (
    GUIDELINE_ID_MAX,
    algorithm_settings,
    expand_entries,
    preset_kernels,
    with_algorithm_sweeps,
)
from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.campaign.summary import summarise
from mpiguide.core.columns import BLOCK_ATTEMPT_COLUMN
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.plan.grid import build_grid, write_grid
from mpiguide.plan.inputs import write_run_input
from mpiguide.plan.operations import load_operations
from mpiguide.tune.intelmpi_presets import documented_presets, preset_text
from mpiguide.tune.library_algorithms import (
    Algorithm,
    AlgorithmSetting,
    Choices,
    parse_impi_info,
    parse_mpivars,
    run_listing,
    setting_marks,
    settings_from_marks,
    settings_of,
)

LISTING = Path(__file__).parent / "algorithm_listings" / "impi_info-2021.19.txt"
SOURCE = "c.yaml"
# The longest entry name a campaign with the install's name as its entry gives a guideline.
INSTALL_ENTRY = "intelmpi-2021.19"


@pytest.fixture(scope="module")
def intel() -> Choices:
    return parse_impi_info(LISTING.read_text())


def test_the_table_names_presets_of_the_kernel_s_collectives_within_the_id_limit() -> None:
    presets = documented_presets()
    collectives = {op.algorithm_of for op in load_operations().values()} - {"none"}
    assert set(presets) <= collectives
    assert [(p.number, p.name) for p in presets["allreduce"][:3]] == [
        (1, "recursive_doubling"), (2, "rabenseifner"), (3, "reduce_bcast"),
    ]  # fmt: skip
    assert [p.name for p in presets["allgather"]][-1] == "knomial"
    for collective, listed in presets.items():
        assert [p.number for p in listed] == list(range(1, len(listed) + 1))
        for preset in listed:
            guideline = f"ALGO.{INSTALL_ENTRY}.{collective}.{preset.name}"
            assert len(guideline) <= GUIDELINE_ID_MAX, guideline
    assert preset_text("allreduce", 3) == "Reduce + Bcast"
    assert preset_text("bcast", 1) == "not named in Intel's reference"


def test_impi_info_s_ranges_give_the_presets_named_where_the_table_names_them(
    intel: Choices,
) -> None:
    """Intel MPI 2021.19's ranges (0 is the library's own selection); presets past the table's
    list are named by number; `all` sweeps the named ones; the _LIST filters are no collective."""
    assert len(intel.algorithms["allreduce"]) == 32
    assert intel.algorithms["allreduce"][2] == Algorithm("reduce_bcast", 3)
    assert intel.algorithms["allreduce"][12] == Algorithm("preset_13", 13)
    assert [a.number for a in intel.algorithms["bcast"]] == list(range(1, 23))
    assert len(intel.algorithms["allgather"]) == 6
    assert intel.algorithms["allgather"][5] == Algorithm("preset_6", 6)
    assert intel.all_of["allreduce"] == tuple(p.name for p in documented_presets()["allreduce"])
    assert intel.all_of["bcast"] == ()
    assert not any(op.endswith("_list") for op in intel.algorithms)
    assert {"scan", "exscan", "reduce_scatter_block", "barrier"} <= set(intel.algorithms)


def test_the_listing_describes_every_adjust_variable_impi_info_lists(tmp_path: Path) -> None:
    """`impi_info` names the variables, `impi_info -v NAME` describes one: the listing is the
    descriptions of I_MPI_ADJUST_<COLLECTIVE> (not of their _LIST filters), one after another."""
    program = tmp_path / "impi_info"
    log = tmp_path / "calls"
    program.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {log}\n'
        'if [ "$1" = -v ]; then printf "%s \\n  Description:\\n    range: 0-4 \\n" "$2"; exit; fi\n'
        "echo ' | NAME | DEFAULT VALUE | DATA TYPE |'\n"
        "echo ' | I_MPI_PIN | on | MPI_INT |'\n"
        "echo ' | I_MPI_ADJUST_SCAN | -1 | MPI_CHAR |'\n"
        "echo ' | I_MPI_ADJUST_SCAN_LIST | -1 | MPI_CHAR |'\n"
        "echo ' | I_MPI_ADJUST_ALLREDUCE | -1 | MPI_CHAR |'\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    listing = run_listing("intelmpi", str(program), "mpi.i.info")
    assert log.read_text().splitlines() == [
        "", "-v I_MPI_ADJUST_SCAN", "-v I_MPI_ADJUST_ALLREDUCE",
    ]  # fmt: skip
    choices = parse_impi_info(listing)
    assert [a.name for a in choices.algorithms["allreduce"]] == [
        "recursive_doubling", "rabenseifner", "reduce_bcast", "topo_reduce_bcast",
    ]  # fmt: skip
    assert [a.name for a in choices.algorithms["scan"]][-1] == "preset_4"


def test_settings_select_presets_by_name_or_number_and_set_the_environment(
    intel: Choices,
) -> None:
    chosen = settings_of("i", {"allreduce": ["ring", 3, "preset_17"]}, intel, "mpi.i.algorithms")
    assert [s.name for s in chosen] == [
        "i.allreduce.ring", "i.allreduce.reduce_bcast", "i.allreduce.preset_17",
    ]  # fmt: skip
    assert chosen[1] == AlgorithmSetting("i", "intelmpi", "allreduce", Algorithm("reduce_bcast", 3))
    assert [s.env() for s in chosen] == [
        {"I_MPI_ADJUST_ALLREDUCE": "8"},
        {"I_MPI_ADJUST_ALLREDUCE": "3"},
        {"I_MPI_ADJUST_ALLREDUCE": "17"},
    ]
    assert [s.algorithm.number for s in settings_of("i", {"allgather": "all"}, intel, "k")] == [
        1, 2, 3, 4, 5,
    ]  # fmt: skip
    # tune reads the settings back from the workflow's marks
    marks = setting_marks(chosen)
    assert settings_from_marks(marks) == {s.guideline: s for s in chosen}


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        (
            {"allreduce": [33]},
            "mpi.i.algorithms.allreduce[0]: 33 is not an algorithm of intelmpi's allreduce; "
            "allowed: all, or of 1 recursive_doubling, 2 rabenseifner, 3 reduce_bcast, ",
        ),
        ({"allreduce": ["rign"]}, "12 topo_shm_knary, 13 to 32 (preset_<N>)"),
        ({"allgather": [2, "bruck"]}, "mpi.i.algorithms.allgather[1]: 'bruck' is named twice"),
        (
            {"bcast": "all"},
            "mpi.i.algorithms.bcast: `all` sweeps the intelmpi algorithms of bcast its reference "
            "names, and it names none; list them by number: 1 to 22 (preset_<N>)",
        ),
    ],
)
def test_presets_the_library_does_not_have_are_refused(
    intel: Choices, asked: dict[str, Any], message: str
) -> None:
    """Numbers beyond the range impi_info prints, names the table does not give, `all` where
    Intel's reference numbers no preset of the collective."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        settings_of("i", asked, intel, "mpi.i.algorithms")


CONFIG: dict[str, Any] = {
    "campaign": "t",
    "mpi": {
        "intel": {
            "mpicc": "/opt/intel/bin/mpicc",
            "launcher": "/opt/intel/bin/mpiexec",
            "library": "intelmpi",
            "algorithms": {"allreduce": ["reduce_bcast", 8]},
            "env": {"I_MPI_ROOT": "/opt/intel"},
        }
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "nrep": 10,
    "experiments": [
        {"op": ["allreduce", "allreduce_as_reduce_bcast", "bcast"], "msg_size": [8, 1024]}
    ],
    "guidelines": ["TGT-ALLREDUCE-AS-REDUCE-BCAST"],
}
PRESETS = ("intel.allreduce.reduce_bcast", "intel.allreduce.ring")


def _config(**changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(CONFIG)
    config["mpi"]["intel"].update(changes)
    validate_schema(config, load_schema(), SOURCE)
    return config


def _listing(intel: Choices) -> Any:
    return lambda entry, library, program, key_path: intel


def _campaign(intel: Choices, config: dict[str, Any]) -> Campaign:
    expansion = expand_entries(config, SOURCE, Path("/nonexistent"), _listing(intel))
    options = check_campaign(expansion.config, load_catalogue(GUIDELINE_CATALOGUE), SOURCE)
    return Campaign(
        expansion.config, options, SOURCE, expansion.settings, dict(expansion.kernel_of)
    )


def test_a_sweep_adds_an_entry_per_preset_with_its_environment(intel: Choices) -> None:
    config = _config()
    settings = algorithm_settings(config, SOURCE, _listing(intel))
    expanded = with_algorithm_sweeps(config, settings, SOURCE)
    # the grid is untouched: the kernel cannot choose a preset inside a launch
    assert expanded["experiments"] == config["experiments"]
    assert list(expanded["mpi"]) == ["intel", *PRESETS]
    base = config["mpi"]["intel"]
    for name, number in zip(PRESETS, ("3", "8"), strict=True):
        entry = expanded["mpi"][name]
        assert "algorithms" not in entry
        assert entry["env"] == {"I_MPI_ROOT": "/opt/intel", "I_MPI_ADJUST_ALLREDUCE": number}
        assert {k: v for k, v in entry.items() if k != "env"} == {
            k: v for k, v in base.items() if k not in ("env", "algorithms")
        }
    assert preset_kernels(settings) == {name: "intel" for name in PRESETS}
    algo = [g for g in expanded["guidelines"] if isinstance(g, dict)]
    assert algo[0] == {
        "id": "ALGO.intel.allreduce.reduce_bcast",
        "source": algo[0]["source"],
        "text": "MPI_Allreduce as intel chooses ≼ with Intel MPI preset 3 (Reduce + Bcast), "
        "I_MPI_ADJUST_ALLREDUCE=3, across launches",
        "relation": "le",
        "lhs": {"mpi": "intel", "op": ["allreduce"], "algorithm": "library-default"},
        "rhs": {
            "mpi": "intel.allreduce.reduce_bcast",
            "op": ["allreduce"],
            "algorithm": "library-default",
        },
        "decided_by": "analysis.tuning",
    }
    assert [g["id"] for g in algo] == [f"ALGO.{name}" for name in PRESETS]
    check_campaign(expanded, load_catalogue(GUIDELINE_CATALOGUE), SOURCE)


def test_a_preset_entry_runs_its_base_s_build_on_the_ops_of_its_collective(
    intel: Choices, tmp_path: Path
) -> None:
    campaign = _campaign(intel, _config())
    assert dict(campaign.kernel_of) == {name: "intel" for name in PRESETS}
    assert list(campaign.built_mpi()) == ["intel"]
    assert campaign.kernel_binary(PRESETS[0]) == campaign.kernel_binary("intel")
    # one entry asked for, three measured: blocks, so that the presets pair launch by launch
    assert campaign.blocking == "run"
    assert campaign.ops_of("intel") is None and campaign.forces_algorithms("intel")
    for name in PRESETS:
        assert campaign.ops_of(name) == ["allreduce"]
        assert not campaign.forces_algorithms(name)
    # the inputs of a preset entry: only the allreduce experiments, in the run's order
    grid = tmp_path / "grid.csv"
    write_grid(build_grid(campaign.grid_spec(), "t"), grid)
    write_run_input(grid, 7, "intel", 1, 2, 0, tmp_path / "all.csv")
    ops = campaign.ops_of(PRESETS[0])
    write_run_input(grid, 7, "intel", 1, 2, 0, tmp_path / "preset.csv", None, True, ops)
    every = list(csv.DictReader((tmp_path / "all.csv").open()))
    preset = list(csv.DictReader((tmp_path / "preset.csv").open()))
    assert [row for row in every if row["op"] == "allreduce"] == preset
    assert {row["op"] for row in every} == {"allreduce", "allreduce_as_reduce_bcast", "bcast"}
    with pytest.raises(Exception, match="no experiment of op scan"):
        write_run_input(grid, 7, "intel", 1, 2, 0, tmp_path / "x.csv", None, True, ["scan"])


def test_validate_counts_a_preset_entry_s_part_of_the_grid(intel: Choices) -> None:
    """The campaign's own guideline pairs allreduce with its mock-up, which no preset entry runs:
    its tests are the base entry's alone."""
    campaign = _campaign(intel, _config())
    catalogue = load_catalogue(GUIDELINE_CATALOGUE)
    guidelines = resolve(campaign.config["guidelines"], catalogue, SOURCE)
    summary = summarise(campaign.config, campaign.analysis, guidelines, campaign.ops_of)
    assert summary.experiments == 6 + 2 * 2  # the grid's 6 once, 2 allreduce per preset
    assert summary.launches == summary.runs * 3  # a launch per entry and run
    assert summary.tests == {
        "TGT-ALLREDUCE-AS-REDUCE-BCAST": 2,
        **{f"ALGO.{name}": 2 for name in PRESETS},
    }
    assert summary.lines()[0] == (
        "experiments: 10 (6 in the grid, or the part an entry runs, x 3 mpi entries x 1 deployment)"
    )


def test_an_intel_sweep_leaves_the_grid_of_other_entries_alone(intel: Choices) -> None:
    """An entry that sweeps inside its launches sets the grid every entry runs; a sweep per
    launch does not: it may sit beside entries of other libraries, not beside such a sweep."""
    mpich = parse_mpivars((LISTING.parent / "mpivars-4.0.2.txt").read_text())
    by_library = {"intelmpi": intel, "mpich": mpich}

    def discover(entry: str, library: str, program: str, key_path: str) -> Choices:
        return by_library[library]

    config = _config()
    config["mpi"]["mpich"] = {"mpicc": "mpicc.mpich", "library": "mpich", "env": {}}
    validate_schema(config, load_schema(), SOURCE)
    assert len(algorithm_settings(config, SOURCE, discover)) == 2
    config["mpi"]["mpich"]["algorithms"] = {"allreduce": ["nb"]}
    with pytest.raises(ConfigError, match=r"mpi\.intel: every entry of a campaign runs its grid"):
        algorithm_settings(config, SOURCE, discover)


def _clashing_entry(config: dict[str, Any]) -> None:
    """A user's entry named as a preset entry of the sweep."""
    other = copy.deepcopy(config["mpi"]["intel"])
    del other["algorithms"]
    config["mpi"]["intel.allreduce.ring"] = other


def _forcing_base(config: dict[str, Any]) -> None:
    """A base entry that sets the swept collective's preset itself."""
    config["mpi"]["intel"]["env"]["I_MPI_ADJUST_ALLREDUCE"] = "2"


def _long_name(config: dict[str, Any]) -> None:
    config["mpi"] = {"i" * 40: config["mpi"]["intel"]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            _clashing_entry,
            "c.yaml: mpi.intel.allreduce.ring: the name of the entry that c.yaml: "
            "mpi.intel.algorithms adds for intelmpi's allreduce ring; rename it",
        ),
        (
            _forcing_base,
            "c.yaml: mpi.intel.env.I_MPI_ADJUST_ALLREDUCE: set by each entry of its sweep of "
            "allreduce (c.yaml: mpi.intel.algorithms); the entry itself measures the library's "
            "own choice",
        ),
        (_long_name, "name too long for the guideline 'ALGO.iii"),
    ],
)
def test_a_preset_entry_s_name_and_environment_are_its_own(
    intel: Choices, change: Any, message: str
) -> None:
    config = _config()
    change(config)
    with pytest.raises(ConfigError) as error:
        with_algorithm_sweeps(config, algorithm_settings(config, SOURCE, _listing(intel)), SOURCE)
    assert message in str(error.value)


def _medians(blocked: bool) -> pd.DataFrame:
    """Run medians of an Intel MPI entry and one preset entry (no `algorithm` column: no
    experiment names one), the preset 20 % faster, each run a launch of each entry."""
    rng = np.random.default_rng(1)
    rows = []
    for run in range(8):
        spread = np.exp(rng.normal(0, 0.05, size=2))
        for mpi, factor, launch in (("intel", 1.0, spread[0]), (PRESETS[0], 0.8, spread[1])):
            for exp_id, size in ((0, 8), (1, 1024)):
                rows.append(
                    {"exp_id": exp_id, "mpi": mpi, "nodes": 1, "ppn": 2, "run": run,
                     "median_s": 1e-3 * factor * launch * np.exp(rng.normal(0, 0.005)),
                     "n_kept": 30, "op": "allreduce", "msg_size": size}
                    | ({BLOCK_ATTEMPT_COLUMN: 1} if blocked else {})
                )  # fmt: skip
    medians = pd.DataFrame(rows)
    for column in ("op", "mpi"):
        medians[column] = medians[column].astype("category")
    return medians


@pytest.mark.parametrize(("blocked", "test"), [(True, BLOCK_SIGNED_RANK), (False, WELCH_T)])
def test_a_preset_s_guideline_pairs_the_two_entries_across_launches(
    intel: Choices, blocked: bool, test: str
) -> None:
    """No experiment names an algorithm, so the data have no `algorithm` column: every allreduce
    row is the library's choice, in its entry. In blocks the two entries' launches of a run pair
    (signed-rank); without, Welch's test compares them unpaired (`blocking: none`)."""
    config = _config(algorithms={"allreduce": ["reduce_bcast"]})
    expanded = with_algorithm_sweeps(config, algorithm_settings(config, SOURCE, _listing(intel)))
    guidelines = resolve(
        [g for g in expanded["guidelines"] if isinstance(g, dict)],
        load_catalogue(GUIDELINE_CATALOGUE),
        SOURCE,
    )
    tests = evaluate(_medians(blocked), guidelines, AnalysisOptions.with_defaults(), "t")
    assert set(tests["guideline"]) == {"ALGO.intel.allreduce.reduce_bcast"}
    assert sorted(tests["msg_size"].astype(int)) == [8, 1024]
    assert set(tests[TEST_COLUMN]) == {test}
    assert set(tests["algorithm"]) == {"library-default"}  # one value: both sides
    assert set(tests["mpi"]) == {f"intel|{PRESETS[0]}"}
