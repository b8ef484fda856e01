"""Campaign config: schema (with defaults, as snakemake fills them), semantic checks, and the
campaign the workflow checks once per invocation."""

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from snakemake.utils import validate as snakemake_validate

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.analysis.catalogue import load_catalogue
from mpiguide.campaign.config import (
    check_campaign,
    find_repository_file,
    load_campaign,
    load_schema,
    validate_schema,
    workflow_campaign,
)
from mpiguide.campaign.scale import LOCAL_MPI
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import CONFIG_SCHEMA, GUIDELINE_CATALOGUE

REPO = Path(__file__).resolve().parents[3]
SOURCE = "c.yaml"
MINIMAL: dict[str, Any] = {
    "campaign": "t",
    "mpi": {"openmpi": {}},
    "deployments": [{"nodes": 1, "ppn": 2}],
    "experiments": [
        {
            "op": ["neighbor_allgather", "neighbor_alltoall"],
            "topology": "cart",
            "ndim": 2,
            "reorder": [0, 1],
            "msg_size": [8, 64],
        },
    ],
    "guidelines": ["GL4"],
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return load_schema()


@pytest.fixture(scope="module")
def catalogue() -> dict[str, Any]:
    return load_catalogue(GUIDELINE_CATALOGUE)


def checked(config: dict[str, Any], schema: dict[str, Any], catalogue: dict[str, Any]) -> None:
    validate_schema(config, schema, SOURCE)
    check_campaign(config, catalogue, SOURCE)


def variant(**changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(MINIMAL)
    config.update(copy.deepcopy(changes))
    return config


def test_defaults_are_filled_as_snakemake_fills_them(schema: dict[str, Any]) -> None:
    ours, theirs = variant(), variant()
    validate_schema(ours, schema, SOURCE)
    snakemake_validate(theirs, str(CONFIG_SCHEMA))
    assert ours == theirs
    assert ours["mpi"]["openmpi"] == {
        "mpicc": "mpicc", "launcher": "mpirun", "srun": "srun --mpi=pmix", "env": {},
        "modules": [], "heap": "default",
    }  # fmt: skip
    assert ours["analysis"] == {
        "varied": "msg_size", "p_thres": 0.001, "v_thres": 1.03, "correction": "none",
        "confidence": 0.95, "layout": "guidelines",
        "variability": [], "run_band": 0.1, "model_tolerance": 0.2,
        "model_weighting": "absolute", "test": "auto",
        "tuning": {"p_thres": 0.001, "v_thres": 1.03},
    }  # fmt: skip
    assert (ours["seed"], ours["runs"], ours["nrep"], ours["launch"]) == (1, 10, 50, "local")


def test_the_demo_campaign_is_valid() -> None:
    config = load_campaign(REPO / "config" / "config.yaml")
    assert config["campaign"] == "demo"


def test_local_mpi_is_found_from_the_config_checkout_or_the_package(tmp_path: Path) -> None:
    other_checkout = tmp_path / "checkout" / LOCAL_MPI
    other_checkout.parent.mkdir(parents=True)
    other_checkout.write_text("{}")
    config = tmp_path / "checkout" / "config" / "c.yaml"
    assert find_repository_file(LOCAL_MPI, config) == other_checkout
    assert find_repository_file(LOCAL_MPI, tmp_path / "checkout") == other_checkout
    assert find_repository_file(LOCAL_MPI, tmp_path / "c.yaml") == REPO / LOCAL_MPI


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"campaign": "demo; rm -rf ~"}, r"^c\.yaml: campaign: 'demo; rm -rf ~' does not match"),
        ({"campaign": ".."}, r"c\.yaml: campaign: "),
        ({"mpi": {"$(touch x)": {}}}, r"c\.yaml: mpi: name '\$\(touch x\)' is not allowed"),
        ({"mpi": {"a\nb": {}}}, r"c\.yaml: mpi: name 'a\\nb' is not allowed"),
        # Python's `$` also matches before a final newline: the schemas' patterns must not
        ({"campaign": "demo\n"},
         r"c\.yaml: campaign: 'demo\\n' does not match '\^\[A-Za-z0-9_\]\[A-Za-z0-9_\.-\]\*\$'$"),
        ({"mpi": {"openmpi\n": {}}}, r"c\.yaml: mpi: name 'openmpi\\n' is not allowed"),
        ({"mpi": {"a": {"env": {"A\n": "1"}}}},
         r"c\.yaml: mpi\.a\.env: name 'A\\n' is not allowed"),
        ({"mpi": {"a": {"modules": ["gcc\n"]}}},
         r"c\.yaml: mpi\.a\.modules\[0\]: 'gcc\\n' does not"),
        ({"mpi": {"a": {"env": {"A;B": "1"}}}}, r"c\.yaml: mpi\.a\.env: name 'A;B' is not allowed"),
        ({"mpi": {"a": {"env": {"A": 1}}}}, r"c\.yaml: mpi\.a\.env\.A: 1 is not of type 'string'"),
        ({"mpi": {"a": {"modules": ["x`id`"]}}}, r"c\.yaml: mpi\.a\.modules\[0\]: "),
        ({"mpi": {"a": {"lancher": "x"}}}, r"mpi\.a: .*'lancher' was unexpected.*allowed: mpicc"),
        ({"experiments": [{"op": "bcast", "dtype": ["char", "doble"]}]},
         r"c\.yaml: experiments\[0\]\.dtype\[1\]: 'doble' is not one of"),
        ({"experiments": [{"op": "bcast", "msg_size": [8, 8]}]},
         r"experiments\[0\]\.msg_size: .* non-unique"),
        ({"deployments": [{"nodes": 0, "ppn": 2}]}, r"deployments\[0\]\.nodes: 0 is less than"),
        ({"analysis": {"correction": "bonferroni"}}, r"analysis\.correction: 'bonferroni' is not"),
        ({"experiments": [{"op": "bcast", "sync": "hca3"}]},
         r"experiments\[0\]\.sync: 'hca3' is not one of .*hca3_roundtime"),
        ({"experiments": [{"op": "bcast", "buffer_offset": -1}]},
         r"experiments\[0\]\.buffer_offset: -1 is less than the minimum of 0"),
        ({"experiments": [{"op": "bcast", "warmup": -1}]},
         r"experiments\[0\]\.warmup: -1 is less than the minimum of 0"),
        ({"experiments": [{"op": "bcast", "warmup": [10, 100001]}]},
         r"experiments\[0\]\.warmup\[1\]: 100001 is greater than the maximum of 100000"),
        ({"experiments": [{"op": "bcast", "warmup": "some"}]},
         r"experiments\[0\]\.warmup: 'some' is not of type 'integer'"),
    ],
)  # fmt: skip
def test_schema_errors_name_the_key(
    schema: dict[str, Any], changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        validate_schema(variant(**changes), schema, SOURCE)


def test_all_schema_errors_are_reported_at_once(schema: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as error:
        validate_schema(variant(seed=-1, runs=0), schema, SOURCE)
    assert str(error.value).splitlines() == [
        "c.yaml: runs: 0 is less than the minimum of 1",
        "c.yaml: seed: -1 is less than the minimum of 0",
    ]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"deployments": [{"nodes": 1, "ppn": 1}]},
         r"^c\.yaml: deployments\[0\]: 1x1 is 1 rank; a measurement needs at least 2"),
        ({"deployments": [{"nodes": 1, "ppn": 2}, {"nodes": 1, "ppn": 2}]},
         r"deployments\[1\]: 1x2 repeats deployments\[0\]"),
        ({"deployments": [{"nodes": 1, "ppn": 4, "node_size": 8}]},
         r"deployments\[0\]\.node_size: 8 is more than the deployment's 4 ranks; allowed: 1 to 4"),
        ({"mpi": {"a": {"launcher": "mpirun 'unbalanced"}}},
         r"c\.yaml: mpi\.a\.launcher: cannot split"),
        ({"experiments": [{"op": "neigbor_alltoall", "topology": "cart", "ndim": 1}]},
         r"c\.yaml: experiments\[0\]\.op: unknown operation 'neigbor_alltoall' "
         r"\(did you mean 'neighbor_alltoall'\?\); allowed: empty,"),
        ({"experiments": [{"op": "bcast", "msg_size": 8, "root": [0, 2]}]},
         r"experiments\[0\]\.root: 2 is not a rank of the smallest deployment \(2 ranks"),
        ({"guidelines": ["GL4", "GL99"]}, r"c\.yaml: guidelines\[1\]: unknown guideline 'GL99'"),
        ({"guidelines": ["GL7"]},
         r"guidelines\[0\] \(GL7\)\.pairs\[0\]\.lhs\.op: 'allgather' is not in this campaign"),
        ({"guidelines": [{"id": "mine", "source": "s", "text": "t", "relation": "le",
                          "lhs": {"reorder": 1}, "rhs": {"oder": 0}}]},
         r"c\.yaml: guidelines\[0\]\.rhs\.oder: not a parameter"),
        ({"guidelines": [{"id": "mine", "source": "s", "text": "t", "relation": "le",
                          "lhs": {"mpi": "openmpi"}, "rhs": {"mpi": "mpich"}}]},
         r"guidelines\[0\] \(mine\)\.rhs\.mpi: 'mpich' is not in this campaign"),
        ({"experiments": [{"op": "neighbor_allgather", "topology": "full", "msg_size": [8, 64]},
                          {"op": "allgather", "msg_size": [8, 64]}], "guidelines": ["GL7"]},
         r"guidelines\[0\] \(GL7\)\.pairs\[0\]\.lhs: no experiment of this campaign has "
         r"op=allgather, topology=full; the guideline matches no experiment"),
        ({"deployments": [{"nodes": 1, "ppn": 2}, {"nodes": 2, "ppn": 4}],
          "guidelines": [{"id": "mine", "source": "s", "text": "t", "relation": "le",
                          "lhs": {"nodes": 1, "ppn": 4}, "rhs": {"nodes": 2, "ppn": 4}}]},
         r"guidelines\[0\] \(mine\)\.lhs: no deployment of this campaign has nodes=1, ppn=4"),
        ({"analysis": {"varied": "ndim"}},
         r"c\.yaml: analysis\.varied: 'ndim' takes one value only .*vary: op, msg_size, reorder"),
        ({"analysis": {"varied": "mpi"}}, r"analysis\.varied is 'mpi'; allowed: one of op, "),
    ],
)  # fmt: skip
def test_semantic_errors_name_the_key(
    schema: dict[str, Any], catalogue: dict[str, Any], changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        checked(variant(**changes), schema, catalogue)


def test_a_guideline_family_needs_only_one_matching_comparison(
    schema: dict[str, Any], catalogue: dict[str, Any]
) -> None:
    # GL11 compares FMAJ, LMAJ, RAND and LINEAR, RAND; a campaign measuring FMAJ and RAND is fine
    experiments = [{"op": "neighbor_alltoall", "topology": "moore", "ndim": 2, "msg_size": [8, 16],
                    "ordering": ["FMAJ", "RAND"]}]  # fmt: skip
    checked(variant(experiments=experiments, guidelines=["GL11"]), schema, catalogue)
    experiments[0]["ordering"] = ["FMAJ"]
    with pytest.raises(ConfigError, match=r"guidelines\[0\] \(GL11\)\.pairs\[0\]\.rhs\.ordering"):
        checked(variant(experiments=experiments, guidelines=["GL11"]), schema, catalogue)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("campaign: x\nmpi: {a: [\n")
    with pytest.raises(ConfigError, match=r"c\.yaml:3: invalid YAML"):
        load_campaign(bad)
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read"):
        load_campaign(tmp_path / "nope.yaml")


def test_a_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_bytes(b"campaign: x\nseed: \xff\n")
    with pytest.raises(ConfigError, match=r"c\.yaml:2: not UTF-8 text \(byte 0xff at offset 18\)"):
        load_campaign(bad)


def test_round_trip_through_a_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(MINIMAL))
    assert load_campaign(path)["runs"] == 10


