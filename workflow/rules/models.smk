# Across process counts: latency models fitted to the run medians, and run-to-run variability.
# Analysis only: they read medians/timings and see `models:` and `analysis:`, so editing them
# never re-runs a benchmark.

from mpiguide.core.package_data import MODEL_CATALOGUE
from mpiguide.core.paths import (
    INTERFERENCE_CSV,
    LOGS_TREE,
    MEDIANS_PARQUET,
    MODELS_CSV,
    MODELS_TREE,
    PLOTS_TREE,
    RESIDUALS_CSV,
    RUNS_CSV,
    SPREAD_CSV,
    TIMINGS_PARQUET,
    VARIABILITY_TREE,
)
from mpiguide.reports.models import model_options

MODELS_CATALOGUE = str(MODEL_CATALOGUE)
MODEL_DIR = f"{RESULTS}/{MODELS_TREE}"
VARIABILITY_DIR = f"{RESULTS}/{VARIABILITY_TREE}"


rule fit_models:
    input:
        medians=f"{RESULTS}/{MEDIANS_PARQUET}",
        models=MODELS_CATALOGUE,
    output:
        models=report(
            f"{MODEL_DIR}/{MODELS_CSV}",
            caption="../report/models.rst",
            category="Models",
            labels={"table": "fitted coefficients"},
        ),
        residuals=report(
            f"{MODEL_DIR}/{RESIDUALS_CSV}",
            caption="../report/residuals.rst",
            category="Models",
            labels={"table": "residuals"},
        ),
        plots=report(
            directory(f"{MODEL_DIR}/{PLOTS_TREE}"),
            patterns=["{name}.png"],
            caption="../report/model_plots.rst",
            category="Models",
            labels=lambda wildcards: {"plot": wildcards.name},
        ),
    log:
        f"{RESULTS}/{LOGS_TREE}/fit_models.log",
    conda:
        "../envs/analysis.yaml"
    params:
        models=as_json(config["models"]),
        analysis=as_json(model_options(config["analysis"])),
        outdir=output_dir,
        campaign=config["campaign"],
    shell:
        "python -m mpiguide fit --medians {input.medians:q} --models {input.models:q}"
        " --models-json {params.models:q} --analysis-json {params.analysis:q}"
        " --campaign {params.campaign:q} --out {params.outdir:q} 2> {log:q}"


rule variability:
    input:
        medians=f"{RESULTS}/{MEDIANS_PARQUET}",
        timings=f"{RESULTS}/{TIMINGS_PARQUET}",
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
    output:
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
        plots=report(
            directory(f"{VARIABILITY_DIR}/{PLOTS_TREE}"),
            patterns=["{name}.png"],
            caption="../report/variability.rst",
            category="Variability",
            labels=lambda wildcards: {"plot": wildcards.name},
        ),
    log:
        f"{RESULTS}/{LOGS_TREE}/variability.log",
    # The longest of the jobs that follow check_guidelines on one core each, started first so
    # that the short table jobs fill in beside them; plot, on both cores, then waits for no
    # straggler.
    priority: 1
    conda:
        "../envs/analysis.yaml"
    params:
        outdir=output_dir,
        campaign=config["campaign"],
    shell:
        "python -m mpiguide variability --medians {input.medians:q} --timings {input.timings:q}"
        " --tests {input.tests:q} --decided-with {input.decided_with:q}"
        " --campaign {params.campaign:q} --outdir {params.outdir:q} 2> {log:q}"


# Seconds of pandas work on one core: under SLURM they run where Snakemake runs.
localrules:
    fit_models,
    variability,


# What `rule all` asks of this file: the models only when the campaign selects some.
ACROSS_PROCESS_COUNTS_OUTPUTS = [
    *(rules.fit_models.output if config["models"] else []),
    *rules.variability.output,
]
