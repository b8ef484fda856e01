# Config loading and validation, campaign constants, target and input functions.
# Everything here is evaluated at parse time, before any job starts: a bad config stops the
# workflow with one message naming the file and key, never a traceback.

import json
import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.settings.types import DeploymentMethod
from snakemake.sourcecache import LocalSourceFile
from snakemake.cli import get_argument_parser
from snakemake.logging import logger
from snakemake.utils import validate

from mpiguide.analysis.catalogue import load_catalogue
from mpiguide.analysis.rounds import read_plan, round_runs
from mpiguide.analysis.sequential import Looks
from mpiguide.tune.sweep import (
    kernel_entry,
    preloaded_paths,
    setting_marks,
    tune_libraries,
    tuned_pairs,
)
from mpiguide.campaign.config import (
    check_campaign,
    expanded_campaign,
    scaled_campaign,
    validate_schema,
)
from mpiguide.campaign.summary import MODEL as KERNEL_TIME_MODEL
from mpiguide.campaign.summary import describe_run, run_seconds
from mpiguide.campaign.walltime import check_walltime, least_run_seconds, run_jobs
from mpiguide.core.errors import MpiguideError
from mpiguide.plan.grid import build_grid
from mpiguide.core.package_data import CONFIG_SCHEMA, GUIDELINE_CATALOGUE
from mpiguide.selftest.inject import inject_libraries
from mpiguide.campaign.launch import env_prefix, quoted_launcher
from mpiguide.campaign.options_record import record
from mpiguide.core.paths import (
    ALGORITHMS_CSV,
    ALGORITHMS_PNG,
    DEPLOYMENT_RUN_PATTERN,
    DECIDED_WITH_JSON,
    GATE_TXT,
    GUIDELINE_FILES,
    BLOCKS_TREE,
    CAMPAIGN_COST_CSV,
    COST_CSV,
    COST_FILES,
    COST_RST,
    JUNIT_XML,
    LOOKS_CSV,
    REPORT_TABLE_FILES,
    RESULTS_ROOT,
    ROUND_PATTERN,
    ROUNDS_TREE,
    RUN_PATH,
    RUN_PATTERN,
    SLOWDOWN_CSV,
    SUMMARY_CSV,
    SUMMARY_MD,
    TESTS_CSV,
    TUNING_MD,
    TUNING_TREE,
    VERIFY_TREE,
    VERDICT_LINES_CSV,
    VERDICT_LINES_RST,
    VIOLATED_UNDECIDED_CSV,
    block_path,
    deployment_name,
    labels_of_plot,
    mockup_tuning_name,
    mpich_env_name,
    ompi_rules_name,
    round_name,
    round_number,
    run_path,
)
from mpiguide.core.strict_yaml import load_yaml

# The checkout this workflow is read from, two levels above this file: "." when Snakemake runs in
# it; as a module of another workflow (docs/workflow.md#use-from-another-workflow) the working
# directory is that workflow's, and the kernel's and injector's sources are named from there.
# Relative, so that moving both together changes no input or params (and rebuilds nothing).
RULES_DIR = workflow.current_basedir
if not isinstance(RULES_DIR, LocalSourceFile):
    sys.exit(
        f"mpiguide: the workflow is read from {RULES_DIR.get_path_or_uri(secret_free=True)}: as "
        "a module it needs a checkout on this machine (`snakefile:` a path), whose kernel "
        "sources the build jobs compile"
    )
CHECKOUT = os.path.relpath(
    Path(RULES_DIR.get_path_or_uri(secret_free=False)).parents[1]
)

# The config files are --configfile's, or the demo campaign that profiles/default names when
# none is given (a --configfile replaces it rather than merging into it): this Snakefile has no
# `configfile:` directive. Used as a module, the importing workflow's `configfile:` names them.
CONFIG_FILES = [os.path.relpath(path) for path in workflow.configfiles]
if not CONFIG_FILES:
    sys.exit(
        "no campaign config file: name one with --configfile FILE (profiles/default names "
        "config/config.yaml unless --workflow-profile replaces it; a workflow that uses mpiguide "
        "as a module names it with `configfile:`)"
    )
CONFIG_SOURCE = ", ".join(CONFIG_FILES)
CATALOGUE = str(GUIDELINE_CATALOGUE)

