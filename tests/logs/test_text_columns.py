"""A text column read as Parquet reads it (one dictionary): a small
dictionary of plainly clean values is taken as it is without Arrow's
trimming and encoding (`coerce._plainly_clean`); every other one goes
through them. Either way the column is the one Arrow's path gives."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from auditor.logs import coerce


def _column(values: list[str | None], indices: list[int | None]) -> pa.ChunkedArray:
    return pa.chunked_array([pa.DictionaryArray.from_arrays(
        pa.array(indices, pa.int32()), pa.array(values, pa.string()))])


def _as_seen(text: coerce.TextColumn) -> tuple:
    return text.values.to_pylist(), text.codes.tolist(), text.null.tolist(), text.null_count


CASES = {
    "clean": (["T01", "roll", "dice_to_bowl", "A-1,B-2"], [0, 1, None, 2, 3, 1], True),
    "empty dictionary": ([], [None, None], True),
    "a leading space": ([" T01", "T02"], [0, 1, 0], False),
    "a trailing space": (["T01 ", "T01"], [0, 1, None], False),
    "an empty value": (["", "T02"], [0, 1], False),
    "a tab inside": (["T\t01", "T02"], [0, 1], False),
    "a null value": ([None, "T02"], [0, 1, 1], False),
    "repeated": (["T01", "T01"], [0, 1, 0], False),
    "not ASCII": (["T\u00a001", "\u00a0T02", "T03"], [0, 1, 2], False),
    "too many": ([f"P{i}" for i in range(coerce.PLAIN_DICTIONARY + 1)],
                 list(range(coerce.PLAIN_DICTIONARY + 1)), False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_dictionary_is_typed_as_arrows_trimming_and_encoding_type_it(name, monkeypatch):
    values, indices, plain = CASES[name]
    col = _column(values, indices)
    assert coerce._plainly_clean(col.chunk(0).dictionary) is plain
    fast = coerce._text(col, len(indices))
    monkeypatch.setattr(coerce, "_plainly_clean", lambda values: False)
    slow = coerce._text(col, len(indices))
    assert _as_seen(fast) == _as_seen(slow)
    assert isinstance(fast.codes, np.ndarray)


def test_a_clean_dictionary_is_not_trimmed_nor_encoded_again(monkeypatch):
    calls = []
    monkeypatch.setattr(coerce, "_cleaned", lambda values: calls.append(values) or values)
    text = coerce._text(_column(["T01", "T02"], [1, 0, None]), 3)
    assert calls == []
    assert _as_seen(text) == (["T01", "T02"], [1, 0, 2], [False, False, True], 1)
    coerce._text(_column(["T01 ", "T02"], [1, 0]), 2)
    assert len(calls) == 1
