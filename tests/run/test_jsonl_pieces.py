"""One large JSON Lines file split across workers by bytes
(`auditor.run.pieces`, `auditor.logs.line_runs`): each cut falls at a line
start between two runs of one table's lines, every line is audited once and
numbered as in the file, and the findings, quarantine, provenance and every
report are those of one reading of the file; what pieces cannot judge alone
is judged on the whole file."""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
from pathlib import Path

import pyarrow as pa
import pytest
from pieces_check import (
    audited_in_budget_pieces,
    dask_audits_the_same,
    errors_whole_and_split,
    files_read_whole,
    held_pieces,
    interleaved_tables_sorted_out,
    lacking_die1_errs_as_one_reading,
    line_starts,
    one_byte_encoding_cut_as_one_reading,
    reports_the_same_split_or_not,
    same_as_once,
    split_as_one_reading,
)

from auditor.generate import INJECTABLE, generate, write_log
from auditor.logs import jsonl_format, line_runs, raw
from auditor.logs.load import load_logs
from auditor.logs.raw import ReadOptions
from auditor.logs.read import read_log
from auditor.report.html import COLLECTOR
from auditor.run import AuditJob, pieces, run_audit


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """A JSON Lines file of five tables in runs of lines, every code planted,
    two lines to quarantine (no table; a seq that is not a number) and a
    column of the log's own on every fifth line (text to escape)."""
    path = tmp_path_factory.mktemp("jsonl-pieces") / "night.jsonl"
    write_log(generate(5, 60, seed=41, inject=list(INJECTABLE)).table, path)
    lines = path.read_bytes().split(b"\n")[:-1]
    rows = [json.loads(line) for line in lines]
    for k, row in enumerate(rows):
        if k % 5 == 0:
            row["note"] = f"<b>note {k}</b>"
    del rows[7]["table_id"]
    t02 = next(k for k, row in enumerate(rows) if row.get("table_id") == "T02")
    rows[t02 + 40]["seq"] = "forty"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def split(monkeypatch, tmp_path):
    """Pieces planned for small JSON Lines files (one a worker); the byte
    ranges each audited piece held."""
    monkeypatch.setattr(pieces, "TEXT_PIECE_ROWS", 300)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    return held_pieces(monkeypatch, tmp_path)


def _run_bounds(data: bytes) -> list[int]:
    """Every line start at which a run of one `table_id` (as written) starts,
    and the file's end, worked out line by line with json."""
    starts = line_starts(data)
    ids = []
    for a, b in zip(starts, starts[1:] + [len(data)]):
        try:
            ids.append(json.dumps(json.loads(data[a:b]).get("table_id", "(none)")))
        except ValueError:
            ids.append(None)
    return [s for k, s in enumerate(starts) if k == 0 or ids[k] != ids[k - 1]] + [len(data)]


def _once(path: Path, ruleset):
    return run_audit(AuditJob.loaded(ruleset), loaded=load_logs([path]))


# --- the cuts and the plan ---------------------------------------------------------------

@pytest.mark.parametrize(("block", "long"), [(7, False), (64, False), (1 << 18, False),
                                             (7, True), (64, True)])
def test_a_cut_falls_at_the_nearest_end_of_a_run_of_one_tables_lines(tmp_path, monkeypatch,
                                                                      block, long):
    """`line_cut_near` against the runs found line by line, for every byte:
    the start or end of the run of lines holding it, whichever is nearer;
    ids as text, numbers, null, absent, escaped; lines of any length,
    read a few bytes at a time or a block at a time. `long`: lines longer
    than `LONG_LINE_BYTES` among them, each a run of its own (a cut inside
    one falls at its start), never held whole."""
    monkeypatch.setattr(line_runs, "BLOCK_BYTES", block)
    monkeypatch.setattr(line_runs, "LONG_LINE_BYTES", 300)
    rng = random.Random(5)
    values = ["T1", "T2", 3, 31, None, "T\\\"4", "absent"]
    lines, longs = [], set()
    while len(lines) < 260:
        value = rng.choice(values)
        for _ in range(rng.choice([1, 2, 5, 17, 40])):
            row = {"seq": len(lines), "pad": "x" * rng.choice([0, 3, 90])}
            if long and rng.random() < .04:
                row["pad"] = "y" * 700
                longs.add(len(lines))
            if value != "absent":
                row = {"table_id": value, **row}
            lines.append(json.dumps(row, separators=(",", ":") if rng.random() < .5
                                    else (", ", ": ")))
    assert len(longs) > 5 or not long
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "ids.jsonl"
    path.write_bytes(data)
    starts = line_starts(data)
    long_starts = {starts[k] for k in longs}
    bounds = sorted(set(_run_bounds(data)) | long_starts
                    | {starts[k + 1] for k in longs if k + 1 < len(starts)})
    for offset in range(len(data) + 1):
        line = max(s for s in starts if s <= offset) if offset < len(data) else offset
        lo = max(b for b in bounds if b <= line)
        hi = min(b for b in bounds if b >= line)
        want = offset if offset in (0, len(data)) else line if line in long_starts else \
            (lo if line - lo <= hi - line else hi)
        assert line_runs.line_cut_near(path, offset) == want, offset


