"""Atomic file output: readers never see a partly written file under its final name."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def _naming_the_output(error: OSError, temporary: Path, final: Path) -> OSError:
    """`error` restated for the output the user asked for: the temporary name means nothing
    to them, and a failed write (a full disk) names no file at all."""
    if error.filename not in (None, str(temporary), temporary):
        return error  # about another file, e.g. an input read inside the block
    reason = error.strerror or str(error).replace(str(temporary), str(final))
    return OSError(error.errno, reason, str(final))


@contextlib.contextmanager
def atomic_path(final: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside `final`; rename it to `final` when the block succeeds.

    The temporary name (`<name>.tmp-<pid>`) lives in the same directory, so `os.replace` is an
    atomic rename on POSIX file systems. On any exception the temporary file is removed; an
    OSError about the temporary file (or about no file) is re-raised naming `final`.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(f"{final.name}.tmp-{os.getpid()}")
    try:
        yield temporary
        os.replace(temporary, final)
    except OSError as error:
        raise _naming_the_output(error, temporary, final) from error
    finally:
        # Best effort: when the temporary could not even be created (a name too long), its
        # unlink fails as well and must not replace the error that says why.
        with contextlib.suppress(OSError):
            temporary.unlink()
