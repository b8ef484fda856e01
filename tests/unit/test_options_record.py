"""Option records: a record per value, named by its digest, made by a job (nothing written while
the workflow is read); writing one removes its name's others, so a value changed back is a
missing record again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpiguide.campaign.options_record import OptionRecords, as_json, digest, write_record


def test_a_record_path_names_its_value_and_changes_only_with_it(tmp_path) -> None:
    records = OptionRecords(str(tmp_path / "options"))
    value = {"p_thres": 0.001, "v_thres": 1.03}
    first = records.path("analysis", value)
    assert first == records.path("analysis", {"v_thres": 1.03, "p_thres": 0.001})  # canonical
    assert first == f"{tmp_path}/options/analysis-{digest(as_json(value))}.json"
    other = OptionRecords(str(tmp_path / "options")).path("analysis", {"p_thres": 0.01})
    assert other != first
    assert records.paths() == [first]  # the targets of `all`
    assert not (tmp_path / "options").exists()  # naming a record writes nothing


def test_the_rule_writes_the_text_its_path_names(tmp_path) -> None:
    records = OptionRecords(str(tmp_path / "options"))
    path = records.path("seed", 7)
    name, hexdigest = path.rsplit("/", 1)[1].removesuffix(".json").rsplit("-", 1)
    assert records.pattern.format(name=name, digest=hexdigest) == path
    write_record(path, records.text(name, hexdigest))
    assert json.loads(Path(path).read_text()) == 7


def test_one_name_holds_one_value(tmp_path) -> None:
    records = OptionRecords(str(tmp_path))
    records.path("seed", 7)
    with pytest.raises(ValueError, match="'seed' is given two values"):
        records.path("seed", 8)
    with pytest.raises(ValueError, match="option record name"):
        records.path("Seed-1", 8)


def test_writing_a_record_removes_its_name_s_others(tmp_path) -> None:
    """Changed back, a value names a missing record again rather than one older than the
    outputs the changed value made."""
    options = tmp_path / "options"
    old = OptionRecords(str(options)).path("analysis", {"p_thres": 0.001})
    new = OptionRecords(str(options)).path("analysis", {"p_thres": 0.01})
    models = OptionRecords(str(options)).path("models", [])
    write_record(old, "a")
    write_record(models, "[]")
    (options / "analysis.json").write_text("a record of an older workflow")
    write_record(new, "b")
    assert sorted(p.name for p in options.iterdir()) == sorted(
        ["analysis.json", new.rsplit("/", 1)[1], models.rsplit("/", 1)[1]]
    )
