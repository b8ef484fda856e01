"""Atomic outputs: no partial file under the final name, and errors name the final file."""

import errno
import os
from pathlib import Path

import pytest

from mpiguide.core.atomic import atomic_path


def test_the_file_appears_only_when_complete(tmp_path: Path) -> None:
    final = tmp_path / "out" / "x.csv"
    with pytest.raises(RuntimeError), atomic_path(final) as temporary:
        temporary.write_text("half")
        raise RuntimeError("writer failed")
    assert list(final.parent.iterdir()) == []
    with atomic_path(final) as temporary:
        temporary.write_text("whole")
    assert final.read_text() == "whole"
    assert list(final.parent.iterdir()) == [final]


def test_an_output_that_cannot_be_created_is_named_not_its_temporary(tmp_path: Path) -> None:
    # 250 characters is a valid name, "<name>.tmp-<pid>" is not (NAME_MAX 255): the open of the
    # temporary file fails, and the user must read the name they gave
    final = tmp_path / ("x" * 250)
    with pytest.raises(OSError) as error, atomic_path(final) as temporary:
        temporary.write_text("data")
    assert error.value.errno == errno.ENAMETOOLONG
    assert error.value.filename == str(final)
    assert ".tmp-" not in str(error.value)


def test_a_failed_write_names_the_output(tmp_path: Path) -> None:
    # a full disk: write() raises an OSError that names no file
    final = tmp_path / "x.csv"
    with pytest.raises(OSError) as error, atomic_path(final) as temporary:
        temporary.write_text("partial")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert (error.value.errno, error.value.filename) == (errno.ENOSPC, str(final))
    assert error.value.strerror == "No space left on device"
    assert list(tmp_path.iterdir()) == []


def test_errors_about_other_files_pass_unchanged(tmp_path: Path) -> None:
    missing = tmp_path / "input.csv"
    with pytest.raises(FileNotFoundError) as error, atomic_path(tmp_path / "x.csv"):
        missing.read_text()
    assert error.value.filename == str(missing)
