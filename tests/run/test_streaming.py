"""Auditing many files a batch of linked files at a time (`auditor.run.stream`)
gives the same findings, quarantine, provenance and report bytes as loading
every file at once, the HTML report included, without reading the events
again."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from builder import append_broken_rows, batches_always, report_bytes, two_casinos
from click.testing import CliRunner

from auditor.cli import main
from auditor.errors import LogFileError
from auditor.generate import INJECTABLE, generate, write_log
from auditor.logs import line_runs
from auditor.logs.discover import discover, plain_format, plain_parquet
from auditor.logs.identity import TableIdentityError, check_events
from auditor.logs.load import load_logs
from auditor.logs.raw import ReadOptions
from auditor.report.dice_tally import Spilled
from auditor.report.html import COLLECTOR, render_html
from auditor.run import AuditJob, local, run_audit, stream
from auditor.run.stream import LazyLogs, components, pack

META = {"test": "streaming"}


@pytest.fixture(scope="module")
def logs_dir(tmp_path_factory) -> Path:
    """Six files, in several formats: T05 split over two files (d1, d2) with a
    third file (c) between them in file order; a CSV with broken rows (one of
    a table with no other row, one of no table at all); a column of the
    log's own in one file (e); every code planted."""
    d = tmp_path_factory.mktemp("streaming")
    a = generate(2, 80, seed=31, inject=list(INJECTABLE))
    write_log(a.table, d / "a.parquet")
    b = generate(1, 60, seed=32, inject=["call.wrong_total", "offer.order"], first_table=3)
    write_log(b.table, d / "b.csv")
    append_broken_rows(d / "b.csv")
    c = generate(1, 70, seed=33, inject=["settle.missing", "log.sequence_gap"], first_table=4)
    write_log(c.table, d / "c.jsonl")
    t5 = generate(1, 90, seed=34, inject=["log.out_of_order", "call.missing"], first_table=5)
    half = t5.table.num_rows // 2
    write_log(t5.table.slice(half), d / "d1.parquet")  # the later half first
    write_log(t5.table.slice(0, half), d / "d2.csv")
    e = generate(1, 50, seed=35, inject=["offer.order"], first_table=6).table
    note = pa.array([f"<b>note {i}</b>" if i % 3 else None for i in range(e.num_rows)])
    write_log(e.append_column("note", note), d / "e.parquet")
    return d


@pytest.fixture
def streaming(monkeypatch):
    """Every input streamed, one component per batch."""
    batches_always(monkeypatch)
    audited: list[list[str]] = []
    real = stream.audit_batch

    def spy(files, ruleset, progress, *rest):
        audited.append([Path(f).name for f in files])
        return real(files, ruleset, progress, *rest)
    monkeypatch.setattr(stream, "audit_batch", spy)
    return audited


def _bytes(result, tmp_path: Path, name: str) -> tuple[bytes, bytes]:
    return report_bytes(result, tmp_path / name, META)


def _same(streamed, once, tmp_path):
    assert _bytes(streamed, tmp_path, "streamed") == _bytes(once, tmp_path, "once")
    assert streamed.logs.quarantine.equals(once.logs.quarantine)
    assert [f.as_dict() for f in streamed.logs.inputs] == [f.as_dict() for f in once.logs.inputs]
    assert streamed.tables == once.tables
    page = render_html(streamed, META)
    assert page == render_html(once, META)
    assert page.count('<dl class="facts game">') > 10  # findings with the game beside them
    if isinstance(streamed.logs, LazyLogs):  # the page came from the batches
        assert streamed.logs._events is None


def test_the_plan_keeps_files_sharing_a_table_together(logs_dir, streaming):
    files = discover([logs_dir])
    assert [f.name for f in files] == ["a.parquet", "b.csv", "c.jsonl", "d1.parquet",
                                       "d2.csv", "e.parquet"]
    assert stream.plan(files) == [[0], [1], [2], [3, 4], [5]]
    assert stream.scan(files[1]).tables == {"T03", "T99"}  # a quarantined row's table too


