"""aggregate(): join, types, Tukey medians, and every integrity check naming the file."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mpiguide.core.columns import MEDIAN_VALUES, TIMING_KEYS
from mpiguide.core.errors import DataError
from mpiguide.plan.grid import COLUMNS
from mpiguide.store.aggregate import aggregate, launch_factors
from mpiguide.store.provenance import PROV_OUTPUT_SHA256, sha256_of
from mpiguide.store.tukey import tukey_medians
from synthetic import Deployment, grid_frame, write_campaign

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
    assert list(timings.columns) == [*TIMING_KEYS, "time_s", "status"]
    assert isinstance(timings["mpi"].dtype, pd.CategoricalDtype)
    assert set(timings["status"]) == {"valid"}
    assert not timings.duplicated(list(TIMING_KEYS)).any()
    # the documented join: the parameters of a repetition are grid.csv's row of its exp_id
    joined = timings.merge(pd.read_csv(root / "grid.csv"), on="exp_id", validate="many_to_one")
    assert set(joined.columns) == {*COLUMNS, *TIMING_KEYS, "time_s", "status"}
    barrier = joined.loc[joined["op"] == "barrier"]
    assert len(barrier) == NREP * RUNS * len(DEPLOYMENTS)
    assert barrier["msg_size"].isna().all() and barrier["ordering"].isna().all()

    medians = pd.read_parquet(root / "medians.parquet")
    assert len(medians) == len(grid) * RUNS * len(DEPLOYMENTS)
    assert {"exp_id", "mpi", "nodes", "ppn", "run", *MEDIAN_VALUES, "op"} <= set(medians)
    assert (medians["n_invalid"] == 0).all()
    one = timings.loc[(timings["ppn"] == 4) & (timings["run"] == 1)]
    codes = one["exp_id"].to_numpy()
    reference = tukey_medians(codes, one["time_s"].to_numpy())
    got = medians.loc[(medians["ppn"] == 4) & (medians["run"] == 1)].sort_values("exp_id")
    np.testing.assert_allclose(got["median_s"], reference.median)
    np.testing.assert_array_equal(got["n_kept"], reference.n_kept)


def rewrite_lines(path: Path, keep):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for i, line in enumerate(lines) if keep(i, line)))


def refresh_output_sha256(raw_csv: Path) -> None:
    """Record the raw file's current bytes in its provenance, as a kernel writing them would."""
    provenance_path = raw_csv.with_suffix(".json")
    provenance = json.loads(provenance_path.read_text())
    provenance[PROV_OUTPUT_SHA256] = sha256_of(raw_csv)
    provenance_path.write_text(json.dumps(provenance))


def test_truncated_raw_file_is_named(campaign):
    root, raw = campaign
    rewrite_lines(raw[1], lambda i, _: i < 20)
    refresh_output_sha256(raw[1])
    with pytest.raises(DataError, match=rf"{raw[1]}: .* missing or extra rows"):
        run_aggregate(root, raw)
    assert not (root / "timings.parquet").exists()
    assert not list(root.glob("*.tmp-*"))


def test_duplicated_row_is_an_extra_row(campaign):
    root, raw = campaign
    with raw[0].open("a") as stream:
        stream.write(raw[0].read_text().splitlines()[-1] + "\n")
    refresh_output_sha256(raw[0])
    with pytest.raises(DataError, match=rf"{raw[0]}: 1 experiment\(s\) with missing or extra"):
        run_aggregate(root, raw)


def test_unknown_exp_id_is_named(campaign):
    root, raw = campaign
    with raw[2].open("a") as stream:
        stream.write("999,0,0.001\n")
    refresh_output_sha256(raw[2])
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
    refresh_output_sha256(raw[0])
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
    refresh_output_sha256(raw[0])
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
    refresh_output_sha256(raw[1])
    with pytest.raises(DataError, match=rf"{raw[1]}:6: {message}"):
        run_aggregate(root, raw)


def add_status_columns(raw_csv: Path, invalid) -> pd.DataFrame:
    """Rewrite a raw file in the kernel's 5-column form; `invalid(exp_id, rep)` marks
    repetitions `late`. Returns the file's rows."""
    rows = pd.read_csv(raw_csv)
    late = [invalid(e, r) for e, r in zip(rows["exp_id"], rows["rep"], strict=True)]
    rows["status"] = np.where(late, "late", "valid")
    rows["global_s"] = rows["time_s"] * 1.5
    rows.loc[rows.index[:3], "global_s"] = np.nan  # a sync method without global times
    rows.to_csv(raw_csv, index=False)
    refresh_output_sha256(raw_csv)
    return rows


