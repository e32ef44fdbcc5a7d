"""Progress: what the engines report as they go (files read, events replayed,
tables checked), for --jobs 1, --jobs 2, batches and dask; that the line is
shown only when asked; and that it never changes what is reported."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from builder import nightly_exports
from click.testing import CliRunner

from auditor.cli import check_cmd, main
from auditor.cli.progress import Progress
from auditor.generate import INJECTABLE, generate, write_log
from auditor.logs.load import load_logs
from auditor.run import AuditJob, dask_engine, run_audit, stream
from auditor.run.progress import SORTING, NoProgress


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Recording(Progress):
    """A Progress that prints to a string and keeps every call."""

    def __init__(self):
        self.clock_ = Clock()
        super().__init__(stream=io.StringIO(), enabled=True, clock=self.clock_, interval=0)
        self.calls: list[tuple] = []

    def advance(self, files=0, events=0, tables=0, audited=0, scanned=0):
        self.calls.append(("advance", files, events, tables, audited, scanned))
        self.clock_.now += 0.5
        super().advance(files, events, tables, audited, scanned)

    def stage(self, label):
        self.calls.append(("stage", label))
        super().stage(label)

    def advances(self, field: int) -> list[int]:
        return [c[field] for c in self.calls if c[0] == "advance" and c[field]]


FILES, EVENTS, TABLES, AUDITED = 1, 2, 3, 4


@pytest.fixture(scope="module")
def logs_dir(tmp_path_factory) -> Path:
    """Three files, four tables (T04 over two files), one quarantined row."""
    d = tmp_path_factory.mktemp("progress")
    write_log(generate(2, 40, seed=51, inject=list(INJECTABLE)).table, d / "a.parquet")
    write_log(generate(1, 30, seed=52, first_table=3).table, d / "b.jsonl")
    t4 = generate(1, 40, seed=53, first_table=4).table
    half = t4.num_rows // 2
    write_log(t4.slice(0, half), d / "c.parquet")
    write_log(t4.slice(half), d / "d.csv")
    with open(d / "d.csv", "a", encoding="utf-8") as fh:
        fh.write("T04,999999,2026-03-01T20:00:00Z,no_such_event" + "," * 20 + "\n")
    return d


@pytest.fixture(scope="module")
def expected(logs_dir, ruleset):
    logs = load_logs([logs_dir])
    return {"files": len(logs.inputs), "read": logs.rows_read, "replayed": logs.rows_replayed,
            "tables": logs.events["table_id"].nunique(),
            "result": run_audit(AuditJob.loaded(ruleset), loaded=logs)}


def _assert_totals(p: Recording, expected, events_total: str = "replayed") -> None:
    assert p.files == p.files_total == expected["files"] == 4
    assert p.events == expected["read"]
    assert p.audited == expected["replayed"]
    # what the time left is worked out of: the events to audit (a plan's
    # scan counts about the rows it will read, quarantined ones too: Arrow's
    # CSV scan skips a row it cannot parse)
    if events_total == "replayed":
        assert p.events_total == expected["replayed"] < expected["read"]
    else:
        assert expected["replayed"] <= p.events_total <= expected["read"]
    assert p.tables == p.tables_total == expected["tables"] == 4
    assert "\r" in p.stream.getvalue()


# --- the line ---------------------------------------------------------------------------

def test_the_line_names_the_stage_files_tables_events_and_rate():
    clock = Clock()
    p = Progress(stream=io.StringIO(), enabled=True, clock=clock, interval=0)
    p.start(files=2)
    clock.now = 2.0
    p.advance(files=2, events=3000)
    assert p.line() == "reading: 2/2 file(s), 3,000 event(s), 1,500 events/s"
    p.expect(tables=4)
    p.stage("auditing")
    clock.now = 4.0
    p.advance(audited=2000, tables=1)
    assert p.line() == ("auditing: 2/2 file(s), 1/4 table(s), 2,000 event(s), 1,000 events/s, "
                        "about 6 s left")  # a table of 4 in 2 s
    p.stage("writing")
    p.finish()
    out = p.stream.getvalue()
    assert out.endswith("writing: 2/2 file(s), 1/4 table(s), 2,000 event(s), 1,000 events/s\n")
    assert out.count("\n") == 1  # one line, rewritten in place


def test_the_time_left_is_the_pace_so_far_over_the_events_still_to_audit():
    clock = Clock()
    p = Progress(stream=io.StringIO(), enabled=True, clock=clock, interval=0)
    p.start(files=2)
    p.expect(events=10_000, tables=4)
    clock.now = 3.0
    p.advance(files=2, events=10_000)
    assert p.left() is None and "left" not in p.line()  # nothing audited yet: no guess
    p.stage("auditing")
    clock.now = 5.0
    p.advance(audited=2_500)  # a quarter in 2 s: 6 s to go
    assert p.left() == 6.0
    assert p.line() == ("auditing: 2/2 file(s), 0/4 table(s), 2,500 event(s), "
                        "1,250 events/s, about 6 s left")
    clock.now = 8.0
    p.advance(audited=7_500, tables=4)  # all of it: nothing left, nothing shown
    assert p.left() == 0.0 and "left" not in p.line()
    p.stage("writing")
    assert "left" not in p.line()


def test_sorting_files_out_by_table_has_a_time_left_of_its_own():
    """Before any event is audited (nightly exports sorted out by table),
    the time left is the sorting's: the rows still to read at its pace;
    once the ranges are audited, the audit's own pace, from then."""
    clock = Clock()
    p = Progress(stream=io.StringIO(), enabled=True, clock=clock, interval=0)
    p.start(files=4)
    p.expect(events=8_000)
    clock.now = 1.0
    p.stage(SORTING)
    assert p.left() is None  # nothing read yet: no guess
    clock.now = 3.0
    p.advance(files=1, events=2_000)  # a quarter in 2 s: 6 s to go
    assert p.left() == 6.0
    assert p.line() == ("sorting out: 1/4 file(s), 2,000 event(s), 667 events/s, "
                        "about 6 s left to sort out")
    clock.now = 9.0
    p.advance(files=3, events=6_000)
    p.stage("auditing")
    assert p.left() is None  # (the audit's pace: nothing audited yet)
    clock.now = 10.0
    p.advance(audited=4_000)
    assert p.left() == 1.0 and p.line().endswith("about 1 s left")


