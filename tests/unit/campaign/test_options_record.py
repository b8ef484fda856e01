"""Option records: read while the workflow is read (which rules a change forces), written by a
job or, when missing, as an invocation starts."""

import json
import os
from pathlib import Path

import pytest

from mpiguide.campaign.options_record import (
    OptionRecord,
    as_json,
    canonical_json,
    changed_records,
    forced_rules,
    record_path,
    recorded_text,
    write_missing_records,
    write_record,
)
from mpiguide.cli.arguments import parse_json

RESULTS = "results/c"
ANALYSIS = OptionRecord.of("analysis", {"v_thres": 1.03}, ("check_guidelines", "plot"))
FAIL_ON = OptionRecord.of("fail_on", "never", ("check_guidelines", "fail_on"))
SEED = OptionRecord.of("seed", 7, ("inputs",))


def test_a_record_holds_the_canonical_json_of_its_options() -> None:
    assert ANALYSIS.text == canonical_json({"v_thres": 1.03}) == '{"v_thres":1.03}'
    assert record_path(RESULTS, "analysis") == "results/c/options/analysis.json"


def test_only_a_record_that_holds_other_options_has_changed(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_record(record_path(RESULTS, "analysis"), '{"v_thres":1.5}')
    write_record(record_path(RESULTS, "fail_on"), FAIL_ON.text)
    # seed: no record at all (results made before records, or options/ deleted)
    assert changed_records(RESULTS, [ANALYSIS, FAIL_ON, SEED]) == [ANALYSIS]
    write_record(record_path(RESULTS, "fail_on"), "{not json")
    assert changed_records(RESULTS, [ANALYSIS, FAIL_ON, SEED]) == [ANALYSIS, FAIL_ON]


def test_the_forced_rules_are_every_consumer_of_a_changed_record_once() -> None:
    assert forced_rules([ANALYSIS, FAIL_ON]) == ["check_guidelines", "fail_on", "plot"]
    assert forced_rules([]) == []


def test_a_record_is_written_whole_and_alone(tmp_path) -> None:
    path = tmp_path / "options" / "analysis.json"
    write_record(path, '{"p_thres":0.001}')
    write_record(path, '{"p_thres":0.01}')
    assert recorded_text(path) == '{"p_thres":0.01}'
    assert [p.name for p in path.parent.iterdir()] == ["analysis.json"]
    assert recorded_text(tmp_path / "options" / "seed.json") is None


def test_only_missing_records_are_written_as_an_invocation_starts(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    changed = Path(record_path(RESULTS, "analysis"))
    write_record(changed, '{"v_thres":1.5}')
    os.utime(changed, (100, 100))
    written = write_missing_records(RESULTS, [ANALYSIS, FAIL_ON, SEED])
    assert written == [record_path(RESULTS, "fail_on"), record_path(RESULTS, "seed")]
    assert recorded_text(record_path(RESULTS, "seed")) == "7"
    # A changed record waits for its consumers: left as it was.
    assert changed.read_text() == '{"v_thres":1.5}' and changed.stat().st_mtime == 100
    assert write_missing_records(RESULTS, [ANALYSIS, FAIL_ON, SEED]) == []


# A guideline of a campaign file, as Snakemake's report would embed it among a job's params.
MARKUP = {
    "id": "mine",
    "source": "<script>alert('src')</script>",
    "text": "a ≼ b <b onmouseover=alert(2)>mock</b> & co",
}


def test_a_param_holds_no_markup_characters_and_the_same_value() -> None:
    param = as_json([MARKUP])
    assert param == (
        '[{"id":"mine","source":"\\u003cscript\\u003ealert(\'src\')\\u003c/script\\u003e",'
        '"text":"a \\u227c b \\u003cb onmouseover=alert(2)\\u003emock\\u003c/b\\u003e'
        ' \\u0026 co"}]'
    )
    assert not {"<", ">", "&"} & set(param)
    assert json.loads(param) == [MARKUP]
    # the commands of the workflow read it back unchanged
    assert parse_json(param, "--guidelines-json", list) == [MARKUP]


@pytest.mark.parametrize(
    "value",
    [
        {"analysis": {"v_thres": 1.03, "varied": "msg_size"}, "guidelines": ["GL4"]},
        [{"id": "mine", "text": 'a ≼ b, "quoted" \\ back-slashed', "source": "ours"}],
        "never",
        7,
    ],
)
def test_a_param_without_markup_characters_is_the_canonical_json(value: object) -> None:
    """Params of campaigns without `<`, `>`, `&` are what they were: nothing re-runs."""
    assert as_json(value) == canonical_json(value)
    assert canonical_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_a_record_keeps_markup_characters_as_written() -> None:
    """Records hold the text measured runs were planned with, `where: "msg_size < 1024"` too."""
    spec = {"nrep": 5, "experiments": [{"op": "allgather", "where": "msg_size < 1024"}]}
    record = OptionRecord.of("grid", spec, ("grid",))
    assert record.text == '{"experiments":[{"op":"allgather","where":"msg_size < 1024"}],"nrep":5}'
