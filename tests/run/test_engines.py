"""Engines: the audit split by table over processes (`--jobs`) or over a dask
cluster gives the same findings, byte for byte, as the single-process audit."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from builder import append_broken_rows, report_bytes
from click.testing import CliRunner

from auditor.cli import main
from auditor.errors import EngineError
from auditor.generate import INJECTABLE, generate, write_log
from auditor.logs.identity import TableIdentityError
from auditor.logs.load import load_logs
from auditor.report.formats import REPORT_FORMATS
from auditor.rules.ruleset import load_ruleset
from auditor.run import AuditJob, run_audit
from auditor.run.partition import balance, contiguous, quarantine_groups, split_tables

META = {"test": "engines"}


@pytest.fixture(scope="module")
def logs_dir(tmp_path_factory) -> Path:
    """Five tables with every injectable code planted, over three files: T03
    spans two files (its second file's seqs follow the first's: two files of
    one table id whose seqs overlap are refused), and one CSV holds broken
    rows, one of a table that has no other event, one of no table at all."""
    d = tmp_path_factory.mktemp("engines")
    a = generate(3, 120, seed=21, inject=list(INJECTABLE))
    write_log(a.table, d / "a.parquet")
    b = generate(3, 90, seed=22, inject=["call.wrong_total", "offer.order"], first_table=3)
    write_log(_after(b.table, a.table, "T03"), d / "b.csv")
    append_broken_rows(d / "b.csv", {
        "table_id": "T04", "seq": 99999, "event": "roll", "actor_role": "player", "seat": 3,
        "dice": "A1,A2", "die1": 7, "die2": 1})
    return d


def _after(table: pa.Table, before: pa.Table, table_id: str) -> pa.Table:
    """`table` with the seqs of `table_id` moved past its last seq in `before`."""
    last = pc.max(before.filter(pc.equal(before["table_id"], table_id))["seq"]).as_py()
    at = pc.equal(table["table_id"], table_id)
    seq = pc.if_else(at, pc.add(table["seq"], last), table["seq"])
    return table.set_column(table.schema.get_field_index("seq"), "seq", seq)


def _bytes(result, tmp_path: Path, name: str) -> tuple[bytes, bytes]:
    return report_bytes(result, tmp_path / name, META)


def test_the_test_logs_are_worth_splitting(logs_dir, ruleset):
    result = run_audit(AuditJob.of([logs_dir], ruleset))
    assert result.tables == ["T01", "T02", "T03", "T04", "T05"]
    assert len(result.findings) > 50
    assert len(result.logs.quarantine) >= 2
    assert set(result.findings["table_id"].dropna()) >= {"T01", "T03", "T05"}
    assert result.findings["table_id"].isna().any()  # a row naming no table


@pytest.mark.parametrize("jobs", [2, 3])
def test_jobs_give_the_same_findings_byte_for_byte(logs_dir, ruleset, tmp_path, jobs):
    one = run_audit(AuditJob.of([logs_dir], ruleset))
    many = run_audit(AuditJob.of([logs_dir], ruleset, jobs=jobs))
    assert _bytes(many, tmp_path, "many") == _bytes(one, tmp_path, "one")
    assert many.tables == one.tables


def test_more_jobs_than_tables(logs_dir, ruleset, tmp_path):
    logs = load_logs([logs_dir / "a.parquet"])
    one = run_audit(AuditJob.loaded(ruleset), loaded=logs)
    many = run_audit(AuditJob.loaded(ruleset, jobs=8), loaded=logs)
    assert _bytes(many, tmp_path, "many") == _bytes(one, tmp_path, "one")


def test_groups_hold_whole_tables_and_each_quarantined_row_once(logs_dir):
    logs = load_logs([logs_dir])
    groups = split_tables(logs, 2)
    assert len(groups) == 2
    tables = [set(g.events["table_id"].astype(str)) for g in groups]
    assert not tables[0] & tables[1]
    assert tables[0] | tables[1] == set(logs.events["table_id"].astype(str))
    assert sum(len(g.events) for g in groups) == len(logs.events)
    assert sum(len(g.quarantine) for g in groups) == len(logs.quarantine)


def test_balance_is_deterministic_and_fills_every_group():
    sizes = {"T1": 50, "T2": 40, "T3": 30, "T4": 20, "T5": 10}
    assert balance(sizes, 2) == [["T1", "T4", "T5"], ["T2", "T3"]]
    assert balance(sizes, 9) == [["T1"], ["T2"], ["T3"], ["T4"], ["T5"]]
    assert balance(sizes, 1) == [sorted(sizes)]


def test_contiguous_groups_cut_nearest_each_share_and_fill_every_group():
    assert contiguous([50, 40, 30, 20, 10], 2) == [range(2), range(2, 5)]
    assert contiguous([10, 10, 10, 10], 2) == [range(2), range(2, 4)]
    assert contiguous([100, 1, 1], 3) == [range(1), range(1, 2), range(2, 3)]
    assert contiguous([5, 5], 9) == [range(1), range(1, 2)]
    assert contiguous([5, 5, 5], 1) == [range(3)]


def test_groups_are_slices_of_the_loaded_rows_not_copies(logs_dir):
    logs = load_logs([logs_dir])
    first, second = split_tables(logs, 2)
    column = logs.events["seq"].array._data
    assert np.shares_memory(first.events["seq"].array._data, column)
    assert np.shares_memory(second.events["seq"].array._data, column)


def test_orphan_quarantined_rows_go_to_the_first_group():
    q = pd.DataFrame({"table_id": ["T2", None, "T9", "T1"], "seq": [1, 2, 3, 4]})
    first, second = quarantine_groups(q, [["T1"], ["T2"]])
    assert first["seq"].tolist() == [2, 3, 4]
    assert second["seq"].tolist() == [1]


def test_timings_hook_names_the_stages(logs_dir, ruleset):
    timings: dict[str, float] = {}
    run_audit(AuditJob.of([logs_dir], ruleset), timings=timings)
    assert {"load", "replay", "checks"} <= set(timings)
    timings = {}
    run_audit(AuditJob.of([logs_dir], ruleset, jobs=2), timings=timings)
    assert {"load", "replay", "checks", "parallel"} <= set(timings)


# --- the command -----------------------------------------------------------------

def _check(args: list[str]):
    return CliRunner().invoke(main, ["check", *args], catch_exceptions=False)


def _every_format(out: Path) -> list[str]:
    """--out OUT and every format that writes a file there."""
    return ["--out", str(out), *[a for f in REPORT_FORMATS.values() if f.files
                                 for a in ("--format", f.name)]]


def _same_files(a: Path, b: Path) -> None:
    """Every report file in `a` and `b` byte for byte (the manifest too)."""
    names = sorted(p.name for p in a.iterdir())
    assert "manifest.json" in names and "dice_stats.parquet" in names
    assert sorted(p.name for p in b.iterdir()) == names
    assert [n for n in names if (a / n).read_bytes() != (b / n).read_bytes()] == []


def test_check_jobs_writes_the_same_reports(logs_dir, tmp_path):
    one = _check([str(logs_dir), "-r", "nz-table-games", *_every_format(tmp_path / "one"), "-q"])
    two = _check([str(logs_dir), "-r", "nz-table-games", *_every_format(tmp_path / "two"), "-q",
                  "--jobs", "2"])
    assert one.exit_code == two.exit_code == 1
    _same_files(tmp_path / "one", tmp_path / "two")


def test_check_rejects_bad_engine_arguments(logs_dir, tmp_path):
    out = str(tmp_path / "out")
    r = _check([str(logs_dir), "-r", "nz-table-games", "--out", out, "--jobs", "0"])
    assert r.exit_code == 2
    r = _check([str(logs_dir), "-r", "nz-table-games", "--out", out,
                "--scheduler", "tcp://127.0.0.1:8786"])
    assert r.exit_code == 2 and "--engine dask" in r.output
    assert not (tmp_path / "out" / "findings.parquet").exists()


def test_dask_missing_is_a_clear_exit_2(logs_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    r = _check([str(logs_dir), "-r", "nz-table-games", "--out", str(tmp_path / "o"),
                "--engine", "dask"])
    assert r.exit_code == 2
    assert "pip install 'craps-auditor[dask]'" in r.output
    with pytest.raises(EngineError):
        run_audit(AuditJob.of([logs_dir], load_ruleset("nz-table-games"), engine="dask"))


# --- dask -------------------------------------------------------------------------

def test_dask_gives_the_same_findings_byte_for_byte(logs_dir, ruleset, cluster, tmp_path):
    local = run_audit(AuditJob.of([logs_dir], ruleset))
    remote = run_audit(AuditJob.of([logs_dir], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address))
    assert _bytes(remote, tmp_path, "dask") == _bytes(local, tmp_path, "local")
    assert remote.tables == local.tables
    assert [f.as_dict() for f in remote.logs.inputs] == [f.as_dict() for f in local.logs.inputs]


def test_every_engine_refuses_one_table_id_in_two_files_whose_seqs_overlap(
        ruleset, cluster, tmp_path):
    log = generate(1, 20, seed=71).table
    write_log(log, tmp_path / "a.parquet")
    write_log(log, tmp_path / "b.csv")
    for engine in ({}, {"engine": "dask", "scheduler": cluster.scheduler_address}):
        with pytest.raises(TableIdentityError) as caught:
            run_audit(AuditJob.of([tmp_path], ruleset, **engine))
        assert caught.value.files == (str(tmp_path / "a.parquet"), str(tmp_path / "b.csv"))
        assert caught.value.table == "T01"


def test_sites_keep_apart_on_every_engine(ruleset, cluster, tmp_path):
    log = generate(1, 20, seed=71, inject=["call.wrong_total"]).table
    write_log(log, tmp_path / "casino-a" / "a.parquet")
    write_log(log, tmp_path / "casino-b" / "b.csv")
    local = run_audit(AuditJob.of([tmp_path], ruleset, site_from_path=True))
    remote = run_audit(AuditJob.of([tmp_path], ruleset, engine="dask", site_from_path=True,
                                   scheduler=cluster.scheduler_address))
    assert sorted(set(local.findings["site"])) == ["casino-a", "casino-b"]
    assert _bytes(remote, tmp_path, "dask") == _bytes(local, tmp_path, "local")


def test_check_on_a_dask_cluster_writes_the_same_reports(logs_dir, cluster, tmp_path):
    local = _check([str(logs_dir), "-r", "nz-table-games", *_every_format(tmp_path / "l"), "-q"])
    remote = _check([str(logs_dir), "-r", "nz-table-games", *_every_format(tmp_path / "d"), "-q",
                     "--engine", "dask", "--scheduler", cluster.scheduler_address])
    assert local.exit_code == remote.exit_code == 1
    _same_files(tmp_path / "l", tmp_path / "d")


def test_dask_reports_a_file_that_cannot_be_a_log(tmp_path, cluster, ruleset):
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    from auditor.errors import LogFileError

    with pytest.raises(LogFileError, match="empty.csv: the file is empty"):
        run_audit(AuditJob.of([tmp_path], ruleset, engine="dask",
                              scheduler=cluster.scheduler_address))


def test_dask_sends_many_quarantined_rows_as_data_not_in_the_graph(tmp_path, cluster,
                                                                   monkeypatch):
    """A night of unreadable rows and no event: its quarantined rows travel
    to the table's task scattered (`dask_engine.SCATTER_ROWS`), not inside
    the task graph (60,000 such rows made a 23 MB graph, and dask printed
    its warning on the terminal); the findings are one process's."""
    import distributed

    from auditor.run import dask_engine

    path = tmp_path / "night.csv"
    header = "table_id,seq,ts,event,actor_role,actor_id\n"
    path.write_text(header + "".join(f"T01,{k},not a time,staff_on,a,b,x\n" if k % 2 else
                                     f"T01,{k},not a time,staff_on,a,b\n" for k in range(1, 40)))
    ruleset = load_ruleset("nz-table-games")
    once = run_audit(AuditJob.of([path], ruleset))
    sent = []
    as_data = dask_engine._as_data
    monkeypatch.setattr(dask_engine, "SCATTER_ROWS", 5)
    monkeypatch.setattr(dask_engine, "_as_data",
                        lambda client, arg: sent.append(as_data(client, arg)) or sent[-1])
    result = run_audit(AuditJob.of([path], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address))
    assert any(isinstance(s, distributed.Future) for s in sent)
    assert len(result.findings) == len(once.findings) == 39
    assert result.findings.equals(once.findings)
    # (fewer rows than SCATTER_ROWS travel in the graph, as they did)
    monkeypatch.setattr(dask_engine, "SCATTER_ROWS", 10_000)
    sent.clear()
    again = run_audit(AuditJob.of([path], ruleset, engine="dask",
                                  scheduler=cluster.scheduler_address))
    assert sent and not any(isinstance(s, distributed.Future) for s in sent)
    assert again.findings.equals(once.findings)
