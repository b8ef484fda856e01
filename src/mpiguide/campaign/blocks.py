"""Blocks: the run-NN launches of every mpi entry of one deployment, back to back in one job.

Launches of different entries made at different times (on a cluster in different allocations)
differ by whatever the machine did in between; slow launches come in bursts. Measured back to
back, in an order shuffled per block, run NN of two entries share the machine's state, and the
analysis pairs them block by block as it pairs two experiments of one launch.

`run_block(spec)` runs one block: every entry in the block's order (a permutation drawn from a
SHA-256 of the campaign seed and the block, so a re-run draws it again), each with its own env
and launcher words (a list of arguments, never a shell line: config values stay literal), its
output where `core.paths` puts it, its launcher's and kernel's output in its run log. A finished
launch is hard-linked into the block's stash before the next starts; when an entry fails the
others still run, the job fails, and Snakemake deletes the block's outputs -- but not the stash,
from which the next attempt restores the finished launches and measures only the missing ones.
The stash goes once the block record is written. Each launch's record names the attempt it was
measured in: launches of different attempts do not share the block's conditions.

Per launch it also records what the OS says about interference on the host running the block:
load averages and, from /proc/stat before and after, CPU time stolen by the hypervisor and CPU
time spent by processes other than the launch (busy time minus the launch's own).

Standard library only: the block runs in the kernel's environment (under --sdm conda the
kernel's env), which has no numpy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mpiguide.campaign.launch import command_words, launch_env
from mpiguide.core.atomic import atomic_path
from mpiguide.core.errors import ConfigError
from mpiguide.core.paths import BLOCK_STASH_SUFFIX, block_path

# Seconds a launch gets to end after SIGTERM when the block is stopped, before SIGKILL.
TERMINATE_GRACE_S = 10.0
ATTEMPT_FILE = "attempt"
LAUNCH_SUFFIX = ".launch.json"
# /proc/stat's cpu line: user nice system idle iowait irq softirq steal guest guest_nice (guest
# time is already counted in user and nice).
_BUSY_FIELDS = (0, 1, 2, 5, 6)
_STEAL_FIELD = 7


@dataclass(frozen=True)
class Entry:
    """One mpi entry's launch in a block."""

    mpi: str
    launcher: str  # the entry's launcher string as configured (split here, never by a shell)
    key_path: str  # names the launcher's config key in errors
    env: Mapping[str, str]
    modules: Sequence[str]
    kernel: str
    input: str
    output: str  # the raw CSV; the kernel writes the JSON beside it
    log: str

    @property
    def provenance(self) -> Path:
        return Path(self.output).with_suffix(".json")


@dataclass(frozen=True)
class BlockSpec:
    """A block as the workflow describes it (`python -m mpiguide run-block --spec-json`)."""

    seed: int
    nodes: int
    ppn: int
    run: int
    node_size: int | None
    record: str  # the block's record, `blocks/<nodes>x<ppn>/run<NN>.json`
    entries: tuple[Entry, ...]

    @property
    def name(self) -> str:
        return block_path(self.nodes, self.ppn, self.run)

    @property
    def tasks(self) -> int:
        return self.nodes * self.ppn

    @property
    def stash(self) -> Path:
        return Path(self.record).with_suffix(BLOCK_STASH_SUFFIX)

    @classmethod
    def from_json(cls, text: str) -> BlockSpec:
        try:
            data = json.loads(text)
            entries = tuple(
                Entry(
                    mpi=str(e["mpi"]),
                    launcher=str(e["launcher"]),
                    key_path=str(e.get("key_path", f"mpi.{e['mpi']}.launcher")),
                    env={str(k): str(v) for k, v in e.get("env", {}).items()},
                    modules=tuple(str(m) for m in e.get("modules", ())),
                    kernel=str(e["kernel"]),
                    input=str(e["input"]),
                    output=str(e["output"]),
                    log=str(e["log"]),
                )
                for e in data["entries"]
            )
            node_size = data.get("node_size")
            spec = cls(
                seed=int(data["seed"]),
                nodes=int(data["nodes"]),
                ppn=int(data["ppn"]),
                run=int(data["run"]),
                node_size=None if node_size is None else int(node_size),
                record=str(data["record"]),
                entries=entries,
            )
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise ConfigError(f"run-block: not a block description: {error!r}") from None
        names = [entry.mpi for entry in spec.entries]
        if not names or len(set(names)) != len(names):
            raise ConfigError(f"run-block: a block needs distinct mpi entries, got {names}")
        return spec


