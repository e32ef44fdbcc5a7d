"""Stand-ins for the Cython directives the replay's modules use
(`auditor.game.replay.COMPILED_MODULES`), for when they run uncompiled and
Cython is not installed: each decorator leaves its function as it is
(compiled, Cython reads the directives itself)."""

from __future__ import annotations


def boundscheck(flag: bool):
    return lambda function: function


initializedcheck = boundscheck

#: Never compiled where this stands in for Cython.
compiled = False
