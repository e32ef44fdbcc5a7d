"""Craps compliance auditor: replay recorded craps table event logs and report
every breach of a jurisdiction's rules, tied to its event and clause."""

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

__version__ = "0.1.0"


def set_program_environment() -> None:
    """What the `auditor` program (`auditor/__main__.py`, and what measures
    it as it runs) sets before numpy is imported. numpy's OpenBLAS starts a
    worker thread per core at import, each spinning for about 0.1 s of CPU
    before it sleeps; the auditor does no linear algebra, so it asks for
    none (a choice already in the environment stands). Not done on import:
    a program that uses the auditor as a library keeps its own settings."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@contextmanager
def loading_without_collection() -> Iterator[None]:
    """How the `auditor` program loads its libraries: loading makes no
    garbage, yet the cyclic collector, left on, walked their objects again
    and again as they loaded (about 50 ms); what was loaded is then set apart
    from the collector's walks for good (`gc.freeze`)."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