# Schema first (types, required keys, defaults filled in), then what a schema cannot express
# (op names, where expressions, guideline ids, selectors, the varied parameter, ranks >= 2).
# Snakemake's schema error dumps the schema; the package's names "file: key: problem".
SCHEMA = CONFIG_SCHEMA
try:
    # Snakemake has read the config files already, keeping the last of two equal keys (a second
    # `mpi` entry of the same name replaces the first); reading them again with the package's
    # strict loader refuses that, naming the line. Syntax errors never get here: Snakemake
    # stops on them before this file runs (docs/config.md).
    for config_file in CONFIG_FILES:
        load_yaml(Path(config_file))
    # The package's validation first: it names file and key, and its integers are integers as
    # written (`runs: 8.0` is not one); Snakemake's own then passes.
    validate_schema(config, load_yaml(SCHEMA), CONFIG_SOURCE)
    validate(config, str(SCHEMA))
    # At `scale: local` (--config scale=local) the campaign's `local:` block replaces what it
    # names; the rules see only the scaled config.
    scaled = scaled_campaign(config, load_yaml(SCHEMA), CONFIG_SOURCE, Path.cwd())
    # An entry's `algorithms:` become entries of their own, with their guidelines.
    scaled = expanded_campaign(scaled, CONFIG_SOURCE, Path.cwd())
    config.clear()
    config.update(scaled)
    check_campaign(config, load_catalogue(Path(CATALOGUE)), CONFIG_SOURCE)
except MpiguideError as err:
    sys.exit(str(err))

RESULTS = f"{RESULTS_ROOT}/{config['campaign']}"
MPI = config["mpi"]
DEPLOYMENT_BY_NAME = {
    deployment_name(d["nodes"], d["ppn"]): d for d in config["deployments"]
}

# Analysis-only mode: raw files copied from elsewhere are plain inputs; the build and run rules
# are not defined, so nothing can rebuild the kernel or re-measure (docs/workflow.md).
ANALYSIS_ONLY = config["analysis_only"]
# `launch: slurm` (set by profiles/slurm) starts each run with the entry's `srun` command
# instead of its local `launcher`.
LAUNCH_KEY = {"local": "launcher", "slurm": "srun"}[config["launch"]]

# `blocking: run` measures run NN of every entry of a deployment back to back in one job (a
# block; mpiguide.campaign.blocks), so that comparisons across entries are paired block by block.
# With one entry there is nothing to block.
BLOCKING = config.get("blocking") or ("run" if len(MPI) >= 2 else "none")


def runtime_minutes(rule: str) -> float | None:
    """The `runtime` resource (minutes) of the rule's jobs: set-resources, else the profile's
    default-resources; None when neither sets a plain number."""
    settings = workflow.resource_settings
    for resources in (
        settings.overwrite_resources.get(rule),
        settings.default_resources,
    ):
        found = (
            dict(resources.items()).get("runtime") if resources is not None else None
        )
        if found is not None and not found.is_evaluable():
            return float(found.value)
    return None


BLOCKS = f"{RESULTS}/{BLOCKS_TREE}"

# `runs: {min, max, step}`: an adaptive campaign, measured in rounds (rounds.smk): round 0 is
# the first look's runs of every experiment, each later round the runs up to the next look of
# only the experiments the round before left open. An integer is one look: every run, at once.
LOOKS = Looks.of(config["runs"])
ADAPTIVE = LOOKS.adaptive
ROUNDS = f"{RESULTS}/{ROUNDS_TREE}"
# What tells `check` and `plan-round` to decide at the looks (empty for a fixed campaign).
RUNS_OPTION = (
    f"--runs-json {shlex.quote(json.dumps(config['runs'], sort_keys=True))}"
    if ADAPTIVE
    else ""
)

# The rules call `python -m mpiguide`. Under --sdm conda that is the analysis env's python (conda
# activation drops PYTHONPATH from the environment, so it is exported in the command) with the
# package from this checkout; otherwise the venv running Snakemake, which has mpiguide installed,
# whether or not it is activated.
if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
    PYTHON_SETUP = (
        f"export PYTHONPATH={shlex.quote(str(Path(CHECKOUT, 'src').resolve()))}; "
    )
else:
    PYTHON_SETUP = (
        f'export PATH={shlex.quote(str(Path(sys.executable).parent))}:"$PATH"; '
    )
shell.prefix(f"set -euo pipefail; {PYTHON_SETUP}")


