"""The dask engine audits a long-lived table a day at a time
(`auditor.run.partition.day_units`): the findings stay those of the local
engine, byte for byte, with violations planted at and across the cuts, and
the table really is cut."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from builder import SHIPPED, STICK, THROW, LogBuilder, append_broken_rows, no_roll, report_bytes
from click.testing import CliRunner

from auditor.cli import main
from auditor.findings import finalize
from auditor.generate import INJECTABLE, generate, write_log
from auditor.logs.load import load_logs
from auditor.report.html import COLLECTOR, render_html
from auditor.rules.ruleset import load_ruleset
from auditor.run import AuditJob, dask_engine, run_audit
from auditor.run.partition import DayUnit, audit_unit, day_units, quarantine_groups
from auditor.run.progress import NoProgress

META = {"test": "dask-days"}
DAY = [datetime(2026, 3, d, tzinfo=UTC) for d in range(1, 7)]  # DAY[1] is 2 March


# --- a table open six times over five days, violations planted at the cuts ----------

def _at(b: LogBuilder, when: datetime) -> None:
    """The builder's next event happens at `when`."""
    b.ts = when - timedelta(seconds=5)


def _session(b: LogBuilder, when: datetime) -> int:
    """Open the table at `when`: seats 2, 5, 7 with pass bets, seat 2 the
    shooter. Returns the row (in `b.rows`) of its `table_open`."""
    _at(b, when)
    first = len(b.rows)
    b.open()
    for s in (2, 5, 7):
        b.bet(s)
    b.offer(2)
    b.accept(2)
    return first


def _close(b: LogBuilder) -> int:
    return b.add("table_close", role="game_supervisor")


def _boundary_log(folder: Path) -> dict[str, int]:
    """T1 in six sessions (the dates are 2026-03-DD, UTC):

    - S1 (01 20:00): ends with a roll flagged die_on_die on which only seat
      5 is paid (no roll missing, two wagers unsettled), then a die off the
      table with no roll after it in the session;
    - S2 (02 23:50, past midnight): its table_open skips a seq; a die off
      the table and the replacement offer before its first roll (for its
      own die, not S1's), a chips-contact no roll before any roll of its
      own (about no roll: S1's die_on_die roll is another session's); ends
      with dice chosen, the rest not returned to the bowl, a roll and the
      close;
    - S3 (03 01:00): its table_open repeats S2's last seq;
    - S4 (03 05:00, same day: one unit with S3) runs to 04 00:30;
    - S5 (04 00:10): its ts goes back; recorded in b.csv after S6, so its
      table_open's seq is lower than the row before it in that file;
    - S6 (05 20:00): its table_open skips a seq quarantined in a.csv; ends
      on a decided roll never settled.

    a.csv holds S1-S4 and broken rows (two of T1), b.csv S6 then S5, c.csv
    the one-session table T2. Returns the seqs the assertions name."""
    b = LogBuilder("T1")
    seqs: dict[str, int] = {}
    starts = [_session(b, DAY[0].replace(hour=20))]
    b.play(2, 4, 2)
    seqs["die_on_die"] = b.roll(2, 3, 3, flags=THROW + ",die_on_die")
    b.call(6)
    b.settle(5, "pass", "win", 10)
    seqs["off_s1"] = b.add("die_off_table", role=STICK, dice="A3")
    seqs["last_s1"] = _close(b)

    b.seq += 1
    starts.append(_session(b, DAY[1].replace(hour=23, minute=50)))
    b.add("die_off_table", role=STICK, dice="A4")
    b.offer(2, dice="A1,A2,A3,A5")
    seqs["chips_s2"] = no_roll(b, "chips_contact")
    b.play(2, 5, 5)
    _at(b, DAY[2].replace(minute=10))
    b.add("dice_selected", role="player", seat=2, dice="A1,A2")
    b.roll(2, 2, 2)
    b.call(4)
    seqs["last_s2"] = _close(b)

    b.seq -= 1
    starts.append(_session(b, DAY[2].replace(hour=1)))
    b.play(2, 6, 3)
    _close(b)
    starts.append(_session(b, DAY[2].replace(hour=5)))
    b.play(2, 4, 4)
    _at(b, DAY[3].replace(minute=30))
    _close(b)

    starts.append(_session(b, DAY[3].replace(minute=10)))
    b.play(2, 5, 4)
    _close(b)
    b.seq += 1
    seqs["quarantined"] = b.seq
    starts.append(_session(b, DAY[4].replace(hour=20)))
    b.play(2, 3, 4)
    seqs["unsettled_end"] = b.roll(2, 6, 6)
    b.call(12)

    for name, k in zip(("s1", "s2", "s3", "s4", "s5", "s6"), starts):
        seqs[name] = b.rows[k]["seq"]
    _write(b.rows[:starts[4]], folder / "a.csv")
    append_broken_rows(folder / "a.csv",
                       {"table_id": "T1", "seq": seqs["quarantined"], "event": "roll",
                        "actor_role": "player", "seat": 2, "dice": "A1,A2", "die1": 7,
                        "die2": 1},
                       {"table_id": "T1", "seq": 3, "event": "no_such_event"})
    _write(b.rows[starts[5]:] + b.rows[starts[4]:starts[5]], folder / "b.csv")
    other = LogBuilder("T2", start=DAY[0])
    _session(other, DAY[0].replace(hour=21))
    other.play(2, 3, 4)
    _close(other)
    other.write_csv(folder / "c.csv")
    return seqs


