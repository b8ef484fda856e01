# The options records' jobs (options.smk): each writes a record once the consumers it waits for
# succeeded; `all` asks for every record.

from mpiguide.core.paths import LOGS_TREE


rule options_record:
    input:
        consumer_outputs,
    output:
        record_path(RESULTS, "{record}"),
    log:
        f"{RESULTS}/{LOGS_TREE}/{OPTIONS_TREE}/{{record}}.log",
    wildcard_constraints:
        record="|".join(re.escape(name) for name in OPTION_RECORDS),
    # Before a run that a planning record's new values planned: the next invocation's raw
    # guard reads it.
    priority: 100
    conda:
        "../envs/analysis.yaml"
    params:
        text=lambda wildcards: OPTION_RECORDS[wildcards.record].text,
    # A shell command, not `run:`: Snakemake runs a `run:` job in a new Snakemake process that
    # reads the whole workflow again, seconds at the end of each forcing invocation. The record
    # reaches the command quoted, on standard input (printf is bash's own: no argument limit).
    shell:
        "printf '%s' {params.text:q} | python -m mpiguide record --out {output:q} > {log:q} 2>&1"


localrules:
    options_record,