@pytest.mark.parametrize("block", [5, 64, 1 << 18])
def test_the_lines_about_a_cut_are_walked_in_whole_lines_each_byte_once(tmp_path, monkeypatch,
                                                                        block):
    """Lines longer than a block (up to 300 KB, one with no line break
    after it), walked back from a line start and on from one: the blocks
    are whole lines, start where they say, and together are the file's
    bytes on that side, each once. (A line longer than a block was once
    gathered by copying it again for every block read: a cut beside a line
    of 120 MB took 40 s; docs/performance.md, 2026-12-06 (7).)"""
    monkeypatch.setattr(line_runs, "BLOCK_BYTES", block)
    lengths = [3, 700, 0, 40, 300_000, 1, 9000, 2, 70_000]
    data = b"".join(b"x" * n + b"\n" for n in lengths) + b"y" * 5000
    path = tmp_path / "long.jsonl"
    path.write_bytes(data)
    starts = line_starts(data)
    with path.open("rb") as fh:
        for start in starts:
            back = list(line_runs._blocks_back(fh, start))
            assert b"".join(b for _, b in reversed(back)) == data[:start]
            on = list(line_runs._blocks_on(fh, start, len(data)))
            assert b"".join(b for _, b in on) == data[start:]
            for at, b in back + on:
                assert data[at:at + len(b)] == b and at in starts
                assert b.endswith(b"\n") or at + len(b) == len(data)


def test_a_line_longer_than_many_blocks_is_cut_about_and_audited_as_once(
        night, ruleset, tmp_path, split, monkeypatch):
    """A line of 200 KB (a long note) where the plan cuts, read 64 bytes at
    a time: the cuts fall about it and the audit is one reading's."""
    monkeypatch.setattr(line_runs, "BLOCK_BYTES", 64)
    lines = night.read_bytes().split(b"\n")[:-1]
    rows = [json.loads(line) for line in lines]
    rows[len(rows) // 2]["note"] = "n" * 200_000
    path = tmp_path / "long-line.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    once = _once(path, ruleset)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    assert len(split.rows()) == 2
    same_as_once(result, once, tmp_path)


def test_a_piece_reads_only_its_lines_each_numbered_as_in_the_file(night, tmp_path):
    """Bytes [a, b) of the file, at line starts: its rows and lines as the
    whole file's, the fast read's and the line-by-line read's (a line that
    is not JSON in the piece); only a piece asked to hashes the file."""
    whole = read_log(night)
    starts = line_starts(night.read_bytes())
    for a, b in [(0, 10), (99, 1001), (1234, len(starts))]:
        piece = read_log(night, piece=(starts[a], starts[b] if b < len(starts)
                                       else night.stat().st_size, a == 0))
        assert piece.lines.tolist() == whole.lines[a:b].tolist()
        assert [str(v) for v in piece.table.column("seq").to_pylist()] == \
            whole.table.column("seq").slice(a, b - a).to_pylist()  # (text: "forty" is)
        assert piece.sha256 == (whole.sha256 if a == 0 else "")
    broken = tmp_path / "broken.jsonl"
    text = night.read_bytes().split(b"\n")
    text[150] = b"{not json"
    broken.write_bytes(b"\n".join(text))
    starts = line_starts(broken.read_bytes())
    piece = read_log(broken, piece=(starts[100], starts[200], False))
    assert piece.rejected.lines == [151]
    assert piece.lines.tolist() == [n for n in range(101, 201) if n != 151]


def test_a_piece_told_the_breaks_before_an_offset_numbers_its_lines_as_the_file(night):
    """The first pass's count before a nominal offset, and the breaks
    between it and the piece's real start counted either way: the lines
    numbered as reading the file from its start numbers them."""
    data = night.read_bytes()
    starts = line_starts(data)
    whole = read_log(night)
    a, b = starts[400], starts[700]
    for offset in (0, a - 977, a - 1, a, a + 1, a + 2501, b):
        counted = (offset, data[:offset].count(b"\n"))
        piece = read_log(night, piece=(a, b, False, counted))
        assert piece.lines.tolist() == whole.lines[400:700].tolist(), offset


def test_the_first_pass_counts_every_share_but_the_last_once(night, monkeypatch):
    """A file cut in three or more: each piece but the last has its share
    counted, and each later piece is told the breaks before its nominal
    start; a share that could not be counted leaves the pieces after it to
    count for themselves. Cut in two, the second piece counts for itself."""
    monkeypatch.setattr(pieces, "TEXT_PIECE_ROWS", 300)
    data = night.read_bytes()
    plan = pieces.split([night], None, 4)
    shares = pieces.shares_to_count(plan)
    assert [s.part for s in shares] == [0, 1, 2]
    counts = [pieces.count_share(s) for s in shares]
    assert counts == [data[s.start:s.stop].count(b"\n") for s in shares]
    told = pieces.numbered(plan, shares, counts)
    assert [p.breaks for p in told] == [-1] + [data[:p.start].count(b"\n") for p in plan[1:]]
    assert [p.breaks for p in pieces.numbered(plan, shares, [counts[0], None, counts[2]])] \
        == [-1, counts[0], -1, -1]
    assert pieces.shares_to_count(pieces.split([night], None, 2)) == []
    night_gone = dataclasses.replace(shares[1], path=str(night) + ".gone")
    assert pieces.count_share(night_gone) is None


def test_a_file_cut_in_many_pieces_is_scanned_once_for_its_line_numbers(
        night, ruleset, tmp_path, split, monkeypatch):
    """Six pieces or more audited in turn: the line breaks counted are each
    share but the last once and the bytes between each later piece's
    nominal start and its real one, not every byte before every piece."""
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 1000)
    plan = pieces.split([night], None, 1)
    assert len(plan) >= 6
    counted: list[int] = []
    real = raw._line_breaks

    def spy(reader, count):
        counted.append(count)
        return real(reader, count)
    monkeypatch.setattr(raw, "_line_breaks", spy)
    result = run_audit(AuditJob.of([night], ruleset, jobs=1, collector=COLLECTOR))
    rows = [pieces.piece_rows(p) for p in plan]
    assert sorted(split.rows()) == rows
    moved = sum(abs(a - p.start) for (a, b), p in zip(rows[1:], plan[1:]) if a < b)
    assert sum(counted) == plan[-1].start + moved < 1.5 * night.stat().st_size
    same_as_once(result, _once(night, ruleset), tmp_path)