def test_the_plan_reads_the_table_column_the_configuration_renames(tmp_path, streaming,
                                                                  ruleset):
    """Files whose table column is `Table`, read as `table_id` by the
    project configuration's `columns`: the plan finds their tables as the
    loader will (a Parquet file's footer and column, a CSV header), so the
    files holding T01 are one batch. (The scans looked for `table_id` alone:
    a Parquet file so named no table to the plan, was planned apart from the
    other file of its table, and the run fell back to one load.)"""
    night = generate(2, 60, seed=44).table
    night = night.rename_columns(["Table" if c == "table_id" else c for c in night.column_names])
    ids = night.column("Table").to_pylist()
    t01 = night.filter(pa.array([t == "T01" for t in ids]))
    half = t01.num_rows // 2
    write_log(t01.slice(0, half), tmp_path / "a.parquet")
    write_log(night.filter(pa.array([t == "T02" for t in ids])), tmp_path / "b.csv")
    write_log(t01.slice(half), tmp_path / "c.parquet")
    read = ReadOptions(columns=(("Table", "table_id"),))
    files = discover([tmp_path])
    assert [stream.scan(f, read).tables for f in files] == [{"T01"}, {"T02"}, {"T01"}]
    assert stream.plan(files, read=read) == [[0, 2], [1]]
    streamed = run_audit(AuditJob.of([tmp_path], ruleset, read=read))
    assert sorted(streaming) == [["a.parquet", "c.parquet"], ["b.csv"]]  # (no fallback)
    assert streamed.tables == ["T01", "T02"]


def test_two_casinos_tables_of_one_id_are_planned_apart(tmp_path, streaming):
    """--site-from-path: casino-a's T01 and casino-b's are two tables to the
    audit, and to the plan: two batches, not one input loaded at once. A
    file with a `site` column of its own (a cell names any site) keeps the
    plan of a run without sites."""
    from auditor.logs.site import path_sites

    files = two_casinos(tmp_path)
    sites = path_sites([tmp_path], files)
    assert stream.plan(files) is None  # (T01 links all three: one batch)
    assert stream.plan(files, sites=sites) == [[0, 1], [2]]
    renamed = ReadOptions(columns=(("casino", "site"),))  # (a column read as `site`)
    assert stream.plan(files, sites=sites, read=renamed) is None
    own = generate(1, 30, seed=43).table
    write_log(own.append_column("site", pa.array(["casino-b"] * own.num_rows)),
              tmp_path / "casino-b" / "n2.parquet")
    files = discover([tmp_path])
    assert stream.plan(files, sites=path_sites([tmp_path], files)) is None


@pytest.mark.parametrize("jobs", [1, 2])
def test_two_casinos_audited_a_batch_each_report_as_one_load(tmp_path, ruleset, streaming,
                                                             jobs):
    two_casinos(tmp_path / "logs")
    once = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, site_from_path=True,
                                 collector=COLLECTOR))
    streaming.clear()
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, jobs=jobs,
                                     site_from_path=True, collector=COLLECTOR))
    if jobs == 1:  # (the batches a worker audits are not seen here)
        assert sorted(streaming) == [["n1.jsonl"], ["n1.parquet", "n2.csv"]]
    parts = streamed.logs.digest["dice"].custody.parts  # a part a batch, spilled by a worker
    assert [isinstance(p, Spilled) for p in parts] == [jobs == 2] * 2
    assert set(streamed.findings["site"]) == {"casino-a", "casino-b"}
    assert _bytes(streamed, tmp_path, "streamed") == _bytes(once, tmp_path, "once")
    assert render_html(streamed, META) == render_html(once, META)


@pytest.mark.parametrize("jobs", [1, 2])
def test_streamed_findings_are_those_of_one_load(logs_dir, ruleset, tmp_path, streaming, jobs):
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    assert len(once.findings) > 50 and len(once.logs.quarantine) == 2
    streamed = run_audit(AuditJob.of([logs_dir], ruleset, jobs=jobs, collector=COLLECTOR))
    if jobs == 1:
        assert streaming == [["a.parquet"], ["b.csv"], ["c.jsonl"],
                             ["d1.parquet", "d2.csv"], ["e.parquet"]]
    assert isinstance(streamed.logs, LazyLogs)
    _same(streamed, once, tmp_path)
    # the events, when a report asks for them, are those of one load
    assert streamed.logs.events.equals(once.logs.events)


