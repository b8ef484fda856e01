"""The one loader of user YAML files (campaign configs, the guideline catalogue, schemas).

Safe (no Python objects from tags), strict (a key given twice in one mapping is an error: plain
YAML keeps the last one silently, so a second `mpi` entry or guideline of the same name would
replace the first), and every failure is a ConfigError of the form `FILE:LINE: problem` —
never a UnicodeDecodeError traceback or PyYAML's multi-line dump of "<unicode string>".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mpiguide.errors import ConfigError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _describe_yaml_error(path: Path, error: yaml.YAMLError) -> str:
    """`FILE:LINE: invalid YAML: problem (context that starts at line N)`."""
    mark = getattr(error, "problem_mark", None)
    where = f":{mark.line + 1}" if mark is not None else ""
    problem = getattr(error, "problem", None) or str(error)
    context = getattr(error, "context", None)
    context_mark = getattr(error, "context_mark", None)
    # PyYAML reports an unclosed bracket or quote where parsing gave up; the line where the
    # construct began is usually the one to fix.
    if context and context_mark is not None and (mark is None or context_mark.line != mark.line):
        problem += f" ({context} that starts at line {context_mark.line + 1})"
    return f"{path}{where}: invalid YAML: {problem}"


def load_yaml(path: Path, what: str = "") -> Any:
    """The YAML document of `path`; `what` ("the guideline catalogue") completes
    "cannot read …" when the file cannot be opened."""
    try:
        data = path.read_bytes()
    except OSError as error:
        subject = f" {what}" if what else ""
        raise ConfigError(f"{path}: cannot read{subject}: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 text (byte {data[error.start]:#04x} at offset {error.start})"
        ) from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: no Python objects
    except yaml.YAMLError as error:
        raise ConfigError(_describe_yaml_error(path, error)) from None