def test_without_the_events_total_the_time_left_goes_by_the_tables():
    clock = Clock()
    p = Progress(stream=io.StringIO(), enabled=True, clock=clock, interval=0)
    p.start(files=1, tables=10)
    p.stage("auditing")
    clock.now = 120.0
    p.advance(audited=900, tables=1)
    assert p.left() == 1080.0 and p.line().endswith(", about 18 min 00 s left")
    p.start(files=1)  # a new start forgets the totals
    assert p.events_total is None and p.left() is None


@pytest.mark.parametrize(("seconds", "shown"), [(0.6, "1 s"), (59.4, "59 s"), (61, "1 min 01 s"),
                                                (3599, "59 min 59 s"), (7620, "2 h 07 min")])
def test_the_time_left_reads_in_seconds_minutes_and_hours(seconds, shown):
    from auditor.cli.progress import duration

    assert duration(seconds) == shown


def test_the_line_is_throttled_and_padded():
    clock = Clock()
    p = Progress(stream=io.StringIO(), enabled=True, clock=clock, interval=1.0)
    p.start(files=10)
    shown = p.stream.getvalue()
    p.advance(files=1, events=10)  # within the interval: not shown
    assert p.stream.getvalue() == shown
    clock.now = 1.0
    p.advance(files=1, events=10)
    assert p.stream.getvalue().endswith("reading: 2/10 file(s), 20 event(s), 20 events/s")


def test_quiet_and_not_a_terminal_print_nothing_and_a_broken_stream_is_harmless():
    class Broken(io.StringIO):
        def isatty(self):
            return True

        def write(self, text):
            raise OSError("gone")

    for p in (Progress(stream=io.StringIO()), Progress(stream=io.StringIO(), enabled=True,
                                                      quiet=True), NoProgress()):
        p.start(files=1)
        p.advance(files=1, events=5)
        p.stage("auditing")
        p.finish()
        assert p.files == 1  # still counts
    assert Progress(stream=io.StringIO()).enabled is False
    broken = Progress(stream=Broken())
    broken.start()
    broken.advance(files=1)
    broken.finish()
    assert broken.enabled is False


