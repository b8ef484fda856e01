# The campaign page, results/<campaign>/index.html (mpiguide.reports.page): re-made whenever a
# table, figure or option it shows changes, so that it never states verdicts the tables no
# longer hold; and once `snakemake --report` has written report.html, whenever that changes
# too, so that what it says of the report's age is current (`make demo` writes the report,
# then runs the workflow once more for the page to say so).

from mpiguide.campaign.summary import available_cores, oversubscriptions
from mpiguide.reports.versions import pairs_as_json, version_pairs
from mpiguide.core.paths import (
    CAMPAIGN_PAGE,
    LOGS_TREE,
    SNAKEMAKE_REPORT,
    SUMMARY_CSV,
    VERDICT_LINES_CSV,
)

PAGE = f"{RESULTS}/{CAMPAIGN_PAGE}"
REPORT_HTML = f"{RESULTS}/{SNAKEMAKE_REPORT}"
# The tables the page links to: every CSV of guidelines/ the workflow writes.
PAGE_TABLES = [
    path
    for tables in (
        GUIDELINE_OUTPUTS,
        ADAPTIVE_OUTPUTS,
        REPORT_TABLES,
        LIBRARY_TABLE,
        COST_OUTPUTS,
    )
    for path in tables.values()
    if path.endswith(".csv")
]
# Deployments with more ranks than this machine's cores: the page warns beside their verdicts.
OVERSUBSCRIBED = {
    found.deployment: found.warning()
    for found in oversubscriptions(config, available_cores())
}
# The method the page states in one sentence, in full (named, not linked, where it is absent:
# a workflow used as a module from a checkout without docs).
ANALYSIS_DOC = os.path.join(CHECKOUT, "docs", "analysis.md")


rule page:
    input:
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        summary=GUIDELINE_OUTPUTS[SUMMARY_CSV],
        verdict_lines=REPORT_TABLES[VERDICT_LINES_CSV],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
        catalogue=CATALOGUE,
        plots=PLOTS,
        figures=SLOWDOWN_OVERVIEW,
        tables=PAGE_TABLES,
        runs=rules.figures.output.runs,
        # once `snakemake --report` has written it (no rule makes it)
        report=lambda wildcards: [REPORT_HTML] if os.path.exists(REPORT_HTML) else [],
    output:
        PAGE,
    log:
        f"{RESULTS}/{LOGS_TREE}/page.log",
    conda:
        "../envs/analysis.yaml"
    params:
        campaign=config["campaign"],
        guidelines=as_json(config["guidelines"]),
        report=REPORT_HTML,
        oversubscribed=as_json(OVERSUBSCRIBED),
        versions=as_json(pairs_as_json(version_pairs(config["mpi"]))),
        analysis_doc=ANALYSIS_DOC,
    shell:
        "python -m mpiguide page --campaign {params.campaign:q} --tests {input.tests:q}"
        " --summary {input.summary:q} --verdict-lines {input.verdict_lines:q}"
        " --decided-with {input.decided_with:q} --catalogue {input.catalogue:q}"
        " --guidelines-json {params.guidelines:q} --plots {input.plots:q}"
        " --figures {input.figures:q} --tables {input.tables:q} --report {params.report:q}"
        " --runs {input.runs:q} --oversubscribed-json {params.oversubscribed:q}"
        " --versions-json {params.versions:q}"
        " --analysis-doc {params.analysis_doc:q} --out {output:q} 2> {log:q}"


# Seconds of pandas work on one core: under SLURM it runs where Snakemake runs.
localrules:
    page,
