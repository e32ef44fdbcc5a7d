"""One large CSV file split across workers by bytes (`auditor.run.pieces`,
`auditor.logs.line_runs`, `auditor.logs.csv_format.ends_outside_quotes`):
each cut falls at a line start between two runs of one table's lines, every
line is audited once and numbered as in the file, and the findings,
quarantine, provenance and every report are those of one reading of the
file; a file whose pieces cannot show that each cut starts a record (a cut
inside a quoted value over several lines, a quote Arrow's reader takes as
text, a lone CR) is read whole."""

from __future__ import annotations

import csv
import gzip
import io
import random
from pathlib import Path

import pandas as pd
import pytest
from pieces_check import (
    audited_in_budget_pieces,
    dask_audits_the_same,
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
from auditor.logs import line_runs
from auditor.logs.csv_format import CutInsideRecord, ends_outside_quotes, header_record
from auditor.logs.load import load_logs
from auditor.logs.raw import UTF8_BOM, ReadOptions, one_byte_a_character
from auditor.logs.read import read_log
from auditor.report.html import COLLECTOR
from auditor.run import AuditJob, pieces, run_audit


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """A CSV file of five tables in runs of lines, every code planted, two
    lines to quarantine (no table; a seq that is not a number), a column of
    the log's own on every fifth line (text to escape, a comma and a quote
    in it), the dice written quoted ("A1,A2")."""
    path = tmp_path_factory.mktemp("csv-pieces") / "night.csv"
    rows = generate(5, 60, seed=41, inject=list(INJECTABLE)).table.to_pandas()
    rows = rows.astype(object).where(rows.notna(), None)
    rows["note"] = [f'<b>note {k}</b>, "said"' if k % 5 == 0 else None for k in range(len(rows))]
    rows.loc[7, "table_id"] = None
    t02 = rows.index[rows["table_id"] == "T02"][0]
    rows.loc[t02 + 40, "seq"] = "forty"
    rows.to_csv(path, index=False, lineterminator="\n")
    return path


@pytest.fixture
def split(monkeypatch, tmp_path):
    """Pieces planned for small CSV files (one a worker); the byte ranges
    each audited piece held."""
    monkeypatch.setattr(pieces, "CSV_PIECE_ROWS", 300)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    return held_pieces(monkeypatch, tmp_path)


def _once(path: Path, ruleset, read: ReadOptions | None = None):
    loaded = load_logs([path]) if read is None else load_logs([path], options=read)
    return run_audit(AuditJob.loaded(ruleset), loaded=loaded)


def _cut_as_one_reading(path: Path, ruleset, tmp_path: Path, split, monkeypatch, jobs: int,
                        read: ReadOptions | None = None):
    """`path` audited in `jobs` pieces, none of them asking for the file to
    be read whole, as one reading of it (which is returned)."""
    once = _once(path, ruleset, read)
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=jobs, collector=COLLECTOR,
                                   **({"read": read} if read else {})))
    assert len(split.rows()) == jobs and whole == []
    same_as_once(result, once, tmp_path)
    return once


def _run_bounds(data: bytes, column: int = 0) -> list[int]:
    """Every line start at which a run of one table (the cell as written)
    starts, and the file's end, worked out line by line with `csv`."""
    starts = line_starts(data)
    ids = []
    for a, b in zip(starts, starts[1:] + [len(data)]):
        cells = next(csv.reader(io.StringIO(data[a:b].decode().rstrip("\r\n"))), [])
        quoted = data[a:b].split(b",")[column].startswith(b'"') if column < len(cells) else 0
        ids.append((cells[column], quoted) if column < len(cells) else None)
    return [s for k, s in enumerate(starts) if k == 0 or ids[k] != ids[k - 1]] + [len(data)]


# --- where a record starts ----------------------------------------------------------------

