import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

#: Examples per property in tests/test_fuzz.py unless --fuzz-examples says more.
DEFAULT_FUZZ_EXAMPLES = 25


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-examples", type=int, default=DEFAULT_FUZZ_EXAMPLES, metavar="N",
        help="hypothesis examples per fuzz property (tests/test_fuzz.py); the nightly "
             "run uses 2000",
    )


@pytest.fixture(scope="session")
def fuzz_examples(request) -> int:
    """How many examples each fuzz property draws (--fuzz-examples)."""
    return max(1, request.config.getoption("--fuzz-examples"))
