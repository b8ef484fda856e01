# Glue between Snakemake and the package: the campaign checked once (mpiguide.campaign.config),
# campaign constants, wildcard constraints, and the thin input and params functions of the rules.
# Evaluated at parse time, before any job starts; it writes nothing (but moves runs aside at
# `remeasure`). A bad config stops with one message naming file and key.

import gc
import json
import os
import re
import shlex
import sys
from pathlib import Path

# Snakemake and what it imported (pandas among them) hold most of this process's objects
# already; each full collection of the garbage collector would walk them again while the rules
# are read and the DAG is built. Frozen, they are left out (the gain:
# docs/measurements/workflow.md).
gc.freeze()

from snakemake.logging import logger

from mpiguide.analysis.rounds import read_plan
from mpiguide.campaign.config import workflow_campaign
from mpiguide.campaign.expansion import preloaded_paths
from mpiguide.campaign.listings import workflow_listing
from mpiguide.campaign.executor import launch_mode, prepare_jobs, read_command_line
from mpiguide.campaign.launches import (
    block_records as launch_block_records,
    blocks_dir,
    campaign_launches,
    last_round,
    launch_files,
    plan_round_of_run,
    round_plan,
)
from mpiguide.campaign.options_record import as_json, canonical_json
from mpiguide.campaign.preflight import preflight, require_commands
from mpiguide.campaign.raw_guard import check_measured
from mpiguide.campaign.snakemake_internals import (
    cancel_scheduler_timers,
    config_files,
    is_main_process,
    resource_settings,
    runtime_minutes,
    snakefile_dir,
    uses_conda,
)
from mpiguide.core.errors import MpiguideError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE
from mpiguide.selftest.inject import inject_libraries
from mpiguide.core.paths import (
    c_component,
    c_sources,
    ALGORITHMS_CSV,
    ALGORITHMS_PNG,
    DECIDED_WITH_JSON,
    GUIDELINE_FILES,
    GUIDELINES_TREE,
    INPUTS_TREE,
    RAW_TREE,
    SLOWDOWN_CSV,
    TESTS_CSV,
    TUNING_MD,
    TUNING_TREE,
    VERIFY_TREE,
    mockup_tuning_name,
    round_number,
)

# The checkout this workflow is read from, two levels above this file: "." when Snakemake runs in
# it; as a module of another workflow (docs/workflow.md#use-from-another-workflow) the working
# directory is that workflow's, and the kernel's and injector's sources are named from there.
# Relative, so that moving both together changes no input or params (and rebuilds nothing).
RULES_DIR = snakefile_dir(workflow)
if not isinstance(RULES_DIR, Path):
    sys.exit(
        f"mpiguide: the workflow is read from {RULES_DIR}: as a module it needs a checkout on "
        "this machine (`snakefile:` a path), whose kernel sources the build jobs compile"
    )
CHECKOUT = os.path.relpath(RULES_DIR.parents[1])

# The config files are --configfile's, or the demo campaign that profiles/default names when
# none is given (a --configfile replaces it rather than merging into it): this Snakefile has no
# `configfile:` directive. Used as a module, the importing workflow's `configfile:` names them.
CONFIG_FILES = [os.path.relpath(path) for path in config_files(workflow)]
if not CONFIG_FILES:
    sys.exit(
        "no campaign config file: name one with --configfile FILE (profiles/default names "
        "config/config.yaml unless --workflow-profile replaces it; a workflow that uses mpiguide "
        "as a module names it with `configfile:`)"
    )
CATALOGUE = str(GUIDELINE_CATALOGUE)

# Every check of the config, once; the rules see only the checked config (scaled, with the
# entries `algorithms:` adds). The executor, never a --config, decides how runs start (`srun` in
# SLURM jobs), and nothing reaches SLURM that would fail there (mpiguide.campaign.executor).
COMMAND_LINE = read_command_line(sys.argv[1:])
try:
    config["launch"] = launch_mode(COMMAND_LINE, config.get("launch"), CONFIG_FILES)
    CAMPAIGN = workflow_campaign(
        config,
        CONFIG_FILES,
        Path.cwd(),
        workflow_listing(is_main_process(workflow), COMMAND_LINE.dry_run),
    )
    prepare_jobs(COMMAND_LINE, CAMPAIGN, workflow, logger.warning)
