"""Where a JSON Lines or CSV file may be cut between two tables (issue 27),
found from the bytes about the cut alone.

Every line break of a JSON Lines file ends a record (JSON writes a line
break inside a value as `\\n`); so does every line break of a CSV file
outside its quoted values (where a cut falls inside one, the piece before it
finds so: `auditor.logs.csv_format.ends_outside_quotes`). A byte offset then
belongs to one line, and a cut moves from there to the start or the end of
the run of lines naming that line's table, whichever is nearer (the start on
a tie): what `auditor.run.pieces.cut_near` does with a Parquet file's rows.
A line's table is read from its text as written (`JsonTables`: the value
after `"table_id":`; `CsvTables`: the table column's cell, quotes and all),
not parsed: a cut only has to be the same for the two pieces that meet at
it, and it is, being a function of the file and the offset alone. A table
that still ends up in two pieces (a line this reading misnames, an id
written two ways, tables interleaved by time) is found when the pieces are
merged, and the file is then read whole (`auditor.run.pieces`). The lines
are read a block at a time on either side of the cut, as far as the run
goes; a block whose every line names the cut line's table, as counted
(`all_name`), is passed over whole rather than read line by line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

#: Bytes read at a time walking the lines about a cut.
BLOCK_BYTES = 1 << 18

#: The longest line a cut reads whole: a longer one is taken as a run of
#: its own (the walk stops at it; a cut inside it falls at its start), never
#: gathered, so what a worker holds to find its cut stays bounded whatever
#: the file holds. (A log's line is well under a kilobyte, a cell is kept
#: up to 1 MiB; a line of a gigabyte gathered by each of 16 workers whose
#: cut fell inside it was 16 GB.)
LONG_LINE_BYTES = 1 << 24

#: The bytes looked at to plan a file's pieces (`edges`).
EDGE_BYTES = 1 << 16

#: The key (JSON Lines) or column (CSV) a line writes its table under,
#: unless the project configuration reads another as it
#: (`ReadOptions.columns`).
TABLE_KEY = "table_id"


class JsonTables:
    """The table each line of a JSON Lines file names under `key`, as
    written: a JSON string (escapes kept) or a bare value."""

    def __init__(self, key: str = TABLE_KEY):
        self.pattern = _json_table(key)

    def written(self, line: bytes) -> bytes | None:
        found = self.pattern.search(line)
        return found.group(1) if found else None

    def needle(self, line: bytes) -> bytes | None:
        """What each line of a run like `line`'s holds once (a bare value,
        1, is the start of another, 12: not counted)."""
        found = self.pattern.search(line)
        return found.group(0) if found and found.group(1).startswith(b'"') else None

    @staticmethod
    def all_name(block: bytes, needle: bytes | None) -> bool:
        """Whether every line of `block` (whole lines, each ending in a line
        break) names the table as `needle` writes it: as many of it as
        lines, counted, not read line by line. (A key is the only place
        JSON lets `"table_id":` stand unescaped; a line naming it twice, in
        a nested object, could let a line of another table pass here: the
        cut would then fall inside a table, and the merge reads the file
        whole.)"""
        return needle is not None and block.endswith(b"\n") \
            and block.count(needle) == block.count(b"\n")


@lru_cache(maxsize=8)
def _json_table(key: str) -> re.Pattern:
    written = re.escape(json.dumps(key, ensure_ascii=False).encode("utf-8"))
    return re.compile(written + rb'\s*:\s*("(?:[^"\\\n]|\\.)*"|[^,}\s]*)')


#: A CSV cell as written: quoted (a quote inside doubled) or bare.
_CSV_CELL = rb'(?:"(?:[^"]|"")*"|[^,\r\n]*)'


class CsvTables:
    """The table each line of a CSV file names in its `column`-th cell (from
    0), as written, quotes and all."""

    def __init__(self, column: int):
        self.column = column
        self.pattern = re.compile(rb"(?:%s,){%d}(%s)(?:,|\r?$)" % (_CSV_CELL, column, _CSV_CELL))

    def written(self, line: bytes) -> bytes | None:
        found = self.pattern.match(line)
        return found.group(1) if found else None

    def needle(self, line: bytes) -> bytes | None:
        """What opens each line of a run like `line`'s, when its table is the
        first cell (else None: the lines are read one by one)."""
        value = self.written(line)
        return b"\n" + value + b"," if self.column == 0 and value is not None else None

    @staticmethod
    def all_name(block: bytes, needle: bytes | None) -> bool:
        """Whether every line of `block` (whole lines, each ending in a line
        break) opens with `needle`'s table: counted, not read line by line
        (the first line, which no line break opens, looked at apart)."""
        return needle is not None and block.endswith(b"\n") \
            and block.startswith(needle[1:]) \
            and block.count(needle) + 1 == block.count(b"\n")


def line_cut_near(path: Path, offset: int, tables=None) -> int:
    """Where a piece cut at byte `offset` of `path` really falls: the start or
    the end of the run of lines naming the table (`tables`: `JsonTables` or
    `CsvTables`; JSON Lines' `table_id` by default) of the line holding
    `offset`, whichever is nearer (see module); 0 and the file's size stay
    as they are."""
    tables = JsonTables() if tables is None else tables
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        if offset <= 0 or offset >= size:
            return max(0, min(offset, size))
        start = _line_start(fh, offset)
        first = next(_blocks_on(fh, start, size), (start, b""))[1]
        if not first:  # (a line longer than LONG_LINE_BYTES: a run of its own)
            return start
        run = _Run(tables, first.split(b"\n", 1)[0])
        begin = run.begin(fh, start)
        if begin == start:
            return start
        return run.nearer_end(fh, start, begin, size)


class _Run:
    """The run of lines naming one table, as one line writes it."""

    def __init__(self, tables, line: bytes):
        self.tables = tables
        self.value = tables.written(line)
        self.needle = tables.needle(line)

    def holds(self, line: bytes) -> bool:
        return self.tables.written(line) == self.value

    def passes(self, block: bytes) -> bool:
        return self.tables.all_name(block, self.needle)

    def begin(self, fh, start: int) -> int:
        """The first byte of the run that goes on to the line at `start`."""
        begin = start
        for lo, block in _blocks_back(fh, start):
            if self.passes(block):
                begin = lo
                continue
            for at, text in _lines_back(lo, block):
                if not self.holds(text):
                    return begin
                begin = at
        return begin

    def nearer_end(self, fh, start: int, begin: int, size: int) -> int:
        """`begin`, or where the run holding the line at `start` ends when
        that is nearer to `start` (the end of the file counts)."""
        for lo, block in _blocks_on(fh, start, size):
            if not block:  # (a line longer than LONG_LINE_BYTES: another run)
                return lo if lo - start < start - begin else begin
            if lo + len(block) - start < start - begin and self.passes(block):
                continue
            for at, text in _lines_on(lo, block):
                if at - start >= start - begin:
                    return begin
                if at > start and not self.holds(text):
                    return at
        return size if size - start < start - begin else begin


def whole_line_blocks(path: Path) -> Iterator[bytes]:
    """The bytes of `path` a block of whole lines at a time (`_blocks_on`:
    its last line, when no line break ends it, a block of its own), ending
    with b"" at a line longer than `LONG_LINE_BYTES`, so that what is held
    stays bounded whatever the file holds."""
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        for _, block in _blocks_on(fh, 0, size):
            yield block


def _line_start(fh, offset: int) -> int:
    """The start of the line holding byte `offset`."""
    pos = offset
    while pos > 0:
        lo = max(0, pos - BLOCK_BYTES)
        fh.seek(lo)
        found = fh.read(pos - lo).rfind(b"\n")
        if found >= 0:
            return lo + found + 1
        pos = lo
    return 0


def _blocks_back(fh, end: int) -> Iterator[tuple[int, bytes]]:
    """The file's whole lines before byte `end` (a line start), a block of
    about `BLOCK_BYTES` at a time, last to first: (its start, its bytes). A
    line longer than a block is gathered whole, each byte read once; one
    longer than `LONG_LINE_BYTES` ends the walk."""
    pending: list[bytes] = []  # (the reads since the last line break, last first)
    held, pos = 0, end
    while pos > 0:
        lo = max(0, pos - BLOCK_BYTES)
        fh.seek(lo)
        read = fh.read(pos - lo)
        if len(read) < pos - lo:  # (the file shrank while it was read)
            return
        pos = lo
        cut = read.find(b"\n") + 1 if lo > 0 else 0
        if lo > 0 and not cut:
            pending.append(read)
            held += len(read)
            if held > LONG_LINE_BYTES:
                return
            continue
        block = read[cut:] + b"".join(reversed(pending))
        pending, held = [read[:cut]], cut
        if block:
            yield lo + cut, block


def _blocks_on(fh, start: int, size: int) -> Iterator[tuple[int, bytes]]:
    """The file's whole lines from byte `start` (a line start) on, a block of
    about `BLOCK_BYTES` at a time: (its start, its bytes; the file's last
    line, when no line break ends it, a block of its own). A line longer
    than a block is gathered whole, each byte read once; at one longer than
    `LONG_LINE_BYTES` the walk ends with (its start, b"")."""
    pending: list[bytes] = []  # (the reads since the last line break)
    held, pos, at = 0, start, start
    while pos < size:
        fh.seek(pos)
        read = fh.read(min(BLOCK_BYTES, size - pos))
        if not read:  # (the file shrank while it was read)
            return
        pos += len(read)
        cut = read.rfind(b"\n") + 1
        if cut:
            block = b"".join(pending) + read[:cut]
            pending, held = [], 0
            yield at, block
            at += len(block)
        if cut < len(read):
            pending.append(read[cut:])
            held += len(read) - cut
            if held > LONG_LINE_BYTES:
                yield at, b""
                return
    if pending:
        yield at, b"".join(pending)


def _lines_back(lo: int, block: bytes) -> Iterator[tuple[int, bytes]]:
    """The lines of a block of whole lines starting at byte `lo`, last to first."""
    at = lo + len(block)
    for text in reversed(block.split(b"\n")[:-1]):
        at -= len(text) + 1
        yield at, text


def _lines_on(lo: int, block: bytes) -> Iterator[tuple[int, bytes]]:
    """The lines of a block of whole lines starting at byte `lo`, first to
    last (the file's last line may end without a line break)."""
    texts = block.split(b"\n")
    if texts[-1] == b"":
        texts.pop()
    for text in texts:
        yield lo, text
        lo += len(text) + 1


def edges(path: Path) -> tuple[bytes, bytes, int]:
    """The first `EDGE_BYTES` of a file, its last whole line (or as much of
    it as those bytes hold) and its size."""
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(0)
        head = fh.read(EDGE_BYTES)
        fh.seek(max(0, size - EDGE_BYTES))
        tail = fh.read(EDGE_BYTES).rstrip(b"\r\n")
    return head, tail.rsplit(b"\n", 1)[-1], size