def test_dask_audits_the_same_batches_with_the_same_worker_function(
        logs_dir, ruleset, tmp_path, streaming, cluster, monkeypatch):
    """Under dask each batch is a task running `stream.audit_batch`, reading
    its files by their absolute paths and naming them as given."""
    monkeypatch.chdir(logs_dir.parent)
    named = Path(logs_dir.name)  # a relative path: the workers read the absolute one
    streamed = run_audit(AuditJob.of([named], ruleset, engine="dask", collector=COLLECTOR,
                                     scheduler=cluster.scheduler_address))
    assert sorted(streaming) == [["a.parquet"], ["b.csv"], ["c.jsonl"],
                                 ["d1.parquet", "d2.csv"], ["e.parquet"]]
    assert [f.path for f in streamed.logs.inputs] == [str(named / f.name) for f in
                                                      sorted(logs_dir.iterdir())]
    again = run_audit(AuditJob.of([named], ruleset, collector=COLLECTOR))  # --jobs 1, named so
    _same(streamed, again, tmp_path)


def test_dask_batches_name_the_first_file_that_cannot_be_a_log(logs_dir, ruleset, streaming,
                                                              cluster, tmp_path):
    for f in sorted(logs_dir.iterdir()):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    (tmp_path / "c.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "e.parquet").write_bytes(b"not parquet")
    with pytest.raises(LogFileError, match=r"c\.jsonl: the file is empty"):
        run_audit(AuditJob.of([tmp_path], ruleset, engine="dask",
                              scheduler=cluster.scheduler_address))


@pytest.mark.parametrize(("per_table_code", "budget"), [(1, 2000), (3, 12), (2000, 100_000)])
def test_the_html_report_lists_the_same_rows_whatever_its_cap(logs_dir, ruleset, streaming,
                                                              per_table_code, budget):
    """The batches keep the rows around every critical finding and the
    first others of each table and code (the most the page lists by
    default); a page capped lower lists the same, and one asking for more
    reads the events again."""
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    streamed = run_audit(AuditJob.of([logs_dir], ruleset, collector=COLLECTOR))
    page = render_html(streamed, META, per_table_code=per_table_code, budget=budget)
    assert page == render_html(once, META, per_table_code=per_table_code, budget=budget)
    assert (streamed.logs._events is None) == (per_table_code <= 200)
    if per_table_code == 2000:  # the log's own column, in the rows around e's findings
        assert "&lt;b&gt;note " in page


@pytest.mark.parametrize("jobs", [1, 2])
def test_batches_keep_nothing_for_an_html_report_not_asked_for(logs_dir, ruleset, streaming,
                                                               jobs):
    """Without HTML (the default report is Parquet only) the batches keep
    none of their events; a page written all the same reads them again and
    is the page of one load."""
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    streamed = run_audit(AuditJob.of([logs_dir], ruleset, jobs=jobs))
    assert isinstance(streamed.logs, LazyLogs) and streamed.logs.digest is None
    assert streamed.findings.equals(once.findings)
    assert render_html(streamed, META) == render_html(once, META)
    assert streamed.logs._events is not None


def test_batches_of_several_components(logs_dir, ruleset, tmp_path, monkeypatch, streaming):
    monkeypatch.setattr(stream, "STREAM_EVENTS", 3000)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    streamed = run_audit(AuditJob.of([logs_dir], ruleset, collector=COLLECTOR))
    assert 1 < len(streaming) < 5
    _same(streamed, once, tmp_path)


def test_a_wrong_plan_falls_back_to_one_load(logs_dir, ruleset, tmp_path, monkeypatch,
                                             streaming):
    """A scan that misses a table (here: every one) is caught when the
    batches are loaded: the audit starts again, all at once."""
    monkeypatch.setattr(stream, "scan", lambda path, *options: stream.Scanned(frozenset(), 10))
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    streamed = run_audit(AuditJob.of([logs_dir], ruleset))
    assert ["d1.parquet"] in streaming  # T05 was cut in two, then found
    assert not isinstance(streamed.logs, LazyLogs)
    _same(streamed, once, tmp_path)


def test_an_input_small_enough_is_loaded_at_once(logs_dir, ruleset, monkeypatch):
    calls = []
    monkeypatch.setattr(stream, "audit_batch", lambda *a: calls.append(a))
    result = run_audit(AuditJob.of([logs_dir], ruleset))
    assert not calls and not isinstance(result.logs, LazyLogs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_input_loaded_at_once_gives_the_page_its_groups_took(logs_dir, ruleset, jobs):
    """Loaded at once, each group of tables (one, or one per worker) hands
    the collector its events and replay state: the page is the one a report
    makes from the events, and the caller's logs are left as they were."""
    logs = load_logs([logs_dir])
    once = run_audit(AuditJob.loaded(ruleset), loaded=logs)
    taken = run_audit(AuditJob.loaded(ruleset, jobs=jobs, collector=COLLECTOR), loaded=logs)
    assert taken.logs.digest is not None and not hasattr(logs, "digest")
    page = render_html(taken, META)
    assert page == render_html(once, META)
    assert page.count('<dl class="facts game">') > 10


def test_the_check_command_writes_the_same_reports(logs_dir, tmp_path, monkeypatch):
    def check(out: str):
        return CliRunner().invoke(main, ["check", str(logs_dir), "-r", "nz-table-games",
                                         "--out", str(tmp_path / out), "-q",
                                         "--format", "parquet", "--format", "html",
                                         "--format", "json"], catch_exceptions=False)
    once = check("once")
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    streamed = check("streamed")
    assert once.exit_code == streamed.exit_code == 1
    for name in ("findings.parquet", "quarantine.parquet", "report.html", "findings.jsonl",
                 "summary.json"):
        assert (tmp_path / "once" / name).read_bytes() == \
            (tmp_path / "streamed" / name).read_bytes(), name


def test_the_first_bad_file_is_named_as_by_one_load(tmp_path, ruleset, streaming):
    """The scan reads a Parquet file's table_id only, so a later batch may be
    the first to meet a bad file: the error is still that of the first bad
    file in file order."""
    good = generate(1, 20, seed=41)
    write_log(good.table, tmp_path / "a.parquet")
    bad = generate(1, 20, seed=42, first_table=2).table
    pq.write_table(bad.drop_columns(["seq"]), tmp_path / "b.parquet")  # no seq column
    (tmp_path / "c.csv").write_text("", encoding="utf-8")
    with pytest.raises(LogFileError) as once:
        load_logs([tmp_path])
    with pytest.raises(LogFileError) as streamed:
        run_audit(AuditJob.of([tmp_path], ruleset))
    assert str(streamed.value) == str(once.value)
    assert "b.parquet" in str(once.value)
    with pytest.raises(LogFileError) as by_jobs:
        run_audit(AuditJob.of([tmp_path], ruleset, jobs=2))
    assert str(by_jobs.value) == str(once.value)


def test_many_files_are_scanned_by_the_workers(logs_dir, ruleset, tmp_path, streaming,
                                              monkeypatch):
    """From `SCAN_IN_WORKERS` files, `--jobs` scans them for its plan in its
    workers, each a run of them, not in the main process before any worker
    starts: the plan, and the audit, one load's."""
    monkeypatch.setattr(stream, "SCAN_IN_WORKERS", 2)
    where = tmp_path / "scanned-in.txt"
    real = stream.scan

    def spy(path, *args):
        with where.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {Path(path).name}\n")
        return real(path, *args)
    monkeypatch.setattr(stream, "scan", spy)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    streamed = run_audit(AuditJob.of([logs_dir], ruleset, jobs=2, collector=COLLECTOR))
    scanned = [line.split() for line in where.read_text(encoding="utf-8").splitlines()]
    assert sorted(name for _, name in scanned) == sorted(p.name for p in logs_dir.iterdir())
    assert str(os.getpid()) not in {pid for pid, _ in scanned}
    files = discover([logs_dir])
    job = AuditJob.of([logs_dir], ruleset, jobs=2)
    assert stream.plan(files, scan_all=local._scanner(job)) == stream.plan(files) \
        == [[0], [1], [2], [3, 4], [5]]
    _same(streamed, once, tmp_path)


def _scanned_where(monkeypatch) -> list[tuple[str, str]]:
    """Each file `stream.scan` scans, and whether a dask worker or the
    client scanned it (the `cluster` fixture's workers are threads)."""
    distributed = pytest.importorskip("distributed")
    where: list[tuple[str, str]] = []
    real = stream.scan

    def spy(path, *args):
        try:
            distributed.get_worker()
            who = "worker"
        except ValueError:
            who = "client"
        where.append((who, Path(path).name))
        return real(path, *args)
    monkeypatch.setattr(stream, "scan", spy)
    return where


def test_many_files_are_scanned_by_the_dask_workers(logs_dir, ruleset, tmp_path, streaming,
                                                   cluster, monkeypatch):
    """From `SCAN_IN_WORKERS` files, dask scans them for its plan in its
    workers, a task a run of files, as `--jobs` does: the client scans
    none, and the plan and the audit are one load's."""
    monkeypatch.setattr(stream, "SCAN_IN_WORKERS", 2)
    where = _scanned_where(monkeypatch)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    streamed = run_audit(AuditJob.of([logs_dir], ruleset, engine="dask",
                                     scheduler=cluster.scheduler_address, collector=COLLECTOR))
    assert sorted(name for _, name in where) == sorted(p.name for p in logs_dir.iterdir())
    assert {who for who, _ in where} == {"worker"}
    assert streaming  # (audited by batches, as planned)
    _same(streamed, once, tmp_path)


def test_few_files_are_scanned_by_the_dask_client(logs_dir, ruleset, streaming, cluster,
                                                 monkeypatch):
    """Below `SCAN_IN_WORKERS` files the client scans them itself, before
    the cluster is asked for anything (a task a run would cost more)."""
    where = _scanned_where(monkeypatch)
    run_audit(AuditJob.of([logs_dir], ruleset, engine="dask",
                          scheduler=cluster.scheduler_address))
    assert where and {who for who, _ in where} == {"client"}


def test_the_job_reaches_each_worker_once_not_with_every_batch(logs_dir, ruleset, tmp_path,
                                                              streaming, monkeypatch):
    """The job carries the input's file list (0.37 MB at 10,000 files): the
    workers of `--jobs` get it as they start (forked: not sent at all), not
    pickled with each of the five batches."""
    sent = tmp_path / "pickled.txt"

    def counted(job):
        with sent.open("a", encoding="utf-8") as out:
            out.write("job\n")
        return job.__dict__
    monkeypatch.setattr(AuditJob, "__getstate__", counted, raising=False)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([logs_dir]))
    streamed = run_audit(AuditJob.of([logs_dir], ruleset, jobs=2, collector=COLLECTOR))
    pickled = sent.read_text(encoding="utf-8").count("job") if sent.exists() else 0
    assert pickled <= 2  # (none where workers fork; one a worker where they are spawned)
    _same(streamed, once, tmp_path)


def test_the_first_bad_file_is_named_as_by_one_load_when_workers_scan(tmp_path, ruleset,
                                                                      streaming, monkeypatch):
    """Files the scan cannot read in two of the workers' runs, and before
    them one only the load finds bad: the error is the first bad file's in
    file order."""
    monkeypatch.setattr(stream, "SCAN_IN_WORKERS", 2)
    for k in range(8):
        write_log(generate(1, 10, seed=50 + k, first_table=k + 1).table,
                  tmp_path / f"{k}.parquet")
    bad = generate(1, 10, seed=42, first_table=20).table
    pq.write_table(bad.drop_columns(["seq"]), tmp_path / "1.parquet")  # found by the load
    (tmp_path / "3.csv").write_text("", encoding="utf-8")  # found by the scan
    (tmp_path / "6.csv").write_text("no,log\n", encoding="utf-8")
    with pytest.raises(LogFileError) as once:
        load_logs([tmp_path])
    assert "1.parquet" in str(once.value)
    with pytest.raises(LogFileError) as by_jobs:
        run_audit(AuditJob.of([tmp_path], ruleset, jobs=2))
    assert str(by_jobs.value) == str(once.value)
    (tmp_path / "1.parquet").unlink()
    with pytest.raises(LogFileError) as once:
        load_logs([tmp_path])
    with pytest.raises(LogFileError) as by_jobs:
        run_audit(AuditJob.of([tmp_path], ruleset, jobs=2))
    assert "3.csv" in str(once.value) and str(by_jobs.value) == str(once.value)


def test_the_first_bad_file_is_named_as_by_one_load_when_dask_workers_scan(
        tmp_path, ruleset, streaming, cluster, monkeypatch):
    """Under dask too: files the scan cannot read in two of the workers'
    runs, the error the first bad file's in file order, as one load names
    it."""
    monkeypatch.setattr(stream, "SCAN_IN_WORKERS", 2)
    for k in range(8):
        write_log(generate(1, 10, seed=50 + k, first_table=k + 1).table,
                  tmp_path / f"{k}.parquet")
    (tmp_path / "3.csv").write_text("", encoding="utf-8")
    (tmp_path / "6.csv").write_text("no,log\n", encoding="utf-8")
    with pytest.raises(LogFileError) as once:
        load_logs([tmp_path])
    with pytest.raises(LogFileError) as by_dask:
        run_audit(AuditJob.of([tmp_path], ruleset, engine="dask",
                              scheduler=cluster.scheduler_address))
    assert "3.csv" in str(once.value) and str(by_dask.value) == str(once.value)


def test_the_table_clash_named_is_that_of_one_load(tmp_path, ruleset, streaming, cluster):
    """Two clashes in two batches (T02 given twice in the first, T01 in the
    second): one load names the least table id, and so does every engine,
    the batches heard out, not the first batch to end (which named T02
    under --jobs 1, and whichever a worker ended first under --jobs and
    dask)."""
    for name, first_table in (("a1", 2), ("a2", 2), ("b1", 1), ("b2", 1)):
        write_log(generate(1, 20, seed=41 + first_table, first_table=first_table).table,
                  tmp_path / f"{name}.parquet")
    with pytest.raises(TableIdentityError) as once:
        check_events(load_logs([tmp_path]).events)
    assert once.value.table == "T01"
    for job in (AuditJob.of([tmp_path], ruleset), AuditJob.of([tmp_path], ruleset, jobs=2),
                AuditJob.of([tmp_path], ruleset, engine="dask",
                            scheduler=cluster.scheduler_address)):
        with pytest.raises(TableIdentityError) as by_batches:
            run_audit(job)
        assert str(by_batches.value) == str(once.value), job.engine
    assert {tuple(batch) for batch in streaming} == {("a1.parquet", "a2.parquet"),
                                                     ("b1.parquet", "b2.parquet")}


def test_scans_read_table_ids_as_the_loader_types_them(tmp_path):
    table = pa.table({"table_id": pa.array([" T1 ", "T2", None, "", "T1"]),
                      "seq": pa.array([1, 2, 3, 4, 5])})
    pq.write_table(table, tmp_path / "a.parquet")
    assert stream.scan(tmp_path / "a.parquet") == stream.Scanned(frozenset({"T1", "T2"}), 5)
    numbers = table.set_column(0, "table_id", pc.cast(pa.array([7, 8, None, 9, 7]), pa.int64()))
    pq.write_table(numbers, tmp_path / "b.parquet")
    assert stream.scan(tmp_path / "b.parquet").tables == {"7", "8", "9"}
    (tmp_path / "c.csv").write_text("table_id,seq\n T3 ,1\n\nT4,2,extra\n\"T5\",3\n",
                                    encoding="utf-8")
    assert stream.scan(tmp_path / "c.csv").tables == {"T3", "T5"}


#: The rest of a JSON line: an event the loader reads.
_OPEN = '"ts": "2026-03-01T20:00:00+00:00", "event": "table_open"}'


def _read_by_loader(monkeypatch) -> list[str]:
    """The files the scan goes on to read as the loader does, from now on."""
    read: list[str] = []
    real = stream.read_log

    def spy(path, *args, **kw):
        read.append(Path(path).name)
        return real(path, *args, **kw)
    monkeypatch.setattr(stream, "read_log", spy)
    return read


def test_a_json_lines_scan_reads_each_lines_table_as_written_not_the_lines(tmp_path,
                                                                           monkeypatch):
    read = _read_by_loader(monkeypatch)
    lines = ['{"table_id": " T1 ", "seq": 1, ' + _OPEN, '{"seq":2,"table_id":"T\\u0032",' + _OPEN,
             '{"table_id":"", "seq": 3,' + _OPEN,
             '{"table_id":"T1","note":"\\"table_id\\": x",' + _OPEN]
    path = tmp_path / "night.jsonl"
    path.write_bytes("\r\n".join(lines).encode())  # (no line break after the last)
    scanned = stream.scan(path)
    assert read == []
    assert scanned == stream.Scanned(frozenset({"T1", "T2"}), 4)
    assert scanned.tables == set(load_logs([path]).events["table_id"].astype(str))


@pytest.mark.parametrize(("line", "read_whole"), [
    ('{"table_id": 7, "seq": 9, ' + _OPEN, True),  # a bare value: typed by the loader
    ('{"seq": 9, ' + _OPEN, True),  # no table named
    ('', True),  # a blank line
    ('{"table_id": "T3", "x": {"table_id": "T4"}, "seq": 9, ' + _OPEN, True),  # a key nested
    ('{"table_id": "T3", "site": "casino-b", "seq": 9, ' + _OPEN, True),  # a site of its own
    ('{"table_id": "T3", "seq": 9', False),  # not JSON: named all the same
])
def test_a_json_lines_line_the_scan_cannot_vouch_for_has_the_file_read(tmp_path, monkeypatch,
                                                                         line, read_whole):
    read = _read_by_loader(monkeypatch)
    path = tmp_path / "night.jsonl"
    path.write_text('{"table_id": "T1", "seq": 1, ' + _OPEN + "\n" + line + "\n"
                    '{"table_id": "T2", "seq": 2, ' + _OPEN + "\n", encoding="utf-8")
    scanned = stream.scan(path)
    assert read == (["night.jsonl"] if read_whole else [])
    loaded = stream._table_names(stream.read_log(path).table.column("table_id"))
    # (a line the loader quarantines may add a table to the scan's: the
    # plan then only keeps its file with that table's other files)
    assert scanned.tables == loaded if read_whole else scanned.tables == loaded | {"T3"}


def test_a_json_lines_line_too_long_to_hold_has_the_file_read(tmp_path, monkeypatch):
    """The scan holds a block of whole lines at a time: at a line longer
    than `LONG_LINE_BYTES` it stops, and the file is read as the loader
    reads it."""
    read = _read_by_loader(monkeypatch)
    path = tmp_path / "night.jsonl"
    path.write_text('{"table_id": "T1", "seq": 1, ' + _OPEN + "\n"
                    '{"table_id": "T2", "seq": 2, "note": "' + "x" * 600 + '", ' + _OPEN + "\n",
                    encoding="utf-8")
    monkeypatch.setattr(line_runs, "LONG_LINE_BYTES", 4096)
    assert stream.scan(path).tables == {"T1", "T2"} and read == []
    monkeypatch.setattr(line_runs, "LONG_LINE_BYTES", 100)
    monkeypatch.setattr(line_runs, "BLOCK_BYTES", 64)
    assert stream.scan(path).tables == {"T1", "T2"} and read == ["night.jsonl"]


def test_a_scan_of_a_csv_with_bytes_that_are_not_utf8_says_nothing_and_reads_as_the_loader(
        tmp_path, monkeypatch):
    """A row of the wrong length holding bytes that are not UTF-8: Arrow
    cannot hand it to the scan's row handler (it fails decoding it, and the
    failure was printed, a traceback, on the terminal). The scan reads such
    a file as the loader does, in silence."""
    raised = []
    monkeypatch.setattr(sys, "unraisablehook", raised.append)
    path = tmp_path / "night.csv"
    write_log(generate(2, 5, seed=3).table, path)
    with path.open("ab") as out:
        out.write(b"T09,1,2,extra \xff\xfe\n")  # (the wrong cell count: quarantined)

    scanned = stream.scan(path)

    assert raised == []
    loaded = load_logs([path])
    assert scanned.tables == set(loaded.events["table_id"].astype(str)) == {"T01", "T02"}
    assert len(loaded.quarantine) == 1


def test_components_and_packing():
    tables = [frozenset({"A"}), frozenset({"B"}), frozenset({"A", "C"}), frozenset(),
              frozenset({"C"}), frozenset({"D"})]
    assert components(tables) == [[0, 2, 4], [1], [3], [5]]
    rows = [10, 10, 10, 10, 10, 10]
    assert pack(components(tables), rows, 25) == [[0, 2, 4], [1, 3], [5]]
    assert pack(components(tables), rows, 1) == [[0, 2, 4], [1], [3], [5]]
    assert pack(components(tables), rows, 1000) == [[0, 1, 2, 3, 4, 5]]


def test_a_batch_s_events_are_freed_when_it_ends_without_a_collection(tmp_path, monkeypatch):
    # audit_batch drops each batch's events before the next is read; they
    # must go by their count of references (no cycle through the replay
    # state, the checks' look-ups or the collectors' takings), since no
    # collection of the whole heap is run between batches.
    import gc
    import weakref

    from auditor.app.check import collector_for
    from auditor.audit.exposure import EXPOSURE, Paired
    from auditor.rules.ruleset import load_ruleset
    from auditor.run.progress import NoProgress

    log = tmp_path / "night.csv"
    write_log(generate(2, 60, seed=3, inject=list(INJECTABLE)).table, log)
    loaded = []
    real = stream.load_with_progress

    def keep_a_weak_reference(*args, **kwargs):
        logs = real(*args, **kwargs)
        loaded.append((weakref.ref(logs), weakref.ref(logs.events)))
        return logs

    monkeypatch.setattr(stream, "load_with_progress", keep_a_weak_reference)
    job = AuditJob.of([log], load_ruleset("nz-table-games"),
                      collector=Paired(EXPOSURE, collector_for(("parquet", "html", "json"))))
    gc.disable()
    try:
        out = stream.audit_batch(list(job.files), job, NoProgress())
        assert len(out.findings) and loaded
        assert all(logs() is None and events() is None for logs, events in loaded)
    finally:
        gc.enable()


@pytest.mark.parametrize(("names", "read_rows", "shares"), [
    (["a.parquet", "b.parquet"], False, 4),  # footers tell the plan: batches for workers
    (["a.parquet", "b.parquet.gz"], False, 0),  # a gzip'd file is read whole to plan
    (["a.parquet", "b.csv"], False, 0),  # a CSV file's table_id column is read
    (["a.jsonl", "b.csv"], True, 4),  # (dask: batches whatever the plan reads)
    (["a.parquet"], False, 0),  # one file: pieces, not a plan
])
def test_small_shares_for_workers_need_footers_alone_when_rows_may_not_be_read(
        tmp_path, names, read_rows, shares):
    files = []
    for name in names:
        (tmp_path / name).write_bytes(b"x" * 100)  # (small: the names decide)
        files.append(tmp_path / name)
    assert stream.small_shares(files, 2, read_rows=read_rows) == shares


@pytest.mark.parametrize("names", [["a.jsonl", "b.csv"], ["a.parquet", "b.csv.gz"]])
def test_an_input_the_plan_scans_anyway_is_shared_out_in_batches(tmp_path, monkeypatch, names):
    """Not small, the input is scanned whatever its formats: its batches are
    sized for the workers (at most its events over twice their number), so
    that an input of a batch or two is not loaded by the main process."""
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 150)
    files = []
    for name in names:
        (tmp_path / name).write_bytes(b"x" * 100)
        files.append(tmp_path / name)
    assert stream.small_shares(files, 2, read_rows=False) == 4
    assert stream.small_shares(files[:1], 2, read_rows=False) == 0


