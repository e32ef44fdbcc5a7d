"""Faults: an interrupted run (SIGINT, SIGTERM) leaves no partial report and
no temporary file and exits 130 or 143; a write that fails (disk full, a
folder that cannot be written, `--out` naming a file) exits 2 with one clear
line and leaves the earlier report byte for byte as it was."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builder import lawful_table
from builder import run_cli as run

import auditor.report.parquet as parquet_format
from auditor.atomic import atomic_path, commit_together
from auditor.cli import Terminated
from auditor.errors import OutputError
from auditor.generate import generate, write_log


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (temporary ones included) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def earlier(tmp_path):
    """A folder holding the report of an earlier run, and a new log whose
    report would differ from it."""
    old = lawful_table()
    old.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    out = tmp_path / "reports"
    res = run("check", old.write_csv(tmp_path / "old.csv"), "-r", "nz-table-games", "--out", out)
    assert res.exit_code == 0, res.output
    new = lawful_table()
    new.roll(2, 3, 4)
    new.call(7)
    new.collect(flags="no_stick")
    new.add("dice_inspectd", role="dealer")
    return out, snapshot(out), new.write_csv(tmp_path / "new.csv")


def assert_untouched(out: Path, before: dict[str, bytes]) -> None:
    after = snapshot(out)
    assert not [name for name in after if name.endswith(".tmp")], sorted(after)
    assert after == before


# --- write errors -------------------------------------------------------------------------

def _failing_writer(fail_on: int, error: OSError):
    real = parquet_format.pq.write_table
    calls = []

    def write_table(table, where, **kwargs):
        calls.append(where)
        if len(calls) == fail_on:
            where.write(b"PAR1 half a file")  # what a full disk leaves behind (in its sink)
            raise error
        return real(table, where, **kwargs)
    return write_table


@pytest.mark.parametrize("fail_on", [1, 2])
def test_disk_full_keeps_the_earlier_report(earlier, monkeypatch, fail_on):
    out, before, log = earlier
    monkeypatch.setattr(parquet_format.pq, "write_table",
                        _failing_writer(fail_on, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))))
    res = run("check", log, "-r", "nz-table-games", "--out", out)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "No space left on device" in lines[0] and ".parquet" in lines[0]
    assert_untouched(out, before)


def test_rename_refused_keeps_the_earlier_report(earlier, monkeypatch):
    """A read-only file system refuses the final rename (we run as root, so
    chmod would not stop us: the refusal is simulated)."""
    out, before, log = earlier
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(src, dst)
    monkeypatch.setattr(os, "replace", replace)
    res = run("check", log, "-r", "nz-table-games", "--out", out)
    assert res.exit_code == 2 and "Read-only file system" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    # the first file was renamed before the second failed: it gets its
    # earlier bytes back
    assert_untouched(out, before)


def test_temporary_file_refused(earlier, monkeypatch):
    out, before, log = earlier

    def mkstemp(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    monkeypatch.setattr("auditor.atomic.tempfile.mkstemp", mkstemp)
    res = run("check", log, "-r", "nz-table-games", "--out", out)
    assert res.exit_code == 2 and "Permission denied" in res.output, res.output
    assert_untouched(out, before)


@pytest.mark.parametrize("where", ["file", "file_as_folder", "proc"])
def test_unwritable_out(tmp_path, earlier, where):
    _, _, log = earlier
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    out = {"file": afile, "file_as_folder": afile / "reports",
           "proc": Path("/proc/auditor-no-such-folder/reports")}[where]
    res = run("check", log, "-r", "nz-table-games", "--out", out)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(out.parent) in lines[0]
    assert afile.read_text() == "keep me"


def test_commit_together_is_all_or_nothing(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a")
    with pytest.raises(OutputError), commit_together():
        with atomic_path(a) as tmp:
            tmp.write_text("new a")
        assert a.read_text() == "old a"  # not yet in place
        with atomic_path(b) as tmp:
            raise OSError(errno.ENOSPC, "No space left on device")
    assert a.read_text() == "old a" and not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    with commit_together():
        with atomic_path(a) as tmp:
            tmp.write_text("new a")
        with atomic_path(b) as tmp:
            tmp.write_text("new b")
    assert a.read_text() == "new a" and b.read_text() == "new b"
    for code, kept in ((0, True), (1, True), (2, False)):
        with pytest.raises(SystemExit), commit_together():
            with atomic_path(a) as tmp:
                tmp.write_text(f"exit {code}")
            raise SystemExit(code)
        assert (a.read_text() == f"exit {code}") is kept


# --- interruptions, in this process ----------------------------------------------------------

@pytest.mark.parametrize("signum,code,word", [(signal.SIGTERM, 143, "terminated"),
                                              (signal.SIGINT, 130, "interrupted")])
def test_signal_while_writing_leaves_no_partial_report(earlier, monkeypatch, signum, code, word):
    out, before, log = earlier
    real = parquet_format.pq.write_table
    calls = []

    def write_table(table, where, **kwargs):
        calls.append(where)
        real(table, where, **kwargs)
        if len(calls) == 2:  # the findings are written, the quarantine half-way
            os.kill(os.getpid(), signum)
            time.sleep(5)  # the handler raises here
            raise AssertionError("the signal did not interrupt the run")
    monkeypatch.setattr(parquet_format.pq, "write_table", write_table)
    handler = signal.getsignal(signal.SIGTERM)
    res = run("check", log, "-r", "nz-table-games", "--out", out)
    assert res.exit_code == code, res.output
    assert word in res.output and "Traceback" not in res.output
    assert_untouched(out, before)
    assert signal.getsignal(signal.SIGTERM) is handler  # the previous handler is back


@pytest.mark.parametrize("signum,code,word", [(signal.SIGTERM, 143, "terminated"),
                                              (signal.SIGINT, 130, "interrupted")])
def test_an_interruption_a_library_turned_into_its_own_error_still_stops_the_run(
        earlier, monkeypatch, signum, code, word):
    """pyarrow, importing its time zones when SIGINT arrived, caught the
    KeyboardInterrupt and raised ArrowInvalid ("The zoneinfo module or pytz
    package must be installed"): the run ended as an internal error (exit 2).
    An interruption is recorded as it arrives, so the run ends as
    interrupted whatever the library made of it."""
    out, before, log = earlier
    real = parquet_format.pq.write_table

    def write_table(table, where, **kwargs):
        try:
            os.kill(os.getpid(), signum)
            time.sleep(5)  # the handler raises here
        except BaseException as exc:  # noqa: BLE001 - what a library may do
            raise ValueError(f"the module must be installed: {exc!r}") from None
        return real(table, where, **kwargs)
    monkeypatch.setattr(parquet_format.pq, "write_table", write_table)
    res = run("check", log, "-r", "nz-table-games", "--out", out)
    assert res.exit_code == code, res.output
    assert word in res.output and "internal error" not in res.output
    assert_untouched(out, before)


# --- interruptions of a real process ---------------------------------------------------------

@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    """A log that takes the auditor over a second once its handlers are in
    place, time to interrupt it (a 360,000-event log was audited in 0.25 s
    and the signal came after the run had ended)."""
    path = tmp_path_factory.mktemp("big") / "night.parquet"
    write_log(generate(tables=10, rolls=20000, seed=3).table, path)
    return path


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has its SIGTERM handler installed (so the command
    is running, not still importing)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_interrupting_a_real_run(earlier, big_log, signum, code, delay):
    """Interrupted as the command starts (loading the ruleset, opening the
    log) or while it reads and replays."""
    out, before, _ = earlier
    proc = subprocess.Popen([sys.executable, "-m", "auditor", "check", str(big_log),
                             "-r", "nz-table-games", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _catches_sigterm(proc.pid) and proc.poll() is None:
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.01)
        time.sleep(delay)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, (proc.returncode, stdout, stderr)
    assert "Traceback" not in stdout + stderr
    assert_untouched(out, before)


@pytest.mark.parametrize("interruption,code", [("Terminated", 143), ("KeyboardInterrupt", 130)])
def test_an_interruption_python_could_only_print_still_stops_the_run(earlier, monkeypatch,
                                                                      interruption, code):
    """A signal that arrives in a finalizer or an at-fork callback (forking
    the workers of --jobs) raises where Python can only print it ("Exception
    ignored in ..."). The run must still end as interrupted, keep nothing and
    print no traceback."""
    error = Terminated if interruption == "Terminated" else KeyboardInterrupt
    out, before, log = earlier
    real = parquet_format.pq.write_table

    class Finalizer:
        def __del__(self):
            raise error()

    def write_table(table, where, **kwargs):
        Finalizer()  # collected at once: its exception cannot propagate
        return real(table, where, **kwargs)
    monkeypatch.setattr(parquet_format.pq, "write_table", write_table)
    res = run("check", log, "-r", "nz-table-games", "--out", out)
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output and "Exception ignored" not in res.output
    assert_untouched(out, before)
