"""Write an event-log table as CSV, JSON Lines or Parquet, gzip'd or not.

The format follows the file name: `.csv`, `.jsonl` / `.ndjson`, `.parquet`,
each optionally followed by `.gz`. Why these choices:

- CSV and JSON Lines are encoded column-wise with Arrow compute functions
  and written as raw bytes: fast on millions of rows, and byte-identical for
  the same table on every run. CSV quotes a cell only when it must (like the
  spec's worked fragment); nulls are empty cells. JSON Lines omits null
  fields. Timestamps are ISO-8601 UTC with a `+00:00` offset, whole seconds
  when every value is, microseconds otherwise.
- gzip streams carry no file name and mtime 0, so they are deterministic too.
- The file appears atomically (`auditor.atomic`): written to a temporary
  file in the same folder, then renamed over the target, so a reader never
  sees half a log.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auditor.atomic import atomic_open

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
CHUNK_ROWS = 1 << 18  # rows encoded at a time: bounds memory and string offsets


def log_format(path: str | os.PathLike) -> tuple[str, bool]:
    """(format, gzip'd) from the file name; ValueError for an unknown suffix."""
    name = Path(path).name.lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    for suffix, fmt in FORMATS.items():
        if name.endswith(suffix):
            return fmt, gz
    raise ValueError(f"cannot tell the log format of {str(path)!r}: the name must end in "
                     f"{', '.join(FORMATS)} (optionally followed by .gz)")


def write_log(table: pa.Table, path: str | os.PathLike) -> None:
    """Write `table` to `path` in the format its suffix names, atomically."""
    fmt, gz = log_format(path)
    write = {"csv": _write_csv, "jsonl": _write_jsonl, "parquet": _write_parquet}[fmt]
    with atomic_open(Path(path)) as raw:
        if gz:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                               compresslevel=6) as out:
                write(table, out)
        else:
            write(table, raw)


# --- shared encoders -----------------------------------------------------

_CLOCK: pa.Array | None = None


def _clock() -> pa.Array:
    """"THH:MM:SS" for every second of a day, built once: formatting
    millions of timestamps becomes two array lookups instead of strftime."""
    global _CLOCK
    if _CLOCK is None:
        _CLOCK = pa.array([f"T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
                           for s in range(86400)], pa.string())
    return _CLOCK


def iso_timestamps(arr: pa.Array) -> pa.Array:
    """ISO-8601 strings with a `+00:00` offset for a timestamp array (naive
    timestamps are taken as UTC): whole seconds when every value is,
    microseconds otherwise."""
    us = arr.cast(pa.timestamp(arr.type.unit)).cast(pa.timestamp("us")).cast(pa.int64())
    values = us.fill_null(0).to_numpy(zero_copy_only=False)
    secs = values // 1_000_000
    day = secs // 86400
    first = int(day.min()) if len(day) else 0
    days = np.arange(first, (int(day.max()) if len(day) else 0) + 1)
    if len(days) > len(day):  # sparse days: format only the ones present
        days, day_index = np.unique(day, return_inverse=True)
    else:
        day_index = day - first
    dates = pa.array(np.datetime_as_string(days.astype("datetime64[D]")).astype(object),
                     pa.string())
    parts = [dates.take(pa.array(day_index.reshape(-1))), _clock().take(pa.array(secs % 86400))]
    frac = values % 1_000_000
    if frac.any():
        digits = pc.utf8_lpad(pc.cast(pa.array(frac), pa.string()), 6, "0")
        parts.append(pc.binary_join_element_wise(".", digits, ""))
    text = pc.binary_join_element_wise(*parts, "+00:00", "")
    if us.null_count:
        text = pc.if_else(us.is_null(), pa.scalar(None, pa.string()), text)
    return text


def _text(arr: pa.Array) -> tuple[pa.Array, bool]:
    """(text of each value, whether the value is a JSON/CSV string)."""
    t = arr.type
    if pa.types.is_timestamp(t):
        return iso_timestamps(arr), True
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return pc.cast(arr, pa.string()), False
    if pa.types.is_floating(t):
        finite = pc.is_finite(arr)
        return pc.if_else(finite, pc.cast(arr, pa.string()), pa.scalar(None, pa.string())), False
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = pc.cast(arr, pa.string())
    return arr, True


def _string_bytes(arr: pa.Array) -> memoryview | bytes:
    """The concatenated bytes of a string array without nulls, uncopied."""
    if len(arr) == 0:
        return b""
    wide = pa.types.is_large_string(arr.type)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64 if wide else np.int32)
    start, end = int(offsets[arr.offset]), int(offsets[arr.offset + len(arr)])
    return memoryview(arr.buffers()[2])[start:end] if end > start else b""


def _chunks(table: pa.Table):
    for start in range(0, table.num_rows, CHUNK_ROWS):
        yield table.slice(start, CHUNK_ROWS).combine_chunks()


def _column(batch: pa.Table, i: int) -> pa.Array:
    col = batch.column(i)
    return col.chunk(0) if col.num_chunks == 1 else pa.concat_arrays(col.chunks)


# --- CSV -------------------------------------------------------------------

def _csv_quote(arr: pa.Array) -> pa.Array:
    """Quote the cells that hold a comma, a quote or a line break."""
    needs = pc.match_substring_regex(arr, '[",\r\n]')
    if not pc.any(needs).as_py():
        return arr
    quoted = pc.binary_join_element_wise('"', pc.replace_substring(arr, '"', '""'), '"', "")
    return pc.if_else(needs, quoted, arr)


def _write_csv(table: pa.Table, out: BinaryIO) -> None:
    header = pa.array(table.column_names, pa.string())
    out.write(",".join(_csv_quote(header).to_pylist()).encode() + b"\n")
    if table.num_columns == 0:
        return
    for batch in _chunks(table):
        cells = []
        for i in range(batch.num_columns):
            text, is_str = _text(_column(batch, i))
            cells.append(_csv_quote(text) if is_str else text)
        lines = pc.binary_join_element_wise(*cells, ",", null_handling="replace",
                                            null_replacement="")
        out.write(_string_bytes(pc.binary_join_element_wise(lines, "\n", "")))


# --- JSON Lines --------------------------------------------------------------

def _json_escape(arr: pa.Array) -> pa.Array:
    """JSON string escapes: backslash and quote cheaply; control characters
    (rare) through the json module."""
    if pc.any(pc.match_substring_regex(arr, "[\\x00-\\x1f]")).as_py():
        return pa.array([None if v is None else json.dumps(v, ensure_ascii=False)[1:-1]
                         for v in arr.to_pylist()], pa.string())
    return pc.replace_substring(pc.replace_substring(arr, "\\", "\\\\"), '"', '\\"')


def _write_jsonl(table: pa.Table, out: BinaryIO) -> None:
    for batch in _chunks(table):
        fields = []
        for i, name in enumerate(batch.column_names):
            text, is_str = _text(_column(batch, i))
            key = json.dumps(name) + ":"
            if is_str:
                fields.append(pc.binary_join_element_wise(key + '"', _json_escape(text), '"', ""))
            else:
                fields.append(pc.binary_join_element_wise(key, text, ""))
        body = (pc.binary_join_element_wise(*fields, ",", null_handling="skip") if fields
                else pa.array([""] * batch.num_rows))
        lines = pc.binary_join_element_wise("{", pc.fill_null(body, ""), "}\n", "")
        out.write(_string_bytes(lines))


# --- Parquet -----------------------------------------------------------------

def _write_parquet(table: pa.Table, out: BinaryIO) -> None:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    out.write(sink.getvalue().to_pybytes())
