"""The campaign schema step: the schema read once per process, and a config validated against
it with defaults filled in, every error naming the file and the key path.

Apart from the semantic checks (mpiguide.campaign.config) and light on imports (jsonschema, the
package's core and the installs' table only), so that a config the schema refuses is refused
before numpy, pandas or scipy load.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from mpiguide.campaign.installs import with_installs
from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import CONFIG_SCHEMA
from mpiguide.core.schema_messages import describe
from mpiguide.core.strict_yaml import load_yaml

MAX_REPORTED_ERRORS = 10


def key_path(path: Iterable[str | int]) -> str:
    """['experiments', 0, 'op', 1] → 'experiments[0].op[1]'."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "(top level)"


def _is_integer(checker: Any, instance: Any) -> bool:
    """An integer as written: jsonschema counts 1.0 as one, but `seed: 1.0` reaches the CLI as
    '1.0' and `runs: 8.0` names run files 8.0 apart."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _default_filling_validator() -> type[jsonschema.protocols.Validator]:
    """Draft 2020-12 validator that fills `default:` values in as it goes, as
    snakemake.utils.validate does (python-jsonschema FAQ recipe), and whose integers are
    integers as written (_is_integer)."""
    base = jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
    )
    validate_properties = base.VALIDATORS["properties"]

    def properties_with_defaults(
        validator: Any, properties: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[jsonschema.ValidationError]:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(base, {"properties": properties_with_defaults})


def validate_schema(config: Any, schema: Mapping[str, Any], source: str) -> None:
    """Validate `config` against the campaign schema, filling in defaults."""
    validator = _default_filling_validator()(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = [
            f"{source}: {key_path(e.absolute_path)}: {describe(e)}"
            for e in errors[:MAX_REPORTED_ERRORS]
        ]
        if len(errors) > MAX_REPORTED_ERRORS:
            lines.append(f"{source}: ... and {len(errors) - MAX_REPORTED_ERRORS} more errors")
        raise ConfigError("\n".join(lines))


def load_schema() -> dict[str, Any]:
    """The campaign schema, a copy of its own per caller (validation reads defaults out of it)."""
    return copy.deepcopy(_parsed_schema())


@cache
def _parsed_schema() -> dict[str, Any]:
    # Once per process: the strict YAML loader is pure Python, and slow on a file this size.
    return load_yaml(CONFIG_SCHEMA)


def read_campaign_file(path: Path, scale: str | None = None) -> Any:
    """A campaign config file read by the strict loader, `scale` (when given) replacing its
    `scale:`, and passed through the schema step (the keys of its entries' installs, then the
    defaults filled in)."""
    config = load_yaml(path)
    if scale is not None and isinstance(config, dict):
        config["scale"] = scale
    with_installs(config)
    validate_schema(config, load_schema(), str(path))
    return config