def test_invalid_repetitions_are_counted_not_filtered(campaign):
    root, raw = campaign
    first, second = pd.unique(pd.read_csv(raw[0])["exp_id"])[:2]
    rows = add_status_columns(raw[0], lambda e, r: (e, r) in {(first, 0), (first, 1),
                                                              (first, 2), (second, 0)})  # fmt: skip
    run_aggregate(root, raw)

    medians = pd.read_parquet(root / "medians.parquet")
    run0 = medians.loc[(medians["ppn"] == 2) & (medians["run"] == 0)].set_index("exp_id")
    assert run0.at[first, "n_invalid"] == 3 and run0.at[second, "n_invalid"] == 1
    assert run0["n_invalid"].sum() == 4
    assert (medians.loc[(medians["ppn"] != 2) | (medians["run"] != 0), "n_invalid"] == 0).all()
    valid = rows.loc[rows["status"] == "valid"]
    reference = tukey_medians(valid["exp_id"].to_numpy(), valid["time_s"].to_numpy())
    np.testing.assert_array_equal(run0.loc[reference.codes, "median_s"], reference.median)
    np.testing.assert_array_equal(run0.loc[reference.codes, "n_kept"], reference.n_kept)
    assert run0.at[first, "n_kept"] <= NREP - 3

    timings = pd.read_parquet(root / "timings.parquet")
    assert len(timings) == len(small_grid()) * NREP * RUNS * len(DEPLOYMENTS)
    assert (timings["status"] == "late").sum() == 4
    # global_s is kept where the kernel wrote it, null for the 3-column files
    one = timings.loc[(timings["ppn"] == 2) & (timings["run"] == 0)]
    np.testing.assert_array_equal(one["global_s"].to_numpy(), rows["global_s"].to_numpy())
    assert timings.loc[timings["ppn"] == 4, "global_s"].isna().all()


def test_experiment_without_valid_repetition_has_no_median(campaign, caplog):
    root, raw = campaign
    add_status_columns(raw[0], lambda e, r: e == 4)
    run_aggregate(root, raw)
    medians = pd.read_parquet(root / "medians.parquet")
    run0 = medians.loc[(medians["ppn"] == 2) & (medians["run"] == 0)]
    assert 4 not in set(run0["exp_id"]) and len(run0) == len(small_grid()) - 1
    assert f"{raw[0]}: 1 experiment(s) without a valid repetition" in caplog.text


def test_invalid_repetition_may_lack_a_time(campaign):
    root, raw = campaign
    rows = add_status_columns(raw[0], lambda e, r: r == 0)
    rows.loc[rows["rep"] == 0, "time_s"] = np.nan
    rows.to_csv(raw[0], index=False)
    refresh_output_sha256(raw[0])
    run_aggregate(root, raw)
    medians = pd.read_parquet(root / "medians.parquet")
    run0 = medians.loc[(medians["ppn"] == 2) & (medians["run"] == 0)]
    assert (run0["n_invalid"] == 1).all() and (run0["n_kept"] <= NREP - 1).all()


def test_raw_file_changed_after_the_kernel_wrote_it_is_named(campaign):
    root, raw = campaign
    lines = raw[1].read_text().splitlines(keepends=True)
    exp_id, rep, _ = lines[5].strip().split(",")
    lines[5] = f"{exp_id},{rep},0.5\n"  # a plausible time: only the checksum can tell
    raw[1].write_text("".join(lines))
    with pytest.raises(DataError, match=rf"{raw[1]}: sha256 .* differs from output_sha256"):
        run_aggregate(root, raw)
    assert not (root / "timings.parquet").exists()


def test_same_raw_file_twice_is_refused(campaign):
    root, raw = campaign
    # another run's output copied over this run's (same experiments, so every count fits)
    raw[1].write_bytes(raw[0].read_bytes())
    refresh_output_sha256(raw[1])
    with pytest.raises(DataError, match=rf"{raw[1]}: same bytes .* as {raw[0]}"):
        run_aggregate(root, raw)


def test_provenance_without_output_sha256_is_accepted_with_a_warning(campaign, caplog):
    root, raw = campaign
    for raw_csv in raw[:2]:
        provenance_path = raw_csv.with_suffix(".json")
        provenance = json.loads(provenance_path.read_text())
        del provenance[PROV_OUTPUT_SHA256]
        provenance_path.write_text(json.dumps(provenance))
    run_aggregate(root, raw)
    assert "2 raw file(s) have no 'output_sha256'" in caplog.text
    assert str(raw[0].with_suffix(".json")) in caplog.text


