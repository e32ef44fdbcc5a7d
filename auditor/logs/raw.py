"""One log file as read, before any value is typed (`RawLog`), and what
makes a file unusable as a log (`LogFileError`, exit 2); with the few file
helpers every format's reader shares (bytes through gzip, the SHA-256 a
report cites, a rejected row as the quarantine keeps it)."""

from __future__ import annotations

import codecs
import gzip
import hashlib
import json
import os
import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa

from auditor.errors import LogFileError, ReadOptionError

#: The largest cell accepted, in bytes of UTF-8. A longer cell quarantines
#: its row (the reason names the column and the size) and is kept in the
#: quarantine only as its first CELL_KEEP_CHARS characters.
MAX_CELL_BYTES = 1 << 20

#: The most columns a log file may have (the spec has 17; a site and a few
#: of an exporter's own are welcome). Every column costs Arrow's parsers
#: memory per row whatever the cells hold: 50,000 empty columns in a 117 MB
#: CSV abort the process (std::bad_alloc) under 2 GiB. A file with more
#: stops the run (exit 2), named, before any row is parsed.
MAX_COLUMNS = 1024


def too_many_columns(count: int) -> str | None:
    """The problem of a file with `count` columns, or None (the limit: the
    command's `--max-columns`, MAX_COLUMNS unless raised)."""
    limit = _inflate_limits.max_columns
    if count <= limit:
        return None
    return (f"{count:,} columns; a log may have at most {limit:,} (the spec has 17; "
            f"drop the columns that are no log's before auditing; --max-columns raises "
            f"the limit)")
CELL_KEEP_CHARS = 200


@dataclass(frozen=True)
class ReadOptions:
    """How to read logs that depart from the spec in a known way, as the
    user said: `encoding`, the text encoding of CSV and JSON Lines files
    (default UTF-8); `assume_offset` (`+HH:MM`), the UTC offset of times
    written without one (default: such a time quarantines its row)."""

    encoding: str | None = None
    assume_offset: str | None = None
    #: Columns renamed on read (name in the file, name in event-log-v1):
    #: the project configuration's `columns`, for exporters whose names differ.
    columns: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if isinstance(self.columns, dict):  # (as the provenance records it)
            object.__setattr__(self, "columns", tuple(sorted(self.columns.items())))
        if self.encoding is not None:
            try:
                info = codecs.lookup(self.encoding)
                if not getattr(info, "_is_text_encoding", True):
                    raise LookupError  # (rot13, base64, zlib: codecs, not text encodings)
            except LookupError:
                raise ReadOptionError(f"--encoding {self.encoding}: not a text encoding Python "
                                      f"knows (e.g. cp1252, latin-1, utf-16)") from None
            try:  # (every byte decodes, bad ones replaced: idna and punycode fail, being
                #   encodings of host names, not of files)
                bytes(range(256)).decode(self.encoding, "replace")
            except (UnicodeError, ValueError, TypeError):
                raise ReadOptionError(f"--encoding {self.encoding}: not an encoding of text "
                                      f"files (e.g. cp1252, latin-1, utf-16)") from None
        if self.assume_offset is not None:
            m = re.fullmatch(r"([+-])([0-9]{2}):([0-9]{2})", self.assume_offset)
            if not m or int(m[2]) > 14 or int(m[3]) > 59:
                raise ReadOptionError(f"--assume-offset {self.assume_offset}: write a UTC "
                                      f"offset as +HH:MM or -HH:MM (e.g. +13:00)")

    @classmethod
    def recorded(cls, data) -> ReadOptions:
        """The options a report's provenance records (`as_dict`; absent:
        none), read back; ReadOptionError for anything `as_dict` does not
        write (a report is checked, not trusted)."""
        if data is None:
            data = {}
        known = {"encoding": str, "assume_offset": str, "columns": dict}
        if not isinstance(data, dict) or any(
                k not in known or not isinstance(v, known[k]) for k, v in data.items()) \
                or not all(isinstance(k, str) and isinstance(v, str)
                           for k, v in data.get("columns", {}).items()):
            raise ReadOptionError(f"read_options {json.dumps(data)[:200]}: not options "
                                  f"the auditor records (encoding, assume_offset, columns)")
        return cls(data.get("encoding"), data.get("assume_offset"), data.get("columns", ()))

    def as_dict(self) -> dict:
        """The options given, for the provenance (empty: read as the spec says)."""
        out = {k: v for k, v in (("encoding", self.encoding),
                                 ("assume_offset", self.assume_offset)) if v is not None}
        if self.columns:
            out["columns"] = dict(self.columns)
        return out


#: Logs read as the spec says.
DEFAULT_READ = ReadOptions()

#: What a text file written as UTF-8 "with signature" opens with.
UTF8_BOM = b"\xef\xbb\xbf"


