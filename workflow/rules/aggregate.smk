# All raw runs checked and gathered: every repetition (timings, keyed by exp_id: the grid holds
# the parameters) and the Tukey-filtered median per experiment and run with the parameters
# (medians). The inputs are re-read to check each run's provenance hash.

from mpiguide.core.paths import GRID_CSV, LOGS_TREE, MEDIANS_PARQUET, TIMINGS_PARQUET


rule aggregate:
    input:
        grid=f"{RESULTS}/{GRID_CSV}",
        raw=raw_csvs,
        provenance=raw_jsons,
        inputs=run_inputs,
        blocks=block_records,
    output:
        timings=f"{RESULTS}/{TIMINGS_PARQUET}",
        medians=f"{RESULTS}/{MEDIANS_PARQUET}",
    log:
        f"{RESULTS}/{LOGS_TREE}/aggregate.log",
    conda:
        "../envs/analysis.yaml"
    params:
        raw_root=f"{RESULTS}/{RAW_TREE}",
        inputs_root=f"{RESULTS}/{INPUTS_TREE}",
        blocks=f"--blocks-root {shlex.quote(BLOCKS)}" if BLOCKING == "run" else "",
    shell:
        "python -m mpiguide aggregate --grid {input.grid:q}"
        " --raw-root {params.raw_root:q} --inputs-root {params.inputs_root:q}"
        " --timings {output.timings:q} --medians {output.medians:q} {params.blocks}"
        " {input.raw:q} 2> {log:q}"


# Seconds to minutes of pandas work on one core: under SLURM it runs where Snakemake runs
# (the login node) instead of waiting in the queue.
localrules:
    aggregate,