def test_runs_as_a_range_is_valid_and_an_integer_keeps_its_meaning(schema, catalogue):
    config = variant(runs={"min": 5, "max": 30, "step": 5})
    checked(config, schema, catalogue)
    snakemake_validate(copy.deepcopy(config), str(CONFIG_SCHEMA))
    checked(variant(runs=7), schema, catalogue)


@pytest.mark.parametrize(
    ("runs", "analysis", "message"),
    [
        ({"min": 12, "max": 10, "step": 5}, {},
         "c.yaml: runs.min 12 is above runs.max 10; allowed: min <= max"),
        ({"min": 5, "max": 10, "step": 0}, {},
         "c.yaml: runs.step: 0 is less than the minimum of 1"),
        ({"min": 5, "max": 10}, {}, "c.yaml: runs: 'step' is a required property"),
        ({"min": 5, "max": 10, "step": 5, "every": 2}, {}, "c.yaml: runs: Additional properties"),
        ({"min": 1, "max": 10, "step": 5}, {},
         "c.yaml: runs.min 1: the t-tests need at least 2 runs per side to decide anything; "
         "allowed: min >= 2"),
        ({"min": 7, "max": 30, "step": 5}, {"test": "ranksum"},
         "c.yaml: runs.min 7: the rank-sum's smallest p-value at that many runs is above "
         "0.000167, p_thres over the 6 looks: no test could be violated at the first look; "
         "allowed: min >= 8"),
        ("ten", {}, "c.yaml: runs: 'ten' is not of type 'integer'"),
    ],
)  # fmt: skip
def test_runs_range_errors_name_the_key_and_what_is_allowed(
    runs, analysis, message, schema, catalogue
):
    with pytest.raises(ConfigError) as error:
        checked(variant(runs=runs, analysis=analysis), schema, catalogue)
    assert str(error.value).startswith(message)


