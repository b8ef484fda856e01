"""Run a published campaign at workstation scale: the campaign's `local:` block, applied only
when the config says `scale: local` (`snakemake --config scale=local`, `mpiguide validate
--scale local`).

The published file stays the paper's campaign, exactly; `local:` says how far to shrink it so
that it runs on a few cores in minutes: fewer runs and repetitions, the deployments this machine
has, the MPI entries of config/local-mpi.yaml, and a subset of the levels of some parameters
(`restrict`). Results go to results/<campaign>-local/, never beside the published scale's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpiguide.core.errors import ConfigError
from mpiguide.core.strict_yaml import load_yaml
from mpiguide.plan.grid import PARAMETERS

LOCAL_MPI = Path("config/local-mpi.yaml")
LOCAL_SUFFIX = "-local"
DEFAULT_LOCAL_MPI = ("openmpi",)
# The keys `local:` replaces wholesale (mpi is handled apart: it names local-mpi.yaml entries).
REPLACED_KEYS = ("runs", "nrep", "deployments")


def load_local_mpi(path: Path) -> dict[str, Any]:
    """The `mpi` mapping of config/local-mpi.yaml: this machine's MPI entries by name."""
    document = load_yaml(path)
    entries = document.get("mpi") if isinstance(document, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise ConfigError(f"{path}: expected a mapping `mpi:` of MPI entries by name")
    return entries


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _restrict_experiments(
    experiments: list[dict[str, Any]], restrict: Mapping[str, list[Any]], source: str
) -> list[dict[str, Any]]:
    """Each block keeps only the allowed levels of every restricted parameter it lists."""
    for parameter, allowed in restrict.items():
        key = f"{source}: local.restrict.{parameter}"
        if parameter not in PARAMETERS:
            raise ConfigError(
                f"{key}: not an experiment parameter; allowed: {', '.join(PARAMETERS)}"
            )
        levels = [
            v for block in experiments if parameter in block for v in _as_list(block[parameter])
        ]
        for value in allowed:
            if value not in levels:
                present = ", ".join(map(str, dict.fromkeys(levels))) or "none"
                raise ConfigError(
                    f"{key}: {value!r} is not a level of this campaign (its levels: {present})"
                )
    restricted = []
    for index, block in enumerate(experiments):
        block = dict(block)
        for parameter, allowed in restrict.items():
            if parameter not in block:
                continue
            kept = [v for v in _as_list(block[parameter]) if v in allowed]
            if not kept:
                raise ConfigError(
                    f"{source}: local.restrict.{parameter} leaves experiments[{index}] without "
                    f"any {parameter} (it lists {block[parameter]!r})"
                )
            block[parameter] = kept
        restricted.append(block)
    return restricted


def apply_scale(config: Mapping[str, Any], local_mpi_path: Path, source: str) -> dict[str, Any]:
    """The config to run: `config` itself at the published scale, else its `local:` block
    applied. `config` is schema-valid with defaults filled in; it is not modified."""
    scaled = copy.deepcopy(dict(config))
    if config["scale"] != "local":
        return scaled
    if "local" not in config:
        raise ConfigError(
            f"{source}: scale: local needs a `local:` block saying how this campaign runs on a "
            "workstation (docs/config.md#local-scale)"
        )
    local = config["local"]
    scaled["campaign"] = f"{config['campaign']}{LOCAL_SUFFIX}"
    for key in REPLACED_KEYS:
        if key in local:
            scaled[key] = copy.deepcopy(local[key])
    entries = load_local_mpi(local_mpi_path)
    names = local.get("mpi", list(DEFAULT_LOCAL_MPI))
    for name in names:
        if name not in entries:
            raise ConfigError(
                f"{source}: local.mpi: {name!r} is not an entry of {local_mpi_path} "
                f"(its entries: {', '.join(entries)})"
            )
    scaled["mpi"] = {name: copy.deepcopy(entries[name]) for name in names}
    scaled["experiments"] = _restrict_experiments(
        scaled["experiments"], local.get("restrict", {}), source
    )
    return scaled
