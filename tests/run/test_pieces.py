"""One large Parquet file split across workers (`auditor.run.pieces`): each
piece ends where a table's run of rows ends, every row is audited once, and
the findings, quarantine, provenance and every report are those of one
reading of the file, whatever the engine; what a piece cannot judge alone
is judged on the whole file."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pieces_check import (
    boundaries,
    errors_whole_and_split,
    every_report_by_jobs,
    held_pieces,
    interleaved_tables_sorted_out,
    same_as_once,
)

from auditor.generate import INJECTABLE, generate, write_log
from auditor.logs import parquet_format
from auditor.logs.discover import discover
from auditor.logs.load import load_logs
from auditor.logs.parquet_format import row_group_starts
from auditor.report.html import COLLECTOR
from auditor.run import AuditJob, pieces, run_audit, stream
from auditor.run.progress import NoProgress

ROW_GROUP = 500


def _write(table: pa.Table, path: Path, row_group: int = ROW_GROUP) -> Path:
    pq.write_table(table, path, row_group_size=row_group)
    return path


def _broken(table: pa.Table) -> pa.Table:
    """`table` with two rows to quarantine: one of no table (a null
    table_id) and one of table T02 without a seq; and a column of the log's
    own (text to escape)."""
    ids = table.column("table_id").to_pylist()
    seq = table.column("seq").to_pylist()
    t02 = ids.index("T02")
    ids[7] = None
    seq[t02 + 40] = None
    table = table.set_column(0, "table_id", pa.array(ids, pa.string()))
    table = table.set_column(1, "seq", pa.array(seq, pa.int64()))
    note = pa.array([f"<b>note {i}</b>" if i % 5 == 0 else None for i in range(table.num_rows)])
    return table.append_column("note", note)


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A file of five tables in runs of rows, row groups of 500 rows cutting
    through them, every code planted, two rows to quarantine."""
    log = generate(5, 60, seed=41, inject=list(INJECTABLE))
    return _write(_broken(log.table), tmp_path_factory.mktemp("pieces") / "night.parquet")


@pytest.fixture
def split(monkeypatch, tmp_path):
    """Pieces planned for small files (one a worker); the rows each audited
    piece held."""
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    return held_pieces(monkeypatch, tmp_path)


# --- the plan and the cuts ---------------------------------------------------------------

