"""The files shipped inside the package (`src/mpiguide/data`): one copy of each, which the
workflow, the command line and an installed package all read.

The package is installed as files (pip, editable or not), so each resource is a real path that
Snakemake's `validate` and the rules' inputs can name.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_file(*parts: str) -> Path:
    """The path of a file below the package's `data/` folder."""
    return Path(str(resources.files("mpiguide").joinpath("data", *parts)))


CONFIG_SCHEMA = data_file("schemas", "config.schema.yaml")
GUIDELINES_SCHEMA = data_file("schemas", "guidelines.schema.yaml")
MODELS_SCHEMA = data_file("schemas", "models.schema.yaml")
GUIDELINE_CATALOGUE = data_file("guidelines.yaml")
MODEL_CATALOGUE = data_file("models.yaml")
OPERATIONS_TABLE = data_file("operations.tsv")
KERNEL_LIMITS = data_file("limits.tsv")
INTELMPI_PRESETS = data_file("intelmpi-presets.tsv")
