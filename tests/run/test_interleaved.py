"""A large file whose rows interleave its tables (a casino's export in time
order: every table in every piece of it) is sorted out by ranges of its
tables a piece at a time (`auditor.run.by_table`, `pieces.Piece.interleaved`),
each range then audited: a worker holds a piece or a range, never the
file, and the findings, quarantine, provenance and reports are those of one
reading of it."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pieces_check import Held, files_read_whole, same_as_once

from auditor.generate import INJECTABLE, generate, write_log
from auditor.logs import line_runs
from auditor.logs.load import load_logs
from auditor.logs.sessions import joined_marks, table_marks
from auditor.logs.site import path_sites
from auditor.report.html import COLLECTOR
from auditor.run import AuditJob, by_table, pieces, run_audit, stream


def _by_time(log: pa.Table) -> pa.Table:
    """`log`'s rows in time order, the tables interleaved."""
    return log.take(pc.sort_indices(log, sort_keys=[("ts", "ascending"),
                                                   ("table_id", "ascending")]))


def _parquet(table: pa.Table, path: Path, row_group: int = 500) -> Path:
    pq.write_table(table, path, row_group_size=row_group)
    return path


def _with_rows_to_quarantine(table: pa.Table) -> pa.Table:
    """`table` with a row of no table and a row of T02 without a seq."""
    ids = table.column("table_id").to_pylist()
    seq = table.column("seq").to_pylist()
    ids[7] = None
    seq[ids.index("T02", len(ids) // 2)] = None
    table = table.set_column(0, "table_id", pa.array(ids, pa.string()))
    return table.set_column(1, "seq", pa.array(seq, pa.int64()))


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """Five tables for two days in time order, every code planted, two rows
    to quarantine, row groups of 500 rows."""
    log = generate(5, 60, seed=51, days=2, inject=list(INJECTABLE)).table
    return _parquet(_with_rows_to_quarantine(_by_time(log)),
                    tmp_path_factory.mktemp("interleaved") / "by-time.parquet")


@pytest.fixture
def sorted_out(monkeypatch, tmp_path) -> Held:
    """Pieces planned for small files, a range for every table at most; the
    rows each piece sorted out held (written by the worker that did it)."""
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    held = Held(tmp_path / "sorted.txt")
    real = by_table.sort_out

    def spy(item, *rest):
        result = real(item, *rest)
        if isinstance(result, by_table.SortedOut):
            held.add(result.rows)
        return result
    monkeypatch.setattr(by_table, "sort_out", spy)
    return held


# --- the plan ------------------------------------------------------------------------------

def test_the_plan_tells_a_file_of_interleaved_tables_from_one_of_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    log = generate(3, 60, seed=52).table
    runs = pieces.split([_parquet(log, tmp_path / "runs.parquet")], None, 2)
    by_time = pieces.split([_parquet(_by_time(log), tmp_path / "by-time.parquet")], None, 2)
    assert [p.interleaved for p in runs] == [(), ()]
    assert [p.interleaved for p in by_time] == [("T01", "T02", "T03")] * 2
    # one row group: its first rows looked at all the same
    one = pieces.split([_parquet(_by_time(log), tmp_path / "one.parquet", 10 ** 6)], None, 2)
    assert [p.interleaved for p in one] == [("T01", "T02", "T03")] * 2
    assert pieces.interleaved(["T1", "T1", "T2", "T2", None, "T3"]) == ()
    assert pieces.interleaved(["T1", "T2", "T1"]) == ("T1", "T2")
    assert pieces.interleaved(["T1", None, "T1"]) == ()
    # a stray row of another table in runs of one: not interleaved
    assert pieces.interleaved(["T1"] * 40 + ["T9"] + ["T1"] * 40 + ["T2"] * 40) == ()
    assert pieces.interleaved(["T1", "T2"] * 20 + ["T1"] * 40) == ("T1", "T2")


def test_a_text_file_opening_and_closing_on_one_table_is_cut_when_its_tables_interleave(
        tmp_path, monkeypatch):
    """Its first and last lines name one table, which alone would say a
    file of one table (not cut): its first lines interleave tables."""
    monkeypatch.setattr(pieces, "TEXT_PIECE_ROWS", 300)
    log = _by_time(generate(3, 60, seed=53).table)
    ids = log.column("table_id").to_pylist()
    last = len(ids) - 1 - ids[::-1].index("T01")  # (T01's table_close, to the end)
    log = log.take([*(r for r in range(len(ids)) if r != last), last])
    path = tmp_path / "by-time.jsonl"
    write_log(log, path)
    assert log.column("table_id")[0].as_py() == "T01" == log.column("table_id")[-1].as_py()
    found = pieces.split([path], None, 2)
    assert found and found[0].interleaved == ("T01", "T02", "T03")


def test_the_ranges_are_at_least_as_many_as_the_pieces(night, monkeypatch, tmp_path):
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    work = pieces.split([night], None, 2)
    split = by_table.split(work, [night], str(tmp_path))
    assert [type(item) for item in split] == [by_table.SortOut] * 2
    assert [item.piece for item in split] == work
    # five tables of about 1,400 rows, two pieces: ranges of half the file at most
    assert split[0].bounds == split[1].bounds == ("T03", "T05")
    assert by_table.split(work, [night], None) == work  # no scratch folder: pieces


def test_marks_joined_from_pieces_are_those_of_the_whole_file(night):
    """A table's first and last rows, markers, seats' joins and dice moves,
    found in each piece and joined, are those of reading the file whole."""
    events = pq.read_table(night)
    whole = table_marks(events)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.integers(1, events.num_rows - 1), max_size=5, unique=True))
    def check(cuts):
        rows = [0, *sorted(cuts), events.num_rows]
        found = [table_marks(events.slice(a, b - a)) for a, b in pairwise(rows)]
        assert joined_marks(found) == whole
    check()


