"""`auditor validate` reads the logs a batch of linked files at a time, as
`check` does (a table's files together, so its seq is judged whole), and
says what one load of every file said: memory follows the batch, not the
input (44.6M events: 6.4 GB -> 0.45 GB, docs/performance.md)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from builder import append_broken_rows, batches_always, nightly_exports
from builder import run_cli as run

from auditor.app import validate as validate_app
from auditor.generate import generate, write_log
from auditor.run import scratch, stream


def _night(root: Path) -> None:
    """T01 over a.parquet and c.jsonl (a seq gap where they meet), T02 in
    a.parquet, T03 in b.csv with a gap of its own: two batches."""
    night = generate(3, 40, seed=61).table
    ids = night.column("table_id")
    t01 = night.filter(pc.equal(ids, "T01"))
    half = t01.num_rows // 2
    write_log(pa.concat_tables([t01.slice(0, half), night.filter(pc.equal(ids, "T02"))]),
              root / "a.parquet")
    t03 = night.filter(pc.equal(ids, "T03"))
    write_log(pa.concat_tables([t03.slice(0, 50), t03.slice(51)]), root / "b.csv")
    write_log(t01.slice(half + 1), root / "c.jsonl")


@pytest.fixture
def loaded(monkeypatch):
    """Each load validate makes, by its files' names."""
    seen: list[list[str]] = []
    real = validate_app.load_logs

    def noted(files, *rest, **kw):
        seen.append(sorted(Path(f).name for f in files))
        return real(files, *rest, **kw)

    monkeypatch.setattr(validate_app, "load_logs", noted)
    return seen


def test_validate_reads_a_batch_at_a_time_and_says_what_one_load_says(tmp_path, monkeypatch,
                                                                      loaded):
    _night(tmp_path / "logs")
    batches_always(monkeypatch)
    monkeypatch.setattr(scratch, "make", lambda kind="", root=None: None)  # (no ranges)
    batched = run("validate", tmp_path / "logs")
    assert sorted(loaded) == [["a.parquet", "c.jsonl"], ["b.csv"]]
    logs = tmp_path / "logs"
    gap = "[log.sequence_gap] seq jumps from {} to {}: 1 event(s) missing"
    assert batched.output.splitlines()[:2] == [  # (T01's gap where its two files meet)
        f"{logs / 'b.csv'}:52: T03 seq 52 " + gap.format(50, 52),
        f"{logs / 'c.jsonl'}:1: T01 seq 243 " + gap.format(241, 243)]
    loaded.clear()
    monkeypatch.setattr(stream, "plan", lambda *a, **k: None)  # every file in one load
    once = run("validate", tmp_path / "logs")
    assert loaded == [["a.parquet", "b.csv", "c.jsonl"]]
    assert (batched.exit_code, batched.output) == (once.exit_code, once.output)
    assert batched.exit_code == 1


def test_validate_of_lawful_files_in_batches_finds_nothing(tmp_path, monkeypatch, loaded):
    night = generate(2, 30, seed=62).table
    ids = night.column("table_id")
    write_log(night.filter(pc.equal(ids, "T01")), tmp_path / "logs" / "a.parquet")
    write_log(night.filter(pc.equal(ids, "T02")), tmp_path / "logs" / "b.csv")
    batches_always(monkeypatch)
    res = run("validate", tmp_path / "logs")
    assert sorted(loaded) == [["a.parquet"], ["b.csv"]]
    assert res.exit_code == 0, res.output
    assert "2 file(s)" in res.output and "no problems" in res.output


def test_nightly_exports_are_validated_a_range_of_tables_at_a_time(tmp_path, monkeypatch,
                                                                   loaded):
    """A casino's nights (every file holding every table) are one group,
    read a range of tables at a time as `check` audits it
    (`auditor.run.by_table`): what one load says, said."""
    files = nightly_exports(tmp_path / "logs", tables=3, nights=3,
                            inject=("log.sequence_gap", "log.out_of_order"))
    append_broken_rows(files[1])
    batches_always(monkeypatch)
    ranged = run("validate", tmp_path / "logs")
    assert loaded == []  # (no batch loaded whole)
    monkeypatch.setattr(stream, "plan", lambda *a, **k: None)
    once = run("validate", tmp_path / "logs")
    assert loaded == [[f.name for f in files]]
    assert (ranged.exit_code, ranged.output) == (once.exit_code, once.output)
    assert ranged.exit_code == 1 and ranged.output.count("[log.sequence_gap]") == 3
    assert ranged.output.count("[log.malformed]") == 2


def test_validate_scratch_names_the_folder_a_group_is_sorted_out_in(tmp_path, monkeypatch):
    nightly_exports(tmp_path / "logs", tables=2, nights=3)
    batches_always(monkeypatch)
    (tmp_path / "scratch").mkdir()
    roots: list[str | None] = []
    real = scratch.make
    monkeypatch.setattr(scratch, "make",
                        lambda kind="", root=None: roots.append(root) or real(kind, root))
    res = run("validate", tmp_path / "logs", "--scratch", tmp_path / "scratch")
    assert res.exit_code in (0, 1), res.output
    assert roots == [str(tmp_path / "scratch")]
    assert list((tmp_path / "scratch").iterdir()) == []  # (removed once judged)
