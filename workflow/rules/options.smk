# The options records (mpiguide.campaign.options_record): results/<campaign>/options/<name>.json
# holds the options its consumers were last run with. Read here, after every other rule is
# defined: a record that differs from the config forces its consumers, wherever the invocation's
# targets need them (Snakemake runs what follows them as always); rule options_record
# (records.smk) writes it again once they succeeded. Nothing takes a record as an input, so
# writing one re-runs nothing. The `analysis:` block and the guideline selection have one store,
# check's decided_with.json: one that differs forces the analysis (and an adaptive campaign's
# plans); every later analysis job takes it as an input, so follows.

from mpiguide.campaign.options_record import (
    OPTIONS_TREE,
    OptionRecord,
    changed_records,
    forced_rules,
    record_path,
    write_missing_records,
)
from mpiguide.analysis.analysis_types import decided_with_differs
from mpiguide.campaign.raw_guard import GRID_RECORD, SEED_RECORD, planned_from
from mpiguide.reports.models import model_options
from mpiguide.campaign.snakemake_internals import (
    force_as_dag_is_built,
    is_main_process,
    plain_outputs,
    snakemake_rule,
)

PLANNED_BY = {GRID_RECORD: ("grid",), SEED_RECORD: ("inputs",)}
# Each record: the options, and the rules that read them (aggregate_round exists in adaptive
# campaigns only).
OPTION_RECORDS = {
    record.name: record
    for record in (
        # Which runs the aggregate joins: a removed deployment or entry re-aggregates too.
        OptionRecord.of(
            "campaign",
            {
                "mpi": list(MPI),
                "deployments": config["deployments"],
                "runs": config["runs"],
            },
            ("aggregate", "aggregate_round"),
        ),
        OptionRecord.of("plots", config["plots"], ("analyse",)),
        OptionRecord.of("fail_on", config["fail_on"], ("analyse", "fail_on")),
        OptionRecord.of(
            "models",
            {"models": config["models"], "analysis": model_options(config["analysis"])},
            ("fit_models",),
        ),
        # What every run's input is planned from (the raw guard reads these two).
        *(
            OptionRecord.of(name, value, PLANNED_BY[name])
            for name, (_, value) in planned_from(CAMPAIGN).items()
        ),
    )
}
OPTION_RECORD_FILES = [record_path(RESULTS, name) for name in OPTION_RECORDS]
# Read after common.smk's raw guard, which may have moved the planning records aside.
CHANGED_RECORDS = changed_records(RESULTS, OPTION_RECORDS.values())
DECIDED_WITH = GUIDELINE_OUTPUTS[DECIDED_WITH_JSON]
# plan_round exists in adaptive campaigns only.
DECIDED_WITH_READERS = ("analyse", "plan_round")
DECIDED_WITH_CHANGED = decided_with_differs(
    Path(DECIDED_WITH), config["analysis"], config["guidelines"]
)


def defined_rule(name: str):
    """The rule `name` of this workflow (as a module, under whatever name it is used), or None."""
    return snakemake_rule(rules, name)


# The consumers whose outputs a record's job waits for: those `all` asks for.
WAITED_CONSUMERS = {
    "analyse", "aggregate", "grid",
    *(["fit_models"] if config["models"] else []),
    *(["fail_on"] if GATE_TARGETS else []),
}  # fmt: skip


def consumer_outputs(wildcards) -> list:
    """What a record's job waits for: its consumers' outputs, the same files whether the record
    changed or not (Snakemake re-runs a job whose input list changed). `ancient` unless the
    record changed: only then does a consumer that runs make its job run."""
    record = OPTION_RECORDS[wildcards.record]
    outputs = []
    for name in record.consumers:
        consumer = defined_rule(name)
        files = None if consumer is None else plain_outputs(consumer)
        if files is not None and name in WAITED_CONSUMERS:
            outputs += files
    # Every run's input, a job each; aggregate_round and plan_round run before aggregate and
    # analyse.
    if "inputs" in record.consumers:
        outputs += run_inputs(wildcards)
    return outputs if record in CHANGED_RECORDS else [ancient(path) for path in outputs]


# Only the Snakemake the user started decides what runs: the jobs it spawns (a SLURM job) read
# the rules again and must force nothing. Snakemake sets its DAG settings only after reading
# the rules, and `--forcerun` would also make every rule it names a target; so the changed
# records' consumers are forced in the DAG itself, as it is built, and only where the targets
# need them (docs/workflow.md, "Snakemake internals we use").
if is_main_process(workflow) and (CHANGED_RECORDS or DECIDED_WITH_CHANGED):
    FORCED = {
        **{
            record_path(RESULTS, changed.name): changed.consumers
            for changed in CHANGED_RECORDS
        },
        **({DECIDED_WITH: DECIDED_WITH_READERS} if DECIDED_WITH_CHANGED else {}),
    }
    for path, names in FORCED.items():
        consumers = ", ".join(name for name in names if defined_rule(name))
        logger.info(
            f"mpiguide: {path} holds other options than the config: forcing, where the "
            f"targets need them, {consumers}"
        )

    def forced_consumers():
        """The changed records' consumers, and their own jobs by their files (rule
        options_record is defined after this file, in records.smk)."""
        names = set(forced_rules(CHANGED_RECORDS))
        names |= set(DECIDED_WITH_READERS) if DECIDED_WITH_CHANGED else set()
        consumers = [
            consumer
            for consumer in map(defined_rule, sorted(names))
            if consumer is not None
        ]
        pattern = rules.options_record.output[0]
        return consumers, expand(
            pattern, record=[changed.name for changed in CHANGED_RECORDS]
        )

    force_as_dag_is_built(workflow, forced_consumers)


# A missing record holds the current options from the start of every invocation that runs a
# job (never a dry run), whatever its targets: the raw guard reads the planning records of the
# runs it measures.
onstart:
    if is_main_process(workflow):
        write_missing_records(RESULTS, OPTION_RECORDS.values())