def test_output_sha256_must_be_a_string(campaign):
    root, raw = campaign
    provenance_path = raw[0].with_suffix(".json")
    provenance = json.loads(provenance_path.read_text())
    provenance[PROV_OUTPUT_SHA256] = 7
    provenance_path.write_text(json.dumps(provenance))
    with pytest.raises(DataError, match=rf"{provenance_path}: 'output_sha256' must be"):
        run_aggregate(root, raw)


def test_launch_factor_of_a_slow_launch(tmp_path):
    grid = small_grid()
    typical = np.linspace(1e-5, 5e-5, len(grid))
    deployments = DEPLOYMENTS[:1]
    raw = write_campaign(tmp_path, grid, typical, deployments, 3, sigma=0.0, seed=4)
    # run 1: everything took twice as long; run 2: one experiment took 4 times as long
    rows = pd.read_csv(raw[1])
    rows["time_s"] *= 2
    rows.to_csv(raw[1], index=False)
    refresh_output_sha256(raw[1])
    rows = pd.read_csv(raw[2])
    rows.loc[rows["exp_id"] == 1, "time_s"] *= 4
    rows.to_csv(raw[2], index=False)
    refresh_output_sha256(raw[2])
    run_aggregate(tmp_path, raw)
    medians = pd.read_parquet(tmp_path / "medians.parquet")
    factors = medians.groupby("run")["launch_factor"].agg(["min", "max"])
    np.testing.assert_allclose(factors["min"], [1.0, 2.0, 1.0])
    np.testing.assert_allclose(factors["max"], [1.0, 2.0, 1.0])


def test_launch_factors_by_hand():
    # two experiments (0, 1) over three runs of one deployment, and one run of another
    deployment = np.array([0, 0, 0, 0, 0, 0, 1])
    experiment = np.array([0, 1, 0, 1, 0, 1, 0])
    run = np.array([0, 0, 1, 1, 2, 2, 3])
    median = np.array([1.0, 10.0, 2.0, 30.0, 4.0, 20.0, 7.0])
    # experiment 0: runs 1, 2, 4 (median 2); experiment 1: 10, 30, 20 (median 20)
    # run 0: 1/2, 10/20 -> 0.5; run 1: 2/2, 30/20 -> 1.25; run 2: 4/2, 20/20 -> 1.5; run 3: 1
    expected = [0.5, 0.5, 1.25, 1.25, 1.5, 1.5, 1.0]
    np.testing.assert_allclose(launch_factors(deployment, experiment, run, median), expected)


def test_header_is_checked(campaign):
    root, raw = campaign
    raw[0].write_text("exp_id,time_s,rep\n" + "".join(raw[0].read_text().splitlines(True)[1:]))
    refresh_output_sha256(raw[0])
    with pytest.raises(DataError, match=rf"{raw[0]}: header must start with exp_id,rep,time_s"):
        run_aggregate(root, raw)


def test_extra_kernel_columns_are_ignored(campaign):
    root, raw = campaign
    rows = pd.read_csv(raw[0]).assign(sync_offset_s=0.5)
    rows.to_csv(raw[0], index=False)
    refresh_output_sha256(raw[0])
    run_aggregate(root, raw)
    assert "sync_offset_s" not in pd.read_parquet(root / "timings.parquet").columns


def _edit_provenances(raw: list[Path], edit) -> None:
    for path in raw:
        json_path = path.with_suffix(".json")
        provenance = json.loads(json_path.read_text())
        edit(path, provenance)
        json_path.write_text(json.dumps(provenance))


def test_page_faults_and_heap_reach_the_medians(campaign):
    root, raw = campaign

    def faults(path: Path, provenance: dict) -> None:
        provenance["heap"] = {"setting": "fixed"}
        for entry in provenance["experiments"]:
            # distinct per run and experiment, so a wrong join shows
            run = int(path.stem.removeprefix("run"))
            entry["page_faults"] = {"minor_max": entry["exp_id"] + run, "minor_sum": 100,
                                    "major_max": 0, "major_sum": 0}  # fmt: skip

    _edit_provenances(raw, faults)
    run_aggregate(root, raw)
    medians = pd.read_parquet(root / "medians.parquet")
    assert (medians["minor_faults_max"] == medians["exp_id"] + medians["run"]).all()
    assert (medians["minor_faults_sum"] == 100).all() and (medians["major_faults_sum"] == 0).all()
    assert set(medians["heap"]) == {"fixed"}


def test_provenance_without_page_faults_gives_empty_counts_and_heap_default(campaign):
    root, raw = campaign
    run_aggregate(root, raw)
    medians = pd.read_parquet(root / "medians.parquet")
    assert medians["minor_faults_max"].isna().all()
    assert set(medians["heap"]) == {"default"}


