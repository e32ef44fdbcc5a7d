import atexit
import logging
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from slow import SLOW  # (tests/ is on the path from here)

#: Examples per property in tests/test_fuzz.py unless --fuzz-examples says more.
DEFAULT_FUZZ_EXAMPLES = 25


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-examples", type=int, default=DEFAULT_FUZZ_EXAMPLES, metavar="N",
        help="hypothesis examples per fuzz property (tests/test_fuzz.py); the nightly "
             "run uses 2000",
    )
    parser.addoption(
        "--damaged-seeds", type=int, default=0, metavar="N",
        help="N more seeds per damaged-input comparison (tests/run/test_damaged_inputs.py) "
             "beside the ones kept",
    )


def pytest_configure(config):
    """The property tests draw the same examples on every run of the
    README's test command (hypothesis derandomized): the suite that gates
    a change passes or fails on the change, not on the draw (a CI run once
    failed on a rare draw that exposed a bug in a test's own writer).
    Asking for more fuzz examples (`--fuzz-examples N`), or hypothesis's
    own `--hypothesis-seed`, explores: random draws, as before."""
    from hypothesis import settings

    settings.register_profile("gate", derandomize=True)
    config.option.draws_fixed = config.getoption("--fuzz-examples") == DEFAULT_FUZZ_EXAMPLES \
        and config.getoption("hypothesis_seed", None) is None \
        and not config.getoption("hypothesis_profile", None)
    if config.option.draws_fixed:
        settings.load_profile("gate")


def pytest_sessionstart(session):
    atexit.register(_end_without_destructors, session, os.getpid())


def _end_without_destructors(session, pid: int) -> None:
    """The test run ends with its exit status as Python's shutdown reaches
    the `atexit` functions (this one registered before the tests, so run
    after theirs), the C++ libraries' destructors not run: after many
    audits in one process, Arrow's thread pool, a worker still alive, may
    abort the process there ("terminate called without an active
    exception", exit 134; apache/arrow#34314), failing a run whose every
    test passed. The program ends the same way (`auditor.__main__.
    end_program`). Not in a process forked from this one (it ends as its
    own code says)."""
    if os.getpid() != pid or not isinstance(session.exitstatus, int):
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(int(session.exitstatus))


@pytest.fixture(scope="session")
def fuzz_examples(request) -> int:
    """How many examples each fuzz property draws (--fuzz-examples)."""
    return max(1, request.config.getoption("--fuzz-examples"))


@pytest.fixture(scope="session")
def cluster():
    """A dask.distributed LocalCluster of two workers (threads), shared by
    the engine and progress tests; skipped without dask installed."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install '.[dask]')")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None, silence_logs=logging.ERROR) as c:
        yield c


def pytest_collection_modifyitems(config, items):
    tests = Path(__file__).parent
    for item in items:
        node = Path(item.nodeid.split("::")[0])
        try:
            name = (Path(config.rootpath) / node).resolve().relative_to(tests).as_posix()
        except ValueError:
            continue
        name += item.nodeid[len(item.nodeid.split("::")[0]):]
        if name.startswith(SLOW) and "slow" not in item.keywords:
            item.add_marker(pytest.mark.slow)
