"""Hostile input: lawful sessions, mutated every way a log goes wrong, run
through the `auditor` command.

Whatever the input, `auditor check` and `auditor validate` exit 0, 1 or 2,
never show a traceback or an internal error, and when the audit ran, every
row read is accounted for: for every input file rows read = replayed +
quarantined (read from the provenance in findings.parquet), each quarantined
row is in quarantine.parquet and has its `log.malformed` finding, and where
the test knows how many rows it wrote, that many were read. An unmutated
session gives no finding at all.

A report folder changed (a file's bytes, a manifest value) is read by `verify`,
`trend` and `baseline create` with the same promise.

Each property draws --fuzz-examples examples (25 by default, well under a
minute in all). The nightly run:

    python -m pytest tests/test_fuzz.py --fuzz-examples 2000
"""

from __future__ import annotations

import atexit
import functools
import gzip
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from datetime import date, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import report_findings, report_provenance, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from auditor.generate import generate
from auditor.logs.schema import COLUMN_KINDS, COLUMN_NAMES
from auditor.report.formats import FORMATS

#: An exception Python could only print ("Exception ignored in ...", with its
#: traceback, on standard error) fails the test like any other.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

FORMS = ("csv", "csv.gz", "jsonl", "ndjson.gz", "parquet", "parquet.gz")
STRING_COLUMNS = tuple(c for c in COLUMN_NAMES if COLUMN_KINDS[c] == "str")
MIB = 1 << 20

MARKUP = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    '=HYPERLINK("http://x","y")',
    "=1+2",
    "+SUM(A1:A9)",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1,1)",
    "\x1b[2J\x1b[31mred",
    "\x1b]0;pwned\x07",
    "a\rb",
    "tab\there",
    "nul\x00byte",
    "bell\x07",
    "\u202eevil\u202c",
    "zero\u200bwidth",
    "{{7*7}}",
    "${jndi:ldap://x/a}",
    "'; DROP TABLE findings; --",
    "\\x41\\u0042",
)

HOSTILE_TEXT = (
    "", " ", "0", "-1", "63", "7", "13", "1e9", "9" * 30, "-" + "9" * 25, "nan", "NaN", "inf",
    "-inf", "1.5", "2.0", "+3", "0x10", "1_000", "true", "null", "None", "R1,,R2", ",",
    "R1, R2", " R1 ", "PASS", "place_4", "come_13", "2026-03-01T20:00:00",
    "2026-13-01T20:00:00+00:00", "0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59+14:00",
    "2026-03-01T20:00:00+99:99", "2026-03-01 20:00:00Z", "20260301T200000Z", "é", "😀",
    "\ufeff", "\u00a0", "x" * 300, *MARKUP,
)

EXTRA_COLUMN_NAMES = ("note", "source_file", "source_line", "source_order", "", "SEQ",
                      " seq", "a\nb", "<b>", "=cmd()", "é", "_sev", "finding_id")

hostile_values = st.one_of(
    st.sampled_from(HOSTILE_TEXT),
    st.none(),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.integers(min_value=-3, max_value=70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=12),
    st.binary(max_size=6),
    st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-5, 5), max_size=2),
)


# --- sessions ----------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _generated(seed: int, tables: int, rolls: int) -> pa.Table:
    return generate(tables=tables, rolls=rolls, seed=seed).table


sessions = st.tuples(st.integers(0, 10 ** 6), st.integers(1, 2), st.integers(0, 3))


def session_rows(session) -> list[dict]:
    """A lawful generated session as rows of Python values."""
    return _generated(*session).to_pylist()


# --- writing rows in each form ---------------------------------------------------

class JsonText(str):
    """A value written into JSON Lines as this very JSON text (an object
    nested thousands deep, a `\\ud800` escape); elsewhere, as this text."""


def _cell_bytes(value) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, JsonText):
        return value.encode("utf-8")
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, (datetime, date)):
        return value.isoformat().encode()
    if isinstance(value, float):
        return repr(value).encode()
    if isinstance(value, (list, dict)):
        return json.dumps(value).encode()
    return str(value).encode("utf-8", "surrogatepass")


def _csv_quote(cell: bytes) -> bytes:
    if any(c in cell for c in (b",", b'"', b"\n", b"\r")):
        return b'"' + cell.replace(b'"', b'""') + b'"'
    return cell


def to_csv(rows: list[dict], columns: list[str]) -> bytes:
    out = [b",".join(_csv_quote(c.encode("utf-8", "surrogatepass")) for c in columns)]
    for row in rows:
        out.append(b",".join(_csv_quote(_cell_bytes(row.get(c))) for c in columns))
    return b"\n".join(out) + b"\n"


def _json_value(value) -> bytes:
    if isinstance(value, bytes):
        body = value.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n")
        return b'"' + body + b'"'
    if isinstance(value, JsonText):
        return value.encode("utf-8")
    if isinstance(value, (datetime, date)):
        value = value.isoformat()
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def to_jsonl(rows: list[dict], columns: list[str]) -> bytes:
    lines = []
    for row in rows:
        fields = [json.dumps(c, ensure_ascii=False).encode("utf-8", "surrogatepass") + b":"
                  + _json_value(row.get(c)) for c in columns if c in row]
        lines.append(b"{" + b",".join(fields) + b"}")
    return b"\n".join(lines) + b"\n"


