"""aggregate(): join, types, Tukey medians, and every integrity check naming the file."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mpiguide.aggregate import aggregate
from mpiguide.errors import DataError
from mpiguide.grid import COLUMNS
from mpiguide.stats import tukey_medians
from mpiguide.synthetic import Deployment, grid_frame, write_campaign

NREP = 8
DEPLOYMENTS = (Deployment("openmpi", 1, 2), Deployment("openmpi", 1, 4))
RUNS = 2


def small_grid() -> pd.DataFrame:
    rows = []
    for op in ("neighbor_allgather", "neighbor_alltoall"):
        for size in (8, 64):
            rows.append(dict(
                op=op, msg_size=size, dtype="char", nrep=NREP, work=None, topology="cart",
                ndim=1, nfin=0, radius=None, ordering=None, constructor="cart", reorder=0,
                root=None, sync="dissemination", max_time=0.0,
            ))  # fmt: skip
    rows.append(dict(op="barrier", msg_size=None, dtype=None, nrep=NREP, work=None,
                     topology="none", ndim=None, nfin=None, radius=None, ordering=None,
                     constructor=None, reorder=None, root=None, sync="dissemination",
                     max_time=0.0))  # fmt: skip
    return grid_frame(rows, exp_ids=np.arange(len(rows)) * 3 + 1)  # ids need not be 0..n-1


@pytest.fixture
def campaign(tmp_path):
    grid = small_grid()
    typical = np.linspace(1e-5, 5e-5, len(grid))
    raw = write_campaign(tmp_path, grid, typical, DEPLOYMENTS, RUNS, sigma=0.2, seed=4)
    return tmp_path, raw


def run_aggregate(root: Path, raw: list[Path]):
    aggregate(root / "grid.csv", raw, root / "raw", root / "inputs",
              root / "timings.parquet", root / "medians.parquet")  # fmt: skip


def test_timings_and_medians(campaign):
    root, raw = campaign
    run_aggregate(root, raw)
    timings = pd.read_parquet(root / "timings.parquet")
    grid = small_grid()
    assert len(timings) == len(grid) * NREP * RUNS * len(DEPLOYMENTS)
    expected = {*COLUMNS, "mpi", "nodes", "ppn", "nprocs", "run", "rep", "time_s"}
    assert set(timings.columns) == expected
    assert isinstance(timings["op"].dtype, pd.CategoricalDtype)
    assert isinstance(timings["mpi"].dtype, pd.CategoricalDtype)
    assert sorted(timings.groupby("ppn")["nprocs"].unique().map(list).sum()) == [2, 4]
    barrier = timings.loc[timings["op"] == "barrier"]
    assert barrier["msg_size"].isna().all() and barrier["ordering"].isna().all()

    medians = pd.read_parquet(root / "medians.parquet")
    assert len(medians) == len(grid) * RUNS * len(DEPLOYMENTS)
    assert {"exp_id", "mpi", "nodes", "ppn", "run", "median_s", "n_kept", "op"} <= set(medians)
    one = timings.loc[(timings["ppn"] == 4) & (timings["run"] == 1)]
    codes = one["exp_id"].to_numpy()
    reference = tukey_medians(codes, one["time_s"].to_numpy())
    got = medians.loc[(medians["ppn"] == 4) & (medians["run"] == 1)].sort_values("exp_id")
    np.testing.assert_allclose(got["median_s"], reference.median)
    np.testing.assert_array_equal(got["n_kept"], reference.n_kept)


def rewrite_lines(path: Path, keep):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for i, line in enumerate(lines) if keep(i, line)))


def test_truncated_raw_file_is_named(campaign):
    root, raw = campaign
    rewrite_lines(raw[1], lambda i, _: i < 20)
    with pytest.raises(DataError, match=rf"{raw[1]}: .* missing or extra rows"):
        run_aggregate(root, raw)
    assert not (root / "timings.parquet").exists()
    assert not list(root.glob("*.tmp-*"))


def test_duplicated_row_is_an_extra_row(campaign):
    root, raw = campaign
    with raw[0].open("a") as stream:
        stream.write(raw[0].read_text().splitlines()[-1] + "\n")
    with pytest.raises(DataError, match=rf"{raw[0]}: 1 experiment\(s\) with missing or extra"):
        run_aggregate(root, raw)


def test_unknown_exp_id_is_named(campaign):
    root, raw = campaign
    with raw[2].open("a") as stream:
        stream.write("999,0,0.001\n")
    with pytest.raises(DataError, match=rf"{raw[2]}: exp_id not in grid.csv: \[999\]"):
        run_aggregate(root, raw)


def test_input_changed_after_the_run_fails_the_checksum(campaign):
    root, raw = campaign
    input_csv = root / "inputs" / "openmpi" / "1x2" / "run01.csv"
    rewrite_lines(input_csv, lambda i, _: i != 3)
    with pytest.raises(DataError, match=r"run01.json: input_sha256 .* does not match"):
        run_aggregate(root, raw)


def test_missing_provenance_is_named(campaign):
    root, raw = campaign
    raw[3].with_suffix(".json").unlink()
    with pytest.raises(DataError, match="provenance missing"):
        run_aggregate(root, raw)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"input_sha256": "\xff"}', "not readable JSON: 'utf-8' codec can't decode byte 0xff"),
        (b"[1, 2]", "must be a JSON object"),
        (b"5", "must be a JSON object"),
        (b'{"nprocs": 2', "not readable JSON: Expecting"),
    ],
)
def test_unreadable_provenance_is_named(campaign, content, message):
    root, raw = campaign
    provenance = raw[1].with_suffix(".json")
    provenance.write_bytes(content)
    with pytest.raises(DataError) as error:
        run_aggregate(root, raw)
    assert str(error.value).startswith(f"{provenance}: {message}")


def test_time_budget_allows_fewer_repetitions(campaign, tmp_path):
    root, raw = campaign
    grid_csv = root / "grid.csv"
    grid = pd.read_csv(grid_csv, dtype=str, keep_default_na=False)
    grid["max_time"] = "1"
    grid.to_csv(grid_csv, index=False)
    # the first experiment of run00 (1x2) stopped after 3 repetitions
    provenance_path = raw[0].with_suffix(".json")
    provenance = json.loads(provenance_path.read_text())
    first = provenance["experiments"][0]
    first["reps_done"] = 3
    provenance_path.write_text(json.dumps(provenance))
    rewrite_lines(raw[0], lambda i, line: not line.startswith(f"{first['exp_id']},") or
                  int(line.split(",")[1]) < 3)  # fmt: skip
    run_aggregate(root, raw)
    medians = pd.read_parquet(root / "medians.parquet")
    kept = medians.loc[(medians["exp_id"] == first["exp_id"]) & (medians["ppn"] == 2)
                       & (medians["run"] == 0), "n_kept"]  # fmt: skip
    assert kept.tolist() == [3]


def test_more_repetitions_than_nrep_are_rejected(campaign):
    root, raw = campaign
    provenance_path = raw[0].with_suffix(".json")
    provenance = json.loads(provenance_path.read_text())
    provenance["experiments"][0]["reps_done"] = NREP - 1
    provenance_path.write_text(json.dumps(provenance))
    with pytest.raises(DataError, match="no time budget"):
        run_aggregate(root, raw)


def test_raw_file_outside_the_layout_is_rejected(campaign):
    root, raw = campaign
    odd = root / "raw" / "openmpi" / "two" / "run00.csv"
    odd.parent.mkdir()
    odd.write_text(raw[0].read_text())
    with pytest.raises(DataError, match=r"<mpi>/<nodes>x<ppn>/run<NN>.csv"):
        run_aggregate(root, [*raw, odd])


def test_repeated_rep_number_is_rejected(campaign):
    root, raw = campaign
    lines = raw[0].read_text().splitlines(keepends=True)
    exp_id, _, time_s = lines[2].strip().split(",")
    lines[2] = f"{exp_id},0,{time_s}\n"  # rep 1 of the first experiment becomes a second rep 0
    raw[0].write_text("".join(lines))
    with pytest.raises(DataError, match=rf"{raw[0]}: rep must number"):
        run_aggregate(root, raw)


@pytest.mark.parametrize(
    ("cell", "message"),
    [("inf", "time_s inf is not a duration"), ("-1e-06", "time_s -1e-06 is not a duration"),
     ("nan", "time_s is empty or not a number"), ("", "time_s is empty or not a number")],
)  # fmt: skip
def test_time_that_is_not_a_duration_names_the_line(campaign, cell, message):
    root, raw = campaign
    lines = raw[1].read_text().splitlines(keepends=True)
    exp_id, rep, _ = lines[5].strip().split(",")
    lines[5] = f"{exp_id},{rep},{cell}\n"
    raw[1].write_text("".join(lines))
    with pytest.raises(DataError, match=rf"{raw[1]}:6: {message}"):
        run_aggregate(root, raw)
