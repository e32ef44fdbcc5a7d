"""A ruleset family audited a batch of linked files at a time
(`auditor.run.family.audit_family_batches`), a group of nightly exports a
range of tables at a time: the reports of every file loaded at once, byte
for byte, with memory following the batch."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from builder import FAMILY_NEW, append_broken_rows, nz_family, run_cli

from auditor.generate import by_night, generate, write_log
from auditor.run import family as family_run
from auditor.run import stream

#: Every report file but the manifest (which names the folder it is in).
REPORTS = ("findings.parquet", "quarantine.parquet", "report.html", "dice_stats.parquet",
           "dice_totals.parquet", "rollups.parquet")


@pytest.fixture
def family(tmp_path) -> Path:
    return nz_family(tmp_path / "rules") / "nz"


def _logs(root: Path) -> Path:
    """Tables open from 27 February to 2 March 2026, over the change of
    version on 1 March: T01-T02 in one file; T03-T04 exported nightly (a
    group of linked files, cut into ranges of tables); T05 in a CSV with
    broken rows (one of T99, a table with no events, one naming none)."""
    start = datetime(2026, 2, 27, 20, 0, tzinfo=UTC)
    inject = ["call.wrong_total", "log.sequence_gap", "offer.order", "settle.missing"]
    write_log(generate(2, 30, seed=71, days=4, start=start, inject=inject).table,
              root / "a.parquet")
    nights = by_night(generate(2, 30, seed=72, days=4, start=start, first_table=3,
                               inject=inject).table)
    for k, night in enumerate(nights):
        write_log(night, root / f"n-{k + 1}.{('parquet', 'csv', 'jsonl')[k % 3]}")
    write_log(generate(1, 30, seed=73, days=2, start=start, first_table=5,
                       inject=inject).table, root / "z.csv")
    append_broken_rows(root / "z.csv")
    return root


def _check(logs: Path, family: Path, out: Path, *extra) -> dict[str, bytes]:
    result = run_cli("check", logs, "--ruleset", family, "--out", out, "--format", "parquet",
                     "--format", "html", *extra)
    assert result.exit_code == 1, result.output
    return {name: (out / name).read_bytes() for name in REPORTS}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_family_in_batches_reports_as_every_file_loaded_at_once(tmp_path, family,
                                                                  monkeypatch, jobs):
    logs = _logs(tmp_path / "logs")
    once = _check(logs, family, tmp_path / "once", "--jobs", jobs)  # (small: at once)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    units: list[list[str]] = []
    real = family_run._Unit.of
    replayed: list[int] = []  # (a batch two versions judge is replayed again for the reports)
    replay = family_run.replay_state
    monkeypatch.setattr(family_run, "replay_state",
                        lambda events, ruleset: replayed.append(len(events)) or replay(
                            events, ruleset))

    def noted(logs, *rest):
        unit = real(logs, *rest)
        units.append(unit.tables)
        return unit
    monkeypatch.setattr(family_run._Unit, "of", noted)
    batched = _check(logs, family, tmp_path / "batched", "--jobs", jobs)
    # a batch a file of its own tables, a range a table of the nightly group
    assert units == [["T01", "T02"], ["T03"], ["T04"], ["T05"]]
    # T05's two nights lie in nz@1996 alone: its version's audit took what the
    # reports need, with no replay of its own
    assert len(replayed) == 3
    assert batched == once
    judged_by = pq.read_table(tmp_path / "batched" / "findings.parquet").column("ruleset")
    assert set(judged_by.to_pylist()) == {"nz@1996", "nz@2026"}  # (both versions at work)


def test_versions_that_replay_apart_load_at_once(tmp_path, family, monkeypatch):
    """A family whose versions' bar numbers differ is replayed for the
    reports under the latest's, as one load of every file is: it is loaded
    at once."""
    (family.parent / "nz@2026.toml").write_text(
        FAMILY_NEW + "\n[ruleset.parameters]\nbar_number = 2\n", encoding="utf-8")
    logs = _logs(tmp_path / "logs")
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    planned = []
    monkeypatch.setattr(stream, "plan", lambda *a, **k: planned.append(a) or None)
    result = run_cli("check", logs, "--ruleset", family, "--out", tmp_path / "o")
    assert result.exit_code == 1, result.output
    assert planned == []  # (not even planned)


def test_verify_re_runs_a_family_in_batches(tmp_path, family, monkeypatch):
    logs = _logs(tmp_path / "logs")
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    _check(logs, family, tmp_path / "out")
    batched = []
    real = family_run.audit_family_batches
    monkeypatch.setattr(family_run, "audit_family_batches",
                        lambda *a, **k: batched.append(1) or real(*a, **k))
    verified = run_cli("verify", tmp_path / "out")
    assert verified.exit_code == 0, verified.output
    assert "report stands" in verified.output
    assert batched == [1]


def test_no_batch_s_events_outlive_its_audit(tmp_path, family, monkeypatch):
    """Memory follows the batch: once the family's audit of a batch (or a
    range of tables) is done, nothing keeps its events (an empty slice of
    them kept for the last audit held every row: 100 bytes an event)."""
    import gc
    import weakref

    from auditor.app.check import CheckRequest, check
    from auditor.run import by_table

    logs = _logs(tmp_path / "logs")
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    loaded: list[weakref.ref] = []
    real_range, real_load = by_table.range_logs, stream.load_with_progress

    alive: list[int] = []  # (as each batch is read: the earlier batches' events alive)

    def noted(got):  # (the array under the seq column's values: a view keeps it)
        gc.collect()
        alive.append(sum(ref() is not None for ref in loaded))
        values = got.events["seq"].array._data
        while isinstance(values.base, np.ndarray):
            values = values.base
        loaded.append(weakref.ref(values))
        return got

    def range_logs(*args, **kw):
        return noted(real_range(*args, **kw))

    def load(*args, **kw):
        return noted(real_load(*args, **kw))
    monkeypatch.setattr(by_table, "range_logs", range_logs)
    monkeypatch.setattr(stream, "load_with_progress", load)
    outcome = check(CheckRequest((str(logs),), ruleset_ref=str(family),
                                 out=tmp_path / "out", formats=("parquet", "html")))
    assert len(loaded) == 4 and len(outcome.result.findings) > 50
    assert alive == [0, 0, 0, 0]
