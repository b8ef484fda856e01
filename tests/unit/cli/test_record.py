"""`mpiguide record`: the options records' jobs write each record with it, the record on
standard input as workflow/rules/records.smk hands it over (`printf '%s' {params.text:q} |`,
Snakemake's `:q` being shlex.quote)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from mpiguide.campaign.options_record import as_json

# Whatever a config may hold: quotes of both kinds, markup, a shell's specials, a newline and
# text outside ASCII.
AWKWARD = {
    "text": 'it\'s "quoted" <b onmouseover=alert(1)>&amp;</b> $(touch x) `id` \\ ; |\nLübbe',
    "guidelines": ["GL4"],
}


def record(text: str, out: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The record job's command line, run by bash in `cwd` as Snakemake runs a shell job."""
    command = (
        f"set -euo pipefail; printf '%s' {shlex.quote(text)} | "
        f"{shlex.quote(sys.executable)} -m mpiguide record --out {shlex.quote(str(out))}"
    )
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, check=False, cwd=cwd
    )


def test_the_record_is_written_as_given(tmp_path: Path) -> None:
    text = as_json(AWKWARD)
    out = tmp_path / "options" / "analysis.json"
    result = record(text, out, tmp_path)
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8") == text
    assert result.stdout == f"{out}: {text}\n"  # the job's log
    assert sorted(os.listdir(out.parent)) == ["analysis.json"]  # no temporary left
    assert not (tmp_path / "x").exists()


def test_a_record_that_is_not_json_leaves_the_old_one(tmp_path: Path) -> None:
    out = tmp_path / "analysis.json"
    out.write_text('{"old":1}', encoding="utf-8")
    for text in ("", '{"cut'):
        result = record(text, out, tmp_path)
        assert result.returncode == 2
        assert result.stderr.startswith("mpiguide: error: standard input: not an options record")
        assert out.read_text(encoding="utf-8") == '{"old":1}'
