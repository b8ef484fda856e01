# What the report shows first: one line per guideline (holds / violated / undecided), included
# on the front page by workflow/report/workflow.rst, and the tests of violated and undecided
# groups as a table. From tests.csv only, so it re-runs with the analysis, never a benchmark.

from mpiguide.core.paths import (
    LOGS_TREE,
    REPORT_TABLE_FILES,
    VERDICT_LINES_CSV,
    VERDICT_LINES_RST,
    VIOLATED_UNDECIDED_CSV,
)

REPORT_TABLES = {
    name: f"{RESULTS}/{GUIDELINES_TREE}/{name}" for name in REPORT_TABLE_FILES
}


rule report_tables:
    input:
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
    output:
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
    log:
        f"{RESULTS}/{LOGS_TREE}/report_tables.log",
    conda:
        "../envs/analysis.yaml"
    params:
        outdir=output_dir,
    shell:
        "python -m mpiguide report-tables --tests {input.tests:q}"
        " --decided-with {input.decided_with:q} --outdir {params.outdir:q} 2> {log:q}"


localrules:
    report_tables,
