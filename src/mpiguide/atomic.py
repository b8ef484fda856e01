"""Atomic file output: readers never see a partly written file under its final name."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(final: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside `final`; rename it to `final` when the block succeeds.

    The temporary name (`<name>.tmp-<pid>`) lives in the same directory, so `os.replace` is an
    atomic rename on POSIX file systems. On any exception the temporary file is removed.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(f"{final.name}.tmp-{os.getpid()}")
    try:
        yield temporary
        os.replace(temporary, final)
    finally:
        temporary.unlink(missing_ok=True)
