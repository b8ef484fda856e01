# Which groups are violated is known only after the analysis: one job writes the whole plot
# directory, and the report picks the files up by pattern.

# mpiguide.core.paths names the plots, and so their report labels.
from mpiguide.core.paths import LOGS_TREE, PLOTS_TREE, TIMINGS_PARQUET, labels_of_plot

PLOTS = f"{RESULTS}/{PLOTS_TREE}"


rule plot:
    input:
        timings=f"{RESULTS}/{TIMINGS_PARQUET}",
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
    output:
        report(
            directory(PLOTS),
            patterns=["{name}.png"],
            caption="../report/plots.rst",
            category="Plots",
            subcategory=lambda wildcards: labels_of_plot(wildcards.name)["guideline"],
            labels=lambda wildcards: labels_of_plot(wildcards.name),
        ),
    log:
        f"{RESULTS}/{LOGS_TREE}/plot.log",
    conda:
        "../envs/analysis.yaml"
    threads: 2
    params:
        plots=as_json(config["plots"]),
        campaign=config["campaign"],
    shell:
        "python -m mpiguide plot --timings {input.timings:q} --tests {input.tests:q}"
        " --decided-with {input.decided_with:q} --plots-json {params.plots:q}"
        " --campaign {params.campaign:q} --processes {threads} --outdir {output:q} 2> {log:q}"


# Seconds to minutes of pandas work on one core: under SLURM it runs where Snakemake runs
# (the login node) instead of waiting in the queue.
localrules:
    plot,
