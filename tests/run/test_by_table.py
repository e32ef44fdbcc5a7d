"""A casino's nightly exports (every file holding a night of every table)
link into one group of the plan; one larger than a batch is audited a range
of its tables at a time (`auditor.run.by_table`), with the findings,
quarantine, provenance and reports of loading the group at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from builder import append_broken_rows, nightly_exports, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pieces_check import files_read_whole, same_as_once

from auditor.errors import EngineError
from auditor.logs.discover import discover
from auditor.logs.load import load_logs
from auditor.logs.site import path_sites, site_prefix
from auditor.report.html import COLLECTOR, render_html
from auditor.run import AuditJob, by_table, pieces, run_audit, scratch, stream

META = {"test": "by_table"}


@pytest.fixture
def ranged(monkeypatch):
    """Every input planned in batches, a group of linked files cut into
    ranges of a table each; what each pass saw."""
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    seen: dict[str, list] = {"sorted": [], "ranges": []}
    sort_out, audit_range = by_table.sort_out, by_table.audit_range

    def sorting(item, *rest):
        seen["sorted"].append(Path(item.path).name)
        return sort_out(item, *rest)

    def auditing(item, job, progress):
        result = audit_range(item, job, progress)
        seen["ranges"].append((sorted(f for f, _ in item.written), result.tables, result.events))
        return result
    monkeypatch.setattr(by_table, "sort_out", sorting)
    monkeypatch.setattr(by_table, "audit_range", auditing)
    return seen


def _same(streamed, once, tmp_path: Path) -> None:
    """The reports, quarantine, provenance (each file's marks too) and page
    of loading the group at once."""
    same_as_once(streamed, once, tmp_path)
    assert render_html(streamed, META) == render_html(once, META)


def _once(paths, ruleset, **options):
    return run_audit(AuditJob.loaded(ruleset, **options), loaded=load_logs(paths))


def test_the_plan_cuts_a_group_too_large_for_a_batch_into_ranges_of_tables(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    files = nightly_exports(tmp_path, tables=3, nights=4)
    rows = sum(stream.scan(f).rows for f in files)
    assert stream.plan(files, budget=rows) is None  # (one batch: loaded at once)
    batches = stream.plan(files, budget=rows * 7 // 10)
    assert batches == [[0, 1, 2, 3]] and batches[0].rows == rows
    assert batches[0].ranges == (frozenset({"T01", "T02"}), frozenset({"T03"}))
    assert stream.plan(files, budget=1)[0].ranges == tuple(
        frozenset({t}) for t in ("T01", "T02", "T03"))


def test_a_group_within_the_budget_is_not_cut_for_the_workers_shares(tmp_path, monkeypatch):
    """`--jobs` plans a small input in shares of its rows; a group of linked
    files within what memory allows a batch is not cut into ranges for
    them (sorting out costs more than loading it: 186,016 events, 5 nights,
    `--jobs 2`, 1.25x the CPU of `--jobs 1` loaded at once against 1.70x
    cut)."""
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    files = nightly_exports(tmp_path, tables=3, nights=4)
    rows = sum(stream.scan(f).rows for f in files)
    assert stream.plan(files, budget=rows, shares=4) is None
    assert len(stream.plan(files, budget=rows - 1, shares=4)[0].ranges) == 2


def test_ranges_are_consecutive_tables_each_within_the_budget():
    scans = [stream.Scanned(frozenset({"T01", "T02", "T03", "T04"}), 400),
             stream.Scanned(frozenset({"T01", "T02", "T03", "T04"}), 400),
             stream.Scanned(frozenset({"T05"}), 500)]
    assert stream.table_ranges(scans, 450) == (
        frozenset({"T01", "T02"}), frozenset({"T03", "T04"}), frozenset({"T05"}))
    assert stream.table_ranges(scans, 10**6) == ()  # one range: no cut
    # a file's rows find their range by their table's name alone, one the
    # scan never saw too: the ranges are consecutive names
    bounds = ("T03", "T05")
    assert [by_table.range_of(t, bounds) for t in ("A", "T01", "T02x", "T03", "T04", "T05",
                                                   "T99")] == [0, 0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize("jobs", [1, 2])
def test_nightly_exports_are_audited_a_table_at_a_time_as_one_load(tmp_path, ruleset, ranged,
                                                                   jobs):
    files = nightly_exports(tmp_path / "logs", tables=3, nights=4)
    append_broken_rows(files[1])  # (night-02.csv: a T99 row, a row naming no table)
    once = _once([tmp_path / "logs"], ruleset)
    assert len(once.findings) > 30 and len(once.logs.quarantine) == 2
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, jobs=jobs,
                                     collector=COLLECTOR))
    if jobs == 1:  # (a worker's calls are not seen here)
        assert ranged["sorted"] == [f.name for f in files]
        # a range a table, each read back from every night (T99: quarantined only)
        assert [(w, t) for w, t, _ in ranged["ranges"]] == [
            ([0, 1, 2, 3], ["T01"]), ([0, 1, 2, 3], ["T02"]), ([0, 1, 2, 3], ["T03"]),
            ([], [])]
        assert sum(n for *_, n in ranged["ranges"]) == len(once.logs.events)
    _same(streamed, once, tmp_path)
    malformed = streamed.findings[streamed.findings["code"] == "log.malformed"]
    assert len(malformed) == 2  # each quarantined row judged once


def test_tables_interleaved_in_time_order_are_sorted_out_as_well(tmp_path, ruleset, ranged):
    files = nightly_exports(tmp_path / "logs", tables=3, nights=3, interleaved=True)
    once = _once([tmp_path / "logs"], ruleset)
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, collector=COLLECTOR))
    assert ranged["sorted"] == [f.name for f in files]
    assert [t for _, t, _ in ranged["ranges"]] == [["T01"], ["T02"], ["T03"]]
    _same(streamed, once, tmp_path)


def test_two_casinos_nights_are_ranged_by_their_own_tables(tmp_path, ruleset, ranged):
    """--site-from-path: each casino's nights are a group, their ranges
    named by the keyed tables (casino-a/T01 is not casino-b/T01)."""
    root = tmp_path / "logs"
    nightly_exports(root / "casino-a", tables=2, nights=3, seed=61)
    nightly_exports(root / "casino-b", tables=2, nights=2, seed=62)
    files = discover([root])
    sites = path_sites([root], files)
    batches = stream.plan(files, sites=sites)
    assert [list(b) for b in batches] == [[0, 1, 2], [3, 4]]
    assert [len(b.ranges) for b in batches] == [2, 2]
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([root], sites=sites))
    streamed = run_audit(AuditJob.of([root], ruleset, site_from_path=True,
                                     collector=COLLECTOR))
    assert [t for _, t, _ in ranged["ranges"]] == [
        [site_prefix(s) + t] for s in ("casino-a", "casino-b") for t in ("T01", "T02")]
    assert set(streamed.findings["site"]) == {"casino-a", "casino-b"}
    _same(streamed, once, tmp_path)


def test_without_a_scratch_folder_the_group_is_one_batch(tmp_path, ruleset, ranged,
                                                         monkeypatch):
    nightly_exports(tmp_path / "logs", tables=2, nights=3)
    monkeypatch.setattr(scratch, "make", lambda kind="", root=None: None)
    once = _once([tmp_path / "logs"], ruleset)
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, collector=COLLECTOR))
    assert ranged == {"sorted": [], "ranges": []}
    _same(streamed, once, tmp_path)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_sorted_out_parts_are_removed_with_the_audit(tmp_path, ruleset, ranged,
                                                         monkeypatch, jobs):
    nightly_exports(tmp_path / "logs", tables=2, nights=3)
    made = _scratch_spy(monkeypatch)
    run_audit(AuditJob.of([tmp_path / "logs"], ruleset, jobs=jobs))
    folders = [folder for kind, _, folder in made if kind == "tables"]
    assert len(folders) == 1 and folders[0] is not None
    assert not Path(folders[0]).exists()


def test_a_disk_too_full_for_the_parts_stops_the_audit_with_one_line(tmp_path, ruleset,
                                                                     ranged, monkeypatch):
    import pyarrow as pa

    nightly_exports(tmp_path / "logs", tables=2, nights=2)

    def full(path, mode="rb"):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(pa, "OSFile", full)
    with pytest.raises(EngineError, match=r"night-01\.parquet's events sorted out by table "
                                          r"to .*No space left on device.*TMPDIR"):
        run_audit(AuditJob.of([tmp_path / "logs"], ruleset))
    result = run_cli("check", str(tmp_path / "logs"), "-r", "nz-table-games", "--out",
                     str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "No space left on device" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "findings.parquet").exists()


def test_a_file_that_cannot_be_a_log_is_named_as_one_load_names_it(tmp_path, ruleset, ranged):
    from auditor.errors import LogFileError

    files = nightly_exports(tmp_path / "logs", tables=2, nights=4)
    files[2].write_text("", encoding="utf-8")  # night-03.jsonl
    with pytest.raises(LogFileError) as once:
        load_logs([tmp_path / "logs"])
    for jobs in (1, 2):
        with pytest.raises(LogFileError) as streamed:
            run_audit(AuditJob.of([tmp_path / "logs"], ruleset, jobs=jobs))
        assert str(streamed.value) == str(once.value)


def test_a_table_held_twice_is_refused_as_one_load_refuses_it(tmp_path, ruleset, ranged):
    from auditor.logs.identity import TableIdentityError

    files = nightly_exports(tmp_path / "logs", tables=2, nights=2)
    (tmp_path / "logs" / "night-03.parquet").write_bytes(files[0].read_bytes())  # (again)
    with pytest.raises(TableIdentityError) as once:
        _once([tmp_path / "logs"], ruleset)
    with pytest.raises(TableIdentityError) as streamed:
        run_audit(AuditJob.of([tmp_path / "logs"], ruleset, jobs=2))
    assert str(streamed.value) == str(once.value)


def test_dask_s_local_cluster_audits_the_ranges_as_its_tasks(tmp_path, ruleset, ranged,
                                                              monkeypatch):
    pytest.importorskip("distributed")
    nightly_exports(tmp_path / "logs", tables=3, nights=3)
    made = _scratch_spy(monkeypatch)
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, engine="dask", jobs=2,
                                     collector=COLLECTOR))
    assert [folder for kind, _, folder in made if kind == "tables" and folder]  # (sorted out)
    _same(streamed, _once([tmp_path / "logs"], ruleset), tmp_path)


def test_a_cluster_of_its_own_audits_the_group_as_one_batch(tmp_path, ruleset, ranged,
                                                            cluster):
    """The workers of `--scheduler` may not share this machine's scratch
    space: the group is one task, as before."""
    nightly_exports(tmp_path / "logs", tables=3, nights=3)
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, engine="dask",
                                     scheduler=cluster.scheduler_address, collector=COLLECTOR))
    assert ranged == {"sorted": [], "ranges": []}
    _same(streamed, _once([tmp_path / "logs"], ruleset), tmp_path)


def test_the_parts_are_compressed_where_the_disk_has_no_room_to_spare(tmp_path, ruleset,
                                                                      ranged, monkeypatch):
    import shutil

    free = {"bytes": 10**12}
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage",
                        lambda path: real(path)._replace(free=free["bytes"]))
    assert by_table.compression(str(tmp_path), 1000) is None
    free["bytes"] = by_table.ROOM_TO_SPARE * by_table.PART_BYTES * 1000 - 1
    assert by_table.compression(str(tmp_path), 1000) == "lz4"
    nightly_exports(tmp_path / "logs", tables=3, nights=3)
    free["bytes"] = 0
    written: list[str | None] = []
    write = by_table._write
    monkeypatch.setattr(by_table, "_write", lambda table, path, name, packed=None: (
        written.append(packed), write(table, path, name, packed))[-1])
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, collector=COLLECTOR))
    assert written and set(written) == {"lz4"}
    _same(streamed, _once([tmp_path / "logs"], ruleset), tmp_path)


def test_verify_re_runs_a_ranged_audit_and_finds_the_report_standing(tmp_path, ranged):
    nightly_exports(tmp_path / "logs", tables=3, nights=3)
    out = tmp_path / "report"
    checked = run_cli("check", str(tmp_path / "logs"), "-r", "nz-table-games", "--out",
                      str(out), "--format", "parquet", "--format", "html", "--jobs", "2")
    assert checked.exit_code == 1, checked.output
    verified = run_cli("verify", str(out))
    assert verified.exit_code == 0, verified.output
    assert "report stands" in verified.output
    assert [t for _, t, _ in ranged["ranges"]] == [["T01"], ["T02"], ["T03"]]  # (verify's)


def _scratch_spy(monkeypatch) -> list[tuple[str, str | None, str | None]]:
    """Each folder `scratch.make` gave: (kind, root, folder)."""
    made: list[tuple[str, str | None, str | None]] = []
    real = scratch.make

    def spy(kind="", root=None):
        folder = real(kind, root)
        made.append((kind, root, folder))
        return folder
    monkeypatch.setattr(scratch, "make", spy)
    return made


@pytest.mark.parametrize("jobs", [1, 2])
def test_scratch_names_the_folder_the_parts_go_in(tmp_path, ruleset, ranged, monkeypatch,
                                                  jobs):
    nightly_exports(tmp_path / "logs", tables=2, nights=3)
    (tmp_path / "scratch").mkdir()
    made = _scratch_spy(monkeypatch)
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, jobs=jobs,
                                     scratch=str(tmp_path / "scratch"), collector=COLLECTOR))
    tables = [folder for kind, root, folder in made if kind == "tables"]
    assert len(tables) == 1 and Path(tables[0]).parent == tmp_path / "scratch"
    assert {root for _, root, _ in made} == {str(tmp_path / "scratch")}  # (spills too)
    _same(streamed, _once([tmp_path / "logs"], ruleset), tmp_path)
    # the parts removed as the audit ends; the dice rows spilled as the result goes
    left = [folder for kind, _, folder in made if kind == "spill"]
    assert [str(p) for p in (tmp_path / "scratch").iterdir()] == left
    del streamed
    assert list((tmp_path / "scratch").iterdir()) == []


def test_a_cluster_of_its_own_sorts_out_into_a_scratch_folder_its_workers_see(
        tmp_path, ruleset, ranged, cluster, monkeypatch):
    nightly_exports(tmp_path / "logs", tables=3, nights=3)
    (tmp_path / "scratch").mkdir()
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, engine="dask",
                                     scheduler=cluster.scheduler_address, collector=COLLECTOR,
                                     scratch=str(tmp_path / "scratch")))
    assert sorted(ranged["sorted"]) == ["night-01.parquet", "night-02.csv", "night-03.jsonl"]
    assert sorted(t for _, t, _ in ranged["ranges"]) == [["T01"], ["T02"], ["T03"]]
    _same(streamed, _once([tmp_path / "logs"], ruleset), tmp_path)
    import distributed

    monkeypatch.setattr(distributed.Client, "run",
                        lambda self, func, *args, **kw: {"tcp://10.0.0.7:40000": False})
    with pytest.raises(EngineError, match=r"--scratch .*not seen by the dask worker "
                                          r"tcp://10\.0\.0\.7:40000 .*shared file system"):
        run_audit(AuditJob.of([tmp_path / "logs"], ruleset, engine="dask",
                              scheduler=cluster.scheduler_address,
                              scratch=str(tmp_path / "scratch")))
    assert [p for p in (tmp_path / "scratch").iterdir() if "-tables-" in p.name] == []


def test_scratch_must_be_a_folder_that_is_there(tmp_path):
    nightly_exports(tmp_path / "logs", tables=2, nights=2)
    result = run_cli("check", str(tmp_path / "logs"), "-r", "nz-table-games", "--out",
                     str(tmp_path / "out"), "--scratch", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert "--scratch" in result.output and "does not exist" in result.output


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tables=st.integers(2, 4), nights=st.integers(2, 4), interleaved=st.booleans(),
       broken=st.booleans(), budget=st.integers(1, 6000), seed=st.integers(1, 10**6),
       order=st.permutations(["parquet", "csv", "jsonl"]))
def test_any_nightly_export_audited_by_ranges_is_one_load(tmp_path_factory, ruleset, tables,
                                                          nights, interleaved, broken, budget,
                                                          seed, order):
    """Whatever the tables, nights, formats, order of rows, broken rows and
    ranges (a budget of 1 to 6,000 events: from a table a range to all in
    one), the findings, quarantine, provenance and page of one load."""
    root = tmp_path_factory.mktemp("any")
    files = nightly_exports(root / "logs", tables=tables, nights=nights, seed=seed,
                            interleaved=interleaved, formats=tuple(order))
    if broken:
        csv = next((f for f in files if f.suffix == ".csv"), None)
        if csv is not None:
            append_broken_rows(csv)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stream, "STREAM_MIN_BYTES", 0)
        patch.setattr(stream, "STREAM_EVENTS", budget)
        streamed = run_audit(AuditJob.of([root / "logs"], ruleset, collector=COLLECTOR))
    _same(streamed, _once([root / "logs"], ruleset), root)


def test_verify_s_re_run_puts_its_parts_in_its_scratch(tmp_path, ranged, monkeypatch):
    nightly_exports(tmp_path / "logs", tables=2, nights=3)
    out = tmp_path / "report"
    assert run_cli("check", str(tmp_path / "logs"), "-r", "nz-table-games", "--out",
                   str(out)).exit_code == 1
    (tmp_path / "scratch").mkdir()
    made = _scratch_spy(monkeypatch)
    verified = run_cli("verify", str(out), "--scratch", str(tmp_path / "scratch"))
    assert verified.exit_code == 0, verified.output
    assert [root for kind, root, _ in made if kind == "tables"] == [str(tmp_path / "scratch")]


def test_keep_going_leaves_a_broken_night_out_and_ranges_the_rest(tmp_path, ranged,
                                                                  monkeypatch):
    """A night truncated in transfer is listed as not audited; the other
    nights are still sorted out and audited a table at a time, with the
    reports of one load of them."""
    files = nightly_exports(tmp_path / "logs", tables=2, nights=4)
    files[0].write_bytes(files[0].read_bytes()[:200])  # (night-01.parquet, truncated)

    def check(out: str):
        result = run_cli("check", str(tmp_path / "logs"), "-r", "nz-table-games", "--out",
                         str(tmp_path / out), "--keep-going", "--format", "parquet",
                         "--format", "html")
        assert result.exit_code == 2, result.output
        assert "night-01.parquet" in result.output
        return {name: (tmp_path / out / name).read_bytes()
                for name in ("findings.parquet", "quarantine.parquet", "report.html")}

    ranged_reports = check("ranged")
    assert sorted(ranged["sorted"]) == ["night-02.csv", "night-03.jsonl", "night-04.parquet"]
    monkeypatch.setattr(stream, "STREAM_EVENTS", 10**9)  # (one batch: loaded at once)
    assert check("once") == ranged_reports


@pytest.mark.parametrize(("jobs", "interleaved"), [(1, False), (1, True), (2, True)])
def test_a_file_of_the_group_larger_than_a_piece_is_sorted_out_a_piece_at_a_time(
        tmp_path, ruleset, ranged, monkeypatch, jobs, interleaved):
    """A month in one file beside nightly ones: a file of the group larger
    than a piece may be (`pieces.PIECE_BUDGET`) is sorted out a piece at a
    time, so that no worker holds it whole; Parquet, CSV and JSON Lines
    alike, tables in runs or in time order, the audit one load's."""
    root = tmp_path / "logs"
    files = nightly_exports(root, tables=3, nights=3, interleaved=interleaved)
    assert by_table._cut(files[0], 0, by_table.DEFAULT_READ) == []  # (small: whole)
    monkeypatch.setattr(by_table, "WHOLE_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 400)
    assert all(len(by_table._cut(f, 0, by_table.DEFAULT_READ)) >= 2 for f in files)
    once = _once([root], ruleset)
    streamed = run_audit(AuditJob.of([root], ruleset, jobs=jobs, collector=COLLECTOR))
    if jobs == 1:  # (a worker's calls are not seen here)
        assert set(ranged["sorted"]) == {f.name for f in files}
        assert len(ranged["sorted"]) >= 2 * len(files)  # (each file in pieces)
    _same(streamed, once, tmp_path)


def test_a_group_whose_file_in_pieces_cannot_be_joined_is_read_whole(tmp_path, ruleset, ranged,
                                                                     monkeypatch):
    """Its pieces saw another file each time (renamed over while read): the
    group is audited as one batch, one load's audit, its hash and rows
    from one file."""
    files = nightly_exports(tmp_path / "logs", tables=2, nights=3)
    monkeypatch.setattr(by_table, "WHOLE_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 400)
    seen = iter(range(10 ** 6))
    monkeypatch.setattr(pieces, "file_as_it_stands", lambda path: (next(seen),))
    once = _once([tmp_path / "logs"], ruleset)
    whole = files_read_whole(monkeypatch)
    streamed = run_audit(AuditJob.of([tmp_path / "logs"], ruleset, collector=COLLECTOR))
    assert ranged["ranges"] == [] and whole == [files]
    _same(streamed, once, tmp_path)
