# MPINPC's overview (Hunold 2023, Figure 3): collectives by message size, coloured by the
# severity of their slowdown in slowdown.csv, an undecided one apart from a pass (its verdict);
# tests.csv says which guidelines, and so which options, decided them.
# An analysis output: re-made when the verdicts are.

from mpiguide.core.paths import LOGS_TREE, SLOWDOWN_PNG

SLOWDOWN_OVERVIEW = f"{RESULTS}/{GUIDELINES_TREE}/{SLOWDOWN_PNG}"


rule slowdown_overview:
    input:
        slowdown=GUIDELINE_OUTPUTS[SLOWDOWN_CSV],
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
    output:
        report(
            SLOWDOWN_OVERVIEW,
            caption="../report/slowdown_overview.rst",
            category="Summary",
            labels={"figure": "slowdown severity overview"},
        ),
    log:
        f"{RESULTS}/{LOGS_TREE}/slowdown_overview.log",
    # With variability, the longest of the one-core jobs after check_guidelines (models.smk).
    priority: 1
    conda:
        "../envs/analysis.yaml"
    params:
        campaign=config["campaign"],
    shell:
        "python -m mpiguide slowdown-plot --slowdown {input.slowdown:q} --tests {input.tests:q}"
        " --decided-with {input.decided_with:q} --campaign {params.campaign:q} --out {output:q}"
        " 2> {log:q}"


# Seconds of matplotlib work on one core: under SLURM it runs where Snakemake runs.
localrules:
    slowdown_overview,
