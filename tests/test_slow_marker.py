"""The `slow` marker (tests/slow.py SLOW) names tests that exist: a
renamed file or test would otherwise fall silently into the fast subset."""

import subprocess
import sys
from pathlib import Path

from slow import SLOW

TESTS = Path(__file__).resolve().parent


def test_every_slow_prefix_names_a_test_file():
    for prefix in SLOW:
        path = prefix.split("::")[0]
        assert (TESTS / path).is_file() or list(TESTS.glob(path + "*.py")), prefix


def test_every_slow_test_named_is_collected_and_marked():
    named = [p for p in SLOW if "::" in p]
    done = subprocess.run([sys.executable, "-P", "-m", "pytest", "-q", "--collect-only",
                           "-m", "slow", *sorted({p.split("::")[0] for p in named})],
                          cwd=TESTS, capture_output=True, text=True, check=False)
    collected = done.stdout
    for prefix in named:
        assert prefix in collected, prefix
