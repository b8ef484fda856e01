"""Blocks without MPI: the order, the launch words, and a block's attempts with a stand-in
launcher (a script that writes what the kernel writes, or fails when told to)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mpiguide.campaign.blocks import (
    BlockSpec,
    block_order,
    interference,
    interference_snapshot,
    launch_words,
    run_block,
)
from mpiguide.core.errors import ConfigError

# Stands in for `<launcher> -n N <kernel> --nprocs N INPUT OUTPUT`: writes OUTPUT.json and then
# OUTPUT.csv, as the kernel does, unless the file named by $FAIL_FLAG exists.
LAUNCHER = """
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
output = Path(args[-1])
flag = os.environ.get("FAIL_FLAG")
if flag and Path(flag).exists():
    print("rank 1 died", flush=True)
    print("mpiguide-bench: rank 1 got SIGSEGV while running in.csv:4 (exp_id 2: op bcast)")
    sys.exit(3)
output.with_suffix(".json").write_text(json.dumps({"hosts": ["h0"], "argv": args,
                                                   "env": os.environ.get("MARK"),
                                                   "kill": os.environ.get("SLURM_KILL_BAD_EXIT")}))
output.write_text("exp_id,rep,time_s\\n0,0,1.0\\n")
"""


def spec_of(
    tmp_path: Path,
    names: list[str],
    fail: dict[str, Path] | None = None,
    env: dict[str, dict[str, str]] | None = None,
) -> BlockSpec:
    launcher = tmp_path / "launcher.py"
    launcher.write_text(LAUNCHER)
    entries = []
    for name in names:
        entry_env = {"MARK": f"{name}; $(touch {tmp_path}/pwned)"}
        if fail and name in fail:
            entry_env["FAIL_FLAG"] = str(fail[name])
        entry_env.update((env or {}).get(name, {}))
        entries.append(
            {
                "mpi": name,
                "launcher": f"{shlex.quote(sys.executable)} {launcher}",
                "env": entry_env,
                "modules": [],
                "kernel": "kernel",
                "input": str(tmp_path / "inputs" / name / "run03.csv"),
                "output": str(tmp_path / "raw" / name / "1x2" / "run03.csv"),
                "log": str(tmp_path / "logs" / name / "run03.log"),
            }
        )
    text = json.dumps(
        {"seed": 5, "nodes": 1, "ppn": 2, "run": 3, "node_size": None,
         "record": str(tmp_path / "blocks" / "1x2" / "run03.json"), "entries": entries}
    )  # fmt: skip
    return BlockSpec.from_json(text)


def test_order_is_a_reproducible_permutation_that_varies_by_block() -> None:
    names = ["a", "b", "c", "d", "e"]
    first = block_order(1, 1, 2, 0, names)
    assert sorted(first) == names
    assert block_order(1, 1, 2, 0, list(reversed(names))) == first
    orders = {tuple(block_order(1, 1, 2, run, names)) for run in range(20)}
    assert len(orders) > 5
    assert block_order(2, 1, 2, 0, names) != first or block_order(2, 1, 2, 1, names) != (
        block_order(1, 1, 2, 1, names)
    )


def test_launch_words_keep_config_values_literal(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, ["a", "b"])
    words = launch_words(spec.entries[0], 2, 4)
    assert words[-9:] == ["-n", "2", "kernel", "--nprocs", "2", "--node-size", "4",
                          spec.entries[0].input, spec.entries[0].output]  # fmt: skip
    with_modules = BlockSpec.from_json(
        json.dumps({"seed": 1, "nodes": 1, "ppn": 2, "run": 0, "record": "r.json",
                    "entries": [{"mpi": "x", "launcher": "srun --mpi=pmix", "modules": ["m/1;x"],
                                 "kernel": "k", "input": "i", "output": "o", "log": "l"}]})
    )  # fmt: skip
    words = launch_words(with_modules.entries[0], 2, None)
    assert words[:2] == ["bash", "-l"] and words[5:8] == ["1", "m/1;x", "srun"]


def test_bad_descriptions_are_refused() -> None:
    with pytest.raises(ConfigError, match="not a block description"):
        BlockSpec.from_json('{"seed": 1}')
    with pytest.raises(ConfigError, match="distinct mpi entries"):
        BlockSpec.from_json(
            json.dumps({"seed": 1, "nodes": 1, "ppn": 2, "run": 0, "record": "r", "entries": [
                {"mpi": "a", "launcher": "x", "kernel": "k", "input": "i", "output": "o",
                 "log": "l"}] * 2})
        )  # fmt: skip


def test_a_complete_block_records_every_launch(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, ["a", "b", "c"])
    assert run_block(spec) == []
    record = json.loads(Path(spec.record).read_text())
    assert record["order"] == block_order(5, 1, 2, 3, ["a", "b", "c"])
    assert record["block"] == "1x2/run03" and record["attempts"] == 1
    for position, name in enumerate(record["order"]):
        launch = record["launches"][name]
        assert (launch["attempt"], launch["position"], launch["hosts"]) == (1, position, ["h0"])
        assert launch["start_time"] <= launch["end_time"]
        provenance = json.loads(Path(spec.entries[0].output).with_suffix(".json").read_text())
        assert provenance["env"].startswith("a; $(touch")
    assert not (tmp_path / "pwned").exists()
    assert not spec.stash.exists()


def test_a_launch_ends_its_srun_step_when_a_rank_fails_unless_its_entry_says_otherwise(
    tmp_path: Path,
) -> None:
    spec = spec_of(tmp_path, ["a", "b"], env={"b": {"SLURM_KILL_BAD_EXIT": "0"}})
    assert run_block(spec) == []
    kill = {
        entry.mpi: json.loads(Path(entry.output).with_suffix(".json").read_text())["kill"]
        for entry in spec.entries
    }
    assert kill == {"a": "1", "b": "0"}


def test_a_failed_entry_is_measured_again_alone(tmp_path: Path) -> None:
    flag = tmp_path / "fail-b"
    flag.touch()
    spec = spec_of(tmp_path, ["a", "b", "c"], fail={"b": flag})
    failures = run_block(spec)
    assert [(f.mpi, f.exit_status) for f in failures] == [("b", 3)]
    assert "rank 1 died" in Path(failures[0].log).read_text()
    # the block's message names the experiment the kernel said it died in
    assert str(failures[0]).endswith(
        "(log: " + failures[0].log + "): rank 1 got SIGSEGV while running in.csv:4 "
        "(exp_id 2: op bcast)"
    )
    assert not Path(spec.record).exists()
    # Snakemake deletes a failed job's outputs: the finished launches survive in the stash.
    finished = {e.mpi: Path(e.output).read_bytes() for e in spec.entries if e.mpi != "b"}
    for entry in spec.entries:
        Path(entry.output).unlink(missing_ok=True)
        entry.provenance.unlink(missing_ok=True)
    flag.unlink()
    assert run_block(spec) == []
    record = json.loads(Path(spec.record).read_text())
    attempts = {name: launch["attempt"] for name, launch in record["launches"].items()}
    assert attempts == {"a": 1, "b": 2, "c": 1} and record["attempts"] == 2
    for entry in spec.entries:
        if entry.mpi in finished:
            assert Path(entry.output).read_bytes() == finished[entry.mpi]
        assert entry.provenance.is_file()


def test_interference_subtracts_the_launch_own_cpu_time() -> None:
    before = {"time": 0.0, "busy_s": 10.0, "steal_s": 1.0, "children_s": 2.0,
              "loadavg": [1.0, 1.0, 1.0]}  # fmt: skip
    after = {"time": 2.0, "busy_s": 13.0, "steal_s": 1.5, "children_s": 4.0,
             "loadavg": [2.0, 1.0, 1.0]}  # fmt: skip
    record = interference(before, after)
    assert record["other_cpu_s"] == pytest.approx(1.0)
    assert record["steal_s"] == pytest.approx(0.5)
    assert record["other_cpu_fraction"] == pytest.approx(1.0 / (2.0 * record["cpus"]))
    assert {"time", "children_s"} <= set(interference_snapshot())


def test_aggregation_reads_each_run_block_and_attempt(tmp_path: Path) -> None:
    from mpiguide.core.errors import DataError
    from mpiguide.store.block_records import read_block_launches
    from mpiguide.store.provenance import RunFile

    def run_file(mpi: str, run: int) -> RunFile:
        raw = tmp_path / "raw" / mpi / "1x2" / f"run{run:02d}.csv"
        return RunFile(raw, raw.with_suffix(".json"), raw, mpi, 1, 2, run)

    blocks = tmp_path / "blocks"
    (blocks / "1x2").mkdir(parents=True)
    launch = {
        "attempt": 2,
        "interference": {"loadavg_before": [1.5, 1, 1], "other_cpu_fraction": 0.25, "steal_s": 0.0},
    }
    (blocks / "1x2" / "run00.json").write_text(json.dumps({"launches": {"a": launch}}))
    found = read_block_launches([run_file("a", 0), run_file("a", 1)], blocks)
    assert (found[0].block, found[0].attempt, found[0].interference) == (
        "1x2/run00",
        2,
        (1.5, 0.25, 0.0),
    )
    assert (found[1].block, found[1].attempt) == ("", 0)  # no record: not in a block
    assert read_block_launches([run_file("a", 0)], None)[0].attempt == 0
    with pytest.raises(DataError, match="must hold entry 'b'"):
        read_block_launches([run_file("b", 0)], blocks)
    (blocks / "1x2" / "run00.json").write_text("{")
    with pytest.raises(DataError, match="not a readable block record"):
        read_block_launches([run_file("a", 0)], blocks)
