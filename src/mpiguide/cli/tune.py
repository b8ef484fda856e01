"""`tune`: from the verdicts to the library settings and libmpiguide-tune files that fix them."""

from __future__ import annotations

import argparse
from pathlib import Path

from mpiguide.cli.arguments import (
    CONFIG,
    DECIDED_WITH,
    OUTDIR,
    SCALE,
    TESTS,
    Command,
    Option,
    Role,
    existing_file,
    parse_json,
)


def tune(args: argparse.Namespace) -> None:
    import pandas as pd

    from mpiguide.analysis.analysis_types import Decisions
    from mpiguide.campaign.config import checked_campaign
    from mpiguide.campaign.schema import read_campaign_file
    from mpiguide.core.paths import ALGORITHMS_CSV, ALGORITHMS_PNG
    from mpiguide.tune.library_algorithms import settings_from_marks
    from mpiguide.tune.outputs import tune
    from mpiguide.tune.plot import plot_algorithms

    entries = args.entries
    if args.settings_json is not None:
        settings = settings_from_marks(parse_json(args.settings_json, "--settings-json", dict))
    else:
        config = read_campaign_file(args.config, args.scale)
        campaign = checked_campaign(config, str(args.config), args.config, Path.cwd())
        settings = {setting.guideline: setting for setting in campaign.settings}
        if entries is None:
            entries = list(campaign.built_mpi())
    tuned = tune(args.tests, args.decided_with, settings, args.outdir, entries)
    options = Decisions.read(args.decided_with).options
    plot_algorithms(
        pd.read_csv(args.outdir / ALGORITHMS_CSV), args.outdir / ALGORITHMS_PNG, options
    )
    print(
        f"{args.outdir}: {len(tuned.algorithms)} tuned (entry, op, ranks, msg_size), "
        f"{len(tuned.mockups)} libmpiguide-tune rule(s)"
    )


def verify_report(args: argparse.Namespace) -> None:
    from mpiguide.tune.verify_report import write_verify_report

    pairs = parse_json(args.pairs_json, "--pairs-json", list)
    checks = write_verify_report(
        args.tests, args.decided_with, args.tuned_algorithms, [tuple(pair) for pair in pairs],
        args.md, args.csv,
    )  # fmt: skip
    print(f"{args.md}: {len(checks)} check(s) of the tuned points")


COMMANDS = (
    Command(
        "tune",
        "from tests.csv, choose per collective, ranks and message size the fastest of the "
        "library's own algorithms, or of the mock-ups libmpiguide-tune runs, where it beats the "
        "collective significantly; write Figure 5's algorithms.csv and .png, an Open MPI rules "
        "file, MPICH cvars or Intel MPI I_MPI_ADJUST variables per swept entry, a "
        "libmpiguide-tune file per entry, and tuning.md",
        tune,
        (
            TESTS,
            DECIDED_WITH,
            CONFIG.but(
                help="the campaign: its entries' `algorithms:` are listed from the installed "
                "libraries",
                type=existing_file, required=False, one_of=True,
            ),
            Option("--settings-json",
                   "the swept settings as the workflow holds them (ALGO guideline -> setting)",
                   settings={"metavar": "JSON"}, one_of=True),
            SCALE,
            Option("--entries",
                   "the mpi entries that get a libmpiguide-tune file <entry>.tune (default: with"
                   " --config its entries that run their own kernel, else every entry of a mock-up"
                   " test)",
                   settings={"nargs": "*", "metavar": "ENTRY"}),
            OUTDIR,
        ),
    ),
    Command(
        "verify-report",
        "from a verify campaign's tests.csv: per (entry, collective, ranks, message size) that "
        "`tune` chose an algorithm for, or that a libmpiguide-tune rule (the <entry>.tune files "
        "beside algorithms.csv) replaces, the within-launch comparison with the library's own "
        "call on the new runs, and which comparisons were across launches and why",
        verify_report,
        (
            TESTS.but(help="the verify campaign's tests.csv"),
            DECIDED_WITH.but(help="the verify campaign's decided_with.json (mpiguide check)"),
            Option("--tuned-algorithms", "the tuned campaign's algorithms.csv (mpiguide tune)",
                   Role.READS, {"type": existing_file, "required": True, "metavar": "CSV"}),
            Option("--pairs-json",
                   "the verify campaign's (entry, entry.tuned) pairs of libmpiguide-tune, as JSON",
                   settings={"required": True, "metavar": "JSON"}),
            Option("--md", "the note to write", Role.WRITES,
                   {"type": Path, "required": True, "metavar": "FILE"}),
            Option("--csv", "the per-point checks to write", Role.WRITES,
                   {"type": Path, "required": True, "metavar": "FILE"}),
        ),
    ),
)  # fmt: skip