def _arrow_column(values: list) -> pa.Array:
    try:
        arr = pa.array(values)
        pq.write_table(pa.table({"c": arr}), io.BytesIO())  # a type Parquet can store
        return arr
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pa.array([None if v is None else _cell_bytes(v).decode("utf-8", "replace")
                         for v in values], pa.string())


RETYPES = ("string", "large_string", "float", "binary", "dictionary", "list", "struct", "null",
           "uint64", "bool", "date", "naive_ts", "ts_s_kolkata", "decimal", "int32",
           "not_utf8", "ts_past_python")


def _retype(arr: pa.Array, kind: str) -> pa.Array:
    """The column stored with a type the format does not expect."""
    n = len(arr)
    try:
        values = arr.to_pylist()
    except UnicodeDecodeError:  # (made text that is not UTF-8 by a retype before)
        values = [None if v is None else v.decode("utf-8", "replace")
                  for v in arr.cast(pa.binary()).to_pylist()]
    except (OverflowError, ValueError):  # (made a time past Python's years by a retype before)
        values = arr.cast(pa.int64()).to_pylist()
    text = [None if v is None else _cell_bytes(v).decode("utf-8", "replace") for v in values]
    if kind == "string":
        return pa.array(text, pa.string())
    if kind == "large_string":
        return pa.array(text, pa.large_string())
    if kind == "binary":
        return pa.array([None if t is None else t.encode() for t in text], pa.binary())
    if kind == "dictionary":
        return pa.array(text, pa.string()).dictionary_encode()
    if kind == "list":
        return pa.array([None if t is None else [t] for t in text])
    if kind == "struct":
        return pa.array([{"v": t} for t in text])
    if kind == "null":
        return pa.nulls(n)
    if kind == "not_utf8":
        # text whose every other value ends in a lead byte with nothing after
        # it: the footer's statistics too (found by fuzzing by hand)
        return pa.array([None if t is None else t.encode() + (b"\xc2" if i % 2 else b"")
                         for i, t in enumerate(text)], pa.binary()).view(pa.string())
    if kind == "ts_past_python":
        # every other time 10**18 us from 1970 (the year 33,658: no datetime)
        return pa.array([None if v is None else (10 ** 18 if i % 2 else v)
                         for i, v in enumerate(arr.cast(pa.int64()).to_pylist())]
                        if pa.types.is_timestamp(arr.type) else [None] * n,
                        pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    if pa.types.is_timestamp(arr.type):
        if kind == "naive_ts":
            return arr.cast(pa.timestamp("us"))
        if kind == "ts_s_kolkata":
            # (a writer of whole seconds drops the fraction: found by the fuzzing)
            return arr.cast(pa.timestamp("s", tz="Asia/Kolkata"), safe=False)
        if kind == "date":
            return arr.cast(pa.date32())
        if kind in ("float", "uint64", "int32"):
            return arr.cast(pa.int64())
        return arr
    if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
        if kind == "float":  # (unsafe: a column made uint64 before holds 2**64 - 1)
            return arr.cast(pa.float64(), safe=False)
        if kind == "uint64":
            return pa.array([None if v is None else (2 ** 64 - 1 if i % 2 else abs(int(v)))
                             for i, v in enumerate(values)], pa.uint64())
        if kind == "bool":
            return pa.array([None if v is None else bool(v) for v in values], pa.bool_())
        if kind == "decimal":
            return arr.cast(pa.float64(), safe=False).cast(pa.decimal128(38, 3), safe=False)
        if kind == "int32":
            return pa.array([None if v is None else int(v) % 2 ** 31 for v in values], pa.int32())
    return arr


def to_parquet(rows: list[dict], columns: list[str], retypes=()) -> bytes:
    arrays = [_arrow_column([r.get(c) for r in rows]) for c in columns]
    for column, kind in retypes:
        for i, name in enumerate(columns):
            if name == column:
                arrays[i] = _retype(arrays[i], kind)
    table = pa.Table.from_arrays(arrays, names=columns)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def write_form(rows: list[dict], form: str, folder: Path, columns=None, retypes=(),
               plain_ops=(), packed_ops=()) -> Path:
    """Write `rows` as `form` (csv, csv.gz, jsonl, ndjson.gz, parquet, parquet.gz),
    applying byte mutations before (`plain_ops`) and after (`packed_ops`)
    compression."""
    if columns is None:
        columns = list(dict.fromkeys(k for r in rows for k in r)) or list(COLUMN_NAMES)
    kind = form.removesuffix(".gz")
    if kind == "csv":
        data = to_csv(rows, columns)
    elif kind in ("jsonl", "ndjson"):
        data = to_jsonl(rows, columns)
    else:
        data = to_parquet(rows, columns, retypes)
    for op in plain_ops:
        data = apply_bytes(op, data)
    if form.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    for op in packed_ops:
        data = apply_bytes(op, data)
    path = folder / f"log.{form}"
    path.write_bytes(data)
    return path


def row_lines(rows: list[dict], form: str) -> set[int]:
    """Where each row written starts: its physical line (CSV, JSON Lines) or
    its row number (Parquet). A quarantined row must name one of these."""
    if not form.startswith("csv"):
        return set(range(1, len(rows) + 1))
    columns = list(dict.fromkeys(k for r in rows for k in r)) or list(COLUMN_NAMES)
    line = 1 + sum(c.encode("utf-8", "surrogatepass").count(b"\n") for c in columns) + 1
    starts = set()
    for row in rows:
        starts.add(line)
        line += 1 + sum(_cell_bytes(row.get(c)).count(b"\n") for c in columns)
    return starts


def expected_rows(rows: list[dict], form: str, columns=None) -> int:
    """Rows the reader must count as read: CSV records with any cell (blank
    lines are not rows), every JSON line, every Parquet row."""
    if form.startswith("csv"):
        columns = columns or list(dict.fromkeys(k for r in rows for k in r))
        return sum(1 for r in rows if any(_cell_bytes(r.get(c)) for c in columns))
    return len(rows)


# --- mutations -------------------------------------------------------------------

def row_ops(n_cols=COLUMN_NAMES):
    index = st.integers(0, 10 ** 6)
    column = st.sampled_from(n_cols)
    return st.one_of(
        st.tuples(st.just("drop"), index),
        st.tuples(st.just("dup"), index),
        st.tuples(st.just("swap"), index, index),
        st.tuples(st.just("blank_column"), column),
        st.tuples(st.just("remove_column"), column),
        st.tuples(st.just("set"), index, column, hostile_values),
        st.tuples(st.just("set_column"), column, hostile_values),
        st.tuples(st.just("unknown_event"), index, st.text(min_size=1, max_size=10)),
        st.tuples(st.just("extra_column"), st.sampled_from(EXTRA_COLUMN_NAMES), hostile_values),
        st.tuples(st.just("huge"), index, column, st.integers(MIB - 2, MIB + 2)),
        st.tuples(st.just("empty_row"), index),
        st.tuples(st.just("seq_jump"), index, st.integers(2, 2 ** 63)),
        st.tuples(st.just("deep"), index, st.integers(300, 30_000)),
        st.tuples(st.just("surrogate"), index, column,
                  st.sampled_from(["\\ud800", "x\\udfffy", "\\udc80\\ud800", "\\ud83d"])),
    )


def apply_row_op(op, rows: list[dict]) -> list[dict]:
    rows = [dict(r) for r in rows]
    kind, *args = op
    n = len(rows)
    if kind == "drop" and n > 1:
        del rows[args[0] % n]
    elif kind == "dup" and n:
        i = args[0] % n
        rows.insert(i, dict(rows[i]))
    elif kind == "swap" and n:
        i, j = args[0] % n, args[1] % n
        rows[i], rows[j] = rows[j], rows[i]
    elif kind == "blank_column":
        for r in rows:
            r[args[0]] = None
    elif kind == "remove_column":
        for r in rows:
            r.pop(args[0], None)
    elif kind == "set" and n:
        rows[args[0] % n][args[1]] = args[2]
    elif kind == "set_column":
        for r in rows:
            r[args[0]] = args[1]
    elif kind == "unknown_event" and n:
        rows[args[0] % n]["event"] = args[1]
    elif kind == "extra_column":
        for r in rows:
            r[args[0]] = args[1]
    elif kind == "huge" and n:
        rows[args[0] % n][args[1]] = "é" * (args[2] // 2) + "x" * (args[2] % 2)
    elif kind == "empty_row" and n:
        rows.insert(args[0] % n, {k: None for k in rows[0]})
    elif kind == "seq_jump" and n:  # every later event of the table numbered far higher
        i = args[0] % n
        table = rows[i].get("table_id")
        for r in rows[i:]:
            if r.get("table_id") == table and type(r.get("seq")) is int:
                r["seq"] = min(r["seq"] + args[1], 2 ** 63 - 1)
    elif kind == "deep" and n:  # an extra column holding objects nested `depth` deep
        depth = args[1]
        rows[args[0] % n]["note"] = JsonText('{"a":' * depth + "1" + "}" * depth)
    elif kind == "surrogate" and n:  # a lone surrogate as JSON escapes it
        rows[args[0] % n][args[1]] = JsonText(f'"{args[2]}"')
    return rows


byte_ops = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("overwrite"), st.floats(0, 1), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("latin1_byte"), st.floats(0, 1)),
    st.tuples(st.just("encoding"), st.sampled_from(["utf-8-sig", "utf-16", "utf-16-le",
                                                    "utf-16-be", "latin-1", "utf-32"])),
    st.tuples(st.just("crlf")),
    st.tuples(st.just("random"), st.binary(max_size=200)),
    st.tuples(st.just("nul"), st.floats(0, 1)),
)


