"""The one loader of user YAML: safe, strict about repeated keys, `FILE:LINE:` errors."""

from pathlib import Path

import pytest
import yaml

from mpiguide.core import strict_yaml
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import CONFIG_SCHEMA
from mpiguide.core.strict_yaml import load_package_yaml, load_yaml


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # nested mappings too: a repeated key in an mpi entry
        (b"mpi:\n  a:\n    env: {}\n    env: {X: '1'}\n",
         ":4: invalid YAML: key 'env' is given twice"),
        # an unclosed bracket: where parsing gave up, and the line that opened it
        (b"a: [1, 2\nb: 3\n",
         ":2: invalid YAML: expected ',' or ']', but got ':' (while parsing a flow sequence "
         "that starts at line 1)"),
        (b"a: 1\n b: 2\n", ":2: invalid YAML: mapping values are not allowed here"),
        (b"x: !!python/object/apply:os.system ['true']\n",
         ":1: invalid YAML: could not determine a constructor for the tag "
         "'tag:yaml.org,2002:python/object/apply:os.system'"),
        (b"a: 1\nb: caf\xe9\n", ":2: not UTF-8 text (byte 0xe9 at offset 11)"),
    ],
)  # fmt: skip
def test_errors_name_file_and_line(tmp_path: Path, text: bytes, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as error:
        load_yaml(path)
    assert str(error.value) == f"{path}{message}"


def test_equal_keys_in_different_mappings_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("a: {env: 1}\nb: {env: 2}\n")
    assert load_yaml(path) == {"a": {"env": 1}, "b": {"env": 2}}


def test_an_unreadable_file_says_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_yaml(tmp_path, "the guideline catalogue")
    assert str(error.value) == f"{tmp_path}: cannot read the guideline catalogue: Is a directory"


def test_merge_keys_and_aliases_are_read_as_yaml_means_them(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "base: &base {mpicc: mpicc.openmpi, env: {A: '1'}}\n"
        "mpi:\n"
        "  a: *base\n"
        "  b:\n"
        "    <<: *base\n"
        "    mpicc: mpicc.mpich\n"
    )
    data = load_yaml(path)
    assert data["mpi"]["a"] == {"mpicc": "mpicc.openmpi", "env": {"A": "1"}}
    assert data["mpi"]["b"] == {"mpicc": "mpicc.mpich", "env": {"A": "1"}}


def test_numbers_read_as_they_look_are_kept(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("a: [0, 10, -3, 1_000, 0x10, 2.5, 1.0e+3, '1:30', '010']\n")
    assert load_yaml(path) == {"a": [0, 10, -3, 1000, 16, 2.5, 1000.0, "1:30", "010"]}


SCHEMAS = sorted(CONFIG_SCHEMA.parent.glob("*.yaml"))


@pytest.mark.parametrize("schema", SCHEMAS, ids=[path.name for path in SCHEMAS])
def test_package_files_read_fast_as_the_strict_loader_reads_them(schema: Path) -> None:
    assert SCHEMAS
    assert load_package_yaml(schema) == load_yaml(schema)


REPO = Path(__file__).resolve().parents[3]
USER_FILES = sorted({*(REPO / "config").rglob("*.yaml"), *CONFIG_SCHEMA.parent.glob("*.yaml")})


@pytest.mark.skipif(strict_yaml._FastStrictLoader is None, reason="PyYAML without libyaml")
@pytest.mark.parametrize("path", USER_FILES, ids=[path.name for path in USER_FILES])
def test_libyaml_composes_what_the_pure_python_loader_composes(path: Path) -> None:
    """load_yaml reads with libyaml's parser first: the campaigns, the package's files (the
    guideline catalogue among them) and the bad inputs that are YAML come out as the pure-Python
    strict loader reads them, or are refused by both."""
    text = path.read_text(errors="replace")
    readings = []
    for loader in (strict_yaml._FastStrictLoader, strict_yaml._StrictLoader):
        try:
            readings.append(strict_yaml._parse_with(loader, text))
        except yaml.YAMLError:
            readings.append("refused")
    assert readings[0] == readings[1]


@pytest.mark.parametrize("depth", [strict_yaml.MAX_DEPTH + 1, 500, 5000])
def test_deep_nesting_is_refused_as_the_pure_python_loader_refuses_it(
    tmp_path: Path, depth: int
) -> None:
    """libyaml composes up to 1000 levels and refuses more in words of its own; either way the
    message is the pure-Python loader's."""
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(ConfigError) as error:
        load_yaml(path)
    assert str(error.value) == (
        f"{path}:1: invalid YAML: nested more than {strict_yaml.MAX_DEPTH} levels deep"
    )
