"""mpiguide tune: the library's own algorithms that beat its default, as the files the library
reads. The rules file is read back here as Open MPI 4.1 reads and looks it up
(coll_tuned_dynamic_file.c, coll_tuned_dynamic_rules.c); tests/kernel/test_tuning_rules.py runs
Open MPI itself on one."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mpiguide.analysis.analysis_types import AnalysisOptions
from mpiguide.core.errors import DataError
from mpiguide.reports.figure_style import VERDICT_MARKERS, VERDICTS
from mpiguide.tune.applied import settings_env
from mpiguide.tune.library_algorithms import Algorithm, AlgorithmSetting
from mpiguide.tune.mpich_selection import container_name, default_tree, leaf
from mpiguide.tune.ompi_rules import OMPI_COLLECTIVE_IDS
from mpiguide.tune.outputs import tune
from mpiguide.tune.plot import algorithms_figure, plot_algorithms, verdict_labels
from mpiguide.tune.words import (
    CHOICE_SECTION,
    DOC,
    TIMES,
    TUNING_NOTE,
    VERIFY_NOTE,
    VERIFY_SECTION,
    doc_link,
)

OMPI = {
    f"openmpi.{op}.{name}": AlgorithmSetting(
        "openmpi", "openmpi", op, Algorithm(name, n), False, 4, 0
    )
    for op, name, n in [
        ("allreduce", "recursive_doubling", 3),
        ("allreduce", "ring", 4),
        ("scan", "recursive_doubling", 2),
        ("allgather", "ring", 4),
    ]
}
MPICH = {
    f"mpich.{op}.{name}": AlgorithmSetting("mpich", "mpich", op, Algorithm(name, None), True)
    for op, name in [
        ("allreduce", "recursive_doubling"),
        ("bcast", "binomial"),
        ("bcast", "nb"),
        ("gather", "binomial"),
    ]
}
ANALYSIS = {"p_thres": 0.001, "v_thres": 1.03, "confidence": 0.95}
REPO = Path(__file__).resolve().parents[3]


def _row(
    setting: AlgorithmSetting | None,
    size: int,
    verdict: str,
    ratio: float,
    ppn: int = 2,
    guideline: str | None = None,
    op: str | None = None,
) -> dict[str, Any]:
    return {
        "guideline": guideline or (setting.guideline if setting else ""),
        "relation": "le",
        "mpi": setting.base if setting else "openmpi",
        "algorithm": f"|{setting.algorithm.name}" if setting else "",
        "nodes": "1",
        "ppn": str(ppn),
        "heap": "default",
        "op": op or (setting.op if setting else ""),
        "msg_size": str(size),
        "dtype": "char",
        "group": "0",
        "median_lhs": str(1e-5 * ratio),
        "median_rhs": "1e-05",
        "violation_ratio": str(ratio),
        "ratio_low": str(ratio * 0.9),
        "ratio_high": str(ratio * 1.1),
        "low_level": "0.999",
        "high_level": "0.95",
        "verdict": verdict,
    }


def _tests(tmp_path: Path, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    tests = tmp_path / "tests.csv"
    pd.DataFrame(rows).to_csv(tests, index=False)
    decided = tmp_path / "decided_with.json"
    decided.write_text(json.dumps({"analysis": ANALYSIS}))
    return tests, decided


def read_rules(text: str) -> dict[int, list[tuple[int, list[tuple[int, int, int, int]]]]]:
    """A rules file as Open MPI 4.1 reads it: integers, `#` to the end of the line skipped."""
    numbers = iter(int(t) for t in re.sub(r"#[^\n]*", " ", text).split())
    rules = {}
    for _ in range(next(numbers)):
        collective, com_rules = next(numbers), []
        for _ in range(next(numbers)):
            ranks, msg_rules = next(numbers), []
            for _ in range(next(numbers)):
                msg_rules.append((next(numbers), next(numbers), next(numbers), next(numbers)))
            assert msg_rules[0][0] == 0, "Open MPI needs a rule from size 0 first"
            com_rules.append((ranks, msg_rules))
        rules[collective] = com_rules
    assert next(numbers, None) is None
    return rules


def lookup(rules: dict[int, Any], op: str, ranks: int, size: int) -> int:
    """The algorithm Open MPI 4.1 picks: the last communicator rule not above `ranks` (else the
    first), in it the last message rule not above `size`; 0 = its own decision."""
    com_rules = rules.get(OMPI_COLLECTIVE_IDS[op])
    if not com_rules:
        return 0
    chosen = com_rules[0]
    for com_rule in com_rules:
        if com_rule[0] > ranks:
            break
        chosen = com_rule
    algorithm = chosen[1][0][1]
    for msg_size, alg, _, _ in chosen[1]:
        if msg_size > size:
            break
        algorithm = alg
    return algorithm


def test_the_fastest_significant_algorithm_per_size_and_the_default_elsewhere(
    tmp_path: Path,
) -> None:
    rd, ring = OMPI["openmpi.allreduce.recursive_doubling"], OMPI["openmpi.allreduce.ring"]
    rows = [
        _row(rd, 8, "violated", 1.5),
        _row(ring, 8, "holds", 1.0),
        _row(rd, 1024, "violated", 1.4),
        _row(ring, 1024, "violated", 1.2),
        _row(rd, 65536, "undecided", 1.9),
        _row(ring, 65536, "violated", 2.0),
        _row(rd, 8, "holds", 1.0, ppn=4),
        _row(ring, 8, "undecided", 1.3, ppn=4),
        # allgather: looked up by msg_size x ranks
        _row(OMPI["openmpi.allgather.ring"], 100, "violated", 1.1),
        # scan: the winner differs by size, and Open MPI does not look scan up by size
        _row(OMPI["openmpi.scan.recursive_doubling"], 8, "violated", 3.0),
        _row(OMPI["openmpi.scan.recursive_doubling"], 1024, "holds", 1.0),
        # a mock-up beats the collective: not a library algorithm
        _row(None, 1024, "violated", 1.6, guideline="MPINPC-GL1", op="bcast|bcast_as_allgatherv"),
    ]
    tests, decided = _tests(tmp_path, rows)
    tuned = tune(tests, decided, OMPI, tmp_path / "tuning")
    applied = tuned.algorithms
    assert {(c.op, c.ranks, c.msg_size, c.setting.algorithm.name) for c in applied} == {
        ("allreduce", 2, 8, "recursive_doubling"),
        ("allreduce", 2, 1024, "recursive_doubling"),
        ("allreduce", 2, 65536, "ring"),
        ("allgather", 2, 100, "ring"),
    }
    rules = read_rules((tmp_path / "tuning" / "openmpi.ompi-rules.conf").read_text())
    expected = {
        (2, 0): 0,
        (2, 7): 0,
        (2, 8): 3,
        (2, 1024): 3,
        (2, 65535): 3,
        (2, 65536): 4,
        (2, 65537): 0,
        (1, 8): 0,
        (3, 8): 0,
        (4, 8): 0,
        (4, 65536): 0,
    }
    assert {key: lookup(rules, "allreduce", *key) for key in expected} == expected
    assert lookup(rules, "allgather", 2, 200) == 4  # 100 B per process x 2 ranks
    assert lookup(rules, "allgather", 2, 199) == 0
    assert lookup(rules, "scan", 2, 8) == 0
    assert all(
        rule[2:] == (4, 0) for com in rules.values() for _, m in com for rule in m if rule[1]
    )
    note = (tmp_path / "tuning" / "tuning.md").read_text()
    # one line per point: the choice, its speedup, what the other algorithms say, the file
    rules_file = "openmpi.ompi-rules.conf"
    assert (
        f"- openmpi allreduce, 2 ranks, 64 KiB: use ring (2{TIMES} faster [1.8, 2.2]; undecided: "
        f"recursive_doubling) — {rules_file}" in note
    )
    assert (
        f"- openmpi allreduce, 2 ranks, 1 KiB: use recursive_doubling (1.4{TIMES} faster "
        f"[1.26, 1.54]; also faster: ring) — {rules_file}" in note
    )
    assert (
        f"- openmpi allreduce, 4 ranks, 8 B: keep the default — not settled: 1 of 2 algorithms "
        f"undecided (ring), 1 not 1.03{TIMES} faster" in note
    )
    # faster, but no file can select it: kept, and why is below
    assert (
        f"- openmpi scan, 2 ranks, 8 B: keep the default — recursive_doubling is 3{TIMES} faster "
        "[2.7, 3.3], but no settings file can choose it here (Not tuned, below)" in note
    )
    assert (
        f"- openmpi scan, 2 ranks, 1 KiB: keep the default — settled: none of the 1 algorithms "
        f"is 1.03{TIMES} faster" in note
    )
    assert "openmpi scan at 2 ranks: the fastest algorithm differs between message sizes" in note
    # the levels of the bounds shown, as tests.csv gives them; the method linked
    assert "[lower bound one-sided at 99.9 %, upper at 95 %]" in note
    assert "(../../../docs/tuning.md#tune-the-settings-that-choose-the-faster-algorithm)" in note
    # the mock-up that beats MPI_Bcast replaces it through libmpiguide-tune
    assert [r.line().split("  #")[0] for r in tuned.mockups] == [
        "bcast_as_allgatherv ranks=2 bytes=1024-1024"
    ]
    assert (
        f"- openmpi bcast, 2 ranks, 1 KiB: replace by the mock-up bcast_as_allgatherv (1.6{TIMES} "
        "faster [1.44, 1.76]) — openmpi.tune" in note
    )
    assert (
        "bcast_as_allgatherv ranks=2 bytes=1024-1024"
        in (tmp_path / "tuning" / "openmpi.tune").read_text()
    )
    figure5 = pd.read_csv(tmp_path / "tuning" / "algorithms.csv")
    assert len(figure5) == 11
    plot_algorithms(figure5, tmp_path / "algorithms.png")
    assert (tmp_path / "algorithms.png").read_bytes().startswith(b"\x89PNG")
    assert list(figure5.columns[:6]) == ["mpi", "library", "op", "nodes", "ppn", "msg_size"]


def csel_lookup(tree: dict[str, Any], op: str, ranks: int, size: int) -> str:
    """The algorithm MPICH 4.0.2's tree gives an intra-communicator call (csel.c: in each
    object the first key that holds), for the keys `tune` writes; "default" where the walk
    reaches MPICH's own subtree for the collective."""
    default = default_tree()[f"collective={op}"]["comm_type=intra"]
    holds = {
        "comm_size<": lambda n: ranks < n,
        "comm_size<=": lambda n: ranks <= n,
        "avg_msg_size<": lambda n: size < n,
    }
    node = tree[f"collective={op}"]["comm_type=intra"]
    while node != default:
        key = next(k for k in node if k.startswith("algorithm=") or k.endswith("=any") or (
            holds[k.rstrip("0123456789")](int(k[len(k.rstrip("0123456789")):]))
        ))  # fmt: skip
        if key.startswith("algorithm="):
            return key.removeprefix("algorithm=")
        node = node[key]
    return "default"


