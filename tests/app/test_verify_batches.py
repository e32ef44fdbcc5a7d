"""`auditor verify` re-runs the audit as `check` runs it: a batch of linked
files at a time (memory follows the batch, not the input: a week of a
state's tables is not loaded whole to be verified), in `--jobs` processes,
with logs that have moved since read under their recorded names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from builder import batches_always, two_casinos
from builder import run_cli as run

from auditor.generate import generate, write_log
from auditor.run import stream


@pytest.fixture
def loads(monkeypatch):
    """Every input read in batches (small ones too), each load's files noted."""
    batches_always(monkeypatch)
    seen: list[list[str]] = []
    real = stream.load_with_progress

    def noted(files, *rest, **kw):
        seen.append(sorted(f"{Path(f).parent.name}/{Path(f).name}" for f in files))
        return real(files, *rest, **kw)

    monkeypatch.setattr(stream, "load_with_progress", noted)
    return seen


@pytest.fixture
def report(tmp_path, loads):
    two_casinos(tmp_path / "logs")
    out = tmp_path / "out"
    res = run("check", tmp_path / "logs", "--site-from-path", "--ruleset", "nz-table-games",
              "--out", out, "--format", "parquet", "--format", "html", "--format", "json")
    assert res.exit_code == 1, res.output
    assert sorted(loads) == [["casino-a/n1.parquet", "casino-a/n2.csv"],
                             ["casino-b/n1.jsonl"]]
    loads.clear()
    return out


def _stands(res) -> None:
    assert res.exit_code == 0, res.output
    assert res.output.startswith("report stands: 3 input(s) unchanged"), res.output


def test_verify_reads_the_logs_a_batch_at_a_time_as_check_did(report, loads):
    _stands(run("verify", report))
    assert sorted(loads) == [["casino-a/n1.parquet", "casino-a/n2.csv"],
                             ["casino-b/n1.jsonl"]]  # never the three at once


def test_verify_of_moved_logs_reads_them_in_batches_under_their_recorded_names(
        report, loads, tmp_path):
    moved = tmp_path / "archive"
    shutil.move(tmp_path / "logs", moved)
    _stands(run("verify", report, "--inputs-root", moved))
    assert sorted(loads) == [["casino-a/n1.parquet", "casino-a/n2.csv"],
                             ["casino-b/n1.jsonl"]]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_verify_with_jobs_stands_and_a_changed_log_still_breaks_it(report, tmp_path, jobs):
    _stands(run("verify", report, "--jobs", jobs))
    log = tmp_path / "logs" / "casino-b" / "n1.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:-1]), encoding="utf-8")  # the night's last event gone
    res = run("verify", report, "--jobs", jobs)
    assert res.exit_code == 1, res.output
    assert "report does not stand" in res.output
    assert "casino-b/n1.jsonl: changed" in res.output or "n1.jsonl" in res.output


@pytest.mark.parametrize("name", ["night.parquet", "night.jsonl"])
def test_one_moved_file_cut_into_pieces_is_verified_under_its_recorded_name(
        tmp_path, monkeypatch, name):
    """A file large enough to be cut (here: pieces of 400 rows) is audited
    a piece at a time by `check --jobs 2`, and by `verify --jobs 2` after
    it has moved: each piece read under the file's recorded name."""
    import pyarrow.parquet as pq

    from auditor.run import pieces

    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    monkeypatch.setattr(pieces, "TEXT_PIECE_ROWS", 400)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    table = generate(4, 60, seed=43, inject=["call.wrong_total", "offer.order"]).table
    log = tmp_path / "logs" / name
    if name.endswith(".parquet"):
        log.parent.mkdir()
        pq.write_table(table, log, row_group_size=300)
    else:
        write_log(table, log)
    assert len(pieces.split([log], None, 2) or []) > 1
    out = tmp_path / "out"
    res = run("check", tmp_path / "logs", "--ruleset", "nz-table-games", "--out", out,
              "--jobs", "2", "--format", "parquet", "--format", "html")
    assert res.exit_code == 1, res.output
    shutil.move(tmp_path / "logs", tmp_path / "archive")
    res = run("verify", out, "--inputs-root", tmp_path / "archive", "--jobs", "2")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("report stands: 1 input(s) unchanged"), res.output


def test_verify_tells_its_progress_as_check_does(report):
    """The re-run reports files read, events read and tables audited, as
    `check`'s does (the terminal's line on a long verify)."""
    from auditor.app.verify import verify_report
    from auditor.report.parquet import read_metadata
    from auditor.run.progress import NoProgress

    told = NoProgress()
    told.start()
    assert verify_report(report, progress=told).stands
    recorded = read_metadata(report / "findings.parquet")
    assert told.files == 3 == len(recorded["inputs"])
    assert told.events == sum(f["rows_read"] for f in recorded["inputs"])
    assert told.tables == len(recorded["tables"]) == 2
