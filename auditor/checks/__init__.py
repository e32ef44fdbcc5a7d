"""Checks, one module per family. Importing this package registers them all
in `auditor.checks.registry.CHECKS`."""

from auditor.checks import (  # noqa: F401  (imported to register)
    dice,
    log,
    noroll,
    offer,
    settlement,
    shooter,
    throw_call,
)
from auditor.checks.registry import CHECKS, Check, Hits

__all__ = ["CHECKS", "Check", "Hits"]
