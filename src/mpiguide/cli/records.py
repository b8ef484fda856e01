"""`record`: write an options record (mpiguide.campaign.options_record), the command of the
workflow's record jobs (workflow/rules/records.smk says why a command and not Python there)."""

from __future__ import annotations

import argparse
import json
import sys

from mpiguide.campaign.options_record import record_path
from mpiguide.cli.arguments import OUT, Command
from mpiguide.core.errors import MpiguideError


def record(args: argparse.Namespace) -> None:
    """The record read from standard input, written to --out atomically; the line
    `<out>: <record>` on standard output (the job's log)."""
    from mpiguide.campaign.options_record import write_record

    text = sys.stdin.read()
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        # an empty or cut record would read as changed options and force its consumers again
        raise MpiguideError(f"standard input: not an options record (JSON): {exc}") from None
    write_record(args.out, text)
    print(f"{args.out}: {text}")


COMMANDS = (
    Command("record", "write the options record (JSON) read from standard input", record, (
        OUT.but(help=f"the record to write: {record_path('results/<campaign>', '<name>')}"),
    )),
)  # fmt: skip
