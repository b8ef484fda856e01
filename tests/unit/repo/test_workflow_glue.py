"""The rules stay thin: the logic lives in src/mpiguide, where it is typed, linted and unit
tested, and the Python of the workflow (the Snakefile and workflow/**/*.smk) is glue.

Measured on the Python of every such file, read with `ast`: outside Snakemake's own blocks
(rules, checkpoints, `use rule`, `include:`, `localrules:` and the other directives), which
become `pass`; a rule's `run:` and an `onstart:`/`onsuccess:`/`onerror:` handler count as
Python, as functions. (Snakemake's own parser, snakemake.parser.parse, is internal: it wants
a Workflow and turns each rule into decorators; the files are snakefmt's layout, which a
reading by indentation follows.) Two limits:

- CODE_LINES_BUDGET, the lines of Python code across all the files: statements other than
  imports, in the layout snakefmt gives them (`make lint` checks it), without blank and
  comment-only lines. 290 when set (common.smk 125, options.smk 93), rounded up to 320: room
  to wire in a new rule's input functions, not for a new feature's logic.
- Each function (a def, nested ones included, a `run:`, a handler) at most MAX_FUNCTION_LINES
  code lines and MAX_FUNCTION_BRANCHES branch points (an if, elif, conditional expression,
  loop, comprehension's `for` or `if`, or except clause). Set at today's largest rounded up:
  options.smk's consumer_outputs, 17 lines and 9 branch points, the largest in both (the next
  has 14 lines and 3 points), so 20 and 10; a function that needs more is logic, and belongs
  in the package.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SNAKEFILES = [REPO / "Snakefile", *sorted((REPO / "workflow").rglob("*.smk"))]

CODE_LINES_BUDGET = 320
MAX_FUNCTION_LINES = 20
MAX_FUNCTION_BRANCHES = 10

# Snakemake's statements (its docs, "Snakefiles and rules"): a block that declares rules, and a
# directive whose value is not Python statements. Both are replaced by `pass`.
RULE_BLOCK = re.compile(r"(rule|checkpoint)\b[^=]*:|use\s+rule\b.*|module\s+\w+\s*:")
DIRECTIVE = re.compile(
    r"(include|localrules|ruleorder|wildcard_constraints|configfile|pepfile|pepschema|report"
    r"|envvars|container|containerized|conda|workdir|scattergather|resource_scopes"
    r"|inputflags|outputflags|storage)\s*:"
)
# Blocks whose body is Python statements: a rule's `run:`, and the workflow's handlers.
RUN = re.compile(r"run\s*:")
HANDLER = re.compile(r"(onstart|onsuccess|onerror)\s*:")
BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler)


@dataclass(frozen=True)
class Glue:
    """One file's Python: the parsed tree and the numbers (1-based) of its lines of code."""

    name: str
    tree: ast.Module
    code_lines: frozenset[int]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_code(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _block_end(lines: list[str], start: int) -> int:
    """The index after the block headed by lines[start]: the lines indented deeper than it
    (blank and comment-only lines inside it too)."""
    end = start + 1
    while end < len(lines) and (
        not _is_code(lines[end]) or _indent(lines[end]) > _indent(lines[start])
    ):
        end += 1
    return end


def as_python(text: str) -> tuple[str, set[int]]:
    """The file as Python: each Snakemake block a `pass` at its header and blank lines after,
    except a `run:` (a `def run():` at the block's indentation, its body kept) and a handler (a
    `def`); and the numbers of the lines replaced."""
    lines = text.splitlines()
    python = list(lines)
    replaced: set[int] = set()
    index = 0
    while index < len(lines):
        stripped, indent = lines[index].strip(), " " * _indent(lines[index])
        if HANDLER.fullmatch(stripped):
            python[index] = f"{indent}def {stripped.split(':')[0].strip()}():"
            index += 1
        elif RULE_BLOCK.fullmatch(stripped) or DIRECTIVE.match(stripped):
            end = _block_end(lines, index)
            python[index] = f"{indent}pass"
            replaced.add(index + 1)
            inner = index + 1
            while inner < end:
                if RUN.fullmatch(lines[inner].strip()):
                    body_end = _block_end(lines, inner)
                    python[inner] = f"{indent}def run():"
                    inner = body_end
                else:
                    python[inner] = ""
                    replaced.add(inner + 1)
                    inner += 1
            index = end
        else:
            index += 1
    return "\n".join(python) + "\n", replaced


def read_glue(name: str, text: str) -> Glue:
    python, replaced = as_python(text)
    tree = ast.parse(python, name)
    statements: set[int] = set()
    imports: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.end_lineno is not None:
            span = range(node.lineno, node.end_lineno + 1)
            (imports if isinstance(node, ast.Import | ast.ImportFrom) else statements).update(span)
    lines = text.splitlines()
    code = {
        number
        for number in statements - imports - replaced
        if number <= len(lines) and _is_code(lines[number - 1])
    }
    return Glue(name, tree, frozenset(code))


def functions(glue: Glue) -> list[tuple[str, int, int]]:
    """Every function of the file: its name, code lines and branch points."""
    found = []
    for node in ast.walk(glue.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
            lines = sum(1 for n in range(node.lineno, node.end_lineno + 1) if n in glue.code_lines)
            branches = sum(isinstance(inner, BRANCHES) for inner in ast.walk(node)) + sum(
                1 + len(inner.ifs)
                for inner in ast.walk(node)
                if isinstance(inner, ast.comprehension)
            )
            found.append((f"{glue.name}:{node.lineno} {node.name}", lines, branches))
    return found


@pytest.fixture(scope="module")
def glue() -> list[Glue]:
    return [
        read_glue(str(path.relative_to(REPO)), path.read_text(encoding="utf-8"))
        for path in SNAKEFILES
    ]


def test_the_workflow_files_are_all_read(glue: list[Glue]) -> None:
    """Every file holds some Python (common.smk most) and rules, and the reading found both."""
    by_name = {g.name: g for g in glue}
    assert {"Snakefile", "workflow/rules/common.smk", "workflow/rules/run.smk"} <= set(by_name)
    assert len(by_name["workflow/rules/common.smk"].code_lines) > 100
    # the workflow's handlers are read as functions (no rule has a `run:` block: the reading
    # of those is test_the_reading_keeps_python_and_drops_rules')
    assert any(name.endswith(" onstart") for g in glue for name, _, _ in functions(g))


def test_the_python_of_the_workflow_stays_within_its_budget(glue: list[Glue]) -> None:
    per_file = {g.name: len(g.code_lines) for g in glue}
    total = sum(per_file.values())
    largest = sorted(per_file.items(), key=lambda item: -item[1])[:3]
    assert total <= CODE_LINES_BUDGET, (
        f"{total} lines of Python in the workflow (largest: {largest}), budget "
        f"{CODE_LINES_BUDGET}: move the logic into src/mpiguide and call it"
    )


def test_no_workflow_function_holds_logic(glue: list[Glue]) -> None:
    too_big = [
        f"{name}: {lines} lines, {branches} branch points"
        for g in glue
        for name, lines, branches in functions(g)
        if lines > MAX_FUNCTION_LINES or branches > MAX_FUNCTION_BRANCHES
    ]
    assert not too_big, (
        f"at most {MAX_FUNCTION_LINES} lines and {MAX_FUNCTION_BRANCHES} branch points in a "
        f"function of the workflow; move the logic into src/mpiguide: {too_big}"
    )


def test_the_reading_keeps_python_and_drops_rules() -> None:
    """The splitter itself, on a file with every kind of block."""
    text = "\n".join(
        [
            "import os",
            "X = 1",
            "if X:",
            "",
            "    rule a:",
            "        input:",
            "            'a',",
            "        # a comment at any depth",
            "        run:",
            "            for y in range(3):",
            "                print(y)",
            "",
            "use rule a as b with:",
            "    output:",
            "        'b',",
            "localrules:",
            "    a,",
            "onstart:",
            "    print('start')",
            "def f(w):",
            "    return [v for v in w if v]",
        ]
    )
    _, replaced = as_python(text)
    assert replaced == {5, 6, 7, 8, 13, 14, 15, 16, 17}
    glue = read_glue("t.smk", text)
    assert sorted(glue.code_lines) == [2, 3, 9, 10, 11, 18, 19, 20, 21]
    found = {name.split()[1]: (lines, branches) for name, lines, branches in functions(glue)}
    assert found == {"run": (3, 1), "onstart": (2, 0), "f": (2, 2)}