def apply_bytes(op, data: bytes) -> bytes:
    kind, *args = op
    at = int(args[0] * len(data)) if args and isinstance(args[0], float) else 0
    if kind == "truncate":
        return data[:at]
    if kind == "overwrite":
        return data[:at] + args[1] + data[at + len(args[1]):]
    if kind == "insert":
        return data[:at] + args[1] + data[at:]
    if kind == "latin1_byte":
        return data[:at] + "é".encode("latin-1") + data[at:]
    if kind == "nul":
        return data[:at] + b"\x00" + data[at:]
    if kind == "encoding":
        return data.decode("utf-8", "replace").encode(args[0], "replace")
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "random":
        return args[0]
    raise AssertionError(op)


# --- running and judging -------------------------------------------------------------

FORBIDDEN_IN_OUTPUT = ("Traceback", "internal error")


def assert_clean_exit(res, command: str) -> None:
    assert res.exit_code in (0, 1, 2), (command, res.exit_code, res.output)
    assert res.exception is None or isinstance(res.exception, SystemExit), \
        (command, repr(res.exception))
    for word in FORBIDDEN_IN_OUTPUT:
        assert word not in res.output, (command, res.output[-2000:])
    if res.exit_code == 2 and command == "check":
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), res.output[-2000:]


def audit_and_judge(path: Path, out: Path, rows_expected: int | None = None,
                    also_validate: bool = True) -> dict | None:
    """Run check (and validate) on `path`; assert every invariant; return the
    provenance when the audit ran."""
    res = run_cli("check", path, "-r", "nz-table-games", "--out", out)
    assert_clean_exit(res, "check")
    if also_validate:
        assert_clean_exit(run_cli("validate", path), "validate")
    if res.exit_code == 2:
        assert not out.exists() or not any(out.iterdir()), "a failed run wrote a report"
        return None
    meta = report_provenance(out)
    for inp in meta["inputs"]:
        assert inp["rows_read"] == inp["rows_replayed"] + inp["rows_quarantined"], inp
    quarantine = pq.read_table(out / "quarantine.parquet").to_pandas()
    findings = report_findings(out)
    per_file = quarantine.groupby("source_file").size().to_dict()
    for inp in meta["inputs"]:
        assert per_file.get(inp["path"], 0) == inp["rows_quarantined"], inp
    assert (findings["code"] == "log.malformed").sum() == len(quarantine)
    assert meta["rows"]["read"] == sum(i["rows_read"] for i in meta["inputs"])
    if rows_expected is not None:
        assert meta["rows"]["read"] == rows_expected, (meta["rows"], rows_expected)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    meta["_findings"] = findings
    meta["_quarantine"] = quarantine
    meta["_exit"] = res.exit_code
    return meta


