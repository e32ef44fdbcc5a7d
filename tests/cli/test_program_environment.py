"""What the `auditor` program sets for itself (`auditor/__main__.py`):
before numpy is imported, no OpenBLAS worker thread (each spins for about
0.1 s of CPU; a choice already in the environment stands, and importing the
auditor as a library changes nothing); at the end, no collection of every
object once more as Python exits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Runs the program as its script does (`auditor.__main__:run`), then says
#: what the environment holds and how many threads the process has.
PROGRAM = ("import os, sys\n"
           "import auditor.__main__ as entry\n"
           "entry.end_program = lambda code: None  # (to look at the process after)\n"
           "from auditor.__main__ import run\n"
           "sys.argv = ['auditor', '--version']\n"
           "try:\n"
           "    run()\n"
           "except SystemExit:\n"
           "    pass\n"
           "assert 'numpy' in sys.modules\n"
           "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))\n")

needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2,
                                reason="threads counted from /proc (Linux), two cores or more")


def _run(code: str, **env: str) -> list[str]:
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    return subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                          check=True, env={**environ, **env}).stdout.split()


@needs_proc
def test_the_program_starts_no_blas_threads():
    """One thread fewer than the same program given two BLAS threads: the
    worker OpenBLAS would start (the process's other threads, Arrow's
    allocator's among them, are the same in both)."""
    chosen, threads = _run(PROGRAM)[-2:]
    given_two = _run(PROGRAM, OPENBLAS_NUM_THREADS="2")[-2:]
    assert chosen == "1" and given_two[0] == "2"  # (a choice in the environment stands)
    assert int(given_two[1]) == int(threads) + 1


def test_importing_the_auditor_as_a_library_sets_nothing():
    code = ("import os, sys\nimport auditor, auditor.cli\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n")
    assert _run(code) == ["None"]


def test_what_the_program_loads_is_not_collected_as_it_loads():
    """Counted from the program's first line: the collector stays off from
    before the program imports anything beyond what Python itself loaded at
    start-up (`auditor/__init__.py` imports only `gc` and `os`), whatever
    a site's .pth files happened to import first. Measured as installed,
    with its first two files' bytecode cached (pip compiles it; a checkout
    run under PYTHONDONTWRITEBYTECODE would otherwise count Python
    compiling `auditor/__init__.py` and `auditor/__main__.py`)."""
    with_bytecode = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-P", "-c", "import auditor.__main__"], check=True,
                   env=with_bytecode)
    code = ("import gc, sys\n"
            "collections = []\n"
            "gc.callbacks.append(lambda phase, info: collections.append(phase))\n"
            "import auditor.__main__ as entry\n"
            "entry.end_program = lambda code: None\n"
            "from auditor.__main__ import run\n"
            "sys.argv = ['auditor', '--version']\n"
            "try:\n"
            "    run()\n"
            "except SystemExit:\n"
            "    print(len(collections), gc.isenabled())\n")
    environ = {k: v for k, v in with_bytecode.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                         check=True, env=environ).stdout.split()
    assert out[-2:] == ["0", "True"]


def test_the_auditor_package_imports_nothing_python_had_not_loaded_at_start_up():
    """What `auditor/__init__.py` and `auditor/__main__.py` import runs
    with the collector on: only modules every Python has loaded already."""
    code = ("import sys\n"
            "before = set(sys.modules)\n"
            "import auditor.__main__\n"
            "print(*sorted(set(sys.modules) - before))\n")
    # (gc is built into the interpreter: nothing is read or compiled)
    assert _run(code) == ["auditor", "auditor.__main__", "gc"]


def test_the_program_ends_without_collecting_every_object_again():
    code = ("import gc, sys\n"
            "import auditor.__main__ as entry\n"
            "entry.end_program = lambda code: None\n"
            "from auditor.__main__ import run\n"
            "sys.argv = ['auditor', '--version']\n"
            "try:\n"
            "    run()\n"
            "except SystemExit as exc:\n"
            "    print(exc.code, gc.get_freeze_count() > 0)\n")
    assert _run(code)[-2:] == ["0", "True"]


#: A program ending through `end_program` with `code`: a thread that is not a
#: daemon still running, an `atexit` function, output not yet flushed, and a
#: C exit handler (what `exit` runs after Python's shutdown, as it runs the
#: libraries' destructors, where Arrow's thread pool can abort the process)
#: that aborts it.
ENDING = ("import atexit, ctypes, sys, threading, time\n"
          "from auditor.__main__ import end_program\n"
          "libc = ctypes.CDLL(None)\n"
          "libc.on_exit(ctypes.cast(libc.abort, ctypes.c_void_p), None)\n"
          "threading.Thread(target=lambda: (time.sleep(0.3), print('thread ended'))).start()\n"
          "atexit.register(lambda: print('atexit ran'))\n"
          "sys.stdout.write('unflushed, ')\n"
          "end_program({code})\n"
          "print('not reached')\n")


needs_glibc = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="a C exit handler registered with glibc's on_exit")


@needs_glibc
@pytest.mark.parametrize(("code", "status", "stderr"), [
    ("None", 0, ""), ("1", 1, ""), ("2", 2, ""), ("130", 130, ""),
    ("'error: a message'", 1, "error: a message\n")])
def test_the_program_ends_as_python_would_without_the_libraries_destructors(code, status,
                                                                         stderr):
    """The threads waited for, the atexit functions run and the output
    flushed, in Python's order; then the process ends with the status,
    the C exit handlers (the libraries' destructors) not run: the one
    registered here would abort the process (exit 134)."""
    done = subprocess.run([sys.executable, "-P", "-c", ENDING.format(code=code)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == status, done.stderr
    assert done.stdout == "unflushed, thread ended\natexit ran\n"
    assert done.stderr == stderr


@needs_glibc
def test_a_program_left_to_python_runs_the_c_exit_handlers():
    """(The contrast: the handler above aborts a process Python ends.)"""
    code = ENDING.format(code=0).replace("end_program(0)\n", "")
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True,
                          text=True, check=False)
    assert done.returncode == -6  # SIGABRT
    assert done.stdout.startswith("unflushed, not reached\nthread ended\natexit ran")
