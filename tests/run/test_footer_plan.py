"""The plan of many Parquet files from their footers (`auditor.run.stream.survey`):
a file's `table_id` column is read only where the row groups' statistics
leave its tables in doubt against another file's, and a plan the statistics
misled is caught as the batches load (the audit loaded at once), with the
same findings and reports as one load."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from builder import report_bytes

from auditor.generate import generate, write_log
from auditor.logs.discover import discover
from auditor.logs.load import load_logs
from auditor.report.html import COLLECTOR
from auditor.run import AuditJob, run_audit, stream
from auditor.run.stream import LazyLogs, Scanned, overlapping, survey

META = {"test": "footer plan"}


@pytest.fixture
def streaming(monkeypatch):
    """Every input streamed, one component per batch; the files whose
    table_id column the plan reads, and the batches audited, recorded."""
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    seen = {"read": [], "batches": []}
    read, batch = stream.read_tables, stream.audit_batch

    def read_spy(path, *rest):
        seen["read"].append(Path(path).name)
        return read(path, *rest)

    def batch_spy(files, *rest):
        seen["batches"].append([Path(f).name for f in files])
        return batch(files, *rest)
    monkeypatch.setattr(stream, "read_tables", read_spy)
    monkeypatch.setattr(stream, "audit_batch", batch_spy)
    return seen


def _renamed(table: pa.Table, names: dict[str, str]) -> pa.Table:
    ids = table.column("table_id").to_pylist()
    return table.set_column(table.schema.get_field_index("table_id"), "table_id",
                            pa.array([names.get(t, t) for t in ids], pa.string()))


def _same(streamed, once, tmp_path: Path) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    assert report_bytes(streamed, tmp_path / "streamed", META) == \
        report_bytes(once, tmp_path / "once", META)
    assert streamed.logs.quarantine.equals(once.logs.quarantine)
    assert [f.as_dict() for f in streamed.logs.inputs] == \
        [f.as_dict() for f in once.logs.inputs]


def test_files_of_their_own_tables_are_planned_from_their_footers(tmp_path, ruleset,
                                                                   streaming):
    """Two tables a file, each file's ids apart from the others' (as a
    night's files are): no table_id column read, one batch a file, the
    findings of one load."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for k in range(4):
        log = generate(2, 30, seed=60 + k, inject=["call.wrong_total"], first_table=1 + 2 * k)
        write_log(log.table, logs / f"part-{k}.parquet")
    files = discover([logs])
    assert stream.scan(files[0]) == Scanned(frozenset(), survey(files[0]).rows, ("T01", "T02"))
    assert stream.plan(files) == [[0], [1], [2], [3]]
    assert streaming["read"] == []
    for jobs in (1, 2):
        streamed = run_audit(AuditJob.of([logs], ruleset, jobs=jobs, collector=COLLECTOR))
        assert isinstance(streamed.logs, LazyLogs)
        once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs]))
        assert len(once.findings) >= 8
        _same(streamed, once, tmp_path / f"jobs{jobs}")
    assert streaming["read"] == []


def test_a_row_group_of_one_table_names_it_exactly(tmp_path, streaming):
    """A row group whose statistics have min == max holds that table alone:
    files of interleaved ids are planned apart without reading them, and
    a file that shares a table with another is linked to it."""
    log = generate(3, 20, seed=70).table
    by_table = [log.filter(pc.equal(log.column("table_id"), t)) for t in ("T01", "T02", "T03")]
    # a.parquet: T01 and T03 a row group each; b.parquet: T02; c.parquet: T03 again
    with pq.ParquetWriter(tmp_path / "a.parquet", by_table[0].schema) as writer:
        writer.write_table(by_table[0])
        writer.write_table(by_table[2])
    assert pq.read_metadata(tmp_path / "a.parquet").num_row_groups == 2
    write_log(by_table[1], tmp_path / "b.parquet")
    write_log(by_table[2].slice(0, 5), tmp_path / "c.parquet")
    files = discover([tmp_path])
    assert [stream.scan(f).tables for f in files] == [{"T01", "T03"}, {"T02"}, {"T03"}]
    assert stream.scan(files[0]).span is None
    assert stream.plan(files) == [[0, 2], [1]]
    assert streaming["read"] == []


def test_only_files_whose_spans_meet_another_are_read(tmp_path, streaming):
    """A span (a row group of several tables) that meets another file's is
    not enough: that file's column is read, the others' are not."""
    log = generate(4, 20, seed=71).table
    pick = [log.filter(pc.equal(log.column("table_id"), t)) for t in ("T01", "T02", "T03",
                                                                       "T04")]
    write_log(pa.concat_tables([pick[0], pick[2]]), tmp_path / "a.parquet")  # T01..T03
    write_log(pick[1], tmp_path / "b.parquet")  # T02, within a's span
    write_log(pick[3], tmp_path / "c.parquet")  # T04, apart
    files = discover([tmp_path])
    assert stream.scan(files[0]).span == ("T01", "T03")
    assert stream.plan(files) == [[0], [1], [2]]
    assert streaming["read"] == ["a.parquet"]


