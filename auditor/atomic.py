"""Atomic writes: a report is either all there or not there at all.

`atomic_path` writes each file to a temporary file in the target's folder and
renames it into place. Inside `commit_together()` (every `auditor` command
runs inside one) the renames wait until the block ends well, and then happen
together with SIGINT and SIGTERM held off: a report of several files never
appears half-written, and a failed or interrupted run leaves every earlier
file as it was and no temporary file behind.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from auditor.errors import OutputError

#: Open `commit_together` blocks, innermost last: (temporary, target) pairs
#: waiting to be renamed.
_BATCHES: list[list[tuple[str, Path]]] = []

#: Interruptions (SIGINT, SIGTERM) that arrived where Python could not raise
#: them (a finalizer, an at-fork callback); the CLI records them here. A block
#: that ends with one pending commits nothing and raises it.
PENDING_INTERRUPTIONS: list[BaseException] = []

#: Open `commit_together` blocks' actions to run once their files are in place.
_AFTERWARDS: list[list[Callable[[], None]]] = []


@contextmanager
def atomic_path(target: Path):
    """Yield a temporary path in the target's folder; on success rename it
    over the target (at the end of the enclosing `commit_together` block, if
    any), on failure remove it and leave any earlier file intact."""
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
    # mkstemp makes the file private (0600); a report is meant to be shared,
    # so it gets the mode any new file would get under the user's umask.
    os.chmod(tmp, 0o666 & ~_umask())
    try:
        yield Path(tmp)
        if _BATCHES:
            _BATCHES[-1].append((tmp, target))
        else:
            os.replace(tmp, target)
    except OSError as exc:
        _unlink(tmp)
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _unlink(tmp)
        raise


@contextmanager
def commit_together():
    """Hold back the renames of every `atomic_path` inside the block. When
    the block ends normally (or by exit code 0 or 1: a verdict, not an error)
    they are all done at once, SIGINT and SIGTERM held off meanwhile; when it
    ends by an error or an interruption, every temporary file is removed and
    no target is touched."""
    pending: list[tuple[str, Path]] = []
    afterwards: list[Callable[[], None]] = []
    _BATCHES.append(pending)
    _AFTERWARDS.append(afterwards)
    ok = False
    try:
        yield
        ok = True
    except BaseException as exc:
        ok = _ends_well(exc)
        raise
    finally:
        _BATCHES.remove(pending)
        _AFTERWARDS.remove(afterwards)
        if ok and not PENDING_INTERRUPTIONS:
            _commit(pending)
            for action in afterwards:
                action()
        else:
            for tmp, _ in pending:
                _unlink(tmp)
            if ok:
                raise PENDING_INTERRUPTIONS[0]


def after_commit(action: Callable[[], None]) -> None:
    """Run `action` once the files of the enclosing `commit_together` block
    are in place (now, outside one); never when they are not: what is
    printed about a report (GitHub annotations) is never printed for a
    report that was not written."""
    if _AFTERWARDS:
        _AFTERWARDS[-1].append(action)
    else:
        action()


def _ends_well(exc: BaseException) -> bool:
    if isinstance(exc, SystemExit):
        return exc.code in (None, 0, 1)
    code = getattr(exc, "exit_code", None)  # click's Exit, without importing click
    return type(exc).__name__ == "Exit" and code in (0, 1)


def _commit(pending: list[tuple[str, Path]]) -> None:
    """Rename every temporary file over its target. Should one rename fail,
    the targets already replaced get their earlier files back (kept as hard
    links meanwhile), so the folder is as it was before."""
    held = _hold_signals()
    backups: list[tuple[Path, bool, str | None]] = []
    try:
        for tmp, target in pending:
            backups.append((target, target.exists(), _backup(target)))
        for i, (tmp, target) in enumerate(pending):
            try:
                os.replace(tmp, target)
            except OSError as exc:
                for rest, _ in pending[i:]:
                    _unlink(rest)
                _restore(backups[:i])
                raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    finally:
        for _, _, backup in backups:
            if backup is not None:
                _unlink(backup)
        _release_signals(held)


def _backup(target: Path) -> str | None:
    """A hard link to the file now at `target` (None: no file, or no link)."""
    if not target.is_file():
        return None
    name = os.path.join(target.parent, f".{target.name}.{os.getpid()}.bak")
    try:
        _unlink(name)
        os.link(target, name)
    except OSError:
        return None
    return name


def _restore(done: list[tuple[Path, bool, str | None]]) -> None:
    for target, existed, backup in reversed(done):
        try:
            if not existed:
                os.unlink(target)
            elif backup is not None:
                os.replace(backup, target)
        except OSError:
            pass


_HELD = {signal.SIGINT, getattr(signal, "SIGTERM", signal.SIGINT)}


def _hold_signals():
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)


def _release_signals(previous) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_text(target: Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextmanager
def atomic_open(target: Path):
    """A binary file, open for writing, that appears at `target` as
    `atomic_path` makes it appear: for a writer that streams its bytes."""
    with atomic_path(target) as tmp, open(tmp, "wb") as out:
        yield out
