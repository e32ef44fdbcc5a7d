"""Find the log files under the paths given: a file by the format its name
announces, a folder searched recursively, in a stable order."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import LogFileError, is_text

LOG_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")


def format_from_name(path: Path) -> str | None:
    """The format a file name announces (`csv`, `jsonl`, `parquet`), or None:
    a test of names, unlike `auditor.generate.log_format` (which raises)."""
    name = path.name.lower()
    name = name.removesuffix(".gz")
    for suffix in LOG_SUFFIXES:
        if name.endswith(suffix):
            return "jsonl" if suffix == ".ndjson" else suffix[1:]
    return None


def plain_format(path: Path) -> str | None:
    """The format a file name announces when it is not gzip'd (None for a
    gzip'd file): one that can be read in part without inflating it whole."""
    return None if path.name.lower().endswith(".gz") else format_from_name(path)


def plain_parquet(path: Path) -> bool:
    """Whether `path` is named as a Parquet file not gzip'd: one whose footer
    can be read without reading its rows (to plan, or to cut it in pieces)."""
    return plain_format(path) == "parquet"


def discover(paths: list[str | Path]) -> list[Path]:
    """Every log file named or found (recursively) under the given paths, in a
    stable order so two runs read the same files in the same order. Anything
    named like a log that is not a regular file (a dangling or looping link,
    a pipe, a device) stops the run naming it: never skipped, never opened
    (a pipe would block the read)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for p in sorted(path.rglob("*")):
                if not format_from_name(p) or (p.is_dir() and not p.is_symlink()):
                    continue  # (a folder named like a log is searched like any other)
                if _left_out(p, path):
                    continue
                problem = not_a_regular_file(p)
                if problem:
                    raise LogFileError(p, f"{problem} (named like a log, so not skipped: "
                                       "remove or rename it)")
                found.append(p)
            continue
        if _left_out(path, None):
            continue
        problem = not_a_regular_file(path)
        if problem:
            raise LogFileError(path, problem)
        if not format_from_name(path):
            raise LogFileError(
                path, "not a log file name (expected .csv, .jsonl, .ndjson or "
                ".parquet, optionally .gz)"
            )
        found.append(path)
    unique: dict[str, Path] = {}
    for p, real in zip(found, real_paths(found)):
        unique.setdefault(real, p)
    return list(unique.values())


def real_paths(files: list[Path]) -> list[str]:
    """`str(f.resolve())` of each file (what tells two names of one file
    apart, and the path a dask worker opens), each folder resolved once:
    only a file that is itself a link is resolved whole. Resolving every
    file's every folder again cost 50 us a file (a state's year of
    146,000 files: some 7 s)."""
    folders: dict[str, str] = {}
    out = []
    for path in files:
        if path.is_symlink():
            out.append(str(path.resolve()))
            continue
        folder = str(path.parent)
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = str(path.parent.resolve())
        out.append(os.path.join(real, path.name))
    return out


@dataclass
class LeftOut:
    """Files an audit leaves out on purpose, and says so: those matching an
    `--exclude` glob (`excluded`: file -> the glob, as found) and those
    `--keep-going` found unreadable (`unreadable`: file as found -> reason).
    Discovery skips both, in every engine and every re-read of the logs
    (forked workers inherit the setting)."""

    globs: tuple[str, ...] = ()
    unreadable: dict[str, str] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)


_LEFT_OUT: LeftOut | None = None


@contextmanager
def leaving_out(left: LeftOut) -> Iterator[LeftOut]:
    """Discover logs without the files `left` names or matches, within the
    block; `left.excluded` gathers the files its globs left out."""
    global _LEFT_OUT
    before, _LEFT_OUT = _LEFT_OUT, left
    try:
        yield left
    finally:
        _LEFT_OUT = before


def excluded_by(path: Path, root: Path | None, globs: tuple[str, ...]) -> str | None:
    """The first glob matching `path`'s name or its path below `root` (the
    folder given; `*` crosses folders there, as in `casino-c/*`), or None."""
    rel = path.as_posix()
    if root is not None:
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            pass
    for glob in globs:
        if fnmatch.fnmatchcase(path.name, glob) or fnmatch.fnmatchcase(rel, glob) \
                or fnmatch.fnmatchcase(path.as_posix(), glob):
            return glob
    return None


def _left_out(path: Path, root: Path | None) -> bool:
    left = _LEFT_OUT
    if left is None:
        return False
    if str(path) in left.unreadable:
        return True
    glob = excluded_by(path, root, left.globs) if left.globs else None
    if glob is not None:
        left.excluded.setdefault(str(path), glob)
        return True
    return False


#: Why a file whose path is not UTF-8 text is not read (decision 118).
NAME_NOT_TEXT = ("its name is not UTF-8 text (the bytes shown as \\xNN are not), so no report "
                 "could name it as it is; rename it (e.g. `convmv -f latin1 -t utf-8`) to "
                 "audit it")


def not_readable(path: Path) -> str | None:
    """Why `path` is not read as a log (None: it is read): `not_a_regular_file`,
    or a path that is not UTF-8 text (decision 118)."""
    return NAME_NOT_TEXT if not is_text(str(path)) else not_a_regular_file(path)


def not_a_regular_file(path: Path) -> str | None:
    """What `path` is when it cannot be read as a log file (None for a
    regular file, or a link to one): looked at, never opened."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a symbolic link to a missing file, not a regular file; a log must be one" \
            if path.is_symlink() else "no such file or folder"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link that loops, not a regular file; a log must be one"
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    for test, kind in _KINDS:
        if test(mode):
            break
    else:
        kind = "not a file"
    return f"{kind}, not a regular file; a log must be one"


_KINDS = (
    (stat.S_ISDIR, "a symbolic link to a folder (not followed)"),  # (a folder: searched)
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def discover_logs(paths: list[str | Path]) -> list[Path]:
    """`discover`, and a LogFileError when nothing under `paths` is a log: an
    audit of nothing must not pass as an audit that found nothing."""
    files = discover(paths)
    if not files:
        raise LogFileError(", ".join(map(str, paths)), "no log files found "
                           "(.csv, .jsonl, .ndjson, .parquet, optionally .gz)")
    return files
