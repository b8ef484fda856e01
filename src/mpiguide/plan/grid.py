"""Experiment blocks of a campaign config → the campaign grid (one row per experiment).

Each block expands to the product of its parameter lists (a scalar is a one-element list).
Per row, parameters that do not apply (docs/architecture.md) become None (empty in grid.csv),
missing applicable ones take their default, and `where` filters on the result. A value that
does not suit a row's topology (an ordering or constructor of another topology, topology
`none` for an op that needs one) drops that row when the block's list holds a value that
suits it, and otherwise gives way to the default. Duplicate rows collapse across blocks.

exp_id: rows are sorted by their parameter values (column order, empty first) and numbered from
0, so the same config always yields the same ids, whatever the order of its blocks.
"""

from __future__ import annotations

import difflib
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import ConfigError
from mpiguide.plan.operations import Operation, load_operations
from mpiguide.plan.where import Predicate, compile_where

if TYPE_CHECKING:
    import pandas as pd

PARAMETERS = (
    "op", "msg_size", "dtype", "nrep", "work", "topology", "ndim", "nfin", "radius",
    "ordering", "constructor", "reorder", "root", "sync", "max_time", "buffer_offset", "counts",
    "interleave", "warmup", "algorithm",
)  # fmt: skip
COLUMNS = ("exp_id", *PARAMETERS)
# The kernel's input columns: the grid's, and the chunk of an interleaved experiment a row
# measures (numbered by mpiguide.plan.inputs; not a parameter: 0 … interleave - 1).
CHUNK = "chunk"
INPUT_COLUMNS = (*COLUMNS, CHUNK)
INTEGER_PARAMETERS = frozenset(
    {
        "msg_size", "nrep", "work", "ndim", "nfin", "radius", "reorder", "root", "buffer_offset",
        "interleave", "warmup",
    }
)  # fmt: skip
DTYPE_SIZES = {"char": 1, "int": 4, "float": 4, "double": 8}
TOPOLOGIES = ("none", "cart", "vonneumann", "moore", "full")
# Topologies on a grid of ndim dimensions (ndim, nfin apply), and those among them whose
# neighbourhood is a stencil of some radius (radius applies).
GRID_TOPOLOGIES = ("cart", "vonneumann", "moore")
STENCIL_TOPOLOGIES = ("vonneumann", "moore")
# Values of the topology-dependent parameters, the default first.
ORDERINGS: dict[str, tuple[str, ...]] = {
    "vonneumann": ("FMAJ", "LMAJ", "RAND"),
    "moore": ("FMAJ", "LMAJ", "RAND"),
    "full": ("LINEAR", "RAND"),
}
CONSTRUCTORS: dict[str, tuple[str, ...]] = {
    "cart": ("cart", "nodecart", "nodecart_greedy"),
    "vonneumann": ("graph_adj", "graph"),
    "moore": ("graph_adj", "graph"),
    "full": ("graph_adj", "graph"),
}
BY_TOPOLOGY = {"ordering": ORDERINGS, "constructor": CONSTRUCTORS}
DEFAULTS: dict[str, Any] = {
    "dtype": "char", "work": 0, "root": 0, "sync": "dissemination", "max_time": 0.0,
    "reorder": 0, "radius": 1, "nfin": 0, "topology": "none", "buffer_offset": 0,
    "counts": "equal", "interleave": 1, "warmup": 0, "algorithm": "",
}  # fmt: skip
APPLIES_WHEN = {
    "msg_size": "the op moves data (msg_size is not 'none' in operations.tsv)",
    "dtype": "the op moves data (msg_size is not 'none' in operations.tsv)",
    "buffer_offset": "the op moves data (msg_size is not 'none' in operations.tsv)",
    "root": "the op has a root",
    "work": "the op is nonblocking",
    "ndim": "topology is cart, vonneumann or moore",
    "nfin": "topology is cart, vonneumann or moore",
    "radius": "topology is vonneumann or moore",
    "ordering": "topology is vonneumann, moore (FMAJ, LMAJ, RAND) or full (LINEAR, RAND)",
    "constructor": (
        "topology is cart (cart, nodecart, nodecart_greedy) or vonneumann, moore, full "
        "(graph, graph_adj)"
    ),
    "reorder": "topology is not none",
    "counts": "the op is a v-operation (counts is 1 in operations.tsv)",
    "algorithm": (
        "the op's MPI collective has library algorithms (algorithm_of is not none in "
        "operations.tsv)"
    ),
}
MAX_BLOCK_PRODUCT = 200_000
# Combinations of all blocks together: bounds validation time however many blocks
# (docs/bad_inputs.md).
MAX_CAMPAIGN_PRODUCT = 500_000
GRID_KEYS = ("nrep", "experiments")  # the config keys that define the grid
# The campaign's interleave (the schema's default), for the blocks that do not set theirs. A grid
# spec without it means the kernel's default, 1: how every grid was planned before the key
# existed (mpiguide.campaign.checked.Campaign.grid_spec).
INTERLEAVE_KEY = "interleave"


