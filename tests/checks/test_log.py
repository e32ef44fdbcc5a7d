"""log.sequence_gap on hostile numbers: a gap is counted, never listed, so
seq 1 then 10**12 takes no more memory or time than seq 1 then 3; and
log.unknown_reference's dice, session by session."""

from __future__ import annotations

import json

import pytest
from builder import (
    STICK,
    LogBuilder,
    found,
    lawful_table,
    report_findings,
    report_provenance,
    run_cli,
)
from real_process import run_real

HEADER = "table_id,seq,ts,event,actor_role\n"


def _row(table: str, seq: int, second: int, event: str = "table_open") -> str:
    return f"{table},{seq},2026-03-01T20:00:{second:02d}+00:00,{event},game_supervisor\n"


def _gaps(out) -> list[tuple[str, int, str, dict]]:
    f = report_findings(out)
    f = f[f["code"] == "log.sequence_gap"]
    return [(t, int(s), m, json.loads(e))
            for t, s, m, e in zip(f["table_id"], f["seq"], f["message"], f["evidence"])]


def test_a_small_gap_names_its_count_and_range(tmp_path):
    path = tmp_path / "gap.csv"
    path.write_text(HEADER + _row("T1", 1, 0) + _row("T1", 2, 1) + _row("T1", 5, 2))
    res = run_cli("check", path, "-r", "nz-1996", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    assert _gaps(tmp_path / "out") == [
        ("T1", 5, "seq jumps from 2 to 5: 2 event(s) missing",
         {"previous_seq": 2, "missing_count": 2, "missing_first": 3, "missing_last": 4})]


def test_quarantined_seqs_inside_a_gap_are_not_missing(tmp_path):
    """Seqs 2, 3 and 9 quarantined between 1 and 10: 4 to 8 are missing."""
    path = tmp_path / "gap.csv"
    rows = [_row("T1", 1, 0), _row("T1", 2, 1, "bogus"), _row("T1", 3, 2, "bogus"),
            _row("T1", 9, 3, "bogus"), _row("T1", 10, 4)]
    path.write_text(HEADER + "".join(rows))
    res = run_cli("check", path, "-r", "nz-1996", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    assert _gaps(tmp_path / "out") == [
        ("T1", 10, "seq jumps from 1 to 10: 5 event(s) missing",
         {"previous_seq": 1, "missing_count": 5, "missing_first": 4, "missing_last": 8})]


def test_a_gap_of_a_trillion_in_a_three_line_file_under_a_memory_cap(tmp_path):
    """Seq 1 then 10**12 built a list of every missing seq: killed by the
    kernel, or `internal error: MemoryError` under a cap. The int64 extremes
    are a gap too (their difference would wrap around)."""
    path = tmp_path / "gap.csv"
    path.write_text(HEADER + _row("T1", 1, 0) + _row("T1", 10 ** 12, 5)
                    + _row("T2", -2 ** 63, 0) + _row("T2", 2 ** 63 - 1, 5))
    proc = run_real("check", path, "-r", "nz-1996", "--out", tmp_path / "out",
                    "--format", "parquet", "--format", "html", "--format", "json",
                    memory_mib=1024, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "internal error" not in proc.stdout + proc.stderr
    assert report_provenance(tmp_path / "out")["rows"] == {
        "read": 4, "replayed": 4, "quarantined": 0}
    assert _gaps(tmp_path / "out") == [
        ("T1", 10 ** 12, "seq jumps from 1 to 1000000000000: 999999999998 event(s) missing",
         {"previous_seq": 1, "missing_count": 10 ** 12 - 2, "missing_first": 2,
          "missing_last": 10 ** 12 - 1}),
        ("T2", 2 ** 63 - 1,
         f"seq jumps from {-2 ** 63} to {2 ** 63 - 1}: {2 ** 64 - 2} event(s) missing",
         {"previous_seq": -2 ** 63, "missing_count": 2 ** 64 - 2,
          "missing_first": -2 ** 63 + 1, "missing_last": 2 ** 63 - 2})]


@pytest.mark.parametrize("per_session", [True, False])
def test_dice_never_received_in_their_session(tmp_path, monkeypatch, per_session):
    """`log.unknown_reference` for dice: a die named before its set arrives,
    a die no set brought, and a die only an earlier session received (the
    replay starts a table afresh at `table_open`), each at its row; a die
    named after its receipt is quiet. The same whether worked out a session
    at a time or by the rows' own (session, dice value) pairs."""
    import auditor.checks.log as log_checks

    monkeypatch.setattr(log_checks, "BY_SESSION_CELLS", 1 << 22 if per_session else -10 ** 18)
    b = lawful_table()
    early = b.add("dice_inspected", role="boxperson", dice="B1", outcome="pass")  # B1: later
    b.receive("B1,B2,B3,B4,B5")
    b.add("dice_inspected", role="boxperson", dice="B1", outcome="pass")  # (received: quiet)
    stray = b.add("dice_to_bowl", role=STICK, dice="A1,Z9")  # Z9 never received
    b.add("table_close", role="game_supervisor")
    b.open(seats=(5,), dice="C1,C2,C3,C4,C5")
    old = b.add("dice_to_bowl", role=STICK, dice="B2")  # received in the session before only
    other = lawful_table()
    other.table = "T2"
    for row in other.rows:
        row["table_id"] = "T2"
    t2 = other.add("dice_to_bowl", role=STICK, dice="B2")
    both = LogBuilder()
    both.rows = b.rows + other.rows
    assert found(both, tmp_path, "nz-1996", "log.unknown_reference") == {
        ("log.unknown_reference", "T1", early), ("log.unknown_reference", "T1", stray),
        ("log.unknown_reference", "T1", old), ("log.unknown_reference", "T2", t2)}
