# The self-test (docs/selftest.md):
# false-positive and detection rates of this campaign's verdicts,
# for a campaign built like config/campaigns/selftest.yaml (identical entries and copies slowed
# by libmpiguide-inject, compared by `mpi` selectors). Not part of `all`: run it as
#   snakemake --profile profiles/local all selftest --configfile config/campaigns/selftest.yaml
# Like the guideline check it reads only the run medians, so it never re-measures; the run logs
# are read to prove that every slowed run was slowed.

from mpiguide.analysis.analysis_types import without_decided_with
from mpiguide.campaign.installs import build_env_prefix
from mpiguide.core.paths import (
    BUILD_TREE,
    LOGS_TREE,
    MEDIANS_PARQUET,
    RUN_LOGS_TREE,
    SELFTEST_CSV,
    SELFTEST_MD,
    SELFTEST_PNG,
)

# src/inject of this checkout (CHECKOUT, common.smk).
INJECT_DIR = c_component(CHECKOUT, "inject")
INJECT_SOURCES = c_sources(CHECKOUT, "inject")

# INJECT_LIBRARIES (common.smk): LD_PRELOAD path -> the mpi entry whose mpicc builds it.
for inject_index, (inject_library, inject_mpi) in enumerate(INJECT_LIBRARIES.items()):

    rule:
        name:
            f"build_inject_{inject_index}"
        input:
            INJECT_SOURCES,
        output:
            inject_library,
        log:
            f"{RESULTS}/{LOGS_TREE}/{BUILD_TREE}/inject_{inject_index}.log",
        conda:
            kernel_conda_env(inject_mpi)
        envmodules:
            *MPI[inject_mpi]["modules"],
        params:
            env=build_env_prefix(MPI[inject_mpi]),
            mpicc=MPI[inject_mpi]["mpicc"],
            builddir=output_dir,
        shell:
            f"{{params.env}} MPICC={{params.mpicc:q}} make -C {shlex.quote(INJECT_DIR)}"
            ' BUILD="$PWD"/{params.builddir:q} > {log:q} 2>&1'


rule selftest:
    input:
        medians=f"{RESULTS}/{MEDIANS_PARQUET}",
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
        libraries=list(INJECT_LIBRARIES),
    output:
        csv=f"{RESULTS}/{SELFTEST_CSV}",
        plot=f"{RESULTS}/{SELFTEST_PNG}",
        markdown=f"{RESULTS}/{SELFTEST_MD}",
    log:
        f"{RESULTS}/{LOGS_TREE}/selftest.log",
    conda:
        "../envs/analysis.yaml"
    params:
        config=as_json(without_decided_with(config)),
        run_logs=f"{RESULTS}/{RUN_LOGS_TREE}",
    shell:
        "python -m mpiguide selftest --config-json {params.config:q}"
        " --decided-with {input.decided_with:q} --medians {input.medians:q} --run-logs {params.run_logs:q}"
        " --csv {output.csv:q} --plot {output.plot:q} --markdown {output.markdown:q}"
        " 2> {log:q}"


# Seconds to minutes of pandas work on one core: under SLURM it runs where Snakemake runs
# (the login node) instead of waiting in the queue.
localrules:
    selftest,
