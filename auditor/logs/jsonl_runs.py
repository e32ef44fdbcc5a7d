"""Where a JSON Lines file may be cut between two tables (issue 27), found
from the bytes about the cut alone.

Every line break of a JSON Lines file ends a record (JSON writes a line
break inside a value as `\\n`), so a byte offset belongs to one line, and a
cut moves from there to the start or the end of the run of lines naming that
line's table, whichever is nearer (the start on a tie): what
`auditor.run.pieces.cut_near` does with a Parquet file's rows. A line's table
is read from its text (the value after `"table_id":`, as written), not
parsed: a cut only has to be the same for the two pieces that meet at it,
and it is, being a function of the file and the offset alone. A table that
still ends up in two pieces (a line this reading misnames, an id written two
ways, tables interleaved by time) is found when the pieces are merged, and
the file is then read whole (`auditor.run.pieces`). The lines are read a
block at a time on either side of the cut, as far as the run goes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

#: Bytes read at a time walking the lines about a cut.
BLOCK_BYTES = 1 << 18

#: A line's `table_id` as written: a JSON string (escapes kept) or a bare value.
_TABLE_ID = re.compile(rb'"table_id"\s*:\s*("(?:[^"\\\n]|\\.)*"|[^,}\s]*)')

#: The bytes looked at to plan a file's pieces (`edges`).
EDGE_BYTES = 1 << 16


def line_cut_near(path: Path, offset: int) -> int:
    """Where a piece cut at byte `offset` of `path` really falls: the start or
    the end of the run of lines naming the table of the line holding
    `offset`, whichever is nearer (see module); 0 and the file's size stay
    as they are."""
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        if offset <= 0 or offset >= size:
            return max(0, min(offset, size))
        start = offset
        for start, _ in _lines_back(fh, offset + 1):  # (the line holding `offset`)
            break
        line = next(_lines_on(fh, start, size))[1]
        value = table_written(line)
        begin = start
        for at, line in _lines_back(fh, start):
            if table_written(line) != value:
                break
            begin = at
        if begin == start:
            return start
        for at, line in _lines_on(fh, start, size):
            if at - start >= start - begin:
                return begin
            if at > start and table_written(line) != value:
                return at
        return size if size - start < start - begin else begin


def table_written(line: bytes) -> bytes | None:
    """The `table_id` written in one line, as written (None: none is)."""
    found = _TABLE_ID.search(line)
    return found.group(1) if found else None


def _lines_back(fh, end: int) -> Iterator[tuple[int, bytes]]:
    """The lines wholly before byte `end` (a line start, or one past the
    byte whose line is wanted first), last to first: (start, text)."""
    if end <= 0:
        return
    carry, pos = b"", end
    while pos > 0:
        lo = max(0, pos - BLOCK_BYTES)
        fh.seek(lo)
        block = fh.read(pos - lo) + carry
        pos = lo
        parts = block.split(b"\n")
        carry = parts[0]
        at = lo + len(block)
        for part in reversed(parts[1:]):
            at -= len(part) + 1
            if at + 1 < end:
                yield at + 1, part
    yield 0, carry


def _lines_on(fh, start: int, size: int) -> Iterator[tuple[int, bytes]]:
    """The lines from byte `start` (a line start) on, first to last: (start, text)."""
    carry, pos, at = b"", start, start
    while pos < size:
        fh.seek(pos)
        block = carry + fh.read(min(BLOCK_BYTES, size - pos))
        pos += len(block) - len(carry)
        parts = block.split(b"\n")
        carry = parts.pop()
        for part in parts:
            yield at, part
            at += len(part) + 1
    if carry:
        yield at, carry


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
