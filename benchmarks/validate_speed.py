"""How fast the command line answers: `mpiguide validate` on a config the schema refuses (a
campaign name with a slash), `--help` and `--version`, each a fresh interpreter as a user starts
it. Per command it prints the median wall time of `--repeats` starts and, from one more start
under `python -X importtime`, the cumulative import time of mpiguide.cli and whether numpy,
pandas, scipy or matplotlib were imported.

Usage: python benchmarks/validate_speed.py [--repeats 5] [--python PYTHON]
(run from the checkout with PYTHONPATH=src so that its package is the one measured)
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO

HEAVY = ("numpy", "pandas", "scipy", "matplotlib")
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def schema_error_config(directory: Path) -> Path:
    """The demo campaign with a name the schema refuses."""
    text = (REPO / "config" / "config.yaml").read_text()
    path = directory / "slash.yaml"
    path.write_text(re.sub(r"(?m)^campaign: .*$", "campaign: de/mo", text, count=1))
    return path


def wall_seconds(python: str, arguments: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-m", "mpiguide", *arguments], capture_output=True, check=False)
    return time.perf_counter() - start


def imports(python: str, arguments: list[str]) -> tuple[float, list[str]]:
    """The cumulative import time of mpiguide.cli (s) and the heavy libraries imported."""
    result = subprocess.run(
        [python, "-X", "importtime", "-m", "mpiguide", *arguments],
        capture_output=True,
        text=True,
        check=False,
    )
    cli_us = 0
    heavy = set()
    for match in IMPORT_LINE.finditer(result.stderr):
        module = match[4]
        if module == "mpiguide.cli":
            cli_us = int(match[2])
        if module.split(".")[0] in HEAVY:
            heavy.add(module.split(".")[0])
    return cli_us / 1e6, sorted(heavy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        refused = schema_error_config(Path(directory))
        commands = {
            "validate (schema error)": ["validate", "--config", str(refused)],
            "--help": ["--help"],
            "--version": ["--version"],
        }
        print(f"{'command':<26}{'median wall s':>14}{'import mpiguide.cli s':>23}  heavy imports")
        for label, arguments in commands.items():
            times = [wall_seconds(args.python, arguments) for _ in range(args.repeats)]
            cli_seconds, heavy = imports(args.python, arguments)
            print(
                f"{label:<26}{statistics.median(times):>14.3f}{cli_seconds:>23.3f}  "
                f"{', '.join(heavy) or 'none'}"
            )


if __name__ == "__main__":
    main()
