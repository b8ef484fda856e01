"""Every path below results/<campaign>/ is spelled in mpiguide.core.paths alone: a tree's name
written as a path segment anywhere else in the package or the rule files is a second owner of
it, which a rename of the tree would miss.

A string literal (docstrings and comments are prose, not read) spells a tree when the name is a
segment of a path in it (`"raw/"`, `f"{RESULTS}/raw/..."`, `"…/raw"`), or when the whole
string is the name joined as a path (`results / "raw"`, `Path(results, "raw")`) or given to a
name of a tree or folder (`RAW_TREE = "raw"`).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
OWNER = REPO / "src" / "mpiguide" / "core" / "paths.py"
SCANNED = (
    *sorted((REPO / "src").rglob("*.py")),
    *sorted((REPO / "workflow").rglob("*.smk")),
    REPO / "Snakefile",
)
# The trees below results/<campaign>/.
TREES = (
    "inputs", "raw", "logs", "blocks", "rounds", "guidelines", "plots", "models", "variability",
    "tuning", "verify", "options", "build", "superseded", "library_algorithms",
)  # fmt: skip
SEGMENT = re.compile(rf"(?:^|/)(?:{'|'.join(TREES)})/|/(?:{'|'.join(TREES)})$")
# Calls whose string arguments are joined as a path.
PATH_CALLS = {"Path", "PurePath", "PurePosixPath", "join", "joinpath"}
# Constants that name a folder: `RAW_TREE = "raw"` outside core/paths.py is a second owner.
FOLDER_NAMES = ("TREE", "DIR", "ROOT")
QUOTE = re.compile(r"""^[A-Za-z]*('''|\"\"\"|'|")""")
SKIPPED = {tokenize.NL, tokenize.COMMENT}
STATEMENT_START = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python >= 3.12
FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def _span(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source text from `start` to `end` (tokenize's (row, column), rows from 1)."""
    (row, col), (end_row, end_col) = start, end
    if row == end_row:
        return lines[row - 1][col:end_col]
    return lines[row - 1][col:] + "".join(lines[row : end_row - 1]) + lines[end_row - 1][:end_col]


def _tokens(source: str) -> list[tuple[int, str, int]]:
    """(type, text, line) of each token but comments and blank lines; an f-string one STRING
    token, as Python 3.11 makes it, on any Python."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    merged = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if FSTRING_START is not None and token.type == FSTRING_START:
            depth = 0
            for end in range(index, len(tokens)):
                depth += {FSTRING_START: 1, FSTRING_END: -1}.get(tokens[end].type, 0)
                if depth == 0:
                    break
            text = _span(lines, token.start, tokens[end].end)
            merged.append((tokenize.STRING, text, token.start[0]))
            index = end + 1
            continue
        if token.type not in SKIPPED:
            merged.append((token.type, token.string, token.start[0]))
        index += 1
    return merged


def _strings(source: str) -> Iterator[tuple[int, str, tuple[str, ...], str | None, str | None]]:
    """Each string literal but docstrings: its line, its text, the two tokens before it (the
    nearest last), the token after it, and the call whose argument it is (None where there is
    none)."""
    tokens = _tokens(source)
    calls: list[str | None] = []
    for position, (kind, text, line) in enumerate(tokens):
        before = tokens[position - 1] if position else None
        after = tokens[position + 1] if position + 1 < len(tokens) else None
        if kind == tokenize.OP and text in "([{":
            calls.append(before[1] if before and before[0] == tokenize.NAME else None)
        elif kind == tokenize.OP and text in ")]}" and calls:
            calls.pop()
        elif kind == tokenize.STRING:
            statement = before is None or before[0] in STATEMENT_START
            alone = after is not None and after[0] == tokenize.NEWLINE
            if statement and alone and _quote(text) in ('"""', "'''"):
                continue  # a docstring
            yield (
                line,
                text,
                tuple(token[1] for token in tokens[max(position - 2, 0) : position]),
                after[1] if after else None,
                calls[-1] if calls else None,
            )


def _quote(text: str) -> str:
    """The quotes a string literal's text opens with."""
    match = QUOTE.match(text)
    return match[1] if match else ""


def spellings(source: str) -> list[tuple[int, str]]:
    """(line, literal) of each string that spells a tree of results/<campaign>/."""
    found = []
    for line, text, before, after, call in _strings(source):
        quote = _quote(text)
        content = text[text.index(quote) + len(quote) : len(text) - len(quote)]
        named = len(before) == 2 and before[1] == "=" and before[0].endswith(FOLDER_NAMES)
        joined = "/" in (*before[-1:], after) or call in PATH_CALLS or named
        if SEGMENT.search(content) or (joined and content in TREES):
            found.append((line, text))
    return found


def test_the_scan_finds_a_tree_spelled_as_a_path() -> None:
    source = (
        '"""A docstring naming results/<campaign>/raw/ is prose."""\n'
        'a = f"{RESULTS}/raw/{mpi}.csv"  # logs/ in a comment is prose\n'
        'b = results / "logs" / name\n'
        'c = Path(results, "build")\n'
        "d = 'guidelines/tests.csv'\n"
        'e = config["guidelines"]\n'
        'f = ("inputs",)\n'
        'g = f"{results}/plots"\n'
        'RAW_TREE = "raw"\n'
        'RAW_KEY = "raw"\n'
    )
    assert [line for line, _ in spellings(source)] == [2, 3, 4, 5, 8, 9]


def test_only_core_paths_spells_the_results_trees() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {text}"
        for path in SCANNED
        if path != OWNER
        for line, text in spellings(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "a tree of results/<campaign>/ spelled outside src/mpiguide/core/paths.py (import its "
        "constant or function instead):\n" + "\n".join(found)
    )


def test_the_owner_spells_every_tree() -> None:
    # the trees scanned for are the ones core/paths names: a tree renamed there is renamed here
    owner = OWNER.read_text(encoding="utf-8")
    assert [tree for tree in TREES if f'"{tree}"' not in owner] == []
