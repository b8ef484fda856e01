# Without blocking, one job per (mpi, deployment, run): one launch of the kernel over one shuffled input.
# Generated per MPI entry (its envmodules, env and launcher are static per rule).
#
# threads = ranks: locally Snakemake never runs more ranks at once than --cores, and caps a job
# asking for more at --cores (a deliberately oversubscribed deployment then runs alone).
# Under SLURM, nodes/tasks size the allocation and cpus_per_task=1 keeps threads out of it.
# The kernel is `ancient`: rebuilding it (e.g. after touching a source file) never re-measures
# existing runs.

from mpiguide.campaign.block_spec import block_spec
from mpiguide.campaign.launch import env_prefix, heap_option, node_size_option
from mpiguide.core.paths import (
    BLOCK_RECORD_SUFFIX,
    BLOCKS_TREE,
    DEPLOYMENT_RUN_PATTERN,
    LOGS_TREE,
    RUN_LOGS_TREE,
    run_file_pattern,
)

# One job per (deployment, run) under `blocking: run`: run NN of every entry, back to back in
# the block's shuffled order (mpiguide.campaign.blocks). Locally one Snakemake job holding the
# deployment's cores; under SLURM one allocation of its nodes and tasks, in which every entry
# starts its ranks with its own `srun` (`mpi` is set only so that the plugin sizes the
# allocation by tasks and leaves the launching to the block). The raw files are outputs as in
# the per-entry rules; those of a failed block's finished entries survive in its stash.
# Under --sdm conda the block runs in the kernel's env when no entry loads modules.
if BLOCKING == "run":

    rule run_block:
        input:
            kernels=[ancient(kernel_binary(mpi)) for mpi in BUILT_MPI],
            csvs=[run_file_pattern(RESULTS, INPUTS_TREE, "csv", mpi) for mpi in MPI],
            preload=[path for mpi in MPI for path in preloaded_libraries(mpi)],
        output:
            record=f"{BLOCKS}/{DEPLOYMENT_RUN_PATTERN}{BLOCK_RECORD_SUFFIX}",
            csvs=[run_file_pattern(RESULTS, RAW_TREE, "csv", mpi) for mpi in MPI],
            jsons=[run_file_pattern(RESULTS, RAW_TREE, "json", mpi) for mpi in MPI],
        log:
            block=f"{RESULTS}/{LOGS_TREE}/{BLOCKS_TREE}/{DEPLOYMENT_RUN_PATTERN}.log",
            runs=[run_file_pattern(RESULTS, RUN_LOGS_TREE, "log", mpi) for mpi in MPI],
        conda:
            None if any(MPI[mpi]["modules"] for mpi in MPI) else "../envs/kernel.yaml"
        threads: deployment_ranks
        resources:
            nodes=deployment_nodes,
            tasks=deployment_ranks,
            mpi="srun",
            cpus_per_task=1,
        params:
            # canonical_json: a param in another text would launch measured blocks again.
            spec=lambda wildcards: canonical_json(
                block_spec(
                    CAMPAIGN,
                    int(wildcards.nodes),
                    int(wildcards.ppn),
                    int(wildcards.run),
                )
            ),
        shell:
            "python -m mpiguide run-block --spec-json {params.spec:q} > {log.block:q} 2>&1"


for run_mpi in MPI if BLOCKING != "run" else ():

    rule:
        name:
            f"run_{run_mpi}"
        input:
            kernel=ancient(kernel_binary(run_mpi)),
            csv=run_file_pattern(RESULTS, INPUTS_TREE, "csv", run_mpi),
            preload=preloaded_libraries(run_mpi),
        output:
            csv=run_file_pattern(RESULTS, RAW_TREE, "csv", run_mpi),
            json=run_file_pattern(RESULTS, RAW_TREE, "json", run_mpi),
        log:
            run_file_pattern(RESULTS, RUN_LOGS_TREE, "log", run_mpi),
        conda:
            kernel_conda_env(run_mpi)
        envmodules:
            *MPI[run_mpi]["modules"],
        threads: deployment_ranks
        resources:
            nodes=deployment_nodes,
            tasks=deployment_ranks,
            mpi=CAMPAIGN.launch_command(run_mpi),
            cpus_per_task=1,
        params:
            env=env_prefix(MPI[run_mpi]["env"]),
            node_size=lambda wildcards: node_size_option(
                CAMPAIGN.deployment(wildcards.nodes, wildcards.ppn)
            ),
            heap=heap_option(MPI[run_mpi]),
        shell:
            "{params.env} {resources.mpi} -n {resources.tasks} {input.kernel:q}"
            " --nprocs {resources.tasks} {params.node_size} {params.heap}"
            " {input.csv:q} {output.csv:q}"
            " > {log:q} 2>&1"