def test_the_plan_cuts_at_row_group_starts_from_the_footer(big, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    starts = row_group_starts(pq.read_metadata(big)).tolist()
    plan = pieces.split([big], None, 3)
    assert [p.part for p in plan] == [0, 1, 2]
    n = starts[-1]
    nearest = [min(starts[1:-1], key=lambda s, k=k: abs(s - n * k / 3)) for k in (1, 2)]
    assert [p.start for p in plan] == [0, *nearest] and plan[-1].stop == n
    assert [a.stop for a in plan[:-1]] == [b.start for b in plan[1:]]
    assert pieces.split([big], None, 1) is None  # one worker
    assert pieces.split([big, big], None, 2) is None  # not one file
    monkeypatch.setattr(pieces, "PIECE_ROWS", 10_000)
    assert pieces.split([big], None, 4) is None  # too small to split


def test_no_split_of_a_file_of_one_table(tmp_path, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_ROWS", 100)
    one = generate(1, 60, seed=42).table
    assert pieces.split([_write(one, tmp_path / "one.parquet", 200)], None, 4) is None
    assert pieces.split([_write(generate(3, 40, seed=43).table, tmp_path / "three.parquet",
                               200)], None, 4) is not None
    (tmp_path / "night.csv").write_text("table_id,seq\n" + "T1,1\n" * 1000, encoding="utf-8")
    assert pieces.split([tmp_path / "night.csv"], None, 4) is None


@pytest.mark.parametrize("kind", ["text", "dictionary", "integer", "nulls"])
def test_a_cut_falls_at_the_nearest_end_of_a_run_of_one_table(tmp_path, kind):
    """`cut_near` against the runs counted row by row, for every row: the
    start or end of the run holding it, whichever is nearer."""
    rng = random.Random(7)
    ids: list = []
    while len(ids) < 900:
        value = rng.choice(["T1", "T2", "T3", None] if kind == "nulls" else ["T1", "T2", "T3"])
        ids += [value] * rng.choice([1, 2, 37, 120, 260])
    array = pa.array([int(v[1]) if v else None for v in ids], pa.int64()) \
        if kind == "integer" else pa.array(ids, pa.string())
    table = pa.table({"table_id": array, "seq": pa.array(range(len(ids)), pa.int64())})
    path = tmp_path / "ids.parquet"
    pq.write_table(table, path, row_group_size=128, use_dictionary=kind == "dictionary")
    pf = pq.ParquetFile(path, read_dictionary=["table_id"])
    starts = row_group_starts(pf.metadata)
    bounds = boundaries(array.to_pylist())
    for row in range(len(ids) + 1):
        lo = max(b for b in bounds if b <= row)
        hi = min(b for b in bounds if b >= row)
        assert pieces.cut_near(pf, starts, row) == (lo if row - lo <= hi - row else hi), row


def test_a_piece_reads_only_its_rows_each_numbered_as_in_the_file(big):
    whole, lines, _ = parquet_format.read_parquet(big)
    for a, b in [(0, 10), (499, 1001), (1234, 4321), (4000, whole.num_rows)]:
        part, part_lines, _ = parquet_format.read_parquet(big, rows=(a, b))
        assert part.num_rows == b - a
        assert part_lines.tolist() == lines[a:b].tolist()
        for name in whole.column_names:
            assert part.column(name).cast(pa.string()).equals(
                whole.column(name).slice(a, b - a).cast(pa.string())), name


# --- the audit of a split file ---------------------------------------------------------

@pytest.mark.parametrize("jobs", [2, 3])
def test_a_split_file_is_audited_as_one_reading_of_it(big, ruleset, tmp_path, split, jobs):
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([big]))
    assert len(once.findings) > 50 and len(once.logs.quarantine) == 2
    result = run_audit(AuditJob.of([big], ruleset, jobs=jobs, collector=COLLECTOR))
    held = sorted(split.rows())
    assert len(held) == jobs and held[0][0] == 0
    assert all(a < b for a, b in held)  # (none empty here)
    assert [b for _, b in held[:-1]] == [a for a, _ in held[1:]]  # every row once
    ids = pq.read_table(big, columns=["table_id"]).column(0).to_pylist()
    assert all(a in boundaries(ids) for a, _ in held)  # each cut between two tables
    same_as_once(result, once, tmp_path)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_larger_than_the_budget_is_audited_a_piece_at_a_time(big, ruleset, tmp_path,
                                                                    split, monkeypatch, jobs):
    """Pieces of at most PIECE_BUDGET rows (nominal), more than the workers,
    one process included: a worker holds a piece at a time."""
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 1200)
    n = pq.read_metadata(big).num_rows
    assert len(pieces.split([big], None, jobs)) == -(-n // 1200)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([big]))
    result = run_audit(AuditJob.of([big], ruleset, jobs=jobs, collector=COLLECTOR))
    held = sorted(split.rows())
    assert len(held) >= 4 and held[0][0] == 0 and held[-1][1] == n
    assert [b for _, b in held[:-1]] == [a for a, _ in held[1:]]
    same_as_once(result, once, tmp_path)


@pytest.mark.parametrize("jobs", [1, 2, "dask"])
def test_a_large_file_among_others_is_split_within_the_batches(big, ruleset, tmp_path, split,
                                                               monkeypatch, request, jobs):
    """Many files audited a batch at a time: the large Parquet file that
    shares no table is cut into pieces, the others audited as batches."""
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 2000)
    folder = tmp_path / "month"
    folder.mkdir()
    (folder / "b-big.parquet").write_bytes(big.read_bytes())
    # (T08 in both: one table, so the batch is not cut into ranges of tables)
    other = generate(1, 60, seed=47, inject=["call.wrong_total"], first_table=8).table
    write_log(other.slice(0, 150), folder / "a.csv")
    write_log(other.slice(150), folder / "c.jsonl")
    write_log(generate(1, 30, seed=48, first_table=10).table, folder / "d.parquet")
    files = discover([folder])
    work = pieces.split(files, stream.plan(files), 2 if jobs == "dask" else jobs)
    assert [type(w).__name__ for w in work] == ["Batch", "Piece", "Piece", "Piece", "Batch"]
    assert work[0] == [0, 2]  # a.csv and c.jsonl share T08
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([folder]))
    engine = {"engine": "dask", "scheduler": request.getfixturevalue("cluster")
              .scheduler_address} if jobs == "dask" else {"jobs": jobs}
    result = run_audit(AuditJob.of([folder], ruleset, collector=COLLECTOR, **engine))
    assert len(split.rows()) == 3
    same_as_once(result, once, tmp_path)


