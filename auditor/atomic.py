"""Atomic writes: a report is either all there or not there at all.

`atomic_path` writes each file to a temporary file in the target's folder and
renames it into place. Inside `commit_together()` (every `auditor` command
runs inside one) the renames wait until the block ends well, and then happen
together with SIGINT and SIGTERM held off: a report of several files never
appears half-written, and a failed or interrupted run leaves every earlier
file as it was and no temporary file behind.

`report_folder` does the same for a whole folder (`--out`): built aside and
swapped into place under a lock, so that no file of an earlier run survives
beside the new ones.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Callable
from contextlib import contextmanager, suppress
from pathlib import Path

from auditor.errors import OutputError

#: Open `commit_together` blocks, innermost last: (temporary, target) pairs
#: waiting to be renamed.
_BATCHES: list[list[tuple[str, Path]]] = []

#: Interruptions (SIGINT, SIGTERM) the CLI received, recorded as they arrive:
#: also those Python could not raise (a finalizer, an at-fork callback) and
#: those a library caught and turned into an error of its own. A block that
#: ends with one pending commits nothing and raises it.
PENDING_INTERRUPTIONS: list[BaseException] = []

#: Open `commit_together` blocks' actions to run once their files are in place.
_AFTERWARDS: list[list[Callable[[], None]]] = []


def _make_folder(folder: Path, named: Path) -> None:
    """`folder` (and its parents) made if missing; OutputError, naming it as
    the user did (`named`), when it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputError(f"{named}: output folder is not a folder") from None
    except OSError as exc:
        raise OutputError(f"{named}: cannot create output folder: "
                          f"{exc.strerror or exc}") from None


@contextmanager
def atomic_path(target: Path):
    """Yield a temporary path in the target's folder; on success rename it
    over the target (at the end of the enclosing `commit_together` block, if
    any), on failure remove it and leave any earlier file intact."""
    target = Path(target)
    folder = target.parent
    _make_folder(folder, folder)
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


@contextmanager
def held_renames():
    """Hold back the renames of every `atomic_path` inside the block and
    yield them, neither done nor undone: (temporary, target) pairs for
    `adopt_renames` to hand to a `commit_together` block of another process
    (a report format written in a process of its own). On an error or an
    interruption in the block, its temporary files are removed."""
    pending: list[tuple[str, Path]] = []
    _BATCHES.append(pending)
    try:
        yield pending
    except BaseException:
        discard_renames(pending)
        raise
    finally:
        _BATCHES.remove(pending)


def adopt_renames(pending: list[tuple[str, Path]]) -> None:
    """Renames `held_renames` held back (in this process or another): held
    by the enclosing `commit_together` block with its own, or done now."""
    if _BATCHES:
        _BATCHES[-1].extend(pending)
    else:
        _commit(pending)


def discard_renames(pending: list[tuple[str, Path]]) -> None:
    """The temporary files of renames held back, removed: no target touched."""
    for tmp, _ in pending:
        _unlink(tmp)


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


# --- a report folder, written as a set ---------------------------------------------------------

#: What an interrupted `atomic_path` or `_commit` leaves in a folder.
LEFTOVER_SUFFIXES = (".tmp", ".bak")
#: renameat2's flag swapping two paths in one step (Linux 3.15 and later).
_RENAME_EXCHANGE = 2


class ReportFolder:
    """`--out DIR` while a run writes it: `staging`, the fresh sibling folder
    the run writes its files into; `out`, where it appears whole."""

    def __init__(self, out: Path, staging: Path):
        self.out = out
        self.staging = staging


@contextmanager
def report_folder(out: Path, own_names=frozenset()):
    """Write a report folder as a set. The run holds a lock beside `out`
    (a second run into the same folder fails at once, clearly), removes what
    killed runs left (half-built siblings, temporary files), builds its
    files in a fresh sibling folder (`ReportFolder.staging`) and, when the
    block ends well, swaps it with `out` in one step (two renames where the
    file system cannot swap) and deletes the earlier folder: a reader only
    ever finds one whole run, and no file of an earlier run survives.

    `own_names` are the file names the auditor writes. Any other file in
    `out` (not listed in its manifest.json either) is the user's: it is kept,
    carried into the new folder; a folder the auditor did not write is
    refused (it could not be carried over safely)."""
    out = Path(out)
    parent, name = out.absolute().parent, out.absolute().name
    _check_replaceable(out)
    _make_folder(parent, out.parent)
    _recover_aside(parent, name)
    created = not out.exists()  # made only to be locked: gone again if no report comes
    swapped = False
    lock = _lock(out)
    try:
        _recover(parent, name)
        _foreign(out, own_names)  # refused now, before the run, if it holds folders
        staging = parent / f".{name}.new-{os.getpid()}"
        _rmtree(staging)
        try:
            staging.mkdir()
            os.chmod(staging, 0o777 & ~_umask())
        except OSError as exc:
            raise OutputError(f"{out}: cannot write: {exc.strerror or exc}") from None
        ok = False
        try:
            yield ReportFolder(out, staging)
            ok = True
        except BaseException as exc:
            ok = _ends_well(exc)
            raise
        finally:
            if ok and not PENDING_INTERRUPTIONS:
                _swap_in(staging, out.absolute(), own_names)
                swapped = True
            else:
                _rmtree(staging)
                if ok:
                    raise PENDING_INTERRUPTIONS[0]
    finally:
        if created and not swapped:
            with suppress(OSError):  # (not empty: something else put files there)
                out.rmdir()
        HELD_LOCKS.discard(lock)
        os.close(lock)


