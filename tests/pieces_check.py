"""What the tests of a file split in pieces (`auditor.run.pieces`) share:
the rows each audited piece held, and the comparison with one reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from builder import report_bytes
from click.testing import CliRunner

from auditor.cli import main
from auditor.errors import LogFileError
from auditor.report.html import render_html
from auditor.run import AuditJob, pieces, run_audit, stream

META = {"test": "pieces"}


class Held:
    """The rows each audited piece held, written by the worker that audited
    it (a forked process) to a file the test reads."""

    def __init__(self, path: Path):
        self.path = path

    def add(self, rows: tuple[int, int]) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(f"{rows[0]} {rows[1]}\n")

    def rows(self) -> list[tuple[int, int]]:
        if not self.path.exists():
            return []
        return [tuple(map(int, line.split())) for line in self.path.read_text().splitlines()]


def held_pieces(monkeypatch, tmp_path: Path) -> Held:
    """The rows each piece audited from now on held."""
    held = Held(tmp_path / "held.txt")
    real = pieces.audit_piece

    def spy(piece, job, progress, label=None):
        result = real(piece, job, progress, label)
        if isinstance(result, stream.BatchResult):
            held.add(result.rows)
        return result
    monkeypatch.setattr(pieces, "audit_piece", spy)
    return held


def same_as_once(result, once, tmp_path: Path) -> None:
    assert report_bytes(result, tmp_path / "split", META) == \
        report_bytes(once, tmp_path / "once", META)
    assert result.logs.quarantine.equals(once.logs.quarantine)
    assert [f.as_dict() for f in result.logs.inputs] == [f.as_dict() for f in once.logs.inputs]
    assert [(f.marks, f.open_offsets, f.never_filled) for f in result.logs.inputs] == \
        [(f.marks, f.open_offsets, f.never_filled) for f in once.logs.inputs]
    assert result.tables == once.tables
    assert result.mid_session == once.mid_session
    assert render_html(result, META) == render_html(once, META)


def boundaries(ids: list) -> list[int]:
    """Every row at which a run of one table_id (as recorded) starts, and the end."""
    return [0] + [r for r in range(1, len(ids)) if ids[r] != ids[r - 1]] + [len(ids)]


def files_read_whole(monkeypatch) -> list[list]:
    """The files the main process goes on to audit whole (`stream.audit_batch`
    called in it: a split file its pieces could not judge alone), from now on."""
    read: list[list] = []
    real = stream.audit_batch

    def spy(paths, *args, **kw):
        read.append(list(paths))
        return real(paths, *args, **kw)
    monkeypatch.setattr(stream, "audit_batch", spy)
    return read


def every_report_by_jobs(path: Path, out: Path) -> dict[str, dict[str, bytes]]:
    """`auditor check PATH` under --jobs 1, 2 and 3 (a file split in two,
    then three), every report format written: each run's files, by jobs."""
    written = {}
    for jobs in ("1", "2", "3"):
        folder = out / f"jobs{jobs}"
        formats = [a for f in ("parquet", "html", "json", "junit", "sarif", "csv", "text")
                   for a in ("--format", f)]
        run = CliRunner().invoke(main, ["check", str(path), "-r", "nz-table-games", "--out",
                                        str(folder), "--jobs", jobs, *formats])
        assert run.exit_code == 1, run.output
        written[jobs] = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    return written


def errors_whole_and_split(path: Path, ruleset) -> tuple[str, str]:
    """The error auditing `path` stops with in one process (read whole),
    and with two workers (split, then read whole to say what is wrong)."""
    errors = []
    for jobs in (1, 2):
        with pytest.raises(LogFileError) as stopped:
            run_audit(AuditJob.of([path], ruleset, jobs=jobs))
        errors.append(str(stopped.value))
    return errors[0], errors[1]

