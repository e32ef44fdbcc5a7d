"""Small files typed and checked together (`load._typed_together`): what
`load_logs` gives for a batch must be what typing each file alone gives
(the frame, the quarantine, every file's provenance and marks), and a file
must never be judged by its neighbours' rows."""

from __future__ import annotations

import pandas as pd
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from builder import lawful_table, one_roll_table

from auditor.errors import LogFileError
from auditor.logs import load
from auditor.logs.load import load_logs
from auditor.logs.raw import ReadOptions
from auditor.logs.site import SITE_SEPARATOR


def _night(name: str, wrong_call: bool = False):
    return one_roll_table(name, wrong_call=wrong_call)


def _write(builder, path):
    csv_path = builder.write_csv(path.with_suffix(".csv"))
    if path.suffix == ".parquet":
        pq.write_table(pacsv.read_csv(csv_path), path)
        csv_path.unlink()
    return path


def _one_by_one(monkeypatch, paths, **kwargs):
    """`load_logs` with every file typed alone, as before batches."""
    with monkeypatch.context() as m:
        m.setattr(load, "_typed_together", lambda raws, options, site: None)
        return load_logs(paths, **kwargs)


def _coerce_calls(monkeypatch) -> list[int]:
    """The row count of each `coerce` call made from now on."""
    calls: list[int] = []
    real = load.coerce

    def counted(raw, *args, **kwargs):
        calls.append(raw.table.num_rows)
        return real(raw, *args, **kwargs)

    monkeypatch.setattr(load, "coerce", counted)
    return calls


def _assert_same(batched, alone):
    pd.testing.assert_frame_equal(batched.events, alone.events)
    pd.testing.assert_frame_equal(batched.quarantine, alone.quarantine)
    assert batched.inputs == alone.inputs
    for b, a in zip(batched.inputs, alone.inputs):  # (not compared by ==)
        assert b.marks == a.marks
        assert b.empty_columns == a.empty_columns


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_small_files_are_typed_in_one_call_and_as_each_alone(tmp_path, monkeypatch, suffix):
    paths = [_write(_night(f"T{k}", wrong_call=k == 2), tmp_path / f"night-{k}{suffix}")
             for k in range(1, 5)]
    alone = _one_by_one(monkeypatch, paths)
    calls = _coerce_calls(monkeypatch)
    batched = load_logs(paths)
    assert calls == [sum(len(f.rows) for f in [_night(f"T{k}") for k in range(1, 5)])]
    _assert_same(batched, alone)
    assert [f.path for f in batched.inputs] == [str(p) for p in paths]
    assert batched.events.groupby("source_file", observed=True)["table_id"].first() \
        .astype(str).to_dict() == {str(p): f"T{k}" for k, p in enumerate(paths, 1)}


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_row_set_aside_in_a_batch_is_its_own_file_s(tmp_path, monkeypatch, suffix):
    """A quarantined row names its own file and line, each file's counts
    and recorded events (a quarantined row's event too) are its own: as
    typed alone."""
    builders = [_night(f"T{k}") for k in range(1, 5)]
    builders[1].rows[3]["seat"] = 99  # (of a type a Parquet file keeps: one schema)
    builders[3].rows[0]["actor_role"] = "croupier"  # (its table_open: no other row's)
    builders[3].rows[5]["die1"] = 7
    paths = [_write(b, tmp_path / f"night-{k}{suffix}") for k, b in enumerate(builders, 1)]
    alone = _one_by_one(monkeypatch, paths)
    calls = _coerce_calls(monkeypatch)
    batched = load_logs(paths)
    assert calls == [sum(len(b.rows) for b in builders)]
    _assert_same(batched, alone)
    line = 5 if suffix == ".csv" else 4  # (a CSV's header is line 1; Parquet: row numbers)
    assert batched.quarantine[["source_file", "source_line"]].values.tolist() == \
        [[str(paths[1]), line], [str(paths[3]), line - 3], [str(paths[3]), line + 2]]
    assert [f.rows_quarantined for f in batched.inputs] == [0, 1, 0, 2]
    assert [f.rows_replayed for f in batched.inputs] == \
        [len(b.rows) - q for b, q in zip(builders, [0, 1, 0, 2])]


def test_a_file_of_a_batch_with_every_row_set_aside_for_one_reason_is_one_error(tmp_path):
    """As typed alone: the first file (in order) whose every row is set
    aside for one reason stops the load, named."""
    builders = [_night(f"T{k}") for k in range(1, 4)]
    for b in builders[1:]:
        for row in b.rows:
            row["seat"] = "x"
    paths = [_write(b, tmp_path / f"night-{k}.csv") for k, b in enumerate(builders, 1)]
    with pytest.raises(LogFileError) as caught:
        load_logs(paths)
    assert caught.value.path == str(paths[1]) and "every row" in str(caught.value)


