"""JSON Lines that crashed or stopped the whole audit: nesting that took the
process down with a segmentation fault (exit 139, nothing printed), text that
is not valid Unicode. Each now quarantines its line, every row accounted for."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from builder import report_provenance, run_cli
from real_process import run_real

from auditor.logs import jsonl_format
from auditor.logs.jsonl_format import MAX_JSON_DEPTH

OPEN = {"table_id": "T1", "seq": 1, "ts": "2026-03-01T20:00:00+00:00", "event": "table_open",
        "actor_role": "game_supervisor"}
CLOSE = dict(OPEN, seq=2, ts="2026-03-01T20:00:05+00:00", event="table_close")


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _with_note(row: dict, note_json: str) -> str:
    return json.dumps(row)[:-1] + f', "note": {note_json}}}'


def _quarantine(out) -> list[tuple[int, str]]:
    q = pq.read_table(out / "quarantine.parquet").to_pylist()
    return [(r["source_line"], r["reason"]) for r in q]


def test_twenty_thousand_nested_objects_quarantine_the_line_in_a_real_process(tmp_path):
    """A 140 KB file: Arrow's reader crashed the process (exit 139)."""
    path = tmp_path / "deep.jsonl"
    path.write_text(_with_note(OPEN, _nested(20_000)) + "\n" + json.dumps(CLOSE) + "\n")
    proc = run_real("check", path, "-r", "nz-1996", "--out", tmp_path / "out", timeout=60)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert report_provenance(tmp_path / "out")["rows"] == {
        "read": 2, "replayed": 1, "quarantined": 1}
    reason = f"nested more than {MAX_JSON_DEPTH} levels deep"
    assert _quarantine(tmp_path / "out") == [(1, reason)]
    proc = run_real("validate", path, timeout=60)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert f"deep.jsonl:1: [log.malformed] row quarantined: {reason}" in proc.stdout


def test_the_nesting_limit_is_exact(tmp_path):
    """MAX_JSON_DEPTH levels read (the nested value kept as JSON text), one
    more quarantines the line; brackets inside strings are not nesting."""
    path = tmp_path / "deep.jsonl"
    lines = [_with_note(OPEN, _nested(MAX_JSON_DEPTH - 1)),            # depth 512 in all
             _with_note(dict(OPEN, seq=2), _nested(MAX_JSON_DEPTH)),   # 513
             _with_note(dict(OPEN, seq=3), json.dumps("{[" * 5000 + "\\\"}")),
             json.dumps(dict(CLOSE, seq=4))]
    path.write_text("\n".join(lines) + "\n")
    res = run_cli("check", path, "-r", "nz-1996", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    assert report_provenance(tmp_path / "out")["rows"] == {
        "read": 4, "replayed": 3, "quarantined": 1}
    assert _quarantine(tmp_path / "out") == [(2, f"nested more than {MAX_JSON_DEPTH} levels deep")]


def test_closing_brackets_in_a_string_do_not_hide_nesting(tmp_path):
    path = tmp_path / "hidden.jsonl"
    line = json.dumps(dict(OPEN, flags="}]" * 30_000))[:-1] + f', "note": {_nested(20_000)}}}'
    path.write_text(line + "\n" + json.dumps(CLOSE) + "\n")
    proc = run_real("check", path, "-r", "nz-1996", "--out", tmp_path / "out", timeout=60)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert _quarantine(tmp_path / "out") == [(1, f"nested more than {MAX_JSON_DEPTH} levels deep")]


def test_a_lone_surrogate_quarantines_its_row_and_every_report_is_written(tmp_path):
    """`\\ud800` in a JSON string is no text (it cannot be written as UTF-8):
    it stopped the audit with `internal error: UnicodeEncodeError`."""
    path = tmp_path / "surrogate.jsonl"
    lines = [json.dumps(OPEN), json.dumps(dict(OPEN, seq=2, actor_id="K\ud800")),
             json.dumps(dict(OPEN, seq=3, **{"n\udfffote": "x"})), json.dumps(dict(CLOSE, seq=4))]
    path.write_text("\n".join(lines) + "\n")
    assert "\\ud800" in path.read_text()  # as JSON writes it
    args = ["check", path, "-r", "nz-1996", "--out", tmp_path / "out"]
    for name in ("parquet", "html", "json", "sarif", "junit", "csv"):
        args += ["--format", name]
    res = run_cli(*args)
    assert res.exit_code == 1, res.output
    assert report_provenance(tmp_path / "out")["rows"] == {
        "read": 4, "replayed": 2, "quarantined": 2}
    q = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pylist()
    assert [(r["source_line"], r["table_id"], r["seq"], r["reason"]) for r in q] == [
        (2, "T1", 2, "actor_id is not text: it holds a lone surrogate \\ud800"),
        (3, None, None, "a column name is not text: it holds a lone surrogate \\udfff")]
    assert json.loads(q[0]["raw"])["actor_id"] == "K\\ud800"
    res = run_cli("validate", path)
    assert res.exit_code == 1, res.output
    assert "surrogate.jsonl:2: T1 seq 2 [log.malformed] row quarantined: actor_id is not " \
           "text: it holds a lone surrogate \\ud800" in res.output


def test_lines_are_screened_across_the_scan_blocks(monkeypatch):
    """Whether every line opens an object or is blank (Arrow's reader is
    given the file only then), and which lines are objects, is found a
    block of bytes at a time: a line break at a block's last byte, an empty
    line across two blocks, a blank line of white space and the break that
    ends the file are each seen as a line-at-a-time count sees them."""
    monkeypatch.setattr(jsonl_format, "SCAN_BYTES", 4)
    for data, lines in [(b'{"a":1}\n{"b":2}\n', [0, 1]), (b'{"a":1}\n{"b":2}', [0, 1]),
                        (b'{"a":}\n{"b":2}\n', [0, 1]), (b'{"a":1}\n\n{"b":2}\n', [0, 2]),
                        (b'{"a":1}\n{"b":2}\n\n', [0, 1]), (b'\n{"a":1}\n', [1]),
                        (b'{"a":1}\n [1]\n', None), (b'{}\n{}\n{}', [0, 1, 2]), (b"{", [0]),
                        (b'{"a":1}\n \t\r\n\r\n{"b":2}\n  ', [0, 3]), (b"\n\n", None),
                        (b" \n", None), (b' {"a":1}\n', None), (b'{"a":1}\r\n\r\n\r', [0]),
                        (b'{"a":1}\n\r\r\n{}', [0, 2]),
                        (b'{"a":1}\n\rx\n', None)]:
        found = jsonl_format._object_lines(data)
        assert (None if found is None else found.tolist()) == lines, data
        split = [ln for ln in data.split(b"\n")]
        if split[-1] == b"":
            split.pop()
        objects = [k for k, ln in enumerate(split) if ln.startswith(b"{")]
        screened = objects and all(ln.startswith(b"{") or not ln.strip() for ln in split)
        assert lines == (objects if screened else None), data