# --- the audit -----------------------------------------------------------------------------

@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_an_interleaved_file_sorted_out_a_piece_at_a_time_is_one_reading(
        night, ruleset, tmp_path, sorted_out, monkeypatch, jobs):
    """Under --jobs 1 too where the file is larger than a piece may be: every
    row sorted out once, no piece audited as one, the file never read
    whole; the rows to quarantine each judged once."""
    if jobs == 1:
        monkeypatch.setattr(pieces, "PIECE_BUDGET", 2000)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([night]))
    assert len(once.findings) > 50 and len(once.logs.quarantine) == 2
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([night], ruleset, jobs=jobs, collector=COLLECTOR))
    held = sorted(sorted_out.rows())
    assert len(held) == len(pieces.split([night], None, jobs)) >= 2
    assert held[0][0] == 0 and held[-1][1] == pq.read_metadata(night).num_rows
    assert [b for _, b in held[:-1]] == [a for a, _ in held[1:]]  # every row once
    assert whole == []
    same_as_once(result, once, tmp_path)
    malformed = result.findings[result.findings["code"] == "log.malformed"]
    assert len(malformed) == 2


def test_a_file_replaced_between_its_pieces_is_read_whole(night, ruleset, tmp_path,
                                                          sorted_out, monkeypatch):
    """Its pieces saw another file each time (an exporter renamed a new one
    over it): the file is read whole, once, its hash and rows from one file."""
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 2000)
    seen = iter(range(10 ** 6))
    monkeypatch.setattr(pieces, "file_as_it_stands", lambda path: (next(seen),))
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([night]))
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([night], ruleset, collector=COLLECTOR))
    assert sorted_out.rows() == [] and whole == [[night]]
    same_as_once(result, once, tmp_path)


