"""`selftest`: the false-alarm rate and power of a self-test campaign."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mpiguide.cli.arguments import DECIDED_WITH, MEDIANS, Command, Option, Role
from mpiguide.core.errors import ConfigError
from mpiguide.core.paths import RUN_LOGS_TREE


def selftest(args: argparse.Namespace) -> None:
    """The rates of the campaign in `--config-json`, its verdicts decided with the options and
    guidelines of `--decided-with`."""
    from mpiguide.analysis.analysis_types import DECIDED_WITH_KEYS, Decisions
    from mpiguide.selftest.power import RESAMPLES, selftest

    resamples = RESAMPLES if args.resamples is None else args.resamples
    if resamples < 1:
        raise ConfigError(f"--resamples must be at least 1, not {resamples}")
    try:
        config = json.loads(args.config_json)
    except json.JSONDecodeError as error:
        raise ConfigError(f"--config-json: invalid JSON: {error}") from None
    if not isinstance(config, dict) or not isinstance(config.get("mpi"), dict):
        raise ConfigError("--config-json: expected a campaign config with an mpi mapping")
    held = [key for key in DECIDED_WITH_KEYS if key in config]
    if held:
        raise ConfigError(
            f"--config-json: {held[0]}: check's record holds it; give it with --decided-with"
        )
    source = str(config.get("campaign", "--config-json"))
    decisions = Decisions.read(args.decided_with)
    campaign = {**config, "guidelines": list(decisions.selection)}
    selftest(campaign, decisions.options, args.medians, args.run_logs, args.csv, args.plot,
             args.markdown, resamples, source)  # fmt: skip


def _written(flag: str, text: str) -> Option:
    return Option(flag, text, Role.WRITES, {"type": Path, "required": True, "metavar": "FILE"})


COMMANDS = (
    Command(
        "selftest",
        "false-positive and detection rates of a self-test campaign (docs/selftest.md)",
        selftest,
        (
            Option("--config-json",
                   "the campaign config, defaults filled in (the workflow's `config`), without "
                   "`analysis` and `guidelines`",
                   settings={"required": True, "metavar": "JSON"}),
            DECIDED_WITH,
            MEDIANS.but(help="medians.parquet of the self-test campaign", type=Path,
                        metavar="PARQUET"),
            Option("--run-logs",
                   f"{RUN_LOGS_TREE} of the campaign: <mpi>/<nodes>x<ppn>/run<NN>.log",
                   Role.READS_DIR, {"type": Path, "required": True, "metavar": "DIR"}),
            _written("--csv", "the CSV file to write"),
            _written("--plot", "the PNG file to write"),
            _written("--markdown",
                     "the verdict shares as Markdown tables, as docs/selftest.md shows them"),
            Option("--resamples", "draws of runs per run count (default: 100)",
                   settings={"type": int, "metavar": "N"}),
        ),
    ),
)  # fmt: skip