# --- the engines ------------------------------------------------------------------------

def test_jobs_1_reports_each_file_then_replay_then_checks(logs_dir, ruleset, expected):
    p = Recording()
    p.start()
    run_audit(AuditJob.of([logs_dir], ruleset), progress=p)
    _assert_totals(p, expected)
    stages = [c[1] for c in p.calls if c[0] == "stage"]
    assert stages[:2] == ["reading", "auditing"]
    assert p.advances(FILES) == [1, 1, 1, 1]
    # events replayed once the replay ends, tables once the checks end
    kinds = [("audited" if c[AUDITED] else "tables") for c in p.calls
             if c[0] == "advance" and (c[AUDITED] or c[TABLES])]
    assert kinds == ["audited", "tables"]
    assert p.line().startswith("auditing: 4/4 file(s), 4/4 table(s), ")


def test_jobs_2_reports_each_group_of_tables(logs_dir, ruleset):
    """One file loaded at once, its tables shared out in groups."""
    one = logs_dir / "a.parquet"
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([one], ruleset, jobs=2), progress=p)
    assert p.advances(TABLES) == [1, 1]  # two groups of a whole table each
    assert p.audited == len(load_logs([one]).events)
    assert result.findings.equals(run_audit(AuditJob.of([one], ruleset)).findings)


def test_jobs_2_reports_a_small_parquet_input_batch_by_batch(logs_dir, ruleset):
    """Small Parquet files are planned in batches for --jobs' workers (as
    for dask's; their footers tell the plan their tables): each batch's
    files and tables counted as it ends."""
    files = [logs_dir / "a.parquet", logs_dir / "c.parquet"]
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of(files, ruleset, jobs=2), progress=p)
    assert isinstance(result.logs, stream.LazyLogs)
    assert p.files == p.files_total == 2
    assert p.audited == len(load_logs(files).events)
    assert sorted(p.advances(TABLES)) == [1, 2]  # c.parquet (T04's half), a.parquet
    assert result.findings.equals(run_audit(AuditJob.of(files, ruleset)).findings)


def test_jobs_2_loads_a_small_input_of_text_files_at_once(logs_dir, ruleset, expected):
    """A small input with CSV or JSON Lines files is loaded at once under
    --jobs too (the plan would read their rows first: decision 111), its
    tables shared out in groups."""
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([logs_dir], ruleset, jobs=2), progress=p)
    assert not isinstance(result.logs, stream.LazyLogs)
    _assert_totals(p, expected)
    assert p.scanned == 0
    assert result.findings.equals(expected["result"].findings)


@pytest.mark.parametrize("jobs", [1, 2])
def test_batches_report_as_each_batch_goes(logs_dir, ruleset, expected, monkeypatch, jobs):
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([logs_dir], ruleset, jobs=jobs), progress=p)
    assert isinstance(result.logs, stream.LazyLogs)
    _assert_totals(p, expected, events_total="read")
    assert p.scanned == 4
    # batches: a.parquet (T01, T02), b.jsonl (T03), c.parquet + d.csv (T04)
    assert sorted(p.advances(TABLES)) == [1, 1, 2]
    assert sorted(p.advances(FILES)) == [1, 1, 1, 1]
    assert result.findings.equals(expected["result"].findings)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_group_audited_by_ranges_of_tables_reports_each_file_and_range(
        tmp_path, ruleset, monkeypatch, jobs):
    """Nightly exports sorted out a file at a time, then audited a range of
    tables at a time (`auditor.run.by_table`): each file and event read
    counted once, as each file is sorted out; each table as its range ends."""
    files = nightly_exports(tmp_path, tables=3, nights=3)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    logs = load_logs(files)
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([tmp_path], ruleset, jobs=jobs), progress=p)
    assert (p.files, p.events, p.audited, p.tables) == (3, logs.rows_read, logs.rows_replayed, 3)
    assert p.files_total == 3 and p.tables_total == 3
    assert sorted(p.advances(TABLES)) == [1, 1, 1]
    assert sorted(p.advances(FILES)) == [1, 1, 1]
    assert result.findings.equals(run_audit(AuditJob.loaded(ruleset), loaded=logs).findings)
    # sorting the files out is a stage of its own; the ranges' audits, auditing
    stages = [c[1] for c in p.calls if c[0] == "stage"]
    assert stages[0] == "scanning" and stages[-1] == "auditing"
    assert stages[1] == SORTING and stages.index("auditing") > stages.index(SORTING)