@lru_cache(maxsize=16)
def one_byte_a_character(encoding: str) -> bool:
    """Whether text in `encoding` (`--encoding`) is one byte a character,
    ASCII as ASCII (cp1252, latin-1, the ISO 8859 family, ascii): then a
    line break, a quote and a comma are bytes 10, 34 and 44 wherever they
    stand, so a file in it is cut at line starts and each piece decoded
    alone (`auditor.run.pieces`). Tried on every pair of bytes: in UTF-8,
    UTF-16 or Shift JIS some pair is one character."""
    ascii_bytes = bytes(range(128))
    try:
        if ascii_bytes.decode(encoding) != ascii_bytes.decode("ascii"):
            return False
        return all(len(bytes((first, then)).decode(encoding, "replace")) == 2
                   for first in range(256) for then in range(256))
    except (LookupError, UnicodeError):
        return False


@dataclass
class RawRejected:
    """Rows the parser itself could not split into columns (wrong cell count,
    unparseable JSON). They are quarantined like any malformed row."""

    lines: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    #: Rows the parser did split but found wrong (row index -> why): a quote
    #: never closed, a JSON string holding a lone surrogate; coercion
    #: quarantines them like a bad cell.
    cell_problems: dict[int, list[str]] = field(default_factory=dict)
    #: What the reader could not read and said instead (a Parquet row group
    #: whose pages do not decode): said in the provenance for the file.
    notes: list[str] = field(default_factory=list)


@dataclass
class RawLog:
    """One input file as read: its table, the physical line of each row, and
    what the parser rejected before any value was looked at."""

    path: str
    sha256: str
    fmt: str
    table: pa.Table
    lines: np.ndarray
    rejected: RawRejected
    #: row index -> what the reader found wrong in its cells (text that is
    #: not UTF-8, a cell over MAX_CELL_BYTES); coercion quarantines these rows.
    cell_problems: dict[int, list[str]] = field(default_factory=dict)
    #: what reading the file had to assume (a time without a zone taken as
    #: UTC): said in the report's provenance for this input.
    notes: list[str] = field(default_factory=list)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class InflateLimits:
    """How far reading a log may go before the run stops (exit 2): a gzip'd
    log inflates to at most `max_bytes`, and at most `max_ratio` times its
    compressed size (a log compresses 10 to 20 times; a decompression bomb a
    thousand; inflating to INFLATE_ALWAYS_BYTES is allowed whatever the
    ratio); a log has at most `max_columns` columns."""

    max_bytes: int = 4 << 30
    max_ratio: int = 100
    max_columns: int = MAX_COLUMNS


#: What a .gz file may always inflate to, whatever its ratio (a small file of
#: repeated rows compresses far more than a night's log).
INFLATE_ALWAYS_BYTES = 16 << 20

#: The limits unless the command line raises them.
DEFAULT_INFLATE_LIMITS = InflateLimits()
_inflate_limits = DEFAULT_INFLATE_LIMITS


@contextmanager
def inflate_limits(limits: InflateLimits):
    """Read .gz logs under `limits` within the block (the reading is many
    calls deep, in every engine; forked workers inherit the setting)."""
    global _inflate_limits
    before, _inflate_limits = _inflate_limits, limits
    try:
        yield
    finally:
        _inflate_limits = before


def current_inflate_limits() -> InflateLimits:
    return _inflate_limits


def read_bytes(path: Path) -> bytes:
    try:
        if path.name.lower().endswith(".gz"):
            return _inflated(path, _inflate_limits)
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise LogFileError(path, f"cannot be read: {exc}") from None


def read_bytes_hashed(path: Path) -> tuple[bytes, str]:
    """A file's content (a .gz file's inflated, under the limits) and the
    SHA-256 of the bytes on disk, from ONE opened file: a file renamed over
    between a hash's open and a parser's would otherwise put one file's
    hash beside another file's rows."""
    try:
        with open(path, "rb") as fh:
            hashed = _HashedReader(fh)
            if path.name.lower().endswith(".gz"):
                data = _inflated(path, _inflate_limits, hashed)
                hashed.drain()
            else:
                data = hashed.read()
        return data, hashed.digest.hexdigest()
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise LogFileError(path, f"cannot be read: {exc}") from None


#: Bytes looked at a time where a file's bytes are only scanned (line breaks
#: counted or found) or hashed: a block at a time, not the whole file.
SCAN_BLOCK_BYTES = 1 << 24