def _write(rows: list[dict], path: Path) -> None:
    part = LogBuilder()
    part.rows = rows
    part.write_csv(path)


@pytest.fixture(scope="module")
def boundary(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    folder = tmp_path_factory.mktemp("boundary")
    return folder, _boundary_log(folder)


@pytest.fixture(autouse=True)
def every_long_lived_table_cut(monkeypatch):
    """Every long-lived table cut by day, however small (`cut_by_day`
    spares small ones where the tables keep the workers busy), and these
    small logs audited a task per table (not by batches: decision 111)."""
    monkeypatch.setattr(dask_engine, "DAY_CUT_ROWS", 0)
    monkeypatch.setattr(dask_engine, "SMALL_INPUT_BATCHES", False)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """Three tables of four daily sessions, every injectable code planted in
    each session, over two files; a fourth table of one session."""
    folder = tmp_path_factory.mktemp("generated")
    write_log(generate(3, 40, seed=8, inject=list(INJECTABLE), days=4).table,
              folder / "week.parquet")
    write_log(generate(1, 40, seed=9, inject=["call.wrong_total"], first_table=4).table,
              folder / "one_day.csv")
    return folder


def _table(logs, table: str):
    events = logs.events
    return events[events["table_id"].astype(str) == table].reset_index(drop=True)


def _found(findings) -> set[tuple[str, int]]:
    return {(c, int(s)) for c, s, t in zip(findings["code"], findings["seq"],
                                          findings["table_id"]) if t == "T1"}


def _audited_by_units(logs, ruleset, units_of=day_units, quarantine_of=None):
    """Every table of `logs` audited unit by unit, as the dask engine's tasks
    do, without a cluster: the finalized findings."""
    tables = sorted({str(t) for t in logs.events["table_id"]})
    parts = []
    for table, rows in zip(tables, quarantine_groups(logs.quarantine, [[t] for t in tables])):
        events = _table(logs, table)
        for k, unit in enumerate(units_of(events)):
            given = rows if quarantine_of is None else quarantine_of(rows, k)
            parts += audit_unit(unit.events(events), unit, given, ruleset, k == 0)
    return finalize(parts)


def _seqs(events, rows) -> list[int]:
    return [int(events["seq"].iat[r]) for r in rows]


# --- the cut -------------------------------------------------------------------------

def test_sessions_are_grouped_by_the_day_they_open(boundary):
    folder, seqs = boundary
    t1 = _table(load_logs([folder]), "T1")
    units = day_units(t1)
    assert [u.day for u in units] == ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04",
                                      "2026-03-05"]
    assert _seqs(t1, [u.own.start for u in units]) == \
        [seqs["s1"], seqs["s2"], seqs["s3"], seqs["s5"], seqs["s6"]]
    # every row once, in order; S2 runs past midnight and stays whole with
    # its day; S3 and S4 (both on the 3rd) are one unit
    assert units[0].own.start == 0 and units[-1].own.stop == len(t1)
    assert all(a.own.stop == b.own.start for a, b in pairwise(units))
    assert str(t1["ts"].iat[units[1].own.stop - 1].date()) == "2026-03-03"
    assert int(t1["seq"].iat[units[1].own.stop - 1]) == seqs["last_s2"]


