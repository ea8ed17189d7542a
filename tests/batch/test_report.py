"""A batch's exit status and summary: 0, 1 if any file failed, a single file's own code, 130 on Ctrl-C."""

from __future__ import annotations

import json
from pathlib import Path

from oxi_cli.batch.report import BatchReport, FileRecord
from oxi_cli.ops import Cdl, Lut3d
from oxi_cli.ops.base import describe_op


def rec(name: str, status: str, **kw: object) -> FileRecord:
    return FileRecord(Path(name), Path("out") / name, status=status, **kw)  # type: ignore[arg-type]


def test_all_ok_or_skipped_is_success():
    assert BatchReport([rec("a", "ok"), rec("b", "skipped")], single=False).return_code() == 0


def test_any_failure_in_a_batch_is_1_whatever_its_kind():
    r = BatchReport([rec("a", "ok"), rec("b", "failed", exit_code=2, error="b: truncated")], single=False)
    assert r.return_code() == 1
    assert any("failed: b: truncated" in line for line in r.summary())


def test_a_single_file_keeps_its_error_code():
    assert BatchReport([rec("a", "failed", exit_code=2, error="x")], single=True).return_code() == 2


def test_missing_frames_fail_the_batch_and_are_listed_once_as_ranges():
    missing = [rec(f"p.{f}", "missing", frame=f, required=True) for f in (1003, 1004, 1010)]
    report = BatchReport([rec("a", "ok"), *missing], single=False)
    assert report.return_code() == 1
    lines = report.summary()
    assert "  missing frames: 1003-1004, 1010 (3 frames)" in lines
    assert sum("1003" in line for line in lines) == 1


def test_interrupted_is_130_and_says_nothing_partial_was_left():
    r = BatchReport([rec("a", "ok"), rec("b", "interrupted"), rec("c", "not_started")], single=False,
                    interrupted=True)
    assert r.return_code() == 130
    assert "1 done, 1 interrupted, 1 not started" in r.summary()[0]
    assert "no partial outputs" in r.summary()[-1]


def test_records_are_json_with_every_field_and_no_tables():
    lut = Lut3d(table=__import__("numpy").zeros((2, 2, 2, 3), "float32"))
    r = rec("a.exr", "ok", ops=[describe_op(Cdl(sat=0.5)), describe_op(lut)], seconds=1.5)
    doc = json.loads(json.dumps(r.as_json()))
    for key in ("input", "output", "ops", "backend", "device", "strategy", "seconds", "peak_memory_bytes", "status",
                "error", "started", "finished"):
        assert key in doc
    assert doc["ops"][0] == {"op": "cdl", "slope": [1.0, 1.0, 1.0], "offset": [0.0, 0.0, 0.0],
                             "power": [1.0, 1.0, 1.0], "sat": 0.5, "style": "noclamp"}
    assert doc["ops"][1]["table_shape"] == [2, 2, 2, 3]
