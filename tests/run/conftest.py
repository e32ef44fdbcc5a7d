"""Fixtures the engine tests share."""

import pytest

from auditor.rules.ruleset import load_ruleset


@pytest.fixture(scope="module")
def ruleset():
    """The nz-table-games ruleset, loaded once per test module."""
    return load_ruleset("nz-table-games")