wildcard_constraints:
    mpi="|".join(re.escape(name) for name in MPI),
    nodes=r"\d+",
    ppn=r"\d+",
    run=r"\d\d+",
    round=r"\d\d+",


def output_dir(wildcards, output) -> str:
    """The directory of the rule's first output (for CLIs that take a directory)."""
    return os.path.dirname(output[0])


def as_json(value) -> str:
    """Canonical JSON of a config value: stable across runs, so params triggers fire only on
    real changes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def grid_config() -> dict:
    """Only the keys that define the grid: editing anything else never re-plans."""
    return {"nrep": config["nrep"], "experiments": config["experiments"]}


def grid_config_json() -> str:
    return as_json(grid_config())


# A dry run (-n) writes nothing below the results: Snakemake says whether this is one only after
# the rule files are read, so its own parser reads the command line.
DRY_RUN = get_argument_parser().parse_known_args(sys.argv[1:])[0].dryrun

# What a run costs, said before anything runs (also by `snakemake -n`), and a run job that
# cannot finish within its walltime refused now rather than killed after hours. Once, by the
# Snakemake the user started: every job it spawns (a SLURM job) reads the rules again.
if not ANALYSIS_ONLY and workflow.is_main_process:
    try:
        RUN_GRID = build_grid(grid_config(), CONFIG_SOURCE)
        logger.info(
            "mpiguide: "
            + describe_run(run_seconds(config, RUN_GRID), least_run_seconds(RUN_GRID))
            + f" (an estimate: {KERNEL_TIME_MODEL})"
        )
        check_walltime(
            config,
            RUN_GRID,
            BLOCKING,
            {rule: runtime_minutes(rule) for rule in run_jobs(config, BLOCKING)},
            CONFIG_SOURCE,
        )
    except MpiguideError as err:
        sys.exit(str(err))


def options_record(name: str, value) -> str:
    """`results/<campaign>/options/<name>.json`, rewritten only when `value` changes: as a rule
    input it re-runs the rule on a change even without .snakemake/ metadata (a fresh clone,
    copied results), where params alone would not (mpiguide.campaign.options_record)."""
    return record(f"{RESULTS}/options/{name}.json", as_json(value), DRY_RUN)


def analysis_options() -> str:
    """What the verdicts depend on besides the medians and the catalogue."""
    return options_record(
        "analysis", {"analysis": config["analysis"], "guidelines": config["guidelines"]}
    )


def campaign_shape() -> str:
    """Which runs the aggregate joins: a removed deployment or entry re-aggregates too."""
    return options_record(
        "campaign",
        {
            "mpi": list(MPI),
            "deployments": config["deployments"],
            "runs": config["runs"],
        },
    )


def mpi_env_prefix(mpi: str) -> str:
    return env_prefix(MPI[mpi]["env"])


def kernel_heap_option(mpi: str) -> str:
    """`--heap SETTING`: the entry's allocator setting, applied by the kernel per launch."""
    return f"--heap {MPI[mpi].get('heap', 'default')}"


def mpi_launch_command(mpi: str) -> str:
    return quoted_launcher(
        MPI[mpi][LAUNCH_KEY], f"{CONFIG_SOURCE}: mpi.{mpi}.{LAUNCH_KEY}"
    )


def kernel_conda_env(mpi: str) -> str | None:
    """The conda toolchain+MPI env, unless the entry loads site modules: a benchmark must
    measure the site's MPI, not conda's generic build."""
    return None if MPI[mpi]["modules"] else "../envs/kernel.yaml"


def deployment_nodes(wildcards) -> int:
    return int(wildcards.nodes)


def deployment_ranks(wildcards) -> int:
    return int(wildcards.nodes) * int(wildcards.ppn)


def kernel_node_size_option(wildcards) -> str:
    """`--node-size K` for a deployment that treats each K consecutive ranks as one node (to run
    node-aware operations on one machine); empty otherwise."""
    deployment = DEPLOYMENT_BY_NAME[deployment_name(wildcards.nodes, wildcards.ppn)]
    node_size = deployment.get("node_size")
    return "" if node_size is None else f"--node-size {int(node_size)}"