def test_the_plan_cuts_a_json_lines_file_at_shares_of_its_bytes(night, tmp_path, monkeypatch):
    monkeypatch.setattr(pieces, "TEXT_PIECE_ROWS", 300)
    size = night.stat().st_size
    plan = pieces.split([night], None, 3)
    assert [(p.part, p.start, p.stop, p.size) for p in plan] == \
        [(k, size * k // 3, size * (k + 1) // 3, size) for k in range(3)]
    lines = night.read_bytes().count(b"\n")
    assert abs(plan[0].rows - lines) < lines // 10  # (estimated from the first 64 KB)
    assert pieces.split([night], None, 1) is None  # one worker
    for encoding in ("utf-16", "shift_jis"):  # (more than one byte a character)
        assert pieces.split([night], None, 3, read=ReadOptions(encoding=encoding)) is None
    assert len(pieces.split([night], None, 3, read=ReadOptions(encoding="cp1252"))) == 3
    gz = tmp_path / "night.jsonl.gz"
    gz.write_bytes(gzip.compress(night.read_bytes()))
    assert pieces.split([gz], None, 3) is None  # (a gzip stream is not entered midway)
    utf16 = tmp_path / "utf16.jsonl"
    utf16.write_bytes(night.read_text(encoding="utf-8").encode("utf-16"))
    assert pieces.split([utf16], None, 3) is None
    one = tmp_path / "one.jsonl"
    write_log(generate(1, 200, seed=3).table, one)
    assert one.read_bytes().count(b"\n") > 900 and pieces.split([one], None, 3) is None
    monkeypatch.setattr(pieces, "TEXT_PIECE_ROWS", 10 ** 6)
    assert pieces.split([night], None, 3) is None  # too small to split


# --- the audit of a split file -----------------------------------------------------------

@pytest.mark.parametrize("jobs", [2, 3])
def test_a_split_json_lines_file_is_audited_as_one_reading_of_it(night, ruleset, tmp_path,
                                                                  split, monkeypatch, jobs):
    once = _once(night, ruleset)
    assert len(once.findings) > 50 and len(once.logs.quarantine) == 2
    split_as_one_reading(night, ruleset, once, split, monkeypatch, tmp_path, jobs,
                         _run_bounds(night.read_bytes()))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_of_more_lines_than_the_budget_is_audited_a_piece_at_a_time(
        night, ruleset, tmp_path, split, monkeypatch, jobs):
    audited_in_budget_pieces(night, ruleset, _once(night, ruleset), split, monkeypatch, tmp_path,
                             jobs, budget=2000)


def test_every_report_is_byte_identical_split_or_not(night, tmp_path, split):
    reports_the_same_split_or_not(night, split, tmp_path)


def test_dask_audits_the_same_pieces(night, ruleset, tmp_path, split, cluster):
    dask_audits_the_same(night, ruleset, _once(night, ruleset), split, cluster, tmp_path)


def test_dask_counts_the_line_breaks_before_each_piece_on_its_workers(
        night, ruleset, tmp_path, split, cluster, monkeypatch):
    """Four pieces (more than the cluster's workers): the first pass runs on
    the workers, and the lines are numbered as in the file (the quarantined
    lines and findings compared)."""
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 1500)
    assert len(pieces.split([night], None, 2)) == 4
    told = []
    real = pieces.numbered

    def spy(work, shares, counts):
        told.append(counts)
        return real(work, shares, counts)
    monkeypatch.setattr(pieces, "numbered", spy)
    once = _once(night, ruleset)
    result = run_audit(AuditJob.of([night], ruleset, engine="dask", collector=COLLECTOR,
                                   scheduler=cluster.scheduler_address))
    assert len(told) == 1 and len(told[0]) == 3 and None not in told[0]
    same_as_once(result, once, tmp_path)


@pytest.mark.parametrize("jobs", [2, 4])
def test_a_file_with_a_byte_order_mark_and_bad_lines_in_a_later_piece(night, ruleset,
                                                                       tmp_path, split, jobs):
    """The first piece drops the mark; a later piece reads line by line (a
    line that is not JSON, a key given twice) and numbers those lines as
    the file does."""
    lines = night.read_bytes().split(b"\n")
    lines[-40] = b"{not json"
    lines[-30] = lines[-30][:-1] + b', "seq": 9}'
    path = tmp_path / "marked.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines))
    once = _once(path, ruleset)
    assert len(once.logs.quarantine) == 4
    result = run_audit(AuditJob.of([path], ruleset, jobs=jobs, collector=COLLECTOR))
    assert len(split.rows()) == jobs
    same_as_once(result, once, tmp_path)


@pytest.mark.parametrize("form", ["crlf", "blank lines", "spaced keys"])
def test_a_file_written_otherwise_is_split_and_audited_as_one_reading(night, ruleset, tmp_path,
                                                                     split, monkeypatch, form):
    """Lines ending in CR LF, blank lines between tables, and keys written
    with spaces (`"table_id": "T01"`): cut between tables all the same."""
    rows = [json.loads(line) for line in night.read_bytes().split(b"\n")[:-1]]
    ends = {k for k in range(1, len(rows)) if rows[k].get("table_id") != rows[k - 1].get(
        "table_id")}
    spaced = form == "spaced keys"
    text = "".join(("\n\n" if form == "blank lines" and k in ends else "")
                   + json.dumps(row, separators=(", ", ": ") if spaced else (",", ":"))
                   + ("\r\n" if form == "crlf" else "\n") for k, row in enumerate(rows))
    path = tmp_path / "written.jsonl"
    path.write_text(text, encoding="utf-8", newline="")
    once = _once(path, ruleset)
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=3, collector=COLLECTOR))
    held = sorted(split.rows())
    assert len(held) == 3 and held[0][0] == 0
    assert whole == []  # (each table in one piece)
    same_as_once(result, once, tmp_path)


