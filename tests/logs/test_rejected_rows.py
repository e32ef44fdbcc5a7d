"""Rows the parser cannot split into columns (a CSV record with the wrong
cell count, a JSON Lines line that is not an object): kept in the quarantine
as recorded, whole up to the cell limit, and a record that an unclosed quote
stretched over many lines says where the quote opened and which lines it
took, so an officer can find the rows in the file."""

from __future__ import annotations

import hashlib
import json
import re

import pyarrow.parquet as pq
import pytest
from builder import lawful_table, report_provenance
from builder import run_cli as run

from auditor.logs.raw import CELL_KEEP_CHARS, MAX_CELL_BYTES

HEAD = "table_id,seq,ts,event,actor_role,actor_id\n"


def row(seq: int, event: str = "staff_on", role: str = "dealer", actor: str = "D1") -> str:
    return f"T1,{seq},2026-03-01T20:00:{seq:02d}Z,{event},{role},{actor}\n"


def quarantine(out) -> list[dict]:
    return pq.read_table(out / "quarantine.parquet").to_pylist()


def audit(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out"
    res = run("check", path, "-r", "nz-table-games", "--out", out)
    assert res.exit_code in (0, 1), res.output
    return res, quarantine(out), report_provenance(out)


@pytest.mark.parametrize("length", [3_000, MAX_CELL_BYTES - 100])
def test_a_row_with_the_wrong_cell_count_is_kept_whole(tmp_path, length):
    bad = "T1,2,2026-03-01T20:00:02Z,staff_on,dealer,D1,extra," + "x" * length
    data = (HEAD + row(1, "table_open", "game_supervisor") + bad + "\n" + row(3)).encode()
    _, q, md = audit(tmp_path, "log.csv", data)
    assert md["rows"] == {"read": 3, "replayed": 2, "quarantined": 1}
    assert [(r["source_line"], r["reason"]) for r in q] == [
        (3, "row has 8 cells, the header has 6")]
    assert json.loads(q[0]["raw"]) == {"text": bad}


def test_a_line_that_is_not_json_is_kept_whole(tmp_path):
    b = lawful_table()
    lines = [json.dumps(r) for r in b.rows]
    bad = '{"table_id": "T1", "note": "' + "y" * 5_000 + '", broken'
    lines.insert(3, bad)
    _, q, md = audit(tmp_path, "log.jsonl", ("\n".join(lines) + "\n").encode())
    assert md["rows"]["read"] == len(lines) and md["rows"]["quarantined"] >= 1
    rejected = [r for r in q if r["source_line"] == 4]
    assert json.loads(rejected[0]["raw"]) == {"text": bad}


def test_a_rejected_row_over_the_cell_limit_keeps_its_start_length_and_hash(tmp_path):
    bad = "T1,2,2026-03-01T20:00:02Z,staff_on,dealer,D1,extra," + "é" * MAX_CELL_BYTES
    data = (HEAD + row(1, "table_open", "game_supervisor") + bad + "\n" + row(3)).encode()
    _, q, md = audit(tmp_path, "log.csv", data)
    assert md["rows"] == {"read": 3, "replayed": 2, "quarantined": 1}
    text = json.loads(q[0]["raw"])["text"]
    whole = bad.encode()
    assert text == (f"{bad[:CELL_KEEP_CHARS]}… [{len(bad)} characters, {len(whole)} bytes, "
                    f"truncated; SHA-256 of the whole row: {hashlib.sha256(whole).hexdigest()}]")


# --- an unclosed quote ------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["role", "last column"])
def test_an_unclosed_quote_says_where_it_opened_and_what_it_took(tmp_path, where):
    """The quote on line 4 is never closed: the records on lines 4-8 are one
    record, quarantined (in the last column it still has as many cells as
    the header); lines 2-3 are read as they are."""
    bad = ('T1,3,2026-03-01T20:00:03Z,staff_on,"dealer,D3\n' if where == "role" else
           'T1,3,2026-03-01T20:00:03Z,staff_on,dealer,"D3\n')
    body = [row(1, "table_open", "game_supervisor"), row(2), bad, row(4), row(5), row(6),
            row(7)]
    _, q, md = audit(tmp_path, "log.csv", (HEAD + "".join(body)).encode())
    assert md["rows"] == {"read": 3, "replayed": 2, "quarantined": 1}
    reason = ("a quote opened on line 4 is never closed: the record took 5 lines (4-8), "
              "to the end of the file")
    assert [r["source_line"] for r in q] == [4] and q[0]["reason"].endswith(reason)
    raw = json.loads(q[0]["raw"])
    kept = raw["text"] if where == "role" else raw["actor_id"]
    assert all(r.strip() in kept for r in body[3:])  # every line it took, kept
    res = run("validate", tmp_path / "log.csv")
    assert re.search(r"log\.csv:4: .*\[log\.malformed\] row quarantined: .*a quote opened "
                     r"on line 4 is never closed", res.output), res.output


def test_a_value_over_lines_whose_quote_closes_is_a_value(tmp_path):
    """A last cell closed properly after its line breaks (a note over two
    lines) is read as recorded."""
    body = [row(1, "table_open", "game_supervisor"),
            'T1,2,2026-03-01T20:00:02Z,staff_on,dealer,"D\n2"\n', row(3)]
    _, q, md = audit(tmp_path, "log.csv", (HEAD + "".join(body)).encode())
    assert md["rows"]["read"] == 3 and not [r for r in q if "quote" in r["reason"]]


def test_a_quote_closed_lines_later_says_where_it_opened_and_closed(tmp_path):
    body = [row(1, "table_open", "game_supervisor"),
            'T1,2,2026-03-01T20:00:02Z,staff_on,"dealer,D2\n', row(3),
            'T1,4,2026-03-01T20:00:04Z,staff_on,dealer",D4,x,y\n', row(5)]
    _, q, md = audit(tmp_path, "log.csv", (HEAD + "".join(body)).encode())
    assert md["rows"] == {"read": 3, "replayed": 2, "quarantined": 1}
    assert q[0]["source_line"] == 3
    assert q[0]["reason"] == ("row has 8 cells, the header has 6; a quote opened on line 3 "
                              "closes on line 5: the record took 3 lines (3-5)")


def test_an_unclosed_quote_in_a_file_larger_than_a_parse_block(tmp_path):
    """The quote swallows 8 MiB of records (more than the 4 MiB Arrow parses
    at a time): still one quarantined record, located, and every row before
    it read."""
    body = [row(1, "table_open", "game_supervisor"),
            'T1,2,2026-03-01T20:00:02Z,staff_on,"dealer,D2\n']
    filler = row(3) * ((8 << 20) // len(row(3)))
    _, q, md = audit(tmp_path, "log.csv", (HEAD + "".join(body) + filler).encode())
    assert md["rows"] == {"read": 2, "replayed": 1, "quarantined": 1}
    lines = filler.count("\n") + 1
    assert q[0]["reason"].endswith(f"a quote opened on line 3 is never closed: the record took "
                                   f"{lines} lines (3-{lines + 2}), to the end of the file")
    assert "SHA-256 of the whole row" in json.loads(q[0]["raw"])["text"]