@pytest.mark.parametrize(("data", "outside"), [
    (b"a,b\n1,2\n", True),
    (b'a,"b"\n"1","2"\n', True),
    (b'"x ""quoted"" y",2\n', True),       # a doubled quote inside a quoted value
    (b'"""",""\n', True),                   # a value of one quote; an empty quoted value
    (b'"a,b",c\r\n"d",e\r\n', True),        # CR LF after a closing quote
    (b"a,b\n1,2", True),                    # no line break at the end
    (b'a,"b\nc"\n', True),                  # a line break inside a quoted value
    (b'a,"b\r\n""c\n"\r\n', True),
    (b'a,"b\nc\n', False),                  # a quoted value open at the end
    (b'b\nc",d\n', False),                  # (a cut inside a quoted value)
    (b'a,b"c\n', False),                    # a quote inside a bare cell: text to Arrow
    (b'"a"b,c\n', False),                   # text after a closing quote
    (b' "a",b\n', False),                   # a space before an opening quote
    (b"a\rb\n", False),                     # a lone CR ends a record for Arrow
])
def test_bytes_end_outside_quotes_only_where_every_quote_pairs(data, outside, monkeypatch):
    assert ends_outside_quotes(data) is outside
    monkeypatch.setattr("auditor.logs.csv_format._QUOTES_CHECK_BYTES", 2)  # a line a slice
    assert ends_outside_quotes(data * 3) is (outside and data.count(b'"') % 2 == 0)
    assert ends_outside_quotes(data + b'x,"y\nz"\n' * 3) is outside


# --- the cuts and the plan ---------------------------------------------------------------

@pytest.mark.parametrize(("block", "column"), [(7, 0), (64, 0), (1 << 18, 0), (7, 2),
                                                (1 << 18, 2)])
def test_a_cut_falls_at_the_nearest_end_of_a_run_of_one_tables_lines(tmp_path, monkeypatch,
                                                                      block, column):
    """`line_cut_near` against the runs found line by line with `csv`, for
    every byte: ids bare, quoted, empty, holding a comma or a quote; the
    table in the first column (runs passed over a block at a time) or the
    third; lines ending in LF or CR LF, read a few bytes at a time or a
    block at a time."""
    monkeypatch.setattr(line_runs, "BLOCK_BYTES", block)
    rng = random.Random(7)
    values = ["T1", '"T1"', "T2", '"T,3"', '"T""4"', "", "T10"]
    lines = []
    while len(lines) < 240:
        value = rng.choice(values)
        for _ in range(rng.choice([1, 2, 5, 17, 40])):
            cells = [str(len(lines)), "x" * rng.choice([0, 3, 90]), '"A1,A2"']
            cells.insert(column, value)
            lines.append(",".join(cells) + rng.choice(["\n", "\r\n"]))
    data = "".join(lines).encode()
    path = tmp_path / "ids.csv"
    path.write_bytes(data)
    starts = line_starts(data)
    bounds = _run_bounds(data, column)
    tables = line_runs.CsvTables(column)
    for offset in range(len(data) + 1):
        line = max(s for s in starts if s <= offset) if offset < len(data) else offset
        lo = max(b for b in bounds if b <= line)
        hi = min(b for b in bounds if b >= line)
        want = offset if offset in (0, len(data)) else (lo if line - lo <= hi - line else hi)
        assert line_runs.line_cut_near(path, offset, tables) == want, offset


