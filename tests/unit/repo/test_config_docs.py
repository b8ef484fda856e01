"""The config key tables of docs/config.md and config/README.md are what the campaign schema's
descriptions generate (mpiguide.campaign.config_keys, scripts/config_docs.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mpiguide.campaign.config_keys import DOCUMENTS, END, generated, key_table, regenerate

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "config_docs.py"
BEGIN = "<!-- generated from config.schema.yaml{}: do not edit; python scripts/config_docs.py -->"
SCHEMA: dict[str, Any] = {
    "required": ["name"],
    "properties": {
        "name": {"description": "what it is ([Names](docs/config.md#names))", "type": "string"},
        "size": {"description": "bytes |x|\n  of it (see [models](docs/models.md))", "default": 1},
        "part": {
            "properties": {"flag": {"description": "on or off", "type": "boolean"}},
        },
    },
}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_document_is_what_the_schema_generates(document: str) -> None:
    expected = generated(REPO)[document]
    assert (REPO / document).read_text(encoding="utf-8") == expected, (
        f"{document} differs from config.schema.yaml's descriptions: "
        "run python scripts/config_docs.py"
    )


def test_table_lists_keys_with_defaults_and_links_relative_to_the_document() -> None:
    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "part": {"description": "p"}}}
    assert key_table(schema, "", "config/README.md").splitlines() == [
        "| key | default | meaning |",
        "|---|---|---|",
        "| `name` | required | what it is ([Names](../docs/config.md#names)) |",
        "| `size` | `1` | bytes \\|x\\| of it (see [models](../docs/models.md)) |",
        "| `part` | — | p |",
    ]
    assert "[Names](#names)" in key_table(schema, "", "docs/config.md")
    assert "[models](models.md)" in key_table(schema, "", "docs/config.md")


def test_table_without_defaults_has_no_default_column() -> None:
    assert key_table(SCHEMA, "/properties/part", "docs/config.md").splitlines() == [
        "| key | meaning |",
        "|---|---|",
        "| `flag` | on or off |",
    ]


def test_key_without_description_is_refused() -> None:
    with pytest.raises(ValueError, match=r"#/properties/part has no description"):
        key_table(SCHEMA, "", "docs/config.md")


def test_only_the_text_between_markers_is_rewritten() -> None:
    text = f"# Title\n\n{BEGIN.format('#/properties/part')}\nstale\n{END}\n\nprose\n"
    assert regenerate(text, "docs/x.md", SCHEMA) == (
        f"# Title\n\n{BEGIN.format('#/properties/part')}\n"
        f"| key | meaning |\n|---|---|\n| `flag` | on or off |\n{END}\n\nprose\n"
    )
    with pytest.raises(ValueError, match="no end marker"):
        regenerate(f"{BEGIN.format('')}\n", "docs/x.md", SCHEMA)
    with pytest.raises(ValueError, match="no generated table"):
        regenerate("# Title\n", "docs/x.md", SCHEMA)


def test_script_check_names_the_drifted_file_and_rewriting_fixes_it(tmp_path: Path) -> None:
    for relative in (SCRIPT.relative_to(REPO).as_posix(), *DOCUMENTS):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, tmp_path / relative)
    script = tmp_path / "scripts" / "config_docs.py"
    drifted = tmp_path / "config" / "README.md"
    drifted.write_text(drifted.read_text().replace("| `seed` | `1` |", "| `seed` | `2` |"))

    # The copy has no package of its own: it renders with this checkout's schema.
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(script), *args],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )

    check = run("--check")
    assert check.returncode == 1
    assert "config/README.md" in check.stderr and "docs/config.md" not in check.stderr
    assert run().returncode == 0
    assert run("--check").returncode == 0
    assert drifted.read_text() == (REPO / "config" / "README.md").read_text()
