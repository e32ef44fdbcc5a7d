"""Report formats written side by side under `--jobs N` (auditor.report.apart):
the same files, byte for byte, as written one after another; a writer
that fails or is killed leaves no report at all; under APART_FINDINGS
findings, or under `--jobs 1`, the formats are written in turn."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest
from builder import one_roll_table
from builder import run_cli as run

from auditor import atomic
from auditor.errors import OutputError
from auditor.report import apart, formats, sarif

RULESET = "nz-table-games"
EVERY_FORMAT = ("parquet", "html", "json", "junit", "sarif", "csv")

pytestmark = pytest.mark.skipif(apart.fork_context() is None,
                                reason="formats are written side by side where processes fork")


@pytest.fixture
def night(tmp_path) -> Path:
    """Two tables, each with a wrong call (a finding), and a third lawful."""
    folder = tmp_path / "night"
    folder.mkdir()
    for name, wrong in (("T1", True), ("T2", True), ("T3", False)):
        one_roll_table(name, wrong_call=wrong).write_csv(folder / f"{name}.csv")
    return folder


@pytest.fixture
def used(monkeypatch) -> list[tuple]:
    """The calls to write_apart (formats, workers), and every run's findings
    enough to be written side by side."""
    calls: list[tuple] = []
    real = formats.write_apart

    def spy(result, meta, out, names, options, workers):
        calls.append((tuple(names), workers))
        return real(result, meta, out, names, options, workers)

    monkeypatch.setattr(formats, "write_apart", spy)
    monkeypatch.setattr(apart, "APART_FINDINGS", 1)
    return calls


def _check(night: Path, out: Path, jobs: int, *extra):
    args = ["check", night, "--ruleset", RULESET, "--jobs", jobs, "--out", out, *extra]
    for f in EVERY_FORMAT:
        args += ["--format", f]
    return run(*args)


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("engine", [(), ("--engine", "dask")], ids=["jobs", "dask"])
def test_formats_written_side_by_side_are_the_bytes_written_in_turn(night, tmp_path, used,
                                                                      engine):
    """(under dask, forked as its local cluster closes in a thread of the audit)"""
    if engine:
        pytest.importorskip("distributed")
    apart_run = _check(night, tmp_path / "apart", 2, *engine)
    assert used == [(EVERY_FORMAT, 2)]
    in_turn = _check(night, tmp_path / "in-turn", 1)
    assert len(used) == 1  # (--jobs 1: one after another)
    assert apart_run.exit_code == in_turn.exit_code == 1, apart_run.output
    written = _files(tmp_path / "apart")
    assert written == _files(tmp_path / "in-turn")
    assert {"report.html", "findings.sarif", "junit.xml", "findings.csv",
            "findings.jsonl", "findings.parquet", "manifest.json"} <= set(written)
    # the files named in the order the formats were asked for, as written in turn
    assert apart_run.output.replace(str(tmp_path / "apart"), "OUT") == \
        in_turn.output.replace(str(tmp_path / "in-turn"), "OUT")


def test_few_findings_are_written_in_turn(night, tmp_path, monkeypatch, used):
    monkeypatch.setattr(apart, "APART_FINDINGS", 3)  # the night has 2
    result = _check(night, tmp_path / "out", 2)
    assert result.exit_code == 1, result.output
    assert used == []


def test_a_failing_writer_leaves_no_report(night, tmp_path, monkeypatch, used):
    def fails(result, meta, out, **options):
        with atomic.atomic_path(Path(out) / "findings.sarif") as tmp:
            Path(tmp).write_text("half")
        raise OutputError(f"{out}: the disk is full")

    monkeypatch.setattr(sarif, "write", fails)  # (the forked writer inherits it)
    out = tmp_path / "out"
    result = _check(night, out, 2)
    assert used, "the formats were not written side by side"
    assert result.exit_code == 2
    assert "the disk is full" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["night"]  # no staging folder left


def test_a_killed_writer_ends_the_run_in_one_line_and_leaves_no_report(night, tmp_path,
                                                                       monkeypatch, used):
    def killed(result, meta, out, **options):
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(sarif, "write", killed)
    out = tmp_path / "out"
    result = _check(night, out, 2)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "ended before it had finished" in lines[0], result.output
    assert "sarif" in lines[0]
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["night"]


def test_an_earlier_report_folder_survives_a_failed_run(night, tmp_path, monkeypatch, used):
    out = tmp_path / "out"
    assert _check(night, out, 2).exit_code == 1
    before = _files(out)

    def fails(result, meta, out, **options):
        raise OutputError(f"{out}: the disk is full")

    monkeypatch.setattr(sarif, "write", fails)
    assert _check(night, out, 2).exit_code == 2
    assert _files(out) == before


# --- the renames held back and handed over -------------------------------------------

def test_held_renames_wait_for_the_block_that_adopts_them(tmp_path):
    target = tmp_path / "a.txt"
    with atomic.held_renames() as pending:
        atomic.write_text(target, "new")
    assert not target.exists() and len(pending) == 1
    with atomic.commit_together():
        atomic.adopt_renames(pending)
        assert not target.exists()
    assert target.read_text() == "new"


def test_held_renames_outside_a_block_are_done_at_once(tmp_path):
    target = tmp_path / "a.txt"
    with atomic.held_renames() as pending:
        atomic.write_text(target, "new")
    atomic.adopt_renames(pending)
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_held_renames_of_a_failed_block_and_discarded_ones_leave_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic.held_renames():
        atomic.write_text(tmp_path / "a.txt", "new")
        raise RuntimeError("boom")
    with atomic.held_renames() as pending:
        atomic.write_text(tmp_path / "b.txt", "new")
    atomic.discard_renames(pending)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("signum,code,word", [(signal.SIGTERM, 143, "terminated"),
                                              (signal.SIGINT, 130, "interrupted")])
def test_a_signal_while_the_writers_write_leaves_the_earlier_report(night, tmp_path,
                                                                   monkeypatch, used, signum,
                                                                   code, word):
    """The run is interrupted (its main process signalled) while a writer
    is at work: the run ends as interrupted, the writers are stopped, and
    the earlier report folder is as it was, no temporary file left."""
    out = tmp_path / "out"
    assert _check(night, out, 2).exit_code == 1
    before = {p.name: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}

    def interrupted(result, meta, out, **options):
        with atomic.atomic_path(Path(out) / "findings.sarif") as tmp:
            Path(tmp).write_text("half")
            os.kill(os.getppid(), signum)  # (the audit's main process: this test's)
            time.sleep(30)  # until the main process stops this writer

    monkeypatch.setattr(sarif, "write", interrupted)
    started = time.monotonic()
    result = _check(night, out, 2)
    assert result.exit_code == code, result.output
    assert len(used) == 2  # (the earlier run's writers, and this one's)
    assert word in result.output and "Traceback" not in result.output
    assert time.monotonic() - started < 20  # the writer was stopped, not waited for
    after = {p.name: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["night", "out"]
    assert not multiprocessing.active_children()