def test_a_piece_reads_only_its_lines_each_numbered_as_in_the_file(night, tmp_path):
    """Bytes [a, b) of the file, at line starts: its rows and lines as the
    whole file's (the header read from the file's start); a record with the
    wrong cell count numbered as in the file; only the first piece hashes."""
    whole = read_log(night)
    starts = line_starts(night.read_bytes())
    for a, b in [(0, 10), (99, 1001), (1234, len(starts))]:
        piece = read_log(night, piece=(starts[a], starts[b] if b < len(starts)
                                       else night.stat().st_size, a == 0, None))
        lines = whole.lines[(whole.lines > a) & (whole.lines <= b)]
        assert piece.lines.tolist() == lines.tolist()
        assert piece.table.column("seq").to_pylist() == \
            whole.table.column("seq").slice(int(lines[0]) - 2, len(lines)).to_pylist()
        assert piece.sha256 == (whole.sha256 if a == 0 else "")
    broken = tmp_path / "broken.csv"
    text = night.read_bytes().split(b"\n")
    text[150] = b"T01,only,three"
    broken.write_bytes(b"\n".join(text))
    starts = line_starts(broken.read_bytes())
    piece = read_log(broken, piece=(starts[100], starts[200], False, None))
    assert piece.rejected.lines == [151]
    assert piece.lines.tolist() == [n for n in range(101, 201) if n != 151]


@pytest.mark.parametrize(("encoding", "one_byte"), [
    ("cp1252", True), ("latin-1", True), ("iso8859-15", True), ("ascii", True),
    ("cp437", True), ("koi8-r", True),
    ("utf-8", False), ("utf-16", False), ("utf-32", False), ("shift_jis", False),
    ("gb18030", False), ("utf-7", False), ("not-an-encoding", False),
])
def test_an_encoding_is_cut_only_when_it_is_one_byte_a_character(encoding, one_byte):
    assert one_byte_a_character(encoding) is one_byte


@pytest.mark.parametrize("name_bytes", [10, 100_000])
def test_a_piece_reads_the_header_record_from_the_files_start(tmp_path, name_bytes):
    """A short header read in one small read, a long one (a column name of
    100 KB) whole; the byte order mark left out; none within 1 MiB: the
    file is read whole."""
    header = b"table_id,seq," + b"n" * name_bytes + b"\r\n"
    path = tmp_path / "header.csv"
    path.write_bytes(UTF8_BOM + header + b"T01,1,x\r\n" * 3)
    assert header_record(path) == header
    path.write_bytes(b'"' + b"x" * (2 << 20))
    with pytest.raises(CutInsideRecord):
        header_record(path)


def test_the_plan_cuts_a_csv_file_at_shares_of_its_bytes(night, tmp_path, monkeypatch):
    monkeypatch.setattr(pieces, "CSV_PIECE_ROWS", 300)
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
    gz = tmp_path / "night.csv.gz"
    gz.write_bytes(gzip.compress(night.read_bytes()))
    assert pieces.split([gz], None, 3) is None  # (a gzip stream is not entered midway)
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes(night.read_text(encoding="utf-8").encode("utf-16"))
    assert pieces.split([utf16], None, 3) is None
    header_break = tmp_path / "header-break.csv"
    header_break.write_bytes(night.read_bytes().replace(b"note", b'"no\nte"', 1))
    assert pieces.split([header_break], None, 3) is None  # (a header of two lines)
    no_table = tmp_path / "no-table.csv"
    no_table.write_bytes(night.read_bytes().replace(b"table_id", b"TableID", 1))
    assert pieces.split([no_table], None, 3) is None
    assert len(pieces.split([no_table], None, 3,
                            read=ReadOptions(columns={"TableID": "table_id"}))) == 3
    one = tmp_path / "one.csv"
    write_log(generate(1, 200, seed=3).table, one)
    assert one.read_bytes().count(b"\n") > 900 and pieces.split([one], None, 3) is None
    monkeypatch.setattr(pieces, "CSV_PIECE_ROWS", 10 ** 6)
    assert pieces.split([night], None, 3) is None  # too small to split


# --- the audit of a split file -----------------------------------------------------------

