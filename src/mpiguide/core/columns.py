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
# medians.parquet: the block a run was launched in (`<nodes>x<ppn>/run<NN>`, empty when its
# launch was a job of its own) and the block's attempt (0 without a block). Launches of one block
# and attempt ran back to back; the analysis pairs them.
BLOCK = "block"
BLOCK_ATTEMPT_COLUMN = "block_attempt"
# medians.parquet: what the OS said about interference around the run's launch (block records
# only; NaN otherwise): 1-minute load average before it, the fraction of the host's CPU time
# spent by other processes during it, CPU seconds stolen by the hypervisor during it.
INTERFERENCE_COLUMNS = ("load_before", "other_cpu_fraction", "steal_s")
# medians.parquet: the page faults are the kernel's counts over the experiment's repetition loop
# (the most of one rank, the sum over the ranks); empty for a run whose provenance lacks them.
PAGE_FAULT_VALUES = ("minor_faults_max", "minor_faults_sum", "major_faults_max", "major_faults_sum")
# medians.parquet: the columns per experiment and run that are not parameters of it.
MEDIAN_VALUES = (
    "median_s",
    "n_kept",
    "n_invalid",
    "launch_factor",
    *PAGE_FAULT_VALUES,
    BLOCK,
    BLOCK_ATTEMPT_COLUMN,
    *INTERFERENCE_COLUMNS,
)
# medians.parquet: the allocator setting of the run's launch (the kernel's --heap, from the
# provenance; `default` for a kernel that had none). A key like the deployment's: constant per
# mpi entry, so a guideline may select on it.
HEAP = "heap"
HEAP_DEFAULT = "default"