except MpiguideError as err:
    sys.exit(str(err))
config.clear()
config.update(CAMPAIGN.config)
CONFIG_SOURCE = CAMPAIGN.source

RESULTS = CAMPAIGN.results
MPI = CAMPAIGN.mpi

# Analysis-only mode: raw files copied from elsewhere are plain inputs; the build and run rules
# are not defined, so nothing can rebuild the kernel or re-measure (docs/workflow.md).
ANALYSIS_ONLY = config["analysis_only"]
# `blocking: run` measures run NN of every entry of a deployment back to back in one job (a
# block; mpiguide.campaign.blocks), so that comparisons across entries are paired block by block.
BLOCKING = CAMPAIGN.blocking
BLOCKS = blocks_dir(CAMPAIGN)

# `runs: {min, max, step}`: an adaptive campaign, measured in rounds (rounds.smk): round 0 is
# the first look's runs of every experiment, each later round the runs up to the next look of
# only the experiments the round before left open. An integer is one look: every run, at once.
ADAPTIVE = CAMPAIGN.looks.adaptive
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
if uses_conda(workflow):
    PYTHON_SETUP = (
        f"export PYTHONPATH={shlex.quote(str(Path(CHECKOUT, 'src').resolve()))}; "
    )
else:
    PYTHON_SETUP = (
        f'export PATH={shlex.quote(str(Path(sys.executable).parent))}:"$PATH"; '
    )
shell.prefix(f"set -euo pipefail; {PYTHON_SETUP}")


# Once its jobs are done Snakemake would still wait for its scheduler's last wake-up timer,
# up to a second, before it exits (mpiguide.campaign.snakemake_internals).
onsuccess:
    cancel_scheduler_timers()


onerror:
    cancel_scheduler_timers()


wildcard_constraints:
    mpi="|".join(re.escape(name) for name in MPI),
    nodes=r"\d+",
    ppn=r"\d+",
    run=r"\d\d+",
    round=r"\d\d+",


# A dry run (-n) moves nothing aside (Snakemake says it is one only after this is read).
DRY_RUN = COMMAND_LINE.dry_run

# Before any job runs (also in `snakemake -n`), once, by the Snakemake the user started (every
# job it spawns, a SLURM job, reads the rules again): a missing mpicc or launch command stops it;
# measured runs that an edited grid or seed would measure again stop it, or with `remeasure` move
# aside, before options.smk compares the records; a run's cost is said; a run job that cannot
# finish within its walltime is refused.
if not ANALYSIS_ONLY and is_main_process(workflow):
    try:
        require_commands(CAMPAIGN, DRY_RUN, logger.warning, uses_conda(workflow))
        check_measured(CAMPAIGN, DRY_RUN, logger.info, COMMAND_LINE)
        preflight(
            CAMPAIGN,
            lambda rule: runtime_minutes(resource_settings(workflow), rule),
            logger.info,
            logger.warning,
        )
    except MpiguideError as err:
        sys.exit(str(err))


def output_dir(wildcards, output) -> str:
    """The directory of the rule's first output (for CLIs that take a directory)."""
    return os.path.dirname(output[0])


def deployment_nodes(wildcards) -> int:
    return int(wildcards.nodes)


def deployment_ranks(wildcards) -> int:
    return int(wildcards.nodes) * int(wildcards.ppn)


def kernel_conda_env(mpi: str) -> str | None:
    """The conda toolchain+MPI env, unless the entry loads site modules: a benchmark must
    measure the site's MPI, not conda's generic build."""
    return None if MPI[mpi]["modules"] else "../envs/kernel.yaml"


