"""Arrow arrays looked at through numpy without a copy (text offsets and
bytes, validity bits, fixed-width values, dictionary codes): reading and
typing a large log lean on these where an Arrow kernel would copy."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Rows worked on at a time where a whole column would be a large temporary.
BLOCK_ROWS = 1 << 20


def text_offsets_and_bytes(text: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """A (plain) text array's value offsets, one more than it has values, and
    its bytes (None when it has none), as numpy without a copy."""
    width = 8 if pa.types.is_large_string(text.type) else 4
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64 if width == 8 else np.int32,
                            count=len(text) + 1, offset=text.offset * width)
    data = text.buffers()[2]
    return offsets, None if data is None else np.frombuffer(data, dtype=np.uint8)


def dictionary_codes(col: pa.DictionaryArray) -> np.ndarray:
    """Each row's index into the dictionary of `col`, a null row as
    len(dictionary): `per_value_with_one_more[codes]` is then per row."""
    indices = col.indices
    if indices.null_count:
        indices = pc.fill_null(indices, len(col.dictionary))
    return indices.to_numpy(zero_copy_only=False)


def per_row(col, per_value, null_value) -> np.ndarray:
    """`per_value(text array) -> numpy array` worked out for each row of `col`
    (text, plain or dictionary-encoded, chunked or not): once per distinct
    value where the column is dictionary-encoded; `null_value` for a null row
    of a dictionary."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            values = np.append(per_value(chunk.dictionary), null_value)
            parts.append(values[dictionary_codes(chunk)])
        else:
            parts.append(per_value(chunk))
    if not parts:
        return np.zeros(0, dtype=np.asarray(null_value).dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def is_text_type(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
        or pa.types.is_large_binary(t)


def np_mask(arr) -> np.ndarray:
    """A boolean mask (numpy or Arrow, null meaning False) as numpy."""
    if isinstance(arr, np.ndarray):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        arr = flat(arr)
    if arr.null_count:
        arr = pc.fill_null(arr, False)
    return arr.to_numpy(zero_copy_only=False)


def flat(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks == 1:
            return col.chunk(0)
        return col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    return col


def valid_rows(arr: pa.Array) -> np.ndarray:
    """Per row: not null (the validity bitmap unpacked, no Arrow kernel)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.indices
    if arr.buffers()[0] is None:
        return np.full(len(arr), not arr.null_count)
    skip = arr.offset % 8  # (only the bytes of this slice's bits are unpacked)
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8, count=(skip + len(arr) + 7) // 8,
                         offset=arr.offset // 8)
    return np.unpackbits(bits, count=skip + len(arr), bitorder="little")[skip:].view(bool)


def raw_values(arr: pa.Array, dtype=None) -> np.ndarray:
    """A fixed-width array's values as numpy over its own buffer, without a
    copy (a null row's value is whatever the buffer holds); `dtype` reads the
    bits as another type of the same width."""
    dtype = np.dtype(dtype or arr.type.to_pandas_dtype())
    buf = arr.buffers()[1]
    if buf is None or not len(arr):
        return np.zeros(len(arr), dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def category_codes(column) -> np.ndarray:
    """A pandas categorical column's codes as stored (-1: missing), read
    only and not copied: `.cat.codes` copies every code into a new Series."""
    return np.asarray(column.array.codes)


def code_counts(codes: np.ndarray, k: int, block: int = 1 << 20) -> np.ndarray:
    """How many of `codes` are each of 0 .. k-1 (a negative code, missing, is
    not counted), a block at a time: numpy's bincount widens narrow codes to
    64 bits first, for 10M int8 codes a 76 MB temporary faulted in afresh."""
    counts = np.zeros(k, dtype=np.int64)
    for a in range(0, len(codes), block):
        part = codes[a:a + block]
        counts += np.bincount(part[part >= 0], minlength=k)
    return counts


def where_valid(values: np.ndarray, valid: np.ndarray, other: int,
                out: np.ndarray | None = None) -> np.ndarray:
    """`values` where `valid`, else `other`, into `out` (a new array when not
    given; `values` itself may be given). Worked out as (values - other) *
    valid + other: with nulls scattered among the rows, a masked write
    (np.where, np.copyto) costs several times more."""
    out = np.subtract(values, other, out=out, dtype=values.dtype)
    out *= valid
    out += other
    return out
