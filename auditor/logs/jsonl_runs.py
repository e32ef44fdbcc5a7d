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
block at a time on either side of the cut, as far as the run goes; a block
holding as many of the cut line's `"table_id":<value>` as line breaks is
passed over whole, counted rather than read line by line (`_all_name`).
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
#: gathered, so what a worker holds to find its cuts stays bounded whatever
#: the file holds. (A log's line is well under a kilobyte, a cell is kept
#: up to 1 MiB; a line of a gigabyte gathered by each of 16 workers whose
#: cut fell inside it was 16 GB.)
LONG_LINE_BYTES = 1 << 24

#: The bytes looked at to plan a file's pieces (`edges`).
EDGE_BYTES = 1 << 16

#: The key a line writes its table under, unless the project configuration
#: reads another as it (`ReadOptions.columns`).
TABLE_KEY = "table_id"


@lru_cache(maxsize=8)
def _table_id(key: str) -> re.Pattern:
    """A line's table as written under `key`: a JSON string (escapes kept) or
    a bare value."""
    written = re.escape(json.dumps(key, ensure_ascii=False).encode("utf-8"))
    return re.compile(written + rb'\s*:\s*("(?:[^"\\\n]|\\.)*"|[^,}\s]*)')


def line_cut_near(path: Path, offset: int, key: str = TABLE_KEY) -> int:
    """Where a piece cut at byte `offset` of `path` really falls: the start or
    the end of the run of lines naming the table (under `key`) of the line
    holding `offset`, whichever is nearer (see module); 0 and the file's
    size stay as they are."""
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        if offset <= 0 or offset >= size:
            return max(0, min(offset, size))
        start = _line_start(fh, offset)
        first = next(_blocks_on(fh, start, size), (start, b""))[1]
        if not first:  # (a line longer than LONG_LINE_BYTES: a run of its own)
            return start
        run = _Run(_table_id(key), first.split(b"\n", 1)[0])
        begin = run.begin(fh, start)
        if begin == start:
            return start
        return run.nearer_end(fh, start, begin, size)


class _Run:
    """The run of lines naming one table, as one line writes it."""

    def __init__(self, pattern: re.Pattern, line: bytes):
        found = pattern.search(line)
        self.pattern = pattern
        self.value = found.group(1) if found else None
        # (a bare value, 1, is the start of another, 12: not counted whole)
        self.needle = found.group(0) if found and self.value.startswith(b'"') else None

    def holds(self, line: bytes) -> bool:
        return _written(self.pattern, line) == self.value

    def begin(self, fh, start: int) -> int:
        """The first byte of the run that goes on to the line at `start`."""
        begin = start
        for lo, block in _blocks_back(fh, start):
            if _all_name(block, self.needle):
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
            if lo + len(block) - start < start - begin and _all_name(block, self.needle):
                continue
            for at, text in _lines_on(lo, block):
                if at - start >= start - begin:
                    return begin
                if at > start and not self.holds(text):
                    return at
        return size if size - start < start - begin else begin


def table_written(line: bytes, key: str = TABLE_KEY) -> bytes | None:
    """The table written in one line under `key`, as written (None: none is)."""
    return _written(_table_id(key), line)


def _written(pattern: re.Pattern, line: bytes) -> bytes | None:
    found = pattern.search(line)
    return found.group(1) if found else None


def _all_name(block: bytes, needle: bytes | None) -> bool:
    """Whether every line of `block` (whole lines, each ending in a line
    break) names the table as `needle` writes it: as many of it as lines,
    counted, not read line by line. (A key is the only place JSON lets
    `"table_id":` stand unescaped; a line naming it twice, in a nested
    object, could let a line of another table pass here: the cut would
    then fall inside a table, and the merge reads the file whole.)"""
    return needle is not None and block.endswith(b"\n") \
        and block.count(needle) == block.count(b"\n")


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
