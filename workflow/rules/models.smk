# Across process counts: latency models fitted to the run medians (run-to-run variability is
# drawn with the other figures: analyse.smk). Analysis only: it reads the medians and sees
# `models:` and `analysis:`, so editing them never re-runs a benchmark.

from mpiguide.core.package_data import MODEL_CATALOGUE
from mpiguide.core.paths import (
    LOGS_TREE,
    MEDIANS_PARQUET,
    MODELS_CSV,
    MODELS_TREE,
    PLOTS_TREE,
    RESIDUALS_CSV,
)
from mpiguide.reports.models import model_options

MODELS_CATALOGUE = str(MODEL_CATALOGUE)
MODEL_DIR = f"{RESULTS}/{MODELS_TREE}"


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


# Seconds of pandas work on one core: under SLURM it runs where Snakemake runs.
localrules:
    fit_models,


# What `rule all` asks of this file: the models only when the campaign selects some.
ACROSS_PROCESS_COUNTS_OUTPUTS = rules.fit_models.output if config["models"] else []