def test_mpich_cvars_for_one_winner_everywhere_the_json_file_per_size(tmp_path: Path) -> None:
    rd = MPICH["mpich.allreduce.recursive_doubling"]
    binomial, nb = MPICH["mpich.bcast.binomial"], MPICH["mpich.bcast.nb"]
    gather = MPICH["mpich.gather.binomial"]
    rows = [
        _row(rd, 8, "violated", 1.5),
        _row(rd, 1024, "violated", 1.2),
        _row(binomial, 8, "violated", 1.5),
        _row(nb, 1024, "violated", 1.5),
        _row(gather, 8, "violated", 1.5),
        _row(gather, 1024, "holds", 1.0),
    ]
    tests, decided = _tests(tmp_path, rows)
    tune(tests, decided, MPICH, tmp_path / "tuning")
    env = (tmp_path / "tuning" / "mpich.mpich.env").read_text().splitlines()
    assert [line for line in env if not line.startswith("#")] == [
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling",
        "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE=0",
    ]
    assert "#   MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0" in env
    assert (
        "#   MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=<path of mpich.mpich-selection.json>" in env
    )
    tree = json.loads((tmp_path / "tuning" / "mpich.mpich-selection.json").read_text())
    looked_up = {
        (ranks, size): csel_lookup(tree, "bcast", ranks, size)
        for ranks, size in [(2, 7), (2, 8), (2, 1023), (2, 1024), (2, 1025), (1, 8), (3, 8)]
    }
    assert looked_up == {
        (2, 7): "default",
        (2, 8): "MPIR_Bcast_intra_binomial",
        (2, 1023): "MPIR_Bcast_intra_binomial",
        (2, 1024): "MPIR_Bcast_allcomm_nb",
        (2, 1025): "default",
        (1, 8): "default",
        (3, 8): "default",
    }
    assert csel_lookup(tree, "allreduce", 2, 1024) == "MPIR_Allreduce_intra_recursive_doubling"
    assert csel_lookup(tree, "allreduce", 2, 1025) == "default"  # above the largest measured
    untouched = {
        k: v for k, v in tree.items() if k not in ("collective=bcast", "collective=allreduce")
    }
    assert untouched == {
        k: v
        for k, v in default_tree().items()
        if k not in ("collective=bcast", "collective=allreduce")
    }
    note = (tmp_path / "tuning" / "tuning.md").read_text()
    assert (
        f"- mpich bcast, 2 ranks, 1 KiB: use nb (1.5{TIMES} faster [1.35, 1.65]) — "
        "mpich.mpich-selection.json" in note
    )
    assert (
        f"- mpich allreduce, 2 ranks, 1 KiB: use recursive_doubling (1.2{TIMES} faster "
        "[1.08, 1.32]) — mpich.mpich.env or mpich.mpich-selection.json" in note
    )
    assert "mpich bcast: an MPICH cvar" not in note  # the JSON file tunes it
    # gather: neither a cvar (the winner differs by size) nor the JSON file (its size is not
    # the kernel's msg_size there)
    assert "mpich gather: an MPICH cvar sets one algorithm for every size" in note
    assert "mpich gather: MPICH 4.0.2's selection file measures its message size" in note
    # the JSON file tunes allreduce too: its cvar lines are to go, as a cvar overrides the file
    assert (
        "# Per communicator and message size instead (MPICH 4.0.2): drop the cvar lines of "
        "allreduce\n# above (a cvar line overrides the file), and set" in "\n".join(env)
    )
    # verify applies the JSON file in place of the cvar line of the collective it tunes
    selection = (tmp_path / "tuning" / "mpich.mpich-selection.json").resolve()
    assert settings_env("mpich", tmp_path / "tuning", "mpich") == (
        {
            "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(selection),
            "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE": "0",
            "MPIR_CVAR_BCAST_DEVICE_COLLECTIVE": "0",
        },
        tmp_path / "tuning" / "mpich.mpich.env",
    )