def applies(parameter: str, op: Operation, topology: str) -> bool:
    """Whether `parameter` applies to an experiment of `op` on `topology`."""
    match parameter:
        case "msg_size" | "dtype" | "buffer_offset":
            return op.has_msg_size
        case "root":
            return op.root
        case "work":
            return op.work
        case "ndim" | "nfin":
            return topology in GRID_TOPOLOGIES
        case "radius":
            return topology in STENCIL_TOPOLOGIES
        case "ordering" | "constructor":
            return topology in BY_TOPOLOGY[parameter]
        case "reorder":
            return topology != "none"
        case "counts":
            return op.counts
        case "algorithm":
            return op.algorithm_of != "none"
    return True


def suits(parameter: str, value: Any, op: Operation, topology: str) -> bool:
    """Whether an applicable value can be used with this op and topology."""
    if parameter in BY_TOPOLOGY:
        return value in BY_TOPOLOGY[parameter][topology]
    if parameter == "topology":
        return value != "none" or not op.topology_required
    return True


def describe(row: Mapping[str, Any]) -> str:
    return " ".join(f"{p}={row[p]}" for p in PARAMETERS if row.get(p) is not None)


def _normalise(parameter: str, value: Any) -> Any:
    # JSON/YAML may give 1024.0 for an integer; grid cells hold one canonical form
    if parameter in INTEGER_PARAMETERS:
        return int(value)
    if parameter == "max_time":
        return float(value)
    return value