@pytest.mark.parametrize("jobs", [2, 3])
def test_a_split_csv_file_is_audited_as_one_reading_of_it(night, ruleset, tmp_path, split,
                                                          monkeypatch, jobs):
    once = _once(night, ruleset)
    assert len(once.findings) > 50 and len(once.logs.quarantine) == 2
    split_as_one_reading(night, ruleset, once, split, monkeypatch, tmp_path, jobs,
                         _run_bounds(night.read_bytes()))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_of_more_lines_than_the_budget_is_audited_a_piece_at_a_time(
        night, ruleset, tmp_path, split, monkeypatch, jobs):
    audited_in_budget_pieces(night, ruleset, _once(night, ruleset), split, monkeypatch, tmp_path,
                             jobs, budget=1500)


def test_every_report_is_byte_identical_split_or_not(night, tmp_path, split):
    reports_the_same_split_or_not(night, split, tmp_path)


def test_dask_audits_the_same_pieces(night, ruleset, tmp_path, split, cluster):
    dask_audits_the_same(night, ruleset, _once(night, ruleset), split, cluster, tmp_path)


def _rewritten(night: Path, path: Path, **how) -> Path:
    """The night written again by pandas (`how`: to_csv's options)."""
    rows = pd.read_csv(night, dtype=str, keep_default_na=False)
    rows.to_csv(path, index=False, **how)
    return path


@pytest.mark.parametrize("form", ["crlf", "byte order mark", "every cell quoted",
                                  "table column last"])
def test_a_file_written_otherwise_is_split_and_audited_as_one_reading(night, ruleset, tmp_path,
                                                                     split, monkeypatch, form):
    path = tmp_path / "written.csv"
    if form == "table column last":
        rows = pd.read_csv(night, dtype=str, keep_default_na=False)
        rows[[c for c in rows.columns if c != "table_id"] + ["table_id"]].to_csv(
            path, index=False, lineterminator="\n")
    else:
        _rewritten(night, path, lineterminator="\r\n" if form == "crlf" else "\n",
                   encoding="utf-8-sig" if form == "byte order mark" else "utf-8",
                   quoting=csv.QUOTE_ALL if form == "every cell quoted" else csv.QUOTE_MINIMAL)
    _cut_as_one_reading(path, ruleset, tmp_path, split, monkeypatch, 3)  # (each table in one)


def test_a_table_column_the_project_configuration_renames_is_cut_on(night, ruleset, tmp_path,
                                                                     split, monkeypatch):
    path = tmp_path / "renamed.csv"
    path.write_bytes(night.read_bytes().replace(b"table_id", b"TableID", 1))
    read = ReadOptions(columns={"TableID": "table_id"})
    _cut_as_one_reading(path, ruleset, tmp_path, split, monkeypatch, 2, read)


def test_bad_records_and_text_not_utf8_in_a_later_piece(night, ruleset, tmp_path, split,
                                                        monkeypatch):
    """A record of too few cells, one of too many and a note not in UTF-8,
    near the end: numbered and told as one reading tells them."""
    lines = night.read_bytes().split(b"\n")
    assert not any(lines[k].endswith(b'"') for k in (-41, -31, -21))  # (no note there)
    lines[-41] = b"T05,1,2"
    lines[-31] = lines[-31] + b",extra"
    lines[-21] = lines[-21] + b"caf\xe9"
    path = tmp_path / "bad-records.csv"
    path.write_bytes(b"\n".join(lines))
    once = _cut_as_one_reading(path, ruleset, tmp_path, split, monkeypatch, 2)
    assert len(once.logs.quarantine) == 5


