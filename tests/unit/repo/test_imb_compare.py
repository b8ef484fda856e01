"""benchmarks/imb_compare.py: reading IMB-MPI1's output, and the kernel input that mirrors it."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import imb_compare  # noqa: E402  (found through the sys.path entry above)

# IMB-MPI1 2021.11's output (Intel MPI 2021.19, 2 ranks), shortened; the last Alltoall row is
# how IMB reports a size it could not measure.
OUTPUT = """\
#----------------------------------------------------------------
#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part
#----------------------------------------------------------------
# MPI Version           : 4.1
# Calling sequence was:

# IMB-MPI1 -msglog 3:5 -iter 100 -iter_policy off -npmin 2 Allreduce Bcast

# Minimum message length in bytes:   0
# Maximum message length in bytes:   32
#
# MPI_Datatype                   :   MPI_BYTE
# MPI_Datatype for reductions    :   MPI_FLOAT

#----------------------------------------------------------------
# Benchmarking Allreduce
# #processes = 2
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
            0          100         0.05         0.05         0.05
            8          100         0.29         0.30         0.30
      1048576          100      1234.50      1240.25      1237.38

#----------------------------------------------------------------
# Benchmarking Alltoall
# #processes = 2
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
           32          100         0.24         0.35         0.30
      2097152 out-of-mem.; needed X=   1.000 GB; use flag "-mem X" or MAX_MEM_USAGE>=X

# All processes entering MPI_Finalize
"""


def test_every_row_of_every_benchmark_and_nothing_else() -> None:
    table = imb_compare.parse_imb(OUTPUT)
    expected = pd.DataFrame(
        [
            ["Allreduce", 2, 0, 100, 0.05, 0.05, 0.05],
            ["Allreduce", 2, 8, 100, 0.29, 0.30, 0.30],
            ["Allreduce", 2, 1048576, 100, 1234.50, 1240.25, 1237.38],
            ["Alltoall", 2, 32, 100, 0.24, 0.35, 0.30],
        ],
        columns=imb_compare.IMB_COLUMNS,
    )
    pd.testing.assert_frame_equal(table, expected)


def test_no_table_no_rows() -> None:
    assert imb_compare.parse_imb("# Calling sequence was:\n    8   100  0.1  0.2  0.3\n").empty


def test_the_kernel_input_mirrors_imb(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    imb_compare.write_input(path, max_log=4, nrep=1000, sync="dissemination")
    rows = pd.read_csv(path)
    assert list(rows["exp_id"]) == list(range(len(imb_compare.OPS) * 2))
    assert [tuple(r) for r in rows[["op", "msg_size"]].head(3).itertuples(index=False)] == [
        ("allreduce", 8),
        ("allreduce", 16),
        ("bcast", 8),
    ]
    dtypes = dict(zip(rows["op"], rows["dtype"], strict=False))
    assert dtypes == {
        "allreduce": "float",
        "bcast": "char",
        "allgather": "char",
        "alltoall": "char",
        "reduce": "float",
    }
    assert set(rows["nrep"]) == {1000}
    assert set(rows["warmup"]) == {100}
    imb_compare.write_input(path, max_log=3, nrep=50, sync="barrier")
    rows = pd.read_csv(path)
    assert set(rows["warmup"]) == {10} and set(rows["sync"]) == {"barrier"}