def test_verify_applies_the_cvars_the_json_file_does_not_replace(tmp_path: Path) -> None:
    """gather: one winner everywhere, a cvar tunes it and the JSON file cannot (its MPICH size
    is not the kernel's msg_size): its cvar lines stay beside the JSON file of bcast."""
    binomial, nb = MPICH["mpich.bcast.binomial"], MPICH["mpich.bcast.nb"]
    gather = MPICH["mpich.gather.binomial"]
    rows = [
        _row(binomial, 8, "violated", 1.5),
        _row(nb, 1024, "violated", 1.5),
        _row(gather, 8, "violated", 1.5),
        _row(gather, 1024, "violated", 1.4),
    ]
    tests, decided = _tests(tmp_path, rows)
    tune(tests, decided, MPICH, tmp_path / "tuning")
    env, _ = settings_env("mpich", tmp_path / "tuning", "mpich")
    assert env == {
        "MPIR_CVAR_GATHER_INTRA_ALGORITHM": "binomial",
        "MPIR_CVAR_GATHER_DEVICE_COLLECTIVE": "0",
        "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(
            (tmp_path / "tuning" / "mpich.mpich-selection.json").resolve()
        ),
        "MPIR_CVAR_BCAST_DEVICE_COLLECTIVE": "0",
    }
    # nothing tuned by size: the cvar lines alone
    (tmp_path / "tuning" / "mpich.mpich-selection.json").unlink()
    assert settings_env("mpich", tmp_path / "tuning", "mpich")[0] == {
        "MPIR_CVAR_GATHER_INTRA_ALGORITHM": "binomial",
        "MPIR_CVAR_GATHER_DEVICE_COLLECTIVE": "0",
    }


