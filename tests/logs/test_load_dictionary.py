"""Loading through dictionaries: text read dictionary-encoded (Parquet's own
dictionary pages, CSV columns read as dictionaries) and checked once per
distinct value must type exactly the events and quarantine exactly the rows
that reading every cell as plain text does. And `load_logs(on_file=...)`
reports each file as soon as it is typed."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import lawful_table

from auditor.logs import frame as frame_module
from auditor.logs import load as load_module
from auditor.logs import read as read_module
from auditor.logs.load import InputFile, load_logs
from auditor.logs.schema import COLUMN_KINDS, COLUMN_NAMES


def _rows() -> list[dict]:
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    b.play(2, 6, 5)
    return [{k: r.get(k) for k in COLUMN_NAMES} for r in b.rows]


def _text_table(rows: list[dict]) -> pa.Table:
    """Every cell as text (None when not recorded), as a CSV holds them."""
    return pa.table({c: pa.array([None if r[c] is None else str(r[c]) for r in rows],
                                 pa.string()) for c in COLUMN_NAMES})


def _same_events(a: pd.DataFrame, b: pd.DataFrame, skip=("source_file",)) -> None:
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        if c in skip:
            continue
        assert a[c].dtype == b[c].dtype, c
        if isinstance(a[c].dtype, pd.CategoricalDtype):
            assert list(a[c].cat.categories) == list(b[c].cat.categories), c
            assert np.array_equal(a[c].cat.codes, b[c].cat.codes), c
        else:
            pd.testing.assert_series_equal(a[c], b[c], check_exact=True)


def _same_quarantine(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = ["source_line", "table_id", "seq", "event", "reason", "raw"]
    pd.testing.assert_frame_equal(a[cols], b[cols], check_exact=True)


def _mess(rows: list[dict]) -> list[dict]:
    """Cells a recorder gets wrong: padding, empty text, unknown words, bad
    numbers, spaces in a dice list; some rows keep their value."""
    rows = [dict(r) for r in rows]
    for i, r in enumerate(rows):
        if i % 7 == 1 and r["actor_role"]:
            r["actor_role"] = f"  {r['actor_role']} "
        if i % 11 == 2:
            r["bet"] = "Pass" if r["bet"] else ""
        if i % 13 == 3 and r["dice"]:
            r["dice"] = r["dice"].replace(",", ", ")
        if i % 17 == 4:
            r["event"] = "tea_break"
        if i % 19 == 5:
            r["seat"] = "seven"
        if i % 23 == 6:
            r["flags"] = "one_hand, sideways"
        if i % 29 == 7:
            r["outcome"] = " "
    return rows


@pytest.mark.parametrize("dictionary", [False, True])
def test_parquet_text_as_dictionaries_types_like_plain_text(tmp_path, dictionary):
    rows = _mess(_rows())
    plain = _text_table(rows)
    pq.write_table(plain, tmp_path / "plain.parquet", use_dictionary=False)
    table = plain
    if dictionary:  # stored as categoricals, several row groups (a dictionary each)
        table = pa.table({c: plain.column(c).dictionary_encode() for c in COLUMN_NAMES})
    pq.write_table(table, tmp_path / "dict.parquet", row_group_size=17)
    want = load_logs([tmp_path / "plain.parquet"])
    got = load_logs([tmp_path / "dict.parquet"])
    assert 0 < want.rows_quarantined < want.rows_read
    _same_events(want.events, got.events)
    _same_quarantine(want.quarantine, got.quarantine)


def test_csv_read_as_dictionaries_types_like_parquet_text(tmp_path, monkeypatch):
    rows = _mess(_rows())
    with open(tmp_path / "log.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMN_NAMES)
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in COLUMN_NAMES])
    pq.write_table(_text_table(rows), tmp_path / "log.parquet")
    want = load_logs([tmp_path / "log.parquet"])
    got = load_logs([tmp_path / "log.csv"])
    lines = ("source_file", "source_line")  # CSV lines: the header is line 1
    _same_events(want.events, got.events, skip=lines)
    assert got.quarantine["source_line"].tolist() == \
        [n + 1 for n in want.quarantine["source_line"]]  # the header is line 1
    assert got.quarantine["reason"].tolist() == want.quarantine["reason"].tolist()
    # Small slices: each with its own dictionaries, joined in the end.
    monkeypatch.setattr(load_module, "SLICE_ROWS", 10)
    _same_events(want.events, load_logs([tmp_path / "log.csv"]).events, skip=lines)


def test_categories_are_the_values_kept_in_first_seen_order(tmp_path):
    rows = _rows()
    rows[3]["actor_id"] = "ONLY-ON-A-BAD-ROW"
    rows[3]["event"] = "tea_break"  # quarantined: its actor_id is in no event
    t = _text_table(rows)
    t = t.set_column(t.column_names.index("actor_id"), "actor_id",
                     pa.array(["ZZZ-unused", *t.column("actor_id").to_pylist()])
                     .dictionary_encode().slice(1))  # a dictionary value no row holds
    pq.write_table(t, tmp_path / "a.parquet")
    events = load_logs([tmp_path / "a.parquet"]).events
    seen = list(dict.fromkeys(v for v in events.sort_values("source_order")["actor_id"]
                              if isinstance(v, str)))
    assert list(events["actor_id"].cat.categories) == seen
    assert "ONLY-ON-A-BAD-ROW" not in seen and "ZZZ-unused" not in seen


def test_a_lone_file_with_every_row_quarantined_loads_no_events(tmp_path):
    rows = _rows()
    pq.write_table(_text_table(rows), tmp_path / "good.parquet")
    # (two reasons: a file whose every row has one same reason stops the run)
    pq.write_table(_text_table([dict(r, event="tea_break" if i else "coffee_break")
                                for i, r in enumerate(rows[:3])]), tmp_path / "bad.parquet")
    good = load_logs([tmp_path / "good.parquet"]).events
    logs = load_logs([tmp_path / "bad.parquet"])
    assert logs.events.empty and logs.rows_quarantined == 3
    assert list(logs.events.columns) == list(good.columns)
    assert [str(t) for t in logs.events.dtypes] == [str(t) for t in good.dtypes]


def test_a_bad_dictionary_value_quarantines_every_row_holding_it(tmp_path):
    rows = _rows()
    names = [("P\xff" if i % 5 == 0 else (r["player_id"] or "")).encode("latin-1")
             if r["player_id"] or i % 5 == 0 else None for i, r in enumerate(rows)]
    t = _text_table(rows)
    t = t.set_column(t.column_names.index("player_id"), "player_id",
                     pa.array(names, pa.binary()))
    pq.write_table(t, tmp_path / "log.parquet")
    logs = load_logs([tmp_path / "log.parquet"])
    bad = [i + 1 for i in range(len(rows)) if i % 5 == 0]
    assert logs.quarantine["source_line"].tolist() == bad
    assert set(logs.quarantine["reason"]) == {"player_id is not UTF-8 text"}
    assert '"player_id": "P\\\\xff"' in logs.quarantine["raw"].iloc[0]


def test_on_file_reports_each_file_once_in_order_as_it_is_typed(tmp_path, monkeypatch):
    rows = _rows()
    pq.write_table(_text_table(rows), tmp_path / "1-clean.parquet")
    bad = [dict(r) for r in rows[:10]]
    bad[4]["seat"] = "0"
    with open(tmp_path / "2-bad.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMN_NAMES)
        for r in bad:
            w.writerow(["" if r[c] is None else r[c] for c in COLUMN_NAMES])
        fh.write("T1,99\n")  # a row with too few cells
    calls: list = []
    read = read_module.read_log

    def spy_read(path, *options):
        calls.append(("read", path.name))
        return read(path, *options)

    monkeypatch.setattr(load_module, "read_log", spy_read)
    logs = load_logs([tmp_path], on_file=lambda f: calls.append(("typed", f)))
    typed = [c[1] for c in calls if c[0] == "typed"]
    # (the small clean file is held for a batch of small files, which the
    # next, not one to type with others, closes: `load._typed_together`)
    assert [c[0] for c in calls] == ["read", "read", "typed", "typed"]
    assert all(isinstance(f, InputFile) for f in typed)
    assert typed == logs.inputs
    first, second = typed
    assert first.path.endswith("1-clean.parquet") and first.format == "parquet"
    assert (first.rows_read, first.rows_replayed, first.rows_quarantined) == \
        (len(rows), len(rows), 0)
    assert second.path.endswith("2-bad.csv") and second.format == "csv"
    assert (second.rows_read, second.rows_replayed, second.rows_quarantined) == (11, 9, 2)
    # Without the callback, nothing changes.
    assert load_logs([tmp_path]).inputs == logs.inputs


def test_every_text_column_comes_out_categorical_or_object():
    kinds = {c for c, k in COLUMN_KINDS.items() if k == "str"}
    assert kinds <= set(frame_module.CATEGORICAL)


def test_the_decoded_size_is_bounded_from_above_at_every_cap():
    """The cap on what a Parquet file's columns decode to is held with the
    coarsest bound that fits (a dictionary's own bytes for its longest
    value), then the longest value, then every row's: each step's answer
    is at least what the rows decode to, so none lets a bomb through; and
    one at or under the cap is given back as soon as a step finds it."""
    from auditor.logs.parquet_format import CELL_OVERHEAD, decoded_bytes

    values = pa.array(["a", "bb" * 50, "c" * 1000])
    table = pa.table({"d": pa.DictionaryArray.from_arrays(pa.array([0, 0, 0, 1, 2, 0]), values),
                      "n": pa.array([1, 2, 3, 4, 5, 6], pa.int64())})
    exact = 48 + 6 * CELL_OVERHEAD + (1 + 1 + 1 + 100 + 1000 + 1)
    longest = 48 + 6 * CELL_OVERHEAD + 6 * 1000
    coarse = 48 + 6 * CELL_OVERHEAD + 6 * values.nbytes
    assert exact < longest < coarse
    assert decoded_bytes(table, cap=coarse) == coarse
    assert decoded_bytes(table, cap=coarse - 1) == longest
    assert decoded_bytes(table, cap=longest - 1) == exact
    assert decoded_bytes(table, cap=0) == exact
