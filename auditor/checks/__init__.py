"""Checks, one module per code family (the module's name is the codes'
prefix: `auditor.checks.dice` holds the `dice.*` checks). Importing this
package registers them all in `auditor.checks.registry.CHECKS`."""

from auditor.checks import (  # noqa: F401, I001  (imported to register, in this order)
    dice,
    log,
    noroll,
    dispute,
    overrule,
    offer,
    settle,
    shooter,
    throw,
    call,
)
from auditor.checks.registry import CHECKS, Check, Hits

__all__ = ["CHECKS", "Check", "Hits"]
