"""One log file as read, before any value is typed (`RawLog`), and what
makes a file unusable as a log (`LogFileError`, exit 2); with the few file
helpers every format's reader shares (bytes through gzip, the SHA-256 a
report cites, a rejected line clipped for the quarantine)."""

from __future__ import annotations

import gzip
import hashlib
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from auditor.errors import LogFileError

#: The largest cell accepted, in bytes of UTF-8. A longer cell quarantines
#: its row (the reason names the column and the size) and is kept in the
#: quarantine only as its first CELL_KEEP_CHARS characters.
MAX_CELL_BYTES = 1 << 20
CELL_KEEP_CHARS = 200


@dataclass
class RawRejected:
    """Rows the parser itself could not split into columns (wrong cell count,
    unparseable JSON). They are quarantined like any malformed row."""

    lines: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    #: Rows the parser did split, with a cell it found unusable (row index ->
    #: why: a JSON string holding a lone surrogate); coercion quarantines them.
    cell_problems: dict[int, list[str]] = field(default_factory=dict)


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


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_bytes(path: Path) -> bytes:
    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise LogFileError(path, f"cannot be read: {exc}") from None


def clip(text: str, keep: int = 500) -> str:
    """A rejected line as kept in the quarantine: at most `keep` characters."""
    return text if len(text) <= keep else f"{text[:keep]}… [{len(text)} characters, truncated]"


def arrow_message(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
