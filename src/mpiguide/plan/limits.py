"""The kernel's limits (data/limits.tsv, printed byte for byte by `mpiguide-bench
--list-limits`): the one source of every upper bound the kernel puts on its command line and
input, which the campaign checks and the schema's maxima repeat (a test holds them equal)."""

from __future__ import annotations

import csv
from functools import cache

from mpiguide.core.errors import MpiguideError
from mpiguide.core.package_data import KERNEL_LIMITS

COLUMNS = ("limit", "value", "meaning")


@cache
def kernel_limits() -> dict[str, int]:
    """Each limit's largest allowed value, by name (`max_ranks`, `max_buffer_bytes`, ...)."""
    text = KERNEL_LIMITS.read_text(encoding="utf-8")
    reader = csv.DictReader(text.splitlines(), delimiter="\t")
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise MpiguideError(f"{KERNEL_LIMITS.name}: header must be {' '.join(COLUMNS)}")
    return {row["limit"]: int(row["value"]) for row in reader}
