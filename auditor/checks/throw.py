"""Throw checks (`throw.*`): how the dice are thrown."""

from __future__ import annotations

from auditor.checks.registry import Hits, check


def _throw_fault(ctx, params, flag: str, message: str) -> Hits:
    sh = ctx.shared
    rows = sh.event_rows("roll")
    rows = rows[sh.flag(flag, rows)]
    if not params["include_voided_rolls"]:
        rows = rows[~sh.written_at("roll_voided", rows)]
    return Hits(rows, message)


@check("one_hand_throw", "throw.two_hands", ("include_voided_rolls",))
def one_hand_throw(ctx, params) -> Hits:
    """The shooter handled or threw the dice with two hands.

    Parameter: `include_voided_rolls` (false: a roll voided by a no roll is
    taken as the table having dealt with the fault).
    Fires on: a roll flagged `two_hands` that stood.
    Quiet on: `one_hand`; a `two_hands` roll voided by a no roll.
    Points at: the roll.
    """
    return _throw_fault(ctx, params, "two_hands", "the shooter used two hands")


@check("simultaneous_release", "throw.not_simultaneous", ("include_voided_rolls",))
def simultaneous_release(ctx, params) -> Hits:
    """The dice did not leave the shooter's hand simultaneously.

    Parameter: `include_voided_rolls`.
    Fires on: a roll flagged `not_simultaneous` that stood.
    Quiet on: `simultaneous`; the roll voided by a no roll.
    Points at: the roll.
    """
    return _throw_fault(ctx, params, "not_simultaneous",
                        "the dice did not leave the hand simultaneously")


@check("far_end_throw", "throw.short", ("include_voided_rolls",))
def far_end_throw(ctx, params) -> Hits:
    """The dice did not strike the far end of the table.

    Parameter: `include_voided_rolls`.
    Fires on: a roll flagged `short` that stood.
    Quiet on: `far_end`; the roll voided by a no roll.
    Points at: the roll.
    """
    return _throw_fault(ctx, params, "short", "the dice did not strike the far end")
