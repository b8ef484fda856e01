# Plan: the campaign grid and one shuffled kernel input per (mpi, deployment, run). Each input
# is its own job, seeded by (seed, mpi, deployment, run): adding runs or deployments creates new
# files and never rewrites (and so never re-measures) existing ones. A run of a later round of an
# adaptive campaign holds only the experiments its round's plan names, in the run's own order.

from mpiguide.core.paths import GRID_CSV, LOGS_TREE, RUN_PATTERN, run_file_pattern


rule grid:
    output:
        f"{RESULTS}/{GRID_CSV}",
    log:
        f"{RESULTS}/{LOGS_TREE}/grid.log",
    conda:
        "../envs/analysis.yaml"
    # canonical_json, the text measured runs were planned with (a `where` may hold `<`): in
    # another text the param would plan and measure them again.
    params:
        grid_config=canonical_json(CAMPAIGN.grid_spec()),
    shell:
        "python -m mpiguide grid --config-json {params.grid_config:q} --out {output:q} 2> {log:q}"


rule inputs:
    input:
        grid=f"{RESULTS}/{GRID_CSV}",
        plan=input_plan,
    output:
        run_file_pattern(RESULTS, INPUTS_TREE, "csv"),
    log:
        f"{RESULTS}/{LOGS_TREE}/{INPUTS_TREE}/{RUN_PATTERN}.log",
    conda:
        "../envs/analysis.yaml"
    params:
        seed=config["seed"],
        plan=input_plan_option,
        forced=library_choice_option,
    shell:
        "python -m mpiguide inputs --grid {input.grid:q} --seed {params.seed:q}"
        " --mpi {wildcards.mpi:q} --nodes {wildcards.nodes} --ppn {wildcards.ppn}"
        " --run {wildcards.run} --out {output:q} {params.plan} {params.forced} 2> {log:q}"


# Seconds of work each: under SLURM they run where Snakemake runs instead of waiting in the queue.
localrules:
    grid,
    inputs,