def line_blocks(data: bytes, size: int):
    """The (start, end) of each block of whole lines of `data`, each about
    `size` bytes: a block ends just after the first line break past `size`
    bytes (a line longer than that in one block; the last block at the end
    of `data`). A line break is never inside a character, so each block is
    text on its own."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start + size)
        end = len(data) if end < 0 else end + 1
        yield start, end
        start = end


#: A piece of a split file as a worker reads it (`auditor.run.pieces`):
#: rows [a, b) of a plain Parquet file (bytes [a, b) of a plain JSON Lines
#: or CSV file), whether to hash the whole file (its first piece does), and,
#: for a piece of text, None or (offset, line breaks before it) as the first
#: pass counted them, from which its first line's number is found.
PieceSpan = tuple[int, int, bool, tuple[int, int] | None]


def read_range_hashed(path: Path, a: int, b: int, hashed: bool,
                      counted: tuple[int, int] | None = None) -> tuple[bytes, str, int]:
    """Bytes [a, b) of a plain file (a piece of a split JSON Lines or CSV file:
    `auditor.run.pieces`), the SHA-256 of the whole file when `hashed` (else
    ""), and the number of the line starting at `a`: from ONE opened file,
    as `read_bytes_hashed`. `counted`: (offset, line breaks before it),
    known, so only the breaks between it and `a` are counted, not every
    break before `a`."""
    try:
        with open(path, "rb") as fh:
            if hashed or counted is None:
                reader = _HashedReader(fh) if hashed else fh
                line = 1 + _line_breaks(reader, a)
            else:
                offset, breaks = counted
                between = _breaks_between(fh, min(a, offset), max(a, offset))
                line = 1 + breaks + (between if a >= offset else -between)
                reader = fh
                fh.seek(a)
            data = reader.read(max(0, b - a))
            if not hashed:
                return data, "", line
            reader.drain()
            return data, reader.digest.hexdigest(), line
    except OSError as exc:
        raise LogFileError(path, f"cannot be read: {exc}") from None


def line_breaks_between(path: Path, a: int, b: int) -> int:
    """The line breaks in bytes [a, b) of a file (a share of a split JSON
    Lines or CSV file: `auditor.run.pieces.count_share`)."""
    with open(path, "rb") as fh:
        return _breaks_between(fh, a, b)


def _breaks_between(fh, a: int, b: int) -> int:
    """The line breaks in bytes [a, b) of an opened file."""
    fh.seek(a)
    return _line_breaks(fh, max(0, b - a))


def _line_breaks(reader, count: int) -> int:
    """The line breaks in the next `count` bytes of `reader`, read a block at
    a time into one buffer and counted with numpy (a third of
    `bytes.count`'s time)."""
    block = memoryview(bytearray(min(SCAN_BLOCK_BYTES, count)))
    breaks, pos = 0, 0
    while pos < count:
        got = reader.readinto(block[:min(len(block), count - pos)])
        if not got:
            break
        breaks += int(np.count_nonzero(np.frombuffer(block[:got], np.uint8) == 10))
        pos += got
    return breaks


class _HashedReader:
    """An opened file, hashed as it is read."""

    def __init__(self, fh):
        self._fh = fh
        self.digest = hashlib.sha256()
        self.size = os.fstat(fh.fileno()).st_size

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        self.digest.update(data)
        return data

    def readinto(self, buffer) -> int:
        got = self._fh.readinto(buffer)
        self.digest.update(buffer[:got])
        return got

    def drain(self) -> None:
        while self.read(1 << 20):
            pass


def _inflated(path: Path, limits: InflateLimits, source=None) -> bytes:
    """A .gz file's content, inflated a block at a time and refused
    (LogFileError) as soon as it passes `limits`: a 1 MB file inflating to
    1 GiB costs at most the limit, never the gigabyte. `source`: the file
    already opened (`read_bytes_hashed`)."""
    packed = source.size if source is not None else path.stat().st_size
    cap, by_ratio = inflate_cap(packed, limits)
    blocks, total = [], 0
    opened = gzip.GzipFile(fileobj=source, mode="rb") if source is not None \
        else gzip.open(path, "rb")  # noqa: SIM115 - closed by the `with` below
    with opened as fh:
        while block := fh.read(1 << 20):
            total += len(block)
            if total > cap:
                raise LogFileError(path, too_inflated(packed, limits, by_ratio))
            blocks.append(block)
    return b"".join(blocks)


def ratio_cap(packed: int, limits: InflateLimits) -> int:
    """What a file of `packed` bytes may inflate (or decode) to by the ratio
    alone: `max_ratio` times its size, INFLATE_ALWAYS_BYTES at least."""
    return max(limits.max_ratio * packed, INFLATE_ALWAYS_BYTES)


def inflate_cap(packed: int, limits: InflateLimits) -> tuple[int, bool]:
    """The most a file of `packed` bytes may inflate to, and whether the
    ratio (not `max_bytes`) sets it."""
    by_ratio = ratio_cap(packed, limits)
    return min(limits.max_bytes, by_ratio), by_ratio <= limits.max_bytes


def too_inflated(packed: int, limits: InflateLimits, by_ratio: bool,
                 verb: str = "inflates to") -> str:
    if by_ratio:
        return (f"{verb} more than {limits.max_ratio} times its {packed:,} bytes "
                f"(a decompression bomb?); --max-inflate-ratio raises the limit")
    return (f"{verb} more than {limits.max_bytes:,} bytes; --max-inflated-bytes raises "
            f"the limit")


def clip(text: str) -> str:
    """A rejected row (wrong cell count, a line that is not JSON) as kept in
    the quarantine: whole up to MAX_CELL_BYTES of UTF-8, the limit of a
    cell; a longer one (an unclosed quote can take the rest of a file) keeps
    its first CELL_KEEP_CHARS characters, its length and the SHA-256 of the
    whole, so the row can be found and matched in the file."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_CELL_BYTES:
        return text
    return (f"{text[:CELL_KEEP_CHARS]}… [{len(text)} characters, {len(data)} bytes, truncated; "
            f"SHA-256 of the whole row: {hashlib.sha256(data).hexdigest()}]")


def arrow_message(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