def test_work_is_ordered_largest_first_ties_in_file_order():
    work = [stream.Batch([0, 1], rows=300), pieces.Piece("f", 2, 0, 0, 1000, 1500),
            pieces.Piece("f", 2, 1, 1000, 1500, 1500), stream.Batch([3], rows=1000), [4]]
    assert pieces.largest_first(work) == [1, 3, 2, 0, 4]


@pytest.mark.parametrize("jobs", [2, "dask"])
def test_the_largest_work_is_handed_out_first(big, ruleset, tmp_path, split, monkeypatch,
                                              request, jobs):
    """The workers are handed the pieces of the large file before the
    smaller batches (the last to start are the smallest: the workers end
    together), and the reports are those of one reading all the same."""
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 2000)
    folder = tmp_path / "month"
    folder.mkdir()
    # (T08 in both: one table, so the batch is not cut into ranges of tables)
    other = generate(1, 60, seed=47, inject=["call.wrong_total"], first_table=8).table
    write_log(other.slice(0, 150), folder / "a.csv")
    write_log(other.slice(150), folder / "b.jsonl")
    (folder / "c-big.parquet").write_bytes(big.read_bytes())
    write_log(generate(1, 30, seed=48, first_table=10).table, folder / "d.parquet")
    files = discover([folder])
    work = pieces.split(files, stream.plan(files), 2)
    expected = pieces.largest_first(work)
    assert [type(work[k]).__name__ for k in expected] == ["Piece"] * 3 + ["Batch"] * 2
    assert expected != sorted(expected)  # (file order would fail this test)

    handed: list[int] = []
    if jobs == "dask":
        import distributed

        def named(item) -> int:  # a work item's position, from what a task is given
            return next(k for k, w in enumerate(work) if w == item or
                        isinstance(w, pieces.Piece) and isinstance(item, pieces.Piece)
                        and w.part == item.part)
        real_submit = distributed.Client.submit

        def submit(self, func, *args, **kw):
            if func.__name__ == "_audit_piece":
                handed.append(named(args[1]))
            elif func.__name__ == "_audit_batch":
                handed.append(named([files.index(Path(p)) for p in args[0]]))
            return real_submit(self, func, *args, **kw)
        monkeypatch.setattr(distributed.Client, "submit", submit)
        engine = {"engine": "dask", "scheduler": request.getfixturevalue("cluster")
                  .scheduler_address}
    else:
        from auditor.run import local

        class Recording(local.ProcessPoolExecutor):
            def submit(self, call, func, task, *args, **kw):  # (call: `local._with_job`)
                handed.append(task)
                return super().submit(call, func, task, *args, **kw)
        monkeypatch.setattr(local, "ProcessPoolExecutor", Recording)
        engine = {"jobs": jobs}
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([folder]))
    result = run_audit(AuditJob.of([folder], ruleset, collector=COLLECTOR, **engine))
    assert handed == expected
    same_as_once(result, once, tmp_path)


def test_every_report_is_byte_identical_split_or_not(big, tmp_path, split):
    """`auditor check` on the file: --jobs 1, --jobs 2 (split in two) and
    --jobs 3 write the same bytes in every report."""
    written = every_report_by_jobs(big, tmp_path)
    assert len(split.rows()) == 5  # 2 pieces, then 3
    assert len(written["1"]) >= 10
    assert written["2"] == written["1"] and written["3"] == written["1"]


def test_dask_audits_the_same_pieces_with_the_same_worker_function(big, ruleset, tmp_path,
                                                                   split, cluster):
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([big]))
    progress = NoProgress()
    result = run_audit(AuditJob.of([big], ruleset, engine="dask", collector=COLLECTOR,
                                   scheduler=cluster.scheduler_address), progress=progress)
    assert len(split.rows()) == 2  # the cluster's two workers
    same_as_once(result, once, tmp_path)
    # the time left reads by the file's rows, every one counted once
    assert progress.events_total == pq.ParquetFile(big).metadata.num_rows
    assert (progress.files, progress.events) == (1, progress.events_total)