def planned_round(number: int):
    """The plan round `number` ended with (a checkpoint: its jobs run first)."""
    return read_plan(checkpoints.plan_round.get(round=round_number(number)).output[0])


def through_round(wildcards) -> int:
    """The last round a job reads (a round's aggregate), or every round."""
    number = getattr(wildcards, "round", None)
    return last_round(CAMPAIGN) if number is None else int(number)


def launches(wildcards) -> list:
    return campaign_launches(CAMPAIGN, through_round(wildcards), planned_round)


def files_of_launches(tree: str, suffix: str):
    """The input function of every launch's file of `tree` (inputs or raw)."""
    return lambda wildcards: launch_files(CAMPAIGN, tree, suffix, launches(wildcards))


raw_csvs = files_of_launches(RAW_TREE, "csv")
raw_jsons = files_of_launches(RAW_TREE, "json")
run_inputs = files_of_launches(INPUTS_TREE, "csv")


def block_records(wildcards) -> list[str]:
    """Every block's record (none without blocking): its launches, attempts and interference."""
    return launch_block_records(CAMPAIGN, launches(wildcards))


def input_plan(wildcards) -> list:
    """The plan a run of a later round of an adaptive campaign takes its experiments from
    (`ancient`: a plan re-decided after an analysis option changed never rewrites an input, nor
    so re-measures its run)."""
    number = plan_round_of_run(CAMPAIGN, int(wildcards.run))
    return [] if number is None else [ancient(round_plan(CAMPAIGN, number))]


def input_plan_option(wildcards, input) -> str:
    return f"--plan {shlex.quote(input.plan[0])}" if input.plan else ""


def library_choice_option(wildcards) -> str:
    """verify's Open MPI <entry>.applied runs no forced algorithm: its rules file overrides it;
    an Intel MPI preset entry runs the library's choice under its preset, of the ops that call
    its collective."""
    forced = CAMPAIGN.forces_algorithms(wildcards.mpi)
    ops = CAMPAIGN.ops_of(wildcards.mpi)
    words = ([] if forced else ["--library-choice-only"]) + (
        [] if ops is None else ["--ops", *ops]
    )
    return shlex.join(words)


# The kernel's sources sit in folders by concern below src/kernel (docs/kernel.md#source-layout);
# it also links the collective mock-ups of src/mockups, which libmpiguide-tune shares.
KERNEL_DIR = c_component(CHECKOUT, "kernel")
KERNEL_SOURCES = c_sources(CHECKOUT, "kernel", "mockups")


# libmpiguide-inject builds the workflow makes (LD_PRELOAD path -> the mpi entry whose mpicc
# builds it; rules in selftest.smk): entries that preload one are slowed copies
# (docs/selftest.md).
try:
    INJECT_LIBRARIES = {} if ANALYSIS_ONLY else inject_libraries(MPI, CONFIG_SOURCE)
except MpiguideError as err:
    sys.exit(str(err))
# libmpiguide-tune builds of a verify campaign (rules in tune.smk): a tuned entry preloads one.
TUNE_LIBRARIES = {} if ANALYSIS_ONLY else CAMPAIGN.tune_libraries()


def preloaded_libraries(mpi: str) -> list:
    """The libraries an entry preloads that the workflow builds (injector, tuning library): its
    runs wait for the builds (`ancient`: rebuilding a library never re-measures existing runs).
    """
    return [
        ancient(path)
        for path in preloaded_paths(MPI[mpi]["env"].get("LD_PRELOAD", ""))
        if path in INJECT_LIBRARIES or path in TUNE_LIBRARIES
    ]


kernel_binary = CAMPAIGN.kernel_binary
# The entries that build a kernel: all but those added for an algorithm or a tuning.
BUILT_MPI = CAMPAIGN.built_mpi()


GUIDELINE_OUTPUTS = {
    name: f"{RESULTS}/{GUIDELINES_TREE}/{name}" for name in GUIDELINE_FILES
}
