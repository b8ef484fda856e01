# Guideline verdicts, and the tables made from them: what the report shows first (one line per
# guideline, included on its front page by workflow/report/workflow.rst, and the tests of
# violated and undecided groups) and Table 2 of Manwade & Kulkarni 2018 (guideline x MPI library
# x size). One job: each table is a fraction of a second of work, a job of its own a Python start
# and a pandas import. Only this rule and the figures see `analysis:` and `guidelines:`, so
# editing them re-runs the analysis and never a benchmark.

from mpiguide.core.paths import (
    GATE_TXT,
    JUNIT_XML,
    LIBRARY_TABLE_CSV,
    LIBRARY_TABLE_FILES,
    LIBRARY_TABLE_MD,
    LOGS_TREE,
    LOOKS_CSV,
    MEDIANS_PARQUET,
    REPORT_TABLE_FILES,
    SUMMARY_CSV,
    SUMMARY_MD,
    VERDICT_LINES_CSV,
    VERDICT_LINES_RST,
    VIOLATED_UNDECIDED_CSV,
)

REPORT_TABLES = {
    name: f"{RESULTS}/{GUIDELINES_TREE}/{name}" for name in REPORT_TABLE_FILES
}
LIBRARY_TABLE = {
    name: f"{RESULTS}/{GUIDELINES_TREE}/{name}" for name in LIBRARY_TABLE_FILES
}

# An adaptive campaign's check also writes, per guideline and look, the tests that stopped there.
ADAPTIVE_OUTPUTS = (
    {
        "looks": report(
            f"{RESULTS}/{GUIDELINES_TREE}/{LOOKS_CSV}",
            caption="../report/looks.rst",
            category="Summary",
            labels={"table": "tests stopped per guideline and look"},
        )
    }
    if ADAPTIVE
    else {}
)
# The CI gate's output: a target of `all` only when the campaign sets `fail_on`.
GATE_OUTPUT = f"{RESULTS}/{GUIDELINES_TREE}/{GATE_TXT}"
GATE_TARGETS = [] if config["fail_on"] == "never" else [GATE_OUTPUT]


rule check_guidelines:
    input:
        medians=f"{RESULTS}/{MEDIANS_PARQUET}",
        catalogue=CATALOGUE,
    output:
        **ADAPTIVE_OUTPUTS,
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
        junit=GUIDELINE_OUTPUTS[JUNIT_XML],
        slowdown=report(
            GUIDELINE_OUTPUTS[SLOWDOWN_CSV],
            caption="../report/slowdown.rst",
            category="Tables",
            labels={"table": "slowdown"},
        ),
        lines=report(
            REPORT_TABLES[VERDICT_LINES_CSV],
            caption="../report/verdict_lines.rst",
            category="Summary",
            labels={"table": "holds / violated / undecided per guideline"},
        ),
        lines_rst=REPORT_TABLES[VERDICT_LINES_RST],
        violated_undecided=report(
            REPORT_TABLES[VIOLATED_UNDECIDED_CSV],
            caption="../report/violated_undecided.rst",
            category="Summary",
            labels={"table": "tests of violated and undecided groups"},
        ),
        library_table=report(
            LIBRARY_TABLE[LIBRARY_TABLE_CSV],
            caption="../report/library_table.rst",
            category="Summary",
            labels={"table": "holds / violated per guideline, MPI library and size"},
        ),
        library_table_md=LIBRARY_TABLE[LIBRARY_TABLE_MD],
    log:
        f"{RESULTS}/{LOGS_TREE}/check_guidelines.log",
    conda:
        "../envs/analysis.yaml"
    params:
        guidelines=as_json(config["guidelines"]),
        analysis=as_json(config["analysis"]),
        outdir=output_dir,
        fail_on=config["fail_on"],
        looks=RUNS_OPTION,
    shell:
        "python -m mpiguide check --medians {input.medians:q} --catalogue {input.catalogue:q}"
        " --guidelines-json {params.guidelines:q} --analysis-json {params.analysis:q}"
        " --outdir {params.outdir:q} --fail-on {params.fail_on:q} --exit-zero {params.looks}"
        " 2> {log:q}"


# `fail_on` (CI): fails the invocation on the verdicts it names. A rule of its own, so that the
# tables and junit.xml of a failing campaign stay (Snakemake deletes a failed job's outputs).
rule fail_on:
    input:
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
    output:
        GATE_OUTPUT,
    log:
        f"{RESULTS}/{LOGS_TREE}/fail_on.log",
    conda:
        "../envs/analysis.yaml"
    params:
        fail_on=config["fail_on"],
    shell:
        "python -m mpiguide gate --tests {input.tests:q} --fail-on {params.fail_on:q}"
        " --out {output:q} 2> {log:q}"


# Seconds to minutes of pandas work on one core: under SLURM it runs where Snakemake runs
# (the login node) instead of waiting in the queue.
localrules:
    check_guidelines,
    fail_on,
