"""The audit's temporary folders (`auditor.run.scratch`): named for their
host and process, and those of an audit that was killed removed by the
next; nothing else in TMPDIR touched."""

from __future__ import annotations

import os
import subprocess
import sys

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


def test_a_folder_of_an_ended_audit_is_swept_and_every_other_entry_stays(tmp_path):
    dead, alive = a_finished_pid(), os.getppid()
    (tmp_path / f"{mark(dead)}spill-x1").mkdir()
    (tmp_path / f"{mark(dead)}spill-x1" / "part.pkl").write_bytes(b"rows")
    (tmp_path / f"{mark(dead)}dask-x2").mkdir()
    kept = [f"{mark(alive)}spill-x3",                      # a running audit's
            f"{mark(os.getpid())}spill-x4",                # this audit's own
            f"{scratch.PREFIX}another-host-{dead}-spill-x5",  # another host's
            "auditor-report-of-mine",                      # not an audit's folder
            "dask-scratch-space"]
    for name in kept:
        (tmp_path / name).mkdir()
    (tmp_path / f"{mark(dead)}a-file").write_text("not a folder")
    kept.append(f"{mark(dead)}a-file")

    removed = scratch.sweep(str(tmp_path))

    assert sorted(removed) == sorted([f"{mark(dead)}spill-x1", f"{mark(dead)}dask-x2"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


def test_a_symbolic_link_named_like_a_stale_folder_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "precious").write_text("keep me")
    room = tmp_path / "tmp"
    room.mkdir()
    (room / f"{mark(a_finished_pid())}spill-x").symlink_to(target)

    assert scratch.sweep(str(room)) == []
    assert (target / "precious").read_text() == "keep me"


def test_make_names_the_folder_for_this_audit_and_sweeps_first(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    stale = tmp_path / f"{mark(a_finished_pid())}spill-old"
    stale.mkdir()

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