def test_each_casino_s_interleaved_file_is_ranged_by_its_own_keyed_tables(
        tmp_path, ruleset, sorted_out):
    """--site-from-path: two casinos' files of the same table ids, each
    sorted out by the tables keyed by its casino."""
    root = tmp_path / "logs"
    for site, seed in (("casino-a", 54), ("casino-b", 55)):
        (root / site).mkdir(parents=True)
        _parquet(_by_time(generate(4, 50, seed=seed, inject=["call.wrong_total"]).table),
                 root / site / "night.parquet")
    files = sorted(root.rglob("*.parquet"))
    sites = path_sites([root], files)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([root], sites=sites))
    result = run_audit(AuditJob.of([root], ruleset, jobs=2, site_from_path=True,
                                   collector=COLLECTOR))
    assert len(sorted_out.rows()) == 4  # two pieces a file
    assert set(result.findings["site"]) == {"casino-a", "casino-b"}
    same_as_once(result, once, tmp_path)


def test_dask_s_local_cluster_sorts_an_interleaved_file_out(night, ruleset, tmp_path,
                                                            sorted_out):
    pytest.importorskip("distributed")
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([night]))
    result = run_audit(AuditJob.of([night], ruleset, engine="dask", jobs=2,
                                   collector=COLLECTOR))
    same_as_once(result, once, tmp_path)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".csv"])
def test_a_file_whose_first_hour_is_one_table_s_is_seen_interleaved_further_on(
        tmp_path, ruleset, sorted_out, monkeypatch, suffix):
    """Its first rows are all one table's (the others opened later): the
    plan looks further on too (the first row group that overlaps the one
    before; the middle of a text file), sees the tables interleave, and the
    file is sorted out by table, one reading's audit."""
    monkeypatch.setattr(pieces, "TEXT_PIECE_ROWS", 400)
    monkeypatch.setattr(pieces, "CSV_PIECE_ROWS", 400)
    monkeypatch.setattr(line_runs, "EDGE_BYTES", 4096)
    log = _by_time(generate(3, 80, seed=56, inject=["call.wrong_total"]).table)
    ids = log.column("table_id").to_pylist()
    early = [r for r, t in enumerate(ids) if t == "T01"][:700]
    taken = set(early)
    log = log.take([*early, *(r for r in range(len(ids)) if r not in taken)])
    path = tmp_path / f"late{suffix}"
    if suffix == ".parquet":
        _parquet(log, path, row_group=300)
    else:
        write_log(log, path)
    assert pieces.interleaved(log.column("table_id").to_pylist()[:600]) == ()
    plan = pieces.split([path], None, 2)
    assert plan[0].interleaved == ("T01", "T02", "T03")
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([path]))
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    assert len(sorted_out.rows()) == 2 and whole == []
    same_as_once(result, once, tmp_path)


def test_a_cluster_of_its_own_sorts_an_interleaved_file_out_into_its_scratch(
        night, ruleset, tmp_path, sorted_out, cluster):
    """With `--scheduler` and a `--scratch` its workers see, the pieces are
    sorted out there (a worker a piece), each range a task; without
    `--scratch`, tried as pieces and read whole by one task: one reading's
    audit either way."""
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([night]))
    (tmp_path / "scratch").mkdir()
    result = run_audit(AuditJob.of([night], ruleset, engine="dask", collector=COLLECTOR,
                                   scheduler=cluster.scheduler_address,
                                   scratch=str(tmp_path / "scratch")))
    assert len(sorted_out.rows()) == 2  # the cluster's two workers, a piece each
    same_as_once(result, once, tmp_path)
    # (its parts removed as the audit ends; the dice rows spilled for the
    # reports stay until they are written)
    assert [p for p in (tmp_path / "scratch").iterdir() if "-tables-" in p.name] == []
    result = run_audit(AuditJob.of([night], ruleset, engine="dask", collector=COLLECTOR,
                                   scheduler=cluster.scheduler_address))
    assert len(sorted_out.rows()) == 2  # (none sorted out this time)
    (tmp_path / "apart").mkdir()
    same_as_once(result, once, tmp_path / "apart")
