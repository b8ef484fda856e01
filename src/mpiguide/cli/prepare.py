"""The subcommands before the analysis: `validate` for users, and the workflow's steps that
plan, launch and aggregate the runs."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiguide.cli.arguments import (
    GRID,
    MEDIANS,
    OUT,
    TIMINGS,
    Command,
    Option,
    Role,
    existing_directory,
    existing_file,
    integer,
    name,
    parse_json,
)
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import GUIDELINE_CATALOGUE

if TYPE_CHECKING:
    from mpiguide.campaign.checked import Campaign

# `validate --strict`: the exit status of a valid campaign with warnings (that of a config that
# is refused stays 2, as for any error)
STRICT_FAILURE = 1


def campaign_options(
    configfiles: Sequence[Path] | None, config: Sequence[Sequence[str]] | None
) -> tuple[list[Path], list[str]]:
    """The campaign files and the KEY=VALUE entries of `validate`'s --configfile and --config
    (each --config's words). A --config word without `=`, or one that names a file, is a
    campaign file, as --config FILE was before validate read entries. Snakemake keeps only the
    last --config: entries after more than one are refused, to be typed after one for both."""
    files = list(configfiles or [])
    given = []
    for words in config or []:
        entries = [w for w in words if "=" in w and not Path(w).is_file()]
        files += [Path(w) for w in words if w not in entries]
        if entries:
            given.append(entries)
    if len(given) > 1:
        raise ConfigError(
            f"--config {' '.join(given[0])} ... --config {' '.join(given[-1])}: Snakemake keeps "
            "only the last --config; give every KEY=VALUE after one: --config "
            + " ".join(entry for entries in given for entry in entries)
        )
    if not files:
        raise ConfigError("validate: name the campaign file: --configfile FILE")
    return files, given[0] if given else []


def read_campaign(files: Sequence[Path], entries: Sequence[str], scale: str | None) -> Any:
    """The config the workflow gets from `snakemake --configfile FILES --config ENTRIES`: the
    files read by the strict loader and merged in order, then the entries as Snakemake reads
    them (snakemake.utils.update_config; snakemake_internals.parse_config), then `scale` (when
    given) as `scale:`; passed through the schema step (defaults filled in)."""
    from mpiguide.campaign.schema import load_schema, validate_schema
    from mpiguide.core.strict_yaml import load_yaml

    source = ", ".join(map(str, files))
    config = load_yaml(files[0])
    if len(files) > 1 or entries:
        from mpiguide.campaign.snakemake_internals import parse_config, update_config

        merged: dict[str, Any] = {}
        for path, loaded in zip(files, [config, *map(load_yaml, files[1:])], strict=True):
            if not isinstance(loaded, dict):
                validate_schema(loaded, load_schema(), str(path))  # says what is wrong
            update_config(merged, loaded)
        update_config(merged, parse_config(entries))
        config = merged
    if scale is not None and isinstance(config, dict):
        config["scale"] = scale
    validate_schema(config, load_schema(), source)
    return config


def check_machine(campaign: Campaign) -> None:
    """What the campaign's runs need of this machine, as the workflow checks it before its
    first job: each entry's mpicc and launch command (ConfigError naming every one missing),
    and under `launch: slurm` a SLURM controller that answers."""
    from mpiguide.campaign.preflight import missing_commands

    problems = missing_commands(campaign)
    if campaign.config["launch"] == "slurm" and not campaign.config["analysis_only"]:
        from mpiguide.campaign.executor import controller_problem

        unanswered = controller_problem()
        problems += [f"{campaign.source}: launch: slurm: {unanswered}"] if unanswered else []
    if problems:
        raise ConfigError(
            "\n".join(problems) + "\n(a campaign that runs on another machine: validate "
            "--elsewhere)"
        )


def validate(args: argparse.Namespace) -> None:
    files, entries = campaign_options(args.configfile, args.config)
    source = ", ".join(map(str, files))
    # the schema step alone first: a config it refuses is refused before numpy, pandas and
    # scipy load (the semantic checks and the summary need them)
    config = read_campaign(files, entries, args.scale)
    from mpiguide.analysis.catalogue import load_catalogue, resolve
    from mpiguide.campaign.config import checked_campaign
    from mpiguide.campaign.summary import summarise

    catalogue_path = args.catalogue or GUIDELINE_CATALOGUE
    campaign = checked_campaign(config, source, files[0], Path.cwd(), catalogue_path)
    checked = campaign.config
    if not args.elsewhere:
        check_machine(campaign)
    catalogue = load_catalogue(catalogue_path)
    summary = summarise(
        checked,
        campaign.analysis,
        resolve(checked["guidelines"], catalogue, source),
        campaign.ops_of,
    )
    print(f"{source}:")
    for line in summary.lines():
        print(f"  {line}")
    # the warnings (stderr) after the account, before the verdict, in a log of both streams;
    # stdout that cannot be written is main()'s to report, at its last flush
    with contextlib.suppress(OSError):
        sys.stdout.flush()
    for warning in summary.warnings:
        print(f"mpiguide: warning: {source}: {warning}", file=sys.stderr, flush=True)
    count = len(summary.warnings)
    if not count:
        print(f"{source}: ok")
        return
    warned = f"{count} warning{'s' if count > 1 else ''}"
    if args.strict:
        print(f"mpiguide: error: {source}: {warned} (--strict)", file=sys.stderr)
        raise SystemExit(STRICT_FAILURE)
    print(f"{source}: ok, {warned}")


def grid(args: argparse.Namespace) -> None:
    from mpiguide.campaign.config import validate_grid_spec
    from mpiguide.plan.grid import build_grid, write_grid

    spec = parse_json(args.config_json, "--config-json", dict)
    validate_grid_spec(spec, "--config-json")
    write_grid(build_grid(spec, "--config-json"), args.out)


def inputs(args: argparse.Namespace) -> None:
    from mpiguide.plan.inputs import write_run_input

    exp_ids = None
    if args.plan is not None:
        from mpiguide.analysis.rounds import planned_exp_ids, read_plan

        plan = read_plan(args.plan)
        exp_ids = planned_exp_ids(plan, args.mpi, args.nodes, args.ppn)
    write_run_input(
        args.grid, args.seed, args.mpi, args.nodes, args.ppn, args.run, args.out, exp_ids,
        library_choice_only=args.library_choice_only, ops=args.ops,
    )  # fmt: skip


def run_block(args: argparse.Namespace) -> None:
    from mpiguide.campaign.blocks import main

    status = main(args.spec_json)
    if status:
        raise SystemExit(status)


def aggregate(args: argparse.Namespace) -> None:
    from mpiguide.store.aggregate import aggregate

    aggregate(
        args.grid,
        args.raw,
        args.raw_root,
        args.inputs_root,
        args.timings,
        args.medians,
        args.blocks_root,
    )


COMMANDS = (
    Command("validate",
            "check a campaign config (schema and semantics) and what its runs need on this "
            "machine, read from the options snakemake takes",
            validate, (
        Option("--configfile",
               "the campaign config file; several are merged in order, as snakemake merges them",
               Role.READS, {"type": Path, "nargs": "+", "metavar": "FILE"}),
        Option("--config",
               "KEY=VALUE entries that replace the files' values, read as snakemake reads its "
               "--config (--config scale=local nrep=7); a FILE is a campaign file, as "
               "--configfile",
               settings={"nargs": "+", "action": "append", "metavar": "KEY=VALUE"}),
        Option("--catalogue",
               f"guideline catalogue (default: the package's, {GUIDELINE_CATALOGUE})",
               Role.READS, {"type": Path, "metavar": "FILE"}),
        Option("--scale",
               "check the campaign at this scale, as --config scale=SCALE (default: the "
               "file's `scale:`, else paper)",
               settings={"choices": ("paper", "local")}),
        Option("--elsewhere",
               "the campaign runs on another machine (a cluster, a CI runner): check the config "
               "and size it, but not the commands its runs need here (mpicc, launcher or srun, "
               "a SLURM controller)",
               settings={"action": "store_true"}),
        Option("--strict",
               f"exit {STRICT_FAILURE} when the campaign is valid but warned about (for CI)",
               settings={"action": "store_true"}),
    )),
    Command("grid", "write grid.csv from the grid keys of a config", grid, (
        Option("--config-json", '{"nrep": N, "experiments": [...]}',
               settings={"required": True, "metavar": "JSON"}),
        OUT.but(help="grid.csv to write"),
    )),
    Command("inputs", "write the shuffled kernel input of one run", inputs, (
        GRID,
        Option("--seed", "the campaign's seed", settings={"type": integer(0), "required": True}),
        Option("--mpi", "the mpi entry of the run",
               settings={"type": name, "required": True, "metavar": "NAME"}),
        Option("--nodes", "nodes of the run's deployment",
               settings={"type": integer(1), "required": True}),
        Option("--ppn", "processes per node of the run's deployment",
               settings={"type": integer(1), "required": True}),
        Option("--run", "the run's number (zero-based)",
               settings={"type": integer(0), "required": True}),
        OUT.but(help="the run's kernel input (CSV) to write"),
        Option("--plan",
               "a round's plan (plan-round): only the experiments it has this run measure",
               Role.READS, {"type": existing_file, "metavar": "FILE"}),
        Option("--library-choice-only",
               "no experiment that forces one of the library's algorithms (an entry whose "
               "library would run another: verify's Open MPI <entry>.applied)",
               settings={"action": "store_true"}),
        Option("--ops",
               "only the experiments of these ops (an Intel MPI preset entry: the ops that call "
               "its collective)",
               settings={"nargs": "+", "metavar": "OP"}),
    )),
    Command(
        "run-block",
        "launch one block: run NN of every mpi entry of a deployment, back to back",
        run_block,
        # the files of the block are named in the spec: campaign/blocks.py checks them
        (Option("--spec-json",
                "the block: seed, nodes, ppn, run, node_size, record and its entries"
                " (mpi, launcher, env, modules, kernel, input, output, log)",
                settings={"required": True, "metavar": "JSON"}),),
    ),
    Command("aggregate", "join raw kernel outputs with the grid", aggregate, (
        GRID,
        Option("--raw-root",
               "results/<campaign>/raw: the kernel outputs below <mpi>/<nodes>x<ppn>/",
               Role.READS_DIR,
               {"type": existing_directory, "required": True, "metavar": "DIR"}),
        Option("--inputs-root", "results/<campaign>/inputs: the run inputs, mirroring --raw-root",
               Role.READS_DIR,
               {"type": existing_directory, "required": True, "metavar": "DIR"}),
        TIMINGS.but(help="timings.parquet to write", role=Role.WRITES, type=Path, metavar="OUT"),
        MEDIANS.but(help="medians.parquet to write", role=Role.WRITES, type=Path, metavar="OUT"),
        Option("--blocks-root",
               "the block records (blocks/<nodes>x<ppn>/run<NN>.json) of blocked runs",
               Role.READS_DIR, {"type": Path, "metavar": "DIR"}),
        Option("raw", "the kernel outputs of every run (RAW.json beside each)", Role.READS,
               {"type": existing_file, "nargs": "+", "metavar": "RAW.csv"},
               companions=(".json",)),
    )),
)  # fmt: skip