CAMPAIGN_FILES = sorted(
    [REPO / "config" / "config.yaml", *(REPO / "config" / "campaigns").glob("*.yaml")]
)


@pytest.mark.parametrize("path", CAMPAIGN_FILES, ids=lambda path: path.name)
def test_snakemake_s_validation_adds_nothing_to_the_package_s(
    schema: dict[str, Any], path: Path
) -> None:
    """Why the workflow validates with the package's validator only: on a config it accepts,
    Snakemake's (same draft, same default filling, integers less strict) accepts it too and
    fills in nothing more."""
    ours = yaml.safe_load(path.read_text())
    validate_schema(ours, schema, SOURCE)
    theirs = copy.deepcopy(ours)
    snakemake_validate(theirs, str(CONFIG_SCHEMA))
    assert theirs == ours


def test_the_workflow_checks_its_config_once_into_a_campaign(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(MINIMAL))
    given = variant()
    campaign = workflow_campaign(given, [str(path)], tmp_path)
    assert campaign.source == str(path)
    assert campaign.analysis == AnalysisOptions.with_defaults()
    assert campaign.config["runs"] == 10 and given["runs"] == 10  # defaults filled in
    assert campaign.results == "results/t"
    assert (campaign.blocking, campaign.launch_key, campaign.looks.count) == ("none", "launcher", 1)
    assert campaign.kernel_binary("openmpi") == "results/t/build/openmpi/mpiguide-bench"
    assert campaign.grid_spec() == {
        "nrep": 50,
        "experiments": MINIMAL["experiments"],
        "interleave": 5,
    }