def test_the_mpich_env_note_keeps_the_cvar_lines_only_a_cvar_tunes(tmp_path: Path) -> None:
    """gather's winner is one everywhere and the JSON file cannot tune it: the note keeps its
    cvar lines and drops allreduce's, which the JSON file tunes; with no cvar line of a
    collective the file tunes, nothing is to be dropped. The environment verify applies does
    what the note says."""
    rd = MPICH["mpich.allreduce.recursive_doubling"]
    binomial, nb = MPICH["mpich.bcast.binomial"], MPICH["mpich.bcast.nb"]
    gather = MPICH["mpich.gather.binomial"]
    both = [_row(binomial, 8, "violated", 1.5), _row(nb, 1024, "violated", 1.5),
            _row(gather, 8, "violated", 1.5), _row(gather, 1024, "violated", 1.4)]  # fmt: skip
    for rows, note in [
        (
            [_row(rd, 8, "violated", 1.5), _row(rd, 1024, "violated", 1.2), *both],
            "# Per communicator and message size instead (MPICH 4.0.2): drop the cvar lines of "
            "allreduce\n# above (a cvar line overrides the file), keep those of gather (only a "
            "cvar tunes them), and set\n",
        ),
        (
            both,
            "# Per communicator and message size for bcast (MPICH 4.0.2), beside\n# the cvar "
            "lines above (gather: the file does not tune them): set\n",
        ),
    ]:
        tuning = tmp_path / str(len(rows))
        tuning.mkdir()
        tests, decided = _tests(tuning, rows)
        tune(tests, decided, MPICH, tuning)
        text = (tuning / "mpich.mpich.env").read_text()
        assert note in text and "drop the\n" not in text
        env, _ = settings_env("mpich", tuning, "mpich")
        # the cvar lines kept: gather's alone (a cvar of allreduce would override the file)
        assert {key: env[key] for key in env if key.endswith("_ALGORITHM")} == {
            "MPIR_CVAR_GATHER_INTRA_ALGORITHM": "binomial"
        }
        assert env["MPIR_CVAR_GATHER_DEVICE_COLLECTIVE"] == "0"


