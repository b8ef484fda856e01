"""What each call of an experiment did inside the MPI library, as the PMPI library
tests/kernel/algorithm_fingerprint.c records it (its header says what it records): built with
an MPI library's mpicc, preloaded into the kernel with FINGERPRINT_DIR set, read back here."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

FINGERPRINT_SOURCE = Path(__file__).parent / "kernel" / "algorithm_fingerprint.c"

Fingerprint = tuple[tuple[str, ...], ...]  # per rank: what its calls did


def read_fingerprints(workdir: Path, nprocs: int) -> dict[tuple[str, int], Fingerprint]:
    """Per (collective, count), what every rank's calls did, read from the rank<R>.tsv files
    in workdir; each rank's calls of one experiment must be alike."""
    per_rank: dict[tuple[str, int], list[set[tuple[str, ...]]]] = defaultdict(
        lambda: [set() for _ in range(nprocs)]
    )
    for rank in range(nprocs):
        for line in (workdir / f"rank{rank}.tsv").read_text().splitlines():
            collective, count, *observed = line.split("\t")
            per_rank[collective, int(count)][rank].add(tuple(observed))
    fingerprints = {}
    for key, ranks in per_rank.items():
        assert all(len(calls) == 1 for calls in ranks), (key, ranks)
        fingerprints[key] = tuple(next(iter(calls)) for calls in ranks)
    return fingerprints


def functions_entered(
    fingerprints: dict[tuple[str, int], Fingerprint],
) -> dict[tuple[str, int], set[str]]:
    """Per (collective, count), the Open MPI functions its calls entered first, over the ranks
    ("-": none observed)."""
    return {key: {observed[3] for observed in fp} for key, fp in fingerprints.items()}
