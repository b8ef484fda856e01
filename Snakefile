# mpiguide: campaign config -> shuffled runs -> timings -> guideline verdicts, tables, plots.
# Rules live in workflow/rules; docs/workflow.md explains running and re-running.

from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/common.smk"
include: "workflow/rules/plan.smk"


if not ANALYSIS_ONLY:

    include: "workflow/rules/build.smk"
    include: "workflow/rules/run.smk"


include: "workflow/rules/aggregate.smk"
include: "workflow/rules/rounds.smk"
include: "workflow/rules/analyse.smk"
include: "workflow/rules/selftest.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/tune.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/options.smk"
include: "workflow/rules/records.smk"


localrules:
    all,


# The raw runs are targets themselves: Snakemake regenerates a missing file only for a job that
# needs it, and the verdicts built on a deleted run are up to date by their mtimes; as targets,
# a deleted run is measured again (and everything built on it redone), and in analysis-only
# mode the invocation stops naming the missing files.
rule all:
    default_target: True
    input:
        rules.analyse.output,
        GATE_TARGETS,
        ACROSS_PROCESS_COUNTS_OUTPUTS,
        OPTION_RECORD_FILES,
        raw_csvs,
        raw_jsons,
