# A campaign's analysis, one job (`mpiguide analyse`): the guideline verdicts and the tables made
# from them (what the report shows first: one line per guideline, included on its front page by
# workflow/report/workflow.rst, and the tests of violated and undecided groups; Table 2 of
# Manwade & Kulkarni 2018, guideline x MPI library x size), an adaptive campaign's cost, every
# figure (the plots, MPINPC's slowdown overview, Hunold 2023, Figure 3, and run-to-run
# variability with its tables, Parker 2018, Figure 10) and the campaign page. One process
# imports pandas once and loads matplotlib while a forked one decides the verdicts: a job per
# step paid a Python start and a pandas import each, on the path of the loop a user repeats
# (edit a threshold, run again; docs/measurements/workflow.md). Only this rule sees `analysis:`,
# `guidelines:` and `plots:`, so editing them re-runs the analysis and never a benchmark.
# Which groups are violated is known only after the analysis: the job writes whole plot
# directories, and the report picks the files up by pattern. The page is re-made whenever a
# table, figure or option it shows changes, so that it never states verdicts the tables no
# longer hold; and once `snakemake --report` has written report.html, whenever that changes
# too, so that what it says of the report's age is current (`make demo` writes the report,
# then runs the workflow once more for the page to say so).

from mpiguide.campaign.summary import available_cores, oversubscriptions
from mpiguide.reports.versions import pairs_as_json, version_pairs

# mpiguide.core.paths names the plots, and so their report labels.
from mpiguide.core.paths import (
    CAMPAIGN_COST_CSV,
    CAMPAIGN_PAGE,
    COST_CSV,
    COST_RST,
    GATE_TXT,
    INTERFERENCE_CSV,
    JUNIT_XML,
    LIBRARY_TABLE_CSV,
    LIBRARY_TABLE_FILES,
    LIBRARY_TABLE_MD,
    LOGS_TREE,
    LOOKS_CSV,
    MEDIANS_PARQUET,
    PLOTS_TREE,
    REPORT_TABLE_FILES,
    RUNS_CSV,
    SLOWDOWN_PNG,
    SNAKEMAKE_REPORT,
    SPREAD_CSV,
    SUMMARY_CSV,
    SUMMARY_MD,
    TIMINGS_PARQUET,
    VARIABILITY_TREE,
    VERDICT_LINES_CSV,
    VERDICT_LINES_RST,
    VIOLATED_UNDECIDED_CSV,
    labels_of_plot,
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
PLOTS = f"{RESULTS}/{PLOTS_TREE}"
SLOWDOWN_OVERVIEW = f"{RESULTS}/{GUIDELINES_TREE}/{SLOWDOWN_PNG}"
VARIABILITY_DIR = f"{RESULTS}/{VARIABILITY_TREE}"
PAGE = f"{RESULTS}/{CAMPAIGN_PAGE}"
REPORT_HTML = f"{RESULTS}/{SNAKEMAKE_REPORT}"
# Deployments with more ranks than this machine's cores: the page warns beside their verdicts.
OVERSUBSCRIBED = {
    found.deployment: found.warning()
    for found in oversubscriptions(config, available_cores())
}
# The method the page states in one sentence, in full (named, not linked, where it is absent:
# a workflow used as a module from a checkout without docs).
ANALYSIS_DOC = os.path.join(CHECKOUT, "docs", "analysis.md")
# An adaptive campaign's cost against a fixed one (rounds.smk's COST_OUTPUTS).
COST_REPORTS = (
    {
        "cost": report(
            COST_OUTPUTS[COST_CSV],
            caption="../report/cost.rst",
            category="Summary",
            labels={"table": "runs used per guideline"},
        ),
        "campaign_cost": report(
            COST_OUTPUTS[CAMPAIGN_COST_CSV],
            caption="../report/campaign_cost.rst",
            category="Summary",
            labels={"table": "launches and kernel time against a fixed campaign"},
        ),
        "cost_rst": COST_OUTPUTS[COST_RST],
    }
    if ADAPTIVE
    else {}
)


rule analyse:
    input:
        medians=f"{RESULTS}/{MEDIANS_PARQUET}",
        timings=f"{RESULTS}/{TIMINGS_PARQUET}",
        catalogue=CATALOGUE,
        # once `snakemake --report` has written it (no rule makes it)
        report=lambda wildcards: [REPORT_HTML] if os.path.exists(REPORT_HTML) else [],
    output:
        **ADAPTIVE_OUTPUTS,
        **COST_REPORTS,
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
        plots=report(
            directory(PLOTS),
            patterns=["{name}.png"],
            caption="../report/plots.rst",
            category="Plots",
            subcategory=lambda wildcards: labels_of_plot(wildcards.name)["guideline"],
            labels=lambda wildcards: labels_of_plot(wildcards.name),
        ),
        slowdown_png=report(
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
        page=PAGE,
    log:
        f"{RESULTS}/{LOGS_TREE}/analyse.log",
    conda:
        "../envs/analysis.yaml"
    # Both cores: no benchmark runs beside it, and no job waits for a core it holds.
    threads: 2
    params:
        guidelines=as_json(config["guidelines"]),
        analysis=as_json(config["analysis"]),
        outdir=output_dir,
        fail_on=config["fail_on"],
        looks=RUNS_OPTION,
        plots=as_json(config["plots"]),
        # the directory of variability's tables and plots
        variability=lambda wildcards, output: os.path.dirname(output.spread),
        campaign=config["campaign"],
        report=REPORT_HTML,
        oversubscribed=as_json(OVERSUBSCRIBED),
        versions=as_json(pairs_as_json(version_pairs(config["mpi"]))),
        analysis_doc=ANALYSIS_DOC,
    shell:
        "python -m mpiguide analyse --medians {input.medians:q} --catalogue {input.catalogue:q}"
        " --guidelines-json {params.guidelines:q} --analysis-json {params.analysis:q}"
        " --outdir {params.outdir:q} --fail-on {params.fail_on:q} --exit-zero {params.looks}"
        " --timings {input.timings:q} --plots-json {params.plots:q} --plots {output.plots:q}"
        " --slowdown-png {output.slowdown_png:q} --variability {params.variability:q}"
        " --processes {threads} --campaign {params.campaign:q} --report {params.report:q}"
        " --oversubscribed-json {params.oversubscribed:q} --versions-json {params.versions:q}"
        " --analysis-doc {params.analysis_doc:q} --out {output.page:q} 2> {log:q}"


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


# Seconds to minutes of pandas and matplotlib work: under SLURM they run where Snakemake runs
# (the login node) instead of waiting in the queue.
localrules:
    analyse,
    fail_on,