def fuzz(examples: int, **kwargs):
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                    **kwargs)


# --- properties --------------------------------------------------------------------

def test_unmutated_sessions_are_clean(fuzz_examples):
    @fuzz(fuzz_examples)
    @given(session=sessions, form=st.sampled_from(FORMS))
    def prop(session, form):
        rows = session_rows(session)
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            meta = audit_and_judge(write_form(rows, form, tmp), tmp / "out", len(rows))
            assert meta is not None
            assert meta["rows"] == {"read": len(rows), "replayed": len(rows), "quarantined": 0}
            assert meta["findings"]["total"] == 0, meta["_findings"][["code", "message"]]

    prop()


def test_row_and_cell_mutations(fuzz_examples):
    @fuzz(fuzz_examples)
    @given(session=sessions, form=st.sampled_from(FORMS),
           ops=st.lists(row_ops(), min_size=1, max_size=4))
    def prop(session, form, ops):
        rows = session_rows(session)
        for op in ops:
            rows = apply_row_op(op, rows)
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            path = write_form(rows, form, tmp)
            meta = audit_and_judge(path, tmp / "out", expected_rows(rows, form))
            if meta is not None:
                lines = set(meta["_quarantine"]["source_line"].tolist())
                assert lines <= row_lines(rows, form), sorted(lines - row_lines(rows, form))

    prop()


