# The option records (OPTION_RECORDS, common.smk; mpiguide.campaign.options_record): a rule
# input `options/<name>-<digest>.json` per option set a rule depends on. A changed value names a
# record not made yet: this job makes it, and the rules that read it run again, whether or not
# .snakemake/ holds their params.

from mpiguide.campaign.options_record import DIGEST, NAME, write_record


rule record_options:
    output:
        OPTION_RECORDS.pattern,
    log:
        f"{RESULTS}/logs/options/{{name}}-{{digest}}.log",
    wildcard_constraints:
        name=NAME.pattern,
        digest=DIGEST.pattern,
    params:
        text=lambda wildcards: OPTION_RECORDS.text(wildcards.name, wildcards.digest),
    run:
        write_record(output[0], params.text)


# A file write: under SLURM it runs where Snakemake runs.
localrules:
    record_options,
