"""Safe evaluation of `where:` row filters of experiment blocks.

The expression is parsed with `ast` and compiled into a tree of closures over a whitelist of
node types: comparisons (incl. `in`, `not in`, `is None`), `and`/`or`/`not`, unary minus,
arithmetic (+ - * / // %) on numbers, names of grid parameters, and literals (numbers, strings,
True/False/None, tuples/lists/sets of literals). No `eval`, no calls, attributes, subscripts,
comprehensions or `**`: nothing a config file says can run code or exhaust memory. The
expression is bounded before it is compiled (length, nesting depth, size of integer literals)
and every arithmetic result is bounded, so a config file cannot make validation recurse, hang
or overflow either.

Not-applicable parameters are None. An order comparison (< <= > >=) with None is False, so
`ndim <= 2` never selects a row whose topology has no ndim; `==`/`!=`/`is` behave as in Python.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Collection
from typing import Any

from mpiguide.core.errors import ConfigError

Row = dict[str, Any]
Evaluator = Callable[[Row], Any]
Predicate = Callable[[Row], bool]

MAX_LENGTH = 2000
MAX_DEPTH = 40
MAX_MAGNITUDE = 1 << 64  # beyond any grid parameter; 2**64 still compares exactly with floats

ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
ORDER = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
EQUALITY: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class _Compiler:
    def __init__(self, text: str, key_path: str, names: Collection[str]) -> None:
        self.text = text
        self.key_path = key_path
        self.names = names

    def error(self, message: str) -> ConfigError:
        return ConfigError(f"{self.key_path}: {message} in where expression {self.text!r}")

    def node_text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or type(node).__name__

    def compile(self, node: ast.AST) -> Evaluator:
        match node:
            case ast.Constant(value=value) if value is None or isinstance(
                value, bool | int | float | str
            ):
                if isinstance(value, int | float) and abs(value) > MAX_MAGNITUDE:
                    raise self.error(f"'{self.node_text(node)}' is beyond {MAX_MAGNITUDE}")
                return lambda row: value
            case ast.Name(id=name):
                if name not in self.names:
                    raise self.error(
                        f"unknown name '{name}' (allowed: {', '.join(sorted(self.names))})"
                    )
                return lambda row: row[name]
            case ast.Tuple(elts=elts) | ast.List(elts=elts) | ast.Set(elts=elts):
                items = [self.compile(elt) for elt in elts]
                return lambda row: tuple(item(row) for item in items)
            case ast.BoolOp(op=ast.And(), values=values):
                operands = [self.compile(value) for value in values]
                return lambda row: all(operand(row) for operand in operands)
            case ast.BoolOp(op=ast.Or(), values=values):
                operands = [self.compile(value) for value in values]
                return lambda row: any(operand(row) for operand in operands)
            case ast.UnaryOp(op=ast.Not(), operand=operand):
                inner = self.compile(operand)
                return lambda row: not inner(row)
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                # -x is 0 - x, with the same number checks as any arithmetic
                return self.compile_arithmetic(node, ast.Constant(0), ast.Sub(), operand)
            case ast.BinOp(left=left, op=op, right=right) if type(op) in ARITHMETIC:
                return self.compile_arithmetic(node, left, op, right)
            case ast.Compare(left=left, ops=ops, comparators=comparators):
                return self.compile_compare(left, ops, comparators)
        raise self.error(
            f"'{self.node_text(node)}' is not allowed (allowed: comparisons, in, not in, is, "
            "and/or/not, + - * / // %, parameter names and literals)"
        )

    def compile_arithmetic(
        self, node: ast.AST, left: ast.AST, op: ast.operator, right: ast.AST
    ) -> Evaluator:
        apply = ARITHMETIC[type(op)]
        lhs, rhs = self.compile(left), self.compile(right)
        segment = self.node_text(node)

        def evaluate(row: Row) -> Any:
            a, b = lhs(row), rhs(row)
            if a is None or b is None:
                return None  # arithmetic on a not-applicable parameter stays not applicable
            if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b)):
                raise self.error(f"'{segment}': arithmetic needs numbers, got {a!r} and {b!r}")
            try:
                result = apply(a, b)
            except ZeroDivisionError:
                raise self.error(f"'{segment}': division by zero for {row}") from None
            except OverflowError:
                result = MAX_MAGNITUDE + 1
            if abs(result) > MAX_MAGNITUDE:
                raise self.error(f"'{segment}': result beyond {MAX_MAGNITUDE} for {row}")
            return result

        return evaluate

    def compile_compare(
        self, left: ast.AST, ops: list[ast.cmpop], comparators: list[ast.expr]
    ) -> Evaluator:
        operands = [self.compile(left), *(self.compile(c) for c in comparators)]
        steps: list[tuple[Callable[[Any, Any], bool], bool, str]] = []
        for op, comparator in zip(ops, comparators, strict=True):
            segment = self.node_text(comparator)
            if isinstance(op, ast.Is | ast.IsNot) and not (
                isinstance(comparator, ast.Constant) and comparator.value is None
            ):
                # identity of strings and numbers is an implementation detail of Python
                raise self.error(
                    f"'is' compares with None only; use == or != instead (at {segment})"
                )
            if type(op) in ORDER:
                steps.append((ORDER[type(op)], True, segment))
            else:
                steps.append((EQUALITY[type(op)], False, segment))

        def evaluate(row: Row) -> bool:
            a = operands[0](row)
            for (compare, ordered, segment), operand in zip(steps, operands[1:], strict=True):
                b = operand(row)
                if ordered and (a is None or b is None):
                    return False
                try:
                    if not compare(a, b):
                        return False
                except TypeError:
                    raise self.error(f"cannot compare {a!r} with {b!r} (at '{segment}')") from None
                a = b
            return True

        return evaluate


def _depth(root: ast.AST) -> int:
    """Nesting depth of a syntax tree, without recursion (a chain `1+1+...` nests per `+`)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def compile_where(expr: str, key_path: str, names: Collection[str]) -> Predicate:
    """Compile a row filter; `key_path` (e.g. 'config.yaml: experiments[0].where') prefixes
    every error, `names` are the parameters a row holds."""
    compiler = _Compiler(expr.strip(), key_path, names)
    if len(expr) > MAX_LENGTH:
        raise compiler.error(f"longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(compiler.text, mode="eval")
    except SyntaxError as exc:
        raise compiler.error(f"invalid syntax ({exc.msg}, column {exc.offset})") from None
    except (RecursionError, MemoryError, ValueError):
        raise compiler.error("cannot be parsed") from None
    depth = _depth(tree.body)
    if depth > MAX_DEPTH:
        raise compiler.error(f"nested {depth} levels deep (at most {MAX_DEPTH})")
    evaluate = compiler.compile(tree.body)
    return lambda row: bool(evaluate(row))