def test_the_context_is_what_the_checks_read_across_the_cut(boundary):
    folder, seqs = boundary
    t1 = _table(load_logs([folder]), "T1")
    units = day_units(t1)
    # the first day: nothing before it, and no check looks past its sessions
    # (its die off the table ends with S1: S2's offer is not for it) but the
    # caveat, whose hand ends at the next day's `table_open`
    assert units[0].context == (range(units[1].own.start, units[1].own.start + 1),)
    assert _seqs(t1, [units[0].context[0].start]) == [seqs["s2"]]
    # the second day: S1's last row, and the third day's `table_open`
    assert _seqs(t1, [r.start for r in units[1].context]) == [seqs["last_s1"], seqs["s3"]]
    assert all(len(r) == 1 for r in units[1].context)
    # the fourth day (S5): S6 whole, whose last row is before S5's first in b.csv
    assert (units[4].own.start, units[4].own.stop) in [(r.start, r.stop)
                                                       for r in units[3].context]


def test_a_table_of_one_session_or_one_day_is_not_cut(boundary, tmp_path):
    folder, _ = boundary
    t2 = _table(load_logs([folder]), "T2")
    assert day_units(t2) == [DayUnit("2026-03-01", range(len(t2)))]
    b = LogBuilder("T3")
    for hour in (9, 15):  # two sessions the same day
        _session(b, DAY[0].replace(hour=hour))
        b.play(2, 3, 4)
        _close(b)
    t3 = _table(load_logs([b.write_csv(tmp_path / "same_day.csv")]), "T3")
    assert day_units(t3) == [DayUnit("2026-03-01", range(len(t3)))]


# --- the findings, without a cluster -------------------------------------------------

def test_the_planted_boundary_cases_are_found_locally(boundary):
    folder, seqs = boundary
    found = _found(run_audit(AuditJob.of([folder], load_ruleset("nz-table-games"))).findings)
    assert {("log.sequence_gap", seqs["s2"]), ("log.out_of_order", seqs["s3"]),
            ("log.out_of_order", seqs["s5"]), ("noroll.missing", seqs["die_on_die"]),
            ("settle.missing", seqs["die_on_die"]), ("dice.not_in_bowl", seqs["last_s2"] - 3),
            ("log.malformed", seqs["quarantined"]), ("log.malformed", 3)} <= found
    assert ("log.sequence_gap", seqs["s6"]) not in found  # the seq skipped is quarantined
    # the checks stop at a table_open: S2's no roll before its first roll is
    # about no roll, and S2's replacement offer is not for S1's die
    assert ("noroll.improper", seqs["chips_s2"]) in found
    assert ("dice.off_table_procedure", seqs["off_s1"]) in found


def test_without_its_context_a_day_would_find_otherwise(boundary):
    """The context is needed: each unit alone loses the findings made
    against the rows before its cut."""
    folder, seqs = boundary
    logs = load_logs([folder])
    ruleset = load_ruleset("nz-table-games")
    local = _found(run_audit(AuditJob.of([folder], ruleset)).findings)
    alone = _found(_audited_by_units(logs, ruleset, lambda events: [
        DayUnit(u.day, u.own) for u in day_units(events)]))
    assert local - alone == {("log.sequence_gap", seqs["s2"]), ("log.out_of_order", seqs["s3"]),
                             ("log.out_of_order", seqs["s5"])}
    assert alone - local == set()
    unquarantined = _found(_audited_by_units(logs, ruleset, quarantine_of=lambda rows, k:
                                             rows if k == 0 else rows.iloc[:0]))
    assert unquarantined - local == {("log.sequence_gap", seqs["s6"])}


