"""The package's folders are the stages of docs/architecture.md, and imports only go down.

docs/architecture.md owns the order of the layers (its line "Layers, lowest first: ..."); a
module may import its own stage and the stages below it, never one above. Every module of the
package is listed in the architecture's module table.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "src" / "mpiguide"
ARCHITECTURE = REPO / "docs" / "architecture.md"
TOP_LEVEL = "cli"  # the command line (cli/, and __main__ directly in the package) tops them
UNIT_TESTS = Path(__file__).resolve().parents[1]
REPOSITORY_TESTS = "repo"  # tests/unit/repo/: rules over the whole checkout, no one folder's


def _layers() -> list[str]:
    match = re.search(r"^Layers, lowest first: (.+)$", ARCHITECTURE.read_text(), re.MULTILINE)
    assert match, "docs/architecture.md has no line 'Layers, lowest first: ...'"
    return re.findall(r"`([a-z_]+)/?`", match.group(1))


def _stage(module: str) -> str:
    """`mpiguide.analysis.stats` -> `analysis`; modules directly in the package -> cli."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else TOP_LEVEL


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        modules[".".join(relative.parts)] = path
    return modules


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "mpiguide" or name.startswith("mpiguide.")}


def test_folders_are_the_layers_of_the_architecture() -> None:
    folders = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    layers = _layers()
    assert layers[-1] == TOP_LEVEL
    assert set(layers) == folders


def test_unit_tests_have_one_folder_per_package_folder() -> None:
    """tests/unit/<folder>/ tests src/mpiguide/<folder>/: a new package folder gets its own."""
    folders = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    test_folders = {path.name for path in UNIT_TESTS.iterdir() if path.is_dir()} - {"__pycache__"}
    assert test_folders == folders | {REPOSITORY_TESTS}
    assert not list(UNIT_TESTS.glob("test_*.py")), "a unit test outside a folder"


@pytest.mark.parametrize("module", sorted(_modules()))
def test_imports_go_down_the_layers(module: str) -> None:
    rank = {stage: index for index, stage in enumerate(_layers())}
    own = rank[_stage(module)]
    upward = [
        imported
        for imported in _imports(_modules()[module])
        if imported.count(".") >= 1 and rank[_stage(imported + ".x")] > own
    ]
    assert not upward, f"{module} ({_stage(module)}) imports a higher stage: {upward}"


def test_architecture_lists_every_module() -> None:
    text = ARCHITECTURE.read_text()
    missing = [
        str(path.relative_to(PACKAGE))
        for path in _modules().values()
        if path.name not in {"__init__.py", "__main__.py"}
        and f"`{path.relative_to(PACKAGE)}`" not in text
    ]
    assert not missing, f"docs/architecture.md's module table lacks {missing}"


def test_no_two_modules_share_a_file_name() -> None:
    """A module's file name says what it is, so it names one module of the package."""
    names = [
        path.name for path in _modules().values() if path.name not in {"__init__.py", "__main__.py"}
    ]
    assert not {name for name in names if names.count(name) > 1}
