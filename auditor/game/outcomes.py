"""What a valid roll decides for line bets: pure functions, no state.

The spec's "Game state" section: on the come-out 7 or 11 is a natural, 2, 3,
12 craps, the rest establish the point; with a point, the point wins and 7 is a
7 Out. Come and don't come bets have their own points and keep working on a
come-out roll. The bar number on don't bets (12, or 2) pushes.
"""

from __future__ import annotations

POINTS = frozenset((4, 5, 6, 8, 9, 10))
NATURALS = frozenset((7, 11))
CRAPS = frozenset((2, 3, 12))


def pass_outcome(point: int, total: int) -> str | None:
    """Pass line: `win`, `lose` or None (undecided) for a roll with the table at
    `point` (0 = come-out)."""
    if point == 0:
        if total in NATURALS:
            return "win"
        if total in CRAPS:
            return "lose"
        return None
    if total == point:
        return "win"
    if total == 7:
        return "lose"
    return None


def dont_pass_outcome(point: int, total: int, bar: int) -> str | None:
    """Don't pass: the mirror of pass, with the bar number a push."""
    if point == 0 and total == bar:
        return "push"
    result = pass_outcome(point, total)
    if result is None:
        return None
    return "lose" if result == "win" else "win"


def come_outcome(number: int, total: int) -> str | None:
    """A come bet: untravelled (number 0) it behaves like a come-out pass bet;
    on its number, the number wins and 7 loses."""
    return pass_outcome(number, total)


def dont_come_outcome(number: int, total: int, bar: int) -> str | None:
    return dont_pass_outcome(number, total, bar)


def expected_outcome(bet: str, number: int, point: int, total: int, bar: int) -> str | None:
    """The outcome a roll gives a line bet. `bet` is pass, dont_pass, come or
    dont_come; `number` is a come bet's own point (0 untravelled)."""
    if bet == "pass":
        return pass_outcome(point, total)
    if bet == "dont_pass":
        return dont_pass_outcome(point, total, bar)
    if bet == "come":
        return come_outcome(number, total)
    if bet == "dont_come":
        return dont_come_outcome(number, total, bar)
    raise ValueError(bet)
