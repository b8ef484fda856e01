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
