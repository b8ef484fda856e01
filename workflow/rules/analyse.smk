# Guideline verdicts. Only this rule and the plots see `analysis:` and `guidelines:`, so editing
# them re-runs the analysis and never a benchmark.


rule check_guidelines:
    input:
        medians=f"{RESULTS}/medians.parquet",
        catalogue=CATALOGUE,
        options=analysis_options(),
    output:
        tests=report(
            GUIDELINE_OUTPUTS[TESTS_CSV],
            caption="../report/tests.rst",
            category="Tables",
            labels={"table": "tests"},
        ),
        summary=report(
            GUIDELINE_OUTPUTS[SUMMARY_CSV],
            caption="../report/summary.rst",
            category="Summary",
            labels={"table": "violations per guideline and deployment"},
        ),
        summary_md=GUIDELINE_OUTPUTS[SUMMARY_MD],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
        slowdown=report(
            GUIDELINE_OUTPUTS[SLOWDOWN_CSV],
            caption="../report/slowdown.rst",
            category="Tables",
            labels={"table": "slowdown"},
        ),
    log:
        f"{RESULTS}/logs/check_guidelines.log",
    conda:
        "../envs/analysis.yaml"
    params:
        guidelines=as_json(config["guidelines"]),
        analysis=as_json(config["analysis"]),
        outdir=output_dir,
    shell:
        "python -m mpiguide check --medians {input.medians:q} --catalogue {input.catalogue:q}"
        " --guidelines-json {params.guidelines:q} --analysis-json {params.analysis:q}"
        " --outdir {params.outdir:q} 2> {log:q}"


# Seconds to minutes of pandas work on one core: under SLURM it runs where Snakemake runs
# (the login node) instead of waiting in the queue.
localrules:
    check_guidelines,