def test_mpich_env_comments_match_its_lines(tmp_path: Path) -> None:
    """Tuned by the JSON file alone (the winner differs by size), the env file holds no cvar
    and its comments say so, and do not tell to drop lines it does not have."""
    binomial, nb = MPICH["mpich.bcast.binomial"], MPICH["mpich.bcast.nb"]
    tests, decided = _tests(
        tmp_path, [_row(binomial, 8, "violated", 1.5), _row(nb, 1024, "violated", 1.5)]
    )
    tune(tests, decided, MPICH, tmp_path / "tuning")
    env = (tmp_path / "tuning" / "mpich.mpich.env").read_text()
    assert [line for line in env.splitlines() if not line.startswith("#")] == []
    assert "written by mpiguide tune: none, as no algorithm beats the default" in env
    assert "drop" not in env
    assert "# Per communicator and message size (MPICH 4.0.2): set\n" in env


def test_mpich_algorithm_names_and_restrictions_in_the_json_file() -> None:
    assert container_name("allreduce", "recursive_doubling") == (
        "MPIR_Allreduce_intra_recursive_doubling"
    )
    assert container_name("gatherv", "linear") == "MPIR_Gatherv_allcomm_linear"
    assert container_name("reduce_scatter_block", "nb") == "MPIR_Reduce_scatter_block_allcomm_nb"
    # allreduce's reduce_scatter_allgather needs count >= pof2 and a built-in op, as MPICH's
    # cvar path checks before forcing it
    assert leaf("allreduce", "reduce_scatter_allgather", "D") == {
        "count<pow2": "D",
        "count=any": {
            "is_op_built_in=yes": {"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather": {}},
            "is_op_built_in=no": "D",
        },
    }


def test_nothing_to_tune_from_without_a_sweep(tmp_path: Path) -> None:
    tests, decided = _tests(tmp_path, [_row(None, 8, "holds", 1.0, guideline="GL1", op="bcast")])
    with pytest.raises(DataError, match="no mpi entry of this campaign sweeps"):
        tune(tests, decided, {}, tmp_path / "tuning")