def test_long_rows(fuzz_examples):
    """A row longer than the block a CSV file is parsed in (4 MiB): cells of
    up to 1 MiB each over many columns, anywhere in the file, some cells
    just over the limit. Every row is read; only a row with a cell over
    the limit is quarantined. (Few examples: each file is tens of MiB.)"""
    @fuzz(max(2, fuzz_examples // 10))
    @given(session=sessions, form=st.sampled_from(["csv", "csv.gz"]),
           at=st.integers(0, 10 ** 6), cells=st.integers(4, 9),
           sizes=st.lists(st.integers(MIB - 2, MIB + 1), min_size=9, max_size=9))
    def prop(session, form, at, cells, sizes):
        rows = session_rows(session)
        for k in range(cells):
            rows = apply_row_op(("huge", at, f"note{k}", sizes[k]), rows)
        over = any(size > MIB for size in sizes[:cells])
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            meta = audit_and_judge(write_form(rows, form, tmp), tmp / "out", len(rows),
                                   also_validate=False)
            assert meta is not None
            assert meta["rows"]["quarantined"] == int(over), meta["rows"]

    prop()


#: Text an id could hold: identifiers, and what a line break, a quote, a
#: path or an invisible character could do where the id is written.
hostile_ids = st.one_of(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}(@[A-Za-z0-9._-]{1,8})?", fullmatch=True),
    st.text(st.sampled_from("aZ09.-_@/\\\n\r\t \"'#[]=\u2028\u202e\x00\x7f"),
            min_size=1, max_size=12),
)


def _toml_string(text: str) -> str:
    """`text` as a TOML basic string (every character escaped as \\uXXXX
    where TOML would not take it raw)."""
    return '"' + "".join(ch if ch.isalnum() or ch in "._-@ /#[]='" else f"\\u{ord(ch):04x}"
                         for ch in text) + '"'


def test_hostile_ids(fuzz_examples):
    """A rule or ruleset id is an identifier or refused at load (exit 2,
    one located line); a scaffold made from a ruleset holding any id that
    loads has nothing live below its [ruleset] table."""
    from auditor.rules.ruleset import is_rule_id, is_ruleset_id

    @fuzz(fuzz_examples)
    @given(ruleset_id=hostile_ids, rule_id=hostile_ids)
    def prop(ruleset_id, rule_id):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            path = tmp / "parent.toml"
            path.write_text(
                f"[ruleset]\nid = {_toml_string(ruleset_id)}\ntitle = \"T\"\n"
                f"status = \"provisional\"\nnotes = \"n\"\nextends = \"nz-1996\"\n\n"
                f"[[rule]]\nid = {_toml_string(rule_id)}\ncheck = \"stick_used\"\n"
                f"code = \"dice.stick_not_used\"\nclause = \"5.7\"\nseverity = \"minor\"\n",
                encoding="utf-8")
            res = run_cli("rulesets", "check", path)
            valid = is_ruleset_id(ruleset_id) and is_rule_id(rule_id)
            assert res.exit_code == (0 if valid else 2), (ruleset_id, rule_id, res.output)
            if not valid:
                lines = res.output.strip().splitlines()
                assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), res.output
                assert "key 'id'" in lines[0]
                return
            out = tmp / "child.toml"
            res = run_cli("rulesets", "new", "child", "--from", path, "--out", out)
            assert res.exit_code == 0, res.output
            body = out.read_text(encoding="utf-8").split("\n[ruleset]\n", 1)[1]
            live = [ln for ln in body.splitlines()[1:] if ln.strip()
                    and not ln.startswith("#") and not ln.split("=")[0].strip() in
                    ("id", "title", "extends", "status", "notes")]
            assert not live, live

    prop()


def test_byte_mutations(fuzz_examples):
    @fuzz(fuzz_examples)
    @given(session=sessions, form=st.sampled_from(FORMS),
           plain=st.lists(byte_ops, max_size=2), packed=st.lists(byte_ops, max_size=1))
    def prop(session, form, plain, packed):
        rows = session_rows(session)
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            path = write_form(rows, form, tmp, plain_ops=plain, packed_ops=packed)
            audit_and_judge(path, tmp / "out")

    prop()


def test_parquet_column_types(fuzz_examples):
    @fuzz(fuzz_examples)
    @given(session=sessions, gz=st.booleans(),
           retypes=st.lists(st.tuples(st.sampled_from(COLUMN_NAMES), st.sampled_from(RETYPES)),
                            min_size=1, max_size=3),
           ops=st.lists(row_ops(), max_size=2))
    @example(session=(0, 1, 0), gz=False, retypes=[("seq", "uint64"), ("seq", "float")],
             ops=[])  # (seq as huge floats)
    @example(session=(0, 1, 0), gz=False, retypes=[("ts", "ts_s_kolkata")],
             ops=[("set", 1, "ts", 1)])  # (a time with a fraction, stored in whole seconds)
    @example(session=(0, 1, 0), gz=False, retypes=[("table_id", "not_utf8")], ops=[])
    @example(session=(0, 1, 0), gz=False, retypes=[("ts", "ts_past_python")], ops=[])
    @example(session=(0, 1, 0), gz=False, retypes=[("table_id", "not_utf8"),
                                                   ("table_id", "string")], ops=[])
    @example(session=(0, 1, 0), gz=False, retypes=[("ts", "ts_past_python"),
                                                   ("ts", "string")], ops=[])  # (found by CI)
    @example(session=(0, 1, 0), gz=False, retypes=[("seq", "uint64"), ("seq", "decimal")],
             ops=[])
    def prop(session, gz, retypes, ops):
        rows = session_rows(session)
        for op in ops:
            rows = apply_row_op(op, rows)
        form = "parquet.gz" if gz else "parquet"
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            path = write_form(rows, form, tmp, retypes=retypes)
            audit_and_judge(path, tmp / "out", len(rows))

    prop()


