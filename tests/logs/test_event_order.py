"""The events frame's row order and category codes when a batch of files
arrives as one chunk a file: what `order_events` gives must be what a
stable sort of the joined rows by (table, seq) gives, whether the files
are already in order (no reordering), meet out of order at a file's edge,
or hold nulls under a dictionary's codes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from auditor.logs.frame import _in_order, order_events


def _chunk(tables: list[str | None], seqs: list[int], players: list[str | None]) -> pa.Table:
    """One file's rows as the loader types them: text dictionary-encoded."""
    return pa.table({
        "table_id": pa.array(tables, pa.string()).dictionary_encode(),
        "seq": pa.array(seqs, pa.int64()),
        "player_id": pa.array(players, pa.string()).dictionary_encode(),
        "source_line": pa.array(np.arange(2, len(seqs) + 2), pa.int64()),
    })


def _expected(chunks: list[pa.Table]) -> pd.DataFrame:
    rows = pd.concat([c.to_pandas() for c in chunks], ignore_index=True)
    rows["table_id"] = rows["table_id"].astype(object)
    rows["player_id"] = rows["player_id"].astype(object)
    rows["source_order"] = np.arange(len(rows))
    return rows.sort_values(["table_id", "seq", "source_order"], kind="stable") \
        .reset_index(drop=True)


def _as_plain(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame[["table_id", "seq", "player_id", "source_line", "source_order"]].copy()
    out["table_id"] = out["table_id"].astype(object)
    out["player_id"] = out["player_id"].astype(object).where(out["player_id"].notna(), None)
    out["seq"] = out["seq"].astype("int64")
    out["source_line"] = out["source_line"].astype("int64")
    return out


@pytest.mark.parametrize("files,reordered", [
    # Two files, each a table in seq order, in table order: nothing moves.
    ([(["T1"] * 3, [1, 2, 3]), (["T2"] * 3, [1, 2, 3])], False),
    # One table across two files, its seq going on: nothing moves.
    ([(["T1"] * 3, [1, 2, 3]), (["T1"] * 2, [4, 5])], False),
    # The same seq on both sides of a file's edge: kept in input order.
    ([(["T1"] * 2, [1, 2]), (["T1"] * 2, [2, 3])], False),
    # The second file's table sorts first: out of order only at the edge.
    ([(["T2"] * 3, [1, 2, 3]), (["T1"] * 3, [1, 2, 3])], True),
    # The second file's first seq is below the first file's last.
    ([(["T1"] * 3, [1, 2, 5]), (["T1"] * 2, [4, 6])], True),
])
def test_rows_of_files_are_ordered_as_a_stable_sort_would(files, reordered):
    chunks = [_chunk(t, s, [f"P{q % 2}" for q in s]) for t, s in files]
    frame = order_events([pa.concat_tables(chunks)])
    expected = _expected(chunks)
    pd.testing.assert_frame_equal(_as_plain(frame), expected[_as_plain(frame).columns],
                                  check_dtype=False)
    assert (frame["source_order"].to_numpy() != np.arange(len(frame))).any() == reordered


def test_a_check_in_blocks_sees_a_break_between_blocks_and_between_chunks():
    codes = np.array([0, 0, 0, 1, 1, 1], dtype=np.int8)
    ranks = np.array([0, 1])
    in_order = pa.chunked_array([pa.array([1, 2, 3], pa.int64()), pa.array([1, 2, 3], pa.int64())])
    assert _in_order(ranks, codes, in_order, block=2)
    assert _in_order(ranks, codes, in_order, block=1)
    broken_in_a_chunk = pa.chunked_array([pa.array([1, 3, 2], pa.int64()),
                                          pa.array([1, 2, 3], pa.int64())])
    assert not _in_order(ranks, codes, broken_in_a_chunk, block=2)  # (between blocks)
    assert not _in_order(ranks, codes, broken_in_a_chunk, block=8)
    back = np.array([1, 1, 1, 0, 0, 0], dtype=np.int8)  # (the second chunk's table first)
    assert not _in_order(ranks, back, in_order, block=8)
    assert not _in_order(np.array([1, 0]), codes, in_order, block=8)  # (ranked the other way)


def test_codes_of_files_with_nulls_and_their_own_dictionaries_are_the_values_held():
    # The first file's dictionary starts the whole one (its codes taken as
    # they are, nulls among them); the second's lists values in another
    # order, one of them new, one never held by a row.
    first = _chunk(["T1"] * 4, [1, 2, 3, 4], ["P1", None, "P2", None])
    second_players = pa.DictionaryArray.from_arrays(
        pa.array([1, None, 0, 2], pa.int32()), pa.array(["P2", "P1", "P3", "P9"]))
    second = pa.table({"table_id": pa.array(["T1"] * 4).dictionary_encode(),
                       "seq": pa.array([5, 6, 7, 8], pa.int64()),
                       "player_id": second_players,
                       "source_line": pa.array([2, 3, 4, 5], pa.int64())})
    frame = order_events([first, second])
    players = frame["player_id"]
    assert list(players.cat.categories) == ["P1", "P2", "P3"]
    assert players.astype(object).where(players.notna(), None).tolist() == \
        ["P1", None, "P2", None, "P1", None, "P2", "P3"]