def test_a_table_key_the_project_configuration_renames_is_cut_on(night, ruleset, tmp_path,
                                                                  split, monkeypatch):
    """Lines that write the table as `TableID`, read as `table_id` (the
    project configuration's `columns`): cut between tables on that key."""
    path = tmp_path / "renamed.jsonl"
    path.write_bytes(night.read_bytes().replace(b'"table_id"', b'"TableID"'))
    read = ReadOptions(columns={"TableID": "table_id"})
    assert [p.key for p in pieces.split([path], None, 2, read=read)] == ["TableID"] * 2
    assert pieces.split([path], None, 2) is None  # (no line names `table_id`)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([path], options=read))
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, read=read, collector=COLLECTOR))
    assert len(split.rows()) == 2 and whole == []
    same_as_once(result, once, tmp_path)


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_a_file_in_an_encoding_of_one_byte_a_character_is_cut_each_piece_decoded(
        night, ruleset, tmp_path, split, monkeypatch, encoding):
    one_byte_encoding_cut_as_one_reading(night, ruleset, split, monkeypatch, tmp_path, encoding)


# --- what pieces cannot judge alone ------------------------------------------------------

def test_pieces_whose_lines_name_other_keys_read_the_file_whole(night, ruleset, tmp_path,
                                                                split, monkeypatch):
    """A key only the last lines write: the pieces' columns differ, so the
    file is read whole, its columns in the order one reading gives."""
    rows = [json.loads(line) for line in night.read_bytes().split(b"\n")[:-1]]
    for row in rows[-20:]:
        row["comment"] = "late"
    path = tmp_path / "late-key.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    once = _once(path, ruleset)
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    assert len(split.rows()) == 2 and whole == [[path]]  # tried, then read whole
    assert result.logs.inputs[0].columns[-1] == "comment"
    same_as_once(result, once, tmp_path)