def block_order(seed: int, nodes: int, ppn: int, run: int, names: Sequence[str]) -> list[str]:
    """The entries in the block's order: sorted by a SHA-256 of (seed, block, entry), a uniform
    permutation that depends on nothing else (not the config's order of the entries, not the
    Python version), and a different one in every block."""

    def key(name: str) -> str:
        text = json.dumps([seed, "block", nodes, ppn, run, name])
        return hashlib.sha256(text.encode()).hexdigest()

    return sorted(names, key=key)


def launch_words(entry: Entry, tasks: int, node_size: int | None) -> list[str]:
    """The launch's argument list: launcher words, ranks, kernel and its options.

    Environment modules are loaded by a login bash (where `module` is defined) that gets the
    module names and the launch words as arguments, not as script text."""
    words = [*command_words(entry.launcher, entry.key_path), "-n", str(tasks), entry.kernel]
    words += ["--nprocs", str(tasks)]
    if node_size is not None:
        words += ["--node-size", str(node_size)]
    words += [entry.input, entry.output]
    if entry.modules:
        script = 'module load "${@:2:$1}" && exec "${@:$(($1 + 2))}"'
        words = ["bash", "-l", "-c", script, "mpiguide-block", str(len(entry.modules)),
                 *entry.modules, *words]  # fmt: skip
    return words


