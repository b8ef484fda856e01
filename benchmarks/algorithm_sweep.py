"""A library's algorithms swept across launches (the way before) and inside one launch.

Prints, does not assert. Runs config/campaigns/tune-example.yaml and mpinpc-tune-local.yaml (as
this checkout has them: the same operations, sizes and `algorithms:`) both ways at the same number
of runs, each way in a git worktree of its own code:
- across: the commit before the sweep moved inside the launch (`--base`, default 5033e4c), where
  each algorithm is an mpi entry of its own whose environment forces it for whole launches;
- within: this checkout's HEAD, where each algorithm is a value of the experiment parameter
  `algorithm`, switched per experiment inside the entry's launches.
Each way runs the target `tune` and prints: the share of ALGO tests decided (violated or holds),
the kernel time (the sum of every run's wall time, from the raw provenance's start and end times,
to the second), and what `tune` wrote (the rules file's rules, the chosen algorithms).

Null control, flagged share (violated of its tests): the library's choice compared with itself
under two names. Across: the entry `<entry>-twin`, the same entry again (no algorithms), measured
in its own launches, against the entry (guideline NULL-ACROSS). Within: every experiment of the
swept collectives twice more, with time budgets that differ by 1 ms (`max_time` 1000 s and
1000.001 s where the block has none, never reached, else its budget plus 1 and 2 ms), the one
against the other, under the library's choice and under each algorithm (guideline
NULL-WITHIN): both twins check their budget after every repetition alike (the experiment
itself, without a budget, would not: not a null). Both controls add experiments or launches
to their way's kernel time; the table says how many. Both ways measure every block with the
`interleave` this checkout gives it (the base code had no top-level `interleave` and measured
back to back by default), and the load average is printed beside each campaign.

Run it alone on the machine, with the venv's Python:
`.venv/bin/python benchmarks/algorithm_sweep.py [--runs 10] [--workdir DIR]`; `--dry-run` plans
both ways without measuring, `--runs 2` checks that it works. The worktrees and results stay in
DIR (default /tmp/mpiguide-algorithm-sweep); a re-run resumes what Snakemake finds missing.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from _common import REPO, load, run_snakemake
from mpiguide.campaign.expansion import algorithm_settings
from mpiguide.campaign.listings import Listing, Listings
from mpiguide.campaign.schema import load_schema
from mpiguide.core.paths import (
    ALGORITHMS_CSV,
    GRID_CSV,
    GUIDELINES_TREE,
    RAW_TREE,
    TESTS_CSV,
    TIMINGS_PARQUET,
    TUNING_TREE,
    campaign_results,
    ompi_rules_name,
)
from mpiguide.core.values import ALGORITHM_GUIDELINE_PREFIX, canonical_value
from mpiguide.plan.grid import INTERLEAVE_KEY
from mpiguide.tune.choose import chosen_algorithms

CAMPAIGNS = ("tune-example", "mpinpc-tune-local")
WAYS = ("across", "within")
BASE = "5033e4c"
NULL_BUDGET_S = 1000.0  # a max_time no experiment reaches
NULL_MARGIN_S = 0.001
DECIDED = ("violated", "holds")
# The workflow rule that writes a launch's kernel input (in both ways' code).
INPUTS_RULE = "inputs"
TWIN_SUFFIX = "-twin"  # the across way's null control: the entry again, in launches of its own


def checkout(workdir: Path, way: str, commit: str) -> Path:
    """A worktree of `commit` for one way (made once, moved to `commit` when reused)."""
    path = workdir / f"{way}-checkout"
    if not path.exists():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), commit],
            check=True,
        )
    else:
        subprocess.run(["git", "-C", str(path), "checkout", "-q", "--detach", commit], check=True)
    return path


def _ops(block: dict[str, Any]) -> list[str]:
    return list(block["op"]) if isinstance(block["op"], list) else [block["op"]]


def _entry(config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (name, entry), *others = config["mpi"].items()
    if others:
        raise SystemExit(f"{config['campaign']}: expected one mpi entry")
    return name, entry


def pinned_interleave(config: dict[str, Any]) -> dict[str, Any]:
    """The campaign with every block's `interleave` written out, as this checkout reads it (the
    top-level key, by default the schema's, bounded by nrep), so that both ways measure alike:
    the base code has no top-level key and measured back to back by default."""
    pinned = copy.deepcopy(config)
    default = load_schema()["properties"][INTERLEAVE_KEY]["default"]
    chunks = pinned.pop(INTERLEAVE_KEY, default)
    for block in pinned["experiments"]:
        if INTERLEAVE_KEY not in block:
            nrep = block.get("nrep", pinned["nrep"])
            block[INTERLEAVE_KEY] = min(chunks, min(nrep) if isinstance(nrep, list) else nrep)
    return pinned


def across_campaign(config: dict[str, Any], runs: int) -> dict[str, Any]:
    """The campaign for the base code: its entry's algorithms become entries there; the null
    control is a twin entry measured in launches of its own."""
    bench = copy.deepcopy(config)
    bench.update(campaign=f"{config['campaign']}-across", runs=runs)
    name, entry = _entry(bench)
    if entry.get("algorithms"):
        # by name, as this checkout resolves `all`: the base code would also force algorithms
        # this one leaves out as unusable at some deployment (two_proc at 4 ranks)
        entry["algorithms"] = {}
        listed = Listings.of(Path(), Listing.RUN).choices
        for setting in algorithm_settings(config, str(config["campaign"]), listed):
            entry["algorithms"].setdefault(setting.op, []).append(setting.algorithm.name)
    twin = copy.deepcopy(entry)
    twin.pop("algorithms", None)
    bench["mpi"][f"{name}{TWIN_SUFFIX}"] = twin
    swept = sorted(entry.get("algorithms", {}))
    bench["guidelines"] = [
        *bench["guidelines"],
        {
            "id": "NULL-ACROSS",
            "source": "benchmarks/algorithm_sweep.py",
            "text": "the library's choice ≼ itself, in launches of another entry",
            "relation": "le",
            "lhs": {"mpi": name, "op": swept},
            "rhs": {"mpi": f"{name}{TWIN_SUFFIX}", "op": swept},
        },
    ]
    return bench


def _twin_budgets(budget: float) -> tuple[float, float]:
    """The two budgets of an experiment's null twins: both checked after every repetition, as
    a budget is (a broadcast between repetitions), never reached where the block has none."""
    first = NULL_BUDGET_S if not budget else budget + NULL_MARGIN_S
    return first, first + NULL_MARGIN_S


def within_campaign(config: dict[str, Any], runs: int) -> dict[str, Any]:
    """The campaign for this checkout; the null control is two twins of every experiment of the
    swept collectives, measured alike and differing only in their budgets' last digit."""
    bench = copy.deepcopy(config)
    bench.update(campaign=f"{config['campaign']}-within", runs=runs)
    name, entry = _entry(bench)
    swept = sorted(entry.get("algorithms", {}))
    twins, budgets = [], set()
    for block in config["experiments"]:
        ops = [op for op in _ops(block) if op in swept]
        if not ops:
            continue
        pair = _twin_budgets(block.get("max_time", 0))
        twins += [{**copy.deepcopy(block), "op": ops, "max_time": twin} for twin in pair]
        budgets.add(pair)
    bench["experiments"] = [*bench["experiments"], *twins]
    bench["guidelines"] = [
        *bench["guidelines"],
        *(
            {
                "id": f"NULL-WITHIN-{index}",
                "source": "benchmarks/algorithm_sweep.py",
                "text": "an experiment ≼ itself under another exp_id, in the same launches",
                "relation": "le",
                "lhs": {"mpi": name, "op": swept, "max_time": first},
                "rhs": {"mpi": name, "op": swept, "max_time": second},
            }
            for index, (first, second) in enumerate(sorted(budgets))
        ),
    ]
    return bench