def test_quoted_line_breaks_away_from_the_cuts_are_cut_about_and_numbered_as_the_file(
        night, ruleset, tmp_path, split, monkeypatch):
    """Notes over several lines in every piece (one in a record that is
    quarantined): the file is cut all the same, each line numbered as one
    reading numbers it, quoted line breaks counted."""
    lines = night.read_bytes().split(b"\n")
    bare = [k for k, line in enumerate(lines) if line.endswith(b",")]  # (no note there)
    for k in (bare[20], bare[len(bare) // 2 + 7], bare[-20]):
        lines[k] += b'"a note\nover\r\nthree lines"'
    lines[bare[-30]] = lines[bare[-30]].replace(b",", b",,", 1) + b'"and a bad\nrecord"'
    path = tmp_path / "notes.csv"
    path.write_bytes(b"\n".join(lines))
    once = _cut_as_one_reading(path, ruleset, tmp_path, split, monkeypatch, 3)
    assert len(once.logs.quarantine) == 3


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_a_file_in_an_encoding_of_one_byte_a_character_is_cut_each_piece_decoded(
        night, ruleset, tmp_path, split, monkeypatch, encoding):
    one_byte_encoding_cut_as_one_reading(night, ruleset, split, monkeypatch, tmp_path, encoding)


# --- what pieces cannot judge alone ------------------------------------------------------

@pytest.mark.parametrize("damage", ["a note of lines", 'a "quote" in a bare cell',
                                    "a lone\rCR"])
def test_a_file_whose_cuts_may_not_start_records_is_read_whole(
        night, ruleset, tmp_path, split, monkeypatch, damage):
    """A cell more on the last line of the run of one table nearest the
    file's middle: a quoted note of lines `T01,x` over where the plan cuts
    the file (its lines name a table of their own to the cut, which falls
    among them: the pieces would hold no table in common, and the first
    would end inside the note), a quote Arrow's reader takes as text, a
    lone CR. The file is tried in pieces and then read whole: the audit is
    one reading's."""
    data = night.read_bytes()
    end = min(_run_bounds(data)[1:-1], key=lambda b: abs(b - len(data) // 2))
    if damage == "a note of lines":
        damage = '"' + "T01,x\n" * ((2 * abs(end - len(data) // 2) + 20_000) // 6) + '"'
    path = tmp_path / "not-lines.csv"
    path.write_bytes(data[:end - 1] + b"," + damage.encode() + data[end - 1:])
    once = _once(path, ruleset)
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    assert len(split.rows()) <= 1 and whole == [[path]]  # (a piece asked for it)
    same_as_once(result, once, tmp_path)


def test_a_file_replaced_while_its_pieces_are_read_is_read_whole(night, ruleset, tmp_path,
                                                                  split, monkeypatch):
    """The file renamed over once its first piece is audited (what an
    exporter does replacing a file): the pieces did not all read one file,
    so it is read whole, in one open: the hash and the rows are the new
    file's, never the first piece's hash beside the new file's rows."""
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 1500)
    path, other = tmp_path / "replaced.csv", tmp_path / "other.csv"
    path.write_bytes(night.read_bytes())
    other.write_bytes(night.read_bytes().replace(b",T05,", b",T05b,")
                      .replace(b"\nT05,", b"\nT06,"))
    twin = tmp_path / "twin.csv"
    twin.write_bytes(other.read_bytes())
    real = pieces.audit_piece

    def replacing(piece, job, progress, label=None):
        done = real(piece, job, progress, label)
        if other.exists():
            other.replace(path)
        return done
    monkeypatch.setattr(pieces, "audit_piece", replacing)
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=1, collector=COLLECTOR))
    assert whole == [[path]] and len(split.rows()) >= 3  # (the pieces, then the file)
    once = _once(twin, ruleset)
    assert result.logs.inputs[0].sha256 == once.logs.inputs[0].sha256
    assert "T06" in result.tables and "T05" not in result.tables
    named = ["finding_id", "source_file"]  # (the twin's name)
    assert result.findings.drop(columns=named).equals(once.findings.drop(columns=named))


def test_tables_interleaved_in_time_are_sorted_out_by_table_a_piece_at_a_time(
        tmp_path, ruleset, split, monkeypatch):
    interleaved_tables_sorted_out(tmp_path, ruleset, split, monkeypatch, ".csv")


def test_a_file_that_cannot_be_a_log_gives_the_error_of_one_reading(tmp_path, ruleset, split):
    lacking_die1_errs_as_one_reading(tmp_path, ruleset, ".csv")