def test_no_winner_writes_an_empty_rules_file(tmp_path: Path) -> None:
    rd = OMPI["openmpi.allreduce.recursive_doubling"]
    tests, decided = _tests(tmp_path, [_row(rd, 8, "undecided", 1.2)])
    assert tune(tests, decided, OMPI, tmp_path / "tuning").algorithms == []
    rules = (tmp_path / "tuning" / "openmpi.ompi-rules.conf").read_text()
    assert read_rules(rules) == {}
    assert "# No collective is tuned: Open MPI decides as without this file" in rules
    assert "Algorithm 0" not in rules
    assert (
        "- openmpi allreduce, 2 ranks, 8 B: keep the default — not settled: 1 of 1 algorithms "
        "undecided (recursive_doubling)" in (tmp_path / "tuning" / "tuning.md").read_text()
    )


def test_a_point_is_settled_only_where_every_algorithm_holds(tmp_path: Path) -> None:
    """An algorithm violated in some tests of a point and holding in the others is neither
    chosen nor settled: the line names it apart from the undecided ones."""
    rd, ring = OMPI["openmpi.allreduce.recursive_doubling"], OMPI["openmpi.allreduce.ring"]
    rows = [
        _row(rd, 8, "violated", 1.5),
        {**_row(rd, 8, "holds", 1.0), "dtype": "double"},
        _row(ring, 8, "holds", 1.0),
        _row(rd, 1024, "holds", 1.0),
        _row(ring, 1024, "holds", 0.9),
    ]
    tests, decided = _tests(tmp_path, rows)
    assert tune(tests, decided, OMPI, tmp_path / "tuning").algorithms == []
    note = (tmp_path / "tuning" / "tuning.md").read_text()
    assert (
        "- openmpi allreduce, 2 ranks, 8 B: keep the default — not settled: 1 faster in some "
        f"tests only (recursive_doubling), 1 not 1.03{TIMES} faster" in note
    )
    assert (
        "- openmpi allreduce, 2 ranks, 1 KiB: keep the default — settled: none of the 2 "
        f"algorithms is 1.03{TIMES} faster" in note
    )


def _slug(heading: str) -> str:
    """A markdown heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lstrip("#").strip().lower())
    return text.replace(" ", "-")


def test_the_notes_link_the_method_where_it_is() -> None:
    """tuning.md (results/<campaign>/tuning/) and verify.md (results/<campaign>-verify/) link
    sections of docs/tuning.md that exist, by paths that reach it from where the notes are."""
    docs = REPO / DOC
    anchors = {_slug(line) for line in docs.read_text().splitlines() if line.startswith("#")}
    for note, section in ((TUNING_NOTE, CHOICE_SECTION), (VERIFY_NOTE, VERIFY_SECTION)):
        assert section in anchors
        target = re.fullmatch(r"\[.*\]\((.*)#.*\)", doc_link(note, section))
        assert target is not None
        assert (REPO / note.parent / target[1]).resolve() == docs.resolve()


def test_the_algorithms_figure_marks_each_verdict(tmp_path: Path) -> None:
    ring = OMPI["openmpi.allreduce.ring"]
    rows = [
        _row(ring, 8, "violated", 1.5),
        _row(ring, 1024, "holds", 1.0),
        _row(ring, 65536, "undecided", 1.1),
    ]
    tests, decided = _tests(tmp_path, rows)
    tune(tests, decided, OMPI, tmp_path / "tuning")
    options = AnalysisOptions.with_defaults()
    figure = algorithms_figure(pd.read_csv(tmp_path / "tuning" / "algorithms.csv"), options)
    (ax,) = figure.axes
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels[-3:] == [verdict_labels(options)[v] for v in VERDICTS]
    assert labels[-3] == f"violated: faster than the default (p \u2264 0.001, \u2265 1.03{TIMES})"
    # each point drawn with its verdict's marker
    marked = {
        (line.get_marker(), float(line.get_xdata()[0]))
        for line in ax.get_lines()
        if line.get_linestyle() == "None" and len(line.get_xdata())
    }
    assert marked == {
        (VERDICT_MARKERS["violated"], 8.0),
        (VERDICT_MARKERS["holds"], 1024.0),
        (VERDICT_MARKERS["undecided"], 65536.0),
    }