def test_a_file_loaded_at_once_is_cut_for_dask_into_pieces_smaller_than_jobs_asks(
        big, ruleset, tmp_path, monkeypatch, cluster):
    """A single file too small for `--jobs`' pieces: dask's workers still
    share it by pieces (`LOADED_PIECE_ROWS` rows or more each, no more than
    its row groups), not a task per table and day; the result is one
    reading's."""
    from auditor.run import dask_engine

    monkeypatch.setattr(dask_engine, "LOADED_PIECE_ROWS", 400)
    held = held_pieces(monkeypatch, tmp_path)
    assert pieces.split([big], None, 2) is None  # (--jobs 2 loads it at once)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([big]))
    result = run_audit(AuditJob.of([big], ruleset, engine="dask", collector=COLLECTOR,
                                   scheduler=cluster.scheduler_address))
    assert len(held.rows()) == 2  # the cluster's two workers
    same_as_once(result, once, tmp_path)


def test_pieces_smaller_than_piece_rows_are_no_more_than_the_row_groups_or_two(tmp_path):
    log = generate(4, 40, seed=7).table
    two = _write(log, tmp_path / "two.parquet", row_group=-(-log.num_rows // 2))
    assert pq.ParquetFile(two).metadata.num_row_groups == 2
    assert pieces.pieces(two, 0, 8) is None  # (far fewer rows than PIECE_ROWS a worker)
    found = pieces.pieces(two, 0, 8, least=100)
    assert [(p.start, p.stop) for p in found] == [(0, int(row_group_starts(
        pq.ParquetFile(two).metadata)[1])), (int(row_group_starts(
            pq.ParquetFile(two).metadata)[1]), log.num_rows)]
    assert pieces.pieces(two, 0, 8, least=log.num_rows) is None  # one piece: not cut
    one = _write(log, tmp_path / "one.parquet", row_group=log.num_rows)
    assert len(pieces.pieces(one, 0, 8, least=100)) == 2  # (two pieces of one group)


# --- what a piece cannot judge alone -------------------------------------------------------

def test_tables_interleaved_in_time_are_sorted_out_by_table_a_piece_at_a_time(
        tmp_path, ruleset, split, monkeypatch):
    """Rows ordered by time put every table in every piece: each piece is
    sorted out by ranges of tables and each range audited (without a
    scratch folder: the pieces tried, the file read whole), once."""
    interleaved_tables_sorted_out(tmp_path, ruleset, split, monkeypatch, ".parquet")


def test_a_piece_past_its_share_of_the_decoding_cap_reads_the_file_whole(
        big, ruleset, tmp_path, split, monkeypatch):
    real = parquet_format._within_share

    def over(path, packed, table, rows, file_rows):
        if rows[0] > 0:
            raise parquet_format.PieceOverShare(path)
        return real(path, packed, table, rows, file_rows)
    monkeypatch.setattr(parquet_format, "_within_share", over)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([big]))
    result = run_audit(AuditJob.of([big], ruleset, jobs=2, collector=COLLECTOR))
    assert [a for a, _ in split.rows()] == [0]  # the second piece asked for the whole file
    same_as_once(result, once, tmp_path)


def test_a_piece_within_its_share_of_the_cap_is_not_refused(big):
    """A piece is held to its rows' share of the whole file's cap."""
    packed = big.stat().st_size
    part, _, _ = parquet_format.read_parquet(big, rows=(0, 100))
    parquet_format._within_share(big, packed, part, (0, 100), 5000)
    with pytest.raises(parquet_format.PieceOverShare):
        parquet_format._within_share(big, packed, part, (0, 100), 10 ** 12)


def test_a_file_every_row_of_which_is_quarantined_is_one_problem(tmp_path, ruleset, split):
    log = generate(3, 40, seed=45).table
    path = _write(log.set_column(1, "seq", pa.nulls(log.num_rows, pa.int64())),
                  tmp_path / "no-seq.parquet")
    whole, split_error = errors_whole_and_split(path, ruleset)
    assert "every row" in whole and split_error == whole


def test_a_file_that_cannot_be_a_log_gives_the_error_of_one_reading(tmp_path, ruleset, split):
    """The file lacks `die1`, which its rolls require: the error counts the
    file's rolls, not a piece's."""
    log = generate(3, 40, seed=46).table
    path = _write(log.drop_columns(["die1"]), tmp_path / "no-die1.parquet")
    whole, split_error = errors_whole_and_split(path, ruleset)
    assert "die1" in whole and split_error == whole
    rolls = int(np.sum(np.array(log.column("event").to_pylist()) == "roll"))
    assert f"holds {rolls:,})" in whole