def test_negative_page_faults_are_refused(campaign):
    root, raw = campaign

    def negative(path: Path, provenance: dict) -> None:
        for entry in provenance["experiments"]:
            entry["page_faults"] = {"minor_max": -1, "minor_sum": 0, "major_max": 0,
                                    "major_sum": 0}  # fmt: skip

    _edit_provenances(raw[:1], negative)
    with pytest.raises(DataError, match=r"run\d+\.json: every experiment's 'page_faults'"):
        run_aggregate(root, raw)


def test_an_mpi_entry_with_two_heap_settings_is_refused(campaign):
    root, raw = campaign
    _edit_provenances(raw[:1], lambda path, p: p.update(heap={"setting": "fixed"}))
    with pytest.raises(DataError, match="an entry's runs must share one setting"):
        run_aggregate(root, raw)


@pytest.fixture
def interleaved(tmp_path):
    """The small grid with every experiment in 3 chunks (8 repetitions: 3, 3, 2), its
    provenance one entry per chunk with page faults, as the kernel writes them."""
    grid = small_grid().assign(interleave=3)
    raw = write_campaign(tmp_path, grid, np.full(len(grid), 2e-5), DEPLOYMENTS, RUNS, 0.2, 5)

    def chunked(path: Path, provenance: dict) -> None:
        entries = []
        for entry in provenance["experiments"]:
            for chunk, (reps, first) in enumerate(((3, 0), (3, 3), (2, 6))):
                faults = {"minor_max": 5 - chunk, "minor_sum": 7, "major_max": chunk,
                          "major_sum": 1}  # fmt: skip
                entries.append(entry | {"reps_done": reps, "interleave": 3, "chunk": chunk,
                                        "first_rep": first, "page_faults": faults})  # fmt: skip
        provenance["experiments"] = entries

    _edit_provenances(raw, chunked)
    return tmp_path, raw


def test_the_chunks_of_an_interleaved_experiment_make_one_experiment(interleaved):
    """Repetitions are summed over the chunks, page faults summed (over ranks) or the largest
    of one chunk (the most of one rank)."""
    root, raw = interleaved
    run_aggregate(root, raw)
    medians = pd.read_parquet(root / "medians.parquet")
    assert len(medians) == len(small_grid()) * RUNS * len(DEPLOYMENTS)
    assert (medians["n_kept"] + medians["n_invalid"] <= NREP).all()
    assert (pd.read_parquet(root / "timings.parquet").groupby(["mpi", "ppn", "run", "exp_id"])
            .size() == NREP).all()  # fmt: skip
    assert set(medians["interleave"]) == {3}
    assert (medians["minor_faults_sum"] == 21).all() and (medians["major_faults_sum"] == 3).all()
    assert (medians["minor_faults_max"] == 5).all() and (medians["major_faults_max"] == 2).all()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda entries: entries.pop(1), r"exp_id 1 has 2 of its 3 chunks"),
        (lambda entries: entries[1].update(chunk=0),
         r"an exp_id is listed twice .* \(with the same chunk\)"),
        (lambda entries: entries[0].update(interleave=2),
         r"exp_id 1 lists chunk 0 of interleave 2"),
        (lambda entries: entries[2].update(reps_done=3), r"exp_id 1 reports 9 repetitions"),
    ],
)  # fmt: skip
def test_a_chunk_missing_twice_or_of_another_plan_is_refused(interleaved, edit, message):
    root, raw = interleaved
    _edit_provenances(raw[:1], lambda _, provenance: edit(provenance["experiments"]))
    with pytest.raises(DataError, match=rf"run00\.json: {message}"):
        run_aggregate(root, raw)


def test_the_algorithm_column_only_where_some_experiment_names_one(tmp_path: Path) -> None:
    """A grid whose experiments all run the library's own choice gives tables without the
    column `algorithm`, as before the parameter existed; one algorithm keeps it."""
    from mpiguide.plan.grid import build_grid, write_grid
    from mpiguide.store.aggregate import read_grid

    plain, swept = tmp_path / "plain.csv", tmp_path / "swept.csv"
    block = {"op": ["allreduce", "allreduce_as_reduce_bcast"], "msg_size": 8}
    write_grid(build_grid({"nrep": 3, "experiments": [block]}), plain)
    ring = {**block, "op": "allreduce", "algorithm": "ring"}
    write_grid(build_grid({"nrep": 3, "experiments": [block, ring]}), swept)
    assert "algorithm" not in read_grid(plain).column_names
    assert read_grid(swept)["algorithm"].to_pylist() == [None, "ring", None]
