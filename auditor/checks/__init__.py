"""Checks, one module per code family (the module's name is the codes'
prefix: `auditor.checks.dice` holds the `dice.*` checks). Importing this
package imports every family module, which registers its checks in
`auditor.checks.registry.CHECKS`: a new family is a new module, nothing else."""

import importlib
import pkgutil

from auditor.checks.registry import CHECKS, Check, Hits

#: The modules of this package that hold no checks.
SUPPORT = frozenset({"common", "context", "parameters", "registry"})

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module not in SUPPORT:
        importlib.import_module(f"{__name__}.{_module}")

__all__ = ["CHECKS", "Check", "Hits"]
