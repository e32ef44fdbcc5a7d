"""Craps compliance auditor: replay recorded craps table event logs and report
every breach of a jurisdiction's rules, tied to its event and clause."""

# Only modules Python has loaded before any program's first line (os) or
# has built in (gc): what this imports is imported with the collector still
# on, before `run_as_program` turns it off. (Not `typing`: a system Python whose
# site-packages hold a .pth file that imports it hides what a fresh virtual
# environment shows, three collections while `typing` loads.)
import gc
import os

__version__ = "0.1.0"


def run_as_program(load):
    """Run the function that `load()` imports and returns, and return its
    result, as the `auditor` program runs
    its command (`auditor/__main__.py`, and what measures it as it runs).
    Not done on import: a program that uses the auditor as a library keeps
    its own settings.

    - Before numpy is imported, no OpenBLAS worker threads: each spins for
      about 0.1 s of CPU before it sleeps, and the auditor does no linear
      algebra (a choice already in the environment stands).
    - The libraries loaded with the cyclic collector off, then set apart
      from its walks for good: loading makes no garbage, yet the collector
      walked their objects again and again as they loaded (about 50 ms).
    - Nothing collected once the command has run (every output is written
      and closed by then): the collection Python runs as it exits would
      only walk every object of pandas, pyarrow and the audit once more
      (about 80 ms, a tenth of a small log's audit)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gc.disable()
    try:
        act = load()
    finally:
        gc.freeze()
        gc.enable()
    try:
        return act()
    finally:
        gc.freeze()