def test_files_of_other_columns_or_sites_are_not_typed_with_the_batch(tmp_path, monkeypatch):
    """A Parquet file among CSV ones (other types), and a file of another
    site, each start a batch of their own."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    paths = [_write(_night("T1"), tmp_path / "a" / "n1.csv"),
             _write(_night("T2"), tmp_path / "a" / "n2.parquet"),
             _write(_night("T3"), tmp_path / "a" / "n3.csv"),
             _write(_night("T1"), tmp_path / "b" / "n1.csv"),
             _write(_night("T2"), tmp_path / "b" / "n2.csv")]
    sites = {str(p): p.parent.name for p in paths}
    alone = _one_by_one(monkeypatch, paths, sites=sites)
    calls = _coerce_calls(monkeypatch)
    batched = load_logs(paths, sites=sites)
    n = len(_night("T1").rows)
    assert calls == [n, n, n, 2 * n]  # (n1, n2 and n3 of a alone; b's two together)
    _assert_same(batched, alone)
    assert sorted(batched.events["table_id"].astype(str).unique()) == \
        [f"{site}{SITE_SEPARATOR}{t}" for site, t in
         [("a", "T1"), ("a", "T2"), ("a", "T3"), ("b", "T1"), ("b", "T2")]]


def test_an_earlier_file_of_a_batch_is_judged_before_an_unreadable_one(tmp_path):
    """Files read but not yet typed are typed before the error of the next
    file is raised: a file whose every row is set aside for one reason is
    named first, as when files were typed in turn."""
    bad = lawful_table()
    for row in bad.rows:
        row["ts"] = "2026-03-01 20:00:00"  # no UTC offset on any row
    first = bad.write_csv(tmp_path / "a.csv")
    (tmp_path / "b.csv").write_text("not,a,log\n1,2,3\n")
    with pytest.raises(LogFileError) as caught:
        load_logs([first, tmp_path / "b.csv"])
    assert str(first) in str(caught.value) and "ts has no UTC offset" in str(caught.value)


def test_a_batch_with_times_read_at_an_assumed_offset_is_typed_file_by_file(tmp_path,
                                                                             monkeypatch):
    """Which file's times were read at `--assume-offset` is each file's own
    (its provenance says so): such a batch is typed again a file at a time;
    one without a time to assume is typed once."""
    builders = [_night(f"T{k}") for k in range(1, 4)]
    for row in builders[1].rows:
        row["ts"] = row["ts"].replace("+00:00", "")  # (no offset in this file alone)
    paths = [_write(b, tmp_path / f"night-{k}.csv") for k, b in enumerate(builders, 1)]
    read = ReadOptions(assume_offset="+13:00")
    alone = _one_by_one(monkeypatch, paths, options=read)
    calls = _coerce_calls(monkeypatch)
    batched = load_logs(paths, options=read)
    rows = [len(b.rows) for b in builders]
    assert calls == [sum(rows), *rows]
    _assert_same(batched, alone)
    assert [f.assumed_offset for f in batched.inputs] == [None, "+13:00", None]
    calls.clear()
    load_logs([paths[0], paths[2]], options=read)
    assert calls == [rows[0] + rows[2]]


def test_a_file_with_a_row_the_reader_rejected_is_typed_alone(tmp_path, monkeypatch):
    """A row the parser could not split into cells is quarantined by its
    own file's typing: that file stays out of the batch, the others join."""
    paths = [_write(_night(f"T{k}"), tmp_path / f"night-{k}.csv") for k in range(1, 5)]
    with open(paths[2], "a", encoding="utf-8") as fh:
        fh.write("T3,99\n")  # (too few cells)
    alone = _one_by_one(monkeypatch, paths)
    calls = _coerce_calls(monkeypatch)
    batched = load_logs(paths)
    n = len(_night("T1").rows)
    assert calls == [2 * n, n, n]  # (the first two together, the third alone, then the last)
    _assert_same(batched, alone)
    assert [f.rows_quarantined for f in batched.inputs] == [0, 0, 1, 0]


def test_a_batch_ends_at_its_limits_of_files_and_rows(tmp_path, monkeypatch):
    """Up to JOIN_FILES files and TOGETHER_ROWS rows a batch; the next file
    starts another, and the frame is the same."""
    paths = [_write(_night(f"T{k}"), tmp_path / f"night-{k}.csv") for k in range(1, 6)]
    n = len(_night("T1").rows)
    alone = _one_by_one(monkeypatch, paths)
    calls = _coerce_calls(monkeypatch)
    monkeypatch.setattr(load, "JOIN_FILES", 2)
    _assert_same(load_logs(paths), alone)
    assert calls == [2 * n, 2 * n, n]
    calls.clear()
    monkeypatch.setattr(load, "JOIN_FILES", 256)
    monkeypatch.setattr(load, "TOGETHER_ROWS", 3 * n)
    _assert_same(load_logs(paths), alone)
    assert calls == [3 * n, 2 * n]