#: The report folders' locks this process holds (their descriptors): what a
#: forked worker closes at its start (`release_inherited_locks`).
HELD_LOCKS: set[int] = set()


def release_inherited_locks() -> None:
    """In a forked worker: close the report folder locks it inherited, so
    that only the audit that took a lock holds it (the lock is the open
    file's: a worker outliving its parent would hold it)."""
    for fd in list(HELD_LOCKS):
        with suppress(OSError):
            os.close(fd)
    HELD_LOCKS.clear()


def _check_replaceable(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: --out names a file, not a folder")
    here = Path.cwd().resolve()
    target = out.resolve()
    if target == here or target in here.parents:
        raise OutputError(f"{out}: --out is the current folder or holds it; the report "
                          f"folder is replaced whole at each run: name a folder of its own")


def _lock(out: Path) -> int:
    """An exclusive lock on the folder `out` itself (created empty if need
    be), kept until closed; the system drops it when the process ends,
    however it ends. A run swaps a new folder in, so the lock is taken again
    should `out` have been swapped between opening and locking it."""
    import fcntl

    for _ in range(10):
        try:
            out.mkdir(exist_ok=True)
            fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise OutputError(f"{out}: cannot write: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OutputError(f"{out}: another audit is writing this report folder; wait "
                              f"for it to end, or choose another --out") from None
        here, locked = _same_folder(out, fd)
        if here:
            HELD_LOCKS.add(fd)
            return fd
        os.close(fd)
        if not locked:
            continue
    raise OutputError(f"{out}: another audit is writing this report folder; wait "
                      f"for it to end, or choose another --out")


def _same_folder(out: Path, fd: int) -> tuple[bool, bool]:
    try:
        now, held = os.stat(out), os.fstat(fd)
    except OSError:
        return False, True
    return (now.st_ino, now.st_dev) == (held.st_ino, held.st_dev), True


def _recover_aside(parent: Path, name: str) -> None:
    """A run killed between its two renames (where the system cannot swap)
    left no folder at `out` and the earlier one aside: put it back."""
    out = parent / name
    aside = sorted(parent.glob(f".{name}.old-*"), key=lambda p: p.stat().st_mtime)
    if aside and not out.exists():
        with suppress(OSError):
            os.rename(aside[-1], out)


def _recover(parent: Path, name: str) -> None:
    """Remove what killed runs left: half-built siblings, earlier folders
    set aside, temporary files. Called under the lock, so nothing else is
    writing them."""
    out = parent / name
    for leftover in (*parent.glob(f".{name}.old-*"), *parent.glob(f".{name}.new-*")):
        _rmtree(leftover)
    if out.is_dir():
        for entry in out.iterdir():
            if entry.name.startswith(".") and entry.name.endswith(LEFTOVER_SUFFIXES) \
                    and entry.is_file():
                _unlink(str(entry))


def _foreign(out: Path, own_names) -> list[Path]:
    """What in `out` the auditor did not write: not one of `own_names`, not
    listed in the folder's manifest.json. Only files (and links) can be kept
    across runs; a folder among them is refused."""
    if not out.is_dir():
        return []
    own = set(own_names) | set(_manifest_names(out))
    foreign = [e for e in sorted(out.iterdir()) if e.name not in own]
    folders = [e.name for e in foreign if e.is_dir() and not e.is_symlink()]
    if folders:
        shown = ", ".join(folders[:5]) + (f" and {len(folders) - 5} more"
                                          if len(folders) > 5 else "")
        raise OutputError(f"{out}: holds folders the auditor did not write ({shown}); the "
                          f"report folder is replaced whole at each run: name a new or "
                          f"empty folder, or move them")
    return foreign


def _carry(foreign: list[Path], staging: Path) -> None:
    """The user's own files of `out` into the new folder: hard links (the
    same files, not copies; a copy where a link is refused), links as links."""
    import shutil

    for entry in foreign:
        target = staging / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), target)
            continue
        try:
            os.link(entry, target, follow_symlinks=False)
        except OSError:
            shutil.copy2(entry, target)


def _manifest_names(out: Path) -> list[str]:
    import json

    try:
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        return ["manifest.json", *(str(f["name"]) for f in manifest["files"])]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _swap_in(staging: Path, out: Path, own_names) -> None:
    """Put `staging` at `out` (signals held off): the user's own files of
    `out` carried over, then one swap where the system has one, else the
    earlier folder renamed aside and the new one in (a reader may then find
    no folder for that instant); the earlier folder is deleted after."""
    held = _hold_signals()
    try:
        try:
            _carry(_foreign(out, own_names), staging)
        except OSError as exc:
            raise OutputError(f"{out}: cannot keep its other files: "
                              f"{exc.strerror or exc}") from None
        if not out.exists():
            _rename(staging, out)
            return
        if _exchange(staging, out):
            _rmtree(staging)  # the earlier folder, now under the sibling's name
            return
        aside = out.parent / f".{out.name}.old-{os.getpid()}"
        _rename(out, aside)
        try:
            _rename(staging, out)
        except OutputError:
            os.rename(aside, out)
            raise
        _rmtree(aside)
    except BaseException:
        _rmtree(staging)
        raise
    finally:
        _release_signals(held)


def _rename(src: Path, dst: Path) -> None:
    try:
        os.rename(src, dst)
    except OSError as exc:
        raise OutputError(f"{dst}: cannot write: {exc.strerror or exc}") from None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux renameat2 RENAME_EXCHANGE);
    False where the system or file system cannot."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd = -100
    done = renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), _RENAME_EXCHANGE)
    return done == 0


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
