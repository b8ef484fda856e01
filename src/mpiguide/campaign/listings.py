"""What the libraries of a campaign's swept entries offer, listed once and saved beside its
results.

The first invocation that plans a campaign runs each swept entry's listing program (`ompi_info`,
`mpivars`: mpiguide.tune.library_algorithms) and saves what it printed as
results/<campaign>/library_algorithms/<entry>.json. Every later reading of the campaign takes the
choices from there and starts no MPI program: the jobs Snakemake spawns (a SLURM job reads the
workflow again), later invocations, analysis-only mode. So the algorithms a campaign sweeps stay
those its runs were planned with, even across an upgrade of the library; a listing made with
another library or program than the entry names now is listed again, and deleting the file lists
again.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import ConfigError
from mpiguide.core.paths import LIBRARY_ALGORITHMS_TREE, library_listing_name
from mpiguide.tune.library_algorithms import Choices, choices_of, listing_command, run_listing


class Listing(enum.Enum):
    """What reading a campaign may do to learn the algorithms its libraries offer."""

    # List what is not saved, and save it: the invocation that plans the campaign.
    SAVE = "save"
    # List what is not saved, save nothing: a dry run, `validate`, an offline `tune`.
    RUN = "run"
    # Only read what was saved: analysis-only mode, and the jobs an invocation spawns.
    SAVED_ONLY = "saved-only"


@dataclass(frozen=True)
class Listings:
    """The saved listings of one campaign (`directory`: results/<campaign>/library_algorithms)."""

    directory: Path
    listing: Listing

    @classmethod
    def of(cls, results: Path, listing: Listing) -> Listings:
        return cls(results / LIBRARY_ALGORITHMS_TREE, listing)

    def choices(self, entry: str, library: str, program: str, key_path: str) -> Choices:
        """What `library` offers, as `program` lists it for the mpi entry `entry`."""
        path = self.directory / library_listing_name(entry)
        saved = _read(path)
        if saved is not None and (saved["library"], saved["program"]) == (library, program):
            return choices_of(library, program, saved["output"], f"{key_path} ({path})")
        if self.listing is Listing.SAVED_ONLY:
            found = (
                "is missing"
                if saved is None
                else f"holds what {saved['program']!r} listed, not {program!r}"
            )
            raise ConfigError(
                f"{key_path}: {path} {found}: analysis-only mode and the workflow's jobs start no "
                f"MPI program to list {library}'s algorithms; copy {self.directory} with the raw "
                "runs, or run the workflow once where the library is installed"
            )
        output = run_listing(library, program, key_path)
        choices = choices_of(library, program, output, key_path)
        if self.listing is Listing.SAVE:
            record = {
                "library": library,
                "program": program,
                "command": listing_command(library, program),
                "output": output,
            }
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as temporary:
                temporary.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        return choices


def _read(path: Path) -> dict[str, Any] | None:
    """A saved listing, or None where there is none."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise ConfigError(
            f"{path}: cannot read the saved listing ({error}); delete it to list "
            "the library's algorithms again"
        ) from None
    fields = ("library", "program", "output")
    if not isinstance(record, dict) or not all(isinstance(record.get(f), str) for f in fields):
        raise ConfigError(
            f"{path}: not a saved listing (needs the strings {', '.join(fields)}); delete it to "
            "list the library's algorithms again"
        )
    return record


def workflow_listing(main_process: bool, dry_run: bool) -> Listing:
    """What an invocation may do to learn a library's algorithms: the one a user started lists
    what is not saved and saves it (a dry run writes nothing), the jobs it spawns (a SLURM job
    reads the workflow again) only read what it saved."""
    if not main_process:
        return Listing.SAVED_ONLY
    return Listing.RUN if dry_run else Listing.SAVE
