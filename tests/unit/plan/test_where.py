"""`where:` filters: Python-like semantics on a whitelist, nothing else can run."""

import pytest

from mpiguide.core.errors import ConfigError
from mpiguide.plan.where import compile_where

NAMES = ("op", "ndim", "nfin", "ordering", "msg_size")
KEY = "c.yaml: experiments[3].where"


def where(expr: str, **row: object) -> bool:
    full = dict.fromkeys(NAMES) | row
    return compile_where(expr, KEY, NAMES)(full)


@pytest.mark.parametrize(
    ("expr", "row", "expected"),
    [
        ("nfin == 0 or nfin == ndim", {"nfin": 2, "ndim": 2}, True),
        ("nfin == 0 or nfin == ndim", {"nfin": 1, "ndim": 2}, False),
        ("ordering in ('FMAJ', 'RAND')", {"ordering": "RAND"}, True),
        ("ordering not in ['FMAJ']", {"ordering": "RAND"}, True),
        ("not (op == 'bcast' and msg_size > 1024)", {"op": "bcast", "msg_size": 4096}, False),
        ("msg_size % 8 == 0 and msg_size // 8 >= 2", {"msg_size": 16}, True),
        ("-ndim < -1", {"ndim": 2}, True),
        ("1 <= ndim < 3", {"ndim": 3}, False),
        ("ordering is None", {}, True),
        ("ordering == None", {}, True),
    ],
)
def test_python_semantics(expr: str, row: dict[str, object], expected: bool) -> None:
    assert where(expr, **row) is expected


def test_order_comparison_with_a_not_applicable_parameter_is_false() -> None:
    assert where("ndim <= 2") is False
    assert where("ndim * 2 > 0") is False
    assert where("not ndim > 2") is True


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('true')",
        "op.upper() == 'X'",
        "ordering[0] == 'F'",
        "[x for x in (1, 2)]",
        "lambda: 1",
        "2 ** 100000000",
        "(n := 1)",
        "f'{op}'",
        "{1: 2}",
    ],
)
def test_anything_but_the_whitelist_is_refused(expr: str) -> None:
    with pytest.raises(ConfigError, match=r"^c\.yaml: experiments\[3\]\.where: .* not allowed"):
        compile_where(expr, KEY, NAMES)


def test_unknown_name_is_named_with_the_allowed_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"experiments\[3\]\.where: unknown name 'ndims' \(allowed: "
    ):
        compile_where("ndims == 2", KEY, NAMES)


def test_syntax_error() -> None:
    with pytest.raises(ConfigError, match=r"experiments\[3\]\.where: invalid syntax"):
        compile_where("ndim ==", KEY, NAMES)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("op * 100000000000 == 'x'", "arithmetic needs numbers"),
        ("msg_size / 0 > 1", "division by zero"),
        ("op < 1", "cannot compare"),
    ],
)
def test_runtime_errors_are_config_errors(expr: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        where(expr, op="bcast", msg_size=8)


def test_is_compares_with_none_only() -> None:
    with pytest.raises(ConfigError, match="'is' compares with None only; use == or !="):
        compile_where("ordering is 'FMAJ'", KEY, NAMES)


def test_overlong_expression() -> None:
    with pytest.raises(ConfigError, match="longer than"):
        compile_where("ndim == 1 or " * 500 + "True", KEY, NAMES)
