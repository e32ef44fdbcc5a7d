"""Atomic writes: a report is either all there or not there at all."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


class OutputError(Exception):
    """The output could not be written (exit 2)."""


@contextmanager
def atomic_path(target: Path):
    """Yield a temporary path in the target's folder; on success rename it
    over the target, on failure remove it and leave any earlier file intact."""
    target = Path(target)
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputError(f"{folder}: output folder is not a folder") from None
    except OSError as exc:
        raise OutputError(f"{folder}: cannot create output folder: "
                          f"{exc.strerror or exc}") from None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except OSError as exc:
        _unlink(tmp)
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_text(target: Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