@pytest.mark.parametrize(("bad", "whole_read"), [((-31,), False), ((31, -31), True)])
def test_text_not_utf8_is_told_the_encoding_to_try_once_as_one_reading_does(
        night, ruleset, tmp_path, split, monkeypatch, bad, whole_read):
    """One reading names an encoding to try at the file's first text that
    is not UTF-8 only: a file with such text in one piece is audited in
    pieces, one with it in two is read whole (each piece named one)."""
    lines = night.read_bytes().split(b"\n")[:-1]
    for k in bad:
        lines[k] = lines[k][:-1] + b', "note": "caf\xe9"}'
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    once = _once(path, ruleset)
    reasons = [r for r in once.logs.quarantine["reason"] if "UTF-8" in r]
    assert reasons == ["note is not UTF-8 text (try --encoding cp1252)"] + \
        ["note is not UTF-8 text"] * (len(bad) - 1)
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    assert len(split.rows()) == 2 and whole == ([[path]] if whole_read else [])
    same_as_once(result, once, tmp_path)


def test_tables_interleaved_in_time_are_sorted_out_by_table_a_piece_at_a_time(
        tmp_path, ruleset, split, monkeypatch):
    interleaved_tables_sorted_out(tmp_path, ruleset, split, monkeypatch, ".jsonl")


def test_a_file_every_line_of_which_is_quarantined_is_one_problem(tmp_path, ruleset, split):
    path = tmp_path / "no-seq.jsonl"
    write_log(generate(3, 40, seed=45).table, path)
    rows = [{**json.loads(line), "seq": "n/a"} for line in path.read_bytes().split(b"\n")[:-1]]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    whole, split_error = errors_whole_and_split(path, ruleset)
    assert "every row" in whole and split_error == whole


def test_a_file_that_cannot_be_a_log_gives_the_error_of_one_reading(tmp_path, ruleset, split):
    lacking_die1_errs_as_one_reading(tmp_path, ruleset, ".jsonl")


def test_a_piece_read_by_arrow_types_its_cells_as_the_whole_files_line_by_line_read(
        night, ruleset, tmp_path, split):
    """One line that is not JSON, in the last piece, sends the whole file to
    the line-by-line read, while the first piece is read by Arrow (each of
    its columns keeps one type): numbers written as floats, 1e3, 1e-7, a
    whole number past 2**32, true and false, text beyond ASCII are the same
    cells either way; the last piece's text for numbers, lists and nested
    objects too."""
    rows = [json.loads(line) for line in night.read_bytes().split(b"\n")[:-1]]
    rows = [row for row in rows if row.get("seq") != "forty"]  # (a text seq: read line by line)
    half = len(rows) // 2
    numbers = [1e3, 2.5, 1e-7, 2 ** 40 + 1, 7]
    others = ["7", True, [1, {"b": 2}], {"a": None}, "x"]
    for k, row in enumerate(rows):
        if "amount" in row and k % 3 == 0:
            row["amount"] = float(row["amount"])
        row["extra"] = (numbers if k < half else others)[k % 5]
        row["flag"] = k % 2 == 0
        row["text"] = "é\u2028" if k % 4 else "€"
        if k >= half and k % 7 == 0:
            row["seq"] = str(row["seq"]) if "seq" in row else None
    path = tmp_path / "kinds.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "{not json\n",
                    encoding="utf-8")
    once = _once(path, ruleset)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    (a, b), _ = sorted(split.rows())
    first = jsonl_format.read_jsonl(path, path.read_bytes()[a:b])[0]
    assert first.schema.field("seq").type == pa.int64()  # (Arrow read it)
    same_as_once(result, once, tmp_path)
