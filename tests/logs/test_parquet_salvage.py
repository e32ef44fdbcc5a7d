"""A Parquet file whose footer reads but one of whose pages does not decode
(decision 135): the row group holding the page has its rows quarantined,
each saying which column of which row group could not be decoded; every
other row is audited as if the page were whole. A file not one page of
which decodes is still refused whole."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import COLUMN_NAMES, LogBuilder, one_roll_table, report_provenance, run_cli
from markupsafe import escape

from auditor.generate import generate


def _table(b: LogBuilder) -> pa.Table:
    """`b`'s rows as a Parquet log's columns: every column of the spec, the
    numbers typed as numbers, the rest as text."""
    def cells(name):
        return [None if row.get(name) in (None, "") else row[name] for row in b.rows]

    numbers = {"seq": pa.int64(), "seat": pa.int64(), "die1": pa.int64(), "die2": pa.int64(),
               "total": pa.int64(), "amount": pa.float64()}
    return pa.table({name: pa.array(cells(name), numbers[name]) if name in numbers
                     else pa.array([None if v is None else str(v) for v in cells(name)],
                                   pa.string())
                     for name in COLUMN_NAMES})


def _night(path, *tables: LogBuilder) -> list[int]:
    """`tables` written to one Parquet file, a row group each, uncompressed;
    the row count of each."""
    parts = [_table(b) for b in tables]
    with pq.ParquetWriter(path, parts[0].schema, compression="none") as writer:
        for part in parts:
            writer.write_table(part, row_group_size=part.num_rows)
    return [p.num_rows for p in parts]


def _damage(path, group: int, *columns: str) -> None:
    """The header of the first data page of `columns` in row group `group`
    overwritten: those column chunks no longer decode, the footer still reads."""
    data = bytearray(path.read_bytes())
    meta = pq.ParquetFile(io.BytesIO(bytes(data))).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    for name in columns:
        chunk = meta.row_group(group).column(names.index(name))
        at = chunk.dictionary_page_offset or chunk.data_page_offset
        data[at:at + 24] = b"\xff" * 24
    path.write_bytes(bytes(data))


def _found(out) -> set[tuple[str, str, int]]:
    f = pq.read_table(out / "findings.parquet").to_pandas()
    return {(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])}


def _two_tables(tmp_path, *damaged: str):
    """T1 (one wrong call) and T2 (lawful), a row group each; T2's `damaged`
    columns no longer decode. The file, and T2's seqs."""
    path = tmp_path / "night.parquet"
    t1, t2 = one_roll_table("T1", wrong_call=True), one_roll_table("T2")
    _night(path, t1, t2)
    if damaged:
        _damage(path, 1, *damaged)
    return path, [row["seq"] for row in t2.rows]


def test_a_damaged_page_quarantines_its_row_group_and_the_rest_is_audited(tmp_path):
    (tmp_path / "clean").mkdir()
    clean, _ = _two_tables(tmp_path / "clean")
    res = run_cli("check", clean, "-r", "nz-table-games", "--out", tmp_path / "clean-out")
    assert res.exit_code == 1, res.output
    lawful = _found(tmp_path / "clean-out")
    assert lawful and {t for _, t, _ in lawful} == {"T1"}  # (T2 is lawful)

    path, t2_seqs = _two_tables(tmp_path, "ts")
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "out",
                  "--format", "parquet", "--format", "html")
    assert res.exit_code == 1, res.output
    assert "internal error" not in res.output
    rows = len(t2_seqs)
    assert f"({rows} quarantined)" in res.output
    assert _found(tmp_path / "out") == lawful | {("log.malformed", "T2", s) for s in t2_seqs}
    quarantine = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pandas()
    assert quarantine["table_id"].tolist() == ["T2"] * rows
    assert quarantine["seq"].tolist() == t2_seqs
    first = len(one_roll_table("T1").rows) + 1
    assert quarantine["source_line"].tolist() == list(range(first, first + rows))
    reason = f"row group 2 of 2 (rows {first}-{first + rows - 1}) could not be decoded " \
             "in column(s) ts: "
    assert all(r.startswith(reason) for r in quarantine["reason"]), quarantine["reason"][0]
    (note,) = report_provenance(tmp_path / "out")["inputs"][0]["notes"]
    assert note.startswith(reason) and note.endswith(f": its {rows} row(s) quarantined")
    page = (tmp_path / "out" / "report.html").read_text()
    inputs = page.split('id="inputs"')[1].split("</table>")[0]
    shown = inputs.split('<span class="notes">')[1].split("</span>")[0]
    assert shown.startswith(str(escape(reason))) and shown.endswith(
        f": its {rows} row(s) quarantined")
    assert all(c >= " " for c in shown)  # (the reader's error shown with visible escapes)


def test_every_damaged_column_of_the_group_is_named(tmp_path):
    path, t2_seqs = _two_tables(tmp_path, "event", "total")
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    quarantine = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pandas()
    assert quarantine["seq"].tolist() == t2_seqs
    assert all("could not be decoded in column(s) event, total: " in r
               for r in quarantine["reason"])


def test_rows_whose_table_cannot_be_read_are_still_counted(tmp_path):
    """The table and seq columns themselves damaged: the rows are
    quarantined without them, and read = replayed + quarantined."""
    path, t2_seqs = _two_tables(tmp_path, "table_id", "seq")
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    quarantine = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pandas()
    assert len(quarantine) == len(t2_seqs)
    assert quarantine["table_id"].isna().all() and quarantine["seq"].isna().all()
    rows_t1 = len(one_roll_table("T1").rows)
    assert f"{rows_t1} event(s) replayed of {rows_t1 + len(t2_seqs)} read " \
           f"({len(t2_seqs)} quarantined)" in res.output


def test_a_file_not_one_page_of_which_decodes_is_refused_whole(tmp_path):
    path, _ = _two_tables(tmp_path)
    names = pq.ParquetFile(path).schema_arrow.names
    _damage(path, 0, *names)
    _damage(path, 1, *names)
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 2, res.output
    assert "night.parquet: not a readable Parquet file: " in res.output
    assert not (tmp_path / "out").exists()


def _large_night(path) -> None:
    """A generated night of 4 tables in row groups of 500 rows, the `ts`
    page of its third row group damaged."""
    pq.write_table(generate(4, 60, seed=11).table, path, row_group_size=500,
                   compression="none")
    _damage(path, 2, "ts")


@pytest.mark.parametrize("how", ["jobs 2", "in pieces"])
def test_every_engine_salvages_the_same_rows(tmp_path, monkeypatch, how):
    """A piece of a split file that meets the damaged page has the file read
    whole, so `--jobs N` and pieces give the bytes one reading gives."""
    from auditor.run import pieces, stream

    path = tmp_path / "night.parquet"
    _large_night(path)
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "one")
    assert res.exit_code == 1, res.output
    assert "(500 quarantined)" in res.output
    if how == "in pieces":
        monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
        monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
        monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "two",
                  "--jobs", "2")
    assert res.exit_code == 1, res.output
    for name in ("findings.parquet", "quarantine.parquet", "findings.jsonl"):
        if (tmp_path / "one" / name).exists():
            assert (tmp_path / "one" / name).read_bytes() == \
                (tmp_path / "two" / name).read_bytes(), name
