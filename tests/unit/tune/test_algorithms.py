"""A library's own algorithms as a campaign factor: listing them from what the installed library
prints, checking a config's `algorithms:` against them, and the experiments and guidelines they
add to the entry (no entry, no launch)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import load_catalogue
from mpiguide.campaign.checked import Campaign
from mpiguide.campaign.config import check_campaign
from mpiguide.campaign.expansion import (
    algorithm_settings,
    tune_libraries,
    tuned_algorithms_csv,
    tuned_pairs,
    verify_campaign,
    with_algorithm_sweeps,
)
from mpiguide.campaign.schema import load_schema, validate_schema
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.plan.grid import expand
from mpiguide.tune.applied import honours_forced
from mpiguide.tune.library_algorithms import (
    Choices,
    installed_choices,
    parse_mpivars,
    parse_ompi_info,
    setting_marks,
    settings_from_marks,
    settings_of,
)
from mpiguide.tune.mockup_rules import TUNE_GUIDELINE_SOURCE

LISTINGS = Path(__file__).parent / "algorithm_listings"
SOURCE = "c.yaml"


@pytest.fixture(scope="module")
def ompi() -> Choices:
    return parse_ompi_info((LISTINGS / "ompi_info-4.1.4.txt").read_text())


@pytest.fixture(scope="module")
def mpich() -> Choices:
    return parse_mpivars((LISTINGS / "mpivars-4.0.2.txt").read_text())


def test_open_mpi_lists_numbered_algorithms_without_its_default(ompi: Choices) -> None:
    allreduce = [(a.number, a.name) for a in ompi.algorithms["allreduce"]]
    assert allreduce == [
        (1, "basic_linear"),
        (2, "nonoverlapping"),
        (3, "recursive_doubling"),
        (4, "ring"),
        (5, "segmented_ring"),
        (6, "rabenseifner"),
    ]
    assert [a.name for a in ompi.algorithms["scan"]] == ["linear", "recursive_doubling"]
    # the forced algorithm's fan-out (bcast passes its chain fan-out) and segment size
    assert ompi.parameters["bcast"] == (4, 0)
    assert ompi.parameters["allreduce"] == (4, 0)


def test_mpich_names_are_read_from_glued_descriptions(mpich: Choices) -> None:
    names = {op: [a.name for a in algs] for op, algs in mpich.algorithms.items()}
    assert names["allreduce"] == ["nb", "smp", "recursive_doubling", "reduce_scatter_allgather"]
    assert names["bcast"] == [
        "binomial",
        "nb",
        "smp",
        "scatter_recursive_doubling_allgather",
        "scatter_ring_allgather",
    ]
    assert names["barrier"] == ["nb", "smp", "dissemination"]
    assert names["gather"] == ["binomial", "nb"]
    assert names["iallreduce"][:2] == ["sched_auto", "sched_naive"]
    # the device's own cvars (MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM) are not collectives
    assert not any("posix" in op for op in names)
    assert "allreduce" in mpich.device_override


def test_mpich_5_names_are_read_whole_one_a_line() -> None:
    """MPICH 5 prints a cvar's choices one a line, some wider than the padding column: each is
    read whole (k_reduce_scatter_allgather is not a second reduce_scatter_allgather)."""
    choices = parse_mpivars((LISTINGS / "mpivars-5.0.2.txt").read_text())
    assert [a.name for a in choices.algorithms["allreduce"]] == [
        "nb", "smp", "recursive_doubling", "recursive_multiplying", "reduce_scatter_allgather",
        "tree", "recexch", "ring", "k_reduce_scatter_allgather", "ccl",
    ]  # fmt: skip
    assert [a.name for a in choices.algorithms["barrier"]] == [
        "nb", "smp", "k_dissemination", "recexch",
    ]  # fmt: skip
    assert "allreduce" in choices.device_override
    for names in choices.algorithms.values():
        assert len({a.name for a in names}) == len(names)


def test_settings_select_by_name_or_number_and_set_the_environment(
    ompi: Choices, mpich: Choices
) -> None:
    chosen = settings_of("openmpi", {"allreduce": ["ring", 3]}, ompi, "mpi.openmpi.algorithms")
    assert [s.name for s in chosen] == [
        "openmpi.allreduce.ring",
        "openmpi.allreduce.recursive_doubling",
    ]
    assert chosen[0].env() == {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_allreduce_algorithm": "4",
    }
    (doubling,) = settings_of("mpich", {"allreduce": ["recursive_doubling"]}, mpich, "k")
    assert doubling.env() == {
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling",
        "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE": "0",
    }
    assert len(settings_of("openmpi", {"bcast": "all"}, ompi, "k")) == 9


def test_algorithms_the_kernel_cannot_force_are_left_out_of_all_and_refused_by_name(
    mpich: Choices,
) -> None:
    """MPICH's smp re-reads the global choice in its nested calls (docs/kernel.md): `all`
    sweeps the others, and naming it says why it cannot be swept."""
    swept = [s.algorithm.name for s in settings_of("mpich", {"allreduce": "all"}, mpich, "k")]
    assert swept == ["nb", "recursive_doubling", "reduce_scatter_allgather"]
    with pytest.raises(ConfigError, match=r"k\.allreduce\[0\]: mpich's 'smp' cannot be swept"):
        settings_of("mpich", {"allreduce": ["smp"]}, mpich, "k")


def test_two_process_algorithms_are_swept_only_where_every_deployment_has_two(
    ompi: Choices,
) -> None:
    """Open MPI's two_proc refuses any other size with MPI_ERR_UNSUPPORTED_OPERATION: on a
    campaign with 4 ranks it would fail every launch of its deployment."""
    two = [s.algorithm.name for s in settings_of("o", {"allgather": "all"}, ompi, "k")]
    assert "two_proc" in two
    both = frozenset({2, 4})
    wider = [s.algorithm.name for s in settings_of("o", {"allgather": "all"}, ompi, "k", both)]
    assert wider == [name for name in two if name != "two_proc"]
    with pytest.raises(ConfigError, match="runs on exactly 2 processes; the deployments have 2, 4"):
        settings_of("o", {"allgather": ["two_proc"]}, ompi, "k", both)


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        (
            {"allreduce": ["rign"]},
            "mpi.openmpi.algorithms.allreduce[0]: 'rign' is not an algorithm of openmpi's "
            "allreduce; allowed: all, or of 1 basic_linear, 2 nonoverlapping",
        ),
        ({"allreduce": [7]}, "mpi.openmpi.algorithms.allreduce[0]: 7 is not an algorithm"),
        ({"allreduce": ["ring", 4]}, "allreduce[1]: 'ring' is named twice"),
        (
            {"neighbor_allgather": "all"},
            "mpi.openmpi.algorithms.neighbor_allgather: openmpi offers no algorithm choice for "
            "'neighbor_allgather'; allowed: allgather, allgatherv, allreduce",
        ),
    ],
)
def test_unknown_choices_are_refused_naming_the_key(
    ompi: Choices, asked: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        settings_of("openmpi", asked, ompi, "mpi.openmpi.algorithms")
    assert message in str(error.value)


def test_a_missing_listing_program_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"mpi\.x\.info: cannot list openmpi's algorithms"):
        installed_choices("openmpi", "/nonexistent/ompi_info", "mpi.x.info")


CONFIG: dict[str, Any] = {
    "campaign": "t",
    "mpi": {
        "openmpi": {
            "library": "openmpi",
            "algorithms": {"allreduce": ["ring", "recursive_doubling"]},
            "env": {"OMPI_MCA_mpi_yield_when_idle": "1"},
        }
    },
    "deployments": [{"nodes": 1, "ppn": 2}],
    "nrep": 10,
    "experiments": [{"op": ["allreduce", "allreduce_as_reduce_bcast"], "msg_size": [8, 1024]}],
    "guidelines": [],
}


def _config(**mpi_changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(CONFIG)
    config["mpi"]["openmpi"].update(mpi_changes)
    validate_schema(config, load_schema(), SOURCE)
    return config


def _listing(ompi: Choices) -> Any:
    calls = []

    def discover(entry: str, library: str, program: str, key_path: str) -> Choices:
        calls.append((entry, library, program, key_path))
        return ompi

    discover.calls = calls  # type: ignore[attr-defined]
    return discover


def test_a_sweep_adds_experiments_and_guidelines_to_the_entry_not_entries(ompi: Choices) -> None:
    config = _config()
    discover = _listing(ompi)
    swept = algorithm_settings(config, SOURCE, discover)
    expanded = with_algorithm_sweeps(config, swept)
    assert discover.calls == [("openmpi", "openmpi", "ompi_info", "c.yaml: mpi.openmpi.info")]
    assert expanded["mpi"] == config["mpi"]
    # the allreduce experiments again, each with an algorithm; the mock-up takes none
    assert expanded["experiments"][1] == {
        "op": "allreduce", "msg_size": [8, 1024], "algorithm": ["ring", "recursive_doubling"],
    }  # fmt: skip
    rows = expand(expanded)
    assert {(r["op"], r["algorithm"] or "") for r in rows} == {
        ("allreduce", ""), ("allreduce", "ring"), ("allreduce", "recursive_doubling"),
        ("allreduce_as_reduce_bcast", ""),
    }  # fmt: skip
    assert len(rows) == 2 * 3 + 2
    guideline = expanded["guidelines"][0]
    assert guideline["id"] == "ALGO.openmpi.allreduce.ring"
    assert guideline["relation"] == "le"
    assert guideline["decided_by"] == "analysis.tuning"
    assert guideline["lhs"] == {
        "mpi": "openmpi",
        "op": ["allreduce"],
        "algorithm": "library-default",
    }
    assert guideline["rhs"] == {"mpi": "openmpi", "op": ["allreduce"], "algorithm": "ring"}
    # the added guidelines and experiments pass the campaign's own checks
    check_campaign(expanded, load_catalogue(GUIDELINE_CATALOGUE), SOURCE)
    assert config["experiments"] == CONFIG["experiments"]  # not modified
    settings = {setting.guideline: setting for setting in swept}
    assert list(settings) == [
        "ALGO.openmpi.allreduce.ring",
        "ALGO.openmpi.allreduce.recursive_doubling",
    ]
    assert settings["ALGO.openmpi.allreduce.ring"].algorithm.number == 4
    assert settings_from_marks(setting_marks(swept)) == settings


def test_a_swept_block_keeps_what_applies_to_the_swept_op(ompi: Choices) -> None:
    """`root` applies to bcast only: the allreduce copy leaves it out; an op the block's `where`
    drops gets no copy; a block that names an algorithm itself is refused."""
    config = _config(algorithms={"allreduce": ["ring"], "bcast": ["binomial"]})
    config["experiments"] = [
        {"op": ["bcast", "allreduce"], "msg_size": [8, 64], "root": [0, 1]},
        {"op": ["bcast", "allreduce"], "msg_size": 8, "where": "op == 'allreduce'"},
    ]
    expanded = with_algorithm_sweeps(config, algorithm_settings(config, SOURCE, _listing(ompi)))
    assert expanded["experiments"][2:] == [
        {"op": "bcast", "msg_size": [8, 64], "root": [0, 1], "algorithm": ["binomial"]},
        {"op": "allreduce", "msg_size": [8, 64], "algorithm": ["ring"]},
        {"op": "allreduce", "msg_size": 8, "where": "op == 'allreduce'", "algorithm": ["ring"]},
    ]
    rows = expand(expanded)
    assert sum(r["algorithm"] == "binomial" for r in rows) == 4
    config["experiments"][0]["algorithm"] = "ring"
    with pytest.raises(ConfigError, match=r"experiments\[0\]\.algorithm: the mpi entries'"):
        with_algorithm_sweeps(config, algorithm_settings(config, SOURCE, _listing(ompi)))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"library": None},
            "c.yaml: mpi.openmpi.algorithms: needs the entry's `library` (openmpi, mpich, "
            "intelmpi)",
        ),
        (
            {"algorithms": {"bcast": "all"}},
            "c.yaml: mpi.openmpi.algorithms.bcast: the campaign measures no 'bcast'",
        ),
    ],
)
def test_bad_algorithms_are_refused(ompi: Choices, changes: dict[str, Any], message: str) -> None:
    config = _config(**{k: v for k, v in changes.items() if v is not None})
    for key in (k for k, v in changes.items() if v is None):
        del config["mpi"]["openmpi"][key]
    with pytest.raises(ConfigError) as error:
        algorithm_settings(config, SOURCE, _listing(ompi))
    assert message in str(error.value)


def test_every_entry_sweeps_the_same_as_they_share_the_grid(ompi: Choices) -> None:
    config = _config()
    config["mpi"]["other"] = copy.deepcopy(config["mpi"]["openmpi"])
    algorithm_settings(config, SOURCE, _listing(ompi))
    del config["mpi"]["other"]["algorithms"]
    with pytest.raises(ConfigError, match=r"mpi\.other: every entry of a campaign runs its grid"):
        algorithm_settings(config, SOURCE, _listing(ompi))


FIGURE5_HEADER = (
    "mpi,library,op,nodes,ppn,msg_size,algorithm,number,median_s,default_median_s,speedup,"
    "speedup_low,speedup_high,verdict"
)


def _figure5(tuning: Path, *rows: str) -> None:
    tuning.mkdir(parents=True, exist_ok=True)
    (tuning / "algorithms.csv").write_text("\n".join([FIGURE5_HEADER, *rows]) + "\n")


def test_verify_sweeps_the_chosen_algorithms_beside_the_librarys_choice(
    ompi: Choices, tmp_path: Path
) -> None:
    """Within one launch: the swept entry measures only what `tune` chose, beside the library's
    choice, with no `.tuned` entry and no rules file in its environment."""
    config = _config()
    tuning = tmp_path / "results" / "t" / "tuning"
    with pytest.raises(ConfigError, match=r"algorithms\.csv does not exist: run the target"):
        verify_campaign(config, SOURCE, tmp_path / "results")
    _figure5(
        tuning,
        "openmpi,openmpi,allreduce,1,2,8,ring,4,1e-5,2e-5,2.0,1.5,2.5,violated",
        "openmpi,openmpi,allreduce,1,2,8,recursive_doubling,3,1e-5,1.1e-5,1.1,0.9,1.3,undecided",
        "openmpi,openmpi,allreduce,1,2,1024,ring,4,1e-5,1e-5,1.0,0.9,1.1,holds",
    )
    with pytest.raises(ConfigError, match=r"openmpi\.ompi-rules\.conf does not exist: run"):
        verify_campaign(config, SOURCE, tmp_path / "results")
    rules = tuning / "openmpi.ompi-rules.conf"
    rules.write_text("1\n2 # allreduce\n1\n2\n1\n8 4 0 0\n")
    verified, kernel_of = verify_campaign(config, SOURCE, tmp_path / "results")
    assert verified["campaign"] == "t-verify"
    assert list(verified["mpi"]) == ["openmpi", "openmpi.applied"]
    assert verified["mpi"]["openmpi"]["algorithms"] == {"allreduce": ["ring"]}
    assert verified["mpi"]["openmpi"]["env"] == config["mpi"]["openmpi"]["env"]
    # the entry again, with the rules file `tune` wrote applied to its launches
    assert "algorithms" not in verified["mpi"]["openmpi.applied"]
    assert verified["mpi"]["openmpi.applied"]["env"] == {
        **config["mpi"]["openmpi"]["env"],
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(rules.resolve()),
    }
    assert kernel_of == {"openmpi.applied": "openmpi"}
    swept = algorithm_settings(verified, SOURCE, _listing(ompi), kernel_of)
    expanded = with_algorithm_sweeps(verified, swept)
    by_id = {g["id"]: g for g in expanded["guidelines"]}
    assert list(by_id) == [
        "APPLIED.openmpi.allreduce.ring",
        "APPLIED.openmpi.allreduce",
        "ALGO.openmpi.allreduce.ring",
    ]
    # Open MPI's rules file wins over a forced algorithm: ring forced runs in `openmpi`
    runs, beats = by_id["APPLIED.openmpi.allreduce.ring"], by_id["APPLIED.openmpi.allreduce"]
    assert (runs["relation"], runs["decided_by"]) == ("approx", "analysis.tuning")
    assert runs["lhs"] == {"mpi": "openmpi", "op": ["allreduce"], "algorithm": "ring"}
    own = {"mpi": "openmpi.applied", "op": ["allreduce"], "algorithm": "library-default"}
    assert runs["rhs"] == beats["rhs"] == own
    assert beats["relation"] == "le"
    assert beats["lhs"] == {"mpi": "openmpi", "op": ["allreduce"], "algorithm": "library-default"}
    assert {r["algorithm"] for r in expand(expanded) if r["op"] == "allreduce"} == {"", "ring"}
    check_campaign(expanded, load_catalogue(GUIDELINE_CATALOGUE), SOURCE)
    # ring forced in openmpi.applied would run the rules file's choice: its inputs hold no
    # forced algorithm (plan/inputs.py), so no row of it, nor any guideline pairing its rows,
    # bears a label Open MPI did not run; no guideline asks for one there
    campaign = Campaign(expanded, AnalysisOptions.with_defaults(), SOURCE, tuple(swept), kernel_of)
    assert [campaign.forces_algorithms(name) for name in expanded["mpi"]] == [True, False]
    sides = [g[side] for g in expanded["guidelines"] for side in ("lhs", "rhs")]
    assert {s["algorithm"] for s in sides if s["mpi"] == "openmpi.applied"} == {"library-default"}
    assert tuned_algorithms_csv("t-verify") == "results/t/tuning/algorithms.csv"
    # nothing chosen and no mock-up rule: nothing to verify
    _figure5(tuning, "openmpi,openmpi,allreduce,1,2,8,ring,4,1e-5,1e-5,1.0,0.9,1.1,holds")
    with pytest.raises(ConfigError, match="nothing was tuned to verify"):
        verify_campaign(config, SOURCE, tmp_path / "results")


def test_verify_preloads_the_tuning_library_where_a_mock_up_replaces_a_collective(
    tmp_path: Path,
) -> None:
    """An entry without a sweep is tuned only by its libmpiguide-tune file, and only if the file
    has a rule; the library goes first in LD_PRELOAD, before what the entry preloads already."""
    config = _config()
    del config["mpi"]["openmpi"]["algorithms"]
    config["mpi"]["openmpi"]["env"]["LD_PRELOAD"] = "build/inject/libmpiguide-inject.so"
    config["mpi"]["mpich"] = {"mpicc": "mpicc.mpich", "library": "mpich", "env": {}}
    validate_schema(config, load_schema(), SOURCE)
    tuning = tmp_path / "results" / "t" / "tuning"
    with pytest.raises(ConfigError, match="nothing was tuned to verify"):
        verify_campaign(config, SOURCE, tmp_path / "results")
    tuning.mkdir(parents=True)
    (tuning / "openmpi.tune").write_text("# c\nallreduce_as_reduce_bcast ranks=2 bytes=8-8  # x\n")
    (tuning / "mpich.tune").write_text("# nothing replaced\n")
    verified, kernel_of = verify_campaign(config, SOURCE, tmp_path / "results")
    assert list(verified["mpi"]) == ["openmpi", "mpich", "openmpi.tuned"]
    assert kernel_of == {"openmpi.tuned": "openmpi"}
    library = "results/t-verify/build/openmpi/tune/libmpiguide-tune.so"
    assert verified["mpi"]["openmpi.tuned"]["env"] == {
        "OMPI_MCA_mpi_yield_when_idle": "1",
        "LD_PRELOAD": f"{library}:build/inject/libmpiguide-inject.so",
        "MPIGUIDE_TUNE": str((tuning / "openmpi.tune").resolve()),
    }
    assert tune_libraries(verified, kernel_of) == {library: "openmpi"}
    check_campaign(verified, load_catalogue(GUIDELINE_CATALOGUE), SOURCE, {library: "openmpi"})


def test_verify_compares_the_replaced_call_with_the_library_s_own_within_one_launch(
    ompi: Choices, tmp_path: Path
) -> None:
    """Each replaced collective's ops get an `untuned` sibling and a TUNE guideline that pairs,
    within `<entry>.tuned`, the replaced call with the library's own; ops of other collectives
    and the mock-ups get none. A sweep of the same collective sweeps the original experiments
    only: `untuned` is never crossed with a forced algorithm."""
    config = _config()
    config["experiments"].append({"op": "bcast", "msg_size": 8})
    tuning = tmp_path / "results" / "t" / "tuning"
    _figure5(tuning, "openmpi,openmpi,allreduce,1,2,8,ring,4,1e-5,2e-5,2.0,1.5,2.5,violated")
    (tuning / "openmpi.tune").write_text("allreduce_as_reduce_bcast ranks=2 bytes=8-8  # x\n")
    (tuning / "openmpi.ompi-rules.conf").write_text("0\n")
    verified, kernel_of = verify_campaign(config, SOURCE, tmp_path / "results")
    assert verified["experiments"][-1] == {
        "op": "allreduce", "msg_size": [8, 1024], "algorithm": ["untuned"],
    }  # fmt: skip
    assert [g for g in verified["guidelines"] if g["id"].startswith("TUNE.")] == [
        {
            "id": "TUNE.openmpi.allreduce",
            "source": TUNE_GUIDELINE_SOURCE,
            "text": "MPI_Allreduce as libmpiguide-tune runs it for openmpi ≼ the library's own "
            "call, in the same launches",
            "relation": "le",
            "lhs": {"mpi": "openmpi.tuned", "op": ["allreduce"], "algorithm": "library-default"},
            "rhs": {"mpi": "openmpi.tuned", "op": ["allreduce"], "algorithm": "untuned"},
            "decided_by": "analysis.tuning",
        }
    ]
    swept = algorithm_settings(verified, SOURCE, _listing(ompi), kernel_of)
    expanded = with_algorithm_sweeps(verified, swept)
    assert {(r["op"], r["algorithm"] or "") for r in expand(expanded)} == {
        ("allreduce", ""), ("allreduce", "ring"), ("allreduce", "untuned"),
        ("allreduce_as_reduce_bcast", ""), ("bcast", ""),
    }  # fmt: skip
    assert [g["id"] for g in expanded["guidelines"]] == [
        "APPLIED.openmpi.allreduce.ring",
        "APPLIED.openmpi.allreduce",
        "TUNE.openmpi.allreduce",
        "ALGO.openmpi.allreduce.ring",
    ]
    assert tuned_pairs(kernel_of) == [("openmpi", "openmpi.tuned")]
    check_campaign(
        expanded,
        load_catalogue(GUIDELINE_CATALOGUE),
        SOURCE,
        tune_libraries(expanded, kernel_of),
    )


def test_verify_refuses_a_tuning_file_that_names_no_mock_up(tmp_path: Path) -> None:
    config = _config()
    del config["mpi"]["openmpi"]["algorithms"]
    tuning = tmp_path / "results" / "t" / "tuning"
    tuning.mkdir(parents=True)
    (tuning / "openmpi.tune").write_text("allreduce_as_magic ranks=2 bytes=8\n")
    with pytest.raises(ConfigError, match="'allreduce_as_magic' is not a mock-up"):
        verify_campaign(config, SOURCE, tmp_path / "results")


def test_verify_refuses_an_entry_name_too_long_for_its_tune_guideline(tmp_path: Path) -> None:
    config = _config()
    name = "e" * 60
    config["mpi"] = {name: config["mpi"]["openmpi"]}
    del config["mpi"][name]["algorithms"]
    tuning = tmp_path / "results" / "t" / "tuning"
    tuning.mkdir(parents=True)
    (tuning / f"{name}.tune").write_text("allreduce_as_reduce_bcast ranks=2 bytes=8\n")
    with pytest.raises(ConfigError, match=r"name too long for the guideline 'TUNE\.eee"):
        verify_campaign(config, SOURCE, tmp_path / "results")


def test_verify_refuses_a_block_that_chooses_the_algorithm_of_a_replaced_collective(
    tmp_path: Path,
) -> None:
    config = _config()
    del config["mpi"]["openmpi"]["algorithms"]
    config["experiments"].append({"op": "allreduce", "msg_size": 8, "algorithm": "ring"})
    tuning = tmp_path / "results" / "t" / "tuning"
    tuning.mkdir(parents=True)
    (tuning / "openmpi.tune").write_text("allreduce_as_reduce_bcast ranks=2 bytes=8\n")
    with pytest.raises(ConfigError, match=r"experiments\[1\]\.algorithm: .*verify's `untuned`"):
        verify_campaign(config, SOURCE, tmp_path / "results")


def test_only_an_open_mpi_applied_entry_runs_no_forced_algorithm() -> None:
    """MPICH's MPI_T write of a forced algorithm overrides the cvars and JSON file in its
    environment; Open MPI's rules file overrides the forced algorithm (tune/applied.py)."""
    assert honours_forced("mpich.applied", "mpich")
    assert not honours_forced("openmpi.applied", "openmpi")
    assert honours_forced("openmpi", "openmpi") and honours_forced("openmpi.tuned", "openmpi")
