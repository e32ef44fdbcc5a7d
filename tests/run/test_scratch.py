"""The audit's temporary folders (`auditor.run.scratch`): named for their
host and process, and those of an audit that was killed removed by the
next; nothing else in TMPDIR touched."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from auditor.run import scratch

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the sweep runs on POSIX only")


def a_finished_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def mark(pid: int) -> str:
    return f"{scratch.PREFIX}{scratch._host()}-{pid}-"


def aged(path, seconds: float = scratch.STALE_SECONDS + 60):
    """`path` made to look unchanged for `seconds`."""
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)
    return path


def test_a_folder_of_an_ended_audit_is_swept_and_every_other_entry_stays(tmp_path):
    dead, alive = a_finished_pid(), os.getppid()
    (tmp_path / f"{mark(dead)}spill-x1").mkdir()
    (tmp_path / f"{mark(dead)}spill-x1" / "part.pkl").write_bytes(b"rows")
    aged(tmp_path / f"{mark(dead)}spill-x1")
    (tmp_path / f"{mark(dead)}dask-x2").mkdir()
    aged(tmp_path / f"{mark(dead)}dask-x2", 10 * 24 * 3600)
    kept = [f"{mark(alive)}spill-x3",                      # a running audit's
            f"{mark(os.getpid())}spill-x4",                # this audit's own
            f"{scratch.PREFIX}another-host-{dead}-spill-x5",  # another host's
            "auditor-report-of-mine",                      # not an audit's folder
            "dask-scratch-space"]
    for name in kept:
        (tmp_path / name).mkdir()
        aged(tmp_path / name)
    (tmp_path / f"{mark(dead)}a-file").write_text("not a folder")
    aged(tmp_path / f"{mark(dead)}a-file")
    kept.append(f"{mark(dead)}a-file")
    (tmp_path / f"{mark(dead)}spill-recent").mkdir()  # changed within the hour: the margin
    kept.append(f"{mark(dead)}spill-recent")

    removed = scratch.sweep(str(tmp_path))

    assert sorted(removed) == sorted([f"{mark(dead)}spill-x1", f"{mark(dead)}dask-x2"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


def test_a_symbolic_link_named_like_a_stale_folder_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "precious").write_text("keep me")
    room = tmp_path / "tmp"
    room.mkdir()
    link = room / f"{mark(a_finished_pid())}spill-x"
    link.symlink_to(target)
    aged(link)

    assert scratch.sweep(str(room)) == []
    assert (target / "precious").read_text() == "keep me"


def test_make_names_the_folder_for_this_audit_and_sweeps_first(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    stale = tmp_path / f"{mark(a_finished_pid())}spill-old"
    stale.mkdir()
    aged(stale)

    made = scratch.make("spill")

    assert made is not None and os.path.basename(made).startswith(f"{mark(os.getpid())}spill-")
    assert os.path.dirname(made) == str(tmp_path)
    assert not stale.exists()
    assert oct(os.stat(made).st_mode & 0o777) == oct(0o700)  # only the user's


def test_make_gives_none_where_no_folder_can_be_made(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setattr("tempfile.tempdir", None)
    # (tempfile falls back to other places when TMPDIR is unusable: make
    # mkdtemp itself fail, as a full or read-only disk does)
    monkeypatch.setattr("tempfile.mkdtemp", lambda **_: (_ for _ in ()).throw(OSError(28, "full")))

    assert scratch.make("spill") is None


def test_another_users_folder_stays(tmp_path):
    theirs = tmp_path / f"{mark(a_finished_pid())}spill-theirs"
    theirs.mkdir()
    try:
        os.chown(theirs, os.getuid() + 1, -1)
    except PermissionError:
        pytest.skip("giving a folder to another user needs root")
    aged(theirs)

    assert scratch.sweep(str(tmp_path)) == []
    assert theirs.is_dir()