def block_spec(wildcards) -> str:
    """The block's description for `mpiguide run-block`, one JSON word: every entry's launcher,
    env and modules go to the launch as arguments, never through a shell."""
    nodes, ppn, run = int(wildcards.nodes), int(wildcards.ppn), int(wildcards.run)
    entries = []
    for mpi in MPI:
        mpi_launch_command(
            mpi
        )  # a launcher that cannot be split stops here, naming its key
        path = run_path(mpi, nodes, ppn, run)
        entries.append(
            {
                "mpi": mpi,
                "launcher": MPI[mpi][LAUNCH_KEY],
                "key_path": f"{CONFIG_SOURCE}: mpi.{mpi}.{LAUNCH_KEY}",
                "env": MPI[mpi]["env"],
                "modules": MPI[mpi]["modules"],
                "kernel": kernel_binary(mpi),
                "input": f"{RESULTS}/inputs/{path}.csv",
                "output": f"{RESULTS}/raw/{path}.csv",
                "log": f"{RESULTS}/logs/run/{path}.log",
            }
        )
    deployment = DEPLOYMENT_BY_NAME[deployment_name(nodes, ppn)]
    return as_json(
        {
            "seed": config["seed"],
            "nodes": nodes,
            "ppn": ppn,
            "run": run,
            "node_size": deployment.get("node_size"),
            "record": f"{BLOCKS}/{block_path(nodes, ppn, run)}.json",
            "entries": entries,
        }
    )


def round_plan(number: int) -> str:
    """The plan round `number` of an adaptive campaign ends with (a checkpoint's output)."""
    return f"{ROUNDS}/{round_name(number)}.json"


def campaign_launches(
    last_round: int = LOOKS.count - 1,
) -> list[tuple[str, int, int, int]]:
    """(mpi, nodes, ppn, run) of every launch: each run of a fixed campaign; of an adaptive one
    the first look's runs of every entry and deployment, then what each round's plan had the
    next round measure, through `last_round` or the round whose plan ends the campaign.
    """
    launches = [
        (mpi, d["nodes"], d["ppn"], run)
        for mpi in MPI
        for d in config["deployments"]
        for run in round_runs(LOOKS, 0)
    ]
    for number in range(1, last_round + 1):
        plan = read_plan(
            checkpoints.plan_round.get(round=round_number(number - 1)).output[0]
        )
        if plan["done"]:
            break
        launches += [
            (item["mpi"], item["nodes"], item["ppn"], run)
            for item in plan["measure"]
            for run in range(*plan["next_runs"])
        ]
    if ADAPTIVE and last_round == LOOKS.count - 1:
        # A plan re-decided after an analysis change may no longer name runs measured before
        # (it ends the campaign sooner, or leaves an entry out): the verdicts use them too.
        named = set(launches)
        launches += [launch for launch in measured_launches() if launch not in named]
    return launches


def measured_launches() -> list[tuple[str, int, int, int]]:
    """(mpi, nodes, ppn, run) of every raw run with its provenance on disk, of an entry and a
    deployment of the campaign."""
    deployments = {(d["nodes"], d["ppn"]) for d in config["deployments"]}
    found = []
    for provenance in sorted(Path(RESULTS, "raw").glob("*/*/run*.json")):
        match = RUN_PATH.match(
            provenance.relative_to(Path(RESULTS, "raw")).with_suffix("").as_posix()
        )
        if match is None or not provenance.with_suffix(".csv").is_file():
            continue
        launch = (
            match["mpi"],
            int(match["nodes"]),
            int(match["ppn"]),
            int(match["run"]),
        )
        if launch[0] in MPI and launch[1:3] in deployments:
            found.append(launch)
    return found


def campaign_files(
    tree: str, suffix: str, last_round: int = LOOKS.count - 1
) -> list[str]:
    """Every launch's file of `tree` (inputs or raw)."""
    return [
        f"{RESULTS}/{tree}/{run_path(mpi, nodes, ppn, run)}.{suffix}"
        for mpi, nodes, ppn, run in campaign_launches(last_round)
    ]


def through_round(wildcards) -> int:
    """The last round a job reads (a round's aggregate), or every round."""
    number = getattr(wildcards, "round", None)
    return LOOKS.count - 1 if number is None else int(number)


def raw_csvs(wildcards) -> list[str]:
    return campaign_files("raw", "csv", through_round(wildcards))


def raw_jsons(wildcards) -> list[str]:
    return campaign_files("raw", "json", through_round(wildcards))


def run_inputs(wildcards) -> list[str]:
    return campaign_files("inputs", "csv", through_round(wildcards))


