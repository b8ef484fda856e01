# Every figure of the verdicts and the runs, in one job: the plots, MPINPC's slowdown overview
# (Hunold 2023, Figure 3) and run-to-run variability with its tables (Parker 2018, Figure 10).
# One process imports pandas and matplotlib once and draws on the job's threads
# (mpiguide.reports.figures); three jobs paid for three imports, on the path to the page.
# Which groups are violated is known only after the analysis: the job writes whole plot
# directories, and the report picks the files up by pattern. Analysis outputs: re-made when the
# verdicts are, and (the plots) when `plots:` changes.

# mpiguide.core.paths names the plots, and so their report labels.
from mpiguide.core.paths import (
    INTERFERENCE_CSV,
    LOGS_TREE,
    MEDIANS_PARQUET,
    PLOTS_TREE,
    RUNS_CSV,
    SLOWDOWN_PNG,
    SPREAD_CSV,
    TIMINGS_PARQUET,
    VARIABILITY_TREE,
    labels_of_plot,
)

PLOTS = f"{RESULTS}/{PLOTS_TREE}"
SLOWDOWN_OVERVIEW = f"{RESULTS}/{GUIDELINES_TREE}/{SLOWDOWN_PNG}"
VARIABILITY_DIR = f"{RESULTS}/{VARIABILITY_TREE}"


rule figures:
    input:
        timings=f"{RESULTS}/{TIMINGS_PARQUET}",
        medians=f"{RESULTS}/{MEDIANS_PARQUET}",
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        slowdown=GUIDELINE_OUTPUTS[SLOWDOWN_CSV],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
    output:
        plots=report(
            directory(PLOTS),
            patterns=["{name}.png"],
            caption="../report/plots.rst",
            category="Plots",
            subcategory=lambda wildcards: labels_of_plot(wildcards.name)["guideline"],
            labels=lambda wildcards: labels_of_plot(wildcards.name),
        ),
        slowdown=report(
            SLOWDOWN_OVERVIEW,
            caption="../report/slowdown_overview.rst",
            category="Summary",
            labels={"figure": "slowdown severity overview"},
        ),
        spread=report(
            f"{VARIABILITY_DIR}/{SPREAD_CSV}",
            caption="../report/variability.rst",
            category="Variability",
            labels={"table": "spread per experiment"},
        ),
        runs=report(
            f"{VARIABILITY_DIR}/{RUNS_CSV}",
            caption="../report/variability.rst",
            category="Variability",
            labels={"table": "runs"},
        ),
        interference=report(
            f"{VARIABILITY_DIR}/{INTERFERENCE_CSV}",
            caption="../report/variability.rst",
            category="Variability",
            labels={"table": "interference and launch factor"},
        ),
        variability_plots=report(
            directory(f"{VARIABILITY_DIR}/{PLOTS_TREE}"),
            patterns=["{name}.png"],
            caption="../report/variability.rst",
            category="Variability",
            labels=lambda wildcards: {"plot": wildcards.name},
        ),
    log:
        f"{RESULTS}/{LOGS_TREE}/figures.log",
    conda:
        "../envs/analysis.yaml"
    # Both cores: no benchmark runs beside it, and no job waits for a core it holds.
    threads: 2
    params:
        plots=as_json(config["plots"]),
        campaign=config["campaign"],
        # the directory of variability's tables and plots
        variability=lambda wildcards, output: os.path.dirname(output.spread),
    shell:
        "python -m mpiguide figures --timings {input.timings:q} --medians {input.medians:q}"
        " --tests {input.tests:q} --slowdown {input.slowdown:q}"
        " --decided-with {input.decided_with:q} --plots-json {params.plots:q}"
        " --campaign {params.campaign:q} --plots {output.plots:q}"
        " --slowdown-png {output.slowdown:q} --variability {params.variability:q}"
        " --processes {threads} 2> {log:q}"


# Seconds to minutes of pandas and matplotlib work: under SLURM it runs where Snakemake runs
# (the login node) instead of waiting in the queue.
localrules:
    figures,
