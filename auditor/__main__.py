"""The `auditor` command (`python -m auditor` and the installed script)."""

import os
import sys

from auditor import run_as_program


def _command():
    from auditor.cli import main

    return main


def run() -> None:
    try:
        run_as_program(_command)
    except SystemExit as done:
        end_program(done.code)
        raise
    end_program(0)


def end_program(code) -> None:
    """End the program with `code` (SystemExit's: None, a number, or a
    message for standard error and 1) as Python ends it, less what follows
    Python's own shutdown: the C++ libraries' static destructors, where
    Arrow's thread pool, a worker thread still alive, may abort the process
    ("terminate called without an active exception", exit 134) after every
    report was written and the verdict decided (apache/arrow#34314; seen
    here after long runs): a CI job would read a crash where the verdict
    was. What Python's shutdown does that matters is done first, in its
    order: the threads that are not daemons waited for, the `atexit`
    functions run (temporary folders removed, worker processes ended), the
    output flushed. Returns only where this Python cannot wait for its
    threads as its shutdown does (then it exits as it would have)."""
    import atexit
    import threading

    wait_for_threads = getattr(threading, "_shutdown", None)
    if wait_for_threads is None:
        return
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    wait_for_threads()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # (closed, or a reader gone)
            pass
    os._exit(status & 0xFF)


if __name__ == "__main__":
    run()
