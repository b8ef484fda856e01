# From verdict to fix (mpiguide.tune): the target `tune` writes, from the verdicts of
# the guidelines ALGO.<entry>.<op>.<algorithm> that an entry's `algorithms:` adds, the library
# settings that choose its fastest algorithm where it beats the default significantly, and per
# entry the tuning file of libmpiguide-tune, where a collective is significantly slower than its
# own mock-up.

from mpiguide.campaign.expansion import tuned_algorithms_csv
from mpiguide.campaign.installs import build_env_prefix
from mpiguide.core.paths import BUILD_TREE, LOGS_TREE, VERIFY_CSV, VERIFY_MD
from mpiguide.tune.applied import settings_file
from mpiguide.tune.library_algorithms import setting_marks

SETTING_MARKS = setting_marks(CAMPAIGN.settings)
TUNING = f"{RESULTS}/{TUNING_TREE}"
TUNING_FILES = {
    mark["base"]: settings_file(mark["library"], mark["base"])
    for mark in SETTING_MARKS.values()
}
MOCKUP_TUNING_FILES = {mpi: mockup_tuning_name(mpi) for mpi in BUILT_MPI}


rule tune:
    input:
        tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
    output:
        note=f"{TUNING}/{TUNING_MD}",
        algorithms=f"{TUNING}/{ALGORITHMS_CSV}",
        plot=f"{TUNING}/{ALGORITHMS_PNG}",
        files=[f"{TUNING}/{name}" for name in sorted(TUNING_FILES.values())],
        mockups=[f"{TUNING}/{name}" for name in MOCKUP_TUNING_FILES.values()],
    log:
        f"{RESULTS}/{LOGS_TREE}/tune.log",
    conda:
        "../envs/analysis.yaml"
    params:
        settings=as_json(SETTING_MARKS),
        entries=list(MOCKUP_TUNING_FILES),
        outdir=output_dir,
    shell:
        "python -m mpiguide tune --tests {input.tests:q} --decided-with {input.decided_with:q}"
        " --settings-json {params.settings:q} --entries {params.entries:q}"
        " --outdir {params.outdir:q} > {log:q} 2>&1"


localrules:
    tune,


# `verify: true` (`--config verify=True`): the campaign re-measured with the tuning applied:
# each algorithm `tune` chose beside the library's own choice within the same launches
# (verify.md), each swept entry beside <entry>.applied, the entry with the settings file `tune`
# wrote in its environment (verify.md), and each entry whose libmpiguide-tune file replaces a
# collective beside <entry>.tuned in the same blocks: inside <entry>.tuned the replaced call
# beside the library's own (verify.md), and across launches `mpiguide diff` of the two entries
# for everything else.
if config["verify"]:
    VERIFY_PAIRS = dict(CAMPAIGN.tuned_pairs())
    VERIFY = f"{RESULTS}/{VERIFY_TREE}"
    # src/tune and the mock-ups it links (src/mockups) of this checkout (CHECKOUT, common.smk).
    TUNE_DIR = c_component(CHECKOUT, "tune")
    TUNE_SOURCES = c_sources(CHECKOUT, "tune", "mockups")

    # TUNE_LIBRARIES (common.smk): LD_PRELOAD path -> the entry whose mpicc builds it.
    for tune_index, (tune_library, tune_mpi) in enumerate(TUNE_LIBRARIES.items()):

        rule:
            name:
                f"build_tune_{tune_index}"
            input:
                TUNE_SOURCES,
            output:
                tune_library,
            log:
                f"{RESULTS}/{LOGS_TREE}/{BUILD_TREE}/tune_{tune_index}.log",
            conda:
                kernel_conda_env(tune_mpi)
            envmodules:
                *MPI[tune_mpi]["modules"],
            params:
                env=build_env_prefix(MPI[tune_mpi]),
                mpicc=MPI[tune_mpi]["mpicc"],
                builddir=output_dir,
            shell:
                f"{{params.env}} MPICC={{params.mpicc:q}} make -C {shlex.quote(TUNE_DIR)}"
                ' BUILD="$PWD"/{params.builddir:q} > {log:q} 2>&1'

    rule verify_entry:
        input:
            tests=GUIDELINE_OUTPUTS[TESTS_CSV],
        output:
            md=f"{VERIFY}/{{entry}}.md",
            csv=f"{VERIFY}/{{entry}}.csv",
        log:
            f"{RESULTS}/{LOGS_TREE}/{VERIFY_TREE}/{{entry}}.log",
        wildcard_constraints:
            entry="|".join(re.escape(name) for name in VERIFY_PAIRS),
        conda:
            "../envs/analysis.yaml"
        params:
            tuned=lambda wildcards: VERIFY_PAIRS[wildcards.entry],
        shell:
            "python -m mpiguide diff {input.tests:q} {input.tests:q} --mpi-a {wildcards.entry:q}"
            " --mpi-b {params.tuned:q} --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"

    rule verify_report:
        input:
            tests=GUIDELINE_OUTPUTS[TESTS_CSV],
            decided_with=GUIDELINE_OUTPUTS[DECIDED_WITH_JSON],
            tuned=tuned_algorithms_csv(config["campaign"]),
        output:
            md=f"{RESULTS}/{VERIFY_MD}",
            csv=f"{RESULTS}/{VERIFY_CSV}",
        log:
            f"{RESULTS}/{LOGS_TREE}/{VERIFY_TREE}/report.log",
        conda:
            "../envs/analysis.yaml"
        params:
            pairs=as_json(list(VERIFY_PAIRS.items())),
        shell:
            "python -m mpiguide verify-report --tests {input.tests:q}"
            " --decided-with {input.decided_with:q} --tuned-algorithms {input.tuned:q}"
            " --pairs-json {params.pairs:q}"
            " --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"

    rule verify:
        input:
            f"{RESULTS}/{VERIFY_MD}",
            [f"{VERIFY}/{entry}.md" for entry in VERIFY_PAIRS],

    localrules:
        verify,
        verify_entry,
        verify_report,