class _Block:
    """One experiments block with its given value lists."""

    def __init__(
        self, block: Mapping[str, Any], index: int, nrep: int, interleave: int, source: str
    ) -> None:
        self.block = block
        self.path = f"{source}: experiments[{index}]"
        self.size = 0  # combinations, once expanded
        self.nrep = _normalise("nrep", nrep)
        self.interleave = _normalise("interleave", interleave)
        self.given = {
            p: [_normalise(p, v) for v in (block[p] if isinstance(block[p], list) else [block[p]])]
            for p in PARAMETERS
            if p in block
        }
        self.where: Predicate | None = (
            compile_where(block["where"], f"{self.path}.where", PARAMETERS)
            if "where" in block
            else None
        )

    def key(self, parameter: str, index: int) -> str:
        """Key path of one given value: `experiments[0].op[1]`, or `.op` for a scalar."""
        suffix = f"[{index}]" if isinstance(self.block[parameter], list) else ""
        return f"{self.path}.{parameter}{suffix}"

    def error(self, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {message}")

    def default(self, parameter: str, op: Operation, topology: str) -> Any:
        if parameter in BY_TOPOLOGY:
            return BY_TOPOLOGY[parameter][topology][0]
        if parameter == "nrep":
            return self.nrep
        if parameter in DEFAULTS:
            return DEFAULTS[parameter]
        raise self.error(
            f"'{parameter}' is required for op {op.name} on topology {topology} "
            f"({parameter} applies when {APPLIES_WHEN[parameter]}) and has no default"
        )

    def expand(self, operations: Mapping[str, Operation], earlier: int = 0) -> list[dict[str, Any]]:
        """The block's rows; `earlier` combinations of the blocks before it count against
        MAX_CAMPAIGN_PRODUCT. Sets self.size, the block's own combinations."""
        for index, name in enumerate(self.given["op"]):
            if name not in operations:
                close = difflib.get_close_matches(name, operations, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ConfigError(
                    f"{self.key('op', index)}: unknown operation '{name}'{hint}; "
                    f"allowed: {', '.join(operations)}"
                )
        shapes = list(self._shapes(operations))
        size = sum(math.prod(len(self.given[p]) for p in active) for _, active in shapes)
        if size > MAX_BLOCK_PRODUCT:
            raise self.error(
                f"expands to {size} combinations of applicable values (more than "
                f"{MAX_BLOCK_PRODUCT}); split it into smaller blocks"
            )
        if earlier + size > MAX_CAMPAIGN_PRODUCT:
            raise self.error(
                f"the blocks up to this one expand to {earlier + size} combinations of "
                f"applicable values (more than {MAX_CAMPAIGN_PRODUCT} in one campaign)"
            )
        self.size = size
        used: dict[str, set[int]] = {p: set() for p in self.given}
        applicable: set[str] = set()
        candidates: list[dict[str, Any]] = []
        for fixed, active in shapes:
            for combination in itertools.product(*(enumerate(self.given[p]) for p in active)):
                chosen = fixed | dict(zip(active, combination, strict=True))
                row = self._row(chosen, operations)
                if row is None:
                    continue
                for p, (index, value) in chosen.items():
                    if row[p] is not None:
                        applicable.add(p)
                    if row[p] == value:
                        used[p].add(index)
                candidates.append(row)
        self._check_all_used(used, applicable, operations)
        rows = [row for row in candidates if self.where is None or self.where(row)]
        if not rows:
            raise ConfigError(
                f"{self.path}.where: selects none of the block's {len(candidates)} experiments"
            )
        for row in rows:
            self._check_row(row)
        return rows

    def _shapes(
        self, operations: Mapping[str, Operation]
    ) -> Iterator[tuple[dict[str, tuple[int, Any]], list[str]]]:
        """Per given (op, topology): that choice, and the other given parameters that apply.

        Expanding only applicable parameters keeps a broad block (all ops x all topologies)
        from multiplying values that collapse anyway."""
        topologies = list(enumerate(self.given["topology"])) if "topology" in self.given else [None]
        others = [p for p in self.given if p not in ("op", "topology")]
        for op_choice in enumerate(self.given["op"]):
            op = operations[op_choice[1]]
            for topology_choice in topologies:
                fixed = {"op": op_choice}
                if topology_choice is not None:
                    fixed["topology"] = topology_choice
                topology = DEFAULTS["topology"] if topology_choice is None else topology_choice[1]
                yield fixed, [p for p in others if applies(p, op, topology)]

    def _row(
        self, chosen: Mapping[str, tuple[int, Any]], operations: Mapping[str, Operation]
    ) -> dict[str, Any] | None:
        """The grid row of one combination, or None when it is dropped (see module doc)."""
        op = operations[chosen["op"][1]]
        topology = chosen["topology"][1] if "topology" in chosen else DEFAULTS["topology"]
        if not suits("topology", topology, op, topology):
            if "topology" not in chosen:
                raise ConfigError(
                    f"{self.key('op', chosen['op'][0])}: '{op.name}' needs a topology "
                    f"({', '.join(TOPOLOGIES[1:])}); set `topology` in this block"
                )
            return None  # if no topology of the block serves the op, the op is reported unused
        row: dict[str, Any] = {}
        for p in PARAMETERS:
            if not applies(p, op, topology):
                row[p] = None
            elif p not in chosen:
                row[p] = self.default(p, op, topology)
            elif suits(p, chosen[p][1], op, topology):
                row[p] = chosen[p][1]
            elif any(suits(p, value, op, topology) for value in self.given[p]):
                return None
            else:
                row[p] = self.default(p, op, topology)
        if "interleave" not in chosen:
            # The campaign's interleave, bounded by the row's own repetitions.
            row["interleave"] = min(self.interleave, row["nrep"])
        return row

    def _check_all_used(
        self,
        used: Mapping[str, set[int]],
        applicable: set[str],
        operations: Mapping[str, Operation],
    ) -> None:
        """Every given parameter must apply to some row, every given value suit some row.

        Unused ops and topologies are reported first: they are why other parameters apply
        nowhere."""
        for p in sorted(used, key=lambda p: p not in ("op", "topology")):
            if p not in applicable and p in APPLIES_WHEN:
                raise ConfigError(
                    f"{self.path}.{p}: applies to no experiment of this block "
                    f"({p} applies when {APPLIES_WHEN[p]})"
                )
            unused = [i for i in range(len(self.given[p])) if i not in used[p]]
            if not unused:
                continue
            value = self.given[p][unused[0]]
            if p == "op" and operations[value].topology_required:
                reason = "it needs a topology other than none"
            elif p == "topology":
                reason = "every op of the block needs a topology"
            elif p in BY_TOPOLOGY:
                owners = [t for t, values in BY_TOPOLOGY[p].items() if value in values]
                reason = f"it is a {p} of topology {', '.join(owners)}"
            else:
                reason = "no op of the block can use it"
            raise ConfigError(
                f"{self.key(p, unused[0])}: '{value}' suits no experiment of this block ({reason})"
            )

    def _check_row(self, row: Mapping[str, Any]) -> None:
        if row["interleave"] > row["nrep"]:
            raise self.error(
                f"interleave {row['interleave']} exceeds nrep {row['nrep']} in [{describe(row)}]: "
                "every chunk needs a repetition"
            )
        if row["nfin"] is not None and row["nfin"] > row["ndim"]:
            raise self.error(
                f"nfin {row['nfin']} exceeds ndim {row['ndim']} in [{describe(row)}]; "
                "filter such rows with `where`, e.g. 'nfin <= ndim'"
            )
        if row["msg_size"] is not None and row["msg_size"] % DTYPE_SIZES[row["dtype"]]:
            raise self.error(
                f"msg_size {row['msg_size']} is not a multiple of the size of dtype "
                f"{row['dtype']} ({DTYPE_SIZES[row['dtype']]} bytes) in [{describe(row)}]; "
                "filter such rows with `where`"
            )


def _sort_key(row: Mapping[str, Any]) -> tuple[tuple[int, Any], ...]:
    return tuple((0, 0) if row[p] is None else (1, row[p]) for p in PARAMETERS)


def expand(config: Mapping[str, Any], source: str = "config") -> list[dict[str, Any]]:
    """Grid rows (exp_id first, then PARAMETERS) of a schema-valid config or grid spec.

    `source` (the config file) prefixes every error, followed by the key path.
    """
    operations = load_operations()
    unique: dict[tuple[Any, ...], dict[str, Any]] = {}
    blocks: Sequence[Mapping[str, Any]] = config["experiments"]
    combinations = 0
    for index, block in enumerate(blocks):
        expanding = _Block(
            block,
            index,
            config["nrep"],
            config.get(INTERLEAVE_KEY, DEFAULTS["interleave"]),
            source,
        )
        for row in expanding.expand(operations, combinations):
            unique.setdefault(tuple(row[p] for p in PARAMETERS), row)
        combinations += expanding.size
    ordered = sorted(unique.values(), key=_sort_key)
    return [{"exp_id": exp_id, **row} for exp_id, row in enumerate(ordered)]


def build_grid(config: Mapping[str, Any], source: str = "config") -> pd.DataFrame:
    """The grid as a DataFrame: nullable integers, empty (NA) where not applicable."""
    import pandas as pd  # here, not at the top: `validate` must start fast without pandas

    frame = pd.DataFrame.from_records(expand(config, source), columns=list(COLUMNS))
    dtypes = {p: "Int64" for p in INTEGER_PARAMETERS} | {"exp_id": "int64", "max_time": "float64"}
    return frame.astype(dtypes)


def write_grid(df: pd.DataFrame, path: str | Path) -> None:
    """Write grid.csv atomically; empty cells for not-applicable parameters."""
    with atomic_path(path) as temporary:
        df.to_csv(temporary, index=False, columns=list(COLUMNS), float_format="%.15g")
