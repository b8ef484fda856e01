# Table 2 of Manwade & Kulkarni 2018 (guideline x MPI library x size: holds / violated), from
# tests.csv. Only analysis.varied reaches it, so it re-runs with the analysis, never a benchmark.

from mpiguide.core.paths import LIBRARY_TABLE_CSV, LIBRARY_TABLE_MD, LOGS_TREE
from mpiguide.reports.library_table import OUTPUTS as LIBRARY_TABLE_NAMES

LIBRARY_TABLE = {
    name: f"{RESULTS}/{GUIDELINES_TREE}/{name}" for name in LIBRARY_TABLE_NAMES
}


rule library_table:
    input:
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
    output:
        csv=report(
            LIBRARY_TABLE[LIBRARY_TABLE_CSV],
            caption="../report/library_table.rst",
            category="Summary",
            labels={"table": "holds / violated per guideline, MPI library and size"},
        ),
        md=LIBRARY_TABLE[LIBRARY_TABLE_MD],
    log:
        f"{RESULTS}/{LOGS_TREE}/library_table.log",
    conda:
        "../envs/analysis.yaml"
    params:
        varied=config["analysis"]["varied"],
        outdir=output_dir,
    shell:
        "python -m mpiguide library-table --tests {input.tests:q} --varied {params.varied:q}"
        " --outdir {params.outdir:q} 2> {log:q}"


localrules:
    library_table,
