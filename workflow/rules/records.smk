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
    params:
        text=lambda wildcards: OPTION_RECORDS[wildcards.record].text,
    run:
        write_record(output[0], params.text)
        Path(log[0]).write_text(f"{output[0]}: {params.text}\n", encoding="utf-8")


localrules:
    options_record,
