"""The latency-model catalogue (data/models.yaml) and a campaign's selection of models.

A model is linear in its coefficients: latency = sum of coefficient * basis(n, p), each basis one of
the functions of `BASES` (n = message size in bytes, p = processes). Models are data: nothing
from the catalogue is evaluated as code. Light on imports, so config checks at workflow parse
time stay fast; the fit lives in model_fit.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np

from mpiguide.core.errors import ConfigError
from mpiguide.core.package_data import MODELS_SCHEMA
from mpiguide.core.schema_messages import describe
from mpiguide.core.strict_yaml import load_package_yaml, load_yaml

# The `analysis:` keys a fit reads: its record and params carry these, not the whole block.
MODEL_OPTIONS = ("model_tolerance", "model_weighting")


def model_options(analysis: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a config's `analysis:` block that a fit reads (those it sets)."""
    return {key: analysis[key] for key in MODEL_OPTIONS if key in analysis}


Basis = Callable[[np.ndarray, np.ndarray], np.ndarray]

# The schema's enum of `basis` lists exactly these names.
BASES: dict[str, Basis] = {
    "1": lambda n, p: np.ones_like(p, dtype=np.float64),
    "n": lambda n, p: n,
    "p": lambda n, p: p,
    "log2(p)": lambda n, p: np.log2(p),
    "n*log2(p)": lambda n, p: n * np.log2(p),
    "(p-1)/p": lambda n, p: (p - 1) / p,
    "n*(p-1)/p": lambda n, p: n * (p - 1) / p,
    "log2(p)+p-1": lambda n, p: np.log2(p) + p - 1,
}


@dataclass(frozen=True)
class Term:
    coefficient: str
    basis: str

    @property
    def uses_n(self) -> bool:
        """Whether the basis depends on the message size (every name with n does)."""
        return "n" in self.basis


@dataclass(frozen=True)
class Model:
    id: str
    source: str
    text: str
    terms: tuple[Term, ...]
    published: Mapping[str, float]

    @property
    def coefficients(self) -> list[str]:
        return [term.coefficient for term in self.terms]

    @property
    def uses_n(self) -> bool:
        return any(term.uses_n for term in self.terms)

    def design(self, n: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Design matrix: one row per point, one column per term."""
        n, p = np.asarray(n, dtype=np.float64), np.asarray(p, dtype=np.float64)
        return np.column_stack([BASES[term.basis](n, p) for term in self.terms])

    def determined_by(self, n: np.ndarray, p: np.ndarray) -> bool:
        """Whether points at these (n, p) can determine every coefficient (full column rank)."""
        return bool(np.linalg.matrix_rank(self.design(n, p)) == len(self.terms))

    def predict(self, coefficients: Sequence[float], n: np.ndarray, p: np.ndarray) -> np.ndarray:
        return self.design(n, p) @ np.asarray(coefficients, dtype=np.float64)


@dataclass(frozen=True)
class Selection:
    """One entry of a campaign's `models:`: a model and the operations it is fitted to."""

    model: Model
    ops: tuple[str, ...]


@cache
def _validator() -> jsonschema.Validator:
    return jsonschema.Draft202012Validator(load_package_yaml(MODELS_SCHEMA))


def _model(model_id: str, entry: Mapping[str, Any], where: str) -> Model:
    terms = tuple(Term(t["coefficient"], t["basis"]) for t in entry["terms"])
    names = [term.coefficient for term in terms]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"{where}.terms: coefficient {name!r} appears twice")
    for name in entry.get("published", {}):
        if name not in names:
            raise ConfigError(
                f"{where}.published.{name}: not a coefficient of the model; its coefficients: "
                f"{', '.join(names)}"
            )
    return Model(model_id, entry["source"], entry["text"], terms, entry.get("published", {}))


def load_models(path: str | Path) -> dict[str, Model]:
    """The model catalogue, validated; a ConfigError names the file and the key."""
    path = Path(path)
    catalogue = load_yaml(path, "the model catalogue")
    errors = sorted(_validator().iter_errors(catalogue), key=lambda e: list(map(str, e.path)))
    if errors:
        error = errors[0]
        key = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in error.absolute_path)
        raise ConfigError(f"{path}: {key.replace('.[', '[') or '(top level)'}: {describe(error)}")
    return {
        model_id: _model(model_id, entry, f"{path}: {model_id}")
        for model_id, entry in catalogue.items()
    }


def resolve_models(
    selection: Sequence[Mapping[str, Any]], catalogue: Mapping[str, Model], source: str
) -> list[Selection]:
    """A campaign's `models:` list (schema-valid: {model: id, ops: [...]}) with its models."""
    resolved = []
    for index, item in enumerate(selection):
        if item["model"] not in catalogue:
            raise ConfigError(
                f"{source}: models[{index}].model: unknown model {item['model']!r}; the "
                f"catalogue has {', '.join(catalogue)}"
            )
        resolved.append(Selection(catalogue[item["model"]], tuple(item["ops"])))
    return resolved
