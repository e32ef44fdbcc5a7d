"""Read a JSON Lines log: Arrow's reader when every line is a plain object
and each column keeps one type, else line by line, every line that is not a
JSON object rejected with its line and why."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

from auditor.logs.raw import RawRejected, clip
from auditor.logs.schema import COLUMN_NAMES

MAX_FAST_JSON_BRACKETS = 256


def read_jsonl(path: Path, data: bytes):
    """Fast path: pyarrow's reader when every line is a plain object and each
    column keeps one type. Otherwise a line-by-line read that locates and keeps
    every bad line."""
    text_lines = data.split(b"\n")
    # Arrow's reader takes time quadratic in the nesting of lists (5,000 nested
    # lists in one 10 kB line: seconds): a log has no lists, so many brackets
    # send the file down the line-by-line path, which bounds nesting.
    simple = b"\n\n" not in data and not data.startswith(b"\n") and b"\r" not in data \
        and data.count(b"[") <= MAX_FAST_JSON_BRACKETS
    if simple:
        try:
            table = pa_json.read_json(io.BytesIO(data))
            if table.num_rows == sum(1 for ln in text_lines if ln):
                table = _stringify_nested(table)
                return table, np.arange(1, table.num_rows + 1, dtype=np.int64), RawRejected()
        except (pa.ArrowInvalid, RecursionError, UnicodeDecodeError):  # (a key not UTF-8)
            # the line-by-line read locates the line
            pass
    return _read_jsonl_slow(path, text_lines)


def _read_jsonl_slow(path: Path, text_lines: list[bytes]):
    rejected = RawRejected()
    rows: list[dict] = []
    lines: list[int] = []
    for number, raw in enumerate(text_lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            obj, reason = None, "the line is not UTF-8 text"
        except RecursionError:
            obj, reason = None, "not a JSON object: nested too deeply"
        except ValueError as exc:
            obj, reason = None, f"not a JSON object: {exc}"
        else:
            reason = "not a JSON object"
        if not isinstance(obj, dict):
            rejected.lines.append(number)
            rejected.texts.append(clip(raw.decode("utf-8", "backslashreplace")))
            rejected.reasons.append(reason)
            continue
        rows.append(obj)
        lines.append(number)
    names: list[str] = []
    seen: set[str] = set()
    for obj in rows:
        for key in obj:
            if key not in seen:
                seen.add(key)
                names.append(key)
    columns = {}
    for name in names:
        columns[name] = pa.array(
            [_json_cell(obj.get(name)) for obj in rows], type=pa.string()
        )
    table = pa.table(columns) if columns else pa.table({n: pa.array([], pa.string())
                                                        for n in COLUMN_NAMES})
    return table, np.asarray(lines, dtype=np.int64), rejected


def _json_cell(value) -> str | None:
    """A JSON value as the text a CSV cell would hold; coercion types it later."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True)
    except RecursionError:
        return "[nested too deeply]"


def _stringify_nested(table: pa.Table) -> pa.Table:
    """Nested JSON values cannot be log cells; keep them as JSON text."""
    cols = []
    for col in table.columns:
        if pa.types.is_struct(col.type) or pa.types.is_list(col.type):
            col = pa.array([None if v is None else json.dumps(v, sort_keys=True)
                            for v in col.to_pylist()], type=pa.string())
        elif pa.types.is_null(col.type):
            col = pa.nulls(len(col), pa.string())
        cols.append(col)
    return pa.table(cols, names=table.column_names)
