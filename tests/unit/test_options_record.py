"""Option records: rewritten (newer) only when the options change; a new record is old."""

import os

from mpiguide.campaign.options_record import record


def test_a_record_changes_only_with_its_text(tmp_path):
    path = tmp_path / "options" / "analysis.json"
    assert record(path, '{"p_thres":0.001}') == str(path)
    assert path.stat().st_mtime == 0  # new: older than every output
    os.utime(path, (100, 100))
    record(path, '{"p_thres":0.001}')
    assert path.stat().st_mtime == 100  # same options: untouched
    record(path, '{"p_thres":0.01}')
    assert path.read_text() == '{"p_thres":0.01}'
    assert path.stat().st_mtime > 100  # changed: newer than the outputs built before
    assert [p.name for p in path.parent.iterdir()] == ["analysis.json"]


def test_a_dry_run_stages_a_changed_record_and_leaves_the_results_alone(tmp_path):
    path = tmp_path / "options" / "analysis.json"
    record(path, '{"v_thres":1.03}')
    os.utime(path, (100, 100))
    assert record(path, '{"v_thres":1.03}', dry_run=True) == str(path)  # unchanged: itself
    staged = record(path, '{"v_thres":1.5}', dry_run=True)
    assert staged != str(path)
    assert path.read_text() == '{"v_thres":1.03}'
    assert path.stat().st_mtime == 100
    assert os.path.getmtime(staged) > 100  # newer than the outputs: the dry run lists the jobs
    new = tmp_path / "options" / "models.json"
    assert record(new, "[]", dry_run=True) != str(new)
    assert not new.exists()