@pytest.mark.parametrize("ruleset_id", SHIPPED)
def test_units_give_the_local_findings_byte_for_byte(boundary, generated, ruleset_id, tmp_path):
    ruleset = load_ruleset(ruleset_id)
    for k, folder in enumerate((boundary[0], generated)):
        logs = load_logs([folder])
        local = run_audit(AuditJob.loaded(ruleset), loaded=logs)
        local.findings = _audited_by_units(logs, ruleset)
        expected = report_bytes(run_audit(AuditJob.loaded(ruleset), loaded=logs),
                                tmp_path / f"local{k}", META)
        assert report_bytes(local, tmp_path / f"units{k}", META) == expected


def test_a_day_without_table_close_weighs_its_own_hand_not_later_days(tmp_path):
    """A finding after the last roll of a session that never closes: its
    hand ends at the next day's `table_open`, so its caveat names the seq
    lost just before that open, as the whole table's audit says, never a
    row quarantined days later (each day's task once read its hand to the
    table's end, over every later day's quarantined rows)."""
    b = LogBuilder("T1")
    _session(b, DAY[0].replace(hour=20))
    b.play(2, 4, 2)
    last_roll = b.roll(2, 6, 6)  # decided, never called nor settled; no table_close
    b.seq += 1
    gap = b.seq  # lost just before the next day's table_open
    _session(b, DAY[1].replace(hour=20))
    b.play(2, 4, 2)
    _close(b)
    _session(b, DAY[2].replace(hour=20))
    b.play(2, 4, 2)
    b.seq += 1
    lost = b.seq  # a row of the third day, quarantined
    b.play(2, 5, 2)
    _close(b)
    b.write_csv(tmp_path / "t.csv")
    append_broken_rows(tmp_path / "t.csv", {"table_id": "T1", "seq": lost, "event": "roll",
                                            "actor_role": "player", "seat": 2, "dice": "A1,A2",
                                            "die1": 7, "die2": 1})
    logs = load_logs([tmp_path])
    ruleset = load_ruleset("nz-table-games")
    whole = run_audit(AuditJob.loaded(ruleset), loaded=logs).findings
    units = _audited_by_units(logs, ruleset)
    at_roll = whole[whole["seq"] == last_roll]
    assert len(at_roll) and set(at_roll["caveat"]) == {f"seq {gap} missing in this hand"}
    assert units[["code", "seq", "caveat"]].equals(whole[["code", "seq", "caveat"]])
    assert units.equals(whole)


# --- on a dask cluster ----------------------------------------------------------------

class _Counting(NoProgress):
    """Keeps the (tables, audited) of each task's end."""

    def __init__(self):
        super().__init__()
        self.ends: list[tuple[int, int]] = []

    def advance(self, files=0, events=0, tables=0, audited=0, scanned=0):
        if audited:
            self.ends.append((tables, audited))
        super().advance(files, events, tables, audited, scanned)


def _expected_tasks(folder: Path) -> int:
    logs = load_logs([folder])
    return sum(len(day_units(_table(logs, str(t)))) for t in set(logs.events["table_id"]))


@pytest.mark.parametrize("ruleset_id", SHIPPED)
def test_dask_cuts_by_day_and_finds_the_same(boundary, cluster, ruleset_id, tmp_path):
    folder, _ = boundary
    ruleset = load_ruleset(ruleset_id)
    progress = _Counting()
    remote = run_audit(AuditJob.of([folder], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address), progress=progress)
    local = run_audit(AuditJob.of([folder], ruleset))
    assert report_bytes(remote, tmp_path / "dask", META) == \
        report_bytes(local, tmp_path / "local", META)
    assert remote.tables == local.tables == ["T1", "T2"]
    # T1 audited by five tasks (one per day), T2 by one; each table counted once
    assert len(progress.ends) == _expected_tasks(folder) == 6
    assert sum(t for t, _ in progress.ends) == 2
    assert sum(a for _, a in progress.ends) == len(local.logs.events)


@pytest.mark.parametrize("ruleset_id", ["nz-table-games", "nsw-1992"])
def test_dask_on_generated_weeks_finds_the_same(generated, cluster, ruleset_id, tmp_path):
    ruleset = load_ruleset(ruleset_id)
    progress = _Counting()
    remote = run_audit(AuditJob.of([generated], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address), progress=progress)
    local = run_audit(AuditJob.of([generated], ruleset))
    assert local.findings["ts"].dt.date.nunique() >= 4  # planted on every day
    assert report_bytes(remote, tmp_path / "dask", META) == \
        report_bytes(local, tmp_path / "local", META)
    assert len(progress.ends) == _expected_tasks(generated) == 3 * 4 + 1
    assert sum(t for t, _ in progress.ends) == 4


