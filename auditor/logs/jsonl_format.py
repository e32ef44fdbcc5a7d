"""Read a JSON Lines log: Arrow's reader when every line is a plain object
and each column keeps one type, else line by line, every line that is not a
JSON object rejected with its line and why."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from auditor.errors import ControlSignal, LogFileError
from auditor.logs.raw import (
    SCAN_BLOCK_BYTES,
    RawRejected,
    clip,
    line_blocks,
    too_many_columns,
)
from auditor.logs.schema import COLUMN_NAMES

#: Nesting deeper than this quarantines the JSON line. A log cell holds no
#: nested value at all; this bounds what Arrow's reader (which crashes the
#: process on 20,000 nested objects) and Python's recursive json are given.
MAX_JSON_DEPTH = 512

#: A file whose brackets, besides the `{` opening each line, number more than
#: this is read line by line, each line's depth checked first. Arrow's reader
#: then never sees nesting deeper than this + 1 (and its time, quadratic in the
#: nesting of lists, stays small).
MAX_FAST_JSON_BRACKETS = 256

#: More colons than this per line on average (a line of the spec's columns
#: has about 20) sends a file to the line-by-line read, which counts the
#: columns as it goes (Arrow's reader would build every column first).
FAST_JSON_COLONS = 64


def read_jsonl(path: Path, data: bytes, first_line: int = 1):
    """Fast path: pyarrow's reader when every line is a plain object and each
    column keeps one type. Otherwise a line-by-line read that locates and keeps
    every bad line: of the whole of `data` up to `BLOCK_BYTES`, else of each
    block of its lines that Arrow's reader cannot take (`_read_in_blocks`).
    `first_line`: the number of the first line of `data` in its file (a
    piece of a split file: `auditor.run.pieces`)."""
    fast = _read_fast(data, first_line)
    if fast is not None:
        return fast
    if len(data) <= BLOCK_BYTES:
        return _read_jsonl_slow(path, data.split(b"\n"), first_line)
    return _read_in_blocks(path, data, first_line)


def _read_fast(data: bytes, first_line: int):
    """Arrow's read of `data` (table, line numbers, nothing rejected), or
    None where a line is not a plain object or a column not of one type."""
    numbers = _object_lines(data)
    filled = 0 if numbers is None else len(numbers)
    simple = filled > 0 and _few_brackets(data, filled) \
        and data.count(b":") <= filled * FAST_JSON_COLONS
    if simple:
        try:
            table = _read_as_text_times(data)
            table = _as_lines_write_them(table) if table.num_rows == filled else None
            if table is not None:
                return table, numbers + first_line, RawRejected()
        except (pa.ArrowInvalid, RecursionError, UnicodeDecodeError):  # (a key not UTF-8)
            # the line-by-line read locates the line
            pass
    return None


#: A file (or piece) larger than this that Arrow's reader cannot take whole
#: is read a block of whole lines of about this size at a time, each by
#: Arrow where it can be and line by line where not: one bad line among
#: 1.9M (327 MB) sent every line through Python, 6.5 -> 40 s and 1.2 -> 4.0
#: GB.
BLOCK_BYTES = SCAN_BLOCK_BYTES


def _read_in_blocks(path: Path, data: bytes, first_line: int):
    """`read_jsonl` of `data` a block of whole lines at a time, the blocks'
    reads joined (`_joined_reads`): the rows, cells, line numbers and
    rejected lines of one line-by-line read of it."""
    parts, line = [], first_line
    for start, end in line_blocks(data, BLOCK_BYTES):
        block = data[start:end]
        parts.append(_read_fast(block, line)
                     or _read_jsonl_slow(path, block.split(b"\n"), line))
        line += block.count(b"\n")
    return _joined_reads(path, parts)


def _joined_reads(path: Path, parts: list):
    """The reads of consecutive blocks of a file as one read: the columns in
    the order their keys first appear, a column of one type in every block
    kept as it is, any other as its text (an int64 block's numbers as the
    line-by-line read writes them); the rejected rows and cell problems
    renumbered on."""
    kept = [bool(table.num_rows) for table, _, _ in parts]
    kept[0] = kept[0] or not any(kept)  # (no row at all: the one read of no row)
    filled = [p for p, keep in zip(parts, kept) if keep]
    names = list(dict.fromkeys(n for table, _, _ in filled for n in table.column_names))
    if (problem := too_many_columns(len(names))) is not None:
        raise LogFileError(path, f"the lines name {problem}")
    types: dict[str, set] = {}
    for table, _, _ in filled:
        for field in table.schema:
            types.setdefault(field.name, set()).add(field.type)
    common = {n: next(iter(t)) if len(t) == 1 else pa.string() for n, t in types.items()}
    tables, rejected, rows = [], RawRejected(), 0
    for (table, _, taken), keep in zip(parts, kept):
        if keep:
            tables.append(pa.table(
                [table.column(n).cast(common[n]) if n in table.column_names
                 else pa.nulls(table.num_rows, common[n]) for n in names], names=names))
        rejected.lines += taken.lines
        rejected.texts += taken.texts
        rejected.reasons += taken.reasons
        rejected.cell_problems.update({rows + k: v for k, v in taken.cell_problems.items()})
        rows += table.num_rows
    return (pa.concat_tables(tables), np.concatenate([n for _, n, _ in parts]), rejected)


def _read_as_text_times(data: bytes) -> pa.Table:
    """Arrow's read of the file, every value its reader would type as a time
    kept as the text the line holds. Arrow's reader makes a time of text
    that looks like one: it turns `-05:00` into UTC and drops the offset (the
    offset dates a table's gaming day), and takes a time written without
    one as UTC, where the spec requires an offset (a CSV file's such row is
    quarantined; `--assume-offset` would shift an offset already written).
    `ts` is read as text from the start; a file where another column would
    be typed as a time (an extra column) is read once more, those columns
    as text too. The columns keep the order Arrow gives them unasked (the
    order keys first appear, which the report records)."""
    first = _first_keys(data)
    asked = ["ts"] if "ts" in first else []
    table = _read_with_text(data, asked)
    if not asked:
        order = table.column_names
    else:  # (Arrow puts columns asked for first)
        order = [k for k in first if k in table.column_names] \
            + [c for c in table.column_names if c not in first]
    times = [c for c, t in zip(table.column_names, table.schema.types)
             if pa.types.is_temporal(t)]
    if times:
        table = _read_with_text(data, asked + [c for c in times if c not in asked])
    return table.select(order) if table.column_names != order else table


def _read_with_text(data: bytes, text: list[str]) -> pa.Table:
    """Arrow's read of the file, the columns named in `text` as text."""
    explicit = pa.schema([(name, pa.string()) for name in text]) if text else None
    return pa_json.read_json(io.BytesIO(data),
                             parse_options=pa_json.ParseOptions(explicit_schema=explicit))


_NOT_BLANK = re.compile(rb"\S")


def _first_keys(data: bytes) -> list[str]:
    """The keys of the file's first line that is not blank, in their order
    (none when it is not a JSON object: Arrow's reader then refuses the
    file)."""
    found = _NOT_BLANK.search(data)  # (not `lstrip`: no copy of the file)
    begin = found.start() if found else len(data)
    end = data.find(b"\n", begin)
    try:
        first = json.loads(data[begin:end] if end >= 0 else data[begin:])
    except (ValueError, RecursionError):
        return []
    return list(first) if isinstance(first, dict) else []


#: Bytes looked at a block at a time for line breaks (a boolean a byte is
#: made for a block, not for the whole file).
SCAN_BYTES = SCAN_BLOCK_BYTES


def _object_lines(data: bytes) -> np.ndarray | None:
    """The numbers (the first line 0) of the lines of `data` that start with
    `{`, when every other line is blank (white space only, which both reads
    pass over: a file ending in an extra line break, a blank line between
    tables); None when a line is neither, or none is an object. (The last
    line, after a final line break, is no line.) Found with numpy a block
    at a time: splitting the file into a Python object a line cost a third
    of a second and 400 MB at two million lines, only to be counted."""
    raw = np.frombuffer(data, dtype=np.uint8)
    found = []
    before = 0  # (the line breaks before the block)
    for a in range(0, len(raw), SCAN_BYTES):
        starts = np.flatnonzero(raw[a:a + SCAN_BYTES] == ord("\n")) + (a + 1)
        numbers = np.arange(before + 1, before + 1 + len(starts), dtype=np.int64)
        before += len(starts)
        if a == 0:  # (the first line starts the file)
            starts, numbers = np.r_[0, starts], np.r_[0, numbers]
        if len(starts) and starts[-1] == len(raw):  # the break that ends the file
            starts, numbers = starts[:-1], numbers[:-1]
        objects = raw[starts] == ord("{")
        if not objects.all():
            others = starts[~objects]
            # (the common blank lines, LF and CR LF, seen at once; others one by one)
            after = raw[np.minimum(others + 1, len(raw) - 1)]
            empty = (raw[others] == ord("\n")) \
                | (raw[others] == ord("\r")) & (after == ord("\n")) & (others + 1 < len(raw))
            if not all(_blank(data, int(at)) for at in others[~empty]):
                return None
        found.append(numbers[objects])
    numbers = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    return numbers if len(numbers) else None


def _blank(data: bytes, at: int) -> bool:
    """Whether the line starting at byte `at` holds only white space (as the
    line-by-line read judges it: `bytes.strip`)."""
    end = data.find(b"\n", at)
    return not data[at:end if end >= 0 else len(data)].strip()


def _few_brackets(data: bytes, lines: int) -> bool:
    """The file has at most MAX_FAST_JSON_BRACKETS opening brackets besides
    the `{` opening each of its `lines`: so no line nests deeper than that,
    whatever its strings hold. Counted, not parsed."""
    return data.count(b"[") + data.count(b"{") - lines <= MAX_FAST_JSON_BRACKETS


def too_deep(line: bytes) -> bool:
    """Whether the brackets of one JSON line nest deeper than MAX_JSON_DEPTH,
    brackets inside strings not counted. Vectorised and linear: a megabyte of
    brackets takes milliseconds, where a parser would recurse."""
    if line.count(b"{") + line.count(b"[") <= MAX_JSON_DEPTH:
        return False
    b = np.frombuffer(line, dtype=np.uint8)
    at = np.arange(len(b))
    # A quote ends or opens a string unless an odd run of backslashes precedes it.
    last_plain = np.maximum.accumulate(np.where(b != ord("\\"), at, -1))
    quotes = np.flatnonzero(b == ord('"'))
    before = quotes - 1
    escapes = np.where(before >= 0, before - last_plain[np.maximum(before, 0)], 0)
    toggles = np.zeros(len(b), dtype=np.int8)
    toggles[quotes[escapes % 2 == 0]] = 1
    outside = np.cumsum(toggles, dtype=np.int64) % 2 == 0
    step = (((b == ord("{")) | (b == ord("["))) & outside).astype(np.int32) \
        - (((b == ord("}")) | (b == ord("]"))) & outside).astype(np.int32)
    return int(np.cumsum(step).max(initial=0)) > MAX_JSON_DEPTH


def _read_jsonl_slow(path: Path, text_lines: list[bytes], first_line: int = 1):
    rejected = RawRejected()
    rows: list[dict] = []
    lines: list[int] = []
    names: list[str] = []
    seen: set[str] = set()
    for number, raw in enumerate(text_lines, start=first_line):
        if not raw.strip():
            continue
        row, reasons = _json_row(raw)
        if row is None:
            rejected.lines.append(number)
            rejected.texts.append(clip(raw.decode("utf-8", "backslashreplace")))
            rejected.reasons.append(reasons[0])
            continue
        if reasons:
            rejected.cell_problems[len(rows)] = reasons
        rows.append(row)
        lines.append(number)
        for key in row:
            if key not in seen:
                seen.add(key)
                names.append(key)
        if (problem := too_many_columns(len(names))) is not None:
            raise LogFileError(path, f"the lines up to here name {problem}", line=number)
    columns = {}
    for name in names:
        columns[name] = pa.array([row.get(name) for row in rows], type=pa.string())
    table = pa.table(columns) if columns else pa.table({n: pa.array([], pa.string())
                                                        for n in COLUMN_NAMES})
    return table, np.asarray(lines, dtype=np.int64), rejected


def _json_row(raw: bytes) -> tuple[dict[str, str | None] | None, list[str]]:
    """One JSON line as its cells (text, as a CSV would hold them) and what
    is wrong with them; or None and why it cannot be a row at all."""
    if too_deep(raw):
        return None, [f"nested more than {MAX_JSON_DEPTH} levels deep"]
    try:
        text = raw.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:  # (its bytes kept as U+DC80-U+DCFF: see `_not_utf8_cells`)
        text, utf8 = raw.decode("utf-8", "surrogateescape"), False
    try:
        obj = json.loads(text, object_pairs_hook=_refusing_twice)
    except _KeyTwice as exc:
        return None, [(f"key {_shown_key(exc.key)} appears twice in the line (which value "
                       "was meant cannot be known)")]
    except ValueError as exc:
        return None, [f"not a JSON object: {exc}" if utf8 else "the line is not UTF-8 text"]
    except RecursionError:
        return None, [f"nested more than {MAX_JSON_DEPTH} levels deep"]
    if not isinstance(obj, dict):
        return None, ["not a JSON object" if utf8 else "the line is not UTF-8 text"]
    problems: list[str] = []
    if not utf8:
        obj, problems = _not_utf8_cells(obj)
        if obj is None:
            return None, problems
    try:
        cells = {key: _json_cell(value) for key, value in obj.items()}
    except RecursionError:
        return None, [f"nested more than {MAX_JSON_DEPTH} levels deep"]
    for key in cells:
        if (bad := _SURROGATE.search(key)):
            why = f"a column name is not text: it holds a lone surrogate {_escaped(bad[0])}"
            return None, [why]
    for key, value in cells.items():
        if value is not None and (bad := _SURROGATE.search(value)):
            problems.append(f"{key} is not text: it holds a lone surrogate {_escaped(bad[0])}")
            cells[key] = _SURROGATE.sub(lambda m: _escaped(m[0]), value)
    return cells, problems


def _not_utf8_cells(obj: dict) -> tuple[dict | None, list[str]]:
    """The object of a line that is not UTF-8 text with its text values as
    Arrow's read gives them (`auditor.logs.read`), so that a line's cells
    never depend on which read took it (decision 103): a value holding
    bytes that are not UTF-8 keeps them written `\\xff`, its column named as
    not UTF-8 text; the line is rejected where such bytes are anywhere else
    (a key, a nested value, between the values: Arrow's read refuses the
    file there, and this read the line). The bytes arrive as U+DC80-U+DCFF
    (decoded with `surrogateescape`; a `\\udcff` the line writes is taken
    as one of them)."""
    problems = []
    for key, value in obj.items():
        if _BYTE.search(key) or isinstance(value, (list, dict)) \
                and _BYTE.search(json.dumps(value, ensure_ascii=False)):
            return None, ["the line is not UTF-8 text"]
        if isinstance(value, str) and _BYTE.search(value):
            problems.append(f"{key} is not UTF-8 text")
            obj[key] = _BYTE.sub(lambda m: f"\\x{ord(m[0]) - 0xDC00:02x}", value)
    return obj, problems


class _KeyTwice(ControlSignal, ValueError):
    """A JSON object naming one key twice: `{"outcome":"lose","outcome":"win"}`."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _refusing_twice(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (json's
    own dict keeps the last value silently: a row would be judged on one of
    two values its line records). Arrow's reader refuses such a line too, so
    the file is read here, line by line."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _KeyTwice(key)
            seen.add(key)
    return obj


def _shown_key(key: str) -> str:
    return repr(key) if len(key) <= 80 else f"{key[:80]!r}… ({len(key)} characters)"


def _escaped(surrogate: str) -> str:
    """A surrogate as the JSON escape that wrote it (`\\ud800`)."""
    return f"\\u{ord(surrogate):04x}"


#: A UTF-16 surrogate, which JSON's \u escapes can write alone but no text
#: holds (it cannot be written as UTF-8).
_SURROGATE = re.compile("[\ud800-\udfff]")

#: A byte that is not UTF-8, as `surrogateescape` decodes it.
_BYTE = re.compile("[\udc80-\udcff]")


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
    return json.dumps(value, sort_keys=True)


def _as_lines_write_them(table: pa.Table) -> pa.Table | None:
    """Arrow's read with every cell the text the line-by-line read gives it
    (`_json_cell`), so that a file's cells never depend on which read took it
    (nor a split file's on its pieces': decision 103): each double and
    boolean column written as that read writes its values (a whole number
    without a fraction, -0.0 as 0, any other as Python writes it; true and
    false; Arrow's own text differs: 1e-7 for 1e-07, 1.5e+12 for
    1500000000000, and Python's False), a column no line fills as text.
    None where that cannot be: a nested value (Arrow's struct fills in, as
    null, the keys other lines give; its lists make every number of a line a
    double) or a whole number past 2**53 that Arrow made a double (its
    digits lost: a number past int64, or any beside a fraction in its
    column); such a file is read line by line."""
    for k, t in enumerate(table.schema.types):
        if pa.types.is_nested(t):
            return None
        if pa.types.is_boolean(t):
            col = pc.if_else(table.column(k), "true", "false")
        elif pa.types.is_floating(t):
            col = _float_text(table.column(k).combine_chunks())
            if col is None:
                return None
        elif pa.types.is_null(t):
            col = pa.nulls(table.num_rows, pa.string())
        else:
            continue
        table = table.set_column(k, table.field(k).name, col)
    return table


def _float_text(col: pa.Array) -> pa.Array | None:
    """`_json_cell`'s text of each number of a double column (null: null);
    None when a whole number in it is past 2**53 (see `_as_lines_write_them`)."""
    values = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    valid = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    whole = valid & (values == np.trunc(values))
    if (np.abs(values[whole]) >= 2.0 ** 53).any():
        return None
    text = np.full(len(values), None, dtype=object)
    text[whole] = pa.array(values[whole].astype(np.int64)).cast(pa.string()) \
        .to_numpy(zero_copy_only=False)
    fraction = valid & ~whole
    text[fraction] = [str(v) for v in values[fraction].tolist()]
    return pa.array(text, pa.string())
