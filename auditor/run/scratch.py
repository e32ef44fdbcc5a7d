"""Folders of the system's temporary space (TMPDIR) an audit's processes
share: where `--jobs` and dask's local workers spill each die's rows
(decision 105) and where a local dask cluster keeps its workers' own
files. The audit removes its folders as it ends, on an error or on SIGINT
and SIGTERM; a SIGKILL (a CI job's hard timeout) gives it no chance. So
each folder is named for its audit, `auditor-HOST-PID-…`, and a later
audit on the same host removes those whose process no longer runs (and
that have not changed for an hour): a regulator's year of batches, some
killed, leaves no pile behind.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

#: What starts every such folder's name: its audits' marks follow.
PREFIX = "auditor-"
#: How long a folder must have gone unchanged before it is swept: its
#: process gone is the test; this is the margin for a process the host's
#: table does not show (a container sharing TMPDIR and the host's name but
#: not its processes), whose folder changes as its workers write.
STALE_SECONDS = 3600


def _host() -> str:
    """This host's name as a folder name may carry it (its letters, digits
    and dashes, at most 32): two hosts sharing one TMPDIR sweep only their
    own folders."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:32] or "host"


def _mark() -> str:
    return f"{PREFIX}{_host()}-{os.getpid()}-"


def make(kind: str = "", root: str | None = None) -> str | None:
    """A fresh folder of TMPDIR (or of `root`: `--scratch`) named for this
    audit (`kind` names what it holds), only the user's; earlier audits'
    folders whose process is gone removed first. None where none can be
    made (a read-only or full TMPDIR): the caller then does without one."""
    sweep(root)
    try:
        return tempfile.mkdtemp(prefix=_mark() + (f"{kind}-" if kind else ""), dir=root)
    except OSError:
        return None


def remove(folder: str | None) -> None:
    """A folder `make` gave removed with all it holds (None: none was made)."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def sweep(root: str | None = None) -> list[str]:
    """Remove the folders of `root` (TMPDIR) that an audit on this host
    made and left behind as it was killed: its process no longer runs and
    the folder has not changed for `STALE_SECONDS`. A folder of a running
    audit, of another user or of another host stays.
    The names removed, for the tests. Only on POSIX, where a process can be
    asked whether it runs without being touched."""
    if os.name != "posix":
        return []
    root = root or tempfile.gettempdir()
    pattern = re.compile(re.escape(PREFIX + _host()) + r"-(\d+)-")
    removed: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        found = pattern.match(entry.name)
        if found is None or int(found.group(1)) == os.getpid() or _running(int(found.group(1))):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid != os.getuid() or time.time() - info.st_mtime < STALE_SECONDS:
            continue
        remove(str(Path(root) / entry.name))
        removed.append(entry.name)
    return removed


def _running(pid: int) -> bool:
    """Whether process `pid` runs on this host (as anyone's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's, or no pid at all: not ours to judge
    return True