def run_tune(project: Path, config: dict[str, Any], cores: int, dry_run: bool) -> Path:
    """Write the campaign into the checkout and run its target `tune` there (or plan it), with
    the checkout's own code; return its results directory."""
    config_file = project / "config" / "campaigns" / f"bench-{config['campaign']}.yaml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    common = ["--profile", "profiles/local", "--cores", str(cores), "--quiet", "rules",
              "--configfile", str(config_file)]  # fmt: skip
    if dry_run:
        run_snakemake(project, "tune", *common, "-n")
    else:
        # The launches' inputs first, in an invocation of their own: Snakemake keeps re-checking
        # its schedule for every job it has finished (docs/workflow.md, "The local profile"), and
        # after the across way's hundreds of input jobs that took most of a core from the runs.
        run_snakemake(project, "tune", *common, "--until", INPUTS_RULE)
        run_snakemake(project, "tune", *common)
    return project / campaign_results(str(config["campaign"]))


def kernel_seconds(results: Path) -> tuple[float, int]:
    """The sum of the runs' wall times (provenance start to end, to the second), and the runs."""
    total, launches = 0.0, 0
    for provenance in (results / RAW_TREE).rglob("run*.json"):
        record = json.loads(provenance.read_text(encoding="utf-8"))
        start = datetime.fromisoformat(record["start_time"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(record["end_time"].replace("Z", "+00:00"))
        total += (end - start).total_seconds()
        launches += 1
    return total, launches


def _share(tests: pd.DataFrame, verdicts: tuple[str, ...]) -> str:
    if tests.empty:
        return "no tests"
    count = int(tests["verdict"].isin(verdicts).sum())
    return f"{100 * count / len(tests):.1f} % ({count}/{len(tests)})"


def rules_collectives(path: Path) -> int:
    """The collectives an Open MPI rules file tunes (its first number)."""
    words = " ".join(line.split("#", 1)[0] for line in path.read_text().splitlines()).split()
    return int(words[0]) if words else 0


def summary(config: dict[str, Any], results: Path, way: str) -> dict[str, str]:
    tests = pd.read_csv(results / GUIDELINES_TREE / TESTS_CSV, dtype=str, keep_default_na=False)
    algo = tests[tests["guideline"].str.startswith(f"{ALGORITHM_GUIDELINE_PREFIX}.")]
    twins = {
        canonical_value(twin)
        for block in config["experiments"]
        for twin in _twin_budgets(block.get("max_time", 0))
    }
    if way == "within":
        # the null control's twin experiments are swept too: their ALGO tests are not counted
        algo = algo[~algo["max_time"].isin(twins)]
    null = tests[tests["guideline"].str.startswith("NULL-")]
    seconds, launches = kernel_seconds(results)
    timings = pd.read_parquet(results / TIMINGS_PARQUET, columns=["mpi", "exp_id", "time_s"])
    repetitions = float(timings["time_s"].sum())
    null_rows = timings["mpi"].str.endswith(TWIN_SUFFIX)
    if way == "within":
        grid = pd.read_csv(results / GRID_CSV, usecols=["exp_id", "max_time"])
        twin_ids = grid.loc[grid["max_time"].map(canonical_value).isin(twins), "exp_id"]
        null_rows = timings["exp_id"].isin(twin_ids)
    campaign_repetitions = float(timings.loc[~null_rows, "time_s"].sum())
    tuning = results / TUNING_TREE
    chosen = chosen_algorithms(pd.read_csv(tuning / ALGORITHMS_CSV))
    rules = sum(rules_collectives(path) for path in tuning.glob(ompi_rules_name("*")))
    control = "1 twin entry" if way == "across" else "twin experiments of the swept collectives"
    return {
        "ALGO tests decided": _share(algo, DECIDED),
        "ALGO violated": _share(algo, ("violated",)),
        "kernel time": (
            f"{seconds:.0f} s in {launches} launches (to the second per launch; null control: "
            f"{control})"
        ),
        "repetitions' time": (
            f"{repetitions:.3f} s (the sum of timings.parquet's time_s), "
            f"{campaign_repetitions:.3f} s without the null control's"
        ),
        "tune chose": "; ".join(f"{op}: {', '.join(names)}" for (_, op), names in chosen.items())
        or "nothing",
        "rules file": f"{rules} collective(s) with rules",
        "null control flagged": _share(null, ("violated",)),
    }


def analysis_override(item: str) -> tuple[str, Any]:
    """`KEY=VALUE` of --reanalyse, the value read as YAML."""
    key, separator, value = item.partition("=")
    if not separator or not key:
        raise SystemExit(f"--reanalyse {item!r}: expected KEY=VALUE, e.g. v_thres=1.03")
    return key, yaml.safe_load(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--campaigns", nargs="+", choices=CAMPAIGNS, default=list(CAMPAIGNS))
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS))
    parser.add_argument("--base", default=BASE, help="the commit of the across-launch sweep")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mpiguide-algorithm-sweep"))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--dry-run", action="store_true",
                        help="plan each way (snakemake -n) without measuring")  # fmt: skip
    parser.add_argument("--interleave", type=int,
                        help="the campaigns' `interleave` instead of their own")  # fmt: skip
    parser.add_argument("--reanalyse", nargs="+", metavar="KEY=VALUE", default=[],
                        help="then analyse each way's runs again with these `analysis` keys "
                        "(YAML, e.g. test=auto v_thres=1.03); nothing is re-measured")  # fmt: skip
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    commits = {"across": args.base, "within": head}
    builders = {"across": across_campaign, "within": within_campaign}
    table: dict[tuple[str, str], dict[str, str]] = {}
    reanalysis = dict(analysis_override(item) for item in args.reanalyse)
    described = ", ".join(args.reanalyse)
    for name in args.campaigns:
        config = yaml.safe_load((REPO / "config" / "campaigns" / f"{name}.yaml").read_text())
        if args.interleave is not None:
            config[INTERLEAVE_KEY] = args.interleave
        config = pinned_interleave(config)
        for way in args.ways:
            project = checkout(args.workdir, way, commits[way])
            print(
                f"{name}, {way} ({commits[way][:12]}): {args.runs} runs, {load('load average')}",
                flush=True,
            )
            bench = builders[way](config, args.runs)
            results = run_tune(project, bench, args.cores, args.dry_run)
            if args.dry_run:
                continue
            table[(name, way)] = summary(config, results, way)
            print(f"{name}, {way}: done, {load('load average')}", flush=True)
            if reanalysis:
                bench["analysis"] = {**bench["analysis"], **reanalysis}
                run_tune(project, bench, args.cores, dry_run=False)
                table[(name, f"{way} (re-analysed: {described})")] = summary(config, results, way)
    for (name, way), rows in table.items():
        print(f"\n{name}, {way} launches, {args.runs} runs")
        for key, value in rows.items():
            print(f"  {key:22} {value}")


if __name__ == "__main__":
    main()
