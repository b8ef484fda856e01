"""The workflow's glue stays thin: common.smk is read at every invocation and by every job."""

from pathlib import Path

COMMON = Path(__file__).resolve().parents[3] / "workflow" / "rules" / "common.smk"
MAX_LINES = 300


def test_common_smk_stays_short() -> None:
    lines = len(COMMON.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{COMMON.name}: {lines} lines; the logic belongs in src/mpiguide"