def test_mixed_forms_in_one_folder(fuzz_examples):
    """Several files of one night, each possibly mutated: counts hold per file."""
    @fuzz(max(5, fuzz_examples // 5))
    @given(session=sessions, forms=st.lists(st.sampled_from(FORMS), min_size=2, max_size=4),
           ops=st.lists(st.tuples(st.integers(0, 3), row_ops()), max_size=3))
    def prop(session, forms, ops):
        rows = session_rows(session)
        parts = [rows[i::len(forms)] for i in range(len(forms))]
        for which, op in ops:
            parts[which % len(parts)] = apply_row_op(op, parts[which % len(parts)])
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            expected = 0
            for i, (part, form) in enumerate(zip(parts, forms)):
                folder = tmp / "logs" / f"p{i}"
                folder.mkdir(parents=True)
                write_form(part or rows[:1], form, folder)
                expected += expected_rows(part or rows[:1], form)
            meta = audit_and_judge(tmp / "logs", tmp / "out", None)
            if meta is not None:
                assert len(meta["inputs"]) == len(forms)
                assert meta["rows"]["read"] == expected

    prop()


def gzip_bomb(data: bytes, mib: int) -> bytes:
    """`data` gzip'd, then `mib` MiB of NUL bytes in about a thousandth of
    that (one gzip member repeated: a file of several members is one stream)."""
    nul = gzip.compress(b"\0" * MIB, mtime=0)
    return gzip.compress(data, mtime=0) + nul * mib


def test_small_gzip_bombs(fuzz_examples):
    """A log followed by NULs inflating past 16 MiB at a thousand to one: refused
    with exit 2 naming the file, never read whole."""
    @fuzz(max(5, fuzz_examples // 5))
    @given(session=sessions, form=st.sampled_from(["csv.gz", "ndjson.gz", "parquet.gz"]),
           mib=st.integers(17, 40), ops=st.lists(row_ops(), max_size=2))
    def prop(session, form, mib, ops):
        rows = session_rows(session)
        for op in ops:
            rows = apply_row_op(op, rows)
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            plain = write_form(rows, form.removesuffix(".gz"), tmp)
            path = tmp / f"bomb.{form}"
            path.write_bytes(gzip_bomb(plain.read_bytes(), mib))
            for command in (("check", path, "-r", "nz-table-games", "--out", tmp / "out"),
                            ("validate", path)):
                res = run_cli(*command)
                assert_clean_exit(res, command[0])
                assert res.exit_code == 2, res.output
                assert f"error: {path}: inflates to more than" in res.output, res.output

    prop()


# --- hostile text is inert ---------------------------------------------------------------

#: What a terminal must never receive from data: C0 controls other than the
#: line break, DEL, C1 controls, and bidirectional overrides.
def _unsafe_for_terminal(text: str) -> list[str]:
    bad = []
    for ch in text:
        if ch == "\n":
            continue
        if unicodedata.category(ch) in ("Cc", "Cf") and ch not in ("\u00ad",):
            bad.append(ch)
    return bad


def test_markup_and_formulas_are_inert(fuzz_examples):
    @fuzz(fuzz_examples)
    @given(session=sessions, form=st.sampled_from(FORMS), column=st.sampled_from(STRING_COLUMNS),
           payload=st.sampled_from(MARKUP), where=st.integers(0, 10 ** 6))
    def prop(session, form, column, payload, where):
        rows = [dict(r) for r in session_rows(session)]
        i = where % len(rows)
        rows[i][column] = payload
        rows[i]["die1"] = "x"  # quarantined: the payload must come back in the raw row
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            path = write_form(rows, form, tmp)
            meta = audit_and_judge(path, tmp / "out", len(rows), also_validate=False)
            assert meta is not None
            q = meta["_quarantine"]
            raw = [json.loads(r) for r in q["raw"]]
            assert payload in [r.get(column) for r in raw], (payload, raw)
            f = meta["_findings"]
            malformed = f[f["code"] == "log.malformed"]
            rows_in_evidence = [json.loads(json.loads(e)["row"]) for e in malformed["evidence"]]
            assert payload in [r.get(column) for r in rows_in_evidence]
            if column == "table_id":
                assert payload in set(q["table_id"]) and payload in set(f["table_id"])
            for command in (("check", path, "-r", "nz-table-games", "--out", tmp / "o2"),
                            ("validate", path)):
                res = run_cli(*command)
                assert res.exit_code in (0, 1)
                assert not _unsafe_for_terminal(res.output), (command[0], res.output)

    prop()


REPORT_FILES = ("manifest.json", "findings.parquet", "quarantine.parquet", "rollups.parquet",
                "dice_stats.parquet", "summary.json", "findings.jsonl", "report.html",
                "findings.sarif", "junit.xml", "findings.csv")
#: What a manifest value is replaced by: every kind JSON has, and some edges.
JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(),
                        st.text(max_size=8), st.just([]), st.just({}), st.just([1]),
                        st.just({"a": 1}))


@functools.cache
def _report_folder() -> Path:
    """A night with findings and a quarantined row, audited into every
    file format (once per run; each example copies it)."""
    folder = Path(tempfile.mkdtemp(prefix="auditor-fuzz-report-"))
    atexit.register(shutil.rmtree, folder, True)
    rows = session_rows((7, 2, 1))
    rows[5] = {**rows[5], "seq": "not a number"}
    log = folder / "night.csv"
    log.write_bytes(to_csv(rows, list(COLUMN_NAMES)))
    args = ["check", log, "-r", "nz-table-games", "--out", folder / "ref", "--fail-on", "none"]
    for name in ("parquet", "json", "html", "sarif", "junit", "csv"):
        args += ["--format", name]
    res = run_cli(*args)
    assert res.exit_code == 0, res.output
    return folder


def _manifest_edited(data: bytes, where: list[int], value) -> bytes:
    """The manifest with the value found by walking `where` (each number
    picks a key or an item, modulo their count) replaced by `value`."""
    manifest = json.loads(data)
    node, key = manifest, None
    for pick in where:
        children = list(node) if isinstance(node, dict) else list(range(len(node))) \
            if isinstance(node, list) else []
        if not children:
            break
        parent, key = node, children[pick % len(children)]
        node = node[key]
    if key is None:
        return data
    parent[key] = value
    return json.dumps(manifest).encode()


def test_report_folder_mutations(fuzz_examples):
    """A report's file changed (its bytes, or one manifest value replaced by
    a value of any kind): `verify` says the report does not stand (exit 1)
    wherever a listed file's bytes changed, `trend` and `baseline create`
    refuse it or read it, and none of them shows a traceback or an internal
    error (three kinds of internal error were found this way, 2026-12-07)."""
    ref = _report_folder() / "ref"

    @fuzz(max(5, fuzz_examples // 5))
    @given(name=st.sampled_from(REPORT_FILES),
           change=st.one_of(st.tuples(st.just("bytes"), byte_ops),
                            st.tuples(st.just("value"), st.lists(st.integers(0, 50),
                                                                 min_size=1, max_size=5),
                                      JSON_VALUES)),
           command=st.sampled_from(["verify", "trend", "baseline"]))
    def prop(name, change, command):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "report"
            shutil.copytree(ref, folder)
            before = (folder / name).read_bytes()
            after = apply_bytes(change[1], before) if change[0] == "bytes" else \
                _manifest_edited(before, change[1], change[2]) if name == "manifest.json" \
                else before
            (folder / name).write_bytes(after)
            args = {"verify": ("verify", folder),
                    "trend": ("trend", folder, "--out", Path(tmp) / "trend"),
                    "baseline": ("baseline", "create", "--from", folder / "findings.parquet",
                                 "--out", Path(tmp) / "baseline.json")}[command]
            res = run_cli(*args)
            assert "internal error" not in res.output and "Traceback" not in res.output, \
                res.output
            assert res.exit_code in (0, 1, 2), res.output
            if command == "verify" and after != before and name != "manifest.json":
                assert res.exit_code == 1, res.output
            if command == "verify" and after == before:
                assert res.exit_code == 0, res.output

    prop()


def test_any_csv_the_tool_writes_is_formula_safe(tmp_path):
    """No report format is CSV today; should one be added, a cell starting
    with = + - @ must come out neutralised."""
    rows = [dict(r) for r in session_rows((5, 1, 2))]
    for i, payload in enumerate(MARKUP[2:7]):
        rows[i]["actor_id"] = payload
        rows[i]["table_id"] = payload
        rows[i]["die1"] = "x"
    path = write_form(rows, "csv", tmp_path)
    args = ["check", path, "-r", "nz-table-games", "--out", tmp_path / "out"]
    for name in FORMATS:
        args += ["--format", name]
    res = run_cli(*args)
    assert res.exit_code == 1, res.output
    import csv

    for written in (tmp_path / "out").rglob("*.csv"):
        for row in csv.reader(io.StringIO(written.read_text(encoding="utf-8-sig"))):
            for cell in row:
                assert not cell[:1] in ("=", "+", "-", "@"), (written, cell)


# --- fixed hostile files, some through a real process --------------------------------------

def _hostile_files(folder: Path) -> dict[str, Path]:
    rows = session_rows((11, 1, 2))
    csv_bytes = to_csv(rows, list(COLUMN_NAMES))
    lines = csv_bytes.split(b"\n")
    files = {
        "random.csv": os.urandom(4096),
        "random.parquet": os.urandom(4096),
        "truncated.csv.gz": gzip.compress(csv_bytes)[:-20],
        "truncated.parquet": to_parquet(rows, list(COLUMN_NAMES))[:-100],
        "utf16.csv": csv_bytes.decode().encode("utf-16"),
        "bom.jsonl": b"\xef\xbb\xbf" + to_jsonl(rows, list(COLUMN_NAMES)),
        "latin1.csv": to_csv(apply_row_op(("set", 3, "actor_id", "Sé".encode("latin-1")), rows),
                             list(COLUMN_NAMES)),
        "huge_cell.csv": to_csv(apply_row_op(("huge", 3, "actor_id", MIB + 1), rows),
                                list(COLUMN_NAMES)),
        "deep.jsonl": b"[" * 100_000 + b"\n" + to_jsonl(rows, list(COLUMN_NAMES)),
        "nested.jsonl": b'{"table_id": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",
        "empty.csv": b"",
        "header_only.csv": csv_bytes.split(b"\n")[0] + b"\n",
        "nul.csv": csv_bytes.replace(b"T01", b"T\x0001"),
        "latin1_short_row.csv": b"\n".join([*lines[:2], "T01,9,é".encode("latin-1"),
                                            *lines[2:]]),
        "quoted_header.csv": to_csv([dict(r, **{"a\nb": "x\ny"}) for r in rows],
                                    [*COLUMN_NAMES, "a\nb"]),
        "unclosed_quote_header.csv": csv_bytes.replace(b",seq,", b',"seq,', 1),
        "bad_key.jsonl": to_jsonl(rows, list(COLUMN_NAMES)).replace(b'"flags"', b'"fl\x80gs"', 1),
        "dup_columns.parquet": to_parquet(rows, [*COLUMN_NAMES[:-1], "seq"]),
    }
    out = {}
    for name, data in files.items():
        (folder / name).write_bytes(data)
        out[name] = folder / name
    return out


#: (exit code, rows quarantined) of each fixed hostile file; None: not audited.
HOSTILE_VERDICTS = {
    "random.csv": (2, None), "random.parquet": (2, None), "truncated.csv.gz": (2, None),
    "truncated.parquet": (2, None), "utf16.csv": (0, 0), "bom.jsonl": (0, 0),
    "latin1.csv": (1, 1), "huge_cell.csv": (1, 1), "deep.jsonl": (1, 1),
    "nested.jsonl": (1, 1), "empty.csv": (2, None), "header_only.csv": (2, None),
    "nul.csv": (0, 0), "bad_key.jsonl": (1, 1), "dup_columns.parquet": (2, None),
    "latin1_short_row.csv": (1, 1), "quoted_header.csv": (0, 0),
    "unclosed_quote_header.csv": (2, None),
}


def test_fixed_hostile_files_in_process(tmp_path):
    files = _hostile_files(tmp_path)
    assert set(files) == set(HOSTILE_VERDICTS)
    for name, path in files.items():
        code, quarantined = HOSTILE_VERDICTS[name]
        meta = audit_and_judge(path, tmp_path / f"out-{name}")
        if quarantined is None:
            assert meta is None, name
        else:
            assert meta is not None and meta["rows"]["quarantined"] == quarantined, name
            assert meta["_exit"] == code, name


@pytest.mark.parametrize("size", [10_000, 100_000])
def test_random_bytes_under_a_good_header_are_rows_quarantined(tmp_path, size):
    """Found by hand (2026-12-07): a CSV whose header is right and whose
    body is random bytes ended in an internal error (a column of no chunk
    in a part of no row). Every row read is quarantined, each a
    `log.malformed` finding, or the file is refused as one problem."""
    header = to_csv(session_rows((11, 1, 2)), list(COLUMN_NAMES)).split(b"\n")[0]
    for seed in range(3):
        path = tmp_path / f"garbage-{seed}.csv"
        path.write_bytes(header + b"\n" + random.Random(seed).randbytes(size))
        meta = audit_and_judge(path, tmp_path / f"out-{seed}")
        if meta is not None:
            assert meta["rows"]["read"] == meta["rows"]["quarantined"] > 0, seed
            assert meta["rows"]["replayed"] == 0 and meta["_exit"] == 1, seed


@pytest.mark.parametrize("name,command", [
    ("random.csv", "check"), ("truncated.parquet", "check"), ("latin1_short_row.csv", "check"),
    ("deep.jsonl", "validate"),
])
def test_fixed_hostile_files_through_a_real_process(tmp_path, name, command):
    path = _hostile_files(tmp_path)[name]
    args = [command, path] + (["-r", "nz-table-games", "--out", tmp_path / "out"]
                              if command == "check" else [])
    proc = subprocess.run([sys.executable, "-m", "auditor", *map(str, args)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == HOSTILE_VERDICTS[name][0], (name, proc.stderr)
    for word in FORBIDDEN_IN_OUTPUT:
        assert word not in proc.stdout + proc.stderr, (name, proc.stderr[-2000:])


def test_lines_are_physical_after_quoted_line_breaks(tmp_path):
    """Found by the fuzzing: a header or a rejected row holding a quoted line
    break moved every later line number (and a broken header made a row up)."""
    path = tmp_path / "breaks.csv"
    path.write_bytes(
        b'table_id,seq,ts,event,"no\nte"\n'                            # lines 1-2
        b'T1,1,2026-03-01T20:00:00+00:00,table_open,"a\nb"\n'          # 3-4
        b"T1,2\n"                                                       # 5: too few cells
        b'T1,3,2026-03-01T20:00:06+00:00,"x\ny"\n'                     # 6-7: too few cells
        b"T1,4,2026-03-01T20:00:07+00:00,table_clos,\n")               # 8: unknown event
    meta = audit_and_judge(path, tmp_path / "out", rows_expected=4)
    assert meta["_quarantine"]["source_line"].tolist() == [5, 6, 8]