def test_family_audits_report_too(tmp_path):
    """A ruleset family loads at once and audits each version's part."""
    log = tmp_path / "night.parquet"
    write_log(generate(2, 20, seed=61).table, log)
    p = Recording()
    p.start()
    monkey = pytest.MonkeyPatch()
    monkey.setattr(check_cmd, "Progress", lambda quiet=False: p)
    try:
        res = CliRunner().invoke(main, ["check", str(log), "-r", "nz-table-games",
                                        "--out", str(tmp_path / "o")])
    finally:
        monkey.undo()
    assert res.exit_code in (0, 1), res.output
    assert p.files == 1 and p.tables == 2 and p.label == "writing"


def test_the_check_command_reports_the_same_with_progress_shown(logs_dir, tmp_path,
                                                                  monkeypatch):
    def check(out: str):
        return CliRunner().invoke(main, ["check", str(logs_dir), "-r", "nz-table-games",
                                         "--out", str(tmp_path / out), "--jobs", "2"])
    plain = check("plain")
    shown = Recording()
    monkeypatch.setattr(check_cmd, "Progress", lambda quiet=False: shown)
    with_progress = check("shown")
    assert plain.exit_code == with_progress.exit_code == 1
    # the line goes to its own stream
    assert plain.output.replace("/plain/", "/shown/") == with_progress.output
    for name in ("findings.parquet", "quarantine.parquet"):
        assert (tmp_path / "plain" / name).read_bytes() == \
            (tmp_path / "shown" / name).read_bytes()
    out = shown.stream.getvalue()
    assert "reading: " in out and "auditing: " in out and out.endswith("\n")
    assert "writing: 4/4 file(s), 4/4 table(s)" in out


def test_an_error_ends_the_progress_line_first(tmp_path, monkeypatch):
    (tmp_path / "logs").mkdir()  # (apart from --out: a report is not written among logs)
    (tmp_path / "logs" / "empty.csv").write_text("", encoding="utf-8")
    shown = Recording()
    monkeypatch.setattr(check_cmd, "Progress", lambda quiet=False: shown)
    res = CliRunner().invoke(main, ["check", str(tmp_path / "logs"), "-r", "nz-table-games",
                                    "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "empty.csv" in res.output
    assert shown.stream.getvalue().endswith("\n")


# --- dask -------------------------------------------------------------------------------

def test_dask_batches_report_as_each_batch_ends(logs_dir, ruleset, expected, cluster,
                                               monkeypatch):
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([logs_dir], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address), progress=p)
    _assert_totals(p, expected, events_total="read")
    assert sorted(p.advances(TABLES)) == [1, 1, 2]  # a batch's tables as its task ends
    assert sorted(p.advances(FILES)) == [1, 1, 2]
    assert result.findings.equals(expected["result"].findings)


def test_dask_reports_each_file_and_each_table(logs_dir, ruleset, expected, cluster,
                                               monkeypatch):
    monkeypatch.setattr(dask_engine, "SMALL_INPUT_BATCHES", False)  # (a task a file and table)
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([logs_dir], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address), progress=p)
    _assert_totals(p, expected)
    assert p.advances(FILES) == [1, 1, 1, 1]   # as each worker has read a file
    assert p.advances(TABLES) == [1, 1, 1, 1]  # as each table's task ends
    stages = [c[1] for c in p.calls if c[0] == "stage"]
    assert stages == ["reading", "auditing"]
    assert result.findings.equals(expected["result"].findings)


