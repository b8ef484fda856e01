# One job per (mpi, deployment, run): one launch of the kernel over one shuffled input.
# Generated per MPI entry (its envmodules, env and launcher are static per rule).
#
# threads = ranks: locally Snakemake never runs more ranks at once than --cores, and caps a job
# asking for more at --cores (a deliberately oversubscribed deployment then runs alone).
# Under SLURM, nodes/tasks size the allocation and cpus_per_task=1 keeps threads out of it.
# The kernel is `ancient`: rebuilding it (e.g. after touching a source file) never re-measures
# existing runs.

for run_mpi in MPI:

    rule:
        name:
            f"run_{run_mpi}"
        input:
            kernel=ancient(kernel_binary(run_mpi)),
            csv=f"{RESULTS}/inputs/{run_mpi}/{DEPLOYMENT_RUN_PATTERN}.csv",
            preload=preloaded_libraries(run_mpi),
        output:
            csv=f"{RESULTS}/raw/{run_mpi}/{DEPLOYMENT_RUN_PATTERN}.csv",
            json=f"{RESULTS}/raw/{run_mpi}/{DEPLOYMENT_RUN_PATTERN}.json",
        log:
            f"{RESULTS}/logs/run/{run_mpi}/{DEPLOYMENT_RUN_PATTERN}.log",
        conda:
            kernel_conda_env(run_mpi)
        envmodules:
            *MPI[run_mpi]["modules"],
        threads: deployment_ranks
        resources:
            nodes=deployment_nodes,
            tasks=deployment_ranks,
            mpi=mpi_launch_command(run_mpi),
            cpus_per_task=1,
        params:
            env=mpi_env_prefix(run_mpi),
            node_size=kernel_node_size_option,
            heap=kernel_heap_option(run_mpi),
        shell:
            "{params.env} {resources.mpi} -n {resources.tasks} {input.kernel:q}"
            " --nprocs {resources.tasks} {params.node_size} {params.heap}"
            " {input.csv:q} {output.csv:q}"
            " > {log:q} 2>&1"
