"""What the tests of a file split in pieces (`auditor.run.pieces`) share:
the rows each audited piece held, and the comparison with one reading."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest
from builder import report_bytes
from click.testing import CliRunner

from auditor.cli import main
from auditor.errors import LogFileError
from auditor.generate import generate, write_log
from auditor.logs.load import load_logs
from auditor.logs.raw import ReadOptions
from auditor.report.html import COLLECTOR, render_html
from auditor.run import AuditJob, by_table, pieces, run_audit, scratch, stream

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



def audited_in_budget_pieces(path: Path, ruleset, once, held: Held, monkeypatch, tmp_path: Path,
                             jobs: int, budget: int) -> None:
    """A text file of more lines than `budget` (`PIECE_BUDGET`) audited in
    pieces of at most that many lines, more than the `jobs` workers (one
    process included): every piece audited, the audit one reading's."""
    monkeypatch.setattr(pieces, "PIECE_BUDGET", budget)
    plan = pieces.split([path], None, jobs)
    assert len(plan) == -(-plan[0].rows // budget) >= 3
    result = run_audit(AuditJob.of([path], ruleset, jobs=jobs, collector=COLLECTOR))
    rows = sorted(held.rows())
    assert len(rows) == len(plan) and rows[-1][1] == path.stat().st_size
    same_as_once(result, once, tmp_path)


def reports_the_same_split_or_not(path: Path, held: Held, tmp_path: Path) -> None:
    """Every report of `auditor check` byte-identical under --jobs 1, 2, 3."""
    written = every_report_by_jobs(path, tmp_path)
    assert len(held.rows()) == 5  # 2 pieces, then 3
    assert len(written["1"]) >= 10
    assert written["2"] == written["1"] and written["3"] == written["1"]


def dask_audits_the_same(path: Path, ruleset, once, held: Held, cluster, tmp_path: Path) -> None:
    """The file audited on the cluster, a piece a worker, as one reading."""
    result = run_audit(AuditJob.of([path], ruleset, engine="dask", collector=COLLECTOR,
                                   scheduler=cluster.scheduler_address))
    assert len(held.rows()) == 2  # the cluster's two workers
    same_as_once(result, once, tmp_path)


def split_as_one_reading(path: Path, ruleset, once, held: Held, monkeypatch, tmp_path: Path,
                         jobs: int, bounds: list[int]) -> None:
    """`path` audited by `jobs` workers a piece each, cut only at `bounds`
    (where a run of one table's lines starts), every line once, none of
    the pieces asking for the file to be read whole: one reading's audit."""
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=jobs, collector=COLLECTOR))
    assert whole == []
    rows = sorted(held.rows())
    assert len(rows) == jobs and rows[0][0] == 0 and rows[-1][1] == path.stat().st_size
    assert [b for _, b in rows[:-1]] == [a for a, _ in rows[1:]]  # every line once
    assert all(a in bounds for a, _ in rows)  # between tables
    same_as_once(result, once, tmp_path)


def line_starts(data: bytes) -> list[int]:
    """Where each line of a text file's bytes starts."""
    return [0] + [k + 1 for k, b in enumerate(data) if b == ord("\n") and k + 1 < len(data)]


def interleaved_tables_sorted_out(tmp_path: Path, ruleset, held: Held, monkeypatch,
                                  suffix: str) -> None:
    """A log of tables interleaved in time order (`suffix`: its format): a
    table in every piece, so its two pieces are each sorted out by ranges
    of its tables (`auditor.run.by_table`), every row once, no piece
    audited as one nor the file read whole: one reading's audit, every
    report. Where no scratch folder can be made, the pieces are tried and
    the file read whole: one reading's audit still."""
    log = generate(4, 40, seed=44, inject=["call.wrong_total", "log.sequence_gap"]).table
    order = pc.sort_indices(log, sort_keys=[("ts", "ascending"), ("table_id", "ascending")])
    path = tmp_path / f"by-time{suffix}"
    write_log(log.take(order), path)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([path]))
    plan = pieces.split([path], None, 2)
    assert len(plan) == 2 and plan[0].interleaved == ("T01", "T02", "T03", "T04")
    sorted_out = Held(tmp_path / "sorted.txt")
    real = by_table.sort_out

    def spy(item, *rest):
        result = real(item, *rest)
        sorted_out.add(result.rows)
        return result
    monkeypatch.setattr(by_table, "sort_out", spy)
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    rows = sorted(sorted_out.rows())
    end = path.stat().st_size if suffix != ".parquet" else log.num_rows
    assert len(rows) == 2 and rows[0][0] == 0 and rows[0][1] == rows[1][0] and rows[1][1] == end
    assert held.rows() == [] and whole == []
    same_as_once(result, once, tmp_path)
    monkeypatch.setattr(scratch, "make", lambda kind="", root=None: None)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, collector=COLLECTOR))
    assert len(held.rows()) == 2 and whole == [[path]]  # tried, then read whole
    (tmp_path / "no-scratch").mkdir()
    same_as_once(result, once, tmp_path / "no-scratch")


def lacking_die1_errs_as_one_reading(tmp_path: Path, ruleset, suffix: str) -> None:
    """Lines lacking `die1`, which their rolls require: the error, read in
    pieces, counts the file's rolls as one reading does, not a piece's."""
    path = tmp_path / f"no-die1{suffix}"
    write_log(generate(3, 40, seed=46).table.drop_columns(["die1"]), path)
    whole, split_error = errors_whole_and_split(path, ruleset)
    assert "die1" in whole and split_error == whole


def one_byte_encoding_cut_as_one_reading(night: Path, ruleset, held: Held, monkeypatch,
                                         tmp_path: Path, encoding: str) -> None:
    """Staff ids with accents, the night written in a Windows or ISO code
    page and read with `--encoding`: cut in two all the same, each piece
    decoding its own bytes, the audit one reading's."""
    path = tmp_path / f"accented-{encoding}{night.suffix}"
    text = night.read_text(encoding="utf-8").replace("D01a", "Dédé").replace("K03", "Kévin")
    path.write_bytes(text.encode(encoding))
    read = ReadOptions(encoding=encoding)
    once = run_audit(AuditJob.loaded(ruleset), loaded=load_logs([path], options=read))
    assert "Dédé" in set(once.findings["actor_id"].dropna())
    whole = files_read_whole(monkeypatch)
    result = run_audit(AuditJob.of([path], ruleset, jobs=2, read=read, collector=COLLECTOR))
    assert len(held.rows()) == 2 and whole == []
    same_as_once(result, once, tmp_path)
