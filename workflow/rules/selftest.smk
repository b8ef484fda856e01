# The self-test (docs/trust.md): false-positive and detection rates of this campaign's verdicts,
# for a campaign built like config/campaigns/selftest.yaml (identical entries and copies slowed
# by libmpiguide-inject, compared by `mpi` selectors). Not part of `all`: run it as
#   snakemake --profile profiles/local --configfile config/campaigns/selftest.yaml selftest
# Like the guideline check it reads only the run medians, so it never re-measures; the run logs
# are read to prove that every slowed run was slowed.


rule selftest:
    input:
        medians=f"{RESULTS}/medians.parquet",
    output:
        csv=f"{RESULTS}/selftest.csv",
        plot=f"{RESULTS}/selftest.png",
    params:
        config=as_json(config),
        run_logs=f"{RESULTS}/logs/run",
    log:
        f"{RESULTS}/logs/selftest.log",
    conda:
        "../envs/analysis.yaml"
    shell:
        "python -m mpiguide.selftest --config-json {params.config:q}"
        " --medians {input.medians:q} --run-logs {params.run_logs:q}"
        " --csv {output.csv:q} --plot {output.plot:q} 2> {log:q}"
