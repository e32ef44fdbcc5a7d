"""The one guarded reader of every TOML and JSON file the auditor is told
to read beside the logs: a ruleset, the project configuration, a waiver
file, a baseline. Each is a regular file (a device or a pipe could be read
forever or block), of at most a size, UTF-8, nested and dotted no deeper
than a parser handles in bounded time and memory; every refusal names the
file (`fail(problem)` makes the caller's error)."""

from __future__ import annotations

import json
import re
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: A dotted key (`rule.params.x`) may have at most this many parts and this
#: many characters: Python's TOML parser takes time and memory quadratic in
#: the parts (20,000 in a 40 KB file: gigabytes), so they are counted first.
MAX_KEY_PARTS = 16
MAX_KEY_CHARS = 1024

Fail = Callable[[str], Exception]


def read_guarded(path: Path, limit: int, what: str, fail: Fail) -> bytes:
    """The bytes of `path`: a regular file of at most `limit` bytes, or
    `fail(problem)` raised (the file may grow after it is looked at: at
    most `limit` + 1 bytes are read)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise fail("no such file") from None
    except OSError as exc:
        raise fail(f"cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise fail("not a regular file")
    if info.st_size > limit:
        raise fail(f"file is {info.st_size} bytes; {what} may be at most {limit}")
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise fail(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise fail(f"file is over {limit} bytes; {what} may be at most {limit}")
    return data


def load_toml(path: Path, limit: int, what: str, fail: Fail) -> dict:
    """A TOML file read under `read_guarded`, parsed by `parse_toml`."""
    return parse_toml(read_guarded(path, limit, what, fail), fail)


def parse_toml(data: bytes, fail: Fail) -> dict:
    """TOML bytes read under `read_guarded`, their dotted keys measured
    before the parser sees them; `fail(problem)` for any problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"cannot be read: {exc}") from None
    check_dotted_keys(text, fail)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise fail(f"not valid TOML: {exc}") from None
    except RecursionError:
        raise fail("not valid TOML: nested too deeply") from None


def parse_json(data: bytes, fail: Fail) -> Any:
    """JSON bytes read under `read_guarded`; `fail(problem)` for any problem
    (nesting too deep for the parser included)."""
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise fail("not valid JSON: nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise fail(f"not valid JSON: {exc}") from None


#: TOML strings (multi-line first) and comments: what may hold dots that are
#: no key's. A string left open runs to the end of its line (of the text, for
#: a multi-line one): every quote is looked at once, so the scan is linear.
_TOML_STRING_OR_COMMENT = re.compile(r"""
      \"\"\"(?:[^\\]|\\.)*?\"\"\" | \"\"\".*
    | '''.*?''' | '''.*
    | "(?:[^"\\\n]|\\.)*+" | "[^\n]*
    | '[^'\n]*' | '[^\n]*
    | \#[^\n]*
""", re.DOTALL | re.VERBOSE)
#: Two or more words joined by dots (a dotted key, or a number such as 1.5),
#: each word taken whole once (possessive, and only at a word's start).
_DOTTED = re.compile(r"(?<![\w+-])[\w+-]++(?:[ \t]*+\.[ \t]*+[\w+-]++)+")


def check_dotted_keys(text: str, fail: Fail) -> None:
    """Refuse (`fail`, with the line) a dotted key of more than
    MAX_KEY_PARTS parts or MAX_KEY_CHARS characters, before the TOML parser
    sees it. Linear: strings become words of as many characters (line breaks
    kept), comments blanks, then runs of dotted words are measured."""
    def blank(m: re.Match) -> str:
        if m[0].startswith("#"):
            return " " * len(m[0])
        return "".join("\n" if c == "\n" else "s" for c in m[0])

    bare = _TOML_STRING_OR_COMMENT.sub(blank, text)
    for m in _DOTTED.finditer(bare):
        parts = m[0].count(".") + 1
        if parts > MAX_KEY_PARTS or len(m[0]) > MAX_KEY_CHARS:
            line = bare.count("\n", 0, m.start()) + 1
            raise fail(f"line {line}: a dotted key of {parts:,} parts and {len(m[0]):,} "
                       f"characters; a key may have at most {MAX_KEY_PARTS} parts and "
                       f"{MAX_KEY_CHARS} characters")