def block_records(wildcards) -> list[str]:
    """Every block's record (none without blocking): its launches, attempts and interference."""
    if BLOCKING != "run":
        return []
    launches = campaign_launches(through_round(wildcards))
    blocks = dict.fromkeys((nodes, ppn, run) for _, nodes, ppn, run in launches)
    return [f"{BLOCKS}/{block_path(*block)}.json" for block in blocks]


def input_plan(wildcards) -> list:
    """The plan a run of a later round of an adaptive campaign takes its experiments from
    (`ancient`: a plan re-decided after an analysis option changed never rewrites an input, nor
    so re-measures its run)."""
    if not ADAPTIVE:
        return []
    number = int(LOOKS.reached(int(wildcards.run))) + 1
    return [] if number == 0 else [ancient(round_plan(number - 1))]


def input_plan_option(wildcards, input) -> str:
    return f"--plan {shlex.quote(input.plan[0])}" if input.plan else ""


# The kernel's sources sit in folders by concern below src/kernel (docs/kernel.md#source-layout);
# it also links the collective mock-ups of src/mockups, which libmpiguide-tune shares.
KERNEL_DIR = str(Path(CHECKOUT, "src", "kernel"))
MOCKUPS_DIR = str(Path(CHECKOUT, "src", "mockups"))
KERNEL_SOURCES = sorted(
    str(path)
    for directory in (KERNEL_DIR, MOCKUPS_DIR)
    for pattern in ("*.c", "*.h", "Makefile")
    for path in Path(directory).rglob(pattern)
)


# libmpiguide-inject builds the workflow makes (LD_PRELOAD path -> the mpi entry whose mpicc
# builds it; rules in selftest.smk): entries that preload one are slowed copies
# (docs/selftest.md).
try:
    INJECT_LIBRARIES = {} if ANALYSIS_ONLY else inject_libraries(MPI, CONFIG_SOURCE)
except MpiguideError as err:
    sys.exit(str(err))
# libmpiguide-tune builds of a verify campaign (rules in tune.smk): a tuned entry preloads one.
TUNE_LIBRARIES = {} if ANALYSIS_ONLY else tune_libraries(config)


def preloaded_libraries(mpi: str) -> list:
    """The libraries an entry preloads that the workflow builds (injector, tuning library): its
    runs wait for the builds (`ancient`: rebuilding a library never re-measures existing runs).
    """
    return [
        ancient(path)
        for path in preloaded_paths(MPI[mpi]["env"].get("LD_PRELOAD", ""))
        if path in INJECT_LIBRARIES or path in TUNE_LIBRARIES
    ]


def kernel_binary(mpi: str) -> str:
    """An entry added for an algorithm or a tuning runs its base entry's build (same mpicc)."""
    return f"{RESULTS}/build/{kernel_entry(config, mpi)}/mpiguide-bench"


# The entries that build a kernel: all but those added for an algorithm or a tuning.
BUILT_MPI = {mpi: MPI[mpi] for mpi in MPI if kernel_entry(config, mpi) == mpi}


GUIDELINE_OUTPUTS = {name: f"{RESULTS}/guidelines/{name}" for name in GUIDELINE_FILES}
# An adaptive campaign's check also writes, per guideline and look, the tests that stopped there.
ADAPTIVE_OUTPUTS = (
    {
        "looks": report(
            f"{RESULTS}/guidelines/{LOOKS_CSV}",
            caption="../report/looks.rst",
            category="Summary",
            labels={"table": "tests stopped per guideline and look"},
        )
    }
    if ADAPTIVE
    else {}
)
# What an adaptive campaign spent against a fixed one (rule campaign_cost, rounds.smk).
COST_OUTPUTS = (
    {name: f"{RESULTS}/guidelines/{name}" for name in COST_FILES} if ADAPTIVE else {}
)
# The CI gate's output: a target of `all` only when the campaign sets `fail_on`.
GATE_OUTPUT = f"{RESULTS}/guidelines/{GATE_TXT}"
GATE_TARGETS = [] if config["fail_on"] == "never" else [GATE_OUTPUT]
PLOTS = f"{RESULTS}/plots"
SLOWDOWN_OVERVIEW = f"{RESULTS}/guidelines/slowdown.png"


def plot_labels(wildcards) -> dict[str, str]:
    """Report labels of one plot file (mpiguide.core.paths names the plots)."""
    return labels_of_plot(wildcards.name)


def plot_subcategory(wildcards) -> str:
    return plot_labels(wildcards)["guideline"]
