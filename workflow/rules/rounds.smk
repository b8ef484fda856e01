# The rounds of an adaptive campaign (`runs: {min, max, step}`; docs/workflow.md, "Adaptive
# campaigns"). After round NN, its runs and every earlier round's are aggregated into
# rounds/roundNN/medians.parquet, and the checkpoint plan_round decides every test at its looks
# and writes rounds/roundNN.json: whether the campaign is done and which experiments the next
# round measures, in which runs. The inputs of the next round's runs take their experiments from
# it (plan.smk); the campaign's own aggregate and check read every round's runs.

from mpiguide.core.paths import (
    COST_FILES,
    LOGS_TREE,
    MEDIANS_PARQUET,
    ROUND_PATTERN,
    ROUNDS_TREE,
    TIMINGS_PARQUET,
)

ROUNDS = f"{RESULTS}/{ROUNDS_TREE}"
# What an adaptive campaign spent against a fixed one (written by rule analyse).
COST_OUTPUTS = (
    {name: f"{RESULTS}/{GUIDELINES_TREE}/{name}" for name in COST_FILES}
    if ADAPTIVE
    else {}
)

if ADAPTIVE:

    use rule aggregate as aggregate_round with:
        output:
            timings=temp(f"{ROUNDS}/{ROUND_PATTERN}/{TIMINGS_PARQUET}"),
            medians=f"{ROUNDS}/{ROUND_PATTERN}/{MEDIANS_PARQUET}",
        log:
            f"{RESULTS}/{LOGS_TREE}/{ROUNDS_TREE}/{ROUND_PATTERN}/aggregate.log",

    checkpoint plan_round:
        input:
            medians=f"{ROUNDS}/{ROUND_PATTERN}/{MEDIANS_PARQUET}",
            catalogue=CATALOGUE,
        output:
            f"{ROUNDS}/{ROUND_PATTERN}.json",
        log:
            f"{RESULTS}/{LOGS_TREE}/{ROUNDS_TREE}/{ROUND_PATTERN}/plan.log",
        conda:
            "../envs/analysis.yaml"
        params:
            guidelines=as_json(config["guidelines"]),
            analysis=as_json(config["analysis"]),
            looks=RUNS_OPTION,
            entries=" ".join(f"--entry {shlex.quote(mpi)}" for mpi in MPI),
            blocking="--blocking" if BLOCKING == "run" else "",
        shell:
            "python -m mpiguide plan-round --medians {input.medians:q}"
            " --catalogue {input.catalogue:q} --guidelines-json {params.guidelines:q}"
            " --analysis-json {params.analysis:q} {params.looks} --round {wildcards.round}"
            " {params.entries} {params.blocking} --out {output:q} > {log:q} 2>&1"

    # Seconds of pandas work: under SLURM they run where Snakemake runs.
    localrules:
        aggregate_round,
        plan_round,