def test_a_json_lines_month_under_jobs_is_audited_a_batch_a_worker(tmp_path, ruleset,
                                                                  monkeypatch):
    """Four JSON Lines files of two tables each, more bytes than are loaded at
    once: `--jobs 2` plans them in four batches for its workers (before, one
    batch: the main process read every file to plan, then loaded them all),
    the audit one load's."""
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 1)
    read = _read_by_loader(monkeypatch)
    files = []
    for k in range(4):
        files.append(tmp_path / f"night-{k}.jsonl")
        write_log(generate(2, 30, seed=60 + k, inject=["call.wrong_total", "offer.order"],
                           first_table=1 + 2 * k).table, files[-1])
    assert [len(batch) for batch in stream.plan(files, shares=4)] == [1, 1, 1, 1]
    assert read == []  # (planned from each line's table as written)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs(files))
    by_workers = run_audit(AuditJob.of(files, ruleset, jobs=2, collector=COLLECTOR))
    assert _bytes(by_workers, tmp_path, "workers") == _bytes(once, tmp_path, "once")
    assert render_html(by_workers, META) == render_html(once, META)


@pytest.mark.parametrize(("name", "fmt", "parquet"), [
    ("night.csv", "csv", False),
    ("night.PARQUET", "parquet", True),
    ("night.ndjson", "jsonl", False),
    ("night.parquet.gz", None, False),  # gzip'd: inflated whole, never read in part
    ("night.csv.gz", None, False),
    ("notes.txt", None, False),
])
def test_a_plain_format_is_one_a_file_name_announces_not_gzip_d(name, fmt, parquet):
    assert plain_format(Path(name)) == fmt
    assert plain_parquet(Path(name)) is parquet
