"""Every private (or undocumented) API of pandas, numpy, json and
concurrent.futures the auditor touches, each behind one small function with
its fallback.

They are used for speed or for a clean stop, never for a result: when a
library release drops one, the fallback gives the same output, only slower
(or, for the pool, a slower stop). One place to look after an upgrade.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


def masked_arrays(array) -> tuple[np.ndarray, np.ndarray] | None:
    """The values and null mask of a pandas nullable array, not copied
    (`BaseMaskedArray._data` and `._mask`, stable since pandas 1.0); None
    when they are gone, and the caller copies with `to_numpy`."""
    values, nulls = getattr(array, "_data", None), getattr(array, "_mask", None)
    if isinstance(values, np.ndarray) and isinstance(nulls, np.ndarray):
        return values, nulls
    return None


def datetimes_in_zone(values: np.ndarray, dtype):
    """Naive datetime64 `values` (UTC instants) as a pandas array of the
    time-zone aware `dtype` (same unit), over the same memory
    (`DatetimeArray._simple_new`, private since pandas 0.24); when it is
    gone, pandas' public localisation (the same array, copied)."""
    import pandas as pd

    simple_new = getattr(pd.arrays.DatetimeArray, "_simple_new", None)
    if simple_new is not None:
        try:
            return simple_new(values, dtype=dtype)
        except TypeError:
            pass
    return pd.Series(values, copy=False).dt.tz_localize("UTC").dt.tz_convert(dtype.tz).array


def set_madvise_hugepage(enabled: bool) -> bool | None:
    """Set numpy's private `_set_madvise_hugepage` (`numpy._core.multiarray`;
    numpy 1: `numpy.core`) and return the previous setting; None, and
    nothing changed, when it is gone (numpy's own choice then stands)."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    setter = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    return None if setter is None else setter(enabled)


def json_c_make_encoder() -> Callable | None:
    """json's private C encoder factory (`json.encoder.c_make_encoder`, what
    json.dumps builds on every call); None when it is gone or not built, and
    the caller uses json.dumps (same text, slower)."""
    try:
        from json.encoder import c_make_encoder
    except ImportError:
        return None
    return c_make_encoder


def json_string_quoter(ensure_ascii: bool) -> Callable[[str], str]:
    """json's C string escaper (`json.encoder.encode_basestring_ascii` or
    `encode_basestring`, undocumented); when gone, json.dumps of the string,
    which is what it calls (same text, slower)."""
    try:
        from json.encoder import encode_basestring, encode_basestring_ascii
    except ImportError:
        return lambda text: json.dumps(text, ensure_ascii=ensure_ascii)
    return encode_basestring_ascii if ensure_ascii else encode_basestring


def pool_processes(pool: ProcessPoolExecutor) -> list:
    """The worker processes of a pool (its private `_processes`), so that a
    stop can end them at once; [] when it is gone, and each worker ends
    only after the batch it is running."""
    return list((getattr(pool, "_processes", None) or {}).values())


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """The processes of a pool, ended now (an error or an interruption must
    not wait for the work they are doing)."""
    processes = pool_processes(pool)
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        try:
            p.terminate()
        except (OSError, AttributeError):
            pass
    for p in processes:
        try:
            p.join(timeout=5)
        except (OSError, AssertionError):
            pass


def fork_context():
    """multiprocessing's fork context where processes are forked (Linux:
    a forked process inherits what its parent holds, nothing is sent to
    it); None elsewhere."""
    import multiprocessing

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


def die_with_parent(parent: int) -> None:
    """In a worker process: end when `parent` (the process that started it)
    ends, however it ends (a CI job's SIGKILL included), so no orphan keeps
    working, holding memory and what it inherited (the report folder's
    lock). On Linux the kernel sends SIGKILL (prctl PR_SET_PDEATHSIG);
    elsewhere a thread looks for the parent every half second."""
    import ctypes
    import signal
    import threading
    import time

    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0:  # 1: PR_SET_PDEATHSIG
                if os.getppid() != parent:  # (it died before the call)
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
