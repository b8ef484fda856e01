"""The campaign config's keys documented from their one source, the `description:` of each key
in data/schemas/config.schema.yaml, as the Markdown key tables of docs/config.md and
config/README.md (scripts/config_docs.py rewrites them; a unit test holds them equal).

A generated table sits between a begin marker, which names the schema object whose keys it
lists (a JSON pointer after `config.schema.yaml#`; none: the top level), and the end marker.
Everything outside the markers is hand-written and kept as it is. Links in descriptions are
relative to the repository root and are rewritten relative to the document they land in.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpiguide.core.package_data import CONFIG_SCHEMA
from mpiguide.core.strict_yaml import load_package_yaml

# The documents holding generated key tables, relative to the repository root.
DOCUMENTS = ("docs/config.md", "config/README.md")
BEGIN = re.compile(
    r"<!-- generated from config\.schema\.yaml(?:#(/\S+))?: do not edit; "
    r"python scripts/config_docs\.py -->\n"
)
END = "<!-- end generated -->"
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _schema_object(schema: Mapping[str, Any], pointer: str) -> Mapping[str, Any]:
    """The subschema at a JSON pointer such as `/$defs/block` ('' is the whole schema)."""
    node = schema
    for part in pointer.split("/")[1:]:
        node = node[part]
    return node


def _link_from(document: str, match: re.Match[str]) -> str:
    target = match.group(1)
    if "://" in target or target.startswith("#"):
        return match.group(0)
    path, hash_sign, anchor = target.partition("#")
    if path == document:
        return f"](#{anchor})"
    relative = posixpath.relpath(path, posixpath.dirname(document) or ".")
    return f"]({relative}{hash_sign}{anchor})"


def _cell(text: str, document: str) -> str:
    """A description as one table cell of `document`: one line, links relative to it."""
    line = _LINK.sub(lambda match: _link_from(document, match), " ".join(text.split()))
    return line.replace("|", "\\|")


def _default_cell(spec: Mapping[str, Any], required: bool) -> str:
    if required:
        return "required"
    if "default" not in spec:
        return "—"
    value = spec["default"]
    return f"`{value if isinstance(value, str) else json.dumps(value)}`"


def key_table(schema: Mapping[str, Any], pointer: str, document: str) -> str:
    """The Markdown table of the keys of the schema object at `pointer`, as in `document`:
    key, default (where any key has one: a schema default, `required`, or — for none) and
    meaning (its description)."""
    node = _schema_object(schema, pointer)
    required = set(node.get("required", ()))
    properties = node["properties"]
    with_default = any("default" in spec for spec in properties.values())
    header = ["key", "default", "meaning"] if with_default else ["key", "meaning"]
    lines = [f"| {' | '.join(header)} |", "|" + "---|" * len(header)]
    for key, spec in properties.items():
        if "description" not in spec:
            raise ValueError(f"config.schema.yaml#{pointer}/properties/{key} has no description")
        cells = [f"`{key}`", _cell(spec["description"], document)]
        if with_default:
            cells.insert(1, _default_cell(spec, required=key in required))
        lines.append(f"| {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def regenerate(text: str, document: str, schema: Mapping[str, Any]) -> str:
    """`text` of `document` with every generated table rendered again from `schema`."""
    pieces: list[str] = []
    position = 0
    for begin in BEGIN.finditer(text):
        end = text.find(END, begin.end())
        if end < 0:
            raise ValueError(f"{document}: a generated table has no end marker {END!r}")
        pieces += [text[position : begin.end()], key_table(schema, begin.group(1) or "", document)]
        position = end
    if not pieces:
        raise ValueError(f"{document}: no generated table (marker {BEGIN.pattern!r})")
    return "".join(pieces) + text[position:]


def generated(root: Path) -> dict[str, str]:
    """Each of DOCUMENTS below the repository `root` as the campaign schema generates it."""
    schema = load_package_yaml(CONFIG_SCHEMA)
    return {
        document: regenerate((root / document).read_text(encoding="utf-8"), document, schema)
        for document in DOCUMENTS
    }