def test_the_workflow_reads_its_config_files_again_strictly(tmp_path: Path) -> None:
    """Snakemake's reader keeps the last of two equal keys; the package's names the line."""
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(yaml.safe_dump(MINIMAL))
    second.write_text("mpi:\n  openmpi: {}\n  openmpi: {}\n")
    with pytest.raises(ConfigError, match=r"b\.yaml:3: invalid YAML: key 'openmpi' is given twice"):
        workflow_campaign(variant(), [str(first), str(second)], tmp_path)


def test_the_workflow_names_every_config_file_in_its_messages(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(yaml.safe_dump(MINIMAL))
    second.write_text("runs: 0\n")
    with pytest.raises(ConfigError, match=f"^{first}, {second}: runs: 0 is less than"):
        workflow_campaign(variant(runs=0), [str(first), str(second)], tmp_path)


@pytest.mark.parametrize(
    "guideline",
    [
        {"id": "ALGO.mine", "source": "s", "text": "t", "relation": "le",
         "lhs": {"reorder": 0}, "rhs": {"reorder": 1}},
        {"id": "TUNE.openmpi.bcast", "source": "s", "text": "t", "relation": "le",
         "lhs": {"reorder": 0}, "rhs": {"reorder": 1}},
        {"id": "APPLIED.openmpi.bcast", "source": "s", "text": "t", "relation": "le",
         "lhs": {"reorder": 0}, "rhs": {"reorder": 1}},
    ],
)  # fmt: skip
def test_a_campaigns_guideline_may_not_take_a_tuning_guidelines_name(
    tmp_path: Path, guideline: dict[str, Any]
) -> None:
    """`analysis.tuning` decides every guideline whose id begins ALGO., TUNE. or APPLIED.: a
    campaign's own guideline so named is refused before anything runs."""
    path = tmp_path / "c.yaml"
    config = variant(guidelines=["GL4", guideline])
    path.write_text(yaml.safe_dump(config))
    message = (
        rf"c\.yaml: guidelines\[1\]: '{guideline['id']}': ids beginning ALGO\., TUNE\. or "
        r"APPLIED\. name"
    )
    with pytest.raises(ConfigError, match=message):
        workflow_campaign(config, [str(path)], tmp_path)