def test_dask_reports_a_small_input_batch_by_batch(logs_dir, ruleset, expected, cluster):
    """Small files are planned in batches for dask's workers (decision 111):
    each batch's files and tables counted as its task ends."""
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([logs_dir], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address), progress=p)
    _assert_totals(p, expected)
    assert sorted(p.advances(FILES)) == [1, 1, 2]  # a.parquet, b.jsonl, c and d (T04)
    assert sorted(p.advances(TABLES)) == [1, 1, 2]
    assert [c[1] for c in p.calls if c[0] == "stage"][-1] == "auditing"
    assert result.findings.equals(expected["result"].findings)


def _renamed_over_each_time(monkeypatch):
    """Each piece of a file sees another file (an exporter renamed a new one
    over it as it was read), in every worker."""
    import itertools
    import os

    from auditor.run import pieces

    seen = itertools.count()
    monkeypatch.setattr(pieces, "file_as_it_stands", lambda path: (os.getpid(), next(seen)))


def _engine(engine: str, request, tmp_path) -> dict:
    """The options of `--jobs 1`, `--jobs 2`, or dask on a cluster of its
    own (threads: the test's patches hold in its workers) with a scratch
    folder its workers see."""
    if engine != "dask":
        return {"jobs": int(engine)}
    cluster = request.getfixturevalue("cluster")
    (tmp_path / "scratch").mkdir()
    return {"engine": "dask", "scheduler": cluster.scheduler_address,
            "scratch": str(tmp_path / "scratch")}


@pytest.mark.parametrize("engine", ["1", "2", "dask"])
def test_a_group_read_again_whole_is_counted_once(tmp_path, ruleset, monkeypatch, engine,
                                                  request):
    """Nightly exports sorted out in pieces whose file cannot be joined: the
    group is audited again as one batch; its files and rows, read by the
    sorting out, are not counted again, its tables and events once."""
    from auditor.run import by_table, pieces

    files = nightly_exports(tmp_path / "logs", tables=2, nights=3)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    monkeypatch.setattr(by_table, "WHOLE_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 400)
    _renamed_over_each_time(monkeypatch)
    logs = load_logs(files)
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([tmp_path / "logs"], ruleset,
                                   **_engine(engine, request, tmp_path)), progress=p)
    assert (p.files, p.events, p.audited, p.tables) == (3, logs.rows_read, logs.rows_replayed, 2)
    assert result.findings.equals(run_audit(AuditJob.loaded(ruleset), loaded=logs).findings)


@pytest.mark.parametrize("engine", ["1", "2", "dask"])
def test_a_file_its_pieces_could_not_judge_is_counted_once(tmp_path, ruleset, monkeypatch,
                                                          engine, request):
    """A large file audited in pieces, then read whole (its pieces saw
    another file each time): counted as its pieces counted it, not again."""
    from auditor.run import pieces

    path = tmp_path / "night.parquet"
    write_log(generate(tables=3, rolls=120, seed=61).table, path)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 2000)
    _renamed_over_each_time(monkeypatch)
    logs = load_logs([path])
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([path], ruleset, **_engine(engine, request, tmp_path)),
                       progress=p)
    assert (p.files, p.events, p.audited, p.tables) == (1, logs.rows_read, logs.rows_replayed, 3)
    assert result.findings.equals(run_audit(AuditJob.loaded(ruleset), loaded=logs).findings)


def test_pieces_dropped_after_they_were_audited_are_counted_once(tmp_path, ruleset,
                                                                 monkeypatch, cluster):
    """A file in time order on a cluster of its own with no `--scratch`: its
    pieces are audited (each counted as it ends), then found to share
    tables and the file read whole by one task: counted once."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from auditor.run import pieces

    log = generate(tables=4, rolls=60, seed=62).table
    path = tmp_path / "by-time.parquet"
    pq.write_table(log.take(pc.sort_indices(log, sort_keys=[("ts", "ascending"),
                                                            ("table_id", "ascending")])),
                   path, row_group_size=500)
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    logs = load_logs([path])
    p = Recording()
    p.start()
    result = run_audit(AuditJob.of([path], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address), progress=p)
    assert len(p.advances(FILES)) >= 2  # (the pieces' first, and the whole file's)
    assert (p.files, p.events, p.audited, p.tables) == (1, logs.rows_read, logs.rows_replayed, 4)
    assert result.findings.equals(run_audit(AuditJob.loaded(ruleset), loaded=logs).findings)
