"""`tune`: from the verdicts to the library settings and libmpiguide-tune files that fix them."""

from __future__ import annotations

import argparse

from mpiguide.cli.arguments import (
    CONFIG,
    DECIDED_WITH,
    OUTDIR,
    SCALE,
    TESTS,
    Command,
    Option,
    existing_file,
    parse_json,
)


def tune(args: argparse.Namespace) -> None:
    import pandas as pd

    from mpiguide.campaign.config import load_campaign
    from mpiguide.core.paths import ALGORITHMS_CSV, ALGORITHMS_PNG
    from mpiguide.tune.outputs import tune
    from mpiguide.tune.plot import plot_algorithms
    from mpiguide.tune.sweep import kernel_entry, settings_from_marks, settings_in

    entries = args.entries
    if args.settings_json is not None:
        settings = settings_from_marks(parse_json(args.settings_json, "--settings-json", dict))
    else:
        config = load_campaign(args.config, None, args.scale)
        settings = settings_in(config)
        if entries is None:
            entries = [name for name in config["mpi"] if kernel_entry(config, name) == name]
    tuned = tune(args.tests, args.decided_with, settings, args.outdir, entries)
    plot_algorithms(pd.read_csv(args.outdir / ALGORITHMS_CSV), args.outdir / ALGORITHMS_PNG)
    print(
        f"{args.outdir}: {len(tuned.algorithms)} tuned (entry, op, ranks, msg_size), "
        f"{len(tuned.mockups)} libmpiguide-tune rule(s)"
    )


COMMANDS = (
    Command(
        "tune",
        "from tests.csv, choose per collective, ranks and message size the fastest of the "
        "library's own algorithms, or of the mock-ups libmpiguide-tune runs, where it beats the "
        "collective significantly; write Figure 5's algorithms.csv and .png, an Open MPI rules "
        "file or MPICH cvars per swept entry, a libmpiguide-tune file per entry, and tuning.md",
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
                   "the added entries' settings as the workflow holds them (entry -> setting)",
                   settings={"metavar": "JSON"}, one_of=True),
            SCALE,
            Option("--entries",
                   "the mpi entries that get a libmpiguide-tune file <entry>.tune (default: with"
                   " --config its entries, else every entry of a mock-up test not added by a"
                   " sweep)",
                   settings={"nargs": "*", "metavar": "ENTRY"}),
            OUTDIR,
        ),
    ),
)  # fmt: skip