def interference_snapshot() -> dict[str, Any]:
    """What the OS says now: load averages, cumulative busy and stolen CPU seconds of the host,
    and the CPU seconds of this process's finished children (the launches)."""
    ticks = os.sysconf("SC_CLK_TCK")
    snapshot: dict[str, Any] = {"time": time.monotonic()}
    with contextlib.suppress(OSError, ValueError, IndexError):
        snapshot["loadavg"] = [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    with contextlib.suppress(OSError, ValueError, IndexError):
        cpu = Path("/proc/stat").read_text().splitlines()[0].split()
        values = [int(v) for v in cpu[1:]]
        snapshot["busy_s"] = sum(values[i] for i in _BUSY_FIELDS if i < len(values)) / ticks
        snapshot["steal_s"] = values[_STEAL_FIELD] / ticks if len(values) > _STEAL_FIELD else 0.0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    snapshot["children_s"] = children.ru_utime + children.ru_stime
    return snapshot


def interference(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The interference record of one launch from snapshots around it.

    `other_cpu_s`: the host's busy CPU time minus the launch's own (its launcher and the ranks
    it waited for; under srun the ranks are slurmstepd's children, so there it includes them);
    `other_cpu_fraction` divides it by the CPU time the host had (elapsed x CPUs)."""
    elapsed = after["time"] - before["time"]
    cpus = os.cpu_count() or 1
    record: dict[str, Any] = {
        "host": socket.gethostname(),
        "cpus": cpus,
        "elapsed_s": elapsed,
        "loadavg_before": before.get("loadavg"),
        "loadavg_after": after.get("loadavg"),
        "steal_s": None,
        "other_cpu_s": None,
        "other_cpu_fraction": None,
    }
    if "busy_s" in before and "busy_s" in after:
        own = after["children_s"] - before["children_s"]
        other = max(after["busy_s"] - before["busy_s"] - own, 0.0)
        record["steal_s"] = after["steal_s"] - before["steal_s"]
        record["other_cpu_s"] = other
        record["other_cpu_fraction"] = other / (elapsed * cpus) if elapsed > 0 else None
    return record


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _run(words: list[str], env: Mapping[str, str], log: Path) -> int:
    """Run one launch, its output into `log`; stopping the block (SIGTERM, Ctrl-C) stops the
    launch first, so no ranks outlive the job."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        try:
            child = subprocess.Popen(words, env={**os.environ, **env}, stdout=out,
                                     stderr=subprocess.STDOUT)  # fmt: skip
        except OSError as error:
            out.write(f"mpiguide run-block: cannot start {words[0]}: {error}\n".encode())
            return 127
        try:
            return child.wait()
        except BaseException:
            child.terminate()
            try:
                child.wait(TERMINATE_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            raise


def _terminate_on_sigterm() -> None:
    """SIGTERM (Snakemake, scancel, a time limit) ends the block through the same path as
    Ctrl-C, which stops the running launch."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)


def _hosts_of(provenance: Path) -> list[str] | None:
    with contextlib.suppress(OSError, ValueError, TypeError):
        hosts = json.loads(provenance.read_text()).get("hosts")
        return [str(h) for h in hosts] if isinstance(hosts, list) else None
    return None


def _unlink(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _link(source: Path, target: Path) -> None:
    """`target` becomes another name of `source`'s bytes (a copy where links are refused)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    _unlink(temporary)
    try:
        os.link(source, temporary)
    except OSError:
        shutil.copyfile(source, temporary)
    os.replace(temporary, target)


def _stashed(spec: BlockSpec) -> dict[str, dict[str, Any]]:
    """The launches a failed attempt finished, by entry: those whose stash holds the raw CSV,
    its JSON and the launch record (written last)."""
    found = {}
    for entry in spec.entries:
        record = spec.stash / f"{entry.mpi}{LAUNCH_SUFFIX}"
        csv, provenance = spec.stash / f"{entry.mpi}.csv", spec.stash / f"{entry.mpi}.json"
        with contextlib.suppress(OSError, ValueError):
            launch = json.loads(record.read_text())
            if isinstance(launch, dict) and csv.is_file() and provenance.is_file():
                found[entry.mpi] = launch
    return found


def _next_attempt(spec: BlockSpec, stashed: Mapping[str, Mapping[str, Any]]) -> int:
    attempts = [int(launch.get("attempt", 0)) for launch in stashed.values()]
    with contextlib.suppress(OSError, ValueError):
        attempts.append(int((spec.stash / ATTEMPT_FILE).read_text()))
    return max(attempts, default=0) + 1


def _write_json(path: Path, value: object) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


# What a kernel rank that dies of a signal writes first (src/kernel/crash.c; docs/kernel.md,
# "When the library crashes or hangs"): the experiment it was running.
CRASH_LINE = re.compile(r"^mpiguide-bench: rank \d+ got SIG[A-Z]+ .*$", re.MULTILINE)


def crash_line(log: str) -> str | None:
    """The first line of a launch's log that names the experiment a rank died in, if any."""
    try:
        found = CRASH_LINE.search(Path(log).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return found.group(0) if found else None


@dataclass(frozen=True)
class Failure:
    mpi: str
    exit_status: int
    log: str

    def __str__(self) -> str:
        crashed = crash_line(self.log)
        named = f": {crashed.removeprefix('mpiguide-bench: ')}" if crashed else ""
        return f"{self.mpi} exited with status {self.exit_status} (log: {self.log}){named}"


def run_block(spec: BlockSpec) -> list[Failure]:
    """Run the block's missing launches; write its record when every launch is done.

    Returns the launches that failed (then no record is written and the stash keeps the
    finished ones for the next attempt)."""
    stashed = _stashed(spec)
    attempt = _next_attempt(spec, stashed)
    spec.stash.mkdir(parents=True, exist_ok=True)
    _write_json(spec.stash / ATTEMPT_FILE, attempt)
    order = block_order(spec.seed, spec.nodes, spec.ppn, spec.run, [e.mpi for e in spec.entries])
    by_name = {entry.mpi: entry for entry in spec.entries}
    launches: dict[str, dict[str, Any]] = {}
    failures: list[Failure] = []
    for position, name in enumerate(order):
        entry = by_name[name]
        output, provenance = Path(entry.output), entry.provenance
        if name in stashed:
            _link(spec.stash / f"{name}.json", provenance)
            _link(spec.stash / f"{name}.csv", output)
            launches[name] = stashed[name]
            continue
        _unlink(output, provenance)
        output.parent.mkdir(parents=True, exist_ok=True)
        before = interference_snapshot()
        start = _utc_now()
        words = launch_words(entry, spec.tasks, spec.node_size)
        status = _run(words, {**launch_env(entry.env), **entry.env}, Path(entry.log))
        end = _utc_now()
        after = interference_snapshot()
        if status != 0 or not output.is_file() or not provenance.is_file():
            failures.append(Failure(name, status, entry.log))
            continue
        launch = {
            "mpi": name,
            "attempt": attempt,
            "position": position,
            "start_time": start,
            "end_time": end,
            "hosts": _hosts_of(provenance),
            "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "interference": interference(before, after),
        }
        _link(provenance, spec.stash / f"{name}.json")
        _link(output, spec.stash / f"{name}.csv")
        _write_json(spec.stash / f"{name}{LAUNCH_SUFFIX}", launch)
        launches[name] = launch
    if failures:
        return failures
    _write_json(
        Path(spec.record),
        {
            "block": spec.name,
            "nodes": spec.nodes,
            "ppn": spec.ppn,
            "run": spec.run,
            "order": order,
            "attempts": attempt,
            "launches": {name: launches[name] for name in order},
        },
    )
    shutil.rmtree(spec.stash, ignore_errors=True)
    return []


def main(spec_json: str) -> int:
    """`python -m mpiguide run-block`: exit 0 when the block is complete, 1 when a launch
    failed (each named on stderr)."""
    spec = BlockSpec.from_json(spec_json)
    _terminate_on_sigterm()
    failures = run_block(spec)
    for failure in failures:
        print(f"mpiguide: error: block {spec.name}: {failure}", file=sys.stderr, flush=True)
    return 1 if failures else 0
