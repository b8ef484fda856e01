"""Column names of the kernel's output and of timings.parquet and medians.parquet.

One owner for the names that aggregation writes and the analysis, plots and tables read; a
module of constants only, so that a reader of the tables imports no statistics.
"""

# The kernel's output columns: these three first, optionally followed by more, of which
# aggregation reads `status` (a repetition is valid only when it says VALID) and `global_s`.
RAW_COLUMNS = ("exp_id", "rep", "time_s")
STATUS = "status"
GLOBAL_S = "global_s"
VALID = "valid"

# timings.parquet: one row per repetition, keyed by these columns.
TIMING_KEYS = ("mpi", "nodes", "ppn", "run", "exp_id", "rep")
# medians.parquet: the columns per experiment and run that are not parameters of it. The page
# faults are the kernel's counts over the experiment's repetition loop (the most of one rank,
# the sum over the ranks); empty for a run whose provenance does not have them.
PAGE_FAULT_VALUES = ("minor_faults_max", "minor_faults_sum", "major_faults_max", "major_faults_sum")
MEDIAN_VALUES = ("median_s", "n_kept", "n_invalid", "launch_factor", *PAGE_FAULT_VALUES)
# medians.parquet: the allocator setting of the run's launch (the kernel's --heap, from the
# provenance; `default` for a kernel that had none). A key like the deployment's: constant per
# mpi entry, so a guideline may select on it.
HEAP = "heap"
HEAP_DEFAULT = "default"
