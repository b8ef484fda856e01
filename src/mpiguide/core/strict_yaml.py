"""The one loader of user YAML files (campaign configs, the guideline catalogue), and the
loader of the YAML files shipped with the package (schemas, `load_package_yaml`).

Safe (no Python objects from tags), strict (a key given twice in one mapping is an error: plain
YAML keeps the last one silently, so a second `mpi` entry or guideline of the same name would
replace the first), bounded (a file, its nesting and its alias expansion are limited before
anything walks it: an alias-bomb "billion laughs" document is a few hundred bytes), and every
failure is a ConfigError of the form `FILE:LINE: problem` — never a traceback or PyYAML's
multi-line dump of "<unicode string>".

YAML 1.1 reads some numbers differently than a reader expects: `1:30` is 90 (base 60) and
`010` is 8 (octal). Both are refused with what they would mean; `.nan` and `.inf` are refused
as well, because every numeric bound of the schema compares false with NaN. Keys must be
strings (`on:`, `1:` are a boolean and an integer in YAML 1.1) and merge keys (`<<: *entry`)
are read as YAML means them, explicit keys overriding merged ones.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from mpiguide.core.errors import ConfigError

# 10 times the guideline catalogue; bounds the time parsing takes (docs/bad_inputs.md).
MAX_BYTES = 256 << 10
MAX_DEPTH = 64
MAX_NODES = 200_000  # nodes after alias expansion; a large catalogue has about 5000
MERGE_TAG = "tag:yaml.org,2002:merge"
_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?")
_OCTAL = re.compile(r"[-+]?0[0-7_]+")


def _error(message: str, node: yaml.Node) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(None, None, message, node.start_mark)


class _StrictConstructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that refuses a key given twice in one mapping, keys that are not strings,
    and numbers that YAML 1.1 reads differently than they look."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise _error("a key must be a plain name, not a list or a mapping", key_node)
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                raise _error(
                    f"key {key_node.value!r} is read as {type(key).__name__} {key!r}, not as a "
                    f"name; quote it ('{key_node.value}') if it is one",
                    key_node,
                )
            if key in seen:
                raise _error(f"key {key!r} is given twice", key_node)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = str(node.value)
        if _SEXAGESIMAL.fullmatch(text):
            raise _error(
                f"{text} is a base-60 number in YAML 1.1 ({super().construct_yaml_int(node)}); "
                f"quote it if it is text, or write the number",
                node,
            )
        if _OCTAL.fullmatch(text):
            raise _error(
                f"{text} is an octal number in YAML 1.1 ({super().construct_yaml_int(node)}); "
                f"write it without the leading 0",
                node,
            )
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        text = str(node.value)
        if _SEXAGESIMAL.fullmatch(text):
            raise _error(f"{text} is a base-60 number in YAML 1.1; write the number", node)
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise _error(f"{text} is not a finite number", node)
        return value


# Both loaders take these from the constructor they share (PyYAML's stubs type the registry by
# loader class, not by constructor).
for _tag, _construct in (
    ("tag:yaml.org,2002:int", _StrictConstructor.construct_yaml_int),
    ("tag:yaml.org,2002:float", _StrictConstructor.construct_yaml_float),
):
    _StrictConstructor.add_constructor(_tag, _construct)  # type: ignore[type-var]


class _StrictLoader(_StrictConstructor, yaml.SafeLoader):
    """The pure-Python SafeLoader with the strict constructor, nested at most MAX_DEPTH levels
    deep: its messages are those load_yaml gives."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        # PyYAML composes recursively: stop at MAX_DEPTH, long before Python's recursion limit
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"nested more than {MAX_DEPTH} levels deep",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


# libyaml's parser, where PyYAML was built with it: the same nodes, composed many times faster
# (it refuses a document nested more than 1000 levels deep; _check_size then refuses more than
# MAX_DEPTH), constructed by the same strict constructor.
try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML built without libyaml: the pure-Python loader reads every file
    _FastStrictLoader: type | None = None
else:

    class _FastStrictLoader(CParser, _StrictConstructor, yaml.resolver.Resolver):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _StrictConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)


def _check_size(root: yaml.Node) -> None:
    """Refuses a document nested deeper than MAX_DEPTH or holding more than MAX_NODES nodes
    once its aliases are expanded. Iterative, and each node's expanded size is computed once,
    so an alias bomb costs its own size here, not its expansion."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, children_done = stack.pop()
        if depth > MAX_DEPTH:
            raise _error(f"nested more than {MAX_DEPTH} levels deep", node)
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        else:
            children = list(node.value)
        if children_done:
            total = 1 + sum(sizes[id(child)] for child in children)
            if total > MAX_NODES:
                raise _error(
                    f"expands to more than {MAX_NODES} values (through aliases, e.g. *name)",
                    node,
                )
            sizes[id(node)] = total
            continue
        if id(node) in sizes:
            continue
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in children if id(child) not in sizes)


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


def _parse_with(loader_type: type, text: str) -> Any:
    loader = loader_type(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_size(root)
        return loader.construct_document(root)
    finally:
        loader.dispose()


def _parse(path: Path, text: str) -> Any:
    """The document of `text`: read by libyaml's parser where there is one; a document it or a
    strict check refuses is read again by the pure-Python loader, whose messages (and lines)
    are what a user is shown, and which decides what it accepts."""
    if _FastStrictLoader is not None:
        try:
            return _parse_with(_FastStrictLoader, text)
        except Exception:  # the pure-Python reading below decides, and says why
            pass
    return _parse_with(_StrictLoader, text)


def load_yaml(path: Path, what: str = "") -> Any:
    """The YAML document of `path`; `what` ("the guideline catalogue") completes
    "cannot read …" when the file cannot be opened."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError as error:
        subject = f" {what}" if what else ""
        raise ConfigError(f"{path}: cannot read{subject}: {error.strerror}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES >> 10} KiB; not a config file?")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 text (byte {data[error.start]:#04x} at offset {error.start})"
        ) from None
    try:
        return _parse(path, text)  # a SafeLoader: no Python objects
    except yaml.reader.ReaderError as error:
        line = text.count("\n", 0, error.position) + 1
        raise ConfigError(
            f"{path}:{line}: character U+{error.character:04X} is not allowed in YAML text"
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(_describe_yaml_error(path, error)) from None


def load_package_yaml(path: Path) -> Any:
    """A YAML file shipped with the package (a schema). Nobody but the package's authors writes
    it, so libyaml's safe loader reads it, many times faster than the strict loader; a test holds
    every such file to the strict reading."""
    with path.open("rb") as stream:
        return yaml.load(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