@pytest.mark.parametrize(("cut_rows", "tasks"), [
    (2_000_000, 4),  # small tables, as many as the workers or more: a task a table
    (0, 3 * 4 + 1),  # every long-lived table cut: a task a day
])
def test_small_long_lived_tables_are_cut_by_day_only_to_share_the_work(
        generated, cluster, monkeypatch, tmp_path, cut_rows, tasks):
    """Four tables (three open four days) on two workers: cut by day only
    when larger than `DAY_CUT_ROWS`; the same findings either way."""
    monkeypatch.setattr(dask_engine, "DAY_CUT_ROWS", cut_rows)
    ruleset = load_ruleset("nz-table-games")
    progress = _Counting()
    remote = run_audit(AuditJob.of([generated], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address), progress=progress)
    local = run_audit(AuditJob.of([generated], ruleset))
    assert len(progress.ends) == tasks
    assert sum(t for t, _ in progress.ends) == 4
    assert report_bytes(remote, tmp_path / "dask", META) == \
        report_bytes(local, tmp_path / "local", META)


def test_tables_are_cut_by_day_to_share_the_work_or_bound_the_memory(monkeypatch):
    """`cut_by_day`: every long-lived table where the workers outnumber the
    tables, else those of more events (over every file) than DAY_CUT_ROWS."""
    monkeypatch.setattr(dask_engine, "DAY_CUT_ROWS", 8)
    two_days, one_day = {"2026-01-01", "2026-01-02"}, {"2026-01-01"}
    summaries = [
        dask_engine._FileSummary(table_rows={"T1": 5, "T2": 50},
                                 opening_days={"T1": two_days, "T2": one_day}),
        dask_engine._FileSummary(table_rows={"T1": 4, "T3": 8},
                                 opening_days={"T1": one_day, "T3": two_days}),
    ]
    assert dask_engine.cut_by_day(summaries, 4) == {"T1", "T3"}  # 3 tables, 4 workers
    assert dask_engine.cut_by_day(summaries, 3) == {"T1"}  # 9 events over two files
    assert dask_engine.cut_by_day(summaries, 1) == {"T1"}  # (T2 is not long-lived)


def test_check_on_a_dask_cluster_writes_the_same_reports(boundary, cluster, tmp_path):
    folder, _ = boundary

    def check(out: str, *more: str):
        return CliRunner().invoke(main, ["check", str(folder), "-r", "nz-table-games",
                                         "--out", str(tmp_path / out), "-q", *more],
                                  catch_exceptions=False)

    local = check("l")
    remote = check("d", "--engine", "dask", "--scheduler", cluster.scheduler_address)
    assert local.exit_code == remote.exit_code == 1
    for name in ("findings.parquet", "quarantine.parquet"):
        assert (tmp_path / "l" / name).read_bytes() == (tmp_path / "d" / name).read_bytes()


def test_dask_html_report_is_the_local_one_without_reading_the_events(boundary, generated,
                                                                      cluster):
    """Each table's task (for a table cut by day, a task after its days)
    takes what the HTML report shows of its events: the page is the local
    engine's, byte for byte, and the client never reads the events."""
    ruleset = load_ruleset("nz-table-games")
    meta = {"generated": "fixed"}
    for folder in (boundary[0], generated):
        local = run_audit(AuditJob.of([folder], ruleset))
        remote = run_audit(AuditJob.of([folder], ruleset, engine="dask",
                                       scheduler=cluster.scheduler_address, collector=COLLECTOR))
        assert remote.logs.digest is not None
        page = render_html(remote, meta)
        assert page == render_html(local, meta)
        assert '<dd class="g-roll">seq ' in page  # findings with the game beside them
        assert remote.logs._events is None  # (LazyLogs reads them only when asked)
    without = run_audit(AuditJob.of([generated], ruleset, engine="dask",
                                    scheduler=cluster.scheduler_address))
    assert without.logs.digest is None