@pytest.mark.parametrize("case", ["spaces", "no statistics", "numbers"])
def test_statistics_that_do_not_tell_send_the_file_to_its_column(tmp_path, case):
    """Ids with white space at an end (the loader trims them), a file
    written without statistics and ids that are not text: the footer does
    not decide, the column is read as the loader types it."""
    ids = {"spaces": pa.array([" T1", "T2 ", "T1"]), "no statistics": pa.array(["T1", "T2",
                                                                                 "T1"]),
           "numbers": pa.array([1, 2, 1])}[case]
    table = pa.table({"table_id": ids, "seq": pa.array([1, 2, 3])})
    pq.write_table(table, tmp_path / "a.parquet", write_statistics=case != "no statistics")
    assert survey(tmp_path / "a.parquet") is None
    expect = {"1", "2"} if case == "numbers" else {"T1", "T2"}
    assert stream.scan(tmp_path / "a.parquet") == Scanned(frozenset(expect), 3)


def test_a_single_value_is_trimmed_as_the_loader_trims_it(tmp_path):
    table = pa.table({"table_id": pa.array([" T1 ", " T1 ", None]), "seq": [1, 2, 3]})
    pq.write_table(table, tmp_path / "a.parquet")
    assert survey(tmp_path / "a.parquet") == Scanned(frozenset({"T1"}), 3)
    nulls = pa.table({"table_id": pa.array([None, None], pa.string()), "seq": [1, 2]})
    pq.write_table(nulls, tmp_path / "b.parquet")
    assert survey(tmp_path / "b.parquet") == Scanned(frozenset(), 2)


@pytest.mark.parametrize("jobs", [1, 2])
def test_statistics_that_mislead_are_caught_as_the_batches_load(tmp_path, ruleset, streaming,
                                                               jobs):
    """An id that ends in a white space beyond ASCII (U+3000) lies inside
    its file's span as raw text, yet trimmed it is the table of another
    file whose span does not meet it: the plan splits the table, the
    batches find it, and the audit starts again loaded at once, with the
    findings and reports of one load."""
    t1 = generate(1, 60, seed=72, inject=["call.wrong_total", "log.out_of_order"]).table
    half = t1.num_rows // 2
    write_log(t1.slice(half), tmp_path / "a.parquet")  # T01's later half, as "T1"
    others = generate(2, 30, seed=73, inject=["call.missing"], first_table=2).table
    head = _renamed(t1.slice(0, half), {"T01": "T1\u3000"})
    b = pa.concat_tables([_renamed(others, {"T02": "T1A", "T03": "T2"}), head])
    write_log(b, tmp_path / "b.parquet")
    a = _renamed(pq.read_table(tmp_path / "a.parquet"), {"T01": "T1"})
    write_log(a, tmp_path / "a.parquet")
    files = discover([tmp_path])
    assert stream.scan(files[0]) == Scanned(frozenset({"T1"}), a.num_rows)
    assert stream.scan(files[1]).span == ("T1A", "T2")  # "T1" outside it, as raw text
    assert stream.plan(files) == [[0], [1]]  # the wrong plan
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([tmp_path]))
    assert "T1" in set(once.findings["table_id"])
    streamed = run_audit(AuditJob.of([tmp_path], ruleset, jobs=jobs, collector=COLLECTOR))
    if jobs == 1:
        assert streaming["batches"][:1] == [["a.parquet"]]
    assert not isinstance(streamed.logs, LazyLogs)  # loaded at once after all
    _same(streamed, once, tmp_path / "reports")


def test_spans_that_meet():
    spans = [("A", "C"), None, ("D", "F"), ("F", "G"), None, ("X", "Z")]
    bounds = [("A", "C"), ("B", "B"), ("D", "F"), ("F", "G"), ("M", "M"), ("X", "Z")]
    assert overlapping(spans, bounds) == [0, 2, 3]
    # one span within another's: both; an exact file between two spans: neither span
    assert overlapping([("A", "Z"), ("C", "D")], [("A", "Z"), ("C", "D")]) == [0, 1]
    assert overlapping([("A", "B"), None, ("D", "E")], [("A", "B"), ("C", "C"),
                                                        ("D", "E")]) == []
    assert overlapping([("A", "B"), None], [("A", "B"), None]) == []
