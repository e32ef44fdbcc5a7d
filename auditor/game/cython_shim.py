"""Stand-ins for the Cython directives `auditor.game.replay` uses, for when
it runs uncompiled and Cython is not installed: each decorator leaves its
function as it is (compiled, Cython reads the directives itself)."""

from __future__ import annotations


def boundscheck(flag: bool):
    return lambda function: function


initializedcheck = boundscheck

#: Never compiled where this stands in for Cython.
compiled = False
