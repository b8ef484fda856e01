"""Bad campaign configs: `mpiguide validate` exits 2 with one clear message naming the file and
the key, and no traceback. Each case states its expected message in a `# expect:` header."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

CASES = sorted(Path(__file__).parent.glob("*.yaml"))
PWNED = Path("/tmp/mpiguide-pwned")  # the hostile cases try to create it


def expected_message(case: Path) -> str:
    for line in case.read_text().splitlines():
        if line.startswith("# expect: "):
            return line.removeprefix("# expect: ")
    raise AssertionError(f"{case}: no '# expect:' header")


def validate(case: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mpiguide", "validate", "--config", str(case)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def results() -> dict[Path, subprocess.CompletedProcess[str]]:
    """Every case validated once, on all cores (each run spends a second importing)."""
    PWNED.unlink(missing_ok=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        return dict(zip(CASES, pool.map(validate, CASES), strict=True))


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 15


def test_no_hostile_string_ran_a_command(
    results: dict[Path, subprocess.CompletedProcess[str]],
) -> None:
    assert not PWNED.exists()


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_bad_config_is_refused_with_a_clear_message(
    results: dict[Path, subprocess.CompletedProcess[str]], case: Path
) -> None:
    result = results[case]
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith(f"mpiguide: error: {case}")
    assert expected_message(case) in result.stderr
    assert "Traceback" not in result.stderr
